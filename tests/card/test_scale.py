"""The score scale: risk = 1 / (1 + exp(−(b + score)/m)), m fixed or chosen among a finite set.

The oracle enumerates every point vector within the bounds and size limit, every integer
intercept of a range that provably holds the best one, every cut position of a threshold term
and every scale of the set, and shares no code with the package.  The bound must never be above
the true optimum — also when the search stops at a node or time limit, and for every scale's
own row of the certificate.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import oracle_real_intercepts, slow_params
from scipy.optimize import minimize_scalar

import riskformula as rf
from riskformula.design import build_design
from riskformula.errors import OptimalityGapWarning, SettingsError
from riskformula.problem import LogisticLoss, build_problem
from riskformula.solver.options import SearchOptions
from riskformula.solver.multiscale import MultiScaleSearch
from riskformula import _checks as v

ROOT = Path(__file__).resolve().parents[2]


# --- the oracle ---------------------------------------------------------------------------

def oracle(scores, y, w, sizes, c0, scales, b_range=None, real=False):
    """min over models (columns of ``scores``, points-only scores of every row), intercepts
    (integers, or real numbers with ``real``) and scales of mean w·logistic loss((b + score)/m) +
    c0·size.

    Returns (objective, scale, intercept, model index) and the best objective of every scale."""
    wp, wn, W = w * y, w * (1 - y), w.sum()
    per_scale = {}
    best = (math.inf, None, None, None)
    ratio = abs(math.log(wn.sum() / wp.sum()))
    for m in scales:
        # for fixed scores the real optimum of b lies in [−max s − m·ratio, −min s + m·ratio]
        M = int(math.ceil(np.abs(scores).max() + m * ratio)) + 3
        lo, hi = b_range or (-M, M)
        if real:
            arg_b = oracle_real_intercepts(scores, wp, wn, m, lo, hi)
            z = (scores + arg_b) / m
            obj = (wp @ np.logaddexp(0.0, -z) + wn @ np.logaddexp(0.0, z)) / W + c0 * sizes
        else:
            obj = np.full(scores.shape[1], np.inf)
            arg_b = np.zeros(scores.shape[1])
            for b in range(lo, hi + 1):
                z = (scores + b) / m
                loss = (wp @ np.logaddexp(0.0, -z) + wn @ np.logaddexp(0.0, z)) / W + c0 * sizes
                better = loss < obj
                obj[better], arg_b[better] = loss[better], b
        k = int(np.argmin(obj))
        assert b_range or abs(arg_b[k]) < M - 1, "the oracle's intercept range is too narrow"
        per_scale[m] = float(obj[k])
        if obj[k] < best[0]:
            best = (float(obj[k]), m, float(arg_b[k]) if real else int(arg_b[k]), k)
    return best, per_scale


def point_models(d, lo, hi, max_size):
    values = [sorted({0, *range(lo, hi + 1)})] * d
    coefs = np.array(list(itertools.product(*values)), dtype=float).reshape(-1, d)
    return coefs[np.count_nonzero(coefs, axis=1) <= max_size]


def instance(seed):
    rng = np.random.default_rng(5000 + seed)
    n = int(rng.integers(30, 160))
    d = int(rng.integers(2, 4))
    X = rng.integers(0, 3 if seed % 2 else 2, (n, d)).astype(float)
    beta = rng.normal(0, 0.6, d)  # weak effects: scales above 1 pay off
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ beta - (X @ beta).mean())))).astype(int)
    y[0], y[1] = 0, 1
    w = rng.integers(1, 3, n).astype(float) if seed % 3 == 2 else np.ones(n)
    scales = [(1.0, 2.0, 4.0), (1.0, 1.5, 3.0), (0.5, 1.0, 2.5), (1.0, 1.25, 2.0, 5.0)][seed % 4]
    return X, y, w, scales, int(rng.integers(1, d + 1)), [1e-6, 0.01][seed % 2]


def frame(X, y, w):
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    return df.assign(y=y, w=w)


def formula(d):
    return "y ~ " + " + ".join(f"x{j}" for j in range(d))


def own_objective(model, X, y, w, c0):
    """A fitted model's objective straight from its printed card: intercept, points and scale."""
    s = (model.intercept + X @ model.coef.to_numpy(float)) / model.scale
    loss = (w * np.where(y == 1, np.logaddexp(0, -s), np.logaddexp(0, s))).sum() / w.sum()
    return loss + c0 * model.size


def slack(v):
    return 1e-9 * (1 + abs(v))


# --- the oracle on a case worked by hand --------------------------------------------------

def test_oracle_on_a_hand_computed_case():
    # x=0 → y=0, x=1 → y=1; points in −1..1 and scales {1, 0.5}: at m = 0.5 the one point is two
    # logits, so b = −0.5 is not an integer; b ∈ {−1, 0} gives margins ±2 on one row, 0 on the other
    scores = np.array([[0.0], [1.0]])
    best, per = oracle(scores, np.array([0, 1]), np.ones(2), np.array([1]), 0.0, (1.0, 0.5))
    at_half = 0.5 * (math.log1p(math.exp(-2)) + math.log(2))
    at_one = 0.5 * (math.log1p(math.exp(-1)) + math.log1p(math.exp(0)))  # b ∈ {−1, 0} ties
    assert per[0.5] == pytest.approx(at_half, rel=1e-12)
    assert per[1.0] == pytest.approx(at_one, rel=1e-12)
    assert best[0] == pytest.approx(min(at_half, at_one), rel=1e-12)


