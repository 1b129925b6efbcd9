"""The compiled loops of the support search (numba, ``riskformula[fast]``) against the numpy code
they replace: the same calibrated points and losses, the same score-cell bounds (up to rounding,
and below what the calibration reaches), the same exact repairs.  Skipped without numba; the
numpy code is the one the other tests run then, and `test_support_search` runs its brute-force
audits on the numpy code in any case."""

from __future__ import annotations

import numpy as np
import pytest

from riskformula.solver import cells, kernels
from riskformula.solver._repair import raise_score_sum

pytest.importorskip("numba")


def _numpy(monkeypatch):
    monkeypatch.setattr(kernels, "compiled", lambda: None)


def _cells(rng, C, spread):
    P = rng.integers(0, 6, C).astype(float)
    Q = rng.integers(0, 6, C).astype(float)
    Q[(P + Q) == 0] = 1.0
    S = rng.integers(-spread, spread + 1, (40, C)).astype(float)
    return S, P, Q


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("iters", [4, 60])
def test_calibration_matches_numpy(seed, iters, monkeypatch):
    rng = np.random.default_rng(seed)
    S, P, Q = _cells(rng, int(rng.integers(3, 60)), int(rng.integers(1, 30)))
    if seed % 2:
        # nearly separable: events only where the score is high
        P[S[0] < 0], Q[S[0] > 0] = 0.0, 0.0
        Q[(P + Q) == 0] = 1.0
    start = (rng.uniform(0, 1, len(S)), rng.normal(0, 1, len(S))) if seed % 3 == 0 else None
    a, c, f, Z = cells.calibrate_fitted(S, P, Q, iters=iters, start=start)
    assert kernels.compiled() is not None
    _numpy(monkeypatch)
    a0, c0, f0, Z0 = cells.calibrate_fitted(S, P, Q, iters=iters, start=start)
    np.testing.assert_allclose(f, f0, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(Z, a[:, None] * S + c[:, None])
    assert np.all(a >= 0)
    # the loss returned is the loss at the point returned
    np.testing.assert_allclose(f, cells.cell_losses(Z, P, Q), rtol=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_score_cell_bound_matches_numpy_and_stays_below_the_calibrated_loss(seed, monkeypatch):
    rng = np.random.default_rng(100 + seed)
    S, P, Q = _cells(rng, int(rng.integers(2, 80)), int(rng.integers(1, 10)))
    W = float(P.sum() + Q.sum())
    fast = cells.grouped_saturated(S, P, Q, W)
    a, c, f, Z = cells.calibrate_fitted(S, P, Q)
    _numpy(monkeypatch)
    slow = cells.grouped_saturated(S, P, Q, W)
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-15)
    assert np.all(fast <= f / W)


@pytest.mark.parametrize("seed", range(30))
def test_exact_repair_matches_the_python_loop(seed):
    rng = np.random.default_rng(200 + seed)
    C = int(rng.integers(2, 40))
    Pi = rng.integers(0, 1000, C).astype(np.int64)
    Qi = rng.integers(0, 1000, C).astype(np.int64)
    k = np.array([rng.integers(-p, q + 1) for p, q in zip(Pi, Qi)], dtype=np.int64)
    s = rng.integers(-20, 21, C).astype(np.int64)
    need = int(rng.integers(1, 5000))
    fast = kernels.raise_score_sum(k, s, Pi, Qi, need)
    slow = raise_score_sum(k, s, Pi, Qi, need)
    assert fast.dtype == np.int64 and np.array_equal(fast, slow)
    assert fast.sum() == k.sum()  # the intercept's sum is kept, exactly


def test_the_environment_switch_turns_the_kernels_off(monkeypatch):
    monkeypatch.setattr(kernels, "_TRIED", False)
    monkeypatch.setattr(kernels, "_KERNELS", None)
    monkeypatch.setenv("RISKFORMULA_NUMBA", "0")
    assert kernels.compiled() is None
    assert kernels.calibrate(np.zeros((1, 2)), np.ones(2), np.ones(2), 4, None, 0.0) is None


@pytest.mark.parametrize("seed", range(8))
def test_prefix_regression_matches_numpy(seed, monkeypatch):
    from riskformula.solver.support_points import batch_regression
    rng = np.random.default_rng(300 + seed)
    C, p = int(rng.integers(4, 40)), int(rng.integers(1, 6))
    P = rng.integers(0, 8, C).astype(float)
    Q = rng.integers(0, 8, C).astype(float)
    Q[(P + Q) == 0] = 1.0
    U = np.concatenate([np.ones((12, C, 1)), rng.integers(-3, 4, (12, C, p - 1)).astype(float)], axis=2)
    if seed % 2:
        U[:, :, -1] = rng.integers(0, 2, C)  # a 0/1 column, as the free items are
    fast = batch_regression(U, P, Q)
    _numpy(monkeypatch)
    slow = batch_regression(U, P, Q)

    def loss(theta):
        return cells.cell_losses(np.einsum("vcp,vp->vc", U, theta), P, Q)

    np.testing.assert_allclose(loss(fast), loss(slow), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("density", [0.4, 0.95])
@pytest.mark.parametrize("seed", range(3))
def test_large_regression_matches_numpy(seed, density, monkeypatch):
    # a design large enough (cells × columns²) for the compiled steps to take their gradient and
    # Hessian from BLAS products (B8's families) when it is dense, or from its nonzero entries
    # when at most SPARSE_SHARE of them are nonzero (0/1 items): the same fit as numpy's, empty
    # rows included
    from riskformula.solver import _compiled
    from riskformula.solver.support_points import batch_regression
    rng = np.random.default_rng(900 + seed)
    C, p = 2500, 14
    P = rng.integers(0, 4, C).astype(float)
    Q = rng.integers(0, 4, C).astype(float)
    P[:50] = Q[:50] = 0.0  # padding rows: no term
    U = np.concatenate([np.ones((1, C, 1)), (rng.random((1, C, p - 1)) < density).astype(float)], axis=2)
    assert C * p * p >= 200000
    assert (np.count_nonzero(U) <= _compiled.SPARSE_SHARE * U.size) == (density < 0.5)
    fast = batch_regression(U, P, Q)
    _numpy(monkeypatch)
    slow = batch_regression(U, P, Q)

    def loss(theta):
        return cells.cell_losses(np.einsum("vcp,vp->vc", U, theta), P, Q)

    np.testing.assert_allclose(loss(fast), loss(slow), rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(fast, slow, atol=1e-5)


@pytest.mark.parametrize("seed", range(6))
def test_sparse_regressions_match_numpy(seed, monkeypatch):
    # the compiled steps over a sparse design's nonzero entries: several designs with their own
    # counts, real values, empty rows, starts; levels stop some designs early (below their level),
    # the others reach numpy's fit
    from riskformula.solver import _compiled
    from riskformula.solver.support_points import batch_regression
    rng = np.random.default_rng(950 + seed)
    V, C, p = 5, int(rng.integers(20, 400)), int(rng.integers(2, 9))
    P = rng.integers(0, 5, (V, C)).astype(float)
    Q = rng.integers(0, 5, (V, C)).astype(float)
    P[:, :3] = Q[:, :3] = 0.0
    X = rng.normal(size=(V, C, p - 1)) * (rng.random((V, C, p - 1)) < 0.2)
    U = np.concatenate([np.ones((V, C, 1)), X], axis=2)
    assert np.count_nonzero(U) <= _compiled.SPARSE_SHARE * U.size

    def loss(th):
        z = np.einsum("vcp,vp->vc", U, th)
        return (P * np.logaddexp(0.0, -z) + Q * np.logaddexp(0.0, z)).sum(axis=1)

    start = rng.normal(size=(V, p)) * 0.3 if seed % 2 else None
    with monkeypatch.context() as m:
        _numpy(m)
        slow = batch_regression(U, P, Q, 30)
    # levels halfway between the intercept-only loss and the minimum, on every other design
    half = 0.5 * (loss(np.zeros((V, p))) + loss(slow))
    levels = np.where(np.arange(V) % 2 == 1, half, -np.inf) if seed % 3 else None
    fast = batch_regression(U, P, Q, 30, start, levels)
    free = np.ones(V, dtype=bool) if levels is None else ~np.isfinite(levels)
    np.testing.assert_allclose(loss(fast)[free], loss(slow)[free], rtol=1e-9, atol=1e-9)
    if levels is not None:
        stopped = ~free
        assert np.all(loss(fast)[stopped] < levels[stopped] * (1 + 1e-12))
        assert np.all(loss(slow)[stopped] <= loss(fast)[stopped] + 1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_children_bounds_of_0_1_columns_match_numpy(seed, monkeypatch):
    import types
    rng = np.random.default_rng(400 + seed)
    n, d = int(rng.integers(5, 300)), int(rng.integers(2, 9))
    X = (rng.random((n, d)) < rng.uniform(0.1, 0.9)).astype(float)
    P = rng.integers(0, 3, n).astype(float)
    Q = rng.integers(0, 3, n).astype(float)
    Q[(P + Q) == 0] = 1
    loss = types.SimpleNamespace(Z=np.c_[np.ones(n), X], w_pos=P, w_neg=Q, total_weight=float(P.sum() + Q.sum()))
    data = cells.CellData(loss)
    cell, n_cells = np.zeros(n, dtype=np.int64), 1
    for j in range(int(rng.integers(0, 3))):
        cell, n_cells = data.refine(cell, j)
    cols = list(range(d))
    fast = data.children_saturated(cell, n_cells, cols)
    _numpy(monkeypatch)
    slow = data.children_saturated(cell, n_cells, cols)
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed", range(8))
def test_union_bounds_match_numpy(seed, monkeypatch):
    import types
    rng = np.random.default_rng(500 + seed)
    n, d = int(rng.integers(5, 300)), int(rng.integers(3, 9))
    X = rng.integers(0, int(rng.integers(2, 4)), (n, d)).astype(float)
    P = rng.integers(0, 3, n).astype(float)
    Q = rng.integers(0, 3, n).astype(float)
    Q[(P + Q) == 0] = 1
    loss = types.SimpleNamespace(Z=np.c_[np.ones(n), X], w_pos=P, w_neg=Q, total_weight=float(P.sum() + Q.sum()))
    data = cells.CellData(loss)
    cell, n_cells = data.refine(np.zeros(n, dtype=np.int64), 0)
    # the suffix partitions: the rows by their values on columns q.. (as the search builds them)
    others = []
    for q in range(1, d):
        o, _ = np.zeros(n, dtype=np.int64), 1
        for j in range(q, d):
            o, _ = data.refine(o, j)
        others.append(o)
    fast = data.pair_saturated(cell, n_cells, others)
    _numpy(monkeypatch)
    slow = data.pair_saturated(cell, n_cells, others)
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-15)


def test_warm_up_compiles_every_kernel_with_the_searchs_types():
    assert kernels.warm_up() >= 0
    for name, fn in kernels.compiled().items():
        assert fn.signatures, name  # compiled (or loaded from the cache) for at least one signature


def test_a_slow_first_compilation_is_said_once(monkeypatch):
    from riskformula.errors import RiskFormulaWarning
    monkeypatch.setattr(kernels, "_TRIED", False)
    monkeypatch.setattr(kernels, "_KERNELS", None)
    monkeypatch.setattr(kernels, "warm_up", lambda: 12.0)
    with pytest.warns(RiskFormulaWarning, match="riskformula compile"):
        assert kernels.compiled() is not None
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert kernels.compiled() is not None  # the second call says nothing


@pytest.mark.parametrize("case", ["fractional", "wide"])
def test_calibration_without_grouping_matches_numpy(case, monkeypatch):
    # scores that are not whole numbers, or span more bins than the grouping allows, are
    # calibrated on the cells as they are
    rng = np.random.default_rng(7)
    S, P, Q = _cells(rng, 30, 5)
    S = S + 0.25 if case == "fractional" else S * float(1 << 19)
    a, c, f, Z = cells.calibrate_fitted(S, P, Q, iters=60)
    _numpy(monkeypatch)
    a0, c0, f0, Z0 = cells.calibrate_fitted(S, P, Q, iters=60)
    np.testing.assert_allclose(f, f0, rtol=1e-9)
    np.testing.assert_allclose(f, cells.cell_losses(Z, P, Q), rtol=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("collapse", [False, True])
def test_beam_refit_matches_numpy(seed, collapse, monkeypatch):
    # the real points of a support (heuristics.real_fit): the same projected Newton steps,
    # compiled; bounds that bind (seed odd: a separable column pushes its point to the bound);
    # with ``collapse`` both codes fit on the rows regrouped by the support's columns
    from riskformula.problem.loss import LogisticLoss
    from riskformula.solver import heuristics
    from riskformula.solver.heuristics import real_fit
    monkeypatch.setattr(heuristics, "COLLAPSE_ROWS", 0 if collapse else 10**9)
    rng = np.random.default_rng(300 + seed)
    n, d = 400, 6
    X = rng.integers(0, 2, (n, d)).astype(float)
    X[:, 5] = rng.integers(0, 4, n)
    y = (X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(0, 1, n) > 0.5).astype(int)
    if seed % 2:
        y[X[:, 3] == 1] = 1
    loss = LogisticLoss(X, y, scale=[1.0, 0.5, 3.0][seed % 3])
    support = (0, 1, 3, 5)
    lo, hi = np.array([-10.0, -5, -5, -5, -5]), np.array([10.0, 5, 5, 5, 5])
    start = np.zeros(d + 1)
    x, f = real_fit(loss, support, start, lo, hi, with_value=True)
    _numpy(monkeypatch)
    x0, f0 = real_fit(loss, support, start, lo, hi, with_value=True)
    monkeypatch.setattr(heuristics, "COLLAPSE_ROWS", 10**9 if collapse else 0)
    x1, f1 = real_fit(loss, support, start, lo, hi, with_value=True)  # numpy, the other row layout
    np.testing.assert_allclose(f1, f0, rtol=1e-9)
    np.testing.assert_allclose(f, f0, rtol=1e-9)
    np.testing.assert_allclose(x, x0, atol=1e-5)
    full = np.zeros(d + 1)
    full[0], full[1 + np.asarray(support)] = x[0], x[1:]
    np.testing.assert_allclose(f, loss.value(full), rtol=1e-12)  # the loss returned is the loss at the points
    assert np.all(x >= lo) and np.all(x <= hi)


@pytest.mark.parametrize("seed", range(8))
def test_regression_bound_repair_matches_numpy(seed, monkeypatch):
    # B5 (cells.lr_bound): the compiled repair of the columns' sums takes the numpy code's integer
    # steps; both bounds stay below the regression's loss at its own point
    rng = np.random.default_rng(500 + seed)
    n, s = int(rng.integers(20, 200)), int(rng.integers(1, 5))
    X = rng.integers(0, [2, 3, 2, 4][:s], (n, s))
    Xc, inv = np.unique(X, axis=0, return_inverse=True)
    y = rng.random(n) < 1 / (1 + np.exp(-(X @ rng.normal(0, 1, s) - 0.5)))
    P = np.bincount(inv.ravel(), weights=y, minlength=len(Xc))
    Q = np.bincount(inv.ravel(), weights=~y, minlength=len(Xc))
    W = float(n)
    fast, theta = cells.lr_bound(Xc, P, Q, W)
    _numpy(monkeypatch)
    slow, theta0 = cells.lr_bound(Xc, P, Q, W)
    np.testing.assert_allclose(fast, slow, rtol=1e-7, atol=1e-12)
    for th in (theta, theta0):
        z = th[0] + Xc @ th[1:]
        value = float(P @ np.logaddexp(0, -z) + Q @ np.logaddexp(0, z)) / W
        assert fast <= value + 1e-12 and slow <= value + 1e-12
    assert fast > cells.lower_sum(cells.h_terms(P, Q).sum(), len(P), W) / W - 1e-12  # at least B1


@pytest.mark.parametrize("seed", range(6))
def test_cox_regressions_match_the_numpy_loss_and_reach_its_minimum(seed):
    """The compiled Cox evaluation (loss, gradient, Hessian, magnitude) equals numpy's on the rows
    (Efron and Breslow ties, weights, 0/1 and real columns), and its Newton points reach the
    regression's minimum as numpy's do."""
    from riskformula.problem.cox import CoxLoss
    from riskformula.solver.cox_bounds import CoxTerms, _evaluate_rows, cox_regression, gap_parts, gap_values
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 200)), 6
    X = (rng.random((n, d)) < rng.uniform(0.1, 0.8, d)).astype(float)
    X[:, 5] = rng.normal(size=n)
    t = rng.integers(1, 30, n).astype(float)
    e = rng.random(n) < 0.6
    e[0] = True
    loss = CoxLoss(X, t, e, ties="efron" if seed % 2 else "breslow",
                   weights=rng.integers(1, 4, n).astype(float) if seed % 3 == 0 else None)
    terms = CoxTerms(loss)
    arrays = kernels.cox_arrays(loss)
    C = np.array([[0, 2, 5], [1, 3, 4], [5, 4, 0]])
    start = rng.normal(0, 0.5, C.shape)
    beta, F, g, H, mag = kernels.cox_regressions(arrays, C, start, np.full(3, -np.inf), 0)
    assert np.array_equal(beta, start)
    for b in range(3):
        F2, g2, H2, mag2 = _evaluate_rows(terms, terms.X[:, C[b]], start[b])
        assert F[b] == pytest.approx(F2, rel=1e-12)
        assert np.allclose(g[b], g2, rtol=1e-10, atol=1e-13)
        assert np.allclose(H[b], H2, rtol=1e-10, atol=1e-13)
        assert mag[b] == pytest.approx(mag2, rel=1e-12)
    # a level below every loss: the steps go on until the caller's bound at the point reaches it,
    # and that bound is below the minimum and close to it
    _, F, g, H, mag = kernels.cox_regressions(arrays, C, start, np.full(3, -1.0), 50)
    xmax = np.sqrt(np.array([(X[:, c] ** 2).sum(axis=1).max() for c in C]))
    bound = gap_values(*gap_parts(F, mag, g, H, None, terms.norm * float(terms.coef.sum()), xmax=xmax))
    for b in range(3):
        fit = cox_regression(terms, terms.d, terms.X[:, C[b]], terms.coef, terms.norm, None, 60)
        assert fit[1] - 1e-3 <= bound[b] <= fit[1] <= F[b]


@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_margin_is_the_numpy_margin_bit_for_bit(seed):
    # the grandchildren's counts subtract lower_sum's rounding margin inside the compiled loop:
    # the same operations in the same order, so the same bounds as cells.lower_sum, bit for bit
    from riskformula.solver import _compiled
    rng = np.random.default_rng(800 + seed)
    W = float(rng.integers(1, 2 ** 30))
    t = np.r_[0.0, 1e-300, rng.random(200) * 10.0 ** rng.integers(-12, 8, 200), 3.0 * W]
    u = rng.integers(0, 2 ** 20, len(t))
    got = np.array([_compiled.lower_sum(float(a), int(b), W) for a, b in zip(t, u)])
    assert np.array_equal(got, cells.lower_sum(t, u, W))
    assert got[0] == 0.0 and (got <= t).all()


@pytest.mark.parametrize("max_pairs", [10 ** 6, 50, 2])
@pytest.mark.parametrize("seed", range(6))
def test_pairs_sets_match_numpy(seed, max_pairs, monkeypatch):
    # B9's pairs' sets by bit counts of whole rows against the numpy products: columns of two to
    # five values side by side, more than one 64-bit word of each kind, duplicate rows across classes
    # left out by the caller's check (a row holding both classes gives None on both paths)
    from riskformula.problem import LogisticLoss
    from riskformula.solver.cells import CellData
    from riskformula.solver.purity import distinguishing_sets
    rng = np.random.default_rng(1500 + seed)
    n, d = int(rng.integers(30, 90)), int(rng.integers(60, 110))
    radix = rng.choice([2, 2, 3, 5], d) if seed % 2 else np.full(d, 2)
    X = np.unique((rng.random((n, d)) * radix).astype(int).astype(float), axis=0)
    y = (rng.random(len(X)) < 0.4).astype(int)
    y[0], y[-1] = 0, 1
    cols = list(range(d))
    fast = distinguishing_sets(CellData(LogisticLoss(X, y)), cols, max_pairs=max_pairs)
    assert fast is not None
    _numpy(monkeypatch)
    slow = distinguishing_sets(CellData(LogisticLoss(X, y)), cols, max_pairs=max_pairs)
    assert fast.shape == slow.shape and np.array_equal(fast, slow)


def test_pairs_sets_stop_at_their_deadline():
    from riskformula.problem import LogisticLoss
    from riskformula.solver.cells import CellData
    from riskformula.solver.purity import distinguishing_sets
    rng = np.random.default_rng(3)
    X = np.unique(rng.integers(0, 2, (60, 20)).astype(float), axis=0)
    y = np.arange(len(X)) % 2
    assert distinguishing_sets(CellData(LogisticLoss(X, y)), list(range(20)), deadline=0.0) is None
    assert distinguishing_sets(CellData(LogisticLoss(X, y)), list(range(20))) is not None


def test_minimal_rows_keep_the_rows_that_hold_no_kept_row():
    rng = np.random.default_rng(8)
    for _ in range(20):
        k = int(rng.integers(3, 140))
        S = np.unique(rng.random((int(rng.integers(2, 60)), k)) < rng.uniform(0.05, 0.5), axis=0)
        S = S[np.argsort(S.sum(1), kind="stable")]
        keep = kernels.minimal_rows(np.packbits(S, axis=1))
        kept: list = []
        for r in S:
            if not any(np.all(r[q]) for q in kept):  # r holds a kept row q when r is 1 wherever q is
                kept.append(r)
        assert [tuple(r) for r in S[keep]] == [tuple(r) for r in kept]
        assert keep[0]  # the first row holds nothing kept before it
