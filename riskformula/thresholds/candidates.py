"""Which cuts of a thresholded variable the fit may choose from: its candidate cuts.

Only the order of a predictor's values matters to a cut: any cut between two consecutive distinct
training values splits the rows the same way.  Everything here works on the variable's **value
table** — its sorted distinct values with the number of rows (and of events) at each — so the
pandas fit and the dask fit (whose tables are added up over partitions) get the same cuts:

* **gaps**: one candidate per gap between consecutive distinct values, written as the roundest
  number in ``[lower value, upper value)`` (``age ≤ 60`` rather than ``age ≤ 60.5``: the same split
  of the training rows, so the same fit and certificate, and a cut a clinician would write);
* **pruning** (exact, when the outcome is known): inside a run of consecutive values whose rows
  all have one outcome, moving a cut changes every moved row's loss in one direction, so a cut
  sits at an end of the run or, with several cuts of one variable, packed next to one (see
  :func:`undominated_gaps`);
* **min_bin**: a cut must leave at least that share of the rows on each side (optbinning's
  ``min_bin_size``);
* **grid**: at most about that many cuts, at the gaps holding evenly spaced quantiles of the
  rows (the certificate is then optimal relative to the grid).  ``threshold(x)``'s default,
  ``grid="auto"``, keeps every gap of a variable with up to :data:`AUTO_ABOVE` distinct values and
  takes a :data:`AUTO_GRID`-cut grid above (a distance in metres, an income); ``grid=None`` keeps
  every gap whatever the size.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["value_table", "linear_quantiles", "undominated_gaps", "roundest", "cuts_from_table", "resolve_grid",
           "AUTO", "AUTO_GRID", "AUTO_ABOVE"]

#: ``threshold(x)``'s default ``grid``: every gap up to :data:`AUTO_ABOVE` distinct values, a
#: quantile grid of :data:`AUTO_GRID` cuts above (measured in ``benchmarks/auto_grid.py``)
AUTO = "auto"
AUTO_ABOVE = 1000
AUTO_GRID = 100


def resolve_grid(grid, n_distinct: int) -> int | None:
    """The grid ``grid="auto"`` stands for on a variable with ``n_distinct`` distinct values
    (:data:`AUTO_GRID` cuts above :data:`AUTO_ABOVE` values, else None: every gap); any other
    ``grid`` as it is."""
    if isinstance(grid, str) and grid == AUTO:
        return AUTO_GRID if n_distinct > AUTO_ABOVE else None
    return grid


def value_table(x, y=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct finite values of ``x`` with the number of rows where ``y == 1`` (events)
    and ``y == 0`` (non-events) at each value; without ``y`` every row counts as a non-event.

    Examples
    --------
    >>> v, ev, ne = value_table([3.0, 1.0, 3.0, np.inf], [1, 0, 0, 1])
    >>> v.tolist(), ev.tolist(), ne.tolist()
    ([1.0, 3.0], [0, 1], [1, 1])
    """
    x = np.asarray(x, dtype=float)
    finite = np.isfinite(x)
    v, code = np.unique(x[finite], return_inverse=True)
    if y is None:
        return v, np.zeros(len(v), np.int64), np.bincount(code, minlength=len(v)).astype(np.int64)
    yf = np.asarray(y)[finite]
    ev = np.bincount(code, weights=(yf == 1), minlength=len(v)).astype(np.int64)
    ne = np.bincount(code, weights=(yf == 0), minlength=len(v)).astype(np.int64)
    return v, ev, ne


def linear_quantiles(values: np.ndarray, counts: np.ndarray, q) -> np.ndarray:
    """``np.quantile(x, q)`` (its default "linear" method) of the rows behind a table of sorted
    distinct ``values`` and their ``counts``, to the last bit.

    numpy places quantile q at the virtual index ``(n − 1)·q`` of the sorted rows and
    interpolates between its two neighbours; the same arithmetic is repeated here, with the
    neighbours looked up by rank in the cumulative counts instead of in the sorted rows.
    """
    values = np.asarray(values, dtype=float)
    counts = np.asarray(counts, dtype=np.int64)
    q = np.asarray(q, dtype=float)
    n = int(counts.sum())
    if n == 0:
        raise ValueError("quantiles of an empty table")
    virtual = (n - 1) * q  # numpy's virtual index of the "linear" method
    prev = np.floor(virtual)
    gamma = virtual - prev
    lo = np.clip(prev, 0, n - 1).astype(np.int64)
    hi = np.clip(prev + 1, 0, n - 1).astype(np.int64)
    at_end = (virtual >= n - 1) | (virtual < 0)
    lo = np.where(virtual >= n - 1, n - 1, np.where(virtual < 0, 0, lo))
    hi = np.where(at_end, lo, hi)
    cum = np.cumsum(counts)
    a = values[np.searchsorted(cum, lo, side="right")]
    b = values[np.searchsorted(cum, hi, side="right")]
    diff = b - a
    out = a + diff * gamma
    upper = gamma >= 0.5
    out[upper] = (b - diff * (1 - gamma))[upper]
    return out


