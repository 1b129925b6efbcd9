"""Checks and conversions shared by the metrics: arrays in, validated float copies out."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import DataError, SettingsError


def check_level(level) -> None:
    """A confidence level strictly between 0 and 1 (an argument, hence SettingsError)."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)) or not 0 < level < 1:
        raise SettingsError(f"`level` must be a number between 0 and 1, such as 0.95; got {level!r}.")


def as_float_array(x, name: str) -> np.ndarray:
    """1-d float copy of ``x``; pandas nullable values become NaN."""
    if isinstance(x, (pd.Series, pd.Index)):
        try:
            x = x.to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError) as e:
            raise DataError(f"`{name}` must be numeric; got dtype {x.dtype}.") from e
    try:
        arr = np.array(x, dtype=float)  # np.array copies: the caller's data is never touched
    except (TypeError, ValueError) as e:
        raise DataError(f"`{name}` must be numeric; got {type(x).__name__} that cannot be "
                        "converted to numbers.") from e
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise DataError(f"`{name}` must be one-dimensional; got shape {arr.shape}.")
    return arr


def _positions(mask: np.ndarray, limit: int = 5) -> str:
    idx = np.flatnonzero(mask)
    shown = ", ".join(str(i) for i in idx[:limit])
    return shown + (", ..." if idx.size > limit else "")


def prepare(y, risk=None, score=None, weights=None, *, need_both_classes: bool = False):
    """Validate and convert inputs; drop rows with zero weight (they count as absent)."""
    arrays = {"y": as_float_array(y, "y")}
    if risk is not None:
        arrays["risk"] = as_float_array(risk, "risk")
    if score is not None:
        arrays["score"] = as_float_array(score, "score")
    if weights is not None:
        arrays["weights"] = as_float_array(weights, "weights")
    n = arrays["y"].size
    if n == 0:
        raise DataError("`y` is empty; at least one observation is needed.")
    for name, arr in arrays.items():
        if arr.size != n:
            raise DataError(f"`{name}` has {arr.size} values but `y` has {n}; "
                            "pass arrays of the same length.")
    for name, arr in arrays.items():
        bad = np.isnan(arr)
        if bad.any():
            raise DataError(f"`{name}` has {int(bad.sum())} missing (NaN) value(s) at "
                            f"position(s) {_positions(bad)}; drop or impute them first.")
        bad = np.isinf(arr)
        if bad.any():
            raise DataError(f"`{name}` has {int(bad.sum())} infinite value(s) at "
                            f"position(s) {_positions(bad)}.")
    yv = arrays["y"]
    bad = (yv != 0) & (yv != 1)
    if bad.any():
        vals = ", ".join(f"{v:g}" for v in np.unique(yv[bad])[:5])
        raise DataError(f"`y` must hold 0/1 event indicators; got other values ({vals}) at "
                        f"position(s) {_positions(bad)}.")
    if "risk" in arrays:
        r = arrays["risk"]
        bad = (r < 0) | (r > 1)
        if bad.any():
            raise DataError(f"`risk` must be probabilities in [0, 1]; got values outside at "
                            f"position(s) {_positions(bad)} (e.g. {r[bad][0]:g}). "
                            "Pass predicted risks, not scores or logits.")
    if "weights" in arrays:
        w = arrays["weights"]
        bad = w < 0
        if bad.any():
            raise DataError(f"`weights` must be nonnegative frequency weights; got negative "
                            f"values at position(s) {_positions(bad)}.")
        if w.sum() <= 0:
            raise DataError("`weights` sum to zero; at least one row needs a positive weight.")
        keep = w > 0
        if not keep.all():
            arrays = {k: v[keep] for k, v in arrays.items()}
    else:
        arrays["weights"] = np.ones(n)
    if need_both_classes:
        w, yv = arrays["weights"], arrays["y"]
        if not (w[yv == 1].sum() > 0 and w[yv == 0].sum() > 0):
            only = "events (y = 1)" if (yv == 1).all() else "non-events (y = 0)"
            raise DataError(f"`y` contains only {only}; this metric needs both classes.")
    return arrays


def weighted_mean(x: np.ndarray, w: np.ndarray) -> float:
    return float(np.sum(w * x) / np.sum(w))


def tidy_number(v: float):
    """Return an int for integral floats so tables show ``3`` rather than ``3.0``."""
    return int(v) if float(v).is_integer() else float(v)
