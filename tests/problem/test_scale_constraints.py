"""A fitted score scale with everything that speaks about the risk: side information, fairness
constraints (bounds and penalties, cut-offs on the risk and on the score), the fairness audit, the
fairness path and counterfactual explanations.

The oracles enumerate every integer score (points, intercept and scale) and share no code with the
package: a risk is 1 / (1 + exp(−(b + score)/m)), a cut-off ``at_risk=p`` is "risk ≥ p" on that
risk, and group rates are checked with exact rational arithmetic.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import riskformula as rf

B_RANGE = (-24, 24)  # holds the best intercept of every instance below at every scale used
REAL_MARGIN = 1e-4  # the documented band below a cut-off that real-valued scores may not enter


def make(seed: int, n: int = 60, real: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], n)
    x1 = rng.integers(0, 2, n)
    x2 = (rng.random(n) < np.where(g == "a", 0.7, 0.3)).astype(int)  # the groups differ in x2
    x3 = np.round(rng.normal(0, 1, n), 1) if real else rng.integers(0, 2, n)
    lp = -1.0 + 0.7 * x1 + 0.6 * x2 + 0.4 * x3  # weak effects: scales above 1 pay off
    y = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "x3": x3, "g": g})


def _rates(pred, y, g, strata):
    out = {}
    for k, mask in strata.items():
        out[k] = {grp: Fraction(int(pred[mask & (g == grp)].sum()), int((mask & (g == grp)).sum()))
                  for grp in sorted(set(g[mask]))}
    return out


def _strata(notion, y):
    if notion == "statistical_parity":
        return {"all": np.ones(len(y), bool)}
    if notion == "equal_opportunity":
        return {"pos": y == 1}
    return {"neg": y == 0, "pos": y == 1}  # equalized odds


def _worst(rates):
    return max((max(r.values()) - min(r.values()) for r in rates.values() if len(r) >= 2), default=Fraction(0))


def oracle(df, cols, scales, *, notion="statistical_parity", at_risk=None, at_score=None, max_diff=None,
           penalty=None, check=None, lo=-2, hi=2, max_size=2, c0=1e-6):
    """Per scale, the least objective over every integer score that satisfies the constraint."""
    X = df[cols].to_numpy(float)
    y, g = df["y"].to_numpy(), df["g"].to_numpy()
    real = ~np.all(X == np.round(X), axis=1)
    strata = _strata(notion, y)
    best = {}
    for m in scales:
        best[m] = math.inf
        for lam in itertools.product(range(lo, hi + 1), repeat=len(cols)):
            lam = np.array(lam, float)
            if np.count_nonzero(lam) > max_size:
                continue
            base = X @ lam
            for b in range(B_RANGE[0], B_RANGE[1] + 1):
                s = b + base
                z = s / m
                obj = float(np.mean(y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z))) + c0 * np.count_nonzero(lam)
                if check is not None:
                    if not check(lam, b, m):
                        continue
                elif at_risk is not None or at_score is not None:
                    if at_score is not None:
                        pred = (base >= at_score).astype(int)
                    else:
                        pred = (1 / (1 + np.exp(-z)) >= at_risk).astype(int)
                        tau = m * math.log(at_risk / (1 - at_risk))  # the cut-off in points
                        if np.any(real & (s < tau) & (s >= tau - REAL_MARGIN)):
                            continue
                    worst = _worst(_rates(pred, y, g, strata))
                    if penalty is not None:
                        obj += penalty * float(worst)
                    elif worst > Fraction(repr(max_diff)):
                        continue
                best[m] = min(best[m], obj)
    return best


def fit(df, cols, constraint, scale, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.SmallGroupWarning)
        return rf.risk_score("y ~ " + " + ".join(cols), df, max_size=2, coef_range=(-2, 2), c0=1e-6,
                             time_limit=60, constraints=[constraint], scale=scale, gap_tolerance=1e-9, **kw)


def agree(m, per_scale):
    best = min(per_scale.values())
    assert m.status == "optimal"
    assert m.lower_bound <= best + 1e-9
    assert m.objective == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert per_scale[m.scale] == pytest.approx(best, rel=1e-9, abs=1e-12)
    for r in m.solver.scales:  # each scale's own bound never passes that scale's optimum
        assert r["lower_bound"] <= per_scale[r["scale"]] + 1e-9


def fitted_worst(m, df, notion, at_risk=None, at_score=None):
    """The largest rate difference of a fitted model, from its own predictions."""
    y = df["y"].to_numpy()
    pred = ((m.predict(df) >= at_risk) if at_score is None else (m.score(df) >= at_score)).astype(int).to_numpy()
    return _worst(_rates(pred, y, df["g"].to_numpy(), _strata(notion, y)))


# --- fairness bounds: the cut-off on the risk moves with the scale ---------------------------

def test_cut_off_on_the_risk_is_written_on_each_scale():
    # risk ≥ 30%: an integer score of at least 0 at scale 1 (expit(−1) < 0.3), of at least −1 at
    # scale 2 (expit(−1/2) ≥ 0.3); a cut-off taken at scale 1 would be wrong at scale 2
    from riskformula.fairness import statistical_parity
    c = statistical_parity("g", at_risk=0.3, max_diff=0.1)
    patterns = np.array([[0.0], [1.0]])
    for scale, cut in ((1.0, 0.0), (2.0, -1.0), (4.0, -3.0)):
        _, cutoff, margin = c._conditions(patterns, scale)
        assert list(cutoff) == [cut, cut] and list(margin) == [1.0, 1.0]
        assert 1 / (1 + math.exp(-cut / scale)) >= 0.3 > 1 / (1 + math.exp(-(cut - 1) / scale))


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("notion, seed, max_diff", [("statistical_parity", 4, 0.1),
                                                    ("equal_opportunity", 6, 0.05),
                                                    ("equalized_odds", 4, 0.15)])
def test_fairness_bound_with_a_fitted_scale_is_the_brute_force_optimum(notion, seed, max_diff):
    df, cols, scales = make(seed), ["x1", "x2", "x3"], (1.0, 2.0, 3.0)
    maker = {"statistical_parity": rf.statistical_parity, "equal_opportunity": rf.equal_opportunity,
             "equalized_odds": rf.equalized_odds}[notion]
    m = fit(df, cols, maker("g", at_risk=0.3, max_diff=max_diff), list(scales))
    per_scale = oracle(df, cols, scales, notion=notion, at_risk=0.3, max_diff=max_diff)
    agree(m, per_scale)
    assert fitted_worst(m, df, notion, at_risk=0.3) <= Fraction(repr(max_diff))
    # the fit's own record of the constraint is the audit's number on the training rows
    (row,) = m.training.constraint_values
    assert row["value"] == pytest.approx(float(fitted_worst(m, df, notion, at_risk=0.3)))
    assert row["slack"] >= -1e-12


def test_fairness_bound_at_a_fixed_scale_is_the_brute_force_optimum():
    df, cols = make(4), ["x1", "x2", "x3"]
    m = fit(df, cols, rf.statistical_parity("g", at_risk=0.3, max_diff=0.1), 2.5)
    agree(m, oracle(df, cols, (2.5,), at_risk=0.3, max_diff=0.1))
    assert m.scale == 2.5


def test_fairness_penalty_with_a_fitted_scale_is_the_brute_force_optimum():
    # the penalty is part of the objective the scales compete on
    df, cols, scales = make(4), ["x1", "x2", "x3"], (1.0, 2.0)
    m = fit(df, cols, rf.statistical_parity("g", at_risk=0.3, max_diff=None, weight=0.05), list(scales))
    agree(m, oracle(df, cols, scales, at_risk=0.3, penalty=0.05))


def test_cut_off_on_the_score_with_a_fitted_scale():
    # "score ≥ 1" is the same rule at every scale
    df, cols, scales = make(7), ["x1", "x2", "x3"], (1.0, 2.0)
    m = fit(df, cols, rf.statistical_parity("g", at_score=1, max_diff=0.1), list(scales))
    agree(m, oracle(df, cols, scales, at_score=1, max_diff=0.1))
    assert fitted_worst(m, df, "statistical_parity", at_score=1) <= Fraction(1, 10)


def test_real_valued_predictor_with_a_fitted_scale():
    df, cols, scales = make(3, real=True), ["x1", "x3"], (1.0, 2.0)
    m = fit(df, cols, rf.statistical_parity("g", at_risk=0.3, max_diff=0.05), list(scales))
    agree(m, oracle(df, cols, scales, at_risk=0.3, max_diff=0.05))
    assert fitted_worst(m, df, "statistical_parity", at_risk=0.3) <= Fraction(1, 20)


def test_score_balance_with_a_fitted_scale_bounds_the_points():
    # the bound is on the card's points (mean score), whatever the scale
    df, cols, scales = make(5), ["x1", "x2", "x3"], (1.0, 2.0)
    X, g = df[cols].to_numpy(float), df["g"].to_numpy()

    def check(lam, b, m):
        s = X @ lam
        return abs(s[g == "a"].mean() - s[g == "b"].mean()) <= 0.1 + 1e-12

    m = fit(df, cols, rf.score_balance("g", max_diff=0.1), list(scales))
    agree(m, oracle(df, cols, scales, check=check))
    s = m.score(df).to_numpy()
    assert abs(s[g == "a"].mean() - s[g == "b"].mean()) <= 0.1 + 1e-12


# --- side information -------------------------------------------------------------------------

def test_side_information_with_a_fitted_scale_is_the_brute_force_optimum():
    df, cols, scales = make(2), ["x1", "x2", "x3"], (1.0, 2.0, 3.0)
    t_hi, t_lo = math.log(0.7 / 0.3), math.log(0.25 / 0.75)

    def check(lam, b, m):  # risk(x1 = x2 = 1) ≥ 70 %, risk(nothing) ≤ 25 %
        return (b + lam[0] + lam[1]) / m >= t_hi and b / m <= t_lo

    cons = [rf.risk_at_least(0.7, when={"x1": 1, "x2": 1}), rf.risk_at_most(0.25, when={"x1": 0})]
    m = rf.risk_score("y ~ x1 + x2 + x3", df, max_size=2, coef_range=(-2, 2), c0=1e-6, time_limit=60,
                      constraints=cons, scale=list(scales), gap_tolerance=1e-9)
    agree(m, oracle(df, cols, scales, check=check))
    risk = m.predict(pd.DataFrame({"x1": [1, 0], "x2": [1, 0], "x3": [0, 0]})).to_numpy()
    assert risk[0] >= 0.7 and risk[1] <= 0.25


# --- the fairness audit and the fairness path -------------------------------------------------

def test_fairness_audit_uses_the_scaled_risk():
    df = make(4, n=200)
    m = fit(df, ["x1", "x2", "x3"], rf.statistical_parity("g", at_risk=0.3, max_diff=0.1), [1, 2, 3])
    audit = m.fairness(df, by="g", at_risk=0.35)
    risk = 1 / (1 + np.exp(-(m.intercept + m.score(df).to_numpy()) / m.scale))
    t = audit.by_group.set_index("group")
    for grp in ("a", "b"):
        rows = df["g"].to_numpy() == grp
        assert t.loc[grp, "selection_rate"] == pytest.approx(np.mean(risk[rows] >= 0.35))
        assert t.loc[grp, "mean_risk"] == pytest.approx(risk[rows].mean())


def test_fairness_path_with_a_fitted_scale():
    df = make(4, n=120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = rf.fairness_path("y ~ x1 + x2 + x3", df, by="g", max_diff=[0.2, 0.05], at_risk=0.3, max_size=2,
                                coef_range=(-2, 2), time_limit=20, scale=[1, 2])
    assert len(path.models) == 3  # unconstrained, 0.2, 0.05
    for bound, m in path.models.items():
        assert m.scale in (1.0, 2.0)
        if not math.isnan(bound):
            assert fitted_worst(m, df, "statistical_parity", at_risk=0.3) <= Fraction(repr(bound))


# --- counterfactuals: risk targets are score targets through the model's own scale ---------------

@pytest.fixture(scope="module")
def cf_data():
    rng = np.random.default_rng(0)
    n = 300
    d = pd.DataFrame({"age": rng.integers(20, 71, n), "grp": rng.choice(["a", "b", "c"], n),
                      "smoker": rng.integers(0, 2, n), "rate": np.round(rng.uniform(0, 3, n), 1)})
    lp = -4.0 + 0.05 * d.age + 0.5 * (d.grp == "c") + 0.6 * d.smoker + 0.3 * d.rate
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    return d


@pytest.fixture(scope="module")
def m_scaled(cf_data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rf.risk_score("y ~ threshold(age, grid=6) + C(grp) + smoker", cf_data, max_size=4,
                             coef_range=(-3, 3), scale=2.5, time_limit=10, progress=False)


def _grid(train, v):
    s = train[v]
    if not pd.api.types.is_numeric_dtype(s) or s.nunique() <= 2:
        return sorted(s.unique().tolist())
    return list(range(int(s.min()), int(s.max()) + 1))


def _cheapest(model, train, person, variables, target):
    """The least cost (scaled L1 on numbers, 1 per changed category) of a change reaching risk ≤ target."""
    grids = [_grid(train, v) for v in variables]
    combos = list(itertools.product(*grids))
    rows = pd.DataFrame([person.to_dict()] * len(combos))
    for j, v in enumerate(variables):
        rows[v] = [c[j] for c in combos]
    risk = 1 / (1 + np.exp(-(model.intercept + model.score(rows).to_numpy()) / model.scale))
    cost = np.zeros(len(rows))
    for v in variables:
        x = train[v]
        if pd.api.types.is_numeric_dtype(x) and x.nunique() > 2:
            unit = float(np.median(np.abs(x - np.median(x)))) or float(np.std(x))
            cost += np.abs(rows[v].to_numpy(float) - float(person[v])) / unit
        else:
            cost += rows[v].to_numpy() != person[v]
    ok = risk <= target
    return cost[ok].min() if ok.any() else None


def test_counterfactuals_at_a_scale_equal_brute_force(m_scaled, cf_data):
    assert m_scaled.scale == 2.5
    target = 0.3
    risk = m_scaled.predict(cf_data)
    people = cf_data[risk > target].drop_duplicates(subset=["age", "grp", "smoker"]).head(6)
    assert len(people) >= 3
    cf = m_scaled.counterfactuals(people, target_risk=target)
    for p in cf:
        best = _cheapest(m_scaled, cf_data, people.loc[p.person], ["age", "grp", "smoker"], target)
        if best is None:
            assert p.status == "infeasible"
            continue
        assert p.status == "optimal"
        c = p.counterfactuals[0]
        assert c.cost == pytest.approx(best, abs=1e-9)
        assert c.risk <= target
        assert c.risk == pytest.approx(1 / (1 + math.exp(-(m_scaled.intercept + c.score) / m_scaled.scale)))
        assert p.risk == pytest.approx(float(risk[p.person]))


def test_counterfactual_score_target_follows_the_scale(m_scaled):
    # the whole-number score target: the largest score whose risk (as predict computes it) is ≤ t
    from riskformula.counterfactuals.search import _score_targets
    risk_at = m_scaled._risk_at
    for t in (0.1, 0.3, 0.5):
        whole, real = _score_targets(-1, t, None, m_scaled)
        assert risk_at(whole) <= t < risk_at(whole + 1)
        assert real == pytest.approx(m_scaled.scale * math.log(t / (1 - t)) - m_scaled.intercept, abs=1e-6)


def test_counterfactuals_with_real_valued_scores_at_a_scale(cf_data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score("y ~ rate + C(grp) + smoker", cf_data, min_size=3, max_size=3, scale=2,
                          coef_range={"default": (-3, 3), "rate": (1, 1)}, time_limit=10, progress=False)
    people = cf_data[m.predict(cf_data) > 0.4].head(4)
    cf = m.counterfactuals(people, target_risk=0.4)
    assert any(p.counterfactuals for p in cf)
    for p in cf:
        for c in p.counterfactuals:  # each was rescored by the model itself before it was returned
            assert c.risk <= 0.4
            assert c.risk == pytest.approx(1 / (1 + math.exp(-(m.intercept + c.score) / m.scale)))
