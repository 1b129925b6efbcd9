"""The numba-compiled loops of :mod:`riskformula.solver.kernels` (imported only when numba is
installed; compiled on first use and cached on disk).  What each may change, and why the bounds
stay valid, is stated there."""

import math

import numpy as np
from numba import njit as _njit

from ._repair import raise_score_sum as _raise_py

njit = _njit(cache=True, nogil=True)


@njit
def loss_newton(s, P, Q, a, c):
    """The loss at (a, c) with its gradient and Hessian in (a, c), in one pass (one exp and
    one log1p per cell)."""
    f = ga = gc = haa = hac = hcc = 0.0
    for i in range(s.shape[0]):
        z = a * s[i] + c
        e = math.exp(-abs(z))
        n = P[i] + Q[i]
        f += n * math.log1p(e) + P[i] * max(-z, 0.0) + Q[i] * max(z, 0.0)
        sig = 1.0 / (1.0 + e) if z >= 0 else e / (1.0 + e)
        r = n * sig - P[i]
        w = n * sig * (1.0 - sig)
        ga += r * s[i]
        gc += r
        haa += w * s[i] * s[i]
        hac += w * s[i]
        hcc += w
    return f, ga, gc, haa, hac, hcc


@njit
def _calibrate_one(sv, Pv, Qv, iters, a_s, c_s, use_start, c0):
    """Damped Newton in (a ≥ 0, c) on one vector's scores ``sv`` with counts ``Pv``, ``Qv``, from
    the intercept-only model or (a_s, c_s) when it is better; returns (a, c) and the loss there."""
    a, c = 0.0, c0
    f, ga, gc, haa, hac, hcc = loss_newton(sv, Pv, Qv, a, c)
    if use_start:
        a1, c1 = max(a_s, 0.0), c_s
        t = loss_newton(sv, Pv, Qv, a1, c1)
        if t[0] < f:
            a, c = a1, c1
            f, ga, gc, haa, hac, hcc = t
    for _ in range(iters):
        det = haa * hcc - hac * hac
        if det > 1e-12 * max(haa * hcc, 1e-300):
            da = -(hcc * ga - hac * gc) / det
            dc = -(haa * gc - hac * ga) / det
        else:
            da = 0.0
            dc = -gc / max(hcc, 1e-300)
        da = min(max(da, -5.0), 5.0)
        dc = min(max(dc, -50.0), 50.0)
        dec = -(ga * da + gc * dc)
        step, moved = 1.0, False
        fa = f
        for _ in range(30):
            ta = max(a + step * da, 0.0)
            tc = c + step * dc
            t = loss_newton(sv, Pv, Qv, ta, tc)
            if t[0] < f:
                a, c, moved = ta, tc, True
                f, ga, gc, haa, hac, hcc = t
                break
            step *= 0.5
        # the Newton decrement bounds what is left to gain: stop below 1e-13 of the loss
        if not (moved and fa - f > 1e-15 * max(fa, 1.0) and dec > 1e-13 * max(fa, 1.0)):
            break
    return a, c, f


@njit
def calibrate(S, P, Q, iters, a_start, c_start, use_start, c0, out_a, out_c, out_f):
    V, C = S.shape
    # cells with equal scores get equal logits: the loss is the same on their groups (P and Q
    # summed), which are fewer, so each vector is calibrated on its groups of equal scores
    lo = S.min() if V and C else 0.0
    span = int(S.max() - lo) + 1 if V and C else 1
    # grouping needs whole scores (the search's are: integer points on integer columns) and bins
    # of a reasonable number; otherwise each vector is calibrated on its cells as they are
    group = span <= (1 << 20)
    for v in range(V):
        for i in range(C):
            if S[v, i] != math.floor(S[v, i]):
                group = False
    hp, hq = np.zeros(span if group else 1), np.zeros(span if group else 1)
    s, gp, gq = np.empty(C), np.empty(C), np.empty(C)
    for v in range(V):
        if not group:
            out_a[v], out_c[v], out_f[v] = _calibrate_one(S[v], P, Q, iters, a_start[v], c_start[v], use_start,
                                                          c0)
            continue
        for i in range(C):
            b = int(S[v, i] - lo)
            hp[b] += P[i]
            hq[b] += Q[i]
        g = 0
        for i in range(C):
            b = int(S[v, i] - lo)
            if hp[b] + hq[b] > 0:
                s[g], gp[g], gq[g] = S[v, i], hp[b], hq[b]
                hp[b] = hq[b] = 0.0
                g += 1
        for i in range(C):  # cells without weight left their bins at 0: clear any left
            hp[int(S[v, i] - lo)] = 0.0
            hq[int(S[v, i] - lo)] = 0.0
        out_a[v], out_c[v], out_f[v] = _calibrate_one(s[:g], gp[:g], gq[:g], iters, a_start[v], c_start[v],
                                                      use_start, c0)


@njit
def grouped(S, P, Q, out_t, out_n):
    V, C = S.shape
    for v in range(V):
        order = np.argsort(S[v], kind="mergesort")
        t, groups = 0.0, 0
        gp = gq = 0.0
        for j in range(C):
            i = order[j]
            gp += P[i]
            gq += Q[i]
            if j == C - 1 or S[v, order[j + 1]] != S[v, i]:
                t += _h(gp, gq)
                groups += 1
                gp = gq = 0.0
        out_t[v], out_n[v] = t, groups


#: B3's exact repair: the Python function of :mod:`riskformula.solver._repair`, compiled as it is
raise_score_sum = njit(_raise_py)


@njit
def _newton_direction(H, ridge, g, free, L, d):
    """d = −(H_ff + ridge·I)⁻¹ g_f on the ``free`` variables and 0 elsewhere, by a Cholesky
    factor (into ``L``) of the lower triangle of H's free block; False when that block is not
    positive definite."""
    p = g.shape[0]
    for j in range(p):
        d[j] = 0.0
        if not free[j]:
            continue
        s = H[j, j] + ridge
        for k in range(j):
            if free[k]:
                s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        L[j, j] = math.sqrt(s)
        for i2 in range(j + 1, p):
            if free[i2]:
                s2 = H[i2, j]
                for k in range(j):
                    if free[k]:
                        s2 -= L[i2, k] * L[j, k]
                L[i2, j] = s2 / L[j, j]
    for j in range(p):
        if free[j]:
            s = -g[j]
            for k in range(j):
                if free[k]:
                    s -= L[j, k] * d[k]
            d[j] = s / L[j, j]
    for j in range(p - 1, -1, -1):
        if free[j]:
            s = d[j]
            for k in range(j + 1, p):
                if free[k]:
                    s -= L[k, j] * d[k]
            d[j] = s / L[j, j]
    return True


#: a design whose nonzero entries are at most this share of cells × columns is fitted by
#: :func:`_sparse_fit` (0/1 items, sparse real columns: B8's families of adult and spambase hold
#: 20–30 %, where its products cost a fifth of the dense ones)
SPARSE_SHARE = 0.5


