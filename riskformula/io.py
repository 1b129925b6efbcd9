"""Save a fitted risk score as plain JSON and load it back (:func:`to_json`, :func:`from_json`).

The document (format ``riskformula/risk-score``, version 1) is ordinary JSON, readable by a person
or another language:

* ``card`` — the score card itself: intercept, score scale, the items (an interval of a
  variable, a level, a variable's value) with their points, and the value terms' training
  supports; ``risk`` says how a row's risk follows from it;
* ``design`` and ``outcome`` — each design column with its declarative rule (a cut, a level, a
  value, a product) and the outcome as a column (or one compared with a literal);
* ``certificate``, ``settings``, ``training`` and ``profile`` — the optimality certificate, the fit
  settings with their constraints, a summary of the training rows (no rows) and what
  counterfactual search needs;
* ``signature`` (only with ``to_json(key=...)``) — an HMAC-SHA256 of everything but the digest
  with the user's secret key: ``from_json(text, key=...)`` then refuses any other file;
* ``digest`` — the SHA-256 of everything else, so that a corrupted file is refused (it finds
  accidents, not an editor, who can compute it again).

Loading never runs code: a declarative model scores data from its rules alone.  Nothing is
believed: the labels are rebuilt from the rules, and every number that can be checked without the
training rows is checked (points whole and within the stored ranges, the card consistent with the
fitted design, the certificate's objective equal to the loss plus the size penalty, its bound and
gap, the size limits, the metrics' ranges, the counts, outcome levels valid), and so is what the
document says of one thing in two places (the outcome rule and survival columns are the formula's
left-hand side; a time-to-event design has its ``survival`` section and only it; a kind without an
intercept has none on its card and its own training metric); the JSON is bounded (size, nesting,
array tags of numbers, finite numbers, no duplicate keys, no lone surrogates).

A model whose formula computes columns with Python (``np.log(x)``, a user's function) stores
formulaic's encoder under ``expressions`` and loads only with ``trusted=True``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, cast

import numpy as np

from . import _doc
from ._version import __version__
from ._json import decode as _decode, encode as _encode
from .card import Item, ScoreCard, missing_columns
from .design.serialize import MAX_COLUMNS, design_from_json, design_to_json
from .errors import DataError, FormulaError, SettingsError
from .fitinfo import FitSettings, TrainingSummary
from .kinds import kind_by_key, kind_keys, kind_of
from .problem.constraints import constraint_class
from .solver import SolverReport
from .counterfactuals.profile import TrainingProfile
from .design.missing import parse_choice
from .design.formula import split_formula
from .design.rules import OutcomeRule, comparison_outcome, outcome_column
from .design.survival_response import is_surv, parse_surv
from .counterfactuals.profile import VariableProfile

if TYPE_CHECKING:
    from .record import ScoreRecord

__all__ = ["to_json", "from_json"]

#: identifies riskformula documents
FORMAT = "riskformula/risk-score"
FORMAT_VERSION = 1
#: the largest document :func:`from_json` reads unless told otherwise (``max_bytes=``), in bytes of
#: UTF-8 (a document of thousands of threshold cuts is a few megabytes)
MAX_BYTES = 50_000_000
#: the deepest nesting of JSON objects and lists a document may hold (a saved model nests about 8 deep)
MAX_DEPTH = 32
#: the largest count (rows, events, nodes) a document may hold: whole numbers a float holds exactly
MAX_COUNT = 2 ** 53
#: the relative tolerance of the certificate's sums (objective = loss + c0·size): the solver adds the
#: same float terms in another order, which moves the last few bits only
OBJECTIVE_TOLERANCE = 1e-7
#: the most items a card may hold
MAX_ITEMS = 10_000

_REPORT_FIELDS = ("status", "objective", "lower_bound", "gap", "time", "nodes", "cuts",
                  "lp_solves", "root_bound", "solver", "settings", "scale", "scales", "listed")
_STATUSES = ("optimal", "time_limit", "node_limit", "numerical_gap", "heuristic")



# --------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------


def _constraint_to_json(c) -> dict:
    return {"constraint": c.describe(), "type": type(c).__name__,
            "fields": _encode({f.name: getattr(c, f.name) for f in fields(c)})}


def to_dict(model, key=None) -> dict:
    """The JSON document of ``model`` as a Python dict (see :func:`to_json`); signed with ``key``
    when given."""
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
    design = design_to_json(model.design)
    doc = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "riskformula_version": __version__,
        "formula": model.formula,
        "risk": _risk_text(model),
        "card": model.scorecard.to_dict(),
        "outcome": design["outcome"], "design": design["design"],
        "training": {"nobs": model.nobs, "events": model.events, "rows_dropped": model.rows_dropped,
                     "rows_digest": model.rows_digest,
                     "metrics": _encode({k: float(v) for k, v in model.training_metrics.items()}),
                     "loss": _encode(float(model.loss)),
                     # the fairness constraints' values on the training rows (the summary shows them)
                     "constraint_values": _encode([dict(r) for r in model.training.constraint_values]),
                     # the sample weight of the rows and of their events, for the weighted log-likelihood
                     "weight_total": model.training.weight_total, "weight_events": model.training.weight_events},
        "certificate": cert,
        "settings": _encode(settings),
        # ranges, scales and one-hot groups of the training variables, for counterfactuals
        "profile": _profile_json(model),
    }
    if "expressions" in design:
        doc["expressions"] = design["expressions"]
    kind = kind_of(model)
    if kind is not None and kind.key is not None:
        doc[kind.key] = cast(Callable, kind.write)(model)  # a kind with a document entry has its writer
    if key is not None:
        doc["signature"] = _signature(doc, _key(key))
    doc["digest"] = _digest(doc)
    return doc


def _risk_text(model) -> str:
    if model.risk_map == "cox":
        return ("risk within a horizon t = 1 - exp(-H0(t) * exp((intercept + score) / scale)), H0 the step function "
                "of survival.base_hazard at survival.base_times (0 before the first); score = sum of the card's item "
                "points x item (1 when its condition holds, or the variable's value)")
    if model.risk_map == "bands":
        return ("band risk of the score: see net_benefit (cutoffs per decision threshold, band_risk per band); "
                "score = sum of the card's item points x item (1 when its condition holds, or the variable's value)")
    return ("risk = 1 / (1 + exp(-(intercept + score) / scale)); score = sum of the card's item points x item "
            "(1 when its condition holds, or the variable's value)")


def _canonical(doc: dict, leave_out: tuple) -> bytes:
    body = {k: v for k, v in doc.items() if k not in leave_out}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True).encode("ascii")


def _digest(doc: dict) -> str:
    """SHA-256 of everything but the digest (the signature included): finds accidental changes."""
    return "sha256:" + hashlib.sha256(_canonical(doc, ("digest",))).hexdigest()


def _signature(doc: dict, key: bytes) -> str:
    """HMAC-SHA256 with the user's ``key`` of everything but the digest and the signature."""
    return "hmac-sha256:" + hmac.new(key, _canonical(doc, ("digest", "signature")), hashlib.sha256).hexdigest()


