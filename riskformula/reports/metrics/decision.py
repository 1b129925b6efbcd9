"""Decision curves (Chi and Birbil 2026): net benefit, treat-all / treat-none and the AUNBC."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import DataError, SettingsError
from ._inputs import as_float_array, prepare, weighted_mean

#: Chi & Birbil's (2026) threshold grid p_i = i/10, i = 1..9
PAPER_THRESHOLDS = np.arange(1, 10) / 10


def check_thresholds(thresholds, *, allow_zero: bool = True) -> np.ndarray:
    try:
        t = as_float_array(thresholds, "thresholds")
    except DataError as e:
        raise SettingsError(str(e)) from None
    if t.size == 0:
        raise SettingsError("`thresholds` is empty; pass at least one threshold in [0, 1).")
    n_nan = int(np.isnan(t).sum())
    if n_nan:
        # min/max ignore NaN, so they would hide the actual problem
        raise SettingsError(f"`thresholds` holds {n_nan} NaN value(s); pass risk thresholds in [0, 1) only.")
    if (t < 0).any() or (t >= 1).any():
        raise SettingsError("`thresholds` must lie in [0, 1): the net benefit weight t/(1-t) is "
                        f"infinite at 1. Got min {t.min():g}, max {t.max():g}.")
    if not allow_zero:
        t = t[t > 0]
    return np.unique(t)


def _tp_fp(yv, p, w, t):
    """Weighted TP and FP fractions when treating ``risk >= t`` (as Chi & Birbil, 2026, do)."""
    order = np.argsort(p)
    ps, ys, ws = p[order], yv[order], w[order]
    # suffix sums: weight of rows with risk >= t
    first = np.searchsorted(ps, t, side="left")
    cum_pos = np.concatenate([np.cumsum((ws * ys)[::-1])[::-1], [0.0]])
    cum_neg = np.concatenate([np.cumsum((ws * (1 - ys))[::-1])[::-1], [0.0]])
    total = w.sum()
    return cum_pos[first] / total, cum_neg[first] / total


def net_benefit(y, risk, thresholds, weights=None) -> pd.DataFrame:
    """Decision-curve table: net benefit of the model, treat-all and treat-none.

    Per Chi & Birbil (2026, eq. 2), treating everyone with ``risk >= t``:
    ``NB(t) = TP/n - FP/n * t/(1-t)``; ``treat_all(t) = prev - (1 - prev) * t/(1-t)``;
    ``treat_none = 0``.

    Parameters
    ----------
    thresholds : array-like
        Risk thresholds in [0, 1); sorted and de-duplicated.

    Examples
    --------
    >>> net_benefit([0, 1, 1, 0], [.1, .6, .8, .7], [0.5])  # TP 2/4 - FP 1/4 * 1
    ...  # doctest: +NORMALIZE_WHITESPACE
       threshold  net_benefit  treat_all  treat_none
    0        0.5         0.25        0.0         0.0
    """
    a = prepare(y, risk, weights=weights)
    t = check_thresholds(thresholds)
    tp, fp = _tp_fp(a["y"], a["risk"], a["weights"], t)
    odds = t / (1 - t)
    prev = weighted_mean(a["y"], a["weights"])
    return pd.DataFrame({
        "threshold": t,
        "net_benefit": tp - fp * odds,
        "treat_all": prev - (1 - prev) * odds,
        "treat_none": np.zeros(t.size),
    })


def aunbc(y, risk, thresholds=None, weights=None) -> float:
    """Area under the net-benefit curve exactly as Chi & Birbil (2026) define it (Definition 2, eq. 6).

    With thresholds ``0 < p_1 < ... < p_M < 1`` plus ``p_0 = 0`` and ``p_{M+1} = 1``:
    ``AUNBC = sum_{i=0}^{M} (p_{i+1} - p_i) * NB(p_i)``, a *left* Riemann sum over [0, 1]
    (not a trapezoid), where ``NB(p_0) = NB(0)`` is the prevalence. Treat-all and
    treat-none are *not* subtracted, and the value is not standardized: it is at most the
    prevalence (perfect separation) and can be negative.

    Parameters
    ----------
    thresholds : array-like, optional
        ``p_1..p_M`` in (0, 1). Default: Chi & Birbil's (2026) grid 0.1, 0.2, ..., 0.9. A 0 in the
        list is ignored (``p_0 = 0`` is always included).

    Examples
    --------
    >>> # a perfect model reaches the prevalence
    >>> aunbc([0, 0, 1, 1], [0.05, 0.05, 0.95, 0.95])
    0.5
    """
    a = prepare(y, risk, weights=weights)
    t = PAPER_THRESHOLDS if thresholds is None else check_thresholds(thresholds, allow_zero=False)
    p = np.concatenate([[0.0], t])
    widths = np.diff(np.concatenate([p, [1.0]]))
    tp, fp = _tp_fp(a["y"], a["risk"], a["weights"], p)
    nb = tp - fp * p / (1 - p)
    return float(np.sum(widths * nb))
