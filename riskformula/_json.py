"""JSON values for what plain JSON would lose: tuples, arrays, non-finite floats, non-string keys.

``encode`` tags them (``__tuple__``, ``__ndarray__``, ``__float__``, ``__items__``) and ``decode``
restores them exactly; used by the saved model document (:mod:`riskformula.io`) and the design
spec's serialisation (:mod:`riskformula.design.serialize`).
"""

from __future__ import annotations

import math

import numpy as np


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


def decode(v):
    if isinstance(v, list):
        return [decode(x) for x in v]
    if isinstance(v, dict):
        if "__float__" in v:
            return float(v["__float__"])
        if "__tuple__" in v:
            return tuple(decode(x) for x in v["__tuple__"])
        if "__items__" in v:
            return {_hashable(decode(k)): decode(x) for k, x in v["__items__"]}
        if "__ndarray__" in v:
            return np.array(decode(v["__ndarray__"]), dtype=v["dtype"]).reshape(v["shape"])
        return {k: decode(x) for k, x in v.items()}
    return v


def _hashable(k):
    return tuple(_hashable(x) for x in k) if isinstance(k, list) else k