@njit
def regression(U, PP, QQ, iters, theta, use_start, levels):
    """Damped Newton for the logistic regressions of the cell counts on each design U[v] (the
    point of :func:`riskformula.solver.support_points.batch_regression`: the same steps, ridge,
    clipping, halving line search and stopping rule), into ``theta`` (V × p); with ``use_start``
    from ``theta``'s rows where they beat the intercept-only model; a design's steps stop once its
    loss is below ``levels[v]`` (−inf: never).  The counts ``PP``, ``QQ`` are
    one row shared by every design (1 × C) or one row per design (V × C).  A sparse design (at
    most ``SPARSE_SHARE`` of its entries nonzero) takes the same steps over its nonzero entries
    only (:func:`_sparse_fit`: the same sums in another order)."""
    V, C, p = U.shape
    g = np.empty(p)
    H = np.empty((p, p))
    L = np.empty((p, p))
    d = np.empty(p)
    t = np.empty(p)
    free = np.ones(p, dtype=np.bool_)
    # a large design (B8's families: thousands of cells, dozens of columns) takes its gradient and
    # Hessian from BLAS products (the same sums in another order) instead of the loops below
    big = C * p * p >= 200000
    r_b = np.empty(C if big else 0)
    uw = np.empty((C if big else 0, p))
    ptr = np.empty(C + 1, dtype=np.int64)
    col = np.empty(0, dtype=np.int64)
    val = np.empty(0)
    zs = np.empty((4, C))
    for v in range(V):
        u = U[v]
        th = theta[v]
        P = PP[v] if PP.shape[0] > 1 else PP[0]
        Q = QQ[v] if QQ.shape[0] > 1 else QQ[0]
        nnz = 0
        for i in range(C):
            for j in range(p):
                nnz += u[i, j] != 0.0
        if nnz <= SPARSE_SHARE * C * p:
            if col.shape[0] < nnz:
                col = np.empty(nnz, dtype=np.int64)
                val = np.empty(nnz)
            m = 0
            for i in range(C):
                ptr[i] = m
                for j in range(p):
                    if u[i, j] != 0.0:
                        col[m] = j
                        val[m] = u[i, j]
                        m += 1
            ptr[C] = m
            _sparse_fit(ptr, col, val, P, Q, iters, th, use_start, levels[v], g, H, L, d, t, free, zs)
            continue
        Pt, Qt = P.sum(), Q.sum()
        c0 = math.log(Pt / Qt) if Pt > 0 and Qt > 0 else 0.0
        t[:] = 0.0
        t[0] = c0
        f = _regression_loss(u, P, Q, t)
        if use_start:
            fs = _regression_loss(u, P, Q, th)
            if fs < f:
                f = fs
            else:
                th[:] = t
        else:
            th[:] = t
        for _ in range(iters):
            if f < levels[v]:
                break
            if big:
                zb = np.dot(u, th)
                for i in range(C):
                    n = P[i] + Q[i]
                    r_b[i], w = _residual_weight(n, P[i], zb[i], math.exp(-abs(zb[i])))  # 0, 0: padding
                    for j in range(p):
                        uw[i, j] = w * u[i, j]
                g[:] = np.dot(u.T, r_b)
                H[:, :] = np.dot(uw.T, u)
            else:
                g[:] = 0.0
                H[:, :] = 0.0
                for i in range(C):
                    n = P[i] + Q[i]
                    if n == 0.0:
                        continue  # an empty row (padding): no term
                    z = 0.0
                    for j in range(p):
                        z += u[i, j] * th[j]
                    r, w = _residual_weight(n, P[i], z, math.exp(-abs(z)))
                    for j in range(p):
                        g[j] += r * u[i, j]
                        for k in range(j + 1):
                            H[j, k] += w * u[i, j] * u[i, k]
            if not _newton_step(H, g, free, L, d):
                break
            step, moved, fa = 1.0, False, f
            for _ in range(25):
                for j in range(p):
                    t[j] = th[j] + step * d[j]
                tf = _regression_loss(u, P, Q, t)
                if tf < f:
                    th[:] = t
                    f, moved = tf, True
                    break
                step *= 0.5
            if not _went_on(g, d, moved, fa):
                break


@njit
def _residual_weight(n, p, z, e):
    """A row's gradient residual n·σ(z) − p and Hessian weight n·σ(z)(1 − σ(z)) in the
    regression's steps, with e = exp(−|z|) (σ computed without overflow on either side)."""
    sig = 1.0 / (1.0 + e) if z >= 0 else e / (1.0 + e)
    return n * sig - p, n * sig * (1.0 - sig)


@njit
def _newton_step(H, g, free, L, d):
    """The clipped Newton direction of :func:`regression` into ``d`` (a ridge of 10⁻¹⁰ (1 + tr H)
    on H's lower triangle, each entry within ±20); False when H is not positive definite."""
    tr = 0.0
    for j in range(g.shape[0]):
        tr += H[j, j]
    if not _newton_direction(H, 1e-10 * (1.0 + tr), g, free, L, d):
        return False
    for j in range(g.shape[0]):
        d[j] = min(max(d[j], -20.0), 20.0)
    return True


@njit
def _went_on(g, d, moved, fa):
    """Whether :func:`regression`'s steps go on: the line search moved and the Newton decrement
    −g·d is above 10⁻¹² of the loss (at least 10⁻¹²)."""
    dec = 0.0
    for j in range(g.shape[0]):
        dec -= g[j] * d[j]
    return moved and dec > 1e-12 * max(fa, 1.0)


@njit
def _sparse_loss(ptr, col, val, P, Q, th, z, e):
    """The regression's loss at ``th`` over a design's nonzero entries (row i: ``col``, ``val``
    from ``ptr[i]`` to ``ptr[i + 1]``), with each row's logit into ``z`` and exp(−|z|) into ``e``
    (the next step's weights read them); an empty row (padding) adds no term."""
    f = 0.0
    for i in range(ptr.shape[0] - 1):
        zi = 0.0
        for a in range(ptr[i], ptr[i + 1]):
            zi += val[a] * th[col[a]]
        ei = math.exp(-abs(zi))
        z[i] = zi
        e[i] = ei
        n = P[i] + Q[i]
        if n != 0.0:
            f += n * math.log1p(ei) + P[i] * max(-zi, 0.0) + Q[i] * max(zi, 0.0)
    return f


@njit
def _sparse_fit(ptr, col, val, P, Q, iters, th, use_start, level, g, H, L, d, t, free, zs):
    """:func:`regression`'s steps for one design given by its nonzero entries (:func:`_sparse_loss`):
    the gradient and the Hessian's lower triangle summed over each row's pairs of nonzero entries,
    and each row's logit and exp(−|z|) kept from the line search's accepted point.  ``zs``: four
    work rows (logits and their exps at the current and the trial point)."""
    p = g.shape[0]
    C = ptr.shape[0] - 1
    z, e, zt, et = zs[0], zs[1], zs[2], zs[3]
    Pt, Qt = P.sum(), Q.sum()
    t[:] = 0.0
    t[0] = math.log(Pt / Qt) if Pt > 0 and Qt > 0 else 0.0
    f = _sparse_loss(ptr, col, val, P, Q, t, z, e)
    if use_start:
        fs = _sparse_loss(ptr, col, val, P, Q, th, zt, et)
        if fs < f:
            f = fs
            z, zt, e, et = zt, z, et, e
        else:
            th[:] = t
    else:
        th[:] = t
    for _ in range(iters):
        if f < level:
            break
        g[:] = 0.0
        H[:, :] = 0.0
        for i in range(C):
            n = P[i] + Q[i]
            if n == 0.0:
                continue  # an empty row (padding): no term
            r, w = _residual_weight(n, P[i], z[i], e[i])
            for a in range(ptr[i], ptr[i + 1]):
                ja, va = col[a], val[a]
                g[ja] += r * va
                wa = w * va
                for b in range(ptr[i], a + 1):
                    H[ja, col[b]] += wa * val[b]  # col ascending within a row: the lower triangle
        if not _newton_step(H, g, free, L, d):
            break
        step, moved, fa = 1.0, False, f
        for _ in range(25):
            for j in range(p):
                t[j] = th[j] + step * d[j]
            tf = _sparse_loss(ptr, col, val, P, Q, t, zt, et)
            if tf < f:
                th[:] = t
                f, moved = tf, True
                z, zt, e, et = zt, z, et, e
                break
            step *= 0.5
        if not _went_on(g, d, moved, fa):
            break


