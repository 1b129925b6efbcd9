"""The cross-validated size report: the held-out curve over model sizes, the size it chose and the
score refitted at that size on all rows (:func:`riskformula.cv_risk_score`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from . import render
from .comparison import points_table
from .render import fmt_fixed, fmt_gap, fmt_percent
from .plots import plot_size_cv

if TYPE_CHECKING:
    from ..record import ScoreRecord

__all__ = ["SizeCV", "SurvivalSizeCV", "CURVE_COLUMNS", "FOLD_SIZE_COLUMNS", "METRICS", "RULES",
           "SURVIVAL_CURVE_COLUMNS", "SURVIVAL_FOLD_SIZE_COLUMNS", "SURVIVAL_METRICS"]

#: columns of :attr:`SizeCV.table` (:meth:`SizeCV.to_frame`), one row per size limit
CURVE_COLUMNS = ["size", "mean", "se", "auc", "loss", "cal", "train_loss", "certified", "fits", "items"]
#: columns of :attr:`SizeCV.folds`, one row per repeat × fold × size limit
FOLD_SIZE_COLUMNS = ["repeat", "fold", "size", "items", "n_train", "n_test", "test_events", "auc", "loss",
                     "cal", "brier", "train_loss", "objective", "gap", "status", "time"]
#: the metrics a size can be chosen by: (label, whether higher is better)
METRICS = {"auc": ("held-out AUC", True), "loss": ("held-out log loss", False)}
#: columns of a time-to-event score's curve (:attr:`SurvivalSizeCV.table`), one row per size limit
SURVIVAL_CURVE_COLUMNS = ["size", "mean", "se", "harrell_c", "uno_c", "auc", "loss", "integrated_brier", "train_loss",
                          "certified", "fits", "items"]
#: columns of :attr:`SurvivalSizeCV.folds`, one row per repeat × fold × size limit
SURVIVAL_FOLD_SIZE_COLUMNS = ["repeat", "fold", "size", "items", "n_train", "n_test", "test_events", "harrell_c",
                              "uno_c", "auc", "integrated_brier", "loss", "train_loss", "objective", "gap", "status",
                              "time"]
#: the metrics a time-to-event score's size can be chosen by: (label, whether higher is better)
SURVIVAL_METRICS = {"harrell_c": ("held-out Harrell's C", True), "uno_c": ("held-out Uno's C", True),
                    "auc": ("held-out AUC at the horizon", True),
                    "loss": ("held-out partial likelihood loss", False)}
#: the rules that choose a size from the curve, as the header explains them
RULES = {"1se": "one standard error: the smallest size whose mean is within one SE of the best mean",
         "min": "best mean"}


@dataclass(repr=False, eq=False)
class SizeCV(render.Rendered):
    """Model size chosen by cross-validation, and the score refitted at that size; built by
    :func:`riskformula.cv_risk_score`.

    Attributes
    ----------
    table : DataFrame
        The cross-validation curve, one row per size limit (columns :data:`CURVE_COLUMNS`):
        ``mean`` and ``se`` of the chosen metric over the fold fits (SE = sd with ddof 1 /
        √``fits``), the mean held-out ``auc``, ``loss`` (mean log loss) and ``cal``, the mean
        ``train_loss`` of the fold models, how many of the ``fits`` fold fits were ``certified``
        optimal, and the mean number of card ``items`` the fold models use (at most ``size``).
    folds : DataFrame
        One row per repeat × fold × size limit (columns :data:`FOLD_SIZE_COLUMNS`): the held-out
        metrics of that fold's model of that size, its training loss, gap and status.
    size_min, size_1se : int
        The size with the best mean, and the smallest size whose mean is within one standard
        error of the best mean.
    size : int
        The chosen size, ``size_1se`` or ``size_min`` by ``rule``.
    rule, metric : str
        ``"1se"`` or ``"min"``; ``"auc"`` or ``"loss"``.
    model : RiskScore
        The score refitted on all rows with ``max_size=size`` (certified when its search finished).
    formula : str
    k, repeats, seed : int
        Folds, repeats and the seed of the first repeat's folds (repeat r uses ``seed + r - 1``).
    c0 : float
        The penalty per term of every fit.
    fit_args : dict
        The other arguments passed on to :func:`riskformula.risk_score`.
    notes : tuple of str
    """

    formula: str
    table: pd.DataFrame
    folds: pd.DataFrame
    size_min: int
    size_1se: int
    size: int
    rule: str
    metric: str
    model: ScoreRecord
    k: int
    repeats: int
    seed: int
    c0: float
    fit_args: dict
    notes: tuple[str, ...]

    _title = "Cross-validated model size"
    #: the metrics ``metric`` names: (label, whether higher is better)
    metrics = METRICS

    # ---- conversions ----------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """The cross-validation curve, one row per size limit (a copy)."""
        return self.table.copy()

    def to_dict(self) -> dict:
        """Curve, fold rows, the chosen sizes, the refit model's points and status, settings and
        notes as plain Python values."""
        m = self.model
        return {"formula": self.formula, "metric": self.metric, "rule": self.rule, "size": int(self.size),
                "size_min": int(self.size_min), "size_1se": int(self.size_1se), "k": self.k,
                "repeats": self.repeats, "seed": self.seed, "c0": self.c0,
                "curve": render.records(self.table), "folds": render.records(self.folds),
                "model": {"max_size": int(m.settings.max_size), "items": int(m.size), "status": m.status,
                          "gap": float(m.gap), "loss": float(m.loss), "intercept": render.plain(m.intercept),
                          "points": {c: int(p) for c, p in m.coef.items() if p != 0}},
                "fit_args": {k: repr(x) if not isinstance(x, (int, float, str, bool, type(None))) else x
                             for k, x in self.fit_args.items()},
                "notes": list(self.notes)}

    def _tables(self) -> dict[str, pd.DataFrame | None]:
        return {"curve": self.table, "folds": self.folds, "points": self.points()}

    def points(self) -> pd.DataFrame:
        """Points of the refit model per card item, the intercept last."""
        return points_table([self.model], [f"size {self.size}"])

    def plot(self, ax=None):
        """:func:`riskformula.plots.plot_size_cv` of this result; returns the figure."""
        return plot_size_cv(self, ax=ax)

    # ---- text -----------------------------------------------------------------------
    @property
    def metric_label(self) -> str:
        """The metric's name as the plots and reports print it (``"held-out AUC"``)."""
        return self.metrics[self.metric][0]

    @property
    def higher_is_better(self) -> bool:
        """Whether a larger value of the metric is better (AUC) or worse (log loss)."""
        return self.metrics[self.metric][1]

    def _fmt(self, x) -> str:
        return fmt_fixed(x) if self.metric == "auc" else fmt_fixed(x, 4)

    def _row(self, size: int) -> pd.Series:
        return self.table.loc[self.table["size"] == size].iloc[0]

    def _status(self) -> str:
        m = self.model
        gap = fmt_gap(m.gap, m.settings.gap_tolerance)
        if m.status == "optimal":
            return f"certified optimal (gap {gap})"
        return f"not proven optimal: stopped at the {m.status.replace('_', ' ')} (gap {gap})"

    def why(self) -> str:
        """One sentence: which size was chosen, by which rule, from which numbers."""
        best = self._row(self.size_min)
        higher = self.higher_is_better
        se = best["se"] if pd.notna(best["se"]) else 0.0
        bound = best["mean"] - se if higher else best["mean"] + se
        if self.rule == "min":
            text = (f"Size {self.size} has the best mean {self.metric_label} ({self._fmt(best['mean'])} ± "
                    f"{self._fmt(best['se'])} SE).")
            if self.size_1se != self.size_min:
                text += f" The one-standard-error rule would choose size {self.size_1se}."
            return text
        if self.size_1se == self.size_min:
            return (f"Size {self.size} has the best mean {self.metric_label} ({self._fmt(best['mean'])} ± "
                    f"{self._fmt(best['se'])} SE) and no smaller size is within one SE of it "
                    f"({'≥' if higher else '≤'} {self._fmt(bound)}).")
        chosen = self._row(self.size)
        return (f"Size {self.size} is the smallest size whose mean {self.metric_label} ({self._fmt(chosen['mean'])}) "
                f"is within one standard error of the best mean ({self._fmt(best['mean'])} ± "
                f"{self._fmt(best['se'])} SE at size {self.size_min}), i.e. {'≥' if higher else '≤'} "
                f"{self._fmt(bound)}.")

    def _curve_display(self) -> pd.DataFrame:
        t = self.table
        name = "AUC" if self.metric == "auc" else "log loss"
        choice = []
        for s in t["size"]:
            marks = [r for r, at in (("min", self.size_min), ("1se", self.size_1se)) if s == at]
            choice.append(", ".join(marks) + (" (chosen)" if s == self.size else ""))
        shown = pd.DataFrame({"size": t["size"].astype(str), "items": [fmt_fixed(x, 1) for x in t["items"]],
                              f"{name} ± SE": [f"{self._fmt(m)} ± {self._fmt(s)}" for m, s in zip(t["mean"], t["se"])]})
        if self.metric == "auc":
            shown["log loss"] = [fmt_fixed(x, 4) for x in t["loss"]]
        else:
            shown["AUC"] = [fmt_fixed(x) for x in t["auc"]]
        shown["CAL"] = [fmt_percent(x) for x in t["cal"]]
        shown["train loss"] = [fmt_fixed(x, 4) for x in t["train_loss"]]
        shown["certified"] = [f"{c}/{n}" for c, n in zip(t["certified"], t["fits"])]
        shown["choice"] = choice
        return shown

    def _header(self) -> list[tuple[str, str]]:
        label, higher = self.metrics[self.metric]
        seeds = f"seed {self.seed}" if self.repeats == 1 else f"seeds {self.seed}..{self.seed + self.repeats - 1}"
        return [("Formula", self.formula),
                ("Folds", f"{self.k} × {self.repeats} repeat{'s' if self.repeats > 1 else ''} "
                          f"(stratified by outcome, {seeds})"),
                ("Metric", f"{label} ({'higher' if higher else 'lower'} is better)"),
                ("Rule", f"{self.rule} ({RULES[self.rule]})"),
                ("Chosen size", f"{self.size} (min: {self.size_min}, 1se: {self.size_1se})"),
                ("Refit", f"max_size={self.size} on all {self.model.nobs:,d} rows, {self.model.size} item(s) "
                          f"used; {self._status()}")]

    def _sections(self) -> list:
        pts = self.points()
        return [(None, self._curve_display()), ("Chosen size", self.why()),
                (f"Refit model (all rows, max_size={self.size})",
                 render.points_display(pts, ["points"]))]

    def __repr__(self) -> str:
        return (f"<SizeCV: {self.formula}; sizes {list(self.table['size'])}; {self.metric}, rule {self.rule}: "
                f"size {self.size} (min {self.size_min}, 1se {self.size_1se}); refit {self.model.status}>")


