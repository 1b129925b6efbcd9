"""The tree search on several processes, with the same result whatever their speed.

The root (cutting planes and heuristics) runs in the calling process, which then searches alone
until the tree has a few open nodes per worker.  From there the search goes in *rounds*: the
open nodes are dealt out in bound order, one at a time to each worker in turn; every worker
(a joblib/loky process) continues the branch-and-cut on its share from the shared cut pool and
incumbent for a fixed number of nodes; the caller then takes back every worker's open nodes,
incumbent, cuts and pseudo-costs, in worker order.  Nothing depends on which worker finishes
first, so a search stopped by its tolerances or its node limit returns the same model on every run
(a time limit stops it wherever it is, as it does a search on one process).  Rounds start short
(an early incumbent soon prunes everyone's nodes) and double in length up to
:attr:`ParallelTree.max_round_nodes`.

The bound stays honest: every open node is in exactly one worker's share or back with the
caller, and a worker's nodes keep the bounds it proved.
"""

from __future__ import annotations

import heapq
import time

from .branch_and_cut import BranchAndCut, limit_status
from .lp import NodeLP


def _explore(problem, options: dict, cuts: list, nodes: list, incumbent: tuple, pseudo: tuple,
             counts: tuple, outside_bound: float, node_budget: int, deadline: float, first_cut: int) -> dict:
    """One worker's round: search ``nodes`` for at most ``node_budget`` nodes or until ``deadline``
    (a ``time.time()``, the same clock in every process); its new cuts are numbered from ``first_cut``."""
    bc = BranchAndCut(problem, time_limit=max(deadline - time.time(), 0.0), **options)
    bc.resume(cuts, nodes, incumbent, pseudo, counts, outside_bound)
    bc.lp.number_cuts_from(first_cut)
    first = bc.nodes
    while bc.has_open_nodes():
        lower = bc.open_bound()
        bc.global_lower = lower
        if bc._within_tolerance(lower) or bc.nodes - first >= node_budget:
            break
        if limit_status(time.perf_counter() - bc.t0, bc.time_limit, 0, None):
            break
        bc.step()
    return {"open": bc.take_open_nodes(), "incumbent": (bc.upper, bc.best_lam, bc.best_x),
            "tol_pruned": bc.tol_pruned, "pseudo": (bc.pseudo, bc.pseudo_n), "nodes": bc.nodes - first,
            "polish_calls": bc.polish_calls - counts[1], "lp_solves": bc.lp_solves, "cuts": bc.lp.cuts()}


#: each worker numbers its new cuts in a range of its own, this wide
_CUT_RANGE = 1 << 32


