"""Evaluate a fitted risk score on data: discrimination, calibration and net benefit.

:func:`evaluate` returns an :class:`Evaluation`, a report object in the same mould as the
fit summary: it never prints, renders through :mod:`riskformula.reports.render` in four
formats, and exposes every table as a DataFrame.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import CalibrationWarning, DataError, SettingsError
from . import metrics as m
from . import render
from .metrics._inputs import prepare
from .metrics.decision import check_thresholds
from .metrics.discrimination import score_counts
from .render import fmt_ci, fmt_fixed, fmt_percent
from ..backends import backend_for
from ..design.spec import check_frame
from ..fairness.groups import check_group_count, warn_small_groups

__all__ = ["DEFAULT_THRESHOLDS", "Evaluation", "evaluate", "evaluate_arrays"]

#: thresholds of the decision-curve table when none are given: 0.01, 0.02, ..., 0.99
DEFAULT_THRESHOLDS = np.round(np.arange(1, 100) / 100, 2)

#: confidence level of every interval in the report
LEVEL = 0.95

#: headline columns of the by-group table, in order
HEADLINE = ["n", "events", "observed_risk", "predicted_risk", "auc", "auc_lower", "auc_upper",
            "cal", "ece", "brier", "log_loss", "calibration_intercept", "calibration_slope",
            "hl_statistic", "hl_df", "hl_p_value", "aunbc"]


# --------------------------------------------------------------------------------------
# gathering predictions
# --------------------------------------------------------------------------------------


def _model_column(model, method: str, data: pd.DataFrame) -> pd.Series:
    fn = getattr(model, method, None)
    if not callable(fn):
        raise SettingsError(f"`model` must have a `{method}(data)` method; got "
                        f"{type(model).__name__} without one. Pass a fitted risk score.")
    out = fn(data)
    if isinstance(out, pd.Series):
        return out
    arr = np.asarray(out)
    if arr.ndim != 1 or arr.size != len(data):
        raise DataError(f"`model.{method}(data)` returned {arr.size} values for {len(data)} rows "
                        "of `data`; return one value per row (a Series indexed like `data`).")
    return pd.Series(arr, index=data.index)


#: predicted risks this close to 0 or 1 are "extreme" for the Hosmer–Lemeshow note
EXTREME_RISK = 0.001


def hosmer_lemeshow_tail_note(hl) -> str | None:
    """A note when most of a significant Hosmer–Lemeshow statistic comes from groups holding
    predicted risks above 99.9 % or below 0.1 %: there an outcome the model all but excluded adds
    about 1/(1 − risk) (or 1/risk) to the statistic, so a few rows read as a large misfit."""
    t = hl.table
    if t is None or len(t) == 0 or not np.isfinite(hl.statistic) or not hl.p_value < 0.05:
        return None
    n, o, e = (t[c].to_numpy(float) for c in ("n", "observed", "expected"))
    mean = np.divide(e, n, out=np.full(len(n), np.nan), where=n > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        part = np.where(n > 0, (o - e) ** 2 / (e * (1 - mean)), 0.0)
    high = t["risk_max"].to_numpy(float) > 1 - EXTREME_RISK
    low = (t["risk_min"].to_numpy(float) < EXTREME_RISK) & ~high
    extreme = high | low
    share = float(np.nansum(part[extreme]) / hl.statistic) if hl.statistic > 0 else 0.0
    if not extreme.any() or share < 0.5:
        return None
    where = " and ".join(w for w, on in (("above 99.9%", high.any()), ("below 0.1%", low.any())) if on)
    surprises = int(round(float(np.sum((n - o)[high]) + np.sum(o[low]))))
    return (f"Hosmer–Lemeshow: {share:.0%} of its statistic ({np.nansum(part[extreme]):.1f} of {hl.statistic:.1f}) "
            f"comes from {int(extreme.sum())} group(s) of {int(n[extreme].sum()):,d} rows with predicted risks "
            f"{where}, where {surprises:,d} outcome(s) the model all but excluded each add about 1/(1 − risk) to "
            "it. The test is right that those risks are too extreme, but the misfit concerns these few rows: read "
            "the reliability table.")


def _collect(model, data: pd.DataFrame, by: str | None):
    """Outcome, risk, score (and the `by` column) on the rows the model could score."""
    if not isinstance(data, pd.DataFrame):
        check_frame(data, "evaluate")  # a file's path or a data set's name gets its own advice
        raise DataError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    if by is not None and (not isinstance(by, Hashable) or by not in data.columns):
        shown = ", ".join(map(str, list(data.columns)[:10]))
        more = ", ..." if data.shape[1] > 10 else ""
        raise SettingsError(f"`by` = {by!r} is not a column of `data`. Columns: {shown}{more}.")
    cols = {"y": _model_column(model, "observed", data),
            "risk": _model_column(model, "predict", data),
            "score": _model_column(model, "score", data)}
    if all(s.index.equals(data.index) for s in cols.values()):
        frame = pd.DataFrame({k: s.to_numpy() for k, s in cols.items()}, index=data.index)
    else:
        # the model dropped rows (e.g. missing values): align on the index of `data`
        if not data.index.is_unique:
            raise DataError("The model returned predictions for a subset of rows, but "
                            "`data` has a duplicated index so they cannot be matched; "
                            "call `data.reset_index(drop=True)` first.")
        for k, s in cols.items():
            extra = s.index.difference(data.index)
            if len(extra):
                raise DataError(f"`model` returned {k} for index labels not in `data` "
                                f"(e.g. {extra[0]!r}).")
        frame = pd.DataFrame({k: s.reindex(data.index).to_numpy() for k, s in cols.items()},
                             index=data.index)
    if by is not None:
        frame["by"] = data[by].to_numpy()
    frame = frame.astype({"y": float, "risk": float, "score": float})
    keep = frame[["y", "risk", "score"]].notna().all(axis=1)
    return frame.loc[keep], int((~keep).sum())


# --------------------------------------------------------------------------------------
# metrics with undefined values reported as NA
# --------------------------------------------------------------------------------------


def _single_class(y: np.ndarray) -> str | None:
    if (y == 1).all():
        return "only events"
    if (y == 0).all():
        return "only non-events"
    return None


def _totals(y, risk, w) -> tuple[int, int, float]:
    """Rows, events and mean predicted risk (``w``: frequency weights, or None for one per row)."""
    if w is None:
        return int(y.size), int(y.sum()), float(risk.mean())
    return int(round(float(w.sum()))), int(round(float(w @ y))), float(np.average(risk, weights=w))


def _headline(y, risk, score, where: str, aunbc_thresholds, problems: list[str], w=None) -> dict:
    """Headline metrics of one group; undefined ones become NaN with a warning and a note."""
    n, events, predicted = _totals(y, risk, w)
    out: dict = {"n": n, "events": events, "observed_risk": events / n if w is not None else float(y.mean()),
                 "predicted_risk": predicted}
    lone = _single_class(y)
    if lone:
        problems.append(f"{where}: {lone}, so AUC and the calibration intercept and slope "
                        "are undefined (reported as NA).")
        out.update(auc=np.nan, auc_lower=np.nan, auc_upper=np.nan)
    else:
        a = m.auc_ci(y, score, level=LEVEL, weights=w)
        out.update(auc=a.auc, auc_lower=a.lower, auc_upper=a.upper)
    out.update(cal=m.cal_by_score(y, risk, score, weights=w),
               ece=m.expected_calibration_error(y, risk, weights=w),
               brier=m.brier_score(y, risk, weights=w), log_loss=m.log_loss(y, risk, weights=w))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CalibrationWarning)
        try:
            c = m.calibration_intercept_slope(y, risk, level=LEVEL, weights=w)
            out.update(calibration_intercept=c.intercept, calibration_slope=c.slope)
        except DataError as e:
            if not lone:
                problems.append(f"{where}: calibration intercept and slope not estimable ({e})")
            out.update(calibration_intercept=np.nan, calibration_slope=np.nan)
        hl = m.hosmer_lemeshow(y, risk, weights=w)
    for caught_warning in caught:
        if issubclass(caught_warning.category, CalibrationWarning):
            problems.append(f"{where}: {caught_warning.message}")
        else:  # not ours to swallow
            warnings.warn_explicit(caught_warning.message, caught_warning.category,
                                   caught_warning.filename, caught_warning.lineno)
    out.update(hl_statistic=hl.statistic, hl_df=hl.df, hl_p_value=hl.p_value,
               aunbc=m.aunbc(y, risk, aunbc_thresholds, weights=w))
    return out


# --------------------------------------------------------------------------------------
# the report object
# --------------------------------------------------------------------------------------


def _grid_label(t: np.ndarray) -> str:
    if t.size > 4:
        return f"{t[0]:g}, {t[1]:g}, ..., {t[-1]:g}"
    return ", ".join(f"{v:g}" for v in t)


@dataclass(frozen=True, repr=False, eq=False)
class Evaluation(render.Rendered):
    """Discrimination, calibration and net benefit of a risk score on one data set.

    Built by :func:`evaluate`; not meant to be constructed directly. Print it for the
    report, or use :meth:`to_frame`, :meth:`to_dict` and :attr:`tables` for the numbers.

    Attributes
    ----------
    formula : str
        The model's formula.
    n, events, rows_dropped : int
        Rows evaluated, events among them, and rows dropped because the model returned
        no prediction, score or outcome for them.
    auc : AUCResult or None
        AUC (ties count 1/2) with DeLong 95% CI; None when ``y`` has a single class.
    cal, ece, brier, log_loss : float
        CAL by score (Ustun & Rudin, 2019), equal-width 10-bin ECE, Brier score, mean log loss.
    calibration : CalibrationResult or None
        Calibration intercept (in the large) and slope with 95% CIs.
    hosmer_lemeshow : HosmerLemeshowResult
        Hosmer–Lemeshow test (tie-aware grouping, see :func:`metrics.hosmer_lemeshow`).
    reliability : DataFrame
        Predicted vs observed risk per score, Wilson 95% CIs.
    net_benefit : DataFrame
        Decision curve: model, treat-all and treat-none per threshold.
    aunbc : float
        the area under the net-benefit curve (Chi & Birbil, 2026) on ``aunbc_thresholds``.
    roc, score_counts : DataFrame
        ROC curve points, and events / non-events per distinct score (for plots).
    by : str or None
        Column the by-group table splits on.
    by_group : DataFrame or None
        Headline metrics per level of ``by`` plus an ``overall`` row.
    notes : tuple of str
        Definitions used and anything reported as NA.
    """

    formula: str
    n: int
    events: int
    rows_dropped: int
    predicted_risk: float
    auc: m.AUCResult | None
    cal: float
    ece: float
    brier: float
    log_loss: float
    calibration: m.CalibrationResult | None
    hosmer_lemeshow: m.HosmerLemeshowResult
    reliability: pd.DataFrame
    net_benefit: pd.DataFrame
    aunbc: float
    aunbc_thresholds: np.ndarray
    roc: pd.DataFrame | None
    score_counts: pd.DataFrame
    by: str | None = None
    by_group: pd.DataFrame | None = None
    notes: tuple[str, ...] = field(default=())

    _title = "Risk score evaluation"

    # ---- numbers ----------------------------------------------------------------

    @property
    def observed_risk(self) -> float:
        """Share of events (prevalence)."""
        return self.events / self.n

    def _metric_rows(self) -> pd.DataFrame:
        a, c, hl = self.auc, self.calibration, self.hosmer_lemeshow
        nan = float("nan")
        rows = [
            ("n", self.n, nan, nan),
            ("events", self.events, nan, nan),
            ("observed_risk", self.observed_risk, nan, nan),
            ("predicted_risk", self.predicted_risk, nan, nan),
            ("auc", a.auc if a else nan, a.lower if a else nan, a.upper if a else nan),
            ("cal", self.cal, nan, nan),
            ("ece", self.ece, nan, nan),
            ("brier", self.brier, nan, nan),
            ("log_loss", self.log_loss, nan, nan),
            ("calibration_intercept", c.intercept if c else nan,
             c.intercept_lower if c else nan, c.intercept_upper if c else nan),
            ("calibration_slope", c.slope if c else nan,
             c.slope_lower if c else nan, c.slope_upper if c else nan),
            ("hl_statistic", hl.statistic, nan, nan),
            ("hl_df", hl.df, nan, nan),
            ("hl_p_value", hl.p_value, nan, nan),
            ("aunbc", self.aunbc, nan, nan),
        ]
        # counts stay whole numbers: a float column would print n = 341 as 3.41e+02 beside a 0.0001
        counts = ("n", "events", "hl_df")
        out = pd.DataFrame(rows, columns=["metric", "value", "lower", "upper"])
        out["value"] = pd.Series([int(v) if k in counts and v == v else float(v) for k, v, _, _ in rows],
                                 dtype=object)
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per metric (``metric, value, lower, upper``; ``value`` holds the counts ``n``,
        ``events`` and ``hl_df`` as whole numbers, the rest as floats), or with ``by`` the by-group
        table."""
        if self.by_group is not None:
            return self.by_group.copy()
        return self._metric_rows()

    def to_dict(self) -> dict:
        """Headline metrics as plain Python values (NaN for NA); ``by_group`` nested by level."""
        out: dict[str, Any] = {"formula": self.formula, "rows_dropped": self.rows_dropped}
        for row in self._metric_rows().itertuples():
            out[row.metric] = render.plain(row.value)
            if np.isfinite(row.lower):
                out[row.metric + "_lower"], out[row.metric + "_upper"] = row.lower, row.upper
        for k in ("n", "events", "hl_df"):
            out[k] = int(out[k])
        out["aunbc_thresholds"] = [float(t) for t in self.aunbc_thresholds]
        if self.by_group is not None:
            bg = self.by_group.set_index(self.by)
            out["by"] = self.by
            out["by_group"] = {str(k): rec for k, rec in zip(bg.index, bg.to_dict("records"))}
        return out

    def _tables(self) -> dict[str, pd.DataFrame | None]:
        return {"metrics": self._metric_rows(), "reliability": self.reliability,
                "hosmer_lemeshow": self.hosmer_lemeshow.table, "net_benefit": self.net_benefit,
                "score_counts": self.score_counts, "roc": self.roc, "by_group": self.by_group}

    # ---- rendering --------------------------------------------------------------

    def _header(self) -> list[tuple[str, str]]:
        a, c, hl = self.auc, self.calibration, self.hosmer_lemeshow
        items = [
            ("Formula", self.formula),
            ("Observations", f"{self.n:,d}"),
            ("Events", f"{self.events:,d} ({fmt_percent(self.observed_risk)})"),
        ]
        if self.rows_dropped:
            items.append(("Rows dropped", f"{self.rows_dropped:,d}"))
        items += [
            ("Mean predicted risk", fmt_percent(self.predicted_risk)),
            ("AUC (95% CI)", fmt_ci(a.auc, a.lower, a.upper) if a else "NA"),
            ("CAL (by score)", fmt_percent(self.cal)),
            ("ECE (10 equal-width bins)", fmt_percent(self.ece)),
            ("Brier score", fmt_fixed(self.brier, 4)),
            ("Log loss", fmt_fixed(self.log_loss, 4)),
            ("Calibration intercept (95% CI)",
             fmt_ci(c.intercept, c.intercept_lower, c.intercept_upper) if c else "NA"),
            ("Calibration slope (95% CI)",
             fmt_ci(c.slope, c.slope_lower, c.slope_upper) if c else "NA"),
            ("Hosmer–Lemeshow", hl.describe()),
            ("AUNBC", f"{self.aunbc:.4f}"),
        ]
        return items

    def _reliability_display(self) -> pd.DataFrame:
        r = self.reliability
        return pd.DataFrame({
            "score": [v if isinstance(v, str) else f"{v:g}" for v in r["score"]],
            "n": [render.fmt_number(v) for v in r["n"]],
            "events": [render.fmt_number(v) for v in r["events"]],
            "predicted": [fmt_percent(v) for v in r["predicted_risk"]],
            "observed": [fmt_percent(v) for v in r["observed_risk"]],
            "95% CI": [f"{fmt_percent(lo)} – {fmt_percent(hi)}" for lo, hi in zip(r["ci_lower"], r["ci_upper"])],
        })

    def _net_benefit_shown(self) -> pd.DataFrame:
        nb = self.net_benefit
        if len(nb) > 20:
            # long grids are summarised at the round thresholds 0.1, 0.2, ... when present
            tenths = np.isclose(nb["threshold"] * 10, np.round(nb["threshold"] * 10))
            tenths &= nb["threshold"].to_numpy() > 0
            idx = np.flatnonzero(tenths) if tenths.sum() >= 3 else \
                np.unique(np.linspace(0, len(nb) - 1, 10).round().astype(int))
            nb = nb.iloc[idx]
        return pd.DataFrame({
            "threshold": [f"{t:g}" for t in nb["threshold"]],
            "model": [f"{v:.4f}" for v in nb["net_benefit"]],
            "treat all": [f"{v:.4f}" for v in nb["treat_all"]],
            "treat none": [f"{v:.4f}" for v in nb["treat_none"]],
        })

    def _by_group_display(self) -> pd.DataFrame:
        g = self.by_group
        assert g is not None  # shown only for a by-group evaluation
        return pd.DataFrame({
            self.by: g[self.by].astype(str),
            "n": [render.fmt_number(int(v)) for v in g["n"]],
            "events": [render.fmt_number(int(v)) for v in g["events"]],
            "observed": [fmt_percent(v) for v in g["observed_risk"]],
            "predicted": [fmt_percent(v) for v in g["predicted_risk"]],
            "AUC (95% CI)": [fmt_ci(a, lo, hi) for a, lo, hi in
                             zip(g["auc"], g["auc_lower"], g["auc_upper"])],
            "CAL": [fmt_percent(v) for v in g["cal"]],
            "ECE": [fmt_percent(v) for v in g["ece"]],
            "Brier": [fmt_fixed(v, 4) for v in g["brier"]],
            "intercept": [fmt_fixed(v) for v in g["calibration_intercept"]],
            "slope": [fmt_fixed(v) for v in g["calibration_slope"]],
            "AUNBC": [fmt_fixed(v, 4) for v in g["aunbc"]],
        })

    def _sections(self) -> list:
        out = [("Reliability by score", self._reliability_display()),
               ("Net benefit", self._net_benefit_shown())]
        if self.by_group is not None:
            out.append((f"By {self.by}", self._by_group_display()))
        return out

    def __repr__(self) -> str:
        a = f"AUC {self.auc.auc:.3f}" if self.auc else "AUC NA"
        by = f"; by {self.by}" if self.by else ""
        return (f"<Evaluation: {self.formula}; {self.n:,d} obs; {self.events:,d} events; "
                f"{a}; CAL {fmt_percent(self.cal)}{by}>")


