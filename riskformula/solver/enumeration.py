"""Settling a small search node exactly: every integer point of its box, scored at once.

Deep in the tree a node often has few columns left free, each with a few point values (a
threshold whose cut is chosen, points whose sign is known), while its LP bound stays below the
best score: the relaxation lets the intercept and the points take real values.  Branching on them
one at a time costs a subtree of LPs; here every feasible assignment of the free columns' points
is listed (a size group that may hold one nonzero column as one choice among "none" and each
column's values), the rows are collapsed to the distinct patterns of those columns, and each
assignment gets its best integer intercept (Newton's proposal, kept where its integer neighbours
are no better, else bisection: the loss is convex in the intercept).  The
least objective is the node's exact optimum, so the node is closed with nothing left inside it.

Only plain problems qualify: coefficient bounds, size limits and size groups, and no other rows
or auxiliary columns (operational constraints, fairness rows and multi-cut thresholds keep the
tree), because then the bounds and the size rule are all a point must satisfy.

>>> import numpy as np
>>> from riskformula.problem import RiskProblem, LogisticLoss
>>> X = np.array([[0., 1.], [1., 0.], [1., 1.], [0., 0.]])
>>> p = RiskProblem(LogisticLoss(X, np.array([1, 0, 1, 0])), [-2, -2], [2, 2], c0=1e-3, max_size=1)
>>> lo, hi = p.column_bounds()
>>> lam, value = best_in_box(p, lo, hi, max_work=10_000)
>>> lam.tolist(), round(value, 4)
([-1.0, 0.0, 2.0], 0.3143)
"""

from __future__ import annotations

import math

import numpy as np

from ..problem import RiskProblem
from ..problem.loss import _TABLE

__all__ = ["best_in_box", "qualifies"]


def qualifies(problem: RiskProblem) -> bool:
    """Whether a node of ``problem`` can be settled by :func:`best_in_box`: its only constraints
    are the bounds, the size limits and the size groups."""
    p = problem
    return (not p.rows and p.n_extra_aux == 0 and not p.has_aux_cost and not p.exact_rows
            and not p.indicators)


def _unit_options(cols, ranges, need_one: bool, cap):
    """The allowed (columns, values) of one size unit (a column, or a group with ``cap``
    nonzero columns at most) as a matrix with one row per assignment, and whether each uses
    the unit; None when the unit has no allowed assignment.  ``ranges`` is :func:`_ranges`'."""
    a, b, nonzero, zero = ranges
    values = []
    for j in cols:
        v = np.arange(a[j], b[j] + 1) if nonzero[j] > 0 else np.zeros(0)
        values.append(np.concatenate([[0.0] if zero[j] else [], v[v != 0]]))
    if any(len(v) == 0 for v in values):
        return None
    if cap == 1 and len(cols) > 1:
        # at most one nonzero column: "none" and each column's nonzero values (a sum, not a
        # product); a column that must be nonzero leaves only its own values
        forced = [k for k, v in enumerate(values) if not np.any(v == 0)]
        if len(forced) > 1:
            return None
        rows = [np.zeros((1, len(cols)))] if not forced else []
        for k, v in enumerate(values):
            if forced and k != forced[0]:
                continue
            nz = v[v != 0]
            block = np.zeros((len(nz), len(cols)))
            block[:, k] = nz
            rows.append(block)
        A = np.vstack(rows) if rows else np.zeros((0, len(cols)))
    else:
        A = np.stack(np.meshgrid(*values, indexing="ij"), axis=-1).reshape(-1, len(cols))
        if cap is not None:
            A = A[np.count_nonzero(A, axis=1) <= cap]
    used = np.any(A != 0, axis=1)
    if need_one:
        A, used = A[used], used[used]
    return (A, used) if len(A) else None


