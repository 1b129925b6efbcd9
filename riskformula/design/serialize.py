"""The design spec as JSON, and back: what :mod:`riskformula.io` stores to score new data.

Every design column is stored with its declarative rule (:mod:`riskformula.design.rules`): a cut,
a level, a variable's value or a product of those.  A model whose columns and outcome are all
declarative scores new data from these rules alone, and loading it never evaluates text.

Columns that only formulaic can compute (``np.log(x)``, a user's function: rule ``expression``)
need formulaic's :class:`~formulaic.ModelSpec`, which is stored beside them under
``expressions`` — as JSON (its formula, materializer options, the state of stateful transforms and
the levels of every categorical factor), or as a base64 pickle when that state holds something
JSON cannot.  Either way it evaluates the formula's text, which is Python: a document with
expressions loads only with ``trusted=True``.
"""

from __future__ import annotations

import base64
import builtins
import math
import pickle

from .. import _doc
from .._json import decode, encode
from ..errors import DataError, FormulaError
from ..thresholds import FORMULA_FUNCTIONS, ThresholdTerm
from .guard import check_formula_code
from .labels import design_labels
from .missing import missing_term
from .rules import outcome_from_dict, rule_from_dict
from .spec import DesignSpec
from .._json import plain as _plain

__all__ = ["design_to_json", "design_from_json", "model_spec_to_json", "model_spec_from_json"]

#: the most design columns (and threshold cuts) a document may hold
MAX_COLUMNS = 100_000


def _level(v, what: str):
    v = _plain(v)
    if isinstance(v, (str, bool, int)) or (isinstance(v, float) and math.isfinite(v)):
        return v
    raise FormulaError(f"cannot save this model: {what} has the level {v!r} ({type(v).__name__}); a saved score "
                       "holds levels as strings, numbers or booleans. Convert the column first (e.g. to str).")


def design_to_json(spec: DesignSpec) -> dict:
    """The ``outcome`` and ``design`` fields of a saved model's document (and ``expressions``,
    formulaic's specs, when a column or the outcome is an expression)."""
    rules = []
    for name, r in zip(spec.columns, spec.rules):
        d = r.to_dict()
        if r.kind == "level":
            d["value"] = _level(r.value, f"the column {name!r}")
        for part in d.get("parts", []):
            if part["kind"] == "level":
                part["value"] = _level(part["value"], f"the column {name!r}")
        rules.append(d)
    rule = spec.outcome_rule
    out = {
        "outcome": {"name": spec.outcome, "event": _level(spec.event, "the outcome"),
                    "levels": [_level(v, "the outcome") for v in spec.levels],
                    "rule": None if rule is None else {**rule.to_dict(), "value": None if rule.op is None
                                                       else _level(rule.value, "the outcome")},
                    **({} if spec.survival is None else {"survival": list(spec.survival)})},
        "design": {"columns": [{"name": c, "label": lab, "term": t, "rule": r}
                               for c, lab, t, r in zip(spec.columns, spec.labels, spec.column_terms, rules)],
                   "variables": list(spec.variables),
                   "categories": {v: [_level(x, f"the variable {v!r}") for x in cats]
                                  for v, cats in spec.categories.items()},
                   "thresholds": _thresholds_to_json(spec),
                   "missing": {v: _missing_to_json(v, p) for v, p in spec.missing.items()}},
    }
    if not spec.declarative:
        out["expressions"] = {"rhs_spec": model_spec_to_json(spec.model_spec),
                              "lhs_spec": model_spec_to_json(spec.lhs_model_spec),
                              "context": _context_to_json(spec)}
    return out


