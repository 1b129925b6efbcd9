"""The Cox loss in the search over several score scales (the one the logistic fit uses): its
Hessian (for the real fits of the beam search) against statsmodels, and the certified best over
the scales (with scales the search adds) against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from statsmodels.duration.hazard_regression import PHReg

from riskformula.problem.cox import CoxLoss, cox_problem
from riskformula.solver.heuristics import real_beam_search
from riskformula.solver.options import SearchOptions
from riskformula.solver.multiscale import MultiScaleSearch
from conftest import slow_params


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_hessian_matches_statsmodels(ties):
    rng = np.random.default_rng(0)
    n, d = 60, 3
    X = rng.integers(0, 3, (n, d)).astype(float)
    t, e = np.ceil(rng.exponential(3, n)), rng.integers(0, 2, n)
    e[0] = 1
    for m in (1.0, 2.5):
        L = CoxLoss(X, t, e, ties=ties, scale=m)
        b = rng.normal(size=d)
        H = L.hessian_on(L.Z, np.r_[0.0, b])
        ref = -PHReg(t, X, status=e, ties=ties).hessian(b / m) / n / m ** 2
        assert np.allclose(H[1:, 1:], ref, atol=1e-13) and not H[0].any() and not H[:, 0].any()
        sub = L.hessian_on(L.Z[:, [0, 2]], np.r_[0.0, b[1]])  # a support of one column
        ref1 = -PHReg(t, X[:, [1]], status=e, ties=ties).hessian(np.array([b[1] / m])) / n / m ** 2
        assert np.allclose(sub[1:, 1:], ref1, atol=1e-13)


def _setup(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 70)), int(rng.integers(1, 4))
    X = (rng.random((n, d)) < 0.5).astype(float)
    t, e = np.ceil(rng.exponential(3, n)), rng.integers(0, 2, n)
    e[0] = 1
    loss = CoxLoss(X, t, e, ties=("efron", "breslow")[seed % 2])
    return loss, d


def _problem(loss, m, d, B=2):
    return cox_problem(loss.with_scale(m), -B * np.ones(d), B * np.ones(d), c0=0.001, max_size=2)


def _brute_force(p, d, B=2):
    return min(p.objective(np.r_[0.0, lam]) for lam in itertools.product(range(-B, B + 1), repeat=d)
               if p.complete(np.r_[0.0, lam]) is not None)


@pytest.mark.parametrize("seed", range(10))
def test_best_over_scales_certified(seed):
    loss, d = _setup(seed)
    problems = {m: _problem(loss, m, d) for m in (0.5, 1.0, 2.0)}
    # refinement adds a risk score's own best scale to the set when it beats the best objective
    search = MultiScaleSearch(problems, SearchOptions(time_limit=30, gap_tolerance=1e-9, absolute_gap_tolerance=1e-10),
                              add_scale=lambda m: _problem(loss, m, d))
    report = search.solve()
    scales = set(search.problems)
    best = min(_brute_force(_problem(loss, m, d), d) for m in scales)
    assert report.status == "optimal"
    assert report.lower_bound <= best + 1e-12  # over every scale of the set, the added ones included
    assert report.objective == pytest.approx(best, abs=1e-9)


def test_beam_search_on_the_cox_loss():
    loss, d = _setup(3)
    p = _problem(loss, 1.0, d)
    beam = real_beam_search(p)
    assert beam and all(lam[0] == 0.0 for lam in beam)
    # each real fit is at least as good as the empty model
    assert all(loss.value(lam) <= loss.value(np.zeros(d + 1)) + 1e-12 for lam in beam)


@pytest.mark.parametrize("seed", slow_params(range(6), slow=range(2, 6)))
def test_the_best_score_moved_to_its_own_scale(seed):
    # refined_scale: the points kept, the partial likelihood at their own scale (no intercept);
    # never worse than the search's, the bound kept for the scales searched, none of a fine grid better
    from riskformula.solver.multiscale import refined_scale, searched_scales
    loss, d = _setup(seed)
    problems = {m: _problem(loss, m, d) for m in (0.5, 1.0, 2.0)}
    search = MultiScaleSearch(problems, SearchOptions(time_limit=30, gap_tolerance=1e-9, absolute_gap_tolerance=1e-10))
    report = search.solve()
    refined, p = refined_scale(report, dict(search.problems), lambda m: _problem(loss, m, d))
    lam = np.asarray(refined.solution, dtype=float)
    assert np.array_equal(lam, np.asarray(report.solution, dtype=float))  # the same points
    assert refined.objective <= report.objective and refined.lower_bound == min(report.lower_bound, refined.objective)
    assert p.objective(lam) == pytest.approx(refined.objective, rel=1e-12) and p.loss.scale == refined.scale
    if not np.any(lam[1:]):
        assert refined is report  # the empty score has no scale to choose
        return
    grid = np.exp(np.linspace(np.log(0.01), np.log(100), 4000))
    assert refined.objective <= min(_problem(loss, m, d).objective(lam) for m in grid) + 1e-12
    if refined is not report:
        assert refined.settings["refined_from"] == report.scale
        assert searched_scales((0.5, 1.0, 2.0), {**search.problems, refined.scale: p}, refined) == (0.5, 1.0, 2.0)


def test_a_fit_with_rows_on_its_cuts_is_moved_to_its_own_scale():
    # threshold(x, k=1) writes a row (at most one cut): the rows hold at the refined point, which
    # the fit takes; the certificate's scales are the grid and the added ones, not the card's
    import pandas as pd
    import riskformula as rf
    rng = np.random.default_rng(7)
    n = 120
    x, z = rng.integers(0, 8, n).astype(float), rng.integers(0, 2, n).astype(float)
    t = np.ceil(rng.exponential(10 * np.exp(-0.5 * (x > 4) - 0.4 * z)))
    e = (rng.random(n) < 0.8).astype(int)
    m = rf.risk_score("Surv(t, e) ~ threshold(x, k=1) + z", pd.DataFrame({"t": t, "e": e, "x": x, "z": z}),
                      max_size=2, time_limit=20, engine="tree")  # the branch-and-cut over its grid of scales
    found_at = m.solver.settings["refined_from"]
    assert found_at in m.settings.scales and m.scale not in m.settings.scales
    assert m.objective < m.solver.settings["unrefined_objective"] and m.lower_bound <= m.objective
    assert (m.score_card()["variable"] == "x").sum() <= 1  # still one cut of x at most