@njit
def _regression_loss(u, P, Q, th):
    f = 0.0
    for i in range(u.shape[0]):
        if P[i] + Q[i] == 0.0:
            continue  # an empty row (padding): its term is 0
        z = 0.0
        for j in range(u.shape[1]):
            z += u[i, j] * th[j]
        f += (P[i] + Q[i]) * math.log1p(math.exp(-abs(z))) + P[i] * max(-z, 0.0) + Q[i] * max(z, 0.0)
    return f


@njit
def _h(a, b):
    """h(a, b) with the operations of :func:`riskformula.solver.cells.h_terms`."""
    if a <= 0 or b <= 0:
        return 0.0  # one class (or none): a·log(a/a) = 0 exactly, as the full formula computes it
    n = a + b
    return a * math.log(n / a) + b * math.log(n / b)


EPS = 2.0 ** -52  # numpy's float eps, as riskformula.solver.cells.EPS


@njit
def _h_table(a, b, F):
    """h(a, b) of whole counts from the table F[x] = x·log x (:attr:`riskformula.solver.cells.CellData.xlogx`):
    F[a + b] − F[a] − F[b], 0 exactly for one class (or none), as :func:`_h`; its error is bounded
    by :func:`riskformula.solver.cells.table_margin`, not by a share of the term."""
    if a <= 0 or b <= 0:
        return 0.0
    return F[int(a + b)] - F[int(a)] - F[int(b)]


@njit
def _h_of(a, b, F):
    """h(a, b): from the table ``F`` when it is given (non-empty, :func:`_h_table`), else computed
    with logs (:func:`_h`)."""
    return _h_table(a, b, F) if F.shape[0] > 0 else _h(a, b)


@njit
def lower_sum(t, u, W):
    """:func:`riskformula.solver.cells.lower_sum` of one computed sum ``t`` of ``u`` h terms over
    rows of weight ``W``, with its operations in its order (so the same value bit for bit)."""
    margin = 2.0 * ((u + 8.0) * EPS * t + 2.0 * EPS * W)
    return max(t - margin, 0.0)


@njit
def children_ones(cell, n_cells, cols, ptr, ones, P, Q, Pt, Qt, out_t, out_used):
    """For each 0/1 column of ``cols``: the computed sum of B1's h terms over the cells ``cell``
    refined by it, and the number of nonzero cells (the binary path of
    :meth:`riskformula.solver.cells.CellData.children_saturated`)."""
    P1 = np.zeros(n_cells)
    Q1 = np.zeros(n_cells)
    for k in range(len(cols)):
        j = cols[k]
        for idx in range(ptr[j], ptr[j + 1]):
            r = ones[idx]
            P1[cell[r]] += P[r]
            Q1[cell[r]] += Q[r]
        t, used = 0.0, 0
        for c in range(n_cells):
            p1, q1 = P1[c], Q1[c]
            p0, q0 = Pt[c] - p1, Qt[c] - q1
            t += _h(p1, q1) + _h(p0, q0)
            used += (p1 + q1 > 0) + (p0 + q0 > 0)
            P1[c] = 0.0
            Q1[c] = 0.0
        out_t[k], out_used[k] = t, used


@njit
def grandchildren(GP, GQ, aP, aQ, bP, bQ, Pt, Qt, first, stop, out_t, out_used, own_t, own_used, F):
    """B1's computed h sums and nonzero-cell counts of a node's children (cells refined by column
    a_k) and grandchildren (refined by a_k and b, for b ≥ first[k]) from the cells' counts: GP[c, k, b]
    the events of cell c with a_k = b = 1, aP[c, k] with a_k = 1, bP[c, b] with b = 1, Pt[c] all
    (GQ, aQ, bQ, Qt the non-events), as :meth:`riskformula.solver.cells.CellData.grandchildren_saturated`
    sums them in numpy (called by :func:`grandchildren_rows`).  A grandchild's sum stops
    (with its count so far) once it reaches ``stop``: a partial sum of nonnegative terms is still
    a lower bound, and the caller's margin holds for it.  With a table ``F`` of x·log x (non-empty)
    the h terms are read from it (:func:`_h_of`; the caller subtracts the table's margin too)."""
    C, K, D = GP.shape
    for k in range(K):
        t, used = 0.0, 0
        for c in range(C):
            p1, q1 = aP[c, k], aQ[c, k]
            p0, q0 = Pt[c] - p1, Qt[c] - q1
            t += _h_of(p1, q1, F) + _h_of(p0, q0, F)
            used += (p1 + q1 > 0) + (p0 + q0 > 0)
        own_t[k], own_used[k] = t, used
        for b in range(first[k], D):
            t, used = 0.0, 0
            for c in range(C):
                p11, q11 = GP[c, k, b], GQ[c, k, b]
                p10, q10 = aP[c, k] - p11, aQ[c, k] - q11
                p01, q01 = bP[c, b] - p11, bQ[c, b] - q11
                p00, q00 = Pt[c] - p11 - p10 - p01, Qt[c] - q11 - q10 - q01
                t += _h_of(p11, q11, F) + _h_of(p10, q10, F) + _h_of(p01, q01, F) + _h_of(p00, q00, F)
                used += (p11 + q11 > 0) + (p10 + q10 > 0) + (p01 + q01 > 0) + (p00 + q00 > 0)
                if t >= stop:
                    break
            out_t[k, b], out_used[k, b] = t, used


@njit
def _group_weights(lo, hi, order, cell, idx, P, Q, gP, gQ, touched):
    """The weights of the rows ``order[lo:hi]`` (one group) added into gP, gQ by mixed cell
    (``idx``, −1 for none); the cells reached are listed in ``touched``, their number returned."""
    nt = 0
    for i in range(lo, hi):
        r = order[i]
        c = idx[cell[r]]
        if c < 0:
            continue
        if gP[c] == 0 and gQ[c] == 0:
            touched[nt] = c
            nt += 1
        gP[c] += P[r]
        gQ[c] += Q[r]
    return nt


@njit
def _cell_product(XT, W, ents, ent_r, ent_p, ent_q, rowptr, rowpos, slot, K, D, bP, bQ):
    """One cell's product for :func:`_dense_counts`, in the precision of the zeros ``XT`` (K × m)
    and ``W`` (m × 2D) it fills: XT[a, i] = 1 where entry i's row has column a (a < K), W[i] =
    (p·x, q·x), the column sums added into bP, bQ; returns XT·W in double precision."""
    for i in range(ents.shape[0]):
        e = ents[i]
        r, p, q = ent_r[e], ent_p[e], ent_q[e]
        for u in range(rowptr[r], rowptr[r + 1]):
            a = slot[rowpos[u]]
            if a < 0:
                continue
            if a < K:
                XT[a, i] = 1.0
            W[i, a] = p
            W[i, D + a] = q
            bP[a] += p
            bQ[a] += q
    return (XT @ W).astype(np.float64)


