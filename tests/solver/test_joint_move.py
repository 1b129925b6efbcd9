"""The refinement's joint moves (riskformula.solver.multiscale._joint_move): one or two points
moved by ±1 together with the score scale and a real intercept (for the partial likelihood, the
scale alone), against a brute-force oracle that fits every neighbour's scale (and intercept) on
its own."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

from riskformula._checks import SCALE_RANGE
from riskformula.problem import LogisticLoss
from riskformula.problem.cox import CoxLoss, cox_problem
from riskformula.problem.problem import RiskProblem
from riskformula.solver.multiscale import _joint_move
from riskformula.solver.report import SolverReport
from conftest import slow_params

C0 = 1e-6


def _data(seed):
    rng = np.random.default_rng(700 + seed)
    n, d = int(rng.integers(80, 300)), 3
    X = rng.integers(0, 3, (n, d)).astype(float)
    beta = rng.choice([-1.0, 1.0], d) * rng.uniform(0.4, 1.0, d)  # every item matters: an interior best scale
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ beta - (X @ beta).mean())))).astype(float)
    y[0], y[1] = 0, 1
    return X, y, beta


def _best_loss(s, y):
    """The least mean logistic loss of scores ``s`` over every scale > 0 and real intercept: the
    loss is convex in (1/scale, intercept/scale), minimized from several starts, 1/scale within the
    package's range of scales."""
    def f(v):
        z = v[0] * s + v[1]
        return float(np.mean(np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z))))
    best = np.inf
    for start in ([1.0, 0.0], [0.1, 0.0], [3.0, -1.0]):
        r = minimize(f, start, method="L-BFGS-B", bounds=[(1 / SCALE_RANGE[1], 1 / SCALE_RANGE[0]), (None, None)],
                     options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 2000})
        best = min(best, float(r.fun))
    return best


def _problem(loss, m, min_size):
    return RiskProblem(loss.with_scale(m), -5 * np.ones(3), 5 * np.ones(3), c0=C0, max_size=3, min_size=min_size)


@pytest.mark.parametrize("seed", slow_params(range(8), slow=range(4, 8)))
def test_a_joint_move_is_the_best_neighbour_at_its_own_scale(seed):
    X, y, beta = _data(seed)
    rng = np.random.default_rng(seed)
    loss = LogisticLoss(X, y).with_real_intercept(True)
    min_size = 3 if seed % 2 else 0  # odd seeds: no point may drop to 0
    m = float(rng.choice([0.5, 1.0, 2.0]))
    p = _problem(loss, m, min_size)
    lam = np.r_[0.0, np.sign(beta) * rng.integers(2, 5, 3)]  # points of the right signs, not the best ones
    # the report's score: these points at scale m with their best intercept there
    lam[0] = float(minimize_scalar(lambda b: p.loss.value(np.r_[b, lam[1:]]), bounds=(-60, 60), method="bounded",
                                   options={"xatol": 1e-10}).x)
    objective = p.objective(lam)
    report = SolverReport(status="time_limit", objective=objective, lower_bound=0.0, gap=1.0, time=0.0, nodes=0,
                          cuts=0, lp_solves=0, root_bound=0.0, solver="test", solution=tuple(lam), scale=m)
    # the oracle: every neighbour (one or two points by ±1, within −5..5, at least min_size used)
    best = np.inf
    for k in (1, 2):
        for idx in itertools.combinations(range(3), k):
            for signs in itertools.product((-1, 1), repeat=k):
                c = lam[1:].copy()
                c[list(idx)] += signs
                if np.any(np.abs(c) > 5) or np.count_nonzero(c) < max(min_size, 1):
                    continue
                best = min(best, _best_loss(X @ c, y) + C0 * np.count_nonzero(c))
    out = _joint_move(report, p, lambda s: _problem(loss, s, min_size))
    if best < objective - 1e-7:
        assert out is not None
        moved, p2 = out
        pts = np.asarray(moved.solution)[1:]
        diff = pts - lam[1:]
        assert np.all(np.abs(diff) <= 1) and 1 <= np.count_nonzero(diff) <= 2
        assert np.all(np.abs(pts) <= 5) and np.count_nonzero(pts) >= min_size
        # its objective as the card would compute it: loss at its own scale and intercept
        z = (moved.solution[0] + X @ pts) / moved.scale
        own = float(np.mean(np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z)))) + C0 * np.count_nonzero(pts)
        assert own == pytest.approx(moved.objective, rel=1e-10)
        assert p2.loss.scale == moved.scale
        assert moved.objective <= best + 1e-7  # the best neighbour, its scale and intercept found
        assert moved.lower_bound <= moved.objective
    else:  # no neighbour is better: any move returned is still an improvement
        assert out is None or out[0].objective < objective


