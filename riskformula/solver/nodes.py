"""The vocabulary of the tree search: its nodes and branchings, the state every part of the
search reads (:class:`SearchState`), and the small rules they share (the integrality tolerance,
the margin under an LP bound, when a limit stops a search).

The search itself is :class:`~riskformula.solver.branch_and_cut.BranchAndCut`; its root's cutting
planes are in :mod:`.root`, its branching rules in :mod:`.branching`, its log in
:mod:`.search_log`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import math
from dataclasses import dataclass
from typing import TypeAlias, cast

import numpy as np

from ..problem import RiskProblem
from .lp import NodeLP

#: a column within this of a whole number is taken as integral
INT_TOL = 1e-6
#: a fully searched tree whose gap is below this (the LP's own precision) is optimal
LP_PRECISION = 1e-7


#: one branching on a node's path: bounds (low, high) for columns (positions), one pair for all
#: or one per column
Change: TypeAlias = "tuple[list[int] | np.ndarray, float | list[float], float | list[float]]"
#: the branching that made a node, for its pseudo-costs: (column, 0 down / 1 up, distance of the
#: LP value to the new bound, parent's bound)
Branch: TypeAlias = "tuple[int, int, float, float]"
#: a child node to open: (bound, changes on its path, branch)
Child: TypeAlias = "tuple[float, tuple[Change, ...], Branch | None]"
#: a saved LP basis (:meth:`NodeLP.basis`; None: none)
Basis: TypeAlias = "tuple[np.ndarray, np.ndarray, dict[int, int]] | None"
#: an open node: (bound, −depth, serial, changes, branch, basis); the serial breaks ties in the heap
Node: TypeAlias = "tuple[float, int, int, tuple[Change, ...], Branch | None, Basis]"


@dataclass
class NodePoint:
    """A node's fractional LP point ``x`` after its cuts: its bound, the columns ``xi`` (x without
    the loss variable) and their distances to whole numbers ``frac`` (0 for real columns)."""

    bound: float
    x: np.ndarray
    xi: np.ndarray
    frac: np.ndarray


def safe_bound(obj: float) -> float:
    """LP optimum minus a margin for HiGHS' tolerances, so node bounds never overshoot."""
    return obj - 1e-9 * (1.0 + abs(obj))


def limit_status(now: float, time_limit: float, nodes: int, node_limit: int | None) -> str | None:
    """"time_limit" or "node_limit" when a search must stop (checked between nodes), else None."""
    if now > time_limit:
        return "time_limit"
    if node_limit is not None and nodes >= node_limit:
        return "node_limit"
    return None


def highs_version() -> str:
    from importlib.metadata import version
    try:
        return version("highspy")
    except Exception:  # an unusual install without metadata
        return "(unknown version)"


def c0_range(p: RiskProblem) -> tuple[float, float]:
    """The least and the greatest per-term penalty c0 (0, 0 without terms)."""
    if not p.d:
        return 0.0, 0.0
    c0 = cast(np.ndarray, p.c0)  # an array once the problem is built
    return float(c0.min()), float(c0.max())


def only_fractional(frac: np.ndarray, cols) -> np.ndarray | None:
    """``frac`` with every column but ``cols`` (positions or a slice) set to 0, or None when none of
    ``cols`` is fractional."""
    if not np.any(frac[cols] > INT_TOL):
        return None
    only = np.zeros_like(frac)
    only[cols] = frac[cols]
    return only


class SearchState(ABC):
    """What the parts of a tree search read and write (set by
    :class:`~riskformula.solver.branch_and_cut.BranchAndCut`): the problem and its LP, the column
    bounds at the root, the incumbent's objective, the clock, the counts, the pseudo-costs and
    the settings of the log; and the search's own rules that its parts call (abstract here,
    defined by the search)."""

    p: RiskProblem
    lp: NodeLP
    t0: float
    time_limit: float
    upper: float
    nodes: int
    lp_solves: int
    loss_lo: float
    root_lower: np.ndarray
    root_upper: np.ndarray
    lam_slice: slice
    alpha_slice: slice
    cost: np.ndarray
    support_first: bool
    sos_groups: list
    sign_groups: list
    pseudo: np.ndarray
    pseudo_n: np.ndarray
    root_budget: float | None
    keep_root_cuts: bool
    root_cuts: list
    root_relaxation_gap: float
    progress: bool
    log_lines: list[str]
    _last_status: float
    _status_shown: bool
    #: the open nodes (a heap by bound) and the child processed next, if any
    heap: list[Node]
    plunge: Node | None

    # --- the open nodes ---------------------------------------------------------------------
    def take_open_nodes(self) -> list[tuple[float, int, tuple[Change, ...], Branch | None, Basis]]:
        """Remove and return the open nodes ``(bound, depth, changes, branch, basis)`` in the order
        the search would take them (least bound first)."""
        items = sorted(self.heap + ([self.plunge] if self.plunge is not None else []), key=lambda n: n[:3])
        self.heap, self.plunge = [], None
        return [(b, depth, changes, branch, basis) for b, depth, _, changes, branch, basis in items]

    def has_open_nodes(self) -> bool:
        return bool(self.heap) or self.plunge is not None

    def next_bound(self) -> float:
        """Bound of the node :meth:`step` processes next (∞ when none is open)."""
        return min(self.heap[0][0] if self.heap else math.inf, self.plunge[0] if self.plunge else math.inf)

    @abstractmethod
    def _left(self) -> float:
        """Seconds left before the time limit."""
        ...

    @abstractmethod
    def _gap(self, lower: float) -> float:
        """The relative gap of the incumbent to ``lower``."""
        ...

    @abstractmethod
    def _ceiling(self) -> float:
        """The objective to beat."""
        ...

    @abstractmethod
    def _prune_level(self) -> float:
        """Node bounds at or above this are pruned."""
        ...

    @abstractmethod
    def _note_tol_prune(self, bound: float) -> None:
        """Note a node pruned by the gap tolerance."""
        ...

    @abstractmethod
    def _heuristic(self, lam: np.ndarray, alpha: np.ndarray | None, swaps: bool = False) -> None:
        """Round and polish an LP point, offer the result."""
        ...

    @abstractmethod
    def _status(self, now, open_nodes, lower, final=None) -> None:
        """A status line on stderr now and then."""
        ...
