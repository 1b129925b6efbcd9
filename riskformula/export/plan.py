"""What every export shares: the card as plain parts (:func:`card_plan`) and the lines saying what the
export is (:func:`provenance`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..card import interval_points
from ..errors import DataError, SettingsError
from ..design.missing import scorable
from .._version import __version__
from .._json import plain as _plain

__all__ = ["card_plan", "CardPlan", "Factor", "Entry", "RiskMap", "provenance", "export_horizons", "horizon_label"]


@dataclass(frozen=True)
class Factor:
    """One multiplicand of an item's value: ``interval`` (1 when ``lower < x ≤ upper``, None an
    open end), ``le`` (1 when ``x ≤ value``), ``level`` (1 when ``x == value``), ``linear`` (``x``
    as a number, booleans as 0/1) or ``missing`` (1 when ``x`` is missing: the item of a variable
    fitted with ``missing="item"``).  The first four are 0 where ``x`` is missing (see
    :attr:`CardPlan.missing`)."""

    kind: str
    variable: str
    lower: float | None = None
    upper: float | None = None
    value: object = None


@dataclass(frozen=True)
class Entry:
    """A card item (``item``: its label, term, kind, points) and the factors whose product it is."""

    item: object
    factors: tuple


@dataclass(frozen=True)
class RiskMap:
    """The score → risk map: ``logistic`` (risk = 1 / (1 + exp(−(intercept + score) / scale))),
    ``bands`` (the band of a score, rounded to 9 decimals, is the number of ``cutoffs`` it reaches,
    ±inf included; its risk is ``risks[band]``) or ``cox`` (a time-to-event score's risk within
    ``horizons[k]`` is 1 − exp(−``hazards[k]`` · exp((intercept + score) / scale)), ``hazards[k]``
    the baseline cumulative hazard H₀ at that horizon: Cox's (1972) model with the Breslow (1974)
    baseline)."""

    kind: str
    intercept: float = 0.0
    scale: float = 1.0
    cutoffs: tuple = ()
    risks: tuple = ()
    horizons: tuple = ()
    hazards: tuple = ()

    def label(self, k: int) -> str:
        """The ``k``-th horizon as the card prints it (``365``, ``2.5``)."""
        return horizon_label(self.horizons[k])


@dataclass(frozen=True)
class CardPlan:
    """A card as an export reads it.

    Attributes
    ----------
    entries : tuple of Entry
        The card's items in card order.
    variables : tuple of str
        The data columns the card reads, in first-use order.
    numeric : tuple of str
        The variables read as numbers (intervals, cuts, values).
    levels : dict
        Variable -> its training levels, for the variables read as levels (a row with another
        level has no score).
    zero_one : frozenset
        Value variables that took only the values 0 and 1 in training (maybe booleans).
    risk : RiskMap
        The score → risk map.
    scores : tuple or None
        Every total score the card can give when that set is provably finite (every item a
        condition: an interval, a level or a product of cuts and levels), else None.
    integral : bool
        Whether every score is a whole number (every item a condition).
    missing : dict
        Variable -> how ``predict`` scores a missing value of it, for the variables the card reads
        that it scores when missing (:attr:`DesignSpec.missing`): ``{"action": "item"}`` (a missing
        value meets no item but the variable's ``missing`` item, if the card has one) or
        ``{"action": "as", "value": v}`` (a missing value is ``v``, filled in before any item reads
        it).  A missing value of any other variable leaves the row without a score.  "Missing" is
        what pandas calls missing: None, NaN (and NaT).
    """

    entries: tuple
    variables: tuple
    numeric: tuple
    levels: dict
    zero_one: frozenset
    risk: RiskMap
    scores: tuple | None
    integral: bool
    missing: dict = field(default_factory=dict)

    def terms(self) -> dict:
        """term -> its entries, in card order."""
        out: dict = {}
        for e in self.entries:
            out.setdefault(e.item.term, []).append(e)
        return out


def card_plan(model, what: str = "this export", horizon=None) -> CardPlan:
    """The card of ``model`` as plain parts, or an error saying why it cannot be exported.

    Parameters
    ----------
    model : RiskScore or NetBenefitScore or SurvivalScore
        A fitted or loaded risk score.
    what : str, default "this export"
        The export's name, for error messages (``"SQL"``, ``"PMML"``).
    horizon : float or list of float, optional
        A time-to-event score only: the time(s) whose risk the map gives (``risk.horizons``); None:
        the card's horizons.

    Returns
    -------
    CardPlan

    Raises
    ------
    SettingsError
        A term only Python can compute (an ``expression`` column such as ``np.log(x)``), a model
        whose score → risk map is not the logistic curve, a net-benefit score's bands or Cox's
        model, or a ``horizon`` that is not a time within the training rows' follow-up (or given
        for a score that has no horizons).
    DataError
        A card whose numbers are not finite, or a level that is not a string, number or boolean.

    Examples
    --------
    >>> import riskformula as rf
    >>> from riskformula.export import card_plan
    >>> df = rf.load_dataset("breastcancer")
    >>> m = rf.risk_score("Benign ~ ClumpThickness + BareNuclei", df, max_size=2,
    ...                   time_limit=10)  # doctest: +SKIP
    >>> card_plan(m, "SQL").variables  # doctest: +SKIP
    ('ClumpThickness', 'BareNuclei')
    """
    card, design = model.scorecard, model.design
    categories = dict(getattr(design, "categories", None) or {})
    uses: dict = {}
    entries = []
    for it in card.items:
        factors = _factors(it, design, what)
        for f in factors:
            uses.setdefault(f.variable, set()).add(f.kind if f.kind in ("level", "missing") else "number")
        entries.append(Entry(it, tuple(factors)))
    if not math.isfinite(float(card.intercept)) or not math.isfinite(float(model.scale)) or model.scale <= 0:
        raise DataError(f"the model's intercept ({card.intercept!r}) and score scale ({model.scale!r}) must be "
                        "finite numbers (a positive scale) to be exported.")
    levels = {}
    for var, how in uses.items():
        if "level" in how:
            found = categories.get(var)
            if found is None:   # no training levels kept: only the card's own levels are known
                found = tuple(dict.fromkeys(f.value for e in entries for f in e.factors
                                            if f.kind == "level" and f.variable == var))
            levels[var] = tuple(_plain(v) for v in found)
    missing = _missing_policies(design, uses, levels, what)
    conditions = all(f.kind != "linear" for e in entries for f in e.factors)
    by_item = {v for v, p in missing.items() if p["action"] == "item"}
    scores = _condition_scores(entries, by_item) if conditions else None
    return CardPlan(entries=tuple(entries), variables=tuple(uses),
                    numeric=tuple(v for v, how in uses.items() if "number" in how), levels=levels,
                    zero_one=frozenset(_zero_one(model, v) for v in uses) - {None},
                    risk=_risk_map(model, horizon, what), scores=scores, integral=conditions, missing=missing)


def _missing_policies(design, uses: dict, levels: dict, what: str) -> dict:
    """variable -> its policy (``{"action": "item"}`` or ``{"action": "as", "value": v}``) for
    every variable the card reads that ``predict`` scores when missing."""
    fitted = dict(getattr(design, "missing", None) or {})
    out: dict = {}
    for var in uses:
        policy = fitted.get(var)
        if policy is None or not scorable(policy):
            continue
        if policy["action"] == "item":
            out[var] = {"action": "item"}
            continue
        value = _plain(policy.get("value"))
        if isinstance(value, float) and not math.isfinite(value):
            raise DataError(f"the value a missing `{var}` counts as ({value!r}) must be finite to be exported.")
        if var in levels and not any(_same(value, v) for v in levels[var]):
            raise DataError(f"{what}: a missing `{var}` counts as {value!r}, which is not one of its training "
                            f"levels {list(levels[var])[:10]!r}.")
        if not isinstance(value, (str, bool, int, float)):
            raise DataError(f"{what}: a missing `{var}` counts as {value!r}; it must be a string, a number or a "
                            "boolean to be exported.")
        out[var] = {"action": "as", "value": value}
    return out


def _same(a, b) -> bool:
    """Equal as a level rule compares (``==``), a boolean never matching a number."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def _condition_scores(entries, by_item=frozenset(), limit: int = 5000):
    """Every total a card of conditions can give (a superset: within a term of products, every
    subset of its items; a threshold's regions; a factor's one level or none; 0 for a term of a
    variable in ``by_item``, those scored by a missing item, as a missing value meets none of the
    term's items), or None when there are more than ``limit``."""
    totals = {0}
    by_term: dict = {}
    for e in entries:
        by_term.setdefault(e.item.term, []).append(e)
    for group in by_term.values():
        pts = [int(e.item.points) for e in group]
        if all(e.item.kind == "interval" for e in group):
            # a threshold's items may overlap (x > 40 and x > 60): the points of each region
            sums = {int(v) for v in interval_points([e.item for e in group])}
        elif all(len(e.factors) == 1 and e.factors[0].kind in ("level", "missing") for e in group) and \
                len({e.factors[0].variable for e in group}) == 1:
            sums = {0, *pts}     # the levels of a factor exclude one another (and its missing item)
        else:
            sums = {0}
            for p in pts:
                sums |= {s + p for s in sums}
                if len(sums) > limit:
                    return None
        if any(f.variable in by_item for e in group for f in e.factors):
            sums.add(0)
        totals = {t + s for t in totals for s in sums}
        if len(totals) > limit:
            return None
    return tuple(sorted(totals))


