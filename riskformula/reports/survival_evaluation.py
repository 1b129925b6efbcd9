"""Evaluate a time-to-event risk score on censored data: concordance, time-dependent AUC, Brier
scores and calibration at horizons.

:func:`evaluate_survival` works on arrays (each row's time, event indicator, total score and its
predicted risk within a horizon) and returns a :class:`SurvivalEvaluation`, a report in the mould of
the binary card's :class:`~riskformula.reports.evaluation.Evaluation`: it never prints, renders
through :mod:`riskformula.reports.render` in four formats and exposes its tables as DataFrames.
The measures are those of :mod:`riskformula.reports.survival_metrics`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import DataError, SettingsError
from . import render
from . import survival_metrics as sm
from .render import fmt_fixed, fmt_percent
from .score_bands import MIN_BAND_ROWS, ScoreBands, score_bands

__all__ = ["SurvivalEvaluation", "evaluate_survival", "LEVEL", "MAX_BRIER_TIMES"]

#: confidence level of the calibration intervals
LEVEL = 0.95

#: the most event times the default grid of the integrated Brier score holds inside its range
MAX_BRIER_TIMES = 100


# --------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------


def _rows(time, event, score) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    arrays = []
    for name, a in (("time", time), ("event", event), ("score", score)):
        try:
            v = np.asarray(a, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise DataError(f"`{name}` must be numbers, one per row.") from None
        arrays.append(v)
    t, e, s = arrays
    if len(e) != len(t) or len(s) != len(t):
        raise DataError(f"`time`, `event` and `score` must have one value per row; got {len(t)}, {len(e)} and "
                        f"{len(s)} values.")
    if not len(t):
        raise DataError("no rows to evaluate.")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise DataError("every `time` must be a finite number ≥ 0 (the time to the event or to censoring); "
                        f"{int(np.sum(~np.isfinite(t) | (t < 0))):,d} are not.")
    if not np.all((e == 0) | (e == 1)):
        raise DataError("`event` must hold 0 (censored) and 1 (event) only.")
    if not np.all(np.isfinite(s)):
        raise DataError("`score` must be finite numbers (each row's total points); it has missing or "
                        "infinite values.")
    if not e.any():
        raise DataError(f"`event` has no event among its {len(t):,d} rows (all censored): concordance, AUC and "
                        "the observed risk need events.")
    return t, e.astype(bool), s


def _train(train) -> tuple[np.ndarray, np.ndarray] | None:
    if train is None:
        return None
    if not isinstance(train, (tuple, list)) or len(train) != 2:
        raise SettingsError("`train` must be a pair (time, event) of the training rows, from which the censoring "
                            "weights of Uno's C, the AUC and the Brier score are estimated; got "
                            f"{type(train).__name__}.")
    t, e = (np.asarray(a, dtype=float).reshape(-1) for a in train)
    if len(t) != len(e):
        raise DataError(f"`train` holds {len(t)} times and {len(e)} event indicators; give one of each per "
                        "training row.")
    if not len(t) or not np.all(np.isfinite(t)) or np.any(t < 0):
        raise DataError("`train` times must be finite numbers ≥ 0 (and there must be some).")
    if not np.all((e == 0) | (e == 1)):
        raise DataError("`train` events must hold 0 (censored) and 1 (event) only.")
    return t, e.astype(bool)


def _horizons(horizons, time: np.ndarray, event: np.ndarray) -> np.ndarray:
    try:
        h = np.atleast_1d(np.asarray(horizons, dtype=float)).reshape(-1)
    except (TypeError, ValueError):
        raise SettingsError(f"`horizons` must be a time or a list of times; got {horizons!r}.") from None
    if not len(h) or not np.all(np.isfinite(h)) or np.any(h <= 0):
        raise SettingsError(f"`horizons` must be finite times > 0; got {h.tolist()}.")
    h = np.unique(h)
    last = float(time.max())
    beyond = h[h >= last]
    if len(beyond):
        raise SettingsError(f"horizon {beyond[0]:g} is at or beyond the last follow-up time ({last:g}): no row is "
                            "followed past it, so the risk within it cannot be checked. Choose horizons below "
                            f"{last:g}.")
    first = float(time[event].min())
    early = h[h < first]
    if len(early):
        raise SettingsError(f"horizon {early[0]:g} is before the first event (at time {first:g}): with no event "
                            "within it, its AUC is undefined. Choose horizons at or after the first event.")
    if not np.any(event & (time < h[-1])):
        raise SettingsError(f"Uno's C counts the events before the last horizon ({h[-1]:g}) and there are none (the "
                            f"first event is at {first:g}); choose a later last horizon.")
    return h


def _risks(risk_at, horizon: float, n: int) -> np.ndarray:
    try:
        r = np.asarray(risk_at(horizon), dtype=float).reshape(-1)
    except (TypeError, ValueError) as e:
        raise DataError(f"`risk_at({horizon:g})` did not return numbers ({e}).") from None
    if len(r) != n:
        raise DataError(f"`risk_at({horizon:g})` returned {len(r)} risks for {n:,d} rows; it must give each "
                        "row's risk of the event within that time.")
    if not np.all(np.isfinite(r)) or np.any(r < 0) or np.any(r > 1):
        raise DataError(f"`risk_at({horizon:g})` must return probabilities in [0, 1]; it returned values "
                        f"from {np.nanmin(r):g} to {np.nanmax(r):g}"
                        + (" and missing ones." if np.isnan(r).any() else "."))
    return r


def _brier_grid(brier_times, horizons, time, event) -> np.ndarray:
    if brier_times is not None:
        try:
            g = np.asarray(brier_times, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise SettingsError(f"`brier_times` must be increasing times; got {brier_times!r}.") from None
        if len(g) < 2 or not np.all(np.isfinite(g)) or np.any(np.diff(g) <= 0) or g[0] < 0:
            raise SettingsError(f"`brier_times` must be at least two increasing times ≥ 0; got {g.tolist()}.")
        if g[-1] >= time.max():
            raise SettingsError(f"`brier_times` reach {g[-1]:g}, at or beyond the last follow-up time "
                                f"({time.max():g}); end them before it.")
        return g
    lo = float(horizons[0]) if len(horizons) > 1 else float(time[event].min())
    hi = float(horizons[-1])
    inside = np.unique(time[event & (time > lo) & (time < hi)])
    if len(inside) > MAX_BRIER_TIMES:
        inside = np.unique(np.quantile(inside, np.linspace(0, 1, MAX_BRIER_TIMES), method="lower"))
    return np.unique(np.concatenate([[lo], inside, [hi]]))


def _groups(groups, score: np.ndarray) -> tuple[np.ndarray, list | None, str]:
    """Each row's group, the label of each group code (None: the values are the labels) and a
    description for the notes."""
    n = len(score)
    if groups is None or (isinstance(groups, (int, np.integer)) and not isinstance(groups, bool)):
        groups = score_bands(score) if groups is None else score_bands(score, int(groups))
        plural = "s" if len(groups) != 1 else ""
        how = (f"{len(groups)} band{plural} of neighbouring scores cut near the score's quantiles (equal scores in "
               f"one band, at least {MIN_BAND_ROWS} rows each where possible)")
        return groups.codes, list(groups.labels), how
    if isinstance(groups, ScoreBands):
        plural = "s" if len(groups) != 1 else ""
        return groups.assign(score), list(groups.labels), f"the {len(groups)} score band{plural} given"
    g = np.asarray(groups).reshape(-1)
    if len(g) != n:
        raise DataError(f"`groups` has {len(g)} values for {n:,d} rows; give each row's group, a number of score "
                        "bands, or a ScoreBands from score_bands().")
    if pd.isna(pd.Series(g)).any():
        raise DataError("`groups` has missing values; give every row a group.")
    try:
        np.unique(g)
    except TypeError:
        raise DataError("`groups` mixes values that cannot be sorted (e.g. numbers and text); give every row a "
                        "group of one kind.") from None
    return g, None, "the groups given"


# --------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False, eq=False)
class SurvivalEvaluation(render.Rendered):
    """Discrimination, accuracy and calibration of a time-to-event risk score on one data set.

    Built by :func:`evaluate_survival`. Print it for the report, or use :meth:`to_frame`,
    :meth:`to_dict` and :attr:`tables` for the numbers.

    Attributes
    ----------
    n, events : int
        Rows evaluated and events among them (at any time).
    horizons : ndarray
        The horizons t, increasing.
    harrell_c : float
        Harrell's concordance (Harrell et al., 1982) of the score, over all comparable pairs.
    uno_c, uno_tau : float
        Uno's IPCW concordance (Uno et al., 2011) over the events before ``uno_tau`` (the last
        horizon).
    auc : ndarray
        The cumulative/dynamic AUC of the score at each horizon (Uno et al., 2007; Hung & Chiang, 2010).
    brier : ndarray
        The IPCW Brier score (Graf et al., 1999) of the predicted risks at each horizon.
    integrated_brier : float
        The Brier score integrated over ``brier_times`` (trapezoids) divided by their span; NaN with
        fewer than two times.
    brier_times : ndarray
        The grid of the integrated Brier score.
    events_by, event_free_after : ndarray
        At each horizon: events by t, and rows followed beyond t (time > t).
    predicted_risk, observed_risk : ndarray
        At each horizon: mean predicted risk within t, and the Kaplan–Meier risk 1 − S(t) of all rows.
    calibration : tuple of CalibrationTable
        One per horizon: per group, rows, events by t, mean predicted risk and the Kaplan–Meier risk
        observed by t with its Greenwood standard error (:meth:`CalibrationTable.ci` for the interval).
    formula : str or None
        The model's formula when the caller gave it (shown in the header).
    group_name : str
        ``"score band"`` when the calibration groups are score bands, else ``"group"``.
    censoring_from_train : bool
        Whether the censoring weights G came from training rows (``train``) or from these rows.
    notes : tuple of str
        Definitions used and anything to read with care.
    """

    n: int
    events: int
    horizons: np.ndarray
    harrell_c: float
    uno_c: float
    uno_tau: float
    auc: np.ndarray
    brier: np.ndarray
    integrated_brier: float
    brier_times: np.ndarray
    events_by: np.ndarray
    event_free_after: np.ndarray
    predicted_risk: np.ndarray
    observed_risk: np.ndarray
    calibration: tuple[sm.CalibrationTable, ...]
    censoring_from_train: bool = False
    group_name: str = "group"
    formula: str | None = None
    notes: tuple[str, ...] = field(default=())

    _title = "Survival risk score evaluation"

    # ---- numbers ----------------------------------------------------------------

    def calibration_at(self, horizon: float) -> sm.CalibrationTable:
        """The calibration table at one of the :attr:`horizons`."""
        k = np.flatnonzero(np.isclose(self.horizons, float(horizon), rtol=1e-12, atol=0.0))
        if not len(k):
            raise SettingsError(f"{horizon!r} is not one of the evaluated horizons "
                                f"({', '.join(f'{h:g}' for h in self.horizons)}).")
        return self.calibration[int(k[0])]

    def horizon_frame(self) -> pd.DataFrame:
        """One row per horizon: ``horizon, events_by, event_free_after, predicted_risk, observed_risk,
        auc, brier``."""
        return pd.DataFrame({"horizon": self.horizons, "events_by": self.events_by,
                             "event_free_after": self.event_free_after, "predicted_risk": self.predicted_risk,
                             "observed_risk": self.observed_risk, "auc": self.auc, "brier": self.brier})

    def calibration_frame(self) -> pd.DataFrame:
        """Every calibration table, stacked: ``horizon, group, n, events, predicted, observed, se,
        lower, upper`` (95% intervals)."""
        frames = [c.to_frame(LEVEL).assign(horizon=c.horizon) for c in self.calibration]
        out = pd.concat(frames, ignore_index=True)
        return out[["horizon", *[c for c in out.columns if c != "horizon"]]]

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: ``metric, horizon, value`` (``horizon`` NaN for the measures over all
        times; ``value`` holds ``n`` and ``events`` as whole numbers)."""
        nan = float("nan")
        rows: list[tuple[str, float, object]] = [("n", nan, int(self.n)), ("events", nan, int(self.events)),
                                                 ("harrell_c", nan, float(self.harrell_c)),
                                                 ("uno_c", self.uno_tau, float(self.uno_c)),
                                                 ("integrated_brier", nan, float(self.integrated_brier))]
        for k, h in enumerate(self.horizons):
            rows += [("events_by", float(h), int(self.events_by[k])),
                     ("predicted_risk", float(h), float(self.predicted_risk[k])),
                     ("observed_risk", float(h), float(self.observed_risk[k])),
                     ("auc", float(h), float(self.auc[k])), ("brier", float(h), float(self.brier[k]))]
        out = pd.DataFrame(rows, columns=["metric", "horizon", "value"])
        out["value"] = pd.Series([v for _, _, v in rows], dtype=object)
        return out

    def to_dict(self) -> dict:
        """The measures as plain Python values; per-horizon ones as lists in the order of ``horizons``."""
        return {"n": int(self.n), "events": int(self.events), "horizons": [float(h) for h in self.horizons],
                "harrell_c": float(self.harrell_c), "uno_c": float(self.uno_c), "uno_tau": float(self.uno_tau),
                "auc": [float(v) for v in self.auc], "brier": [float(v) for v in self.brier],
                "integrated_brier": float(self.integrated_brier),
                "brier_times": [float(v) for v in self.brier_times],
                "events_by": [int(v) for v in self.events_by],
                "event_free_after": [int(v) for v in self.event_free_after],
                "predicted_risk": [float(v) for v in self.predicted_risk],
                "observed_risk": [float(v) for v in self.observed_risk],
                "calibration": render.records(self.calibration_frame()),
                "censoring_from_train": bool(self.censoring_from_train)}

    def _tables(self) -> dict[str, pd.DataFrame | None]:
        return {"metrics": self.to_frame(), "horizons": self.horizon_frame(), "calibration": self.calibration_frame()}

    # ---- rendering --------------------------------------------------------------

    def _header(self) -> list[tuple[str, str]]:
        g = self.brier_times
        span = f"t = {g[0]:g} to {g[-1]:g}, {len(g)} times" if len(g) >= 2 else "needs two times"
        return [
            *([("Formula", self.formula)] if self.formula else []),
            ("Observations", f"{self.n:,d}"),
            ("Events", f"{self.events:,d} ({fmt_percent(self.events / self.n)})"),
            ("Horizons", ", ".join(f"{h:g}" for h in self.horizons)),
            ("Harrell's C", fmt_fixed(self.harrell_c)),
            (f"Uno's C (events before t = {self.uno_tau:g})", fmt_fixed(self.uno_c)),
            (f"Integrated Brier score ({span})", fmt_fixed(self.integrated_brier, 4)),
            ("Censoring weights from", "the training rows" if self.censoring_from_train else "these rows"),
        ]

    def _horizon_display(self) -> pd.DataFrame:
        return pd.DataFrame({
            "horizon": [f"{h:g}" for h in self.horizons],
            "events by t": [render.fmt_number(int(v)) for v in self.events_by],
            "followed beyond t": [render.fmt_number(int(v)) for v in self.event_free_after],
            "predicted": [fmt_percent(v) for v in self.predicted_risk],
            "observed (KM)": [fmt_percent(v) for v in self.observed_risk],
            "AUC(t)": [fmt_fixed(v) for v in self.auc],
            "Brier(t)": [fmt_fixed(v, 4) for v in self.brier],
        })

    def _calibration_display(self, table: sm.CalibrationTable) -> pd.DataFrame:
        lower, upper = table.ci(LEVEL)
        return pd.DataFrame({
            self.group_name: [str(g) for g in table.group],
            "n": [render.fmt_number(int(v)) for v in table.n],
            "events by t": [render.fmt_number(int(v)) for v in table.events],
            "predicted": [fmt_percent(v) for v in table.predicted],
            "observed (KM)": [fmt_percent(v) for v in table.observed],
            "95% CI": [f"{fmt_percent(lo)} – {fmt_percent(hi)}" for lo, hi in zip(lower, upper)],
        })

    def _sections(self) -> list:
        out: list = [("By horizon", self._horizon_display())]
        for table in self.calibration:
            out.append((f"Calibration within t = {table.horizon:g}", self._calibration_display(table)))
        return out

    def __repr__(self) -> str:
        return (f"<SurvivalEvaluation: {self.n:,d} obs; {self.events:,d} events; Harrell's C "
                f"{self.harrell_c:.3f}; Uno's C {self.uno_c:.3f}; horizons "
                f"{', '.join(f'{h:g}' for h in self.horizons)}>")


