"""Branch and bound over the points of a net-benefit score, against exhaustive enumeration."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.errors import OptimalityGapWarning
from riskformula.netbenefit import fit as nb_fit
from riskformula.netbenefit.exact_search import PointsBranchAndBound, points_space
from riskformula.netbenefit.grid import decision_grid
from riskformula.netbenefit.heuristic import NetBenefitScorer


def raw_rows(seed: int, real: bool):
    """Rows (not collapsed), outcomes, and their distinct rows with event / non-event counts."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(8, 30)), int(rng.integers(1, 4))
    X = rng.integers(0, 3, size=(n, d)).astype(float)
    if real:
        X = np.round(X * rng.uniform(0.3, 1.7, size=d) + rng.normal(0, 0.3, size=(n, d)), 2)
    y = (rng.random(n) < 0.4 + 0.1 * X[:, 0]).astype(int)
    y[:2] = [0, 1]
    U, inv = np.unique(X, axis=0, return_inverse=True)
    inv = inv.ravel()
    return X, y, U, np.bincount(inv, weights=y, minlength=len(U)), np.bincount(inv, weights=1 - y, minlength=len(U))


def enumerate_best(X, y, lo, hi, grid, c0, max_size, min_size):
    """Best Σ w_i max_T NB_i − c0·size over every points vector and every cut-off, row by row."""
    n = len(y)
    best = -math.inf
    for lam in itertools.product(*[range(int(a), int(b) + 1) for a, b in zip(lo, hi)]):
        lam = np.array(lam, float)
        size = np.count_nonzero(lam)
        if not min_size <= size <= max_size:
            continue
        s = np.round(X @ lam, 9)
        total = 0.0
        for p, w in zip(grid.p, grid.w):
            nb = [((s >= t) & (y == 1)).sum() / n - ((s >= t) & (y == 0)).sum() / n * p / (1 - p)
                  for t in np.concatenate([np.unique(s), [np.inf]])]
            total += w * max(nb)
        best = max(best, total - c0 * size)
    return best


@pytest.mark.parametrize("seed", range(24))
def test_branch_and_bound_equals_enumeration(seed):
    rng = np.random.default_rng(100 + seed)
    X, y, U, pos, neg = raw_rows(seed, real=seed % 2 == 1)
    d = X.shape[1]
    grid = decision_grid() if seed % 3 else decision_grid([0.2, 0.5], weights=[1.0, 3.0])
    lo, hi = rng.integers(-3, 1, d), rng.integers(0, 4, d)
    max_size = int(rng.integers(1, d + 1))
    min_size = int(rng.integers(0, max_size + 1))
    c0 = [0.0, 1e-3, 0.05][seed % 3]
    best = enumerate_best(X, y, lo, hi, grid, c0, max_size, min_size)
    search = PointsBranchAndBound(NetBenefitScorer(U, pos, neg, grid), lo, hi, c0, max_size, min_size)
    res = search.run(time_limit=30)
    if not math.isfinite(best):   # no points vector meets the size limits
        assert res.status == "infeasible"
        return
    assert res.status == "optimal"
    assert res.objective == pytest.approx(best, abs=1e-12)
    assert res.bound == res.objective
    pts = res.points
    assert np.all(pts >= np.minimum(lo, 0)) and np.all(pts <= np.maximum(hi, 0))
    assert min_size <= np.count_nonzero(pts) <= max_size
    assert search._objective(pts) == pytest.approx(best, abs=1e-12)   # the points achieve it


def all_points(lo, hi, max_size, min_size):
    P = np.array(list(itertools.product(*[range(int(a), int(b) + 1) for a, b in zip(lo, hi)])), float)
    k = np.count_nonzero(P, axis=1)
    return P[(k >= min_size) & (k <= max_size)]


@pytest.mark.parametrize("seed", range(12))
def test_branch_and_bound_prunes_only_what_cannot_win(seed):
    """Larger instances (thousands of vectors) where the bounds prune: every vector is scored
    (the scorer is checked against exhaustive cut-offs in test_net_benefit.py), and the search
    must return the best, also when started from a good but not optimal score."""
    rng = np.random.default_rng(200 + seed)
    n, d = 120, int(rng.integers(4, 6))
    X = rng.integers(0, 4, size=(n, d)).astype(float)
    if seed % 2:
        X = np.round(X * rng.uniform(0.5, 1.5, size=d) + rng.normal(0, 0.2, size=(n, d)), 2)
    beta = rng.normal(0, 0.8, size=d)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X - X.mean(axis=0)) @ beta))).astype(int)
    U, inv = np.unique(X, axis=0, return_inverse=True)
    inv = inv.ravel()
    pos, neg = np.bincount(inv, weights=y), np.bincount(inv, weights=1 - y)
    grid, c0 = decision_grid(), [0.0, 1e-3, 0.02][seed % 3]
    lo, hi = np.full(d, -2), np.full(d, 3)
    max_size, min_size = int(rng.integers(2, d + 1)), int(seed % 4 == 0)
    scorer = NetBenefitScorer(U, pos, neg, grid)
    P = all_points(lo, hi, max_size, min_size)
    vals = scorer.values(P @ U.T) - c0 * np.count_nonzero(P, axis=1)
    best = vals.max()
    good = P[np.argsort(vals)[-50]]   # the 50th best: prunes much, but not the optimum
    search = PointsBranchAndBound(scorer, lo, hi, c0, max_size, min_size)
    for start in (None, good):
        res = search.run(start, time_limit=60)
        assert res.status == "optimal"
        assert res.objective == pytest.approx(best, abs=1e-12)
        assert res.nodes < len(P)          # it did prune


