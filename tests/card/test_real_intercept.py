"""A real-valued intercept: when it is used, what it changes, and that it survives a round trip.

The brute-force checks of the search with a real intercept (the certified optimum, the bounds of
early stops, listing a node's points) are in test_scale.py and test_enumeration.py, beside their
integer-intercept twins.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar

import riskformula as rf
from riskformula.errors import SettingsError
from riskformula.problem.loss import real_intercepts


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, 3)).astype(float)
    eta = 0.8 * X[:, 0] - 0.6 * X[:, 1] + 0.3 * X[:, 2] - 0.4
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    return pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y)


# --- the one-dimensional minimisation ---------------------------------------------------------

@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0])
def test_real_intercepts_match_scipy(scale):
    rng = np.random.default_rng(1)
    wp, wn = rng.random(40) * (rng.random(40) < 0.6), rng.random(40)
    S = rng.integers(-6, 7, (40, 5)).astype(float)
    got = real_intercepts(wp, wn, S, -30.0, 30.0, scale)
    for k in range(S.shape[1]):
        def f(b):
            z = (S[:, k] + b) / scale
            return wp @ np.logaddexp(0, -z) + wn @ np.logaddexp(0, z)
        ref = minimize_scalar(f, bounds=(-30, 30), method="bounded", options={"xatol": 1e-10}).x
        assert got[k] == pytest.approx(ref, abs=1e-6)
        assert f(got[k]) <= f(ref) + 1e-12


def test_real_intercepts_stop_at_the_range():
    # every row an event: the loss falls all the way to the upper end of the range
    b = real_intercepts(np.ones(3), np.zeros(3), np.zeros((3, 2)), -4.0, 2.5)
    assert b.tolist() == [2.5, 2.5]
    b = real_intercepts(np.zeros(3), np.ones(3), np.zeros((3, 1)), -4.0, 2.5)
    assert b.tolist() == [-4.0]


def test_one_event_in_four_is_its_log_odds():
    # hand-computed: weights 1 event, 3 non-events at score 0: b = log(1/3), on any scale times m
    for m in (1.0, 2.0):
        b = real_intercepts(np.array([1.0]), np.array([3.0]), np.zeros((1, 1)), -10, 10, m)
        assert b[0] == pytest.approx(m * math.log(1 / 3), abs=1e-9)


# --- when the intercept is real ---------------------------------------------------------------

def test_default_is_real_with_a_fitted_scale_only():
    df = _data()
    fixed = rf.risk_score("y ~ a + b + c", df, max_size=3, time_limit=30)
    assert fixed.settings.real_intercept is False and isinstance(fixed.intercept, int)
    fitted = rf.risk_score("y ~ a + b + c", df, max_size=3, scale=[1, 2, 4], time_limit=30)
    assert fitted.settings.real_intercept is True and not float(fitted.intercept).is_integer()
    # the same scales with an integer intercept can only fit worse
    whole = rf.risk_score("y ~ a + b + c", df, max_size=3, scale=[1, 2, 4], real_intercept=False,
                                 control=rf.SearchControl(time_limit=30))
    assert isinstance(whole.intercept, int)
    assert fitted.status == whole.status == "optimal"
    assert fitted.objective < whole.objective


def test_risk_constraints_keep_the_integer_intercept():
    df = _data()
    cons = [rf.risk_at_least(0.5, when={"a": 1, "b": 0})]
    m = rf.risk_score("y ~ a + b + c", df, max_size=3, scale=[1, 2], constraints=cons, time_limit=30)
    assert m.settings.real_intercept is False and isinstance(m.intercept, int)
    with pytest.raises(SettingsError, match="real_intercept=True.*risk"):
        rf.risk_score("y ~ a + b + c", df, max_size=3, scale=[1, 2], constraints=cons, real_intercept=True)


@pytest.mark.parametrize("bad", ["yes", 1, 0.5])
def test_bad_real_intercept_is_a_settings_error(bad):
    with pytest.raises(SettingsError, match="`real_intercept` must be True, False or None"):
        rf.risk_score("y ~ a", _data(), real_intercept=bad)


# --- what a model with a real intercept does ----------------------------------------------------

@pytest.fixture(scope="module")
def real_fit():
    df = _data(2)
    return df, rf.risk_score("y ~ a + b + c", df, max_size=3, scale="fit", time_limit=30)


def test_predict_uses_the_real_intercept(real_fit):
    df, m = real_fit
    s = m.score(df).to_numpy()
    assert m.predict(df).to_numpy() == pytest.approx(1 / (1 + np.exp(-(m.intercept + s) / m.scale)), rel=1e-12)
    table = m.risk_table()
    assert table["risk_from"].to_numpy() == pytest.approx(m.risk_of(table["score_from"].to_numpy()), rel=1e-12)


def test_card_and_summary_show_the_real_intercept(real_fit):
    _, m = real_fit
    text = str(m)
    assert f"risk = 1 / (1 + exp(-({m.intercept:+.4f} + score) / {m.scale:g}))" in text
    assert "(a real number)" in str(m.summary())


def test_json_round_trip_keeps_the_real_intercept(real_fit):
    df, m = real_fit
    back = rf.from_json(m.to_json())
    assert back.intercept == m.intercept and back.settings.real_intercept is True
    assert back.predict(df).equals(m.predict(df))


def test_a_real_intercept_model_is_a_warm_start_for_an_integer_fit(real_fit):
    df, m = real_fit
    again = rf.risk_score("y ~ a + b + c", df, max_size=3, scale=m.scale, initial=m, time_limit=30)
    assert isinstance(again.intercept, int) and again.objective >= m.objective - 1e-12


def test_counterfactuals_cross_the_real_threshold(real_fit):
    df, m = real_fit
    risk = m.predict(df)
    target = float(np.quantile(risk, 0.3))  # between the model's risks: some must come down
    people = df[risk > target].drop(columns="y").drop_duplicates().head(4)
    cf = m.counterfactuals(people, target_risk=target)
    done = [p for p in cf if p.status == "optimal"]
    assert done
    moved = m.predict(cf.apply())
    assert (moved <= target + 1e-12).all()
    # the threshold sits between two attainable totals: one point less than needed stays above it
    tau = m.scale * math.log(target / (1 - target)) - m.intercept
    assert not float(tau).is_integer()


@pytest.mark.parametrize("flag, real", [([], True), (["--no-real-intercept"], False)])
def test_cli_real_intercept(tmp_path, flag, real):
    import json

    from riskformula.cli import main
    path, saved = tmp_path / "d.csv", tmp_path / "m.json"
    _data().to_csv(path, index=False)
    assert main(["fit", "y ~ a + b + c", "--data", str(path), "--max-size", "2", "--scale", "1,2",
                 "--time-limit", "30", "--no-progress", "--json", str(saved), *flag]) == 0
    doc = json.loads(saved.read_text())
    assert doc["settings"]["real_intercept"] is real
    assert float(doc["card"]["intercept"]).is_integer() is not real


def test_classifier_passes_real_intercept_on():
    pytest.importorskip("sklearn")
    df = _data()
    clf = rf.RiskScoreClassifier("y ~ a + b + c", max_size=2, scale=[1, 2], real_intercept=False,
                                 control=rf.SearchControl(time_limit=30))
    clf.fit(df)
    assert clf.model_.settings.real_intercept is False and isinstance(clf.model_.intercept, int)
