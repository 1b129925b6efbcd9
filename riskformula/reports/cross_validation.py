"""The cross-validation report: per-fold test metrics of a refitted risk score (:func:`riskformula.cross_validate`),
and of a time-to-event score (:class:`SurvivalCrossValidation`)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from . import render
from .render import fmt_fixed, fmt_gap, fmt_percent

__all__ = ["CrossValidation", "FOLD_COLUMNS", "SurvivalCrossValidation", "SURVIVAL_FOLD_COLUMNS"]

#: per-fold columns of :meth:`CrossValidation.to_frame`
FOLD_COLUMNS = ["fold", "n_train", "n_test", "test_events", "size", "auc", "cal", "loss", "brier",
                "train_auc", "train_cal", "train_loss", "objective", "gap", "status", "time", "scale"]
_SUMMARISED = ["auc", "cal", "loss", "brier", "size", "gap", "train_auc", "train_cal"]


@dataclass(repr=False, eq=False)
class CrossValidation(render.Rendered):
    """Per-fold test metrics of a risk score refitted on K stratified folds; built by
    :func:`riskformula.cross_validate`.

    Attributes
    ----------
    folds : DataFrame
        One row per fold (columns :data:`FOLD_COLUMNS`): test ``auc``, ``cal``, ``loss``
        (mean log loss) and ``brier``; the fold model's ``size``, ``gap``, ``status`` and
        training metrics; its score ``scale``.
    models : list of RiskScore
        The fold models, in fold order.
    fold_of : Series
        Fold number (1..K) of every row used, indexed like the data.
    formula, seed : the formula and the seed of the fold assignment.
    fit_args : dict
        The arguments passed on to :func:`riskformula.risk_score`.
    notes : tuple of str
    """

    formula: str
    folds: pd.DataFrame
    models: list
    fold_of: pd.Series
    seed: int
    fit_args: dict
    notes: tuple[str, ...]

    _title = "Cross-validation"

    def summary_frame(self) -> pd.DataFrame:
        """Mean, standard deviation (ddof 1), min and max over folds of the main metrics."""
        f = self.folds[_SUMMARISED].astype(float)
        return (pd.DataFrame({"mean": f.mean(), "sd": f.std(ddof=1), "min": f.min(), "max": f.max()})
                .rename_axis("metric"))

    def to_frame(self) -> pd.DataFrame:
        """The per-fold table (a copy)."""
        return self.folds.copy()

    def to_dict(self) -> dict:
        """Per-fold rows, mean ± sd, seed, settings and notes as plain Python values."""
        s = self.summary_frame()
        return {"formula": self.formula, "k": len(self.folds), "seed": self.seed,
                "folds": render.records(self.folds),
                "summary": {m: {k: float(s.loc[m, k]) for k in s.columns} for m in s.index},
                "fit_args": {k: repr(x) if not isinstance(x, (int, float, str, bool, type(None))) else x
                             for k, x in self.fit_args.items()},
                "notes": list(self.notes)}

    def _tables(self) -> dict[str, pd.DataFrame | None]:
        return {"folds": self.folds, "summary": self.summary_frame()}

    def _fold_display(self) -> pd.DataFrame:
        f = self.folds
        out = pd.DataFrame({
            "fold": f["fold"].astype(str), "train": [f"{n:,d}" for n in f["n_train"]],
            "test": [f"{n:,d}" for n in f["n_test"]], "events": [f"{n:,d}" for n in f["test_events"]],
            "size": f["size"].astype(str), "AUC": [fmt_fixed(x) for x in f["auc"]],
            "CAL": [fmt_percent(x) for x in f["cal"]], "loss": [fmt_fixed(x, 4) for x in f["loss"]],
            "Brier": [fmt_fixed(x, 4) for x in f["brier"]], "train AUC": [fmt_fixed(x) for x in f["train_auc"]],
            "gap": [fmt_gap(g, m.settings.gap_tolerance) for g, m in zip(f["gap"], self.models)],
            "status": f["status"]})
        if (f["scale"] != 1).any():  # only shown when some fold model has another score scale
            out.insert(5, "scale", [f"{x:g}" for x in f["scale"]])
        return out

    def _metric_labels(self) -> dict:
        """Each summary metric's name as the table prints it."""
        return {"auc": "AUC", "cal": "CAL", "loss": "log loss", "brier": "Brier", "size": "size",
                "gap": "gap", "train_auc": "training AUC", "train_cal": "training CAL"}

    def _metric_formats(self) -> dict:
        """How the summary prints each metric (others: three decimals)."""
        return {"cal": fmt_percent, "train_cal": fmt_percent, "loss": lambda x: fmt_fixed(x, 4),
                "brier": lambda x: fmt_fixed(x, 4)}

    def _summary_display(self) -> pd.DataFrame:
        s = self.summary_frame()
        labels = self._metric_labels()
        tol = min((m.settings.gap_tolerance for m in self.models), default=render.DEFAULT_GAP_TOLERANCE)
        fmt = {"gap": lambda g: fmt_gap(g, tol), "size": lambda x: fmt_fixed(x, 1), **self._metric_formats()}
        rows = []
        for m in s.index:
            g = fmt.get(m, fmt_fixed)
            rows.append((labels[m], f"{g(s.loc[m, 'mean'])} ± {g(s.loc[m, 'sd'])}",
                         f"{g(s.loc[m, 'min'])} to {g(s.loc[m, 'max'])}"))
        return pd.DataFrame(rows, columns=["test metric (mean over folds)", "mean ± sd", "range"])

    def _header(self) -> list[tuple[str, str]]:
        return [("Formula", self.formula), ("Folds", f"{len(self.folds)} (stratified by outcome, seed {self.seed})"),
                ("Rows", f"{int(self.folds['n_test'].sum()):,d}")]

    def _sections(self) -> list:
        return [(None, self._summary_display()), ("Folds", self._fold_display())]

    def __repr__(self) -> str:
        s = self.summary_frame()
        return (f"<CrossValidation: {self.formula}; {len(self.folds)} folds; test AUC "
                f"{fmt_fixed(s.loc['auc', 'mean'])} ± {fmt_fixed(s.loc['auc', 'sd'])}; "
                f"CAL {fmt_percent(s.loc['cal', 'mean'])}>")


