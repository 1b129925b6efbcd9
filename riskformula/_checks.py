"""Checks of user arguments, in one place; every message says what was received and what to do."""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from .errors import DataError, SettingsError


def check_int(name: str, value, minimum: int | None = None, allow_none: bool = False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SettingsError(f"`{name}` must be a whole number; got {value!r}.")
    if minimum is not None and value < minimum:
        raise SettingsError(f"`{name}` must be at least {minimum}; got {value}.")
    return int(value)


def check_positive(name: str, value, allow_zero: bool = False, allow_none: bool = False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise SettingsError(f"`{name}` must be a finite number; got {value!r}.")
    if value < 0 or (value == 0 and not allow_zero):
        raise SettingsError(f"`{name}` must be {'non-negative' if allow_zero else 'positive'}; got {value}.")
    return float(value)


def check_range(name: str, value) -> tuple[int, int]:
    """An integer ``(low, high)`` pair with low ≤ high."""
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise SettingsError(f"`{name}` must be a (low, high) pair of integers such as (-5, 5); got {value!r}.") from None
    for v in (lo, hi):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not float(v).is_integer():
            raise SettingsError(f"`{name}` must hold integers (points are whole numbers); got {value!r}.")
    if lo > hi:
        raise SettingsError(f"`{name}` has low > high: {value!r}. Write it as (low, high).")
    return int(lo), int(hi)


def check_coef_bounds(coef_range, terms) -> tuple[np.ndarray, np.ndarray]:
    """Per-column integer bounds from one ``(low, high)`` pair or a dict keyed by term names.

    Keys of a dict are resolved by the design's :class:`~riskformula.design.terms.TermResolver`
    (``terms``): a design column (``"C(sex)[T.m]"``), its label (``"sex = m"``), a formula term
    (``"C(sex)"``: all its columns) or a variable (``"sex"``, ``"age"`` of ``threshold(age)``);
    ``"default"`` sets the rest.
    """
    d = terms.n_columns
    if not isinstance(coef_range, dict):
        lo, hi = check_range("coef_range", coef_range)
        return np.full(d, float(lo)), np.full(d, float(hi))
    default = check_range("coef_range['default']", coef_range.get("default", (-5, 5)))
    lower, upper = np.full(d, float(default[0])), np.full(d, float(default[1]))
    for key, rng in coef_range.items():
        if key == "default":
            continue
        hits = terms.columns(key, where="`coef_range`")
        lo, hi = check_range(f"coef_range[{key!r}]", rng)
        lower[hits], upper[hits] = lo, hi
    return lower, upper


def check_weights(weights, data: pd.DataFrame) -> np.ndarray | None:
    """Sample weights from a column name or an array of len(data); finite and non-negative."""
    if weights is None:
        return None
    if isinstance(weights, str):
        if weights not in data.columns:
            raise SettingsError(f"`weights={weights!r}` is not a column of `data`; pass a column name or "
                                f"one weight per row. Columns: {list(data.columns)[:20]}.")
        w = data[weights]
    else:
        w = pd.Series(np.asarray(weights), index=data.index) if len(np.asarray(weights)) == len(data) else None
        if w is None:
            raise SettingsError(f"`weights` must have one value per row of `data` ({len(data)}); got {len(np.asarray(weights))}.")
    try:
        w = w.astype(float)
    except (TypeError, ValueError):
        raise DataError("`weights` must be numbers.") from None
    if w.isna().any() or not np.isfinite(w.to_numpy()).all() or (w < 0).any():
        raise DataError("`weights` must be finite and non-negative (no missing values).")
    if float(w.sum()) <= 0:
        raise DataError("`weights` sum to zero; at least one row needs a positive weight.")
    return w


#: the score scales ``scale="fit"`` searches: a geometric-like grid (steps of 1.25 to 1.5) from 0.5
#: (one point = two logits, for nearly separable data) to 8 (eight points = one logit, for weak effects)
FIT_SCALES = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def check_scale(scale) -> tuple[float, ...]:
    """The ``scale=`` argument as the sorted tuple of score scales to search: a number (that
    scale), ``"fit"`` (:data:`FIT_SCALES`, which the search may refine) or a list of numbers."""
    if isinstance(scale, str):
        if scale == "fit":
            return FIT_SCALES
        raise SettingsError(f"`scale` must be a positive number (1: one point per logit), \"fit\" (choose "
                            f"among {', '.join(f'{m:g}' for m in FIT_SCALES)}) or a list of numbers; "
                            f"got {scale!r}.")
    if isinstance(scale, numbers.Real) and not isinstance(scale, bool):
        values = [scale]
    else:
        try:
            values = list(scale)
        except TypeError:
            values = None
        if not values:
            raise SettingsError(f"`scale` must be a positive number, \"fit\" or a non-empty list of positive "
                                f"numbers such as [1, 2, 4]; got {scale!r}.")
    for m in values:
        if (isinstance(m, bool) or not isinstance(m, numbers.Real) or not math.isfinite(m) or m <= 0):
            raise SettingsError(f"`scale` values must be positive finite numbers (the points that make one "
                                f"logit, e.g. 1, 2.5 or 4); got {m!r}.")
    return tuple(sorted({float(m) for m in values}))
