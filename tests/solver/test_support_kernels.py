"""The fast paths of the support search's kernels against the plain computations they replace.

Each kernel has a fast path (dense counting, counts from the rows where a 0/1 column is 1, one
mixed-radix number per cell, all denominators at once) and a plain one; on small random
instances both give the same cells and the same bounds, and the bounds stay below what brute
force reaches.  The time rule of the hand-over (a checkpoint, then a projection) is checked on
its own numbers, not on a clock.
"""

from __future__ import annotations

import itertools
import math
import types
import warnings

import numpy as np
import pandas as pd
import pytest

from riskformula.solver.cells import CellData, cell_losses, dense_ids, h_terms, lr_bound
from riskformula.solver.support_points import independent_columns, prefix_bounds
from conftest import slow_params


def _data(rng, n, d, levels=False):
    X = (rng.random((n, d)) < rng.uniform(0.1, 0.9)).astype(float)
    if levels:
        X[:, 0] = rng.integers(0, 4, n)
    P = rng.integers(0, 3, n).astype(float)
    Q = rng.integers(0, 3, n).astype(float)
    Q[(P + Q) == 0] = 1
    loss = types.SimpleNamespace(Z=np.c_[np.ones(n), X], w_pos=P, w_neg=Q, total_weight=float(P.sum() + Q.sum()))
    return CellData(loss), X, P, Q


def _plain_partition(X, cols):
    """Cell ids of the rows by their values on ``cols``, numbered in increasing order of the values."""
    if not cols:
        return np.zeros(len(X), dtype=np.int64)
    _, inv = np.unique(X[:, cols], axis=0, return_inverse=True)
    return inv.ravel()


def _plain_saturated(X, P, Q, cols, W):
    cell = _plain_partition(X, cols)
    return float(h_terms(np.bincount(cell, weights=P), np.bincount(cell, weights=Q)).sum()) / W


@pytest.mark.parametrize("seed", range(40))
def test_cells_and_saturated_bounds_match_the_plain_computation(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 200)), int(rng.integers(1, 7))
    data, X, P, Q = _data(rng, n, d, levels=seed % 3 == 0)
    cols = [int(j) for j in rng.permutation(d)[:rng.integers(0, d + 1)]]
    cell, n_cells = np.zeros(n, dtype=np.int64), 1
    for j in cols:
        cell, n_cells = data.refine(cell, j)
    # the same cells as a sort of the rows' values finds
    plain = _plain_partition(X, sorted(cols))
    assert n_cells == len(np.unique(plain)) == len(np.unique(np.c_[cell, plain], axis=0))
    kids = [j for j in range(d) if j not in cols]
    if kids:
        got = data.children_saturated(cell, n_cells, kids)
        for k, j in enumerate(kids):
            exact = _plain_saturated(X, P, Q, cols + [j], data.W)
            assert got[k] <= exact and exact - got[k] < 1e-12
    others = []
    for _ in range(3):
        extra = [int(j) for j in rng.permutation(d)[:rng.integers(0, d + 1)]]
        o = np.zeros(n, dtype=np.int64)
        for j in extra:
            o, _ = data.refine(o, j)
        others.append((o, extra))
    got = data.pair_saturated(cell, n_cells, [o for o, _ in others])
    for k, (_, extra) in enumerate(others):
        exact = _plain_saturated(X, P, Q, sorted(set(cols) | set(extra)), data.W)
        assert got[k] <= exact and exact - got[k] < 1e-12


def test_pair_saturated_dense_and_sorted_paths_agree():
    rng = np.random.default_rng(7)
    data, X, P, Q = _data(rng, 150, 6)
    cell, n_cells = np.zeros(150, dtype=np.int64), 1
    for j in (0, 1):
        cell, n_cells = data.refine(cell, j)
    others = []
    for extra in ((2,), (2, 3), (3, 4, 5)):
        o = np.zeros(150, dtype=np.int64)
        for j in extra:
            o, _ = data.refine(o, j)
        others.append(o)
    dense = data.pair_saturated(cell, n_cells, others)
    # the same partitions with one id moved far out: too many keys to count densely, so sorted
    sparse_ids = [o + 10 ** 6 * (o == o.max()) for o in others]
    assert np.allclose(dense, data.pair_saturated(cell, n_cells, sparse_ids), rtol=1e-14, atol=0)