@njit
def _pair_adds(G, single, c, lo, hi, rowpos, slot, K, w):
    """Adds ``w`` to ``single[c, a]`` for each column a at the positions ``rowpos[lo:hi]`` and to
    ``G[c, a, e]`` for each pair of them (a < e, a < K), as :func:`_row_counts` counts them."""
    for u in range(lo, hi):
        a = slot[rowpos[u]]
        if a < 0:
            continue
        single[c, a] += w
        for v in range(u + 1, hi):
            e = slot[rowpos[v]]
            if e < 0:
                continue
            if a < e:
                if a < K:
                    G[c, a, e] += w
            elif e < K:
                G[c, e, a] += w


@njit
def _row_counts(cell, idx, C, order, starts, rowptr, rowpos, slot, K, P, Q, GP, GQ, bP, bQ, by_group):
    """:func:`grandchildren_rows`' counts group by group: the weights of a group's rows in each
    cell, added once to the pairs of the group's first row's 1s (with ``by_group``, the positions
    of group g are ``rowpos[rowptr[g]:rowptr[g + 1]]``); a weight of 0 is not added (adding
    +0.0 changes no sum), so a group of one class in a cell — nearly all of them on nearly
    separable data — costs one add per pair, not two."""
    gP = np.zeros(C)
    gQ = np.zeros(C)
    touched = np.empty(C, dtype=np.int64)
    for g in range(starts.shape[0] - 1):
        nt = _group_weights(starts[g], starts[g + 1], order, cell, idx, P, Q, gP, gQ, touched)
        if nt == 0:
            continue
        r = g if by_group else order[starts[g]]
        lo, hi = rowptr[r], rowptr[r + 1]
        while lo < hi and slot[rowpos[lo]] < 0:
            lo += 1  # a position of no column counts nothing
        for t in range(nt):
            c = touched[t]
            p, q = gP[c], gQ[c]
            gP[c] = 0.0
            gQ[c] = 0.0
            if p != 0.0:
                _pair_adds(GP, bP, c, lo, hi, rowpos, slot, K, p)
            if q != 0.0:
                _pair_adds(GQ, bQ, c, lo, hi, rowpos, slot, K, q)


@njit
def _dense_counts(cell, idx, C, order, starts, rowptr, rowpos, slot, K, D, P, Q, total, GP, GQ, bP, bQ,
                  by_group):
    """:func:`grandchildren_rows`' counts by one product per cell: the entries (a group's first
    row, the group's weights in a cell) of each cell as the rows of X_c, then X_c[:, :K]ᵀ·[p·X_c,
    q·X_c] — in single precision while the total weight is below 2^24 (every partial sum a whole
    number it holds exactly); ``by_group``: as for :func:`_row_counts`."""
    gP = np.zeros(C)
    gQ = np.zeros(C)
    touched = np.empty(C, dtype=np.int64)
    ent_r = np.empty(cell.shape[0], dtype=np.int64)
    ent_c = np.empty(cell.shape[0], dtype=np.int64)
    ent_p = np.empty(cell.shape[0])
    ent_q = np.empty(cell.shape[0])
    ne = 0
    for g in range(starts.shape[0] - 1):
        nt = _group_weights(starts[g], starts[g + 1], order, cell, idx, P, Q, gP, gQ, touched)
        r = g if by_group else order[starts[g]]
        for t in range(nt):
            c = touched[t]
            ent_r[ne], ent_c[ne], ent_p[ne], ent_q[ne] = r, c, gP[c], gQ[c]
            ne += 1
            gP[c] = 0.0
            gQ[c] = 0.0
    cnt = np.zeros(C + 1, dtype=np.int64)
    for e in range(ne):
        cnt[ent_c[e] + 1] += 1
    for c in range(C):
        cnt[c + 1] += cnt[c]
    pos = cnt[:C].copy()
    by_cell = np.empty(ne, dtype=np.int64)
    for e in range(ne):
        by_cell[pos[ent_c[e]]] = e
        pos[ent_c[e]] += 1
    single = total < 2.0 ** 24
    for c in range(C):
        m = cnt[c + 1] - cnt[c]
        ents = by_cell[cnt[c]:cnt[c + 1]]
        if single:
            G = _cell_product(np.zeros((K, m), dtype=np.float32), np.zeros((m, 2 * D), dtype=np.float32), ents,
                              ent_r, ent_p, ent_q, rowptr, rowpos, slot, K, D, bP[c], bQ[c])
        else:
            G = _cell_product(np.zeros((K, m)), np.zeros((m, 2 * D)), ents, ent_r, ent_p, ent_q, rowptr, rowpos,
                              slot, K, D, bP[c], bQ[c])
        GP[c] = G[:, :D]
        GQ[c] = G[:, D:]


