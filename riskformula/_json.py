"""JSON values for what plain JSON would lose: tuples, arrays, non-finite floats, non-string keys.

``encode`` tags them (``__tuple__``, ``__ndarray__``, ``__float__``, ``__items__``) and ``decode``
restores them exactly; used by the saved model document (:mod:`riskformula.io`) and the design
spec's serialisation (:mod:`riskformula.design.serialize`).
"""

from __future__ import annotations

import math

import numpy as np

from .errors import DataError


def plain(v):
    """A numpy scalar (or 0-d array) as the Python value it holds (2, not np.int64(2)); anything
    else as it is."""
    if isinstance(v, np.generic) or (isinstance(v, np.ndarray) and v.ndim == 0):
        return v.item()
    return v


def encode(v):
    """Plain JSON value of ``v``; tuples, arrays and non-finite floats are tagged so that
    :func:`_decode` restores them exactly. Raises TypeError for anything else."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, np.generic):
        v = v.item()
        if not isinstance(v, (bool, int, float, str)):
            raise TypeError(f"cannot store numpy value {v!r} as JSON")
        return encode(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"__float__": repr(v)}
    if isinstance(v, np.ndarray):
        if v.dtype.kind not in "biuf":
            raise TypeError(f"cannot store a {v.dtype} array as JSON")
        return {"__ndarray__": [encode(x) for x in v.ravel().tolist()], "dtype": str(v.dtype),
                "shape": list(v.shape)}
    if isinstance(v, tuple):
        return {"__tuple__": [encode(x) for x in v]}
    if isinstance(v, list):
        return [encode(x) for x in v]
    if isinstance(v, dict):
        if not all(isinstance(k, str) for k in v):
            # e.g. poly()'s state {0: alpha0, 1: alpha1}: keep the keys' types as pairs
            return {"__items__": [[encode(k), encode(x)] for k, x in v.items()]}
        return {k: encode(x) for k, x in v.items()}
    raise TypeError(f"cannot store {type(v).__name__} as JSON")


#: the array dtypes a document may hold (numbers and booleans: a fixed, small size per entry)
_ARRAY_KINDS = "biuf"
#: the most dimensions of a stored array
_MAX_DIMS = 8


def decode(v):
    """The value :func:`encode` wrote; a malformed tag (an array of text or of a size its entries
    do not fill, a float that is not one) raises :class:`~riskformula.errors.DataError`."""
    if isinstance(v, list):
        return [decode(x) for x in v]
    if isinstance(v, dict):
        if "__float__" in v:
            return _float(_tag(v, "__float__"))
        if "__tuple__" in v:
            return tuple(decode(x) for x in _list(_tag(v, "__tuple__"), "__tuple__"))
        if "__items__" in v:
            pairs = _list(_tag(v, "__items__"), "__items__")
            if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
                raise _bad("__items__", "expected [key, value] pairs")
            try:
                return {_hashable(decode(k)): decode(x) for k, x in pairs}
            except TypeError:
                raise _bad("__items__", "expected keys that are numbers, strings or lists of them") from None
        if "__ndarray__" in v:
            return _array(v)
        return {k: decode(x) for k, x in v.items()}
    return v


def _bad(tag: str, what: str):
    return DataError(f"the document holds an invalid {tag} value: {what}. It is corrupt or was edited; "
                     "save the model again.")


def _tag(v: dict, tag: str, extra: tuple = ()):
    if set(v) - {tag, *extra}:
        raise _bad(tag, f"unknown field(s) {sorted(set(v) - {tag, *extra})[:3]}")
    return v[tag]


def _list(v, tag: str) -> list:
    if not isinstance(v, list):
        raise _bad(tag, "expected a list")
    return v


def _float(text) -> float:
    if not isinstance(text, str) or text not in ("inf", "-inf", "nan"):
        raise _bad("__float__", f"expected \"inf\", \"-inf\" or \"nan\"; got {str(text)[:40]!r}")
    return float(text)


def _array(v: dict) -> np.ndarray:
    """A tagged array: numeric (or boolean) dtype only, its shape filled by its entries exactly
    (a text dtype such as ``S1000000000`` would allocate its size per entry)."""
    values = _list(_tag(v, "__ndarray__", ("dtype", "shape")), "__ndarray__")
    dtype, shape = v.get("dtype"), v.get("shape")
    try:
        dt = np.dtype(dtype) if isinstance(dtype, str) and len(dtype) <= 16 else None
    except TypeError:
        dt = None
    if dt is None or dt.kind not in _ARRAY_KINDS or dt.itemsize > 16:
        raise _bad("__ndarray__", f"expected a numeric dtype such as \"float64\"; got {str(dtype)[:40]!r}")
    if (not isinstance(shape, list) or len(shape) > _MAX_DIMS
            or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 2 ** 31 for n in shape)
            or int(np.prod(shape, dtype=object)) != len(values)):
        raise _bad("__ndarray__", f"expected a shape its {len(values):,d} entries fill; got {str(shape)[:40]}")
    items = [decode(x) for x in values]
    if not all(isinstance(x, (bool, int, float)) for x in items):
        raise _bad("__ndarray__", "expected numbers")
    try:
        return np.array(items, dtype=dt).reshape(shape)
    except (OverflowError, ValueError, TypeError) as e:
        raise _bad("__ndarray__", f"the entries do not fit {dt} ({e})") from None


def _hashable(k):
    return tuple(_hashable(x) for x in k) if isinstance(k, list) else k