def _key(key) -> bytes:
    """A signing key as bytes: a str (UTF-8) or bytes, not empty."""
    if isinstance(key, str):
        try:
            key = key.encode("utf-8")
        except UnicodeEncodeError:
            raise SettingsError("`key` must be text UTF-8 can encode (or bytes).") from None
    if not isinstance(key, (bytes, bytearray)) or not key:
        raise SettingsError(f"`key` must be a non-empty str or bytes (a secret kept apart from the file, e.g. 32 "
                            f"random bytes from secrets.token_bytes(32)); got {type(key).__name__}"
                            f"{' (empty)' if isinstance(key, (str, bytes, bytearray)) else ''}.")
    return bytes(key)


def _profile_json(model):
    if model.profile is None:
        return None
    try:
        return _encode(model.profile.to_dict())
    except TypeError:
        return None  # levels JSON cannot hold (e.g. dates): counterfactuals of the loaded model need data=


def to_json(model, indent: int | None = 2, *, key=None) -> str:
    """``model`` as a JSON document (``RiskScore.to_json`` calls this); with ``key`` (a secret str or
    bytes) the document carries an HMAC-SHA256 signature that ``from_json(text, key=key)`` checks.

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
    if kind_of(model) is None:
        raise SettingsError(f"`model` must be a fitted RiskScore; got {type(model).__name__}.")
    return json.dumps(to_dict(model, key), indent=indent, allow_nan=False)


# --------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------


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


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def from_json(text: str | bytes, *, trusted: bool = False, context: dict | None = None, key=None,
              max_bytes: int = MAX_BYTES) -> "ScoreRecord":
    """Load a risk score saved with :meth:`RiskScore.to_json`.

    Loading never runs code: the score card's items are cuts, levels and variables' values,
    computed from the data by comparisons.  Nothing in the document is believed: every label is
    rebuilt from the items' rules and every number that can be checked without the training rows
    is checked (points within their ranges, the certificate's objective equal to the loss plus the
    size penalty, its bound and gap, the size limits, the metrics' ranges, the counts), and a
    corrupt, edited, inconsistent or oversized document is refused with a
    :class:`~riskformula.DataError` that names the field and says what is wrong.

    The document's digest finds accidental changes only: anyone who edits a file can write its
    digest again.  To know that a file is the one you saved, sign it with a secret key
    (``m.to_json(key=...)``) and load it with the same key.

    Parameters
    ----------
    text : str or bytes
        The JSON document (read a file with ``Path(p).read_text()``; bytes are read as UTF-8).
    trusted : bool, default False
        Accept a model whose formula computes some columns (or the outcome) with Python
        expressions (``np.log(x)``, ``I(age / 10)``, a user's function): scoring such a model
        evaluates the formula's stored text, as unpickling a file can run code.  Only for files
        you trust.
    context : dict, optional
        With ``trusted=True``: the functions the formula calls that were passed to
        ``risk_score(context=...)`` (JSON cannot hold functions).
    key : str or bytes, optional
        The secret the document was signed with (``m.to_json(key=...)``): the document must carry
        an HMAC-SHA256 signature made with it, else it is refused.  Without ``key`` a signature is
        not checked.
    max_bytes : int, default 50_000_000
        The largest document read, in bytes of UTF-8 (50 MB by default); a longer one is refused
        before it is parsed.

    Returns
    -------
    RiskScore
        Predicts, scores, evaluates and prints like the original; it holds no training
        evaluation, so ``summary()`` shows the stored training metrics.

    Examples
    --------
    >>> m2 = rf.from_json(Path("score.json").read_text())  # doctest: +SKIP
    >>> m3 = rf.from_json(text, trusted=True, context={"f": my_function})  # doctest: +SKIP
    >>> m4 = rf.from_json(signed_text, key=secret)  # doctest: +SKIP
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise SettingsError(f"`text` must be the JSON document as a string; got {type(text).__name__}. "
                            "Read a file with Path(path).read_text().")
    if not isinstance(trusted, bool):
        raise SettingsError(f"`trusted` must be True or False; got {trusted!r}.")
    if context is not None and not isinstance(context, dict):
        raise SettingsError(f"`context` must be a dict of names the formula uses, such as "
                            f"{{'f': my_function}}; got {type(context).__name__}.")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise SettingsError(f"`max_bytes` must be a positive whole number of bytes (default {MAX_BYTES:,d}); "
                            f"got {max_bytes!r}.")
    signing_key = None if key is None else _key(key)
    size = _size(text, max_bytes)
    if size > max_bytes:
        raise DataError(f"the document has {size:,d} bytes, more than the {max_bytes:,d} read (a saved risk score "
                        "is kilobytes to a few megabytes); it is not a riskformula model or it is corrupt. Pass "
                        "max_bytes= to read a larger one you trust.")
    try:
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8")
        doc = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_no_duplicates)
    except DataError:
        raise
    except UnicodeDecodeError as e:
        raise DataError(f"`text` is not UTF-8 text ({e.reason} at byte {e.start}).") from None
    except RecursionError:
        raise DataError("`text` nests JSON deeper than Python can read; it is not a riskformula model.") from None
    except ValueError as e:
        if _looks_like_path(text):  # rf.from_json("model.json"): the file, not its text
            raise DataError(f"rf.from_json takes the JSON text, not a file name; got {text!r}. Read the file "
                            "first: rf.from_json(Path(path).read_text()).") from None
        raise DataError(f"`text` is not valid JSON: {e}.") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise DataError(f"`text` is not a riskformula risk score document (expected \"format\": "
                        f"\"{FORMAT}\"). Create one with RiskScore.to_json().")
    version = doc.get("format_version")
    if type(version) is not int:  # true and 1.0 equal 1 in Python, but no riskformula writes them
        raise DataError(f"the document's format_version must be a whole number (this riskformula writes and reads "
                        f"{FORMAT_VERSION}); it holds {_doc.short(version)}. It was edited; save the model again with "
                        "RiskScore.to_json().")
    if version != FORMAT_VERSION:
        newer = version > FORMAT_VERSION
        raise DataError(f"this document has format version {_doc.short(version)}; this riskformula reads version "
                        f"{FORMAT_VERSION}" + (" (upgrade riskformula)." if newer else "."))
    _plain_values(doc)
    if doc.get("digest") != _digest(doc):
        raise DataError("the document's digest does not match its contents: the file was changed after it was saved "
                        "(corrupted, or edited by hand). Save the model again with RiskScore.to_json().")
    if signing_key is not None:
        sig = doc.get("signature")
        if not isinstance(sig, str):
            raise DataError("the document is not signed, and `key` asks for a signed one: sign it when saving, with "
                            "RiskScore.to_json(key=...), or load it without `key` if you trust the file.")
        if not hmac.compare_digest(sig.encode("utf-8"), _signature(doc, signing_key).encode("ascii")):
            raise DataError("the document's signature does not match `key`: the file was changed after it was signed, "
                            "or it was signed with another key. Do not use it; save the model again.")
    try:
        return _model(doc, trusted, context or {})
    except DataError:
        raise
    except RecursionError:
        raise DataError("the document nests values deeper than a risk score document does; it is corrupt.") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as e:
        # a field the checks below do not cover by name: still one message, never a traceback
        raise DataError(f"the risk score document is invalid ({type(e).__name__}: {_doc.short(str(e))}); it is "
                        "corrupt or was edited. Save the model again with RiskScore.to_json().") from None


def _size(text, most: int) -> int:
    """Bytes of ``text`` as UTF-8, counted without a copy when the length alone settles it."""
    if isinstance(text, (bytes, bytearray)) or len(text) > most or text.isascii():
        return len(text)
    if 4 * len(text) <= most:
        return len(text)  # at most 4 bytes a character: within the limit however it encodes
    return len(text.encode("utf-8", "surrogatepass"))


def _no_duplicates(pairs: list) -> dict:
    """A JSON object, refused when it names a key twice (JSON readers differ on which value counts)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        for k, _ in pairs:
            if k in seen:
                break
            seen.add(k)
        twice = k
        raise DataError(f"the document holds the key {_doc.short(twice)} twice in one object; readers disagree on "
                        "which value counts, so it is refused. It was edited; save the model again.")
    return out


_SURROGATE = re.compile("[\ud800-\udfff]")


def _plain_values(doc: dict) -> None:
    """Every value of the parsed document is finite, every string encodable text, and the nesting
    at most :data:`MAX_DEPTH` deep; else a DataError naming the first field that is not."""
    stack: list = [(doc, None, 0)]
    while stack:
        v, at, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _doc.fail(_path(at), f"the document nests more than {MAX_DEPTH} levels deep", "...")
        if isinstance(v, dict):
            for k, x in v.items():
                if _SURROGATE.search(k):
                    raise _doc.fail(_path(at), "a key holds a lone surrogate (\\ud800-\\udfff), which is not text", k)
                stack.append((x, (at, k), depth + 1))
        elif isinstance(v, list):
            stack.extend((x, (at, i), depth + 1) for i, x in enumerate(v))
        elif isinstance(v, float) and not math.isfinite(v):
            raise _doc.fail(_path(at), "expected a finite number (a JSON number beyond ±1.8e308 reads as infinite)", v)
        elif isinstance(v, str) and _SURROGATE.search(v):
            raise _doc.fail(_path(at), "a string holds a lone surrogate (\\ud800-\\udfff), which is not text "
                            "and cannot be printed or written out", v)


def _path(at) -> str:
    """``$.a.b[2]`` from the (parent, key) chain :func:`_plain_values` keeps."""
    parts = []
    while at is not None:
        at, k = at
        parts.append(f"[{k}]" if isinstance(k, int) else f".{k}" if re.fullmatch(r"\w+", k) else f"[{k!r}]")
    return "$" + "".join(reversed(parts))


_TOP = ("format", "format_version", "riskformula_version", "formula", "risk", "card", "outcome", "design",
        "training", "certificate", "settings", "profile", "expressions", "signature", "digest")


def _model(doc: dict, trusted: bool, user_context: dict) -> "ScoreRecord":
    _doc.only(doc, _TOP + kind_keys(), "$")
    sections = [k for k in kind_keys() if k in doc]
    if len(sections) > 1:
        raise DataError(f"the risk score document holds the sections {sections} of different kinds of score, and a "
                        "model is of one kind; it was edited (a section pasted from another model). Save the model "
                        "again with RiskScore.to_json().")
    kind = kind_by_key(doc)
    design = design_from_json(doc, trusted, user_context)
    _check_kind(kind, design)
    _check_outcome(design)
    settings = _settings(_doc.obj(_doc.field(doc, "settings", "$"), "$.settings"), design)
    card_doc = _doc.obj(_doc.field(doc, "card", "$"), "$.card")
    card = _card(card_doc, design, settings)
    report = _report(_doc.obj(_doc.field(doc, "certificate", "$"), "$.certificate"), card, settings)
    training = _training(_doc.obj(_doc.field(doc, "training", "$"), "$.training"))
    lam = card.design_points()
    _check_intercept(kind, card, lam, settings)
    _check_metric_kind(kind, training["metrics"])
    extra = {} if kind.key is None else cast(Callable, kind.read)(doc[kind.key])
    model = kind.cls(design, lam, report, settings, loss=training.pop("loss"), training=TrainingSummary(**training),
                     support=card.support, profile=TrainingProfile.from_dict(_profile(doc.get("profile"))), **extra)
    built = model.scorecard.items
    if len(built) == len(card.items):
        for i, (a, b) in enumerate(zip(built, card.items)):
            if a != b and replace(b, label=a.label) == a:
                raise _doc.fail(f"$.card.items[{i}].label", f"the label must be the item's own, {a.label!r}, built "
                                "from its rule and points", b.label)
    if built != card.items or model.scorecard.intercept != card.intercept:
        raise DataError("the risk score document's card is not the card of its points: each threshold term's "
                        "intervals must partition the line between its chosen cuts, neighbouring intervals differ in "
                        "points, and only items with points are listed. It was edited; save the model again.")
    _check_points(lam, settings, design)
    _check_size(model, settings)
    if kind.loss_objective:
        _check_objective(model, lam, settings)
    _check_training(model, settings)
    return model


#: the kinds of score without an intercept (``ModelKind.intercept`` False), by document section: what
#: each fixes at 0 in its place (the fitted intercept λ0, or the card's printed intercept) and why
_NO_INTERCEPT = {
    "survival": ("fitted", "a time-to-event score has no intercept (its baseline hazard plays that part)"),
    "net_benefit": ("card", "a net-benefit score has no intercept (the cut-offs of its decision thresholds play "
                            "that part)"),
}
#: the training metric only the documents of one kind hold, by that kind's section (a plain risk
#: score's hold neither)
_KIND_METRICS = {"survival": "harrell_c", "net_benefit": "net_benefit"}


def _check_kind(kind, design) -> None:
    """A time-to-event design (``$.outcome.survival``) comes with a ``survival`` section, and only it."""
    if design.survival is not None and kind.key != "survival":
        instead = f", and it holds a {kind.key!r} section instead" if kind.key is not None else ""
        raise DataError(f"the risk score document's design is time-to-event (its outcome is {design.outcome}, "
                        "$.outcome.survival) but the document has no \"survival\" section (the baseline hazard and "
                        f"horizons its risks come from){instead}; it is incomplete or was edited. Save the model "
                        "again with RiskScore.to_json().")
    if design.survival is None and kind.key == "survival":
        raise DataError("the risk score document has a \"survival\" section (a time-to-event score), but its "
                        f"outcome {design.outcome} is not Surv(time, event) ($.outcome.survival is absent); it was "
                        "edited. Save the model again with RiskScore.to_json().")


def _formula_outcome(lhs: str) -> OutcomeRule | None:
    """The outcome rule a fit derives from a binary formula's left-hand side ``lhs`` when it derives
    one: a bare column name, or ``column <op> literal`` (in ``I()`` or not); None for any other
    expression (formulaic computes it; no rule is stored)."""
    name = outcome_column(lhs)
    return OutcomeRule(name) if name is not None else comparison_outcome(lhs)


def _check_outcome(design) -> None:
    """The stored outcome is the formula's left-hand side where that side says what it is:
    ``Surv(time, event)`` names the survival columns and the event column, a column name the
    outcome rule's column, ``column == value`` (or another comparison) the rule's column,
    comparison and value (of the same type: ``True`` is not ``1``)."""
    try:
        lhs, _ = split_formula(design.formula)
    except FormulaError:
        raise _doc.fail("$.formula", "expected a formula 'outcome ~ terms'", design.formula) from None
    rule = design.outcome_rule
    stored = None if design.survival is None else list(design.survival)
    if is_surv(lhs):
        try:
            resp = parse_surv(lhs, design.survival or ())
        except FormulaError:
            resp = None
        if resp is None or design.survival != (resp.time, resp.event):
            raise _doc.fail("$.outcome.survival", f"the formula's outcome {lhs} names the follow-up time and event "
                            "columns; expected them, [time, event], as written there", stored)
        expected: OutcomeRule | None = OutcomeRule(resp.event)
    elif design.survival is not None:
        raise _doc.fail("$.outcome.survival", f"the formula's outcome {lhs!r} is not Surv(time, event), so the "
                        "outcome has no follow-up time and event columns", stored)
    elif rule is None:
        return  # an expression formulaic computes from the formula itself (loaded with trusted=True only)
    else:
        expected = _formula_outcome(lhs)
    if expected is None or (rule.variable, rule.op) != (expected.variable, expected.op) or (
            rule.op is not None and not (type(rule.value) is type(expected.value) and rule.value == expected.value)):
        want = "none (an expression the formula computes)" if expected is None else repr(expected.to_dict())
        raise _doc.fail("$.outcome.rule", f"the outcome rule must be the formula's left-hand side {lhs!r}: "
                        f"expected {want}", None if rule is None else rule.to_dict())


def _check_intercept(kind, card: ScoreCard, lam, settings: FitSettings) -> None:
    """The card's intercept is one its kind uses: within the range searched, or, for a kind without
    an intercept, the one it fixes at 0 (the range searched then [0, 0])."""
    lo, hi = settings.intercept_range
    if kind.intercept:
        if not lo - 1e-9 <= lam[0] <= hi + 1e-9:
            raise _doc.fail("$.card.intercept",
                            f"the fitted intercept ({lam[0]:g}, the card's intercept plus its threshold "
                            f"terms' top intervals) must lie in the intercept range [{lo:g}, {hi:g}] searched",
                            card.intercept)
        return
    fixed, why = _NO_INTERCEPT.get(kind.key, (None, f"a {kind.cls.__name__} has no intercept"))
    if fixed == "card" and card.intercept != 0:
        raise _doc.fail("$.card.intercept", f"{why}: its card's intercept is 0", card.intercept)
    if fixed == "fitted" and lam[0] != 0:
        raise _doc.fail("$.card.intercept", f"{why}: its fitted intercept (the card's intercept plus its threshold "
                        f"terms' top intervals) is 0, not {lam[0]:g}", card.intercept)
    if (lo, hi) != (0, 0) or settings.real_intercept:
        raise _doc.fail("$.settings.intercept_range", f"{why}: the intercept range searched is [0, 0] (and "
                        "real_intercept false)", [lo, hi])


def _check_metric_kind(kind, metrics: dict) -> None:
    """A kind's own training metric (a time-to-event score's concordance, a net-benefit score's net
    benefit) is in its documents and in no other kind's."""
    for key, metric in _KIND_METRICS.items():
        if (metric in metrics) != (kind.key == key):
            what = (f"{metric!r} is the training metric of a document with a {key!r} section, and this document has "
                    "none" if metric in metrics else f"a document with a {key!r} section stores its training "
                    f"metric {metric!r}")
            raise _doc.fail("$.training.metrics", what, sorted(metrics))


