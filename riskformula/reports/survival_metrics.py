"""Measures of a time-to-event risk score on censored data (numpy only).

* :func:`kaplan_meier` — the Kaplan–Meier (1958) estimate of the survival function, and
  :func:`censoring_survival`, the same for the censoring times (the weights of the IPCW measures);
* :func:`harrell_c` — the concordance of Harrell et al. (1982);
* :func:`uno_c` — the inverse-probability-of-censoring weighted concordance of Uno et al. (2011),
  up to a time ``tau``;
* :func:`cumulative_dynamic_auc` — the time-dependent AUC of cases by ``t`` against controls beyond
  ``t`` (Uno et al., 2007; Hung & Chiang, 2010);
* :func:`breslow_baseline` — the cumulative baseline hazard of a Cox model (Breslow, 1974), and
  :func:`risk_within`, each row's probability of the event by a horizon from it;
* :func:`calibration_at` — predicted risk by a horizon against the Kaplan–Meier risk observed in
  each score group;
* :func:`brier_scores` and :func:`integrated_brier_score` — the IPCW Brier score of Graf et al.
  (1999) at times and integrated over them.

Conventions, as in scikit-survival (Pölsterl, 2020), against which the tests check the numbers: a
higher score means a higher risk (an earlier event); a pair of rows is comparable when the shorter
time is an event, a censored time tied with an event time counting as the longer; tied scores count
one half.  The censoring distribution ``G`` is the Kaplan–Meier estimate of the censoring times
(events leave the risk set before censorings at the same time), from the training rows when they
are given, else from the rows measured; ``G(t)`` is right-continuous.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DataError, SettingsError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["kaplan_meier", "censoring_survival", "step_at", "harrell_c", "uno_c", "cumulative_dynamic_auc",
           "breslow_baseline", "risk_within", "calibration_at", "CalibrationTable", "brier_scores",
           "integrated_brier_score"]


def _check(time, event, *others, names=()):
    time = np.asarray(time, dtype=float).reshape(-1)
    event = np.asarray(event).reshape(-1)
    if not np.all((event == 0) | (event == 1)):
        raise DataError("`event` must hold 0 (censored) and 1 (event) only.")
    if not np.all(np.isfinite(time)) or np.any(time < 0):
        raise DataError("every time must be a finite number ≥ 0.")
    out = [time, event.astype(bool)]
    for a, name in zip(others, names):
        a = np.asarray(a, dtype=float).reshape(-1)
        if len(a) != len(time):
            raise DataError(f"`{name}` has {len(a)} values for {len(time)} rows.")
        if not np.all(np.isfinite(a)):
            raise DataError(f"`{name}` must be finite numbers.")
        out.append(a)
    return out


def _counts(time, event, weights=None):
    """Distinct times, and at each: weight at risk, of events, of censorings."""
    w = np.ones(len(time)) if weights is None else np.asarray(weights, dtype=float)
    uniq, inv = np.unique(time, return_inverse=True)
    d = np.bincount(inv, weights=w * event, minlength=len(uniq))
    c = np.bincount(inv, weights=w * ~event, minlength=len(uniq))
    at_risk = np.cumsum((d + c)[::-1])[::-1]
    return uniq, at_risk, d, c


def kaplan_meier(time, event, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """The Kaplan–Meier (1958) estimate: the distinct times and S(t) just after each (right-continuous).

    >>> kaplan_meier([1, 2, 2, 3], [1, 1, 0, 1])[1].tolist()
    [0.75, 0.5, 0.0]
    """
    time, event = _check(time, event)
    uniq, n, d, _ = _counts(time, event, weights)
    return uniq, np.cumprod(1.0 - np.divide(d, n, out=np.zeros_like(d), where=n > 0))


def censoring_survival(time, event) -> tuple[np.ndarray, np.ndarray]:
    """The Kaplan–Meier estimate of the censoring distribution G (events leave the risk set before
    censorings at the same time); G ≡ 1 without censoring."""
    time, event = _check(time, event)
    uniq, n, d, c = _counts(time, event)
    left = n - d
    return uniq, np.cumprod(1.0 - np.divide(c, left, out=np.zeros_like(c), where=left > 0))


def step_at(times, values, t, before: float = 1.0) -> np.ndarray:
    """A right-continuous step function (``values`` from each of ``times`` on) at ``t``; ``before``
    ahead of the first time."""
    t = np.asarray(t, dtype=float)
    idx = np.searchsorted(times, t, side="right") - 1
    return np.where(idx >= 0, np.asarray(values)[np.maximum(idx, 0)], before)


def _concordance(time, event, score, weight, tol):
    """Σ_i w_i (concordant + ½ tied) over comparable pairs (i an event, j later or censored at the
    same time) and Σ_i w_i · comparable; chunked over the events."""
    ev = np.flatnonzero(event & (weight > 0))
    if not len(ev):
        raise DataError("no comparable pairs: no row with an event (and a positive weight) has a later time.")
    num = den = 0.0
    chunk = max(1, 4_000_000 // max(len(time), 1))
    for k in range(0, len(ev), chunk):
        i = ev[k:k + chunk]
        ti, si = time[i][:, None], score[i][:, None]
        comp = (time[None, :] > ti) | ((time[None, :] == ti) & ~event[None, :])
        diff = si - score[None, :]
        tied = np.abs(diff) <= tol
        con = (diff > 0) & ~tied
        w = weight[i]
        num += float(w @ (comp & con).sum(axis=1) + 0.5 * (w @ (comp & tied).sum(axis=1)))
        den += float(w @ comp.sum(axis=1))
    if den == 0:
        raise DataError("no comparable pairs: no row with an event has a later time.")
    return num / den


def harrell_c(time, event, score, tied_tol: float = 1e-8) -> float:
    """Harrell's concordance (Harrell et al., 1982): of the comparable pairs, the share in which the
    row with the earlier event has the higher score (ties ½).

    >>> harrell_c([1, 2, 3, 4], [1, 1, 0, 1], [4, 3, 2, 1])
    1.0
    """
    time, event, score = _check(time, event, score, names=("score",))
    return _concordance(time, event, score, np.ones(len(time)), tied_tol)


def uno_c(time, event, score, tau: float | None = None, train=None, tied_tol: float = 1e-8) -> float:
    """Uno's concordance (Uno et al., 2011): Harrell's with each pair weighted by 1/G(t_i)², over
    the events before ``tau`` (None: all).  ``train``: ``(time, event)`` of the rows G is estimated
    from (default these rows)."""
    time, event, score = _check(time, event, score, names=("score",))
    g_times, g = censoring_survival(*(train if train is not None else (time, event)))
    G = step_at(g_times, g, time)
    keep = event & (time < tau) if tau is not None else event
    if np.any(keep & (G <= 0)):
        raise DataError("the censoring survival is 0 at an event time before `tau`; choose a smaller `tau`.")
    w = np.where(keep, 1.0 / np.where(G > 0, G, 1.0) ** 2, 0.0)
    return _concordance(time, keep, score, w, tied_tol)


def cumulative_dynamic_auc(time, event, score, times, train=None,
                           tied_tol: float = 1e-8) -> np.ndarray:
    """The cumulative/dynamic AUC at each of ``times``: cases are the events by t, weighted by
    1/G(t_i); controls the rows still event-free after t; a case with a higher score than a control
    counts 1, a tie ½ (Uno et al., 2007; Hung & Chiang, 2010).  ``score`` may be one column per time
    ((n, len(times))) for risks that change with time."""
    time, event = _check(time, event)
    times = np.atleast_1d(np.asarray(times, dtype=float))
    S = np.asarray(score, dtype=float)
    if S.ndim == 1:
        S = np.repeat(S[:, None], len(times), axis=1)
    if S.shape != (len(time), len(times)) or not np.all(np.isfinite(S)):
        raise DataError(f"`score` must be finite numbers, one per row (or one per row and time); got shape {S.shape}.")
    g_times, g = censoring_survival(*(train if train is not None else (time, event)))
    G = step_at(g_times, g, time)
    out = np.empty(len(times))
    for k, t in enumerate(times):
        case = event & (time <= t)
        control = time > t
        if not case.any() or not control.any():
            raise DataError(f"at time {t:g} there are no {'cases' if not case.any() else 'controls'}: the AUC "
                            "needs events by that time and rows event-free after it.")
        if np.any(G[case] <= 0):
            raise DataError(f"the censoring survival is 0 at an event time by {t:g}.")
        w = 1.0 / G[case]
        sc, sn = np.sort(S[control, k]), S[case, k]
        below = np.searchsorted(sc, sn - tied_tol, side="left")
        upto = np.searchsorted(sc, sn + tied_tol, side="right")
        out[k] = float(w @ (below + 0.5 * (upto - below))) / (w.sum() * control.sum())
    return out


def breslow_baseline(time, event, eta, weights=None, ties: str = "breslow") -> tuple[np.ndarray, np.ndarray]:
    """The cumulative baseline hazard H₀ of a Cox model with linear predictors ``eta`` at its event
    times: Breslow's (1974) estimate Σ_{t_g ≤ t} W_g / Σ_{j at risk} w_j e^{η_j}, or with
    ``ties="efron"`` Efron's (1977) increments Σ_k (W_g/d_g) / (Σ_{R_g} − (k/d_g) Σ_{D_g}) (R's
    ``survival::basehaz``).  A row's cumulative hazard is H₀(t) e^{η}: only differences of ``eta``
    matter, and H₀ follows the same shift."""
    time, event, eta = _check(time, event, eta, names=("eta",))
    w = np.ones(len(time)) if weights is None else np.asarray(weights, dtype=float)
    c = eta.max()
    e = w * np.exp(eta - c)
    uniq = np.unique(time[event])
    order = np.argsort(time, kind="stable")
    ts, es = time[order], e[order]
    tail = np.concatenate([np.cumsum(es[::-1])[::-1], [0.0]])
    R = tail[np.searchsorted(ts, uniq, side="left")]
    g = np.searchsorted(uniq, time[event])
    W = np.bincount(g, weights=w[event], minlength=len(uniq))
    if ties == "breslow":
        inc = W / R
    elif ties == "efron":
        SD = np.bincount(g, weights=e[event], minlength=len(uniq))
        d = np.bincount(g, minlength=len(uniq))
        inc = np.array([sum((W[k] / d[k]) / (R[k] - j / d[k] * SD[k]) for j in range(d[k])) for k in range(len(uniq))])
    else:
        raise DataError(f"`ties` must be 'breslow' or 'efron'; got {ties!r}.")
    return uniq, np.cumsum(inc) * np.exp(-c)


def risk_within(eta, horizon, base_times, base_hazard) -> np.ndarray:
    """The probability of the event by ``horizon`` (a number or several) for linear predictors
    ``eta``: 1 − exp(−H₀(t) e^{η}) with H₀ from :func:`breslow_baseline`.  Rows × horizons for
    several horizons."""
    eta = np.asarray(eta, dtype=float)
    H = step_at(base_times, base_hazard, np.atleast_1d(horizon), before=0.0)
    out = -np.expm1(-np.exp(eta)[:, None] * H[None, :])
    return out[:, 0] if np.ndim(horizon) == 0 else out


@dataclass(frozen=True)
class CalibrationTable:
    """Per score group: its label, rows, events by the horizon, mean predicted risk by the horizon
    and the Kaplan–Meier risk observed by then (1 − S(t)), with its Greenwood standard error (of
    S(t), hence of 1 − S(t)); :meth:`ci` gives its confidence interval."""

    horizon: float
    group: np.ndarray
    n: np.ndarray
    events: np.ndarray
    predicted: np.ndarray
    observed: np.ndarray
    se: np.ndarray

    def ci(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """The ``level`` confidence interval of each observed risk 1 − S(t): Greenwood's standard
        error on the log(−log S) scale (Kalbfleisch & Prentice, 1980; lifelines' and Stata's default),
        S^exp(±z·se/(S·|log S|)), which stays inside [0, 1].  A group with no event by t (S = 1) or
        with every row's event by t (S = 0) has the one-point interval at its observed risk."""
        if not 0 < level < 1:
            raise SettingsError(f"`level` must be between 0 and 1; got {level!r}.")
        from statistics import NormalDist

        z = NormalDist().inv_cdf(0.5 + level / 2)
        S = 1.0 - np.asarray(self.observed, dtype=float)
        inner = (S > 0) & (S < 1)
        logS = np.log(np.where(inner, S, 0.5))
        width = np.where(inner, z * np.asarray(self.se, dtype=float) / (np.where(inner, S, 1.0) * -logS), 0.0)
        s_low = np.where(inner, np.exp(logS * np.exp(width)), S)
        s_high = np.where(inner, np.exp(logS * np.exp(-width)), S)
        return 1.0 - s_high, 1.0 - s_low

    def to_frame(self, level: float = 0.95) -> pd.DataFrame:
        """One row per group: ``group, n, events, predicted, observed, se, lower, upper`` (the
        interval of :meth:`ci`)."""
        import pandas as pd

        lower, upper = self.ci(level)
        return pd.DataFrame({"group": self.group, "n": self.n, "events": self.events,
                             "predicted": self.predicted, "observed": self.observed, "se": self.se,
                             "lower": lower, "upper": upper})