def _best_intercepts(problem: RiskProblem, wp: np.ndarray, wn: np.ndarray, S: np.ndarray, lo: int, hi: int):
    """Best integer intercept in [lo, hi] and the loss there for every column of scores ``S``
    (patterns × assignments).  A few Newton steps on the real intercept propose an integer k;
    k is kept where l(k − 1) ≥ l(k) ≤ l(k + 1), which makes it the best integer because the loss
    is convex in the intercept; the other columns are settled by bisection on the sign of
    l(b + 1) − l(b)."""
    m = problem.loss.scale
    norm = problem.loss._norm
    # integer scores on scale 1: log(1 + exp(−|z|)) is a table look-up, as in the loss itself
    table = m == 1.0 and bool(np.all(S == np.round(S)))
    w_all = wp + wn

    def loss(b, cols=slice(None)):
        z = S[:, cols] + b[None, :] if m == 1.0 else (S[:, cols] + b[None, :]) / m
        a = np.abs(z)
        t = _TABLE[np.minimum(a, 745).astype(np.intp)] if table else np.log1p(np.exp(-a))
        return norm * (w_all @ t + wp @ np.maximum(-z, 0) + wn @ np.maximum(z, 0))

    # Newton on the real intercept (the derivative of the loss in b is (Σ w− p − Σ w+ (1 − p))/m)
    b = np.zeros(S.shape[1])
    for _ in range(4):
        p = 1.0 / (1.0 + np.exp(-np.clip((S + b[None, :]) / m, -700, 700)))
        g = wn @ p - wp @ (1 - p)
        h = w_all @ (p * (1 - p))
        b = np.clip(b - m * g / np.maximum(h, 1e-300), lo, hi)
    k = np.clip(np.round(b), lo, hi)
    here = loss(k)
    best = (here <= loss(np.maximum(k - 1, lo))) & (here <= loss(np.minimum(k + 1, hi)))
    rest = np.flatnonzero(~best)
    if len(rest):
        left = np.full(len(rest), lo, dtype=float)
        right = np.full(len(rest), hi, dtype=float)
        while np.any(right > left):
            mid = np.floor((left + right) / 2)
            rising = loss(mid + 1, rest) >= loss(mid, rest)
            open_ = right > left
            right = np.where(open_ & rising, mid, right)
            left = np.where(open_ & ~rising, mid + 1, left)
        k[rest] = left
        here[rest] = loss(left, rest)
    return k, here


def _ranges(problem: RiskProblem, lower: np.ndarray, upper: np.ndarray):
    """Per design column, for the box: the lowest and highest nonzero points allowed (0 excluded
    between them), how many nonzero values that is, and whether 0 (unused) is allowed.  A column's
    own range need not include 0 (e.g. 2…4)."""
    p, lay = problem, problem.layout
    lo = np.ceil(np.maximum(lower[lay.lam_slice][1:], np.minimum(p.coef_lower, 0.0)) - 1e-9)
    hi = np.floor(np.minimum(upper[lay.lam_slice][1:], np.maximum(p.coef_upper, 0.0)) + 1e-9)
    a, b = np.maximum(lo, p.coef_lower), np.minimum(hi, p.coef_upper)
    nonzero = np.maximum(b - a + 1, 0) - ((a <= 0) & (0 <= b))
    nonzero = np.where(upper[lay.alpha_slice] < 0.5, 0, nonzero)
    zero = (lo <= 0) & (0 <= hi) & (lower[lay.alpha_slice] < 0.5)
    return a, b, nonzero, zero


def _units(problem: RiskProblem, lower: np.ndarray, upper: np.ndarray):
    """Size units (an ungrouped column, or a group) as (columns, cap on nonzero columns, must one
    be used); a group whose "used" indicator the box fixes at 0 has cap 0."""
    p, lay = problem, problem.layout
    units = [([int(j)], None, False) for j in np.flatnonzero(p._group_of < 0)]
    for g, grp in enumerate(p.groups):
        u = lay.aux(p._group_aux[g])
        units.append((list(grp.cols), 0 if upper[u] < 0.5 else grp.max_used, bool(lower[u] > 0.5)))
    return units


def _n_assignments(problem: RiskProblem, lower: np.ndarray, upper: np.ndarray, nonzero, zero) -> float:
    """How many assignments the box allows (before the size limits): an upper bound, cheap."""
    p, lay = problem, problem.layout
    single = p._group_of < 0
    total = float(np.prod((nonzero[single] + zero[single]).astype(float)))
    for g, grp in enumerate(p.groups):
        u = lay.aux(p._group_aux[g])
        if upper[u] < 0.5:
            continue
        cols = list(grp.cols)
        nz, z = nonzero[cols], zero[cols]
        if grp.max_used == 1 and len(cols) > 1:
            n = float(nz.sum()) + float(z.all())
        else:
            n = float(np.prod((nz + z).astype(float)))
        total *= max(n - float(lower[u] > 0.5 and z.all()), 0.0)
    return total


