"""Mean logistic loss on weighted unique rows.

Identical predictor rows are collapsed once, keeping the total weight of positive and of
negative outcomes per row.  The loss is exactly the same as on the raw data, and for
binary predictors the number of rows drops by orders of magnitude.  The collapse
(:func:`distinct_rows`) packs each row into one integer key and groups the keys by hashing, so
its time and memory grow with the rows once and with the distinct rows otherwise.
"""

from __future__ import annotations

import copy
from typing import cast

import numpy as np
import pandas as pd
from scipy.special import expit


# log(1 + exp(-k)) for k = 0..745; beyond that it is 0 in double precision
_TABLE = np.log1p(np.exp(-np.arange(746, dtype=float)))


class LogisticLoss:
    """l(λ) = Σ_i w_i ℓ(y_i, (λ_0 + x_i·λ) / m) / Σ_i w_i on collapsed rows.

    Parameters
    ----------
    X : (n, d) array of predictors (no intercept column).
    y : (n,) array of 0/1 outcomes.
    weights : (n,) nonnegative sample weights, default 1.
    positive_weight : extra weight on positive outcomes (the class weight); the loss is
        still normalised by the sum of the sample weights, as in Ustun & Rudin (2019).
    scale : the score scale m > 0: a score (intercept included) of m points is one logit, as in
        the multiplier of Liu et al. (2022); 1 (the default) is the model of Ustun & Rudin (2019).

    Scores are always in points (``Z @ lam``); only the link divides them by ``scale``, so every
    method that takes scores (``value_from_scores``, ``row_losses``) takes them in points.

    ``real_intercept`` (see :meth:`with_real_intercept`) says that the intercept of the risk
    scores this loss judges is a real number, so a score (intercept included) is not a whole
    number of points even when the predictors and points are.

    The coefficient vector ``lam`` always has the intercept first: ``lam = [λ_0, λ_1..λ_d]``.

    Examples
    --------
    >>> import numpy as np
    >>> f = LogisticLoss(np.array([[1.0], [0.0]]), np.array([1, 0]))
    >>> round(f.value(np.zeros(2)), 6)
    0.693147
    """

    def __init__(self, X, y, weights=None, positive_weight: float = 1.0, scale: float = 1.0, check=None):
        y = np.asarray(y).astype(bool)
        n = len(y)
        w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
        self.n_raw = n
        self.total_weight = float(w.sum())
        uniq, inverse = distinct_rows(X, check)  # X is read in its own dtype, never copied whole
        m = uniq.shape[0]
        self.w_pos = np.bincount(inverse, weights=w * y, minlength=m) * positive_weight
        self.w_neg = np.bincount(inverse, weights=w * ~y, minlength=m)
        # the training rows and events behind each distinct row (no weights): the fitted model's report
        # on its training rows is computed from them, not from the rows again
        self.row_counts = np.bincount(inverse, minlength=m)
        self.row_events = np.bincount(inverse, weights=y, minlength=m).astype(np.int64)
        self.Z = np.hstack([np.ones((m, 1)), uniq])  # unique rows, intercept column first
        self.n_unique = m
        self._norm = 1.0 / self.total_weight
        self.w_all = self.w_pos + self.w_neg
        # integer predictors and integer points give integer scores: the loss is a table look-up
        self._integer_scores = bool(np.all(uniq == np.round(uniq)))
        # 0/1 columns: moving one point changes only the rows where the column is 1
        self.binary = np.all((uniq == 0) | (uniq == 1), axis=0)
        self.X_binary_T = np.ascontiguousarray(uniq[:, self.binary].T)
        # other columns that are mostly 0 (word counts, lab values present in few rows): moving
        # their points changes only the rows where they are nonzero (see :meth:`sparse_columns`);
        # found once here, so the copies at other score scales share them
        nonzero = uniq != 0
        mostly_zero = (~self.binary) & (nonzero.sum(axis=0) <= 0.5 * m)
        self._sparse = {int(j): (np.flatnonzero(nonzero[:, j]), uniq[nonzero[:, j], j])
                        for j in np.flatnonzero(mostly_zero)}
        self.scale = 1.0
        self.real_intercept = False
        # the attainable scores per row, by bounds (see :func:`~riskformula.problem.problem.score_range`),
        # shared by the copies at other scales; pickled empty
        self._score_ranges = _Cache()
        self._column_facts = _Cache()
        self._set_scale(scale)

    def _set_scale(self, scale: float) -> None:
        self.scale = float(scale)
        # points / m are not integers unless m = 1, nor is a real intercept: the look-up table
        # only serves whole scores on scale 1
        self.integral = self.integer_scores and self.scale == 1.0 and not self.real_intercept

    @property
    def integer_scores(self) -> bool:
        """Whether integer points give integer scores (integer predictors)."""
        return self._integer_scores

    def with_scale(self, scale: float) -> "LogisticLoss":
        """The same loss (sharing the collapsed rows) with score scale ``scale``."""
        other = copy.copy(self)
        other._set_scale(scale)
        return other

    def with_real_intercept(self, real: bool = True) -> "LogisticLoss":
        """The same loss (sharing the collapsed rows) for risk scores whose intercept is a real
        number (``real=True``) or an integer; copies made by :meth:`with_scale` keep the choice."""
        other = copy.copy(self)
        other.real_intercept = bool(real)
        other._set_scale(self.scale)
        return other

    def on_columns(self, cols) -> "LogisticLoss":
        """The same loss for points on the columns ``cols`` of :attr:`Z` only (0, the intercept,
        should be among them), its rows collapsed again: rows that differ only outside ``cols``
        become one row with their summed weights, so fitting points on a few columns costs the
        distinct rows on those columns, not all of them.  Its ``Z`` is those distinct rows on
        ``cols`` (in that order), and for points ``x`` on ``cols`` its value is this loss's value of
        the points that are ``x`` on ``cols`` and 0 elsewhere (the same sum, regrouped)."""
        c = np.asarray(cols, dtype=np.intp)
        if "ranges" not in self._column_facts:  # each column's range, read once per set of rows
            self._column_facts["ranges"] = _column_ranges(self.Z)[:3]
        lo, hi, whole = self._column_facts["ranges"]
        uniq, inverse = distinct_rows(self.Z[:, c], ranges=(lo[c], hi[c], whole[c]))
        m = uniq.shape[0]
        other = copy.copy(self)
        other.Z = uniq
        other.n_unique = m
        other.w_pos = np.asarray(np.bincount(inverse, weights=self.w_pos, minlength=m), dtype=float)
        other.w_neg = np.asarray(np.bincount(inverse, weights=self.w_neg, minlength=m), dtype=float)
        other.w_all = other.w_pos + other.w_neg
        other.row_counts = np.bincount(inverse, weights=self.row_counts, minlength=m).astype(np.int64)
        other.row_events = np.bincount(inverse, weights=self.row_events, minlength=m).astype(np.int64)
        X = uniq[:, 1:]
        other._integer_scores = bool(np.all(X == np.round(X)))
        other.binary = np.all((X == 0) | (X == 1), axis=0)
        other.X_binary_T = np.ascontiguousarray(X[:, other.binary].T)
        other._sparse = {}
        other._score_ranges = _Cache()
        other._column_facts = _Cache()
        other._set_scale(self.scale)
        return other

    def best_real_intercepts(self, S: np.ndarray, lo: float, hi: float) -> np.ndarray:
        """The real intercept in [lo, hi] with the least loss for every column of points-only
        scores ``S`` (unique rows × k); see :func:`real_intercepts`."""
        return real_intercepts(self.w_pos, self.w_neg, S, lo, hi, self.scale)

    @property
    def d(self) -> int:
        """Number of predictors (without the intercept)."""
        return self.Z.shape[1] - 1

    def margins(self, lam: np.ndarray) -> np.ndarray:
        """Scores λ_0 + x·λ of every unique row (a matrix if ``lam`` is (d+1, k))."""
        return self.Z @ lam

    def value_from_scores(self, s: np.ndarray, integral: bool = False) -> float | np.ndarray:
        """Loss from precomputed scores; column-wise for a (m, k) matrix of scores.

        softplus(±s) = max(±s, 0) + log(1 + exp(−|s|)), so both classes share one transcendental;
        pass ``integral=True`` when every score is an integer to use the look-up table (ignored
        unless the scale is 1).
        """
        if self.scale != 1.0:
            s, integral = s / self.scale, False
        a = np.abs(s)
        t = _TABLE[np.minimum(a, 745).astype(np.intp)] if integral else np.log1p(np.exp(-a))
        val = self.w_all @ t + self.w_pos @ np.maximum(-s, 0) + self.w_neg @ np.maximum(s, 0)
        return float(self._norm * val) if s.ndim == 1 else self._norm * val

    def row_losses(self, s: np.ndarray, integral: bool = False, rows=None) -> np.ndarray:
        """Weighted (unnormalised) loss of every unique row, or of ``rows`` (indices) with ``s``
        their scores; column-wise for a matrix of scores."""
        if self.scale != 1.0:
            s, integral = s / self.scale, False
        a = np.abs(s)
        t = _TABLE[np.minimum(a, 745).astype(np.intp)] if integral else np.log1p(np.exp(-a))
        w_all, w_pos, w_neg = ((self.w_all, self.w_pos, self.w_neg) if rows is None
                               else (self.w_all[rows], self.w_pos[rows], self.w_neg[rows]))
        if s.ndim == 1:
            return w_all * t + w_pos * np.maximum(-s, 0) + w_neg * np.maximum(s, 0)
        return w_all[:, None] * t + w_pos[:, None] * np.maximum(-s, 0) + w_neg[:, None] * np.maximum(s, 0)

    def sparse_columns(self) -> dict:
        """``{j: (rows, values)}`` for every column that is not 0/1 and is nonzero on at most half of
        the distinct rows: the rows where it is nonzero and its values there."""
        return self._sparse

    def value(self, lam: np.ndarray) -> float:
        """l(λ)."""
        return cast(float, self.value_from_scores(self.Z @ lam))

    def value_and_gradient_on(self, Z: np.ndarray, lam: np.ndarray) -> tuple[float, np.ndarray]:
        """l and its gradient for the columns ``Z`` (a column subset of :attr:`Z`) and real points
        ``lam`` on them."""
        s = Z @ lam
        val = cast(float, self.value_from_scores(s))  # a float: ``lam`` is a vector
        if self.scale != 1.0:
            s = s / self.scale
        r = -self.w_pos * expit(-s) + self.w_neg * expit(s)
        g = self._norm * (Z.T @ r)
        return val, (g / self.scale if self.scale != 1.0 else g)

    def value_and_gradient(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        """l(λ) and ∇l(λ) (gradient with respect to [λ_0, λ_1..λ_d])."""
        s = self.Z @ lam
        val = cast(float, self.value_from_scores(s))  # a float: ``lam`` is a vector
        if self.scale != 1.0:
            s = s / self.scale
        # d/ds of w+ softplus(-s) + w- softplus(s) = -w+ σ(-s) + w- σ(s); the chain rule adds 1/m
        r = -self.w_pos * expit(-s) + self.w_neg * expit(s)
        g = self._norm * (self.Z.T @ r)
        return val, (g / self.scale if self.scale != 1.0 else g)


#: values per block when the columns are read block by block of rows (1 MB of int64)
_BLOCK = 1 << 17
#: integer columns whose values span fewer than this many integers are coded as value − min
_SMALL_RANGE = 1 << 20
class _Cache(dict):
    """A dict shared by the copies of a loss and pickled empty (the workers of a parallel search
    would otherwise receive it with every round)."""

    def __reduce__(self):
        return (_Cache, ())


#: packed keys stay below this, so key · radix + code never overflows an int64
_KEY_LIMIT = 1 << 62


def _dense(key: np.ndarray) -> tuple[np.ndarray, int]:
    """``key`` as codes 0..k−1 in the order of its values (hashing, then sorting the k distinct
    values only; integers within a range of a few times their number are counted instead), and k."""
    n = len(key)
    if n and key.dtype.kind == "i":
        lo, hi = int(key.min()), int(key.max())
        if hi - lo < max(4 * n, 1 << 16):  # a narrow range: count the values instead of hashing them
            shifted = key - lo
            present = np.bincount(shifted, minlength=hi - lo + 1) > 0
            rank = np.cumsum(present, dtype=np.int64) - 1
            return rank[shifted], int(rank[-1]) + 1
    codes, values = pd.factorize(key, sort=True)
    return codes.astype(np.int64, copy=False), len(values)


def distinct_rows(X, check=None, ranges=None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``X`` (float, in lexicographic order) and the index of each row of
    ``X`` among them: what ``np.unique(X, axis=0, return_inverse=True)`` returns on float data,
    with -0.0 and 0.0 equal (and written 0.0).

    Each column gets an order-preserving integer code: value − min for integer values spanning
    fewer than 2²⁰ integers (binary and count columns; read block by block, in the array's own
    dtype), the rank among the column's distinct values otherwise (hashing).  The codes of
    consecutive columns are packed into one int64 key, most significant first, while the product
    of their ranges stays below 2⁶²; longer rows are packed in several such keys, each replaced by
    its rank among its distinct values (at most n) before the next is appended.  The packing is
    exact (two rows share a key only when they are equal), and the keys sort as the rows do, so
    the distinct keys, sorted, are the distinct rows in lexicographic order.  Time is a few passes
    over the data plus hashing n keys; memory is a few int64 vectors of length n plus the
    distinct rows, where ``np.unique(..., axis=0)`` sorts whole rows (copies of the data and a
    comparison of up to d fields per step).  Data with NaN keep ``np.unique``'s answer.
    ``check`` (a function of no arguments, or None) is called between the passes over a wide
    ``X``'s columns (to stop at a time limit by raising).  ``ranges``: each column's least and
    greatest value and whether all its values are whole (as NumPy arrays), when the caller knows
    them, so they are not read again.
    """
    X = np.asarray(X)
    if X.dtype.kind == "b":
        X = X.view(np.uint8)
    elif X.dtype.kind not in "iuf":
        X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"`X` must be a 2-d array; got {X.ndim} dimension(s).")
    n, d = X.shape
    if n == 0 or d == 0:
        uniq, inverse = np.unique(np.asarray(X, dtype=float), axis=0, return_inverse=True)
        return uniq, inverse.ravel()
    if ranges is None:
        lo, hi, whole, has_nan = _column_ranges(X)
    else:
        lo, hi, whole = ranges
        has_nan = bool(np.isnan(lo).any() or np.isnan(hi).any())
    if has_nan:  # NaN never equals itself: leave the meaning of such rows to np.unique
        uniq, inverse = np.unique(np.asarray(X, dtype=float), axis=0, return_inverse=True)
        return uniq, inverse.ravel()
    # the radix and code of each column: value − lo for small integer ranges, else its rank
    small = [bool(whole[j]) and int(hi[j]) - int(lo[j]) < _SMALL_RANGE for j in range(d)]
    ranks = {}
    radix = []
    for j in range(d):
        if check is not None and j % 1000 == 999:
            check()
        if small[j]:
            radix.append(int(hi[j]) - int(lo[j]) + 1)
        else:
            ranks[j] = _dense(X[:, j] + 0.0 if X.dtype.kind == "f" else X[:, j])
            radix.append(ranks[j][1])
    # consecutive columns whose ranges multiply to less than the limit share one key
    segments, start, product = [], 0, 1
    for j in range(d):
        if product * radix[j] >= _KEY_LIMIT and j > start:
            segments.append((start, j))
            start, product = j, 1
        product *= radix[j]
    segments.append((start, d))
    if len(segments) > 1 and n >= 1 << 31:  # the pairing of two ranks could overflow an int64
        uniq, inverse = np.unique(np.asarray(X, dtype=float), axis=0, return_inverse=True)
        return uniq, inverse.ravel()
    key = None
    for k, (a, b) in enumerate(segments):
        if check is not None and k % 16 == 15:
            check()
        seg = _segment_key(X, a, b, small, lo, radix, ranks)
        if key is None:
            key = seg
            continue
        # both ranks are below n, so their pairing is below n² < 2⁶² (n < 2³¹)
        key, _ = _dense(key)
        seg, k_seg = _dense(seg)
        key *= k_seg
        key += seg
    assert key is not None  # segments holds at least (start, d)
    inverse, m = _dense(key)
    del key
    # one row of X for each distinct key (any of them: they are equal)
    at = np.empty(m, dtype=np.intp)
    at[inverse] = np.arange(n, dtype=np.intp)
    uniq = X[at].astype(float) + 0.0  # + 0.0 writes -0.0 as 0.0
    return uniq, inverse.astype(np.intp, copy=False)


def _column_ranges(X: np.ndarray):
    """Per column of ``X``: the least and the greatest value, whether every value is a finite
    whole number; and whether ``X`` holds a NaN.  Read block by block (rows are contiguous)."""
    d = X.shape[1]
    if X.dtype.kind in "iu":
        return X.min(axis=0), X.max(axis=0), np.ones(d, dtype=bool), False
    lo, hi = np.full(d, np.inf), np.full(d, -np.inf)
    whole = np.ones(d, dtype=bool)
    rows = max(_BLOCK // d, 64)
    for i in range(0, X.shape[0], rows):
        block = X[i:i + rows]
        np.minimum(lo, block.min(axis=0), out=lo)  # a NaN makes both NaN
        np.maximum(hi, block.max(axis=0), out=hi)
        whole &= (block == np.rint(block)).all(axis=0)
    return lo, hi, whole & np.isfinite(lo) & np.isfinite(hi), bool(np.isnan(lo).any())


def _segment_key(X, a, b, small, lo, radix, ranks) -> np.ndarray:
    """The packed int64 key of columns a..b−1 (the first most significant)."""
    n = X.shape[0]
    mult = np.ones(b - a, dtype=np.int64)
    for j in range(b - 2, a - 1, -1):
        mult[j - a] = mult[j - a + 1] * radix[j + 1]
    key = np.zeros(n, dtype=np.int64)
    cols = [j for j in range(a, b) if small[j]]
    if cols:
        c = slice(a, b) if len(cols) == b - a else np.asarray(cols)
        weight = mult[np.asarray(cols) - a]
        if X.dtype.kind == "f":  # whole numbers within 2²⁰ of the least: the difference is exact
            base = lo[cols]
            codes = lambda block: (block - base).astype(np.int64)  # noqa: E731
        else:  # in int64, wrapping as uint64 beyond 2⁶³ does: the difference (< 2²⁰) is exact
            base = np.asarray(lo[cols]).astype(np.int64)
            codes = lambda block: block.astype(np.int64) - base  # noqa: E731
        rows = max(_BLOCK // len(cols), 64)
        for i in range(0, n, rows):
            key[i:i + rows] = codes(X[i:i + rows, c]) @ weight
    for j in range(a, b):
        if not small[j]:
            key += ranks[j][0] * mult[j - a]
    return key


def real_intercepts(w_pos: np.ndarray, w_neg: np.ndarray, S: np.ndarray, lo: float, hi: float,
                    scale: float = 1.0, max_iter: int = 200) -> np.ndarray:
    """For every column s of ``S`` (rows × k), the b in [lo, hi] that minimises
    Σ_i w+_i ℓ(−(s_i + b)/m) + w−_i ℓ((s_i + b)/m) (ℓ = softplus, m = ``scale``).

    The function is convex in b and its derivative is increasing, so each column keeps a bracket
    [left, right] around its minimiser (moved by the derivative's sign) and takes Newton steps,
    bisecting when a step leaves the bracket, until the step or the bracket is below 1e-12
    (relative); only the columns still moving are evaluated.  A minimiser at an end of the range
    is that end exactly.

    Examples
    --------
    >>> import numpy as np
    >>> b = real_intercepts(np.array([1.0]), np.array([3.0]), np.zeros((1, 1)), -10, 10)
    >>> round(float(b[0]), 6)  # log(1/3): the log-odds of one event in four
    -1.098612
    """
    S = np.asarray(S, dtype=float)
    k = S.shape[1]
    left, right = np.full(k, float(lo)), np.full(k, float(hi))
    b = np.clip(np.zeros(k), left, right)
    w_all = w_pos + w_neg

    def slope_and_curvature(cols, at):  # the derivative in b times m, the second one times m²
        p = expit((S[:, cols] + at[None, :]) / scale)
        return w_neg @ p - w_pos @ (1.0 - p), w_all @ (p * (1.0 - p))
    act = np.arange(k)
    for _ in range(max_iter):
        g, h = slope_and_curvature(act, b[act])
        bb, lft, rgt = b[act], left[act], right[act]
        rgt = np.where(g > 0, np.minimum(rgt, bb), rgt)
        lft = np.where(g < 0, np.maximum(lft, bb), lft)
        new = bb - scale * g / np.maximum(h, 1e-300)
        new = np.where((new > lft) & (new < rgt), new, 0.5 * (lft + rgt))
        new = np.where(g == 0, bb, new)
        tol = 1e-12 * (1.0 + np.abs(bb))
        done = (np.abs(new - bb) <= tol) | (rgt - lft <= tol)
        b[act], left[act], right[act] = new, lft, rgt
        act = act[~done]
        if not len(act):
            break
    # bisection only approaches an end of the range: the minimiser is the end where the loss
    # still falls (rises) there
    for end, near in ((float(hi), np.flatnonzero(float(hi) - b <= 1e-9 * (1 + abs(hi)))),
                      (float(lo), np.flatnonzero(b - float(lo) <= 1e-9 * (1 + abs(lo))))):
        if len(near):
            g, _ = slope_and_curvature(near, np.full(len(near), end))
            b[near[g <= 0 if end == float(hi) else g >= 0]] = end
    return b