# --- risk_score against the oracle ----------------------------------------------------------

@pytest.mark.parametrize("real", [False, True], ids=["integer intercept", "real intercept"])
@pytest.mark.parametrize("seed", slow_params(range(12), slow=range(6, 12)))
def test_fitted_scale_is_the_brute_force_optimum(seed, real):
    X, y, w, scales, max_size, c0 = instance(seed)
    models = point_models(X.shape[1], -3, 3, max_size)
    (true_min, m_star, _, _), per_scale = oracle(X @ models.T, y, w, np.count_nonzero(models, axis=1), c0, scales,
                                                 real=real)
    m = rf.risk_score(formula(X.shape[1]), frame(X, y, w), weights="w", max_size=max_size, coef_range=(-3, 3),
                      c0=c0, scale=list(scales), real_intercept=real, gap_tolerance=1e-9, time_limit=60)
    assert isinstance(m.intercept, float if real else int) and m.settings.real_intercept is real
    assert m.lower_bound <= true_min + slack(true_min)
    assert m.status == "optimal"
    assert m.objective == pytest.approx(true_min, rel=1e-7, abs=0)
    assert m.scale in scales
    assert own_objective(m, X, y, w, c0) == pytest.approx(m.objective, rel=1e-9)
    assert per_scale[m.scale] == pytest.approx(true_min, rel=1e-7)
    rows = {r["scale"]: r for r in m.solver.scales}
    assert sorted(rows) == sorted(scales)
    assert m.lower_bound == pytest.approx(min(r["lower_bound"] for r in rows.values()), rel=1e-12)
    for s, r in rows.items():
        # every scale's own bound and best objective bracket that scale's optimum
        assert r["lower_bound"] <= per_scale[s] + slack(per_scale[s])
        assert r["objective"] >= per_scale[s] - slack(per_scale[s])


@pytest.mark.parametrize("real", [False, True], ids=["integer intercept", "real intercept"])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scale", [0.5, 1.0, 2.5])
def test_a_fixed_scale_is_the_brute_force_optimum(seed, scale, real):
    X, y, w, _, max_size, c0 = instance(seed)
    models = point_models(X.shape[1], -3, 3, max_size)
    (true_min, _, b, k), _ = oracle(X @ models.T, y, w, np.count_nonzero(models, axis=1), c0, (scale,), real=real)
    m = rf.risk_score(formula(X.shape[1]), frame(X, y, w), weights="w", max_size=max_size, coef_range=(-3, 3),
                      c0=c0, scale=scale, real_intercept=real, gap_tolerance=1e-9, time_limit=60)
    assert m.status == "optimal" and m.scale == scale
    assert m.lower_bound <= true_min + slack(true_min)
    assert m.objective == pytest.approx(true_min, rel=1e-7, abs=0)
    assert own_objective(m, X, y, w, c0) == pytest.approx(m.objective, rel=1e-9)
    assert m.solver.scales == ()  # one scale: no per-scale table


def _search(seed, real=False, **kw):
    X, y, w, scales, max_size, c0 = instance(seed)
    df = frame(X, y, w)
    design = build_design(formula(X.shape[1]), df)
    lower, upper = v.check_coef_bounds((-3, 3), design.spec.terms)
    loss = LogisticLoss(design.X, design.y, w).with_real_intercept(real)
    def make(m):
        return build_problem(design.spec, loss.with_scale(m), lower, upper, max_size=max_size, c0=c0)
    problems = {m: make(m) for m in scales}
    models = point_models(X.shape[1], -3, 3, max_size)
    truth = oracle(X @ models.T, y, w, np.count_nonzero(models, axis=1), c0, scales, real=real)
    add_scale = make if kw.pop("refine", False) else None
    return (MultiScaleSearch(problems, SearchOptions(gap_tolerance=1e-9, **kw), add_scale=add_scale), truth,
            (X, y, w, c0))


