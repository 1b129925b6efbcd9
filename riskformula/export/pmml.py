"""The score card as a PMML 4.4 ``Scorecard`` with reason codes, for scoring engines.

One ``Characteristic`` per formula term: a threshold's regions between its cuts (the sum of its
items there) and a factor's training levels
as ``Attribute`` s with their points (0 for the intervals and the reference level without
points), a value term as one ``Attribute`` whose ``ComplexPartialScore`` is points × value (an
interaction: the product of its parts).  The model's score is the scorecard's predicted value
(``initialScore`` 0: the intercept is not part of the score, as in :meth:`RiskScore.score`);
``Output`` fields give the risk with the model's own score → risk map — the logistic curve, a
net-benefit score's bands, or a time-to-event score's risk within a horizon ``t``,
``1 − exp(−H₀(t) · exp((intercept + score) / scale))`` with the baseline cumulative hazard
``H₀(t)`` as a constant (the card's first horizon, or those ``horizon=`` names) — and the reason
codes.

Reason codes follow the principal reasons (:meth:`RiskScore.reasons`): ``reasonCodeAlgorithm``
is ``"pointsAbove"`` and each characteristic's ``baselineScore`` is the fewest points the term
can give (over its training values; a missing value is no value a person can move to), so a
term's reason points are the points a person has above the best the term allows.  The code is
the feature's name (the variables of an interaction joined with `` & ``); terms on the same
feature add up, as the evaluator sums a code's points.

Missing values are scored as ``predict`` scores them.  A variable fitted with ``missing="item"``
has, first in each characteristic that reads it, an ``isMissing`` attribute: the missing item's
points where the card joins the item with the variable's one interval or level term (as the card's
attainable scores and the principal reasons do), else 0 there and a characteristic of its own for
the missing item.  A variable fitted with ``missing="as <value>"`` has that value as the
``MiningField``'s ``missingValueReplacement``.  For these two, an invalid value (outside the
training levels, a non-finite number) is ``returnInvalid``: the evaluator reports the row as an
error and gives it no score.  A row with a missing value of any other variable, a value outside
the training levels, or a non-finite number gets no score and no risk (each ``MiningField``
treats invalid values as missing; a missing value makes the term's partial score missing, which
makes the score missing), where ``predict`` refuses it.

An output field never has the name of a data field (a model's input variable): an evaluator
holds one value per name and fails on every row where a name is both.  The default names
(``score``, ``risk``, ``risk_<horizon>``, a net-benefit score's ``risk_band``, ``reason_<k>``)
take a leading ``_`` while they are taken (``_score`` for a model that reads a column
``score``); a ``score=`` or ``risk=`` name given explicitly is refused when it is taken.

PMML's ``integer`` is a 32-bit number: a field of integer levels beyond ±2³¹ is ``double``
(every integer below 2⁵³ in magnitude is a double exactly, so each value matches the level it
equals and no other), and ``string`` when a level is beyond even that (its digits, compared as
text: an integer value matches exactly its level; a value given as a floating-point number
matches none and gets no score).
"""

from __future__ import annotations

import copy
import math
import xml.etree.ElementTree as ET

import numpy as np

from .._text import visible
from ..errors import DataError, SettingsError
from ..card import interval_points
from .plan import card_plan, provenance
from .._version import __version__

__all__ = ["to_pmml"]

NS = "http://www.dmg.org/PMML-4_4"
_MAX_DOUBLE = "1.7976931348623157e+308"
_INT32 = (-2 ** 31, 2 ** 31 - 1)     # the range of PMML's integer