def _factors(it, design, what: str) -> list:
    if it.kind == "missing":
        return [Factor("missing", _name(it.variable, it))]
    if it.kind == "interval":
        if it.variable is None:    # a threshold of an expression (threshold(np.log(x)))
            raise SettingsError(_refusal(what, it))
        for end in (it.lower, it.upper):
            if end is not None and not math.isfinite(float(end)):
                raise DataError(f"the item `{it.label}` has a non-finite cut {end!r}.")
        return [Factor("interval", _name(it.variable, it), lower=it.lower, upper=it.upper)]
    rule = design.rules[it.columns[0]] if design.rules else None
    parts = [] if rule is None else (list(rule.parts) if rule.kind == "product" else [rule])
    if rule is None or rule.kind == "expression" or not parts or any(
            p.kind not in ("le", "level", "linear") or p.variable is None for p in parts):
        raise SettingsError(_refusal(what, it))
    out = []
    for p in parts:
        if p.kind == "le":
            if not math.isfinite(float(p.value)):
                raise DataError(f"the item `{it.label}` has a non-finite cut {p.value!r}.")
            out.append(Factor("le", _name(p.variable, it), value=float(p.value)))
        elif p.kind == "level":
            v = _plain(p.value)
            if not isinstance(v, (str, bool, int, float)) or (isinstance(v, float) and not math.isfinite(v)):
                raise DataError(f"the item `{it.label}` compares with {v!r}: a level must be a string, a finite "
                                "number or a boolean to be exported.")
            out.append(Factor("level", _name(p.variable, it), value=v))
        else:
            out.append(Factor("linear", _name(p.variable, it)))
    return out


