"""Certifying a time-to-event score by supports: every support listed or ruled out by the bound of
a Cox regression.

The support engine of the Cox fit (:mod:`riskformula.survival.fit`), beside the branch-and-cut.
It proves the best integer score under the Cox (1972) partial likelihood over **every score scale
m > 0**: integer points w within their bounds (each used column's point nonzero), linear predictor
η = a·(x·w) with a = 1/m > 0, objective the mean negative log partial likelihood (Breslow's or
Efron's ties, as :class:`~riskformula.problem.cox.CoxLoss` states them) + Σ c0_j over the columns
used.  The partial likelihood has no intercept (a shift of every score leaves it unchanged).

Cells
-----
For a set of columns T, rows equal on T form *cells*; a score that reads only T gives each cell one
linear predictor η_c, and the loss is ``(Σ_k coef_k log Σ_c N_kc e^{η_c} − Σ_c d_c η_c) / W`` over
Efron's (or Breslow's) terms k, with N_kc the weight of cell c in term k's denominator (its rows at
risk then; a tied event counts with Efron's fraction), d_c the cell's event weight and W the total
weight (:class:`CoxTerms`).  On a support's few cells this is far cheaper than on the rows.

Bounds
------
**C1 (the regression of a column set).**  Every score on columns T, at every scale, has η = X_T β
for a real β = a·w, so the least loss of the Cox regression on T (real coefficients) bounds them
all.  It is computed at a damped Newton point β̂ and made rigorous by the gap bound of a strongly
convex function: with G ≥ |∇F(β̂)|, and μ ≤ the least eigenvalue of the Hessian at every point of
the ball B(β̂, R), R ≥ 2G/μ, min F ≥ F(β̂) − G²/(2μ) (inside the ball by Taylor's theorem, beyond it
by convexity along the ray from β̂).  μ comes from the Hessian at β̂: on the ball every row's η
moves by at most δ = R·max_j |x_j| (the largest row norm), so every weight w_j e^{η_j} of a
denominator moves by a factor within e^{±δ}, every normalized weight within e^{±2δ}, and each
term's Hessian — the covariance of x under those weights, min_c Σ_j p_j (x_j − c)(x_j − c)ᵀ — is
at least e^{−2δ} times its value at β̂.  So μ = e^{−2R·max|x|}·λ_min(H(β̂)), and R is the least
fixed point of R = 2G/μ(R) found by iteration (none when 4e·G·max|x| > λ_min: the bound is then
−∞ and not used).

**Subtrees (C2, the family).**  The supports below a node's children from position q on use only
the node's columns and its list's columns from q on, so C1 of that union bounds all of them (the
node's *family*, as B8 of the logistic support search; Liu et al.'s (2022) continuous relaxation
restricted to the union).  A family with more columns has the lower bound, so the bounds rise
along the list and the first position whose family reaches the prune level, found by bisection,
rules out every later child.

**Point vectors (C3).**  A support that C1 does not rule out lists its primitive point vectors
(gcd 1: w and g·w give the same scores once the scale absorbs g).  A vector's scores lie on the
ray {a·w : a > 0}; at Euclidean distance ρ ≥ ρ_w (the distance from β̂ to the ray) from β̂ the
loss is at least F(β̂) − G·r + μ_R·r²/2 with r = min(ρ_w, R), for each radius R with R·μ_R ≥ 2G
and r ≥ G/μ_R (the same two arguments as C1), so vectors far from the regression's direction are
ruled out together.  The others are calibrated: the best a > 0 by Newton steps on the convex
one-dimensional loss, with a lower bound from the tangents at two points a₋ < a₊ whose
derivatives have opposite signs (the least of the two tangents' maximum on [a₋, a₊], and
beyond them each tangent alone); where the derivative at a = 0 is ≥ 0 the bound is the loss at
0; where no such pair is found the support's C1 stands for the vector.

Floating point: sums of positive terms and their logarithms carry a relative rounding error of at
most (n + 8)ε for n terms; every value is lowered (every gradient norm raised, every least
eigenvalue lowered) by 10⁻⁹ of the magnitude it was computed from — above that bound for any n
below 4·10⁶ rows, the convention of :meth:`~riskformula.problem.cox.CoxLoss.bounds_over` — and the
eigenvalue by 10⁻⁹·(p + 1)·Σ coef/W·max|x|² more (LAPACK's symmetric eigensolver is backward
stable).  Distances to rays are lowered by 10⁻¹² of |β̂|².

Search
------
Columns are ordered by C1 of each alone (the most informative first); a depth-first search lists
supports as sequences of positions in each node's list (each support once: a support's first
listed column names the child it is below, whatever the order of a list), under the size limit,
each group's ``max_used`` and the support rows (``at_most``, ``not_both``, ``implies``,
``max_variables``: :func:`~riskformula.solver.support_search.support_rows`), checked on each
support scored.  Speed rules, on which no bound depends:

* **Incumbent first**: the sparse beam search of Liu et al. (2022) on real points and a beam on the
  Cox regression's score test, each support's whole vectors along its real points' ray
  calibrated.  Supports that C1 does not rule out wait in a queue, least bound first, and are
  listed within 30 % of the time so far while the tree is searched, the rest after it.
* **The children's order** (below the root, as the logistic search's P13): while the family of the
  columns not yet placed does not prune, the column its regression leans on most (|coefficient| ×
  standard deviation) is placed next (up to 40 times); the first child whose family prunes is
  then found by bisection.  A family's Newton steps stop at the first point whose loss is below
  the prune level (its minimum is then below it: it cannot prune there).
* **Children bounded at once**: each child's own support (and, one column short of the size limit,
  every child, with no family) is bounded by C1 from a few Newton steps taken on all of them in one
  batch from the parent's point, each settled as soon as its bound prunes or its loss shows it
  cannot; the children left are regressed one by one when popped.

The certificate's lower bound is the least of the incumbent and every bound that ruled something
out (and, at the time limit, of the subtrees and listings left), floored by C1 of every column
(every score of the class uses a subset of them, and c0 ≥ 0), so no risk score of the class has a
lower objective.  Pruning uses the package's gap tolerances.
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np
import scipy.sparse as sp

from ..problem import RiskProblem
from ..problem.cox import CoxLoss
from ..problem.loss import distinct_rows
from .report import SolverReport
from .heuristics import real_beam_search
from .support_search import ray_vectors, support_rows

__all__ = ["CoxSupportSearch", "CoxTerms", "why_not_cox", "COX_ENGINE_NAME"]

COX_ENGINE_NAME = "riskformula support enumeration with Cox regression bounds"
COX_SCOPE = "every score scale > 0"
#: relative margin that covers the rounding of every computed sum (see the module's docstring)
REL = 1e-9
#: the largest dense table of terms × rows the engine builds (8 bytes each)
MAX_TABLE = 2.5e7


class CoxTerms:
    """The Efron (or Breslow) terms of a :class:`CoxLoss` as a dense table over its merged rows:
    ``N[k, r]`` the weight of row r in term k's denominator, ``coef[k]`` the term's coefficient,
    ``d[r]`` the row's event weight; cells of a column set aggregate them (:meth:`cells`)."""

    def __init__(self, loss: CoxLoss):
        self.loss = loss
        n = loss.n_unique
        kg, f = loss.k_group, loss.k_frac
        K = len(kg)
        N = (np.arange(n)[None, :] >= loss.g_after[kg][:, None]).astype(float)  # rows after t_g
        cens = loss.cens_at
        hit = loss.row_group[cens][None, :] == kg[:, None]  # censored at t_g: at risk
        N[:, cens] += hit
        ev = loss.ev_rows
        N[:, ev] += (loss.g_of_ev[None, :] == kg[:, None]) * f[:, None]  # tied events: Efron's fraction
        self.N = N * loss.w[None, :]
        self.coef = loss.k_coef.astype(float)
        self.d = loss.event_weight.astype(float)
        self.norm = float(loss._norm)
        self.X = loss.Z[:, 1:]
        self.K, self.n = K, n
        self._first = np.searchsorted(loss.g_time, loss.time, side="left")  # the event times before each row's
        self._at = np.flatnonzero(loss.row_group >= 0)  # rows at an event time
        G = len(loss.g_time)
        self._group_of_term = sp.csr_matrix((np.ones(K), (kg, np.arange(K))), shape=(G, K))  # sums terms by time

    def term_sums(self, v: np.ndarray) -> np.ndarray:
        """Σ_r N[k, r]·v_r / w_r for every term k (v: rows, or rows × columns) from reverse
        cumulative sums over the rows in time order — O(rows) per column instead of the dense
        table's O(terms × rows)."""
        loss = self.loss
        shape = v.shape[1:]
        v = v.reshape(v.shape[0], -1)
        R = np.concatenate([np.cumsum(v[::-1], axis=0)[::-1], np.zeros((1, v.shape[1]))], axis=0)
        A = R[loss.g_after] + loss._sum_censored @ v
        S = loss._sum_events @ v
        out = A[loss.k_group] + loss.k_frac[:, None] * S[loss.k_group]
        return out.reshape((out.shape[0],) + shape)

    def row_weights(self, D: np.ndarray) -> np.ndarray:
        """Σ_k coef_k N[k, r] / (w_r D_k) for every row r: the weight of a row's e^η in the
        gradient, from prefix sums over the event times."""
        loss = self.loss
        G = len(loss.g_time)
        a = np.bincount(loss.k_group, weights=self.coef / D, minlength=G)
        b = np.bincount(loss.k_group, weights=self.coef * loss.k_frac / D, minlength=G)
        out = np.concatenate([[0.0], np.cumsum(a)])[self._first]
        at = self._at
        out[at] += np.where(loss.row_is_tied_event[at], b[loss.row_group[at]], a[loss.row_group[at]])
        return out

    def row_weights_batch(self, D: np.ndarray) -> np.ndarray:
        """:meth:`row_weights` for each column of D (terms × B)."""
        out = np.concatenate([np.zeros((1, D.shape[1])), np.cumsum(self._group_of_term @ (self.coef[:, None] / D),
                                                                      axis=0)])[self._first]
        at = self._at
        a = self._group_of_term @ (self.coef[:, None] / D)
        b = self._group_of_term @ ((self.coef * self.loss.k_frac)[:, None] / D)
        rg = self.loss.row_group[at]
        out[at] += np.where(self.loss.row_is_tied_event[at][:, None], b[rg], a[rg])
        return out

    def rows(self, cols) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(N, d, U) with every merged row its own cell (a family's many columns leave few rows
        equal): the same loss as on the cells."""
        return self.N, self.d, self.X[:, list(cols)]

    def cells(self, cols) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(N, d, U) on the cells of the columns ``cols``: N (K × C), d (C), U (C × |cols|) the
        cells' values (the merged rows themselves when most are distinct)."""
        cols = list(cols)
        loss = self.loss
        if not cols:
            return self.N.sum(axis=1, keepdims=True), np.array([self.d.sum()]), np.zeros((1, 0))
        U, inv = distinct_rows(self.X[:, cols])
        C = U.shape[0]
        if C > self.n // 2:
            return self.rows(cols)
        # the weight of each cell at risk after each row's time, by a reverse cumulative sum
        B = np.zeros((self.n + 1, C))
        B[np.arange(self.n), inv] = loss.w
        B = np.cumsum(B[::-1], axis=0)[::-1]
        A = B[loss.g_after]  # rows after t_g
        cens = loss.cens_at
        np.add.at(A, (loss.row_group[cens], inv[cens]), loss.w[cens])  # censored at t_g: at risk
        G = len(loss.g_time)
        S = np.zeros((G, C))
        ev = loss.ev_rows
        np.add.at(S, (loss.g_of_ev, inv[ev]), loss.w[ev])  # the events at t_g
        N = A[loss.k_group] + loss.k_frac[:, None] * S[loss.k_group]
        return N, np.bincount(inv, weights=self.d, minlength=C), U


