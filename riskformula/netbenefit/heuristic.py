"""Fast net-benefit scores: local search over integer points with the exact cut-off step.

For fixed points the best cut-offs are found exactly (:mod:`.cutoffs`), so the search only moves
the points. It starts from the empty score and from logistic regressions (one lightly
ridge-penalised, and a lasso path of sparser ones) rescaled to the coefficient range and rounded
(the construction of Chi & Birbil's, 2026, Theorem 3), then

1. moves one term's points at a time, trying every integer value in its range at once (one
   vectorised pass of FindOptimalT per term) and keeping the best move (1-opt);
2. when no single move helps, swaps a used term for an unused one with any of its values;
3. restarts from random kicks (iterated local search, fixed seed) of each of the three best distinct
   scores the starts reach in turn, each chain until many kicks in a row bring nothing, and finally
   polishes the best score with pair moves (any two terms, every pair of values) on small problems.

It replaces the simulated annealing of Chi & Birbil (2026): every evaluation is exact and every
accepted move improves, so the same call always returns the same score, and the result seeds
the exact model (:mod:`.milp`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from .grid import DecisionGrid

#: an improvement must exceed this (in objective units) to count
EPS = 1e-10
#: integer scores spanning more values than this are sorted instead of counted in bins
MAX_SPAN = 200_000
#: lasso penalties of the sparse starts, as fractions of the smallest penalty giving the empty score
SPARSE_PATH = (0.5, 0.2, 0.1, 0.05, 0.02, 0.01)
#: the iterated local search kicks from this many of the best distinct scores its starts reach, in turn
ELITES = 3
#: pair moves (two terms changed at once) are tried when a sweep visits at most this many rows
PAIR_BUDGET = 3e8


def points_key(lam) -> bytes:
    """A hashable key of a points vector (−0.0 and 0.0 alike), to set aside repeats."""
    return (np.asarray(lam, dtype=float) + 0.0).tobytes()


class NetBenefitScorer:
    """Best weighted net benefit (cut-offs optimised) of scores on collapsed rows.

    Parameters
    ----------
    X : (R, d) distinct predictor rows; pos, neg : weight of events / non-events per row;
    grid : thresholds and weights.
    """

    def __init__(self, X: np.ndarray, pos: np.ndarray, neg: np.ndarray, grid: DecisionGrid):
        self.X = np.asarray(X, dtype=float)
        self.pos = np.asarray(pos, dtype=float)
        self.neg = np.asarray(neg, dtype=float)
        self.n = float(self.pos.sum() + self.neg.sum())
        keep = grid.w > 0
        self.odds = grid.odds[keep]
        self.w = grid.w[keep] / self.n
        self.integral = bool(np.all(self.X == np.round(self.X)))
        self.evaluations = 0

    def value(self, s: np.ndarray) -> float:
        """Σ_i w_i max_T NB_i(T) for one score vector."""
        return float(self.values(np.asarray(s, dtype=float)[None, :])[0])

    def shifted(self, s: np.ndarray, x: np.ndarray, deltas: np.ndarray) -> np.ndarray:
        """Values of the score vectors ``s + δ·x`` for every δ in ``deltas``."""
        deltas = np.asarray(deltas, dtype=float)
        return self.values(s[None, :] + deltas[:, None] * x[None, :])

    def values(self, S: np.ndarray) -> np.ndarray:
        """Values of the rows of ``S`` (K candidate score vectors over the R rows)."""
        K, R = S.shape
        self.evaluations += K
        if self.integral:
            lo = S.min(axis=1)
            span = int((S.max(axis=1) - lo).max()) + 1
            if span <= MAX_SPAN and K * span <= 5e7:
                idx = (np.rint(S - lo[:, None]).astype(np.int64) + (np.arange(K) * span)[:, None]).ravel()
                a = np.bincount(idx, weights=np.tile(self.pos, K), minlength=K * span).reshape(K, span)
                b = np.bincount(idx, weights=np.tile(self.neg, K), minlength=K * span).reshape(K, span)
                return self._best(a, b, None)
        return self.sorted_values(S, self.pos, self.neg)

    def sorted_values(self, S: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
        """Σ_i w_i max_T NB_i per row of ``S`` (K, m), whose m entries are scores carrying event
        weight ``pos`` and non-event weight ``neg`` (length m), by sorting each row."""
        K, m = S.shape
        order = np.argsort(S, axis=1, kind="stable")
        Ss = np.take_along_axis(np.round(S, 9), order, axis=1)
        # a cut-off can only sit where the sorted score changes
        valid = np.ones((K, m + 1), dtype=bool)
        valid[:, 1:m] = Ss[:, 1:] != Ss[:, :-1]
        return self._best(pos[order], neg[order], valid)

    def _best(self, a: np.ndarray, b: np.ndarray, valid) -> np.ndarray:
        # suffix sums: weight at score >= position; the last column is "treat no one"
        tp = np.concatenate([np.cumsum(a[:, ::-1], axis=1)[:, ::-1], np.zeros((a.shape[0], 1))], axis=1)
        fp = np.concatenate([np.cumsum(b[:, ::-1], axis=1)[:, ::-1], np.zeros((b.shape[0], 1))], axis=1)
        out = np.zeros(a.shape[0])
        for o, w in zip(self.odds, self.w):
            nb = tp - o * fp
            if valid is not None:
                nb = np.where(valid, nb, -np.inf)
            out += w * nb.max(axis=1)
        return out


@dataclass
class SearchResult:
    """Best points found, their objective (weighted NB − c0·size) and the effort spent."""

    points: np.ndarray
    objective: float
    evaluations: int
    time: float
    rounds: int


class LocalSearch:
    """Local search over the points of a :class:`~riskformula.problem.RiskProblem`.

    The problem supplies the coefficient bounds, the size limits, the threshold formulations
    and the operational constraints (a move is kept only if ``problem.complete`` accepts it);
    its logistic loss is not used.
    """

    def __init__(self, problem, scorer: NetBenefitScorer, c0: float, *, seed: int = 0):
        self.problem = problem
        self.scorer = scorer
        self.c0 = float(c0)
        self.X = scorer.X
        self.d = self.X.shape[1]
        self.lo = np.minimum(problem.coef_lower, 0).astype(int)
        self.hi = np.maximum(problem.coef_upper, 0).astype(int)
        self.rng = np.random.default_rng(seed)
        self.check_rows = problem.needs_row_check
        self.use_pairs = False

    # --- feasibility and objective ------------------------------------------------------
    def feasible(self, lam: np.ndarray) -> bool:
        if np.any(lam < self.lo) or np.any(lam > self.hi):
            return False
        if self.check_rows:
            return self.problem.complete(np.concatenate([[0.0], lam])) is not None
        size = int(np.count_nonzero(lam))
        return self.problem.min_size <= size <= self.problem.max_size

    def objective(self, lam: np.ndarray) -> float:
        return self.scorer.value(self.X @ lam) - self.c0 * np.count_nonzero(lam)

    # --- moves ----------------------------------------------------------------------------
    def _best_move(self, lam, s, current, j, base_nnz, base=None):
        """Best feasible value of term ``j`` (others fixed); None if none improves."""
        vals = np.arange(self.lo[j], self.hi[j] + 1)
        vals = vals[vals != lam[j]]
        if vals.size == 0:
            return None
        ref = lam[j] if base is None else 0.0
        s0 = s if base is None else base
        v = self.scorer.shifted(s0, self.X[:, j], vals - ref) - self.c0 * (base_nnz + (vals != 0))
        for k in np.argsort(-v, kind="stable"):
            if v[k] <= current + EPS:
                return None
            trial = lam.copy()
            trial[j] = vals[k]
            if self.feasible(trial):
                return trial, float(v[k])
        return None

    def descend(self, lam: np.ndarray, deadline: float) -> tuple[np.ndarray, float]:
        """1-opt moves, then support swaps, until neither improves (or the deadline)."""
        lam = lam.astype(float).copy()
        current = self.objective(lam)
        while time.perf_counter() < deadline:
            improved = False
            for j in range(self.d):
                nnz = np.count_nonzero(lam) - (lam[j] != 0)
                move = self._best_move(lam, self.X @ lam, current, j, nnz)
                if move is not None:
                    lam, current = move
                    improved = True
                if time.perf_counter() > deadline:
                    break
            if improved:
                continue
            move = self._best_swap(lam, current, deadline)
            if move is None and self.use_pairs and self.pairs_affordable():
                move = self._best_pair(lam, current, deadline)
            if move is None:
                break
            lam, current = move
        return lam, current

    def pairs_affordable(self) -> bool:
        """Whether a sweep over every pair of terms and values costs at most PAIR_BUDGET row visits."""
        width = int(np.max(self.hi - self.lo)) + 1 if self.d else 0
        return self.d * (self.d - 1) / 2 * width ** 2 * self.X.shape[0] <= PAIR_BUDGET

    def _best_pair(self, lam, current, deadline):
        """Best joint change of two terms' points (every pair of values); first improving pair."""
        s = self.X @ lam
        nnz = np.count_nonzero(lam)
        for j in range(self.d):
            vj = np.arange(self.lo[j], self.hi[j] + 1)
            for k in range(j + 1, self.d):
                vk = np.arange(self.lo[k], self.hi[k] + 1)
                a, b = (g.ravel() for g in np.meshgrid(vj, vk, indexing="ij"))
                keep = (a != lam[j]) & (b != lam[k])
                a, b = a[keep], b[keep]
                if a.size == 0:
                    continue
                S = s[None, :] + (a - lam[j])[:, None] * self.X[:, j] + (b - lam[k])[:, None] * self.X[:, k]
                size = nnz - (lam[j] != 0) - (lam[k] != 0) + (a != 0) + (b != 0)
                v = self.scorer.values(S) - self.c0 * size
                for i in np.argsort(-v, kind="stable"):
                    if v[i] <= current + EPS:
                        break
                    trial = lam.copy()
                    trial[j], trial[k] = a[i], b[i]
                    if self.feasible(trial):
                        return trial, float(v[i])
                if time.perf_counter() > deadline:
                    return None
        return None

    def _best_swap(self, lam, current, deadline):
        """Drop one used term and give an unused one its best value; first improving swap."""
        s = self.X @ lam
        nnz = np.count_nonzero(lam)
        for j in np.flatnonzero(lam):
            base = s - lam[j] * self.X[:, j]
            dropped = lam.copy()
            dropped[j] = 0.0
            for k in np.flatnonzero(lam == 0):
                if k == j:
                    continue
                move = self._best_move(dropped, s, current, k, nnz - 1, base=base)
                if move is not None:
                    return move
                if time.perf_counter() > deadline:
                    return None
        return None

    def kick(self, lam: np.ndarray, strength: int) -> np.ndarray:
        """A random feasible change of ``strength`` terms (falls back to ``lam``)."""
        for _ in range(20):
            trial = lam.copy()
            for j in self.rng.choice(self.d, size=min(strength, self.d), replace=False):
                trial[j] = self.rng.integers(self.lo[j], self.hi[j] + 1) if self.rng.random() < 0.7 else 0
            if self.feasible(trial):
                return trial
        return lam

    def run(self, starts: list, *, rounds: int = 200, time_limit: float = 60.0, elites: int = ELITES) -> SearchResult:
        """Descend from every feasible start; then, from each of the ``elites`` best distinct scores
        reached in turn, kick the best score of that chain until ``rounds`` kicks in a row have not
        improved it (or ``time_limit`` seconds run out)."""
        t0 = time.perf_counter()
        deadline = t0 + time_limit
        reached: dict[bytes, tuple[float, int, np.ndarray]] = {}
        for lam in starts:
            lam = np.asarray(lam, dtype=float)
            if not self.feasible(lam):
                continue
            lam, val = self.descend(lam, deadline)
            reached.setdefault(points_key(lam), (val, len(reached), lam))
        if not reached:
            raise ValueError("no feasible start")
        # best first; among equal values the earlier start (a stable, deterministic order)
        chains = sorted(reached.values(), key=lambda t: (-t[0], t[1]))[:max(1, elites)]
        best_val, _, best = chains[0]
        done = 0
        for val0, _, lam0 in chains:
            here, here_val, stalled = lam0, val0, 0
            while stalled < rounds and time.perf_counter() < deadline:
                lam, val = self.descend(self.kick(here, 2 + done % 3), deadline)
                done += 1
                stalled += 1
                if val > here_val + EPS:
                    here, here_val, stalled = lam, val, 0
            if here_val > best_val + EPS:
                best, best_val = here, here_val
        # polish the best score with pair moves too (small problems only)
        self.use_pairs = True
        lam, val = self.descend(best, deadline + 0.1 * time_limit)
        self.use_pairs = False
        if val > best_val + EPS:
            best, best_val = lam, val
        return SearchResult(best, best_val, self.scorer.evaluations, time.perf_counter() - t0, done)