def to_pmml(model, path=None, *, model_name: str = "riskformula", score: str | None = None,
            risk: str | None = None, reasons: int = 3, horizon=None) -> str:
    """The score card as a PMML 4.4 ``Scorecard`` document.

    Parameters
    ----------
    model : RiskScore or NetBenefitScore or SurvivalScore
        A fitted or loaded risk score.
    path : str or path-like, optional
        Where to write the document (UTF-8); default None: only return it.
    model_name : str, default "riskformula"
        The ``modelName`` of the scorecard.
    score : str, optional
        Name of the output field with the total points; None (the default): ``"score"``, with a
        leading ``_`` while that is the name of a variable the model reads or of a risk field
        named with ``risk=`` (``"_score"``).  A name given here must not be such a variable's
        name, nor the risk's.
    risk : str, optional
        Name of the output field with the risk (for several horizons, the prefix of the fields
        ``<risk>_<horizon>``); None (the default): ``"risk"``, with a leading ``_`` while one of
        its fields would have the name of a variable the model reads or of the score's field.  A
        name given here must give no such name.
    reasons : int, default 3
        How many reason codes to output (fields ``reason_1`` ... ``reason_<n>``, each with a
        leading ``_`` while it is the name of a variable the model reads or of another output
        field; 0 for none).
    horizon : float or list of float, optional
        A time-to-event score only: the time within which the output ``risk`` is the risk of the
        event (at most the longest follow-up of the training rows); None (the default): the card's
        first horizon.  A list gives one output field ``risk_<horizon>`` per time instead.

    Returns
    -------
    str
        The PMML document (XML).

    Raises
    ------
    SettingsError
        A term only Python computes (such as ``np.log(x)``), a variable read both as a factor
        and as a number, a factor whose levels mix data types (beyond integers and decimals, or
        with an integer beyond 2⁵³ in magnitude), a ``score=`` or ``risk=`` name that is (or
        gives) the name of a variable the model reads or of the other output, or bad arguments.
    DataError
        A name or level XML cannot hold (a control character).

    Examples
    --------
    >>> import riskformula as rf
    >>> from riskformula.export import to_pmml
    >>> df = rf.load_dataset("breastcancer")
    >>> m = rf.risk_score("Benign ~ ClumpThickness + BareNuclei", df, max_size=2,
    ...                   time_limit=10)  # doctest: +SKIP
    >>> text = to_pmml(m, "score.pmml")  # doctest: +SKIP
    >>> from jpmml_evaluator import make_evaluator  # doctest: +SKIP
    >>> make_evaluator(text).evaluateAll(df)  # score, risk, reason_1..3  # doctest: +SKIP
    >>> to_pmml(m, score="points", risk="p_benign", reasons=2)  # other names  # doctest: +SKIP
    """
    if isinstance(reasons, bool) or not isinstance(reasons, int) or reasons < 0:
        raise SettingsError(f"`reasons` must be a whole number of reason codes, 0 or more; got {reasons!r}.")
    for name, what in ((model_name, "model_name"), (score, "score"), (risk, "risk")):
        if (name is not None or what == "model_name") and (not isinstance(name, str) or not name):
            raise SettingsError(f"`{what}` must be a non-empty string; got {name!r}.")
    if score is not None and score == risk:
        raise SettingsError(f"`score` and `risk` must be different field names; both are {score!r}.")
    if horizon is None and getattr(model, "risk_map", None) == "cox":
        plan = card_plan(model, "PMML", horizon=model.horizons[0])
    else:
        plan = card_plan(model, "PMML", horizon=horizon)
    several = plan.risk.kind == "cox" and horizon is not None and np.ndim(horizon) > 0
    score, risk_names = _output_names(plan, score, risk, several)
    mixed = [v for v in plan.levels if v in plan.numeric]
    if mixed:
        raise SettingsError(f"PMML cannot read the variable `{mixed[0]}` both as a factor and as a number (a field "
                            "is categorical or continuous); refit with one of the two, or use the SQL export.")
    doc = _document(model, plan, model_name, score, risk_names, reasons)
    ET.indent(doc, space="  ")
    text = ET.tostring(doc, encoding="unicode", xml_declaration=False)
    text = '<?xml version="1.0" encoding="UTF-8"?>\n' + text + "\n"
    if path is not None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return text


