"""The best score without a variable, by a certified fit: the model class reliance of Fisher, Rudin
& Dominici (2019) for the variables that every member of a Rashomon set uses (the set itself says
nothing of the best score without them)."""

from __future__ import annotations

import math

from ..errors import InfeasibleProblemError
from ..problem import build_problem
from ..solver import BranchAndCut, SearchOptions

__all__ = ["best_without"]


def best_without(rebuild: dict, cols, time_limit: float, gap_tolerance: float,
                 absolute_gap_tolerance: float) -> tuple[float, str]:
    """(objective, status) of the best score with the design columns ``cols`` at 0, over the class
    the set was listed in (``rebuild``: the design spec, loss, bounds and problem settings it was built
    from): ``"certified fit"`` with the optimum (``inf`` when no score without them meets the
    constraints), or ``"at least"`` with the lower bound of a fit stopped at ``time_limit``."""
    r = dict(rebuild)
    lower, upper = r.pop("lower").copy(), r.pop("upper").copy()
    lower[list(cols)] = 0
    upper[list(cols)] = 0
    spec, loss = r.pop("spec"), r.pop("loss")
    try:
        p = build_problem(spec, loss, lower, upper, **r)
        rep = BranchAndCut(p, SearchOptions(time_limit=time_limit, gap_tolerance=gap_tolerance,
                                            absolute_gap_tolerance=absolute_gap_tolerance)).solve()
    except InfeasibleProblemError:
        return math.inf, "certified fit"
    if rep.status == "infeasible":
        return math.inf, "certified fit"
    if rep.status == "optimal":
        return float(rep.objective), "certified fit"
    return float(rep.lower_bound), "at least"
