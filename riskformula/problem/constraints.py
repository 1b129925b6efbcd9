"""Operational constraints on a risk score, named by formula terms (Ustun & Rudin, 2019, Table 1).

Pass them as ``risk_score(..., constraints=[...])``.  Every constraint names terms the way the
formula and the score card do: a formula term (``"C(race)"``, ``"threshold(age)"``), a design column
(``"C(sex)[T.male]"``), its label (``"sex = male"``) or a variable (``"race"``, ``"age"``).  A name that
covers several columns (a factor, a threshold) counts as *one* term: it is "used" when any of its
columns has nonzero points.

Each constraint writes its own linear rows over the points λ, the "used" indicators α and, where a
term spans several columns, one binary per term, through the small interface of
:class:`~riskformula.problem.builder.ProblemBuilder`; so the fitted model is certified optimal
*under* the constraints.  A new kind of constraint is one :class:`Constraint` subclass, a frozen
dataclass with ``describe()`` and ``apply(builder)``: it registers itself by its class name (so a
saved model's constraints load back, :func:`constraint_class`) and declares what the fit must do
for it in its class attributes (``prunes_cuts``, ``whole_scores``, ``counts_terms_once``,
``reads_rows``, ``logistic_only``) and :meth:`Constraint.on_the_risk`.

Examples
--------
>>> import riskformula as rf
>>> df = rf.load_dataset("wdbc")
>>> m = rf.risk_score('diagnosis == "M" ~ radius_worst + texture_worst + concavity_worst', df,
...                   max_size=2, time_limit=20,
...                   constraints=[rf.sign("texture_worst", "+"),
...                                rf.not_both("radius_worst", "concavity_worst")])
>>> [c.describe() for c in m.constraints]
["sign('texture_worst', '+')", "not_both('radius_worst', 'concavity_worst')"]
"""

from __future__ import annotations

import abc

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import logit

from ..errors import SettingsError

__all__ = ["Constraint", "constraint_class", "sign", "at_most", "at_least", "not_both", "implies", "one_variable",
           "max_variables", "max_thresholds", "risk_at_least", "risk_at_most", "check_constraints"]


def _names(fn: str, names) -> tuple:
    out = tuple(names)
    if not out or not all(isinstance(n, str) for n in out):
        raise SettingsError(f"`{fn}` needs term names as strings (e.g. 'age', 'C(sex)'); got {out!r}.")
    return out


def _count(fn: str, m) -> int:
    if isinstance(m, (str, list, tuple)):
        raise SettingsError(f"`{fn}` takes the count first, then the term names, e.g. "
                            f"{fn}(2, 'age', 'C(sex)'); got {m!r} as the count.")
    if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 0:
        raise SettingsError(f"`{fn}` needs a whole number ≥ 0 as its first argument; got {m!r}.")
    return int(m)


def _prob(fn: str, p) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 < p < 1:  # type: ignore[operator]  # typeshed: numbers.Real has no __gt__/__ge__
        raise SettingsError(f"`{fn}` needs a risk strictly between 0 and 1 (e.g. 0.9); got {p!r}.")
    return float(p)


#: every constraint class by its name (see :meth:`Constraint.__init_subclass__`)
_REGISTRY: dict[str, type] = {}


