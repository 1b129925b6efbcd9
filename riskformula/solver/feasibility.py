"""Is there any point satisfying a problem's bounds and rows?  (HiGHS MIP, zero objective.)

Used before a fit with user constraints, and by the deletion filter that names conflicting
constraints; the loss plays no part in feasibility.
"""

from __future__ import annotations

import highspy
import numpy as np

from ..problem import RiskProblem
from .lp import _csr, _finite


def has_feasible_point(problem: RiskProblem, time_limit: float = 10.0) -> bool | None:
    """True/False when HiGHS decides feasibility within ``time_limit`` seconds, else None."""
    h = highspy.Highs()
    for name, value in (("output_flag", False), ("threads", 1), ("random_seed", 0),
                        ("time_limit", float(time_limit))):
        h.setOptionValue(name, value)
    lower, upper = problem.column_bounds()
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
        return True
    if st == highspy.HighsModelStatus.kInfeasible:
        return False
    return None
