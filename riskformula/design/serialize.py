"""The design spec as JSON, and back: what :mod:`riskformula.io` stores to score new data.

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
from ..errors import DataError
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
                   "rhs_spec": model_spec_to_json(spec.model_spec),
                   "lhs_spec": model_spec_to_json(spec.lhs_model_spec)},
    }


def spec_from_json(doc: dict, allow_pickle: bool) -> DesignSpec:
    """The :class:`DesignSpec` of a saved model's document (see :func:`spec_to_json`)."""
    des, out = doc["design"], doc["outcome"]
    model_spec = model_spec_from_json(des["rhs_spec"], allow_pickle)
    return DesignSpec(formula=doc["formula"], model_spec=model_spec,
                      lhs_model_spec=model_spec_from_json(des["lhs_spec"], allow_pickle),
                      columns=des["columns"], labels=des["labels"], column_terms=des["column_terms"],
                      variables=des["variables"], outcome=out["name"], event=decode(out["event"]),
                      levels=tuple(decode(out["levels"])))


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
            raise TypeError(f"cannot save this model: its formula encoder holds state that neither JSON "
                            f"({e}) nor pickle ({e2}) can store.") from None
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
