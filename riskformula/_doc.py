"""Reading an untrusted JSON document field by field: each read checks the type and range of one
value and raises a :class:`~riskformula.errors.DataError` that names the field, what it should be
and what it is.  Used by the saved model's loader (:mod:`riskformula.io`)."""

from __future__ import annotations

import math
from typing import Literal, overload

from .errors import DataError

#: longest string a document may hold in one field
MAX_TEXT = 10_000


def short(v) -> str:
    """``repr(v)`` cut to 80 characters, for error messages."""
    try:
        text = repr(v)
    except Exception:  # pragma: no cover - repr of JSON values does not fail
        text = f"<{type(v).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def fail(path: str, what: str, value) -> DataError:
    return DataError(f"the risk score document is invalid at {path}: {what}; it holds {short(value)}. "
                     "It is corrupt or was edited; save the model again with RiskScore.to_json().")


def obj(v, path: str) -> dict:
    if not isinstance(v, dict):
        raise fail(path, "expected an object", v)
    return v


def only(d: dict, allowed, path: str) -> dict:
    """``d`` when it has no keys besides ``allowed`` (a renamed or added field is refused, never ignored)."""
    extra = sorted(str(k) for k in d if k not in allowed)
    if extra:
        raise fail(path, f"unknown field(s) {extra[:3]}", extra)
    return d


def field(d: dict, key: str, path: str):
    if key not in d:
        raise DataError(f"the risk score document lacks the field {path}.{key}; it is incomplete or was edited.")
    return d[key]


@overload
def text(v, path: str, optional: Literal[False] = False, empty: bool = False) -> str: ...
@overload
def text(v, path: str, optional: bool = False, empty: bool = False) -> str | None: ...


def text(v, path: str, optional: bool = False, empty: bool = False) -> str | None:
    if v is None and optional:
        return None
    if not isinstance(v, str) or len(v) > MAX_TEXT or (not empty and not v):
        raise fail(path, f"expected a{'' if empty else ' non-empty'} string of at most {MAX_TEXT:,d} characters", v)
    return v


def integer(v, path: str, lo: float = -math.inf, hi: float = math.inf) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise fail(path, f"expected a whole number{_range(lo, hi)}", v)
    return v


def number(v, path: str, lo: float = -math.inf, hi: float = math.inf, finite: bool = True):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise fail(path, "expected a number", v)
    try:
        x = float(v)
    except OverflowError:
        raise fail(path, "expected a number within floating-point range", v) from None
    if (finite and not math.isfinite(x)) or not (lo <= x <= hi):
        raise fail(path, f"expected a finite number{_range(lo, hi)}", v)
    return v  # as written: a whole number stays an int


def boolean(v, path: str) -> bool:
    if not isinstance(v, bool):
        raise fail(path, "expected true or false", v)
    return v


def array(v, path: str, most: int) -> list:
    if not isinstance(v, (list, tuple)) or len(v) > most:
        raise fail(path, f"expected a list of at most {most:,d} entries", v)
    return list(v)


def level(v, path: str):
    """A categorical level: a string, a whole or finite number, or a boolean."""
    if isinstance(v, (str, bool, int)) and not (isinstance(v, str) and len(v) > MAX_TEXT):
        return v
    if isinstance(v, float) and math.isfinite(v):
        return v
    raise fail(path, "expected a level (a string, number or boolean)", v)


def _range(lo, hi) -> str:
    if math.isinf(lo) and math.isinf(hi):
        return ""
    if math.isinf(hi):
        return f" ≥ {lo:g}"
    if math.isinf(lo):
        return f" ≤ {hi:g}"
    return f" in [{lo:g}, {hi:g}]"
