"""Model-chosen thresholds for continuous predictors (Molero-Río & D'Ambrosio, 2025): ``threshold(x)``,
``threshold(.)`` (every numeric predictor), ``cut(x, [...])``.

This package owns everything about threshold terms:

* :mod:`~riskformula.thresholds.transforms` — the formula functions;
* :mod:`~riskformula.thresholds.candidates` — their candidate cuts (one per gap between distinct
  training values, written as round numbers; pruned, balanced and gridded);
* :mod:`~riskformula.thresholds.expansion` — ``threshold(.)`` written out for the data's columns;
* :mod:`~riskformula.thresholds.pruning` — dropping cuts that can never be optimal;
* :mod:`~riskformula.thresholds.terms` — a design's threshold terms, their card items (one per cut
  with points) and per-interval points;
* :mod:`~riskformula.thresholds.formulation` — their limit on the number of cuts in the
  optimization problem.

Examples
--------
>>> import pandas as pd, riskformula as rf
>>> df = pd.DataFrame({"age": [30, 40, 50, 60], "y": [0, 0, 1, 1]})
>>> rf.risk_score("y ~ threshold(age, k=1)", df, time_limit=5).thresholds["cut"].tolist()
[40.0]
"""

from .transforms import (CUT_DEPTH, FORMULA_FUNCTIONS, MAX_CUTS, OUTCOME, PROBE, candidate_cuts, cut, threshold)
from .expansion import expand_threshold_dot
from .terms import (COARSE_GRID, ThresholdTerm, coarse_columns, first_argument, levels, levels_by_term, score_shift,
                    threshold_terms, top_level_parts)
from .pruning import drop_dominated_cuts

__all__ = ["threshold", "cut", "expand_threshold_dot", "candidate_cuts", "drop_dominated_cuts", "levels",
           "levels_by_term", "score_shift", "ThresholdTerm", "threshold_terms", "first_argument", "FORMULA_FUNCTIONS",
           "MAX_CUTS", "PROBE", "OUTCOME", "CUT_DEPTH", "COARSE_GRID", "coarse_columns", "top_level_parts"]
