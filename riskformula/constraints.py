"""Operational constraints on a risk score; they live in :mod:`riskformula.problem.constraints`.

This module re-exports them (``rf.sign``, ``rf.at_most``, ... and the :class:`Constraint` base
class), so ``from riskformula.constraints import ...`` keeps working.
"""

from .problem.constraints import *  # noqa: F401,F403
from .problem.constraints import (Constraint, Count, Implies, MaxColumns, OneVariable, RiskBound,  # noqa: F401
                                  Sign, __all__)
