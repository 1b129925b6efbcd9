"""Is there any point satisfying a problem's bounds and rows?  And if not, which constraints conflict?

:func:`has_feasible_point` asks HiGHS (MIP, zero objective; the loss plays no part in
feasibility).  :func:`raise_if_infeasible` runs it before a fit with user constraints and, when
there is no point, names a minimal conflicting set of them with a deletion filter.
"""

from __future__ import annotations

import highspy
import numpy as np

from ..errors import InfeasibleProblemError
from ..problem import RiskProblem
from .lp import _csr, _finite, silent_highs


def has_feasible_point(problem: RiskProblem, time_limit: float = 10.0) -> bool | None:
    """True/False when HiGHS decides feasibility within ``time_limit`` seconds, else None."""
    return feasible_point(problem, time_limit)[0]


def feasible_point(problem: RiskProblem, time_limit: float = 10.0,
                   intercept: float | None = None) -> tuple[bool | None, np.ndarray | None]:
    """(decided, x): whether HiGHS finds a point within the bounds and rows in ``time_limit``
    seconds (True, False, or None when it cannot decide) and that point (all columns) when found.
    ``intercept`` fixes the intercept column (e.g. 0 for a model without one)."""
    h = silent_highs()
    for name, value in (("threads", 1), ("random_seed", 0),
                        ("time_limit", float(time_limit))):
        h.setOptionValue(name, value)
    lower, upper = problem.column_bounds()
    if intercept is not None:
        lower[0] = upper[0] = float(intercept)
    n = problem.n_cols
    h.addCols(n, np.zeros(n), _finite(lower), _finite(upper), 0,
              np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32),
                            np.where(problem.integer_mask(), highspy.HighsVarType.kInteger,
                                     highspy.HighsVarType.kContinuous))
    rows = problem.all_rows()
    if rows:
        starts, idx, vals = _csr(rows)
        h.addRows(len(rows), _finite([r.lower for r in rows]), _finite([r.upper for r in rows]),
                  len(idx), starts, idx, vals)
    h.run()
    st = h.getModelStatus()
    if st == highspy.HighsModelStatus.kOptimal:
        return True, np.asarray(h.getSolution().col_value)
    if st == highspy.HighsModelStatus.kInfeasible:
        return False, None
    return None, None


def smallest_feasible(rebuild, with_value, lo: float, hi: float, steps: int = 8,
                      time_budget: float = 30.0) -> tuple[float, float] | None:
    """Bisection for the tightest feasible value of one bound.

    ``with_value(x)`` is the constraint list with the bound set to x, ``rebuild(constraints)`` its
    problem; feasibility must be monotone from ``lo`` (infeasible) to ``hi``.  Returns
    ``(infeasible, feasible)`` values that bracket the tightest feasible bound, or None when ``hi`` is
    infeasible too or HiGHS cannot decide within the budget."""
    import time
    t0 = time.perf_counter()

    def ok(x):
        left = time_budget - (time.perf_counter() - t0)
        return None if left <= 0 else has_feasible_point(rebuild(with_value(x)), time_limit=min(10.0, left))

    if ok(hi) is not True:
        return None
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        r = ok(mid)
        if r is None:
            break
        lo, hi = (lo, mid) if r else (mid, hi)
    return lo, hi


def raise_if_infeasible(problem: RiskProblem, constraints, rebuild, *, max_size: int, min_size: int) -> None:
    """Raise :class:`InfeasibleProblemError` naming a minimal conflicting set of the user's
    constraints and size limits, when ``problem`` has no feasible point.

    A deletion filter: drop each item in turn and keep it dropped while the rest stay
    infeasible.  ``rebuild(constraints, max_size, min_size)`` returns the problem with only those
    constraints (``max_size`` 10**6 or ``min_size`` 0 when that limit is dropped); constraints are
    named by their ``describe()``.
    """
    if has_feasible_point(problem) is not False:
        return
    items = list(constraints) + ["max_size", "min_size"]

    def feasible(keep) -> bool:
        cons = [c for c in keep if not isinstance(c, str)]
        p = rebuild(cons, max_size if "max_size" in keep else 10 ** 6, min_size if "min_size" in keep else 0)
        return has_feasible_point(p) is not False

    conflict = list(items)
    for item in items:
        trial = [c for c in conflict if c is not item]
        if not feasible(trial):
            conflict = trial
    names = [f"max_size={max_size}" if c == "max_size" else f"min_size={min_size}" if c == "min_size"
             else c.describe() for c in conflict]
    if conflict:
        err = InfeasibleProblemError(
            "no risk score satisfies these constraints together: " + "; ".join(names) +
            ". Dropping or relaxing any one of them makes the problem feasible.")
        err.conflict = [c for c in conflict if not isinstance(c, str)]  # for callers that add advice
        raise err
    raise InfeasibleProblemError("no risk score satisfies the coefficient and intercept ranges with these "
                                 f"constraints (intercept range {problem.intercept_bounds}); widen `coef_range` "
                                 "or `intercept_range`.")
