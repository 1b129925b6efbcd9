"""The branch-and-cut, called directly on the Cox partial likelihood, certifies the optimum: on
random small problems its solution and lower bound are checked against every integer point in the
box (brute force), at several fixed score scales, with size limits and a one-of-several group
(the shape of a threshold's candidate cuts)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from riskformula.problem import SizeGroup
from riskformula.problem.cox import CoxLoss, cox_problem
from riskformula.solver.branch_and_cut import BranchAndCut
from riskformula.solver.options import SearchOptions


def _problem(seed):
    rng = np.random.default_rng(seed)
    n, d, B = int(rng.integers(15, 60)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    X = (rng.random((n, d)) < 0.5).astype(float)
    if seed % 3 == 0:
        X[:, 0] = rng.integers(0, 4, n)  # a count column
    beta = rng.normal(0, 1, d)
    t = np.round(rng.exponential(np.exp(-X @ beta)), 1 if seed % 2 else 0) + (seed % 2 == 0)  # ties when rounded
    e = (rng.random(n) < 0.7).astype(int)
    e[0] = 1
    w = rng.integers(1, 3, n).astype(float) if seed % 4 == 1 else None
    ties = "efron" if seed % 2 else "breslow"
    scale = (1.0, 0.5, 2.0)[seed % 3]
    c0 = (0.0, 0.01, 0.003)[seed % 3]
    max_size = int(rng.integers(1, d + 1))
    groups = [SizeGroup(cols=(0, 1), max_used=1, name="g")] if d == 3 and seed % 5 == 0 else []
    loss = CoxLoss(X, t, e, weights=w, ties=ties, scale=scale)
    return loss, cox_problem(loss, -B * np.ones(d), B * np.ones(d), c0=c0, max_size=max_size, groups=groups), B


def _brute_force(loss, p, B):
    best = np.inf
    for lam in itertools.product(range(-B, B + 1), repeat=p.d):
        lam = np.r_[0.0, lam]
        if p.complete(lam) is None:  # size limit or group
            continue
        best = min(best, p.objective(lam))
    return best


@pytest.mark.parametrize("seed", range(40))
def test_certified_optimum_matches_brute_force(seed):
    loss, p, B = _problem(seed)
    report = BranchAndCut(p, SearchOptions(time_limit=60, gap_tolerance=1e-9, absolute_gap_tolerance=1e-10)).solve()
    best = _brute_force(loss, p, B)
    assert report.status == "optimal"
    assert report.lower_bound <= best + 1e-12  # the certificate never claims more than is true
    assert report.objective == pytest.approx(best, abs=1e-9)
    lam = np.asarray(report.solution)
    assert lam[0] == 0.0 and p.objective(lam) == pytest.approx(report.objective, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_best_over_scales(seed):
    """Over a grid of scales, the best certified objective is the brute-force best over the grid."""
    loss, p0, B = _problem(100 + seed)
    found, truth = [], []
    for m in (0.5, 1.0, 2.0, 4.0):
        L = loss.with_scale(m)
        p = cox_problem(L, p0.coef_lower, p0.coef_upper, c0=p0.c0, max_size=p0.max_size)
        report = BranchAndCut(p, SearchOptions(time_limit=60, gap_tolerance=1e-9, absolute_gap_tolerance=1e-10)).solve()
        assert report.status == "optimal"
        found.append(report.objective)
        truth.append(_brute_force(L, p, B))
    assert min(found) == pytest.approx(min(truth), abs=1e-9)
    assert int(np.argmin(found)) == int(np.argmin(truth)) or abs(min(found) - sorted(truth)[1]) < 1e-9
