"""The search behind :func:`riskformula.rashomon_set`: every integer point under an objective level.

A branch-and-bound over the same LP relaxation as the package's branch-and-cut
(:mod:`riskformula.solver.branch_and_cut`: the problem's linear rows plus an epigraph column for
the loss, bounded below by loss cuts), with two differences that make it list a set instead of
finding a best point:

* **Pruning against a fixed level.**  A node is discarded only when its LP bound is *above* the
  level ``(1 + ε) · V``, where V is the best objective known (the certified optimum from the
  first phase, lowered if this search ever finds a better score).  The LP bound is a valid lower
  bound on the objective of every integer point of the node's box (cuts of a convex loss lie
  below it; the bound is lowered by a margin for HiGHS' tolerances), so no point at or below the
  level is ever discarded.
* **Nodes are closed by listing, not by an integer LP point.**  An integer LP point is the best
  of its node, not the only one under the level: the node is split further.  A box with few
  assignments left is closed by listing every point in it whose objective may be at most the
  level (:func:`~.listing.list_box`) and scoring each exactly (:func:`~.listing.score_points`).

Branching partitions a node's integer points (each point lies in exactly one child), so every
point is listed once: a size group's "used" indicator (0 | 1), then the cuts of a used one-cut
threshold split in two halves (left | right: each point uses exactly one of them), then a
fractional indicator, then a fractional point (≤ ⌊v⌋ | ≥ ⌈v⌉), and when the LP point is integer,
a free indicator or the widest points' range.  The intercept is never branched on: listing gives
each score its best intercept.

At a time, node or count limit, the open nodes' least bound B is the proven statement: every
score whose objective is below B is listed (a node pruned by its bound holds only scores above the
level, and the level is at least B).
"""

from __future__ import annotations

import heapq
import itertools
import math
import time

import numpy as np

from ..problem import RiskProblem
from ..problem.problem import loss_bounds
from ..solver.enumeration import box_size
from ..solver.lp import NodeLP
from ..solver.nodes import INT_TOL, c0_range, safe_bound
from ..solver.options import SearchOptions
from .listing import least_aux_cost, list_box, score_points

#: objectives are computed by different sums (one score, a batch of them): a score within this
#: relative distance of the level counts as under it, so that a tie is never decided by rounding
ROUNDING = 1e-12


def under(value: float, level: float) -> bool:
    """Whether an objective is at most the level, up to :data:`ROUNDING`."""
    return value <= level + ROUNDING * abs(level)