class Constraint(abc.ABC):
    """Base class: a constraint knows how to describe itself and how to add its rows to a builder.

    Subclasses are frozen dataclasses (so a fitted model can store and print them) and write
    their formulation in :meth:`apply` with the primitives of
    :class:`~riskformula.problem.builder.ProblemBuilder` only.  Defining one registers it by its
    class name, which is how a saved model's constraints are loaded back; its class attributes
    tell the fit what it needs.
    """

    #: the loss alone judges where a threshold cut goes, so cuts it cannot prefer may be pruned
    #: before the search (False for constraints that see every row's prediction)
    prunes_cuts: ClassVar[bool] = True
    #: its rows are written for whole scores: an integer intercept (``real_intercept=True`` refused)
    whole_scores: ClassVar[bool] = False
    #: it counts a term's columns once toward the size, so a variable may take any number of cuts
    #: (the cut pruning then keeps every cut a packing argument allows)
    counts_terms_once: ClassVar[bool] = False
    #: it needs the training rows themselves (their groups, with the caller's columns), which a
    #: dask frame's collapsed patterns do not keep; it measures itself on them with :meth:`assess`
    reads_rows: ClassVar[bool] = False
    #: it bounds the logistic risk formula, so it applies to the logistic objective only
    logistic_only: ClassVar[bool] = False
    #: on infeasibility, the fit looks for the loosest feasible value of its bound by bisection
    #: (fields ``max_diff`` and ``min_ratio``)
    bisect_bound: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls

    def on_the_risk(self) -> bool:
        """Whether its rows are written on the risk (so they move with the score scale)."""
        return False

    def assess(self, model, data, weights=None) -> list[dict]:
        """The constrained quantities of ``model`` on ``data`` (constraints with ``reads_rows``)."""
        return []

    @abc.abstractmethod
    def describe(self) -> str:
        """The constraint as the user would write it."""

    @abc.abstractmethod
    def apply(self, builder) -> None:
        """Add the constraint's rows, bounds and auxiliary variables through ``builder``."""

    def __repr__(self) -> str:
        return f"<constraint {self.describe()}>"


@dataclass(frozen=True, repr=False)
class Sign(Constraint):
    term: str
    direction: str

    def describe(self) -> str:
        return f"sign({self.term!r}, {self.direction!r})"

    def apply(self, b) -> None:
        for j in b.columns(self.term):
            # "+" means risk rises with the variable; on a column that falls as the variable rises
            # (a threshold's 1[x ≤ c]) that is points ≤ 0
            if (self.direction == "+") == (b.terms.direction(j) > 0):
                b.tighten([j], lower=0.0)
            else:
                b.tighten([j], upper=0.0)


def sign(term: str, direction: str) -> Sign:
    """Points of ``term`` may only raise (``"+"``) or only lower (``"-"``) the risk.

    For a factor every level's points have that sign (relative to the reference level); for a
    ``threshold(x)`` term ``"+"`` means risk does not decrease as ``x`` grows (monotone).

    Parameters
    ----------
    term : str
        A term of the formula as it is written there (``"age"``, ``"C(sex)"``, ``"threshold(age)"``).
    direction : {"+", "-"}
        ``"+"``: the term's points never lower the risk; ``"-"``: they never raise it.

    Returns
    -------
    Sign
        The constraint, for ``constraints=`` of :func:`riskformula.risk_score`.

    Examples
    --------
    >>> sign("prior_seizures", "+").describe()
    "sign('prior_seizures', '+')"
    """
    _names("sign", [term])
    if direction not in ("+", "-"):
        raise SettingsError(f"`sign` direction must be '+' (never lowers risk) or '-' (never raises it); "
                            f"got {direction!r}.")
    return Sign(term, direction)


@dataclass(frozen=True, repr=False)
class Count(Constraint):
    terms: tuple
    lower: int | None
    upper: int | None
    label: str

    def describe(self) -> str:
        m = self.upper if self.label in ("at_most", "not_both") else self.lower
        args = ", ".join(repr(t) for t in self.terms)
        return f"not_both({args})" if self.label == "not_both" else f"{self.label}({m}, {args})"

    def apply(self, b) -> None:
        coefs: dict = {}
        for t in self.terms:
            for k, v in b.used(t).items():
                coefs[k] = coefs.get(k, 0.0) + v
        b.add_row(coefs, -math.inf if self.lower is None else self.lower,
                  math.inf if self.upper is None else self.upper, self.describe())


def at_most(m: int, *terms: str) -> Count:
    """At most ``m`` of ``terms`` are used (group sparsity), e.g. ``at_most(1, "male", "female")``.

    Parameters
    ----------
    m : int
        The count, a whole number ≥ 0 (given first, before the names).
    *terms : str
        Terms of the formula (at least one).

    Returns
    -------
    Count
        The constraint, for ``constraints=`` of :func:`riskformula.risk_score`.

    Examples
    --------
    >>> at_most(1, "radius_worst", "area_worst").describe()
    "at_most(1, 'radius_worst', 'area_worst')"
    """
    count = _count("at_most", m)  # first, so names-before-count is reported as that
    return Count(_names("at_most", terms), None, count, "at_most")