@pytest.mark.parametrize("size", [0, 5, 100, 5000])
def test_dense_ids_number_like_a_sort(size):
    rng = np.random.default_rng(size)
    for span in (3, 50, 10 ** 7):
        key = rng.integers(0, span, size)
        ids, count = dense_ids(key, span)
        _, inv = np.unique(key, return_inverse=True)
        assert count == len(np.unique(key)) and np.array_equal(ids, inv.ravel())


def _independent_columns_one_by_one(X):
    """The column reduction with one denominator at a time (as it was written before)."""
    C, r = X.shape
    Xi = X.astype(np.int64)
    keep = []
    for j in range(r):
        B = np.column_stack([np.ones(C, dtype=np.int64)] + [Xi[:, k] for k in keep])
        beta, *_ = np.linalg.lstsq(B.astype(float), Xi[:, j].astype(float), rcond=None)
        dependent = False
        if np.all(np.isfinite(beta)) and np.abs(beta).max(initial=0.0) < 2.0 ** 20:
            for q in range(1, 65):
                if np.array_equal(B @ np.rint(beta * q).astype(np.int64), q * Xi[:, j]):
                    dependent = True
                    break
        if not dependent:
            keep.append(j)
    return keep


@pytest.mark.parametrize("seed", range(8))
def test_column_reduction_of_more_columns_than_rows_matches_one_at_a_time(seed):
    # nested cuts of a few variables (threshold() on few rows): more columns than the rows can hold
    # independent, so the factor fills up (at most rows + 1 columns with the intercept)
    rng = np.random.default_rng(100 + seed)
    C = int(rng.integers(3, 12))
    v = rng.integers(0, 6, (C, 3))
    X = np.column_stack([(v[:, a] >= c) for a in range(3) for c in range(1, 6)] + [v[:, 0], v[:, 1] - v[:, 2]])
    X = X[:, rng.permutation(X.shape[1])].astype(np.int64)
    assert independent_columns(X) == _independent_columns_one_by_one(X)


def test_column_reduction_past_its_deadline_keeps_the_columns_not_reached():
    from riskformula.solver.support_points import column_combinations
    rng = np.random.default_rng(5)
    v = rng.integers(0, 4, (40, 30))
    X = np.column_stack([v, v[:, ::-1] + v, v[:, :10] * 2]).astype(np.int64)  # 70 columns, 40 combinations
    full = column_combinations(X)
    part = column_combinations(X, deadline=-math.inf)  # checked every 64 columns: only the first 64
    assert len(full) == 40 and part == {j: ks for j, ks in full.items() if j < 64} and len(part) == 34


@pytest.mark.parametrize("seed", range(30))
def test_column_reduction_matches_one_denominator_at_a_time(seed):
    rng = np.random.default_rng(seed)
    C, r = int(rng.integers(2, 30)), int(rng.integers(1, 6))
    X = rng.integers(0, 3, (C, r))
    if r > 1 and seed % 3 == 0:
        X[:, -1] = 2 - X[:, 0]                     # an exact combination (with the intercept)
    if r > 2 and seed % 3 == 1:
        X[:, 1] = X[:, 0]                          # a duplicate
    got = independent_columns(X)
    assert got == _independent_columns_one_by_one(X)
    # what is kept spans what was given
    B = np.column_stack([np.ones(C)] + [X[:, k] for k in got]).astype(float)
    full = np.column_stack([np.ones(C), X]).astype(float)
    assert np.linalg.matrix_rank(B) == np.linalg.matrix_rank(full)


def _lr_truth(Xc, P, Q, W):
    """The least mean loss of a real logistic regression on the cells (many Newton steps; a value
    attained, so at least the infimum)."""
    from scipy.optimize import minimize
    U = np.column_stack([np.ones(len(Xc)), Xc.astype(float)])

    def f(th):
        z = U @ th
        return float(P @ np.logaddexp(0, -z) + Q @ np.logaddexp(0, z))
    best = math.inf
    for x0 in (np.zeros(U.shape[1]), np.full(U.shape[1], 0.3)):
        best = min(best, minimize(f, x0, method="BFGS", options={"gtol": 1e-10}).fun)
    return best / W