def best_in_box(problem: RiskProblem, lower: np.ndarray, upper: np.ndarray, max_work: float):
    """The best integer point of the box ``lower``/``upper`` (bounds of every column of the problem's
    variable vector, a search node's) and its objective (loss + Σ c0 over used columns), or None
    when listing it would take more than ``max_work`` (assignments × distinct row patterns) or
    the box holds no feasible point.  The problem must :func:`qualify <qualifies>`."""
    p, lay = problem, problem.layout
    lam_lo, lam_hi = lower[lay.lam_slice], upper[lay.lam_slice]
    ranges = _ranges(p, lower, upper)
    _, _, nonzero, zero = ranges
    n = _n_assignments(p, lower, upper, nonzero, zero)
    if n > max_work:
        return None
    units = _units(p, lower, upper)
    # the rows' patterns on the columns that may be nonzero bound the patterns used below
    live = [j for cols, cap, _ in units if cap != 0 for j in cols if nonzero[j] > 0]
    if n * len(np.unique(p.loss.Z[:, 1:][:, live], axis=0)) > max_work:
        return None
    opts = []
    for cols, cap, need in units:
        if cap == 0:
            if not zero[cols].all():  # an unused group with a column that must be nonzero
                return None
            continue
        o = _unit_options(cols, ranges, need, cap)
        if o is None:
            return None
        opts.append((cols, *o))
    # units with a choice, on their columns that can be nonzero (others add nothing to a score)
    free = [([j for j, keep in zip(cols, np.any(A != 0, axis=0)) if keep], A[:, np.any(A != 0, axis=0)], used)
            for cols, A, used in opts if len(A) > 1]
    fixed = np.zeros(p.d)
    fixed_used = 0
    for cols, A, used in opts:
        if len(A) == 1:
            fixed[cols] = A[0]
            fixed_used += int(used[0])
    # assignments of the free units: the product of their options, as index arrays
    sizes = [len(A) for _, A, _ in free]
    grid = np.indices(sizes).reshape(len(sizes), -1) if free else np.zeros((0, 1), int)
    n_used = fixed_used + sum((used[grid[k]].astype(int) for k, (_, _, used) in enumerate(free)),
                              np.zeros(grid.shape[1], int))
    grid = grid[:, (n_used >= p.min_size) & (n_used <= p.max_size)]
    K = grid.shape[1]
    if K == 0:
        return None
    free_cols = [j for cols, _, _ in free for j in cols]
    # rows collapse to their patterns on the free columns plus the fixed part of their score
    Z = p.loss.Z[:, 1:]
    s0 = Z @ fixed
    key = np.column_stack([Z[:, free_cols], s0])
    pat, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.ravel()
    wp = np.bincount(inv, weights=p.loss.w_pos, minlength=len(pat))
    wn = np.bincount(inv, weights=p.loss.w_neg, minlength=len(pat))
    Lam = np.hstack([A[grid[k]] for k, (_, A, _) in enumerate(free)]).T if free else np.zeros((0, K))
    S = pat[:, :-1] @ Lam + pat[:, -1:]
    b_lo = math.ceil(max(lam_lo[0], p.intercept_bounds[0]) - 1e-9)
    b_hi = math.floor(min(lam_hi[0], p.intercept_bounds[1]) + 1e-9)
    if b_lo > b_hi:
        return None
    b, loss = _best_intercepts(p, wp, wn, S, b_lo, b_hi)
    c0_fixed = float(p.c0 @ (fixed != 0))
    c0_free = p.c0[free_cols] @ (Lam != 0)
    obj = loss + c0_fixed + c0_free
    k = int(np.argmin(obj))
    lam = np.zeros(p.d + 1)
    lam[0] = b[k]
    lam[1:] = fixed
    if free:
        lam[1 + np.asarray(free_cols)] = Lam[:, k]
    return lam, float(obj[k])
