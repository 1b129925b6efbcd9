"""The bounds of the Cox support search (:mod:`riskformula.solver.cox_support`): the partial
likelihood on a column set's cells, the Cox regression's proven minimum, and each point vector's
best scale with a proven bound.

Cells
-----
For a set of columns T, rows equal on T form *cells*; a score that reads only T gives each cell one
linear predictor η_c, and the loss is ``(Σ_k coef_k log Σ_c N_kc e^{η_c} − Σ_c d_c η_c) / W`` over
Efron's (or Breslow's) terms k, with N_kc the weight of cell c in term k's denominator (its rows at
risk then; a tied event counts with Efron's fraction), d_c the cell's event weight and W the total
weight (:class:`CoxTerms`), the loss of :class:`~riskformula.problem.cox.CoxLoss` exactly.  On a
support's few cells this is far cheaper than on the rows; with many columns (a family) the rows
are their own cells and every term's sums come from cumulative sums over the rows in time order.

C1: the regression of a column set
----------------------------------
Every score on columns T, at every scale, has η = X_T β for a real β = a·w, so the least loss of
the Cox regression on T (real coefficients) bounds them all.  It is computed at a damped Newton
point β̂ (:func:`cox_regression`) and made rigorous by the gap bound of a strongly convex function
(:func:`gap_bound`), in the norm |v|_H = √(vᵀHv) of the Hessian H at β̂: with G ≥ the gradient's
dual norm |∇F(β̂)|_{H⁻¹}, and F ≥ μ-strongly convex in that norm on the ball B_H(β̂, R) with
R·μ ≥ 2G, min F ≥ F(β̂) − G²/(2μ) (inside the ball by Taylor's theorem, beyond it by convexity
along the ray from β̂).  μ: on the ball every cell's η moves by at most δ = R·h, h = max_c |x_c|_{H⁻¹},
so every weight w_j e^{η_j} of a denominator moves by a factor within e^{±δ}, every normalized
weight within e^{±2δ}, and each term's Hessian — the covariance of x under those weights,
min_c Σ_j p_j (x_j − c)(x_j − c)ᵀ — is at least e^{−2δ} times its value at β̂ (Efron's terms are
positive combinations too); so μ = e^{−2R·h}, and R is the least fixed point of R = 2G/μ(R), in
closed form by Lambert's W (:func:`least_radii`; none when 4G·h/shrink > 1/e: the bound is then −∞
and not used), kept only where R·μ(R) ≥ 2G holds in floating point.  The H⁻¹-norms are
bounded above through a solve and its residual (:func:`_inverse_form_upper`), or, where only the
bound's value is needed, by |x|/√λ_min(H).

C3: point vectors
-----------------
A vector's scores lie on the ray {a·w : a > 0}; at H-distance ≥ ρ_w from β̂ (the distance to the
ray, :meth:`GapBound.ray_distance`) the loss is at least F(β̂) − G·r + μ_R·r²/2 with r = min(ρ_w, R),
for each radius R with R·μ_R ≥ 2G and r ≥ G/μ_R (the same two arguments as C1:
:meth:`GapBound.far`), so vectors far from the regression's direction are ruled out together.  The
others are calibrated (:func:`calibrate`): the best a > 0 by Newton steps on the convex
one-dimensional loss, with a lower bound from the tangents at two points a₋ < a₊ whose derivatives
have opposite signs (at any x, the lesser of the two tangents is at most the least of their
maximum on [a₋, a₊], and beyond them each tangent alone bounds the loss); where the derivative at
a = 0 is ≥ 0 the bound is the loss at 0; where no such pair is found, the loss of the cells of each
term's top score (:func:`top_bound`: the limit a → ∞ when every event has the top score of its
risk set).

Floating point
--------------
Sums of positive terms and their logarithms carry a relative rounding error of at most (n + 8)ε
for n terms; every value is lowered (every gradient norm raised, every least eigenvalue lowered)
by 10⁻⁹ of the magnitude it was computed from — above that bound for any n below 4·10⁶ rows, the
convention of :meth:`~riskformula.problem.cox.CoxLoss.bounds_over` — the Hessian by 10⁻⁹·(p + 1)·
Σ coef/W·max|x|² in norm (the least eigenvalue by as much more, LAPACK's symmetric eigensolver
being backward stable, and the shrink 1 − that/λ_min applied to H), and distances to rays by
10⁻¹² of |β̂|_H².
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.special import lambertw

from ..problem.cox import CoxLoss
from ..problem.loss import distinct_rows

__all__ = ["CoxTerms", "GapBound", "calibrate", "cox_regression", "gap_bound", "gap_parts", "gap_values", "least_radii",
           "loss_floor", "primitive_vectors", "top_bound", "REL"]

#: relative margin that covers the rounding of every computed sum (see the module's docstring)
REL = 1e-9


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
    P = N * e[None, :] / D[:, None]
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
        #: the bound of a regression on fewer rows and columns (no point of its own for C3)
        self.reduced = False
        self.R0 = self._least_radius()
        if self.R0 is None:
            self.value = -math.inf
        else:
            self.value = self.F_lo - (self.G * self.G / (2.0 * self._mu(self.R0))) * (1 + 8 * REL)

    def _mu(self, R: float) -> float:
        return math.exp(-2.0 * R * self.h) * self.shrink

    def _least_radius(self) -> float | None:
        R = float(least_radii(np.array([self.F_lo]), np.array([self.G]), np.array([self.shrink]),
                              np.array([self.h]))[0])
        return None if math.isnan(R) else R

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


def least_radii(F_lo: np.ndarray, G: np.ndarray, shrink: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The least radius R of each gap bound (module docstring: the least fixed point of
    R = 2G/μ(R), μ(R) = e^{−2R·h}·shrink), NaN where none closes; 0 where G = 0.  With x = 2R·h the
    fixed points solve x·e^{−x} = z = 4G·h/shrink: none for z > 1/e, else the least is
    x = −W₀(−z) (Lambert's W, principal branch; x ≤ 1); with h = 0, R = 2G/shrink.  Each computed R
    (raised by 10⁻¹², then 10⁻⁹, then 10⁻⁶ of itself, x kept ≤ 1, where x·e^{−x}, increasing, grows
    with it) is kept only where R·μ(R) ≥ 2G holds in floating point, the only property the bounds
    read (NaN where none of the three does: the bound is then −∞)."""
    F_lo, G, shrink, h = (np.asarray(x, dtype=float) for x in (F_lo, G, shrink, h))
    out = np.full(F_lo.shape, math.nan)
    ok = (shrink > 0) & np.isfinite(F_lo) & np.isfinite(G) & np.isfinite(h)
    out[ok & (G == 0.0)] = 0.0
    live = np.flatnonzero(ok & (G != 0.0))
    if not live.size:
        return out
    Gl, sl, hl = G[live], shrink[live], h[live]
    flat = hl <= 0.0
    z = np.where(flat, 0.0, 4.0 * Gl * hl / sl)
    closes = flat | (z <= math.exp(-1.0))
    x = np.where(closes, -lambertw(-np.minimum(z, math.exp(-1.0))).real, math.nan)
    cap = np.divide(1.0, 2.0 * hl, out=np.full(len(live), math.inf), where=~flat)  # R at x = 1
    found = np.full(len(live), math.nan)
    with np.errstate(over="ignore", invalid="ignore"):
        R = np.where(flat, 2.0 * Gl / sl, np.minimum(x, 1.0) * cap)
        todo = closes
        for rise in (1e-12, 1e-9, 1e-6):
            cand = np.minimum(R * (1.0 + rise), cap)
            good = todo & (cand * np.exp(-2.0 * cand * hl) * sl >= 2.0 * Gl)
            found[good] = cand[good]
            todo = todo & ~good
            if not np.any(todo):
                break
    out[live] = found
    return out


