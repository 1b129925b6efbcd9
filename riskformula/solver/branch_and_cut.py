"""Branch-and-cut for "convex loss + linear rows over integer and binary variables": the search loop.

This is the lattice cutting-plane algorithm of Ustun & Rudin (2019) run in a search tree we own
(HiGHS 1.15's MIP solver never calls a lazy-constraint callback): every node solves the LP
relaxation of its region with the current pool of loss cuts; integer points get a cut until the
cut is tight, so incumbents are always scored with the true loss; fractional points get a cut too
(cuts are valid everywhere because the loss is convex).  The lower bound is the least bound of
the open nodes, so the reported gap is a true optimality gap.

This module holds the search loop, the incumbents and what is done at one node; the other jobs
are in their own modules: the root's cutting planes (and the first-order cut when they stall on
threshold terms) in :mod:`.root`, the branching rules in :mod:`.branching`, the log in
:mod:`.search_log`, the search on several processes in :mod:`.parallel`, the nodes' vocabulary
in :mod:`.nodes`.  Each child starts its LP from its parent's optimal basis.  A node whose integer
points can be listed within :attr:`BranchAndCut.enumeration_work` (those that could beat the
incumbent, by a bound on partial assignments) is not branched on: they are scored
(:mod:`.enumeration`) and the node is closed.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time

import numpy as np

from ..problem import RiskProblem
from ..problem.problem import loss_bounds
from .branching import Branching
from .enumeration import best_in_box, box_size, qualifies
from .heuristics import best_intercept, fill_to_min_size, polish, sequential_rounding
from .lp import NodeLP
from .nodes import (INT_TOL, LP_PRECISION, Branch, Change, Child, Node, NodePoint, c0_range, highs_version,
                    limit_status, safe_bound)
from .options import SearchOptions
from .parallel import Rounds, on_workers
from .report import SolverReport
from .root import RootCuts
from .search_log import SearchLog


class BranchAndCut(RootCuts, Branching, SearchLog):
    """Solve a :class:`RiskProblem` to a certified gap, as ``options`` say (time and node limits,
    tolerances, processes, log; see :class:`~riskformula.solver.options.SearchOptions`).
    """

    #: extra loss cuts per fractional node before branching
    node_rounds = 1
    #: ... each round also takes back this many archived cuts (dropped from the pool earlier) that
    #: the node's LP point violates most: on spambase the gap at 60 s fell from 18 % to 15 %
    #: with the pool halved (benchmarks/README.md)
    archived_cuts = 30
    #: a node whose integer points that could beat the incumbent are listed within this much work
    #: (partial assignments of its free columns × distinct row patterns on them, summed over the
    #: units listed) is settled by scoring them instead of by branching
    enumeration_work: float = 800_000
    #: ... and has at most this many size units (columns, groups) with a choice left: a row's
    #: best case over many open units is a weak bound, and listing such nodes cost mammo's fit
    #: more time than the nodes it saved (benchmarks/README.md)
    enumeration_units = 6

    def __init__(self, problem: RiskProblem, options: SearchOptions | None = None):
        self.p = problem
        options = SearchOptions() if options is None else options
        self.options = options
        if options.enumeration_work is not None:
            self.enumeration_work = options.enumeration_work
        self.n_jobs = int(options.n_jobs)
        self.time_limit = float(options.time_limit)
        self.gap_tolerance = float(options.gap_tolerance)
        self.absolute_gap_tolerance = float(options.absolute_gap_tolerance)
        self.node_limit = options.node_limit
        self.verbose = options.verbose
        self.log_interval = options.log_interval
        self.progress = bool(options.progress) and not options.verbose  # the log already shows the same numbers
        self._last_status = 0.0  # the first status line comes one interval after the start
        self._status_shown = False
        # a larger pool gives tighter node bounds, but dense cut rows make every LP slower: the
        # pool stays small and the archive hands each node the dropped cuts it needs
        self.max_cuts = options.max_cuts or int(min(750, max(150, 30000 / (problem.d + 1))))
        self.heuristic_interval = options.heuristic_interval
        self.integer = problem.integer_mask()
        self.cost = problem.cost()  # the objective's linear part, used at every node
        lay = problem.layout
        self.lam_slice, self.alpha_slice = lay.lam_slice, lay.alpha_slice
        exclusive = [np.asarray(g.cols) for g in problem.exclusive_groups]
        if problem.max_nonzero == 1 and problem.d > 1:
            # the size row is then Σ_j α_j ≤ 1 over every column: one SOS1 set
            exclusive = [np.arange(problem.d)]
        # per exclusive group: positions of its α's (SOS1 split) and of its λ's (sign split)
        self.sos_groups = [lay.alpha(cols) for cols in exclusive]
        self.sign_groups = [lay.lam(cols) for cols in exclusive]
        Z = problem.loss.Z[:, 1:]
        self._Z = Z
        #: when every design column is 0/1 (items, dummies, threshold cuts), the "used" indicators
        #: are branched on before any column's points; measured in benchmarks/README.md
        self.support_first = bool(np.all((Z == 0) | (Z == 1)))
        self.best_x: np.ndarray | None = None
        self.best_lam: np.ndarray | None = None
        self.upper = math.inf
        #: the lower bound the chained bound on the loss column was last taken from: raised when a
        #: better objective is found, not as the search's bound rises (a floor close to the node
        #: bounds leaves the node LPs degenerate: measured in benchmarks/README.md)
        self.chain_lower = -math.inf
        #: an objective known to be reachable elsewhere (another score scale's incumbent): nodes
        #: that cannot beat it are pruned as if it were this problem's incumbent
        self.cutoff = math.inf
        #: least bound of the open nodes other processes hold (a search on several processes)
        self.outside_bound = math.inf
        #: seconds (from :meth:`start`) for the root's cutting planes and its heuristics; None:
        #: a quarter and 30 % of the time limit
        self.root_budget: float | None = None
        self.root_heuristic_budget: float | None = None
        #: loss cuts ``(λ, l(λ), ∇l(λ))`` put in the pool before the root (valid for this loss)
        self.seed_cuts: list = []
        #: the root's loss cuts ``(λ, l(λ), ∇l(λ))``, kept when :attr:`keep_root_cuts` is set
        self.keep_root_cuts = False
        #: (best relaxed point − bound) / |best relaxed point| where the root's cutting planes stopped
        self.root_relaxation_gap = math.inf
        self.root_cuts: list = []
        self.lp_solves = 0
        self.nodes = 0
        #: nodes closed by scoring every integer point in them (:mod:`.enumeration`)
        self.enumerated = 0
        self._enumerable = qualifies(problem) and self.enumeration_work > 0
        self._reach = math.inf  # of :meth:`_list_box`: every node is tried until a listing is given up
        self._n_rows = len(problem.loss.Z)
        self.log_lines: list[str] = []
        self.polish_calls = 0

    def worker_options(self) -> SearchOptions:
        """The options of this search continued on a worker process (:mod:`riskformula.solver.parallel`,
        which sets its time limit): the same tolerances, pool size, heuristics and listing."""
        return self.options.quiet().replace(gap_tolerance=self.gap_tolerance,
                                            absolute_gap_tolerance=self.absolute_gap_tolerance,
                                            max_cuts=self.max_cuts, heuristic_interval=self.heuristic_interval,
                                            enumeration_work=self.enumeration_work)

    # --- incumbents ---------------------------------------------------------------------
    def offer(self, lam: np.ndarray) -> bool:
        """A candidate found elsewhere (integer points, intercept first): kept if feasible and
        better than the incumbent; usable after :meth:`start`."""
        return self._offer(np.asarray(lam, float))

    def _integer_point(self, lam: np.ndarray) -> np.ndarray:
        """Whole points; the intercept whole too, or, when it is real, the best one for those
        points: for fixed points the loss is convex in the intercept, so the node LP's cut there
        (its gradient in the intercept is 0) bounds every intercept at once."""
        out = np.round(lam)
        if self.p.real_intercept:
            out[0] = best_intercept(self.p, self._Z @ out[1:])
        return out

    def _offer(self, lam: np.ndarray, x: np.ndarray | None = None) -> bool:
        """Score an integer point with the true objective and keep it if it is the best so far
        (a real intercept is re-chosen for its points first)."""
        if self.p.real_intercept:
            lam = np.array(lam, dtype=float)
            lam[0] = best_intercept(self.p, self._Z @ lam[1:])
            if x is not None:
                x = np.array(x, dtype=float)
                x[0] = lam[0]
        if x is None:
            x = self.p.complete(lam)
            if x is None:
                return False
        val = self.p.objective(lam, x)
        if val < self.upper - 1e-12:
            self.upper, self.best_lam, self.best_x = val, lam.copy(), x.copy()
            self.chain_lower = self.global_lower
            self._chain_bounds()
            return True
        return False

    def _heuristic(self, lam: np.ndarray, alpha: np.ndarray | None, swaps: bool = False) -> None:
        """SeqRd then DCD from an LP point (``alpha``: its indicators, None to round the points
        alone); a new incumbent is polished again with swaps."""
        if not self.p.can_complete:
            return
        cand = sequential_rounding(self.p, lam, alpha)
        if self.p.complete(cand) is None:
            return
        self._polish_and_offer(cand, swaps)

    def _polish_and_offer(self, lam: np.ndarray, swaps: bool = False) -> None:
        self.polish_calls += 1
        # the polish stops at the time limit (one can take seconds on many distinct rows); before
        # it, it runs to its end as always, so a search that ends by its tolerances is unchanged
        deadline = self.t0 + self.time_limit
        cand, val = polish(self.p, lam, swaps=swaps, deadline=deadline)
        if val < self._ceiling() - 1e-12 and not swaps:
            cand, val = polish(self.p, cand, swaps=True, deadline=deadline)
        self._offer(cand)

    def _heuristics_allowed(self) -> bool:
        """Polishing is rationed by work done, not by the clock, so runs are reproducible:
        about one polish per 20 nodes after the first few."""
        return self.polish_calls <= 10 + self.nodes // 20

    # --- bounds -----------------------------------------------------------------------
    def _chain_bounds(self) -> None:
        """The chained updates of Ustun & Rudin (2019) on the loss column: no better integer point has a loss
        outside [V_min − c0·R_max, V_max − c0·R_min]."""
        c0min, c0max = c0_range(self.p)
        # the most the auxiliaries' costs (penalties) can add to the objective
        aux_top = float(np.maximum(self.p.aux_cost * self.p.aux_lower, self.p.aux_cost * self.p.aux_upper).sum())
        lo = (max(self.loss_lo, self.chain_lower - c0max * self.p.max_nonzero - aux_top)
              if math.isfinite(self.chain_lower) else self.loss_lo)
        hi = min(self.loss_hi, self._ceiling() - c0min * self.p.min_size) if self.p.n_aux == 0 else self.loss_hi
        hi = max(hi, lo)
        self.lp.set_loss_bounds(lo, hi + 1e-9 * (1 + abs(hi)))

    # --- main ---------------------------------------------------------------------------
    def solve(self, initial: list[np.ndarray] | None = None, started: float | None = None) -> SolverReport:
        """Search until the gap tolerance, the time limit or the node limit; ``initial`` holds
        starting λ vectors (intercept first).  ``started`` (a ``time.perf_counter()`` value, default
        now) is when the time limit's clock started, so a caller's setup counts against it."""
        self.start(initial, started=started)
        return self.finish(on_workers(self.n_jobs, self._search))

    def _search(self, parallel=None) -> str | None:
        """The tree search after :meth:`start`, on this process or, with ``parallel`` (a joblib
        ``Parallel``), in rounds on its workers (:mod:`riskformula.solver.parallel`); returns the
        limit that stopped it, if any."""
        rounds = Rounds(self.n_jobs) if parallel is not None else None
        last_log = -1e9
        while self.has_open_nodes():
            lower = self.open_bound()
            self.global_lower = lower
            if self._within_tolerance(lower):
                break
            now = time.perf_counter() - self.t0
            status = limit_status(now, self.time_limit, self.nodes, self.node_limit)
            if status:
                return status
            if self.verbose and now - last_log >= self.log_interval:
                self._log(now, len(self.heap), lower)
                last_log = now
            self._status(now, len(self.heap) + (self.plunge is not None), lower)
            if rounds is not None and rounds.ready([self]):
                rounds.run(parallel, [self], self.node_limit, self.nodes, rounds.deadline(self.time_limit, now))
            else:
                self.step()
        return None

    def start(self, initial: list[np.ndarray] | None = None, started: float | None = None) -> None:
        """Everything before the tree search: the known incumbents (the intercept-only model,
        ``initial``), the root's cutting planes and heuristics, and the root node.

        The root's cutting planes stop after :attr:`root_budget` seconds (a quarter of the time
        limit unless set) and its heuristics after :attr:`root_heuristic_budget`, counted from ``started``
        (default now)."""
        p = self.p
        t0 = time.perf_counter() if started is None else float(started)
        self.t0 = t0
        self.loss_lo, self.loss_hi = loss_bounds(p)
        self.global_lower = -math.inf
        self.lp = NodeLP(p, self.loss_lo, self.loss_hi)
        self.root_lower, self.root_upper = p.column_bounds()
        for lam, f, g in self.seed_cuts:
            self.lp.add_cut(lam, f, g)
        if math.isfinite(self.cutoff):
            self._chain_bounds()

        # incumbents we know without search: the intercept-only model and user starts
        zero = np.zeros(p.d + 1)
        zero[0] = best_intercept(p, np.zeros(p.loss.n_unique))
        self._offer(zero)
        for lam in initial or []:
            self._offer(np.asarray(lam, float))
        if self.best_x is None and p.min_size > 0 and p.can_complete:
            self._polish_and_offer(fill_to_min_size(p, zero))

        root_bound, iterates = self._root_cutting_planes()
        root_bound = max(root_bound, self._first_order_root(root_bound))
        # a root whose first LP stopped at the time limit still has the loss bound of Ustun & Rudin
        # (2019, Proposition 4): the certificate then reports a (wide) gap instead of none
        root_bound = max(root_bound, self._static_bound())
        heuristic_budget = (0.3 * self.time_limit if self.root_heuristic_budget is None
                            else self.root_heuristic_budget)
        for k, (lam, alpha) in enumerate(iterates[:20]):
            now = time.perf_counter() - t0
            if now > heuristic_budget:
                break
            self._status(now, 1, root_bound)
            self._heuristic(lam, alpha, swaps=k < 3)

        self.root_bound = root_bound
        self._counter = itertools.count()
        self.heap: list[Node] = [(root_bound, 0, next(self._counter), (), None, None)]
        self.tol_pruned = math.inf  # least bound among nodes pruned by the gap tolerance
        self.pseudo = np.zeros((2, p.n_cols))
        self.pseudo_n = np.zeros((2, p.n_cols))
        self.plunge: Node | None = None  # a child processed at once: its LP warm-starts from its parent's basis

    def resume(self, cuts: list, nodes: list, incumbent: tuple, pseudo: tuple, counts: tuple,
               outside_bound: float, archive: tuple | None = None) -> None:
        """Continue a search begun elsewhere (another process): the pool's ``cuts`` (from
        :meth:`NodeLP.cuts`) and its ``archive`` (from :meth:`CutArchive.state`), the open ``nodes``
        (from :meth:`take_open_nodes`) to explore, the ``incumbent`` ``(objective, λ, x, cutoff,
        chain_lower)``, the pseudo-costs, the ``counts`` (nodes, polish calls) that ration the
        heuristics and the listing's reach (:meth:`_list_box`), and the least bound of the nodes
        searched elsewhere; instead of :meth:`start`."""
        p = self.p
        self.t0 = time.perf_counter()
        self.loss_lo, self.loss_hi = loss_bounds(p)
        self.outside_bound = outside_bound
        self.global_lower = min(outside_bound, min(n[0] for n in nodes))
        self.lp = NodeLP(p, self.loss_lo, self.loss_hi, scaled=False)
        self.lp.add_rows(cuts)
        if archive is not None:
            self.lp.archive.extend(*archive)
        self.root_lower, self.root_upper = p.column_bounds()
        self.upper, self.best_lam, self.best_x, self.cutoff, self.chain_lower = incumbent
        self._chain_bounds()
        self.root_bound = self.global_lower
        self._counter = itertools.count()
        self.heap = [(b, depth, next(self._counter), changes, branch, basis)
                     for b, depth, changes, branch, basis in nodes]
        heapq.heapify(self.heap)
        self.tol_pruned = math.inf
        self.pseudo, self.pseudo_n = (a.copy() for a in pseudo)
        self.plunge = None
        self.nodes, self.polish_calls, self._reach = counts

    def open_bound(self) -> float:
        """Least bound of the open nodes (here or, in a search on several processes, elsewhere) and
        of the nodes pruned by the gap tolerance."""
        return min(self.next_bound(), self.tol_pruned, self.outside_bound)

    def step(self) -> None:
        """Process one node of the tree (the pending plunge child first, else the best open node)."""
        self.global_lower = self.open_bound()
        if self.plunge is not None:
            bound, negdepth, _, changes, branch, _ = self.plunge  # the LP holds its parent's basis
            self.plunge = None
        else:
            bound, negdepth, _, changes, branch, basis = heapq.heappop(self.heap)
            self.lp.restore(basis)
        if bound >= self._prune_level():
            self._note_tol_prune(bound)
            return
        lower = min(bound, self.open_bound())
        children = self._process(bound, changes, branch)
        if not children:
            return
        # splits over many columns (a threshold's cuts or sign) move the simplex far, so
        # children restart from this basis; without such splits, refactorising a saved basis
        # costs more than the few pivots it saves
        basis = self.lp.basis() if self.sos_groups else None
        close = children[0][0] <= lower + 0.05 * (self._ceiling() - lower)
        for k, (child_bound, child_changes, child_branch) in enumerate(children):
            item = (child_bound, negdepth - 1, next(self._counter), child_changes, child_branch, basis)
            if k == 0 and close:
                self.plunge = item
            else:
                heapq.heappush(self.heap, item)

    def _static_bound(self) -> float:
        """A lower bound on every objective without any LP: the least loss over the score ranges,
        the least size cost and the least auxiliary cost."""
        p = self.p
        c0min, _ = c0_range(p)
        on = p.aux_cost != 0
        aux_least = float(np.minimum(p.aux_cost[on] * p.aux_lower[on], p.aux_cost[on] * p.aux_upper[on]).sum())
        return self.loss_lo + c0min * p.min_size + aux_least

    def final_bound(self) -> float:
        """Proven lower bound on this problem's optimum better than the cutoff: the least bound of
        the open nodes, of the nodes pruned by the gap tolerance, and the best objective known."""
        return min(self.next_bound(), self.tol_pruned, self._ceiling())

    def finish(self, status: str | None) -> SolverReport:
        """The report after :meth:`step` s stopped with ``status`` (None: the tree was searched or
        the gap tolerance reached)."""
        lower = self.final_bound()
        elapsed = time.perf_counter() - self.t0
        open_nodes = len(self.heap) + (self.plunge is not None)
        if self.best_x is None:
            if status is None:  # the whole tree was searched: nothing satisfies the rows
                status = "infeasible"
                lower = math.inf
        elif self._within_tolerance(lower) or (status is None and self._gap(lower) <= LP_PRECISION):
            status = "optimal"
        elif status is None:
            # every node was settled, but some only up to the LP's tolerances: the proven gap
            # is what it is, so the run is not called optimal
            status = "numerical_gap"
        if self.verbose:
            self._log(elapsed, open_nodes, lower, final=status)
        elif self._status_shown:  # a status line is on screen: say how the run ended
            self._status(elapsed, open_nodes, lower, final=status)
        return SolverReport(
            status=status, objective=self.upper, lower_bound=lower, gap=self._gap(lower),
            time=elapsed, nodes=self.nodes, cuts=self.lp.n_cuts, lp_solves=self.lp_solves,
            root_bound=self.root_bound, solver=f"riskformula branch-and-cut on HiGHS {highs_version()}",
            settings={"time_limit": self.time_limit, "gap_tolerance": self.gap_tolerance,
                      "absolute_gap_tolerance": self.absolute_gap_tolerance,
                      "node_limit": self.node_limit, "n_jobs": self.n_jobs},
            solution=tuple(self.best_lam.tolist()) if self.best_lam is not None else (),
            log=tuple(self.log_lines), listed=self.enumerated,
        )

    def _left(self) -> float:
        """Seconds left before the time limit (what one LP solve may take)."""
        return self.time_limit - (time.perf_counter() - self.t0)

    def _gap(self, lower: float) -> float:
        if not math.isfinite(self.upper):
            return math.inf
        if lower >= self.upper:
            return 0.0
        return (self.upper - lower) / max(abs(self.upper), 1e-12)

    def _list_box(self, lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray | None, float] | None:
        """:func:`best_in_box` on a node whose size (feasible assignments × rows) is within reach.
        How far the bound prunes a listing depends on the data, so the reach adapts: unlimited at
        first, it drops to half the size of a box whose listing is given up (not below a size
        always listed within the work allowed) and doubles after a listing that settles a box
        beyond a sixteenth of it.  Sizes and work, not times, steer it, so the search stays
        reproducible."""
        size, open_units = box_size(self.p, lower, upper, self.enumeration_units)
        size *= self._n_rows
        if size > self._reach or open_units > self.enumeration_units:
            return None
        settled = best_in_box(self.p, lower, upper, self.enumeration_work, self._ceiling())
        if settled is None:
            self._reach = max(min(self._reach, size) / 2, self.enumeration_work / 16)
        elif size > self._reach / 16:
            self._reach *= 2
        return settled

    def _ceiling(self) -> float:
        """The objective to beat: the incumbent's, or the cutoff when that is lower."""
        return min(self.upper, self.cutoff)

    def set_cutoff(self, value: float) -> None:
        """Prune nodes that cannot beat ``value`` (an objective reached elsewhere) from now on."""
        if value < self.cutoff:
            self.cutoff = value
            if hasattr(self, "lp"):
                self.chain_lower = self.global_lower
                self._chain_bounds()

    def _within_tolerance(self, lower: float) -> bool:
        """Whether ``lower`` certifies the incumbent: the relative or the absolute gap is small enough."""
        return self._gap(lower) <= self.gap_tolerance or self.upper - lower <= self.absolute_gap_tolerance

    def _prune_level(self) -> float:
        """Node bounds at or above this cannot beat the ceiling by more than either tolerance."""
        c = self._ceiling()
        return c - max(self.gap_tolerance * abs(c), self.absolute_gap_tolerance)

    def _note_tol_prune(self, bound: float) -> None:
        if bound < self._ceiling():
            self.tol_pruned = min(self.tol_pruned, bound)

    # --- one node -----------------------------------------------------------------------
    def _process(self, parent_bound: float, changes: tuple[Change, ...],
                 branch: Branch | None) -> list[Child] | None:
        """Solve one node's LP (with cuts) and settle the node, or return its children (None: none)."""
        box = self._node_box(changes)
        if box is None:
            return None
        lower, upper = box
        self.lp.set_bounds(lower, upper)
        self.nodes += 1
        point = self._node_point(parent_bound, changes, branch, lower, upper)
        if not isinstance(point, NodePoint):
            return point  # settled by its LP: no children, or those of a split of "used with zero points"
        if branch is not None:
            self._update_pseudocost(branch, point.bound)
        if self.lp.n_cuts > self.max_cuts:
            self.lp.drop_slack_cuts(self.max_cuts // 2)
        if self._enumerable and self._settled_by_listing(lower, upper):
            return None
        self._node_heuristics(point)
        return self._branch(point, changes, lower, upper)

    def _node_box(self, changes: tuple[Change, ...]) -> tuple[np.ndarray, np.ndarray] | None:
        """The node's column bounds: the root's with every branching on its path applied (None:
        an indicator the branching fixed cannot hold in this box)."""
        lower = self.root_lower.copy()
        upper = self.root_upper.copy()
        for cols, lo, hi in changes:  # one (columns, low, high) entry per branching on the path
            lower[cols] = np.maximum(lower[cols], lo)
            upper[cols] = np.minimum(upper[cols], hi)
        self.p.fix_indicators(lower, upper)
        if np.any(lower > upper):
            return None
        return lower, upper

    def _node_point(self, parent_bound: float, changes: tuple[Change, ...], branch: Branch | None,
                    lower: np.ndarray, upper: np.ndarray) -> NodePoint | list[Child] | None:
        """The node's LP point after its rounds of loss cuts, or what settles the node first: None
        (pruned, infeasible, or an integer point scored) or its children (open again at the time
        limit; a split of "used with zero points")."""
        p, lp = self.p, self.lp
        lam_s = self.lam_slice
        rounds = 0
        while True:
            status, obj, x = lp.solve(self._left())
            self.lp_solves += 1
            if status == "time_limit":
                # the node stays open with its parent's bound; the main loop stops at the limit
                return [(parent_bound, changes, branch)]
            if status == "infeasible":
                return None
            bound = max(safe_bound(obj), parent_bound)
            if bound >= self._prune_level():
                self._note_tol_prune(bound)
                return None
            xi = x[:-1]
            frac = np.abs(xi - np.round(xi))
            frac[~self.integer] = 0.0
            integral = bool(np.all(frac <= INT_TOL))
            lam = self._integer_point(x[lam_s]) if integral else x[lam_s]
            f, g = p.loss.value_and_gradient(lam)
            violation = f - x[-1]
            if integral:
                key = lam.tobytes()
                if violation > 1e-10 * (1 + f) and not lp.has_cut(key):
                    # the cut at an integer point is exact there; one in the pool is enough (a second
                    # would only chase HiGHS' feasibility tolerance), but a dropped one comes back
                    lp.add_cut(lam, f, g, key=key)
                    continue
                xr = np.where(self.integer, np.round(xi), xi)
                return self._settle_integral(lam, f, xr, bound, changes, lower, upper)
            if violation > 1e-6 * (1 + f) and rounds < self.node_rounds:
                lp.add_cut(lam, f, g)
                lp.restore_archived(x, self.archived_cuts, 1e-6 * (1 + f))
                rounds += 1
                continue
            return NodePoint(bound=bound, x=x, xi=xi, frac=frac)

    def _settle_integral(self, lam: np.ndarray, f: float, xr: np.ndarray, bound: float,
                         changes: tuple[Change, ...], lower: np.ndarray,
                         upper: np.ndarray) -> list[Child] | None:
        """A node whose LP point ``xr`` (integer variables rounded) has integer points ``lam``
        (loss ``f``): the point is offered, and the node is settled (None) unless its LP counts a
        term with zero points that the model cannot drop (then the children of :meth:`_split_used`)."""
        p = self.p
        if p.exact_rows:
            # rows over indicators must hold for their true values: the LP's may sit
            # within its tolerances of a violation (large group counts); a point that
            # fails is no incumbent, and the node's bound stays in the lower bound
            implied = p.complete(lam)
            if implied is None:
                self._note_tol_prune(bound)
                return None
            xr = implied
        else:
            empty = np.flatnonzero((xr[self.alpha_slice] > 0.5) & (lam[1:] == 0))
            if len(empty):
                # α_j = 1 with zero points: the LP counts a term that the model does not use
                implied = p.complete(lam)
                if implied is None:
                    return self._split_used(int(empty[0]), bound, changes, lower, upper)
                xr = implied  # fewer counted terms: at least as good, so it settles this node
        if self._offer(lam, xr) or f + float(self.cost @ xr) <= 1.1 * self._ceiling():
            if p.can_complete and self._heuristics_allowed():
                self._polish_and_offer(lam)
        # the LP may sit under the cut (HiGHS tolerances, coefficients below 1e-9 dropped on
        # nearly separable data): the node's LP bound stays in the reported lower bound
        self._note_tol_prune(bound)
        return None

    def _settled_by_listing(self, lower: np.ndarray, upper: np.ndarray) -> bool:
        """Whether listing the node's integer points (:meth:`_list_box`) settles it; the best of
        them is offered."""
        settled = self._list_box(lower, upper)
        if settled is None:
            return False
        self.enumerated += 1
        best, value = settled
        if best is None:  # no integer point of the node beats the incumbent
            return True
        self._offer(best)
        # every integer point of the node was scored: none beats its best, now offered
        return value >= self._ceiling() - 1e-12

    def _node_heuristics(self, point: NodePoint) -> None:
        """Incumbents from a fractional LP point: integer points but fractional indicators give
        a candidate at once (its implied completion); otherwise, now and then, the heuristics."""
        x, lam_s = point.x, self.lam_slice
        if np.all(point.frac[lam_s] <= INT_TOL):
            self._offer(np.round(x[lam_s]))  # a real intercept is re-chosen there
        elif self.nodes % self.heuristic_interval == 1 and self._heuristics_allowed():
            self._heuristic(x[lam_s], x[self.alpha_slice])
