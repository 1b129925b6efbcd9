"""Exact net-benefit search over the points by branch and bound (small problems).

For plain problems (coefficient bounds and size limits, nothing else) whose points can take few
combinations, the best score is found and proven without the MILP. The search fixes one column's
points per level, in a fixed order, and bounds every partial score: with the free columns
anywhere within their bounds (and the size limit), row ``r``'s score lies in an interval
``[low_r, high_r]``, so at threshold ``p_i`` no cut-off can do better than counting every event at
``high_r`` and every non-event at ``low_r``:

    NB_i ≤ max_T  Σ_r a_r·1[high_r ≥ T] − (p_i/(1 − p_i))·Σ_r b_r·1[low_r ≥ T]   (then ÷ N)

That is the exact net benefit once every column is fixed (the intervals close), so the leaves
need no other evaluation. A partial score whose bound (minus c0 for each term already used, and
for the terms ``min_size`` still needs) cannot beat the best score found is dropped. The interval
of the free columns uses the size limit: with ``m`` terms left, a row's score can fall by at most
the ``m`` largest drops the free columns allow it, and rise likewise.

The MILP (:mod:`.milp`) bounds net benefit through big-M rows whose relaxation is the
perfect-separation bound; this search is the exact alternative when the points space is small
(a few terms, a narrow points range), and the fit uses it there first.

>>> import numpy as np
>>> from riskformula.netbenefit.grid import decision_grid
>>> from riskformula.netbenefit.heuristic import NetBenefitScorer
>>> X = np.array([[0., 0.], [1., 0.], [0., 1.], [1., 1.]])
>>> scorer = NetBenefitScorer(X, pos=np.array([0., 1., 2., 5.]), neg=np.array([5., 3., 2., 0.]),
...                           grid=decision_grid(None, None))
>>> res = PointsBranchAndBound(scorer, lo=[0, 0], hi=[3, 3], c0=1e-3, max_size=2).run(time_limit=10)
>>> res.status, res.points.tolist(), round(res.objective, 4), res.bound == res.objective
('optimal', [2.0, 3.0], 0.3258, True)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .heuristic import EPS, NetBenefitScorer


@dataclass
class ExactResult:
    """Best points (in the columns' own order), their objective (weighted net benefit − c0·size),
    a proven upper bound on every feasible score's objective, and the effort spent."""

    points: np.ndarray
    objective: float
    bound: float
    status: str
    nodes: int
    time: float


def points_space(lo, hi, max_size: int, min_size: int = 0) -> float:
    """Number of points vectors within the bounds with ``min_size`` to ``max_size`` nonzero."""
    counts = np.zeros(len(lo) + 1)
    counts[0] = 1.0
    for a, b in zip(lo, hi):
        nonzero = float(b - a + 1 - (a <= 0 <= b))
        counts[1:] = counts[1:] + nonzero * counts[:-1]
    return float(counts[min_size:max_size + 1].sum())


class PointsBranchAndBound:
    """Branch and bound over integer points with interval bounds on the rows' scores.

    Parameters
    ----------
    scorer : the :class:`~riskformula.netbenefit.heuristic.NetBenefitScorer` of the distinct rows.
    lo, hi : integer bounds of each column's points (0 is always allowed: an unused column).
    c0 : penalty per term used.
    max_size, min_size : limits on the number of nonzero points.
    """

    def __init__(self, scorer: NetBenefitScorer, lo, hi, c0: float, max_size: int, min_size: int = 0):
        self.scorer = scorer
        self.X = scorer.X
        self.R, self.d = self.X.shape
        self.lo = np.minimum(np.asarray(lo, dtype=float), 0.0)
        self.hi = np.maximum(np.asarray(hi, dtype=float), 0.0)
        self.c0 = float(c0)
        self.max_size = int(min(max_size, self.d))
        self.min_size = int(min_size)
        self.a_ext = np.concatenate([scorer.pos, np.zeros(self.R)])
        self.b_ext = np.concatenate([np.zeros(self.R), scorer.neg])

    # --- bounds ---------------------------------------------------------------------------
    def _free_ranges(self, free: np.ndarray):
        """Per row, the largest fall and rise of its score that ``m`` of the ``free`` columns can
        give, for m = 0 .. len(free): arrays (R, len(free) + 1)."""
        if not len(free):
            z = np.zeros((self.R, 1))
            return z, z
        lo_c = self.X[:, free] * self.lo[free]
        hi_c = self.X[:, free] * self.hi[free]
        drop = np.minimum(np.minimum(lo_c, hi_c), 0.0)
        rise = np.maximum(np.maximum(lo_c, hi_c), 0.0)
        fall = np.cumsum(np.sort(drop, axis=1), axis=1)               # most negative first
        climb = np.cumsum(-np.sort(-rise, axis=1), axis=1)            # most positive first
        zero = np.zeros((self.R, 1))
        return np.hstack([zero, fall]), np.hstack([zero, climb])

    def _optimistic(self, high: np.ndarray, low: np.ndarray) -> np.ndarray:
        """Σ_i w_i max_T (events at ``high`` ≥ T − odds_i · non-events at ``low`` ≥ T), per row of
        ``high``/``low`` (K candidate interval sets over the R rows)."""
        self.scorer.evaluations += high.shape[0]
        return self.scorer.sorted_values(np.hstack([high, low]), self.a_ext, self.b_ext)

    def _bounds(self, base: np.ndarray, sizes: np.ndarray, free_ranges, left: int) -> np.ndarray:
        """Bound on the objective of every completion of K partial scores ``base`` (K, R) with
        ``sizes`` terms used and ``left`` columns free (whose :meth:`_free_ranges` are given)."""
        fall, climb = free_ranges
        room = np.minimum(self.max_size - sizes, left)
        high = base + climb[:, room].T
        low = base + fall[:, room].T
        need = np.maximum(self.min_size - sizes, 0)
        return self._optimistic(high, low) - self.c0 * (sizes + need)

    def node_bound(self, fixed: dict) -> float:
        """The search's bound on the objective of every feasible completion of the points
        ``fixed`` (column → points), the other columns free."""
        cols = np.array(sorted(fixed), dtype=int)
        vals = np.array([fixed[j] for j in cols], dtype=float)
        free = np.setdiff1d(np.arange(self.d), cols)
        base = (self.X[:, cols] @ vals)[None, :] if len(cols) else np.zeros((1, self.R))
        size = np.array([np.count_nonzero(vals)])
        return float(self._bounds(base, size, self._free_ranges(free), len(free))[0])

    # --- search ---------------------------------------------------------------------------
    def run(self, incumbent=None, *, time_limit: float = 60.0, gap_tolerance: float = 0.0,
            order=None) -> ExactResult:
        """Search every points vector, starting from ``incumbent`` (points, optional); ``order``
        (default: the incumbent's terms by their size of points, then the rest) is the order in
        which columns are fixed."""
        t0 = time.perf_counter()
        d = self.d
        best, best_val = np.zeros(d), -math.inf
        if incumbent is not None:
            inc = np.asarray(incumbent, dtype=float)
            if self._feasible(inc):
                best, best_val = inc.copy(), self._objective(inc)
        if not math.isfinite(best_val) and self._feasible(best):
            best_val = self._objective(best)
        if order is None:
            key = -np.abs(best) if incumbent is not None else np.zeros(d)
            order = np.argsort(key, kind="stable")
        order = np.asarray(order, dtype=int)
        ranges = [self._free_ranges(order[k + 1:]) for k in range(d)]
        values = [np.arange(self.lo[j], self.hi[j] + 1) for j in order]
        if d == 0:
            return ExactResult(best, best_val, best_val, "optimal", 0, time.perf_counter() - t0)

        root = self.node_bound({})
        stack = [(root, 0, np.zeros(self.R), 0, np.zeros(d))]  # (bound, depth, partial score, size, points)
        pruned = -math.inf  # largest bound among partial scores dropped within the gap tolerance
        nodes, status = 0, "optimal"
        while stack:
            if time.perf_counter() - t0 > time_limit:
                status = "time_limit"
                break
            bound, depth, s, size, pts = stack.pop()
            if bound <= best_val + self._tolerance(best_val, gap_tolerance):
                if bound > best_val:
                    pruned = max(pruned, bound)
                continue
            nodes += 1
            j = order[depth]
            vals = values[depth]
            sizes = size + (vals != 0)
            keep = sizes <= self.max_size
            left = d - depth - 1
            keep &= self.min_size - sizes <= left
            vals, sizes = vals[keep], sizes[keep]
            if not len(vals):
                continue
            base = s[None, :] + vals[:, None] * self.X[:, j][None, :]
            child = self._bounds(base, sizes, ranges[depth], left)
            if left == 0:  # complete points: the bound is the objective
                k = int(np.argmax(child))
                if child[k] > best_val + EPS:
                    best = pts.copy()
                    best[j] = vals[k]
                    best_val = float(child[k])
                elif child[k] > best_val:  # better by less than EPS: kept in the bound
                    pruned = max(pruned, float(child[k]))
                continue
            for k in np.argsort(child, kind="stable"):  # best child last: popped first
                if child[k] > best_val + self._tolerance(best_val, gap_tolerance):
                    p = pts.copy()
                    p[j] = vals[k]
                    stack.append((float(child[k]), depth + 1, base[k], int(sizes[k]), p))
                elif child[k] > best_val:
                    pruned = max(pruned, float(child[k]))
        if status == "optimal" and not math.isfinite(best_val):
            status = "infeasible"  # no points within the bounds meet the size limits
        open_bound = max((node[0] for node in stack), default=-math.inf)
        upper = max(best_val, pruned, open_bound)
        return ExactResult(best, best_val, upper, status, nodes, time.perf_counter() - t0)

    @staticmethod
    def _tolerance(best_val: float, gap_tolerance: float) -> float:
        if not math.isfinite(best_val):
            return 0.0
        return max(EPS, gap_tolerance * abs(best_val))

    def _feasible(self, lam: np.ndarray) -> bool:
        size = int(np.count_nonzero(lam))
        return bool(np.all(lam >= self.lo) and np.all(lam <= self.hi)
                    and self.min_size <= size <= self.max_size)

    def _objective(self, lam: np.ndarray) -> float:
        return self.scorer.value(self.X @ lam) - self.c0 * np.count_nonzero(lam)