def _check_early_stop(rep, truth, data):
    (true_min, _, _, _), per_scale = truth
    X, y, w, c0 = data
    assert rep.lower_bound <= true_min + slack(true_min), (
        f"lower bound {rep.lower_bound!r} above the optimum {true_min!r} ({rep.status}, {rep.nodes} nodes)")
    assert rep.objective >= true_min - slack(true_min)
    lam = np.asarray(rep.solution)
    s = (lam[0] + X @ lam[1:]) / rep.scale
    loss = (w * np.where(y == 1, np.logaddexp(0, -s), np.logaddexp(0, s))).sum() / w.sum()
    assert loss + c0 * np.count_nonzero(lam[1:]) == pytest.approx(rep.objective, rel=1e-9)
    for r in rep.scales:
        assert r["lower_bound"] <= per_scale[r["scale"]] + slack(per_scale[r["scale"]])
        assert r["objective"] >= per_scale[r["scale"]] - slack(per_scale[r["scale"]])
    gap = 0.0 if rep.lower_bound >= rep.objective else (rep.objective - rep.lower_bound) / rep.objective
    assert rep.gap == pytest.approx(gap, rel=1e-9, abs=1e-15)
    if rep.status == "optimal":
        assert rep.objective == pytest.approx(true_min, rel=1e-7)


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("real", [False, True], ids=["integer intercept", "real intercept"])
@pytest.mark.parametrize("node_limit", [1, 3, 10, 40])
@pytest.mark.parametrize("seed", range(8))
def test_node_limit_gives_an_honest_bound_at_every_scale(seed, node_limit, real):
    search, truth, data = _search(seed, real=real, node_limit=node_limit, time_limit=60)
    rep = search.solve()
    assert rep.status in ("optimal", "node_limit")
    assert rep.nodes <= node_limit + 1  # checked between nodes
    _check_early_stop(rep, truth, data)


@pytest.mark.parametrize("real", [False, True], ids=["integer intercept", "real intercept"])
@pytest.mark.parametrize("time_limit", [1e-4, 0.02, 0.1])
@pytest.mark.parametrize("seed", range(6))
def test_time_limit_gives_an_honest_bound_at_every_scale(seed, time_limit, real):
    search, truth, data = _search(seed, real=real, time_limit=time_limit)
    rep = search.solve()
    assert rep.status in ("optimal", "time_limit")
    _check_early_stop(rep, truth, data)
    assert {r["status"] for r in rep.scales} <= {"best", "searched", "root bound", "stopped", "not started"}


# --- scale="fit": the grid refined around the best risk score -------------------------------

@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("real", [None, False], ids=["default (real) intercept", "integer intercept"])
@pytest.mark.parametrize("seed", range(8))
def test_fit_is_the_brute_force_optimum_over_the_scales_it_states(seed, real):
    X, y, w, _, max_size, c0 = instance(seed)
    m = rf.risk_score(formula(X.shape[1]), frame(X, y, w), weights="w", max_size=max_size, coef_range=(-3, 3),
                      c0=c0, scale="fit", real_intercept=real, gap_tolerance=1e-9, time_limit=60, engine="tree")
    assert m.settings.real_intercept is (real is None)  # the default with a fitted scale: real
    stated = m.settings.scales
    added = [r["scale"] for r in m.solver.scales if r["added"]]
    assert set(stated) == set(v.FIT_SCALES) | set(added) and len(added) <= 3
    assert sorted(r["scale"] for r in m.solver.scales) == sorted(stated)
    models = point_models(X.shape[1], -3, 3, max_size)
    (true_min, _, _, _), per_scale = oracle(X @ models.T, y, w, np.count_nonzero(models, axis=1), c0, stated,
                                            real=real is None)
    assert m.lower_bound <= true_min + slack(true_min)
    assert m.status == "optimal"
    found_at = m.solver.settings.get("refined_from")
    if found_at is None:
        assert m.objective == pytest.approx(true_min, rel=1e-7, abs=0)
    else:  # the best score of the scales stated, then moved to its points' own scale: never worse
        assert found_at in stated and m.scale not in stated
        assert m.solver.settings["unrefined_objective"] == pytest.approx(true_min, rel=1e-7, abs=0)
        assert m.objective < true_min and m.lower_bound == min(m.lower_bound, m.objective)
        # its own scale: no scale of a fine grid gives these points a lower loss (best intercept there)
        assert m.loss <= _best_loss_of_points(X @ m.coef.to_numpy(float), y, w, real is None) + 1e-9
    assert own_objective(m, X, y, w, c0) == pytest.approx(m.objective, rel=1e-9)
    for r in m.solver.scales:
        assert r["lower_bound"] <= per_scale[r["scale"]] + slack(per_scale[r["scale"]])