def _check_points(lam, settings: FitSettings, design) -> None:
    """Each design column's fitted points (the card's items added up) within the column's range
    (a threshold term's cuts: their items are checked against the term's range)."""
    pts = np.asarray(lam[1:], float)
    cuts = [j for t in design.thresholds for j in t.columns]
    outside = (pts < np.asarray(settings.coef_lower)) | (pts > np.asarray(settings.coef_upper))
    outside[cuts] = False
    bad = np.flatnonzero(outside)
    if len(bad):
        j = int(bad[0])
        raise _doc.fail("$.card.items", f"the items give the column {design.columns[j]!r} {pts[j]:g} points, outside "
                        f"its range [{settings.coef_lower[j]}, {settings.coef_upper[j]}] ($.settings.coef_lower, "
                        "coef_upper)", design.labels[j])


def _check_size(model, settings: FitSettings) -> None:
    if not settings.min_size <= model.size <= settings.max_size:
        raise _doc.fail("$.settings.max_size", f"the card's size (items counted as the fit counts them) is "
                        f"{model.size}, outside the limits searched [min_size {settings.min_size}, max_size "
                        f"{settings.max_size}]", settings.max_size)


def _check_objective(model, lam, settings: FitSettings) -> None:
    """The certificate's objective is the stored training loss plus c0 per design column with points
    (plus the penalties of constraints that have a weight: then at least that much)."""
    used = int(np.count_nonzero(np.round(np.asarray(lam[1:], float), 9)))
    expected = model.loss + settings.c0 * used
    if not math.isfinite(expected):  # an overflowing sum: no comparison with it holds or fails
        raise _doc.fail("$.training.loss", f"the training loss plus c0 per column with points ({model.loss:g} + "
                        f"{settings.c0:g} × {used}) overflows; expected numbers within floating-point range",
                        model.loss)
    tol = OBJECTIVE_TOLERANCE * max(1.0, abs(expected), abs(model.objective))
    penalised = any(getattr(c, "weight", None) for c in settings.constraints)
    if not model.objective >= expected - tol or (not penalised and not model.objective <= expected + tol):
        relation = "at least" if penalised else "equal to"
        raise _doc.fail("$.certificate.objective", f"the objective must be {relation} the training loss plus c0 per "
                        f"column with points: {model.loss:.9g} + {settings.c0:g} × {used} = {expected:.9g} "
                        f"($.training.loss, $.settings.c0, $.card.items; within {OBJECTIVE_TOLERANCE:g} relative)",
                        model.objective)