class ParallelTree:
    """Run a :class:`BranchAndCut` 's tree search on ``n_jobs`` worker processes (see the module's
    docstring); :meth:`solve` returns the same :class:`SolverReport` as the search on one process.

    Examples
    --------
    >>> from riskformula.solver import BranchAndCut
    >>> report = BranchAndCut(problem, n_jobs=2).solve()  # doctest: +SKIP
    """

    #: nodes per worker in the first round; each round doubles it up to ``max_round_nodes``
    first_round_nodes = 16
    max_round_nodes = 1024
    #: the caller searches alone while the tree has fewer open nodes than this many per worker
    nodes_per_worker = 4

    def __init__(self, search: BranchAndCut, n_jobs: int):
        self.bc = search
        self.n_jobs = int(n_jobs)

    def _options(self) -> dict:
        bc = self.bc
        return {"gap_tolerance": bc.gap_tolerance, "absolute_gap_tolerance": bc.absolute_gap_tolerance,
                "max_cuts": bc.max_cuts, "heuristic_interval": bc.heuristic_interval}

    def solve(self, initial=None, started: float | None = None):
        from joblib import Parallel, delayed

        bc = self.bc
        bc.start(initial, started=started)
        status = None
        last_log = -1e9
        round_nodes = self.first_round_nodes
        with Parallel(n_jobs=self.n_jobs, backend="loky") as parallel:
            while bc.has_open_nodes():
                lower = bc.open_bound()
                bc.global_lower = lower
                if bc._within_tolerance(lower):
                    break
                now = time.perf_counter() - bc.t0
                status = limit_status(now, bc.time_limit, bc.nodes, bc.node_limit)
                if status:
                    break
                open_nodes = len(bc.heap) + (bc.plunge is not None)
                if bc.verbose and now - last_log >= bc.log_interval:
                    bc._log(now, open_nodes, lower)
                    last_log = now
                bc._status(now, open_nodes, lower)
                if open_nodes < self.nodes_per_worker * self.n_jobs:
                    bc.step()
                    continue
                budgets = [round_nodes] * self.n_jobs
                if bc.node_limit is not None:  # the node limit is shared out exactly
                    left = bc.node_limit - bc.nodes
                    budgets = [min(round_nodes, left // self.n_jobs + (k < left % self.n_jobs))
                               for k in range(self.n_jobs)]
                # the workers stop a little early: the last round's open nodes still come back
                margin = min(0.5, 0.005 * bc.time_limit)
                self._round(parallel, delayed, budgets, time.time() + bc.time_limit - now - margin)
                round_nodes = min(2 * round_nodes, self.max_round_nodes)
        return bc.finish(status)

    def _round(self, parallel, delayed, budgets: list, deadline: float) -> None:
        """Deal the open nodes out, let every worker search its share (``budgets[k]`` nodes at most,
        until ``deadline``, a ``time.time()``), and take the results back."""
        bc = self.bc
        nodes = bc.take_open_nodes()
        shares = [nodes[k::self.n_jobs] for k in range(self.n_jobs)]
        cuts = bc.lp.cuts()
        incumbent = (bc.upper, bc.best_lam, bc.best_x, bc.cutoff)
        pseudo = (bc.pseudo, bc.pseudo_n)
        counts = (bc.nodes, bc.polish_calls)
        first = bc.lp.next_serial
        # a worker's LP bounds the loss by the least bound of all open nodes (the chained bounds),
        # not of its share: a higher floor is valid there but makes its LPs degenerate
        lower = min(n[0] for n in nodes)
        busy = [k for k in range(self.n_jobs) if shares[k] and budgets[k] > 0]
        # a share with no nodes to spend (the last nodes of a node limit) stays open as it is
        idle = [n for k in range(self.n_jobs) if k not in busy for n in shares[k]]
        results = parallel(delayed(_explore)(bc.p, self._options(), cuts, shares[k], incumbent, pseudo, counts,
                                             lower, budgets[k], deadline, first + k * _CUT_RANGE)
                           for k in busy)
        # taken back in worker order: the merged state does not depend on which finished first
        seen, merged = set(), []
        base_pseudo, base_n = bc.pseudo.copy(), bc.pseudo_n.copy()
        for r in results:
            value, lam, x = r["incumbent"]
            if lam is not None and value < bc.upper - 1e-12:
                bc.upper, bc.best_lam, bc.best_x = value, lam, x
            bc.tol_pruned = min(bc.tol_pruned, r["tol_pruned"])
            bc.pseudo += r["pseudo"][0] - base_pseudo
            bc.pseudo_n += r["pseudo"][1] - base_n
            bc.nodes += r["nodes"]
            bc.polish_calls += r["polish_calls"]
            bc.lp_solves += r["lp_solves"]
            for cut in r["cuts"]:
                if cut[4] not in seen:  # a cut both workers kept from the shared pool
                    seen.add(cut[4])
                    merged.append(cut)
        # the caller's LP continues from the merged pool (its own between rounds, when few nodes are open)
        bc.lp = NodeLP(bc.p, bc.loss_lo, bc.loss_hi, scaled=False)
        bc.lp.add_rows(merged)
        bc._chain_bounds()
        open_nodes = [n for r in results for n in r["open"]] + idle
        bc.heap = [(b, depth, next(bc._counter), changes, branch, basis)
                   for b, depth, changes, branch, basis in open_nodes]
        heapq.heapify(bc.heap)
