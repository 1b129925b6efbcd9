"""Lower bounds from the data's cells, and the exact best points on one support.

A *support* S is a set of design columns; its *cells* are the distinct value combinations of
the distinct training rows on S, each with its positive and negative weight (P_c, Q_c), integer
counts here.  Every risk score whose points are zero outside S gives all rows of a cell the same
score, whatever its points, score scale and intercept.  With L(P, Q; z) = P·log(1 + e^−z) +
Q·log(1 + e^z) the weighted loss of a cell at logit z, the quantities below are what the
support search (:mod:`riskformula.solver.support_search`) prunes with.  Losses here are sums
(not yet divided by the total weight W); the public functions return means.

Proofs
------
**B1 (saturated loss).**  For P, Q ≥ 0 and every real z, L(P, Q; z) ≥ h(P, Q) = P·log(N/P) +
Q·log(N/Q) (N = P + Q, 0·log(N/0) = 0): the minimum over the probability σ(z) of
−P·log σ − Q·log(1 − σ) is at σ = P/N.  A model reading only the columns of S gives every row of
a cell one logit, so its loss is at least Σ_c h(P_c, Q_c) =: H(S), for every point vector,
every scale and every intercept (Ustun & Rudin, 2019, use the same cell counts for their loss
bounds).  Refining the cells (more columns) can only lower H: h is subadditive
(h(P1 + P2, Q1 + Q2) ≥ h(P1, Q1) + h(P2, Q2), the conditional entropy is at most the entropy), so
H(S ∪ R) ≤ H(S') for every S' between S and S ∪ R: H(S ∪ R) bounds every support inside S ∪ R.

**B2 (score cells).**  For one point vector w on S, rows whose scores w·x are equal get equal
logits, so the loss is at least Σ_g h(P_g, Q_g) over the groups g of cells with equal scores.

**B3 (calibration dual).**  For −P ≤ μ ≤ Q and every real z, L(P, Q; z) − μz ≥ h(P + μ, Q − μ)
(the minimum over z is at σ(z) = (P + μ)/N).  For points w with scores s_c, a score scale a = 1/m
and a logit intercept c, z_c = a·s_c + c, so Σ_c L(P_c, Q_c; z_c) ≥ Σ_c h(P_c + μ_c, Q_c − μ_c) +
a·Σ_c μ_c s_c + c·Σ_c μ_c.  Hence, when Σ_c μ_c = 0 exactly:

* every real intercept at a fixed scale a: the loss is ≥ Σ h(P + μ, Q − μ) + a·Σ μ_c s_c;
* every scale a > 0 and every real intercept: if also Σ μ_c s_c ≥ 0, the loss is
  ≥ Σ h(P + μ, Q − μ).

μ is read from the calibration's own iterate (μ_c = N_c·σ(z_c) − P_c, which is optimal at the
optimum), truncated towards 0 onto the grid 2^−G (so it stays in [−P, Q]), and repaired exactly in
integers: the intercept sum is brought to 0 by moving grid units within their boxes, and, for the
fitted scale, a negative Σ μ s by moving units from the lowest-scored cell to the highest-scored
one.  All sums of grid numerators are int64 sums checked against overflow by the choice of G,
so the constraints hold exactly, not up to rounding.  When the repair fails, μ = 0 is used
(that is B2).

**B4 (fixed scale, whole intercept).**  The best integer intercept of fixed scores is found by
convexity (:func:`riskformula.solver.enumeration._best_intercepts`); its computed loss is within
the rounding bound of F below of the true one, and the true minimum over the intercept range is
at most 2·(range + 1) such errors below (convexity with computed slopes ≥ −2 errors).

Floating point
--------------
Counts are integers below 2^40, so P, Q, N, their cumulative sums and P + μ on the grid are
exact.  Each term A·log(N/A) is computed with one division, one log and one product: with a
log accurate to 4 units in the last place, its error is at most 6ε·term + 1.01ε·A; a sum of C
nonnegative terms adds at most C·ε·Σ.  Every bound is therefore computed as
Σ − 2·((C + 8)·ε·Σ + 2ε·N_total) and then divided by W and multiplied by (1 − 4ε): a value
below the exact one.  A bound that rounds below 0 is 0.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from . import kernels
from ._repair import raise_score_sum as _raise_score_sum

__all__ = ["EPS", "CellData", "h_terms", "lower_sum", "grouped_saturated", "calibrate_fitted", "support_cells"]

EPS = float(np.finfo(float).eps)


def h_terms(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """h(A, B) = A·log((A + B)/A) + B·log((A + B)/B) elementwise, 0·log(·/0) = 0 (B1, B3)."""
    N = A + B
    with np.errstate(divide="ignore", invalid="ignore"):
        ta = np.where(A > 0, A * np.log(N / np.where(A > 0, A, 1.0)), 0.0)
        tb = np.where(B > 0, B * np.log(N / np.where(B > 0, B, 1.0)), 0.0)
    return ta + tb


def lower_sum(total: np.ndarray | float, n_terms: np.ndarray | float, weight: float) -> np.ndarray:
    """A value at most the exact sum of ``n_terms`` computed h terms whose computed sum is
    ``total`` (over rows of total weight ``weight``): the rounding margin of the module docstring
    subtracted, clipped at 0."""
    total = np.asarray(total, dtype=float)
    margin = 2.0 * ((np.asarray(n_terms, dtype=float) + 8.0) * EPS * total + 2.0 * EPS * weight)
    return np.maximum(total - margin, 0.0)


def table_margin(weight: float) -> float:
    """What h terms read from the table x·log x (:attr:`CellData.xlogx`) may add to a sum of them
    over the cells of one partition of rows of total weight ``weight``, beyond :func:`lower_sum`'s
    margin: 24·ε·W·max(log W, 1) (the proof is :attr:`CellData.xlogx`'s)."""
    return 24.0 * EPS * weight * max(math.log(weight), 1.0) if weight > 1.0 else 24.0 * EPS * weight


class CellData:
    """The distinct training rows of a loss as integer counts, with per-column value codes.

    ``ok`` is False (and the reason in ``why``) when the cell bounds do not apply: weights that
    are not whole counts, or predictors that are not finite or exceed 2^20 in absolute value.
    Real (not whole) predictors are taken: cells are rows with exactly equal values, so B1 holds
    as it is (``real`` then says which bounds need whole scores and are left out)."""

    def __init__(self, loss):
        self.X = loss.Z[:, 1:]
        self.P = np.asarray(loss.w_pos, dtype=float)
        self.Q = np.asarray(loss.w_neg, dtype=float)
        self.W = float(loss.total_weight)
        self.n, self.d = self.X.shape
        self.why = self.why_not(loss)
        self.ok = not self.why
        #: some predictor is not a whole number: the bounds that need whole scores (B2, B5's exact
        #: repair, B7) are not used, and scores carry their rounding bound (see :func:`scores`)
        self.real = bool(self.ok and not np.all(self.X == np.round(self.X)))
        codes, radix = [], []
        for j in range(self.d):
            _, inv = np.unique(self.X[:, j], return_inverse=True)
            codes.append(inv.ravel().astype(np.int64))
            radix.append(int(inv.max()) + 1 if self.n else 1)
        self.codes = codes
        self.radix = np.asarray(radix, dtype=np.int64)
        self.binary = np.all((self.X == 0) | (self.X == 1), axis=0) if self.n else np.ones(self.d, dtype=bool)
        # the rows where each 0/1 column is 1 (column by column, as a compressed sparse column
        # matrix): the counts of a refinement by 0/1 columns cost one pass over these rows
        ones = [np.flatnonzero(self.X[:, j] == 1) if self.binary[j] else np.zeros(0, dtype=np.intp)
                for j in range(self.d)]
        self._ones_ptr = np.r_[0, np.cumsum([len(o) for o in ones])].astype(np.intp)
        self._ones = np.concatenate(ones).astype(np.intp) if ones else np.zeros(0, dtype=np.intp)

    #: the largest total weight for which :attr:`xlogx` is built (32 MiB of doubles)
    TABLE_MAX = 2 ** 22

    @property
    def xlogx(self) -> np.ndarray | None:
        """The table F[x] = x·log x for the whole counts x = 0, 1, …, W (F[0] = 0), made once, from
        which the compiled count of a node's children and grandchildren
        (:func:`riskformula.solver.kernels.grandchildren_rows`) reads its h terms: h(A, B) =
        F[A + B] − F[A] − F[B], three loads and two subtractions where the formula of
        :func:`h_terms` takes two divisions and two logs (most of that count's time on nested
        threshold cuts); None above :attr:`TABLE_MAX` or when the weights are not whole counts
        (every cell count must be an index of the table).

        Its rounding (a bound of its own, subtracted as well as :func:`lower_sum`'s margin by
        :func:`table_margin`): with a log accurate to 4 units in the
        last place (the module's assumption), each entry is within 4.6·ε·F[x] of x·log x (F ≥ 0,
        and F[1] = 0 exactly); a term with A, B ≥ 1 (one class gives 0 exactly, as the formula
        does) is then within 4.6·ε·(F[N] + F[A] + F[B]) + 1.1·ε·(F[N] + F[A] + F[B]) ≤ 11.4·ε·F[N]
        of h(A, B), since F[A] + F[B] ≤ (A + B)·log N = F[N].  Over the cells of one partition the
        N's add up to at most W and each is at most W, so the terms of one sum are within
        11.4·ε·W·log W of their exact values in all; 24·ε·W·max(log W, 1) is subtracted (the
        summation's own error is :func:`lower_sum`'s, as every term is still ≥ 0: a term with
        A, B ≥ 1 is at least log 2, far above its error for W ≤ 2^22)."""
        if not hasattr(self, "_xlogx"):
            W = self.W
            if not (self.ok and W <= self.TABLE_MAX and W == int(W)):  # (ok: whole counts P, Q)
                self._xlogx = None
            else:
                x = np.arange(int(W) + 1, dtype=float)
                with np.errstate(divide="ignore", invalid="ignore"):
                    F = x * np.log(x)
                F[0] = 0.0
                self._xlogx = F
        return self._xlogx

    @staticmethod
    def why_not(loss) -> str:
        """Why the cells' sums of ``loss``'s rows would not be exact ("" when they are), without
        building the cells (the support search's qualification asks this first)."""
        X = loss.Z[:, 1:]
        P, Q = np.asarray(loss.w_pos, dtype=float), np.asarray(loss.w_neg, dtype=float)
        W = float(loss.total_weight)
        if not (np.all(P == np.round(P)) and np.all(Q == np.round(Q)) and W == float(P.sum() + Q.sum())):
            return "the weights are not whole counts (sample weights or an event weight)"
        if W >= 2.0 ** 40:
            return "the rows' total weight is too large for exact integer sums"
        if not bool(np.all(np.isfinite(X))):
            return "some predictors are not finite numbers"
        if X.size and np.abs(X).max() > 2 ** 20:
            return "some predictors exceed 2^20 in absolute value"
        return ""

    def refine(self, cell: np.ndarray, j: int) -> tuple[np.ndarray, int]:
        """Cell ids (0..C'−1) of the rows on the cells ``cell`` refined by column ``j``."""
        key = cell * self.radix[j] + self.codes[j]
        return dense_ids(key, n_cells_bound(cell) * int(self.radix[j]))

    def partition(self, cols) -> tuple[np.ndarray, int]:
        """Cell ids of the rows on the columns ``cols`` (one cell for no columns) and their count."""
        cell, n_cells = np.zeros(self.n, dtype=np.int64), 1
        for j in cols:
            cell, n_cells = self.refine(cell, j)
        return cell, n_cells

    def ones_counts(self, cell: np.ndarray, n_cells: int, cols) -> tuple[np.ndarray, np.ndarray]:
        """The events' and non-events' weights of each (cell, 0/1 column = 1): cells × len(cols)
        arrays, by one weighted count over the rows where the columns are 1 (exact integer sums)."""
        cols = np.asarray(cols, dtype=np.intp)
        lens = self._ones_ptr[cols + 1] - self._ones_ptr[cols]
        rows = np.concatenate([self._ones[self._ones_ptr[j]:self._ones_ptr[j + 1]] for j in cols]) \
            if len(cols) else np.zeros(0, dtype=np.intp)
        key = cell[rows] * len(cols) + np.repeat(np.arange(len(cols)), lens)
        size = n_cells * len(cols)
        P1 = np.bincount(key, weights=self.P[rows], minlength=size).reshape(n_cells, len(cols))
        Q1 = np.bincount(key, weights=self.Q[rows], minlength=size).reshape(n_cells, len(cols))
        return P1, Q1

    def saturated(self, cell: np.ndarray, n_cells: int) -> float:
        """B1 for the partition ``cell``, rounded down, as a mean."""
        P = np.bincount(cell, weights=self.P, minlength=n_cells)
        Q = np.bincount(cell, weights=self.Q, minlength=n_cells)
        t = h_terms(P, Q)
        return float(lower_sum(t.sum(), n_cells, self.W)) / self.W * (1 - 4 * EPS)

    def children_saturated(self, cell: np.ndarray, n_cells: int, cols) -> np.ndarray:
        """B1 of the partition ``cell`` refined by each column of ``cols`` (one bound per column,
        rounded down, as means), by one weighted count over all children when the keys are few."""
        cols = list(cols)
        out = np.empty(len(cols))
        if not cols:
            return out
        if bool(self.binary[cols].all()):
            # 0/1 columns: the counts of each (cell, column = 1) from the rows where it is 1; the
            # column = 0 side is the cell's total minus them (exact integer sums)
            Pt = np.bincount(cell, weights=self.P, minlength=n_cells)[:, None]
            Qt = np.bincount(cell, weights=self.Q, minlength=n_cells)[:, None]
            fast = kernels.children_ones(cell, n_cells, cols, self._ones_ptr, self._ones, self.P, self.Q,
                                         Pt[:, 0], Qt[:, 0])
            if fast is not None:
                out[:] = lower_sum(fast[0], fast[1], self.W) / self.W * (1 - 4 * EPS)
                return out
            P1, Q1 = self.ones_counts(cell, n_cells, cols)
            t = h_terms(P1, Q1) + h_terms(Pt - P1, Qt - Q1)
            used = ((P1 + Q1) > 0).sum(axis=0) + ((Pt + Qt - P1 - Q1) > 0).sum(axis=0)
            out[:] = lower_sum(t.sum(axis=0), used, self.W) / self.W * (1 - 4 * EPS)
            return out
        rmax = int(self.radix[cols].max())
        block = n_cells * rmax
        if block * len(cols) <= 4_000_000:
            keys = np.concatenate([cell * rmax + self.codes[j] + k * block for k, j in enumerate(cols)])
            P = np.bincount(keys, weights=np.tile(self.P, len(cols)), minlength=block * len(cols))
            Q = np.bincount(keys, weights=np.tile(self.Q, len(cols)), minlength=block * len(cols))
            t = h_terms(P, Q).reshape(len(cols), block)
            used = ((P + Q) > 0).reshape(len(cols), block).sum(axis=1)
            out[:] = lower_sum(t.sum(axis=1), used, self.W) / self.W * (1 - 4 * EPS)
            return out
        for k, j in enumerate(cols):
            c2, n2 = self.refine(cell, j)
            out[k] = self.saturated(c2, n2)
        return out

    def grandchildren_saturated(self, cell: np.ndarray, n_cells: int, Xb, K: int,
                                ones: tuple | None = None, enough: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
        """B1 of the partition ``cell`` refined by each of the first ``K`` columns a_k of ``Xb``
        (rows × D, 0/1 values, or a function that makes it when it is needed; K bounds) and by
        each pair (a_k, column i of Xb) for i > k (K × D bounds, +inf for i ≤ k), rounded down, as
        means — a node's children and grandchildren at once.  With the compiled loops and ``ones``
        = (rowptr, rowpos, slot[, order, starts[, by_group]]) — each row's positions of 1s in a
        matrix whose position t is Xb's column slot[t] (−1: none of them), and optionally the rows
        grouped by equal values on those columns (group g: ``order[starts[g]:starts[g + 1]]``;
        with ``by_group`` true, rowptr and rowpos index the groups, each group's positions of 1s
        on those columns in group order, read in sequence) — the counts
        are taken row by row, or group by group within each cell, or — rows with many 1s, as
        nested threshold cuts have — by one BLAS product per cell as below, instead (the same
        integer sums), and a grandchild's sum
        over the cells may stop once its bound would reach ``enough``: it is then a partial sum
        of nonnegative terms (a lower bound still, at least ``enough`` after the margin).

        The counts of the four cells (a_k, b) = (1, 1), (1, 0), (0, 1), (0, 0) inside each cell
        come from one product per cell, X_aᵀ·[diag(P)·X_b, diag(Q)·X_b], its column sums and the
        cell's totals: sums of whole counts, exact in any order (BLAS included) while they stay
        below 2^53 (2^24 in single precision, used only when the total weight is below it), and
        their differences are exact too.  A cell holding one class only adds zero to every
        refinement's B1 (each of its h terms is exactly 0, computed as 0), so it is skipped.  The
        h terms are then those of :meth:`children_saturated`, with the same margin."""
        D = int(ones[2].max()) + 1 if ones is not None else Xb.shape[1]
        scale = (1 - 4 * EPS) / self.W
        # a computed sum t of u ≤ 4·n_cells terms has lower_sum(t, u) ≥ t·(1 − 2(u + 8)ε) − 4εW
        table = self.xlogx if ones is not None else None
        # (the table's margin too: a sum stopped there still reaches ``enough`` after both)
        extra = table_margin(self.W) if table is not None else 0.0
        stop = math.inf if enough == math.inf else \
            (enough / scale + 4 * EPS * self.W + 2 * extra) / (1 - 2 * (4 * n_cells + 8) * EPS)
        fast = None if ones is None else kernels.grandchildren_rows(cell, n_cells, ones[0], ones[1], ones[2], K, D,
                                                                    self.P, self.Q, self.W, scale, stop,
                                                                    tuple(ones[3:5]) if len(ones) > 3 else None,
                                                                    len(ones) > 5 and bool(ones[5]), table, extra)
        if fast is not None:
            return fast  # (lower_sum(...) · scale of each sum, +inf where not later: as below)
        later = np.arange(D)[None, :] > np.arange(K)[:, None]  # grandchild (k, i) for i > k
        if callable(Xb):
            Xb = Xb()
        Pt = np.bincount(cell, weights=self.P, minlength=n_cells)
        Qt = np.bincount(cell, weights=self.Q, minlength=n_cells)
        mixed = (Pt > 0) & (Qt > 0)
        ids = np.flatnonzero(mixed)
        C = len(ids)
        GP, GQ = np.zeros((C, K, D)), np.zeros((C, K, D))
        bP, bQ = np.zeros((C, D)), np.zeros((C, D))
        if C:
            rows = np.flatnonzero(mixed[cell])
            which = np.searchsorted(ids, cell[rows])
            srt = np.argsort(which, kind="stable")
            rows, which = rows[srt], which[srt]
            bounds = np.r_[0, np.cumsum(np.bincount(which, minlength=C))]
            xb_all = Xb[rows]
            dt = xb_all.dtype
            Pr, Qr = self.P[rows].astype(dt), self.Q[rows].astype(dt)
            for c in range(C):
                lo, hi = bounds[c], bounds[c + 1]
                xb = xb_all[lo:hi]
                G = xb[:, :K].T @ np.concatenate([xb * Pr[lo:hi, None], xb * Qr[lo:hi, None]], axis=1)
                GP[c], GQ[c] = G[:, :D], G[:, D:]
                bP[c], bQ[c] = Pr[lo:hi] @ xb, Qr[lo:hi] @ xb
        aP, aQ = bP[:, :K], bQ[:, :K]
        Pc, Qc = Pt[ids], Qt[ids]
        ot = (h_terms(aP, aQ) + h_terms(Pc[:, None] - aP, Qc[:, None] - aQ)).sum(axis=0)
        ou = (((aP + aQ) > 0).astype(np.int64) + ((Pc[:, None] - aP + Qc[:, None] - aQ) > 0)).sum(axis=0)
        p10, q10 = aP[:, :, None] - GP, aQ[:, :, None] - GQ
        p01, q01 = bP[:, None, :] - GP, bQ[:, None, :] - GQ
        p00, q00 = Pc[:, None, None] - GP - p10 - p01, Qc[:, None, None] - GQ - q10 - q01
        sides = ((GP, GQ), (p10, q10), (p01, q01), (p00, q00))
        t = np.sum([h_terms(a, b).sum(axis=0) for a, b in sides], axis=0)
        used = np.sum([((a + b) > 0).sum(axis=0) for a, b in sides], axis=0)
        own = lower_sum(ot, ou, self.W) * scale
        pair = np.where(later, lower_sum(np.where(later, t, 0.0), used, self.W) * scale, np.inf)
        return own, pair

    def pair_saturated(self, cell: np.ndarray, n_cells: int, others: list[np.ndarray]) -> np.ndarray:
        """B1 of the partitions (``cell``, ``others[k]``) for each k (rounded down, means): the
        cells of S joined with those of further columns, by one sort over all of them."""
        if not others:
            return np.empty(0)
        spans = np.array([int(o.max()) + 1 for o in others], dtype=np.int64)
        sizes = np.int64(n_cells) * spans
        if int(sizes.sum()) <= 4 * self.n * len(others) + (1 << 16):
            fast = kernels.pair_sums(cell, n_cells, others, self.P, self.Q)
            if fast is not None:
                return lower_sum(fast[0], fast[1], self.W) / self.W * (1 - 4 * EPS)
            # few possible keys: count them in one dense array (offset per k) instead of sorting
            # the rows' keys; the same cells, summed in the same (key) order as the sort below
            offset = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64)
            keys = np.concatenate([offset[k] + cell * spans[k] + o for k, o in enumerate(others)])
            total_keys = int(sizes.sum())
            P = np.bincount(keys, weights=np.tile(self.P, len(others)), minlength=total_keys)
            Q = np.bincount(keys, weights=np.tile(self.Q, len(others)), minlength=total_keys)
            used = np.flatnonzero((P + Q) > 0)
            which = np.searchsorted(offset, used, side="right") - 1
            total = np.bincount(which, weights=h_terms(P[used], Q[used]), minlength=len(others))
            n_terms = np.bincount(which, minlength=len(others))
            return lower_sum(total, n_terms, self.W) / self.W * (1 - 4 * EPS)
        span = np.int64(spans.max())
        block = np.int64(n_cells) * span
        keys = np.concatenate([cell * span + o + k * block for k, o in enumerate(others)])
        uniq, inv = np.unique(keys, return_inverse=True)
        inv = inv.ravel()
        P = np.bincount(inv, weights=np.tile(self.P, len(others)), minlength=len(uniq))
        Q = np.bincount(inv, weights=np.tile(self.Q, len(others)), minlength=len(uniq))
        which = (uniq // block).astype(np.intp)
        total = np.bincount(which, weights=h_terms(P, Q), minlength=len(others))
        n_terms = np.bincount(which, minlength=len(others))
        return lower_sum(total, n_terms, self.W) / self.W * (1 - 4 * EPS)


def n_cells_bound(cell: np.ndarray) -> int:
    """The number of cell ids of a partition (ids are 0..C−1; 1 for no rows)."""
    return int(cell.max()) + 1 if len(cell) else 1


def dense_ids(key: np.ndarray, size: int) -> tuple[np.ndarray, int]:
    """Ids 0..C'−1 of the distinct values of ``key`` (integers in [0, ``size``)), numbered in
    increasing order — what ``np.unique(key, return_inverse=True)`` gives — by marking the values
    present in a dense array when ``size`` is small (no sort), else by np.unique."""
    if not len(key):
        return np.zeros(0, dtype=np.int64), 0
    if size <= 4 * len(key) + (1 << 12):
        seen = np.zeros(size, dtype=bool)
        seen[key] = True
        rank = np.cumsum(seen, dtype=np.int64) - 1
        return rank[key], int(rank[-1]) + 1
    _, inv = np.unique(key, return_inverse=True)
    inv = inv.ravel()
    return inv, int(inv.max()) + 1


def support_cells(data: CellData, cell: np.ndarray, n_cells: int, cols) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells of a support: their values on ``cols`` (cells × |cols|) and counts P, Q."""
    first = np.full(n_cells, -1, dtype=np.intp)
    first[cell[::-1]] = np.arange(len(cell))[::-1]  # the first row of each cell
    Xc = data.X[first][:, list(cols)]
    P = np.bincount(cell, weights=data.P, minlength=n_cells)
    Q = np.bincount(cell, weights=data.Q, minlength=n_cells)
    return Xc, P, Q


def scores(Wv: np.ndarray, Xc: np.ndarray, real: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The scores w·x_c of the point vectors ``Wv`` (rows) on the cells ``Xc``, as floats, and for
    real (not whole) predictors a bound on each computed score's rounding error (None for whole
    predictors, whose scores are exact int64 sums): a sum of p products has error at most
    γ_p·Σ_j |w_j x_cj| (Higham, 2002, §3.1), taken here as 2(p + 2)ε·Σ_j |w_j x_cj| computed from
    the absolute values (their own rounding is far inside the factor 2)."""
    if not real:
        return (Wv.astype(np.int64) @ Xc.T.astype(np.int64)).astype(float), None
    Wf = Wv.astype(float)
    S = Wf @ Xc.T.astype(float)
    serr = 2 * (Xc.shape[1] + 2) * EPS * (np.abs(Wf) @ np.abs(Xc.T.astype(float)))
    return S, serr


def grouped_saturated(S: np.ndarray, P: np.ndarray, Q: np.ndarray, W: float) -> np.ndarray:
    """B2 for every row of scores ``S`` (vectors × cells), rounded down, as means (compiled by
    :mod:`riskformula.solver.kernels` when numba is installed)."""
    fast = kernels.grouped_sums(S, P, Q)
    if fast is not None:
        return lower_sum(fast[0], fast[1], W) / W * (1 - 4 * EPS)
    V, C = S.shape
    order = np.argsort(S, axis=1, kind="stable")
    Ss = np.take_along_axis(S, order, axis=1)
    Pc = np.cumsum(P[order], axis=1)
    Qc = np.cumsum(Q[order], axis=1)
    end = np.ones((V, C), dtype=bool)
    end[:, :-1] = Ss[:, 1:] != Ss[:, :-1]
    pos = np.where(end, np.arange(C)[None, :], -1)
    last = np.maximum.accumulate(pos, axis=1)  # the last group end at or before each position
    before = np.full((V, C), -1, dtype=np.intp)
    before[:, 1:] = last[:, :-1]
    idx = np.maximum(before, 0)
    gP = np.where(end, Pc - np.where(before >= 0, np.take_along_axis(Pc, idx, axis=1), 0.0), 0.0)
    gQ = np.where(end, Qc - np.where(before >= 0, np.take_along_axis(Qc, idx, axis=1), 0.0), 0.0)
    t = h_terms(gP, gQ).sum(axis=1)
    return lower_sum(t, end.sum(axis=1), W) / W * (1 - 4 * EPS)


def _grid_bits(total: float, smax: float) -> int:
    """Grid exponent G for the dual numerators: int64 sums of |μ|·2^G·(|s| + 1) over the rows
    stay below 2^62, and P + μ stays exact in float64 (below 2^52 grid units)."""
    g1 = 62 - math.ceil(math.log2((total + 1.0) * (smax + 1.0) * 4.0))
    g2 = 52 - math.ceil(math.log2(total + 1.0)) - 1
    return max(0, min(40, g1, g2))


def _score_sum_below(k: np.ndarray, S: np.ndarray, serr: np.ndarray) -> np.ndarray:
    """A value at most the exact Σ_c k_c·s_c of each row, for whole numerators ``k`` (below 2^53,
    so exact as floats) and computed scores ``S`` within ``serr`` of the exact s_c: the computed
    sum is within γ_C·Σ|k_c s̃_c| of Σ k_c s̃_c, which is within Σ|k_c|·serr_c of the exact one."""
    kf = k.astype(float)
    C = S.shape[1]
    t = (kf * S).sum(axis=1)
    err = 2 * (C + 2) * EPS * (np.abs(kf) * np.abs(S)).sum(axis=1) \
        + (np.abs(kf) * serr).sum(axis=1) * (1 + 2 * (C + 2) * EPS)
    return t - err - 4 * EPS * (np.abs(t) + err)


def dual_bound(S: np.ndarray, Z: np.ndarray, P: np.ndarray, Q: np.ndarray, W: float,
               a_fixed: float | None = None, serr: np.ndarray | None = None) -> np.ndarray:
    """B3 for every row of scores ``S`` (vectors × cells) from the logits ``Z`` of a calibration
    iterate, rounded down, as means: valid for every scale > 0 and real intercept (``a_fixed``
    None) or for every real intercept at logit scale ``a_fixed``.  Whole scores (``serr`` None)
    are exact and Σ μ_c s_c is an exact int64 sum; computed scores of real predictors come with
    their error bounds ``serr`` (:func:`scores`), and Σ μ_c s_c is then bounded below by
    :func:`_score_sum_below` (the fitted scale's condition Σ μ s ≥ 0 is checked on that value)."""
    V, C = S.shape
    N = P + Q
    smax = float(np.abs(S).max()) if S.size and serr is None else 0.0
    G = _grid_bits(W, smax)
    unit = float(2 ** G)
    Pi = np.round(P * unit).astype(np.int64)  # exact: P < 2^40 and P·2^G < 2^52
    Qi = np.round(Q * unit).astype(np.int64)
    mu = N[None, :] * expit(Z) - P[None, :]
    k = np.trunc(mu * unit)
    k = np.clip(k, -P[None, :] * unit, Q[None, :] * unit).astype(np.int64)
    # the intercept's sum to 0, exactly: take the excess from the cells with the most room
    r = k.sum(axis=1)
    for sign in (1, -1):
        rows = np.flatnonzero(sign * r > 0)
        if not len(rows):
            continue
        kk = k[rows]
        room = (kk + Pi[None, :]) if sign > 0 else (Qi[None, :] - kk)  # how far each can move
        order = np.argsort(-room, axis=1, kind="stable")
        rs = np.take_along_axis(room, order, axis=1)
        need = sign * r[rows]
        before = np.cumsum(rs, axis=1) - rs
        take = np.clip(need[:, None] - before, 0, rs)
        delta = np.zeros_like(kk)
        np.put_along_axis(delta, order, take, axis=1)
        k[rows] = kk - sign * delta
    if serr is not None:
        return _dual_bound_real(S, serr, k, P, Q, Pi, Qi, unit, W, a_fixed)
    Si = S.astype(np.int64)
    ok = k.sum(axis=1) == 0
    t = (k * Si).sum(axis=1)
    if a_fixed is None:
        bad = np.flatnonzero(ok & (t < 0))
        if len(bad):
            kk, ss = k[bad], Si[bad]
            can_up, can_down = Qi[None, :] - kk > 0, kk + Pi[None, :] > 0
            big = np.int64(2 ** 40)
            hi = np.argmax(np.where(can_up, ss, -big), axis=1)
            lo = np.argmin(np.where(can_down, ss, big), axis=1)
            r_ = np.arange(len(bad))
            s_hi, s_lo = ss[r_, hi], ss[r_, lo]
            spread = s_hi - s_lo
            fine = can_up.any(axis=1) & can_down.any(axis=1) & (spread > 0)
            step = np.where(fine, (-t[bad] + np.maximum(spread, 1) - 1) // np.maximum(spread, 1), 0)
            fine &= (step <= Qi[hi] - kk[r_, hi]) & (step <= kk[r_, lo] + Pi[lo])
            kk[r_, hi] += np.where(fine, step, 0)
            kk[r_, lo] -= np.where(fine, step, 0)
            k[bad] = kk
        t = (k * Si).sum(axis=1)
        for row in np.flatnonzero(ok & (t < 0)):
            fast = kernels.raise_score_sum(k[row], Si[row], Pi, Qi, int(-t[row]))
            k[row] = fast if fast is not None else _raise_score_sum(k[row], Si[row], Pi, Qi, int(-t[row]))
        t = (k * Si).sum(axis=1)
        ok &= (k.sum(axis=1) == 0) & (t >= 0)
    k[~ok] = 0  # μ = 0 (B2) where the repair failed
    mu = k / unit
    terms = h_terms(P[None, :] + mu, Q[None, :] - mu)
    D = lower_sum(terms.sum(axis=1), C, W)
    if a_fixed is not None:
        # a·Σμs: the integer sum is exact; its conversion and the product round twice
        lin = a_fixed * ((k * Si).sum(axis=1).astype(float) / unit)
        D = D + lin - 4 * EPS * np.abs(lin)
    return np.maximum(D, 0.0) / W * (1 - 4 * EPS)


def _dual_bound_real(S: np.ndarray, serr: np.ndarray, k: np.ndarray, P: np.ndarray, Q: np.ndarray,
                     Pi: np.ndarray, Qi: np.ndarray, unit: float, W: float, a_fixed: float | None) -> np.ndarray:
    """:func:`dual_bound` for computed scores of real predictors, from the grid numerators ``k``
    whose intercept sums are repaired.  For every scale > 0 a row whose Σ μ s is not provably ≥ 0
    moves units from its lowest-scored cell with room to its highest-scored one (each unit raises
    the exact sum by the exact score difference) until the bound of :func:`_score_sum_below` is ≥ 0;
    a row where that fails gets μ = 0.  At a fixed scale a > 0, a·Σ μ s ≥ a·(that bound)."""
    C = S.shape[1]
    ok = k.sum(axis=1) == 0
    low = _score_sum_below(k, S, serr)
    if a_fixed is None:
        bad = np.flatnonzero(ok & (low < 0))
        if len(bad):
            kk, ss = k[bad], S[bad]
            can_up, can_down = Qi[None, :] - kk > 0, kk + Pi[None, :] > 0
            hi = np.argmax(np.where(can_up, ss, -np.inf), axis=1)
            lo = np.argmin(np.where(can_down, ss, np.inf), axis=1)
            r_ = np.arange(len(bad))
            spread = ss[r_, hi] - ss[r_, lo]
            fine = can_up.any(axis=1) & can_down.any(axis=1) & (spread > 0)
            need = np.where(fine, -low[bad] / np.where(fine, spread, 1.0), 0.0)
            fine &= need < 2.0 ** 52
            step = np.where(fine, np.ceil(need * (1 + 1e-6)) + 1, 0).astype(np.int64)
            fine &= (step <= Qi[hi] - kk[r_, hi]) & (step <= kk[r_, lo] + Pi[lo])
            kk[r_, hi] += np.where(fine, step, 0)
            kk[r_, lo] -= np.where(fine, step, 0)
            k[bad] = kk
            low = _score_sum_below(k, S, serr)
            # where one pair of cells has too little room (the extreme cells' μ sits near the
            # end of its box at a fitted iterate): pairs from both ends in turn
            for row in np.flatnonzero(ok & (low < 0)):
                for _ in range(2):
                    # whole units each, a little past the deficit (the quotient rounds)
                    k[row] = _raise_score_sum(k[row], S[row], Pi, Qi, float(-low[row]) * (1 + 1e-6) + 1.0)
                    low[row] = _score_sum_below(k[row:row + 1], S[row:row + 1], serr[row:row + 1])[0]
                    if low[row] >= 0:
                        break
        ok &= (k.sum(axis=1) == 0) & (low >= 0)
    k[~ok] = 0  # μ = 0 (B1 of the cells) where the repair failed
    mu = k / unit
    terms = h_terms(P[None, :] + mu, Q[None, :] - mu)
    D = lower_sum(terms.sum(axis=1), C, W)
    if a_fixed is not None:
        lin = a_fixed * (np.where(ok, _score_sum_below(k, S, serr), 0.0) / unit)
        D = D + lin - 4 * EPS * np.abs(lin)
    return np.maximum(D, 0.0) / W * (1 - 4 * EPS)


def cell_losses(Z: np.ndarray, P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Σ_c P_c·log(1 + e^−z) + Q_c·log(1 + e^z) for every row of logits ``Z`` (vectors × cells),
    as (P + Q)·log(1 + e^−|z|) + P·max(−z, 0) + Q·max(z, 0): one exponential and one logarithm per
    entry instead of two of each.  Only incumbents' values and line searches use it: no bound is
    computed from it."""
    return ((P + Q)[None, :] * np.log1p(np.exp(-np.abs(Z))) + P[None, :] * np.maximum(-Z, 0.0)
            + Q[None, :] * np.maximum(Z, 0.0)).sum(axis=1)


def _values(S: np.ndarray, a: np.ndarray, c: np.ndarray, P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    return cell_losses(a[:, None] * S + c[:, None], P, Q)


def calibrate_fitted(S: np.ndarray, P: np.ndarray, Q: np.ndarray, iters: int = 60, start=None):
    """For every row of scores ``S`` (vectors × cells): a logit scale a ≥ 0 and intercept c with a
    low loss (damped Newton on the convex loss in (a, c), a kept ≥ 0, from ``start`` = (a, c) per
    vector or the intercept-only model), the loss there (a sum, not a mean; attained when a > 0)
    and the logits, for :func:`dual_bound`.  Compiled by :mod:`riskformula.solver.kernels` when
    numba is installed (only a point: every bound holds at any iterate)."""
    V, C = S.shape
    N = P + Q
    Pt, Qt = float(P.sum()), float(Q.sum())
    c0 = math.log(Pt / Qt) if Pt > 0 and Qt > 0 else 0.0
    fast = kernels.calibrate(S, P, Q, iters, start, c0)
    if fast is not None:
        a, c, f = fast
        return a, c, f, a[:, None] * S + c[:, None]
    a = np.zeros(V)
    c = np.full(V, c0)
    f = _values(S, a, c, P, Q)
    if start is not None:
        a1, c1 = np.maximum(start[0], 0.0), start[1]
        f1 = _values(S, a1, c1, P, Q)
        better = f1 < f
        a, c, f = np.where(better, a1, a), np.where(better, c1, c), np.where(better, f1, f)
    active = np.arange(V)
    for _ in range(iters):
        if not len(active):
            break
        Sa, aa, ca = S[active], a[active], c[active]
        Z = aa[:, None] * Sa + ca[:, None]
        sig = expit(Z)
        r = N[None, :] * sig - P[None, :]
        ga, gc = (r * Sa).sum(axis=1), r.sum(axis=1)
        w = N[None, :] * sig * (1.0 - sig)
        haa, hac, hcc = (w * Sa * Sa).sum(axis=1), (w * Sa).sum(axis=1), w.sum(axis=1)
        det = haa * hcc - hac * hac
        good = det > 1e-12 * np.maximum(haa * hcc, 1e-300)
        da = np.where(good, -(hcc * ga - hac * gc) / np.where(good, det, 1.0), 0.0)
        dc = np.where(good, -(haa * gc - hac * ga) / np.where(good, det, 1.0), -gc / np.maximum(hcc, 1e-300))
        da, dc = np.clip(da, -5.0, 5.0), np.clip(dc, -50.0, 50.0)
        fa = f[active]
        step = np.ones(len(active))
        moved = np.zeros(len(active), dtype=bool)
        na, nc, nf = aa.copy(), ca.copy(), fa.copy()
        todo = np.arange(len(active))
        for _ in range(30):
            ta = np.maximum(aa[todo] + step[todo] * da[todo], 0.0)
            tc = ca[todo] + step[todo] * dc[todo]
            tf = _values(Sa[todo], ta, tc, P, Q)
            better = tf < fa[todo]
            idx = todo[better]
            na[idx], nc[idx], nf[idx] = ta[better], tc[better], tf[better]
            moved[idx] = True
            todo = todo[~better]
            if not len(todo):
                break
            step[todo] *= 0.5
        gain = fa - nf
        a[active], c[active], f[active] = na, nc, nf
        # the Newton decrement bounds what is left to gain: stop below 1e-13 of the loss
        dec = -(ga * da + gc * dc)
        keep = moved & (gain > 1e-15 * np.maximum(fa, 1.0)) & (dec > 1e-13 * np.maximum(fa, 1.0))
        active = active[keep]
    Z = a[:, None] * S + c[:, None]
    return a, c, f, Z


def lr_bound(Xc: np.ndarray, P: np.ndarray, Q: np.ndarray, W: float, iters: int = 30,
             start: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """B5: a lower bound (mean, rounded down) on the loss of every real vector of coefficients and
    real intercept on the support's cells ``Xc`` (cells × columns, integers) — so on every integer
    point vector on the support, at every scale and intercept (a·w is real).

    Proof: B3 with one constraint per column: for μ in the boxes with Σ_c μ_c = 0 and
    Σ_c μ_c·x_cj = 0 for every column j (exactly), Σ_c L(P_c, Q_c; u_c·θ) ≥ Σ_c h(P_c + μ_c, Q_c − μ_c)
    for every θ.  μ is read from a damped Newton solution of the logistic regression on the cells,
    put on the grid, the intercept sum repaired as in :func:`dual_bound`, then each column's sum
    by moving grid units between two cells that agree on every other column and differ by one in
    that column (which keeps the intercept and the other columns' sums).  When a sum cannot be
    repaired this way the bound is B1 (μ = 0).  Returns the bound and the regression's coefficients
    (intercept first), a start for calibrating the support's point vectors.  ``start`` (coefficients,
    intercept first; e.g. the regression of the support less its last column, with a 0 appended) is
    a starting point for the Newton steps, used when its loss is below the intercept-only model's:
    it changes only where the dual is read, never the proof."""
    C, s = Xc.shape
    U = np.column_stack([np.ones(C), Xc.astype(float)])
    N = P + Q
    theta = np.zeros(s + 1)
    Pt, Qt = float(P.sum()), float(Q.sum())
    theta[0] = math.log(Pt / Qt) if Pt > 0 and Qt > 0 else 0.0

    def value(z):
        return float(P @ np.logaddexp(0.0, -z) + Q @ np.logaddexp(0.0, z))
    usable = start is not None and len(start) == s + 1 and bool(np.all(np.isfinite(start)))
    # the compiled Newton steps (only the point changes): from ``start`` where it beats the
    # intercept-only model, as below
    fast = kernels.regression(U[None], P, Q, iters, np.asarray(start, dtype=float)[None] if usable else None)
    if fast is not None:
        theta, iters = fast[0], 0
    else:
        z = U @ theta
        f = value(z)
        if usable:
            z1 = U @ np.asarray(start, dtype=float)
            f1 = value(z1)
            if f1 < f:
                theta, z, f = np.array(start, dtype=float), z1, f1
    ridge = 1e-12 * np.eye(s + 1)
    UT = np.ascontiguousarray(U.T)
    for _ in range(iters):
        sig = expit(z)
        g = UT @ (N * sig - P)
        H = (UT * (N * sig * (1 - sig))[None, :]) @ U + ridge
        try:
            step = -np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            break
        step = np.clip(step, -20.0, 20.0)
        t, moved = 1.0, False
        dz = U @ step  # the logits move along U·step: one product per Newton step, not per trial
        for _ in range(30):
            zn = z + t * dz
            fn = value(zn)
            if fn < f:
                theta, z, f, moved = theta + t * step, zn, fn, True
                break
            t *= 0.5
        if not moved or abs(float(g @ step)) < 1e-12 * max(f, 1.0):
            break
    G = _grid_bits(W, float(np.abs(Xc).max()) * s if Xc.size else 1.0)
    unit = float(2 ** G)
    Xi = Xc.astype(np.int64)
    # each cell's values as one mixed-radix number (digit j: x_cj − min_j), sorted once: the cell b
    # that agrees with a on every column but has x_bj = x_aj − 1 has the number of a less mult_j
    lo_x = Xi.min(axis=0) if C else np.zeros(s, dtype=np.int64)
    radix = (Xi.max(axis=0) - lo_x + 1) if C else np.ones(s, dtype=np.int64)
    packed = s > 0 and float(np.prod(radix.astype(float))) < 2.0 ** 62
    if packed:
        mult = np.r_[1, np.cumprod(radix[:-1])].astype(np.int64)
        fast = kernels.lr_dual(Xi, P, Q, theta, unit, lo_x, mult)
        if fast is not None:  # the same steps compiled, the constraints checked exactly there
            return float(lower_sum(fast[1], C, W)) / W * (1 - 4 * EPS), theta
    Z = U @ theta
    Pi = np.round(P * unit).astype(np.int64)
    Qi = np.round(Q * unit).astype(np.int64)
    k = np.clip(np.trunc((N * expit(Z) - P) * unit), -P * unit, Q * unit).astype(np.int64)

    def move(kk, plus, minus, need):
        """Move ``need`` grid units (signed) from the cells ``minus`` to the cells ``plus`` (pairwise),
        within the boxes; the part left unmoved is returned."""
        for a, b in zip(plus, minus):
            if need == 0:
                break
            if need > 0:
                amount = min(need, int(Qi[a] - kk[a]), int(kk[b] + Pi[b]))
            else:
                amount = -min(-need, int(kk[a] + Pi[a]), int(Qi[b] - kk[b]))
            if amount:
                kk[a] += amount
                kk[b] -= amount
                need -= amount
        return need
    # the intercept: spread the excess over the cells with room (as dual_bound)
    r = int(k.sum())
    order = np.argsort(-(k + Pi) if r > 0 else -(Qi - k), kind="stable")
    for c in order:
        if r == 0:
            break
        take = min(r, int(k[c] + Pi[c])) if r > 0 else max(r, -int(Qi[c] - k[c]))
        k[c] -= take
        r -= take
    ok = int(k.sum()) == 0
    if packed:
        num = (Xi - lo_x) @ mult
        srt = np.argsort(num, kind="stable")
        num_sorted = num[srt]
    for j in range(s if ok else 0):
        rj = int(k @ Xi[:, j])
        if rj == 0:
            continue
        # the pairs (a, b) of cells that agree on every other column and have x_aj − x_bj = 1
        if packed:
            target = num - mult[j]
            pos = np.minimum(np.searchsorted(num_sorted, target), C - 1)
            b_of = srt[pos]
            found = (num_sorted[pos] == target) & (Xi[:, j] - Xi[b_of, j] == 1)
            plus = np.flatnonzero(found).tolist()
            minus = b_of[found].tolist()
        else:
            others = np.delete(Xi, j, axis=1)
            if others.shape[1]:
                _, grp = np.unique(others, axis=0, return_inverse=True)
                grp = grp.ravel().astype(np.int64)
            else:
                grp = np.zeros(C, dtype=np.int64)
            span = int(Xi[:, j].max() - Xi[:, j].min()) + 2
            key = grp * span + (Xi[:, j] - Xi[:, j].min())
            srt_j = np.argsort(key, kind="stable")
            pos = np.searchsorted(key[srt_j], key - 1)
            found = (pos < C) & (key[srt_j][np.minimum(pos, C - 1)] == key - 1)
            plus = np.flatnonzero(found).tolist()
            minus = srt_j[pos[found]].tolist()
        # moving m units from b to a changes the column's sum by m: it must change by −rj
        if move(k, plus, minus, -rj) != 0:
            ok = False
            break
    Xf = Xc.astype(np.int64)
    if ok:
        ok = int(k.sum()) == 0 and all(int(k @ Xf[:, j]) == 0 for j in range(s)) \
            and bool(np.all(k >= -Pi)) and bool(np.all(k <= Qi))
    if not ok:
        k[:] = 0
    mu = k / unit
    terms = h_terms(P + mu, Q - mu)
    return float(lower_sum(terms.sum(), C, W)) / W * (1 - 4 * EPS), theta


def ball_bounds(Xc: np.ndarray, P: np.ndarray, Q: np.ndarray, theta: np.ndarray,
                radii=(0.25, 1.0, 4.0, 16.0)) -> list[tuple[float, float, float, float]]:
    """B6 ingredients around a point θ̂ (intercept first) of the logistic regression on the
    support's cells: for each usable radius R, (F_lo, G, μ, R) such that every θ satisfies
    F(θ) ≥ φ(|θ − θ̂|) with φ(r) = F_lo − G·r + μr²/2 for r ≤ R and F_lo + r·(μR/2 − G) beyond
    (loss sums, not means).

    Proof (a strong-convexity gap bound): the Hessian of F at any θ in the ball B(θ̂, R) is
    Σ_c N_c σ'(u_c·θ) u_c u_cᵀ ⪰ H_R = Σ_c N_c σ'(|u_c·θ̂| + R|u_c|) u_c u_cᵀ (σ' is even and falls
    in |z|, and |u_c·θ − u_c·θ̂| ≤ R|u_c|), so with μ ≤ λ_min(H_R) and G ≥ |∇F(θ̂)|, inside the ball
    F(θ) ≥ F(θ̂) − G·r + μr²/2 (Taylor with the integral remainder); outside, convexity along the
    ray from θ̂ through the sphere gives F(θ) ≥ F(θ̂) + (r/R)·(−G·R + μR²/2).  Only radii with
    μ > 0 and R ≥ 2G/μ are kept, so φ does not fall beyond r = G/μ.  Floating point: F(θ̂) is
    lowered by 8(C + 8)ε of itself, G raised by 8(C + 8)ε·Σ N_c|u_c|, each σ' taken at a logit
    raised by its rounding bound and lowered by 16ε, and λ_min (LAPACK's symmetric solver,
    backward stable) lowered by 16(C + 10p + 10)ε·trace(H_R).  The computed logits differ from the
    exact u_c·θ̂ by at most zerr_c = 4(p + 2)ε·Σ|u_c||θ̂|: F(θ̂) is lowered by Σ_c max(P_c, Q_c)·zerr_c
    too (a cell's loss has slope at most max(P_c, Q_c) in its logit) and G raised by
    Σ_c N_c|u_c|·zerr_c/4 (σ' ≤ 1/4).  U may hold any real values (they are data, exact)."""
    C, s = Xc.shape
    U = np.column_stack([np.ones(C), Xc.astype(float)])
    N = P + Q
    z = U @ theta
    zerr = 4 * (s + 2) * EPS * (np.abs(U) @ np.abs(theta))
    f = float(P @ np.logaddexp(0.0, -z) + Q @ np.logaddexp(0.0, z))
    # the computed logits are within zerr of the exact u_c·θ̂: a cell's loss moves by at most
    # max(P_c, Q_c) per unit of logit and σ by at most 1/4
    F_lo = f * (1 - 8 * (C + 8) * EPS) - float(np.maximum(P, Q) @ zerr) * (1 + 4 * EPS)
    unorm = np.sqrt((U * U).sum(axis=1))
    g = U.T @ (N * expit(z) - P)
    G = float(np.sqrt(g @ g)) * (1 + 4 * EPS) + 8 * (C + 8) * EPS * float(N @ unorm) \
        + 0.25 * float((N * unorm) @ zerr) * (1 + 4 * EPS)
    out = []
    for R in radii:
        t = np.abs(z) + zerr + R * unorm * (1 + 4 * EPS)
        e = np.exp(-t)
        sp = e / (1.0 + e) ** 2 * (1 - 16 * EPS)   # σ'(t) = e^−t / (1 + e^−t)², rounded down
        H = (U * (N * sp)[:, None]).T @ U
        try:
            lam = float(np.linalg.eigvalsh(H)[0])
        except np.linalg.LinAlgError:
            continue
        mu = lam - 16 * (C + 10 * (s + 1) + 10) * EPS * float(np.trace(H))
        if mu > 0 and R * mu >= 2 * G:
            out.append((F_lo, G, mu, R))
    return out


def vector_ball_bounds(Wv: np.ndarray, theta: np.ndarray, balls, W: float, a_fixed: float | None = None) -> np.ndarray:
    """B6 per point vector (rows of ``Wv``), as means rounded down: every θ = (c, a·w) — any
    intercept and any a ≥ 0 (``a_fixed`` None), or a = ``a_fixed`` — lies at distance at least
    d_w from θ̂, so its loss is at least φ(max(d_w, G/μ)) (:func:`ball_bounds`).  −inf where no
    radius is usable."""
    t = theta[1:]
    Wf = Wv.astype(float)
    if a_fixed is None:
        # the distance from t to the ray {a·w : a ≥ 0}
        ww = (Wf * Wf).sum(axis=1)
        wt = np.maximum(Wf @ t, 0.0)
        d2 = float(t @ t) - wt * wt / np.where(ww > 0, ww, 1.0)
        d2 = d2 - 8 * (len(t) + 2) * EPS * float(t @ t)
    else:
        diff = t[None, :] - a_fixed * Wf
        d2 = (diff * diff).sum(axis=1) * (1 - 8 * (len(t) + 2) * EPS)
    d = np.sqrt(np.maximum(d2, 0.0)) * (1 - 2 * EPS)
    best = np.full(len(Wv), -np.inf)
    for F_lo, G, mu, R in balls:
        r = np.maximum(d, G / mu)
        inside = F_lo - G * r + 0.5 * mu * r * r
        outside = F_lo + r * (0.5 * mu * R - G)
        phi = np.where(r <= R, inside, outside)
        phi = phi - 4 * EPS * (np.abs(F_lo) + G * r + mu * r * r + mu * R * r)
        best = np.maximum(best, phi)
    return np.maximum(best, 0.0) / W * (1 - 4 * EPS)