def _cox_data(seed):
    rng = np.random.default_rng(900 + seed)
    n = int(rng.integers(60, 200))
    X = rng.integers(0, 3, (n, 3)).astype(float)
    beta = rng.choice([-1.0, 1.0], 3) * rng.uniform(0.3, 0.9, 3)
    time = rng.exponential(np.exp(-(X @ beta)))
    time = np.round(time * 20) / 20  # tied times: Efron's and Breslow's terms differ
    event = (rng.random(n) < 0.75).astype(int)
    return X, time, event, beta


@pytest.mark.parametrize("seed", range(6))
def test_a_joint_move_of_a_time_to_event_score_is_the_best_neighbour_at_its_own_scale(seed):
    X, time, event, beta = _cox_data(seed)
    ties = ("efron", "breslow")[seed % 2]
    loss = CoxLoss(X, time, event, ties=ties)
    rng = np.random.default_rng(seed)
    m = float(rng.choice([1.0, 2.0, 4.0]))

    def problem(scale):
        return cox_problem(loss.with_scale(scale), -5 * np.ones(3), 5 * np.ones(3), c0=C0, max_size=3)
    p = problem(m)
    lam = np.r_[0.0, np.sign(beta) * rng.integers(2, 5, 3)]
    objective = p.objective(lam)
    report = SolverReport(status="time_limit", objective=objective, lower_bound=0.0, gap=1.0, time=0.0, nodes=0,
                          cuts=0, lp_solves=0, root_bound=0.0, solver="test", solution=tuple(lam), scale=m)
    unit = loss.with_scale(1.0)
    best = np.inf
    for k in (1, 2):
        for idx in itertools.combinations(range(3), k):
            for signs in itertools.product((-1, 1), repeat=k):
                c = np.r_[0.0, lam[1:]]
                c[1 + np.array(idx)] += signs
                if np.any(np.abs(c) > 5) or not np.any(c[1:]):
                    continue
                r = minimize_scalar(lambda u: unit.value(np.r_[0.0, c[1:] * np.exp(u)]),
                                    bounds=(np.log(1 / SCALE_RANGE[1]), np.log(1 / SCALE_RANGE[0])),
                                    method="bounded", options={"xatol": 1e-10})
                best = min(best, float(r.fun) + C0 * np.count_nonzero(c[1:]))
    out = _joint_move(report, p, problem)
    if best < objective - 1e-7:
        assert out is not None
        moved, p2 = out
        pts = np.asarray(moved.solution)[1:]
        assert moved.solution[0] == 0.0 and np.all(np.abs(pts - lam[1:]) <= 1) and np.all(np.abs(pts) <= 5)
        # the card's own objective: the partial likelihood of score / scale
        own = unit.value(np.r_[0.0, pts / moved.scale]) + C0 * np.count_nonzero(pts)
        assert own == pytest.approx(moved.objective, rel=1e-10)
        assert moved.objective <= best + 1e-7
    else:
        assert out is None or out[0].objective < objective


def test_past_its_deadline_a_joint_move_fits_one_chunk_of_neighbours(monkeypatch):
    import riskformula.solver.multiscale as ms
    X, y, beta = _data(0)
    loss = LogisticLoss(X, y).with_real_intercept(True)
    p = _problem(loss, 1.0, 0)
    lam = np.r_[0.0, np.sign(beta) * 4]
    report = SolverReport(status="time_limit", objective=p.objective(lam), lower_bound=0.0, gap=1.0, time=0.0,
                          nodes=0, cuts=0, lp_solves=0, root_bound=0.0, solver="test", solution=tuple(lam), scale=1.0)
    seen = []
    from riskformula.solver import cells
    original = cells.calibrate_fitted

    def counting(S, *args, **kw):
        seen.append(len(S))
        return original(S, *args, **kw)
    monkeypatch.setattr(cells, "calibrate_fitted", counting)
    monkeypatch.setattr(ms, "JOINT_CHUNK", 2 * loss.Z.shape[0])  # two neighbours per chunk
    out = ms._joint_move(report, p, lambda s: _problem(loss, s, 0), deadline=0.0)
    assert seen == [2]  # the first chunk only
    assert out is None or out[0].objective < report.objective
    seen.clear()
    ms._joint_move(report, p, lambda s: _problem(loss, s, 0))
    assert sum(seen) > 2 and max(seen) == 2  # no deadline: every neighbour, two at a time
