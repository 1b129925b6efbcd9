"""Checks of user arguments, in one place; every message says what was received and what to do."""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from .errors import DataError, SettingsError


# Bounds of numeric arguments: what the arithmetic supports (scores and points stay exact whole
# numbers in float64, risks stay distinct from one point to the next, clocks and counters stay in
# range), with room to spare for any sensible setting.

#: the largest number of points of one item (``coef_range``) and of the intercept (``intercept_range``)
MAX_POINTS = 10_000
MAX_INTERCEPT = 1_000_000
#: score scales (points per logit) allowed: one point is at most 1 000 logits and at least 1/10 000 of one
SCALE_RANGE = (1e-3, 1e4)
#: the largest size penalty ``c0`` (a mean loss is a few units at most: above this every item costs more
#: than any loss it could save) and the largest ``positive_weight`` (its inverse is the smallest)
MAX_C0 = 1e6
MAX_CLASS_WEIGHT = 1e6
#: the longest time limit, in seconds (about 116 days), and the largest counts (terms, nodes, members)
MAX_SECONDS = 1e7
MAX_SIZE = 1_000_000
MAX_COUNT = 10 ** 15
#: target risks are kept this far from 0 and 1 (closer, a risk is not distinct from its neighbours')
RISK_MARGIN = 1e-12


def check_int(name: str, value, minimum: int | None = None, allow_none: bool = False, maximum: int | None = None):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SettingsError(f"`{name}` must be a whole number; got {value!r}.")
    if minimum is not None and value < minimum:
        raise SettingsError(f"`{name}` must be at least {minimum}; got {value}.")
    if maximum is not None and int(value) > maximum:
        raise SettingsError(f"`{name}` must be at most {maximum:,d}; got {int(value):,d}.")
    return int(value)


