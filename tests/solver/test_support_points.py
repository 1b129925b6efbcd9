"""The prefix bound inside one support (B7) and the search that uses it, against brute force.

The oracle calibrates every whole point vector on its own, on the raw rows, over every logit
scale a ≥ 0 and real intercept: F(a) = min_c loss(a·s + c) is convex in a (a partial minimum of a
jointly convex function), so a golden-section search over a ∈ [0, 40] with a bisection on the
intercept inside finds it.  It shares no code with the package.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from riskformula.problem import LogisticLoss, RiskProblem
from riskformula.solver.cells import CellData, support_cells
from riskformula.solver.support_points import (batch_gap_bound, batch_regression, canonical, independent_columns,
                                                prefix_bounds)
from riskformula.solver.support_search import SupportSearch, _subtrees, ray_vectors

from conftest import slow_params


def _loss(S, y, a, c):
    z = S * a[None, :] + c[None, :]
    return (y[:, None] * np.logaddexp(0, -z) + (1 - y[:, None]) * np.logaddexp(0, z)).mean(axis=0)


def _best_c(S, y, a):
    left, right = np.full(S.shape[1], -60.0), np.full(S.shape[1], 60.0)
    for _ in range(80):
        mid = 0.5 * (left + right)
        g = (1 / (1 + np.exp(-(S * a[None, :] + mid[None, :]))) - y[:, None]).sum(axis=0)
        right, left = np.where(g > 0, mid, right), np.where(g > 0, left, mid)
    return 0.5 * (left + right)


def oracle_fit(X, y, models):
    """Least mean loss of each point vector (rows of ``models``) over every scale ≥ 0 and intercept."""
    S = X @ models.T
    V = S.shape[1]
    lo, hi = np.zeros(V), np.full(V, 40.0)
    g = (math.sqrt(5) - 1) / 2

    def F(a):
        return _loss(S, y, a, _best_c(S, y, a))
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = F(x1), F(x2)
    for _ in range(60):
        left = f1 < f2
        hi, lo = np.where(left, x2, hi), np.where(left, lo, x1)
        x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
        f1, f2 = F(x1), F(x2)
    return np.minimum(np.minimum(f1, f2), F(np.zeros(V)))


def random_data(seed: int, d: int):
    """Rows of small-integer columns (0/1 items, a three-level count, and — by seed — a duplicated
    column, two complementary items, or a column that separates a few rows)."""
    rng = np.random.default_rng(900 + seed)
    n = int(rng.integers(30, 80))
    X = np.column_stack([(rng.random(n) < rng.uniform(0.2, 0.8)).astype(float) if j % 2 else
                         rng.integers(0, 3, n).astype(float) for j in range(d)])
    kind = seed % 4
    if kind == 1:
        X[:, d - 1] = X[:, 0]                       # a duplicated column
    elif kind == 2:
        X[:, d - 1] = 1 - (X[:, 1] > 0)             # complementary items
    signal = X @ rng.normal(0, 1.2, d) - 0.4
    y = (rng.random(n) < 1 / (1 + np.exp(-signal))).astype(int)
    if kind == 3:
        X[:3, d - 1] = 5                            # a value only three rows have, all of one class
        y[:3] = 0
    y[0], y[1] = 0, 1
    return X, y


def prefix_cases(X, y, seed: int, real: bool = False):
    """For a support of every column of X: per prefix length t, six random prefixes, their B7 bounds
    and, by brute force over every completion and scale, the least loss below each."""
    d = X.shape[1]
    data = CellData(LogisticLoss(X, y))
    assert data.real == real
    cell, n_cells = np.zeros(data.n, dtype=np.int64), 1
    cols = tuple(range(d))
    for j in cols:
        cell, n_cells = data.refine(cell, j)
    Xc, P, Q = support_cells(data, cell, n_cells, cols)
    rng = np.random.default_rng(seed)
    vals = [v for v in range(-3, 4) if v]
    for t in range(1, d - 1):
        prefixes = np.array([rng.choice(vals, t + 1) for _ in range(6)])
        bound = prefix_bounds(prefixes, Xc, P, Q, data.W, t, real=real)
        tails = list(itertools.product(vals, repeat=d - t - 1))
        completions = np.array([np.r_[wP, list(w)] for wP in prefixes for w in tails], float)
        truth = oracle_fit(X, y, completions).reshape(len(prefixes), len(tails)).min(axis=1)
        yield t, prefixes, bound, truth, (Xc, P, Q, data.W)


@pytest.mark.parametrize("seed", slow_params(range(40), slow=(1, 3, 4, 5, 6, 7, *range(8, 40))))  # 1, 3, 5: 7.6 s
def test_prefix_bound_is_below_every_completion(seed):
    d = 3 + seed % 2
    X, y = random_data(seed, d)
    for t, prefixes, bound, truth, (Xc, P, Q, W) in prefix_cases(X, y, seed):
        U = np.concatenate([np.ones((6, Xc.shape[0], 1)), (prefixes @ Xc[:, :t + 1].T)[:, :, None].astype(float),
                            np.broadcast_to(Xc[:, t + 1:].astype(float), (6, Xc.shape[0], d - t - 1))], axis=2)
        # on every cell and every free column (no reduction), the bound is valid too (or −∞)
        plain = batch_gap_bound(U, P, Q, batch_regression(U, P, Q), W)
        assert np.all(bound <= truth + 1e-12), (seed, t, bound, truth)
        assert np.all(plain <= truth + 1e-12), (seed, t, plain, truth)


def real_data(seed: int, d: int):
    """Real-valued columns (a few values repeated; one heavy-tailed, with values in the hundreds;
    one with many decimals, whose prefix scores are rounded when computed)."""
    rng = np.random.default_rng(1900 + seed)
    n = int(rng.integers(30, 80))
    X = np.column_stack([np.round(rng.normal(0, 1, n), 2), np.round(rng.gamma(1.2, 120.0, n), 1),
                         rng.normal(0, 1, n) / 3, np.round(rng.random(n), 1)][:d])
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ (rng.normal(0, 1.0, d) * np.r_[1, 0.005, 1, 1][:d])) + 0.3))).astype(int)
    y[0], y[1] = 0, 1
    return X, y


@pytest.mark.parametrize("seed", slow_params(range(40), slow=range(2, 40)))
def test_prefix_bound_of_real_predictors_is_below_every_completion(seed):
    # the prefix scores of real columns are computed in floating point: the bound is the exact
    # design's, through each row's rounding bound (batch_gap_bound's ``uerr``)
    X, y = real_data(seed, 3 + seed % 2)
    for t, prefixes, bound, truth, _ in prefix_cases(X, y, seed, real=True):
        assert np.all(bound <= truth + 1e-12), (seed, t, bound, truth)
        assert np.isfinite(bound).any()


@pytest.mark.parametrize("seed", range(6))
def test_gap_bound_with_design_errors_covers_the_exact_design(seed, monkeypatch):
    # a design known only within ``uerr`` of the exact one: the bound must hold for the exact
    # design's regression (here: the computed design moved by up to uerr, row by row), and it
    # weakens as uerr grows; compiled and numpy agree
    rng = np.random.default_rng(40 + seed)
    C, s = int(rng.integers(20, 60)), 2
    exact = np.concatenate([np.ones((1, C, 1)), rng.normal(0, 1, (1, C, s))], axis=2)
    P = rng.integers(0, 4, C).astype(float)
    Q = rng.integers(0, 4, C).astype(float)
    Q[(P + Q) == 0] = 1
    W = float((P + Q).sum())
    ue = np.full((1, C), 0.02)
    moved = exact.copy()
    step = rng.normal(0, 1, (C, s))
    moved[0, :, 1:] += 0.02 * step / np.linalg.norm(step, axis=1, keepdims=True)  # |u − û| = 0.02 per row
    th = batch_regression(moved, P, Q, 40)
    with_err = batch_gap_bound(moved, P, Q, th, W, uerr=ue)[0]
    exact_min = batch_gap_bound(exact, P, Q, batch_regression(exact, P, Q, 60), W)[0]
    # the exact design's minimum is at least its own gap bound, and the bound from the moved one
    # with the errors stated is below the exact minimum (its loss at its Newton point bounds it)
    z = exact[0] @ batch_regression(exact, P, Q, 60)[0]
    exact_loss = float((P * np.logaddexp(0, -z) + Q * np.logaddexp(0, z)).sum()) / W
    assert with_err <= exact_loss + 1e-12
    assert np.isfinite(exact_min) and exact_min <= exact_loss + 1e-12
    assert with_err <= batch_gap_bound(moved, P, Q, th, W)[0]  # the errors only lower it
    from riskformula.solver import kernels
    if kernels.compiled() is not None:
        monkeypatch.setattr(kernels, "compiled", lambda: None)
        slow = batch_gap_bound(moved, P, Q, th, W, uerr=ue)[0]
        assert slow == pytest.approx(with_err, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("compiled", [True, False])
def test_gap_bound_at_a_point_that_is_not_finite_is_minus_infinity(compiled, monkeypatch):
    # a diverged regression's point (inf or nan coefficients) gives no bound, and no error, with or
    # without design errors
    from riskformula.solver import kernels
    if not compiled:
        monkeypatch.setattr(kernels, "compiled", lambda: None)
    U = np.concatenate([np.ones((2, 5, 1)), np.arange(20.0).reshape(2, 5, 2) / 7], axis=2)
    P, Q = np.array([1.0, 0, 2, 1, 0]), np.array([0.0, 1, 1, 0, 3])
    theta = np.array([[0.0, np.inf, 1.0], [np.nan, 0.0, 0.0]])
    with np.errstate(all="ignore"):
        assert np.all(batch_gap_bound(U, P, Q, theta, 9.0) == -np.inf)
        assert np.all(batch_gap_bound(U, P, Q, theta, 9.0, uerr=np.full((2, 5), 1e-12)) == -np.inf)


def test_prefix_bound_is_close_on_a_well_posed_support():
    # many rows, no separation: the bound of a full prefix is the calibrated loss, nearly
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, (300, 3)).astype(float)
    y = (rng.random(300) < 1 / (1 + np.exp(-(X @ [0.8, -0.5, 0.3] - 0.4)))).astype(int)
    data = CellData(LogisticLoss(X, y))
    cell, n_cells = np.zeros(data.n, dtype=np.int64), 1
    for j in range(3):
        cell, n_cells = data.refine(cell, j)
    Xc, P, Q = support_cells(data, cell, n_cells, (0, 1, 2))
    wP = np.array([[3, -2]])
    sP = (wP @ Xc[:, :2].T).astype(float)
    U = np.concatenate([np.ones(sP.shape + (1,)), sP[:, :, None], Xc[None, :, 2:].astype(float)], axis=2)
    b = batch_gap_bound(U, P, Q, batch_regression(U, P, Q), data.W)[0]
    best = float(oracle_fit(X, y, np.array([[3.0, -2.0, v] for v in np.linspace(-3, 3, 61)])).min())
    assert b <= best + 1e-12 and best - b < 1e-3


def test_dependent_columns_are_found_exactly():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 50)
    b = rng.integers(0, 3, 50)
    X = np.column_stack([a, b, 1 - a, a + 2 * b, b, rng.integers(0, 2, 50)])
    assert independent_columns(X) == [0, 1, 5]
    # a combination with a fraction: 2·c = a + b on every row, so c is dropped only when it is exact
    c2 = np.column_stack([a, b, (a + b) / 2])
    assert independent_columns(c2) == ([0, 1] if np.all((a + b) % 2 == 0) else [0, 1, 2])


def test_canonical_prefixes_and_ray_vectors():
    W = np.array([[2, -4], [-1, 2], [3, 3], [-5, -5]])
    assert canonical(W).tolist() == [[1, -2], [1, -2], [1, 1], [1, 1]]
    R = ray_vectors(np.array([0.9, -2.1, 0.0]), np.full(3, -5), np.full(3, 5))
    assert len(R) and np.all(np.abs(R) <= 5) and np.all(R[:, 2] == 0)
    assert np.all(np.gcd.reduce(np.abs(R), axis=1) == 1)
    assert ray_vectors(np.zeros(2), np.full(2, -5), np.full(2, 5)).shape == (0, 2)


def _problem(seed: int, d: int, r: int):
    X, y = random_data(seed, d)
    loss = LogisticLoss(X, y).with_real_intercept(True)
    rng = np.random.default_rng(seed)
    c0 = float(rng.choice([0.0, 1e-6, 0.01]))
    return RiskProblem(loss, np.full(d, -r, float), np.full(d, r, float), c0=c0, max_size=d), X, y, c0


def check_search(seed: int, d: int, r: int):
    p, X, y, c0 = _problem(seed, d, r)
    rep = SupportSearch(p, True, time_limit=120, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12,
                        beam=bool(seed % 2)).solve()
    models = np.array(list(itertools.product(range(-r, r + 1), repeat=d)), float)
    truth = float((oracle_fit(X, y, models) + c0 * np.count_nonzero(models, axis=1)).min())
    assert rep.status == "optimal"
    assert rep.lower_bound <= truth + 1e-12, (seed, rep.lower_bound, truth)
    lam = np.asarray(rep.solution)
    z = (lam[0] + X @ lam[1:]) / rep.scale
    own = float(np.mean(np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z)))) + c0 * np.count_nonzero(lam[1:])
    assert own <= truth + 1e-7, (seed, own, truth)
    assert np.all(np.abs(lam[1:]) <= r) and np.all(lam[1:] == np.round(lam[1:]))


@pytest.mark.parametrize("seed", slow_params(range(8), slow=range(1, 8)))
def test_search_with_prefix_bounds_is_the_brute_force_optimum(seed):
    check_search(seed, 3, 2)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8, 40))
def test_search_with_prefix_bounds_is_the_brute_force_optimum_more(seed):
    check_search(seed, 3, 3)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(40, 70))
def test_search_with_prefix_bounds_is_the_brute_force_optimum_four_columns(seed):
    check_search(seed, 4, 2)


def check_search_processes(seed: int):
    p, X, y, c0 = _problem(seed, 3, 2)
    one = SupportSearch(p, True, time_limit=120, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12, beam=False).solve()
    two = SupportSearch(p, True, time_limit=120, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12, beam=False,
                        n_jobs=2)
    two.alone_small = 0.0  # to the rounds at once: alone, this small tree would end before them
    two = two.solve()
    models = np.array(list(itertools.product(range(-2, 3), repeat=3)), float)
    truth = float((oracle_fit(X, y, models) + c0 * np.count_nonzero(models, axis=1)).min())
    assert two.status == one.status == "optimal" and two.settings["n_jobs"] == 2
    assert two.lower_bound <= truth + 1e-12 and two.objective <= truth + 1e-7
    assert two.objective == pytest.approx(one.objective, abs=1e-9)


@pytest.mark.parametrize("seed", [0, 5])
def test_search_on_two_processes_is_the_brute_force_optimum(seed):
    check_search_processes(seed)


def _split(until: int):
    """A small problem and the stack of subtrees its search holds once it has ``until`` of them
    (what a round deals out)."""
    p, X, y, c0 = _problem(3, 3, 2)
    s = SupportSearch(p, True, beam=False)
    stack = s._prepare()
    s.t0 = __import__("time").perf_counter()
    s._run(stack, until=until)
    return p, stack


def test_a_round_cut_short_returns_its_subtrees_whole():
    p, stack = _split(2)
    back = _subtrees(p, True, {}, (math.inf, None, 1.0), list(stack), 0.0, math.inf)
    # no time: nothing searched, nothing recorded, every subtree handed back
    assert back["nodes"] == 0 and back["discarded"] == math.inf
    assert [e[3] for e in back["stack"]] == [e[3] for e in stack]


def test_a_worker_keeps_its_search_between_rounds_of_one_fit():
    # the rounds of one fit (its token) go on with the worker's search: its caches full, its counts
    # and recorded bound those of the round alone; another fit's token starts a search of its own
    from riskformula.solver import support_search
    p, stack = _split(3)
    incumbent = (math.inf, None, 1.0)
    fresh = _subtrees(p, True, {}, incumbent, list(stack[:-1]), 60.0, math.inf, None)
    first = _subtrees(p, True, {}, incumbent, [stack[-1]], 60.0, math.inf, "fit-a")
    kept = support_search._kept.search[1]
    assert support_search._kept.search[0] == "fit-a" and kept._lr_cache
    again = _subtrees(p, True, {}, incumbent, list(stack[:-1]), 60.0, math.inf, "fit-a")
    assert support_search._kept.search[1] is kept
    for key in ("best", "discarded", "nodes", "done"):
        assert again[key] == pytest.approx(fresh[key], rel=1e-12, abs=0), key
    assert again["stack"] == fresh["stack"] == []
    assert first["nodes"] > 0 and first["discarded"] != again["discarded"]
    _subtrees(p, True, {}, incumbent, [], 60.0, math.inf, "fit-b")
    assert support_search._kept.search[0] == "fit-b" and support_search._kept.search[1] is not kept


def _real_designs(seed: int):
    """Designs [1, real columns] with per-design counts (some rows empty: padding), as the
    batched children of a real-valued node."""
    rng = np.random.default_rng(300 + seed)
    V, C, s = int(rng.integers(1, 6)), int(rng.integers(8, 60)), int(rng.integers(1, 4))
    U = np.concatenate([np.ones((V, C, 1)), np.round(rng.gamma(1.5, 2.0, (V, C, s)), 2)], axis=2)
    P = rng.integers(0, 4, (V, C)).astype(float)
    Q = rng.integers(0, 4, (V, C)).astype(float)
    pad = rng.random((V, C)) < 0.2
    P[pad] = Q[pad] = 0.0
    U[pad] = 0.0
    return U, P, Q


@pytest.mark.parametrize("seed", range(25))
def test_gap_bound_with_counts_per_design_is_below_the_regression_and_compiled_agrees(seed, monkeypatch):
    from riskformula.solver import kernels
    from scipy.optimize import minimize
    U, P, Q = _real_designs(seed)
    W = float(P.sum() + Q.sum())
    theta = batch_regression(U, P, Q, iters=40)
    b = batch_gap_bound(U, P, Q, theta, W)
    for v in range(len(U)):
        def F(t, v=v):
            z = U[v] @ t
            return float(P[v] @ np.logaddexp(0, -z) + Q[v] @ np.logaddexp(0, z))
        best = minimize(F, theta[v], method="BFGS", options={"gtol": 1e-12}).fun
        assert b[v] <= min(best, F(theta[v])) / W + 1e-15
        if np.isfinite(b[v]):
            assert b[v] >= min(best, F(theta[v])) / W - 1e-6
    # the numpy path (no kernels) gives the same bounds
    if kernels.compiled() is not None:
        monkeypatch.setattr(kernels, "gap_bound", lambda *a, **k: None)
        b_np = batch_gap_bound(U, P, Q, theta, W)
        assert np.array_equal(np.isfinite(b), np.isfinite(b_np))
        fin = np.isfinite(b)
        assert np.allclose(b[fin], b_np[fin], rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("seed", range(12))
def test_leaf_regressions_bound_each_child_below_its_regression(seed):
    # a node's children bounded in one batch (designs of the node's cells plus each child's rows
    # off its most frequent value): each bound is at most the child's regression minimum, found
    # here by BFGS on the raw rows, and close to it where it closes
    from scipy.optimize import minimize
    rng = np.random.default_rng(500 + seed)
    n, d = int(rng.integers(40, 120)), 5
    X = np.column_stack([np.where(rng.random(n) < 0.6, 0.0, np.round(rng.gamma(2.0, 1.5, n), 1)) for _ in range(d)])
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ rng.normal(0, 0.6, d) - 0.5)))).astype(int)
    y[0], y[1] = 0, 1
    p = RiskProblem(LogisticLoss(X, y), np.full(d, -3.0), np.full(d, 3.0), max_size=3)
    s = SupportSearch(p, True, beam=False)
    assert s.data.real
    cols = tuple(int(j) for j in rng.choice(d, int(rng.integers(0, 3)), replace=False))
    js = np.array([j for j in range(d) if j not in cols], dtype=np.intp)
    cell, n_cells = s.data.partition(cols)
    bounds = s._leaf_regressions(cols, js, cell, n_cells)
    closed = 0
    for b, j in zip(bounds, js):
        U = np.column_stack([np.ones(n), X[:, list(cols) + [int(j)]]])

        def F(t, U=U):
            z = U @ t
            return float(np.mean(np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z))))
        best = min(minimize(F, np.zeros(U.shape[1]), method="BFGS", options={"gtol": 1e-12}).fun,
                   F(s._lr_cache[cols + (int(j),)][1]) if cols + (int(j),) in s._lr_cache else np.inf)
        assert b <= best + 1e-15
        if np.isfinite(b):
            closed += 1
            assert b >= best - 1e-4
    assert closed >= 1


def _family_design(seed: int):
    """Cells of a family: a factor's levels as 0/1 columns (all of them, so they sum to 1 on most
    rows: an exact dependency with the intercept), 0/1 items, a count, and by seed a duplicated
    item, real values, or rows outside the factor's levels that hold one class only (the
    regression separates them: the intercept rises and every level falls without end)."""
    rng = np.random.default_rng(4100 + seed)
    n = int(rng.integers(80, 300))
    lev = rng.integers(0, 4, n)
    kind = seed % 4
    if kind == 3:
        lev[: n // 10] = -1  # outside every level ...
    F = np.column_stack([(lev == k) for k in range(4)]).astype(float)
    items = (rng.random((n, int(rng.integers(2, 6)))) < rng.uniform(0.1, 0.7)).astype(float)
    X = np.column_stack([F, items, rng.integers(0, 3, n)])
    if kind == 1:
        X = np.column_stack([X, items[:, 0]])
    if kind == 2:
        X = np.column_stack([X, np.round(rng.normal(0, 2, n), 1)])
    y = (rng.random(n) < 1 / (1 + np.exp(-(X[:, 4:] @ rng.normal(0, 0.8, X.shape[1] - 4) + 0.4 * lev - 0.5)))).astype(int)
    if kind == 3:
        y[: n // 10] = 1  # ... and all events
    U, inv = np.unique(X, axis=0, return_inverse=True)
    inv = inv.ravel()
    return U, np.bincount(inv, weights=y, minlength=len(U)), np.bincount(inv, weights=1 - y, minlength=len(U)), X, y


@pytest.mark.parametrize("seed", range(24))
def test_family_bound_is_below_the_regression_and_closes(seed):
    # B8 on a family's cells: at most the least loss of the logistic regression on all its
    # columns (found here by BFGS on the raw rows, from several starts: an upper bound on the
    # infimum, which is what B8 must stay below), and within 1e-6 of it — the exact column
    # reduction (one-hot levels, a duplicated item) and the retry without separated cells make
    # it close where the plain gap bound cannot
    from scipy.optimize import minimize
    from riskformula.solver.support_points import family_lr_bound, real_lr_bound
    Xc, P, Q, X, y = _family_design(seed)
    W = float(P.sum() + Q.sum())
    b, _, _ = family_lr_bound(Xc, P, Q, W)
    A = np.column_stack([np.ones(len(X)), X])

    def F(t):
        z = A @ t
        return float(np.sum(np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z))))

    def grad(t):
        z = A @ t
        return A.T @ (1 / (1 + np.exp(-z)) - y)
    starts = [np.zeros(A.shape[1]), real_lr_bound(Xc, P, Q, W, iters=60)[1]]
    best = min(minimize(F, s0, jac=grad, method="BFGS", options={"gtol": 1e-10, "maxiter": 2000}).fun for s0 in starts)
    assert b <= best / W + 1e-15, (seed, b, best / W)
    assert b >= best / W - 1e-6, (seed, b, best / W)
    if seed % 4 == 3:
        # the plain gap bound does not close on these cells: the retry is what closes it
        assert not np.isfinite(real_lr_bound(Xc, P, Q, W, iters=20, retry=False)[0])


def test_column_combinations_name_the_columns_of_each_dependency():
    from riskformula.solver.support_points import column_combinations
    rng = np.random.default_rng(2)
    a, b, c = (rng.integers(0, 2, 80) for _ in range(3))
    lev = rng.integers(0, 3, 80)
    X = np.column_stack([a, (lev == 0), b, (lev == 1), (lev == 2), a + b, c, 1 - c, 3 * c])
    combos = column_combinations(X)
    assert combos == {4: [1, 3], 5: [0, 2], 7: [6], 8: [6]}


def test_gap_bound_of_large_padded_designs_skips_the_padding_and_compiled_agrees(monkeypatch):
    # large designs (the compiled loops' BLAS branch) with rows of zero weight that pad each design
    # to one length, as a node's batched children with many columns: the padding has no term, its
    # logits are never computed, and numpy and compiled give the same bounds (a padded row once
    # read a stale logit there: a bound of nan, or an error from the eigensolver)
    from riskformula.solver import kernels
    rng = np.random.default_rng(7)
    V, C, p = 3, 2600, 10
    U = np.concatenate([np.ones((V, C, 1)), rng.normal(0, 1, (V, C, p - 1))], axis=2)
    N = rng.integers(1, 3, (V, C)).astype(float)
    for v, keep in enumerate((C, 2000, 1700)):
        N[v, keep:] = 0.0
        U[v, keep:] = 0.0
    P = np.floor(N * rng.random((V, C)) + 0.5)
    Q = N - P
    theta = batch_regression(U, P, Q, iters=30)
    fast = batch_gap_bound(U, P, Q, theta, float(N[0].sum()))
    assert np.all(np.isfinite(fast))
    if kernels.compiled() is not None:
        monkeypatch.setattr(kernels, "gap_bound", lambda *a, **k: None)
        slow = batch_gap_bound(U, P, Q, theta, float(N[0].sum()))
        assert slow == pytest.approx(fast, rel=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_gap_bound_of_a_large_design_is_the_best_radius_and_compiled_agrees(seed, monkeypatch):
    # a design as large as B8's families (the compiled loops take H_R from a BLAS product there):
    # the bound is at most the regression's minimum (BFGS) and close to it; the radii tried from
    # the smallest up give the best of them (each radius alone gives no more); the numpy path agrees
    from riskformula.solver import kernels
    from scipy.optimize import minimize
    rng = np.random.default_rng(40 + seed)
    C, p = 2500, 14
    X = (rng.random((C, p - 1)) < rng.uniform(0.2, 0.6, p - 1)).astype(float)
    logit = X @ rng.normal(0, 0.7, p - 1) - 0.4
    N = rng.integers(1, 4, C).astype(float)
    P = rng.binomial(N.astype(int), 1 / (1 + np.exp(-logit))).astype(float)
    Q = N - P
    U = np.column_stack([np.ones(C), X])[None]
    W = float(N.sum())
    theta = batch_regression(U, P, Q, iters=40)
    radii = (0.5, 2.0, 8.0, 0.1)
    b = batch_gap_bound(U, P, Q, theta, W, radii)[0]

    def F(t):
        z = U[0] @ t
        return float(P @ np.logaddexp(0, -z) + Q @ np.logaddexp(0, z))
    best = minimize(F, theta[0], method="BFGS", options={"gtol": 1e-10}).fun
    assert np.isfinite(b)
    assert b <= min(best, F(theta[0])) / W + 1e-15
    assert b >= best / W - 1e-6
    each = [batch_gap_bound(U, P, Q, theta, W, (R,))[0] for R in radii]
    assert b == pytest.approx(max(each), rel=1e-12)
    if kernels.compiled() is not None:
        monkeypatch.setattr(kernels, "gap_bound", lambda *a, **k: None)
        b_np = batch_gap_bound(U, P, Q, theta, W, radii)[0]
        assert b == pytest.approx(b_np, rel=1e-10)
