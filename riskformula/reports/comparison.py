"""Compare fitted risk scores side by side: ``compare()`` (alias ``anova()``).

One row per model with its size, point range, loss, deviance, AIC/BIC, AUC, CAL and
certificate; likelihood-ratio tests between consecutive nested models; the points of every
model per term; and, given the training data, the unconstrained logistic regression on the
largest model's design as a reference for what integer points cost.

Time-to-event scores (``Surv(time, event) ~ ...``) are compared among themselves on the Cox
partial likelihood: its deviance, AIC and BIC (as each card's ``aic`` and ``bic``), Harrell's C,
likelihood-ratio tests of nested cards, and the unconstrained Cox regression (statsmodels'
``PHReg``) as the reference row.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import CalibrationWarning, DataError, SettingsError
from ..design import DesignMatrix
from ..design.missing import dropped_variables
from ..fitinfo import index_digest
from ..kinds import kind_of
from ..likelihood import fitted_scale
from ..record import ScoreRecord
from . import metrics, render
from .evaluation import evaluate
from .partial_likelihood import partial_likelihood
from .summary import within_tolerance
from .survival_metrics import harrell_c

__all__ = ["compare", "anova", "ComparisonTable", "points_table"]

#: numeric columns of :meth:`ComparisonTable.to_frame`, in order
COLUMNS = ["model", "n", "size", "scale", "points_min", "points_max", "loss", "deviance", "aic", "bic",
           "auc", "cal", "gap", "status"]
#: the columns of time-to-event scores: the partial likelihood's loss, deviance, AIC and BIC,
#: Harrell's C (and Uno's C on ``newdata``) instead of AUC and CAL
SURVIVAL_COLUMNS = ["model", "n", "events", "size", "scale", "points_min", "points_max", "loss", "deviance", "aic",
                    "bic", "harrell_c", "uno_c", "gap", "status"]
LR_COLUMNS = ["test", "from_model", "to_model", "df", "deviance_change", "p_value", "nested"]
REFERENCE_STATUS = "reference"


@dataclass(repr=False, eq=False)
class ComparisonTable(render.Rendered):
    """Fitted risk scores side by side; built by :func:`compare`.

    Print it for the report, or use :meth:`to_frame` (one row per model), :attr:`lr_tests`,
    :attr:`points` and :meth:`to_dict` for the numbers.

    Attributes
    ----------
    frame : DataFrame
        One row per model (columns :data:`COLUMNS`, or :data:`SURVIVAL_COLUMNS` for time-to-event
        scores); the reference regression (logistic, or Cox's for time-to-event scores), when
        present, is the last row with ``status == "reference"``.
    lr_tests : DataFrame or None
        Likelihood-ratio tests between consecutive models (training rows only).
    points : DataFrame
        Points of every model (columns) per term (rows), intercept last (no such row when no model
        has one: time-to-event and net-benefit cards with intercept 0); 0 where unused.
    evaluated_on : str
        ``"training rows"`` or ``"newdata"``.
    outcome : str
        The outcome the models predict.
    notes : tuple of str
        Definitions, approximations and anything skipped.
    short_names : bool
        Show model numbers and a key instead of the (long) labels in the tables.
    gap_tolerances : list of float, optional
        Each model's ``gap_tolerance`` (see :func:`~riskformula.reports.render.fmt_gap`).
    survival : bool
        Whether the models are time-to-event scores (losses and deviances are the Cox partial
        likelihood's; Harrell's and Uno's C instead of AUC and CAL).
    """

    frame: pd.DataFrame
    lr_tests: pd.DataFrame | None
    points: pd.DataFrame
    evaluated_on: str
    outcome: str
    notes: tuple[str, ...]
    short_names: bool = False
    gap_tolerances: list | None = None
    survival: bool = False

    _title = "Model comparison"

    # ---- numbers ----------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """One row per model: ``model, n, size, scale, points_min, points_max, loss, deviance, aic,
        bic, auc, cal, gap, status`` (a copy; ``scale`` is the score scale, NaN for the reference);
        for time-to-event scores ``events`` after ``n``, and ``harrell_c, uno_c`` instead of ``auc,
        cal``."""
        return self.frame.copy()

    def to_dict(self) -> dict:
        """Everything as plain Python values (NaN for NA)."""
        return {"evaluated_on": self.evaluated_on, "outcome": self.outcome,
                "models": render.records(self.frame),
                "lr_tests": None if self.lr_tests is None else render.records(self.lr_tests),
                "points": {c: {t: int(v) for t, v in self.points[c].items()} for c in self.points.columns},
                "notes": list(self.notes)}

    def _tables(self) -> dict[str, pd.DataFrame | None]:
        return {"models": self.frame, "points": self.points, "lr_tests": self.lr_tests}

    # ---- rendering --------------------------------------------------------------
    def _ids(self) -> list[str]:
        f = self.frame
        if not self.short_names:
            return list(f["model"])
        return [str(i) if s != REFERENCE_STATUS else "reference" for i, s in enumerate(f["status"], 1)]

    def _key(self) -> list[tuple[str, str]]:
        return [(f"Model {i}", lab) for i, lab in zip(self._ids(), self.frame["model"])
                if i != "reference"] if self.short_names else []

    def _tolerance(self, i: int) -> float:
        tolerances = self.gap_tolerances or []
        return tolerances[i] if i < len(tolerances) else render.DEFAULT_GAP_TOLERANCE

    def _models_display(self) -> pd.DataFrame:
        f = self.frame
        if self.survival:
            return self._survival_display()
        return self._columns(f, {"AUC": [render.fmt_fixed(v, 3) for v in f["auc"]],
                                 "CAL": [render.fmt_percent(v) for v in f["cal"]]})

    def _columns(self, f: pd.DataFrame, measures: dict, events: bool = False) -> pd.DataFrame:
        """The displayed table: model, n (and events), size, points, loss, deviance, AIC, BIC, the
        kind's own ``measures``, gap and status."""
        head = {"model": self._ids() if self.short_names else [
                    "reference" if s == REFERENCE_STATUS else lab for lab, s in zip(f["model"], f["status"])],
                "n": [render.fmt_number(int(v)) for v in f["n"]]}
        if events:
            head["events"] = [render.fmt_number(int(v)) for v in f["events"]]
        out = pd.DataFrame({
            **head,
            "size": [str(int(v)) for v in f["size"]],
            "points": ["real" if s == REFERENCE_STATUS else "none" if not np.isfinite(lo)
                       else f"{int(lo):+d}..{int(hi):+d}"
                       for lo, hi, s in zip(f["points_min"], f["points_max"], f["status"])],
            "loss": [render.fmt_fixed(v, 4) for v in f["loss"]],
            "deviance": [render.fmt_fixed(v, 2) for v in f["deviance"]],
            "AIC": [render.fmt_fixed(v, 1) for v in f["aic"]],
            "BIC": [render.fmt_fixed(v, 1) for v in f["bic"]],
            **measures,
            "gap": ["" if s == REFERENCE_STATUS else render.fmt_gap(g, self._tolerance(i))
                    for i, (g, s) in enumerate(zip(f["gap"], f["status"]))],
            "status": f["status"],
        })
        scales = f["scale"][f["status"] != REFERENCE_STATUS]
        if (scales != 1).any():  # only shown when some model has another score scale
            out.insert(out.columns.get_loc("size") + 1, "scale",
                       ["" if s == REFERENCE_STATUS else f"{v:g}" for v, s in zip(f["scale"], f["status"])])
        return out

    def _survival_display(self) -> pd.DataFrame:
        f = self.frame
        out = self._columns(f, {"Harrell's C": [render.fmt_fixed(v, 3) for v in f["harrell_c"]]}, events=True)
        if np.isfinite(f["uno_c"].to_numpy(float)).any():
            out.insert(out.columns.get_loc("Harrell's C") + 1, "Uno's C", [render.fmt_fixed(v, 3) for v in f["uno_c"]])
        return out

    def _lr_display(self) -> pd.DataFrame:
        t = self.lr_tests
        assert t is not None  # called only when there are tests (see _sections)
        return pd.DataFrame({
            "test": t["test"], "df": [f"{int(v):+d}" for v in t["df"]],
            "deviance change": [render.fmt_fixed(v, 3) for v in t["deviance_change"]],
            "p-value": [render.fmt_p(v) for v in t["p_value"]],
            "nested": ["yes" if v else "no" for v in t["nested"]],
        })

    def _header(self) -> list[tuple[str, str]]:
        n = int(self.frame["n"].iloc[0]) if len(set(self.frame["n"])) == 1 else None
        on = self.evaluated_on + (f" ({n:,d} rows)" if n is not None else "")
        return [("Outcome", self.outcome), ("Evaluated on", on)] + self._key()

    def _sections(self) -> list:
        out: list[tuple[str | None, pd.DataFrame | str]] = [(None, self._models_display())]
        ref = self.frame["status"] == REFERENCE_STATUS
        if ref.any():
            how = "maximum partial likelihood" if self.survival else "maximum likelihood"
            out.append((None, f"reference: {self.frame['model'][ref].iloc[0]}, fitted by {how}."))
        if self.lr_tests is not None:
            out.append(("Likelihood-ratio tests", self._lr_display()))
        out.append(("Points", render.points_display(self.points, self._ids())))
        return out

    def __repr__(self) -> str:
        k = int((self.frame["status"] != REFERENCE_STATUS).sum())
        return f"<ComparisonTable: {k} model(s) of {self.outcome}; evaluated on {self.evaluated_on}>"


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def _labels(models, names) -> list[str]:
    if names is not None:
        names = [names] if isinstance(names, str) else list(names)
        if len(names) != len(models):
            raise SettingsError(f"`names` has {len(names)} name(s) for {len(models)} model(s); give one per model.")
        if len(set(map(str, names))) != len(names):
            raise SettingsError(f"`names` must be distinct; got {names}.")
        return [str(n) for n in names]
    # only labels that repeat get more detail: a model with a formula of its own keeps just that
    labels = [m.formula for m in models]
    same = _repeated(labels)  # same formula, different limits: say which
    labels = [f"{m.formula} [max_size={m.settings.max_size}]" if lab in same else lab for m, lab in zip(models, labels)]
    same = _repeated(labels)
    if len({getattr(m, "scale", 1.0) for m in models}) > 1:  # e.g. a fixed and a fitted scale
        labels = [f"{m.formula} [max_size={m.settings.max_size}, scale={getattr(m, 'scale', 1.0):g}]"
                  if lab in same else lab for m, lab in zip(models, labels)]
    same = _repeated(labels)
    return [f"{i}: {lab}" if lab in same else lab for i, lab in enumerate(labels, 1)]


def _repeated(labels: list[str]) -> set[str]:
    """The labels that occur more than once."""
    return {lab for lab in labels if labels.count(lab) > 1}


def _check_same_problem(models, labels) -> None:
    """Same outcome coding and the very same training rows, or a DataError saying which differs."""
    first = models[0]
    for m, lab in zip(models[1:], labels[1:]):
        if (m.outcome, m.event) != (first.outcome, first.event):
            raise DataError(
                f"models {labels[0]!r} and {lab!r} predict different outcomes ({first.outcome} = "
                f"{first.event!r} vs {m.outcome} = {m.event!r}); their losses are not comparable. "
                "Compare them on common data with `newdata=`, or refit with the same outcome.")
        if m.nobs != first.nobs or m.rows_digest != first.rows_digest:
            raise DataError(
                f"models {labels[0]!r} ({first.nobs:,d} rows) and {lab!r} ({m.nobs:,d} rows) were fitted "
                "to different rows (e.g. different data or missing values dropped for different "
                "variables), so their training losses are not comparable. Refit on the same rows "
                "(e.g. data.dropna(subset=[...]) first) or compare on common data with `newdata=`.")


def every_scale(m: ScoreRecord) -> bool:
    """Whether the fit chose its score scale among every scale > 0 (the support search's
    certificate), not among a finite set."""
    return bool((m.solver.settings or {}).get("continuous_scale", False))


def _nested(a: ScoreRecord, b: ScoreRecord) -> bool:
    """Is every score ``a`` could be also one ``b`` could be (columns, point bounds, size limit,
    score scales)?"""
    return _not_nested_because(a, b) is None


def _not_nested_because(a: ScoreRecord, b: ScoreRecord) -> str | None:
    """Why some score ``a`` could be is not one ``b`` could be (None: ``a`` is nested in ``b``)."""
    if a.settings.max_size > b.settings.max_size:
        return f"its size limit is {b.settings.max_size}, below {a.settings.max_size}"
    if not (every_scale(b) or set(a.settings.scales) <= set(b.settings.scales)):
        missing = sorted(set(a.settings.scales) - set(b.settings.scales))
        return f"its score scales lack {', '.join(f'{m:g}' for m in missing)}"
    if (not every_scale(b) and (a.solver.settings or {}).get("refined_from") is not None
            and a.scale not in b.settings.scales):
        return f"its score scales lack {a.scale:g}, the scale the other card's points were moved to after its search"
    where = {c: j for j, c in enumerate(b.design.columns)}
    for j, c in enumerate(a.design.columns):
        lo, hi = a.settings.coef_lower[j], a.settings.coef_upper[j]
        if lo == 0 and hi == 0:
            continue
        if c not in where:
            return f"it has no column {c}"
        k = where[c]
        if lo < b.settings.coef_lower[k] or hi > b.settings.coef_upper[k]:
            bounds = f"[{b.settings.coef_lower[k]}, {b.settings.coef_upper[k]}]"
            return f"its points of {c} lie in {bounds}, not [{lo}, {hi}]"
    return None


def _row(label, n, size, k, points, loss, deviance, aic, bic, auc, cal, gap, status, scale=1.0) -> dict:
    used = [p for p in points if p != 0]
    return {"model": label, "n": int(n), "size": int(size), "scale": float(scale), "k": k,
            "points_min": float(min(used)) if used else np.nan,
            "points_max": float(max(used)) if used else np.nan,
            "loss": float(loss), "deviance": float(deviance), "aic": float(aic), "bic": float(bic),
            "auc": float(auc), "cal": float(cal), "gap": float(gap), "status": status}


def _model_row(m: ScoreRecord, label: str, newdata, notes: list[str]) -> dict:
    points = list(m.coef.to_numpy())
    k = m.df_model + 1  # the model's own count (riskformula.likelihood): items, intercept, scale
    if newdata is None:
        t = m.training_metrics
        if m.settings.weighted or m.settings.positive_weight != 1:
            notes.append(f"{label}: fitted with weights; its deviance, AIC and BIC are weighted as its fit is "
                         "(sample weights and the event weight as frequency weights; BIC's n is the total "
                         "weight), as `m.llf`, `m.aic` and `m.bic` are.")
        return _row(label, m.nobs, m.size, k, points, m.loss, m.deviance, m.aic, m.bic, t["auc"], t["cal"], m.gap,
                    m.status, m.scale)
    with warnings.catch_warnings():
        # calibration warnings concern Hosmer–Lemeshow and the calibration slope, which the
        # comparison does not show: they would be notes about absent columns
        warnings.simplefilter("ignore", CalibrationWarning)
        ev = evaluate(m, newdata)
    auc = ev.auc.auc if ev.auc is not None else np.nan
    return _row(label, ev.n, m.size, k, points, ev.log_loss, 2 * ev.n * ev.log_loss, np.nan, np.nan, auc, ev.cal,
                m.gap, m.status, m.scale)


def _reference_row(largest: ScoreRecord, data: pd.DataFrame, newdata, notes: list[str]) -> dict:
    """Unconstrained maximum-likelihood logistic regression on ``largest``'s full design."""
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import ConvergenceWarning, PerfectSeparationWarning

    # the largest model's own encoding (its declarative rules; no formula text is evaluated) on
    # the rows it was fitted to
    spec = largest.design
    rows = _training_rows(largest, data)
    design = DesignMatrix(spec=spec, X=spec.transform(rows, "fit", name="data"), y=spec.outcome_of(rows),
                          index=rows.index)
    X = np.column_stack([np.ones(design.nobs), design.X])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # GLM's IRLS with a pseudo-inverse tolerates collinear columns, where Logit would fail
        res = sm.GLM(design.y, X, family=sm.families.Binomial()).fit(maxiter=100)
    trouble = [w for w in caught if issubclass(w.category, (ConvergenceWarning, PerfectSeparationWarning,
                                                             RuntimeWarning))]
    k = int(np.linalg.matrix_rank(X))  # estimable parameters, intercept included
    beta = np.asarray(res.params, float)
    label = f"logistic regression ({design.X.shape[1]} columns, real coefficients)"
    if trouble:
        notes.append(f"The reference logistic regression did not converge cleanly ({trouble[0].message}); "
                     "with (quasi-)separated data its loss approaches 0 and its coefficients diverge.")
    if k < X.shape[1]:
        notes.append(f"The reference design has {X.shape[1] - k} redundant column(s) (collinear); AIC/BIC count "
                     f"{k} estimable parameters.")
    if newdata is None:
        y, lp = design.y, X @ beta
    else:
        Xn = design.transform(newdata)
        y, lp = design.outcome_of(newdata), np.column_stack([np.ones(len(Xn)), Xn]) @ beta
    risk = 1 / (1 + np.exp(-np.clip(lp, -700, 700)))
    loss = metrics.log_loss(y, risk) if newdata is not None else -float(res.llf) / design.nobs
    n = len(y)
    dev = 2 * n * loss
    auc = metrics.auc(y, lp) if 0 < y.sum() < n else np.nan
    aic, bic = (dev + 2 * k, dev + k * math.log(n)) if newdata is None else (np.nan, np.nan)
    row = _row(label, n, k - 1, k, [], loss, dev, aic, bic, auc, metrics.cal_by_score(y, risk, lp), 0.0,
               REFERENCE_STATUS)
    row["points_min"] = row["points_max"] = row["scale"] = np.nan
    return row


def _survival_row(label, n, events, size, k, points, loss, deviance, aic, bic, c_harrell, c_uno, gap, status,
                  scale) -> dict:
    used = [p for p in points if p != 0]
    return {"model": label, "n": int(n), "events": int(events), "size": int(size), "scale": float(scale), "k": k,
            "points_min": float(min(used)) if used else np.nan,
            "points_max": float(max(used)) if used else np.nan,
            "loss": float(loss), "deviance": float(deviance), "aic": float(aic), "bic": float(bic),
            "harrell_c": float(c_harrell), "uno_c": float(c_uno), "gap": float(gap), "status": status}


def _survival_model_row(m: Any, label: str, newdata, notes: list[str]) -> dict:
    """A time-to-event card's row: its partial likelihood, AIC and BIC (the card's own) and Harrell's C on the
    training rows, or its partial likelihood and Harrell's and Uno's C on ``newdata``."""
    points = list(m.coef.to_numpy())
    k = m.df_model  # the items, plus 1 for a fitted scale: no intercept in a partial likelihood
    if newdata is None:
        if m.settings.weighted:
            notes.append(f"{label}: fitted with weights; its deviance, AIC and BIC are weighted as its fit is, as "
                         "`m.llf`, `m.aic` and `m.bic` are.")
        return _survival_row(label, m.nobs, m.events, m.size, k, points, m.loss, m.deviance, m.aic, m.bic,
                             m.training_metrics["harrell_c"], np.nan, m.gap, m.status, m.scale)
    pl = partial_likelihood(m, newdata)
    try:
        ev = m.evaluate(newdata)
        c_harrell, c_uno = ev.harrell_c, ev.uno_c
    except SettingsError as e:  # a horizon the rows do not reach: Harrell's C needs none
        obs = m.observed_survival(newdata)
        c_harrell = harrell_c(obs["time"].to_numpy(float), obs["event"].to_numpy(int),
                              m.predict(newdata, which="score").to_numpy(float))
        c_uno = np.nan
        notes.append(f"{label}: no Uno's C on `newdata` ({e})")
    return _survival_row(label, pl.n, pl.events, m.size, k, points, pl.loss, pl.deviance, np.nan, np.nan,
                         c_harrell, c_uno, m.gap, m.status, m.scale)


def _training_rows(largest: ScoreRecord, data: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``data`` ``largest`` was fitted to, or a DataError saying they are not there."""
    spec = largest.design
    reads = list(dict.fromkeys(spec.required_variables() + spec.lhs_variables()))
    absent = [v for v in reads if v not in data.columns]
    if absent:
        raise DataError(f"`data` lacks the column(s) {absent} that the models use; pass the data frame the "
                        "models were fitted to as `data=` (it is only used for the reference row).")
    rows = data.dropna(subset=dropped_variables(spec, largest.settings.missing, reads))
    if len(rows) == 0 or len(rows.index) != largest.nobs or index_digest(rows.index) != largest.rows_digest:
        raise DataError(
            f"`data` are not the rows the models were fitted to: the formula selects {len(rows.index):,d} "
            f"row(s) of `data`, the models used {largest.nobs:,d} (or other index labels). Pass the data "
            "frame the models were fitted to as `data=` (it is only used for the reference row).")
    return rows


def _cox_reference_row(largest: Any, data: pd.DataFrame, newdata, notes: list[str]) -> dict | None:
    """Unconstrained maximum partial likelihood Cox regression (statsmodels' PHReg, the card's ties) on
    ``largest``'s full design; None (with a note) for a weighted fit, which PHReg cannot weigh."""
    from statsmodels.duration.hazard_regression import PHReg

    from ..problem.cox import CoxLoss

    if largest.settings.weighted:
        notes.append("No reference row: the models were fitted with weights, which statsmodels' PHReg does not take.")
        return None
    spec = largest.design
    rows = _training_rows(largest, data)
    X = spec.transform(rows, "fit", name="data")
    time, event = spec.survival_of(rows)
    k = int(np.linalg.matrix_rank(X)) if X.shape[1] else 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = PHReg(np.asarray(time, float), X, status=np.asarray(event, int), ties=largest.ties).fit()
    beta = np.asarray(res.params, float)
    if caught or not np.all(np.isfinite(beta)):
        notes.append("The reference Cox regression did not converge cleanly"
                     + (f" ({caught[0].message})" if caught else "") + "; with a monotone likelihood its "
                     "coefficients diverge.")
    if k < X.shape[1]:
        notes.append(f"The reference design has {X.shape[1] - k} redundant column(s) (collinear); AIC/BIC count "
                     f"{k} estimable parameters.")
    label = f"Cox regression ({X.shape[1]} columns, real coefficients)"
    if newdata is None:
        t, e, lp = np.asarray(time, float), np.asarray(event, int), X @ beta
        llf = float(res.llf)
    else:
        t, e = (np.asarray(a) for a in spec.survival_of(newdata))
        lp = spec.transform(newdata, "predict", name="newdata") @ beta
        llf = -CoxLoss(lp.reshape(-1, 1), t, e, ties=largest.ties).value(np.array([0.0, 1.0])) * len(t)
    n, events = len(t), int(np.sum(e))
    dev = -2 * llf
    aic, bic = (dev + 2 * k, dev + k * math.log(max(events, 1))) if newdata is None else (np.nan, np.nan)
    row = _survival_row(label, n, events, X.shape[1], k, [], -llf / n, dev, aic, bic,
                        harrell_c(t, e, lp), np.nan, 0.0, REFERENCE_STATUS, 1.0)
    row["points_min"] = row["points_max"] = row["scale"] = np.nan
    return row


def _compare_survival(models, labels, names, data, newdata, reference: bool) -> ComparisonTable:
    """:func:`compare` of time-to-event scores: the partial likelihood's loss, deviance, AIC and BIC,
    Harrell's C (and Uno's C on ``newdata``), likelihood-ratio tests and Cox's regression as reference."""
    if newdata is None:
        _check_same_problem(models, labels)
        different = [lab for m, lab in zip(models[1:], labels[1:]) if m.ties != models[0].ties]
        if different:
            raise DataError(f"models {labels[0]!r} and {different[0]!r} handle tied event times differently "
                            f"({models[0].ties} vs {models[labels.index(different[0])].ties}), so their partial "
                            "likelihoods are not comparable. Refit with the same `ties=`, or compare on `newdata=`.")
    notes: list[str] = []
    rows = [_survival_model_row(m, lab, newdata, notes) for m, lab in zip(models, labels)]
    lr = None
    if newdata is None and len(models) > 1:
        lr = _lr_tests(models, rows, labels, notes, numbered=names is None, survival=True)
    elif newdata is not None and len(models) > 1:
        notes.append("No likelihood-ratio tests on `newdata`: the χ² reference holds for fitted deviances only.")
    if reference and data is not None:
        largest = max(models, key=lambda m: len(m.design.columns))
        ref = _cox_reference_row(largest, data, newdata, notes)
        if ref is not None:
            rows.append(ref)
    elif reference:
        notes.append("No reference row: pass the training data as `data=` to add the unconstrained Cox "
                     "regression on the largest model's design.")
    if newdata is None:
        notes.insert(0, "Loss = −log partial likelihood per row (Cox, 1972; the card's ties); deviance = −2 log "
                        "partial likelihood on the training rows. AIC = deviance + 2k, BIC = deviance + k·log(events) "
                        "(as R's BIC of a coxph fit), k = df_model: the items (each level and each cut counts) plus 1 "
                        "for a score scale chosen among several; no intercept (the baseline hazard is not a "
                        "parameter of the partial likelihood). Integer points are not free real parameters, so AIC "
                        "and BIC are approximate. Harrell's C (Harrell et al., 1982) of the card's scores.")
    else:
        notes.insert(0, "Loss = −log partial likelihood per row of `newdata` (its risk sets among its own rows), "
                        "deviance = −2 log partial likelihood, Harrell's C (Harrell et al., 1982) and Uno's C (Uno et "
                        "al., 2011; events before each card's last horizon) on `newdata`; AIC and BIC are "
                        "training-data quantities and are not shown.")
    _status_notes(models, labels, notes)
    return ComparisonTable(pd.DataFrame(rows, columns=SURVIVAL_COLUMNS), lr, points_table(models, labels),
                           "training rows" if newdata is None else "newdata", models[0].outcome, tuple(notes),
                           short_names=names is None, gap_tolerances=[m.settings.gap_tolerance for m in models],
                           survival=True)


def _status_notes(models, labels, notes: list[str]) -> None:
    for m, lab in zip(models, labels):
        if m.status != "optimal":
            gap = render.fmt_gap(m.gap, m.settings.gap_tolerance)
            notes.append(f"{lab}: not proven optimal ({m.status.replace('_', ' ')}, gap {gap}); "
                         "a better score within its limits may exist.")
        elif within_tolerance(m) is not None:
            notes.append(f"{lab}: optimal only within its tolerance ({within_tolerance(m)}); "
                         "a better score within its limits may exist.")


def _is_survival(m: ScoreRecord) -> bool:
    """Whether ``m`` is a time-to-event score (its design's outcome is ``Surv(time, event)``)."""
    return getattr(m.design, "survival", None) is not None


def _lr_tests(models, rows, labels, notes: list[str], numbered: bool, survival: bool = False) -> pd.DataFrame:
    out = []
    for i in range(1, len(models)):
        a, b = models[i - 1], models[i]
        df = rows[i]["k"] - rows[i - 1]["k"]
        change = rows[i - 1]["deviance"] - rows[i]["deviance"]
        why = _not_nested_because(a, b)
        nested = why is None
        p = float(stats.chi2.sf(change, df)) if nested and df > 0 else np.nan
        # the notes name the models as the table does: by number, or by the user's names
        small, large = (f"model {i}", f"model {i + 1}") if numbered else (repr(labels[i - 1]), repr(labels[i]))
        test = f"{i} vs {i + 1}" if numbered else f"{labels[i - 1]} vs {labels[i]}"
        out.append({"test": test, "from_model": labels[i - 1], "to_model": labels[i],
                    "df": int(df), "deviance_change": float(change), "p_value": p, "nested": nested})
        if not nested and survival:
            hint = (" With scale=\"fit\" (the default) each search adds scales of its own near its best card; fit "
                    "both with the same list of scales (e.g. scale=[1, 2, 4]) or one fixed scale for a test."
                    if why is not None and why.startswith("its score scales") else "")
            notes.append(f"Test {test}: {large} cannot express every card {small} can ({why}), so no p-value is "
                         f"given.{hint}")
        elif not nested:
            notes.append(f"Test {test}: {large} cannot express every score {small} can (its columns, point "
                         "bounds, size limit or score scales are narrower), so no p-value is given.")
        elif df <= 0:
            notes.append(f"Test {test}: {large} uses no more terms than {small}; list models "
                         "from smaller to larger for a likelihood-ratio test.")
    if survival:
        notes.append("Likelihood-ratio tests compare consecutive models on the Cox partial likelihood: deviance "
                     "change = −2 log PL(smaller) + 2 log PL(larger), df = difference in df_model (the items, plus 1 "
                     "for a score scale chosen among several), p from χ²(df). The χ² reference assumes nested "
                     "maximum partial likelihood fits with real coefficients; with integer points the p-values are "
                     "approximate.")
    else:
        notes.append("Likelihood-ratio tests compare consecutive models: deviance change = deviance(smaller) − "
                     "deviance(larger), df = difference in df_model (the items, plus 1 for a score scale chosen by the "
                     "fit), p from χ²(df). The χ² reference assumes nested "
                     "maximum-likelihood fits with real coefficients; with integer points the p-values are "
                     "approximate.")
    return pd.DataFrame(out, columns=LR_COLUMNS)


def points_table(models, labels) -> pd.DataFrame:
    """Points of every model (columns ``labels``) per card item (rows, as the card prints them, in
    order of first use), the intercept last: each model's column is its card, so intercept + the
    points of a row's items is its score as ``predict`` computes it.  No intercept row when every
    model is of a kind without one (time-to-event, net benefit) and every card's intercept is 0."""
    cards = [{it.label: int(it.points) for it in m.scorecard.items} for m in models]
    names = list(dict.fromkeys(k for c in cards for k in c))
    intercept = any(getattr(kind_of(m), "intercept", True) or m.intercept != 0 for m in models)
    extra = ["intercept"] if intercept else []
    table = pd.DataFrame({lab: [c.get(k, 0) for k in names] + ([m.intercept] if intercept else [])
                          for m, c, lab in zip(models, cards, labels)}, index=names + extra)
    table.index.name = "term"
    return table


# --------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------


def compare(*models: ScoreRecord, names=None, data: pd.DataFrame | None = None,
            newdata: pd.DataFrame | None = None, reference: bool = True) -> ComparisonTable:
    """Compare fitted risk scores: fit, information criteria, discrimination, calibration, tests.

    Parameters
    ----------
    *models : RiskScore
        Two or more fitted scores (one is allowed), smaller first for likelihood-ratio tests:
        all binary risk scores, or all time-to-event scores (:class:`~riskformula.SurvivalScore`,
        compared on the Cox partial likelihood).
    names : list of str, optional
        Row labels; by default each model's formula, plus its size limit when formulas repeat, and
        its score scale when that still leaves two alike.
    data : DataFrame, optional
        The training data. Only used for the reference row: the unconstrained logistic
        regression (statsmodels GLM) on the design of the model with the most columns, or for
        time-to-event scores the unconstrained Cox regression (statsmodels PHReg, the cards'
        ties). Without it the reference row is skipped.
    newdata : DataFrame, optional
        Evaluate every model on these rows instead of the training rows (loss, deviance, AUC
        and CAL; AIC, BIC and likelihood-ratio tests are training-data quantities and are
        left out). Models fitted to different rows or outcomes can be compared only this way.
    reference : bool, default True
        Add the reference row when ``data`` is given.

    Returns
    -------
    ComparisonTable
        One row per model (plus the reference row), the likelihood-ratio tests and the points
        side by side; prints as a report and renders as Markdown, HTML or LaTeX.

    Raises
    ------
    DataError
        Without ``newdata``, when the models predict different outcomes or were fitted to
        different rows (or, for time-to-event scores, handle tied times differently); when
        ``data`` are not the models' training rows; when time-to-event and binary scores are
        mixed.

    Notes
    -----
    Deviance is −2 log-likelihood: 2·n·(mean log loss). AIC = deviance + 2k and BIC =
    deviance + k·log(n) with k = ``m.df_model + 1`` (the items, each level and cut counted, plus
    the intercept, plus 1 for a fitted score scale): the same numbers as each model's ``deviance``,
    ``aic`` and ``bic`` (weighted as its fit is). Integer points are not free real parameters, so
    AIC, BIC and the χ² p-values are approximate.

    Time-to-event scores: loss is the negative log partial likelihood per row (Cox, 1972), deviance
    −2 log partial likelihood, k = ``m.df_model`` (the items, plus 1 for a scale chosen among
    several; no intercept), BIC's log counts the events (as R's ``BIC`` of a ``coxph`` fit), and
    Harrell's C (plus Uno's C on ``newdata``) replaces AUC and CAL. A card is nested in another when
    the other's columns, point bounds, size limit and score scales cover it: with ``scale="fit"``
    each search adds scales of its own, so fit nested cards with one list of scales (or one fixed
    scale) to test them.

    Examples
    --------
    >>> small = rf.risk_score('diagnosis == "M" ~ radius_worst', df, max_size=1)  # doctest: +SKIP
    >>> big = rf.risk_score('diagnosis == "M" ~ radius_worst + texture_worst', df)  # doctest: +SKIP
    >>> print(rf.compare(small, big, data=df))  # doctest: +SKIP
    """
    if not models:
        raise SettingsError("compare() needs at least one fitted RiskScore: compare(m1, m2, ...).")
    for i, m in enumerate(models, 1):
        if not isinstance(m, ScoreRecord):
            hint = " Pass models as separate arguments: compare(m1, m2)." if isinstance(m, (list, tuple)) else ""
            raise SettingsError(f"argument {i} of compare() must be a fitted RiskScore; got {type(m).__name__}.{hint}")
    for arg, value in (("data", data), ("newdata", newdata)):
        if value is not None and not isinstance(value, pd.DataFrame):
            raise DataError(f"`{arg}` must be a pandas DataFrame; got {type(value).__name__}.")
    labels = _labels(models, names)
    survival = [_is_survival(m) for m in models]
    if any(survival) and not all(survival):
        i, j = survival.index(True), survival.index(False)
        raise DataError(f"compare() cannot put the time-to-event score {labels[i]!r} beside the binary risk score "
                        f"{labels[j]!r}: a partial likelihood and a binary likelihood are not comparable, nor are a "
                        "C-index over follow-up times and an AUC of a yes/no outcome. Compare time-to-event scores "
                        "among themselves and binary scores among themselves.")
    if all(survival):
        return _compare_survival(models, labels, names, data, newdata, reference)
    if newdata is None:
        _check_same_problem(models, labels)
    notes: list[str] = []
    rows = [_model_row(m, lab, newdata, notes) for m, lab in zip(models, labels)]

    lr = None
    if newdata is None and len(models) > 1:
        lr = _lr_tests(models, rows, labels, notes, numbered=names is None)
    elif newdata is not None and len(models) > 1:
        notes.append("No likelihood-ratio tests on `newdata`: the χ² reference holds for fitted deviances only.")
    if reference and data is not None:
        largest = max(models, key=lambda m: len(m.design.columns))
        if newdata is not None and (largest.outcome, largest.event) != (models[0].outcome, models[0].event):
            notes.append("No reference row: the models predict different outcomes.")
        else:
            rows.append(_reference_row(largest, data, newdata, notes))
    elif reference:
        notes.append("No reference row: pass the training data as `data=` to add the unconstrained "
                     "logistic regression on the largest model's design.")

    if newdata is None:
        notes.insert(0, "Deviance = 2 × n × mean log loss (= −2 log-likelihood) on the training rows. "
                        "AIC = deviance + 2k, BIC = deviance + k·log(n), k = items + 1 (the points and the "
                        "intercept; each level and each cut counts); integer points are not free real "
                        "parameters, so AIC and BIC are approximate.")
        if any(fitted_scale(m) for m in models):
            notes.insert(1, "A score scale chosen by the fit (scale=\"fit\" or a list) counts as one more "
                            "parameter in k and in the likelihood-ratio tests' df.")
    else:
        notes.insert(0, "Loss, deviance (2 × n × mean log loss), AUC and CAL on `newdata`; AIC and BIC "
                        "are training-data quantities and are not shown.")
    _status_notes(models, labels, notes)
    outcome = models[0].outcome if len({(m.outcome, str(m.event)) for m in models}) == 1 else "(differs by model)"
    return ComparisonTable(pd.DataFrame(rows, columns=COLUMNS), lr, points_table(models, labels),
                           "training rows" if newdata is None else "newdata", outcome, tuple(notes),
                           short_names=names is None,
                           gap_tolerances=[m.settings.gap_tolerance for m in models])


#: R users reach for ``anova(small, big)``; it is the same comparison
anova = compare