@njit
def grandchildren_rows(cell, n_cells, order, starts, rowptr, rowpos, slot, K, D, P, Q, first, stop, dense, by_group,
                       W, scale, out_t, out_used, own_t, own_used, F, extra):
    """:func:`grandchildren` with the counts taken from the rows: ``rowpos[rowptr[r]:rowptr[r + 1]]``
    are the positions of the 0/1 columns equal to 1 in row r; position t is the node's column
    ``slot[t]`` of D (−1: not one of them), its children the first K, each child's children the
    columns after it.  ``order[starts[g]:starts[g + 1]]`` are the rows of group g, rows equal on
    every position of a column: the rows of one group and one cell add their weights once to the
    pairs of their common positions (the same integer sums as row by row); with ``by_group``
    the positions are given per group instead (group g's: ``rowpos[rowptr[g]:rowptr[g + 1]]``,
    those of its rows' common values: the caller may leave out positions no slot names).  Only cells holding
    both classes are counted (a cell of one class adds exactly zero).  The pairs of 1s are
    counted group by group, or by one product per cell (:func:`_dense_counts`) when they are more
    than (groups × K × D) / ``dense``.  Last, each sum becomes its bound: :func:`lower_sum` of
    it (its count of terms, ``W``) times ``scale``, in ``own_t`` and ``out_t`` (+inf in row k
    before ``first[k]``).  With a table ``F`` of x·log x (non-empty; whole counts up to ``W``)
    the h terms are read from it, and ``extra`` (its margin,
    :func:`riskformula.solver.cells.table_margin`; 0 without it) is subtracted too."""
    Pt = np.zeros(n_cells)
    Qt = np.zeros(n_cells)
    for r in range(cell.shape[0]):
        Pt[cell[r]] += P[r]
        Qt[cell[r]] += Q[r]
    idx = np.full(n_cells, -1, dtype=np.int64)
    C = 0
    for c in range(n_cells):
        if Pt[c] > 0 and Qt[c] > 0:
            idx[c] = C
            C += 1
    GP = np.zeros((C, K, D))
    GQ = np.zeros((C, K, D))
    bP = np.zeros((C, D))
    bQ = np.zeros((C, D))
    Pc = np.empty(C)
    Qc = np.empty(C)
    for c in range(n_cells):
        if idx[c] >= 0:
            Pc[idx[c]] = Pt[c]
            Qc[idx[c]] = Qt[c]
    # the pairs of 1s group by group (each group's first row: its rows are equal on every
    # position of a column), or one product per cell, X_cᵀ·[p·X_c, q·X_c] by BLAS, when the rows
    # hold many 1s: whole counts either way, so the same sums in any order (the rows' pairs are
    # estimated from at most 64 groups, spread evenly)
    n_groups = starts.shape[0] - 1
    step = max(1, n_groups // 64)
    pairs_work, seen = 0.0, 0
    for g in range(0, n_groups, step):
        r = g if by_group else order[starts[g]]
        m = 0
        for u in range(rowptr[r], rowptr[r + 1]):
            m += slot[rowpos[u]] >= 0
        pairs_work += 0.5 * m * m
        seen += 1
    if pairs_work * dense > seen * float(K) * D:
        _dense_counts(cell, idx, C, order, starts, rowptr, rowpos, slot, K, D, P, Q, Pt.sum() + Qt.sum(),
                      GP, GQ, bP, bQ, by_group)
    else:
        _row_counts(cell, idx, C, order, starts, rowptr, rowpos, slot, K, P, Q, GP, GQ, bP, bQ, by_group)
    grandchildren(GP, GQ, bP[:, :K], bQ[:, :K], bP, bQ, Pc, Qc, first, stop, out_t, out_used, own_t, own_used, F)
    for k in range(K):
        own_t[k] = max(lower_sum(own_t[k], own_used[k], W) - extra, 0.0) * scale
        for b in range(D):
            out_t[k, b] = max(lower_sum(out_t[k, b], out_used[k, b], W) - extra, 0.0) * scale \
                if b >= first[k] else math.inf


@njit
def pairs(cell, n_cells, others, P, Q, out_t, out_used):
    """For each row k of ``others`` (a partition of the rows): the computed sum of B1's h terms
    over the cells of (``cell``, others[k]) and their number (the dense path of
    :meth:`riskformula.solver.cells.CellData.pair_saturated`, one pass over the rows each)."""
    K, n = others.shape
    span_max = 1
    spans = np.empty(K, dtype=np.int64)
    for k in range(K):
        m = 0
        for r in range(n):
            if others[k, r] > m:
                m = others[k, r]
        spans[k] = m + 1
        if spans[k] > span_max:
            span_max = spans[k]
    size = n_cells * span_max
    Pb = np.zeros(size)
    Qb = np.zeros(size)
    seen = np.zeros(size, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)
    for k in range(K):
        nt = 0
        for r in range(n):
            key = cell[r] * spans[k] + others[k, r]
            if not seen[key]:
                seen[key] = True
                touched[nt] = key
                nt += 1
            Pb[key] += P[r]
            Qb[key] += Q[r]
        t, used = 0.0, 0
        for i in range(nt):
            key = touched[i]
            if Pb[key] + Qb[key] > 0:
                t += _h(Pb[key], Qb[key])
                used += 1
            Pb[key] = 0.0
            Qb[key] = 0.0
            seen[key] = False
        out_t[k], out_used[k] = t, used


@njit
def _box_value(Z, wpos, wneg, x, inv_scale, g, curv):
    """Σ_i w+_i softplus(−s_i) + w−_i softplus(s_i) at s = Z·x / scale (unnormalised); into ``g``
    Σ_i (−w+_i σ(−s_i) + w−_i σ(s_i)) z_i, and into ``curv`` each row's (w+_i + w−_i) σ(s_i) σ(−s_i)
    (its weight in the Hessian at x)."""
    m, p = Z.shape
    f = 0.0
    g[:] = 0.0
    for i in range(m):
        s = 0.0
        for j in range(p):
            s += Z[i, j] * x[j]
        s *= inv_scale
        e = math.exp(-abs(s))
        w = wpos[i] + wneg[i]
        f += w * math.log1p(e) + wpos[i] * max(-s, 0.0) + wneg[i] * max(s, 0.0)
        sig = 1.0 / (1.0 + e) if s >= 0 else e / (1.0 + e)  # σ(s)
        r = -wpos[i] * (1.0 - sig) + wneg[i] * sig
        for j in range(p):
            g[j] += r * Z[i, j]
        curv[i] = w * sig * (1.0 - sig)
    return f


@njit
def box_fit(Z, wpos, wneg, norm, scale, x, lo, hi, steps):
    """The projected Newton steps of :func:`riskformula.solver.heuristics.real_fit` on the
    logistic loss (the same free set, ridge, Armijo backtracking and stopping rule), from ``x``
    (clipped to the box, updated in place); returns (loss, ok) — ok False where the numpy code
    returns None (a singular system or a non-finite point).  One pass over the rows per trial
    point: the Hessian of an accepted point reuses the row curvatures of its evaluation."""
    m, p = Z.shape
    inv = 1.0 / scale
    gs = norm * inv
    hs = norm * inv * inv
    g = np.empty(p)
    gn = np.empty(p)
    curv = np.empty(m)
    curv_n = np.empty(m)
    H = np.empty((p, p))
    L = np.empty((p, p))
    d = np.empty(p)
    xn = np.empty(p)
    free = np.empty(p, dtype=np.bool_)
    for j in range(p):
        x[j] = min(max(x[j], lo[j]), hi[j])
    f = _box_value(Z, wpos, wneg, x, inv, g, curv) * norm
    for j in range(p):
        g[j] *= gs
    for _ in range(steps):
        H[:, :] = 0.0
        for i in range(m):
            w = curv[i] * hs
            for j in range(p):
                for k in range(j + 1):
                    H[j, k] += w * Z[i, j] * Z[i, k]
        nf = 0
        hmax = 0.0
        for j in range(p):
            free[j] = not ((x[j] <= lo[j] and g[j] > 0) or (x[j] >= hi[j] and g[j] < 0))
            if free[j]:
                nf += 1
                for k in range(j + 1):
                    if free[k]:
                        hmax = max(hmax, abs(H[j, k]))
        if nf == 0:
            break
        ridge = 1e-10 * (1.0 + hmax)
        if not _newton_direction(H, ridge, g, free, L, d):
            return f, False
        t, moved = 1.0, False
        fn = f
        while t > 1e-10:
            slope = 0.0
            for j in range(p):
                xn[j] = min(max(x[j] + t * d[j], lo[j]), hi[j])
                slope += g[j] * (xn[j] - x[j])
            fn = _box_value(Z, wpos, wneg, xn, inv, gn, curv_n) * norm
            if fn <= f + 1e-4 * slope:
                moved = True
                break
            t *= 0.5
        if not moved:
            break
        done = f - fn <= 1e-12 * (1.0 + abs(f))
        for j in range(p):
            x[j] = xn[j]
            g[j] = gn[j] * gs
        curv, curv_n = curv_n, curv
        f = fn
        if done:
            break
    for j in range(p):
        if not math.isfinite(x[j]):
            return f, False
    return f, True


@njit
def _move(k, Pi, Qi, plus, minus, n, need):
    """``move`` of :func:`riskformula.solver.cells.lr_bound`: ``need`` grid units (signed) moved
    from the cells ``minus`` to the cells ``plus`` (pairwise, the first n pairs), within the
    boxes; returns the part left unmoved."""
    for t in range(n):
        if need == 0:
            break
        a, b = plus[t], minus[t]
        if need > 0:
            amount = min(need, Qi[a] - k[a], k[b] + Pi[b])
        else:
            amount = -min(-need, k[a] + Pi[a], Qi[b] - k[b])
        if amount != 0:
            k[a] += amount
            k[b] -= amount
            need -= amount
    return need


@njit
def lr_repair(k, Pi, Qi, Xi, num, srt, num_sorted, mult):
    """B5's exact repair of the columns' sums (:func:`riskformula.solver.cells.lr_bound`, packed
    cells, after its intercept repair): the same integer steps as the numpy code — each column's
    sum brought to 0 by moving units between cells that agree on every other column and are one
    apart in that one — on ``k`` in place; returns whether every column succeeded (the caller
    checks the constraints exactly in any case)."""
    C, s = Xi.shape
    plus = np.empty(C, dtype=np.int64)
    minus = np.empty(C, dtype=np.int64)
    for j in range(s):
        rj = 0
        for c in range(C):
            rj += k[c] * Xi[c, j]
        if rj == 0:
            continue
        n = 0
        for a in range(C):
            target = num[a] - mult[j]
            pos = min(np.searchsorted(num_sorted, target), C - 1)
            b = srt[pos]
            if num_sorted[pos] == target and Xi[a, j] - Xi[b, j] == 1:
                plus[n] = a
                minus[n] = b
                n += 1
        if _move(k, Pi, Qi, plus, minus, n, -rj) != 0:
            return False
    return True


@njit
def lr_dual(Xi, P, Q, theta, unit, lo_x, mult):
    """B5's dual (:func:`riskformula.solver.cells.lr_bound`, packed cells) from the regression's
    point ``theta``: μ read from the point and truncated onto the grid 1/unit within the boxes,
    the intercept sum repaired as the numpy code does, the columns' sums by :func:`lr_repair`,
    every constraint then checked exactly in int64 (μ = 0 when one fails, which is B1); returns
    (whether the repaired μ was used, the computed sum of the C terms h(P + μ, Q − μ))."""
    C, s = Xi.shape
    Pi = np.empty(C, dtype=np.int64)
    Qi = np.empty(C, dtype=np.int64)
    k = np.empty(C, dtype=np.int64)
    for c in range(C):
        z = theta[0]
        for j in range(s):
            z += Xi[c, j] * theta[j + 1]
        e = math.exp(-abs(z))
        sig = 1.0 / (1.0 + e) if z >= 0 else e / (1.0 + e)
        Pi[c] = np.int64(round(P[c] * unit))
        Qi[c] = np.int64(round(Q[c] * unit))
        v = math.trunc(((P[c] + Q[c]) * sig - P[c]) * unit)
        v = min(max(v, -P[c] * unit), Q[c] * unit)
        k[c] = np.int64(v)
    # the intercept: spread the excess over the cells with room (the numpy code's order)
    r = k.sum()
    if r != 0:
        key = np.empty(C, dtype=np.int64)
        for c in range(C):
            key[c] = -(k[c] + Pi[c]) if r > 0 else -(Qi[c] - k[c])
        for c in np.argsort(key, kind="mergesort"):
            if r == 0:
                break
            take = min(r, k[c] + Pi[c]) if r > 0 else max(r, -(Qi[c] - k[c]))
            k[c] -= take
            r -= take
    ok = k.sum() == 0
    if ok:
        num = np.zeros(C, dtype=np.int64)
        for c in range(C):
            for j in range(s):
                num[c] += (Xi[c, j] - lo_x[j]) * mult[j]
        srt = np.argsort(num, kind="mergesort")
        ok = lr_repair(k, Pi, Qi, Xi, num, srt, num[srt], mult)
    if ok:  # every constraint, exactly
        ok = k.sum() == 0
        for j in range(s):
            col = 0
            for c in range(C):
                col += k[c] * Xi[c, j]
            ok = ok and col == 0
        for c in range(C):
            ok = ok and k[c] >= -Pi[c] and k[c] <= Qi[c]
    t = 0.0
    for c in range(C):
        mu = k[c] / unit if ok else 0.0
        t += _h(P[c] + mu, Q[c] - mu)
    return ok, t


@njit
def gap_bound(U, PP, QQ, theta, radii, EPS, out, UE):
    """The gap bound of :func:`riskformula.solver.support_points.batch_gap_bound` for each design
    U[v] at θ[v] (loss sums, before the division by W; −inf where no radius closes it), into
    ``out``: the same terms and margins, rows of zero weight skipped (their terms are 0), λ_min
    from LAPACK's symmetric eigensolver as there, the radii tried from the smallest up to the
    first that closes (the best: see there).  A large design takes H_R from a BLAS product, as
    the numpy version does (the margin on λ_min holds for the sums in any order).  ``UE``: each
    row's bound on |u_exact − u| (V × C, or 1 × C of zeros for exact designs), with the margins
    stated there."""
    V, C, p = U.shape
    radii = np.sort(radii)
    big = C * p * p >= 200000
    uw = np.empty((C if big else 0, p))
    g = np.empty(p)
    H = np.empty((p, p))
    zs = np.empty(C)   # per row: its logit, the logit's rounding bound and |u|, for every radius
    zerrs = np.empty(C)
    uns = np.empty(C)
    exact = UE.shape[0] == 1
    for v in range(V):
        u = U[v]
        th = theta[v]
        P = PP[v] if PP.shape[0] > 1 else PP[0]
        Q = QQ[v] if QQ.shape[0] > 1 else QQ[0]
        ue = UE[0] if exact else UE[v]
        tn = 0.0
        for j in range(p):
            tn += th[j] * th[j]
        if not math.isfinite(tn):
            out[v] = -np.inf  # a point that is not finite (a diverged regression): no bound
            continue
        tn = math.sqrt(tn) * (1 + 4 * EPS)
        uerr = 0.0
        f = 0.0
        lip = 0.0
        gerr = 0.0
        nu = 0.0
        g[:] = 0.0
        for i in range(C):
            n = P[i] + Q[i]
            if n == 0.0:
                continue
            z = 0.0
            za = 0.0
            un = 0.0
            for j in range(p):
                z += u[i, j] * th[j]
                za += abs(u[i, j]) * abs(th[j])
                un += u[i, j] * u[i, j]
            # the exact row's norm is at most the computed one's plus its error
            un = math.sqrt(un) + ue[i]
            zerr = 4 * (p + 2) * EPS * za
            if ue[i] > 0.0:  # (an exact row adds nothing, also where θ̂ is not finite)
                zerr += ue[i] * tn * (1 + 4 * EPS)
            zs[i], zerrs[i], uns[i] = z, zerr, un
            e = math.exp(-abs(z))
            f += n * math.log1p(e) + P[i] * max(-z, 0.0) + Q[i] * max(z, 0.0)
            sig = 1.0 / (1.0 + e) if z >= 0 else e / (1.0 + e)
            r = n * sig - P[i]
            for j in range(p):
                g[j] += r * u[i, j]
            lip += zerr * max(P[i], Q[i])
            gerr += zerr * un * n
            nu += un * n
            uerr += n * ue[i]
        F_lo = f * (1 - 8 * (C + 8) * EPS) - lip * (1 + 4 * EPS)
        gn = 0.0
        for j in range(p):
            gn += g[j] * g[j]
        G = math.sqrt(gn) * (1 + 4 * EPS) + 8 * (C + 8) * EPS * nu + 0.25 * gerr * (1 + 4 * EPS) \
            + uerr * (1 + 4 * EPS)
        best = -np.inf
        for R in radii:
            herr = 0.0
            if big:
                for i in range(C):
                    n = P[i] + Q[i]
                    if n == 0.0:
                        # a row of zero weight (padding): no term; its logit was not computed above
                        for j in range(p):
                            uw[i, j] = 0.0
                        continue
                    t = abs(zs[i]) + zerrs[i] + R * uns[i] * (1 + 4 * EPS)
                    e = math.exp(-t)
                    w = n * e / (1.0 + e) ** 2 * (1 - 16 * EPS)
                    for j in range(p):
                        uw[i, j] = w * u[i, j]
                    herr += w * ue[i] * (2 * uns[i] + ue[i])
                H[:, :] = np.dot(uw.T, u)
                tr = 0.0
                for j in range(p):
                    tr += H[j, j]
                    for k in range(j):
                        H[k, j] = H[j, k]
            else:
                H[:, :] = 0.0
                for i in range(C):
                    n = P[i] + Q[i]
                    if n == 0.0:
                        continue
                    t = abs(zs[i]) + zerrs[i] + R * uns[i] * (1 + 4 * EPS)
                    e = math.exp(-t)
                    w = n * e / (1.0 + e) ** 2 * (1 - 16 * EPS)
                    for j in range(p):
                        for k in range(j + 1):
                            H[j, k] += w * u[i, j] * u[i, k]
                    herr += w * ue[i] * (2 * uns[i] + ue[i])
                tr = 0.0
                for j in range(p):
                    tr += H[j, j]
                    for k in range(j):
                        H[k, j] = H[j, k]
            lam = np.linalg.eigvalsh(H)[0]
            mu = lam - 16 * (C + 10 * p + 10) * EPS * tr - herr * (1 + 8 * EPS)
            if mu > 0 and R * mu >= 2 * G:
                drop = G * G / (2 * mu) * (1 + 8 * EPS)
                val = F_lo - drop
                val = val - 4 * EPS * max(abs(F_lo), drop)
                best = val
                break
        out[v] = best


@njit
def _add_rows(rows, ex, U, nzc, nzn, out):
    """Adds Σ e_r and Σ e_r u_r over ``rows`` (their nonzero columns) into out[0] and out[1:]."""
    for r in rows:
        e = ex[r]
        out[0] += e
        for a in range(nzn[r]):
            i = nzc[r, a]
            out[1 + i] += e * U[r, i]


@njit
def _cox_eval(U, nzc, nzn, beta, w, d, dx, g_after, cptr, cidx, eptr, eidx, kg, kf, coef, norm, eta, ex, acc, A, Sg,
              M, wA, wS, wr, g, H):
    """The Cox loss (mean negative log partial likelihood), its gradient and Hessian in β and the
    loss's magnitude on the merged rows U (rows × p, in time order; ``dx`` = Σ_r d_r u_r, the
    events' sums), into g and H; returns (F, mag), F = ∞ where a denominator underflows.  The same
    sums as :func:`riskformula.solver.cox_bounds._evaluate_rows`: each time's risk set and its first
    moments from a running sum over the rows from the last, then its censored rows and its events;
    each term's means by the reciprocal of its denominator; the Hessian as there, Σ_r e_r W_r u_r u_rᵀ
    − Σ_k c_k m_k m_kᵀ, with W_r = Σ_k c_k N[k, r]/(w_r D_k) the row's weight from prefix sums over the
    event times (:meth:`~riskformula.solver.cox_bounds.CoxTerms.row_weights`), each row's products
    over its nonzero columns nzc[r, :nzn[r]] only.  The rounding margins stated there hold for any
    order of the sums and for the reciprocal's one more rounding (10⁻⁹ of the magnitude, far above
    them)."""
    n, p = U.shape
    nq = acc.shape[0]
    top = -np.inf
    for r in range(n):
        s = 0.0
        for i in range(p):
            s += U[r, i] * beta[i]
        eta[r] = s
        if s > top:
            top = s
    if n == 0:
        top = 0.0
    for q in range(nq):
        acc[q] = 0.0
    G = g_after.shape[0]
    gi = G - 1
    while gi >= 0 and g_after[gi] >= n:
        for q in range(nq):
            A[gi, q] = 0.0
        gi -= 1
    for r in range(n - 1, -1, -1):
        e = w[r] * math.exp(eta[r] - top)
        ex[r] = e
        acc[0] += e
        for a in range(nzn[r]):
            i = nzc[r, a]
            acc[1 + i] += e * U[r, i]
        while gi >= 0 and g_after[gi] == r:
            for q in range(nq):
                A[gi, q] = acc[q]
            gi -= 1
    for gi in range(G):
        for q in range(nq):
            Sg[gi, q] = 0.0
        _add_rows(cidx[cptr[gi]:cptr[gi + 1]], ex, U, nzc, nzn, A[gi])
        _add_rows(eidx[eptr[gi]:eptr[gi + 1]], ex, U, nzc, nzn, Sg[gi])
        wA[gi] = 0.0
        wS[gi] = 0.0
    F = 0.0
    mag = 0.0
    for i in range(p):
        g[i] = 0.0
        for j in range(p):
            H[i, j] = 0.0
    ok = True
    K = kg.shape[0]
    for k in range(K):
        gi = kg[k]
        f = kf[k]
        D = A[gi, 0] + f * Sg[gi, 0]
        if not D > 1e-250:
            ok = False
            break
        lD = math.log(D)
        c = coef[k]
        F += c * (lD + top)
        mag += c * (abs(lD) + abs(top))
        # one division per term: the means by its reciprocal (one more rounding each, within the
        # margins of the bounds)
        iD = 1.0 / D
        for i in range(p):
            mk = (A[gi, 1 + i] + f * Sg[gi, 1 + i]) * iD
            M[k, i] = mk
            g[i] += c * mk
        cD = c * iD
        wA[gi] += cD
        wS[gi] += f * cD
    if not ok:  # (the caller reads nothing else of an infinite loss)
        return np.inf, np.inf
    # each row's weight: the terms of the times whose risk set holds it from the rows after them
    # (a prefix over the times, in increasing g_after), its own time's censored and events
    pre = 0.0
    gi = 0
    for r in range(n):
        while gi < G and g_after[gi] <= r:
            pre += wA[gi]
            gi += 1
        wr[r] = pre
    for gi in range(G):
        for m in range(cptr[gi], cptr[gi + 1]):
            wr[cidx[m]] += wA[gi]
        for m in range(eptr[gi], eptr[gi + 1]):
            wr[eidx[m]] += wS[gi]
    for r in range(n):
        qr = ex[r] * wr[r]
        for a in range(nzn[r]):
            i = nzc[r, a]
            qi = qr * U[r, i]
            for b in range(a + 1):
                j = nzc[r, b]
                H[i, j] += qi * U[r, j]
    for k in range(K):
        c = coef[k]
        for i in range(p):
            cm = c * M[k, i]
            for j in range(i + 1):
                H[i, j] -= cm * M[k, j]
    for m in range(eidx.shape[0]):
        r = eidx[m]
        F -= d[r] * eta[r]
        mag += abs(d[r]) * abs(eta[r])
    for i in range(p):
        g[i] = norm * (g[i] - dx[i])
        for j in range(i + 1):
            H[i, j] *= norm
            H[j, i] = H[i, j]
    return norm * F, norm * mag


@njit
def cox_regressions(X, C, theta, levels, iters, w, d, g_after, cptr, cidx, eptr, eidx, kg, kf, coef, norm,
                    out_beta, out_F, out_g, out_H, out_mag):
    """Damped Newton points of the Cox regressions on the columns C[b] of X for each b (from
    θ[b]), with their loss, gradient, Hessian and magnitude: *points* only
    (the caller bounds each by :func:`riskformula.solver.cox_bounds.gap_parts`, which reads no
    optimality).  A regression stops once its loss is below its level (its minimum is then below
    it too), once the caller's bound at its point would reach the level with room to spare, once
    it has converged, or after ``iters`` steps."""
    n = X.shape[0]
    p = C.shape[1]
    nq = 1 + p
    G = g_after.shape[0]
    K = kg.shape[0]
    U = np.empty((n, p))
    nzc = np.empty((n, p), dtype=np.int64)
    nzn = np.empty(n, dtype=np.int64)
    eta = np.empty(n)
    ex = np.empty(n)
    acc = np.empty(nq)
    A = np.empty((G, nq))
    Sg = np.empty((G, nq))
    M = np.empty((K, p))
    wA = np.empty(G)
    wS = np.empty(G)
    wr = np.empty(n)
    dx = np.empty(p)
    beta = np.empty(p)
    nb = np.empty(p)
    g = np.empty(p)
    H = np.empty((p, p))
    g2 = np.empty(p)
    H2 = np.empty((p, p))
    step = np.empty(p)
    L = np.zeros((p, p))
    free = np.ones(p, dtype=np.bool_)
    for b in range(C.shape[0]):
        for r in range(n):
            m = 0
            for i in range(p):
                x = X[r, C[b, i]]
                U[r, i] = x
                if x != 0.0:
                    nzc[r, m] = i
                    m += 1
            nzn[r] = m
        for i in range(p):
            dx[i] = 0.0
        for m in range(eidx.shape[0]):
            r = eidx[m]
            for i in range(p):
                dx[i] += d[r] * U[r, i]
        for i in range(p):
            beta[i] = theta[b, i]
        F, mag = _cox_eval(U, nzc, nzn, beta, w, d, dx, g_after, cptr, cidx, eptr, eidx, kg, kf, coef, norm,
                           eta, ex, acc, A, Sg, M, wA, wS, wr, g, H)
        if F == np.inf:
            for i in range(p):
                beta[i] = 0.0
            F, mag = _cox_eval(U, nzc, nzn, beta, w, d, dx, g_after, cptr, cidx, eptr, eidx, kg, kf, coef, norm,
                               eta, ex, acc, A, Sg, M, wA, wS, wr, g, H)
        xmax2 = 0.0
        for r in range(n):
            s2 = 0.0
            for i in range(p):
                s2 += U[r, i] * U[r, i]
            if s2 > xmax2:
                xmax2 = s2
        for it in range(iters):
            if not F < np.inf or F < levels[b]:
                break
            tr = 0.0
            for i in range(p):
                tr += H[i, i]
            if not _newton_direction(H, 1e-10 * (1.0 + tr), g, free, L, step):
                break
            dec = 0.0
            gg = 0.0
            for i in range(p):
                dec -= g[i] * step[i]
                gg += g[i] * g[i]
            if dec < 1e-15 * max(abs(F), 1.0):
                break
            # the caller's bound (G ≤ |g|/√λ_min, h ≤ max|x|/√λ_min) would reach the level: with
            # G·h ≤ 0.05 its μ is above 0.8, so the bound is above F − 0.625·G²
            # (G² ≥ gᵀH⁻¹g ≥ gᵀ(H + ridge)⁻¹g = dec: where F − 0.7·dec is below the level, so is
            # F − 0.7·G², and the eigenvalue is not needed)
            if F - 0.7 * dec >= levels[b]:
                lam = np.linalg.eigvalsh(H)[0]
                if lam > 0.0:
                    G2 = gg / lam
                    if G2 * xmax2 / lam <= 0.0025 and F - 0.7 * G2 >= levels[b]:
                        break
            t = 1.0
            moved = False
            while t > 1e-6:
                for i in range(p):
                    nb[i] = beta[i] + t * step[i]
                nF, nmag = _cox_eval(U, nzc, nzn, nb, w, d, dx, g_after, cptr, cidx, eptr, eidx, kg, kf, coef, norm,
                                     eta, ex, acc, A, Sg, M, wA, wS, wr, g2, H2)
                if nF <= F - 1e-4 * t * dec + 1e-15 * abs(F):
                    F, mag = nF, nmag
                    for i in range(p):
                        beta[i] = nb[i]
                        g[i] = g2[i]
                        for j in range(p):
                            H[i, j] = H2[i, j]
                    moved = True
                    break
                t *= 0.5
            if not moved:
                break
        out_F[b] = F
        out_mag[b] = mag
        for i in range(p):
            out_beta[b, i] = beta[i]
            out_g[b, i] = g[i]
            for j in range(p):
                out_H[b, i, j] = H[i, j]


from numba import types as _types  # noqa: E402
from numba.extending import intrinsic as _intrinsic  # noqa: E402


@_intrinsic
def _popcount(typingctx, x):
    """The number of bits set in an unsigned 64-bit integer (LLVM's ctpop: one instruction where
    the processor has it)."""
    if not isinstance(x, _types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return x(x), codegen


@njit
def pair_distances(AE, AN, wa, t, counts, out_i, out_j):
    """The distances between each row of ``AE`` and each row of ``AN`` (bit rows in uint64
    words): the bits that differ in the first ``wa`` words plus half those that differ in the rest
    (whole, as each column there differs in two bits or none).  With ``t`` < 0: ``counts[d]`` += 1
    for each pair at distance d; returns 0.  Else: the pairs at distance at most ``t`` in row-major
    order into ``out_i``, ``out_j`` until they are full; returns how many were stored."""
    nE, W = AE.shape
    nN = AN.shape[0]
    cap = out_i.shape[0]
    stored = 0
    for i in range(nE):
        for j in range(nN):
            a = 0
            for w in range(wa):
                a += _popcount(AE[i, w] ^ AN[j, w])
            b = 0
            for w in range(wa, W):
                b += _popcount(AE[i, w] ^ AN[j, w])
            d = a + (b >> 1)
            if t < 0:
                counts[d] += 1
            elif d <= t:
                out_i[stored] = i
                out_j[stored] = j
                stored += 1
                if stored == cap:
                    return stored
    return stored


@njit
def minimal_rows(R, keep):
    """``keep[r]`` is whether bit row r of ``R`` (uint64 words; rows distinct, in order of their
    bit counts) holds no kept row before it: each row against the rows kept so far."""
    n, W = R.shape
    kept = np.empty(n, dtype=np.int64)
    nk = 0
    for r in range(n):
        holds = False
        for q in range(nk):
            other = kept[q]
            inside = True
            for w in range(W):
                if R[r, w] & R[other, w] != R[other, w]:
                    inside = False
                    break
            if inside:
                holds = True
                break
        keep[r] = not holds
        if not holds:
            kept[nk] = r
            nk += 1