#: the training metrics' ranges (NaN: unknown)
_METRIC_RANGES = {"n": (1, MAX_COUNT), "events": (0, MAX_COUNT), "auc": (0, 1), "cal": (0, 1), "brier": (0, 1),
                  "log_loss": (0, math.inf), "net_benefit": (-math.inf, math.inf), "harrell_c": (0, 1)}


def _check_training(model, settings: FitSettings) -> None:
    """The training metrics within their ranges and agreeing with the counts; the fairness
    constraints' values those of the stored constraints."""
    path = "$.training.metrics"
    t = model.training
    for k, v in t.metrics.items():
        lo, hi = _METRIC_RANGES[k]
        if not (isinstance(v, float) and math.isnan(v)):
            _doc.number(v, f"{path}.{k}", lo, hi)
    for k, count in (("n", model.nobs), ("events", model.events)):
        v = t.metrics[k]
        if not (isinstance(v, float) and math.isnan(v)) and v != count:
            raise _doc.fail(f"{path}.{k}", f"the metrics' {k} must be the training {'rows' if k == 'n' else k} "
                            f"($.training.{'nobs' if k == 'n' else k}: {count:,d})", v)
    if model.events < 1 or (model.events >= model.nobs and model.design.survival is None):
        raise _doc.fail("$.training.events", f"a risk score is fitted to rows with events and non-events; "
                        f"{model.events:,d} events in {model.nobs:,d} rows", model.events)
    described = {c.describe(): c for c in settings.constraints}
    for i, row in enumerate(t.constraint_values):
        at = f"$.training.constraint_values[{i}]"
        _doc.only(row, _CONSTRAINT_VALUE_KEYS, at)
        for k in _CONSTRAINT_VALUE_KEYS:
            _doc.field(row, k, at)
        if _doc.text(row["constraint"], at + ".constraint") not in described:
            raise _doc.fail(at + ".constraint", "expected the description of one of the fit's constraints "
                            "($.settings.constraints)", row["constraint"])
        _doc.text(row["quantity"], at + ".quantity")
        v, b, slack = (_nan_or_number(row[k], f"{at}.{k}") for k in ("value", "bound", "slack"))
        if math.isnan(b) != math.isnan(slack) or not (
                math.isnan(b) or any(abs(slack - d) <= 1e-9 * max(1.0, abs(b), abs(v)) for d in (b - v, v - b))):
            raise _doc.fail(at + ".slack", "the slack must be bound − value (a difference) or value − bound (a "
                            "ratio), and NaN when there is no bound", slack)


