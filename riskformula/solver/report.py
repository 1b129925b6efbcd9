"""What the solver did, as data."""

from __future__ import annotations

from dataclasses import dataclass, field, asdict


@dataclass(frozen=True)
class SolverReport:
    """Outcome of one branch-and-cut run.

    ``status`` is ``"optimal"`` (gap ≤ tolerance), ``"time_limit"``, ``"node_limit"``,
    ``"numerical_gap"`` (every node settled, some only up to LP tolerances, leaving a gap) or
    ``"infeasible"``.  ``lower_bound`` is a proven bound on the optimal objective, so
    ``gap = (objective − lower_bound) / objective`` is a true optimality gap.

    ``listed`` counts the nodes settled by listing their integer points
    (:mod:`riskformula.solver.enumeration`) instead of by branching.

    ``scale`` is the score scale m of the solution (risk = 1 / (1 + exp(−(b + score)/m))); a search
    over several scales (:mod:`riskformula.solver.multiscale`) lists one row per scale in
    ``scales`` (``scale``, ``objective``, ``lower_bound``, ``root_bound``, ``nodes``, ``status``),
    and its ``lower_bound`` holds for every scale of the set.
    """

    status: str
    objective: float
    lower_bound: float
    gap: float
    time: float
    nodes: int
    cuts: int
    lp_solves: int
    root_bound: float
    solver: str
    settings: dict = field(default_factory=dict)
    solution: tuple = ()  # the best points, intercept first
    log: tuple = ()
    scale: float = 1.0
    scales: tuple = ()
    listed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)