# --------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------


def evaluate(model, data: pd.DataFrame, by: str | None = None, thresholds=None) -> Evaluation:
    """Evaluate a fitted risk score on ``data``.

    Parameters
    ----------
    model : RiskScore
        A fitted risk score (a :class:`~riskformula.RiskScore` or a subclass), or anything with
        ``predict(data)`` (risks), ``score(data)`` (total points, intercept excluded),
        ``observed(data)`` (0/1 outcome) and ``formula``.
    data : pandas.DataFrame or dask.dataframe.DataFrame
        Rows to evaluate on; not modified. Rows for which the model returns no risk, score
        or outcome (NaN or absent from the returned index) are dropped and counted. A dask
        DataFrame is reduced partition by partition to the number of rows per distinct
        (outcome, risk, score) and the report computed from those counts (the same numbers).
    by : str, optional
        Column of ``data`` to split on: the headline metrics are repeated per level (missing
        values form their own level) plus an ``overall`` row, e.g. a fairness audit by sex.
        One column name (combine several into one column first); a continuous column (more than
        20 levels, most under 30 rows) is refused, as in :meth:`RiskScore.fairness`.
    thresholds : array-like, optional
        Risk thresholds in [0, 1) for the net-benefit table *and* the AUNBC. By default the
        table uses 0.01, 0.02, ..., 0.99 and the AUNBC the grid 0.1, ..., 0.9 of Chi & Birbil (2026), so the
        AUNBC is comparable with the values reported in that paper.

    Returns
    -------
    Evaluation
        Prints as a report; ``to_frame()`` and its attributes (``auc``, ``cal``, ``reliability``,
        ``net_benefit``, ...) hold the numbers.

    Warns
    -----
    CalibrationWarning
        When a statistic is undefined (a group with one class has no AUC; equal risks have
        no calibration slope; fewer than 3 risk groups give no HL p-value). It is reported
        as NA and explained in the notes.
    SmallGroupWarning
        With ``by``, when a level has fewer than 30 rows.

    Examples
    --------
    >>> ev = evaluate(fit, test_data, by="sex")  # doctest: +SKIP
    >>> print(ev)  # doctest: +SKIP
    >>> ev.to_frame()  # doctest: +SKIP
    """
    if getattr(getattr(model, "design", None), "survival", None) is not None:
        # a time-to-event score: evaluated at its horizons (Harrell's and Uno's C, AUC(t), calibration
        # against Kaplan–Meier), never as if its event indicator were a binary outcome
        if by is not None or thresholds is not None:
            raise SettingsError("`by` and `thresholds` are the binary evaluation's; a time-to-event score is "
                                "evaluated at its horizons: m.evaluate(data, horizon=...).")
        return model.evaluate(data)
    if isinstance(by, (list, tuple)):
        # a list is not a column name; m.fairness(by=[...]) forms intersectional groups, this does not
        raise SettingsError(f"`by` takes one column name here; got {by!r}. For groups of several columns, "
                            "combine them into one first, e.g. data.assign(group=data['a'].astype(str) + ', ' + "
                            "data['b'].astype(str)) and by='group', or audit the rates with "
                            "m.fairness(data, by=[...]).")
    backend = backend_for(data)
    if backend is not None:
        return backend.evaluate(model, data, by=by, thresholds=thresholds)
    frame, dropped = _collect(model, data, by)
    if frame.empty:
        raise DataError("No rows left to evaluate: the model returned no complete "
                        "(outcome, risk, score) triple for any row of `data`.")
    y, risk, score = (frame[c].to_numpy() for c in ("y", "risk", "score"))
    return evaluate_arrays(model, y, risk, score, by=by, by_values=frame["by"].to_numpy() if by is not None else None,
                           dropped=dropped, thresholds=thresholds)