def _best_loss_of_points(s, y, w, real):
    """The least weighted mean loss of the scores ``s`` over a fine grid of scales, each with its
    best intercept (real: a fine grid; whole: every integer in a wide range)."""
    best = np.inf
    for scale in np.exp(np.linspace(np.log(0.05), np.log(50), 700)):
        bs = np.linspace(-30, 30, 1201) if real else np.arange(-60, 61)
        z = (bs[:, None] + s[None, :]) / scale
        loss = (np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z)) * w).sum(axis=1) / w.sum()
        best = min(best, float(loss.min()))
    return best


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_an_added_scale_is_where_the_best_points_fit_best():
    # weak effects on a 0/1/2 predictor: the best points want a scale between those of the grid
    rng = np.random.default_rng(0)
    n = 400
    X = rng.integers(0, 3, (n, 2)).astype(float)
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.37 * X[:, 0] - 0.23 * X[:, 1])))).astype(int)
    m = rf.risk_score("y ~ x0 + x1", frame(X, y, np.ones(n)), max_size=2, coef_range=(-5, 5),
                      scale="fit", time_limit=60, engine="tree")
    added = [r["scale"] for r in m.solver.scales if r["added"]]
    found_at = m.solver.settings.get("refined_from", m.scale)  # found at an added scale, then its own
    assert added and found_at in added and m.status == "optimal"
    assert found_at not in v.FIT_SCALES and float(f"{found_at:.3g}") == found_at
    # the search's best points at the added scale (the refinement may have changed the card's points
    # since): by brute force over every point vector there, each with its best real intercept
    row = next(r for r in m.solver.scales if r["scale"] == found_at)

    def objective_at(scale, pts):
        sc = X @ pts
        fit = minimize_scalar(lambda b: np.mean(np.where(y == 1, np.logaddexp(0, -(b + sc) / scale),
                                                         np.logaddexp(0, (b + sc) / scale))),
                              bounds=(-60, 60), method="bounded", options={"xatol": 1e-10})
        return float(fit.fun) + 1e-6 * np.count_nonzero(pts)
    vectors = [np.array(p, dtype=float) for p in itertools.product(range(-5, 6), repeat=2) if any(p)]
    values = [objective_at(found_at, p) for p in vectors]
    assert min(values) == pytest.approx(row["objective"], abs=1e-8)  # the scale's certificate, by brute force
    assert m.solver.settings["unrefined_objective"] == pytest.approx(min(values), abs=1e-8)
    s = X @ vectors[int(np.argmin(values))]

    def loss(scale):
        return min(np.mean(np.where(y == 1, np.logaddexp(0, -(b + s) / scale), np.logaddexp(0, (b + s) / scale)))
                   for b in range(-40, 41))
    grid = np.exp(np.linspace(np.log(0.5), np.log(8), 600))
    # the added scale is where those points fit best: three digits of it cost at most this
    assert min(loss(g) for g in grid) >= loss(found_at) - 2e-4
    # the card: never worse than them, and at its own scale (real intercept) no scale and intercept
    # of a fine grid does better for its points
    assert m.objective <= min(values) + 1e-12
    assert m.loss <= _best_loss_of_points(X @ m.coef.to_numpy(float), y, np.ones(n), real=True) + 1e-9
    text = str(m.summary())
    assert f"{found_at:g} (added)" in text and "added by the search" in text
    assert m.scale == found_at or f"found at {found_at:g}" in text
    m2 = rf.from_json(m.to_json())
    assert m2.solver.scales == m.solver.scales and m2.settings.scales == m.settings.scales and m2.scale == m.scale
    assert f"{found_at:g} (added)" in str(m2.summary())  # a loaded model has no training rows: its own text


def test_a_best_score_at_the_least_scale_with_a_point_at_its_bound_extends_the_set_below():
    # an effect of about 4 logits with points in −1..1: at the grid's least scale (0.5) a point is
    # worth 2 logits, so the search adds 0.354 (2.83 logits), then 0.25 (4 logits)
    rng = np.random.default_rng(3)
    n = 600
    X = rng.integers(0, 2, (n, 2)).astype(float)
    y = (rng.random(n) < 1 / (1 + np.exp(-(4.0 * X[:, 0] - 2.0)))).astype(int)
    m = rf.risk_score("y ~ x0 + x1", frame(X, y, np.ones(n)), max_size=2, coef_range=(-1, 1),
                      scale="fit", time_limit=60, engine="tree")
    added = [r["scale"] for r in m.solver.scales if r["added"]]
    assert 0.354 in added and m.scale < 0.5 and m.status == "optimal"
    assert set(m.settings.scales) == set(v.FIT_SCALES) | set(added) and len(added) <= 3

    def loss(scale):  # the best loss of x0's point 1 at ``scale`` over a fine grid of real intercepts
        b = np.linspace(-12, 12, 4801)[:, None]
        z = (b + X[:, 0][None, :]) / scale
        return float(np.min(np.mean(np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z)), axis=1)))
    assert m.loss < loss(0.5) - 1e-3 and m.loss <= loss(m.scale) + 1e-6


def test_a_list_of_scales_is_never_extended():
    rng = np.random.default_rng(0)
    n = 400
    X = rng.integers(0, 3, (n, 2)).astype(float)
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.37 * X[:, 0] - 0.23 * X[:, 1])))).astype(int)
    m = rf.risk_score("y ~ x0 + x1", frame(X, y, np.ones(n)), max_size=2, scale=list(v.FIT_SCALES),
                      time_limit=60)
    assert m.settings.scales == v.FIT_SCALES and not any(r["added"] for r in m.solver.scales)


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("real", [False, True], ids=["integer intercept", "real intercept"])
@pytest.mark.parametrize("node_limit", [1, 3, 10, 40, None])
@pytest.mark.parametrize("seed", range(8))
def test_added_scales_keep_an_honest_bound_at_every_scale(seed, node_limit, real):
    search, _, data = _search(seed, real=real, node_limit=node_limit, time_limit=60, refine=True)
    rep = search.solve()
    X, y, w, c0 = data
    stated = sorted(r["scale"] for r in rep.scales)
    models = point_models(X.shape[1], -3, 3, int(search.problems[stated[0]].max_size))
    truth = oracle(X @ models.T, y, w, np.count_nonzero(models, axis=1), c0, stated, real=real)
    _check_early_stop(rep, truth, data)
    if node_limit is None:
        assert rep.status == "optimal"
        assert rep.objective == pytest.approx(truth[0][0], rel=1e-7)