def at_least(m: int, *terms: str) -> Count:
    """At least ``m`` of ``terms`` are used (e.g. force a clinically required item into the score).

    Parameters
    ----------
    m : int
        The count, a whole number ≥ 0 (given first, before the names).
    *terms : str
        Terms of the formula (at least one).

    Returns
    -------
    Count
        The constraint, for ``constraints=`` of :func:`riskformula.risk_score`.

    Examples
    --------
    >>> at_least(1, "age").describe()
    "at_least(1, 'age')"
    """
    count = _count("at_least", m)  # first, so names-before-count is reported as that
    return Count(_names("at_least", terms), count, None, "at_least")


def not_both(a: str, b: str) -> Count:
    """``a`` and ``b`` are not both used (e.g. a variable in continuous and thresholded form).

    Parameters
    ----------
    a, b : str
        The two terms of the formula.

    Returns
    -------
    Count
        The constraint, for ``constraints=`` of :func:`riskformula.risk_score`.

    Examples
    --------
    >>> not_both("age", "threshold(age)").describe()
    "not_both('age', 'threshold(age)')"
    """
    return Count(_names("not_both", [a, b]), None, 1, "not_both")


@dataclass(frozen=True, repr=False)
class Implies(Constraint):
    term: str
    any_of: tuple

    def describe(self) -> str:
        return f"implies({self.term!r}, any_of={list(self.any_of)!r})"

    def apply(self, b) -> None:
        coefs = dict(b.used(self.term))
        for t in self.any_of:
            for k, v in b.used(t).items():
                coefs[k] = coefs.get(k, 0.0) - v
        b.add_row(coefs, -math.inf, 0.0, self.describe())


def implies(term: str, any_of) -> Implies:
    """If ``term`` is used then at least one of ``any_of`` is used (logical structure).

    Parameters
    ----------
    term : str
        A term of the formula as it is written there (``"age"``, ``"C(sex)"``, ``"threshold(age)"``).
    any_of : str or list of str
        The terms of which at least one must be used when ``term`` is.

    Returns
    -------
    Implies
        The constraint, for ``constraints=`` of :func:`riskformula.risk_score`.

    Examples
    --------
    >>> implies("male", any_of=["hypertension", "bmi30"]).describe()
    "implies('male', any_of=['hypertension', 'bmi30'])"
    """
    any_of = [any_of] if isinstance(any_of, str) else list(any_of)
    return Implies(_names("implies", [term])[0], _names("implies", any_of))


@dataclass(frozen=True, repr=False)
class OneVariable(Constraint):
    term: str

    counts_terms_once = True

    def describe(self) -> str:
        return f"one_variable({self.term!r})"

    def apply(self, b) -> None:
        cols = b.columns(self.term)
        if len(cols) > 1:
            b.add_group(cols, name=self.term)


def one_variable(term: str) -> OneVariable:
    """All columns of ``term`` (the levels of a factor) count as one variable toward ``max_size``.

    ``risk_score(..., factors_as_one=True)`` does this for every multi-column term.

    Parameters
    ----------
    term : str
        A term of the formula as it is written there (``"age"``, ``"C(sex)"``, ``"threshold(age)"``).

    Returns
    -------
    OneVariable
        The constraint, for ``constraints=`` of :func:`riskformula.risk_score`.

    Examples
    --------
    >>> one_variable("C(race)").describe()
    "one_variable('C(race)')"
    """
    return OneVariable(_names("one_variable", [term])[0])


@dataclass(frozen=True, repr=False)
class MaxColumns(Constraint):
    m: int
    terms: tuple

    def describe(self) -> str:
        return f"max_thresholds({self.m}, {', '.join(repr(t) for t in self.terms)})"

    def apply(self, b) -> None:
        cols = sorted({j for t in self.terms for j in b.columns(t)})
        b.add_row({b.layout.alpha(j): 1.0 for j in cols}, -math.inf, self.m, self.describe())


