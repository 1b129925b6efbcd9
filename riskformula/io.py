"""Save a fitted risk score as plain JSON and load it back (:func:`to_json`, :func:`from_json`).

The document is ordinary JSON (no NaN/Infinity literals) that a person or another language
can read (tuples, arrays, non-finite floats and non-string dict keys inside the formula
encoder's state are tagged ``__tuple__``, ``__ndarray__``, ``__float__``, ``__items__``): formula, outcome coding, design columns with readable labels, points, intercept,
the threshold terms' cut points and score shift (risk = expit((intercept + score_shift + Σ points ×
column) / scale), with the score scale, 1 unless fitted otherwise), the per-term score contributions behind the score-to-risk table, the optimality
certificate, the fit settings with their constraints, the constants the formula takes from
``context=`` and the package version. No training data are stored. Functions passed as
``context=`` cannot be stored: they are named in the document and must be passed again to
:func:`from_json` before the model can score data.

The design spec (formula, outcome coding, columns, thresholds, context and formulaic's
``ModelSpec``) is written and read by :mod:`riskformula.design.serialize`; this module adds the
points, certificate, settings with their constraints and the training summary.  A spec whose
encoder state JSON cannot hold is embedded as a base64 pickle, labelled as such;
:func:`from_json` then refuses to load it unless ``allow_pickle=True``, because unpickling
untrusted text can run code.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, fields

import numpy as np

from ._json import decode as _decode, encode as _encode
from .design.serialize import spec_from_json, spec_to_json
from .errors import DataError, SettingsError
from .model import FitSettings, RiskScore, TrainingSummary
from .fairness import notions as _fairness
from .fairness import CalibrationWithinGroups, RiskParity
from .problem import constraints as _constraints
from .solver import SolverReport
from .thresholds import score_shift

__all__ = ["to_json", "from_json"]

#: identifies riskformula documents; bump FORMAT_VERSION on incompatible layout changes
FORMAT = "riskformula/risk-score"
FORMAT_VERSION = 1

_REPORT_FIELDS = ("status", "objective", "lower_bound", "gap", "time", "nodes", "cuts",
                  "lp_solves", "root_bound", "solver", "settings", "scale", "scales", "listed")
#: report fields that documents written before they existed lack, with their values then
_REPORT_DEFAULTS = {"scale": 1.0, "scales": [], "listed": 0}


# --------------------------------------------------------------------------------------
# the document
# --------------------------------------------------------------------------------------


#: constraint classes by name, to rebuild a model's constraints from the document
_CONSTRAINTS = {cls.__name__: cls for cls in (_constraints.Sign, _constraints.Count, _constraints.Implies,
                                               _constraints.OneVariable, _constraints.MaxColumns,
                                               _constraints.RiskBound, _fairness.GroupParity,
                                               _fairness.ScoreBalance, RiskParity, CalibrationWithinGroups)}


def _constraint_to_json(c) -> dict:
    return {"constraint": c.describe(), "type": type(c).__name__,
            "fields": {f.name: getattr(c, f.name) for f in fields(c)}}


def _constraint_from_json(d: dict):
    if "type" not in d:
        # documents that stored a constraint's fields only: the field names identify the class
        hits = [c for c in _CONSTRAINTS.values() if {f.name for f in fields(c)} == set(d)]
        d = {"type": hits[0].__name__ if hits else None, "fields": d, "constraint": str(d)}
    cls = _CONSTRAINTS.get(d.get("type"))
    if cls is None:
        raise DataError(f"the document holds a constraint of unknown type {d.get('type')!r} "
                        f"({d.get('constraint')!r}); it was written by a newer riskformula or edited.")
    return cls(**d["fields"])


def to_dict(model: RiskScore) -> dict:
    """The JSON document of ``model`` as a Python dict (see :func:`to_json`)."""
    from . import __version__

    spec = spec_to_json(model.design)
    rep = model.solver
    cert = {k: getattr(rep, k) for k in _REPORT_FIELDS}
    try:
        cert["settings"] = _encode(dict(cert["settings"]))
    except TypeError:
        cert["settings"] = {}  # solver options are informative only; never block saving
    for k in ("objective", "lower_bound", "gap", "time", "root_bound", "scale"):
        cert[k] = _encode(float(cert[k]))
    cert["scales"] = [_encode({k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in r.items()})
                      for r in rep.scales]
    settings = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(model.settings).items()
                if k != "constraints"}
    settings["constraints"] = [_constraint_to_json(c) for c in model.settings.constraints]
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "riskformula_version": __version__,
        "formula": spec["formula"], "outcome": spec["outcome"],
        "risk": "1 / (1 + exp(-(intercept + score) / scale)); "
                "score = score_shift + sum of points x design column",
        "intercept": model.intercept,
        "scale": model.scale,
        # the top intervals' points of threshold terms, moved out of the printed intercept
        "score_shift": int(model._shift),
        "points": {c: int(p) for c, p in model.coef.items()},
        "design": spec["design"],
        # distinct score contributions of each used term in training: the score-to-risk table
        "term_contributions": [[float(x) for x in c] for c in model._term_contributions],
        "training": {"nobs": model.nobs, "events": model.events, "rows_dropped": model.rows_dropped,
                     "rows_digest": model.rows_digest,
                     "metrics": _encode({k: float(v) for k, v in model.training_metrics.items()}),
                     "loss": _encode(float(model.loss)),
                     # the fairness constraints' values on the training rows (the summary shows them)
                     "constraint_values": _encode([dict(r) for r in model.training.constraint_values])},
        "certificate": cert,
        "settings": _encode(settings),
        # ranges, scales and one-hot groups of the training variables, for counterfactuals
        "profile": _profile_json(model),
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


def _profile_json(model: RiskScore):
    if model.profile is None:
        return None
    try:
        return _encode(model.profile.to_dict())
    except TypeError:
        return None  # levels JSON cannot hold (e.g. dates): counterfactuals of the loaded model need data=


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


def _looks_like_path(text) -> bool:
    """A short one-line string naming a ``.json`` file or an existing file (never JSON: those
    failed to parse)."""
    if not isinstance(text, str) or "\n" in text or len(text) > 4096:
        return False
    t = text.strip()
    try:
        return t.lower().endswith(".json") or os.path.isfile(t)
    except (OSError, ValueError):  # e.g. a NUL character
        return False


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
        if _looks_like_path(text):  # rf.from_json("model.json"): the file, not its text
            raise DataError(f"rf.from_json takes the JSON text, not a file name; got {text!r}. Read the file "
                            "first: rf.from_json(Path(path).read_text()).") from None
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
    tr = doc["training"]
    design = spec_from_json(doc, allow_pickle, user_context)
    columns = design.columns
    unknown = set(doc["points"]) - set(columns)
    if unknown:
        raise DataError(f"the document gives points to {sorted(unknown)}, which are not design columns.")
    points = np.array([doc["points"].get(c, 0) for c in columns], dtype=float)
    s = _decode(doc["settings"])
    s["constraints"] = [_constraint_from_json(c) for c in s.get("constraints", [])]
    settings = FitSettings(**{k: tuple(v) if isinstance(v, list) else v for k, v in s.items()})
    # the document's intercept is the printed one; the fitted one also holds the top intervals'
    # points of the threshold terms, which RiskScore moves out again
    shift = score_shift(design.thresholds, points, settings.threshold_ranges)
    if "score_shift" in doc and doc["score_shift"] != shift:
        raise DataError(f"the document's score_shift ({doc['score_shift']}) does not match its threshold "
                        f"terms' points (which give {shift:g}); it is inconsistent or was edited.")
    lam = np.concatenate([[doc["intercept"] + shift], points])
    cert = {**_REPORT_DEFAULTS, **{k: _decode(v) for k, v in doc["certificate"].items()}}
    cert["scales"] = tuple(dict(r) for r in cert["scales"])
    if "scale" in doc:
        cert["scale"] = doc["scale"]
    scale = cert["scale"]
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < float("inf"):
        raise DataError(f"the document's score scale {scale!r} is not a positive number; it was edited.")
    cert["scale"] = float(scale)
    report = SolverReport(**{k: cert[k] for k in _REPORT_FIELDS}, solution=tuple(lam))
    training = TrainingSummary(nobs=tr["nobs"], events=tr["events"], rows_dropped=tr["rows_dropped"],
                               rows_digest=tr["rows_digest"], metrics=_decode(tr["metrics"]),
                               constraint_values=tuple(_decode(tr.get("constraint_values", []))))
    model = RiskScore(design, lam, report, settings, loss=_decode(tr["loss"]), training=training,
                      term_contributions=[np.asarray(c, float) for c in doc["term_contributions"]])
    from .counterfactuals.profile import TrainingProfile
    model.profile = TrainingProfile.from_dict(_decode(doc.get("profile")))
    if "net_benefit" in doc:
        from .netbenefit.model import NetBenefitFit, NetBenefitScore
        return NetBenefitScore.from_risk_score(model, NetBenefitFit.from_dict(doc["net_benefit"]))
    return model
