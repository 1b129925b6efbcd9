"""Heuristics that turn LP points into good integer risk scores (Ustun & Rudin, 2019, §4).

* :func:`sequential_rounding` — SeqRd: round one coordinate at a time, always the
  (coordinate, direction) pair with the lowest objective.
* :func:`polish` — discrete coordinate descent (DCD): move the single coordinate that lowers
  the objective most, until no single move helps (1-opt), then try support swaps.
* :func:`real_beam_search` — supports to round, from the sparse beam search of Liu et al.
  (2022) on real points, each refitted by :func:`real_fit` (bounded real points on a support).

All work on the collapsed unique rows, so a candidate move costs one vector update.
"""

from __future__ import annotations

import math
import time
from typing import cast

import numpy as np

from ..problem import RiskProblem
from . import kernels


def best_intercept(problem: RiskProblem, s: np.ndarray) -> int | float:
    """Best intercept for fixed scores ``s`` (without intercept), within its bounds: an integer,
    or a real number when the loss says the intercept is real."""
    L = problem.loss
    lo, hi = problem.intercept_bounds
    if lo == hi:  # the only intercept allowed (0 for a loss without one, such as Cox's)
        return float(lo) if L.real_intercept else int(lo)
    if L.real_intercept:
        return float(L.best_real_intercepts(np.asarray(s, float)[:, None], lo, hi)[0])
    m = L.scale
    b = 0.0
    # Newton on the convex 1-D loss; a handful of steps is plenty.  With scale m the logit is
    # (s + b)/m, so the Newton step in points is m times the step in logits.  The derivative
    # grows with b, so its sign brackets the minimiser: a step that leaves the bracket (Newton
    # can cycle far from the minimum) is replaced by bisection
    left, right = float(lo), float(hi)
    for _ in range(100):
        z = s + b if m == 1.0 else (s + b) / m
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -700, 700)))
        g = float(L.w_neg @ p - L.w_pos @ (1 - p))
        h = float((L.w_pos + L.w_neg) @ (p * (1 - p)))
        if g > 0:
            right = min(right, b)
        elif g < 0:
            left = max(left, b)
        if h <= 1e-300:
            break
        step = g / h if m == 1.0 else m * g / h
        new = min(max(b - max(-20.0 * m, min(20.0 * m, step)), lo), hi)
        if not left < new < right:
            new = 0.5 * (left + right)
        step, b = b - new, new
        if abs(step) < 1e-9:
            break
    cands = np.array(sorted({min(max(math.floor(b), lo), hi), min(max(math.ceil(b), lo), hi)}), float)
    vals = L.value_from_scores(s[:, None] + cands[None, :], integral=L.integral and bool(np.all(s == np.round(s))))
    return int(cands[int(np.argmin(vals))])


def _rounded(problem: RiskProblem, lam: np.ndarray) -> np.ndarray:
    """``lam`` with whole points, and a whole intercept unless the intercept is real."""
    out = np.round(lam).astype(float)
    if problem.real_intercept:
        out[0] = float(lam[0])
    return out


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
        sizes = base_pen - np.where(drops, np.concatenate(([0.0], problem.c0))[cc], 0.0)  # c0 of column cc
        k = int(np.argmin(problem.loss.value_from_scores(S) + sizes))
        j = int(cc[k])
        s = S[:, k]
        lam[j] = new_vals[k]
        frac.remove(j)
    lam = np.round(lam)
    lam[0] = best_intercept(problem, Z[:, 1:] @ lam[1:])
    return lam


def _move_table(problem: RiskProblem, s: np.ndarray, base: np.ndarray, deltas: np.ndarray,
                integral: bool) -> np.ndarray:
    """Loss after adding δ·x_j to the scores ``s`` (rows' losses ``base``), for every binary column j
    and shift δ: total − Σ_{x_j=1} ℓ(s) + Σ_{x_j=1} ℓ(s + δ).  Returns an (n_binary, len(deltas)) array."""
    L = problem.loss
    shifted = L.row_losses(s[:, None] + deltas[None, :], integral)
    XT = L.X_binary_T
    return L._norm * (base.sum() - (XT @ base)[:, None] + XT @ shifted)


def _value_ranges(problem: RiskProblem) -> tuple[np.ndarray, np.ndarray]:
    """The span of whole points each coefficient may take, as (lowest, highest) arrays, 0 included
    (:func:`_in_range` removes the values between 0 and a range that excludes it)."""
    return (np.trunc(np.minimum(problem.coef_lower, 0)).astype(float),
            np.trunc(np.maximum(problem.coef_upper, 0)).astype(float))