def _refusal(what: str, it) -> str:
    return (f"{what} cannot express the term `{it.term}` (item `{it.label}`): it is an expression only the "
            "formula's Python code computes, and an export evaluates no code. Put the computed value in a data "
            "column and refit with that column in the formula.")


def _name(variable, it) -> str:
    if not isinstance(variable, str) or not variable:
        raise DataError(f"the item `{it.label}` reads no named data column ({variable!r}).")
    return variable


def horizon_label(h: float) -> str:
    """A horizon as the card prints it: ``365``, ``2.5``."""
    return f"{h:g}"


def export_horizons(model, horizon, what: str = "this export") -> tuple:
    """The horizons ``horizon`` names for a time-to-event ``model`` (None: the card's), each
    checked as :meth:`SurvivalScore.predict` checks it (a time ≥ 0 within the longest follow-up),
    repeats dropped; a ``horizon`` for any other score is refused.

    Parameters
    ----------
    model : RiskScore or NetBenefitScore or SurvivalScore
        A fitted or loaded risk score.
    horizon : float or list of float or None
        The time(s).
    what : str, default "this export"
        The export's name, for error messages.

    Returns
    -------
    tuple of float
        The horizons, in the order given (empty for a score without horizons and ``horizon=None``).
    """
    if getattr(model, "risk_map", None) != "cox":
        if horizon is not None:
            raise SettingsError(f"{what}: `horizon` applies to a time-to-event score (Surv(time, event) ~ ...); "
                                f"{type(model).__name__} has no horizons. Leave it out.")
        return ()
    if horizon is None:
        return tuple(float(h) for h in model.horizons)
    values = list(horizon) if isinstance(horizon, (list, tuple, np.ndarray)) else [horizon]
    if not values or len(values) > 20:
        raise SettingsError(f"{what}: `horizon` must name between 1 and 20 times; got {len(values)}.")
    return tuple(dict.fromkeys(float(model.check_horizon(h)) for h in values))


