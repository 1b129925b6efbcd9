"""B8 by blocks (``SupportSearch._block_pairs``): at a node two size units short of the limit with
real-valued columns, the logistic regression on the node's columns and two blocks of its list
bounds every support of the node inside them.  Checked two ways: the search with blocks of 1, 2
and 3 reaches the brute-force optimum with a valid lower bound; and each support a pair of blocks
rules out (its own or a leaf) has, by brute force over its point vectors, a loss at or above the
bound that ruled it out.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from riskformula.problem import LogisticLoss, RiskProblem
from riskformula.solver.support_search import SupportSearch

from test_support_search import models_of, oracle_values
from conftest import slow_params


@functools.lru_cache(maxsize=None)
def _problem(seed: int, mode: str = "fit"):
    """Six or seven real-valued columns (a few values repeated, one on a large scale), points in
    [−1, 1] (or [−2, 2] on the first), at most three of them (four of six)."""
    rng = np.random.default_rng(9100 + seed)
    n, d = int(rng.integers(40, 110)), int(rng.integers(6, 8))
    X = np.column_stack([np.round(rng.normal(0, 1, n), int(rng.integers(1, 3))) for _ in range(d - 1)]
                        + [np.round(rng.gamma(2.0, 150.0, n), 1)])
    beta = rng.normal(0, 0.8, d) * (rng.random(d) < 0.6)
    beta[-1] *= 0.004
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ beta) - 0.3))).astype(int)
    y[0], y[1] = 0, 1
    lo, hi = [-1] * d, [1] * d
    lo[0], hi[0] = -2, 2
    c0 = float(rng.choice([0.0, 1e-6, 0.01]))
    max_size = int(rng.integers(3, 5)) if d == 6 else 3
    scale = 1.0 if mode == "fit" else 0.5
    loss = LogisticLoss(X, y, scale=scale).with_real_intercept(True)
    p = RiskProblem(loss, np.array(lo, float), np.array(hi, float), c0=c0, max_size=max_size)
    models = models_of(lo, hi, max_size)
    vals = oracle_values(X, y, models, mode, scale) + c0 * np.count_nonzero(models, axis=1)
    return p, X, y, models, vals, c0


@pytest.mark.parametrize("seed", slow_params(range(3), slow=(1, 2)))  # 1 and 2 at blocks of 1: 18 s
@pytest.mark.parametrize("block_size", [1, 2])
def test_search_with_blocks_is_the_brute_force_optimum(seed, block_size):
    check_search(seed, block_size)


@pytest.mark.parametrize("seed", slow_params([0, 1], slow=(1,)))  # 1: 18 s
def test_search_with_blocks_in_numpy_is_the_brute_force_optimum(seed, monkeypatch):
    # the pairs' regressions without the compiled loops (numba not installed)
    from riskformula.solver import kernels
    monkeypatch.setattr(kernels, "compiled", lambda: None)
    check_search(seed, 1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3, 40))
@pytest.mark.parametrize("block_size", [1, 2, 3])
def test_search_with_blocks_is_the_brute_force_optimum_more(seed, block_size):
    check_search(seed, block_size)


def check_search(seed, block_size):
    mode = "fit" if seed % 4 else "real"
    p, X, y, models, vals, c0 = _problem(seed, mode)
    s = SupportSearch(p, mode == "fit", time_limit=60, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12,
                      beam=bool(seed % 2))
    s.block_size = block_size
    rep = s.solve()
    truth = float(vals.min())
    assert rep.status == "optimal"
    assert rep.lower_bound <= truth + 1e-12, (seed, rep.lower_bound, truth)
    lam = np.asarray(rep.solution)
    z = (lam[0] + X @ lam[1:]) / rep.scale
    own = float(np.mean(np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z)))) + c0 * np.count_nonzero(lam[1:])
    assert own <= truth + 1e-7
    if block_size == 1:
        assert s.stats["block_pairs"] > 0  # the blocks were used (longer blocks need longer lists)


@pytest.mark.parametrize("seed", slow_params(range(3), slow=(1, 2)))  # 1 and 2: 20 s
@pytest.mark.parametrize("quantile", [0.5, pytest.param(0.25, marks=pytest.mark.slow)])  # 0.25: 27 s
def test_block_pairs_rule_out_only_what_they_bound(seed, quantile):
    check_rule_out(seed, quantile, 1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3, 40))
@pytest.mark.parametrize("quantile", [0.1, 0.25, 0.5])
@pytest.mark.parametrize("block_size", [1, 2])
def test_block_pairs_rule_out_only_what_they_bound_more(seed, quantile, block_size):
    check_rule_out(seed, quantile, block_size, need=False)


def check_rule_out(seed, quantile, block_size, need=True):
    """The node is each support two columns short of the limit, with the rest of the columns as its
    list, and the prune level is put at a quantile of its supports' best values, so that some pairs
    prune and some do not: no support below the level may be ruled out."""
    p, X, y, models, vals, c0 = _problem(seed)
    d, K = X.shape[1], p.max_size
    s = SupportSearch(p, True, time_limit=60, beam=False)
    s.block_size = block_size
    s.t0 = 0.0
    s._prepare()
    order = s._order
    nz = models != 0
    checked = 0
    for first in range(d):
        cols = (order[first],) if K == 3 else (order[first], order[(first + 1) % d])
        if len(set(cols)) < len(cols):
            continue
        full = np.array([q for q in range(d) if order[q] not in cols], dtype=np.intp)
        if len(full) <= 2 * block_size:
            continue
        # the node's supports: its columns and one or two of its list's
        below = nz[:, list(cols)].all(axis=1) & (nz.sum(axis=1) > len(cols))
        best = {}
        for m, v in zip(np.flatnonzero(below), vals[below]):
            key = tuple(sorted(np.flatnonzero(nz[m]).tolist()))
            best[key] = min(best.get(key, np.inf), float(v))
        level = float(np.quantile(list(best.values()), quantile))
        s.best = level  # the prune level sits just below it (gap tolerances)
        s.discarded = np.inf
        child = s._block_pairs(cols, full, len(full) - 1, float(sum(s.c0[j] for j in cols)))
        for k in range(len(full)):
            jk = order[full[k]]
            ruled, keep = child(k)
            if ruled is not None:
                key = tuple(sorted(cols + (jk,)))
                assert ruled >= s._prune_level()
                assert best[key] >= ruled - 1e-12, (seed, key, best[key], ruled)
                assert best[key] >= s._prune_level()
                checked += 1
            for i, kept in zip(range(k + 1, len(full)), keep):
                if not kept:
                    key = tuple(sorted(cols + (jk, order[full[i]])))
                    assert best[key] >= s._prune_level(), (seed, key, best[key], s._prune_level())
                    assert best[key] >= s.discarded - 1e-12
                    checked += 1
    assert checked > 0 or not need
