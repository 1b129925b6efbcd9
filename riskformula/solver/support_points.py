"""Branch and bound over the point vectors of one support, for every score scale > 0.

Inside a support S = (j_1, ..., j_s) the support search (:mod:`riskformula.solver.support_search`)
lists the whole point vectors w (all s points nonzero) and calibrates each.  This module prunes
whole families of them first: a *prefix* fixes the points w_P = (w_1, ..., w_t) of the first t
columns and leaves the others free.

**B7 (prefix relaxation).**  Every completion w = (w_P, w_R) with a score scale a > 0 and an
intercept c gives the cell logits a·(x_P·w_P) + Σ_{j ∈ R} a·w_j·x_j + c = α·s_P + v·x_R + c with
α = a, v = a·w_R real.  So its loss is at least the least loss of the logistic regression on the
support's cells with the columns U = [1, s_P, x_R] (s_P = x_P·w_P) and real coefficients — the
relaxation of Ustun & Rudin's (2019) integer problem to real points, restricted to the direction
of the prefix.  Two prefixes with proportional points (w_P and g·w_P, for any real g ≠ 0) give the
same column space, so the bound is computed once per direction (the prefix divided by its gcd, its
first point made positive).  Refining a prefix shrinks the set of logits, so a child's bound is at
least its parent's: the larger of the two is used.

**Rigorous value (the gap bound of a strongly convex function).**  The regression's minimum is
bounded below at its computed point θ̂ (a damped Newton solution) by F(θ̂) − G²/(2μ), where
G ≥ |∇F(θ̂)| and μ ≤ the least eigenvalue of the Hessian at every point of the ball B(θ̂, R) with
R ≥ 2G/μ: inside the ball F(θ) ≥ F(θ̂) − G·r + μr²/2 ≥ F(θ̂) − G²/(2μ) (Taylor with the integral
remainder), on its sphere F ≥ F(θ̂) − GR + μR²/2 ≥ F(θ̂), and beyond it convexity along the ray from
θ̂ gives F ≥ F(θ̂).  μ is the least eigenvalue of H_R = Σ_c N_c σ'(|u_c·θ̂| + R|u_c|) u_c u_cᵀ (σ' is
even and falls in |z|, so H_R is below the Hessian everywhere in the ball).  The radii of a list
are tried from the smallest up and the first that closes is kept: a larger radius lowers every
weight of H_R, so its μ and its bound are no higher.  When no radius of the list gives μ > 0 with
R·μ ≥ 2G (nearly separable cells), the bound is −∞ and the parent's is kept.

**Separated cells.**  Every cell's term is ≥ 0, so the loss on any subset of the cells is a lower
bound too.  When the free columns alone separate some cells (a regression on [1, x_R] fits cells
holding one class to a loss below 10⁻⁹ of the total: a level only a few rows have, all events or
all non-events), the infimum is not attained and the gap bound cannot close; the bound is then
computed without those cells first (where a column becomes constant, the reduction below drops it),
and on all cells only for the prefixes where that fails; each value is a lower bound, so the larger
is used.  Which cells are dropped, and in which order the two are tried, only changes how strong the
bound is and how long it takes.

**Exact column reduction.**  A column of x_R that is exactly a linear combination of the intercept
and the columns kept before it (on the support's cells) adds nothing to the span of the logits,
so dropping it leaves the regression's minimum unchanged (without it the Hessian is singular and
the gap bound fails: one-hot levels of a factor, complementary items).  The combination is found
by least squares and accepted only after an exact check in integers: coefficients rounded to a
common denominator q ≤ 64, and q·column = Σ (q·coefficient)·kept column verified in int64 on
every cell (entries below 2^20, so no sum overflows).

**Computed designs (real predictors).**  With real (not whole) columns a prefix's scores
s_P = x_P·w_P are computed in floating point, within e_c = 2(t + 3)ε·Σ_j |w_j x_cj| of the exact
ones (:func:`riskformula.solver.cells.scores`), so the design U holds û_c with |u_c − û_c| ≤ e_c
(after the exact power-of-two scaling of :func:`unit_scales`, e_c scaled alike).  The bound is
then the exact design's: the logits' error bound gains e_c·|θ̂| (Cauchy–Schwarz), each row's norm
|û_c| + e_c stands for |u_c| (in the ball's weights and in G's margins), G gains Σ_c N_c e_c (each
residual is at most N_c in size), and λ_min is lowered by Σ_c w_c e_c (2|û_c| + 3e_c) ≥ the
spectral norm of H_R(u) − H_R(û) (u uᵀ − û ûᵀ = û δᵀ + δ ûᵀ + δ δᵀ, Weyl's inequality).  So B7
prunes the point vectors of real-valued supports too (on spambase at size 4 a support's 10⁴
vectors are ruled out by a few dozen prefixes, where calibrating them one by one took 37 s).

Floating point (as :func:`riskformula.solver.cells.ball_bounds` states for B6): F(θ̂) is lowered by
8(C + 8)ε of itself and by Σ_c max(P_c, Q_c)·zerr_c (the computed logits' error zerr_c below), G
raised by 8(C + 8)ε·Σ_c N_c|u_c|, by Σ_c N_c|u_c|·zerr_c/4 and by 4ε of itself, each σ' taken at a
logit raised by its rounding bound (4(p + 2)ε·Σ|u||θ̂|) and lowered by 16ε, and λ_min (LAPACK's
symmetric eigensolver, backward stable) lowered by 16(C + 10p + 10)ε·trace(H_R) (which covers the
sums of H_R in any order: H_R and the gradient come from BLAS products in numpy, and in the
compiled loops for designs of at least 2·10⁵ cells × columns²).  G²/(2μ) is
raised by 8ε of itself, the difference lowered by 4ε of the larger term, and the result, divided
by the total weight W, multiplied by (1 − 4ε).  Counts are integers and U's entries small
integers, so U, P, Q and N are exact.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.special import expit

from . import kernels
from .cells import EPS, scores

__all__ = ["batch_regression", "batch_gap_bound", "canonical", "close_radii", "column_combinations",
           "family_lr_bound", "independent_columns", "prefix_bounds", "real_lr_bound", "whole_combinations", "RADII"]

#: the radii tried for the gap bound (a larger radius gives a smaller μ but allows a larger G)
RADII = (0.5, 2.0, 8.0)
#: B8's fixed radii, beside those near 2G/λ (:func:`close_radii`)
FAMILY_RADII = (2.0,)


def _logits(U: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """U[v] @ θ[v] for every v (batched matrix products; einsum is several times slower here)."""
    return np.matmul(U, theta[:, :, None])[:, :, 0]


def _values(U: np.ndarray, theta: np.ndarray, P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """The regressions' losses at θ (the line search's values; no bound reads them); ``P``, ``Q``
    shared (1 × C) or per design (V × C)."""
    z = _logits(U, theta)
    return ((P + Q) * np.log1p(np.exp(-np.abs(z))) + P * np.maximum(-z, 0.0) + Q * np.maximum(z, 0.0)).sum(axis=1)


def _pick(A: np.ndarray, idx) -> np.ndarray:
    """Rows ``idx`` of per-design counts (V × C), or the shared row (1 × C) as it is."""
    return A if A.shape[0] == 1 else A[idx]


def batch_regression(U: np.ndarray, P: np.ndarray, Q: np.ndarray, iters: int = 30, start: np.ndarray | None = None,
                     levels: np.ndarray | None = None) -> np.ndarray:
    """Real coefficients θ (V × p) of the logistic regressions of the cell counts P, Q (length C,
    or V × C: each design its own) on each design U[v] (V × C × p, the intercept column first):
    damped Newton steps with a small ridge on the Hessian and a halving line search, from the
    intercept-only model.  Only a point: the bound is :func:`batch_gap_bound`'s.  Compiled by
    :mod:`riskformula.solver.kernels` when numba is installed, from ``start`` (V × p) where it
    beats the intercept-only model and with each design's steps stopped once its loss sum is below
    ``levels`` (both only there: the numpy steps start from the intercept-only model and run to
    their own stopping rule; only a point either way)."""
    fast = kernels.regression(U, P, Q, iters, start, levels)
    if fast is not None:
        return fast
    V, C, p = U.shape
    P, Q = np.atleast_2d(P).astype(float), np.atleast_2d(Q).astype(float)
    N = P + Q
    theta = np.zeros((V, p))
    Pt, Qt = P.sum(axis=1), Q.sum(axis=1)
    with np.errstate(divide="ignore"):
        theta[:, 0] = np.where((Pt > 0) & (Qt > 0), np.log(np.where(Pt > 0, Pt, 1.0) / np.where(Qt > 0, Qt, 1.0)), 0.0)
    f = _values(U, theta, P, Q)
    active = np.arange(V)
    eye = np.eye(p)
    for _ in range(iters):
        if not len(active):
            break
        Ua, ta = U[active], theta[active]
        Pa, Qa, Na = _pick(P, active), _pick(Q, active), _pick(N, active)
        z = _logits(Ua, ta)
        sig = expit(z)
        Ut = Ua.transpose(0, 2, 1)
        g = np.matmul(Ut, (Na * sig - Pa)[:, :, None])[:, :, 0]
        w = Na * sig * (1.0 - sig)
        H = np.matmul(Ut, Ua * w[:, :, None])
        H += (1e-10 * (1.0 + np.trace(H, axis1=1, axis2=2)))[:, None, None] * eye
        try:
            d = -np.linalg.solve(H, g[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            break
        d = np.clip(d, -20.0, 20.0)
        fa = f[active]
        step = np.ones(len(active))
        nt, nf = ta.copy(), fa.copy()
        moved = np.zeros(len(active), dtype=bool)
        todo = np.arange(len(active))
        for _ in range(25):
            tt = ta[todo] + step[todo, None] * d[todo]
            tf = _values(Ua[todo], tt, _pick(Pa, todo), _pick(Qa, todo))
            better = tf < fa[todo]
            idx = todo[better]
            nt[idx], nf[idx], moved[idx] = tt[better], tf[better], True
            todo = todo[~better]
            if not len(todo):
                break
            step[todo] *= 0.5
        theta[active], f[active] = nt, nf
        dec = -(g * d).sum(axis=1)
        keep = moved & (dec > 1e-12 * np.maximum(fa, 1.0))
        active = active[keep]
    return theta


def batch_gap_bound(U: np.ndarray, P: np.ndarray, Q: np.ndarray, theta: np.ndarray, W: float,
                    radii=RADII, uerr: np.ndarray | None = None) -> np.ndarray:
    """B7 per design U[v] at the point θ[v] (module docstring): a mean loss, rounded down, below
    the regression's minimum; −∞ where no radius closes the bound.  ``P``, ``Q``: the counts of
    the C rows of every design (length C) or of each (V × C; zero rows pad a design).  ``uerr``
    (V × C): a bound on |u − û| for each row, when the design holds computed values û of exact
    rows u (a prefix's scores of real predictors); the bound is then the exact design's
    (module docstring, *Computed designs*)."""
    V, C, p = U.shape
    fast = kernels.gap_bound(U, P, Q, theta, radii, uerr)
    if fast is not None:
        return np.where(np.isfinite(fast), np.maximum(fast, 0.0) / W * (1 - 4 * EPS), -np.inf)
    P, Q = np.atleast_2d(P).astype(float), np.atleast_2d(Q).astype(float)
    N = P + Q
    ue = np.zeros((V, C)) if uerr is None else np.asarray(uerr, dtype=float).reshape(V, C)
    z = _logits(U, theta)
    tn = np.sqrt((theta * theta).sum(axis=1)) * (1 + 4 * EPS)
    zerr = 4 * (p + 2) * EPS * _logits(np.abs(U), np.abs(theta))
    if uerr is not None:
        zerr = zerr + np.where(ue > 0, ue * tn[:, None] * (1 + 4 * EPS), 0.0)
    f = (P * np.logaddexp(0.0, -z) + Q * np.logaddexp(0.0, z)).sum(axis=1)
    F_lo = f * (1 - 8 * (C + 8) * EPS) - (zerr * np.maximum(P, Q)).sum(axis=1) * (1 + 4 * EPS)
    unorm = np.sqrt((U * U).sum(axis=2)) + ue  # V × C: the exact rows' norms at most
    Ut = U.transpose(0, 2, 1)
    g = np.matmul(Ut, (N * expit(z) - P)[:, :, None])[:, :, 0]
    G = np.sqrt((g * g).sum(axis=1)) * (1 + 4 * EPS) + 8 * (C + 8) * EPS * (unorm * N).sum(axis=1) \
        + 0.25 * (zerr * unorm * N).sum(axis=1) * (1 + 4 * EPS) + (N * ue).sum(axis=1) * (1 + 4 * EPS)
    best = np.full(V, -np.inf)
    # the radii from the smallest up: a larger radius R' lowers every weight of H_R, so μ(R') ≤ μ(R)
    # and its bound F − G²/(2μ) is no higher: the first that closes is the best for its design
    for R in sorted(radii):
        if np.isfinite(best).all():
            break
        t = np.abs(z) + zerr + R * unorm * (1 + 4 * EPS)
        e = np.exp(-t)
        sp = e / (1.0 + e) ** 2 * (1 - 16 * EPS)
        H = np.matmul(Ut, U * (N * sp)[:, :, None])
        try:
            lam = np.linalg.eigvalsh(H)[:, 0]
        except np.linalg.LinAlgError:
            continue
        herr = (N * sp * ue * (2 * unorm + ue)).sum(axis=1)
        mu = lam - 16 * (C + 10 * p + 10) * EPS * np.trace(H, axis1=1, axis2=2) - herr * (1 + 8 * EPS)
        ok = (mu > 0) & (R * mu >= 2 * G)
        if not ok.any():
            continue
        drop = np.where(ok, G * G / (2 * np.where(ok, mu, 1.0)) * (1 + 8 * EPS), np.inf)
        val = F_lo - drop
        val = val - 4 * EPS * np.maximum(np.abs(F_lo), drop)
        best = np.where(np.isfinite(best), best, np.where(ok, val, -np.inf))
    return np.where(np.isfinite(best), np.maximum(best, 0.0) / W * (1 - 4 * EPS), -np.inf)


def unit_scales(Xc: np.ndarray, N: np.ndarray | None = None) -> np.ndarray:
    """Per column, the power of two 2^−k nearest to 1 / (its root mean square over the rows,
    weighted by the cells' counts ``N``) (1 for a column of zeros): scaling by it is exact, the
    columns span the same logits, and the regression's coefficients are of order one even for a
    column whose few large values sit far above the rest.  ``Xc`` (rows × columns) may carry a
    leading axis of designs, ``N`` then one row of counts per design."""
    Xf = np.asarray(Xc, dtype=float)
    w = np.ones(Xf.shape[:-1]) if N is None else np.asarray(N, dtype=float)
    rms = np.sqrt((w[..., None] * Xf ** 2).sum(axis=-2) / np.maximum(w.sum(axis=-1), 1.0)[..., None])
    return np.where(rms > 0, np.exp2(-np.round(np.log2(np.where(rms > 0, rms, 1.0)))), 1.0)


def _separated(z: np.ndarray, P: np.ndarray, Q: np.ndarray, W: float) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's loss at the logits ``z``, and the cells the regression separates: those that
    hold one class and are fitted to a loss below 10⁻⁹ of the total W (every cell's term is ≥ 0,
    so a bound without them is still a bound)."""
    term = P * np.logaddexp(0.0, -z) + Q * np.logaddexp(0.0, z)
    return term, ((P == 0) | (Q == 0)) & (term < 1e-9 * W)


def close_radii(U: np.ndarray, P: np.ndarray, Q: np.ndarray, theta: np.ndarray) -> tuple[float, ...]:
    """Radii for the gap bound at a converged point θ̂ of the regression on the design ``U``
    (rows × columns, intercept first): a few multiples of 2G/λ, G the gradient's norm (with the
    rounding terms the bound adds) and λ the least eigenvalue of the Hessian at θ̂.  With many
    columns the fixed :data:`RADII` fail (a row's |u| is large, so σ' at |u·θ̂| + R|u| collapses),
    while at a small radius the ball's Hessian is nearly the Hessian at θ̂.  Only a proposal:
    :func:`batch_gap_bound` checks R·μ ≥ 2G at each radius itself."""
    C = U.shape[0]
    N = P + Q
    z = U @ theta
    sig = expit(z)
    g = U.T @ (N * sig - P)
    unorm = np.sqrt((U * U).sum(axis=1))
    zerr = 4 * (U.shape[1] + 2) * EPS * (np.abs(U) @ np.abs(theta))
    G = float(np.sqrt(g @ g)) * (1 + 8 * EPS) + 16 * (C + 8) * EPS * float(N @ unorm) + 0.5 * float((N * unorm) @ zerr)
    H = (U * (N * sig * (1 - sig))[:, None]).T @ U
    lam = float(np.linalg.eigvalsh(H)[0])
    if not (lam > 0 and np.isfinite(G)):
        return ()
    r0 = 2 * G / lam
    return (1.25 * r0, 2 * r0, 4 * r0, 16 * r0)


def real_lr_bound(Xc: np.ndarray, P: np.ndarray, Q: np.ndarray, W: float, iters: int = 30,
                  start: np.ndarray | None = None, close: bool = False,
                  retry: bool = True, radii: tuple = RADII, need: float = -np.inf) -> tuple[float, np.ndarray]:
    """B5 for real (not whole) predictors: a lower bound (mean, rounded down; −∞ when it cannot
    close) on the loss of every real coefficient vector and intercept on the support's cells
    ``Xc`` — the gap bound of the module docstring at the regression's Newton point, in place of
    B5's exact dual repair, which needs whole values.  The columns are scaled by powers of two
    (each column's largest |value| brought into [1/2, 1]: exact, and it spans the same logits, so
    the same minimum) so that one list of radii fits columns of any size.  When the bound does
    not close because the regression separates some cells (their infimum is not attained), it
    is computed again without the cells that hold one class and are fitted to a loss below 10⁻⁹
    of the total (every cell's term is ≥ 0).  Returns the bound and the regression's coefficients
    in the original units (intercept first: a start for the children and the listing).  With
    ``close``, the radii of :func:`close_radii` are tried beside ``radii`` (designs with many
    columns); without ``retry``, the bound is not computed again without the separated cells.
    When the regression's loss at its point is already below ``need`` (a mean; its Newton steps
    stop as soon as it is), so is its minimum, and no bound can reach ``need``: −∞ is returned
    without computing one."""
    C, s = Xc.shape
    U = np.column_stack([np.ones(C), Xc.astype(float)])
    e = np.r_[1.0, unit_scales(Xc, P + Q)]
    Us = (U * e[None, :])[None]
    th0 = None
    if start is not None and len(start) == s + 1 and bool(np.all(np.isfinite(start))):
        th0 = (np.asarray(start, dtype=float) / e)[None]
    # the Newton steps stop once the loss is below ``need`` (then no bound can reach it)
    theta = batch_regression(Us, P, Q, iters, th0, None if need == -np.inf else np.array([need * W]))
    if need > -np.inf:
        z = Us[0] @ theta[0]
        if float(P @ np.logaddexp(0.0, -z) + Q @ np.logaddexp(0.0, z)) / W < need:
            return -np.inf, theta[0] * e
    tried = tuple(radii) + (close_radii(Us[0], P, Q, theta[0]) if close else ())
    bound = float(batch_gap_bound(Us, P, Q, theta, W, tried)[0]) if tried else -np.inf
    if retry and not np.isfinite(bound):
        _, sep = _separated(Us[0] @ theta[0], P, Q, W)
        if sep.any() and not sep.all():
            kept = ~sep
            Uk, Pk, Qk = Us[:, kept], P[kept], Q[kept]
            th2 = batch_regression(Uk, Pk, Qk, iters, theta)
            tried = tuple(radii) + (close_radii(Uk[0], Pk, Qk, th2[0]) if close else ())
            bound = float(batch_gap_bound(Uk, Pk, Qk, th2, W, tried)[0]) if tried else -np.inf
    return bound, theta[0] * e


def family_lr_bound(Xc: np.ndarray, P: np.ndarray, Q: np.ndarray, W: float, iters: int = 20,
                    start: np.ndarray | None = None,
                    need: float = -np.inf) -> tuple[float, np.ndarray, bool]:
    """B8 (the support search's family bound): :func:`real_lr_bound` with radii near 2G/λ, for a
    design with many columns.  When it does not close — the regression separates some cells (e.g.
    the rows outside a factor's levels, all of one class, which drive the intercept up and every
    level down), or some columns are exact combinations of others — it is computed again without
    the cells that hold one class and are fitted to a loss below 10⁻⁹ of the total (each cell's
    term is ≥ 0) and without the whole-valued columns that are exact combinations of the others on
    the cells kept (the exact column reduction: the span, so the minimum, is unchanged).  Returns
    the bound, the regression's coefficients on all the columns (intercept first: the Newton
    point the first bound was taken at; ``start``: a start for them, as for
    :func:`real_lr_bound`), and whether they are a fit to start from again (False when the
    regression separated cells or was not bounded).  ``need``: as for :func:`real_lr_bound` (the
    prune level: a family whose regression already fits below it is not bounded, nor tried
    again)."""
    bound, theta = real_lr_bound(Xc, P, Q, W, iters=iters, start=start, close=True, retry=False, radii=FAMILY_RADII,
                                 need=need)
    if np.isfinite(bound) or not Xc.size:
        return bound, theta, True
    term, sep = _separated(theta[0] + Xc @ theta[1:], P, Q, W)
    if float(term.sum()) / W < need:
        return bound, theta, False  # its minimum is below the level: no bound reaches it
    keep = ~sep
    if not keep.any():
        return bound, theta, False
    Xk = Xc[keep]
    combos = whole_combinations(Xk)
    if keep.all() and not combos:
        return bound, theta, False  # nothing to leave out
    cols = [j for j in range(Xc.shape[1]) if j not in combos]
    bound = real_lr_bound(Xk[:, cols], P[keep], Q[keep], W, iters=iters, close=True, retry=False,
                          radii=FAMILY_RADII, need=need)[0]
    return bound, theta, False


def canonical(Wp: np.ndarray) -> np.ndarray:
    """Each prefix (row) divided by the gcd of its points, its first point made positive: prefixes
    with the same row here span the same logits (B7)."""
    g = np.gcd.reduce(np.abs(Wp), axis=1)
    g = np.where(g == 0, 1, g)
    out = Wp // g[:, None]
    return out * np.where(out[:, :1] < 0, -1, 1)


def column_combinations(X: np.ndarray, deadline: float = math.inf) -> dict[int, list[int]]:
    """The exact column reduction (module docstring) of the integer matrix ``X`` (rows × columns):
    for each column that is exactly a rational combination (denominator ≤ 64) of the intercept
    and the columns kept before it, the kept columns whose coefficient is not 0.  A column not in
    the answer is kept.  The combination is proposed by the normal equations of the kept columns
    (their Gram matrix's Cholesky factor, grown one kept column at a time, each new column's
    products with them computed when it is reached), only where the column's residual is nearly
    0, and accepted only after the exact check in integers.  Past ``deadline`` (perf_counter
    seconds; thousands of threshold cuts) the columns not yet reached are kept: a partial answer,
    every combination in it still exact."""
    from scipy.linalg import solve_triangular
    C, r = X.shape
    Xi = X.astype(np.int64)
    Xf = X.astype(float)
    m = min(r, C) + 1  # at most C + 1 columns are independent (the intercept among them)
    Bf = np.zeros((C, m))  # the columns in the factor (intercept first), as floats and as integers
    Bi = np.zeros((C, m), dtype=np.int64)
    Bf[:, 0], Bi[:, 0] = 1.0, 1
    fac: list[int] = []  # the kept columns in the factor (all but nearly dependent ones)
    combos: dict[int, list[int]] = {}
    qs = np.arange(1, 65, dtype=np.int64)
    Lf = np.zeros((m, m))  # the Cholesky factor of the factor columns' Gram matrix
    Lf[0, 0] = math.sqrt(C) if C > 0 else 1.0
    k = 1
    for j in range(r):
        if j % 64 == 0 and j and time.perf_counter() > deadline:
            break
        col = Xf[:, j]
        gjj = float(col @ col)
        L = Lf[:k, :k]
        y = solve_triangular(L, Bf[:, :k].T @ col, lower=True, check_finite=False)
        resid = gjj - float(y @ y)
        if resid <= 1e-6 * max(gjj, 1.0):
            beta = solve_triangular(L.T, y, lower=False, check_finite=False)
            if np.all(np.isfinite(beta)) and np.abs(beta).max(initial=0.0) < 2.0 ** 20:
                # the least denominator q ≤ 64 that brings q·β near whole numbers, then q·column =
                # Σ round(q·β_k)·column_k checked exactly in integers
                scaled = beta[:, None] * qs[None, :].astype(float)
                near = np.flatnonzero(np.abs(scaled - np.rint(scaled)).max(axis=0) < 1e-6)
                if len(near):
                    q = int(qs[near[0]])
                    num = np.rint(scaled[:, near[0]]).astype(np.int64)
                    if np.array_equal(Bi[:, :k] @ num, Xi[:, j] * q):
                        combos[j] = [fac[i] for i in np.flatnonzero(num[1:])]
                        continue
        if resid <= 0 or k >= m:
            continue  # nearly dependent but not exactly: kept, outside the factor
        Lf[k, :k] = y
        Lf[k, k] = math.sqrt(resid)
        Bf[:, k], Bi[:, k] = col, Xi[:, j]
        k += 1
        fac.append(j)
    return combos


def whole_combinations(X: np.ndarray, deadline: float = math.inf) -> dict[int, list[int]]:
    """:func:`column_combinations` among the columns of ``X`` that hold whole numbers below 2^20
    in absolute value (the others, real-valued, are all kept)."""
    whole = np.flatnonzero(np.all(X == np.round(X), axis=0) & (np.abs(X).max(axis=0, initial=0.0) < 2.0 ** 20))
    if not len(whole):
        return {}
    combos = column_combinations(X[:, whole], deadline)
    return {int(whole[j]): [int(whole[k]) for k in ks] for j, ks in combos.items()}


def independent_columns(X: np.ndarray) -> list[int]:
    """The columns of the integer matrix ``X`` (cells × columns) kept by the exact column
    reduction (module docstring)."""
    combos = column_combinations(X)
    return [j for j in range(X.shape[1]) if j not in combos]


def _free_columns(Xc: np.ndarray, t: int, rows: np.ndarray) -> np.ndarray:
    """The free columns x_R (after the first t + 1) on the cells ``rows``, exactly reduced."""
    rest = Xc[rows].astype(np.int64)[:, t + 1:]
    return rest[:, independent_columns(rest)].astype(float)


def _designs(canon: np.ndarray, Xc: np.ndarray, t: int, rows: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """U = [1, s_P, x_R] on the cells ``rows`` for each prefix (row of ``canon``, its first t + 1
    points), with the free columns ``rest`` (:func:`_free_columns` of the same cells)."""
    Xi = Xc[rows].astype(np.int64)
    sP = (canon @ Xi[:, :t + 1].T).astype(float)
    return np.concatenate([np.ones(sP.shape + (1,)), sP[:, :, None],
                           np.broadcast_to(rest, (len(canon),) + rest.shape)], axis=2)


def _real_designs(canon: np.ndarray, Xc: np.ndarray, t: int, rows: np.ndarray,
                  rest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_designs` for real predictors: the prefix's scores s_P computed in floating point,
    with their rounding bounds (:func:`riskformula.solver.cells.scores`) as each row's design error,
    and every column scaled by :func:`unit_scales` (powers of two: exact, the errors scaled alike)."""
    sP, serr = scores(canon, Xc[rows][:, :t + 1], True)
    assert serr is not None
    V = len(canon)
    U = np.concatenate([np.ones(sP.shape + (1,)), sP[:, :, None], np.broadcast_to(rest, (V,) + rest.shape)], axis=2)
    e = unit_scales(U[:, :, 1:])
    U[:, :, 1:] *= e[:, None, :]
    return U, serr * e[:, :1]


def prefix_bounds(canon: np.ndarray, Xc: np.ndarray, P: np.ndarray, Q: np.ndarray, W: float, t: int,
                  chunk: int = 1024, left=None, real: bool = False) -> np.ndarray | None:
    """B7 (a mean, rounded down; −∞ where it cannot close) for each prefix of points ``canon`` on
    the first t + 1 columns of the support's cells ``Xc`` (module docstring), on all cells and
    without the cells the free columns separate, the larger of the two.  When the free columns
    separate some cells, the bound without them is computed first and the one on all cells only
    where it failed (on all cells the regression's infimum is then not attained, so the gap bound
    rarely closes there: 30 Newton steps for nothing).  None when ``left()`` (seconds left,
    checked between chunks) runs out.  ``real``: real (not whole) predictors, whose prefix scores
    are computed (:func:`_real_designs`; no exact column reduction: real columns are kept as they
    are, and a design they make singular only gives −∞)."""
    C = Xc.shape[0]
    every = np.arange(C)
    out = np.full(len(canon), -np.inf)
    todo = np.arange(len(canon))
    kept = _unseparated(Xc, P, Q, W, t)
    for rows in ([kept, every] if kept is not None else [every]):
        Pk, Qk = P[rows], Q[rows]
        rest = Xc[rows][:, t + 1:].astype(float) if real else _free_columns(Xc, t, rows)
        for b0 in range(0, len(todo), chunk):
            if left is not None and left() <= 0:
                return None
            idx = todo[b0:b0 + chunk]
            if real:
                U, ue = _real_designs(canon[idx], Xc, t, rows, rest)
                out[idx] = np.maximum(out[idx], batch_gap_bound(U, Pk, Qk, batch_regression(U, Pk, Qk), W, uerr=ue))
                continue
            U = _designs(canon[idx], Xc, t, rows, rest)
            out[idx] = np.maximum(out[idx], batch_gap_bound(U, Pk, Qk, batch_regression(U, Pk, Qk), W))
        todo = np.flatnonzero(~np.isfinite(out))
        if not len(todo):
            break
    return out


def _unseparated(Xc: np.ndarray, P: np.ndarray, Q: np.ndarray, W: float, t: int) -> np.ndarray | None:
    """The cells that the free columns (after the first t + 1) do not separate — those whose
    regression on [1, x_R] leaves them a loss of at least 10⁻⁹ of the total, or that hold both
    classes — or None when they separate none (or all).  Which cells are dropped only changes how
    strong B7 is (every cell's term is ≥ 0)."""
    C = Xc.shape[0]
    if t + 1 >= Xc.shape[1]:
        return None
    rest = Xc[:, t + 1:].astype(float)
    U0 = np.concatenate([np.ones((1, C, 1)), rest[None, :, :]], axis=2)
    _, sep = _separated(np.einsum("vcp,vp->vc", U0, batch_regression(U0, P, Q, iters=50))[0], P, Q, W)
    if not sep.any() or sep.all():
        return None
    return np.flatnonzero(~sep)