def _evaluate_rows(terms: "CoxTerms", U, beta):
    """:func:`_evaluate` on the merged rows (U: rows × p) by the risk sets' cumulative sums."""
    coef, norm, d, w = terms.coef, terms.norm, terms.d, terms.loss.w
    eta = U @ beta
    c = float(eta.max()) if eta.size else 0.0
    e = w * np.exp(eta - c)
    D = terms.term_sums(e)
    if not np.all(D > 1e-250):
        return None
    logD = np.log(D)
    F = norm * (float(coef @ (logD + c)) - float(d @ eta))
    mag = norm * (float(coef @ (np.abs(logD) + abs(c))) + float(np.abs(d) @ np.abs(eta)))
    q = e * terms.row_weights(D)
    g = norm * (U.T @ (q - d))
    m = terms.term_sums(e[:, None] * U) / D[:, None]
    H = norm * (U.T @ (U * q[:, None]) - m.T @ (m * coef[:, None]))
    return F, g, H, mag


def _evaluate(N, d, U, coef, norm, beta, hessian=True):
    """Loss, gradient, Hessian (in β) and the loss's magnitude at β; None when a denominator
    underflows.  ``N`` is a dense table of terms × cells, or the :class:`CoxTerms` of the rows."""
    if isinstance(N, CoxTerms):
        return _evaluate_rows(N, U, beta)
    eta = U @ beta
    c = float(eta.max()) if eta.size else 0.0
    e = np.exp(eta - c)
    D = N @ e
    if not np.all(D > 1e-250):
        return None
    logD = np.log(D)
    F = norm * (float(coef @ (logD + c)) - float(d @ eta))
    mag = norm * (float(coef @ (np.abs(logD) + abs(c))) + float(np.abs(d) @ np.abs(eta)))
    P = N * (e / 1.0)[None, :] / D[:, None]
    q = coef @ P
    g = norm * (U.T @ (q - d))
    if not hessian:
        return F, g, None, mag
    M = P @ U
    H = norm * (U.T @ (U * q[:, None]) - M.T @ (M * coef[:, None]))
    return F, g, H, mag


def cox_regression(N, d, U, coef, norm, beta0=None, iters: int = 25, stop_below: float = -math.inf):
    """A damped Newton point β̂ of the Cox regression on the cells (N, d, U): (β̂, F, g, H, mag),
    or None where a denominator underflows.  Only a point; :func:`gap_bound` bounds the minimum.
    The steps stop at the first point whose loss is below ``stop_below`` (the minimum is then below
    it too: a caller that only asks whether the bound reaches it has its answer)."""
    p = U.shape[1]
    beta = np.zeros(p) if beta0 is None else np.asarray(beta0, dtype=float).copy()
    at = _evaluate(N, d, U, coef, norm, beta)
    if at is None and beta0 is not None:
        beta = np.zeros(p)
        at = _evaluate(N, d, U, coef, norm, beta)
    if at is None:
        return None
    F, g, H, mag = at
    ridge = 1e-10 * (1.0 + float(np.trace(H))) if p else 0.0
    for _ in range(iters):
        if not p or float(np.abs(g).max()) < 1e-13 or F < stop_below:
            break
        try:
            step = np.linalg.solve(H + ridge * np.eye(p), g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H + ridge * np.eye(p), g, rcond=None)[0]
        t, moved = 1.0, False
        dec = float(g @ step)
        while t > 1e-6:
            nb = beta - t * step
            nat = _evaluate(N, d, U, coef, norm, nb)
            if nat is not None and nat[0] <= F - 1e-4 * t * dec + 1e-15 * abs(F):
                beta, (F, g, H, mag), moved = nb, nat, True
                break
            t *= 0.5
        if not moved or dec < 1e-15 * max(abs(F), 1.0):
            break
    return beta, F, g, H, mag


