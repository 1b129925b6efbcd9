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
:attr:`Rounds.max_round_nodes`.

A search over several score scales (:class:`~riskformula.solver.multiscale.MultiScaleSearch`)
shares out the open nodes of all its scales the same way: a worker searches the nodes it holds
best-first over their scales, and a better objective at one scale prunes the others.

The bound stays honest: every open node is in exactly one worker's share or back with the
caller, and a worker's nodes keep the bounds it proved.
"""

from __future__ import annotations

import heapq
import threading
import time

from .._heap import kept_heap
from .lp import NodeLP

#: each worker numbers its new cuts in a range of its own, this wide
_CUT_RANGE = 1 << 32


@kept_heap  # the caller's environment may fix malloc's thresholds (riskformula._heap)
def _explore(searches: list, node_budget: int, deadline: float, first_cut: int, search_class: type) -> list:
    """One worker's round over one or more searches ``(problem, options, cuts, archive, nodes,
    incumbent, pseudo, counts, outside_bound)`` (one per score scale; ``options``: the search's
    :class:`~riskformula.solver.options.SearchOptions` for a worker, its time limit set here; see
    the tree search's ``resume``): at most ``node_budget`` nodes in all, best-first over the
    searches, until ``deadline`` (a ``time.time()``, the same clock in every process); new cuts are
    numbered from ``first_cut``; ``search_class``: the caller's tree search (passed, so that this
    module, which the search loads, does not load it back)."""
    solvers = []
    for problem, options, cuts, archive, nodes, incumbent, pseudo, counts, outside in searches:
        bc = search_class(problem, options.replace(time_limit=max(deadline - time.time(), 0.0)))
        bc.resume(cuts, nodes, incumbent, pseudo, counts, outside, archive)
        bc.lp.number_cuts_from(first_cut)
        solvers.append(bc)
    first = [bc.nodes for bc in solvers]
    while sum(bc.nodes for bc in solvers) - sum(first) < node_budget and time.time() < deadline:
        live = [k for k, bc in enumerate(solvers) if bc.has_open_nodes()]
        if not live:
            break
        bc = solvers[min(live, key=lambda k: solvers[k].next_bound())]
        before = bc.upper
        bc.step()
        if bc.upper < before:  # the best objective of any scale prunes every scale's nodes
            for other in solvers:
                other.set_cutoff(bc.upper)
    polish_before = [counts[1] for *_, counts, _outside in searches]
    return [{"open": bc.take_open_nodes(), "incumbent": (bc.upper, bc.best_lam, bc.best_x, bc.chain_lower),
             "tol_pruned": bc.tol_pruned, "pseudo": (bc.pseudo, bc.pseudo_n), "nodes": bc.nodes - n0,
             "polish_calls": bc.polish_calls - p0, "lp_solves": bc.lp_solves, "cuts": bc.lp.cuts(),
             "archive": bc.lp.archive.state(),
             "reach": bc._reach, "listed": bc.enumerated}
            for bc, n0, p0 in zip(solvers, first, polish_before)]


#: a fit whose ``time_limit`` is shorter than this does not start worker processes: starting two
#: and importing the solver in them takes 1.5–3.5 s of CPU on a 2-core machine, which a short
#: search cannot win back, and on a busy machine it slows the setup the time limit cannot
#: interrupt (10⁶ rows at ``time_limit=5``: 9.7 s with the start, 5.1 s without); workers still
#: running from an earlier fit are used whatever the limit
MIN_LIMIT_TO_START = 10.0
#: seconds after their last task that joblib's reusable workers are taken to be still running
#: (joblib ends them after 300 s without work)
_WARM_SECONDS = 240.0
_last_used: dict[int, float] = {}  # n_jobs → time.monotonic() of the last task given to such workers
_lock = threading.Lock()


def mark_used(n_jobs: int) -> None:
    """Note that ``n_jobs`` workers have just been given a task (they are running)."""
    with _lock:
        _last_used[int(n_jobs)] = time.monotonic()


def workers_for(n_jobs: int, time_limit: float) -> int:
    """The processes a fit with ``n_jobs`` and ``time_limit`` searches on: ``n_jobs``, or 1 when
    the limit is under :data:`MIN_LIMIT_TO_START` and no such workers ran in the last few minutes
    (the search then runs in the calling process, and the solver report's ``settings["n_jobs"]``
    says 1)."""
    if n_jobs <= 1 or time_limit >= MIN_LIMIT_TO_START:
        return n_jobs
    with _lock:
        last = _last_used.get(int(n_jobs))
    return n_jobs if last is not None and time.monotonic() - last < _WARM_SECONDS else 1


def start_workers(n_jobs: int, search_class: type) -> threading.Thread | None:
    """Start the ``n_jobs`` worker processes of the rounds now, in the background (None when
    ``n_jobs`` is 1): a thread hands each worker a task that imports the solver (``search_class``,
    the tree search the rounds will run: unpickling it imports its module), and joblib keeps the
    workers for the rounds' own ``Parallel`` calls (and for 300 s of idleness after).

    Starting two loky workers and importing riskformula in them takes 3.5 s on a 2-core machine;
    left to the first round, that comes after the root and can push a short search past its time
    limit (the workers start after the round's deadline), while from the start of the fit it overlaps
    building the design.  The search itself does not change: the rounds are the same, only ready sooner."""
    if n_jobs <= 1:
        return None
    mark_used(n_jobs)
    thread = threading.Thread(target=_start, args=(int(n_jobs), search_class), name="riskformula-workers",
                              daemon=True)
    thread.start()
    return thread


def _start(n_jobs: int, search_class: type) -> None:
    try:
        from joblib import Parallel, delayed
        Parallel(n_jobs=n_jobs, backend="loky")(delayed(_ready)(search_class) for _ in range(n_jobs))
    except Exception:  # noqa: BLE001  the search's own rounds report what stops the workers
        pass


def _ready(search_class: type) -> bool:
    """A worker's first task: import what its rounds run (``search_class`` arrives pickled by
    reference, so receiving it imports its module; this module does not name it, since the
    search loads this one)."""
    return search_class is not None


class Rounds:
    """Rounds of a tree search on ``n_jobs`` worker processes (see the module's docstring), over
    one or more started tree searches (one per score scale)."""

    #: nodes per worker in the first round; each round doubles it up to ``max_round_nodes``
    first_round_nodes = 16
    max_round_nodes = 4096
    #: the caller searches alone while the tree has fewer open nodes than this many per worker
    nodes_per_worker = 4

    def __init__(self, n_jobs: int):
        self.n_jobs = int(n_jobs)
        self.round_nodes = self.first_round_nodes

    def ready(self, searches) -> bool:
        """Whether the open nodes are enough to share out."""
        open_nodes = sum(len(bc.heap) + (bc.plunge is not None) for bc in searches)
        return open_nodes >= self.nodes_per_worker * self.n_jobs

    def run(self, parallel, searches: list, node_limit: int | None, nodes_done: int, deadline: float) -> None:
        """One round over ``searches`` (a list of started searches): at most ``node_limit −
        nodes_done`` nodes (shared out exactly) and until ``deadline`` (a ``time.time()``)."""
        from joblib import delayed

        budgets = [self.round_nodes] * self.n_jobs
        if node_limit is not None:
            left = node_limit - nodes_done
            budgets = [min(self.round_nodes, left // self.n_jobs + (k < left % self.n_jobs))
                       for k in range(self.n_jobs)]
        self.round_nodes = min(2 * self.round_nodes, self.max_round_nodes)
        taken = [bc.take_open_nodes() for bc in searches]
        # the least bound of every open node of a search: a worker's own share may sit higher
        outside = [min((n[0] for n in nodes), default=float("inf")) for nodes in taken]
        order = sorted(((n[0], s, i) for s, nodes in enumerate(taken) for i, n in enumerate(nodes)))
        shares = [order[k::self.n_jobs] for k in range(self.n_jobs)]
        busy = [k for k in range(self.n_jobs) if shares[k] and budgets[k] > 0]
        back: list[list] = [[] for _ in searches]  # open nodes per search after the round
        for k in range(self.n_jobs):
            if k not in busy:  # no nodes to spend (the last nodes of a node limit): they stay open
                for _, s, i in shares[k]:
                    back[s].append(taken[s][i])
        state = [(bc.lp.cuts(), bc.lp.archive.state(),
                  (bc.upper, bc.best_lam, bc.best_x, bc.cutoff, bc.chain_lower), (bc.pseudo, bc.pseudo_n),
                  (bc.nodes, bc.polish_calls, bc._reach), bc.worker_options()) for bc in searches]
        tasks, held = [], []
        for k in busy:
            mine = sorted({s for _, s, _ in shares[k]})
            held.append(mine)
            work = []
            for s in mine:
                cuts, archive, incumbent, pseudo, counts, options = state[s]
                nodes = [taken[s][i] for _, t, i in shares[k] if t == s]
                work.append((searches[s].p, options, cuts, archive, nodes, incumbent, pseudo, counts,
                             outside[s]))
            first = max(bc.lp.next_serial for bc in searches) + k * _CUT_RANGE
            tasks.append(delayed(_explore)(work, budgets[k], deadline, first, type(searches[0])))
        mark_used(self.n_jobs)
        results = parallel(tasks)
        # taken back in worker order: the merged state does not depend on which finished first
        merged: list[tuple[list, set]] = [([], set()) for _ in searches]
        archived: list[list] = [[] for _ in searches]  # per search: every worker's archive, in worker order
        reaches: dict[int, list] = {}
        bases = [(bc.pseudo.copy(), bc.pseudo_n.copy()) for bc in searches]
        for mine, result in zip(held, results):
            for s, r in zip(mine, result):
                bc = searches[s]
                value, lam, x, chain_lower = r["incumbent"]
                if lam is not None and value < bc.upper - 1e-12:
                    # with the lower bound its finder chained from, as a search on one process does
                    bc.upper, bc.best_lam, bc.best_x, bc.chain_lower = value, lam, x, chain_lower
                bc.tol_pruned = min(bc.tol_pruned, r["tol_pruned"])
                bc.pseudo += r["pseudo"][0] - bases[s][0]
                bc.pseudo_n += r["pseudo"][1] - bases[s][1]
                bc.nodes += r["nodes"]
                bc.polish_calls += r["polish_calls"]
                reaches.setdefault(s, []).append(r["reach"])
                bc.enumerated += r["listed"]
                bc.lp_solves += r["lp_solves"]
                cuts, seen = merged[s]
                for cut in r["cuts"]:
                    if cut[4] not in seen:  # a cut both workers kept from the shared pool
                        seen.add(cut[4])
                        cuts.append(cut)
                archived[s].append(r["archive"])
                back[s] += r["open"]
        searched = {s for mine in held for s in mine}
        for s, bc in enumerate(searches):
            if s in searched:
                bc._reach = max(reaches[s])  # the listing's reach the workers learnt
                # this search's LP continues from the merged pool (its own, when few nodes are open)
                bc.lp = NodeLP(bc.p, bc.loss_lo, bc.loss_hi, scaled=False)
                bc.lp.add_rows(merged[s][0])
                _merge_archives(bc.lp.archive, archived[s], merged[s][1])
                bc._chain_bounds()
            bc.heap = [(b, depth, next(bc._counter), changes, branch, basis)
                       for b, depth, changes, branch, basis in back[s]]
            heapq.heapify(bc.heap)

    @staticmethod
    def deadline(time_limit: float, elapsed: float) -> float:
        """The workers' deadline (a ``time.time()``) for a search ``elapsed`` seconds into
        ``time_limit``: a little early, so that the last round's open nodes still come back in time."""
        return time.time() + time_limit - elapsed - min(0.5, 0.005 * time_limit)


def on_workers(n_jobs: int, run):
    """``run(parallel)`` with a joblib ``Parallel`` of ``n_jobs`` loky workers held open for its
    rounds, or ``run(None)`` to search in this process (``n_jobs`` 1)."""
    if n_jobs == 1:
        return run(None)
    from joblib import Parallel
    with Parallel(n_jobs=n_jobs, backend="loky") as parallel:
        return run(parallel)


def _merge_archives(archive, states: list, in_pool: set) -> None:
    """Fill ``archive`` from the workers' archive ``states`` (in worker order), each cut once and
    none that is back in the pool (``in_pool``: serial numbers)."""
    seen = set(in_pool)
    for A, rhs, keys, serials in states:
        fresh = [k for k, s in enumerate(serials.tolist()) if s not in seen]
        seen.update(serials[fresh].tolist())
        archive.extend(A[fresh], rhs[fresh], [keys[k] for k in fresh], serials[fresh])

