"""Compiled loops of the support search, with numba when it is installed (``pip install
riskformula[fast]``).

Profiling the support search on the exact track's problems put most of its time in loops that
numpy runs over (vectors × cells) or (rows × columns) arrays, allocating at every step: on
breastcancer (k = 10, 63 649 point vectors) ~45 % in the per-vector calibration's Newton steps and
line searches, ~20 % in the score-cell bound B2, ~15 % in the Python loop of B3's exact repair; on
mammo (k = 10) half in the prefix regressions of B7; on mushroom and adult (0/1 columns, deep
trees) in the saturated bounds of each node's children and of their unions with the later
columns; on the small problems (mammo, breastcancer at sizes 3–7) in the beam search's refits of
its supports' real points (about 400 small projected Newton fits, 1–2 ms each in numpy) and in
B5's dual.  These loops are compiled here; without numba the numpy versions in
:mod:`riskformula.solver.cells` and :mod:`riskformula.solver.support_points` run instead, with the
same results up to rounding (the tests compare both, and audit both against brute force).

What each kernel may and may not change:

* :func:`calibrate` (a scale and an intercept per point vector, on its groups of equal scores:
  cells with equal scores get equal logits, so the loss is the same on the groups) and
  :func:`regression` (the Newton point of B5's and B7's regressions), and :func:`box_fit` (the
  real points of the beam search's supports, starts for the incumbent) return *points*: no bound
  reads a point's optimality — B3 and B5 hold at any point, B7 measures its own gradient and
  curvature there — so a different iterate only changes how strong a bound is.
* :func:`grouped_sums` (B2), :func:`children_ones` (B1 of a node's children by 0/1 columns) and
  :func:`pair_sums` (B1 of the unions of a node's cells with the later columns) return the
  computed sum of the h terms and the number of nonzero terms; the caller subtracts the rounding
  margin of :func:`riskformula.solver.cells.lower_sum`, as for the numpy sums.
  :func:`grandchildren_rows` (B1 of a node's children and grandchildren from its rows' pair
  counts, a grandchild's sum possibly stopped early: a partial sum of nonnegative terms, with its
  own count) subtracts that margin itself, with the same operations in the same order
  (:func:`riskformula.solver._compiled.lower_sum`), and scales as the caller asks.  The margin holds
  for any summation order (each of n terms adds at most n·ε of the sum), each term is h(A, B)
  computed with the operations of :func:`riskformula.solver.cells.h_terms` (one division, one log,
  one product per part; LLVM's log, like numpy's, is accurate to well under the 4 units in the
  last place the margin allows) — or read from the table x·log x of
  :attr:`riskformula.solver.cells.CellData.xlogx`, whose own margin
  (:func:`riskformula.solver.cells.table_margin`, proven there) is then subtracted too — and
  numba compiles without ``fastmath`` (no reassociation; a fused multiply-add would only remove
  roundings).  The cell sums of P and Q are sums of whole
  counts below 2^40: exact in any order.
* :func:`raise_score_sum` is B3's repair in int64, the same integer operations as the Python loop
  it replaces (exact; the caller checks the constraints afterwards in any case), and
  :func:`lr_dual` is B5's dual: μ read from the regression's point (a point, as above), repaired
  with the numpy code's integer steps, every constraint then checked exactly in int64 inside the
  kernel (μ = 0, i.e. B1, when one fails), and the computed sum of the h terms returned for the
  caller's rounding margin.

* :func:`cox_regressions` (the Cox support search's batched regressions) returns *points* with
  their loss, gradient, Hessian and the loss's magnitude: the same sums as
  :func:`riskformula.solver.cox_bounds._evaluate_rows` in another order (each time's risk set
  from a running sum over the rows, each row's products over its nonzero columns), which the
  rounding margins of :mod:`riskformula.solver.cox_bounds` cover for any order; the caller
  computes each bound from them (:func:`~riskformula.solver.cox_bounds.gap_parts`), as from
  numpy's points.

* :func:`pair_counts`, :func:`near_pairs` and :func:`minimal_rows` (B9's pairs' sets,
  :func:`riskformula.solver.purity.distinguishing_sets`) are combinatorial: the number of columns
  on which two rows differ, counted from the bits of whole 64-bit words (a two-valued column's
  0/1 code, the others' one-hot codes, two bits per differing column), and whether one set of
  columns holds another, from whole words too.  Exact, so the same counts, pairs and sets as
  the numpy code's products (exact in float32), in the same order.

``RISKFORMULA_NUMBA=0`` in the environment turns the kernels off.  They are compiled on first
use (10–30 s, once per environment; ``riskformula compile`` does it ahead) and cached on disk
beside this module (or in numba's cache folder when that is not writable), so later processes
load them in a fraction of a second.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["compiled", "start_clock", "box_fit", "calibrate", "children_ones", "grandchildren_rows", "grouped_sums",
           "lr_dual", "minimal_rows", "near_pairs", "pair_counts", "pair_sums", "raise_score_sum", "regression",
           "cox_regressions", "cox_arrays"]

_KERNELS: dict | None = None
_TRIED = False
#: seconds of :func:`warm_up` above which the first fit of a process says that it compiled
SLOW_WARM_UP = 5.0


def _load() -> dict | None:
    """The compiled kernels (name → function), or None without numba or with
    ``RISKFORMULA_NUMBA=0`` in the environment (imported once per process)."""
    global _KERNELS, _TRIED
    if _TRIED:
        return _KERNELS
    _TRIED = True
    if os.environ.get("RISKFORMULA_NUMBA", "1") == "0":
        return None
    try:
        from . import _compiled
    except ImportError:
        return None
    _KERNELS = {"calibrate": _compiled.calibrate, "grouped": _compiled.grouped, "raise": _compiled.raise_score_sum,
                "regression": _compiled.regression, "children_ones": _compiled.children_ones,
                "pairs": _compiled.pairs, "box_fit": _compiled.box_fit,
                "grandchildren_rows": _compiled.grandchildren_rows,
                "lr_dual": _compiled.lr_dual, "gap_bound": _compiled.gap_bound,
                "cox_regressions": _compiled.cox_regressions, "pair_distances": _compiled.pair_distances,
                "minimal_rows": _compiled.minimal_rows}
    return _KERNELS


def compiled() -> dict | None:
    """The compiled kernels (name → function), or None without numba or with
    ``RISKFORMULA_NUMBA=0`` in the environment.  The first call of a process readies them all at
    once with the search's argument types (:func:`warm_up`): loaded from numba's disk cache in a
    fraction of a second, or compiled (10–30 s, once per environment), which it then says in a
    warning.  The fits call it through :func:`start_clock`, so that compiling does not take the
    search's time limit (loading does)."""
    first = not _TRIED
    kernels = _load()
    if first and kernels is not None:
        seconds = warm_up()
        if seconds is not None and seconds > SLOW_WARM_UP:
            import warnings
            from ..errors import RiskFormulaWarning
            warnings.warn(f"riskformula compiled the certifying search's loops with numba ({seconds:.0f} s, once "
                          "per environment; cached on disk for later fits) before this fit's time limit started: "
                          "run `riskformula compile` after installing to do it ahead.",
                          RiskFormulaWarning, stacklevel=2)
    return kernels