_CONSTRAINT_VALUE_KEYS = ("constraint", "quantity", "value", "bound", "slack")


def _nan_or_number(v, path: str) -> float:
    if isinstance(v, float) and math.isnan(v):
        return v
    return float(_doc.number(v, path))


@dataclass(frozen=True)
class _CardNames:
    """What a card's items name, looked up once per document: design columns by name, threshold
    terms by term, and the ``missing(x)`` column of each item variable."""

    where: dict
    thresholds: dict
    absent: dict


def _card_item(it: dict, path: str, design, settings: FitSettings, names: _CardNames) -> Item:
    """One item of a document's card, checked against the design and the fit's point bounds."""
    kind = _doc.field(it, "kind", path)
    _doc.only(it, ("label", "term", "kind", "points", "variable", "lower", "upper", "columns", "column", "level"),
              path)
    label = _doc.text(_doc.field(it, "label", path), path + ".label")
    term = _doc.text(_doc.field(it, "term", path), path + ".term")
    points = _doc.integer(_doc.field(it, "points", path), path + ".points", -10 ** 6, 10 ** 6)
    if points == 0:
        raise _doc.fail(path + ".points", "a card lists only items with points", points)
    if kind == "interval":
        return _interval_item(it, path, label, term, points, design, settings, names)
    if kind not in ("missing", "level", "value"):
        raise _doc.fail(path + ".kind", "expected \"interval\", \"level\", \"value\" or \"missing\"", kind)
    col = _doc.text(_doc.field(it, "column", path), path + ".column")
    j = names.where.get(col)
    if j is not None and label != design.labels[j]:
        raise _doc.fail(path + ".label", f"the label must be the column's own, {design.labels[j]!r}, built from its "
                        "rule", label)
    if kind == "missing":
        if j is None or design.rules[j].kind != "missing":
            raise _doc.fail(path + ".column", "expected a design column missing(x) of a variable fitted with "
                            "missing=\"item\"", col)
        return Item(label=label, term=term, kind="missing", points=points, variable=design.rules[j].variable,
                    columns=(j,))
    if j is None or any(j in t.columns for t in design.thresholds) or design.rules[j].kind == "missing":
        raise _doc.fail(path + ".column", "expected a design column that is not a threshold cut or a "
                        "missing item", col)
    lo, hi = settings.coef_lower[j], settings.coef_upper[j]
    if not lo <= points <= hi:
        raise _doc.fail(path + ".points", f"the points of {col!r} must lie in its range [{lo}, {hi}]", points)
    item = Item(label=label, term=term, kind=kind, points=points,
                variable=_doc.text(it.get("variable"), path + ".variable", optional=True),
                level=_doc.level(it.get("level"), path + ".level") if kind == "level" else None, columns=(j,))
    if kind == "level" and design.rules[j].kind != "level":
        raise _doc.fail(path + ".kind", f"the column {col!r} is not a level", kind)
    return item


