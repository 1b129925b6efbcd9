"""Is there any point satisfying a problem's bounds and rows?  And if not, which constraints conflict?

:func:`has_feasible_point` asks HiGHS (MIP, zero objective; the loss plays no part in
feasibility; "used" means nonzero points both ways, as in the search).
:func:`raise_if_infeasible` runs it before a fit with user constraints and, when there is no
point, names a minimal conflicting set of them with a deletion filter.
"""

from __future__ import annotations

import highspy
import numpy as np

from ..errors import InfeasibleProblemError
from ..problem import LinearRow, RiskProblem
from ..problem.constraints import Constraint
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
                            # numpy's stubs take array-likes only; an array of the HiGHS enum values is what HiGHS reads
                            np.where(problem.integer_mask(), highspy.HighsVarType.kInteger,  # type: ignore[call-overload]
                                     highspy.HighsVarType.kContinuous))
    rows = problem.all_rows() + _used_means_nonzero(h, problem, lower, upper)
    if rows:
        starts, idx, vals = _csr(rows)
        h.addRows(len(rows), _finite([r.lower for r in rows]), _finite([r.upper for r in rows]),
                  len(idx), starts, idx, vals)
    h.run()
    st = h.getModelStatus()
    if st == highspy.HighsModelStatus.kOptimal:
        return True, np.asarray(h.getSolution().col_value)[:n]
    if st == highspy.HighsModelStatus.kInfeasible:
        return False, None
    return None, None


def _used_means_nonzero(h, problem: RiskProblem, lower: np.ndarray, upper: np.ndarray) -> list[LinearRow]:
    """Rows (and, on ``h``, sign binaries) making α_j = 1 ⇒ λ_j ≠ 0, so that α_j = [λ_j ≠ 0].

    The problem's own link rows lb·α ≤ λ ≤ ub·α only say λ_j ≠ 0 ⇒ α_j = 1: the search treats an
    α_j = 1 with zero points as unsettled (it splits on it, and an incumbent's α comes from its
    points), but a feasibility check without this direction accepts "used with zero points" and
    so passes e.g. ``at_least(1, "x")`` on a column whose points are fixed at 0 (by ``coef_range``
    or two opposite ``sign`` constraints), leaving the search to run out of time.  With it, the
    check is exact for the points the search can return.  ``lower``/``upper`` are the column
    bounds already given to ``h``."""
    lay = problem.layout
    rows: list[LinearRow] = []
    signs: list[int] = []
    for j in range(problem.d):
        lo, hi = float(lower[lay.lam(j)]), float(upper[lay.lam(j)])
        a, lam = lay.alpha(j), lay.lam(j)
        if lo == 0 and hi == 0:  # no nonzero points: never used
            h.changeColBounds(a, 0.0, 0.0)
        elif lo == 0:  # used ⇒ λ ≥ 1
            rows.append(LinearRow({lam: 1.0, a: -1.0}, lower=0.0, name=f"used[{j + 1}] ⇒ λ ≥ 1"))
        elif hi == 0:  # used ⇒ λ ≤ −1
            rows.append(LinearRow({lam: 1.0, a: 1.0}, upper=0.0, name=f"used[{j + 1}] ⇒ λ ≤ −1"))
        else:  # both signs possible: a binary σ picks the side, λ ≥ α on σ = 1 and λ ≤ −α on σ = 0
            s = problem.n_cols + len(signs)
            signs.append(s)
            name = f"used[{j + 1}] ⇒ λ ≠ 0"
            rows.append(LinearRow({lam: 1.0, a: -1.0, s: -(1.0 - lo)}, lower=lo - 1.0, name=name))
            rows.append(LinearRow({lam: 1.0, a: 1.0, s: -(hi + 1.0)}, upper=0.0, name=name))
    if signs:
        k = len(signs)
        h.addCols(k, np.zeros(k), np.zeros(k), np.ones(k), 0,
                  np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        h.changeColsIntegrality(k, np.asarray(signs, dtype=np.int32),
                                np.full(k, highspy.HighsVarType.kInteger))
    return rows


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


def open_signs(lower: np.ndarray, upper: np.ndarray, cols) -> tuple[np.ndarray, np.ndarray]:
    """Point bounds with columns ``cols`` opened to both signs (to ±the widest bound, at least 1):
    a relaxation of a ``coef_range`` entry that forbids a sign, for :func:`raise_if_infeasible`."""
    lower, upper = np.array(lower, dtype=float), np.array(upper, dtype=float)
    cols = list(cols)
    if cols:
        w = max(1.0, float(np.abs(lower).max()), float(np.abs(upper).max()))
        lower[cols] = np.minimum(lower[cols], -w)
        upper[cols] = np.maximum(upper[cols], w)
    return lower, upper


def raise_if_infeasible(problem: RiskProblem, constraints, rebuild, *, max_size: int, min_size: int,
                        coef_ranges=()) -> None:
    """Raise :class:`InfeasibleProblemError` naming a minimal conflicting set of the user's
    constraints, size limits and sign-restricting ``coef_range`` entries, when ``problem`` has no
    feasible point.

    A deletion filter: drop each item in turn and keep it dropped while the rest stay
    infeasible.  ``rebuild(constraints, max_size, min_size)`` returns the problem with only those
    constraints (``max_size`` 10**6 or ``min_size`` 0 when that limit is dropped); constraints are
    named by their ``describe()``.  ``coef_ranges`` are ``(name, columns)`` entries of
    ``coef_range`` that forbid a sign (:func:`riskformula._checks.sign_closed_ranges`); with them,
    ``rebuild`` takes a fourth argument, the columns whose bounds to open to both signs
    (:func:`open_signs`), and an entry is "dropped" by opening its columns.
    """
    if has_feasible_point(problem) is not False:
        return
    ranges = [("coef_range", name, tuple(cols)) for name, cols in coef_ranges]
    items = list(constraints) + ["max_size", "min_size"] + ranges

    def feasible(keep) -> bool:
        cons = [c for c in keep if isinstance(c, Constraint)]
        sizes = (max_size if "max_size" in keep else 10 ** 6, min_size if "min_size" in keep else 0)
        if ranges:
            opened = sorted({j for r in ranges if r not in keep for j in r[2]})
            p = rebuild(cons, *sizes, opened)
        else:
            p = rebuild(cons, *sizes)
        return has_feasible_point(p) is not False

    conflict = list(items)
    for item in items:
        trial = [c for c in conflict if c is not item]
        if not feasible(trial):
            conflict = trial
    names = [f"max_size={max_size}" if c == "max_size" else f"min_size={min_size}" if c == "min_size"
             else c[1] if isinstance(c, tuple) else c.describe() for c in conflict]
    if conflict:
        err = InfeasibleProblemError(
            "no risk score satisfies these constraints together: " + "; ".join(names) +
            ". Dropping or relaxing any one of them makes the problem feasible.")
        err.conflict = [c for c in conflict if isinstance(c, Constraint)]  # for callers that add advice
        raise err
    raise InfeasibleProblemError("no risk score satisfies the coefficient and intercept ranges with these "
                                 f"constraints (intercept range {problem.intercept_bounds}); widen `coef_range` "
                                 "or `intercept_range`.")