def start_clock() -> float:
    """Ready the compiled kernels (:func:`compiled`) and return when a fit's time limit starts
    (``time.perf_counter()``): before the readying, which the limit then covers (loading the loops
    from numba's disk cache takes about a second on a process's first fit), unless it took longer
    than ``SLOW_WARM_UP`` seconds — compiling them, once per environment, which :func:`compiled`
    announces — and then after it."""
    import time
    before = time.perf_counter()
    compiled()
    after = time.perf_counter()
    return after if after - before > SLOW_WARM_UP else before


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
    """B3's exact repair (:func:`riskformula.solver._repair.raise_score_sum`) compiled, or None."""
    k = compiled()
    if k is None:
        return None
    return k["raise"](np.ascontiguousarray(k_, dtype=np.int64), np.ascontiguousarray(s, dtype=np.int64),
                      np.ascontiguousarray(Pi, dtype=np.int64), np.ascontiguousarray(Qi, dtype=np.int64),
                      np.int64(need))


def regression(U: np.ndarray, P: np.ndarray, Q: np.ndarray, iters: int, start: np.ndarray | None = None,
               levels: np.ndarray | None = None):
    """The compiled point of :func:`riskformula.solver.support_points.batch_regression` (and of
    :func:`riskformula.solver.cells.lr_bound`'s regression), from ``start`` (V × p) where it beats
    the intercept-only model, or None without the kernels.  ``P``, ``Q``: the counts of the C rows
    of every design (length C) or of each design (V × C).  ``levels`` (loss sums, one per design):
    a design's steps stop once its loss is below its level (its minimum, so any bound, is then
    below it too: a speed rule for callers that only ask whether the bound reaches the level)."""
    k = compiled()
    if k is None:
        return None
    theta = np.empty((U.shape[0], U.shape[2])) if start is None else np.array(start, dtype=float)
    P2 = np.ascontiguousarray(np.atleast_2d(P), dtype=float)
    Q2 = np.ascontiguousarray(np.atleast_2d(Q), dtype=float)
    lv = np.full(U.shape[0], -np.inf) if levels is None else np.ascontiguousarray(levels, dtype=float)
    k["regression"](np.ascontiguousarray(U, dtype=float), P2, Q2, int(iters), theta, start is not None, lv)
    return theta


