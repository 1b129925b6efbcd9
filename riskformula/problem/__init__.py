"""The optimization problem a risk score solves: variable layout, loss, bounds and linear rows.

``layout`` places the variables, ``loss`` is the objective, ``problem`` holds one fit's problem,
``constraints`` are the user's operational constraints and ``builder`` is the one interface
through which thresholds and constraints write their rows.
"""

from .layout import VariableLayout
from .loss import LogisticLoss
from .problem import LinearRow, RiskProblem, SizeGroup
from .builder import ProblemBuilder, build_problem

__all__ = ["VariableLayout", "LogisticLoss", "RiskProblem", "LinearRow", "SizeGroup", "ProblemBuilder",
           "build_problem"]
