"""Net-benefit risk scores (Chi & Birbil, 2026): exact cut-offs, the MILP against brute force,
calibration by construction, decision curves, Algorithm 1 and the JSON round trip."""

from __future__ import annotations

import itertools
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.errors import OptimalityGapWarning, SettingsError
from riskformula.reports.metrics import aunbc, expected_calibration_error, net_benefit
from riskformula.netbenefit.cutoffs import optimal_cutoffs, score_bands
from riskformula.netbenefit import fit as nb_fit
from riskformula.netbenefit.fit import prepare
from riskformula.netbenefit.grid import decision_grid
from riskformula.netbenefit.heuristic import NetBenefitScorer
from riskformula.netbenefit.improve import improvement_steps
from riskformula.netbenefit.milp import NetBenefitMilp


def small_frame(n: int, seed: int, real: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, 3)).astype(float)
    if real:
        X = X * np.array([0.5, 1.25, 0.75]) + rng.choice([0.0, 0.1], size=(n, 3))
    lp = -1.2 + 0.9 * X[:, 0] - 0.6 * X[:, 1] + 0.4 * X[:, 2]
    y = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    return pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y})


def brute_force(df: pd.DataFrame, lo: int, hi: int, grid, c0: float) -> float:
    """Best weighted net benefit − c0·size over every point vector and every cut-off (exhaustive)."""
    X = df[["a", "b", "c"]].to_numpy()
    y = df["y"].to_numpy()
    n = len(y)
    best = -np.inf
    for lam in itertools.product(range(lo, hi + 1), repeat=3):
        s = np.round(X @ np.array(lam, float), 9)
        cands = np.concatenate([np.unique(s), [np.inf]])
        total = 0.0
        for p, w in zip(grid.p, grid.w):
            nb = [((s >= t) & (y == 1)).sum() / n - ((s >= t) & (y == 0)).sum() / n * p / (1 - p) for t in cands]
            total += w * max(nb)
        best = max(best, total - c0 * np.count_nonzero(lam))
    return best


# --- exact cut-offs (FindOptimalT) -----------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_optimal_cutoffs_match_exhaustive_search(seed):
    rng = np.random.default_rng(seed)
    R = 25
    s = rng.integers(-6, 7, R).astype(float)
    pos, neg = rng.integers(0, 4, R).astype(float), rng.integers(0, 4, R).astype(float)
    grid = decision_grid(rng.choice(np.arange(1, 20) / 20, size=5, replace=False))
    c = optimal_cutoffs(s, pos, neg, grid)
    n = pos.sum() + neg.sum()
    for i, (p, o) in enumerate(zip(grid.p, grid.odds)):
        # every integer cut-off from below the lowest score to above the highest
        vals = {t: (pos[s >= t].sum() - o * neg[s >= t].sum()) / n for t in range(-8, 9)}
        best = max(vals.values())
        assert c.net_benefit[i] == pytest.approx(best, abs=1e-12)
        if p > 0:
            lowest = min(t for t, val in vals.items() if val >= best - 1e-12)
            # the cut-off is the lowest attained score at or above the lowest best integer cut
            attained = s[s >= lowest]
            assert c.cutoffs[i] == (attained.min() if attained.size else np.inf)
    dec = c.cutoffs[grid.p > 0]
    assert np.all(dec[1:] >= dec[:-1])
    assert c.value == pytest.approx(float(grid.w @ c.net_benefit))


@pytest.mark.parametrize("seed", range(6))
def test_band_rates_lie_in_their_threshold_intervals(seed):
    rng = np.random.default_rng(100 + seed)
    R = 40
    s = rng.integers(-10, 11, R).astype(float)
    pos, neg = rng.integers(0, 5, R).astype(float), rng.integers(0, 5, R).astype(float)
    grid = decision_grid()
    c = optimal_cutoffs(s, pos, neg, grid)
    b = score_bands(s, pos, neg, c.cutoffs[grid.p > 0], grid.decision)
    edges = np.concatenate([[0.0], grid.decision, [1.0]])
    used = b.n > 0
    assert np.all(b.risk[used] >= edges[:-1][used] - 1e-12)
    assert np.all((b.risk[used] < edges[1:][used]) | (np.arange(len(b.n))[used] == len(b.n) - 1))
    np.testing.assert_array_equal(b.cutoffs, c.cutoffs[grid.p > 0])   # no tie needed a merge here


def test_band_on_the_edge_of_its_interval_is_merged():
    # band 0 (score 0) has rate 1/2 = p_1: act on it at 0.5 too (merged upwards)
    b = score_bands([0, 1], [1, 1], [1, 0], [1.0], [0.5])
    assert b.cutoffs.tolist() == [-np.inf] and b.n.tolist() == [0, 3] and b.risk[1] == pytest.approx(2 / 3)
    # band 1 (score 1) has rate 0 < p_1: do not act on it (merged downwards)
    b = score_bands([0, 1], [0, 0], [1, 1], [1.0], [0.5])
    assert b.cutoffs.tolist() == [np.inf] and b.n.tolist() == [2, 0] and b.risk[1] == pytest.approx(0.75)