class GapBound:
    """The rigorous bound of :func:`gap_bound` (``value``) and what C3 needs to bound the loss far
    from β̂ in the norm |v|_H = √(vᵀH₀v) of the computed Hessian H₀ at β̂ (see the module's docstring)."""

    def __init__(self, F_lo: float, G: float, shrink: float, h: float, theta: np.ndarray, H0: np.ndarray | None):
        # G ≥ the true gradient's dual norm; the true Hessian is ≥ shrink·H₀ at β̂; every cell's η moves
        # by at most h·|v|_H along v
        self.F_lo, self.G, self.shrink, self.h, self.theta, self.H0 = F_lo, G, shrink, h, theta, H0
        self.fit: tuple | None = None  # the Newton point it was computed from (set by its caller)
        self.R0 = self._least_radius()
        if self.R0 is None:
            self.value = -math.inf
        else:
            self.value = self.F_lo - (self.G * self.G / (2.0 * self._mu(self.R0))) * (1 + 8 * REL)

    def _mu(self, R: float) -> float:
        return math.exp(-2.0 * R * self.h) * self.shrink

    def _least_radius(self) -> float | None:
        if not (self.shrink > 0 and math.isfinite(self.F_lo) and math.isfinite(self.G) and math.isfinite(self.h)):
            return None
        if self.G == 0.0:
            return 0.0
        R = 2.0 * self.G / self.shrink
        for _ in range(60):
            if R * self.h > 30.0:
                return None
            nxt = 2.0 * self.G / self._mu(R) * (1 + 1e-12)
            if nxt <= R * (1 + 1e-12):
                break
            R = nxt
            if R * self.h > 30.0:
                return None
        return R if R * self._mu(R) >= 2.0 * self.G else None

    def far(self, rho: np.ndarray) -> np.ndarray:
        """A lower bound of the loss at every β at H₀-distance ≥ ρ from β̂ (one per entry of ρ)."""
        out = np.full(rho.shape, self.value)
        if self.R0 is None or self.h <= 0:
            return out
        for R in sorted({self.R0, *(f / self.h for f in (0.125, 0.25, 0.5, 1.0, 2.0))}):
            if R < self.R0:
                continue
            mu = self._mu(R)
            r = np.minimum(rho, R)
            ok = r >= self.G / mu
            val = self.F_lo - self.G * r + 0.5 * mu * r * r
            val -= REL * (np.abs(val) + self.G * r + 0.5 * mu * r * r)
            out = np.where(ok, np.maximum(out, val), out)
        return out

    def ray_distance(self, W: np.ndarray) -> np.ndarray:
        """A lower bound of the H₀-distance from β̂ to each closed ray {a·w : a ≥ 0} (rows w of W)."""
        H, t = self.H0, self.theta
        if H is None or not t.size:
            return np.zeros(len(W))
        Ht = H @ t
        t2 = float(t @ Ht)
        dots = W @ Ht
        w2 = np.einsum("vi,ij,vj->v", W, H, W)
        d2 = np.where((dots > 0) & (w2 > 0), t2 - dots * dots / np.where(w2 > 0, w2, 1.0), t2)
        d2 -= 1e-12 * float(np.abs(t) @ np.abs(H) @ np.abs(t)) + 1e-300
        return np.sqrt(np.maximum(d2, 0.0))


def _inverse_form_upper(H: np.ndarray, lam_lo: np.ndarray, X: np.ndarray) -> np.ndarray:
    """An upper bound of xᵀH⁻¹x for each row x of X, for a batch (B × p × p, B × m × p) of
    symmetric H with least eigenvalue ≥ lam_lo > 0: with y a computed solution of Hy = x and
    r = Hy − x (raised by its rounding bound), xᵀH⁻¹x = xᵀy − yᵀr + rᵀH⁻¹r ≤ xᵀy + |y|ᵀ|r| + |r|²/lam_lo."""
    p = H.shape[-1]
    Y = np.linalg.solve(H, X.transpose(0, 2, 1)).transpose(0, 2, 1)  # B × m × p
    absH = np.abs(H)
    r = np.abs(Y @ H - X) + 4 * (p + 2) * 2.3e-16 * (np.abs(Y) @ absH + np.abs(X))
    xy = (X * Y).sum(axis=2)
    out = xy + (np.abs(Y) * r).sum(axis=2) + (r * r).sum(axis=2) / lam_lo[:, None]
    return out * (1 + 8 * (p + 2) * 2.3e-16) + 1e-300


def gap_parts(F: np.ndarray, mag: np.ndarray, g: np.ndarray, H: np.ndarray, U: np.ndarray, K: float,
              precise: bool = False):
    """For a batch of Newton points (loss F, its magnitude, gradient g: B × p, Hessian H: B × p × p,
    the cells' values U: B × C × p, K = Σ coef / W): what :class:`GapBound` needs — F lowered by its
    rounding bound, G ≥ the true gradient's H⁻¹-norm, the shrink s (true Hessian ≥ s·H at the point)
    and h ≥ max_c |x_c|_{H⁻¹} — with G = ∞ where H is not safely positive definite.  Without
    ``precise``, h and G take |x|_{H⁻¹} ≤ |x|/√λ_min (no solves: the bound of a converged point
    barely depends on them); with it, the solves of :func:`_inverse_form_upper` (C3 needs them)."""
    B, p = g.shape
    F_lo = F - REL * (mag + np.abs(F)) - 1e-300
    G = np.full(B, math.inf)
    shrink = np.zeros(B)
    h = np.full(B, math.inf)
    if p == 0:
        return F_lo, np.zeros(B), np.ones(B), np.zeros(B)
    xmax = np.sqrt((U * U).sum(axis=2)).max(axis=1)
    g_err = REL * 2.0 * K * xmax + 4 * REL * np.linalg.norm(g, axis=1)  # bounds |true gradient − g|
    H_err = REL * (p + 1) * K * xmax * xmax  # bounds |true Hessian − H|₂
    fin = np.all(np.isfinite(H.reshape(B, -1)), axis=1) & np.all(np.isfinite(g), axis=1)
    if not np.any(fin):
        return F_lo, G, shrink, h
    lam = np.full(B, -math.inf)
    lam[fin] = np.linalg.eigvalsh(H[fin])[:, 0]
    lam_lo = lam - REL * np.abs(lam) - (p + 1) * 2.3e-16 * np.abs(H).sum(axis=(1, 2))
    ok = fin & (lam_lo > H_err)
    if not np.any(ok):
        return F_lo, G, shrink, h
    shrink[ok] = 1.0 - H_err[ok] / lam_lo[ok]  # true Hessian ≥ H − H_err·I ≥ shrink·H
    root = np.sqrt(lam_lo[ok])
    if precise:
        forms = _inverse_form_upper(H[ok], lam_lo[ok], np.concatenate([U[ok], g[ok][:, None, :]], axis=1))
        h[ok] = np.sqrt(forms[:, :-1].max(axis=1))
        G[ok] = np.sqrt(forms[:, -1]) + g_err[ok] / root
    else:
        h[ok] = xmax[ok] / root * (1 + 4 * REL)
        G[ok] = (np.linalg.norm(g[ok], axis=1) * (1 + 4 * REL) + g_err[ok]) / root
    return F_lo, G, shrink, h