#: per-fold columns of a time-to-event score's :meth:`SurvivalCrossValidation.to_frame`
SURVIVAL_FOLD_COLUMNS = ["fold", "n_train", "n_test", "test_events", "size", "harrell_c", "uno_c", "auc",
                         "integrated_brier", "loss", "train_harrell_c", "train_loss", "objective", "gap", "status",
                         "time", "scale"]


@dataclass(repr=False, eq=False)
class SurvivalCrossValidation(CrossValidation):
    """Per-fold held-out metrics of a time-to-event score refitted on K folds stratified by event;
    built by :func:`riskformula.cross_validate` for a ``Surv(time, event) ~ ...`` formula.

    Attributes
    ----------
    folds : DataFrame
        One row per fold (columns :data:`SURVIVAL_FOLD_COLUMNS`), each the fold model's
        ``evaluate()`` on its held-out rows: ``harrell_c`` and ``uno_c`` (Harrell's and Uno's C),
        ``auc`` (the time-dependent AUC at the first horizon), ``integrated_brier``, and ``loss``,
        the negative log partial likelihood per held-out row (risk sets among the fold's rows); the
        fold model's ``size``, ``gap``, ``status``, training Harrell's C and loss, and ``scale``.
    horizons : tuple of float
        The horizons every fold model shares (the first is that of ``auc``).
    models, fold_of, formula, seed, fit_args, notes : as :class:`CrossValidation`'s.
    """

    horizons: tuple = ()

    _summarised = ["harrell_c", "uno_c", "auc", "integrated_brier", "loss", "size", "gap", "train_harrell_c"]

    def summary_frame(self) -> pd.DataFrame:
        """Mean, standard deviation (ddof 1), min and max over folds of the main metrics."""
        f = self.folds[self._summarised].astype(float)
        return (pd.DataFrame({"mean": f.mean(), "sd": f.std(ddof=1), "min": f.min(), "max": f.max()})
                .rename_axis("metric"))

    def to_dict(self) -> dict:
        """As :meth:`CrossValidation.to_dict`, with the ``horizons``."""
        return {**super().to_dict(), "horizons": [float(h) for h in self.horizons]}

    def _fold_display(self) -> pd.DataFrame:
        f = self.folds
        out = pd.DataFrame({
            "fold": f["fold"].astype(str), "train": [f"{n:,d}" for n in f["n_train"]],
            "test": [f"{n:,d}" for n in f["n_test"]], "events": [f"{n:,d}" for n in f["test_events"]],
            "size": f["size"].astype(str), "Harrell's C": [fmt_fixed(x) for x in f["harrell_c"]],
            "Uno's C": [fmt_fixed(x) for x in f["uno_c"]], "AUC(t)": [fmt_fixed(x) for x in f["auc"]],
            "IBS": [fmt_fixed(x, 4) for x in f["integrated_brier"]], "PL loss": [fmt_fixed(x, 4) for x in f["loss"]],
            "train C": [fmt_fixed(x) for x in f["train_harrell_c"]],
            "gap": [fmt_gap(g, m.settings.gap_tolerance) for g, m in zip(f["gap"], self.models)],
            "status": f["status"]})
        if (f["scale"] != 1).any():
            out.insert(5, "scale", [f"{x:g}" for x in f["scale"]])
        return out

    def _metric_labels(self) -> dict:
        h = f"{self.horizons[0]:g}" if self.horizons else "t"
        return {"harrell_c": "Harrell's C", "uno_c": "Uno's C", "auc": f"AUC at t = {h}",
                "integrated_brier": "integrated Brier score", "loss": "partial likelihood loss per row",
                "size": "size", "gap": "gap", "train_harrell_c": "training Harrell's C"}

    def _metric_formats(self) -> dict:
        return {"loss": lambda x: fmt_fixed(x, 4), "integrated_brier": lambda x: fmt_fixed(x, 4)}

    def _header(self) -> list[tuple[str, str]]:
        return [("Formula", self.formula), ("Folds", f"{len(self.folds)} (stratified by event, seed {self.seed})"),
                ("Horizons", ", ".join(f"{h:g}" for h in self.horizons)),
                ("Rows", f"{int(self.folds['n_test'].sum()):,d}")]

    def __repr__(self) -> str:
        s = self.summary_frame()
        return (f"<SurvivalCrossValidation: {self.formula}; {len(self.folds)} folds; test Harrell's C "
                f"{fmt_fixed(s.loc['harrell_c', 'mean'])} ± {fmt_fixed(s.loc['harrell_c', 'sd'])}; partial "
                f"likelihood loss {fmt_fixed(s.loc['loss', 'mean'], 4)}>")
