"""The size-path report: the best risk score of every model size (:func:`riskformula.size_path`)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from . import render
from .render import fmt_fixed, fmt_gap, fmt_percent
from .comparison import points_table
from .plots import plot_size_path

__all__ = ["SizePath", "PATH_COLUMNS", "SurvivalSizePath", "SURVIVAL_PATH_COLUMNS"]

#: columns of :meth:`SizePath.to_frame`
PATH_COLUMNS = ["size", "items", "loss", "auc", "cal", "gap", "status", "objective", "lower_bound",
                "time", "nodes", "scale"]
#: columns of a time-to-event score's :meth:`SurvivalSizePath.to_frame`
SURVIVAL_PATH_COLUMNS = ["size", "items", "loss", "harrell_c", "gap", "status", "objective", "lower_bound", "time",
                         "nodes", "scale"]


@dataclass(repr=False, eq=False)
class SizePath(render.Rendered):
    """The best risk score of every model size; built by :func:`riskformula.size_path`.

    Attributes
    ----------
    table : DataFrame
        One row per size limit (columns :data:`PATH_COLUMNS`): ``size`` is the limit, ``items``
        the number of card items the optimum uses (can be smaller when another item does not lower
        the loss); ``scale`` its score scale; ``loss``, ``auc``, ``cal`` on the training rows, or on
        ``newdata`` when given.
        Ready for :func:`riskformula.plots.plot_size_path`.
    models : dict of int to RiskScore
        The model of each size limit.
    formula, evaluated_on : str
        The formula, and ``"training rows"`` or ``"newdata"``.
    notes : tuple of str
    """

    formula: str
    table: pd.DataFrame
    models: dict
    evaluated_on: str
    notes: tuple[str, ...]

    _title = "Size path"

    def to_frame(self) -> pd.DataFrame:
        """The path table (a copy)."""
        return self.table.copy()

    def to_dict(self) -> dict:
        """The path rows, each size's nonzero points and the notes as plain Python values."""
        return {"formula": self.formula, "evaluated_on": self.evaluated_on, "path": render.records(self.table),
                "points": {int(k): {c: int(p) for c, p in m.coef.items() if p != 0} | {"intercept": m.intercept}
                           for k, m in self.models.items()},
                "notes": list(self.notes)}

    def _tables(self) -> dict[str, pd.DataFrame | None]:
        return {"path": self.table, "points": self.points()}

    def points(self) -> pd.DataFrame:
        """Points of every term (rows) at every size limit (columns); 0 where unused."""
        return points_table(list(self.models.values()), [int(k) for k in self.models])

    def plot(self, ax=None):
        """:func:`riskformula.plots.plot_size_path` of this path; returns the figure."""
        return plot_size_path(self, ax=ax)

    def _header(self) -> list[tuple[str, str]]:
        return [("Formula", self.formula), ("Evaluated on", self.evaluated_on)]

    def _measures(self) -> dict:
        """The path's own columns of the printed table, between the items and the gap."""
        t = self.table
        return {"loss": [fmt_fixed(x, 4) for x in t["loss"]], "AUC": [fmt_fixed(x) for x in t["auc"]],
                "CAL": [fmt_percent(x) for x in t["cal"]]}

    def _sections(self) -> list:
        t = self.table
        shown = pd.DataFrame({
            "size": t["size"].astype(str), "items": t["items"].astype(str), **self._measures(),
            "gap": [fmt_gap(g, self.models[int(k)].settings.gap_tolerance) for g, k in zip(t["gap"], t["size"])],
            "status": t["status"], "time": [f"{x:.1f} s" for x in t["time"]]})
        if (t["scale"] != 1).any():
            shown.insert(2, "scale", [f"{x:g}" for x in t["scale"]])
        pts = self.points()
        return [(None, shown),
                ("Points by size limit", render.points_display(pts, [f"size {c}" for c in pts.columns]))]

    def __repr__(self) -> str:
        return f"<SizePath: {self.formula}; sizes {list(self.table['size'])}>"


@dataclass(repr=False, eq=False)
class SurvivalSizePath(SizePath):
    """The best time-to-event score of every model size; built by :func:`riskformula.size_path` for a
    ``Surv(time, event) ~ ...`` formula.

    As :class:`SizePath`, with the columns :data:`SURVIVAL_PATH_COLUMNS`: ``loss`` is the negative
    log partial likelihood per row and ``harrell_c`` Harrell's C, on the training rows or on
    ``newdata`` (its risk sets among its own rows).
    """

    def _measures(self) -> dict:
        t = self.table
        return {"PL loss": [fmt_fixed(x, 4) for x in t["loss"]], "Harrell's C": [fmt_fixed(x) for x in t["harrell_c"]]}

    def __repr__(self) -> str:
        return f"<SurvivalSizePath: {self.formula}; sizes {list(self.table['size'])}>"