@dataclass(repr=False, eq=False)
class SurvivalSizeCV(SizeCV):
    """A time-to-event score's size chosen by cross-validation on folds stratified by event; built by
    :func:`riskformula.cv_risk_score` for a ``Surv(time, event) ~ ...`` formula.

    As :class:`SizeCV`, with the curve's columns :data:`SURVIVAL_CURVE_COLUMNS` (the mean held-out
    ``harrell_c``, ``uno_c``, ``auc`` at the first horizon, ``loss`` (negative log partial likelihood
    per held-out row) and ``integrated_brier``) and the fold rows' :data:`SURVIVAL_FOLD_SIZE_COLUMNS`;
    ``metric`` is one of :data:`SURVIVAL_METRICS`.  ``horizons`` are the times every fit shares.
    """

    horizons: tuple = ()

    metrics = SURVIVAL_METRICS

    def _fmt(self, x) -> str:
        return fmt_fixed(x, 4) if self.metric == "loss" else fmt_fixed(x)

    def _curve_display(self) -> pd.DataFrame:
        t = self.table
        choice = []
        for s in t["size"]:
            marks = [r for r, at in (("min", self.size_min), ("1se", self.size_1se)) if s == at]
            choice.append(", ".join(marks) + (" (chosen)" if s == self.size else ""))
        name = {"harrell_c": "Harrell's C", "uno_c": "Uno's C", "auc": "AUC(t)", "loss": "PL loss"}[self.metric]
        shown = pd.DataFrame({"size": t["size"].astype(str), "items": [fmt_fixed(x, 1) for x in t["items"]],
                              f"{name} ± SE": [f"{self._fmt(m)} ± {self._fmt(s)}" for m, s in zip(t["mean"], t["se"])]})
        for col, label, digits in (("harrell_c", "Harrell's C", 3), ("uno_c", "Uno's C", 3), ("auc", "AUC(t)", 3),
                                   ("loss", "PL loss", 4), ("integrated_brier", "IBS", 4)):
            if col != self.metric:
                shown[label] = [fmt_fixed(x, digits) for x in t[col]]
        shown["train loss"] = [fmt_fixed(x, 4) for x in t["train_loss"]]
        shown["certified"] = [f"{c}/{n}" for c, n in zip(t["certified"], t["fits"])]
        shown["choice"] = choice
        return shown

    def _header(self) -> list[tuple[str, str]]:
        out = super()._header()
        out[1] = (out[1][0], out[1][1].replace("stratified by outcome", "stratified by event"))
        out.insert(2, ("Horizons", ", ".join(f"{h:g}" for h in self.horizons)))
        return out

    def __repr__(self) -> str:
        return "<Survival" + super().__repr__()[1:]