def gap_bound(N, d, U, coef, norm, fit, precise: bool = False) -> GapBound:
    """C1: a lower bound of the Cox regression's minimum on the cells from its Newton point ``fit``
    (:func:`cox_regression`'s tuple); its ``value`` is −∞ when the gap bound does not close."""
    beta, F, g, H, mag = fit
    K = norm * float(coef.sum())
    F_lo, G, shrink, h = gap_parts(np.array([F]), np.array([mag]), g[None, :], H[None, :, :], U[None, :, :], K,
                                   precise)
    return GapBound(float(F_lo[0]), float(G[0]), float(shrink[0]), float(h[0]), beta,
                    H if math.isfinite(float(G[0])) else None)


def _curve(N, coef, norm, d, S, a):
    """f(a), f'(a), f''(a) and |f|'s magnitude for each score vector (rows of S over the cells)
    at its multiplier a (one per row)."""
    Z = S * a[:, None]
    c = Z.max(axis=1)
    E = np.exp(Z - c[:, None])
    D = E @ N.T  # V × K
    ok = np.all(D > 1e-250, axis=1)
    D = np.where(D > 1e-250, D, 1.0)
    N1 = (E * S) @ N.T
    N2 = (E * S * S) @ N.T
    logD = np.log(D)
    sd = S @ d
    F = norm * (logD @ coef + c * coef.sum() - a * sd)
    m1 = N1 / D
    g = norm * (m1 @ coef - sd)
    h = norm * ((N2 / D - m1 * m1) @ coef)
    mag = norm * (np.abs(logD) @ coef + np.abs(c) * coef.sum() + np.abs(a * sd))
    smax = np.abs(S).max(axis=1)
    gerr = REL * (2 * norm * coef.sum() * smax + np.abs(g))
    return F, g, h, mag, gerr, ok


def calibrate(N, d, coef, norm, S: np.ndarray, a0: np.ndarray, iters: int = 30):
    """The best multiplier a > 0 of each score vector (rows of S, integer scores per cell):
    (value at the computed a — attained —, that a, a lower bound of inf over a > 0 (−∞ where the
    tangents do not bracket the minimum))."""
    V = S.shape[0]
    a = np.maximum(np.asarray(a0, dtype=float), 1e-6)
    F0, g0, _, mag0, gerr0, _ = _curve(N, coef, norm, d, S, np.zeros(V))
    F, g, h, mag, gerr, ok = _curve(N, coef, norm, d, S, a)
    damp = np.ones(V)
    for _ in range(iters):
        step = damp * np.where(h > 0, g / np.where(h > 0, h, 1.0), -a)
        na = np.clip(a - step, a * 0.1, a * 10.0)
        na = np.where(np.abs(a * np.abs(S).max(axis=1)) > 700, a, na)
        nF, ng, nh, nmag, ngerr, nok = _curve(N, coef, norm, d, S, na)
        better = nok & (nF <= F + 1e-15 * np.abs(F))
        damp = np.where(better, 1.0, damp * 0.25)
        a = np.where(better, na, a)
        F, g, h, mag, gerr, ok = (np.where(better, x, y) for x, y in ((nF, F), (ng, g), (nh, h), (nmag, mag),
                                                                        (ngerr, gerr), (nok, ok)))
        if np.all(np.abs(step) <= 1e-10 * a):
            break
    # the tangents at a₋ < a* < a₊ bracket the minimum when f'(a₋) < 0 < f'(a₊) (with their errors)
    lower = np.full(V, -math.inf)
    at_zero = g0 - gerr0 >= 0
    lower[at_zero] = (F0 - REL * (mag0 + np.abs(F0)))[at_zero]
    smax = np.maximum(np.abs(S).max(axis=1), 1.0)
    width = np.maximum(np.maximum(2 * np.abs(g) / np.where(h > 0, h, np.inf), 1e-7 * a), 1e-7 / smax)
    for _ in range(10):
        todo = ~at_zero & ~np.isfinite(lower)
        if not np.any(todo):
            break
        lo = np.maximum(a - width, 0.0)
        hi = a + width
        Fl, gl, _, ml, el, okl = _curve(N, coef, norm, d, S, lo)
        Fh, gh, _, mh, eh, okh = _curve(N, coef, norm, d, S, hi)
        good = todo & okl & okh & (gh - eh > 0) & ((gl + el < 0) | (lo == 0.0))
        # the tangents t₋(x) = Fl + gl (x − lo), t₊(x) = Fh + gh (x − hi) meet at x*
        with np.errstate(divide="ignore", invalid="ignore"):
            xs = np.clip((Fh - Fl + gl * lo - gh * hi) / (gl - gh), lo, hi)
        # min(t₋, t₊) at any x is at most their maximum's least value on [lo, hi] (one falls, one rises)
        t = np.minimum(Fl + gl * (xs - lo), Fh + gh * (xs - hi))
        t_lo = np.minimum(t, np.minimum(Fl, Fh))
        err = REL * (ml + mh + np.abs(Fl) + np.abs(Fh)) + (el + eh) * (hi - lo) + 4e-16 * np.abs(t)
        lo_bound = np.where(lo == 0.0, np.minimum(t_lo, Fl), t_lo) - err
        lower = np.where(good, lo_bound, lower)
        width = width * 8.0
    rest = np.flatnonzero(~np.isfinite(lower))
    if len(rest):  # no bracket (a score that orders the risk sets, whose loss falls as a grows)
        lower[rest] = top_bound(N, coef, norm, S[rest])
    return F, a, lower


def top_bound(N: np.ndarray, coef: np.ndarray, norm: float, S: np.ndarray) -> np.ndarray:
    """A lower bound of the loss of the scores a·s (rows s of S, integer per cell) at every a ≥ 0:
    each denominator is at least its cells of the top score M_k among those at risk,
    Σ_c N_kc e^{a s_c} ≥ e^{a M_k} Σ_{s_c = M_k} N_kc, and Σ_k coef_k M_k ≥ Σ_c d_c s_c (an event's
    score is at most the top of its risk set), so the loss is ≥ Σ_k coef_k log Σ_{s_c = M_k} N_kc / W
    — its limit as a → ∞ where every event has the top score of its risk set."""
    at = N[None, :, :] > 0  # 1 × K × C
    Sk = np.where(at, S[:, None, :], -np.inf)  # V × K × C
    M = Sk.max(axis=2)
    top = np.where(Sk == M[:, :, None], N[None, :, :], 0.0).sum(axis=2)
    val = norm * (np.log(top) @ coef)
    mag = norm * (np.abs(np.log(top)) @ coef)
    return val - REL * (mag + np.abs(val)) - 1e-300


def primitive_vectors(values: list[np.ndarray]) -> np.ndarray:
    """Every vector with entries from ``values`` (one array of nonzero whole numbers per column)
    whose entries have gcd 1."""
    grids = np.meshgrid(*values, indexing="ij")
    W = np.stack([g.reshape(-1) for g in grids], axis=1).astype(np.int64) if values else np.zeros((1, 0), np.int64)
    if W.shape[1]:
        W = W[np.gcd.reduce(np.abs(W), axis=1) == 1]
    return W


def why_not_cox(problem: RiskProblem, loss: CoxLoss, max_size: int) -> str:
    """Why the Cox support search cannot certify ``problem`` ("" when it can)."""
    p = problem
    if p.n_extra_aux or p.has_aux_cost or p.exact_rows or p.indicators:
        return "the problem has auxiliary variables"
    if support_rows(p) is None:
        return "a constraint row reads the points, not only which terms are used"
    if np.any(p.coef_lower > 0) or np.any(p.coef_upper < 0):
        return "some point range excludes 0"
    if len(loss.k_group) * loss.n_unique > MAX_TABLE:
        return (f"its table of {len(loss.k_group):,d} event terms × {loss.n_unique:,d} distinct rows is too large "
                f"(the engine keeps it in memory up to {MAX_TABLE:.3g} entries)")
    width = max((int(p.coef_upper[j] - p.coef_lower[j]) for j in range(p.d)), default=0)
    if width ** max(int(max_size), 0) > 2e6:
        return (f"it lists the point vectors of each support it cannot rule out, {width}^{max_size} per support "
                "at this size limit and point range (up to 2·10⁶)")
    return ""