def design_from_json(doc: dict, trusted: bool, context: dict | None = None) -> DesignSpec:
    """The :class:`DesignSpec` of a saved model's document (see :func:`design_to_json`), checked
    field by field.  Columns or an outcome that only formulaic can compute are refused unless
    ``trusted``; ``context`` then holds the functions their formula uses."""
    formula = _doc.text(_doc.field(doc, "formula", "$"), "$.formula")
    des = _doc.only(_doc.obj(_doc.field(doc, "design", "$"), "$.design"),
                    ("columns", "variables", "categories", "thresholds", "missing"), "$.design")
    out = _doc.only(_doc.obj(_doc.field(doc, "outcome", "$"), "$.outcome"),
                    ("name", "event", "levels", "rule", "survival"), "$.outcome")
    cols = _doc.array(_doc.field(des, "columns", "$.design"), "$.design.columns", MAX_COLUMNS)
    names, labels, terms, rules = [], [], [], []
    for i, c in enumerate(cols):
        path = f"$.design.columns[{i}]"
        c = _doc.only(_doc.obj(c, path), ("name", "label", "term", "rule"), path)
        names.append(_doc.text(_doc.field(c, "name", path), path + ".name"))
        labels.append(_doc.text(_doc.field(c, "label", path), path + ".label"))
        terms.append(_doc.text(_doc.field(c, "term", path), path + ".term", optional=True))
        rules.append(rule_from_dict(_doc.field(c, "rule", path), path + ".rule"))
    if len(set(names)) != len(names):
        raise _doc.fail("$.design.columns", "column names must be distinct", sorted(n for n in names
                                                                                   if names.count(n) > 1)[:3])
    variables = [_doc.text(v, f"$.design.variables[{i}]") for i, v in
                 enumerate(_doc.array(_doc.field(des, "variables", "$.design"), "$.design.variables", MAX_COLUMNS))]
    cats = _doc.obj(_doc.field(des, "categories", "$.design"), "$.design.categories")
    categories = {}
    for v, levels in cats.items():
        path = f"$.design.categories[{v!r}]"
        levels = [_doc.level(x, path) for x in _doc.array(levels, path, MAX_COLUMNS)]
        if len(set(map(repr, levels))) != len(levels) or not levels:
            raise _doc.fail(path, "expected distinct levels", levels)
        categories[v] = tuple(levels)
    for i, r in enumerate(rules):
        for part in (r.parts if r.kind == "product" else (r,)):
            if part.kind == "level" and (part.variable not in categories
                                         or part.value not in categories[part.variable]):
                raise _doc.fail(f"$.design.columns[{i}].rule", f"the level is not one of the variable's categories "
                                f"({short_levels(categories.get(part.variable))})", part.value)
    thresholds = _thresholds_from_json(des, names, rules)
    missing = _missing_from_json(_doc.field(des, "missing", "$.design"), variables, rules, categories)
    # the labels the card prints: rebuilt from the rules, never read (a stored label must be the rule's)
    rebuilt = design_labels(names, rules, thresholds)
    for i, (name, given, rule, label) in enumerate(zip(names, labels, rules, rebuilt)):
        if given != label:
            raise _doc.fail(f"$.design.columns[{i}].label", f"the label must be the column's own, {label!r}, built "
                            "from its rule", given)
        if not _name_fits(name, rule):
            raise _doc.fail(f"$.design.columns[{i}].name", f"the column name does not name what its rule computes "
                            f"({label})", name)
    labels = rebuilt
    name = _doc.text(_doc.field(out, "name", "$.outcome"), "$.outcome.name")
    levels = [_doc.level(v, "$.outcome.levels") for v in _doc.array(_doc.field(out, "levels", "$.outcome"),
                                                                     "$.outcome.levels", 2)]
    if len(levels) != 2 or levels[0] == levels[1]:
        raise _doc.fail("$.outcome.levels", "expected the two outcome levels seen in training", levels)
    event = _doc.level(_doc.field(out, "event", "$.outcome"), "$.outcome.event")
    if not any(type(v) is type(event) and v == event for v in levels):
        # of the same type too: a fit stores its level as the data hold it (True, not 1; 1.0, not 1)
        raise _doc.fail("$.outcome.event", f"the event must be one of the outcome levels {levels}, of the same "
                        "type (True is not 1)", event)
    survival = None
    if out.get("survival") is not None:
        pair = [_doc.text(c, "$.outcome.survival") for c in _doc.array(out["survival"], "$.outcome.survival", 2)]
        if len(pair) != 2 or pair[0] == pair[1]:
            raise _doc.fail("$.outcome.survival", "expected the two distinct columns of Surv(time, event)", pair)
        survival = tuple(pair)
    raw_rule = _doc.field(out, "rule", "$.outcome")
    outcome_rule = None if raw_rule is None else outcome_from_dict(raw_rule, "$.outcome.rule")
    expressions = [names[j] for j, r in enumerate(rules) if not r.declarative]
    model_spec = lhs_spec = None
    ctx: dict = dict(FORMULA_FUNCTIONS)
    unresolved: dict = {}
    if expressions or outcome_rule is None:
        what = (f"the design column(s) {expressions[:5]}{'...' if len(expressions) > 5 else ''}" if expressions
                else "the outcome")
        if not trusted:
            raise DataError(f"this model computes {what} with Python expressions from its formula {formula!r}, "
                            "which loading would evaluate. Load it with rf.from_json(text, trusted=True) only if you "
                            "trust the file (a score whose terms are cuts, levels and variables loads without it).")
        ex = _doc.obj(_doc.field(doc, "expressions", "$"), "$.expressions")
        stored = _doc.obj(ex.get("context", {"values": {}, "not_stored": {}}), "$.expressions.context")
        user = context or {}
        ctx.update({**decode(stored.get("values", {})), **user})
        # even a trusted file's terms are read before they run; a name of the fit's context= that
        # was not stored (a module) is the caller's to pass at load, never a builtin
        named = {k: None for k in stored.get("not_stored", {}) if isinstance(k, str) and not hasattr(builtins, k)}
        for key in ("rhs_spec", "lhs_spec"):
            _check_stored_terms(ex.get(key), variables, {**named, **ctx}, f"$.expressions.{key}")
        model_spec = model_spec_from_json(ex.get("rhs_spec"))
        lhs_spec = model_spec_from_json(ex.get("lhs_spec"))
        unresolved = {k: v for k, v in stored.get("not_stored", {}).items() if k not in user}
    return DesignSpec(formula=formula, model_spec=model_spec, lhs_model_spec=lhs_spec, columns=tuple(names),
                      labels=tuple(labels), column_terms=tuple(terms), variables=tuple(variables), outcome=name,
                      event=event, levels=tuple(levels), thresholds=tuple(thresholds), context=ctx,
                      unresolved_context=unresolved, rules=tuple(rules),
                      categories=categories, outcome_rule=outcome_rule, missing=missing, survival=survival)