def test_scorer_agrees_with_find_optimal_t():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(30, 3)).astype(float)
    pos, neg = rng.integers(0, 3, 30).astype(float), rng.integers(0, 3, 30).astype(float)
    grid = decision_grid([0.15, 0.4, 0.8], weights=[0.5, 1.0, 2.0])
    scorer = NetBenefitScorer(X, pos, neg, grid)
    lam = np.array([2.0, -1.0, 1.0])
    s = X @ lam
    assert scorer.value(s) == pytest.approx(optimal_cutoffs(s, pos, neg, grid).value, abs=1e-12)
    deltas = np.arange(-3, 4)
    many = scorer.shifted(s, X[:, 1], deltas)
    for d, val in zip(deltas, many):
        assert val == pytest.approx(optimal_cutoffs(s + d * X[:, 1], pos, neg, grid).value, abs=1e-12)
    # the real-valued path (sorting) agrees with the counting path
    real = NetBenefitScorer(X + 1e-3 * (X > 10), pos, neg, grid)
    real.integral = False
    assert real.value(s) == pytest.approx(scorer.value(s), abs=1e-12)


# --- the exact model against brute force -----------------------------------------------------

@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("seed, solver", [(0, "appsi_highs"), (1, "appsi_highs"), (1, "highs")])
def test_milp_matches_brute_force_without_a_start(seed, solver):
    df = small_frame(30, seed)
    grid, c0 = decision_grid(), 1e-3
    best = brute_force(df, -2, 2, grid, c0)
    setup = prepare("y ~ a + b + c", df, coef_range=(-2, 2), c0=c0, max_size=3)
    loss = setup.loss
    milp = NetBenefitMilp(setup.problem, loss.w_pos, loss.w_neg, grid, c0)
    res = milp.solve(solver, time_limit=60, warm_start=False)   # "highs": pyomo's generic interface
    assert res.status == "optimal"
    X = loss.Z[:, 1:]
    exact = optimal_cutoffs(X @ res.points, loss.w_pos, loss.w_neg, grid).value - c0 * np.count_nonzero(res.points)
    assert exact == pytest.approx(best, abs=1e-9)
    assert res.objective == pytest.approx(best, abs=1e-7)
    assert res.bound >= best - 1e-7            # a maximisation: the bound is never below the optimum
    assert res.bound <= best + 1e-5 * abs(best) + 1e-9


@pytest.mark.parametrize("path", ["exact_search", pytest.param("milp", marks=pytest.mark.slow)])
def test_fit_is_certified_and_equals_brute_force(path, monkeypatch):
    if path == "milp":
        monkeypatch.setattr(nb_fit, "EXACT_SEARCH_SPACE", 0)
    df = small_frame(30, 1)
    grid, c0 = decision_grid(), 1e-3
    best = brute_force(df, -2, 2, grid, c0)
    m = rf.risk_score("y ~ a + b + c", df, objective="net_benefit", coef_range=(-2, 2), max_size=3, c0=c0,
                      time_limit=60)
    assert isinstance(m, rf.NetBenefitScore)
    assert m.status == "optimal"
    assert m.solver.settings[f"{path}_status"] == "optimal"  # the path certified it, not the simple bound
    assert m.objective == pytest.approx(best, abs=1e-9)
    assert m.upper_bound >= m.objective and m.gap <= 1e-6
    # the objective is what the model's own predictions achieve on the training rows
    assert m.net_benefit == pytest.approx(aunbc(m.observed(df), m.predict(df)), abs=1e-12)
    assert m.objective == pytest.approx(m.net_benefit - c0 * m.size, abs=1e-12)


def test_user_weights_and_thresholds_brute_force():
    df = small_frame(30, 11)
    grid = decision_grid([0.2, 0.5], weights=[1.0, 3.0])
    best = brute_force(df, -2, 2, grid, 0.0)
    m = rf.risk_score("y ~ a + b + c", df, objective=rf.net_benefit([0.5, 0.2], weights=[3.0, 1.0]),
                      coef_range=(-2, 2), max_size=3, c0=0.0, time_limit=60)
    assert m.status == "optimal"
    assert m.objective == pytest.approx(best, abs=1e-9)
    nb = net_benefit(m.observed(df), m.predict(df), [0.2, 0.5])["net_benefit"].to_numpy()
    assert m.net_benefit == pytest.approx(1.0 * nb[0] + 3.0 * nb[1], abs=1e-12)


@pytest.mark.slow  # 5-8 s: the default run stays within about 6 minutes
def test_real_valued_predictors_bound_is_honest():
    df = small_frame(30, 5, real=True)
    grid, c0 = decision_grid(), 1e-3
    best = brute_force(df, -2, 2, grid, c0)
    setup = prepare("y ~ a + b + c", df, coef_range=(-2, 2), c0=c0, max_size=3)
    loss = setup.loss
    milp = NetBenefitMilp(setup.problem, loss.w_pos, loss.w_neg, grid, c0)
    assert milp.exact and milp.gamma == pytest.approx(0.01)     # two decimals: an exact margin
    res = milp.solve(time_limit=5, warm_start=False)
    assert res.bound >= best - 1e-7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        m = rf.risk_score("y ~ a + b + c", df, objective="net_benefit", coef_range=(-2, 2), max_size=3, c0=c0,
                          time_limit=5)
    assert m.objective <= best + 1e-9
    assert m.upper_bound >= best - 1e-7
    assert m.objective == pytest.approx(best, abs=1e-9)   # found by the local search here


