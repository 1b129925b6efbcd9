"""Settling a search node exactly: every integer point of its box that could beat the incumbent, scored.

Deep in the tree a node often has few columns left free, each with a few point values (a
threshold whose cut is chosen, points whose sign is known), while its LP bound stays below the
best score: the relaxation lets the intercept and the points take real values.  Branching on them
one at a time costs a subtree of LPs; here the feasible assignments of the free columns' points
are listed one size unit at a time (a size group that may hold one nonzero column as one choice
among "none" and each column's values), over the rows collapsed to their distinct patterns on
those columns.  A partial assignment is dropped when even its best case cannot beat the
incumbent: each positive row at the highest score the units still open can add, each negative
row at the lowest, at the best intercept for those scores.  Whatever is left when every
unit is chosen is scored exactly, at its best intercept: a real one where the intercept is real
(a safeguarded Newton search), else the best integer (Newton's proposal, kept where
its integer neighbours are no better, else bisection on the sign of the loss's derivative: the
loss is convex in the intercept).  The node is then closed, on a better point or on the proof
that it holds none.

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
from dataclasses import dataclass
from typing import cast

import numpy as np

from ..problem import LogisticLoss, RiskProblem
from ..problem.loss import _TABLE, real_intercepts

__all__ = ["best_in_box", "box_size", "qualifies", "open_box", "list_units", "Box", "Listed"]


def qualifies(problem: RiskProblem) -> bool:
    """Whether a node of ``problem`` can be settled by :func:`best_in_box`: its only constraints
    are the bounds, the size limits and the size groups."""
    p = problem
    # the listing scores rows by their positive and negative weights: the logistic loss's form
    return (isinstance(p.loss, LogisticLoss) and not p.rows and p.n_extra_aux == 0 and not p.has_aux_cost
            and not p.exact_rows and not p.indicators)


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
    """Best intercept in [lo, hi] (an integer, or a real number when the loss's intercept is
    real) and the loss there for every column of scores ``S`` (patterns × assignments)."""
    m = problem.loss.scale
    norm = problem.loss._norm
    # integer scores on scale 1 (and an integer intercept): log(1 + exp(−|z|)) is a table
    # look-up, as in the loss itself
    table = not problem.real_intercept and m == 1.0 and bool(np.all(S == np.round(S)))
    w_all = wp + wn

    def loss(b, cols):
        z = S[:, cols] + b[None, :] if m == 1.0 else (S[:, cols] + b[None, :]) / m
        a = np.abs(z)
        t = _TABLE[np.minimum(a, 745).astype(np.intp)] if table else np.log1p(np.exp(-a))
        return norm * (w_all @ t + wp @ np.maximum(-z, 0) + wn @ np.maximum(z, 0))

    every = slice(None)
    if problem.real_intercept:
        b = real_intercepts(wp, wn, S, lo, hi, m)
        return b, loss(b, every)

    def falling(b, cols):  # the sign of the loss's derivative in b, (Σ w− p − Σ w+ (1 − p)) / m
        p = 1.0 / (1.0 + np.exp(-np.clip((S[:, cols] + b[None, :]) / m, -700, 700)))
        return wn @ p - wp @ (1 - p) < 0, p

    # a few Newton steps on the real intercept propose an integer k, kept where
    # l(k − 1) ≥ l(k) ≤ l(k + 1): the loss is convex in the intercept, so k is the best integer
    b = np.zeros(S.shape[1])
    for _ in range(4):
        _, p = falling(b, every)
        g = wn @ p - wp @ (1 - p)
        h = w_all @ (p * (1 - p))
        b = np.clip(b - m * g / np.maximum(h, 1e-300), lo, hi)
    k = np.clip(np.round(b), lo, hi)
    here = loss(k, every)
    best = (here <= loss(np.maximum(k - 1, lo), every)) & (here <= loss(np.minimum(k + 1, hi), every))
    rest = np.flatnonzero(~best)
    if len(rest):
        # elsewhere the least integer in [lo, hi] where the loss stops falling, by bisection: the
        # real minimum lies within one below it, so the better of it and its lower neighbour wins
        left = np.full(len(rest), lo, dtype=float)
        right = np.full(len(rest), hi, dtype=float)
        for _ in range(2100):  # bisection over floats: at most ~2 100 halvings between any two of them
            if not np.any(right > left):
                break
            mid = np.floor((left + right) / 2)
            down = falling(mid, rest)[0]
            open_ = right > left
            right = np.where(open_ & ~down, mid, right)
            left = np.where(open_ & down, mid + 1, left)
        below = np.maximum(left - 1, lo)
        at, under = loss(left, rest), loss(below, rest)
        k[rest] = np.where(under < at, below, left)
        here[rest] = np.minimum(under, at)
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
    units: list[tuple[list[int], int | None, bool]] = [([int(j)], None, False)
                                                       for j in np.flatnonzero(p._group_of < 0)]
    for g, grp in enumerate(p.groups):
        u = lay.aux(p._group_aux[g])
        units.append((list(grp.cols), 0 if upper[u] < 0.5 else grp.max_used, bool(lower[u] > 0.5)))
    return units


def _n_assignments(problem: RiskProblem, lower: np.ndarray, upper: np.ndarray, nonzero, zero,
                   max_units: float = math.inf):
    """How many assignments the box allows within the size limits, and how many units have a
    choice: each unit contributes its unused and used choices to a polynomial in the number of
    units used (an upper bound for a group that may hold several nonzero columns, whose column
    cap is not counted), cheap; ``(inf, n)`` as soon as the ungrouped columns alone leave
    ``n > max_units`` with a choice."""
    p, lay = problem, problem.layout
    single = p._group_of < 0
    open_single = int(np.count_nonzero(zero[single] + nonzero[single] > 1))
    if open_single > max_units:
        return math.inf, open_single
    poly = np.array([1.0])
    open_units = 0

    def times(unused: float, used: float, c: int = 1):
        # c units alike contribute (unused + used·x)^c, expanded by the binomial theorem
        nonlocal poly, open_units
        i = np.arange(min(c, p.max_size) + 1)
        term = np.array([math.comb(c, int(k)) for k in i]) * unused ** (c - i) * used ** i
        poly = np.convolve(poly, term)[: p.max_size + 1]
        open_units += c * (unused + used > 1)

    # columns alone come in few kinds (zero allowed or not, how many nonzero values)
    kinds, counts = np.unique(np.column_stack([zero[single], nonzero[single]]), axis=0, return_counts=True)
    for (unused, used), c in zip(kinds.astype(float), counts):
        times(unused, used, int(c))
    for g, grp in enumerate(p.groups):
        u = lay.aux(p._group_aux[g])
        cols = list(grp.cols)
        nz, z = nonzero[cols], zero[cols]
        none = float(z.all())
        if upper[u] < 0.5:
            times(none, 0.0)
            continue
        if grp.max_used == 1 and len(cols) > 1:
            forced = ~z  # columns that must be nonzero: at most one, and then only its values
            used = float(nz.sum()) if not forced.any() else float(nz[forced][0]) if forced.sum() == 1 else 0.0
        else:
            used = float(np.prod((nz + z).astype(float))) - none
        times(0.0 if lower[u] > 0.5 else none, used)
    return float(poly[p.min_size:].sum()), open_units


def box_size(problem: RiskProblem, lower: np.ndarray, upper: np.ndarray,
             max_units: float = math.inf) -> tuple[float, int]:
    """How many assignments of the points the box ``lower``/``upper`` allows within the size
    limits (an upper bound, cheap: what listing it would cost, per row pattern), and how many
    size units (columns, groups) still have a choice; ``(inf, n)`` as soon as the ungrouped
    columns alone leave ``n > max_units`` with a choice."""
    _, _, nonzero, zero = _ranges(problem, lower, upper)
    return _n_assignments(problem, lower, upper, nonzero, zero, max_units)


def best_in_box(problem: RiskProblem, lower: np.ndarray, upper: np.ndarray, max_work: float,
                ceiling: float = math.inf) -> tuple[np.ndarray | None, float] | None:
    """The best integer point of the box ``lower``/``upper`` (bounds of every column of the problem's
    variable vector, a search node's) and its objective (loss + Σ c0 over used columns).  The
    problem must :func:`qualify <qualifies>`.

    The box is listed one size unit at a time (:func:`list_units`); with a finite ``ceiling``, the
    objective to beat, partial assignments whose bound cannot beat it are dropped on the way.
    Returns ``(point, objective)`` when the box's best point is below ``ceiling``; ``(None, bound)``
    when no point of the box is, with a lower bound on all of them (inf for a box without a
    feasible point); None when the listing's work (partial assignments × distinct row patterns,
    summed over the units) passes ``max_work``."""
    box = open_box(problem, lower, upper)
    if box is None:
        return None, math.inf
    listed = list_units(problem, box, ceiling, max_work)
    if listed is None:
        return None
    if not len(listed.values):
        return None, listed.bound
    best = int(np.argmin(listed.values))
    if listed.values[best] >= ceiling:
        return None, min(listed.bound, float(listed.values[best]))
    lam = np.zeros(problem.d + 1)
    lam[0] = listed.intercepts[best]
    lam[1:] = listed.points(np.array([best]))[0]
    return lam, float(listed.values[best])


@dataclass
class Box:
    """A box's size units with a choice (``free``: their columns that can be nonzero, the
    assignments of those columns, whether each uses the unit), the points the other units are
    fixed at (``fixed``, using ``fixed_used`` units) and the intercept's range ``(low, high)``."""

    free: list
    fixed: np.ndarray
    fixed_used: int
    intercepts: tuple