def _name_fits(name: str, rule) -> bool:
    """Whether the design column ``name`` (as formulaic wrote it) can be the column of ``rule``: a
    level's name ends with the level (``C(sex)[T.m]``), a value's holds its variable, a missing
    item's is ``missing(x)`` (a cut's name is its term's: its label comes from the rule)."""
    if rule.kind == "missing":
        return name == missing_term(rule.variable)
    if rule.kind == "level":
        return name.endswith((f"[T.{rule.value}]", f"[{rule.value}]"))
    if rule.kind == "linear":
        return rule.variable in name
    if rule.kind == "product":
        levels = [p for p in rule.parts if p.kind == "level"]
        return (all(p.variable in name for p in rule.parts)
                and all(f"[T.{p.value}]" in name or f"[{p.value}]" in name for p in levels))
    return True


def _missing_to_json(v: str, policy: dict) -> dict:
    out = dict(policy)
    if "value" in out:
        out["value"] = _level(out["value"], f"the value missing `{v}` counts as")
    return out


def _missing_from_json(raw, variables: list, rules: list, categories: dict) -> dict:
    """The design's ``missing`` policies, checked against its columns: a variable scored by a missing
    item has exactly one ``missing`` column, and every ``missing`` column has such a variable."""
    path = "$.design.missing"
    out = {}
    for v, p in _doc.obj(raw, path).items():
        at = f"{path}[{v!r}]"
        if v not in variables:
            raise _doc.fail(at, "expected a variable of the design", v)
        p = _doc.obj(p, at)
        action = _doc.field(p, "action", at)
        if action == "as":
            _doc.only(p, ("action", "value"), at)
            value = _doc.level(_doc.field(p, "value", at), at + ".value")
            if v in categories and value not in categories[v]:
                raise _doc.fail(at + ".value", "a missing value counts as one of the variable's levels", value)
            out[v] = {"action": "as", "value": value}
        elif action in ("item", "drop"):
            _doc.only(p, ("action", "seen") if action == "item" else ("action",), at)
            out[v] = {"action": action}
            if action == "item" and "seen" in p:
                if p["seen"] is not False:
                    raise _doc.fail(at + ".seen", "expected false (no missing values in training) or no field",
                                    p["seen"])
                out[v]["seen"] = False
        else:
            raise _doc.fail(at + ".action", "expected \"item\", \"as\" or \"drop\"", action)
    items = [r.variable for r in rules if r.kind == "missing"]
    scored = [v for v, p in out.items() if p["action"] == "item" and p.get("seen", True)]
    if sorted(items) != sorted(scored):
        raise _doc.fail(path, "each variable fitted with missing=\"item\" needs one missing column, and each missing "
                        "column such a variable", {"columns": items, "variables": scored})
    return out


