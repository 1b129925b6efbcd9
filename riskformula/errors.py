"""Exceptions and warnings raised by riskformula.

Every error says what is wrong, what was received and how to fix it.
"""

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_caller(message: str, category: type) -> None:
    """``warnings.warn`` attributed to the user's line: the first frame outside riskformula.

    A fixed ``stacklevel`` breaks whenever a call path gains a frame (the fit's
    ``one_blas_thread`` wrapper, ``cross_validate`` or the scikit-learn estimator calling
    ``risk_score``), and the warning then points into riskformula's own files."""
    if sys.version_info >= (3, 12):
        warnings.warn(message, category, skip_file_prefixes=(_PACKAGE,))
        return
    frame, level = sys._getframe(1), 2  # stacklevel 2: the caller of warn_caller
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class RiskFormulaError(Exception):
    """Base class of every error raised by riskformula."""


class FormulaError(RiskFormulaError, ValueError):
    """The formula cannot be parsed or names something that does not exist."""


class DataError(RiskFormulaError, ValueError):
    """The data cannot be used as given (missing values, one class, non-finite values...)."""


class SettingsError(RiskFormulaError, ValueError):
    """An argument of a fitting function is out of range or of the wrong type."""


class InfeasibleProblemError(RiskFormulaError):
    """No risk score satisfies the bounds and constraints that were asked for."""


class SolverError(RiskFormulaError):
    """The search returned no model: the LP engine failed in a way riskformula could not recover
    from, or (:class:`SearchLimitError`) a limit stopped it before any model was found."""


class SearchLimitError(SolverError):
    """A time or node limit stopped the search before any model meeting the constraints was found.

    Raise ``time_limit`` or ``node_limit``, or loosen the constraints.
    """


class RiskFormulaWarning(UserWarning):
    """Base class of every warning issued by riskformula."""


class OptimalityGapWarning(RiskFormulaWarning):
    """The solver stopped before proving the returned model optimal."""


class CalibrationWarning(RiskFormulaWarning):
    """A calibration or discrimination statistic is undefined for these data and is reported as NA.

    For example AUC in a group with a single class, the calibration slope of a model whose
    risks are all equal, or a Hosmer–Lemeshow test with fewer than 3 groups.
    """


class SmallGroupWarning(RiskFormulaWarning):
    """A group is too small to estimate a rate well (or is absent where a fairness notion needs it).

    A rate from n rows has a standard error up to 0.5/sqrt(n); a fairness bound on it is then a
    bound on noise.  Merge small groups, or read their rates with their confidence intervals.
    """