def gap_bound(U: np.ndarray, P: np.ndarray, Q: np.ndarray, theta: np.ndarray, radii,
              uerr: np.ndarray | None = None) -> np.ndarray | None:
    """The gap bounds of :func:`riskformula.solver.support_points.batch_gap_bound` as loss sums
    (−inf where none closes), compiled, or None without the kernels.  ``uerr``: each row's bound
    on the distance of the computed design's row from the exact one (V × C; None: exact)."""
    k = compiled()
    if k is None:
        return None
    out = np.empty(U.shape[0])
    ue = np.zeros((1, U.shape[1])) if uerr is None else np.ascontiguousarray(uerr, dtype=float).reshape(U.shape[:2])
    k["gap_bound"](np.ascontiguousarray(U, dtype=float), np.ascontiguousarray(np.atleast_2d(P), dtype=float),
                   np.ascontiguousarray(np.atleast_2d(Q), dtype=float), np.ascontiguousarray(theta, dtype=float),
                   np.asarray(radii, dtype=float), float(np.finfo(float).eps), out, ue)
    return out


def children_ones(cell: np.ndarray, n_cells: int, cols, ptr: np.ndarray, ones: np.ndarray, P: np.ndarray,
                  Q: np.ndarray, Pt: np.ndarray, Qt: np.ndarray):
    """B1's computed h sums and nonzero-cell counts of the cells refined by each 0/1 column of
    ``cols`` (module docstring), or None without the kernels."""
    k = compiled()
    if k is None:
        return None
    t, used = np.empty(len(cols)), np.empty(len(cols), dtype=np.int64)
    k["children_ones"](np.ascontiguousarray(cell, dtype=np.int64), int(n_cells), np.asarray(cols, dtype=np.int64),
                       np.ascontiguousarray(ptr, dtype=np.int64), np.ascontiguousarray(ones, dtype=np.int64),
                       P, Q, np.ascontiguousarray(Pt, dtype=float), np.ascontiguousarray(Qt, dtype=float), t, used)
    return t, used


def pair_sums(cell: np.ndarray, n_cells: int, others: list, P: np.ndarray, Q: np.ndarray):
    """B1's computed h sums and cell counts of (``cell``, others[k]) for each k (module
    docstring), or None without the kernels."""
    k = compiled()
    if k is None:
        return None
    t, used = np.empty(len(others)), np.empty(len(others), dtype=np.int64)
    k["pairs"](np.ascontiguousarray(cell, dtype=np.int64), int(n_cells), np.stack(others).astype(np.int64, copy=False),
               P, Q, t, used)
    return t, used


