"""Reductions that make a fit independent of the number of rows (pure numpy, no dask).

Everything a risk-score fit needs from its rows is a function of two small tables that can be
built a chunk at a time and added up:

* the **weighted distinct patterns**: each distinct (design row, outcome) with its number of
  rows and its total sample weight — the mean logistic loss of Ustun & Rudin (2019) is a
  weighted sum over them (:class:`~riskformula.problem.LogisticLoss` collapses rows the same way);
* per thresholded variable, the **sorted distinct values with their numbers of events and
  non-events** — every candidate cut of Molero-Río & D'Ambrosio's thresholds, the pruning of
  cuts that cannot be optimal and the exact quantile grid follow from it
  (:func:`riskformula.thresholds.candidates.cuts_from_table`, which the pandas fit uses too).

Both tables are merged by concatenating and collapsing again, so partial tables from any
number of chunks or machines combine into the exact table of all rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["merge_value_tables", "collapse_patterns", "merge_patterns", "narrowest"]


# --------------------------------------------------------------------------------------
# distinct values with outcome counts (thresholds)
# --------------------------------------------------------------------------------------


def merge_value_tables(tables) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The value table of the union of the rows behind several value tables."""
    tables = list(tables)
    if not tables:
        return np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
    v = np.concatenate([t[0] for t in tables])
    u, code = np.unique(v, return_inverse=True)
    ev = np.bincount(code, weights=np.concatenate([t[1] for t in tables]), minlength=len(u))
    ne = np.bincount(code, weights=np.concatenate([t[2] for t in tables]), minlength=len(u))
    return u, ev.round().astype(np.int64), ne.round().astype(np.int64)


# --------------------------------------------------------------------------------------
# weighted distinct patterns (the loss)
# --------------------------------------------------------------------------------------


def group_codes(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first row of each group, group code of every row) of identical rows of ``Z``.

    Design columns take few distinct values (0/1 indicators, small integers), so each row gets
    an exact integer key: its columns' value codes in mixed radix.  When the radix would
    overflow (many columns with many values), rows are grouped by a 64-bit hash of their values
    and every row is compared with its group's first row, so a hash collision can never merge
    two different rows (it falls back to an exact sort).
    """
    n, d = Z.shape
    if d == 0:
        return np.zeros(min(n, 1), dtype=np.intp), np.zeros(n, dtype=np.intp)
    if Z.dtype.kind == "f":
        Z = Z + 0.0  # -0.0 as 0.0: equal numbers must get equal keys
    key: np.ndarray | None = np.zeros(n, dtype=np.int64)
    radix = 1
    for j in range(d):
        codes, values = pd.factorize(Z[:, j])
        if radix * max(len(values), 1) >= 2 ** 62:
            key = None
            break
        key += codes.astype(np.int64) * radix
        radix *= max(len(values), 1)
    if key is not None:
        codes, _ = pd.factorize(key)
        return _first_rows(codes), codes.astype(np.intp)
    h = pd.util.hash_pandas_object(pd.DataFrame(Z), index=False).to_numpy()
    codes, _ = pd.factorize(h)
    first = _first_rows(codes)
    if np.array_equal(Z, Z[first[codes]]):
        return first, codes.astype(np.intp)
    rows = np.ascontiguousarray(Z).view(np.dtype((np.void, Z.itemsize * d))).ravel()
    _, first, codes = np.unique(rows, return_index=True, return_inverse=True)
    return first.astype(np.intp), codes.ravel().astype(np.intp)


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """Position of the first row of each code 0..max."""
    first = np.full(codes.max() + 1 if len(codes) else 0, -1, dtype=np.intp)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)  # reversed, so the earliest write wins
    return first


def collapse_patterns(Z, **weights) -> tuple[np.ndarray, dict]:
    """Distinct rows of ``Z`` (in its dtype if numeric, else as floats) and the sum of every named
    weight vector over each.

    Examples
    --------
    >>> Z, w = collapse_patterns(np.array([[1., 0.], [0., 1.], [1., 0.]]), n=np.array([1, 1, 1]))
    >>> Z.tolist(), w["n"].tolist()
    ([[1.0, 0.0], [0.0, 1.0]], [2.0, 1.0])
    """
    Z = np.asarray(Z)
    if Z.dtype.kind not in "iuf":
        Z = Z.astype(float)
    first, codes = group_codes(Z)
    m = len(first)
    out = {k: np.bincount(codes, weights=np.asarray(w, dtype=float), minlength=m) for k, w in weights.items()}
    return Z[first], out


#: the integer dtypes a pattern table is kept in when its values are whole numbers they hold
_NARROW = (np.int8, np.int16, np.int32)


def narrowest(Z: np.ndarray) -> np.ndarray:
    """``Z`` in the narrowest of int8, int16 and int32 that holds its values exactly when they are
    whole numbers (0/1 indicators, counts: a pattern table of binary columns takes an eighth of the
    memory to keep and to merge), else ``Z`` itself.  Converting back to floats gives ``Z`` again.

    Examples
    --------
    >>> narrowest(np.array([[1.0, 0.0], [-0.0, 3.0]])).dtype, narrowest(np.array([0.5, 1.0])).dtype
    (dtype('int8'), dtype('float64'))
    """
    if Z.dtype.kind != "f" or Z.size == 0:
        return Z
    lo, hi = float(Z.min()), float(Z.max())
    for t in _NARROW:
        info = np.iinfo(t)
        if info.min <= lo and hi <= info.max:  # False for NaN
            whole = np.array_equal(Z, np.trunc(Z))
            return Z.astype(t) if whole else Z
    return Z


def merge_patterns(parts) -> tuple[np.ndarray, dict]:
    """Collapse several ``(Z, weights)`` pattern tables (same columns, same weight names) into one."""
    parts = [p for p in parts if p is not None]
    Z = np.concatenate([p[0] for p in parts])
    keys = parts[0][1].keys()
    return collapse_patterns(Z, **{k: np.concatenate([p[1][k] for p in parts]) for k in keys})