@pytest.mark.parametrize("seed", range(25))
def test_regression_bound_is_below_the_regression_from_any_start(seed):
    """B5 with its Newton steps warm-started anywhere (a good start, a poor one, a huge one) and
    cut to a few steps stays below the regression's least loss: the start only moves where the
    dual is read."""
    rng = np.random.default_rng(300 + seed)
    C, s = int(rng.integers(4, 20)), int(rng.integers(1, 4))
    Xc = np.unique(rng.integers(0, 3, (C, s)), axis=0)
    C = len(Xc)
    P = rng.integers(0, 6, C).astype(float)
    Q = rng.integers(0, 6, C).astype(float)
    Q[(P + Q) == 0] = 1
    W = float(P.sum() + Q.sum())
    truth = _lr_truth(Xc, P, Q, W)
    full, theta = lr_bound(Xc, P, Q, W)
    assert full <= truth + 1e-13
    for start in (theta, np.zeros(s + 1), rng.normal(0, 3, s + 1), np.full(s + 1, 40.0)):
        for iters in (0, 2, 12):
            b, _ = lr_bound(Xc, P, Q, W, iters=iters, start=start)
            assert b <= truth + 1e-13


def _prefix_truth(Xc, P, Q, W, prefix, t):
    """The least loss over every completion of the prefix (points of the columns after the first
    t + 1 from −3..3, every scale > 0 and intercept): brute force on the cells."""
    s = Xc.shape[1]
    a = np.linspace(0.0, 4.0, 81)
    best = math.inf
    for rest in itertools.product(range(-3, 4), repeat=s - t - 1):
        z0 = a[:, None] * (Xc @ np.r_[prefix, rest].astype(float))[None, :]   # scales × cells
        lo, hi = np.full(len(a), -30.0), np.full(len(a), 30.0)
        for _ in range(60):  # the best intercept at each scale by bisection on the derivative
            mid = 0.5 * (lo + hi)
            g = ((P + Q)[None, :] / (1 + np.exp(-(z0 + mid[:, None]))) - P[None, :]).sum(axis=1)
            lo, hi = np.where(g > 0, lo, mid), np.where(g > 0, mid, hi)
        z = z0 + (0.5 * (lo + hi))[:, None]
        best = min(best, float((P[None, :] * np.logaddexp(0, -z) + Q[None, :] * np.logaddexp(0, z)).sum(axis=1).min()) / W)
    return best


@pytest.mark.parametrize("seed", slow_params(range(12), slow=range(4, 12)))
def test_prefix_bound_with_separated_cells_first_is_below_every_completion(seed):
    """B7 computed without the separated cells first (and on all cells only where that fails) is
    still below the best completion of every prefix, found by brute force."""
    rng = np.random.default_rng(500 + seed)
    C = int(rng.integers(6, 14))
    base = np.unique(rng.integers(0, 2, (C, 3)), axis=0)
    Xc = np.c_[base, np.zeros(len(base), dtype=np.int64)]
    if seed % 2:
        Xc = np.vstack([Xc, [[1, 1, 0, 1]]])        # an item of a free column only one cell has
    C = len(Xc)
    P = rng.integers(1, 12, C).astype(float)
    Q = rng.integers(1, 12, C).astype(float)
    if seed % 2:
        P[-1], Q[-1] = 0.0, 3.0                     # ... all of one class: the free column separates it
    W = float(P.sum() + Q.sum())
    canon = np.array([[1, -2], [1, 1], [2, 1], [1, 0]])
    got = prefix_bounds(canon, Xc, P, Q, W, 1)
    assert np.isfinite(got).any()
    for k, prefix in enumerate(canon):
        if np.isfinite(got[k]):
            assert got[k] <= _prefix_truth(Xc, P, Q, W, prefix, 1) + 1e-12


# --- the hand-over's time rule ----------------------------------------------------------------------

def test_cell_choice_budget_caps_the_share_of_a_long_limit():
    from riskformula.logistic import _CellChoice
    fitted, fixed = _CellChoice(True, True, None), _CellChoice(False, True, None)
    # a fitted scale's listing may take all the time, past its checkpoint only while projected to finish
    assert fitted.budget(30.0) == pytest.approx((30.0, 24.0))
    assert fitted.budget(60.0) == pytest.approx((60.0, 48.0))
    assert fitted.budget(600.0) == pytest.approx((600.0, 48.0))
    assert fixed.budget(600.0) == pytest.approx((180.0, 18.0))
    assert fixed.budget(-1.0) == (0.0, 0.0)