def _pair_chunks(E: np.ndarray, N: np.ndarray, deadline: float | None):
    """The event rows ``E`` in chunks of about 5·10⁶ pairs with the non-event rows ``N`` (their
    first row and the chunk); stops with None past ``deadline`` (a ``time.perf_counter()`` value)."""
    import time
    step = max(1, int(5e6 // max(len(N), 1)))
    for s in range(0, len(E), step):
        if deadline is not None and time.perf_counter() > deadline:
            yield None
            return
        yield s, E[s:s + step]


def pair_counts(E: np.ndarray, N: np.ndarray, wa: int, k: int, deadline: float | None = None) -> np.ndarray | None:
    """For B9's pairs' sets (:func:`riskformula.solver.purity.distinguishing_sets`), compiled: how
    many pairs of a row of ``E`` and a row of ``N`` differ on each number 0..k of columns.  The
    rows are bit rows (uint64 words: a two-valued column's 0/1 code in the first ``wa`` words, the
    one-hot code of every other column in the rest, which differs in two bits or none).  None
    without the kernels, or past ``deadline`` (read between chunks of about 5·10⁶ pairs)."""
    kern = compiled()
    if kern is None:
        return None
    E, N = np.ascontiguousarray(E, dtype=np.uint64), np.ascontiguousarray(N, dtype=np.uint64)
    counts = np.zeros(k + 1, dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    for chunk in _pair_chunks(E, N, deadline):
        if chunk is None:
            return None
        kern["pair_distances"](chunk[1], N, int(wa), -1, counts, none, none)
    return counts


def near_pairs(E: np.ndarray, N: np.ndarray, wa: int, t: int, cap: int, deadline: float | None = None):
    """The pairs of :func:`pair_counts`'s rows that differ on at most ``t`` columns, in row-major
    order, the first ``cap`` of them, as indices into E and N; None without the kernels, or past
    ``deadline``."""
    kern = compiled()
    if kern is None:
        return None
    E, N = np.ascontiguousarray(E, dtype=np.uint64), np.ascontiguousarray(N, dtype=np.uint64)
    out_i, out_j = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    stored = 0
    for chunk in _pair_chunks(E, N, deadline):
        if chunk is None:
            return None
        if stored == cap:
            break
        s, rows = chunk
        got = kern["pair_distances"](rows, N, int(wa), int(t), none, out_i[stored:], out_j[stored:])
        out_i[stored:stored + got] += s
        stored += got
    return out_i[:stored], out_j[:stored]


def minimal_rows(rows: np.ndarray) -> np.ndarray | None:
    """Which of the distinct bit rows ``rows`` (bytes, in order of their bit counts) hold no row
    kept before them (the minimal sets of :func:`riskformula.solver.purity.distinguishing_sets`),
    compiled; None without the kernels.  Exact: whole words compared."""
    kern = compiled()
    if kern is None:
        return None
    packed = np.pad(np.asarray(rows, dtype=np.uint8), ((0, 0), (0, (-rows.shape[1]) % 8)))
    keep = np.empty(len(rows), dtype=np.bool_)
    kern["minimal_rows"](np.ascontiguousarray(packed).view(np.uint64), keep)
    return keep


#: :func:`grandchildren_rows` counts the rows' pairs of 1s by one BLAS product per cell when they
#: are more than (groups × K × D) / DENSE_PAIRS: a multiply-add in the product costs about that
#: fraction of a scattered add (anes96's 103 threshold cuts: 6.6 → 3.6 ms per count in a 60 s fit)
DENSE_PAIRS = 8.0


def grandchildren_rows(cell: np.ndarray, n_cells: int, rowptr: np.ndarray, rowpos: np.ndarray, slot: np.ndarray,
                       K: int, D: int, P: np.ndarray, Q: np.ndarray, W: float, scale: float, stop: float = np.inf,
                       groups: tuple | None = None, by_group: bool = False, xlogx: np.ndarray | None = None,
                       margin: float = 0.0):
    """B1's bounds of a node's children and grandchildren (child k's from column k + 1 on), the
    counts taken from each row's positions of 1s (position t is the node's column ``slot[t]``, −1
    for none), rows equal on the node's columns once per cell when ``groups`` = (order, starts)
    lists them (each row its own group otherwise; with ``by_group``, ``rowptr`` and ``rowpos``
    give each group's positions, in group order)
    (:func:`riskformula.solver._compiled.grandchildren_rows`): each computed sum with the margin
    of :func:`riskformula.solver.cells.lower_sum` subtracted (the same operations, for rows of
    weight ``W``) and times ``scale`` — (the children's K bounds, the grandchildren's K × D, +inf
    where a column is not after the child's), a grandchild's sum stopped once it reaches
    ``stop``; or None without the kernels.  ``xlogx``: the table x·log x of whole counts up to
    ``W`` (:attr:`riskformula.solver.cells.CellData.xlogx`), from which the h terms are then read,
    with its own ``margin`` subtracted too (:func:`riskformula.solver.cells.table_margin`); None
    computes them with logs."""
    k = compiled()
    if k is None:
        return None
    if groups is None:
        groups = (np.arange(len(cell), dtype=np.int64), np.arange(len(cell) + 1, dtype=np.int64))
    t, used = np.zeros((K, D)), np.zeros((K, D), dtype=np.int64)
    ot, ou = np.empty(K), np.empty(K, dtype=np.int64)
    k["grandchildren_rows"](np.ascontiguousarray(cell, dtype=np.int64), int(n_cells),
                            np.ascontiguousarray(groups[0], dtype=np.int64),
                            np.ascontiguousarray(groups[1], dtype=np.int64), rowptr, rowpos,
                            np.ascontiguousarray(slot, dtype=np.int64), int(K),
                            int(D), P, Q, np.arange(1, K + 1, dtype=np.int64), float(stop), float(DENSE_PAIRS),
                            bool(by_group and groups is not None), float(W), float(scale), t, used,
                            ot, ou, np.empty(0) if xlogx is None else xlogx,
                            float(margin) if xlogx is not None else 0.0)
    return ot, t


def lr_dual(Xi: np.ndarray, P: np.ndarray, Q: np.ndarray, theta: np.ndarray, unit: float, lo_x: np.ndarray,
            mult: np.ndarray):
    """B5's dual from the regression's point, compiled (:func:`riskformula.solver._compiled.lr_dual`):
    (whether the repaired μ was used, the computed sum of its C h terms), or None without the
    kernels."""
    k = compiled()
    if k is None:
        return None
    i64 = np.int64
    ok, t = k["lr_dual"](np.ascontiguousarray(Xi, dtype=i64), np.ascontiguousarray(P, dtype=float),
                         np.ascontiguousarray(Q, dtype=float), np.ascontiguousarray(theta, dtype=float), float(unit),
                         np.ascontiguousarray(lo_x, dtype=i64), np.ascontiguousarray(mult, dtype=i64))
    return bool(ok), float(t)


def box_fit(Z: np.ndarray, w_pos: np.ndarray, w_neg: np.ndarray, norm: float, scale: float, x: np.ndarray,
            lower: np.ndarray, upper: np.ndarray, steps: int):
    """The compiled projected Newton steps of :func:`riskformula.solver.heuristics.real_fit` on a
    logistic loss (rows ``Z`` on the support, their weights, the normalisation 1/W and the scale):
    (points, loss), (None, inf) where the numpy code fails, or None without the kernels."""
    k = compiled()
    if k is None:
        return None
    x = np.array(x, dtype=float)
    f, ok = k["box_fit"](np.ascontiguousarray(Z, dtype=float), np.ascontiguousarray(w_pos, dtype=float),
                         np.ascontiguousarray(w_neg, dtype=float), float(norm), float(scale), x,
                         np.ascontiguousarray(lower, dtype=float), np.ascontiguousarray(upper, dtype=float),
                         int(steps))
    return (x, float(f)) if ok else (None, float("inf"))


def cox_arrays(loss) -> tuple:
    """The arrays of a :class:`~riskformula.problem.cox.CoxLoss` that :func:`cox_regressions` reads:
    the merged rows' columns, weights and event weights, each event time's first row after it, its
    censored rows and its events (as index pointers), Efron's (or Breslow's) terms' times,
    fractions and coefficients, and 1/W."""
    cens, ev = loss._sum_censored.tocsr(), loss._sum_events.tocsr()
    i64 = np.int64
    return (np.ascontiguousarray(loss.Z[:, 1:], dtype=float), np.ascontiguousarray(loss.w, dtype=float),
            np.ascontiguousarray(loss.event_weight, dtype=float), np.asarray(loss.g_after, dtype=i64),
            np.asarray(cens.indptr, dtype=i64), np.asarray(cens.indices, dtype=i64),
            np.asarray(ev.indptr, dtype=i64), np.asarray(ev.indices, dtype=i64),
            np.asarray(loss.k_group, dtype=i64), np.asarray(loss.k_frac, dtype=float),
            np.asarray(loss.k_coef, dtype=float), float(loss._norm))


def cox_regressions(arrays: tuple, C: np.ndarray, theta: np.ndarray, levels: np.ndarray, iters: int):
    """The compiled Newton points of the Cox regressions on the columns C[b] (B × p) from θ[b]
    (:func:`riskformula.solver._compiled.cox_regressions`; ``arrays`` from :func:`cox_arrays`): (β,
    F, g, H, mag) per regression, or None without the kernels."""
    k = compiled()
    if k is None:
        return None
    B, p = C.shape
    beta, F, g = np.empty((B, p)), np.empty(B), np.empty((B, p))
    H, mag = np.empty((B, p, p)), np.empty(B)
    X, w, d, g_after, cptr, cidx, eptr, eidx, kg, kf, coef, norm = arrays
    k["cox_regressions"](X, np.ascontiguousarray(C, dtype=np.int64), np.ascontiguousarray(theta, dtype=float),
                         np.ascontiguousarray(levels, dtype=float), int(iters), w, d, g_after, cptr, cidx, eptr, eidx,
                         kg, kf, coef, norm, beta, F, g, H, mag)
    return beta, F, g, H, mag


def warm_up() -> float | None:
    """Compile every kernel now (or load it from numba's disk cache) with the argument types the
    search uses, so that the first fit after installing the ``fast`` extra does not spend its time
    limit compiling; returns the seconds it took, or None without numba.  From a shell:
    ``riskformula compile``."""
    import time
    if _load() is None:
        return None
    t0 = time.perf_counter()
    S = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, -1.0]])
    P, Q = np.array([1.0, 2.0, 0.0]), np.array([0.0, 1.0, 3.0])
    calibrate(S, P, Q, 4, None, 0.0)
    calibrate(S, P, Q, 4, (np.ones(2), np.zeros(2)), 0.0)
    grouped_sums(S, P, Q)
    raise_score_sum(np.zeros(3, dtype=np.int64), np.array([0, 1, 2], dtype=np.int64), np.ones(3, dtype=np.int64),
                    np.ones(3, dtype=np.int64), 1)
    U = np.stack([np.c_[np.ones(3), S[0]], np.c_[np.ones(3), S[1]]])
    regression(U, P, Q, 5)
    regression(U, P, Q, 5, np.zeros((2, 2)))
    regression(U, np.stack([P, Q]), np.stack([Q, P]), 5, np.zeros((2, 2)))
    gap_bound(U, P, Q, np.zeros((2, 2)), (0.5, 2.0))
    gap_bound(U, np.stack([P, Q]), np.stack([Q, P]), np.zeros((2, 2)), (0.5, 2.0))
    gap_bound(U, P, Q, np.zeros((2, 2)), (0.5, 2.0), np.zeros((2, 3)))
    cell = np.array([0, 0, 1], dtype=np.int64)
    children_ones(cell, 2, [0], np.array([0, 2], dtype=np.int64), np.array([0, 2], dtype=np.int64), P, Q,
                  np.array([3.0, 0.0]), np.array([1.0, 3.0]))
    pair_sums(cell, 2, [np.array([0, 1, 1], dtype=np.int64)], P, Q)
    grandchildren_rows(cell, 2, np.array([0, 1, 2, 4], dtype=np.int64), np.array([0, 1, 0, 1], dtype=np.int64),
                       np.array([0, 1], dtype=np.int64), 1, 2, P, Q, 4.0, 0.25)
    box_fit(U[0], P, Q, 0.25, 1.0, np.zeros(2), np.full(2, -5.0), np.full(2, 5.0), 3)
    lr_dual(np.arange(3, dtype=np.int64)[:, None], P, Q, np.zeros(2), 1024.0, np.zeros(1, dtype=np.int64),
            np.ones(1, dtype=np.int64))
    from ..problem.cox import CoxLoss
    cox = CoxLoss(np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]), np.array([1.0, 2.0, 3.0]),
                  np.array([True, False, True]))
    cox_regressions(cox_arrays(cox), np.array([[0, 1]]), np.zeros((1, 2)), np.full(1, -np.inf), 2)
    pair_counts(np.array([[1], [2]], dtype=np.uint64), np.array([[3]], dtype=np.uint64), 1, 2)
    near_pairs(np.array([[1], [2]], dtype=np.uint64), np.array([[3]], dtype=np.uint64), 1, 1, 2)
    minimal_rows(np.array([[1], [3]], dtype=np.uint8))
    return time.perf_counter() - t0

