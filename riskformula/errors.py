"""Exceptions and warnings raised by riskformula.

Every error says what is wrong, what was received and how to fix it.
"""

import difflib
import keyword
import os
import re
import sys
import types
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
    frame: types.FrameType | None = sys._getframe(1)
    level = 2  # stacklevel 2: the caller of warn_caller
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def strip_ansi(text) -> str:
    """``text`` (an exception of another library, such as formulaic) without terminal colour codes,
    which print as ``[1;31m`` garbage in logs, notebooks and on Windows."""
    return _ANSI.sub("", str(text))


def close_match(name: str, choices) -> str | None:
    """The choice ``name`` was most likely meant to be (a misspelling or other case), or None."""
    if not isinstance(name, str):
        return None
    lower: dict[str, str] = {}
    for c in choices:
        if isinstance(c, str):
            lower.setdefault(c.lower(), c)
    if name.lower() in lower:
        return lower[name.lower()]
    hit = difflib.get_close_matches(name.lower(), list(lower), n=1)
    return lower[hit[0]] if hit else None


def did_you_mean(name: str, choices, show=lambda c: f"`{c}`") -> str:
    """`` Did you mean `x`?`` for the closest of ``choices`` to ``name`` (``show`` quotes it), or ""."""
    close = close_match(name, choices)
    return f" Did you mean {show(close)}?" if close is not None and close != name else ""


def name_list(names, limit: int = 30) -> str:
    """``['a', 'b', 'c']``, or the first ``limit`` names and ``and N more`` when there are more."""
    names = list(names)
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return f"{names[:limit]}{more}"


class RiskFormulaError(Exception):
    """Base class of every error raised by riskformula."""


class FormulaError(RiskFormulaError, ValueError):
    """The formula cannot be parsed or names something that does not exist."""


class DataError(RiskFormulaError, ValueError):
    """The data cannot be used as given (missing values, one class, non-finite values...)."""


class SettingsError(RiskFormulaError, ValueError):
    """An argument of a fitting function is out of range or of the wrong type."""


def unreadable_formula(formula: str, error: BaseException) -> FormulaError:
    """The error for a ``formula`` formulaic cannot parse (``error``: formulaic's exception, or the
    SyntaxError of Python code in a term, such as an unclosed quote), on one line: formulaic's
    message without colour codes, and the formula with the failing part marked ⧛…⧚ as the user
    wrote it (not with the ``I(...)`` riskformula wraps around a comparison outcome)."""
    lhs = formula.partition("~")[0].strip()

    def as_written(text: str) -> str:
        text = " ".join(text.split())
        return text.replace(f"I({lhs})", lhs, 1) if lhs and not lhs.startswith("I(") else text

    if isinstance(error, SyntaxError):
        what = error.msg + (f" in `{as_written(error.text)}`" if error.text and error.text.strip() else "")
    else:
        head, _, where = strip_ansi(error).strip().partition("\n\n")
        what = head.strip().rstrip(".")
        if what == "Could not find matching context marker":  # formulaic's words for an unmatched bracket
            what = "a parenthesis or bracket is not matched"
        if where.strip():
            where = as_written(where)
            part = re.search(r"⧛(.*?)⧚", where)
            what += f", at {part.group(0) if part else 'the marked part'} in: {where}"
    # a column named like a Python keyword (flchain's `lambda`) reads as the keyword inside a term
    named = [w for w in dict.fromkeys(re.findall(r"(?<![`\w.])([A-Za-z_]\w*)(?![`\w])", formula))
             if keyword.iskeyword(w) and w not in ("True", "False", "None", "in", "not", "and", "or", "if", "else")]
    hint = (f" `{named[0]}` is a Python keyword, which formulaic cannot read as a column name inside a function "
            f"call: rename the column, e.g. data.rename(columns={{{named[0]!r}: {named[0] + '_'!r}}})."
            if named else "")
    return FormulaError(f"could not read the formula {formula!r}: {what}. Check the formula's operators, quotes "
                        f"and parentheses there.{hint}")


class NotApplicableError(RiskFormulaError, AttributeError):
    """A statsmodels attribute that has no meaning for a risk score's whole-number points (standard
    errors, p-values, confidence intervals, the covariance of the estimates); an
    ``AttributeError``, so ``hasattr(m, "bse")`` is False."""


class InfeasibleProblemError(RiskFormulaError):
    """No risk score satisfies the bounds and constraints that were asked for."""

    #: the constraints that conflict, when the feasibility check found them (set on the instance)
    conflict: list


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


class SmallSampleWarning(RiskFormulaWarning):
    """A fit on fewer than 10 rows of the rarer outcome per item on the card (Peduzzi et al., 1996):
    the certificate is exact on those rows, but points chosen from so few rarely hold on new data."""


class PerfectSeparationWarning(RiskFormulaWarning):
    """The fitted score puts every training event above every non-event, with a fitted score scale:
    the logistic loss then has no minimum (it falls toward 0 as the scale shrinks), and the model's
    small scale stands for that limit, with risks of nearly 0 and 1 (statsmodels says the same of a
    logistic regression with its ``PerfectSeparationWarning``)."""


class SmallGroupWarning(RiskFormulaWarning):
    """A group is too small to estimate a rate well (or is absent where a fairness notion needs it).

    A rate from n rows has a standard error up to 0.5/sqrt(n); a fairness bound on it is then a
    bound on noise.  Merge small groups, or read their rates with their confidence intervals.
    """
