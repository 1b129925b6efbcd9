"""Deprecated: the problem compiler was split up.

* the builder and its primitives: :mod:`riskformula.problem.builder` (``ProblemBuilder``, formerly
  ``Builder``; ``build_problem``, which now returns the problem only);
* each constraint's formulation: its class in :mod:`riskformula.problem.constraints`
  (``check_constraints`` too);
* the threshold formulation: :mod:`riskformula.thresholds.formulation`;
* term names → columns: :class:`riskformula.design.terms.TermResolver`;
* the infeasibility deletion filter: :func:`riskformula.solver.feasibility.raise_if_infeasible`.
"""

from ._moved import forward

__getattr__ = forward(__name__, "riskformula.problem.builder", "riskformula.problem.constraints",
                      "riskformula.solver.feasibility",
                      hint="see riskformula.compile's docstring for where each part moved.")