def _interval_item(it: dict, path: str, label: str, term: str, points: int, design, settings: FitSettings,
                   names: _CardNames) -> Item:
    """An interval item of a document's card: its term a threshold of the design, its ends candidate cuts."""
    t = names.thresholds.get(term)
    if t is None:
        raise _doc.fail(path + ".term", "an interval must belong to a threshold() or cut() term of the design", term)
    lb, ub = t.range(settings.coef_lower, settings.coef_upper)
    if not lb <= points <= ub:
        raise _doc.fail(path + ".points", f"the points of {term}'s items must lie in its range [{lb}, {ub}]", points)
    lower = _doc.field(it, "lower", path)
    upper = _doc.field(it, "upper", path)
    cols: list[int | None] = []
    for end, name in ((upper, "upper"), (lower, "lower")):
        if end is None:
            cols.append(None)
            continue
        end = _doc.number(end, f"{path}.{name}")
        if end not in t.cuts:
            raise _doc.fail(f"{path}.{name}", f"an interval's ends must be candidate cuts of {term}", end)
        cols.append(t.columns[t.cuts.index(end)])
    if lower is not None and upper is not None and not float(lower) < float(upper):
        raise _doc.fail(path, "an interval's lower end must lie below its upper end", [lower, upper])
    variable = t.variable if design.rules[t.columns[0]].kind == "le" else None
    return Item(label=label, term=term, kind="interval", points=points, variable=variable,
                lower=None if lower is None else float(lower), upper=None if upper is None else float(upper),
                columns=tuple(cols),
                # an open upper end reads the missing column (a missing x is in no interval)
                absent=names.absent.get(variable) if variable is not None and upper is None else None)


def _card(d: dict, design, settings: FitSettings) -> ScoreCard:
    _doc.only(d, ("intercept", "scale", "items", "support"), "$.card")
    scale = float(_doc.number(_doc.field(d, "scale", "$.card"), "$.card.scale", lo=1e-12))
    if settings.real_intercept:
        intercept = float(_doc.number(_doc.field(d, "intercept", "$.card"), "$.card.intercept"))
    else:
        intercept = _doc.integer(_doc.field(d, "intercept", "$.card"), "$.card.intercept", -10 ** 9, 10 ** 9)
    names = _CardNames({c: j for j, c in enumerate(design.columns)}, {t.term: t for t in design.thresholds},
                       missing_columns(design))
    items = [_card_item(_doc.obj(raw, f"$.card.items[{i}]"), f"$.card.items[{i}]", design, settings, names)
             for i, raw in enumerate(_doc.array(_doc.field(d, "items", "$.card"), "$.card.items", MAX_ITEMS))]
    support = {}
    sup = _doc.obj(_doc.field(d, "support", "$.card"), "$.card.support")
    # a term with a value item needs its training support for all its items (one pass: a card may
    # hold thousands of items)
    with_values = {it.term for it in items if it.kind == "value"}
    value_terms: dict = {}
    for item in items:
        if item.term in with_values:
            value_terms[item.term] = value_terms.get(item.term, 0) + 1
    for term, s in sup.items():
        path = f"$.card.support[{term!r}]"
        s = _doc.obj(s, path)
        how = _doc.field(s, "how", path)
        if how not in ("rows", "box") or term not in value_terms:
            raise _doc.fail(path, "expected {\"how\": \"rows\" or \"box\", \"values\": ...} "
                            "for a value term of the card", how)
        rows = _doc.array(_doc.field(s, "values", path), path + ".values", 64 if how == "rows" else MAX_ITEMS)
        table = [[_doc.number(x, path + ".values") for x in _doc.array(r, path + ".values", MAX_ITEMS)] for r in rows]
        width = value_terms[term]
        if how == "rows" and (not table or any(len(r) != width for r in table)):
            raise _doc.fail(path + ".values", f"expected rows of {width} values", rows[:3])
        if how == "box" and (len(table) != width or any(len(r) != 2 or r[0] > r[1] for r in table)):
            raise _doc.fail(path + ".values", f"expected {width} [lowest, highest] pairs", rows[:3])
        support[term] = (how, np.asarray(table, float))
    missing = [t for t in value_terms if t not in support]
    if missing:
        raise _doc.fail("$.card.support", f"the value terms {missing[:3]} need their training supports", sorted(sup))
    return ScoreCard(design=design, items=tuple(items), intercept=intercept, scale=scale, support=support)


def _missing_setting(v, path: str):
    """The ``missing=`` setting of a document: one choice, or an object of them by variable."""
    expected = "expected \"raise\", \"drop\", \"item\", \"as <value>\" or an object of those by variable"
    try:
        if isinstance(v, dict) and len(v) <= MAX_COLUMNS and all(isinstance(k, str) for k in v):
            for x in v.values():
                parse_choice(x)
            return dict(v)
        if isinstance(v, str):
            parse_choice(v)
            return v
    except SettingsError:
        pass
    raise _doc.fail(path, expected, v)


def _settings(s: dict, design) -> FitSettings:
    n = len(design.columns)
    path = "$.settings"
    known = {f.name for f in fields(FitSettings)}
    _doc.only(s, known, path)
    for k in known:
        _doc.field(s, k, path)
    s = _decode(s)

    def ints(key, length):
        v = _doc.array(_doc.field(s, key, path), f"{path}.{key}", MAX_COLUMNS)
        if len(v) != length:
            raise _doc.fail(f"{path}.{key}", f"expected {length} entries, one per design column", len(v))
        return tuple(_doc.integer(x, f"{path}.{key}", -10 ** 6, 10 ** 6) for x in v)

    lower, upper = ints("coef_lower", n), ints("coef_upper", n)
    if any(a > b for a, b in zip(lower, upper)):
        raise _doc.fail(f"{path}.coef_lower", "each column's lower bound must not exceed its upper bound", None)
    ir_given = _doc.array(_doc.field(s, "intercept_range", path), f"{path}.intercept_range", 2)
    if len(ir_given) != 2:
        raise _doc.fail(f"{path}.intercept_range", "expected [lowest, highest]", ir_given)
    ir = tuple(_doc.number(x, f"{path}.intercept_range") for x in ir_given)
    groups = []
    for g in _doc.array(_doc.field(s, "size_groups", path), f"{path}.size_groups", MAX_COLUMNS):
        groups.append(tuple(_doc.integer(j, f"{path}.size_groups", 0, n - 1)
                            for j in _doc.array(g, f"{path}.size_groups", MAX_COLUMNS)))
    candidates = {}
    terms = {t.term for t in design.thresholds}
    for term, v in _doc.obj(_doc.field(s, "threshold_candidates", path), f"{path}.threshold_candidates").items():
        at = f"{path}.threshold_candidates[{term!r}]"
        if term not in terms:
            raise _doc.fail(at, "expected a threshold() or cut() term of the design ($.design.thresholds)", term)
        # (cuts kept, candidate cuts): the reports unpack exactly these two
        if not isinstance(v, (list, tuple)) or len(v) != 2:
            raise _doc.fail(at, "expected [cuts kept, candidate cuts], two whole numbers", v)
        kept, total = (_doc.integer(x, at, 0, MAX_COUNT) for x in v)
        if kept > total:
            raise _doc.fail(at, "the cuts kept cannot outnumber the candidate cuts ([kept, candidates])", list(v))
        candidates[term] = (kept, total)
    scales = tuple(_doc.number(x, f"{path}.scales", lo=1e-12)
                   for x in _doc.array(_doc.field(s, "scales", path), f"{path}.scales", 10_000))
    na = _missing_setting(s.get("missing"), f"{path}.missing")
    max_size = _doc.integer(_doc.field(s, "max_size", path), f"{path}.max_size", 0)
    constraints = tuple(_constraint(c, i) for i, c in
                        enumerate(_doc.array(_doc.field(s, "constraints", path), f"{path}.constraints", 10_000)))
    return FitSettings(
        max_size=max_size, min_size=_doc.integer(_doc.field(s, "min_size", path), f"{path}.min_size", 0, max_size),
        coef_lower=lower, coef_upper=upper, intercept_range=ir,
        c0=_doc.number(_doc.field(s, "c0", path), f"{path}.c0", lo=0),
        positive_weight=_doc.number(_doc.field(s, "positive_weight", path), f"{path}.positive_weight", lo=1e-300),
        weighted=_doc.boolean(_doc.field(s, "weighted", path), f"{path}.weighted"),
        time_limit=_doc.number(_doc.field(s, "time_limit", path), f"{path}.time_limit", lo=0, finite=False),
        gap_tolerance=_doc.number(_doc.field(s, "gap_tolerance", path), f"{path}.gap_tolerance", 0, 0.999999),
        missing=na, constraints=constraints,
        factors_as_one=_doc.boolean(_doc.field(s, "factors_as_one", path), f"{path}.factors_as_one"),
        size_groups=tuple(groups), threshold_candidates=candidates,
        absolute_gap_tolerance=_doc.number(_doc.field(s, "absolute_gap_tolerance", path),
                                           f"{path}.absolute_gap_tolerance", lo=0),
        scales=scales, real_intercept=_doc.boolean(_doc.field(s, "real_intercept", path), f"{path}.real_intercept"))