def open_box(problem: RiskProblem, lower: np.ndarray, upper: np.ndarray) -> Box | None:
    """The size units of the box ``lower``/``upper`` (bounds of every column of the problem's
    variable vector) as a :class:`Box`; None when the box holds no point within the size limits
    and size groups."""
    p, lay = problem, problem.layout
    lam_lo, lam_hi = lower[lay.lam_slice], upper[lay.lam_slice]
    ranges = _ranges(p, lower, upper)
    _, _, nonzero, zero = ranges
    if _n_assignments(p, lower, upper, nonzero, zero)[0] == 0:
        return None
    b_lo, b_hi = max(lam_lo[0], p.intercept_bounds[0]), min(lam_hi[0], p.intercept_bounds[1])
    if not p.real_intercept:
        b_lo, b_hi = math.ceil(b_lo - 1e-9), math.floor(b_hi + 1e-9)
    if b_lo > b_hi:
        return None
    opts = []
    for cols, cap, need in _units(p, lower, upper):
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
    return Box(free, fixed, fixed_used, (b_lo, b_hi))


def _patterns(problem: RiskProblem, free_cols, fixed):
    """The rows collapsed to their distinct patterns on ``free_cols`` plus the fixed part of their
    score: (patterns, their positive and negative weights)."""
    p = problem
    Z = p.loss.Z[:, 1:]
    key = np.column_stack([Z[:, free_cols], Z @ fixed])
    pat, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.ravel()
    wp = np.bincount(inv, weights=p.loss.w_pos, minlength=len(pat))
    wn = np.bincount(inv, weights=p.loss.w_neg, minlength=len(pat))
    return pat, wp, wn