class CoxSupportSearch:
    """The certified best integer Cox score over every scale > 0 (see the module's docstring).

    ``problem`` gives the point bounds, c0, the size limits, the groups and the support rows;
    ``loss`` the partial likelihood at scale 1."""

    def __init__(self, problem: RiskProblem, loss: CoxLoss, time_limit: float = 60.0, gap_tolerance: float = 1e-6,
                 absolute_gap_tolerance: float = 1e-9, node_limit: int | None = None):
        self.p, self.loss = problem, loss
        self.time_limit = float(time_limit)
        self.gap_tolerance, self.absolute_gap_tolerance = float(gap_tolerance), float(absolute_gap_tolerance)
        self.node_limit = node_limit
        self.terms = CoxTerms(loss)
        d = problem.d
        self.c0 = np.asarray(problem.c0, dtype=float)
        self.values = [np.array([v for v in range(int(problem.coef_lower[j]), int(problem.coef_upper[j]) + 1) if v],
                                dtype=np.int64) for j in range(d)]
        self.group_of = np.asarray(problem._group_of)
        self.caps = [len(g.cols) if g.max_used is None else int(g.max_used) for g in problem.groups]
        self.rows = support_rows(problem) or []
        self.best = math.inf
        self.best_lam: np.ndarray | None = None
        self.best_scale = 1.0
        self.discarded = math.inf
        self.nodes = self.vectors = self.regressions = 0
        self.root_bound = -math.inf
        self._fam_cache: dict = {}
        self._deferred: list = []
        self._tick = 0
        self._deadline = math.inf
        #: the share of the time the listings may take while the tree is searched (they improve the
        #: incumbent the tree prunes with)
        self.listing_share = 0.3
        #: an incumbent from a beam search before the tree (:meth:`_beam_start`)
        self.beam = True
        #: C2 chooses the order of each node's children (:meth:`_family_order`), below the root
        #: unless ``reorder_root``, and not one column short of the size limit (every child is
        #: bounded there: :meth:`_leaf_children`)
        self.reorder = True
        self.reorder_root = False
        #: at most this many columns placed before the bisection (on gbsg at size 5: 3 → 74 s,
        #: 6 → 60 s, 12 → 56 s, 40 → 54 s, measured beside another fit)
        self.order_steps = 40
        #: supports bounded and ruled out by C1, families bounded, point vectors ruled out by C3 and
        #: calibrated, children's own supports (inner, and leaves) ruled out by the batched C1, and
        #: the share of the tree's supports left at a limit
        self.stats: dict[str, float] = {"supports": 0, "supports_pruned": 0, "families": 0, "far": 0,
                                        "calibrated": 0, "own_batched": 0, "leaves_batched": 0}
        #: the children's own supports bounded at once before any is regressed (:meth:`_batch_c1`)
        self.batch_own = True
        #: the children of a node one column short of the size limit bounded at once (:meth:`_leaf_children`)
        self.batch_leaves = True

    # --- size, groups and rows --------------------------------------------------------------
    def _allowed(self, units: int, counts: dict, j: int) -> tuple[bool, int]:
        g = int(self.group_of[j])
        if g < 0:
            return units + 1 <= self.p.max_size, units + 1
        used = counts.get(g, 0)
        if used >= self.caps[g]:
            return False, units
        if used:
            return True, units
        return units + 1 <= self.p.max_size, units + 1

    def _rows_hold(self, cols) -> bool:
        groups = {int(self.group_of[j]) for j in cols} - {-1}
        for col, grp, lo, hi in self.rows:
            v = float(col[list(cols)].sum()) + float(sum(grp[g] for g in groups))
            if not lo - 1e-9 <= v <= hi + 1e-9:
                return False
        return True

    def _prunes(self, bound: float) -> bool:
        b = self.best
        if not math.isfinite(b):
            return False
        return bound >= b or b - bound <= max(self.absolute_gap_tolerance, self.gap_tolerance * abs(b))

    # --- bounds -----------------------------------------------------------------------------
    def _regression(self, cols, beta0=None, iters: int = 25, rows: bool = False,
                    stop_below: float = -math.inf) -> tuple[GapBound | None, tuple | None]:
        N, d, U = self.terms.rows(cols) if rows else self.terms.cells(cols)
        self.regressions += 1
        fit = cox_regression(self.terms if N is self.terms.N else N, d, U, self.terms.coef, self.terms.norm, beta0,
                             iters, stop_below)
        if fit is None:
            return None, None
        gb = gap_bound(N, d, U, self.terms.coef, self.terms.norm, fit)
        gb.fit = fit
        return gb, (N, d, U)

    def _grows(self, u2: int, counts: dict, j: int, rest) -> bool:
        """Whether a support may still grow after column j joins (some later column allowed)."""
        if not rest:
            return False
        if u2 < self.p.max_size:
            return True
        c2 = dict(counts)
        g = int(self.group_of[j])
        if g >= 0:
            c2[g] = c2.get(g, 0) + 1
        return any(self._allowed(u2, c2, k)[0] for k in rest)

    def _leaf_children(self, cols, units, counts, c0sum, lst, theta) -> list | None:
        """When no child of the node can grow (one column short of the size limit), every child's
        own support is bounded by C1 at once (:meth:`_batch_c1`), with no family (a child costs
        less than a family there): the children it does not rule out are returned (their C1 is
        computed again, with their listing, when popped).  None when some child can grow."""
        kids = []
        for i, j in enumerate(lst):
            ok, u2 = self._allowed(units, counts, j)
            if not ok:
                continue
            if self._grows(u2, counts, j, lst[i + 1:]):
                return None
            if u2 >= self.p.min_size and self._rows_hold(cols + (j,)):
                kids.append((i, j, u2))
        if not kids:
            return []
        js = [j for _, j, _ in kids]
        offsets = c0sum + self.c0[js]
        vals = self._batch_c1(cols, theta, js, offsets) + offsets
        out = []
        for (i, j, u2), v in zip(kids, vals):
            if self._prunes(float(v)):
                self.discarded = min(self.discarded, float(v))
                self.stats["leaves_batched"] += 1
                continue
            c2 = dict(counts)
            g = int(self.group_of[j])
            if g >= 0:
                c2[g] = c2.get(g, 0) + 1
            out.append((float(v), cols + (j,), u2, c2, c0sum + float(self.c0[j]), (), theta, False))
        return out

    def _batch_c1(self, cols: tuple, theta: dict, js: list[int], offsets: np.ndarray, iters: int = 3) -> np.ndarray:
        """C1 of each support cols + (j,) for j in ``js``: damped Newton steps on all of them at
        once over the rows (from θ on cols and 0 on j), each one's gap bound after each step; a
        child stops once its bound + its ``offsets`` (c0) prunes or its loss shows it cannot."""
        terms, loss = self.terms, self.loss
        X, d, coef, norm, w = terms.X, terms.d, terms.coef, terms.norm, loss.w
        c = list(cols)
        B, p, n = len(js), len(c) + 1, terms.n
        U = np.empty((B, n, p))
        U[:, :, :-1] = X[:, c][None, :, :]
        U[:, :, -1] = X[:, js].T
        beta = np.zeros((B, p))
        beta[:, :-1] = [theta.get(j, 0.0) for j in c]

        def evaluate(beta, idx=None):
            Ui = U if idx is None else U[idx]
            eta = (Ui @ beta[:, :, None])[:, :, 0].T
            top = eta.max(axis=0)
            e = w[:, None] * np.exp(eta - top)
            D = terms.term_sums(e)  # K × B
            ok = np.all(D > 1e-250, axis=0)
            D = np.where(D > 1e-250, D, 1.0)
            logD = np.log(D)
            F = norm * (coef @ (logD + top) - d @ eta)
            mag = norm * (coef @ (np.abs(logD) + np.abs(top)) + np.abs(d) @ np.abs(eta))
            q = e * terms.row_weights_batch(D)
            UT = Ui.transpose(0, 2, 1)  # B × p × n
            g = norm * (UT @ (q - d[:, None]).T[:, :, None])[:, :, 0]
            m = (terms.term_sums(e[:, :, None] * Ui.transpose(1, 0, 2)) / D[:, :, None]).transpose(1, 0, 2)  # B×K×p
            H = norm * (UT @ (Ui * q.T[:, :, None]) - m.transpose(0, 2, 1) @ (m * coef[None, :, None]))
            return np.where(ok, F, np.inf), g, H, mag

        K = norm * float(coef.sum())
        levels = np.array([self._level(float(o)) for o in offsets])
        out = np.full(B, -math.inf)
        act = np.arange(B)
        F, g, H, mag = evaluate(beta)
        damp = np.ones(B)
        eye = np.eye(p)
        for it in range(iters + 1):
            # the bounds so far (each valid); a child is settled once its bound prunes or its loss
            # is below the prune level (its minimum is then below it too)
            fin = np.isfinite(F)
            if np.any(fin):
                F_lo, G, shrink, h = gap_parts(F[fin], mag[fin], g[fin], H[fin], U[act[fin]], K)
                vals = np.array([GapBound(F_lo[b], G[b], shrink[b], h[b], np.zeros(0), None).value
                                 for b in range(len(F_lo))])
                out[act[fin]] = np.maximum(out[act[fin]], vals)
            keep = ~((out[act] >= levels[act]) | (F < levels[act]))
            if it == iters or not np.any(keep):
                break
            act, beta, F, g, H, mag, damp = (x[keep] for x in (act, beta, F, g, H, mag, damp))
            ridge = 1e-10 * (1.0 + np.trace(H, axis1=1, axis2=2))
            try:
                step = np.linalg.solve(H + ridge[:, None, None] * eye, g[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                break
            nb = beta - damp[:, None] * step
            nF, ng, nH, nmag = evaluate(nb, act)
            better = nF <= F + 1e-15 * np.abs(F)
            beta = np.where(better[:, None], nb, beta)
            F, mag = np.where(better, nF, F), np.where(better, nmag, mag)
            g, H = np.where(better[:, None], ng, g), np.where(better[:, None, None], nH, H)
            damp = np.where(better, 1.0, damp * 0.25)
        self.regressions += B
        return out

    def _family_order(self, cols: tuple, c0sum: float, lst: tuple, theta: dict) -> tuple:
        """The node's list in the order C2 chooses (any order lists each support once: a support's
        first listed column names the child it is below): while the family of the columns not yet
        placed does not reach the prune level, the column its regression leans on most
        (|coefficient| × standard deviation) is placed next, up to :attr:`order_steps` times; the
        rest keep their order.  The family of what is left then prunes sooner."""
        placed: list[int] = []
        rest = list(lst)
        warm = theta
        for _ in range(self.order_steps):
            if len(rest) < 2:
                break
            val, th = self._family(cols + tuple(rest), warm, self._level(c0sum))
            if self._prunes(val + c0sum) or not th:
                break
            j = max(rest, key=lambda c: abs(th.get(c, 0.0)) * self._sd[c])
            placed.append(j)
            rest.remove(j)
            warm = th
        return tuple(placed + rest)

    def _level(self, c0sum: float) -> float:
        """The least regression bound that prunes, for subtrees whose columns cost ``c0sum``."""
        b = self.best
        if not math.isfinite(b):
            return math.inf
        return b - max(self.absolute_gap_tolerance, self.gap_tolerance * abs(b)) - c0sum

    def _family(self, cols: tuple, warm: dict | None = None, level: float = -math.inf) -> tuple[float, dict]:
        """C2: a lower bound of the regression on the columns ``cols`` and its coefficients by
        column (cached; ``warm``, coefficients by column, starts its Newton steps).  Its Newton
        steps stop at a loss below ``level``: the family's minimum is then below it too, so it
        cannot prune there, and the bound returned (valid, at that point) may be far below."""
        key = tuple(sorted(cols))
        hit = self._fam_cache.get(key)
        if hit is not None and (hit[0] >= level or hit[2] < level):
            return hit[0], hit[1]  # the same answer at this level
        self.stats["families"] += 1
        if hit is not None:
            warm = hit[1]
        beta0 = None if warm is None else np.array([warm.get(j, 0.0) for j in key])
        gb, _ = self._regression(key, beta0=beta0, iters=20, rows=len(key) > 8, stop_below=level)
        out: tuple[float, dict, float]
        if gb is None or gb.fit is None:
            out = (-math.inf, {}, math.inf)
        else:
            out = (gb.value, dict(zip(key, gb.theta.tolist())), float(gb.fit[1]))
        if len(self._fam_cache) > 100_000:
            self._fam_cache.clear()
        self._fam_cache[key] = out
        return out[0], out[1]

    # --- a support's own scores -------------------------------------------------------------
    def _bound_support(self, cols: tuple, c0sum: float, warm: dict) -> dict:
        """C1 of the support ``cols``: ruled out, or its vectors along its regression's ray
        calibrated (an incumbent) and its listing put off (:meth:`_list_support`); returns the
        regression's coefficients by column (``warm`` starts it)."""
        self.stats["supports"] += 1
        gb, cells = self._regression(cols, beta0=np.array([warm.get(j, 0.0) for j in cols]))
        support_lb = -math.inf if gb is None else gb.value
        theta = warm if gb is None else dict(zip(cols, gb.theta.tolist()))
        if self._prunes(support_lb + c0sum):
            self.stats["supports_pruned"] += 1
            self.discarded = min(self.discarded, support_lb + c0sum)
            return theta
        if cells is None:
            cells = self.terms.cells(cols)
        if gb is not None and gb.theta.size:
            Wr = ray_vectors(gb.theta, np.array([self.values[j].min() for j in cols]),
                             np.array([self.values[j].max() for j in cols]))
            Wr = Wr[np.all(Wr != 0, axis=1)] if len(Wr) else Wr
            if len(Wr):
                self._calibrate(cols, c0sum, cells, Wr, gb, support_lb, bound=False)
        self._tick += 1
        heapq.heappush(self._deferred, (support_lb + c0sum, self._tick, cols, c0sum, gb, cells))
        return theta

    def _calibrate(self, cols, c0sum, cells, Wc, gb, support_lb, bound: bool = True) -> None:
        """Calibrate the point vectors ``Wc`` of the support; the best becomes the incumbent, and
        with ``bound`` their least lower bound is recorded."""
        N, d, U = cells
        S = (U @ Wc.T.astype(float)).T  # V × C scores
        if gb is not None and gb.theta.size:
            a0 = np.maximum((Wc @ gb.theta) / np.maximum((Wc * Wc).sum(axis=1), 1), 1e-3)
        else:
            a0 = np.full(len(Wc), 0.1)
        F, a, lower = calibrate(N, d, self.terms.coef, self.terms.norm, S, a0)
        obj = F + c0sum
        k = int(np.argmin(obj))
        if obj[k] < self.best and np.isfinite(obj[k]) and a[k] > 0:
            self.best = float(obj[k])
            lam = np.zeros(self.p.d + 1)
            lam[1 + np.asarray(cols)] = Wc[k]
            self.best_lam, self.best_scale = lam, float(1.0 / a[k])
        if bound:
            self.stats["calibrated"] += len(Wc)
            self.discarded = min(self.discarded, float((np.maximum(lower, support_lb) + c0sum).min()))

    def _list_support(self, cols: tuple, c0sum: float, gb, cells) -> None:
        """List the primitive point vectors of the support ``cols`` that C3 does not rule out,
        calibrate them, and record the bound of what is ruled out."""
        support_lb = -math.inf if gb is None else gb.value
        N, d, U = cells
        if gb is not None:  # C3 needs the cells' H⁻¹-norms themselves
            fine = gap_bound(N, d, U, self.terms.coef, self.terms.norm, gb.fit, precise=True)
            gb = fine if fine.value >= gb.value else gb
        W = primitive_vectors([self.values[j] for j in cols])
        chunk = max(1, int(4e6 // max(U.shape[0], self.terms.K, 1)))
        for s in range(0, len(W), chunk):
            if time.perf_counter() > self._deadline:  # the support's C1 bounds the vectors not listed
                self.discarded = min(self.discarded, support_lb + c0sum)
                return
            Wc = W[s:s + chunk]
            self.vectors += len(Wc)
            if gb is not None and gb.R0 is not None:
                far = gb.far(gb.ray_distance(Wc.astype(float))) + c0sum
                keep = ~self._prunes_array(far)
                if np.any(~keep):
                    self.stats["far"] += int((~keep).sum())
                    self.discarded = min(self.discarded, float(far[~keep].min()))
                Wc = Wc[keep]
                if not len(Wc):
                    continue
            self._calibrate(cols, c0sum, cells, Wc, gb, support_lb)

    def _prunes_array(self, bounds: np.ndarray) -> np.ndarray:
        b = self.best
        if not math.isfinite(b):
            return np.zeros(bounds.shape, dtype=bool)
        return (bounds >= b) | (b - bounds <= max(self.absolute_gap_tolerance, self.gap_tolerance * abs(b)))

    # --- the tree ---------------------------------------------------------------------------
    def _prepare(self) -> list:
        usable = [j for j in range(self.p.d) if len(self.values[j])]
        single = []
        for j in usable:
            gb, _ = self._regression((j,))
            single.append(math.inf if gb is None else gb.value)
        self.order = [usable[k] for k in np.argsort(single, kind="stable")]
        w = self.loss.w / self.loss.w.sum()
        mean = w @ self.terms.X
        self._sd = np.sqrt(np.maximum(w @ (self.terms.X - mean) ** 2, 0.0))
        gb, _ = self._regression(tuple(self.order), rows=len(self.order) > 8)
        self.root_bound = -math.inf if gb is None else gb.value
        # the empty score (every scale gives the same loss)
        if self.p.min_size <= 0 and self._rows_hold(()):
            null = self.loss.value(np.zeros(self.p.d + 1))
            self.best, self.best_lam, self.best_scale = null, np.zeros(self.p.d + 1), 1.0
        # stack entries: (subtree bound, columns, units, group counts, c0 sum, list of columns, the
        # parent's regression coefficients by column: a start for the node's own)
        return [(self.root_bound, (), 0, {}, 0.0, tuple(self.order), {}, False)]

    def _children(self, cols, units, counts, c0sum, lst, theta: dict) -> list:
        """The node's children (column, position in the list, units, counts), with the family
        bound of each, and the least bound of the children it ruled out."""
        if not any(self._allowed(units, counts, j)[0] for j in lst):
            return []
        if self.batch_leaves and cols:
            leaves = self._leaf_children(cols, units, counts, c0sum, list(lst), theta)
            if leaves is not None:
                return leaves
        # (not one column short of the size limit: there a child costs less than a family)
        if self.reorder and (cols or self.reorder_root) and len(lst) > 1 and units + 1 < self.p.max_size:
            lst = self._family_order(cols, c0sum, tuple(lst), theta)
        kids = []
        for i, j in enumerate(lst):
            ok, u2 = self._allowed(units, counts, j)
            if ok:
                kids.append((i, j, u2))
        if not kids:
            return []
        n = len(kids)
        bounds: dict[int, float] = {}
        warm: dict[int, dict] = {}

        def fam(m: int) -> float:
            if m not in bounds:
                bigger = [b for b in warm if b < m]
                val, th = self._family(cols + tuple(lst[kids[m][0]:]), warm[max(bigger)] if bigger else theta,
                                       self._level(c0sum))
                bounds[m], warm[m] = val + c0sum, th
            return bounds[m]
        # the first child whose family prunes (families shrink along the list, their bounds rise)
        lo, hi = 0, n
        if self._prunes(fam(n - 1)):
            while lo < hi:
                mid = (lo + hi) // 2
                if self._prunes(fam(mid)):
                    hi = mid
                else:
                    lo = mid + 1
        else:
            lo = n
        if lo < n:
            self.discarded = min(self.discarded, fam(lo))
        out = []
        known = sorted(bounds)
        # the children's own supports, bounded at once without Newton steps
        own = [m for m in range(lo) if kids[m][2] >= self.p.min_size]
        ruled = set()
        if own and self.batch_own and cols:
            js = [kids[m][1] for m in own]
            offsets = c0sum + self.c0[js]
            vals = self._batch_c1(cols, theta, js, offsets) + offsets
            for m, v in zip(own, vals):
                if self._prunes(float(v)):
                    ruled.add(m)
                    self.discarded = min(self.discarded, float(v))
                    self.stats["own_batched"] += 1
        for m in range(lo):
            i, j, u2 = kids[m]
            before = [b for b in known if b <= m]
            sub = bounds[before[-1]] if before else -math.inf
            c2 = dict(counts)
            g = int(self.group_of[j])
            if g >= 0:
                c2[g] = c2.get(g, 0) + 1
            rest = tuple(lst[i + 1:])
            if m in ruled and (not rest or u2 >= self.p.max_size and self.group_of[j] < 0 and not self.caps):
                continue  # a leaf whose scores are ruled out
            out.append((sub, cols + (j,), u2, c2, c0sum + float(self.c0[j]), rest, theta, m in ruled))
        return out

    def solve(self, initial=None, started: float | None = None) -> SolverReport:
        self.t0 = started if started is not None else time.perf_counter()
        self._listing_time = 0.0
        deadline = self._deadline = self.t0 + self.time_limit
        stack = self._prepare()
        for lam in ([] if initial is None else initial):
            self._try_start(np.asarray(lam, dtype=float))
        if self.beam:
            self._beam_start()
        status = None
        while stack:
            if time.perf_counter() > deadline:
                status = "time_limit"
                break
            if self.node_limit is not None and self.nodes >= self.node_limit:
                status = "node_limit"
                break
            bound, cols, units, counts, c0sum, lst, theta, ruled = stack.pop()
            if self._prunes(bound):
                self.discarded = min(self.discarded, bound)
                continue
            self.nodes += 1
            if cols and not ruled and units >= self.p.min_size and self._rows_hold(cols):
                theta = self._bound_support(cols, c0sum, theta)
            if lst:
                kids = self._children(cols, units, counts, c0sum, lst, theta)
                stack.extend(reversed(kids))
            # listings, least bound first, within their share of the time so far
            while self._deferred and self._listing_time < self.listing_share * (time.perf_counter() - self.t0):
                self._next_listing()
        # the listings left, least bound first: the first give the incumbent that rules out the rest
        while status is None and self._deferred:
            if time.perf_counter() > deadline:
                status = "time_limit"
                break
            self._next_listing()
        if status is not None:
            total = self._count(len(self.order), 0)
            self.stats["left"] = sum(self._count(len(e[5]), e[2]) for e in stack) / max(total, 1)
            for e in stack:
                self.discarded = min(self.discarded, e[0])
            for e in self._deferred:
                self.discarded = min(self.discarded, e[0])
        return self._report(status)

    def _beam_start(self) -> None:
        """An incumbent before the tree: the sparse beam search of Liu et al. (2022) on real points
        (:func:`~riskformula.solver.heuristics.real_beam_search`, which keeps the cuts of one
        ``threshold()`` from filling the beam), and on each support it found the whole vectors
        along its real points' ray, calibrated.  Only an incumbent: no bound is read."""
        try:
            beam = real_beam_search(self.p, width=10, expand=10,
                                    stop=self.t0 + 0.25 * self.time_limit)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            return
        for lam in beam:
            cols = tuple(int(j) for j in np.flatnonzero(lam[1:]))
            if not cols or self._units(cols) is None or not self._rows_hold(cols):
                continue
            Wr = ray_vectors(lam[1:][list(cols)], np.array([self.values[j].min() for j in cols]),
                             np.array([self.values[j].max() for j in cols]))
            Wr = Wr[np.all(Wr != 0, axis=1)] if len(Wr) else Wr
            if len(Wr):
                self._calibrate(cols, float(self.c0[list(cols)].sum()), self.terms.cells(cols), Wr, None,
                                -math.inf, bound=False)
        self._screen_beam()

    def _screen_beam(self, width: int = 5, screen: int = 10) -> None:
        """More incumbents before the tree: a beam search over supports with the Cox regression's
        score test — each support of the beam grows by the ``screen`` columns the test ranks best
        (the decrease g_j²/(2H_jj) of the loss from a step in column j alone), each grown support is
        fitted by :func:`cox_regression` (no bounds on its coefficients), the best ``width`` kept,
        and the vectors along each one's ray calibrated.  Only an incumbent: no bound is read."""
        X, d, coef, norm = self.terms.X, self.terms.d, self.terms.coef, self.terms.norm
        beam: list[tuple[float, tuple, dict, int, dict]] = [(0.0, (), {}, 0, {})]
        usable = np.array(self.order, dtype=np.intp)
        for _ in range(int(self.p.max_size)):
            grown: dict[tuple, tuple] = {}
            for _, cols, theta, units, counts in beam:
                beta = np.array([theta.get(j, 0.0) for j in cols])
                eta = X[:, list(cols)] @ beta if cols else np.zeros(self.terms.n)
                e = self.loss.w * np.exp(eta - eta.max())
                D = self.terms.term_sums(e)
                if not np.all(D > 1e-250):
                    continue
                q = e * self.terms.row_weights(D)
                Xu = X[:, usable]
                g = norm * (Xu.T @ (q - d))
                m1 = self.terms.term_sums(e[:, None] * Xu) / D[:, None]
                h = norm * ((Xu * Xu).T @ q - coef @ (m1 * m1))
                gain = np.where(h > 1e-12, g * g / np.where(h > 1e-12, h, 1.0), 0.0)
                ranked = usable[np.argsort(-gain, kind="stable")]
                taken = 0
                for j in ranked:
                    if taken >= screen:
                        break
                    j = int(j)
                    if j in cols:
                        continue
                    ok, u2 = self._allowed(units, counts, j)
                    if not ok:
                        continue
                    taken += 1
                    key = tuple(sorted(cols + (j,)))
                    if key in grown:
                        continue
                    gb, cells = self._regression(key, beta0=np.array([theta.get(c, 0.0) for c in key]))
                    if gb is None:
                        continue
                    c2 = dict(counts)
                    grp = int(self.group_of[j])
                    if grp >= 0:
                        c2[grp] = c2.get(grp, 0) + 1
                    grown[key] = (float(gb.value), key, dict(zip(key, gb.theta.tolist())), u2, c2, gb, cells)
            if not grown:
                break
            best = sorted(grown.values(), key=lambda t: t[0])[:width]
            for val, key, theta, u2, c2, gb, cells in best:
                if u2 >= self.p.min_size and self._rows_hold(key) and gb.theta.size:
                    Wr = ray_vectors(gb.theta, np.array([self.values[j].min() for j in key]),
                                     np.array([self.values[j].max() for j in key]))
                    Wr = Wr[np.all(Wr != 0, axis=1)] if len(Wr) else Wr
                    if len(Wr):
                        c0sum = float(self.c0[list(key)].sum())
                        self._calibrate(key, c0sum, cells, Wr, gb, -math.inf, bound=False)
            beam = [(v, k2, th, u2, c2) for v, k2, th, u2, c2, _, _ in best]

    def _units(self, cols) -> int | None:
        """The size units of the support ``cols``, or None when it breaks the size limit or a
        group's ``max_used``."""
        units, counts = 0, dict[int, int]()
        for j in cols:
            ok, units = self._allowed(units, counts, j)
            if not ok:
                return None
            g = int(self.group_of[j])
            if g >= 0:
                counts[g] = counts.get(g, 0) + 1
        return units if units >= self.p.min_size else None

    def _count(self, L: int, units: int) -> int:
        """How many supports (up to the size limit) a node with ``units`` and a list of L columns has
        below it, groups ignored (the share of the tree left at a limit, in ``stats``)."""
        return sum(math.comb(L, t) for t in range(0, max(int(self.p.max_size) - units, 0) + 1))

    def _next_listing(self) -> None:
        """List the deferred support of least bound (or rule it out by the incumbent)."""
        t = time.perf_counter()
        bound, _, cols, c0sum, gb, cells = heapq.heappop(self._deferred)
        if self._prunes(bound):
            self.discarded = min(self.discarded, bound)
        else:
            self._list_support(cols, c0sum, gb, cells)
        self._listing_time += time.perf_counter() - t

    def _try_start(self, lam: np.ndarray) -> None:
        """A start's points, calibrated over every scale (only an incumbent: no bound is read)."""
        if lam.shape != (self.p.d + 1,):
            return
        w = np.rint(lam[1:]).astype(np.int64)
        cols = tuple(int(j) for j in np.flatnonzero(w))
        if not cols or not all(self.p.coef_lower[j] <= w[j] <= self.p.coef_upper[j] for j in cols):
            return
        N, d, U = self.terms.cells(cols)
        S = (U @ w[list(cols)].astype(float))[None, :]
        F, a, _ = calibrate(N, d, self.terms.coef, self.terms.norm, S, np.array([0.2]))
        obj = float(F[0]) + float(self.c0[list(cols)].sum())
        if obj < self.best and a[0] > 0:
            lam2 = np.zeros(self.p.d + 1)
            lam2[1:] = w
            self.best, self.best_lam, self.best_scale = obj, lam2, float(1.0 / a[0])

    def _report(self, status: str | None) -> SolverReport:
        elapsed = time.perf_counter() - self.t0
        # C1 of every column bounds every score of the class (c0 ≥ 0), so it floors what was ruled out
        lower = min(self.best, max(self.discarded, self.root_bound))
        if self.best_lam is None:
            status = status or "infeasible"
            gap = math.inf
        else:
            gap = 0.0 if lower >= self.best else (self.best - lower) / max(abs(self.best), 1e-12)
            if status is None:
                within = gap <= self.gap_tolerance or self.best - lower <= self.absolute_gap_tolerance
                status = "optimal" if within else "numerical_gap"
        return SolverReport(
            status=status, objective=self.best, lower_bound=lower, gap=gap, time=elapsed, nodes=self.nodes, cuts=0,
            lp_solves=self.regressions, root_bound=self.root_bound if math.isfinite(self.root_bound) else 0.0,
            solver=COX_ENGINE_NAME,
            settings={"time_limit": self.time_limit, "gap_tolerance": self.gap_tolerance,
                      "absolute_gap_tolerance": self.absolute_gap_tolerance, "n_jobs": 1, "engine": "cox_supports",
                      "bound": ("the gap bound of the Cox regression on each support and on each node's columns "
                                "with every later one, and the tangent bound of each calibrated point vector"),
                      "scope": COX_SCOPE, "continuous_scale": True},
            solution=tuple(self.best_lam.tolist()) if self.best_lam is not None else (),
            scale=self.best_scale, listed=self.vectors)