def test_the_time_limit_counts_from_the_given_start():
    import time
    search, _, _ = _search(0, time_limit=5.0)
    rep = search.solve(started=time.perf_counter() - 10.0)  # the setup already took the whole limit
    assert rep.status == "time_limit" and rep.time >= 10.0


# --- thresholds: every cut position at every scale ----------------------------------------

@pytest.fixture(scope="module")
def steps():
    rng = np.random.default_rng(11)
    n = 60
    x = rng.integers(0, 7, n).astype(float)  # 7 distinct values: 6 gaps
    z = rng.integers(0, 2, n).astype(float)
    p = 1 / (1 + np.exp(-(np.where(x <= 2, -0.6, 0.3) + 0.4 * z)))
    y = (rng.uniform(size=n) < p).astype(int)
    return pd.DataFrame({"x": x, "z": z, "y": y})


@pytest.mark.parametrize("real", [False, True], ids=["integer intercept", "real intercept"])
def test_threshold_and_scale_are_the_brute_force_optimum(steps, real):
    LO, HI, C0, scales = -2, 2, 1e-6, (1.0, 2.0, 3.0)
    x, z, y = steps.x.to_numpy(), steps.z.to_numpy(), steps.y.to_numpy()
    v_ = np.unique(x)
    cols, sizes = [], []
    for wz in range(LO, HI + 1):
        base = wz * z
        cols.append(base)  # threshold term unused
        sizes.append(int(wz != 0))
        for c in (v_[:-1] + v_[1:]) / 2:
            for delta in range(LO, HI + 1):
                if delta:  # one cut: the item x ≤ c (or x > c) with its points
                    cols.append(base + delta * (x <= c))
                    sizes.append(1 + int(wz != 0))
    scores = np.column_stack(cols)
    (true_min, _, _, _), per_scale = oracle(scores, y, np.ones(len(y)), np.array(sizes), C0, scales, real=real)
    m = rf.risk_score("y ~ threshold(x, k=1) + z", steps, coef_range=(LO, HI), c0=C0, scale=list(scales),
                      real_intercept=real, gap_tolerance=1e-9, time_limit=60)
    assert m.status == "optimal"
    assert m.lower_bound <= true_min + slack(true_min)
    assert m.objective == pytest.approx(true_min, rel=1e-7)
    assert all(LO <= p <= HI for p in m.score_card()["points"])
    s = m.score(steps).to_numpy()
    risk = 1 / (1 + np.exp(-(m.intercept + s) / m.scale))
    assert np.mean(np.where(y == 1, -np.log(risk), -np.log1p(-risk))) == pytest.approx(m.loss, rel=1e-9)
    for r in m.solver.scales:
        assert r["lower_bound"] <= per_scale[r["scale"]] + slack(per_scale[r["scale"]])


# --- what a model with a scale does -----------------------------------------------------------

@pytest.fixture(scope="module")
def wdbc_fit():
    df = rf.load_dataset("wdbc")
    m = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst + texture_worst', df,
                      max_size=3, scale=[1, 2, 4], time_limit=60)
    return df, m


def test_predict_is_the_logistic_of_score_over_scale(wdbc_fit):
    df, m = wdbc_fit
    assert m.scale == 4.0  # real-valued predictors: finer points pay off here
    s = m.score(df).to_numpy()
    expected = 1 / (1 + np.exp(-(m.intercept + s) / m.scale))
    np.testing.assert_allclose(m.predict(df).to_numpy(), expected, rtol=0, atol=1e-15)
    t = m.risk_table()
    np.testing.assert_allclose(t["risk_from"], 1 / (1 + np.exp(-(m.intercept + t["score_from"]) / m.scale)),
                               rtol=1e-12)
    # the scale changes the risks, not the card: the same points at scale 1 would be far more extreme
    assert "/ 4))" in m.card() and "scale 4" in repr(m)


def test_summary_lists_every_scale(wdbc_fit):
    _, m = wdbc_fit
    text = str(m.summary())
    assert "Certificate by score scale" in text and "Score scale" in text
    assert "4 points per logit (chosen among 1, 2, 4)" in text
    assert "not at scales in between" in text
    table = m.summary().tables["scales"]
    assert list(table["scale"]) == [1.0, 2.0, 4.0]
    assert set(table["status"]) <= {"best", "searched", "root bound"}
    assert (table["lower_bound"] <= m.objective + 1e-12).all()
    d = m.summary().to_dict()
    assert d["scale"] == 4.0 and len(d["solver"]["scales"]) == 3


def test_json_round_trip_keeps_the_scale(wdbc_fit):
    df, m = wdbc_fit
    text = m.to_json()
    doc = json.loads(text)
    assert doc["card"]["scale"] == 4.0 and "/ scale" in doc["risk"]
    m2 = rf.from_json(text)
    assert m2.scale == m.scale and m2.settings.scales == (1.0, 2.0, 4.0)
    np.testing.assert_array_equal(m2.predict(df).to_numpy(), m.predict(df).to_numpy())
    assert m2.card() == m.card()
    assert m2.solver.scales == m.solver.scales
    # a card whose scale is not the certificate's is refused (digest recomputed, as an editor would)
    doc["card"]["scale"] = 2.0
    doc["digest"] = rf.io._digest(doc)
    with pytest.raises(rf.DataError, match="scale"):
        rf.from_json(json.dumps(doc))


