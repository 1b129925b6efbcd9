"""The fairness-path report: one certified fit per fairness bound (:func:`riskformula.fairness_path`)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from . import render
from .render import fmt_fixed, fmt_gap

__all__ = ["FairnessPath", "PATH_COLUMNS"]

#: columns of :attr:`FairnessPath.table`
PATH_COLUMNS = ["max_diff", "loss", "objective", "lower_bound", "gap", "fit_gap", "status", "time", "nodes",
                "train_disparity", "train_auc", "test_auc", "test_disparity"]


@dataclass(repr=False, eq=False)
class FairnessPath(render.Rendered):
    """The price of a fairness bound, bound by bound; built by :func:`riskformula.fairness_path`.

    Attributes
    ----------
    formula, notion : the formula, and the notion (without its bound).
    table : DataFrame with :data:`PATH_COLUMNS`; the first row (``max_diff`` NaN) is the
        unconstrained score.
    models : dict of bound (NaN for the unconstrained fit) to RiskScore.
    tested : whether ``test_auc``/``test_disparity`` were measured on ``newdata``.
    """

    formula: str
    notion: str
    table: pd.DataFrame
    models: dict
    tested: bool
    notes: tuple

    _title = "Fairness path"

    def to_frame(self) -> pd.DataFrame:
        """The path table (a copy)."""
        return self.table.copy()

    def to_dict(self) -> dict:
        return {"formula": self.formula, "notion": self.notion, "path": render.records(self.table),
                "notes": list(self.notes)}

    def _tables(self) -> dict:
        return {"path": self.table}

    def _header(self) -> list:
        return [("Formula", self.formula), ("Notion", self.notion)]

    def _sections(self) -> list:
        t = self.table
        shown = pd.DataFrame({
            "max_diff": ["none" if b != b else f"{b:g}" for b in t["max_diff"]],
            "training loss": [fmt_fixed(x, 4) for x in t["loss"]],
            "gap": [fmt_gap(g) for g in t["gap"]], "status": t["status"],
            "time": [f"{x:.1f} s" for x in t["time"]],
            "training disparity": [fmt_fixed(x, 3) for x in t["train_disparity"]],
            "training AUC": [fmt_fixed(x, 3) for x in t["train_auc"]]})
        if self.tested:
            shown["test AUC"] = [fmt_fixed(x, 3) for x in t["test_auc"]]
            shown["test disparity"] = [fmt_fixed(x, 3) for x in t["test_disparity"]]
        return [(None, shown)]

    def plot(self, ax=None):
        """Training loss (and test disparity, with newdata) against the bound; returns the figure."""
        import matplotlib.pyplot as plt
        t = self.table[self.table["max_diff"].notna()]
        if ax is None:
            fig, ax = plt.subplots(figsize=(6, 4))
        else:
            fig = ax.figure
        ax.plot(t["max_diff"], t["loss"], "o-", label="training loss")
        free = self.table.iloc[0]
        ax.axhline(free["loss"], ls=":", color="grey", label="unconstrained loss")
        ax.set_xlabel("max_diff")
        ax.set_ylabel("mean logistic loss")
        ax.invert_xaxis()
        ax.set_title(self.notion)
        ax.legend()
        return fig

    def __repr__(self) -> str:
        return f"<FairnessPath: {self.notion}; bounds {[b for b in self.table['max_diff'] if b == b]}>"