class RashomonSearch:
    """List every integer point of ``problem`` whose objective is at most (1 + ``epsilon``) × the
    best objective known.

    Parameters
    ----------
    problem : the :class:`RiskProblem` (one score scale).
    epsilon : the relative tolerance ε ≥ 0 (objectives are ≥ 0).
    best : ``(λ, objective)`` of the best score known (a certified optimum, or an incumbent).
    options : :class:`~riskformula.solver.options.SearchOptions`: its ``time_limit`` (seconds, counted
        from ``started``, a ``time.perf_counter()`` value) and ``node_limit`` (optional cap on nodes).
    max_members : optional cap on listed scores.
    cuts : loss-cut rows from another search of the same problem (:meth:`NodeLP.cuts`), to start
        the LP with.
    lower_bound : a proven lower bound on the objective of every score (e.g. another search's bound on
        the optimum); every node's bound is at least it.
    """

    #: the most work (partial assignments × distinct row patterns) one listing may take
    listing_work = 1_000_000
    #: a box is listed only with at most this many size units with a choice left
    listing_units = 6
    #: loss cuts per node before branching
    node_rounds = 2
    #: archived cuts a node may take back per round
    archived_cuts = 30
    #: process a child right after its parent
    diving = True
    #: most loss cuts in the LP (dropped ones go to the archive)
    pool_cuts = 300

    def __init__(self, problem: RiskProblem, epsilon: float, best: tuple, options: SearchOptions | None = None, *,
                 max_members: int | None = None, cuts=None,
                 started: float | None = None, lower_bound: float = -math.inf):
        self.p = problem
        self.epsilon = float(epsilon)
        lam, value = best
        self.best_value = float(value)
        self.best_lam = np.asarray(lam, float)
        options = SearchOptions() if options is None else options
        self.time_limit = float(options.time_limit)
        self.node_limit = options.node_limit
        self.max_members = max_members
        self.t0 = time.perf_counter() if started is None else float(started)
        #: a proven lower bound on every score's objective (the first phase's bound on the optimum): the
        #: root's bound, so that every node's bound is at least it
        self.lower_bound = float(lower_bound)
        self.integer = problem.integer_mask()
        lay = problem.layout
        self.lam_slice, self.alpha_slice = lay.lam_slice, lay.alpha_slice
        self.units = problem.unit_columns
        self.exclusive = [(int(self.units[g]), np.asarray(grp.cols))
                          for g, grp in enumerate(problem.groups) if grp.exclusive]
        self.aux_least = least_aux_cost(problem)
        self.loss_lo, self.loss_hi = loss_bounds(problem)
        self.lp = NodeLP(problem, self.loss_lo, self.loss_hi, scaled=cuts is None)
        if cuts:
            self.lp.add_rows(list(cuts))
        self.root_lower, self.root_upper = problem.column_bounds()
        # a smaller pool than the branch-and-cut's (750 at most): listing visits every node under the level,
        # so a fast LP matters more than a tight one (mammo at ε = 1 %: 12.6 s with 750 cuts, 6.5 s with 300)
        self.max_cuts = int(min(self.pool_cuts, max(150, 30000 / (problem.d + 1))))
        #: listed scores: key (points as bytes) → (λ, objective)
        self.members: dict = {}
        #: least objective of scores listed but dropped at ``max_members``
        self.dropped = math.inf
        self.nodes = 0
        self.listed_nodes = 0
        self.lp_solves = 0
        self._reach = math.inf
        self._n_rows = len(problem.loss.Z)
        self._counter = itertools.count()
        self.heap: list = []
        #: a child processed right after its parent (depth first until a node is settled), whose LP
        #: warm-starts from its parent's basis; other nodes are taken least bound first
        self.dive: tuple[float, tuple] | None = None
        self.status: str | None = None
        self._set_loss_ceiling()
        # the best score known is a member: scored here as every listed score is
        if problem.can_complete:
            from ..solver.heuristics import best_intercept
            b = best_intercept(problem, problem.loss.Z[:, 1:] @ self.best_lam[1:])
            self._keep(self.best_lam[None, 1:], np.array([b], float), np.array([self.best_value]))

    # --- the level ----------------------------------------------------------------------
    @property
    def level(self) -> float:
        """(1 + ε) × the best objective known: no score above it is kept."""
        return (1.0 + self.epsilon) * self.best_value

    def _set_loss_ceiling(self) -> None:
        """No member's loss exceeds the level less the least size cost and penalty."""
        c0min, _ = c0_range(self.p)
        hi = self.level - c0min * self.p.min_size - self.aux_least
        hi = min(self.loss_hi, hi + 1e-9 * (1.0 + abs(hi)))
        self.lp.set_loss_bounds(self.loss_lo, max(hi, self.loss_lo))

    # --- main ---------------------------------------------------------------------------
    def run(self) -> str | None:
        """Search until every node is settled (returns None) or a limit stops it (returns
        ``"time_limit"``, ``"node_limit"`` or ``"member_limit"``)."""
        if not self.heap and self.dive is None and self.nodes == 0:
            heapq.heappush(self.heap, (self.lower_bound, next(self._counter), ()))
        while self.heap or self.dive is not None:
            now = time.perf_counter() - self.t0
            if now > self.time_limit:
                self.status = "time_limit"
                return self.status
            if self.node_limit is not None and self.nodes >= self.node_limit:
                self.status = "node_limit"
                return self.status
            if self.max_members is not None and len(self.members) >= self.max_members:
                self.status = "member_limit"
                return self.status
            if self.dive is not None:
                bound, changes = self.dive  # a child of the last node: its LP starts from its parent's basis
                self.dive = None
            else:
                bound, _, changes = heapq.heappop(self.heap)
            if bound > self.level:
                continue
            kids = self._process(bound, changes)
            if kids and self.diving:
                self.dive, kids = kids[0], kids[1:]
            for kid in kids or ():
                heapq.heappush(self.heap, (kid[0], next(self._counter), kid[1]))
        return None

    def open_bound(self) -> float:
        """Least bound of the open nodes (∞ when none is open) and of the scores dropped at the
        count limit: no score that is not listed has a smaller objective."""
        open_ = min((b for b, _, _ in self.heap if b <= self.level), default=math.inf)
        if self.dive is not None and self.dive[0] <= self.level:
            open_ = min(open_, self.dive[0])
        return min(open_, self.dropped)

    # --- one node -----------------------------------------------------------------------
    def _left(self) -> float:
        return self.time_limit - (time.perf_counter() - self.t0)

    def _box(self, changes):
        lower = self.root_lower.copy()
        upper = self.root_upper.copy()
        for cols, lo, hi in changes:
            lower[cols] = np.maximum(lower[cols], lo)
            upper[cols] = np.minimum(upper[cols], hi)
        self.p.fix_indicators(lower, upper)
        return lower, upper

    def _process(self, parent_bound: float, changes: tuple):
        """Bound, list or split one node; returns its children ``(bound, changes)``."""
        p, lp = self.p, self.lp
        lower, upper = self._box(changes)
        if np.any(lower > upper):
            return None
        lp.set_bounds(lower, upper)
        self.nodes += 1
        rounds = 0
        while True:
            status, obj, x = lp.solve(self._left())
            self.lp_solves += 1
            if status == "time_limit":
                return [(parent_bound, changes)]  # still open; the main loop stops at the limit
            if status == "infeasible":
                return None
            bound = max(safe_bound(obj), parent_bound)
            if bound > self.level:
                return None
            lam = x[self.lam_slice]
            f, g = p.loss.value_and_gradient(lam)
            if f - x[-1] > 1e-6 * (1 + f) and rounds < self.node_rounds:
                lp.add_cut(lam, f, g)
                lp.restore_archived(x, self.archived_cuts, 1e-6 * (1 + f))
                rounds += 1
                continue
            break
        if lp.n_cuts > self.max_cuts:
            lp.drop_slack_cuts(self.max_cuts // 2)
        if self._list(lower, upper):
            self.listed_nodes += 1
            return None
        return self._split(x[:-1], lower, upper, bound, changes)

    def _list(self, lower: np.ndarray, upper: np.ndarray) -> bool:
        """List the box when listing every assignment in it, without any pruning, would cost at
        most :attr:`listing_work` (assignments × distinct rows): the partial bounds then only save
        time, and a listing is never given up.  True when the node is settled."""
        size, open_units = box_size(self.p, lower, upper, self.listing_units)
        if open_units > self.listing_units or size * self._n_rows > self.listing_work and open_units > 0:
            return False
        listed = list_box(self.p, lower, upper, self.level, math.inf)
        self._keep(*listed)
        return True

    def _keep(self, points: np.ndarray, intercepts: np.ndarray, values: np.ndarray) -> None:
        """Score listed points exactly and keep those at or below the level."""
        if not len(points):
            return
        ceiling = self.level + ROUNDING * abs(self.level)
        lams, exact = score_points(self.p, points, intercepts, ceiling)
        order = np.argsort(exact, kind="stable")
        for i in order:
            v = float(exact[i])
            if not under(v, self.level):
                break
            key = np.asarray(lams[i, 1:], dtype=np.int64).tobytes()
            if key in self.members:
                continue
            if self.max_members is not None and len(self.members) >= self.max_members:
                self.dropped = min(self.dropped, v)
                continue
            self.members[key] = (lams[i].copy(), v)
            if v < self.best_value - 1e-12 * (1 + abs(v)):
                self.best_value, self.best_lam = v, lams[i].copy()
                self._set_loss_ceiling()

    # --- branching ----------------------------------------------------------------------
    def _split(self, xi: np.ndarray, lower: np.ndarray, upper: np.ndarray, bound: float, changes: tuple):
        """Two children that partition the node's integer points."""
        frac = np.abs(xi - np.round(xi))
        frac[~self.integer] = 0.0
        frac[0] = 0.0  # the intercept: listing chooses it
        lay = self.p.layout
        free = upper > lower + 0.5

        def two(cols, down_hi, up_lo):
            cols = [int(cols)] if np.isscalar(cols) else [int(k) for k in np.atleast_1d(cols)]
            return [(bound, changes + ((cols, -math.inf, down_hi),)),
                    (bound, changes + ((cols, up_lo, math.inf),))]

        # 1. a size group's "used" indicator, fractional
        if len(self.units):
            f = frac[self.units]
            if f.max() > INT_TOL:
                u = int(self.units[int(np.argmax(f))])
                return two(u, 0.0, 1.0)
        # 2. a one-cut threshold whose LP spreads over several cuts: used or not, then halves
        for u, cols in self.exclusive:
            a = xi[lay.alpha(cols)]
            if np.count_nonzero(a > INT_TOL) < 2:
                continue
            if free[u]:
                return two(u, 0.0, 1.0)
            if lower[u] > 0.5:
                k = int(np.searchsorted(np.cumsum(a), 0.5 * a.sum()))
                nz = np.flatnonzero(a > INT_TOL)
                k = min(max(k, nz[0]), nz[-1] - 1)
                left, right = lay.alpha(cols[: k + 1]), lay.alpha(cols[k + 1:])
                return [(bound, changes + ((list(right), -math.inf, 0.0),)),
                        (bound, changes + ((list(left), -math.inf, 0.0),))]
        # 3. a fractional indicator, 4. fractional points
        for sl in (self.alpha_slice, self.lam_slice):
            f = np.zeros_like(frac)
            f[sl] = frac[sl]
            if f.max() > INT_TOL:
                j = int(np.argmax(f))
                return two(j, math.floor(xi[j]), math.ceil(xi[j]))
        # 5. an integer LP point: a free indicator (the used ones first), then the widest points
        cand = [int(c) for c in self.units if free[c]]
        if not cand:
            alphas = np.arange(lay.alpha_slice.start, lay.alpha_slice.stop)
            cand = [int(c) for c in alphas[free[alphas]]]
        if cand:
            c = max(cand, key=lambda c: (round(float(xi[c])), -c))
            return two(c, 0.0, 1.0)
        lams = np.arange(1, self.p.d + 1)
        width = upper[lams] - lower[lams]
        if width.max() >= 1:
            j = int(lams[int(np.argmax(width))])
            v = min(max(math.floor(xi[j] + 0.5), lower[j]), upper[j] - 1)
            return two(j, v, v + 1)
        raise RuntimeError("a box with one point left was not listed")  # pragma: no cover