@dataclass
class Listed:
    """The assignments a listing kept: each one's best intercept (``intercepts``) and its loss there
    + c0 · size + the listing's ``extra`` (``values``); ``bound``: the least bound of the partial
    assignments it dropped (inf when none); :meth:`points` gives their points."""

    intercepts: np.ndarray
    values: np.ndarray
    bound: float
    fixed: np.ndarray
    steps: list      # per unit in the order listed: (its columns, its assignments)
    picks: np.ndarray  # per unit, the assignment each kept one takes

    def points(self, which: np.ndarray) -> np.ndarray:
        """The design-column points of the kept assignments ``which`` (positions), one row each."""
        out = np.tile(self.fixed, (len(which), 1))
        for (cols, A), pick in zip(self.steps, self.picks):
            out[:, cols] = A[pick[which]]
        return out


def list_units(problem: RiskProblem, box: Box, ceiling: float, max_work: float, *, extra: float = 0.0,
               ties: bool = False) -> Listed | None:
    """List the free units' assignments of ``box`` one unit at a time, keeping only the partial
    assignments whose bound is below ``ceiling`` (at most it, with ``ties``; both within a
    rounding margin of 1e-12 relative).  The bound of a partial assignment gives each positive row
    the highest score the units still to choose can add and each negative row the lowest (rows
    choose independently, so no assignment scores less), at its best intercept, plus the least
    c0 those units must add and ``extra`` (a least cost every point adds, such as penalties).
    Every complete assignment left is scored at its best intercept.  None when the work (partial
    assignments × patterns, summed over the units) passes ``max_work``."""
    p = problem
    lo_b, hi_b = box.intercepts
    fixed, fixed_used = box.fixed, box.fixed_used
    free_cols = [j for cols, _, _ in box.free for j in cols]
    pat, wp, wn = _patterns(p, free_cols, fixed)
    P = len(pat)
    steps, off = [], 0
    c0 = cast(np.ndarray, p.c0)  # an array once the problem is built
    for cols, A, used in box.free:
        C = pat[:, off:off + len(cols)] @ A.T          # patterns × the unit's options
        steps.append((C, used.astype(int), (A != 0) @ c0[cols], cols, A))
        off += len(cols)
    # the units that move the scores most go first: their bounds tighten the most
    spread = [float((wp + wn) @ (C.max(axis=1) - C.min(axis=1))) for C, *_ in steps]
    steps = [steps[k] for k in np.argsort(spread, kind="stable")[::-1]]
    rem_lo = sum((C.min(axis=1) for C, *_ in steps), np.zeros(P))
    rem_hi = sum((C.max(axis=1) for C, *_ in steps), np.zeros(P))
    rem_c0 = sum(float(c.min()) for _, _, c, _, _ in steps)
    rem_need = sum(int(u.min()) for _, u, _, _, _ in steps)
    rem_can = sum(int(u.max()) for _, u, _, _, _ in steps)
    S = pat[:, -1:].copy()
    n_used = np.array([fixed_used])
    c0s = np.array([float(c0 @ (fixed != 0))])
    picks = np.zeros((0, 1), dtype=np.intp)
    pruning = math.isfinite(ceiling)
    w_both = (np.concatenate([wp, np.zeros(P)]), np.concatenate([np.zeros(P), wn]))
    level = ceiling + 1e-12 * (1.0 + abs(ceiling)) if pruning else math.inf
    bound, work = math.inf, 0.0
    unit_points = [(cols, A) for _, _, _, cols, A in steps]

    def none_left() -> Listed:
        return Listed(np.zeros(0), np.zeros(0), bound, fixed, unit_points, np.zeros((len(steps), 0), dtype=np.intp))

    for k, (C, used, c0u, _, _) in enumerate(steps):
        rem_lo, rem_hi = rem_lo - C.min(axis=1), rem_hi - C.max(axis=1)
        rem_c0 -= float(c0u.min())
        rem_need, rem_can = rem_need - int(used.min()), rem_can - int(used.max())
        n_o = C.shape[1]
        work += P * S.shape[1] * n_o
        if work > max_work:
            return None
        S = (S[:, :, None] + C[:, None, :]).reshape(P, -1)
        n_used = (n_used[:, None] + used[None, :]).ravel()
        c0s = (c0s[:, None] + c0u[None, :]).ravel()
        picks = np.vstack([np.repeat(picks, n_o, axis=1), np.tile(np.arange(n_o), picks.shape[1])])
        keep = (n_used + rem_need <= p.max_size) & (n_used + rem_can >= p.min_size)
        if pruning and k < len(steps) - 1 and keep.any():
            # best case per row: positives at their highest remaining score, negatives at their lowest
            Sk = S[:, keep]
            _, low = _best_intercepts(p, *w_both, np.vstack([Sk + rem_hi[:, None], Sk + rem_lo[:, None]]),
                                      lo_b, hi_b)
            low = low + c0s[keep] + rem_c0 + extra
            below = low <= level if ties else low < level
            if not below.all():
                bound = min(bound, float(low[~below].min()))
            keep[np.flatnonzero(keep)[~below]] = False
        S, n_used, c0s, picks = S[:, keep], n_used[keep], c0s[keep], picks[:, keep]
        if S.shape[1] == 0:
            return none_left()
    if not steps and not p.min_size <= fixed_used <= p.max_size:
        return none_left()
    b, loss = _best_intercepts(p, wp, wn, S, lo_b, hi_b)
    return Listed(np.asarray(b, float), loss + c0s + extra, bound, fixed, unit_points, picks)
