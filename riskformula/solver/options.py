"""How one search runs: :class:`SearchOptions`, the one object every solver takes.

A fit's :class:`~riskformula.SearchControl` (the user's settings) is turned into these options once
(:meth:`~riskformula.SearchControl.options`: the search's share of the time limit, the processes it may
start, ``progress`` made definite), and the options go unchanged to the solvers:
:class:`~riskformula.solver.branch_and_cut.BranchAndCut`,
:class:`~riskformula.solver.multiscale.MultiScaleSearch` (which hands them to its one search per scale)
and the tree's worker processes (:mod:`riskformula.solver.parallel`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["SearchOptions"]


@dataclass(frozen=True)
class SearchOptions:
    """The settings of one search (checked where they come from: :class:`~riskformula.SearchControl`).

    Parameters
    ----------
    time_limit : float, default 60
        Seconds before returning the best model with its honest gap.
    gap_tolerance : float, default 1e-6
        Stop when (upper − lower) / upper is at most this.
    absolute_gap_tolerance : float, default 1e-8
        Or when upper − lower is at most this (in objective units); either tolerance certifies a run.
    node_limit : int or None, default None
        A cap on the number of nodes.
    n_jobs : int, default 1
        Worker processes for the tree search after the root (see :mod:`riskformula.solver.parallel`);
        1 searches in this process.
    verbose : bool, default False
        Print a solver log (stdout) every ``log_interval`` seconds.
    progress : bool, default False
        Print the same line to stderr every :data:`~riskformula.solver.search_log.STATUS_INTERVAL`
        seconds, and a last one with the status if any was printed; ignored when ``verbose`` is set.
    log_interval : float, default 2.0
        Seconds between the lines of the verbose log.
    max_cuts : int or None, default None
        The most loss cuts kept in the LP's pool; None: 30 000 / (columns + 1), within 150 to 750.
    heuristic_interval : int, default 50
        Nodes between two runs of the rounding heuristics on a fractional node.
    enumeration_work : float or None, default None
        The most work (partial assignments × distinct row patterns) listing a node's integer points
        may take to settle it; None keeps :attr:`BranchAndCut.enumeration_work`, 0 turns listing off.
    """

    time_limit: float = 60.0
    gap_tolerance: float = 1e-6
    absolute_gap_tolerance: float = 1e-8
    node_limit: int | None = None
    n_jobs: int = 1
    verbose: bool = False
    progress: bool = False
    log_interval: float = 2.0
    max_cuts: int | None = None
    heuristic_interval: int = 50
    enumeration_work: float | None = None

    def replace(self, **changes) -> SearchOptions:
        """A copy with ``changes`` (field name → value)."""
        return dataclasses.replace(self, **changes)

    def quiet(self) -> SearchOptions:
        """These options for a search inside another (one score scale of several, a worker's round):
        no log, no status line, no node limit of its own, one process."""
        return dataclasses.replace(self, node_limit=None, verbose=False, progress=False, n_jobs=1)