def test_a_fixed_scale_of_one_reproduces_the_fixed_model_exactly():
    """scale=1 is the model of Ustun & Rudin (2019): the same search, node for node, as no scale at
    all, and the same certified model as before the score scale existed.  The lower bound and node
    count are compared between the calls, not with constants: the LPs' last bits depend on the
    processor's BLAS kernels, and the tree with them (371 nodes on one machine, 354 on another)."""
    df = rf.load_dataset("breastcancer")
    runs = []
    for kw in ({}, {"scale": 1}, {"scale": [1.0]}):
        # the tree's search node for node (engine="tree"); the limit is a safety net, not the verdict
        m = rf.risk_score("Benign ~ .", df, max_size=5, coef_range=(-5, 5), c0=1e-6, time_limit=600,
                          engine="tree", **kw)
        assert m.status == "optimal"
        assert m.objective == pytest.approx(0.11336464701598783, rel=1e-12, abs=0)
        assert m.intercept == -17 and m.scale == 1.0
        assert m.coef[m.coef != 0].to_dict() == {"ClumpThickness": 1, "MarginalAdhesion": 1, "BareNuclei": 1,
                                                  "BlandChromatin": 1, "Mitoses": 1}
        assert "exp(-(-17 + score)))" in m.card()  # the risk formula as before
        runs.append((m.objective, m.lower_bound, m.solver.nodes))
    assert runs[0] == runs[1] == runs[2]


@pytest.mark.slow  # two 400-node searches on wdbc: 20 s on two busy cores
def test_a_fixed_scale_of_one_reproduces_a_threshold_search_exactly():
    """The same node-limited threshold search with and without ``scale=1``; the model it reaches is
    pinned (its bound after 400 nodes depends on the processor, see above: 0.10485 and 0.10730)."""
    df = rf.load_dataset("wdbc")
    runs = []
    for kw in ({}, {"scale": 1}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimalityGapWarning)
            m = rf.risk_score('diagnosis == "M" ~ threshold(radius_worst, k=1) + texture_worst + '
                              'threshold(concave_points_worst, k=1)', df, max_size=3, time_limit=600, node_limit=400,
                              **kw)
        assert m.solver.nodes == 400 and m.lower_bound < m.objective
        assert m.objective == pytest.approx(0.15468406566652357, rel=1e-12, abs=0)
        assert m.coef[m.coef != 0].to_dict() == {"radius_worst > 16.8": 5, "concave_points_worst > 0.1358": 4}
        runs.append((m.objective, m.lower_bound, m.solver.nodes))
    assert runs[0] == runs[1]


# --- constraints and downstream ------------------------------------------------------------

def test_side_information_is_written_on_the_score_scale(steps):
    m = rf.risk_score("y ~ threshold(x) + z", steps, coef_range=(-2, 2), scale=[1, 2, 3], time_limit=60,
                      constraints=[rf.risk_at_least(0.6, when={"x": 6, "z": 1}),
                                   rf.risk_at_most(0.3, when={"x": 0, "z": 0})])
    profile = pd.DataFrame({"x": [6.0, 0.0], "z": [1.0, 0.0]})
    risk = m.predict(profile).to_numpy()
    assert risk[0] >= 0.6 - 1e-12 and risk[1] <= 0.3 + 1e-12
    free = rf.risk_score("y ~ threshold(x) + z", steps, coef_range=(-2, 2), scale=[1, 2, 3], time_limit=60)
    assert m.objective >= free.objective - 1e-12


def test_a_scale_where_side_information_cannot_hold_is_listed_as_infeasible():
    # one binary x, points 0..3: risk(x=1) ≥ 0.95 and risk(x=0) ≤ 0.05 need b ≤ −m·2.94 and
    # b + points ≥ m·2.94 with an integer b: b = −1, 2 points at scale 0.1; nothing at scale 1 or 2
    df = pd.DataFrame({"x": [0, 0, 1, 1, 0, 1], "y": [0, 0, 1, 1, 1, 0]})
    cons = [rf.risk_at_least(0.95, when={"x": 1}), rf.risk_at_most(0.05, when={"x": 0})]
    m = rf.risk_score("y ~ x", df, coef_range=(0, 3), scale=[0.1, 1], constraints=cons, time_limit=20)
    assert m.scale == 0.1
    rows = {r["scale"]: r["status"] for r in m.solver.scales}
    assert rows == {0.1: "best", 1.0: "infeasible"}
    with pytest.raises(rf.InfeasibleProblemError):
        rf.risk_score("y ~ x", df, coef_range=(0, 3), scale=[1, 2], constraints=cons, time_limit=20)


