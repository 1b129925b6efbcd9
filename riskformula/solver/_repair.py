"""B3's exact repair of a calibration dual (:func:`riskformula.solver.cells.dual_bound`), in one
place for the numpy code and the compiled loops (:mod:`riskformula.solver._compiled` compiles it
as it is)."""

import numpy as np

__all__ = ["raise_score_sum"]


def raise_score_sum(k: np.ndarray, s: np.ndarray, Pi: np.ndarray, Qi: np.ndarray, need) -> np.ndarray:
    """Grid units moved from low-scored cells to high-scored ones, within the boxes −Pi ≤ k ≤ Qi,
    until Σ k·s has risen by ``need`` (Σ k unchanged); exact integer arithmetic for whole scores
    (B3's repair for a fitted scale when one pair of cells has too little room).  Computed scores
    of real predictors (float ``s`` and ``need``) take the same moves, whole units each; their
    caller checks the sum reached with its rounding bound.  Returns the new k (or k
    unchanged when the rooms do not allow it: the caller then checks and falls back to μ = 0).
    Written for numba too (int64 arrays, no Python lists): :mod:`riskformula.solver._compiled`
    compiles this function as it is."""
    k = k.copy()
    by_hi = np.argsort(-s, kind="mergesort")
    by_lo = np.argsort(s, kind="mergesort")
    up = np.empty(len(s), dtype=np.int64)
    down = np.empty(len(s), dtype=np.int64)
    nu = nd = 0
    for c in by_hi:
        if Qi[c] - k[c] > 0:
            up[nu] = c
            nu += 1
    for c in by_lo:
        if k[c] + Pi[c] > 0:
            down[nd] = c
            nd += 1
    i = j = 0
    while need > 0 and i < nu and j < nd:
        a, b = up[i], down[j]
        spread = s[a] - s[b]
        if spread <= 0:
            break
        m = min(Qi[a] - k[a], k[b] + Pi[b], int(-(-need // spread)))
        k[a] += m
        k[b] -= m
        need -= m * spread
        if Qi[a] - k[a] <= 0:
            i += 1
        if k[b] + Pi[b] <= 0:
            j += 1
    return k