@pytest.mark.parametrize("seed", range(8))
def test_node_bounds_are_never_below_the_best_completion(seed):
    """The bound of a partial score (some columns fixed) against every completion, scored."""
    rng = np.random.default_rng(300 + seed)
    n, d = 60, 5
    X = rng.integers(0, 4, size=(n, d)).astype(float)
    if seed % 2:
        X = np.round(X * rng.uniform(0.5, 1.5, size=d) - rng.uniform(0, 2, size=d), 2)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X[:, 0] - X[:, 1])))).astype(int)
    U, inv = np.unique(X, axis=0, return_inverse=True)
    inv = inv.ravel()
    grid, c0 = decision_grid(), 1e-3
    scorer = NetBenefitScorer(U, np.bincount(inv, weights=y), np.bincount(inv, weights=1 - y), grid)
    lo, hi = np.array([-3, -1, 0, -2, 0]), np.array([2, 3, 3, 0, 1])
    max_size, min_size = 2 + seed % 2, seed % 3 == 0
    search = PointsBranchAndBound(scorer, lo, hi, c0, max_size, int(min_size))
    P = all_points(lo, hi, max_size, int(min_size))
    vals = scorer.values(P @ U.T) - c0 * np.count_nonzero(P, axis=1)
    tight = 0
    for _ in range(40):
        cols = rng.choice(d, size=int(rng.integers(0, d)), replace=False)
        fixed = {int(j): int(rng.integers(lo[j], hi[j] + 1)) for j in cols}
        match = np.all([P[:, j] == v for j, v in fixed.items()], axis=0) if fixed else np.ones(len(P), bool)
        if not match.any():
            continue
        best = vals[match].max()
        bound = search.node_bound(fixed)
        assert bound >= best - 1e-12
        tight += bound <= best + 1e-12
    assert tight > 0   # some bounds are exact (all but zero-point columns fixed, say)


@pytest.mark.parametrize("seed", range(6))
def test_stopped_search_keeps_its_bound_above_the_optimum(seed):
    X, y, U, pos, neg = raw_rows(seed, real=False)
    d = X.shape[1]
    grid = decision_grid()
    best = enumerate_best(X, y, [-3] * d, [3] * d, grid, 1e-3, d, 0)
    search = PointsBranchAndBound(NetBenefitScorer(U, pos, neg, grid), [-3] * d, [3] * d, 1e-3, d)
    stopped = search.run(time_limit=0.0)   # stops before the root's children
    assert stopped.status == "time_limit"
    assert stopped.objective <= best + 1e-12 <= stopped.bound + 1e-12
    loose = search.run(time_limit=30, gap_tolerance=0.05)   # drops nodes within 5 %: bound stays valid
    assert loose.objective <= best + 1e-12 <= loose.bound + 1e-12
    assert loose.bound <= loose.objective + 0.05 * abs(loose.objective) + 1e-12


def test_points_space_counts_vectors():
    # two columns, points -1..2 (three nonzero values each), at most one nonzero: 1 + 3 + 3
    assert points_space([-1, -1], [2, 2], max_size=1) == 7
    assert points_space([-1, -1], [2, 2], max_size=2) == 16
    assert points_space([-1, -1], [2, 2], max_size=2, min_size=2) == 9
    assert points_space([0, 0, 0], [5, 5, 5], max_size=3) == 6 ** 3


def test_fit_certifies_real_valued_predictors_by_branch_and_bound():
    rng = np.random.default_rng(4)
    n = 40
    df = pd.DataFrame({"a": np.round(rng.normal(size=n), 3), "b": np.round(rng.normal(size=n) * np.sqrt(2), 3)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(df["a"] - 0.5 * df["b"])))).astype(int)
    grid, c0 = decision_grid(), 1e-3
    best = enumerate_best(df[["a", "b"]].to_numpy(), df["y"].to_numpy(), [-3, -3], [3, 3], grid, c0, 2, 0)
    m = rf.risk_score("y ~ a + b", df, objective="net_benefit", coef_range=(-3, 3), max_size=2, c0=c0,
                      time_limit=30)
    assert m.status == "optimal" and m.gap == 0
    assert m.solver.settings["exact_search_status"] == "optimal"
    assert "branch and bound" in m.solver.solver
    assert m.objective == pytest.approx(best, abs=1e-12)
    assert m.objective == pytest.approx(m.net_benefit - c0 * m.size, abs=1e-12)


def test_fit_uses_the_milp_when_the_points_space_is_large(monkeypatch):
    monkeypatch.setattr(nb_fit, "EXACT_SEARCH_SPACE", 10)
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.integers(0, 3, 40), "b": rng.integers(0, 3, 40)})
    df["y"] = (rng.random(40) < 0.2 + 0.2 * df["a"]).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        m = rf.risk_score("y ~ a + b", df, objective="net_benefit", coef_range=(-3, 3), max_size=2, c0=1e-3,
                          time_limit=30)
    assert "exact_search_status" not in m.solver.settings
    assert "branch and bound" not in m.solver.solver


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_threshold_terms_and_local_search_alone_skip_the_branch_and_bound():
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"a": rng.normal(size=60), "b": rng.integers(0, 3, 60)})
    df["y"] = (rng.random(60) < 1 / (1 + np.exp(-df["a"]))).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        m = rf.risk_score("y ~ threshold(a, k=1) + b", df, objective="net_benefit", coef_range=(-3, 3), max_size=2,
                          c0=1e-3, time_limit=10)
        alone = rf.risk_score("y ~ a + b", df, objective="net_benefit", coef_range=(-3, 3), max_size=2,
                              c0=1e-3, solver=None, time_limit=5)
    assert "exact_search_status" not in m.solver.settings     # one cut of a: a group, which the listing skips
    assert "exact_search_status" not in alone.solver.settings