def evaluate_arrays(model, y, risk, score, *, weights=None, by: str | None = None, by_values=None,
                    dropped: int = 0, thresholds=None) -> Evaluation:
    """The :class:`Evaluation` of outcomes, risks and scores already gathered: one entry per row,
    or per distinct row with frequency ``weights`` (its number of rows; the same report)."""
    y, risk, score = (np.asarray(a, dtype=float) for a in (y, risk, score))
    w = None if weights is None else np.asarray(weights, dtype=float)
    # full validation (0/1 outcome, risks in [0, 1]) with the metrics' own messages
    prepare(y, risk, score, w)
    if w is not None and not (w > 0).all():
        keep = w > 0
        y, risk, score, w = y[keep], risk[keep], score[keep], w[keep]
        by_values = None if by_values is None else np.asarray(by_values, dtype=object)[keep]
    if thresholds is None:
        nb_grid, aunbc_grid = DEFAULT_THRESHOLDS, m.PAPER_THRESHOLDS
    else:
        nb_grid = check_thresholds(thresholds)
        aunbc_grid = nb_grid[nb_grid > 0]
    problems: list[str] = []
    overall = _headline(y, risk, score, "overall", aunbc_grid, problems, w)
    lone = _single_class(y)

    by_group = None
    if by is not None:
        # a continuous `by` gives one group per value, each with a warning: refused as in m.fairness()
        check_group_count(by_values, by, f"evaluate(by={by!r})", weights=w)
        rows = []
        levels = pd.Series(by_values)
        for level, idx in levels.groupby(levels, dropna=False, sort=True, observed=True).indices.items():
            label = "NA" if (not isinstance(level, str) and pd.isna(level)) else level
            rows.append({by: label, **_headline(y[idx], risk[idx], score[idx], f"{by} = {label}", aunbc_grid,
                                                problems, None if w is None else w[idx])})
        rows.append({by: "overall", **overall})
        by_group = pd.DataFrame(rows, columns=[by, *HEADLINE])
        warn_small_groups(f"evaluate(by={by!r})", [("all rows", r[by], r["n"]) for r in rows[:-1]],
                          "their AUC and calibration are mostly noise (read them with their intervals)",
                          stacklevel=3)

    with warnings.catch_warnings():
        # already recorded in `problems` by _headline
        warnings.simplefilter("ignore", CalibrationWarning)
        try:
            calib = None if lone else m.calibration_intercept_slope(y, risk, level=LEVEL, weights=w)
        except DataError:  # e.g. risks of exactly 0 or 1; already a note via _headline
            calib = None
        hl = m.hosmer_lemeshow(y, risk, weights=w)
    for p in problems:
        warnings.warn(p, CalibrationWarning, stacklevel=3)

    _, binned = m.score_groups(score, w)
    vals, pos, neg = score_counts(y, score, np.ones(y.size) if w is None else w)
    notes = [
        "AUC counts tied scores as 1/2; 95% CI from the DeLong standard error (Wald, clipped to [0, 1]).",
        ("CAL and the reliability table group rows into 10 quantile bins of score (more than "
         "30 distinct scores); CAL compares each bin's mean predicted risk with its observed rate." if binned else
         "CAL and the reliability table group rows by distinct score; CIs are Wilson intervals."),
        "ECE uses 10 equal-width bins of predicted risk [0, 0.1), ..., [0.9, 1].",
        f"Hosmer–Lemeshow grouping: {hl.grouping}.",
        (f"AUNBC: Chi & Birbil's (2026) left Riemann sum of net benefit over p = 0, {_grid_label(aunbc_grid)} "
         "(widths up to 1); treat-all is not subtracted and the value is not standardized."),
    ]
    if len(nb_grid) > 20:
        notes.append(f"Net benefit is shown at a subset of its {len(nb_grid)} thresholds "
                     f"({_grid_label(nb_grid)}); see `.tables['net_benefit']`.")
    if dropped:
        notes.append(f"{dropped:,d} row(s) dropped: the model returned no risk, score or outcome.")
    tail = hosmer_lemeshow_tail_note(hl)
    if tail:
        notes.append(tail)
    notes += problems

    n, events, predicted = _totals(y, risk, w)
    return Evaluation(
        formula=str(getattr(model, "formula", "<no formula>")),
        n=n, events=events, rows_dropped=dropped,
        predicted_risk=predicted,
        auc=None if lone else m.auc_ci(y, score, level=LEVEL, weights=w),
        cal=overall["cal"], ece=overall["ece"], brier=overall["brier"],
        log_loss=overall["log_loss"], calibration=calib, hosmer_lemeshow=hl,
        reliability=m.reliability_table(y, risk, score, weights=w, level=LEVEL),
        net_benefit=m.net_benefit(y, risk, nb_grid, weights=w),
        aunbc=overall["aunbc"], aunbc_thresholds=np.asarray(aunbc_grid, dtype=float),
        roc=None if lone else m.roc_curve(y, score, weights=w),
        score_counts=pd.DataFrame({"score": vals, "events": pos.astype(int),
                                   "non_events": neg.astype(int)}),
        by=by, by_group=by_group, notes=tuple(notes),
    )
