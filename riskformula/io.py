"""Save a fitted risk score as plain JSON and load it back (:func:`to_json`, :func:`from_json`).

The document is ordinary JSON (no NaN/Infinity literals) that a person or another language
can read (tuples, arrays, non-finite floats and non-string dict keys inside the formula
encoder's state are tagged ``__tuple__``, ``__ndarray__``, ``__float__``, ``__items__``): formula, outcome coding, design columns with readable labels, points, intercept,
the per-term score contributions behind the score-to-risk table, the optimality certificate,
the fit settings and the package version. No training data are stored.

Scoring new data needs formulaic's :class:`~formulaic.ModelSpec`. It is stored as JSON too:
its formula, its materializer options, the state of stateful transforms (``center``, ``bs``,
``poly``...) and the levels of every categorical factor, which is all formulaic reads when it
re-encodes data (it rebuilds the rest of the spec from the formula). Only when that state
holds something JSON cannot express (e.g. an object from a user transform) is the spec
embedded as a base64 pickle, labelled as such; :func:`from_json` then refuses to load it
unless ``allow_pickle=True``, because unpickling untrusted text can run code.
"""

from __future__ import annotations

import base64
import json
import math
import pickle
from dataclasses import asdict

import numpy as np

from .errors import DataError
from .formula import Design
from .model import FitSettings, RiskScore, _plain
from .solver import SolverReport

__all__ = ["to_json", "from_json"]

#: identifies riskformula documents; bump FORMAT_VERSION on incompatible layout changes
FORMAT = "riskformula/risk-score"
FORMAT_VERSION = 1

_REPORT_FIELDS = ("status", "objective", "lower_bound", "gap", "time", "nodes", "cuts",
                  "lp_solves", "root_bound", "solver", "settings")


# --------------------------------------------------------------------------------------
# JSON encoding of Python/numpy values, with tags for what plain JSON would lose
# --------------------------------------------------------------------------------------