def _output_names(plan, score, risk, several) -> tuple:
    """The score's output field name and the risk's (one per horizon when ``several``): a name
    given is refused when it is (or gives) a data field's name or the other output's; a default
    one takes a leading ``_`` while it is taken (PMML has one namespace for the data fields and
    the output fields: an evaluator fails on every row where a name is both)."""
    fields = set(plan.variables)
    labels = [plan.risk.label(k) for k in range(len(plan.risk.horizons))] if several else []

    def risks(prefix: str) -> list:
        return [f"{prefix}_{label}" for label in labels] if several else [prefix]

    for name, what in ((score, "score"), (risk, "risk")):
        clash = [n for n in (risks(name) if what == "risk" else [name]) if n in fields] if name is not None else []
        if clash:
            gives = f"gives the output field {clash[0]!r}, " if clash[0] != name else "is "
            raise SettingsError(
                f"`{what}={name!r}` {gives}the name of the model's input variable `{clash[0]}`: a PMML output "
                f"field cannot have a data field's name (an evaluator would fail on every row). Pass another "
                f"`{what}=` name, or leave `{what}` out for a default name that no variable has.")
    if score is not None and risk is not None and score in risks(risk):
        raise SettingsError(f"`score` and `risk` must give different field names; both give {score!r}.")
    if score is None:
        score = _unique("score", fields | set(risks(risk) if risk is not None else []))
    if risk is None:
        risk = "risk"
        while any(n in fields or n == score for n in risks(risk)):
            risk = "_" + risk
    return score, risks(risk)


def _document(model, plan, model_name, score, risk_names, reasons) -> ET.Element:
    root = _el("PMML", xmlns=NS, version="4.4")
    lines = provenance(model)
    header = _sub(root, "Header", description=visible(lines[0]), copyright="")
    _sub(header, "Application", name="riskformula", version=__version__)
    for line in lines[1:]:
        _sub(header, "Annotation").text = visible(line)

    types = {var: _level_type(var, levels) for var, levels in plan.levels.items()}
    dd = _sub(root, "DataDictionary", numberOfFields=str(len(plan.variables)))
    for var in plan.variables:
        if var in plan.levels:
            levels = plan.levels[var]
            f = _sub(dd, "DataField", name=var, optype="categorical", dataType=types[var])
            for v in levels:
                _sub(f, "Value", value=_text(v))
        elif var in plan.numeric:
            f = _sub(dd, "DataField", name=var, optype="continuous", dataType="double")
            _sub(f, "Interval", closure="closedClosed", leftMargin="-" + _MAX_DOUBLE, rightMargin=_MAX_DOUBLE)
        else:   # read only by its missing item: any value that is there will do
            _sub(dd, "DataField", name=var, optype="categorical", dataType="string")

    sc = _sub(root, "Scorecard", modelName=model_name, functionName="regression", useReasonCodes="true",
              reasonCodeAlgorithm="pointsAbove", initialScore="0", baselineMethod="min")
    ms = _sub(sc, "MiningSchema")
    for var in plan.variables:
        policy = plan.missing.get(var) or {}
        if not policy:
            _sub(ms, "MiningField", name=var, usageType="active", invalidValueTreatment="asMissing")
        elif policy["action"] == "item":
            _sub(ms, "MiningField", name=var, usageType="active", invalidValueTreatment="returnInvalid")
        else:
            _sub(ms, "MiningField", name=var, usageType="active", invalidValueTreatment="returnInvalid",
                 missingValueReplacement=_text(policy["value"]))
    _output(_sub(sc, "Output"), plan, score, risk_names, reasons, _codes(plan), taken=set(plan.variables))
    chars = _sub(sc, "Characteristics")
    codes = _codes(plan)
    terms = plan.terms()
    joined = _joined(terms, plan)
    kept = [t for t in terms if t not in joined.values()]
    # the card's contributions are per term, a joined missing item's counted with its variable's term
    baselines = dict(zip(kept, model.scorecard.contributions()))
    for term in kept:
        entries = terms[term]
        base = _baseline(term, entries, baselines[term], joined)
        variables = list(dict.fromkeys(f.variable for e in entries for f in e.factors))
        ch = _sub(chars, "Characteristic", name=term, reasonCode=codes[variables[0]], baselineScore=_num(base))
        for var in variables:           # a missing (or invalid) value: the score is missing
            if var not in plan.missing:
                a = _sub(ch, "Attribute")
                _sub(a, "SimplePredicate", field=var, operator="isMissing")
                _sub(_sub(a, "ComplexPartialScore"), "FieldRef", field=var)
        for var in variables:           # a missing value scored by a missing item: its points here, or 0
            if (plan.missing.get(var) or {}).get("action") == "item":
                own = terms[joined[term]] if term in joined else entries if _is_missing_term(entries) else []
                pts = sum(int(e.item.points) for e in own)
                _sub(_sub(ch, "Attribute", partialScore=_num(pts)), "SimplePredicate", field=var, operator="isMissing")
        _attributes(ch, entries, plan, types)
    if not plan.entries:                # a card without items: every score is 0
        ch = _sub(chars, "Characteristic", name="(no items)", reasonCode="(no items)", baselineScore="0")
        _sub(_sub(ch, "Attribute", partialScore="0"), "True")
    return root


