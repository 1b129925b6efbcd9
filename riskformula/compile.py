"""Deprecated: the problem compiler was split up.

* the builder and its primitives: :mod:`riskformula.problem.builder` (``ProblemBuilder``,
  ``build_problem``, which now returns the problem only);
* each constraint's formulation: its class in :mod:`riskformula.problem.constraints`
  (``check_constraints`` too);
* the threshold formulation: :mod:`riskformula.thresholds.formulation`;
* term names → columns: :class:`riskformula.design.terms.TermResolver`;
* the infeasibility deletion filter: :func:`riskformula.solver.feasibility.raise_if_infeasible`.
"""

import warnings

from .problem.builder import ProblemBuilder, build_problem  # noqa: F401
from .problem.constraints import check_constraints  # noqa: F401
from .solver.feasibility import raise_if_infeasible  # noqa: F401

Builder = ProblemBuilder

warnings.warn("riskformula.compile is deprecated; see its docstring for where each part moved.",
              DeprecationWarning, stacklevel=2)
