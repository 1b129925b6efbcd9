"""Compiled loops of the support search, with numba when it is installed (``pip install
riskformula[fast]``).

Profiling the support search on the exact track's problems (breastcancer, k = 10: 37 k point
vectors in 30 s) put ~45 % of the time in the per-vector calibration's Newton steps and line
searches, ~20 % in the score-cell bound B2 and ~15 % in the Python loop of B3's exact repair —
numpy over (vectors × cells) arrays, where each step allocates and the line search re-evaluates
every vector.  These three loops are compiled here, one vector at a time; without numba the
numpy versions in :mod:`riskformula.solver.cells` run instead, with the same results up to
rounding.

What each kernel may and may not change:

* :func:`calibrate` returns a *point* (a scale and an intercept per vector) and its loss: no bound
  reads the point's optimality, B3 holds at any point (:mod:`riskformula.solver.cells`), so a
  different iterate only changes how strong the bound is.
* :func:`grouped_sums` returns, per vector, the computed sum of B2's h terms over its groups of
  equal scores and the number of groups; :func:`riskformula.solver.cells.lower_sum` then
  subtracts the rounding margin as for the numpy sum.  The margin holds for any summation order
  (each of n terms adds at most n·ε of the sum), each term is h(A, B) computed with the same
  operations as :func:`riskformula.solver.cells.h_terms` (one division, one log, one product per
  part; LLVM's log, like numpy's, is accurate to well under the 4 units in the last place the
  margin allows), and numba compiles without ``fastmath``, so IEEE semantics are kept (no
  reassociation, no contraction assumed by the proof).  The group sums of P and Q are sums of
  whole counts below 2^40: exact in any order.
* :func:`raise_score_sum` is B3's repair in int64, the same integer operations as the Python loop
  it replaces (exact; the caller checks the constraints afterwards in any case).
"""

from __future__ import annotations

import math
import os

import numpy as np

__all__ = ["compiled", "calibrate", "grouped_sums", "raise_score_sum"]

_KERNELS: dict | None = None
_TRIED = False


def compiled() -> dict | None:
    """The compiled kernels (name → function), or None without numba or with
    ``RISKFORMULA_NUMBA=0`` in the environment.  Compiled on first use, cached on disk."""
    global _KERNELS, _TRIED
    if _TRIED:
        return _KERNELS
    _TRIED = True
    if os.environ.get("RISKFORMULA_NUMBA", "1") == "0":
        return None
    try:
        import numba
    except ImportError:
        return None
    _KERNELS = _build(numba)
    return _KERNELS


def _build(numba) -> dict:
    njit = numba.njit(cache=True, nogil=True)

    @njit
    def _loss_newton(s, P, Q, a, c):
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
    def _calibrate(S, P, Q, iters, a_start, c_start, use_start, c0, out_a, out_c, out_f):
        V, C = S.shape
        # cells with equal scores get equal logits: the loss is the same on their groups (P and Q
        # summed), which are fewer, so each vector is calibrated on its groups of equal scores
        lo = S.min() if V and C else 0.0
        span = int(S.max() - lo) + 1 if V and C else 1
        hp, hq = np.zeros(span), np.zeros(span)
        s, gp, gq = np.empty(C), np.empty(C), np.empty(C)
        for v in range(V):
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
            sv, Pv, Qv = s[:g], gp[:g], gq[:g]
            a, c = 0.0, c0
            f, ga, gc, haa, hac, hcc = _loss_newton(sv, Pv, Qv, a, c)
            if use_start:
                a1, c1 = max(a_start[v], 0.0), c_start[v]
                t = _loss_newton(sv, Pv, Qv, a1, c1)
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
                    t = _loss_newton(sv, Pv, Qv, ta, tc)
                    if t[0] < f:
                        a, c, moved = ta, tc, True
                        f, ga, gc, haa, hac, hcc = t
                        break
                    step *= 0.5
                # the Newton decrement bounds what is left to gain: stop below 1e-13 of the loss
                if not (moved and fa - f > 1e-15 * max(fa, 1.0) and dec > 1e-13 * max(fa, 1.0)):
                    break
            out_a[v], out_c[v], out_f[v] = a, c, f

    @njit
    def _grouped(S, P, Q, out_t, out_n):
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
                    n = gp + gq
                    ta = gp * math.log(n / gp) if gp > 0 else 0.0
                    tb = gq * math.log(n / gq) if gq > 0 else 0.0
                    t += ta + tb
                    groups += 1
                    gp = gq = 0.0
            out_t[v], out_n[v] = t, groups

    @njit
    def _raise(k, s, Pi, Qi, need):
        k = k.copy()
        by_hi = np.argsort(-s, kind="mergesort")
        by_lo = np.argsort(s, kind="mergesort")
        up = np.empty(len(s), dtype=np.int64)
        down = np.empty(len(s), dtype=np.int64)
        nu = nd = 0
        for c in by_hi:
            if Qi[c] - k[c] > 0:
                up[nu] = c
                nu += 1
        for c in by_lo:
            if k[c] + Pi[c] > 0:
                down[nd] = c
                nd += 1
        i = j = 0
        while need > 0 and i < nu and j < nd:
            a, b = up[i], down[j]
            spread = s[a] - s[b]
            if spread <= 0:
                break
            m = min(Qi[a] - k[a], k[b] + Pi[b], -(-need // spread))
            k[a] += m
            k[b] -= m
            need -= m * spread
            if Qi[a] - k[a] <= 0:
                i += 1
            if k[b] + Pi[b] <= 0:
                j += 1
        return k

    return {"calibrate": _calibrate, "grouped": _grouped, "raise": _raise}


def calibrate(S: np.ndarray, P: np.ndarray, Q: np.ndarray, iters: int, start, c0: float):
    """The compiled calibration of :func:`riskformula.solver.cells.calibrate_fitted` (a ≥ 0, c,
    the loss sum per vector), or None without the kernels."""
    k = compiled()
    if k is None:
        return None
    V = S.shape[0]
    a, c, f = np.empty(V), np.empty(V), np.empty(V)
    if start is None:
        a0, cs, use = np.zeros(V), np.zeros(V), False
    else:
        a0 = np.ascontiguousarray(start[0], dtype=float)
        cs = np.ascontiguousarray(start[1], dtype=float)
        use = True
    k["calibrate"](np.ascontiguousarray(S, dtype=float), np.ascontiguousarray(P, dtype=float),
                   np.ascontiguousarray(Q, dtype=float), int(iters), a0, cs, use, float(c0), a, c, f)
    return a, c, f


def grouped_sums(S: np.ndarray, P: np.ndarray, Q: np.ndarray):
    """B2's computed h sums and group counts per row of ``S`` (module docstring), or None."""
    k = compiled()
    if k is None:
        return None
    V = S.shape[0]
    t, n = np.empty(V), np.empty(V, dtype=np.int64)
    k["grouped"](np.ascontiguousarray(S, dtype=float), np.ascontiguousarray(P, dtype=float),
                 np.ascontiguousarray(Q, dtype=float), t, n)
    return t, n


def raise_score_sum(k_: np.ndarray, s: np.ndarray, Pi: np.ndarray, Qi: np.ndarray, need: int):
    """B3's exact repair (:func:`riskformula.solver.cells._raise_score_sum`) compiled, or None."""
    k = compiled()
    if k is None:
        return None
    return k["raise"](np.ascontiguousarray(k_, dtype=np.int64), np.ascontiguousarray(s, dtype=np.int64),
                      np.ascontiguousarray(Pi, dtype=np.int64), np.ascontiguousarray(Qi, dtype=np.int64),
                      np.int64(need))