def max_thresholds(m: int, *terms: str) -> MaxColumns:
    """At most ``m`` nonzero columns among ``terms``: with threshold or indicator columns
    (``age_le_40``, ``age_le_50``, … or ``threshold(age, k=5)``), at most ``m`` thresholds.

    Parameters
    ----------
    m : int
        The largest number of nonzero columns, a whole number ≥ 0 (given first, before the names).
    *terms : str
        Terms of the formula (at least one) whose columns are counted together.

    Returns
    -------
    MaxColumns
        The constraint, for ``constraints=`` of :func:`riskformula.risk_score`.

    Examples
    --------
    >>> max_thresholds(2, "threshold(age, k=4)").describe()
    "max_thresholds(2, 'threshold(age, k=4)')"
    """
    return MaxColumns(_count("max_thresholds", m), _names("max_thresholds", terms))


@dataclass(frozen=True, repr=False)
class MaxVariables(Constraint):
    m: int

    def describe(self) -> str:
        return f"max_variables({self.m})"

    def apply(self, b) -> None:
        coefs: dict = {}
        for v, cols in b.terms.variable_columns().items():
            if len(cols) == 1:
                key = b.layout.alpha(cols[0])
            else:
                idx = np.asarray(cols)
                key = b.add_aux(0.0, 1.0, integer=True, name=f"measured[{v}]",
                                fill=lambda lam, alpha, idx=idx: float(alpha[idx].max()))
                for j in cols:
                    b.add_row({b.layout.alpha(j): 1.0, key: -1.0}, -math.inf, 0.0, f"measured[{v}]")
            coefs[key] = coefs.get(key, 0.0) + 1.0
        b.add_row(coefs, -math.inf, float(self.m), self.describe())


def max_variables(m: int) -> MaxVariables:
    """The card reads at most ``m`` variables (data columns a person measures), however many items
    it has: ``threshold(age)`` with two cuts and ``age`` itself are one variable, an
    interaction ``a:b`` reads two, and a factor's levels one.  ``max_size`` still counts items.

    Parameters
    ----------
    m : int
        The largest number of variables, a whole number ≥ 0.

    Returns
    -------
    MaxVariables
        The constraint, for ``constraints=`` of :func:`riskformula.risk_score`.

    Examples
    --------
    >>> max_variables(3).describe()
    'max_variables(3)'
    """
    return MaxVariables(_count("max_variables", m))


@dataclass(frozen=True, repr=False)
class RiskBound(Constraint):
    risk: float
    when: tuple
    at_least: bool

    # side information sees the prediction of its profile's rows, on the logistic risk
    prunes_cuts = False
    whole_scores = True
    logistic_only = True

    def on_the_risk(self) -> bool:
        return True

    def describe(self) -> str:
        fn = "risk_at_least" if self.at_least else "risk_at_most"
        return f"{fn}({self.risk:g}, when={dict(self.when)!r})"

    def apply(self, b) -> None:
        # λ_0 + Σ λ_j x_j ≥ m·logit(risk) (≤ for risk_at_most) on score scale m; the builder
        # widens the intercept range
        x = b.terms.profile(dict(self.when), owner=self.describe())
        lay = b.layout
        coefs = {lay.intercept: 1.0, **{lay.lam(j): float(x[j]) for j in range(len(x)) if x[j] != 0}}
        z = float(logit(self.risk)) * b.scale
        b.add_row(coefs, z if self.at_least else -math.inf, math.inf if self.at_least else z, self.describe())


