"""The polishing heuristic's move table: every single-coordinate move, priced in one pass over the
binary columns, must equal the objective recomputed from scratch for that move."""

from __future__ import annotations

import numpy as np
import pytest

from riskformula.problem import LogisticLoss, RiskProblem
from riskformula.solver.heuristics import _single_moves, _value_ranges, polish


def _mixed_problem(seed: int) -> RiskProblem:
    rng = np.random.default_rng(seed)
    n = 60
    binary = rng.integers(0, 2, (n, 5)).astype(float)
    other = rng.integers(0, 4, (n, 2)).astype(float)  # counts: not binary
    X = np.column_stack([binary, other])
    y = (rng.random(n) < 0.4).astype(float)
    # asymmetric and one-signed ranges, so the columns' grids of points differ
    lo = np.array([-3, 0, -1, 2, -5, -2, 1], float)
    hi = np.array([3, 4, 0, 4, -2, 2, 3], float)
    c0 = np.full(7, 0.01)
    return RiskProblem(LogisticLoss(X, y), lo, hi, c0=c0, max_size=4)


def _sparse_problem(seed: int, scale: float = 1.0) -> RiskProblem:
    """Binary, dense count and mostly-zero columns (a real-valued one and a count), so every pricing
    path of the move table runs."""
    rng = np.random.default_rng(seed)
    n = 80
    binary = rng.integers(0, 2, (n, 2)).astype(float)
    dense = rng.integers(0, 4, (n, 1)).astype(float)
    real = np.where(rng.random(n) < 0.2, rng.gamma(2.0, 0.7, n), 0.0)
    count = np.where(rng.random(n) < 0.3, rng.integers(1, 5, n), 0).astype(float)
    X = np.column_stack([binary, dense, real, count])
    y = (rng.random(n) < 0.3 + 0.4 * (real > 0)).astype(float)
    lo = np.array([-3, 0, -2, -4, 1], float)
    hi = np.array([3, 4, 2, 4, 3], float)
    return RiskProblem(LogisticLoss(X, y, scale=scale), lo, hi, c0=np.full(5, 0.01), max_size=4)


def test_sparse_columns_are_the_mostly_zero_non_binary_ones():
    L = _sparse_problem(0).loss
    sparse = L.sparse_columns()
    assert sorted(sparse) == [3, 4]
    X = L.Z[:, 1:]
    for j, (rows, x) in sparse.items():
        assert np.array_equal(rows, np.flatnonzero(X[:, j])) and np.array_equal(x, X[rows, j])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("build", [_mixed_problem, _sparse_problem, lambda seed: _sparse_problem(seed, 1.7)],
                         ids=["mixed", "sparse", "sparse-scale"])
def test_single_moves_price_every_move_exactly(seed, build):
    p = build(seed)
    rng = np.random.default_rng(100 + seed)
    lo, hi = _value_ranges(p)
    d = p.d
    lam = np.zeros(d + 1)
    lam[0] = -1.0
    for j in rng.choice(d, 3, replace=False):
        lam[1 + j] = rng.integers(lo[j], hi[j] + 1)
    allowed = rng.random(d) < 0.8
    s = p.loss.Z[:, 1:] @ lam[1:] + lam[0]
    cj, cv, obj = _single_moves(p, lam, s, allowed)
    expected = {}
    for j in np.flatnonzero(allowed):
        for v in np.arange(lo[j], hi[j] + 1):
            if v != lam[1 + j] and (v == 0 or p.coef_lower[j] <= v <= p.coef_upper[j]):
                trial = lam.copy()
                trial[1 + j] = v
                expected[(int(j), float(v))] = p.objective(trial)
    got = {(int(j), float(v)): o for j, v, o in zip(cj, cv, obj)}
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key


def test_value_ranges_always_include_zero():
    p = _mixed_problem(0)
    lo, hi = _value_ranges(p)
    assert np.all(lo <= 0) and np.all(hi >= 0)
    assert list(lo) == [-3, 0, -1, 0, -5, -2, 0] and list(hi) == [3, 4, 0, 4, 0, 2, 3]


@pytest.mark.parametrize("seed", range(20))
def test_polish_never_worsens_and_stays_in_bounds(seed):
    # ranges that exclude 0 (2…4, −5…−2, 1…3): a move must jump from 0 into the range, never
    # to the values in between
    p = _mixed_problem(seed)
    start = np.array([0, 1, 1, 0, 2, 0, 0, 0], float)
    lam, value = polish(p, start, swaps=True)
    assert value <= p.objective(start) + 1e-12
    assert value == pytest.approx(p.objective(lam), rel=1e-12)
    used = lam[1:] != 0
    assert np.all(lam[1:][used] >= p.coef_lower[used]) and np.all(lam[1:][used] <= p.coef_upper[used])
    assert p.model_size(lam) <= p.max_size
