"""The fairness-path report: one certified fit per fairness bound (:func:`riskformula.fairness_path`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import render
from .render import fmt_fixed, fmt_gap
from .plots import _EVENT, _MODEL, _NON_EVENT, _hollow_where, _panels

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
    title, quantity : the notion in words (the plot's title), and the rate it bounds.
    """

    formula: str
    notion: str
    table: pd.DataFrame
    models: dict
    tested: bool
    notes: tuple
    title: str = ""
    quantity: str = ""

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
        """The price of the bound: training loss (top panel, with the unconstrained score's loss)
        and the disparity (bottom panel: on the training rows, on ``newdata`` when it was given,
        and the bound itself) against the bound, loosest on the right. Fits that stopped before
        proving optimality (a time or node limit) are drawn hollow.

        ``ax``: None (a new figure), one Axes (split into the two panels) or a pair of Axes.
        Returns the figure."""
        t = self.table[self.table["max_diff"].notna()].sort_values("max_diff")
        fig, (top, bottom) = _panels(ax, figsize=(6.5, 5.5))
        bound = t["max_diff"].to_numpy(float)
        proven = (t["status"] == "optimal").to_numpy()
        loss = t["loss"].to_numpy(float)
        top.plot(bound, loss, color=_NON_EVENT, lw=1.5, zorder=2)
        _hollow_where(top, bound, loss, proven, _NON_EVENT)
        free = self.table.iloc[0]
        top.axhline(free["loss"], ls=":", color="grey", zorder=1)
        top.set_ylabel("Training loss\n(mean logistic)")
        top.tick_params(labelbottom=False)
        top.set_title(self.title or _readable(self.notion), fontsize=10)
        bottom.plot(bound, bound, ls="--", lw=1, color="grey", zorder=1)
        series = [("train_disparity", _MODEL, "o", "training rows")]
        if self.tested:
            series.append(("test_disparity", _EVENT, "s", "new rows"))
        for col, colour, marker, _ in series:
            y = t[col].to_numpy(float)
            bottom.plot(bound, y, color=colour, lw=1.2, zorder=2)
            _hollow_where(bottom, bound, y, proven, colour, marker=marker)
        bottom.set_ylabel("Disparity\n(max − min)")
        high = np.nanmax(np.r_[bound, t[[c for c, *_ in series]].to_numpy(float).ravel()])
        bottom.set_ylim(-0.06 * high, 1.08 * high)
        bottom.set_xticks(bound, [f"{b:g}" for b in bound])
        bottom.set_xlabel(f"Bound on the difference in {self.quantity or 'the rate'} between groups "
                          "(max_diff)\n← tighter        looser →")
        from matplotlib.lines import Line2D
        top_handles = [Line2D([], [], color=_NON_EVENT, lw=1.5), Line2D([], [], color="grey", ls=":")]
        top_labels = ["bounded score", f"no bound ({free['loss']:.4f})"]
        if proven.any():
            top_handles.append(Line2D([], [], ls="none", marker="o", color="grey"))
            top_labels.append("certified optimal")
        if (~proven).any():
            stops = sorted({str(s).replace("_", " ") for s in t.loc[~proven.astype(bool), "status"]})
            top_handles.append(Line2D([], [], ls="none", marker="o", mfc="white", mec="grey", mew=1.5))
            top_labels.append(f"not certified ({' / '.join(stops)})")
        top.legend(top_handles, top_labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8,
                   frameon=False)
        handles = [Line2D([], [], color=c, marker=m, lw=1.2, mfc="white" if not proven.any() else c)
                   for _, c, m, _ in series]
        handles.append(Line2D([], [], ls="--", lw=1, color="grey"))
        bottom.legend(handles, [f"{w}" for *_, w in series] + ["the bound"], loc="upper left",
                      bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
        return fig

    def __repr__(self) -> str:
        return f"<FairnessPath: {self.notion}; bounds {[b for b in self.table['max_diff'] if b == b]}>"


def _readable(notion: str) -> str:
    """``"equal_opportunity('sex', at_risk=0.3)"`` as ``"Equal opportunity by sex, at risk 0.3"``: a
    title for a path built without :func:`riskformula.fairness_path`'s words."""
    name, _, args = notion.partition("(")
    parts = [a.strip() for a in args.rstrip(")").split(",") if a.strip()]
    by = parts[0].strip("'\"[]") if parts else ""
    rest = [a.replace("=", " ").replace("_", " ").replace("'", "") for a in parts[1:]]
    words = name.replace("_", " ")
    return f"{words[:1].upper()}{words[1:]}" + (f" by {by}" if by else "") + "".join(f", {r}" for r in rest)