def test_predictors_off_a_decimal_grid_skip_the_exact_model(monkeypatch):
    monkeypatch.setattr(nb_fit, "EXACT_SEARCH_SPACE", 0)  # the MILP's path, not the branch and bound's
    df = small_frame(30, 6)
    df["a"] = df["a"] * np.sqrt(2)          # no finite decimal resolution: no exact big-M model
    best = brute_force(df, -2, 2, decision_grid(), 1e-3)
    setup = prepare("y ~ a + b + c", df, coef_range=(-2, 2), c0=1e-3, max_size=3)
    assert not NetBenefitMilp(setup.problem, setup.loss.w_pos, setup.loss.w_neg, decision_grid(), 1e-3).exact
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        m = rf.risk_score("y ~ a + b + c", df, objective="net_benefit", coef_range=(-2, 2), max_size=3, c0=1e-3,
                          time_limit=5)
    assert m.solver.settings["milp_status"].startswith("skipped")
    assert m.objective <= best + 1e-12 <= m.upper_bound + 1e-12


def test_local_search_alone_reports_an_honest_gap():
    df = small_frame(60, 2)
    best = brute_force(df, -2, 2, decision_grid(), 1e-3)
    with pytest.warns(OptimalityGapWarning):
        m = rf.risk_score("y ~ a + b + c", df, objective="net_benefit", coef_range=(-2, 2), max_size=3, c0=1e-3,
                          solver=None, time_limit=3)
    assert m.status == "heuristic"
    assert m.objective <= best + 1e-12 <= m.upper_bound + 1e-12
    assert m.gap == pytest.approx((m.upper_bound - m.objective) / m.objective)


# --- calibrated by construction --------------------------------------------------------------

def test_training_ece_is_zero_and_decisions_agree_with_risks():
    df = rf.load_dataset("mammo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        m = rf.risk_score("Malignant ~ .", df, objective="net_benefit", max_size=5, coef_range=(-5, 5), c0=1e-3,
                          solver=None, time_limit=3)
    risk = m.predict(df)
    assert expected_calibration_error(m.observed(df), risk) < 1e-12
    assert m.training_evaluation.ece < 1e-12
    for p in m.decision_grid.decision:
        np.testing.assert_array_equal(m.decide(df, p).to_numpy(), (risk >= p).to_numpy())
    table = m.risk_table()
    assert (table["n"] > 0).all() and table["n"].sum() == len(df)
    assert m.net_benefit == pytest.approx(aunbc(m.observed(df), risk), abs=1e-12)


# --- constraints and threshold terms ---------------------------------------------------------

@pytest.mark.slow  # 5-8 s: the default run stays within about 6 minutes
def test_constraints_and_threshold_terms_apply():
    df = rf.load_dataset("breastcancer")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        m = rf.risk_score("Benign ~ threshold(ClumpThickness) + BareNuclei + Mitoses + UniformityOfCellSize", df,
                          objective="net_benefit", max_size=2, coef_range=(-3, 3), c0=1e-3, time_limit=5,
                          solver=None,
                          constraints=[rf.sign("BareNuclei", "-"), rf.not_both("Mitoses", "UniformityOfCellSize")])
    assert m.coef["BareNuclei"] <= 0
    assert not (m.coef["Mitoses"] != 0 and m.coef["UniformityOfCellSize"] != 0)
    assert m.size <= 2
    # scores include the threshold term's top-interval points; decisions still match risks
    for p in m.decision_grid.decision:
        np.testing.assert_array_equal(m.decide(df, p).to_numpy(), (m.predict(df) >= p).to_numpy())


@pytest.mark.parametrize("kwargs, match", [
    ({"intercept_range": (-3, 3)}, "intercept_range"),
    ({"positive_weight": 2.0}, "positive_weight"),
    ({"constraints": [rf.risk_at_least(0.5, when={"a": 2})]}, "not yet supported"),
    ({"solver": "no_such_solver"}, "not a pyomo solver"),
])
def test_net_benefit_settings_errors(kwargs, match):
    df = small_frame(30, 0)
    with pytest.raises(SettingsError, match=match):
        rf.risk_score("y ~ a + b + c", df, objective="net_benefit", time_limit=5, **kwargs)


@pytest.mark.parametrize("grid, match", [
    ({"thresholds": [0.2, 1.0]}, r"\[0, 1\)"),
    ({"thresholds": [0.2, 0.2]}, "repeated"),
    ({"weights": [1.0, 2.0]}, "one weight per threshold"),
    ({"thresholds": [0.2], "weights": [-1.0]}, "nonnegative"),
])
def test_net_benefit_grid_errors(grid, match):
    with pytest.raises(SettingsError, match=match):
        rf.risk_score("y ~ a + b + c", small_frame(30, 0), objective=rf.net_benefit(**grid), time_limit=5)