def _encode(v):
    """Plain JSON value of ``v``; tuples, arrays and non-finite floats are tagged so that
    :func:`_decode` restores them exactly. Raises TypeError for anything else."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, np.generic):
        v = v.item()
        if not isinstance(v, (bool, int, float, str)):
            raise TypeError(f"cannot store numpy value {v!r} as JSON")
        return _encode(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"__float__": repr(v)}
    if isinstance(v, np.ndarray):
        if v.dtype.kind not in "biuf":
            raise TypeError(f"cannot store a {v.dtype} array as JSON")
        return {"__ndarray__": [_encode(x) for x in v.ravel().tolist()], "dtype": str(v.dtype),
                "shape": list(v.shape)}
    if isinstance(v, tuple):
        return {"__tuple__": [_encode(x) for x in v]}
    if isinstance(v, list):
        return [_encode(x) for x in v]
    if isinstance(v, dict):
        if not all(isinstance(k, str) for k in v):
            # e.g. poly()'s state {0: alpha0, 1: alpha1}: keep the keys' types as pairs
            return {"__items__": [[_encode(k), _encode(x)] for k, x in v.items()]}
        return {k: _encode(x) for k, x in v.items()}
    raise TypeError(f"cannot store {type(v).__name__} as JSON")


def _decode(v):
    if isinstance(v, list):
        return [_decode(x) for x in v]
    if isinstance(v, dict):
        if "__float__" in v:
            return float(v["__float__"])
        if "__tuple__" in v:
            return tuple(_decode(x) for x in v["__tuple__"])
        if "__items__" in v:
            return {_hashable(_decode(k)): _decode(x) for k, x in v["__items__"]}
        if "__ndarray__" in v:
            return np.array(_decode(v["__ndarray__"]), dtype=v["dtype"]).reshape(v["shape"])
        return {k: _decode(x) for k, x in v.items()}
    return v


def _hashable(k):
    return tuple(_hashable(x) for x in k) if isinstance(k, list) else k


# --------------------------------------------------------------------------------------
# formulaic ModelSpec
# --------------------------------------------------------------------------------------


def spec_to_json(spec) -> dict | None:
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
                                     "categories": _encode(list(state["categories"]))
                                     if "categories" in state else None}
        # the term list, not the formula text: re-parsing text would add an intercept to
        # the outcome side (``I(y == "yes")``) that the original spec does not have
        return {"encoding": "json", "formula": str(spec.formula),
                "terms": [str(t) for t in spec.formula],
                "materializer": spec.materializer,
                "materializer_params": _encode(dict(spec.materializer_params or {})),
                "ensure_full_rank": bool(spec.ensure_full_rank), "na_action": spec.na_action.value,
                "output": spec.output, "cluster_by": spec.cluster_by.value,
                "transform_state": _encode(dict(spec.transform_state)), "encoder_state": encoders}
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


def spec_from_json(d: dict | None, allow_pickle: bool):
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
                    {} if e["categories"] is None else {"categories": _decode(e["categories"])})
                for f, e in d["encoder_state"].items()}
    return ModelSpec(formula=list(d["terms"]), materializer=d["materializer"],
                     materializer_params=_decode(d["materializer_params"]),
                     ensure_full_rank=d["ensure_full_rank"], na_action=d["na_action"],
                     output=d["output"], cluster_by=d["cluster_by"],
                     transform_state=_decode(d["transform_state"]), encoder_state=encoders)


# --------------------------------------------------------------------------------------
# the document
# --------------------------------------------------------------------------------------


def to_dict(model: RiskScore) -> dict:
    """The JSON document of ``model`` as a Python dict (see :func:`to_json`)."""
    from . import __version__

    d = model.design
    rep = model.solver
    cert = {k: getattr(rep, k) for k in _REPORT_FIELDS}
    try:
        cert["settings"] = _encode(dict(cert["settings"]))
    except TypeError:
        cert["settings"] = {}  # solver options are informative only; never block saving
    for k in ("objective", "lower_bound", "gap", "time", "root_bound"):
        cert[k] = _encode(float(cert[k]))
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "riskformula_version": __version__,
        "formula": model.formula,
        "outcome": {"name": model.outcome, "event": _encode(_plain(model.event)),
                    "levels": _encode([_plain(v) for v in d.levels])},
        "risk": "1 / (1 + exp(-(intercept + score))); score = sum of points x design column",
        "intercept": model.intercept,
        "points": {c: int(p) for c, p in model.coef.items()},
        "design": {"columns": list(d.columns), "labels": list(d.labels),
                   "column_terms": list(d.column_terms), "variables": list(d.variables),
                   "rhs_spec": spec_to_json(d.spec), "lhs_spec": spec_to_json(d.lhs_spec)},
        # distinct score contributions of each used term in training: the score-to-risk table
        "term_contributions": [[float(x) for x in c] for c in model._term_contributions],
        "training": {"nobs": model.nobs, "events": model.events, "rows_dropped": model.rows_dropped,
                     "rows_digest": model.rows_digest,
                     "metrics": _encode({k: float(v) for k, v in model.training_metrics.items()}),
                     "loss": _encode(float(model.loss))},
        "certificate": cert,
        "settings": _encode({k: list(v) if isinstance(v, tuple) else v
                             for k, v in asdict(model.settings).items()}),
    }


def to_json(model: RiskScore, indent: int | None = 2) -> str:
    """``model`` as a JSON document (``RiskScore.to_json`` calls this).

    Examples
    --------
    >>> import riskformula as rf
    >>> df = rf.load_dataset("wdbc")
    >>> m = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst', df,
    ...                   max_size=2, time_limit=10)
    >>> m2 = rf.from_json(m.to_json())
    >>> bool((m2.predict(df) == m.predict(df)).all())
    True
    """
    if not isinstance(model, RiskScore):
        raise TypeError(f"`model` must be a fitted RiskScore; got {type(model).__name__}.")
    return json.dumps(to_dict(model), indent=indent, allow_nan=False)


def from_json(text: str, *, allow_pickle: bool = False) -> RiskScore:
    """Load a risk score saved with :meth:`RiskScore.to_json`.

    Parameters
    ----------
    text : the JSON document (a string; read files with ``Path(p).read_text()``).
    allow_pickle : accept a document whose formula encoder had to be stored as a Python
        pickle (rare: user transforms with non-JSON state). Only for files you trust.

    Returns
    -------
    RiskScore
        Predicts, scores, evaluates and prints like the original; it holds no training
        evaluation, so ``summary()`` shows the training loss only.

    Examples
    --------
    >>> m2 = rf.from_json(Path("score.json").read_text())  # doctest: +SKIP
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise TypeError(f"`text` must be the JSON document as a string; got {type(text).__name__}. "
                        "Read a file with Path(path).read_text().")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"`text` is not valid JSON: {e}.") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise DataError(f"`text` is not a riskformula risk score document (expected \"format\": "
                        f"\"{FORMAT}\"). Create one with RiskScore.to_json().")
    if doc.get("format_version", 0) > FORMAT_VERSION:
        raise DataError(f"this document has format version {doc['format_version']}, newer than this "
                        f"riskformula ({FORMAT_VERSION}) reads; upgrade riskformula (the file was "
                        f"written by version {doc.get('riskformula_version')}).")
    try:
        return _model(doc, allow_pickle)
    except KeyError as e:
        raise DataError(f"the risk score document lacks the field {e}; it is incomplete or was edited.") from None


def _model(doc: dict, allow_pickle: bool) -> RiskScore:
    des, out, tr = doc["design"], doc["outcome"], doc["training"]
    columns = des["columns"]
    design = Design(formula=doc["formula"], X=None, y=None, columns=columns, labels=des["labels"],
                    column_terms=des["column_terms"], outcome=out["name"], event=_decode(out["event"]),
                    spec=spec_from_json(des["rhs_spec"], allow_pickle),
                    lhs_spec=spec_from_json(des["lhs_spec"], allow_pickle), variables=des["variables"],
                    index=None, dropped=tr["rows_dropped"], dropped_index=[],
                    levels=tuple(_decode(out["levels"])))
    unknown = set(doc["points"]) - set(columns)
    if unknown:
        raise DataError(f"the document gives points to {sorted(unknown)}, which are not design columns.")
    lam = np.array([doc["intercept"]] + [doc["points"].get(c, 0) for c in columns], dtype=float)
    cert = {k: _decode(v) for k, v in doc["certificate"].items()}
    report = SolverReport(**{k: cert[k] for k in _REPORT_FIELDS}, solution=tuple(lam))
    s = _decode(doc["settings"])
    settings = FitSettings(**{k: tuple(v) if isinstance(v, list) else v for k, v in s.items()})
    return RiskScore(design, lam, report, settings, loss=_decode(tr["loss"]),
                     term_contributions=[np.asarray(c, float) for c in doc["term_contributions"]],
                     nobs=tr["nobs"], events=tr["events"], rows_dropped=tr["rows_dropped"],
                     rows_digest=tr["rows_digest"], training_metrics=_decode(tr["metrics"]))

