"""Heuristics that turn LP points into good integer risk scores (seed 001, §4).

* :func:`sequential_rounding` — SeqRd: round one coordinate at a time, always the
  (coordinate, direction) pair with the lowest objective.
* :func:`polish` — discrete coordinate descent (DCD): move the single coordinate that lowers
  the objective most, until no single move helps (1-opt), then try support swaps.

Both work on scores of the collapsed unique rows, so a candidate move costs one vector update.
"""

from __future__ import annotations

import math

import numpy as np

from ..problem import RiskProblem


def best_intercept(problem: RiskProblem, s: np.ndarray) -> int:
    """Best integer intercept for fixed scores ``s`` (without intercept), within its bounds."""
    L = problem.loss
    lo, hi = problem.intercept_bounds
    b = 0.0
    # Newton on the convex 1-D loss; a handful of steps is plenty
    for _ in range(50):
        z = s + b
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -700, 700)))
        g = float(L.w_neg @ p - L.w_pos @ (1 - p))
        h = float((L.w_pos + L.w_neg) @ (p * (1 - p)))
        if h <= 1e-300:
            break
        step = g / h
        b -= max(-20.0, min(20.0, step))
        b = min(max(b, lo), hi)
        if abs(step) < 1e-9:
            break
    cands = np.array(sorted({min(max(math.floor(b), lo), hi), min(max(math.ceil(b), lo), hi)}), float)
    vals = L.value_from_scores(s[:, None] + cands[None, :], integral=L.integral and bool(np.all(s == np.round(s))))
    return int(cands[int(np.argmin(vals))])


