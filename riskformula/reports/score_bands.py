"""Score bands: contiguous ranges of a total score, each holding enough rows to estimate a risk.

A point score has few distinct totals, and a Kaplan–Meier curve or an observed risk of a handful of
rows is mostly noise; :func:`score_bands` groups the totals into a few bands of neighbouring scores
(equal scores always in one band), by quantiles of the score or at cut-offs the user chooses.  The
Kaplan–Meier plot by band and the survival calibration table use the same bands.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DataError, SettingsError, SmallGroupWarning, warn_caller

__all__ = ["ScoreBands", "score_bands", "MIN_BAND_ROWS"]

#: the fewest rows a band made from quantiles holds (smaller ones are merged with a neighbour)
MIN_BAND_ROWS = 10


def _range_label(lo: float, hi: float) -> str:
    if lo == hi:
        return f"{lo:g}"
    # "−3 to −1" reads better than "-3–-1"
    return f"{lo:g}–{hi:g}" if lo >= 0 else f"{lo:g} to {hi:g}"


@dataclass(frozen=True, eq=False)
class ScoreBands:
    """Contiguous bands of a score.

    Attributes
    ----------
    cuts : ndarray
        The increasing cut-offs; band ``j`` holds the scores ``cuts[j-1] ≤ score < cuts[j]`` (the
        first band everything below ``cuts[0]``, the last everything from ``cuts[-1]`` on).
    codes : ndarray of int
        The band (0, 1, ...) of each row the bands were made from.
    labels : tuple of str
        Each band's range of scores among those rows, e.g. ``"0–2"``, ``"3"``, ``"5–9"``.
    n : ndarray of int
        Rows in each band.
    lower, upper : ndarray
        The least and the greatest score in each band (among those rows).
    """

    cuts: np.ndarray
    codes: np.ndarray
    labels: tuple[str, ...]
    n: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)

    def assign(self, score) -> np.ndarray:
        """The band (0, 1, ...) of each of ``score`` (e.g. new rows' totals) at these cut-offs."""
        s = _scores(score)
        return np.searchsorted(self.cuts, s, side="right")

    def __repr__(self) -> str:
        parts = ", ".join(f"{lab} (n={k:,d})" for lab, k in zip(self.labels, self.n))
        return f"<ScoreBands: {parts}>"


def _scores(score) -> np.ndarray:
    try:
        s = np.asarray(score, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise DataError("`score` must be numbers (each row's total points).") from None
    if not np.all(np.isfinite(s)):
        raise DataError("`score` must be finite numbers (each row's total points); it has missing or "
                        "infinite values.")
    return s


def _quantile_cuts(values: np.ndarray, counts: np.ndarray, k: int, min_rows: int) -> list[int]:
    """Indices into ``values`` where a band starts (after the first): the boundary between distinct
    scores nearest each k-quantile of the rows, then bands under ``min_rows`` merged into the
    smaller of their neighbours."""
    total = counts.sum()
    cum = np.cumsum(counts)[:-1]  # rows up to and including values[j], for a cut after j
    starts = set()
    for q in range(1, k):
        if len(cum):
            j = int(np.argmin(np.abs(cum - q * total / k)))
            starts.add(j + 1)
    bounds = sorted(starts)
    while bounds:
        edges = [0, *bounds, len(values)]
        sizes = [int(counts[a:b].sum()) for a, b in zip(edges[:-1], edges[1:])]
        small = int(np.argmin(sizes))
        if sizes[small] >= min_rows:
            break
        # merge the smallest band with its smaller neighbour (remove the boundary between them)
        if small == 0:
            bounds.pop(0)
        elif small == len(sizes) - 1:
            bounds.pop()
        else:
            bounds.pop(small - 1 if sizes[small - 1] <= sizes[small + 1] else small)
    return bounds


def score_bands(score, bands=3, *, min_rows: int = MIN_BAND_ROWS) -> ScoreBands:
    """Group total scores into contiguous bands of neighbouring scores.

    Parameters
    ----------
    score : array-like
        Each row's total score (points; higher means more risk).
    bands : int or sequence of numbers, default 3
        A number of bands: the scores are cut at the boundaries between distinct scores nearest the
        quantiles of the rows (tertiles for 3), so that equal scores stay in one band; a score with
        few distinct values gives fewer bands, and a band with fewer than ``min_rows`` rows is merged
        with its smaller neighbour. Or increasing cut-offs: each starts a new band (``[2, 5]``: the
        bands ``< 2``, ``2 ≤ score < 5`` and ``≥ 5``); a band without rows is refused, one with
        fewer than ``min_rows`` rows gets a warning.
    min_rows : int, default 10
        The fewest rows a band should hold.

    Returns
    -------
    ScoreBands
        The cut-offs, each row's band, and each band's label (its range of scores), size and range.

    Examples
    --------
    >>> b = score_bands([0, 0, 1, 1, 1, 2, 2, 2, 3, 4, 4, 4], bands=3, min_rows=1)
    >>> b.labels, b.n.tolist()
    (('0–1', '2', '3–4'), [5, 3, 4])
    >>> score_bands([0, 1, 2, 3, 4, 5], [2, 4], min_rows=1).labels
    ('0–1', '2–3', '4–5')
    """
    s = _scores(score)
    if not len(s):
        raise DataError("`score` has no rows to group into bands.")
    if isinstance(min_rows, bool) or not isinstance(min_rows, (int, np.integer)) or min_rows < 1:
        raise SettingsError(f"`min_rows` must be a whole number ≥ 1; got {min_rows!r}.")
    values, counts = np.unique(s, return_counts=True)
    if isinstance(bands, (int, np.integer)) and not isinstance(bands, bool):
        if bands < 1:
            raise SettingsError(f"`bands` must be a number of bands ≥ 1 or increasing cut-offs; got {bands!r}.")
        cuts = values[_quantile_cuts(values, counts, int(bands), int(min_rows))]
        explicit = False
    else:
        try:
            cuts = np.asarray(bands, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise SettingsError(f"`bands` must be a number of bands or increasing cut-offs; got {bands!r}.") from None
        if not len(cuts) or not np.all(np.isfinite(cuts)) or np.any(np.diff(cuts) <= 0):
            raise SettingsError(f"cut-offs in `bands` must be finite and strictly increasing; got {list(cuts)}.")
        explicit = True
    codes = np.searchsorted(cuts, s, side="right")
    n = np.bincount(codes, minlength=len(cuts) + 1)
    if explicit and np.any(n == 0):
        empty = int(np.flatnonzero(n == 0)[0])
        where = (f"below {cuts[0]:g}" if empty == 0 else f"from {cuts[-1]:g} on" if empty == len(cuts)
                 else f"from {cuts[empty - 1]:g} to below {cuts[empty]:g}")
        raise DataError(f"the score band {where} holds no rows (scores range from {s.min():g} to {s.max():g}); "
                        "choose cut-offs inside the scores' range with rows between them.")
    lower = np.array([s[codes == j].min() for j in range(len(n))])
    upper = np.array([s[codes == j].max() for j in range(len(n))])
    labels = tuple(_range_label(lo, hi) for lo, hi in zip(lower, upper))
    if explicit and np.any(n < min_rows):
        few = ", ".join(f"{lab} ({k:,d} rows)" for lab, k in zip(labels, n) if k < min_rows)
        warn_caller(f"score band(s) {few} hold fewer than {min_rows} rows: their Kaplan–Meier curve and observed "
                    "risk are mostly noise. Choose wider bands.", SmallGroupWarning)
    return ScoreBands(cuts=cuts, codes=codes, labels=labels, n=n, lower=lower, upper=upper)