def calibration_at(time, event, risk, group, horizon: float) -> CalibrationTable:
    """Predicted against observed risk by ``horizon`` in each group of ``group`` (e.g. the score, or
    a band of scores): the mean of ``risk`` (each row's predicted risk by the horizon) and the
    Kaplan–Meier estimate 1 − S(horizon) of the group's rows, with Greenwood's standard error."""
    time, event, risk = _check(time, event, risk, names=("risk",))
    group = np.asarray(group).reshape(-1)
    if len(group) != len(time):
        raise DataError(f"`group` has {len(group)} values for {len(time)} rows.")
    labels = np.unique(group)
    n, ev, pred, obs, se = (np.zeros(len(labels)) for _ in range(5))
    for k, lab in enumerate(labels):
        rows = group == lab
        t, e = time[rows], event[rows]
        uniq, at_risk, d, _ = _counts(t, e)
        keep = uniq <= horizon
        S = float(np.prod(1.0 - d[keep] / at_risk[keep]))
        var = np.divide(d[keep], at_risk[keep] * (at_risk[keep] - d[keep]),
                        out=np.zeros(int(keep.sum())), where=at_risk[keep] > d[keep])
        n[k], ev[k] = rows.sum(), float((e & (t <= horizon)).sum())
        pred[k], obs[k] = float(risk[rows].mean()), 1.0 - S
        se[k] = S * float(np.sqrt(var.sum()))
    return CalibrationTable(float(horizon), labels, n.astype(int), ev.astype(int), pred, obs, se)