def _baseline(term, entries, contribution, joined) -> float:
    """The fewest points a term gives a person whose value is there: a missing value is not a value
    a person can move to, so the principal reasons never count it as the best (a missing item's
    own characteristic: 0; a term joined with a missing item: its own items' fewest)."""
    if _is_missing_term(entries):
        return 0.0
    if term in joined:
        items = [e.item for e in entries]
        own = interval_points(items) if items[0].kind == "interval" else [0, *(it.points for it in items)]
        return float(min(own))
    return contribution[0] if isinstance(contribution, tuple) else float(min(contribution))


def _is_missing_term(entries) -> bool:
    return all(len(e.factors) == 1 and e.factors[0].kind == "missing" for e in entries)


def _joined(terms: dict, plan) -> dict:
    """term -> the missing item term counted with it: a variable's missing item and its one
    interval or level term are exclusive (a missing value meets none of the term's items), so one
    characteristic holds both, as :meth:`ScoreCard.contributions` counts them."""
    by_variable: dict = {}
    for term, entries in terms.items():
        if entries[0].item.kind != "missing" and entries[0].item.variable is not None:
            by_variable.setdefault(entries[0].item.variable, []).append(term)
    out = {}
    for term, entries in terms.items():
        if entries[0].item.kind == "missing":
            own = by_variable.get(entries[0].item.variable, [])
            if len(own) == 1 and all(e.item.kind in ("interval", "level") for e in terms[own[0]]):
                out[own[0]] = term
    return out


def _attributes(ch, entries, plan, types) -> None:
    kinds = {f.kind for e in entries for f in e.factors}
    if kinds == {"missing"}:            # a missing item of its own: 0 where the value is there
        _sub(_sub(ch, "Attribute", partialScore="0"), "True")
        return
    if kinds == {"interval"}:
        var = entries[0].factors[0].variable
        cuts = sorted({c for e in entries for c in (e.item.lower, e.item.upper) if c is not None})
        ends = [None, *cuts, None]
        region_points = interval_points([e.item for e in entries])  # the items may overlap: a region's sum
        for (lo, up), pts in zip(zip(ends[:-1], ends[1:]), region_points):
            a = _sub(ch, "Attribute", partialScore=_num(pts))
            conds = (([("greaterThan", lo)] if lo is not None else [])
                     + ([("lessOrEqual", up)] if up is not None else []))
            parent = _sub(a, "CompoundPredicate", booleanOperator="and") if len(conds) == 2 else a
            for op, c in conds:
                _sub(parent, "SimplePredicate", field=var, operator=op, value=_num(c))
        return
    if kinds == {"level"} and all(len(e.factors) == 1 for e in entries) \
            and len({e.factors[0].variable for e in entries}) == 1:
        var = entries[0].factors[0].variable
        for v in plan.levels[var]:
            pts = sum(int(e.item.points) for e in entries if _same(e.factors[0].value, v))
            a = _sub(ch, "Attribute", partialScore=_num(pts))
            _sub(a, "SimplePredicate", field=var, operator="equal", value=_text(v))
        return
    a = _sub(ch, "Attribute")
    _sub(a, "True")
    terms = [_times(_constant(int(e.item.points)), *(_factor(f, types) for f in e.factors)) for e in entries]
    _sub(a, "ComplexPartialScore").append(_apply("+", *terms) if len(terms) > 1 else terms[0])