def short_levels(levels) -> str:
    if not levels:
        return "none"
    return ", ".join(map(repr, list(levels)[:6])) + (", ..." if len(levels) > 6 else "")


def _thresholds_to_json(spec: DesignSpec) -> list:
    """The threshold()/cut() terms: their candidate cuts and the design columns of those cuts."""
    return [{"term": t.term, "variable": t.variable, "kind": t.kind, "cuts": [float(c) for c in t.cuts],
             "columns": [spec.columns[j] for j in t.columns], "k": int(t.k), "on_grid": bool(t.on_grid),
             "n_distinct": None if t.n_distinct is None else int(t.n_distinct)} for t in spec.thresholds]


def _thresholds_from_json(des: dict, names: list, rules: list) -> list:
    where = {c: j for j, c in enumerate(names)}
    out, seen = [], set()
    terms = _doc.array(_doc.field(des, "thresholds", "$.design"), "$.design.thresholds", MAX_COLUMNS)
    for i, t in enumerate(terms):
        path = f"$.design.thresholds[{i}]"
        t = _doc.only(_doc.obj(t, path), ("term", "variable", "kind", "cuts", "columns", "k", "on_grid", "n_distinct"),
                      path)
        term = _doc.text(_doc.field(t, "term", path), path + ".term")
        variable = _doc.text(_doc.field(t, "variable", path), path + ".variable")
        kind = _doc.field(t, "kind", path)
        if kind not in ("threshold", "cut"):
            raise _doc.fail(path + ".kind", "expected \"threshold\" or \"cut\"", kind)
        cuts = [float(_doc.number(c, f"{path}.cuts")) for c in _doc.array(_doc.field(t, "cuts", path), path + ".cuts",
                                                                    MAX_COLUMNS)]
        cols = [_doc.text(c, f"{path}.columns") for c in _doc.array(_doc.field(t, "columns", path),
                                                                     path + ".columns", MAX_COLUMNS)]
        if not cuts or len(cuts) != len(cols) or any(a >= b for a, b in zip(cuts, cuts[1:])):
            raise _doc.fail(path + ".cuts", "expected increasing cut points, one per column", cuts[:10])
        idx = []
        for c, cut in zip(cols, cuts):
            j = where.get(c)
            if j is None or j in seen:
                raise _doc.fail(path + ".columns", "expected design columns of this term only", c)
            r = rules[j]
            if r.kind == "le" and (r.variable != variable or r.value != cut):
                raise _doc.fail(path + ".columns", f"the column {c!r} must be the cut {variable} ≤ {cut:g}",
                                r.to_dict())
            if r.kind not in ("le", "expression"):
                raise _doc.fail(path + ".columns", f"the column {c!r} must be a cut", r.to_dict())
            seen.add(j)
            idx.append(j)
        k = _doc.integer(_doc.field(t, "k", path), path + ".k", 1, len(cuts))
        n_distinct = _doc.field(t, "n_distinct", path)
        if n_distinct is not None or kind == "threshold":
            _doc.integer(n_distinct, path + ".n_distinct", len(cuts) + 1 if kind == "threshold" else 0)
        out.append(ThresholdTerm(term=term, variable=variable, kind=kind, cuts=tuple(cuts), columns=tuple(idx), k=k,
                                 on_grid=_doc.boolean(_doc.field(t, "on_grid", path), path + ".on_grid"),
                                 n_distinct=n_distinct,
                                 missing_item=any(r.kind == "missing" and r.variable == variable for r in rules)))
    if len({t.term for t in out}) != len(out):
        raise _doc.fail("$.design.thresholds", "expected each threshold term once", [t.term for t in out][:5])
    return out


def _context_to_json(spec: DesignSpec) -> dict:
    """The user's ``context=`` names the formula uses: JSON values stored, functions named only."""
    user = {k: v for k, v in spec.context.items() if FORMULA_FUNCTIONS.get(k) is not v}
    used = set()
    for ms in (spec.model_spec, spec.lhs_model_spec):
        try:
            # `mm.exp(x)` takes `mm` from the context
            used |= ({v.split(".")[0] for v in ms.variables_by_source.get("context", ())}
                     if ms is not None else set())
        except (AttributeError, RuntimeError):
            used |= set(user)  # a spec rebuilt from a document knows its terms, not their sources
    values, not_stored = {}, dict(spec.unresolved_context)
    for k in sorted(set(user) & used):
        try:
            values[k] = encode(user[k])
        except TypeError:
            v = user[k]
            qualname = getattr(v, "__qualname__", None)
            where = f"{getattr(v, '__module__', '')}.{qualname}" if qualname else getattr(v, "__name__", "")
            not_stored[k] = f"{type(v).__name__} {where}".strip()
    return {"values": values, "not_stored": not_stored}