def brier_scores(time, event, survival, times, train=None) -> np.ndarray:
    """The Brier score at each of ``times`` (Graf et al., 1999) of predicted event-free
    probabilities ``survival`` (rows × times): the mean of S(t|x)² over the events by t (weighted
    by 1/G(t_i)) and of (1 − S(t|x))² over the rows event-free after t (weighted by 1/G(t))."""
    time, event = _check(time, event)
    times = np.atleast_1d(np.asarray(times, dtype=float))
    P = np.asarray(survival, dtype=float).reshape(len(time), len(times))
    g_times, g = censoring_survival(*(train if train is not None else (time, event)))
    G_own, G_t = step_at(g_times, g, time), step_at(g_times, g, times)
    inv_own = np.divide(1.0, G_own, out=np.zeros_like(G_own), where=G_own > 0)
    inv_t = np.divide(1.0, G_t, out=np.zeros_like(G_t), where=G_t > 0)
    out = np.empty(len(times))
    for k, t in enumerate(times):
        case = event & (time <= t)
        control = time > t
        out[k] = float(np.mean(P[:, k] ** 2 * case * inv_own + (1 - P[:, k]) ** 2 * control * inv_t[k]))
    return out


def integrated_brier_score(time, event, survival, times, train=None) -> float:
    """The Brier score integrated over ``times`` (trapezoids) and divided by their span (Graf et al.,
    1999)."""
    times = np.asarray(times, dtype=float)
    if len(times) < 2 or np.any(np.diff(times) <= 0):
        raise DataError("`times` must be at least two increasing times.")
    bs = brier_scores(time, event, survival, times, train)
    return float(np.trapezoid(bs, times) / (times[-1] - times[0]))