def _risk_map(model, horizon=None, what: str = "this export") -> RiskMap:
    kind = getattr(model, "risk_map", None)
    horizons = export_horizons(model, horizon, what)
    if kind == "cox":
        hazards = tuple(float(model.surv.hazard_at(h)[0]) for h in horizons)
        if not all(math.isfinite(x) and x >= 0 for x in hazards):
            raise DataError(f"the baseline cumulative hazard at the horizons ({hazards!r}) must be finite numbers "
                            "≥ 0 to be exported.")
        return RiskMap("cox", intercept=_number(model.intercept), scale=float(model.scale), horizons=horizons,
                       hazards=hazards)
    if kind == "bands":
        return RiskMap("bands", cutoffs=tuple(float(c) for c in model.decision_cutoffs()),
                       risks=tuple(float(r) for r in model.nb.band_risk))
    if kind != "logistic":
        raise SettingsError(f"the exports know the logistic, the net-benefit and the Cox score → risk maps; "
                            f"{type(model).__name__} has another one.")
    return RiskMap("logistic", intercept=_number(model.intercept), scale=float(model.scale))


def _zero_one(model, var):
    """``var`` when a value item reads it as it is and its training values were only 0 and 1."""
    for it in model.scorecard.items:
        rule = model.design.rules[it.columns[0]] if it.kind == "value" and model.design.rules else None
        if rule is not None and rule.kind == "linear" and rule.variable == var:
            how, rows = model.scorecard.support.get(it.term, (None, None))
            if how == "rows" and np.isin(np.asarray(rows, float), (0.0, 1.0)).all():
                return var
    return None



def _number(v):
    """An int for a whole number, else a float."""
    v = float(v)
    return int(v) if v.is_integer() and abs(v) < 2 ** 53 else v


def provenance(model) -> list:
    """Lines saying what the export is: formula, training rows and events, certificate, package.

    Parameters
    ----------
    model : RiskScore or NetBenefitScore or SurvivalScore
        A fitted (or loaded) risk score.

    Returns
    -------
    list of str
        Three lines: the formula; the training rows, events and riskformula version; the
        certificate (:meth:`RiskScore.certificate_line`).
    """
    lines = [f"Risk score: {model.formula}",
             f"Fitted on {model.nobs:,d} rows ({model.events:,d} events) by riskformula {__version__}.",
             f"Certificate: {model.certificate_line()}"]
    return lines
