"""The first-order cut at the root: its projection, its Frank-Wolfe bound and its cut, each checked
against a second implementation (scipy's SLSQP, enumeration of the set's vertices), and the
search with it against brute force when Kelley's cuts stop early, the case where it fires."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

import riskformula as rf
from riskformula.problem import LogisticLoss, RiskProblem, SizeGroup
from riskformula.solver import branch_and_cut as bc
from riskformula.solver import root
from riskformula.solver.relaxation import RelaxedPoints, first_order_cut
from test_thresholds import brute_two_thresholds  # points −2…2, intercept −10…10, c0 1e-6

# two one-of groups (threshold-like), then two columns of their own; asymmetric and one-signed bounds
LOWER = np.array([-3.0, -3.0, -3.0, 0.0, -2.0, -5.0, -1.0])
UPPER = np.array([2.0, 2.0, 2.0, 4.0, 0.0, 5.0, 3.0])
GROUPS = [SizeGroup((0, 1, 2), max_used=1, name="a"), SizeGroup((3, 4), max_used=1, name="b")]
UNITS = [(0, 1, 2), (3, 4), (5,), (6,)]


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(80, 7))
    y = X[:, 0] - X[:, 3] + 0.5 * X[:, 5] + rng.normal(size=80) > 0
    return RiskProblem(LogisticLoss(X, y), LOWER, UPPER, max_size=2, groups=GROUPS, intercept_bounds=(-4, 4))


def _slsqp(objective, x0, max_size=2, intercept=(-4.0, 4.0)):
    """min objective(w) over the relaxed set written as linear constraints on w = p − q (p, q ≥ 0)."""
    d = len(LOWER)
    up, dn = np.maximum(UPPER, 0), np.maximum(-LOWER, 0)
    rp = np.where(up > 0, 1 / np.where(up > 0, up, 1), 0)
    rn = np.where(dn > 0, 1 / np.where(dn > 0, dn, 1), 0)

    def unpack(z):
        return np.concatenate([[z[0]], z[1:d + 1] - z[d + 1:]])

    def spend(z, cols):
        return sum(rp[j] * z[1 + j] + rn[j] * z[1 + d + j] for j in cols)

    cons = [{"type": "ineq", "fun": lambda z, c=cols: 1.0 - spend(z, c)} for cols in UNITS]
    cons.append({"type": "ineq", "fun": lambda z: max_size - sum(spend(z, c) for c in UNITS)})
    bounds = [intercept] + [(0, u) for u in up] + [(0, v) for v in dn]
    z0 = np.concatenate([[np.clip(x0[0], *intercept)], np.zeros(2 * d)])
    res = minimize(lambda z: objective(unpack(z)), z0, method="SLSQP", bounds=bounds, constraints=cons,
                   options={"ftol": 1e-12, "maxiter": 1000})
    return unpack(res.x), res.fun


def _in_set(w, S, tol=1e-9):
    x = w[1:]
    assert S.intercept[0] - tol <= w[0] <= S.intercept[1] + tol
    assert np.all(x <= np.maximum(UPPER, 0) + tol) and np.all(x >= np.minimum(LOWER, 0) - tol)
    spend = np.where(x > 0, x * S.rate_pos, -x * S.rate_neg)
    per_unit = [spend[list(c)].sum() for c in UNITS]
    assert max(per_unit) <= 1 + 1e-6 and sum(per_unit) <= 2 + 1e-6


@pytest.mark.parametrize("seed", range(6))
def test_projection_is_the_nearest_point(problem, seed):
    S = RelaxedPoints(problem)
    v = np.random.default_rng(seed).normal(scale=4, size=8)
    w = S.project(v)
    _in_set(w, S)
    ref, dist2 = _slsqp(lambda u: float(np.sum((u - v) ** 2)), v)
    assert np.sum((w - v) ** 2) <= dist2 + 1e-6
    assert np.allclose(w, ref, atol=1e-4)


def test_points_inside_the_set_do_not_move(problem):
    S = RelaxedPoints(problem)
    v = np.array([1.0, 0.5, 0.0, 0.0, 1.0, 0.0, -1.0, 0.0])  # spends 0.25 + 0.25 + 0.2 = 0.7
    assert np.allclose(S.project(v), v)


@pytest.mark.parametrize("seed", range(4))
def test_least_linear_is_the_best_vertex(problem, seed):
    S = RelaxedPoints(problem)
    g = np.random.default_rng(seed).normal(size=8)
    best = np.inf
    # vertices: an end of the intercept's range, and at most two units at one column's full bound
    for b in S.intercept:
        for units in itertools.chain([()], itertools.combinations(UNITS, 1), itertools.combinations(UNITS, 2)):
            for cols in itertools.product(*units):
                for ends in itertools.product(*[(LOWER[j], UPPER[j]) for j in cols]):
                    lam = np.zeros(8)
                    lam[0] = b
                    lam[1 + np.array(cols, int)] = ends
                    best = min(best, float(g @ lam))
    assert S.least_linear(g) == pytest.approx(best, abs=1e-12)


def test_bound_and_value_bracket_the_relaxation(problem):
    cut = first_order_cut(problem, rel_tol=1e-6, max_iterations=50_000)
    _in_set(cut.lam, RelaxedPoints(problem))
    _, least = _slsqp(problem.loss.value, cut.lam)
    assert cut.bound <= least + 1e-7
    assert cut.value >= least - 1e-7
    assert cut.value - cut.bound <= 1e-5


def test_the_cut_is_below_the_loss_at_integer_points(problem):
    cut = first_order_cut(problem)
    rng = np.random.default_rng(5)
    for _ in range(300):
        lam = np.zeros(8)
        lam[0] = rng.integers(-4, 5)
        for cols in [UNITS[k] for k in rng.choice(4, 2, replace=False)]:
            j = rng.choice(cols)
            lam[1 + j] = rng.integers(LOWER[j], UPPER[j] + 1)
        assert problem.loss.value(lam) >= cut.value + cut.gradient @ (lam - cut.lam) - 1e-12


def test_a_known_bound_above_the_loss_reached_stops_it(problem):
    reached = first_order_cut(problem).value
    assert first_order_cut(problem, known_bound=reached) is None


# --- in the search: Kelley's cuts stopped after two rounds, the first-order cut lifts the root ----

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_it_lifts_an_early_root_and_keeps_the_bound_below_the_optimum(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    n = 60
    X = rng.integers(0, 8, (n, 2)).astype(float)
    eta = 3.0 * ((X[:, 0] > 3) - 0.5) + 3.0 * ((X[:, 1] > 2) - 0.5) + rng.normal(size=n)
    df = pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": (eta > 0).astype(int)})
    kw = dict(coef_range=(-2, 2), intercept_range=(-10, 10), c0=1e-6, time_limit=30, engine="tree")  # the tree's root
    best = brute_two_thresholds(df.x1.to_numpy(), df.x2.to_numpy(), df.y.to_numpy())
    formula = "y ~ threshold(x1, k=1) + threshold(x2, k=1)"
    # Kelley's cuts stopped after two rounds, as the budget stops them on thousands of cut columns
    monkeypatch.setattr(bc.BranchAndCut, "_root_cutting_planes",
                        functools.partialmethod(bc.BranchAndCut._root_cutting_planes, max_rounds=2))
    with_cut = rf.risk_score(formula, df, **kw)
    monkeypatch.setattr(bc.BranchAndCut, "_first_order_root", lambda self, bound: -np.inf)
    without = rf.risk_score(formula, df, node_limit=1, **kw)
    assert with_cut.solver.root_bound > without.solver.root_bound + 0.05
    assert with_cut.solver.root_bound <= best + 1e-9
    assert with_cut.status == "optimal"
    assert with_cut.objective == pytest.approx(best, rel=1e-7)
    assert with_cut.lower_bound <= best + 1e-9


def test_designs_without_thresholds_do_not_run_it(monkeypatch):
    calls = []
    monkeypatch.setattr(root, "first_order_cut", lambda *a, **k: calls.append(1))
    rf.risk_score("Malignant ~ .", rf.load_dataset("mammo"), max_size=2, time_limit=10)
    assert calls == []


def test_bound_with_cut_leaves_the_pool_as_it_was(problem):
    from riskformula.problem.problem import loss_bounds
    from riskformula.solver.lp import NodeLP
    lp = NodeLP(problem, *loss_bounds(problem))
    lam = np.zeros(8)
    lp.add_cut(lam, *problem.loss.value_and_gradient(lam))
    before = [(r, tuple(i), tuple(v), k, s) for r, i, v, k, s in lp.cuts()]
    _, weak = lp.solve()[:2]
    cut = first_order_cut(problem)
    status, strong = lp.bound_with_cut(cut.lam, cut.value, cut.gradient)
    assert status == "optimal" and strong > weak + 1e-3
    assert [(r, tuple(i), tuple(v), k, s) for r, i, v, k, s in lp.cuts()] == before
    assert lp.h.getNumRow() == lp.n_base_rows + 1
    assert lp.solve()[1] == pytest.approx(weak)
