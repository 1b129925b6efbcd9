"""Net-benefit risk scores (Chi & Birbil, 2026): the integer score that maximises a weighted net
benefit over decision thresholds, with one score cut-off per threshold and band risks that are
calibrated on the training data by construction.

Fit one with ``rf.risk_score(formula, data, objective="net_benefit")`` (or
``objective=rf.net_benefit(thresholds, weights)`` for other decision thresholds); the pieces are
:mod:`.grid` (thresholds and weights), :mod:`.cutoffs` (exact cut-offs for fixed points),
:mod:`.heuristic` (local search), :mod:`.exact_search` (branch and bound over the points, for
small problems), :mod:`.milp` (the exact model in pyomo), :mod:`.improve`
(post-hoc AUNBC improvement of any risks) and :mod:`.model` (the fitted object).
"""

from .cutoffs import optimal_cutoffs
from .grid import DecisionGrid, decision_grid, net_benefit
from .model import NetBenefitScore

__all__ = ["NetBenefitScore", "DecisionGrid", "decision_grid", "net_benefit", "optimal_cutoffs"]