def test_compare_counts_a_fitted_scale_as_a_parameter(wdbc_fit):
    df, big = wdbc_fit
    small = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst + texture_worst', df,
                          max_size=2, scale=[1, 2, 4], time_limit=60)
    fixed = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst + texture_worst', df,
                          max_size=2, time_limit=60)
    t = rf.compare(small, big)
    f = t.to_frame()
    assert list(f["scale"]) == [small.scale, big.scale]
    # k = size + 1 + 1 (the fitted scale)
    assert f["aic"].iloc[1] == pytest.approx(f["deviance"].iloc[1] + 2 * (big.size + 2))
    assert t.lr_tests["nested"].iloc[0] and t.lr_tests["df"].iloc[0] == big.size - small.size
    assert "scale" in str(t)
    # a model at scale 1 only cannot express every model of scales {1, 2, 4}
    t2 = rf.compare(big, fixed)
    assert not t2.lr_tests["nested"].iloc[0]
    t3 = rf.compare(fixed, big)
    assert t3.lr_tests["nested"].iloc[0] and t3.lr_tests["df"].iloc[0] == big.size + 1 - fixed.size


def test_size_path_and_cross_validation_carry_the_scale(steps):
    path = rf.size_path("y ~ threshold(x) + z", steps, sizes=[1, 2], coef_range=(-2, 2), scale=[1, 2],
                        time_limit=30, progress=False)
    assert set(path.table["scale"]) <= {1.0, 2.0}
    assert all(path.models[k].scale == s for k, s in zip(path.table["size"], path.table["scale"]))
    cv = rf.cross_validate("y ~ threshold(x) + z", steps, folds=3, coef_range=(-2, 2), max_size=2, scale=[1, 2],
                           time_limit=30, n_jobs=1, progress=False)
    assert list(cv.folds["scale"]) == [m.scale for m in cv.models]
    assert all(m.settings.scales == (1.0, 2.0) for m in cv.models)


def test_evaluate_uses_the_scaled_risks(wdbc_fit):
    df, m = wdbc_fit
    ev = m.evaluate(df)
    assert ev.predicted_risk == pytest.approx(float(m.predict(df).mean()), rel=1e-12)
    assert ev.log_loss == pytest.approx(m.loss, rel=1e-9)


def test_initial_model_at_another_scale_is_a_warm_start(wdbc_fit):
    df, m = wdbc_fit
    again = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst + texture_worst', df,
                          max_size=3, scale=[1, 2, 4], initial=m, time_limit=60)
    assert again.objective == pytest.approx(m.objective, rel=1e-12)
    # the same model class at the chosen scale alone (a list of scales has a real intercept)
    fixed4 = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst + texture_worst', df,
                           max_size=3, scale=4, real_intercept=True, initial=m, time_limit=60)
    assert fixed4.objective == pytest.approx(m.objective, rel=1e-9)
    # an integer intercept at that scale, started from the real one: no better
    whole = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst + texture_worst', df,
                          max_size=3, scale=4, initial=m, time_limit=60)
    assert isinstance(whole.intercept, int) and whole.objective >= m.objective - 1e-12


# --- arguments --------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "auto", [], [1, -2], True, [1, "2"]])
def test_bad_scale_is_a_settings_error(bad):
    df = pd.DataFrame({"x": [0, 1, 0, 1], "y": [0, 1, 1, 0]})
    with pytest.raises(SettingsError, match="scale"):
        rf.risk_score("y ~ x", df, scale=bad)