def logistic_direction(X: np.ndarray, pos: np.ndarray, neg: np.ndarray, ridge: float = 1e-3,
                       deadline: float | None = None) -> np.ndarray:
    """Coefficients of a lightly ridge-penalised logistic regression on collapsed rows (the
    solver's iterate when ``deadline``, a ``time.perf_counter()`` value, comes first)."""
    return _penalised_logistic(X, pos, neg, ridge=ridge, deadline=deadline)[0]


def sparse_directions(X: np.ndarray, pos: np.ndarray, neg: np.ndarray,
                      fractions=SPARSE_PATH, deadline: float | None = None) -> list[np.ndarray]:
    """Lasso-penalised logistic regressions on collapsed rows, one per penalty of ``fractions`` ×
    the smallest penalty that keeps every coefficient at 0 (standardised columns), strongest first.

    Sparse starts lead to scores the dense one misses: on near-separable data the rounded ridge
    direction spreads its points over every column, while a lasso direction keeps the few that
    separate, with room left in the coefficient range.

    ``deadline`` (a ``time.perf_counter()`` value): the regression running when it comes stops
    there (its iterate, if not all zero, is still a direction: the strongest penalties, solved
    first, give the sparsest ones) and the weaker penalties are skipped."""
    d = X.shape[1]
    if d == 0 or (deadline is not None and time.perf_counter() >= deadline):
        return []
    scale = X.std(axis=0)
    scale[scale == 0] = 1.0
    n = pos.sum() + neg.sum()
    # the lasso's first column enters at max_j |∂ loss/∂β_j| at the intercept-only model
    rate = pos.sum() / n
    top = float(np.max(np.abs((X / scale).T @ (pos * (1 - rate) - neg * rate)) / n))
    out, warm = [], None
    for f in fractions:
        beta, warm, stopped = _penalised_logistic(X, pos, neg, lasso=f * top, start=warm, deadline=deadline)
        if np.any(beta != 0):
            out.append(beta)
        if stopped:
            break
    return out


