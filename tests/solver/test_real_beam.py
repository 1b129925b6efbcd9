"""The sparse beam search on real points (Liu et al., 2022) that seeds the fitted-scale search:
its refits are the bounded logistic fits scipy finds, a beam wide enough to keep every support
finds the brute-force best support, and its supports respect the bounds, the size limit and the
groups; the multi-scale search rays its supports."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from riskformula.solver.options import SearchOptions
from riskformula.problem import LogisticLoss, RiskProblem
from riskformula.problem.problem import SizeGroup
from riskformula.solver.heuristics import GRID_QUANTILES, quantile_columns, real_beam_search, real_fit, support_bounds
from riskformula.solver.multiscale import MultiScaleSearch


def _problem(seed: int, scale: float = 1.0, lo=None, hi=None, groups=(), max_size: int = 3) -> RiskProblem:
    rng = np.random.default_rng(seed)
    n, d = 120, 7
    X = rng.integers(0, 2, (n, d)).astype(float)
    X[:, -1] = rng.normal(size=n)  # one real-valued column
    z = X @ rng.normal(0, 1.2, d) - 0.5
    y = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(float)
    lo = np.full(d, -3.0) if lo is None else np.asarray(lo, float)
    hi = np.full(d, 3.0) if hi is None else np.asarray(hi, float)
    return RiskProblem(LogisticLoss(X, y, scale=scale), lo, hi, c0=np.full(d, 1e-6), max_size=max_size,
                       groups=list(groups))


def _scipy_fit(p, S):
    """The same bounded fit by L-BFGS-B on the full rows, a second implementation."""
    lo, hi = support_bounds(p, S)
    cols = np.concatenate([[0], 1 + np.asarray(S, int)])

    def f(beta):
        lam = np.zeros(p.d + 1)
        lam[cols] = beta
        v, g = p.loss.value_and_gradient(lam)
        return v, g[cols]

    res = minimize(f, np.zeros(len(cols)), jac=True, method="L-BFGS-B", bounds=list(zip(lo, hi)),
                   options={"ftol": 1e-14, "gtol": 1e-10, "maxiter": 2000})
    return res.fun


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scale", [1.0, 2.5])
def test_real_fit_is_the_bounded_logistic_fit(seed, scale):
    # tight, one-signed bounds, so some of them bind
    p = _problem(seed, scale, lo=[-1, 0, -3, 0, -0.5, -3, -3], hi=[1, 2, 0, 3, 0.5, 3, 3])
    for S in [(0, 1, 6), (2, 3, 4), (1, 4, 5)]:
        lo, hi = support_bounds(p, S)
        beta = real_fit(p.loss, S, np.zeros(p.d + 1), lo, hi)
        assert np.all(beta >= lo - 1e-12) and np.all(beta <= hi + 1e-12)
        lam = np.zeros(p.d + 1)
        lam[np.concatenate([[0], 1 + np.asarray(S)])] = beta
        assert p.loss.value(lam) == pytest.approx(_scipy_fit(p, S), abs=1e-7)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scale", [1.0, 2.5])
def test_a_beam_that_keeps_every_support_finds_the_best_one(seed, scale):
    p = _problem(seed, scale)
    beam = real_beam_search(p, width=1000, expand=p.d)
    best = min(_scipy_fit(p, S) for S in itertools.combinations(range(p.d), p.max_size))
    assert p.loss.value(beam[0]) == pytest.approx(best, abs=1e-7)
    # the lowest loss first, and every support of the size limit kept
    values = [p.loss.value(lam) for lam in beam]
    assert values == sorted(values) and len(beam) == len(list(itertools.combinations(range(p.d), p.max_size)))


def test_the_beam_finds_the_pair_that_greedy_selection_misses():
    # x0 = x1 or x2 is the best single column, but the outcome adds x1 and x2: forward selection
    # keeps x0, a beam of two keeps x1 beside it and reaches the pair
    rng = np.random.default_rng(0)
    n = 400
    x1, x2 = (rng.random(n) < 0.3).astype(float), (rng.random(n) < 0.3).astype(float)
    X = np.column_stack([np.maximum(x1, x2), x1, x2, rng.integers(0, 2, (n, 3))]).astype(float)
    y = (rng.random(n) < 1 / (1 + np.exp(-(3 * x1 + 3 * x2 - 2)))).astype(float)
    p = RiskProblem(LogisticLoss(X, y), np.full(6, -5.0), np.full(6, 5.0), c0=np.full(6, 1e-6), max_size=2)
    best = min(_scipy_fit(p, S) for S in itertools.combinations(range(6), 2))
    greedy = real_beam_search(p, width=1, expand=6)[0]
    assert tuple(np.flatnonzero(greedy[1:])) == (0, 1) and p.loss.value(greedy) > best + 0.01
    beam = real_beam_search(p)[0]
    assert tuple(np.flatnonzero(beam[1:])) == (1, 2)
    assert p.loss.value(beam) == pytest.approx(best, abs=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_beam_supports_respect_bounds_size_and_groups(seed):
    lo = np.array([0, -3, -3, -3, 1, -3, -2], float)  # column 0 positive only, column 4 in 1..3
    hi = np.array([3, 0, 3, 3, 3, 3, 2], float)
    groups = [SizeGroup((1, 2, 3), max_used=1)]  # like a threshold's cut positions: one at most
    p = _problem(seed, lo=lo, hi=hi, groups=groups, max_size=3)
    beam = real_beam_search(p, width=50, expand=p.d)
    assert beam
    for lam in beam:
        pts = lam[1:]
        assert np.all(pts >= np.minimum(lo, 0) - 1e-12) and np.all(pts <= np.maximum(hi, 0) + 1e-12)
        assert p.model_size(lam) <= p.max_size
        assert np.count_nonzero(pts[[1, 2, 3]]) <= 1


def test_the_multiscale_search_rays_the_beams_supports():
    problems = {m: _problem(0, m) for m in (0.5, 1.0, 2.0)}
    search = MultiScaleSearch(problems, SearchOptions(time_limit=30, node_limit=5))
    report = search.solve()
    beam = real_beam_search(problems[0.5])
    assert tuple(np.flatnonzero(beam[0][1:])) in search._rays
    assert report.objective <= min(p.full_objective(lam) for m, p in problems.items()
                                   for at, lam in search._pool if at == m) + 1e-12


def _cut_problem(seed: int) -> RiskProblem:
    """Two variables with 40 and 12 candidate cuts each (columns 1[x ≤ c]) and one 0/1 column."""
    rng = np.random.default_rng(seed)
    n = 300
    x1, x2 = rng.normal(size=n), rng.integers(0, 13, n)
    c1 = np.sort(rng.choice(np.unique(x1)[:-1], 40, replace=False))
    c2 = np.arange(12)
    X = np.column_stack([(x1[:, None] <= c1).astype(float), (x2[:, None] <= c2).astype(float),
                         rng.integers(0, 2, n)])
    y = (rng.random(n) < 1 / (1 + np.exp(-(1.5 * (x1 > 0.3) - 0.2 * x2 + 1)))).astype(float)
    d = X.shape[1]
    p = RiskProblem(LogisticLoss(X, y), np.full(d, -3.0), np.full(d, 3.0), c0=np.full(d, 1e-6), max_size=3)
    p.cut_families = [tuple(range(40)), tuple(range(40, 52))]
    return p, x1, x2, c1, c2


@pytest.mark.parametrize("seed", range(3))
def test_the_quantile_grid_keeps_the_cut_nearest_each_quantile(seed):
    p, x1, x2, c1, c2 = _cut_problem(seed)
    keep = quantile_columns(p)
    assert keep[-1] and keep.sum() <= 1 + 2 * len(GRID_QUANTILES)
    for cols, x, cuts in ((np.arange(40), x1, c1), (np.arange(40, 52), x2, c2)):
        share = (x[:, None] <= cuts).mean(axis=0)  # the share of rows at or below each cut
        want = {int(cols[np.argmin(np.abs(share - q))]) for q in GRID_QUANTILES}
        assert set(np.flatnonzero(keep[cols]) + cols[0]) == want
    beam = real_beam_search(p, columns=keep)
    assert beam and all(set(np.flatnonzero(lam[1:])) <= set(np.flatnonzero(keep)) for lam in beam)
    # a variable with no more cuts than quantiles has no grid to choose: nothing is masked
    p.cut_families = [(0, 1, 2)]
    assert quantile_columns(p) is None