def _factor(f, types) -> ET.Element:
    if f.kind == "linear":
        return _el("FieldRef", field=f.variable)
    if f.kind == "le":
        cond = _apply("lessOrEqual", _el("FieldRef", field=f.variable), _constant(f.value))
    else:
        # the field's data type (a level is one of the field's values)
        cond = _apply("equal", _el("FieldRef", field=f.variable), _el("Constant", dataType=types[f.variable]))
        cond[1].text = _text(f.value)
    return _apply("if", cond, _constant(1), _constant(0))


def _output(out, plan, score, risk_names, reasons, codes, taken=frozenset()) -> None:
    """The output fields; the names it makes up (the band's, the reason codes') avoid ``taken``
    (the data fields' names) and the other outputs'."""
    _sub(out, "OutputField", name=score, optype="continuous", dataType="double", feature="predictedValue")
    rm = plan.risk
    s = _el("FieldRef", field=score)
    risk = risk_names[0]
    taken = {*taken, score, *risk_names}
    if rm.kind == "cox":
        for name, H in zip(risk_names, rm.hazards):
            _sub(out, "OutputField", name=name, optype="continuous", dataType="double",
                 feature="transformedValue").append(_cox_risk(score, rm, H))
    elif rm.kind == "logistic":
        z = _apply("+", _constant(rm.intercept), s)
        if rm.scale != 1.0:
            z = _apply("/", z, _constant(float(rm.scale)))
        expr = _apply("/", _constant(1.0), _apply("+", _constant(1.0), _apply("exp", _apply("*", _constant(-1.0), z))))
        _sub(out, "OutputField", name=risk, optype="continuous", dataType="double",
             feature="transformedValue").append(expr)
    else:
        band = _unique(f"{risk}_band", taken)
        taken.add(band)
        # the model rounds a score to 9 decimals before it compares it with the cut-offs (which
        # are such rounded scores): score >= cut-off - 5e-10 is the same test
        always = sum(1 for c in rm.cutoffs if c == -math.inf)
        reach = [_apply("if", _apply("greaterOrEqual", _el("FieldRef", field=score),
                                     _constant(c if plan.integral else c - 5e-10)), _constant(1), _constant(0))
                 for c in rm.cutoffs if math.isfinite(c)]
        parts = ([_constant(always)] if always or not reach else []) + reach
        count = parts[0]
        for p in parts[1:]:
            count = _apply("+", count, p)
        _sub(out, "OutputField", name=band, optype="continuous", dataType="integer",
             feature="transformedValue").append(count)
        expr = _constant(float(rm.risks[-1]))
        for b in range(len(rm.risks) - 2, -1, -1):
            expr = _apply("if", _apply("equal", _el("FieldRef", field=band), _constant(b)),
                          _constant(float(rm.risks[b])), expr)
        _sub(out, "OutputField", name=risk, optype="continuous", dataType="double",
             feature="transformedValue").append(expr)
    n = min(reasons, len(set(codes.values())))
    for k in range(1, n + 1):
        name = _unique(f"reason_{k}", taken)
        taken.add(name)
        _sub(out, "OutputField", name=name, optype="categorical", dataType="string", feature="reasonCode",
             rank=str(k))


def _cox_risk(score: str, rm, H: float) -> ET.Element:
    """1 − exp(−H · exp(z)), z = (intercept + score) / scale, as 1 − exp(−exp(z + log H)) and 1
    beyond z + log H = 700 (so that no evaluator overflows); 0 for H = 0 (a horizon before the
    first event)."""
    if H <= 0:
        return _apply("*", _constant(0.0), _el("FieldRef", field=score))   # missing with the score
    z = _apply("+", _constant(rm.intercept), _el("FieldRef", field=score))
    if rm.scale != 1.0:
        z = _apply("/", z, _constant(float(rm.scale)))
    x = _apply("+", z, _constant(math.log(H)))
    risk = _apply("-", _constant(1.0), _apply("exp", _apply("*", _constant(-1.0), _apply("exp", x))))
    return _apply("if", _apply("greaterThan", copy.deepcopy(x), _constant(700.0)), _constant(1.0), risk)