def _when(fn: str, when, risk: float) -> tuple:
    if not isinstance(when, dict) or not when:
        raise SettingsError(f"`{fn}` needs `when=` as a dict of term or variable values, e.g. "
                            f"{{'male': 1, 'hypertension': 1}}; got {when!r}.")
    for key, value in when.items():
        if not isinstance(key, str):
            raise SettingsError(f"`{fn}` needs `when=` keyed by term or variable names (strings); got {key!r}.")
        # a missing value here would describe nobody (a threshold's NaN is above every cut, a
        # column's NaN poisons the row): refuse it now, before the design is known; whether a
        # string is a valid level is checked against the design when the fit applies the profile
        number = isinstance(value, (numbers.Real, np.number, np.bool_))
        if not (isinstance(value, str) or (number and math.isfinite(float(value)))):
            raise SettingsError(f"{fn}({risk:g}, when={when!r}): {key!r} is {value!r}; a profile needs a finite "
                                "number for a numeric or threshold variable or a level (a string) for a factor.")
    # numpy scalars as Python numbers, so the constraint prints (and saves) as the user wrote it
    return tuple((k, v.item() if isinstance(v, np.generic) else v) for k, v in when.items())


def risk_at_least(risk: float, when: dict) -> RiskBound:
    """Side information: predicted risk is at least ``risk`` for the profile ``when``.

    ``when`` maps terms or variables to values; a factor takes a level (``{"sex": "male"}``), a
    threshold term the variable's value (``{"age": 63}``), a column its value (``{"bmi": 31.2}``,
    ``{"male": 1}``).  Left out, a column is 0 (a numeric variable at 0, an indicator off) and a
    factor is at its reference level; a ``threshold()``/``cut()`` term has no neutral value (all
    its indicators off would mean "above every cut"), so every one must be named.  A transformed
    term (``np.log(x)``) is named by the term with the column's value, not by its variable.  Bad
    values (missing, a string for a number, an unknown level) are a SettingsError naming the
    constraint.  The row is linear in the points
    and the intercept: λ_0 + Σ λ_j x_j ≥ m·logit(risk) on score scale m (``scale=`` of
    :func:`riskformula.risk_score`; one row per scale when the scale is fitted).

    Parameters
    ----------
    risk : float
        The bound on the predicted risk, strictly between 0 and 1.
    when : dict
        The profile: term or variable names (str) mapped to finite numbers or levels (non-empty).

    Returns
    -------
    RiskBound
        The constraint, for ``constraints=`` of :func:`riskformula.risk_score`.

    Examples
    --------
    >>> risk_at_least(0.9, when={"male": 1, "hypertension": 1}).describe()
    "risk_at_least(0.9, when={'male': 1, 'hypertension': 1})"
    """
    risk = _prob("risk_at_least", risk)
    return RiskBound(risk, _when("risk_at_least", when, risk), True)


def risk_at_most(risk: float, when: dict) -> RiskBound:
    """Side information: predicted risk is at most ``risk`` for the profile ``when``
    (see :func:`risk_at_least`).

    Parameters
    ----------
    risk : float
        The bound on the predicted risk, strictly between 0 and 1.
    when : dict
        The profile: term or variable names (str) mapped to finite numbers or levels (non-empty).

    Returns
    -------
    RiskBound
        The constraint, for ``constraints=`` of :func:`riskformula.risk_score`.

    Examples
    --------
    >>> risk_at_most(0.05, when={"age": 30}).describe()
    "risk_at_most(0.05, when={'age': 30})"
    """
    risk = _prob("risk_at_most", risk)
    return RiskBound(risk, _when("risk_at_most", when, risk), False)


def constraint_class(name) -> type | None:
    """The constraint class registered as ``name`` (None when there is none, or it is abstract)."""
    cls = _REGISTRY.get(name) if isinstance(name, str) else None
    return None if cls is None or getattr(cls, "__abstractmethods__", None) else cls


def check_constraints(constraints) -> tuple:
    """The ``constraints=`` argument as a tuple of :class:`Constraint` (one may be passed alone)."""
    if constraints is None:
        return ()
    if isinstance(constraints, Constraint):
        constraints = [constraints]
    out = tuple(constraints)
    bad = [c for c in out if not isinstance(c, Constraint)]
    if bad:
        raise SettingsError(f"`constraints` must hold constraints built by riskformula (rf.at_most, rf.sign, "
                            f"rf.implies, ...); got {bad[0]!r}.")
    return out