def model_spec_to_json(spec) -> dict | None:
    """The parts of a ModelSpec that re-encode new data, as JSON (base64 pickle as a last resort)."""
    if spec is None:
        return None
    try:
        if not isinstance(spec.materializer, str):
            raise TypeError("the materializer is a class, not a registered name")
        encoders = {}
        for factor, (kind, state) in spec.encoder_state.items():
            # formulaic reads only the categories back from the encoder state; the contrasts
            # it rebuilds from the formula text (e.g. C(x, contr.treatment("b")))
            encoders[str(factor)] = {"kind": kind.value,
                                     "categories": encode(list(state["categories"]))
                                     if "categories" in state else None}
        # the term list, not the formula text: re-parsing text would add an intercept to
        # the outcome side (``I(y == "yes")``) that the original spec does not have
        return {"encoding": "json", "formula": str(spec.formula),
                "terms": [str(t) for t in spec.formula],
                "materializer": spec.materializer,
                "materializer_params": encode(dict(spec.materializer_params or {})),
                "ensure_full_rank": bool(spec.ensure_full_rank), "na_action": spec.na_action.value,
                "output": spec.output, "cluster_by": spec.cluster_by.value,
                "transform_state": encode(dict(spec.transform_state)), "encoder_state": encoders}
    except (TypeError, AttributeError) as e:
        try:
            blob = pickle.dumps(spec)
        except Exception as e2:
            raise FormulaError(f"cannot save this model: a transform in its formula holds state that neither "
                               f"JSON ({e}) nor pickle ({e2}) can store; use a transform whose state is numbers, "
                               "strings or arrays.") from None
        return {"encoding": "pickle-base64",
                "note": f"formulaic ModelSpec stored as a Python pickle because its state is not "
                        f"expressible in JSON ({e}); load with from_json(text, trusted=True) "
                        "only if you trust this file.",
                "formula": str(spec.formula),
                "data": base64.b64encode(blob).decode("ascii")}


def _check_stored_terms(d, variables, context: dict, path: str) -> None:
    """The stored encoder's formula terms checked by the formula guard before formulaic evaluates
    them (a pickled encoder is a trusted file's own choice: loading a pickle can run code)."""
    if not isinstance(d, dict) or d.get("encoding") != "json":
        return
    terms = d.get("terms")
    if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
        raise _doc.fail(path + ".terms", "expected the formula's terms as strings", terms)
    try:
        check_formula_code("_ ~ " + " + ".join(terms or ["1"]), [*variables, "_"], context)
    except FormulaError as e:
        raise _doc.fail(path + ".terms", f"a term runs code a formula may not ({e})", terms) from None


def model_spec_from_json(d: dict | None):
    """formulaic's ModelSpec from its stored form (only for a trusted document: formulaic evaluates
    the formula's text, and a pickle can run code when it is loaded)."""
    if d is None:
        return None
    if not isinstance(d, dict):
        raise _doc.fail("$.expressions", "expected a stored formula encoder", d)
    try:
        if d.get("encoding") == "pickle-base64":
            return pickle.loads(base64.b64decode(d["data"]))
        if d.get("encoding") != "json":
            raise DataError(f"unknown formula-encoder encoding {d.get('encoding')!r} in the document.")
        from formulaic import ModelSpec
        from formulaic.parser.types import Factor

        encoders = {f: (Factor.Kind(e["kind"]),
                        {} if e["categories"] is None else {"categories": decode(e["categories"])})
                    for f, e in d["encoder_state"].items()}
        return ModelSpec(formula=list(d["terms"]), materializer=d["materializer"],
                         materializer_params=decode(d["materializer_params"]),
                         ensure_full_rank=d["ensure_full_rank"], na_action=d["na_action"],
                         output=d["output"], cluster_by=d["cluster_by"],
                         transform_state=decode(d["transform_state"]), encoder_state=encoders)
    except DataError:
        raise
    except Exception as e:  # a trusted but corrupt encoder: say so in one message
        raise DataError(f"the document's stored formula encoder could not be read ({type(e).__name__}: {e}).") from None