def undominated_gaps(events, non_events, depth: int | None = 1) -> np.ndarray:
    """Which gaps between consecutive distinct values can hold a cut of an optimal score.

    ``events``/``non_events`` count the rows at each sorted distinct value; a value is *pure*
    when all its rows share one outcome.  A gap next to a mixed value or between values of
    different outcomes is a **boundary** gap and always kept.  Inside a run of pure values of one
    outcome, a cut can move towards one end without making any moved row worse (every moved
    row's logistic loss moves the same way), until it meets the run's end or another cut: with at
    most ``depth`` cuts on the variable, the optimal cuts inside a run are packed within
    ``depth − 1`` gaps of a boundary gap (two cuts pushing towards each other are never optimal:
    exchanging their points is better).  Towards the lowest or highest value a cut can move
    out of the data, where it is constant and its points join the intercept.  ``depth=None``
    keeps every gap.
    """
    ev, ne = np.asarray(events), np.asarray(non_events)
    n_gaps = max(len(ev) - 1, 0)
    if depth is None or n_gaps == 0:
        return np.ones(n_gaps, bool)
    status = np.where((ev > 0) & (ne == 0), 1, np.where((ne > 0) & (ev == 0), 0, 2))
    boundary = (status[:-1] == 2) | (status[1:] == 2) | (status[:-1] != status[1:])
    where = np.flatnonzero(boundary)
    if len(where) == 0:
        return boundary
    gaps = np.arange(n_gaps)
    right = np.searchsorted(where, gaps, side="left")  # first boundary gap at or after each gap
    after = np.where(right < len(where), where[np.minimum(right, len(where) - 1)] - gaps, n_gaps + depth)
    left = right - 1 + boundary.astype(int)  # last boundary gap at or before each gap
    before = np.where(left >= 0, gaps - where[np.maximum(left, 0)], n_gaps + depth)
    return np.minimum(after, before) <= depth - 1


def roundest(lower: float, upper: float) -> float:
    """The number with the fewest significant digits in ``[lower, upper)`` (a cut that splits the
    values ``lower`` and ``upper`` as their midpoint does, written as a person would).

    Examples
    --------
    >>> roundest(60, 61), roundest(59.7, 61.2), roundest(14.127, 14.134), roundest(-0.5, 0.25)
    (60, 60, 14.13, 0)
    """
    if not (math.isfinite(lower) and math.isfinite(upper)) or not lower < upper:
        raise ValueError(f"roundest needs finite lower < upper; got {lower!r}, {upper!r}")
    top = math.floor(math.log10(max(abs(lower), abs(upper), upper - lower))) + 1
    for e in range(top, top - 18, -1):
        for m in (5, 2, 1):
            step = m * 10.0 ** e
            c = math.ceil(lower / step) * step
            c = round(c, max(0, -e + 1))
            if lower <= c < upper:
                return int(c) if float(c).is_integer() and abs(c) < 2 ** 53 else float(c)
    return (lower + upper) / 2  # values closer than any decimal step: their midpoint


def cuts_from_table(values, events, non_events, *, grid: int | str | None = None, min_bin: float = 0.0,
                    depth: int | None = None, prune: bool = False) -> tuple[np.ndarray, bool]:
    """Candidate cuts from a value table (see the module text).  Returns ``(cuts, on_grid)``.

    ``prune`` drops the gaps :func:`undominated_gaps` rules out for ``depth`` cuts per variable;
    ``min_bin`` keeps the gaps with at least that share of the rows on each side (the most
    balanced gap when none has); ``grid`` places at most that many cuts at the gaps holding
    evenly spaced quantiles (over all gaps: dominated grid gaps are dropped later, on the design);
    ``"auto"``: see :func:`resolve_grid`.
    """
    v = np.asarray(values, dtype=float)
    grid = resolve_grid(grid, len(v))
    ev = np.asarray(events, dtype=np.int64)
    ne = np.asarray(non_events, dtype=np.int64)
    counts = ev + ne
    n_gaps = max(len(v) - 1, 0)
    if n_gaps == 0:
        return np.zeros(0), False
    share = np.cumsum(counts)[:-1] / counts.sum()
    balanced = (share >= min_bin) & (1 - share >= min_bin)
    if not balanced.any():
        balanced = np.zeros(n_gaps, bool)
        balanced[int(np.argmin(np.abs(share - 0.5)))] = True
    useful = (undominated_gaps(ev, ne, depth) if prune else np.ones(n_gaps, bool)) & balanced
    on_grid = False
    if grid is not None and useful.sum() > grid:
        q = linear_quantiles(v, counts, np.arange(1, grid + 1) / (grid + 1))
        gap = np.clip(np.searchsorted(v, q, side="right") - 1, 0, n_gaps - 1)
        useful = np.zeros(n_gaps, bool)
        useful[np.unique(gap)] = True
        useful &= balanced
        on_grid = True
    gaps = np.flatnonzero(useful)
    return np.array([roundest(v[i], v[i + 1]) for i in gaps], dtype=float), on_grid
