"""The Rashomon set against brute-force enumeration, and the result object.

On small instances every integer point vector within the bounds and size limits is enumerated,
each with its best integer intercept (every integer in a range much wider than the package's), and
scored with a loss written here (``np.logaddexp``, weights normalised by their sum, events' loss
times ``positive_weight``) + c0 · size.  The set must equal {points : objective ≤ (1 + ε) · min}
exactly (points within 1e-9 of the level either way are not judged), for binary, integer,
threshold and constrained designs and weights.  A search stopped early must never state a bound
above the objective of a score it did not list: that would be the worst bug this project can have.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from riskformula.solver.options import SearchOptions
import riskformula as rf
from riskformula.design import build_design
from riskformula.errors import SettingsError

WIDE = np.arange(-40, 41, dtype=float)  # intercepts tried by the oracle


# --- the oracle ---------------------------------------------------------------------------

def oracle(X, y, lo, hi, c0, max_size, w=None, pw=1.0, groups=(), feasible=None, scale=1.0):
    """{points (tuple of ints): objective} of every score; ``groups`` are column tuples of which at
    most one may be nonzero (one-cut thresholds), counting as one item; ``feasible(b, pts)`` says
    whether an (intercept, points) pair meets the constraints."""
    n, d = X.shape
    w = np.ones(n) if w is None else np.asarray(w, float)
    wpos, wneg = w * (y == 1) * pw, w * (y == 0)
    total = w.sum()
    out = {}
    ranges = [range(int(min(lo[j], 0)), int(max(hi[j], 0)) + 1) for j in range(d)]
    for pts in itertools.product(*ranges):
        pts = np.array(pts, float)
        nz = pts != 0
        if any(np.count_nonzero(nz[list(g)]) > 1 for g in groups):
            continue
        if any((pts[j] != 0) and not (lo[j] <= pts[j] <= hi[j]) for j in range(d)):
            continue
        if np.count_nonzero(nz) > max_size:
            continue
        s = X @ pts
        z = (s[:, None] + WIDE[None, :]) / scale
        losses = (wpos @ np.logaddexp(0, -z) + wneg @ np.logaddexp(0, z)) / total
        if feasible is not None:
            losses = np.where([feasible(b, pts) for b in WIDE], losses, np.inf)
        best = losses.min()
        if np.isfinite(best):
            out[tuple(int(v) for v in pts)] = float(best + c0 * np.count_nonzero(nz))
    return out


def listed(rs) -> set:
    return {tuple(int(v) for v in row) for row in rs.points}


def check_equal(rs, truth: dict, eps: float):
    opt = min(truth.values())
    level = (1 + eps) * opt
    want = {k for k, v in truth.items() if v <= level}
    unsure = {k for k, v in truth.items() if abs(v - level) <= 1e-9 * level}
    got = listed(rs)
    assert rs.complete and rs.status == "complete"
    assert rs.optimum == pytest.approx(opt, rel=1e-9, abs=1e-12)
    assert (got ^ want) <= unsure, (sorted(got - want), sorted(want - got))
    # each member's objective is the oracle's
    for row, value in zip(rs.points, rs.objectives):
        assert value == pytest.approx(truth[tuple(int(v) for v in row)], rel=1e-9, abs=1e-12)
    assert list(rs.objectives) == sorted(rs.objectives)
    return want


def binary_frame(seed, n=80, d=4, values=2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, values, (n, d)).astype(float)
    lp = X[:, 0] - X[:, 1] + 0.5 * X[:, 2] - 0.8
    y = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    df["y"] = y
    return df


FORMULA = "y ~ x0 + x1 + x2 + x3"


# --- equal to brute force ------------------------------------------------------------------

@pytest.mark.parametrize("seed,eps", [(0, 0.02), (1, 0.05), (2, 0.1), (3, 0.0)])
def test_binary_design_equals_brute_force(seed, eps):
    df = binary_frame(seed)
    rs = rf.rashomon_set(FORMULA, df, epsilon=eps, max_size=2, coef_range=(-2, 2), c0=1e-3, time_limit=30)
    X = df[["x0", "x1", "x2", "x3"]].to_numpy()
    truth = oracle(X, df.y.to_numpy(), [-2] * 4, [2] * 4, 1e-3, 2)
    want = check_equal(rs, truth, eps)
    assert len(want) >= 1


@pytest.mark.parametrize("seed", [4, 5])
def test_integer_design_equals_brute_force(seed):
    df = binary_frame(seed, values=4)
    rs = rf.rashomon_set(FORMULA, df, epsilon=0.15, max_size=2, coef_range=(-2, 2), c0=1e-4, time_limit=30)
    X = df[["x0", "x1", "x2", "x3"]].to_numpy()
    want = check_equal(rs, oracle(X, df.y.to_numpy(), [-2] * 4, [2] * 4, 1e-4, 2), 0.15)
    assert len(want) > 1


def test_the_tree_alone_equals_brute_force(monkeypatch):
    """Without listing (every node split down to one point), the same set."""
    from riskformula.rashomon.search import RashomonSearch
    monkeypatch.setattr(RashomonSearch, "listing_work", 0)
    df = binary_frame(6, values=3)
    rs = rf.rashomon_set(FORMULA, df, epsilon=0.08, max_size=2, coef_range=(-2, 2), c0=1e-4, time_limit=30)
    X = df[["x0", "x1", "x2", "x3"]].to_numpy()
    check_equal(rs, oracle(X, df.y.to_numpy(), [-2] * 4, [2] * 4, 1e-4, 2), 0.08)
    assert rs.nodes > 10


def test_a_poor_first_score_lowers_the_level():
    """Started from the intercept-only model (far from the best), the search lowers its level as it
    finds better scores and ends with the same set."""
    from riskformula.rashomon.search import RashomonSearch, under
    from riskformula.solver.heuristics import best_intercept
    df = binary_frame(18, values=3)
    rs = rf.rashomon_set(FORMULA, df, epsilon=0.05, max_size=2, coef_range=(-2, 2), c0=1e-4, time_limit=30)
    p = rs._problem
    zero = np.zeros(p.d + 1)
    zero[0] = best_intercept(p, np.zeros(p.loss.n_unique))
    assert p.objective(zero) > 1.05 * rs.optimum
    search = RashomonSearch(p, 0.05, (zero, p.objective(zero)), SearchOptions(time_limit=30))
    assert search.run() is None
    assert search.best_value == pytest.approx(rs.optimum, rel=1e-12)
    got = {tuple(int(v) for v in lam[1:]) for lam, val in search.members.values() if under(val, search.level)}
    assert got == listed(rs)


def test_weights_and_positive_weight_equal_brute_force():
    df = binary_frame(7)
    w = np.random.default_rng(7).integers(1, 5, len(df)).astype(float)
    df["w"] = w
    rs = rf.rashomon_set(FORMULA, df, epsilon=0.05, max_size=2, coef_range=(-2, 2), c0=1e-3, weights="w",
                         positive_weight=2.0, time_limit=30)
    X = df[["x0", "x1", "x2", "x3"]].to_numpy()
    check_equal(rs, oracle(X, df.y.to_numpy(), [-2] * 4, [2] * 4, 1e-3, 2, w=w, pw=2.0), 0.05)


def threshold_frame(seed, n=70):
    rng = np.random.default_rng(seed)
    age = rng.choice([20, 30, 40, 50, 60, 70], n).astype(float)
    x1 = rng.integers(0, 2, n).astype(float)
    lp = 0.06 * (age - 45) + 0.8 * x1 - 0.3
    y = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    return pd.DataFrame({"age": age, "x1": x1, "y": y})


@pytest.mark.parametrize("k", [1, None])
def test_threshold_design_equals_brute_force(k):
    """One member per cut choice: the oracle enumerates every gap between distinct ages; cuts that
    could never be optimal are listed too.  ``k=1``: at most one cut (a size group)."""
    df = threshold_frame(8)
    eps = 0.15
    f = "y ~ threshold(age, k=1) + x1" if k == 1 else "y ~ threshold(age) + x1"
    rs = rf.rashomon_set(f, df, epsilon=eps, max_size=2, coef_range=(-2, 2), c0=1e-3, time_limit=30)
    design = build_design(f, df, prune_cuts=False)
    assert list(rs.columns) == list(design.spec.columns)
    cuts = [j for j, t in enumerate(design.spec.column_terms) if t.startswith("threshold(age")]
    assert len(cuts) == df.age.nunique() - 1  # one candidate per gap
    truth = oracle(design.X, df.y.to_numpy(), [-2] * design.X.shape[1], [2] * design.X.shape[1], 1e-3, 2,
                   groups=[tuple(cuts)] if k == 1 else ())
    want = check_equal(rs, truth, eps)
    # members differ in their cut: several cuts of age appear in the set
    assert len({tuple(np.flatnonzero(np.array(key)[cuts])) for key in want}) > 1


def test_constraints_equal_brute_force():
    """Operational constraints (not_both, a sign) and the size limit."""
    df = binary_frame(9, values=2)
    cons = [rf.not_both("x0", "x2"), rf.sign("x1", "-")]
    rs = rf.rashomon_set(FORMULA, df, epsilon=0.1, max_size=3, coef_range=(-2, 2), c0=1e-3, constraints=cons,
                         time_limit=30)
    X = df[["x0", "x1", "x2", "x3"]].to_numpy()
    truth = oracle(X, df.y.to_numpy(), [-2, -2, -2, -2], [2, 0, 2, 2], 1e-3, 3,
                   feasible=lambda b, pts: not (pts[0] != 0 and pts[2] != 0))
    check_equal(rs, truth, 0.1)


def test_max_variables_equals_brute_force():
    df = threshold_frame(10)
    df["x2"] = np.random.default_rng(10).integers(0, 2, len(df)).astype(float)
    f = "y ~ threshold(age) + x1 + x2"
    rs = rf.rashomon_set(f, df, epsilon=0.05, max_size=2, coef_range=(-2, 2), c0=1e-3,
                         constraints=[rf.max_variables(1)], time_limit=30)
    design = build_design(f, df, prune_cuts=False)
    cuts = [j for j, t in enumerate(design.spec.column_terms) if t == "threshold(age)"]
    d = design.X.shape[1]

    def one_variable(b, pts):
        return (pts[cuts] != 0).any() + sum(pts[j] != 0 for j in range(d) if j not in cuts) <= 1
    truth = oracle(design.X, df.y.to_numpy(), [-2] * d, [2] * d, 1e-3, 2, feasible=one_variable)
    check_equal(rs, truth, 0.05)


def test_side_information_on_the_intercept_equals_brute_force():
    """A row on the risk involves the intercept: each member gets its best intercept that meets it."""
    df = binary_frame(11)
    cap = 0.3  # risk at most 30 % when x0 = 1 (and the rest 0)
    rs = rf.rashomon_set(FORMULA, df, epsilon=0.05, max_size=2, coef_range=(-2, 2), c0=1e-3,
                         constraints=[rf.risk_at_most(cap, when={"x0": 1})], time_limit=30)
    X = df[["x0", "x1", "x2", "x3"]].to_numpy()
    z = math.log(cap / (1 - cap))
    truth = oracle(X, df.y.to_numpy(), [-2] * 4, [2] * 4, 1e-3, 2, feasible=lambda b, pts: b + pts[0] <= z + 1e-12)
    check_equal(rs, truth, 0.05)
    for m in rs:
        assert m.intercept + m.points.get("x0", 0) <= z


@pytest.mark.parametrize("how", ["bound", "penalty"])
def test_fairness_equals_brute_force(how):
    """Statistical parity at risk 50 % between two groups not in the formula: as a bound (max_diff)
    and as a penalty (weight × the difference added to the objective)."""
    df = binary_frame(17, n=90)
    g = np.random.default_rng(17).choice(["a", "b"], len(df))
    df["grp"] = g
    if how == "bound":
        con, diff, weight = rf.statistical_parity("grp", at_risk=0.5, max_diff=0.15), 0.15, 0.0
    else:
        con, diff, weight = rf.statistical_parity("grp", at_risk=0.5, max_diff=None, weight=0.05), None, 0.05
    eps = 0.05
    rs = rf.rashomon_set(FORMULA, df, epsilon=eps, max_size=2, coef_range=(-2, 2), c0=1e-3, constraints=[con],
                         time_limit=30)
    X = df[["x0", "x1", "x2", "x3"]].to_numpy()
    y = df.y.to_numpy()
    a, b_ = g == "a", g == "b"

    def gap(b, pts):
        pos = X @ pts + b >= 0
        return abs(pos[a].mean() - pos[b_].mean())
    n = len(y)
    best = {}
    for pts in itertools.product(range(-2, 3), repeat=4):
        pts = np.array(pts, float)
        if np.count_nonzero(pts) > 2:
            continue
        z = X @ pts
        vals = []
        for b in WIDE:
            d = gap(b, pts)
            if diff is not None and d > diff + 1e-12:
                continue
            loss = (np.logaddexp(0, -(z + b))[y == 1].sum() + np.logaddexp(0, z + b)[y == 0].sum()) / n
            vals.append(loss + 1e-3 * np.count_nonzero(pts) + weight * d)
        if vals:
            best[tuple(int(v) for v in pts)] = min(vals)
    check_equal(rs, best, eps)
    m = rs.best(prefer=lambda member: -member.rank)  # the last member: an ordinary model with its fairness rows
    assert m.training.constraint_values


def test_real_intercept_and_scale():
    from scipy.optimize import minimize_scalar
    df = binary_frame(12)
    rs = rf.rashomon_set(FORMULA, df, epsilon=0.05, max_size=2, coef_range=(-2, 2), c0=1e-3, scale=2,
                         real_intercept=True, time_limit=30)
    X = df[["x0", "x1", "x2", "x3"]].to_numpy()
    y = df.y.to_numpy()
    for row, value in zip(rs.points, rs.objectives):
        s = X @ row

        def f(b):
            z = (s + b) / 2.0
            return (np.logaddexp(0, -z[y == 1]).sum() + np.logaddexp(0, z[y == 0]).sum()) / len(y)
        best = minimize_scalar(f, bounds=(-60, 60), method="bounded", options={"xatol": 1e-10}).fun
        assert value == pytest.approx(best + 1e-3 * np.count_nonzero(row), rel=1e-7)
    assert rs.settings.real_intercept and rs.model(0).scale == 2.0


# --- stopped early --------------------------------------------------------------------------

@pytest.mark.parametrize("limit", [dict(node_limit=3), dict(node_limit=12), dict(max_members=2)])
def test_stopped_search_states_a_true_bound(limit, monkeypatch):
    from riskformula.rashomon.search import RashomonSearch
    monkeypatch.setattr(RashomonSearch, "listing_work", 0)  # a real tree, so that limits bite
    df = binary_frame(13, values=3)
    eps = 0.1
    rs = rf.rashomon_set(FORMULA, df, epsilon=eps, max_size=2, coef_range=(-2, 2), c0=1e-4, time_limit=30, **limit)
    X = df[["x0", "x1", "x2", "x3"]].to_numpy()
    truth = oracle(X, df.y.to_numpy(), [-2] * 4, [2] * 4, 1e-4, 2)
    got = listed(rs)
    assert not rs.complete and rs.status in ("node_limit", "member_limit")
    unlisted = [v for k, v in truth.items() if k not in got]
    assert rs.bound <= min(unlisted) + 1e-12  # no unlisted score below the stated bound
    for row, value in zip(rs.points, rs.objectives):
        assert value <= rs.level and value == pytest.approx(truth[tuple(int(v) for v in row)], rel=1e-9)
    assert "complete below" in str(rs) and "Stopped at the" in rs.statement()


def test_time_limit_is_kept():
    df = rf.load_dataset("mammo")
    import time
    t = time.perf_counter()
    rs = rf.rashomon_set("Malignant ~ .", df, epsilon=0.05, max_size=5, time_limit=4)
    assert time.perf_counter() - t < 8
    if not rs.complete:
        assert rs.bound <= rs.level and rs.status == "time_limit"


# --- the result ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small():
    df = binary_frame(14)
    df["grp"] = np.random.default_rng(14).choice(["a", "b", "c"], len(df))
    return df, rf.rashomon_set("y ~ x0 + x1 + x2 + C(grp)", df, epsilon=0.1, max_size=2, coef_range=(-2, 2),
                               c0=1e-3, time_limit=30)


def test_result_converts_and_prints(small):
    df, rs = small
    assert len(rs) == len(rs.to_frame()) == len(list(rs)) > 3
    frame = rs.to_frame()
    assert list(frame.columns[:5]) == ["objective", "loss", "size", "auc", "intercept"]
    # objective = loss + c0·size, each summed on its own: equal up to rounding when the size is 0
    assert (frame["objective"] >= frame["loss"] - 1e-12).all() and frame["auc"].between(0, 1).all()
    d = rs.to_dict()
    json.dumps(d)
    assert d["complete"] and d["n_members"] == len(rs) and d["bound"] is None
    for kind in ("text", "markdown", "html", "latex"):
        assert "Rashomon set" in rs.render(kind)
    text = str(rs)
    assert "complete (proven)" in text and "Fisher, Rudin & Dominici 2019" in text
    assert repr(rs).startswith("<RashomonSet:")
    assert rs.member(0).objective == rs.optimum and rs.member(-1).rank == len(rs) - 1


def test_importance_is_read_from_the_set(small):
    df, rs = small
    imp = rs.importance()
    assert set(imp["variable"]) == {"x0", "x1", "x2", "grp"}
    pts = rs.points
    for row in imp.itertuples():
        cols = list(rs.variables[row.variable])
        used = np.any(pts[:, cols] != 0, axis=1)
        assert row.share == pytest.approx(used.mean())
        if (~used).any():
            assert row.best_without_status == "exact" and row.best_without == rs.objectives[~used].min()
        else:
            assert row.best_without_status == "above level" and row.best_without == rs.level


def test_importance_exact_equals_a_restricted_brute_force():
    df = binary_frame(15)
    rs = rf.rashomon_set(FORMULA, df, epsilon=0.005, max_size=2, coef_range=(-2, 2), c0=1e-3, time_limit=30)
    X = df[["x0", "x1", "x2", "x3"]].to_numpy()
    imp = rs.importance(exact=True).set_index("variable")
    for j in range(4):
        lo, hi = [-2] * 4, [2] * 4
        lo[j] = hi[j] = 0
        best = min(oracle(X, df.y.to_numpy(), lo, hi, 1e-3, 2).values())
        assert imp.loc[f"x{j}", "best_without"] == pytest.approx(best, rel=1e-8)
        assert imp.loc[f"x{j}", "best_without_status"] in ("exact", "certified fit")
    assert (imp["best_without_status"] == "certified fit").any()


def test_filter_and_best(small):
    df, rs = small
    no_x0 = rs.filter(forbidden="x0")
    assert len(no_x0) and not np.any(no_x0.points[:, list(rs.variables["x0"])])
    assert no_x0.complete and "without x0" in str(no_x0)
    with_grp = rs.filter(required=["grp"], max_size=2)
    assert np.all(np.any(with_grp.points[:, list(rs.variables["grp"])] != 0, axis=1))
    assert len(rs.within(0.0)) >= 1 and rs.within(0.0).optimum == rs.optimum
    with pytest.raises(SettingsError, match="filtered"):
        no_x0.importance(exact=True)
    # the best score, and a cheaper one by a user's costs
    m0 = rs.best()
    assert isinstance(m0, rf.RiskScore) and m0.status == "optimal" and m0.objective == pytest.approx(rs.optimum)
    cost = {"x0": 10, "default": 1}
    m = rs.best(prefer=cost)
    costs = rs._costs(cost)
    assert costs.min() == pytest.approx(sum(cost.get(v, 1) for v in rs.variables
                                            if any(m.coef.get(c, 0) != 0 for c in [rs.columns[j]
                                                                                   for j in rs.variables[v]])))
    by_size = rs.best(prefer=lambda member: member.size)
    assert by_size.size == rs.sizes.min()
    with pytest.raises(SettingsError, match="no member"):
        rs.best(required="x0", forbidden="x0")
    with pytest.raises(SettingsError):
        rs.best(prefer="x0")


def test_a_member_is_an_ordinary_risk_score(small):
    df, rs = small
    k = len(rs) - 1
    m = rs.model(k)
    assert m.status in ("rashomon_member", "optimal")
    assert m.objective == pytest.approx(rs.objectives[k]) and m.lower_bound <= m.objective
    assert m.loss == pytest.approx(rs.losses[k])
    # predictions from the card equal the member's points and intercept
    design = build_design("y ~ x0 + x1 + x2 + C(grp)", df)
    lam = rs.lams[k]
    risk = 1 / (1 + np.exp(-(lam[0] + design.X @ lam[1:])))
    assert np.allclose(m.predict(df).to_numpy(), risk)
    text = str(m.summary())
    if m.status == "rashomon_member":
        assert "A member of a Rashomon set" in text
    again = rf.from_json(m.to_json())
    assert np.allclose(again.predict(df), m.predict(df))
    assert m.card() is not None and m.training_metrics["auc"] == pytest.approx(rs.auc[k])


def test_settings_are_checked():
    df = binary_frame(16)
    with pytest.raises(SettingsError, match="epsilon"):
        rf.rashomon_set(FORMULA, df, epsilon=-0.1)
    with pytest.raises(SettingsError, match="one positive number"):
        rf.rashomon_set(FORMULA, df, scale="fit")
    with pytest.raises(rf.InfeasibleProblemError):
        rf.rashomon_set(FORMULA, df, max_size=1, constraints=[rf.at_least(2, "x0", "x1")], time_limit=10)


def test_plots(small):
    pytest.importorskip("matplotlib")
    df, rs = small
    fig = rs.plot()
    assert fig.axes and fig.axes[0].get_xlabel().startswith("Size")
    fig = rf.plots.plot_variable_use(rs)
    assert len(fig.axes[0].patches) == len(rs.variables)
    with pytest.raises(SettingsError):
        rs.plot("nope")


# --- the bundled data ------------------------------------------------------------------------

@pytest.mark.slow
def test_mammo_is_complete_and_its_best_is_the_fit():
    df = rf.load_dataset("mammo")
    rs = rf.rashomon_set("Malignant ~ .", df, epsilon=0.01, max_size=5, time_limit=120)
    fit = rf.risk_score("Malignant ~ .", df, max_size=5, time_limit=120)
    assert rs.complete and rs.optimum_certified
    assert rs.optimum == pytest.approx(fit.objective, rel=1e-9)
    assert len(rs) > 10 and rs.objectives.max() <= rs.level
    smaller = rf.rashomon_set("Malignant ~ .", df, epsilon=0.005, max_size=5, time_limit=120)
    assert listed(smaller) == listed(rs.within(0.005))
