"""riskformula: certified-optimal integer risk scores from R-style formulas.

>>> import riskformula as rf
>>> df = rf.load_dataset("wdbc")
>>> m = rf.risk_score('diagnosis == "M" ~ .', df, max_size=3, time_limit=30)  # doctest: +SKIP
>>> print(m.summary())  # doctest: +SKIP

The package is layered; each stage imports only from the stages before it (imports inside
functions and under ``TYPE_CHECKING`` included), and no module or folder imports another that
imports it back (``tests/package/test_layers.py`` checks both on the import graph):

1. foundations — errors, argument checks, JSON helpers (``errors``, ``_checks``, ``_json``, ...)
   and the registry of frames other than pandas (``backends``);
2. formula → design — the formula's design matrix and its threshold cuts (``design``,
   ``thresholds``, ``datasets``);
3. problem — the loss, bounds and constraints as an integer program (``problem``; a constraint
   is a registered class; the fairness constraints in ``fairness``);
4. solver — branch-and-cut and its heuristics (``solver``), with the search settings (``control``)
   and the model's arguments, checked once (``arguments``);
5. fitted card — the score card (``card``), what a fit records (``fitinfo``), the likelihood at
   the card's points (``likelihood``), the registry of model kinds (``kinds``) and the fitted
   card as a frozen record with everything it answers itself (``record``);
6. reports, exports, counterfactuals, documents — computed from the record (``reports``,
   ``export``, ``counterfactuals``, ``io``);
7. fitted model — the user's :class:`RiskScore` (``model``; a net-benefit score in
   ``netbenefit.model``): the record with its report on the training rows, and the methods that
   reach the stage before;
8. fits — the registered objectives (``objectives``: the logistic fit in ``logistic``, net
   benefit in ``netbenefit``), their shared steps (``pipeline``), dask frames (``dask``) and the
   Rashomon set (``rashomon``);
9. front door — ``risk_score`` (``fit``), many fits (``tuning``, ``fairness_path``), scikit-learn
   (``sklearn``) and the command line (``cli``).
"""

from .problem.constraints import (at_least, at_most, implies, max_thresholds, max_variables, not_both, one_variable,
                                  risk_at_least, risk_at_most, sign)
from .datasets import list_datasets, load_dataset, synthetic_thresholds
from .errors import (DataError, FormulaError, InfeasibleProblemError, NotApplicableError, OptimalityGapWarning,
                     RiskFormulaError, RiskFormulaWarning, SearchLimitError, SettingsError, SmallGroupWarning,
                     PerfectSeparationWarning, SmallSampleWarning,
                     SolverError)
from .fairness import (calibration_within_groups, conditional_statistical_parity, equal_opportunity,
                       equalized_odds, predictive_equality, risk_parity, score_balance,
                       statistical_parity)
from .control import SearchControl
from .fit import risk_score
from .fairness_path import fairness_path
from .model import RiskScore
from .reports.evaluation import Evaluation, evaluate
from .reports.comparison import ComparisonTable, anova, compare
from .io import from_json
from .reports.cross_validation import CrossValidation
from .reports.size_cv import SizeCV
from .reports.size_path import SizePath
from .tuning import cross_validate, cv_risk_score, size_path
from . import plots
from .thresholds import cut, threshold
from .netbenefit import NetBenefitScore, net_benefit
from .survival import SurvivalScore, cox
from .netbenefit.improve import improve_aunbc
from .reports.decision_curve import DecisionCurve, decision_curve
from .counterfactuals import Counterfactuals, Reasons
from . import export
from .rashomon import RashomonSet, rashomon_set

from ._version import __version__  # noqa: F401  (riskformula.__version__)


__all__ = [
    "risk_score", "SearchControl", "RiskScore", "evaluate", "Evaluation", "load_dataset", "list_datasets",
    "synthetic_thresholds",
    "sign", "at_most", "at_least", "not_both", "implies", "one_variable", "max_thresholds", "max_variables",
    "risk_at_least", "risk_at_most", "threshold", "cut",
    "RiskFormulaError", "FormulaError", "DataError", "SettingsError", "InfeasibleProblemError", "NotApplicableError",
    "SolverError", "SearchLimitError", "RiskFormulaWarning", "OptimalityGapWarning", "SmallGroupWarning",
    "SmallSampleWarning", "PerfectSeparationWarning",
    "statistical_parity", "conditional_statistical_parity", "predictive_equality", "equal_opportunity",
    "equalized_odds", "score_balance", "risk_parity", "calibration_within_groups", "fairness_path",
    "compare", "anova", "ComparisonTable", "cross_validate", "CrossValidation", "size_path",
    "SizePath", "cv_risk_score", "SizeCV", "from_json", "plots", "Counterfactuals", "Reasons",
    "NetBenefitScore", "SurvivalScore", "cox", "net_benefit", "decision_curve", "DecisionCurve", "improve_aunbc",
    "export",
    "rashomon_set", "RashomonSet",
]


def __getattr__(name):
    # scikit-learn is optional: its estimator module is imported on first use only
    if name == "RiskScoreClassifier":
        from .sklearn import RiskScoreClassifier
        return RiskScoreClassifier
    if name == "RiskScoreSurvival":
        from .sklearn import RiskScoreSurvival
        return RiskScoreSurvival
    raise AttributeError(f"module 'riskformula' has no attribute {name!r}")
