"""The design spec as JSON, and back: what :mod:`riskformula.io` stores to score new data.

The formula, outcome coding, design columns with labels, the threshold terms' cut points and
the constants the formula takes from ``context=`` are stored as they are; functions passed as
``context=`` cannot be, so they are named and must be passed again when loading.

Scoring new data needs formulaic's :class:`~formulaic.ModelSpec`. It is stored as JSON too:
its formula, its materializer options, the state of stateful transforms (``center``, ``bs``,
``poly``...) and the levels of every categorical factor, which is all formulaic reads when it
re-encodes data (it rebuilds the rest of the spec from the formula). Only when that state
holds something JSON cannot express (e.g. an object from a user transform) is the spec
embedded as a base64 pickle, labelled as such; loading refuses it unless ``allow_pickle=True``,
because unpickling untrusted text can run code.
"""

from __future__ import annotations

import base64
import pickle

from .._json import decode, encode
from ..errors import DataError, FormulaError
from ..thresholds import FORMULA_FUNCTIONS, ThresholdTerm, threshold_terms
from .spec import DesignSpec

__all__ = ["spec_to_json", "spec_from_json", "model_spec_to_json", "model_spec_from_json"]


def spec_to_json(spec: DesignSpec) -> dict:
    """The ``formula``, ``outcome`` and ``design`` fields of a saved model's document."""
    return {
        "formula": spec.formula,
        "outcome": {"name": spec.outcome, "event": encode(_plain(spec.event)),
                    "levels": encode([_plain(v) for v in spec.levels])},
        "design": {"columns": list(spec.columns), "labels": list(spec.labels),
                   "column_terms": list(spec.column_terms), "variables": list(spec.variables),
                   "thresholds": _thresholds_to_json(spec), "context": _context_to_json(spec),
                   "rhs_spec": model_spec_to_json(spec.model_spec),
                   "lhs_spec": model_spec_to_json(spec.lhs_model_spec)},
    }


def spec_from_json(doc: dict, allow_pickle: bool, context: dict | None = None) -> DesignSpec:
    """The :class:`DesignSpec` of a saved model's document (see :func:`spec_to_json`);
    ``context`` holds the functions the formula uses that the document could not store."""
    des, out = doc["design"], doc["outcome"]
    user_context = context or {}
    model_spec = model_spec_from_json(des["rhs_spec"], allow_pickle)
    stored = des.get("context", {"values": {}, "not_stored": {}})
    return DesignSpec(formula=doc["formula"], model_spec=model_spec,
                      lhs_model_spec=model_spec_from_json(des["lhs_spec"], allow_pickle),
                      columns=des["columns"], labels=des["labels"], column_terms=des["column_terms"],
                      variables=des["variables"], outcome=out["name"], event=decode(out["event"]),
                      levels=tuple(decode(out["levels"])), thresholds=_thresholds_from_json(des, model_spec),
                      context={**FORMULA_FUNCTIONS, **decode(stored["values"]), **user_context},
                      unresolved_context={k: v for k, v in stored["not_stored"].items() if k not in user_context})


def _thresholds_to_json(spec: DesignSpec) -> list:
    """The threshold()/cut() terms: their cut points and the design columns of those cuts.

    ``predict`` needs them: the points of a term's top interval are kept out of the printed
    intercept (see :func:`riskformula.thresholds.levels`) and added back to every score."""
    return [{"term": t.term, "variable": t.variable, "kind": t.kind, "cuts": [float(c) for c in t.cuts],
             "columns": [spec.columns[j] for j in t.columns], "k": int(t.k), "on_grid": bool(t.on_grid),
             "n_distinct": None if t.n_distinct is None else int(t.n_distinct)} for t in spec.thresholds]


def _thresholds_from_json(des: dict, model_spec) -> list:
    columns = des["columns"]
    if "thresholds" not in des:
        # documents written before the terms were stored: the cuts are in the encoder state
        terms = threshold_terms(model_spec, columns, des["column_terms"]) if model_spec is not None else []
        out = []
        for t in terms:
            kept = [(c, j) for c, j in zip(t.cuts, t.columns) if j is not None]
            out.append(ThresholdTerm(t.term, t.variable, t.kind, tuple(c for c, _ in kept),
                                     tuple(j for _, j in kept), t.k, t.on_grid, t.n_distinct))
        return out
    where = {c: j for j, c in enumerate(columns)}
    unknown = [c for t in des["thresholds"] for c in t["columns"] if c not in where]
    if unknown:
        raise DataError(f"the document's threshold terms name {unknown[:5]}, which are not design columns; "
                        "it is inconsistent or was edited.")
    return [ThresholdTerm(term=t["term"], variable=t["variable"], kind=t["kind"], cuts=tuple(t["cuts"]),
                          columns=tuple(where[c] for c in t["columns"]), k=int(t["k"]),
                          on_grid=bool(t["on_grid"]), n_distinct=t["n_distinct"]) for t in des["thresholds"]]


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


def _plain(v):
    return v.item() if hasattr(v, "item") else v


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
                        f"expressible in JSON ({e}); load with from_json(text, allow_pickle=True) "
                        "only if you trust this file.",
                "formula": str(spec.formula),
                "data": base64.b64encode(blob).decode("ascii")}


def model_spec_from_json(d: dict | None, allow_pickle: bool):
    if d is None:
        return None
    if d.get("encoding") == "pickle-base64":
        if not allow_pickle:
            raise DataError("this model's formula encoder is stored as a Python pickle (its "
                            f"formula {d.get('formula')!r} uses a transform whose state JSON cannot "
                            "hold). Unpickling can run code: pass allow_pickle=True only if you "
                            "trust the file.")
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
