"""Counterfactual explanations of a fitted risk score (Navas-Palencia 2021): what would have to
change for a person to reach a target risk, and the principal reasons behind a score.

Modules: :mod:`.profile` (what the model keeps of its training data), :mod:`.regions` (the
moves the score allows), :mod:`.instance` (one person's options), :mod:`.dp` (exact dynamic
program), :mod:`.milp` (pyomo model solved by HiGHS), :mod:`.search` (the user entry point),
:mod:`.result` and :mod:`.reasons` (reports).
"""

from .profile import TrainingProfile
from .reasons import Reasons, reasons
from .result import Change, Counterfactual, Counterfactuals, PersonResult
from .search import counterfactuals

__all__ = ["counterfactuals", "reasons", "Counterfactuals", "Counterfactual", "PersonResult", "Change",
           "Reasons", "TrainingProfile"]