# --------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------


def evaluate_survival(time, event, score, risk_at: Callable[[float], Sequence[float] | np.ndarray], horizons, *,
                      train=None, groups=None, brier_times=None, formula: str | None = None) -> SurvivalEvaluation:
    """Evaluate a time-to-event risk score on censored rows.

    Parameters
    ----------
    time : array-like
        Each row's follow-up time (to the event, or to censoring), finite and ≥ 0.
    event : array-like
        1 (or True) where the row's time is an event, 0 where it is censored.
    score : array-like
        Each row's total points (higher means more risk): Harrell's and Uno's C, the AUC and the
        score bands use it.
    risk_at : callable
        ``risk_at(t)`` returns each row's predicted probability of the event within ``t`` (an array,
        one per row, in [0, 1]); called at each horizon and at each time of the Brier grid.
    horizons : float or sequence of float
        The times t at which the AUC, the Brier score and the calibration are reported; each between
        the first event and the last follow-up time.
    train : tuple of array-like, optional
        ``(time, event)`` of the training rows: the censoring distribution G of the IPCW measures
        (Uno's C, the AUC, the Brier scores) is estimated from them, as in scikit-survival; default
        these rows.
    groups : int or ScoreBands or array-like, optional
        The groups of the calibration tables: None (default) three bands of neighbouring scores
        (:func:`~riskformula.reports.score_bands.score_bands`), a number of such bands, a
        :class:`~riskformula.reports.score_bands.ScoreBands` (its cut-offs applied to ``score``), or
        each row's group.
    brier_times : sequence of float, optional
        The grid of the integrated Brier score. Default: the horizons' range (from the first event to
        the horizon when there is one) with the event times inside it (at most 100 of them, at their
        quantiles).
    formula : str, optional
        The model's formula, shown at the top of the report.

    Returns
    -------
    SurvivalEvaluation
        Prints as a report; its attributes, :meth:`~SurvivalEvaluation.to_frame` and
        :attr:`~SurvivalEvaluation.tables` hold the numbers.

    Raises
    ------
    DataError
        Lengths differ, times are negative or missing, ``event`` is not 0/1 or holds no event, or
        ``risk_at`` returns anything but one probability per row.
    SettingsError
        A horizon is not a positive time, is at or beyond the last follow-up time, or is before the
        first event, or no event comes before the last horizon (Uno's C); or ``train``, ``groups`` or
        ``brier_times`` are malformed.

    Examples
    --------
    >>> ev = evaluate_survival(t, d, points, lambda h: risk_within(eta, h, *base), [1, 3, 5])  # doctest: +SKIP
    >>> print(ev)  # doctest: +SKIP
    """
    if not callable(risk_at):
        raise SettingsError(f"`risk_at` must be a function of a time returning each row's risk within it; got "
                            f"{type(risk_at).__name__}.")
    t, e, s = _rows(time, event, score)
    tr = _train(train)
    h = _horizons(horizons, t, e)
    grid = _brier_grid(brier_times, h, t, e)
    codes, labels, how = _groups(groups, s)
    n = len(t)

    risks: dict[float, np.ndarray] = {}
    for x in (*h, *grid):  # the horizons first: a bad `risk_at` is reported at a time the user chose
        if float(x) not in risks:
            risks[float(x)] = _risks(risk_at, float(x), n)
    at_h = np.column_stack([risks[float(x)] for x in h])
    at_grid = np.column_stack([risks[float(x)] for x in grid])

    harrell = sm.harrell_c(t, e, s)
    tau = float(h[-1])
    uno = sm.uno_c(t, e, s, tau=tau, train=tr)
    auc = sm.cumulative_dynamic_auc(t, e, s, h, train=tr)
    brier = sm.brier_scores(t, e, 1.0 - at_h, h, train=tr)
    ibs = sm.integrated_brier_score(t, e, 1.0 - at_grid, grid, train=tr) if len(grid) >= 2 else float("nan")
    km_t, km_s = sm.kaplan_meier(t, e)
    observed = 1.0 - sm.step_at(km_t, km_s, h)

    tables = []
    notes = [
        "Harrell's C (Harrell et al., 1982): of the pairs whose shorter time is an event, the share where that "
        "row has the higher score; tied scores count 1/2.",
        f"Uno's C (Uno et al., 2011): Harrell's with each pair weighted by 1/G(t_i)², over events before t = "
        f"{tau:g} (the last horizon); G is the Kaplan–Meier estimate of the censoring times, from "
        + ("the training rows." if tr is not None else "these rows."),
        "AUC(t): cumulative/dynamic AUC of the score (Uno et al., 2007; Hung & Chiang, 2010): events by t "
        "(weighted by 1/G) against rows followed beyond t; ties count 1/2.",
        "Brier(t): IPCW Brier score of the predicted risk within t (Graf et al., 1999); the integrated score is "
        "the trapezoid integral over its grid divided by the grid's span.",
        f"Calibration: rows grouped into {how}; predicted = mean predicted risk within t, observed = "
        "Kaplan–Meier 1 − S(t) of the group, with a 95% interval from Greenwood's standard error on the "
        "log(−log S) scale (Kalbfleisch & Prentice, 1980).",
    ]
    for x, col in zip(h, at_h.T):
        table = sm.calibration_at(t, e, col, codes, float(x))
        short = [g for g in table.group if not np.any(t[codes == g] > x)]
        if labels is not None:
            table = replace(table, group=np.array([labels[int(c)] for c in table.group], dtype=object))
            short = [labels[int(c)] for c in short]
        tables.append(table)
        if short:
            notes.append(f"Within t = {x:g}: no row of group(s) {', '.join(map(str, short))} is followed beyond t; "
                         "their observed risk is the Kaplan–Meier value at their last time.")

    return SurvivalEvaluation(
        n=n, events=int(e.sum()), horizons=h, harrell_c=harrell, uno_c=uno, uno_tau=tau, auc=auc, brier=brier,
        integrated_brier=ibs, brier_times=grid,
        events_by=np.array([int(np.sum(e & (t <= x))) for x in h]),
        event_free_after=np.array([int(np.sum(t > x)) for x in h]),
        predicted_risk=at_h.mean(axis=0), observed_risk=observed,
        calibration=tuple(tables), censoring_from_train=tr is not None,
        group_name="group" if labels is None else "score band", formula=None if formula is None else str(formula),
        notes=tuple(notes),
    )
