"""Discrimination, calibration and decision metrics for risk scores.

Every function takes plain arrays (or pandas Series): ``y`` holds 0/1 event indicators,
``risk`` predicted probabilities in [0, 1], ``score`` the total points (integer or real),
and the optional ``weights`` nonnegative *frequency* weights (a row with weight 2 counts
exactly like two copies of that row). Inputs are validated and never modified.

The definitions follow two papers:

* Ustun & Rudin (2019), "Learning Optimized Risk Scores", JMLR: CAL by score, the
  reliability diagram (one point per score, 10 bins above 30 distinct scores), AUC.
* Chi & Birbil (2026), "Learning an Interpretable Risk Scoring System for Maximizing Decision
  Net Benefit", arXiv:2604.04241: net benefit, treat-all / treat-none, AUNBC, the
  equal-width-bin ECE.

The modules follow those topics: :mod:`.losses`, :mod:`.discrimination`,
:mod:`.calibration` and :mod:`.decision`.

>>> from riskformula.reports import metrics
>>> metrics.auc([0, 0, 1, 1], [1, 2, 2, 3])
0.875
"""

from .calibration import (MAX_DISTINCT_SCORES as MAX_DISTINCT_SCORES, SCORE_BINS as SCORE_BINS,
                          CalibrationResult, HosmerLemeshowResult,
                          cal_by_score, calibration_intercept_slope, expected_calibration_error,
                          hosmer_lemeshow, reliability_table, score_groups)
from .decision import PAPER_THRESHOLDS as PAPER_THRESHOLDS, aunbc, net_benefit
from .discrimination import AUCResult, auc, auc_ci, roc_curve
from .losses import EPS as EPS, brier_score, log_loss

__all__ = [
    "AUCResult",
    "CalibrationResult",
    "HosmerLemeshowResult",
    "auc",
    "auc_ci",
    "aunbc",
    "brier_score",
    "cal_by_score",
    "calibration_intercept_slope",
    "expected_calibration_error",
    "hosmer_lemeshow",
    "log_loss",
    "net_benefit",
    "reliability_table",
    "roc_curve",
    "score_groups",
]