def gap_values(F_lo: np.ndarray, G: np.ndarray, shrink: np.ndarray, h: np.ndarray) -> np.ndarray:
    """:attr:`GapBound.value` for each entry of a batch (the same radii, :func:`least_radii`):
    −∞ where it does not close."""
    F_lo, G, shrink, h = (np.asarray(x, dtype=float) for x in (F_lo, G, shrink, h))
    R = least_radii(F_lo, G, shrink, h)
    out = np.full(F_lo.shape, -math.inf)
    good = ~np.isnan(R)
    mu = np.exp(-2.0 * R[good] * h[good]) * shrink[good]
    out[good] = F_lo[good] - (G[good] * G[good] / (2.0 * mu)) * (1 + 8 * REL)
    return out


def gap_parts(F: np.ndarray, mag: np.ndarray, g: np.ndarray, H: np.ndarray, U: np.ndarray | None, K: float,
              precise: bool = False, xmax: np.ndarray | None = None):
    """For a batch of Newton points (loss F, its magnitude, gradient g: B × p, Hessian H: B × p × p,
    the cells' values U: B × C × p, K = Σ coef / W): what :class:`GapBound` needs — F lowered by its
    rounding bound, G ≥ the true gradient's H⁻¹-norm, the shrink s (true Hessian ≥ s·H at the point)
    and h ≥ max_c |x_c|_{H⁻¹} — with G = ∞ where H is not safely positive definite.  Without
    ``precise``, h and G take |x|_{H⁻¹} ≤ |x|/√λ_min (no solves: the bound of a converged point
    barely depends on them; then ``xmax``, each design's largest |x_c|, may stand for U); with it,
    the solves of :func:`_inverse_form_upper` (C3 needs them)."""
    B, p = g.shape
    F_lo = F - REL * (mag + np.abs(F)) - 1e-300
    G = np.full(B, math.inf)
    shrink = np.zeros(B)
    h = np.full(B, math.inf)
    if p == 0:
        return F_lo, np.zeros(B), np.ones(B), np.zeros(B)
    if xmax is None:
        assert U is not None
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
        assert U is not None
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
    tangents do not bracket the minimum)).  Each vector's Newton steps stop when its own step is
    below 10⁻¹⁰·a (only the vectors still moving are evaluated), and only the vectors not yet
    bracketed are evaluated at the next, wider pair of tangent points."""
    V = S.shape[0]
    a = np.maximum(np.asarray(a0, dtype=float), 1e-6)
    F0, g0, _, mag0, gerr0, _ = _curve(N, coef, norm, d, S, np.zeros(V))
    F, g, h, mag, gerr, ok = _curve(N, coef, norm, d, S, a)
    damp = np.ones(V)
    big = np.abs(S).max(axis=1)
    # where f'(0) ≥ 0 (with its error) the loss only rises with a (convexity): its least value is
    # the loss at 0, bounded below in floating point further down, and approached at a tiny a,
    # which is taken (attained) where it is no worse than a₀; no Newton steps
    at_zero = g0 - gerr0 >= 0
    if np.any(at_zero):
        z = np.flatnonzero(at_zero)
        tiny = 1e-9 / np.maximum(big[z], 1.0)
        zF, zg, zh, zmag, zgerr, zok = _curve(N, coef, norm, d, S[z], tiny)
        take = zok & (zF <= F[z])
        zt = z[take]
        a[zt], F[zt], g[zt], h[zt], mag[zt], gerr[zt], ok[zt] = (
            tiny[take], zF[take], zg[take], zh[take], zmag[take], zgerr[take], zok[take])
    act = np.flatnonzero(~at_zero)
    for _ in range(iters):
        if not len(act):
            break
        aa, hh, gg = a[act], h[act], g[act]
        step = damp[act] * np.where(hh > 0, gg / np.where(hh > 0, hh, 1.0), -aa)
        na = np.clip(aa - step, aa * 0.1, aa * 10.0)
        held = np.abs(aa * big[act]) > 700  # e^{a·s} would overflow: a stays (and the vector stops)
        na = np.where(held, aa, na)
        nF, ng, nh, nmag, ngerr, nok = _curve(N, coef, norm, d, S[act], na)
        better = nok & (nF <= F[act] + 1e-15 * np.abs(F[act]))
        damp[act] = np.where(better, 1.0, damp[act] * 0.25)
        acc = act[better]
        a[acc], F[acc], g[acc], h[acc] = na[better], nF[better], ng[better], nh[better]
        mag[acc], gerr[acc], ok[acc] = nmag[better], ngerr[better], nok[better]
        act = act[(np.abs(step) > 1e-10 * aa) & ~held]
    # the tangents at a₋ < a* < a₊ bracket the minimum when f'(a₋) < 0 < f'(a₊) (with their errors)
    lower = np.full(V, -math.inf)
    lower[at_zero] = (F0 - REL * (mag0 + np.abs(F0)))[at_zero]
    smax = np.maximum(big, 1.0)
    width = np.maximum(np.maximum(2 * np.abs(g) / np.where(h > 0, h, np.inf), 1e-7 * a), 1e-7 / smax)
    for _ in range(10):
        todo = np.flatnonzero(~at_zero & ~np.isfinite(lower))
        if not len(todo):
            break
        at, wt = a[todo], width[todo]
        lo = np.maximum(at - wt, 0.0)
        hi = at + wt
        Fl, gl, _, ml, el, okl = _curve(N, coef, norm, d, S[todo], lo)
        Fh, gh, _, mh, eh, okh = _curve(N, coef, norm, d, S[todo], hi)
        good = okl & okh & (gh - eh > 0) & ((gl + el < 0) | (lo == 0.0))
        # the tangents t₋(x) = Fl + gl (x − lo), t₊(x) = Fh + gh (x − hi) meet at x*
        with np.errstate(divide="ignore", invalid="ignore"):
            xs = np.clip((Fh - Fl + gl * lo - gh * hi) / (gl - gh), lo, hi)
        # min(t₋, t₊) at any x is at most their maximum's least value on [lo, hi] (one falls, one rises)
        t = np.minimum(Fl + gl * (xs - lo), Fh + gh * (xs - hi))
        t_lo = np.minimum(t, np.minimum(Fl, Fh))
        err = REL * (ml + mh + np.abs(Fl) + np.abs(Fh)) + (el + eh) * (hi - lo) + 4e-16 * np.abs(t)
        lo_bound = np.where(lo == 0.0, np.minimum(t_lo, Fl), t_lo) - err
        lower[todo[good]] = lo_bound[good]
        width[todo] = wt * 8.0
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


def loss_floor(loss: CoxLoss) -> float:
    """A lower bound of the loss at every linear predictor: each of Efron's denominators is at least
    its fraction f_k of the events' own weight S_g = Σ_{D_g} w_i e^{η_i}, and by Jensen's inequality
    W_g log S_g ≥ W_g log W_g + Σ_{D_g} w_i η_i, so the loss is at least
    (Σ_k coef_k log f_k + Σ_g W_g log W_g) / W (0 for Breslow's ties with unit weights and no tied
    events)."""
    val = float(loss.k_coef @ np.log(loss.k_frac)) + float(loss.g_weight @ np.log(loss.g_weight))
    mag = float(loss.k_coef @ np.abs(np.log(loss.k_frac))) + float(loss.g_weight @ np.abs(np.log(loss.g_weight)))
    val *= loss._norm
    return val - REL * (loss._norm * mag + abs(val)) - 1e-300


def primitive_vectors(values: list[np.ndarray]) -> np.ndarray:
    """Every vector with entries from ``values`` (one array of nonzero whole numbers per column)
    whose entries have gcd 1."""
    grids = np.meshgrid(*values, indexing="ij")
    W = np.stack([g.reshape(-1) for g in grids], axis=1).astype(np.int64) if values else np.zeros((1, 0), np.int64)
    if W.shape[1]:
        W = W[np.gcd.reduce(np.abs(W), axis=1) == 1]
    return W
