"""Save a fitted risk score as plain JSON and load it back (:func:`to_json`, :func:`from_json`).

The document is ordinary JSON (no NaN/Infinity literals) that a person or another language
can read (tuples, arrays, non-finite floats and non-string dict keys inside the formula
encoder's state are tagged ``__tuple__``, ``__ndarray__``, ``__float__``, ``__items__``): formula, outcome coding, design columns with readable labels, points, intercept,
the per-term score contributions behind the score-to-risk table, the optimality certificate,
the fit settings and the package version. No training data are stored.

The design spec (formula, outcome coding, columns and formulaic's ``ModelSpec``) is written and
read by :mod:`riskformula.design.serialize`; this module adds the points, certificate, settings
and training summary.  A spec whose encoder state JSON cannot hold is embedded as a base64
pickle, labelled as such; :func:`from_json` then refuses to load it unless ``allow_pickle=True``,
because unpickling untrusted text can run code.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np

from ._json import decode as _decode, encode as _encode
from .design.serialize import spec_from_json, spec_to_json
from .errors import DataError
from .model import FitSettings, RiskScore, TrainingSummary
from .solver import SolverReport

__all__ = ["to_json", "from_json"]

#: identifies riskformula documents; bump FORMAT_VERSION on incompatible layout changes
FORMAT = "riskformula/risk-score"
FORMAT_VERSION = 1

_REPORT_FIELDS = ("status", "objective", "lower_bound", "gap", "time", "nodes", "cuts",
                  "lp_solves", "root_bound", "solver", "settings")


# --------------------------------------------------------------------------------------
# the document
# --------------------------------------------------------------------------------------


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
    for k in ("objective", "lower_bound", "gap", "time", "root_bound"):
        cert[k] = _encode(float(cert[k]))
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "riskformula_version": __version__,
        "formula": spec["formula"], "outcome": spec["outcome"],
        "risk": "1 / (1 + exp(-(intercept + score))); score = sum of points x design column",
        "intercept": model.intercept,
        "points": {c: int(p) for c, p in model.coef.items()},
        "design": spec["design"],
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
    tr = doc["training"]
    design = spec_from_json(doc, allow_pickle)
    columns = design.columns
    unknown = set(doc["points"]) - set(columns)
    if unknown:
        raise DataError(f"the document gives points to {sorted(unknown)}, which are not design columns.")
    lam = np.array([doc["intercept"]] + [doc["points"].get(c, 0) for c in columns], dtype=float)
    cert = {k: _decode(v) for k, v in doc["certificate"].items()}
    report = SolverReport(**{k: cert[k] for k in _REPORT_FIELDS}, solution=tuple(lam))
    s = _decode(doc["settings"])
    settings = FitSettings(**{k: tuple(v) if isinstance(v, list) else v for k, v in s.items()})
    training = TrainingSummary(nobs=tr["nobs"], events=tr["events"], rows_dropped=tr["rows_dropped"],
                               rows_digest=tr["rows_digest"], metrics=_decode(tr["metrics"]))
    return RiskScore(design, lam, report, settings, loss=_decode(tr["loss"]), training=training,
                     term_contributions=[np.asarray(c, float) for c in doc["term_contributions"]])