def test_net_benefit_arguments_need_the_objective():
    df = small_frame(30, 0)
    with pytest.raises(SettingsError, match=r"objective=rf.net_benefit\(thresholds="):
        rf.risk_score("y ~ a", df, decision_thresholds=[0.2])
    with pytest.raises(SettingsError, match="'logistic', 'net_benefit' or 'cox'"):
        rf.risk_score("y ~ a", df, objective="aunbc")


# --- net benefit, decision curves, dcurves ---------------------------------------------------

def test_net_benefit_hand_computed_and_decision_curve():
    y = np.array([1, 0, 1, 0, 1, 0])
    r = np.array([0.9, 0.8, 0.4, 0.3, 0.2, 0.1])
    # p = 0.25: treat r >= .25 -> rows 0..3: TP 2, FP 2 -> 2/6 - 2/6 * 1/3 = 2/9
    # p = 0.5: treat rows 0, 1: TP 1, FP 1 -> 1/6 - 1/6 = 0
    nb = net_benefit(y, r, [0.25, 0.5])
    np.testing.assert_allclose(nb["net_benefit"], [2 / 9, 0.0], atol=1e-15)
    np.testing.assert_allclose(nb["treat_all"], [0.5 - 0.5 / 3, 0.0], atol=1e-15)

    class Fixed:  # any object with predict/observed works
        def predict(self, d):
            return pd.Series(r, index=d.index)

        def observed(self, d):
            return pd.Series(y, index=d.index)

    dc = rf.decision_curve(Fixed(), data=pd.DataFrame(index=range(6)), thresholds=[0.25, 0.5], names=["fixed"])
    w = dc.wide
    np.testing.assert_allclose(w["fixed"], [2 / 9, 0.0], atol=1e-15)
    np.testing.assert_allclose(w["treat none"], 0.0)
    assert "Decision curves" in str(dc)


DCURVES = Path(__file__).parents[1] / "data" / "dcurves_reference.json"


class StoredRisks:
    """A scored model made of stored risks and outcomes: what rf.decision_curve reads of a model."""

    def __init__(self, risk, y):
        self.risk, self.y = np.asarray(risk, float), np.asarray(y, int)

    def predict(self, d):
        return pd.Series(self.risk, index=d.index)

    def observed(self, d):
        return pd.Series(self.y, index=d.index)


@pytest.fixture(scope="module")
def dcurves_reference():
    """dcurves' net benefit of two fitted scores, with their risks and outcomes (the dcurves package
    pins pandas < 3 through lifelines, so it is an optional `peers` extra; the numbers it gave are
    stored by tests/data/make_dcurves_reference.py)."""
    ref = json.loads(DCURVES.read_text())
    t = np.array(ref["thresholds"])
    models = [StoredRisks(ref["risk"][name], ref["y"]) for name in ("logistic", "nb")]
    dc = rf.decision_curve(*models, data=pd.DataFrame(index=range(len(ref["y"]))), thresholds=t,
                           names=["logistic", "nb"])
    return ref, dc


PAIRS = (("logistic", "logistic"), ("nb", "nb"), ("treat all", "all"), ("treat none", "none"))


def test_decision_curve_equals_dcurves(dcurves_reference):
    """Our net benefit equals the numbers dcurves.dca produced on the same risks and outcomes."""
    ref, dc = dcurves_reference
    assert len(ref["thresholds"]) == 99 and len(ref["y"]) == 480
    for ours, theirs in PAIRS:
        np.testing.assert_allclose(dc.wide[ours].to_numpy(), ref["net_benefit"][theirs], atol=1e-12)


def test_decision_curve_equals_dcurves_live(dcurves_reference):
    """With the `peers` extra installed, dcurves itself, run on the stored risks and outcomes."""
    dcurves = pytest.importorskip("dcurves", reason="dcurves is in the `peers` extra (it pins pandas < 3)")
    ref, dc = dcurves_reference
    frame = pd.DataFrame({"y": ref["y"], **ref["risk"]})
    live = dcurves.dca(data=frame, outcome="y", modelnames=["logistic", "nb"], thresholds=ref["thresholds"])
    for ours, theirs in PAIRS:
        theirs_now = live.loc[live["model"] == theirs, "net_benefit"].to_numpy(float)
        np.testing.assert_allclose(dc.wide[ours].to_numpy(), theirs_now, atol=1e-12)
        np.testing.assert_allclose(theirs_now, ref["net_benefit"][theirs], atol=1e-12)  # the stored file is current


# --- Algorithm 1 -----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_algorithm_1_never_lowers_aunbc(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 200)
    risk = np.clip(0.3 * y + rng.random(200) * 0.7, 0, 1)
    before = aunbc(y, risk)
    steps = improvement_steps(y, risk)
    from riskformula.netbenefit.improve import apply_steps
    after = aunbc(y, apply_steps(risk, steps, keep_order=False))
    assert after >= before - 1e-12
    if steps:
        assert after > before
    assert expected_calibration_error(y, apply_steps(risk, steps, keep_order=False)) <= \
        expected_calibration_error(y, risk) + 1e-12