def _objective_matrix(problem: RiskProblem, S: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    return problem.loss.value_from_scores(S) + sizes


def sequential_rounding(problem: RiskProblem, lam: np.ndarray, alpha: np.ndarray | None = None) -> np.ndarray:
    """SeqRd on a real point, keeping at most ``max_size`` terms (the strongest by α, then |λ|)."""
    d = problem.d
    lam = np.array(lam, dtype=float)
    lam[1:] = np.clip(lam[1:], np.minimum(problem.coef_lower, 0), np.maximum(problem.coef_upper, 0))
    if alpha is None:
        alpha = np.abs(lam[1:]) / np.maximum(np.maximum(np.abs(problem.coef_lower), np.abs(problem.coef_upper)), 1)
    strength = alpha + 1e-3 * np.abs(lam[1:])
    order = np.argsort(-strength, kind="stable")
    keep = problem.select_support(order) & (lam[1:] != 0)
    lam[1:][~keep] = 0.0
    Z = problem.loss.Z
    s = Z @ lam
    frac = [j for j in range(d + 1) if abs(lam[j] - round(lam[j])) > 1e-9 and (j == 0 or keep[j - 1])]
    while frac:
        cols = np.array(frac)
        down = np.floor(lam[cols])
        up = np.ceil(lam[cols])
        deltas = np.concatenate([down - lam[cols], up - lam[cols]])
        cc = np.concatenate([cols, cols])
        S = s[:, None] + Z[:, cc] * deltas[None, :]
        new_vals = lam[cc] + deltas
        # a term rounded to 0 no longer pays its penalty
        base_pen = problem.c0 @ (lam[1:] != 0)
        drops = (cc > 0) & (new_vals == 0)
        sizes = base_pen - np.where(drops, problem.c0[np.maximum(cc - 1, 0)], 0.0)
        k = int(np.argmin(_objective_matrix(problem, S, sizes)))
        j = int(cc[k])
        s = S[:, k]
        lam[j] = new_vals[k]
        frac.remove(j)
    lam = np.round(lam)
    lam[0] = best_intercept(problem, Z[:, 1:] @ lam[1:])
    return lam


def polish(problem: RiskProblem, lam: np.ndarray, max_iter: int = 200, swaps: bool = False) -> tuple[np.ndarray, float]:
    """Discrete coordinate descent plus support swaps; returns a 1-opt point and its objective.

    Every accepted move keeps the point feasible (bounds, model size and the problem's rows).
    """
    d = problem.d
    Z = problem.loss.Z
    X = Z[:, 1:]
    lam = np.round(lam).astype(float)
    lam[0] = min(max(lam[0], problem.intercept_bounds[0]), problem.intercept_bounds[1])
    checked_rows = problem.needs_row_check
    values = [np.arange(int(lo), int(hi) + 1, dtype=float)
              for lo, hi in zip(np.minimum(problem.coef_lower, 0), np.maximum(problem.coef_upper, 0))]
    col_of = np.concatenate([np.full(len(v), j) for j, v in enumerate(values)]) if d else np.zeros(0, int)
    val_of = np.concatenate(values) if d else np.zeros(0)

    def objective(l):
        return problem.objective(l)

    best = objective(lam)
    for _ in range(max_iter):
        s_wo_b = X @ lam[1:]
        s = s_wo_b + lam[0]
        support = lam[1:] != 0
        size = problem.model_size(lam)
        # candidate single-coordinate moves: λ_j -> v (intercept re-optimised below)
        allowed = support[col_of] | (size < problem.max_size)
        cand = np.flatnonzero(allowed & (val_of != lam[1:][col_of]))
        improved = False
        if len(cand):
            cj = col_of[cand]
            dv = val_of[cand] - lam[1:][cj]
            S = s[:, None] + X[:, cj] * dv[None, :]
            pen = problem.c0 @ support + problem.c0[cj] * ((val_of[cand] != 0).astype(float) - support[cj])
            obj = problem.loss.value_from_scores(S, integral=problem.loss.integral) + pen
            for k in np.argsort(obj)[:20]:
                if obj[k] >= best - 1e-12:
                    break
                trial = lam.copy()
                trial[1 + cj[k]] = val_of[cand[k]]
                if checked_rows and problem.complete(trial) is None:
                    continue
                lam, best, improved = trial, float(obj[k]), True
                break
        # intercept move
        b = best_intercept(problem, X @ lam[1:])
        if b != lam[0]:
            trial = lam.copy()
            trial[0] = b
            v = objective(trial)
            if v < best - 1e-12 and (not checked_rows or problem.complete(trial) is not None):
                lam, best, improved = trial, v, True
        if not improved and swaps and size > 0:
            lam2, v2 = _best_swap(problem, lam, best, values)
            if v2 < best - 1e-12:
                lam, best, improved = lam2, v2, True
        if not improved:
            break
    return lam, best


def _best_swap(problem: RiskProblem, lam: np.ndarray, best: float, values) -> tuple[np.ndarray, float]:
    """Try replacing one used term by an unused one (each value of its points), with the
    intercept re-optimised approximately by one scalar shift grid; returns the best feasible."""
    X = problem.loss.Z[:, 1:]
    support = np.flatnonzero(lam[1:] != 0)
    unused = np.flatnonzero(lam[1:] == 0)
    if not len(unused):
        return lam, best
    s_full = X @ lam[1:] + lam[0]
    best_lam, best_val = lam, best
    shifts = np.array([-1.0, 0.0, 1.0])
    for j in support:
        base = s_full - X[:, j] * lam[1 + j]
        cols = np.concatenate([np.full(len(values[k]), k) for k in unused])
        vals = np.concatenate([values[k] for k in unused])
        keep = vals != 0
        cols, vals = cols[keep], vals[keep]
        if not len(cols):
            continue
        S = base[:, None] + X[:, cols] * vals[None, :]
        pen = problem.c0 @ (lam[1:] != 0) - problem.c0[j] + problem.c0[cols]
        objs = []
        for sh in shifts:
            objs.append(problem.loss.value_from_scores(S + sh, integral=problem.loss.integral) + pen)
        objs = np.min(np.vstack(objs), axis=0)
        for k in np.argsort(objs)[:5]:
            if objs[k] >= best_val - 1e-12:
                break
            trial = lam.copy()
            trial[1 + j] = 0.0
            trial[1 + cols[k]] = vals[k]
            trial[0] = best_intercept(problem, X @ trial[1:])
            if problem.needs_row_check and problem.complete(trial) is None:
                continue
            v = problem.objective(trial)
            if v < best_val - 1e-12:
                best_lam, best_val = trial, v
            break
    return best_lam, best_val
