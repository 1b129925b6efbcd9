"""Best score cut-offs for fixed points, and the score-band → risk table.

For fixed points the net-benefit problem separates over thresholds: at ``p_i`` the cut-off
``T_i`` ("act when score ≥ T_i") maximises ``TP(T) − FP(T)·p_i/(1 − p_i)`` on its own
(Chi & Birbil, 2026, Algorithm B4, FindOptimalT). One sort of the distinct scores and suffix
sums of the event and non-event counts give every candidate's TP and FP at once, so all cut-offs
cost O(R log R + M·R) for R distinct scores and M thresholds.

Ties go to the lowest cut-off (treat more people at no loss). With that rule the cut-offs rise
with the threshold (the objective is supermodular in (T, p)), every band between two distinct
cut-offs holds training rows, and every band's event rate lies in its threshold interval
``[p_b, p_{b+1})`` — so the band rates are calibrated on the training data by construction
(their Corollary 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .grid import DecisionGrid

#: relative tolerance (of the total weight) under which two net benefits count as tied
TIE_TOLERANCE = 1e-9


def distinct_scores(scores: np.ndarray, pos: np.ndarray, neg: np.ndarray):
    """Distinct scores ``u`` (ascending) and the event / non-event weight at ``score ≥ u_k``.

    The suffix sums have one extra last entry (0): the cut-off above every score.
    """
    s = np.round(np.asarray(scores, dtype=float), 9)  # sums of real points: equal up to rounding
    u, inv = np.unique(s, return_inverse=True)
    inv = inv.ravel()
    a = np.bincount(inv, weights=pos, minlength=u.size)
    b = np.bincount(inv, weights=neg, minlength=u.size)
    tp = np.concatenate([np.cumsum(a[::-1])[::-1], [0.0]])
    fp = np.concatenate([np.cumsum(b[::-1])[::-1], [0.0]])
    return u, tp, fp


@dataclass(frozen=True)
class Cutoffs:
    """Cut-off per threshold of a grid (``-inf``: everyone; ``inf``: no one), the net benefit
    at each threshold and the weighted sum ``value = Σ w_i NB(p_i)``."""

    cutoffs: np.ndarray
    net_benefit: np.ndarray
    value: float


def optimal_cutoffs(scores, pos, neg, grid: DecisionGrid) -> Cutoffs:
    """FindOptimalT: the net-benefit-maximising cut-off at every threshold of ``grid``.

    Parameters
    ----------
    scores : score of every (distinct) row.
    pos, neg : weight of events and of non-events in every row (counts for collapsed rows).
    grid : the thresholds and weights (:func:`~riskformula.netbenefit.grid.decision_grid`).

    Examples
    --------
    >>> from riskformula.netbenefit.grid import decision_grid
    >>> g = decision_grid([0.5], weights=[1.0])
    >>> c = optimal_cutoffs([0, 1, 2], [0, 1, 2], [2, 1, 0], g)   # act from score 1 on: TP 3, FP 1
    >>> c.cutoffs.tolist(), round(c.value, 4)
    ([1.0], 0.3333)
    """
    pos = np.asarray(pos, dtype=float)
    neg = np.asarray(neg, dtype=float)
    u, tp, fp = distinct_scores(scores, pos, neg)
    n = float(pos.sum() + neg.sum())
    odds = grid.odds
    nb = tp[None, :] - odds[:, None] * fp[None, :]          # thresholds x candidate cut-offs
    best = nb.max(axis=1)
    # lowest candidate within the tie tolerance of the best; then non-decreasing in the threshold
    k = np.argmax(nb >= best[:, None] - TIE_TOLERANCE * max(n, 1.0), axis=1)
    k = np.maximum.accumulate(k)
    values = nb[np.arange(len(odds)), k] / n
    cut = np.where(k < u.size, u[np.minimum(k, u.size - 1)], np.inf)
    cut = np.where(grid.p == 0, -np.inf, cut)
    return Cutoffs(cut, values, float(grid.w @ values))


def band_of(scores, cutoffs) -> np.ndarray:
    """Band of every score: how many of the (ascending) cut-offs it reaches."""
    s = np.round(np.asarray(scores, dtype=float), 9)
    c = np.asarray(cutoffs, dtype=float)
    return (s[:, None] >= c[None, :]).sum(axis=1) if c.size else np.zeros(s.size, dtype=int)


@dataclass(frozen=True)
class Bands:
    """Score bands between consecutive cut-offs of the decision thresholds ``p_1 < ... < p_M``.

    Band ``b`` holds the scores with ``T_b ≤ score < T_{b+1}`` (``T_0 = -inf``, ``T_{M+1} = inf``):
    people treated at thresholds ``p_1..p_b`` and not above. ``risk[b]`` is the observed event
    rate of the training rows in the band (their weight ``n[b]``, events ``events[b]``); a band
    no training row falls in takes the middle of its threshold interval ``[p_b, p_{b+1})``.
    """

    cutoffs: np.ndarray
    n: np.ndarray
    events: np.ndarray
    risk: np.ndarray


def score_bands(scores, pos, neg, cutoffs, decision) -> Bands:
    """Band counts and risks for the cut-offs of the decision thresholds (all above 0).

    The risk of band ``b`` lies in ``[p_b, p_{b+1})`` whenever the cut-offs come from
    :func:`optimal_cutoffs`; should rounding put a rate on the edge, the band is merged into its
    neighbour (which changes the net benefit by at most the tie tolerance).
    """
    pos = np.asarray(pos, dtype=float)
    neg = np.asarray(neg, dtype=float)
    cut = np.array(cutoffs, dtype=float)
    p = np.concatenate([[0.0], np.asarray(decision, dtype=float), [1.0]])
    for _ in range(2 * len(cut) + 1):
        band = band_of(scores, cut)
        n = np.bincount(band, weights=pos + neg, minlength=len(cut) + 1)
        events = np.bincount(band, weights=pos, minlength=len(cut) + 1)
        rate = np.divide(events, n, out=np.full(n.size, np.nan), where=n > 0)
        high = np.flatnonzero((n > 0) & (rate >= p[1:]) & (np.arange(n.size) < len(cut)))
        low = np.flatnonzero((n > 0) & (rate < p[:-1]) & (np.arange(n.size) > 0))
        if high.size:      # band b reaches p_{b+1}: act on it at p_{b+1} too
            b = high[0]
            cut[b] = -np.inf if b == 0 else cut[b - 1]
        elif low.size:     # band b is below p_b: do not act on it at p_b
            b = low[0]
            cut[b - 1] = cut[b] if b < len(cut) else np.inf
        else:
            break
        cut = np.maximum.accumulate(cut)
    risk = np.where(n > 0, rate, (p[:-1] + p[1:]) / 2)
    return Bands(cut, n, events, risk)