def _constraint(d, i: int):
    path = f"$.settings.constraints[{i}]"
    d = _doc.obj(d, path)
    cls = constraint_class(d.get("type"))
    if cls is None:
        raise DataError(f"the document holds a constraint of unknown type {_doc.short(d.get('type'))} "
                        f"({_doc.short(d.get('constraint'))}); it was written by a newer riskformula or edited.")
    values = _decode(_doc.obj(_doc.field(d, "fields", path), path + ".fields"))
    names = {f.name for f in fields(cls)}
    if set(values) - names:
        raise _doc.fail(path + ".fields", f"unknown fields of {cls.__name__}", sorted(set(values) - names))
    try:
        return cls(**values)
    except Exception as e:  # the constraint's own checks: one message
        raise _doc.fail(path, f"not a valid {cls.__name__} ({e})", values) from None


def _report(c: dict, card: ScoreCard, settings: FitSettings) -> SolverReport:
    path = "$.certificate"
    _doc.only(c, _REPORT_FIELDS, path)
    for k in _REPORT_FIELDS:
        _doc.field(c, k, path)
    c = {k: _decode(v) for k, v in c.items()}
    status = _doc.field(c, "status", path)
    if not isinstance(status, str) or not re.fullmatch(r"[A-Za-z_]{1,40}", status):
        raise _doc.fail(path + ".status", f"expected a status such as {', '.join(_STATUSES)}", status)
    objective = float(_doc.number(_doc.field(c, "objective", path), path + ".objective"))
    lower = float(_doc.number(_doc.field(c, "lower_bound", path), path + ".lower_bound"))
    gap = float(_doc.number(_doc.field(c, "gap", path), path + ".gap", 0))
    tol = 1e-9 * max(1.0, abs(objective))
    if lower > objective + tol:
        raise _doc.fail(path + ".lower_bound", f"a lower bound cannot exceed the objective ({objective:.9g})", lower)
    expected = 0.0 if lower >= objective else (objective - lower) / max(abs(objective), 1e-12)
    if not math.isfinite(expected):  # e.g. a lower bound of -1e308: the gap overflows, and inf is no gap to compare
        raise _doc.fail(path + ".lower_bound", f"the gap (objective − lower bound) / objective overflows: the lower "
                        f"bound must lie within floating-point range of the objective ({objective:.9g})", lower)
    if not abs(gap - expected) <= 1e-6 * max(1.0, expected):
        raise _doc.fail(path + ".gap", f"the gap must be (objective − lower bound) / objective = {expected:.6g}", gap)
    if status == "optimal" and not (gap <= settings.gap_tolerance + 1e-12
                                    or objective - lower <= settings.absolute_gap_tolerance + 1e-12):
        raise _doc.fail(path + ".status", f"\"optimal\" needs a gap within the tolerance ({settings.gap_tolerance:g}); "
                        f"the gap is {gap:.6g}", status)
    scale = float(_doc.number(_doc.field(c, "scale", path), path + ".scale", lo=1e-12))
    info = _doc.obj(c["settings"], path + ".settings")
    for k, v in info.items():  # the solver's options and counters: plain values, numbers where reports format them
        if k in _NUMERIC_INFO:
            _doc.number(v, f"{path}.settings.{k}")
        elif not (v is None or isinstance(v, (str, bool, int, float))):
            raise _doc.fail(f"{path}.settings.{k}", "expected a plain value", v)
    # a score found at a scale searched and then moved to its own scale names the scale it was found at
    found_at = float(info["refined_from"]) if info.get("refined_from") is not None else scale
    if scale != card.scale or (settings.scales and found_at not in settings.scales):
        raise _doc.fail(path + ".scale", f"the certificate's scale must be the card's ({card.scale:g}) and one of the "
                        "scales searched, or refined from one of them (settings.refined_from)", scale)
    if "unrefined_objective" in info and not float(info["unrefined_objective"]) >= objective - tol:
        raise _doc.fail(path + ".settings.unrefined_objective", "refining the scale never raises the objective "
                        f"({objective:.9g})", info["unrefined_objective"])
    scales = tuple(_scale_row(r, f"{path}.scales[{i}]") for i, r in
                   enumerate(_doc.array(c["scales"], path + ".scales", 10_000)))
    if "indicators" in info:
        _doc.integer(info["indicators"], f"{path}.settings.indicators", 0)
    return SolverReport(status=status, objective=objective, lower_bound=lower, gap=gap,
                        time=float(_doc.number(c["time"], path + ".time", 0)),
                        nodes=_doc.integer(c["nodes"], path + ".nodes", 0, MAX_COUNT),
                        cuts=_doc.integer(c["cuts"], path + ".cuts", 0, MAX_COUNT),
                        lp_solves=_doc.integer(c["lp_solves"], path + ".lp_solves", 0, MAX_COUNT),
                        root_bound=_root_bound(c["root_bound"], path + ".root_bound"),
                        solver=_doc.text(c["solver"], path + ".solver", empty=True),
                        settings=dict(_doc.obj(c["settings"], path + ".settings")),
                        solution=(), scale=scale, scales=scales,
                        listed=_doc.integer(c["listed"], path + ".listed", 0, MAX_COUNT))


