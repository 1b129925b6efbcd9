"""The refinement's scale ladder (riskformula.solver.multiscale._scale_ladder): a score's points
polished at nearby scales and moved to their own, against an oracle that fits each polished
score's scale and intercept on its own (scipy, not the package's own-scale search)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

from riskformula._checks import SCALE_RANGE
from riskformula.problem import LogisticLoss
from riskformula.problem.problem import RiskProblem
from riskformula.solver.heuristics import polish
from riskformula.solver.multiscale import LADDER, _own_scale_of, _scale_ladder, _with_objective
from riskformula.solver.report import SolverReport

C0 = 1e-6
D = 6


def _data(seed):
    rng = np.random.default_rng(1300 + seed)
    n = int(rng.integers(150, 400))
    X = rng.integers(0, 2, (n, D)).astype(float)
    beta = rng.normal(0, 1.5, D)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ beta - (X @ beta).mean())))).astype(float)
    y[0], y[1] = 0, 1
    return X, y


def _mean_loss(z, y):
    return float(np.mean(np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z))))


def _best_loss(s, y):
    """The least mean logistic loss of scores ``s`` over every scale in the package's range and real
    intercept (convex in (1/scale, intercept/scale); several starts)."""
    best = np.inf
    for start in ([1.0, 0.0], [0.1, 0.0], [3.0, -1.0]):
        r = minimize(lambda v: _mean_loss(v[0] * s + v[1], y), start, method="L-BFGS-B",
                     bounds=[(1 / SCALE_RANGE[1], 1 / SCALE_RANGE[0]), (None, None)],
                     options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 2000})
        best = min(best, float(r.fun))
    return best


def _problem(loss, m):
    return RiskProblem(loss.with_scale(m), -4 * np.ones(D), 4 * np.ones(D), c0=C0, max_size=4)


def _start(X, y, loss, seed):
    """A score of up to four items at scale m with its best intercept there (its points not the best ones)."""
    rng = np.random.default_rng(seed)
    m = float(rng.choice([0.5, 1.0, 2.0]))
    p = _problem(loss, m)
    lam = np.zeros(D + 1)
    used = rng.choice(D, 4, replace=False)
    lam[1 + used] = rng.integers(-4, 5, 4)
    lam[0] = float(minimize_scalar(lambda b: p.loss.value(np.r_[b, lam[1:]]), bounds=(-80, 80), method="bounded",
                                   options={"xatol": 1e-10}).x)
    objective = p.objective(lam)
    report = SolverReport(status="time_limit", objective=objective, lower_bound=0.0, gap=1.0, time=0.0, nodes=0,
                          cuts=0, lp_solves=0, root_bound=0.0, solver="test", solution=tuple(lam), scale=m)
    return report, p, lam, m


@pytest.mark.parametrize("seed", range(12))
def test_the_ladder_is_at_least_as_good_as_every_rung_at_its_own_scale(seed):
    X, y = _data(seed)
    loss = LogisticLoss(X, y).with_real_intercept(True)
    report, p, lam, m = _start(X, y, loss, seed)
    # the oracle: at each rung m·r the points polished from the same logit intercept, then the
    # polished points' least loss over every scale and intercept (scipy)
    oracle = report.objective
    for r in LADDER:
        q = _problem(loss, m * r)
        start = lam.copy()
        start[0] = lam[0] * r
        moved, _ = polish(q, start)
        pts = moved[1:]
        oracle = min(oracle, _best_loss(X @ pts, y) + C0 * np.count_nonzero(pts))
    out, p_out = _scale_ladder(report, p, lambda s: _problem(loss, s), deadline=np.inf)
    pts = np.asarray(out.solution)[1:]
    assert np.all(np.abs(pts) <= 4) and np.count_nonzero(pts) <= 4 and np.all(pts == np.round(pts))
    # its objective as the card computes it: the loss at its own scale and intercept
    own = _mean_loss((out.solution[0] + X @ pts) / out.scale, y) + C0 * np.count_nonzero(pts)
    assert own == pytest.approx(out.objective, rel=1e-10)
    assert p_out.loss.scale == out.scale
    assert out.objective <= report.objective
    assert out.objective <= oracle + 1e-7
    assert out.lower_bound <= out.objective


def test_the_ladder_finds_what_no_move_at_the_scores_own_scale_does():
    """Over the seeds, some start polished (with swaps) at its own scale and moved to its own
    scale again is improved by the ladder: the ladder is not a no-op behind the refinement's moves."""
    improved = 0
    for seed in range(12):
        X, y = _data(seed)
        loss = LogisticLoss(X, y).with_real_intercept(True)
        report, p, lam, m = _start(X, y, loss, seed)
        while True:  # the refinement without the ladder: own scale, polish there, until neither moves it
            report, p = _own_scale_of(report, p, lambda s: _problem(loss, s)) or (report, p)
            polished, objective = polish(p, np.asarray(report.solution), swaps=True)
            if not objective < report.objective - 1e-12:
                break
            report = _with_objective(report, polished, objective)
        out, _ = _scale_ladder(report, p, lambda s: _problem(loss, s), deadline=np.inf)
        improved += out.objective < report.objective - 1e-7
    assert improved >= 6


def test_past_its_deadline_the_ladder_returns_the_score_unchanged():
    X, y = _data(0)
    loss = LogisticLoss(X, y).with_real_intercept(True)
    report, p, lam, m = _start(X, y, loss, 0)
    out, p_out = _scale_ladder(report, p, lambda s: _problem(loss, s), deadline=0.0)
    assert out is report and p_out is p


@pytest.mark.parametrize("edge", [0, 1])
def test_the_ladder_tries_no_scale_outside_the_range_a_user_may_ask_for(edge):
    # a score within a factor 2 of the least or greatest scale: the rungs beyond it are skipped
    X, y = _data(1)
    loss = LogisticLoss(X, y).with_real_intercept(True)
    report, p, lam, m = _start(X, y, loss, 1)
    m = SCALE_RANGE[0] * 1.3 if edge == 0 else SCALE_RANGE[1] / 1.3
    p = _problem(loss, m)
    report = SolverReport(status="time_limit", objective=p.objective(lam), lower_bound=0.0, gap=1.0, time=0.0,
                          nodes=0, cuts=0, lp_solves=0, root_bound=0.0, solver="test", solution=tuple(lam), scale=m)
    asked = []

    def problem_at(s):
        asked.append(s)
        return _problem(loss, s)
    out, _ = _scale_ladder(report, p, problem_at, deadline=np.inf)
    assert asked and all(SCALE_RANGE[0] <= s <= SCALE_RANGE[1] for s in asked)
    assert SCALE_RANGE[0] <= out.scale <= SCALE_RANGE[1]
