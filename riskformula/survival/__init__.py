"""Time-to-event risk scores: ``rf.risk_score("Surv(time, event) ~ ...", data, horizon=...)``.

:mod:`riskformula.survival.model` holds the fitted card (:class:`SurvivalScore`: points, a score
scale and the Breslow baseline hazard), :mod:`riskformula.survival.report` its printed report, and
:mod:`riskformula.survival.fit` the Cox objective that fits it (registered as ``objective="cox"``).
"""

from .fit import COX_FIT_SCALES, default_horizon, fit_cox
from .model import SurvivalFit, SurvivalScore

__all__ = ["SurvivalScore", "SurvivalFit", "fit_cox", "default_horizon", "COX_FIT_SCALES"]