#: solver counters the reports format as numbers
_NUMERIC_INFO = ("search_objective", "search_time", "milp_time", "indicators", "refined_from", "unrefined_objective")


def _scale_row(r, path: str) -> dict:
    """One row of a fit over several score scales, checked."""
    r = _doc.only(_doc.obj(r, path), ("scale", "objective", "lower_bound", "root_bound", "nodes", "status", "added"),
                  path)
    out = {"scale": float(_doc.number(_doc.field(r, "scale", path), path + ".scale", lo=1e-12)),
           "nodes": _doc.integer(_doc.field(r, "nodes", path), path + ".nodes", 0),
           "status": _doc.text(_doc.field(r, "status", path), path + ".status")}
    for k in ("objective", "lower_bound", "root_bound"):
        out[k] = _root_bound(_decode(_doc.field(r, k, path)), f"{path}.{k}")
    if "added" in r:
        out["added"] = r["added"] if r["added"] is None else _doc.boolean(r["added"], path + ".added")
    return out


def _root_bound(v, path: str) -> float:
    """The root's bound: a number, or NaN / ±inf when the root gave none."""
    if isinstance(v, float) and not math.isfinite(v):
        return v
    return float(_doc.number(v, path))


def _training(t: dict) -> dict:
    path = "$.training"
    _doc.only(t, ("nobs", "events", "rows_dropped", "rows_digest", "metrics", "loss", "constraint_values",
                  "weight_total", "weight_events"), path)
    nobs = _doc.integer(_doc.field(t, "nobs", path), path + ".nobs", 1, MAX_COUNT)
    events = _doc.integer(_doc.field(t, "events", path), path + ".events", 0, nobs)
    metrics = _decode(_doc.obj(_doc.field(t, "metrics", path), path + ".metrics"))
    # a binary score's headline metrics, or a time-to-event score's (its concordance)
    keys = (("n", "events", "harrell_c") if "harrell_c" in metrics else ("n", "events", "auc", "cal", "brier",
                                                                         "log_loss"))
    _doc.only(metrics, keys + ("net_benefit",), path + ".metrics")
    for k in keys + (("net_benefit",) if "net_benefit" in metrics else ()):
        v = _doc.field(metrics, k, path + ".metrics")
        if not (isinstance(v, float) and math.isnan(v)):
            _doc.number(v, f"{path}.metrics.{k}")
    values = _decode(_doc.array(_doc.field(t, "constraint_values", path), path + ".constraint_values", 10_000))
    for i, v in enumerate(values):
        _doc.obj(v, f"{path}.constraint_values[{i}]")
    return {"nobs": nobs, "events": events,
            "rows_dropped": _doc.integer(_doc.field(t, "rows_dropped", path), path + ".rows_dropped", 0, MAX_COUNT),
            "rows_digest": _doc.text(_doc.field(t, "rows_digest", path), path + ".rows_digest"),
            "metrics": metrics, "constraint_values": tuple(values), **_weight_totals(t, path),
            # a logistic loss is ≥ 0; a mean negative log partial likelihood may be < 0 (sample weights below 1)
            "loss": _doc.number(_decode(_doc.field(t, "loss", path)), path + ".loss",
                                -math.inf if "harrell_c" in metrics else 0)}


def _weight_totals(t: dict, path: str) -> dict:
    """The training rows' total weight and their events' (absent, or None: unknown; an older document)."""
    total, events = t.get("weight_total"), t.get("weight_events")
    if total is None or events is None:
        return {}
    total = _doc.number(total, path + ".weight_total", 0)
    return {"weight_total": total, "weight_events": _doc.number(events, path + ".weight_events", 0, total)}


def _profile(p):
    """The counterfactual profile, checked value by value (None when absent)."""
    if p is None:
        return None
    path = "$.profile"
    p = _decode(_doc.obj(p, path))
    _doc.only(p, ("variables", "partitions", "term_names", "term_mean", "term_cov", "nobs"), path)
    allowed = {f.name for f in fields(VariableProfile)}
    for name, v in _doc.obj(_doc.field(p, "variables", path), path + ".variables").items():
        vp = f"{path}.variables[{name!r}]"
        v = _doc.obj(v, vp)
        if set(v) - allowed or v.get("name") != name or v.get("kind") not in ("numeric", "categorical", "boolean"):
            raise _doc.fail(vp, "expected a variable's profile (name, kind, range, scale, values, levels)", v)
        for k in ("min", "max", "median"):
            if v.get(k) is not None:
                _doc.number(v[k], f"{vp}.{k}")
        if v.get("n_missing") is not None:
            _doc.integer(v["n_missing"], vp + ".n_missing", 0)
        _doc.number(v.get("scale", 1.0), vp + ".scale", lo=1e-300)
        _doc.integer(v.get("decimals", 0), vp + ".decimals", 0, 12)
        _doc.integer(v.get("n_distinct", 0), vp + ".n_distinct", 0)
        for x in _doc.array(v.get("values", []), vp + ".values", 100_000):
            _doc.number(x, vp + ".values")
        for x in _doc.array(v.get("levels", []), vp + ".levels", 100_000):
            _doc.level(x, vp + ".levels")
        _doc.boolean(v.get("ordered", False), vp + ".ordered")
    for part in _doc.array(p.get("partitions", []), path + ".partitions", 10_000):
        for c in _doc.array(part, path + ".partitions", 10_000):
            _doc.text(c, path + ".partitions")
    names = [_doc.text(x, path + ".term_names")
             for x in _doc.array(p.get("term_names", []), path + ".term_names", MAX_ITEMS)]
    mean = [_doc.number(x, path + ".term_mean")
            for x in _doc.array(p.get("term_mean", []), path + ".term_mean", MAX_ITEMS)]
    cov = [[_doc.number(x, path + ".term_cov") for x in _doc.array(r, path + ".term_cov", MAX_ITEMS)]
           for r in _doc.array(p.get("term_cov", []), path + ".term_cov", MAX_ITEMS)]
    if len(mean) != len(names) or len(cov) != len(names) or any(len(r) != len(names) for r in cov):
        raise _doc.fail(path, "the scored terms' means and covariances must match their names", len(names))
    _doc.integer(p.get("nobs", 0), path + ".nobs", 0)
    return p