def test_scale_argument_forms():
    assert v.check_scale("fit") == (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)
    assert v.check_scale(2) == (2.0,)
    assert v.check_scale([4, 1, 2, 2]) == (1.0, 2.0, 4.0)
    assert v.check_scale(np.array([1.5, 3])) == (1.5, 3.0)


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_cli_scale(tmp_path):
    csv = tmp_path / "d.csv"
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, 200)
    y = (rng.random(200) < np.where(x == 1, 0.6, 0.4)).astype(int)
    pd.DataFrame({"x": x, "y": y}).to_csv(csv, index=False)
    out = tmp_path / "m.json"
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "riskformula.cli", "fit", "y ~ x", "--data", str(csv),
                        "--scale", "1,2,4", "--time-limit", "20", "--json", str(out)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Certificate by score scale" in r.stdout
    assert rf.from_json(out.read_text()).settings.scales == (1.0, 2.0, 4.0)
    bad = subprocess.run([sys.executable, "-m", "riskformula.cli", "fit", "y ~ x", "--data", str(csv),
                          "--scale", "big"], capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode != 0 and "--scale" in bad.stderr


def test_classifier_and_dask_frames_use_the_scale(steps):
    pytest.importorskip("sklearn")
    clf = rf.RiskScoreClassifier("threshold(x) + z", coef_range=(-2, 2), scale=[1, 2, 3],
                                 control=rf.SearchControl(time_limit=30))
    X, y = steps[["x", "z"]], steps["y"]
    clf.fit(X, y)
    m = clf.model_
    assert m.settings.scales == (1.0, 2.0, 3.0)
    p = clf.predict_proba(X)[:, 1]
    np.testing.assert_allclose(clf.decision_function(X), np.log(p / (1 - p)), rtol=1e-9, atol=1e-9)
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(steps, npartitions=3)
    np.testing.assert_allclose(m.predict(ddf).compute().to_numpy(), m.predict(steps).to_numpy(), rtol=0, atol=1e-15)
    fitted = rf.risk_score("y ~ threshold(x) + z", ddf, coef_range=(-2, 2), scale=[1, 2, 3],
                                 control=rf.SearchControl(time_limit=30))
    assert fitted.scale == m.scale and fitted.objective == pytest.approx(m.objective, rel=1e-9)
    assert fitted.training_metrics["log_loss"] == pytest.approx(fitted.loss, rel=1e-9)


def test_a_root_whose_lp_stops_at_the_time_limit_keeps_a_finite_bound(monkeypatch):
    # every LP stops at its time limit (as a large threshold design on a busy machine can): the
    # certificate still holds the loss bound of Ustun & Rudin (2019, Proposition 4), never −inf,
    # and it is below the true optimum of every scale
    from riskformula.solver.lp import NodeLP
    monkeypatch.setattr(NodeLP, "solve", lambda self, seconds=None: ("time_limit", math.nan, None))
    X, y, w, scales, max_size, c0 = instance(1)
    models = point_models(X.shape[1], -3, 3, max_size)
    (true_min, _, _, _), per_scale = oracle(X @ models.T, y, w, np.count_nonzero(models, axis=1), c0, scales)
    for scale in (list(scales), scales[0]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimalityGapWarning)
            m = rf.risk_score(formula(X.shape[1]), frame(X, y, w), weights="w", max_size=max_size,
                              coef_range=(-3, 3), c0=c0, scale=scale, time_limit=2)
        assert math.isfinite(m.lower_bound) and math.isfinite(m.gap)
        assert m.lower_bound <= min(per_scale[s] for s in np.atleast_1d(scale)) + slack(true_min)
        assert m.lower_bound <= m.objective


def test_no_scale_is_the_objectives_default():
    """scale=None (the default) is one point per logit for a binary outcome; 1 given is the same card."""
    df = pd.DataFrame({"x": [0, 1, 0, 1, 1, 0, 1, 0] * 5, "y": [0, 1, 0, 1, 0, 0, 1, 1] * 5})
    a = rf.risk_score("y ~ x", df, max_size=1, time_limit=10)
    b = rf.risk_score("y ~ x", df, max_size=1, scale=1, time_limit=10)
    assert a.scale == b.scale == 1.0 and a.settings.scales == (1.0,) and a.objective == b.objective


# --- the best score moved to its own scale ---------------------------------------------------

@pytest.fixture(scope="module")
def refined_fit():
    # weak effects of 0/1/2 predictors: the best points' own scale lies between the grid's
    X, y, w, _, max_size, c0 = instance(0)
    df = frame(X, y, w)
    m = rf.risk_score(formula(X.shape[1]), df, weights="w", max_size=max_size, coef_range=(-3, 3), c0=c0,
                      scale="fit", time_limit=30, engine="tree")
    return df, (X, y, w, c0), m


def test_the_best_score_is_moved_to_its_own_scale_and_the_certificate_keeps_the_grid(refined_fit):
    df, (X, y, w, c0), m = refined_fit
    found_at = m.solver.settings["refined_from"]
    assert found_at in m.settings.scales and m.scale not in m.settings.scales
    assert m.objective < m.solver.settings["unrefined_objective"]
    assert m.lower_bound <= m.objective and own_objective(m, X, y, w, c0) == pytest.approx(m.objective, rel=1e-9)
    # the points' own scale and intercept: no scale and intercept of a fine grid does better
    assert m.loss <= _best_loss_of_points(X @ m.coef.to_numpy(float), y, w, real=True) + 1e-9
    s = m.score(df).to_numpy()
    np.testing.assert_allclose(m.predict(df).to_numpy(), 1 / (1 + np.exp(-(m.intercept + s) / m.scale)), atol=1e-15)
    text = str(m.summary())
    assert f"found at {found_at:g}" in text and "not covered by the certificate" in text
    m2 = rf.from_json(m.to_json())
    assert m2.scale == m.scale and m2.settings.scales == m.settings.scales and m2.objective == m.objective
    np.testing.assert_array_equal(m2.predict(df).to_numpy(), m.predict(df).to_numpy())


def test_a_document_whose_refined_scale_does_not_come_from_a_scale_searched_is_refused(refined_fit):
    from riskformula.io import _digest
    _, _, m = refined_fit

    def edited(change):  # the document with one change, its digest recomputed (as an editor could)
        doc = json.loads(m.to_json())
        change(doc["certificate"]["settings"])
        doc["digest"] = _digest(doc)
        return json.dumps(doc)
    with pytest.raises(rf.DataError, match="refined from one of them"):
        rf.from_json(edited(lambda s: s.update(refined_from=0.123)))  # not a scale searched
    with pytest.raises(rf.DataError, match="never raises the objective"):
        rf.from_json(edited(lambda s: s.update(unrefined_objective=m.objective / 2)))
    with pytest.raises(rf.DataError, match="one of the scales searched"):
        rf.from_json(edited(lambda s: s.pop("refined_from")))  # a card off the scales searched, unexplained