def _in_range(problem: RiskProblem, j, v) -> np.ndarray:
    """Whether points ``v`` are allowed for columns ``j``: 0 (unused) or within the column's range,
    which need not include 0 (e.g. 2…4)."""
    return (v == 0) | ((v >= problem.coef_lower[j]) & (v <= problem.coef_upper[j]))


def _single_moves(problem: RiskProblem, lam: np.ndarray, s: np.ndarray,
                  allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Objective of every single-coordinate move λ_j -> v (j allowed, v ≠ λ_j): arrays (j, v, obj)."""
    L = problem.loss
    X = L.Z[:, 1:]
    support = lam[1:] != 0
    c0 = cast(np.ndarray, problem.c0)  # an array once the problem is built
    base_pen = float(c0 @ support)
    integral = L.integral
    js: list[np.ndarray] = []
    vs: list[np.ndarray] = []
    objs: list[np.ndarray] = []
    lo, hi = _value_ranges(problem)
    bin_cols = np.flatnonzero(L.binary)
    sparse = L.sparse_columns()
    other = [j for j in np.flatnonzero(~L.binary) if allowed[j]]
    sparse_other = [j for j in other if j in sparse]
    # the rows' losses at the current scores, shared by the binary and the mostly-zero columns' moves
    base = L.row_losses(s, integral) if len(bin_cols) or sparse_other else None
    if base is not None and len(bin_cols):
        # one grid of values for all binary columns, masked to each column's own range: a
        # Python loop over thousands of cut columns was most of the time of a polish
        v_lo, v_hi = lo[bin_cols], hi[bin_cols]
        cur = lam[1:][bin_cols]
        deltas = np.arange(v_lo.min() - cur.max(), v_hi.max() - cur.min() + 1, dtype=float)
        table = _move_table(problem, s, base, deltas, integral)
        grid = np.arange(v_lo.min(), v_hi.max() + 1, dtype=float)
        G = grid[None, :]
        ok = _in_range(problem, bin_cols[:, None], G) & (G != cur[:, None]) & allowed[bin_cols][:, None]
        at_row, at = np.nonzero(ok)
        jb, vb = bin_cols[at_row], grid[at]
        k = (vb - cur[at_row] - deltas[0]).astype(int)
        js.append(jb)
        vs.append(vb)
        objs.append(table[at_row, k] + base_pen + c0[jb] * ((vb != 0).astype(float) - support[jb].astype(float)))
    if base is not None and sparse_other:
        # a move of a mostly-zero column changes the loss of its nonzero rows only
        total = float(base.sum())
        for j in sparse_other:
            rows, x = sparse[j]
            cv = np.arange(lo[j], hi[j] + 1)
            cv = cv[(cv != lam[1 + j]) & _in_range(problem, j, cv)]
            shifted = L.row_losses(s[rows, None] + x[:, None] * (cv - lam[1 + j])[None, :], integral, rows=rows)
            js.append(np.full(len(cv), j))
            vs.append(cv)
            objs.append(L._norm * (total - float(base[rows].sum()) + shifted.sum(axis=0)) + base_pen
                        + c0[j] * ((cv != 0).astype(float) - float(support[j])))
        other = [j for j in other if j not in sparse]
    if other:
        ranges = [np.arange(lo[j], hi[j] + 1) for j in other]
        cj = np.concatenate([np.full(len(r), j) for j, r in zip(other, ranges)])
        cv = np.concatenate(ranges)
        keep = (cv != lam[1:][cj]) & _in_range(problem, cj, cv)
        cj, cv = cj[keep], cv[keep]
        S = s[:, None] + X[:, cj] * (cv - lam[1:][cj])[None, :]
        js.append(cj)
        vs.append(cv)
        objs.append(L.value_from_scores(S, integral=integral) + base_pen
                    + c0[cj] * ((cv != 0).astype(float) - support[cj].astype(float)))
    if not js:
        return np.zeros(0, int), np.zeros(0), np.zeros(0)
    return np.concatenate(js), np.concatenate(vs), np.concatenate(objs)


def polish(problem: RiskProblem, lam: np.ndarray, max_iter: int = 200, swaps: bool = False,
           deadline: float | None = None) -> tuple[np.ndarray, float]:
    """Discrete coordinate descent (the DCD of Ustun & Rudin, 2019), optionally with support swaps.

    Each step takes the single-coordinate move that lowers the objective most (intercept
    re-optimised separately); with ``swaps`` a used term may also be replaced by an unused one.
    Every accepted move keeps the point feasible (bounds, model size and the problem's rows).
    Past ``deadline`` (a ``time.perf_counter()`` value; the search's time limit) the descent stops
    between steps and returns the point it has reached: on many distinct rows one polish with
    swaps can take a second or more, which a search that ends at its limit cannot wait for.
    """
    X = problem.loss.Z[:, 1:]
    lam = _rounded(problem, lam)
    lam[0] = min(max(lam[0], problem.intercept_bounds[0]), problem.intercept_bounds[1])
    checked_rows = problem.needs_row_check or problem.min_size > 0
    # with penalties (auxiliary costs) the moves are ranked by loss and size, then judged whole
    penalised = problem.has_aux_cost
    best = problem.full_objective(lam)
    for _ in range(max_iter):
        if deadline is not None and time.perf_counter() > deadline:
            break
        s = X @ lam[1:] + lam[0]
        support = lam[1:] != 0
        allowed = support | (problem.model_size(lam) < problem.max_size)
        improved = False
        cj, cv, obj = _single_moves(problem, lam, s, allowed)
        # a full sort, not a partition: which of several equally good moves comes first shapes
        # where the descent ends, and a partition would change it
        for k in np.argsort(obj)[:20]:
            if obj[k] >= best - 1e-12:
                break
            trial = lam.copy()
            trial[1 + cj[k]] = cv[k]
            if penalised:
                v = problem.full_objective(trial)
                if v >= best - 1e-12:
                    continue
            elif checked_rows and problem.complete(trial) is None:
                continue
            else:
                v = float(problem.objective(trial))
            lam, best, improved = trial, v, True
            break
        b = best_intercept(problem, X @ lam[1:])
        if b != lam[0]:
            trial = lam.copy()
            trial[0] = b
            v = problem.full_objective(trial)
            if v < best - 1e-12 and (penalised or not checked_rows or problem.complete(trial) is not None):
                lam, best, improved = trial, v, True
        if not improved and swaps and support.any():
            lam2, v2 = _best_swap(problem, lam, best, deadline)
            if v2 < best - 1e-12:
                lam, best, improved = lam2, v2, True
        if not improved:
            break
    return lam, best


def _best_swap(problem: RiskProblem, lam: np.ndarray, best: float,
               deadline: float | None = None) -> tuple[np.ndarray, float]:
    """Best replacement of one used term by an unused one (any of its point values), with the
    intercept allowed to shift by −1, 0 or +1; the winner's intercept is then re-optimised.
    Past ``deadline`` the used terms not yet tried are left as they are."""
    X = problem.loss.Z[:, 1:]
    support = np.flatnonzero(lam[1:] != 0)
    best_lam, best_val = lam, best
    for j in support:
        if deadline is not None and time.perf_counter() > deadline:
            break
        trial = lam.copy()
        trial[1 + j] = 0.0
        allowed = trial[1:] == 0
        allowed[j] = False
        cands = []
        for shift in (-1.0, 0.0, 1.0):
            t = trial.copy()
            t[0] += shift
            s = X @ t[1:] + t[0]
            cj, cv, obj = _single_moves(problem, t, s, allowed)
            nz = cv != 0
            cands.append((cj[nz], cv[nz], obj[nz]))
        cj = np.concatenate([c[0] for c in cands])
        cv = np.concatenate([c[1] for c in cands])
        obj = np.concatenate([c[2] for c in cands])
        for k in np.argsort(obj)[:5]:
            if obj[k] >= best_val - 1e-12:
                break
            t = trial.copy()
            t[1 + cj[k]] = cv[k]
            t[0] = best_intercept(problem, X @ t[1:])
            if not problem.has_aux_cost and problem.needs_row_check and problem.complete(t) is None:
                continue
            v = problem.full_objective(t)
            if v < best_val - 1e-12:
                best_lam, best_val = t, v
            break
    return best_lam, best_val


def fill_to_min_size(problem: RiskProblem, lam: np.ndarray) -> np.ndarray:
    """Add terms greedily (the best new term and value each time) until ``min_size`` terms are used:
    a feasible start when the intercept-only model breaks the size limit."""
    X = problem.loss.Z[:, 1:]
    lam = _rounded(problem, lam)
    while problem.model_size(lam) < problem.min_size:
        s = X @ lam[1:] + lam[0]
        cj, cv, obj = _single_moves(problem, lam, s, lam[1:] == 0)
        new = cv != 0
        if not new.any():
            break
        k = int(np.flatnonzero(new)[np.argmin(obj[new])])
        lam[1 + cj[k]] = cv[k]
        lam[0] = best_intercept(problem, X @ lam[1:])
    return lam


def support_bounds(problem: RiskProblem, support) -> tuple[np.ndarray, np.ndarray]:
    """Bounds (intercept first) for a real fit on the columns ``support``: each column's range
    with 0 included, as :func:`_value_ranges` has it for whole points."""
    idx = np.asarray(support, int)
    return (np.concatenate([[problem.intercept_bounds[0]], np.minimum(problem.coef_lower[idx], 0)]),
            np.concatenate([[problem.intercept_bounds[1]], np.maximum(problem.coef_upper[idx], 0)]))


#: distinct rows above which :func:`real_fit` first collapses them to the support's distinct rows
COLLAPSE_ROWS = 2000


def real_fit(loss, support, start: np.ndarray, lower: np.ndarray, upper: np.ndarray,
             steps: int = 60, with_value: bool = False):
    """Real points (intercept first, on ``loss``'s scale) on the columns ``support`` within the
    bounds ``lower``/``upper`` that minimise the loss: projected Newton steps with a backtracking
    line search (a handful of variables); None when it fails.  The logistic loss is fitted on
    its rows collapsed to the distinct rows on the support when it has more than
    :data:`COLLAPSE_ROWS` (:meth:`LogisticLoss.on_columns
    <riskformula.problem.loss.LogisticLoss.on_columns>`: the same loss, regrouped), and by the
    compiled loop of :func:`riskformula.solver.kernels.box_fit` when numba is installed.  With
    ``with_value`` the loss at the points is returned too, ``(points, loss)`` (``(None, inf)``
    when the fit fails)."""
    cols = np.concatenate([[0], 1 + np.asarray(support, int)])
    # a loss other than the logistic one (Cox's partial likelihood) gives its own Hessian
    hessian = getattr(loss, "hessian_on", None)
    logistic = hessian is None and hasattr(loss, "on_columns")
    if logistic and loss.n_unique > COLLAPSE_ROWS:
        loss = loss.on_columns(cols)
        Z = loss.Z
    else:
        Z = loss.Z[:, cols]
    if logistic:
        fast = kernels.box_fit(Z, loss.w_pos, loss.w_neg, loss._norm, loss.scale, np.asarray(start, float)[cols],
                               lower, upper, steps)
        if fast is not None:
            return fast if with_value else fast[0]
    w = None if hessian is not None else (loss.w_pos + loss.w_neg) * loss._norm / loss.scale ** 2
    x = np.clip(np.asarray(start, float)[cols], lower, upper)
    f, g = loss.value_and_gradient_on(Z, x)
    for _ in range(steps):
        if hessian is not None:
            H = hessian(Z, x)
            if H is None:
                break
        else:
            z = np.clip(Z @ x / loss.scale, -700, 700)
            q = 1.0 / (1.0 + np.exp(-z))
            H = (Z * (w * q * (1 - q))[:, None]).T @ Z
        # variables at a bound that the gradient pushes outward stay there this step
        free = ~(((x <= lower) & (g > 0)) | ((x >= upper) & (g < 0)))
        if not free.any():
            break
        d = np.zeros_like(x)
        Hf = H[np.ix_(free, free)]
        try:
            d[free] = -np.linalg.solve(Hf + 1e-10 * (1 + np.abs(Hf).max()) * np.eye(free.sum()), g[free])
        except np.linalg.LinAlgError:
            return (None, math.inf) if with_value else None
        t, moved = 1.0, False
        while t > 1e-10:
            xn = np.clip(x + t * d, lower, upper)
            fn, gn = loss.value_and_gradient_on(Z, xn)
            if fn <= f + 1e-4 * float(g @ (xn - x)):
                moved = True
                break
            t *= 0.5
        if not moved:
            break
        done = f - fn <= 1e-12 * (1 + abs(f))
        x, f, g = xn, fn, gn
        if done:
            break
    if not np.all(np.isfinite(x)):
        return (None, math.inf) if with_value else None
    return (x, float(f)) if with_value else x


#: the quantiles at which FasterRisk (Liu et al., 2022) binarizes a variable by default
GRID_QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def quantile_columns(problem: RiskProblem, quantiles=GRID_QUANTILES) -> np.ndarray | None:
    """A column mask for :func:`real_beam_search`: of every ``threshold()`` term's candidate cuts
    (``problem.cut_families``, columns ``1[x ≤ c]``), the cut whose share of the rows at or below
    it is nearest each of ``quantiles`` (FasterRisk's binarization of the variable); every other
    column is kept.  None when no family has more cuts than quantiles (the mask keeps everything)."""
    families = [np.asarray(cols, int) for cols in getattr(problem, "cut_families", ())
                if len(cols) > len(quantiles)]
    if not families:
        return None
    L = problem.loss
    w = L.w_all / L.w_all.sum()
    keep = np.ones(problem.d, dtype=bool)
    q = np.asarray(quantiles, float)
    for cols in families:
        share = w @ L.Z[:, 1 + cols]  # the weighted share of rows with x ≤ c, per cut
        keep[cols] = False
        keep[cols[np.unique(np.abs(share[None, :] - q[:, None]).argmin(axis=1))]] = True
    return keep


def real_beam_search(problem: RiskProblem, width: int = 10, expand: int = 10,
                     deadline: float | None = None, stop: float | None = None,
                     columns: np.ndarray | None = None) -> list[np.ndarray]:
    """Supports for risk scores: the sparse beam search of Liu et al. (2022) on real points.

    From the intercept-only model, each of the ``width`` best models of a size grows by one
    column: the ``expand`` columns whose loss gradient is steepest in a direction their bounds
    allow, each child refitted on its support (:func:`real_fit`, real points within the bounds).
    The children that fit within the size limit and the groups' ``max_used`` compete for the
    next beam.  The candidate cuts of one ``threshold()`` (and the columns of a group that may use
    one of them) count as one unit: a parent grows by ``expand`` different units, each with its
    steepest column, and the beam keeps the best cut positions of each multiset of units,
    because neighbouring cuts have almost the same gradient and would otherwise fill the beam
    with one support.  Returns the real
    points (intercept first, ``problem.d + 1`` long) of the last beam, the lowest loss first;
    rounding them (:func:`sequential_rounding`) is the caller's.  Constraints other than the
    size limit and groups are not seen here.  ``deadline``: a ``time.perf_counter()`` value
    after which each beam grows from its first parent only; ``stop``: one after which the beam
    stops growing (the supports found so far are returned).  ``columns``: a mask of the columns
    that may enter (:func:`quantile_columns`: FasterRisk's grid of cuts); None, all.

    >>> beam = real_beam_search(problem)          # doctest: +SKIP
    >>> lam = polish(problem, sequential_rounding(problem, beam[0]))[0]   # doctest: +SKIP
    """
    L = problem.loss
    lo_all = np.minimum(problem.coef_lower, 0).astype(float)
    hi_all = np.maximum(problem.coef_upper, 0).astype(float)
    # a column's unit in the beam: its group when the group uses one column at most, or the
    # threshold term whose cut it is, else itself
    one_of = {g for g, grp in enumerate(problem.groups) if grp.max_used == 1}
    group_of = np.asarray(problem._group_of)
    unit = np.array([-1 - g if g in one_of else j for j, g in enumerate(group_of)], int)
    for f, cols in enumerate(getattr(problem, "cut_families", ())):
        unit[list(cols)] = -1 - len(problem.groups) - f
    root = np.zeros(problem.d + 1)
    root[0] = best_intercept(problem, np.zeros(L.n_unique))
    beam = [((), root)]
    for _ in range(problem.max_size):
        if stop is not None and len(beam[0][0]) and time.perf_counter() > stop:
            break
        kids: dict = {}  # units of a support -> (loss, support, points)
        for S, lam in beam:
            if kids and deadline is not None and time.perf_counter() > deadline:
                break
            g = L.value_and_gradient(lam)[1][1:].copy()
            g[list(S)] = 0.0
            if columns is not None:
                g[~columns] = 0.0
            # a column can only enter in a direction its bounds allow
            g[(g > 0) & (lo_all >= 0)] = 0.0
            g[(g < 0) & (hi_all <= 0)] = 0.0
            order = np.argsort(-np.abs(g), kind="stable")
            order = order[g[order] != 0]
            _, first = np.unique(unit[order], return_index=True)  # the steepest column of each unit
            for j in order[np.sort(first)][:expand]:
                S2 = tuple(sorted(S + (int(j),)))
                if not problem.select_support(list(S2))[list(S2)].all():
                    continue
                idx = np.asarray(S2, int)
                beta, value = real_fit(L, S2, lam, *support_bounds(problem, S2), with_value=True)
                if beta is None:
                    continue
                child = np.zeros(problem.d + 1)
                child[0], child[1 + idx] = beta[0], beta[1:]
                key = tuple(sorted(unit[idx]))
                if key not in kids or value < kids[key][0]:
                    kids[key] = (value, S2, child)
        if not kids:
            break
        beam = [(S, lam) for _, S, lam in sorted(kids.values(), key=lambda t: t[0])[:width]]
    return [lam for S, lam in beam if S]