def test_improve_aunbc_on_models():
    df = rf.load_dataset("mammo")
    m = rf.risk_score("Malignant ~ .", df, max_size=3, time_limit=20)
    better = rf.improve_aunbc(m, df)
    assert aunbc(m.observed(df), better.predict(df)) >= aunbc(m.observed(df), m.predict(df)) - 1e-12
    assert better.evaluate(df).n == len(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        nb = rf.risk_score("Malignant ~ .", df, objective="net_benefit", max_size=3, solver=None, time_limit=3)
    assert rf.improve_aunbc(nb, df).steps.empty      # already calibrated within its bands


# --- reports and JSON ------------------------------------------------------------------------

def test_json_round_trip_and_reports():
    df = small_frame(30, 0)
    m = rf.risk_score("y ~ a + b + c", df, objective="net_benefit", coef_range=(-2, 2), max_size=3, c0=1e-3,
                      time_limit=60)
    m2 = rf.from_json(m.to_json())
    assert isinstance(m2, rf.NetBenefitScore)
    pd.testing.assert_series_equal(m2.predict(df), m.predict(df))
    for attr in ("objective", "upper_bound", "gap", "status", "net_benefit", "size", "loss"):
        assert getattr(m2, attr) == getattr(m, attr)
    pd.testing.assert_frame_equal(m2.decisions, m.decisions)
    pd.testing.assert_frame_equal(m2.risk_table(), m.risk_table())
    text = str(m2.summary())
    assert "Upper bound" in text and "act when" in text
    for kind in ("markdown", "html", "latex"):
        assert m.summary().render(kind)
        assert m.card(kind)
    assert "NetBenefitScore" in repr(m)
    assert set(m.summary().tables) >= {"decisions", "score_card", "risk_table", "certificate"}


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_cross_validate_and_compare_accept_net_benefit_scores():
    df = small_frame(90, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = rf.cross_validate("y ~ a + b + c", df, folds=3, objective="net_benefit", coef_range=(-2, 2),
                               max_size=2, time_limit=5, solver=None, n_jobs=1, progress=False)
        m = rf.risk_score("y ~ a + b + c", df, objective="net_benefit", coef_range=(-2, 2), max_size=2,
                          time_limit=5, solver=None)
        lr = rf.risk_score("y ~ a + b + c", df, coef_range=(-2, 2), max_size=2, time_limit=10)
    assert len(cv.folds) == 3 and all(isinstance(x, rf.NetBenefitScore) for x in cv.models)
    assert "Model comparison" in str(rf.compare(lr, m, data=df))


def test_frequency_weights_equal_repeated_rows_and_initial_is_used():
    df = small_frame(30, 8)
    df["w"] = np.random.default_rng(0).integers(1, 4, len(df))
    repeated = df.loc[df.index.repeat(df["w"])].reset_index(drop=True)
    kw = dict(objective="net_benefit", coef_range=(-2, 2), max_size=3, c0=1e-3, time_limit=60)
    a = rf.risk_score("y ~ a + b + c", df, weights="w", **kw)
    b = rf.risk_score("y ~ a + b + c", repeated, **kw)
    assert a.status == b.status == "optimal"
    assert a.objective == pytest.approx(b.objective, abs=1e-12)
    assert a.objective == pytest.approx(brute_force(repeated, -2, 2, decision_grid(), 1e-3), abs=1e-9)
    with pytest.warns(OptimalityGapWarning):     # local search alone: the simple bound is not tight here
        c = rf.risk_score("y ~ a + b + c", repeated, initial=b, **{**kw, "solver": None, "time_limit": 2})
    assert c.objective == pytest.approx(b.objective, abs=1e-12)


def _collapsed_rows(seed: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 6)) * np.array([1.0, 3.0, 0.5, 1.0, 2.0, 1.0])
    X[:, 5] = rng.integers(0, 2, 40)   # a 0/1 column beside real-valued ones
    lp = 1.5 * X[:, 0] - 0.4 * X[:, 1] + 0.3 * X[:, 5]
    pos = rng.integers(0, 4, 40) * (lp > -1)
    neg = rng.integers(0, 4, 40) * (lp < 1)
    return X, pos.astype(float), neg.astype(float)


@pytest.mark.parametrize("seed", range(3))
def test_sparse_directions_equal_scikit_learns_lasso(seed):
    from sklearn.linear_model import LogisticRegression
    from riskformula.netbenefit.heuristic import sparse_directions
    X, pos, neg = _collapsed_rows(seed)
    n, scale = pos.sum() + neg.sum(), X.std(axis=0)
    rate = pos.sum() / n
    top = np.abs((X / scale).T @ (pos * (1 - rate) - neg * rate)).max() / n   # by hand: KKT at β = 0
    assert sparse_directions(X, pos, neg, fractions=(1.001,)) == []         # at the edge: nothing enters
    assert len(sparse_directions(X, pos, neg, fractions=(0.95,))) == 1      # just inside: a column does
    fractions = (0.5, 0.2, 0.05)
    ours = sparse_directions(X, pos, neg, fractions=fractions)
    assert len(ours) == len(fractions)
    Xs = np.vstack([X, X]) / scale
    ys = np.r_[np.ones(len(X)), np.zeros(len(X))]
    ws = np.r_[pos, neg]
    keep = ws > 0
    import sklearn   # `penalty` is deprecated from 1.8 on, `l1_ratio` alone selects the lasso there
    lasso = {"l1_ratio": 1.0} if tuple(int(x) for x in sklearn.__version__.split(".")[:2]) >= (1, 8) else \
        {"penalty": "l1"}
    for f, beta in zip(fractions, ours):
        # scikit-learn minimises ‖β‖₁ + C Σ w·loss: the same problem at C = 1 / (penalty · n)
        lr = LogisticRegression(C=1 / (f * top * n), solver="liblinear", intercept_scaling=1e4, tol=1e-10,
                                max_iter=10_000, **lasso)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # scikit-learn's own deprecation notices
            lr.fit(Xs[keep], ys[keep], sample_weight=ws[keep])
        theirs = lr.coef_[0] / scale
        np.testing.assert_allclose(beta, theirs, atol=2e-3 * np.abs(theirs).max())
        assert set(np.flatnonzero(np.abs(beta * scale) > 1e-3)) == set(np.flatnonzero(np.abs(theirs * scale) > 1e-3))


def test_starts_add_the_lasso_path_without_repeats():
    from riskformula.netbenefit.heuristic import LocalSearch, rounded_starts, sparse_directions
    df = small_frame(60, 3)
    setup = prepare("y ~ a + b + c", df, coef_range=(-4, 4), c0=1e-3, max_size=2)
    X, pos, neg = setup.loss.Z[:, 1:], setup.loss.w_pos, setup.loss.w_neg
    search = LocalSearch(setup.problem, NetBenefitScorer(X, pos, neg, decision_grid()), 1e-3)
    starts = nb_fit._starts(setup.problem, search, X, pos, neg, None, setup.design)
    keys = [tuple(np.asarray(s, float) + 0.0) for s in starts]
    assert len(keys) == len(set(keys))
    assert keys[0] == (0.0, 0.0, 0.0)
    sparse = [tuple(r + 0.0) for d in sparse_directions(X, pos, neg)
              for r in rounded_starts(setup.problem, d, search.lo, search.hi)]
    assert sparse and set(sparse) <= set(keys)
    assert all(np.count_nonzero(s) <= 2 for s in starts)   # rounded within the size limit


class _Clock:
    """A stand-in for the ``time`` module of :mod:`riskformula.netbenefit.heuristic`: ``perf_counter``
    returns 0 for its first ``still`` calls and 100 after, so a deadline at 1 passes on cue."""

    def __init__(self, still: int):
        self.calls, self.still = 0, still

    def perf_counter(self) -> float:
        self.calls += 1
        return 0.0 if self.calls <= self.still else 100.0


def test_starts_regressions_stop_at_their_deadline(monkeypatch):
    from riskformula.netbenefit import heuristic
    X, pos, neg = _collapsed_rows(0)
    fractions = (0.5, 0.2, 0.05)
    full = heuristic.sparse_directions(X, pos, neg, fractions=fractions)
    assert len(full) == 3
    beta, _, stopped = heuristic._penalised_logistic(X, pos, neg, ridge=1e-3)
    assert not stopped
    # no deadline and a deadline never reached give the same regressions, to the bit
    assert all(np.array_equal(a, b) for a, b in
               zip(full, heuristic.sparse_directions(X, pos, neg, fractions=fractions, deadline=math.inf)))
    # a deadline already passed: no regression at all
    assert heuristic.sparse_directions(X, pos, neg, fractions=fractions, deadline=-math.inf) == []
    # the deadline comes during the first regression (after the entry check, at its first iteration):
    # the solver stops there, and the weaker penalties are skipped
    clock = _Clock(still=1)
    monkeypatch.setattr(heuristic, "time", clock)
    cut = heuristic.sparse_directions(X, pos, neg, fractions=fractions, deadline=1.0)
    assert len(cut) <= 1 and clock.calls == 2
    clock = _Clock(still=0)
    monkeypatch.setattr(heuristic, "time", clock)
    _, _, stopped = heuristic._penalised_logistic(X, pos, neg, ridge=1e-3, deadline=1.0)
    assert stopped and clock.calls == 1   # one iteration, then the deadline


def test_starts_skip_the_regressions_past_their_deadline():
    from riskformula.netbenefit.heuristic import LocalSearch
    df = small_frame(60, 3)
    setup = prepare("y ~ a + b + c", df, coef_range=(-4, 4), c0=1e-3, max_size=2)
    X, pos, neg = setup.loss.Z[:, 1:], setup.loss.w_pos, setup.loss.w_neg
    search = LocalSearch(setup.problem, NetBenefitScorer(X, pos, neg, decision_grid()), 1e-3)
    late = nb_fit._starts(setup.problem, search, X, pos, neg, None, setup.design, deadline=-math.inf)
    assert [tuple(s + 0.0) for s in late] == [(0.0, 0.0, 0.0)]   # the empty score only
    on_time = nb_fit._starts(setup.problem, search, X, pos, neg, None, setup.design, deadline=math.inf)
    free = nb_fit._starts(setup.problem, search, X, pos, neg, None, setup.design)
    assert len(free) > 1 and [tuple(s) for s in on_time] == [tuple(s) for s in free]


def test_a_tiny_time_limit_still_returns_a_score():
    df = small_frame(200, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score("y ~ threshold(a) + b + c", df, objective="net_benefit", max_size=2, coef_range=(0, 3),
                          c0=1e-3, time_limit=1e-3, progress=False)
    assert m.status in ("heuristic", "time_limit", "optimal")
    assert m.net_benefit >= 0 and m.profile is not None


def test_local_search_chains_are_deterministic_and_keep_the_best_start():
    from riskformula.netbenefit.heuristic import LocalSearch
    df = small_frame(80, 11, real=True)
    setup = prepare("y ~ a + b + c", df, coef_range=(-4, 4), c0=1e-3, max_size=3)
    X, pos, neg = setup.loss.Z[:, 1:], setup.loss.w_pos, setup.loss.w_neg
    scorer = NetBenefitScorer(X, pos, neg, decision_grid())
    rng = np.random.default_rng(0)
    starts = [rng.integers(-4, 5, 3).astype(float) for _ in range(8)]
    runs = [LocalSearch(setup.problem, scorer, 1e-3).run(starts, rounds=50, time_limit=60, elites=3) for _ in range(2)]
    assert np.array_equal(runs[0].points, runs[1].points) and runs[0].objective == runs[1].objective
    search = LocalSearch(setup.problem, scorer, 1e-3)
    descended = max(search.descend(s, time.perf_counter() + 60)[1] for s in starts)
    assert runs[0].objective >= descended - 1e-12
    assert runs[0].objective == pytest.approx(search.objective(runs[0].points), abs=1e-12)
    assert runs[0].rounds >= 3 * 50     # every chain kicks at least `rounds` times before it stops


def test_command_line_fits_a_net_benefit_score(capsys):
    from riskformula.cli import main
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        code = main(["fit", "Malignant ~ .", "--data", "mammo", "--objective", "net_benefit", "--max-size", "2",
                     "--time-limit", "3", "--decision-thresholds", "0.2", "0.5", "--format", "markdown"])
    assert code == 0
    out = capsys.readouterr().out
    assert "# Net-benefit risk score" in out and "score &gt;=" in out  # Markdown escapes ">"


# --- counterfactuals, reasons and fairness on a net-benefit score ------------------------------

def _nb_small(seed=0, **kw):
    df = small_frame(60, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        m = rf.risk_score("y ~ a + b + c", df, objective="net_benefit", coef_range=(-2, 2), max_size=3,
                          c0=1e-3, solver=None, time_limit=3, **kw)
    return df, m


@pytest.mark.parametrize("seed", [0] + [pytest.param(s, marks=pytest.mark.slow) for s in (1, 2)])  # 1, 2: 6 s
def test_risk_targets_are_exact_band_edges(seed):
    df, m = _nb_small(seed)
    lo, hi = m._score_limits()
    scores = np.arange(lo - 2, hi + 3)
    risks = m._risk_at(scores)
    for t in sorted(set(np.round(m.nb.band_risk, 6)) | {0.05, 0.33, 0.5, 0.8}):
        t = float(min(max(t, 1e-6), 1 - 1e-6))
        for sign in (-1, 1):
            meets = risks <= t if sign < 0 else risks >= t
            if not meets.any():
                with pytest.raises(SettingsError, match="no score has a risk"):
                    m.score_for_risk(t, sign)
                continue
            t_int, t_real = m.score_for_risk(t, sign)
            by_score = scores <= t_int if sign < 0 else scores >= t_int
            by_real = scores <= t_real if sign < 0 else scores >= t_real
            np.testing.assert_array_equal(by_score, meets)
            np.testing.assert_array_equal(by_real, meets)


def test_counterfactuals_of_a_net_benefit_score_against_brute_force():
    df, m = _nb_small(1)
    t = 0.3
    people = df.head(12)
    cf = m.counterfactuals(people, target_risk=t, n=1, data=df)
    grid = pd.DataFrame(list(itertools.product(*(sorted(df[c].unique()) for c in "abc"))), columns=list("abc"))
    reach = m.predict(grid).to_numpy() <= t
    risks = m.predict(people).to_numpy()
    new = m.predict(cf.apply()) if any(p.counterfactuals for p in cf.people) else pd.Series(dtype=float)
    assert (new <= t).all()
    for p, r, (_, row) in zip(cf.people, risks, people.iterrows()):
        assert p.risk == pytest.approx(r)
        if r <= t:
            assert p.status == "already met"
        elif not reach.any():
            assert p.status == "infeasible"
        else:
            assert p.status == "optimal" and p.counterfactuals
            # the fewest changes: no combination with fewer changed features reaches the target
            fewest = min(int((grid.iloc[k] != row[list("abc")]).sum()) for k in np.flatnonzero(reach))
            assert len(p.counterfactuals[0].changes) >= fewest


def test_net_benefit_json_keeps_the_profile_and_counterfactuals():
    df, m = _nb_small(2)
    assert m.profile is not None
    m2 = rf.from_json(m.to_json())
    assert isinstance(m2, rf.NetBenefitScore)
    assert m2.profile.to_dict() == m.profile.to_dict()
    people = df.head(6)
    a = m.counterfactuals(people, target_risk=0.4, n=2).to_frame()
    b = m2.counterfactuals(people, target_risk=0.4, n=2).to_frame()
    pd.testing.assert_frame_equal(a.drop(columns="seconds", errors="ignore"),
                                  b.drop(columns="seconds", errors="ignore"))
    assert "Principal reasons" in str(m2.reasons(people.head(2)))


def test_fairness_audit_works_and_fairness_constraints_are_refused():
    df, m = _nb_small(3)
    df = df.assign(g=np.where(np.arange(len(df)) % 3 == 0, "x", "y"))
    audit = m.fairness(df, by="g", at_risk=0.5)
    sel = m.predict(df) >= 0.5
    rates = audit.to_frame().set_index("group")
    assert "Fairness audit" in str(audit)
    for g in ("x", "y"):     # the audit sees the band risks predict() gives
        assert rates.loc[g, "selection_rate"] == pytest.approx(sel[df.g == g].mean())
    with pytest.raises(SettingsError, match="fairness constraints are not yet supported with objective='net_benefit'"):
        rf.risk_score("y ~ a + b + c", df, objective="net_benefit", coef_range=(-2, 2), max_size=2,
                      constraints=[rf.statistical_parity("g", at_score=1)])


@pytest.mark.parametrize("scale", ["fit", 2, [1, 2]])
def test_a_score_scale_is_refused_with_net_benefit(scale):
    df = small_frame(40, 0)
    with pytest.raises(SettingsError, match="scale.*does not apply with objective='net_benefit'"):
        rf.risk_score("y ~ .", df, objective="net_benefit", scale=scale)


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_a_logistic_fit_after_the_exact_model_in_one_process(monkeypatch):
    # HiGHS sizes one thread scheduler per process at its first solve; the exact model's solve
    # (any threads) must not leave one that the single-thread node LPs of a later fit cannot use
    monkeypatch.setattr(nb_fit, "EXACT_SEARCH_SPACE", 0)
    df = small_frame(40, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        nb = rf.risk_score("y ~ a + b + c", df, objective="net_benefit", coef_range=(-2, 2), max_size=3,
                           c0=1e-3, time_limit=10, solver_options={"threads": 2})
    assert "milp_status" in nb.solver.settings
    m = rf.risk_score("y ~ a + b + c", df, max_size=2, time_limit=10)
    assert m.status == "optimal"


@pytest.mark.slow  # 5-8 s: the default run stays within about 6 minutes
def test_the_exact_model_is_skipped_when_its_hand_over_does_not_fit_in_the_time_left(monkeypatch):
    """Handing the exact model to the solver cannot be interrupted (on wdbc with threshold(.) it
    took longer than building it), so the fit leaves room for it or skips the model; either way
    the score is the local search's with an honest gap."""
    monkeypatch.setattr(nb_fit, "EXACT_SEARCH_SPACE", 0)  # the MILP's path
    df = small_frame(40, 3)
    best = brute_force(df, -2, 2, decision_grid(), 1e-3)
    opts = dict(objective="net_benefit", coef_range=(-2, 2), max_size=3, c0=1e-3, time_limit=10)
    # estimated too slow to build and hand over in the time left: not built
    monkeypatch.setattr(nb_fit, "BUILD_SECONDS_PER_ROW", 1e3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        m = rf.risk_score("y ~ a + b + c", df, **opts)
    assert m.solver.settings["milp_status"].startswith("skipped") and "time left" in m.solver.settings["milp_status"]
    assert m.objective <= best + 1e-12 <= m.upper_bound + 1e-12
    # built, but too little time is left after the local search to hand it over and solve it
    monkeypatch.setattr(nb_fit, "BUILD_SECONDS_PER_ROW", 1e-3)
    monkeypatch.setattr(nb_fit, "MIN_SOLVE_SECONDS", 1e6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        m = rf.risk_score("y ~ a + b + c", df, **opts)
    assert "too little to hand the exact model over" in m.solver.settings["milp_status"]
    assert m.status == "heuristic" and m.objective <= best + 1e-12 <= m.upper_bound + 1e-12


def test_a_net_benefit_above_one_saves_and_loads():
    # user weights summing to more than 1 give a net benefit above 1; the file kept it to [−inf, 1]
    df = small_frame(30, 11)
    m = rf.risk_score("y ~ a + b + c", df, objective=rf.net_benefit([0.5, 0.2], weights=[3.0, 1.0]),
                      coef_range=(-2, 2), max_size=3, time_limit=60)
    assert m.net_benefit > 1
    again = rf.from_json(m.to_json())
    assert again.net_benefit == pytest.approx(m.net_benefit) and again.objective == pytest.approx(m.objective)
    pd.testing.assert_series_equal(again.predict(df), m.predict(df))
