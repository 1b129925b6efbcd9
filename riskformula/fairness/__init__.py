"""Fair risk scores: group fairness notions as constraints inside the certified search, and audits.

* :mod:`.notions` — :func:`statistical_parity`, :func:`conditional_statistical_parity`,
  :func:`predictive_equality`, :func:`equal_opportunity` and :func:`equalized_odds` (group rates of
  "predicted positive"), passed as ``risk_score(..., constraints=[...])``;
* :mod:`.mean_parity` — :func:`score_balance` (the groups' mean scores);
* :mod:`.risk_parity` — :func:`risk_parity` and :func:`calibration_within_groups`, bounds on the
  predicted risk itself (through one binary per score level);
* :mod:`.rows` — the constraints' base class, argument checks and row builders (shared by them all);
* :mod:`.groups` — groups, strata and group rates (shared by the constraints and the audit).

:func:`riskformula.fairness_path` (one certified fit per bound) is in :mod:`riskformula.fairness_path`.

The audit report is :meth:`riskformula.RiskScore.fairness` (:mod:`riskformula.reports.fairness`).

Examples
--------
>>> import riskformula as rf
>>> c = rf.equal_opportunity("sex", at_risk=0.5, max_diff=0.05)
>>> c.describe()
"equal_opportunity('sex', at_risk=0.5, max_diff=0.05)"
"""

from .mean_parity import ScoreBalance, score_balance
from .notions import (REAL_SCORE_MARGIN, GroupParity, conditional_statistical_parity, equal_opportunity,
                      equalized_odds, predictive_equality, statistical_parity)
from .rows import FairnessConstraint
from .risk_parity import CalibrationWithinGroups, RiskParity, calibration_within_groups, risk_parity

__all__ = ["FairnessConstraint", "GroupParity", "ScoreBalance", "statistical_parity",
           "conditional_statistical_parity", "predictive_equality", "equal_opportunity", "equalized_odds",
           "score_balance", "REAL_SCORE_MARGIN", "RiskParity", "CalibrationWithinGroups",
           "risk_parity", "calibration_within_groups"]