class _Deadline:
    """An L-BFGS-B callback that stops the solver at ``deadline`` (a ``time.perf_counter()``
    value; None: never) and remembers that it did."""

    def __init__(self, deadline: float | None):
        self.deadline = deadline
        self.stopped = False

    def __call__(self, intermediate_result=None):
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.stopped = True
            raise StopIteration


def _penalised_logistic(X, pos, neg, ridge: float = 0.0, lasso: float = 0.0, start=None,
                        deadline: float | None = None):
    """Minimise the mean logistic loss + ridge·‖β‖² + lasso·‖β‖₁ over standardised columns (the
    lasso as β = β⁺ − β⁻ with β± ≥ 0, so L-BFGS-B sets unused columns exactly to 0). Returns β in
    the columns' own units, the solver's variables (a warm start for the next penalty) and whether
    ``deadline`` (a ``time.perf_counter()`` value) stopped the solver before it converged (β is
    then its last iterate)."""
    R, d = X.shape
    scale = X.std(axis=0)
    scale[scale == 0] = 1.0
    Z = np.hstack([np.ones((R, 1)), X / scale])
    n = pos.sum() + neg.sum()

    def f(v):
        beta = np.concatenate([v[:1], v[1:d + 1] - v[d + 1:]]) if lasso else v
        z = Z @ beta
        val = (pos @ np.logaddexp(0, -z) + neg @ np.logaddexp(0, z)) / n + ridge * beta[1:] @ beta[1:]
        p = expit(z)   # no overflow warning on near-separable rows
        g = Z.T @ (neg * p - pos * (1 - p)) / n
        g[1:] += 2 * ridge * beta[1:]
        if not lasso:
            return val, g
        val += lasso * v[1:].sum()
        return val, np.concatenate([g[:1], g[1:] + lasso, -g[1:] + lasso])

    size = 2 * d + 1 if lasso else d + 1
    bounds = [(None, None)] + [(0, None)] * (size - 1) if lasso else None
    v0 = np.zeros(size) if start is None else start
    stop = _Deadline(deadline)
    res = minimize(f, v0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 500},
                   callback=None if deadline is None else stop)
    v = res.x
    beta = v[1:d + 1] - v[d + 1:] if lasso else v[1:]
    return beta / scale, v, stop.stopped


def rounded_starts(problem, direction: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
    """Round ``direction`` scaled so its largest entry meets the coefficient range, at a few
    scales, keeping the strongest terms the size limit allows (Chi & Birbil, 2026, Theorem 3)."""
    out: list[np.ndarray] = []
    top = np.abs(direction).max()
    if not np.isfinite(top) or top == 0:
        return out
    reach = np.where(direction > 0, hi, -lo).astype(float)
    Lam = max(1.0, float(np.max(np.abs(np.concatenate([lo, hi])))))
    for scale in sorted({Lam, math.ceil(Lam / 2), math.ceil(Lam / 4), 1.0}, reverse=True):
        lam = np.clip(np.round(scale * direction / top), lo, hi)
        order = np.argsort(-np.abs(direction) * (reach > 0), kind="stable")
        keep = problem.select_support(order)
        lam[~keep] = 0.0
        out.append(lam)
    return out