def check_positive(name: str, value, allow_zero: bool = False, allow_none: bool = False,
                   maximum: float | None = None, minimum: float | None = None):
    """A finite non-negative (``allow_zero``) or positive number, at most ``maximum`` and (when
    not 0) at least ``minimum``; a :class:`SettingsError` that says the range otherwise."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise SettingsError(f"`{name}` must be a finite number; got {value!r}.")
    if value < 0 or (value == 0 and not allow_zero):
        raise SettingsError(f"`{name}` must be {'non-negative' if allow_zero else 'positive'}; got {value}.")
    x = float(value)
    if (maximum is not None and x > maximum) or (minimum is not None and 0 < x < minimum):
        low = f"{minimum:g}" if minimum is not None else "0"
        high = f"{maximum:g}" if maximum is not None else "any"
        raise SettingsError(f"`{name}` must be between {low} and {high}; got {x:g}. Larger or smaller "
                            "values are beyond what the arithmetic of a risk score supports.")
    return float(value)


def check_time_limit(name: str, value) -> float:
    """A positive number of seconds, at most :data:`MAX_SECONDS`."""
    value = check_positive(name, value)
    if value > MAX_SECONDS:
        raise SettingsError(f"`{name}` must be at most {MAX_SECONDS:g} seconds (about 116 days); got {value:g}.")
    return value


def check_gap_tolerance(value) -> float:
    """``gap_tolerance``: a relative optimality gap in [0, 1). The gap is (objective − bound) /
    objective, and a search whose bound is still 0 has gap 1 (100%), so a tolerance of 1 or more
    would accept any model as proven optimal."""
    value = check_positive("gap_tolerance", value, allow_zero=True)
    if value >= 1:
        raise SettingsError(f"`gap_tolerance` must be a relative gap in [0, 1), such as 1e-6 or 0.01 (1%); got "
                            f"{value:g}. At 1 or more any model, even one the search has not improved on, "
                            "would count as proven optimal.")
    return value


def check_range(name: str, value, limit: int = MAX_POINTS) -> tuple[int, int]:
    """An integer ``(low, high)`` pair with low ≤ high, both within ±``limit``."""
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise SettingsError(f"`{name}` must be a (low, high) pair of integers such as (-5, 5); "
                            f"got {value!r}.") from None
    for v in (lo, hi):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not float(v).is_integer():
            raise SettingsError(f"`{name}` must hold integers (points are whole numbers); got {value!r}.")
    if lo > hi:
        raise SettingsError(f"`{name}` has low > high: {value!r}. Write it as (low, high).")
    if not -limit <= lo <= hi <= limit:
        fix = ("a risk score's points are small whole numbers: rescale the variable (e.g. to tens or hundreds) "
               "instead" if limit == MAX_POINTS else "beyond them every risk is 0 or 1")
        raise SettingsError(f"`{name}` must lie within ±{limit:,d} points; got {value!r}: {fix}.")
    return int(lo), int(hi)


def coef_range_entries(coef_range, terms) -> list[tuple[str, int, int, list[int]]]:
    """``coef_range`` as its entries, each ``(the entry as the user wrote it, low, high, the design
    columns it sets)``: one ``(low, high)`` pair sets every column; in a dict, keys are resolved by
    the design's :class:`~riskformula.design.terms.TermResolver` (``terms``): a design column
    (``"C(sex)[T.m]"``), its label (``"sex = m"``), a formula term (``"C(sex)"``: all its columns)
    or a variable (``"sex"``, ``"age"`` of ``threshold(age)``); a later key overrides an earlier
    one, and ``"default"`` (−5…5 unless given) sets the rest."""
    d = terms.n_columns
    if not isinstance(coef_range, dict):
        lo, hi = check_range("coef_range", coef_range)
        return [(f"coef_range=({lo}, {hi})", lo, hi, list(range(d)))]
    ranges = {"default": check_range("coef_range['default']", coef_range.get("default", (-5, 5)))}
    owner = ["default"] * d
    for key, rng in coef_range.items():
        if key == "default":
            continue
        hits = terms.columns(key, where="`coef_range`")
        ranges[key] = check_range(f"coef_range[{key!r}]", rng)
        for j in hits:
            owner[j] = key
    entries = []
    for key, (lo, hi) in ranges.items():
        cols = [j for j in range(d) if owner[j] == key]
        if cols:
            entries.append((f"coef_range[{key!r}]=({lo}, {hi})", lo, hi, cols))
    return entries


def check_coef_bounds(coef_range, terms) -> tuple[np.ndarray, np.ndarray]:
    """Per-column integer bounds (lower, upper arrays) from ``coef_range``: one ``(low, high)``
    pair or a dict keyed by term names (see :func:`coef_range_entries`)."""
    lower, upper = np.zeros(terms.n_columns), np.zeros(terms.n_columns)
    for _, lo, hi, cols in coef_range_entries(coef_range, terms):
        lower[cols], upper[cols] = lo, hi
    return lower, upper


def sign_closed_ranges(coef_range, terms) -> list[tuple[str, list[int]]]:
    """The entries of ``coef_range`` that forbid points of one sign or both (low ≥ 0 or high ≤ 0),
    each as ``(the entry as the user wrote it, the columns it sets)``.

    Only these bounds can conflict with a constraint that asks for a term to be used or to have a
    sign, so they are what the infeasibility check (:func:`riskformula.solver.feasibility.raise_if_infeasible`)
    tries relaxing when it names the conflicting settings."""
    return [(name, cols) for name, lo, hi, cols in coef_range_entries(coef_range, terms) if lo >= 0 or hi <= 0]


def check_weights(weights, data: pd.DataFrame, missing: str | None = None) -> pd.Series | None:
    """Sample weights as a float Series indexed like ``data``; finite and non-negative.

    ``weights`` is a column name, a pandas Series (matched to the rows by index label, as pandas
    matches columns) or one value per row in row order.  A missing weight is an error, except
    with ``missing="drop"``: it stays NaN and its row is dropped like any incomplete row.
    ``missing=None`` is for callers without that option (the error then does not offer it).
    Only relative weights matter: weights whose largest value is beyond 2^±300 are rescaled by a
    power of two (exactly), so that their sum neither overflows nor loses precision.
    """
    if weights is None:
        return None
    if isinstance(weights, str):
        if weights not in data.columns:
            raise SettingsError(f"`weights={weights!r}` is not a column of `data`; pass a column name or "
                                f"one weight per row. Columns: {list(data.columns)[:20]}.")
        w = data[weights]
    elif isinstance(weights, pd.Series):
        w = _by_label(weights, data.index)
    else:
        values = np.asarray(weights)
        if values.ndim != 1 or len(values) != len(data):
            raise SettingsError(f"`weights` must have one value per row of `data` ({len(data)}); "
                                f"got shape {values.shape}.")
        w = pd.Series(values, index=data.index)
    try:
        w = w.astype(float)
    except (TypeError, ValueError):
        raise DataError("`weights` must be numbers.") from None
    absent = w.isna()
    if absent.any() and missing != "drop":
        labels = list(w.index[absent][:5])
        more = ", ..." if absent.sum() > 5 else ""
        fix = ("Pass missing='drop' to fit without those rows (reported in the summary), or fill them in."
               if missing is not None else "Fill them in or drop those rows.")
        raise DataError(f"`weights` has {int(absent.sum())} missing value(s), in the row(s) labelled "
                        f"{', '.join(map(repr, labels))}{more}. {fix}")
    given = w[~absent]
    if not np.isfinite(given.to_numpy()).all() or (given < 0).any():
        raise DataError("`weights` must be finite and non-negative.")
    top = float(given.max()) if len(given) else 0.0
    if top <= 0:
        raise DataError("`weights` sum to zero; at least one row needs a positive weight.")
    if not 2.0 ** -300 <= top <= 2.0 ** 300:
        # only relative weights matter: weights of 1e308 overflow their sum, and weights of 1e-320
        # lose their precision (subnormal); a power of two rescales them exactly
        w = pd.Series(np.ldexp(w.to_numpy(dtype=float), -math.frexp(top)[1]), index=w.index, name=w.name)
    return w


def _by_label(weights: pd.Series, index: pd.Index) -> pd.Series:
    """``weights`` reordered by label to the rows ``index`` names: taken by position, a Series
    with the same labels in another order (e.g. after a sort) would weight the wrong rows."""
    if weights.index.equals(index):
        return weights
    if (len(weights) == len(index) and weights.index.is_unique and index.is_unique
            and weights.index.isin(index).all()):
        return weights.reindex(index)
    strangers = weights.index[~weights.index.isin(index)]
    detail = (f"{len(strangers)} of its labels are not in data.index (e.g. {list(strangers[:3])})" if len(strangers)
              else f"it has {len(weights)} value(s) for {len(index)} row(s)" if len(weights) != len(index)
              else "its index or data.index has duplicated labels")
    raise DataError(f"`weights` is a pandas Series whose index does not match the rows of `data`: {detail}. "
                    "A Series is matched to rows by index label; align it first (weights.reindex(data.index)), "
                    "or pass weights.to_numpy() to use its values in row order.")


#: the score scales ``scale="fit"`` searches: a geometric-like grid (steps of 1.25 to 1.5) from 0.5
#: (one point = two logits, for nearly separable data) to 8 (eight points = one logit, for weak effects)
FIT_SCALES = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def check_scale(scale) -> tuple[float, ...]:
    """The ``scale=`` argument as the sorted tuple of score scales to search: a number (that
    scale), ``"fit"`` (:data:`FIT_SCALES`, which the search may refine) or a list of numbers; None
    (the objective's default) is 1 here."""
    if scale is None:
        return (1.0,)
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
            values = []
        if not values:
            raise SettingsError(f"`scale` must be a positive number, \"fit\" or a non-empty list of positive "
                                f"numbers such as [1, 2, 4]; got {scale!r}.")
    for m in values:
        if (isinstance(m, bool) or not isinstance(m, numbers.Real) or not math.isfinite(m) or m <= 0):
            raise SettingsError(f"`scale` values must be positive finite numbers (the points that make one "
                                f"logit, e.g. 1, 2.5 or 4); got {m!r}.")
        if not SCALE_RANGE[0] <= float(m) <= SCALE_RANGE[1]:
            raise SettingsError(f"`scale` values must lie between {SCALE_RANGE[0]:g} and {SCALE_RANGE[1]:g} points "
                                f"per logit; got {m:g}. Beyond them neighbouring scores have the same risk (or one "
                                "point spans more than the whole range of risks).")
    if len(values) > 1000:
        raise SettingsError(f"`scale` lists {len(values):,d} scales; give at most 1 000 (each is a search).")
    return tuple(sorted({float(m) for m in values}))


def group_column(frame: pd.DataFrame, name, what: str, rows: str = "these rows") -> np.ndarray:
    """Values of the group column ``name`` of ``frame`` (fairness constraints at fit time, and
    audits); missing values are an error: a row with no group cannot be counted in any (and
    silently making "NA" a group, or dropping those rows, would change the rates compared)."""
    v = frame[name]
    n_missing = int(v.isna().sum())
    if n_missing:
        raise DataError(f"{what}: column {name!r} has {n_missing:,d} missing value(s) among {rows}; "
                        f"every row must belong to a group. Drop those rows or code the missing values as a "
                        f"level of their own (e.g. data[{name!r}].fillna('unknown')).")
    return v.to_numpy()
