"""Save a fitted risk score as plain JSON and load it back (:func:`to_json`, :func:`from_json`).

The document is ordinary JSON (no NaN/Infinity literals) that a person or another language
can read (tuples, arrays, non-finite floats and non-string dict keys inside the formula
encoder's state are tagged ``__tuple__``, ``__ndarray__``, ``__float__``, ``__items__``): formula, outcome coding, design columns with readable labels, points, intercept,
the threshold terms' cut points and score shift (risk = expit(intercept + score_shift + Σ points ×
column)), the per-term score contributions behind the score-to-risk table, the optimality
certificate, the fit settings with their constraints, the constants the formula takes from
``context=`` and the package version. No training data are stored. Functions passed as
``context=`` cannot be stored: they are named in the document and must be passed again to
:func:`from_json` before the model can score data.

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

from . import constraints as _constraints
from .errors import DataError, FormulaError, SettingsError
from .formula import Design
from .model import FitSettings, RiskScore, _plain, _threshold_levels
from .solver import SolverReport
from .thresholds import ThresholdTerm, threshold_terms

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
            raise FormulaError(f"cannot save this model: a transform in its formula holds state that neither "
                               f"JSON ({e}) nor pickle ({e2}) can store; use a transform whose state is numbers, "
                               "strings or arrays.") from None
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


def _thresholds_to_json(design) -> list:
    """The threshold()/cut() terms: their cut points and the design columns of those cuts.

    ``predict`` needs them: the points of a term's top interval are kept out of the printed
    intercept (see :func:`riskformula.thresholds.levels`) and added back to every score."""
    return [{"term": t.term, "variable": t.variable, "kind": t.kind, "cuts": [float(c) for c in t.cuts],
             "columns": [design.columns[j] for j in t.columns], "k": int(t.k), "on_grid": bool(t.on_grid),
             "n_distinct": None if t.n_distinct is None else int(t.n_distinct)} for t in design.thresholds]


def _thresholds_from_json(des: dict, spec) -> list:
    columns = des["columns"]
    if "thresholds" not in des:
        # documents written before the terms were stored: the cuts are in the encoder state
        terms = threshold_terms(spec, columns, des["column_terms"]) if spec is not None else []
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


#: constraint classes by name, to rebuild a model's constraints from the document
_CONSTRAINTS = {cls.__name__: cls for cls in (_constraints.Sign, _constraints.Count, _constraints.Implies,
                                               _constraints.OneVariable, _constraints.MaxColumns,
                                               _constraints.RiskBound)}


def _constraint_to_json(c) -> dict:
    from dataclasses import fields
    return {"constraint": c.describe(), "type": type(c).__name__,
            "fields": {f.name: getattr(c, f.name) for f in fields(c)}}


def _constraint_from_json(d: dict):
    if "type" not in d:
        # documents that stored a constraint's fields only: the field names identify the class
        from dataclasses import fields
        hits = [c for c in _CONSTRAINTS.values() if {f.name for f in fields(c)} == set(d)]
        d = {"type": hits[0].__name__ if hits else None, "fields": d, "constraint": str(d)}
    cls = _CONSTRAINTS.get(d.get("type"))
    if cls is None:
        raise DataError(f"the document holds a constraint of unknown type {d.get('type')!r} "
                        f"({d.get('constraint')!r}); it was written by a newer riskformula or edited.")
    return cls(**d["fields"])


def _context_to_json(design) -> dict:
    """The user's ``context=`` names the formula uses: JSON values stored, functions named only."""
    from .thresholds import FORMULA_FUNCTIONS

    user = {k: v for k, v in design.context.items() if FORMULA_FUNCTIONS.get(k) is not v}
    used = set()
    for spec in (design.spec, design.lhs_spec):
        try:
            # `mm.exp(x)` takes `mm` from the context
            used |= ({v.split(".")[0] for v in spec.variables_by_source.get("context", ())}
                     if spec is not None else set())
        except (AttributeError, RuntimeError):
            used |= set(user)  # a spec rebuilt from a document knows its terms, not their sources
    values, not_stored = {}, dict(design.unresolved_context)
    for k in sorted(set(user) & used):
        try:
            values[k] = _encode(user[k])
        except TypeError:
            v = user[k]
            qualname = getattr(v, "__qualname__", None)
            where = f"{getattr(v, '__module__', '')}.{qualname}" if qualname else getattr(v, "__name__", "")
            not_stored[k] = f"{type(v).__name__} {where}".strip()
    return {"values": values, "not_stored": not_stored}


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
    settings = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(model.settings).items()
                if k != "constraints"}
    settings["constraints"] = [_constraint_to_json(c) for c in model.settings.constraints]
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "riskformula_version": __version__,
        "formula": model.formula,
        "outcome": {"name": model.outcome, "event": _encode(_plain(model.event)),
                    "levels": _encode([_plain(v) for v in d.levels])},
        "risk": "1 / (1 + exp(-(intercept + score))); "
                "score = score_shift + sum of points x design column",
        "intercept": model.intercept,
        # the top intervals' points of threshold terms, moved out of the printed intercept
        "score_shift": int(model._shift),
        "points": {c: int(p) for c, p in model.coef.items()},
        "design": {"columns": list(d.columns), "labels": list(d.labels),
                   "column_terms": list(d.column_terms), "variables": list(d.variables),
                   "thresholds": _thresholds_to_json(d), "context": _context_to_json(d),
                   "rhs_spec": spec_to_json(d.spec), "lhs_spec": spec_to_json(d.lhs_spec)},
        # distinct score contributions of each used term in training: the score-to-risk table
        "term_contributions": [[float(x) for x in c] for c in model._term_contributions],
        "training": {"nobs": model.nobs, "events": model.events, "rows_dropped": model.rows_dropped,
                     "rows_digest": model.rows_digest,
                     "metrics": _encode({k: float(v) for k, v in model.training_metrics.items()}),
                     "loss": _encode(float(model.loss))},
        "certificate": cert,
        "settings": _encode(settings),
        **_extra_to_json(model),
    }