def _codes(plan) -> dict:
    """variable -> its reason code: the feature, or the features an interaction links, joined."""
    group = {v: {v} for v in plan.variables}
    for e in plan.entries:
        vs = list(dict.fromkeys(f.variable for f in e.factors))
        merged = set().union(*(group[v] for v in vs))
        for v in merged:
            group[v] = merged
    order = {v: k for k, v in enumerate(plan.variables)}
    return {v: " & ".join(sorted(g, key=order.__getitem__)) for v, g in group.items()}  # every v is in order


# --- XML helpers ------------------------------------------------------------------------
def _el(tag: str, **attrs) -> ET.Element:
    return ET.Element(tag, {k: _xml_text(v) for k, v in attrs.items()})


def _sub(parent: ET.Element, tag: str, **attrs) -> ET.Element:
    child = _el(tag, **attrs)
    parent.append(child)
    return child


def _apply(function: str, *args) -> ET.Element:
    a = _el("Apply", function=function)
    a.extend(args)
    return a


def _times(*args) -> ET.Element:
    out = args[0]
    for a in args[1:]:
        out = _apply("*", out, a)
    return out


def _constant(v) -> ET.Element:
    c = _el("Constant", dataType="integer" if isinstance(v, int) and _INT32[0] <= v <= _INT32[1] else "double")
    c.text = _num(v)
    return c


def _num(v) -> str:
    if isinstance(v, bool):
        raise TypeError("a boolean is not a number here")
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 2 ** 53):
        return str(int(v))
    v = float(v)
    if not math.isfinite(v):
        raise DataError(f"cannot write the non-finite number {v!r} in PMML.")
    return repr(v)


def _text(v) -> str:
    """A level as PMML writes it: ``true``/``false``, a number, or the string."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return _num(v) if isinstance(v, int) else repr(float(v))
    return _xml_text(v)


def _type_of(v) -> str:
    return "boolean" if isinstance(v, bool) else "integer" if isinstance(v, int) else \
        "double" if isinstance(v, float) else "string"


def _level_type(var, levels) -> str:
    """The PMML data type of a factor's field: its levels' type, ``double`` for integers and
    decimals together.  PMML's ``integer`` is 32-bit (JPMML refuses 3000000001), so integers
    beyond it make the field ``double`` while every one is below 2⁵³ in magnitude: each level is
    then a double exactly, and so is every integer value below 2⁵³, while a value beyond rounds to
    a double of at least 2⁵³, so a value matches a level exactly when it equals it, as in
    ``predict``.  Beyond 2⁵³ the field is ``string``: it is only compared for equality with its
    levels, written as their digits, so an integer value matches exactly its own level (a value
    that comes as a floating-point number matches none and gets no score, never another level's
    points)."""
    types = {_type_of(v) for v in levels}
    if len(types) != 1 and not types <= {"integer", "double"}:
        raise SettingsError(f"PMML needs one data type per field; the levels of `{var}` mix "
                            f"{sorted(types)}. Convert the column to one type (e.g. str) and refit.")
    ints = [v for v in levels if _type_of(v) == "integer"]
    if all(_INT32[0] <= v <= _INT32[1] for v in ints):
        return types.pop() if len(types) == 1 else "double"
    if all(abs(v) < 2 ** 53 for v in ints):
        return "double"
    if types == {"integer"}:
        return "string"
    big = next(v for v in ints if abs(v) >= 2 ** 53)
    raise SettingsError(f"PMML cannot give the levels of `{var}` one data type: the integer {big} is beyond 2**53 "
                        "(no double holds it exactly) and other levels are decimals. Convert the column to one "
                        "type (e.g. str) and refit.")


def _same(a, b) -> bool:
    """Equal as the level rule compares (``==``), a boolean level never matching a number."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def _xml_text(text) -> str:
    text = str(text)
    bad = [c for c in text if (ord(c) < 32 and c not in "\t\n\r") or 0xD800 <= ord(c) <= 0xDFFF
           or ord(c) in (0xFFFE, 0xFFFF)]
    if bad:
        raise DataError(f"{text[:80]!r} holds the character {bad[0]!r}, which an XML document cannot hold.")
    return text


def _unique(name: str, taken: set) -> str:
    while name in taken:
        name = "_" + name
    return name