@pytest.mark.parametrize("gave_up", [False, True])
def test_a_fitted_listing_stopped_by_the_limit_is_the_fit(gave_up, monkeypatch):
    # with a fitted scale the listing may use all the time: stopped by the limit (not handed over
    # by its projection), its incumbent and its bound over every scale > 0 are the fit's and the
    # tree does not start; handed over, the tree searches the grid as before
    import dataclasses
    import riskformula as rf
    from riskformula.solver.multiscale import MultiScaleSearch
    from riskformula.solver.support_search import SupportSearch
    solve, tree = SupportSearch.solve, MultiScaleSearch.solve
    trees = []

    def stopped(self, started=None):
        rep = solve(self, started)
        return dataclasses.replace(rep, status="time_limit", lower_bound=0.5 * rep.lower_bound,
                                   settings={**rep.settings, "gave_up": gave_up})

    def counted(self, *a, **k):
        trees.append(1)
        return tree(self, *a, **k)
    monkeypatch.setattr(SupportSearch, "solve", stopped)
    monkeypatch.setattr(MultiScaleSearch, "solve", counted)
    rng = np.random.default_rng(1)
    X = (rng.random((200, 3)) < 0.5).astype(float)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["y"] = (rng.random(200) < 1 / (1 + np.exp(-(2 * X[:, 0] - X[:, 1] - 0.5)))).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.OptimalityGapWarning)
        m = rf.risk_score("y ~ a + b + c", df, max_size=2, scale="fit", time_limit=30)
    assert bool(trees) is gave_up
    if not gave_up:
        assert m.solver.settings["engine"] == "cells" and m.status == "time_limit" and m.gap > 0.1


def test_past_the_checkpoint_the_search_goes_on_only_when_projected_to_finish():
    import time
    from riskformula.problem import LogisticLoss, RiskProblem
    from riskformula.solver.support_search import SupportSearch
    rng = np.random.default_rng(0)
    X = (rng.random((60, 4)) < 0.5).astype(float)
    y = (rng.random(60) < 0.5).astype(int)
    p = RiskProblem(LogisticLoss(X, y), [-2] * 4, [2] * 4, max_size=2)
    s = SupportSearch(p, True, time_limit=360.0, checkpoint=36.0)
    s._prepare()
    assert s.projection_after == pytest.approx(0.4 * 36.0)
    s._total = 1000.0
    s.t0 = time.perf_counter() - 40.0           # 40 s in: past the checkpoint
    s._done = 200.0                             # projects 200 s: within the 360 s, it goes on
    assert not s._projected_past()
    s._done = 100.0                             # projects 400 s: past its limit, it hands over
    assert s._projected_past()
    s.t0 = time.perf_counter() - 30.0           # before the checkpoint only the far projection counts
    assert not s._projected_past()
    s._done = 0.0                               # nothing measured yet: no projection
    s.t0 = time.perf_counter() - 100.0
    assert not s._projected_past()
    plain = SupportSearch(p, True, time_limit=360.0)
    plain._prepare()
    plain._total, plain._done = 1000.0, 100.0
    plain.t0 = time.perf_counter() - 150.0      # no checkpoint: 1 500 s projected is under 30 × 360 s
    assert not plain._projected_past()


@pytest.mark.parametrize("seed", range(3))
def test_cell_losses_are_the_two_softplus_sums(seed):
    """The one-exponential form of the cells' logistic loss is the sum P·log(1 + e^−z) + Q·log(1 + e^z)
    to rounding, for logits of every size (±1e-12 to ±800, where e^|z| overflows)."""
    rng = np.random.default_rng(seed)
    V, C = 7, 40
    Z = rng.normal(size=(V, C)) * 10.0 ** rng.integers(-12, 3, size=(V, C))
    Z[0, :4] = [800.0, -800.0, 0.0, -0.0]
    P, Q = rng.integers(0, 5, C).astype(float), rng.integers(0, 5, C).astype(float)
    plain = (P * np.logaddexp(0.0, -Z) + Q * np.logaddexp(0.0, Z)).sum(axis=1)
    np.testing.assert_allclose(cell_losses(Z, P, Q), plain, rtol=1e-13, atol=0)