def _extra_to_json(model) -> dict:
    """Fields of a net-benefit score (its cut-offs and band risks replace the logistic risk)."""
    nb = getattr(model, "nb", None)
    if nb is None:
        return {}
    return {"risk": "band risk of the score: see net_benefit (cutoffs per threshold, band_risk per band); "
                    "score = score_shift + sum of points x design column",
            "net_benefit": nb.to_dict()}


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
        raise SettingsError(f"`model` must be a fitted RiskScore; got {type(model).__name__}.")
    return json.dumps(to_dict(model), indent=indent, allow_nan=False)


def from_json(text: str, *, allow_pickle: bool = False, context: dict | None = None) -> RiskScore:
    """Load a risk score saved with :meth:`RiskScore.to_json`.

    Parameters
    ----------
    text : the JSON document (a string; read files with ``Path(p).read_text()``).
    allow_pickle : accept a document whose formula encoder had to be stored as a Python
        pickle (rare: user transforms with non-JSON state). Only for files you trust.
    context : the functions the formula uses that were passed to ``risk_score(context=...)``.
        JSON cannot hold functions, so a model whose formula calls one (``y ~ f(x)``) needs
        them again to score data; constants (numbers, strings, lists) are stored.

    Returns
    -------
    RiskScore
        Predicts, scores, evaluates and prints like the original; it holds no training
        evaluation, so ``summary()`` shows the training loss only.

    Examples
    --------
    >>> m2 = rf.from_json(Path("score.json").read_text())  # doctest: +SKIP
    >>> m3 = rf.from_json(text, context={"f": my_function})  # doctest: +SKIP
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise SettingsError(f"`text` must be the JSON document as a string; got {type(text).__name__}. "
                            "Read a file with Path(path).read_text().")
    if context is not None and not isinstance(context, dict):
        raise SettingsError(f"`context` must be a dict of names the formula uses, such as "
                            f"{{'f': my_function}}; got {type(context).__name__}.")
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
        return _model(doc, allow_pickle, context or {})
    except KeyError as e:
        raise DataError(f"the risk score document lacks the field {e}; it is incomplete or was edited.") from None


def _model(doc: dict, allow_pickle: bool, user_context: dict) -> RiskScore:
    from .thresholds import FORMULA_FUNCTIONS

    des, out, tr = doc["design"], doc["outcome"], doc["training"]
    columns = des["columns"]
    spec = spec_from_json(des["rhs_spec"], allow_pickle)
    stored = des.get("context", {"values": {}, "not_stored": {}})
    design = Design(formula=doc["formula"], X=None, y=None, columns=columns, labels=des["labels"],
                    column_terms=des["column_terms"], outcome=out["name"], event=_decode(out["event"]),
                    spec=spec, lhs_spec=spec_from_json(des["lhs_spec"], allow_pickle),
                    variables=des["variables"], index=None, dropped=tr["rows_dropped"], dropped_index=[],
                    levels=tuple(_decode(out["levels"])), thresholds=_thresholds_from_json(des, spec),
                    context={**FORMULA_FUNCTIONS, **_decode(stored["values"]), **user_context},
                    unresolved_context={k: v for k, v in stored["not_stored"].items() if k not in user_context})
    unknown = set(doc["points"]) - set(columns)
    if unknown:
        raise DataError(f"the document gives points to {sorted(unknown)}, which are not design columns.")
    points = np.array([doc["points"].get(c, 0) for c in columns], dtype=float)
    s = _decode(doc["settings"])
    s["constraints"] = [_constraint_from_json(c) for c in s.get("constraints", [])]
    settings = FitSettings(**{k: tuple(v) if isinstance(v, list) else v for k, v in s.items()})
    # the document's intercept is the printed one; the fitted one also holds the top intervals'
    # points of the threshold terms, which RiskScore moves out again
    shift = sum(t for _, _, t in _threshold_levels(design, points, settings.threshold_ranges).values())
    if "score_shift" in doc and doc["score_shift"] != shift:
        raise DataError(f"the document's score_shift ({doc['score_shift']}) does not match its threshold "
                        f"terms' points (which give {shift:g}); it is inconsistent or was edited.")
    lam = np.concatenate([[doc["intercept"] + shift], points])
    cert = {k: _decode(v) for k, v in doc["certificate"].items()}
    report = SolverReport(**{k: cert[k] for k in _REPORT_FIELDS}, solution=tuple(lam))
    model = RiskScore(design, lam, report, settings, loss=_decode(tr["loss"]),
                      term_contributions=[np.asarray(c, float) for c in doc["term_contributions"]],
                      nobs=tr["nobs"], events=tr["events"], rows_dropped=tr["rows_dropped"],
                      rows_digest=tr["rows_digest"], training_metrics=_decode(tr["metrics"]))
    if "net_benefit" in doc:
        from .netbenefit.model import NetBenefitFit, NetBenefitScore
        return NetBenefitScore.from_risk_score(model, NetBenefitFit.from_dict(doc["net_benefit"]))
    return model
