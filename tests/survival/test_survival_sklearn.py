"""rf.RiskScoreSurvival: scikit-survival's structured ``y`` (built here with numpy: scikit-survival
is not a dependency), predict = the card's log relative hazard, score = Harrell's C, the curves,
clone/get_params and cross_val_score."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import KFold, cross_val_score  # noqa: E402

import riskformula as rf  # noqa: E402
from riskformula.errors import DataError, SettingsError  # noqa: E402
from riskformula.reports.survival_metrics import harrell_c  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_survival_card import _data  # noqa: E402

CONTROL = rf.SearchControl(node_limit=300, time_limit=60, progress=False)


def _xy(df, names=("event", "time"), order=("event", "time")):
    """X and the structured y of scikit-survival's Surv.from_arrays (fields in ``order``)."""
    X = df[["a", "b"]].assign(z=(df["c"] == "z").astype(int))
    cols = {"event": df["d"].to_numpy() == 1, "time": df["t"].to_numpy(float)}
    kinds = {"event": "?", "time": "<f8"}
    dtype = [(names[("event", "time").index(f)], kinds[f]) for f in order]
    y = np.empty(len(df), dtype=dtype)
    for f in order:
        y[names[("event", "time").index(f)]] = cols[f]
    return X, y


@pytest.fixture(scope="module")
def df():
    return _data(5, n=120)


def test_fit_predict_score_match_the_card(df):
    X, y = _xy(df)
    est = rf.RiskScoreSurvival("a + b + z", max_size=2, scale=[1, 2], control=CONTROL).fit(X, y)
    m = est.model_
    assert isinstance(m, rf.SurvivalScore) and est.formula_ == "Surv(time, event) ~ a + b + z"
    card = rf.risk_score("Surv(t, d) ~ a + b + z", df.assign(z=X["z"]), max_size=2, scale=[1, 2],
                         node_limit=300, time_limit=60)
    assert dict(m.coef) == dict(card.coef) and m.scale == card.scale
    pred = est.predict(X)
    assert np.allclose(pred, card.predict(df.assign(z=X["z"]), which="link"))
    assert np.allclose(pred, (m.intercept + m.score(X).to_numpy()) / m.scale)
    assert est.score(X, y) == pytest.approx(harrell_c(df["t"], df["d"], pred))
    assert est.score(X, y) == pytest.approx(m.training_metrics["harrell_c"])
    # the curves are the card's
    S = est.predict_survival_function(X.head(4), return_array=True)
    assert S.shape == (4, len(est.unique_times_))
    assert np.allclose(S, m.survival_function(X.head(4), times=est.unique_times_).to_numpy().T)
    fns = est.predict_survival_function(X.head(4))
    H = est.predict_cumulative_hazard_function(X.head(4), return_array=True)
    assert np.allclose(H, -np.log(S))
    for i, fn in enumerate(fns):
        assert np.allclose(fn(est.unique_times_), S[i]) and np.allclose(fn.y, S[i])
        assert fn(3.0) == pytest.approx(1 - m.predict(X.iloc[[i]], horizon=3.0).iloc[0])
    with pytest.raises(ValueError, match="longest training follow-up"):
        fns[0](df["t"].max() + 1)


def test_field_names_come_from_the_dtype(df):
    X, y = _xy(df, names=("Status", "Survival_in_days"), order=("time", "event"))
    est = rf.RiskScoreSurvival(max_size=1, scale=[1, 2], control=CONTROL).fit(X.to_numpy(float), y)
    assert est.formula_ == "Surv(Survival_in_days, Status) ~ ."
    assert (est.event_field_, est.time_field_) == ("Status", "Survival_in_days")
    X2, y2 = _xy(df)
    ref = rf.RiskScoreSurvival(max_size=1, scale=[1, 2], control=CONTROL).fit(X2.to_numpy(float), y2)
    assert np.allclose(est.predict(X.to_numpy(float)), ref.predict(X2.to_numpy(float)))


def test_clone_get_params_and_cross_val_score(df):
    X, y = _xy(df)
    est = rf.RiskScoreSurvival("a + b + z", max_size=1, scale=[1, 2], ties="breslow", control=CONTROL)
    params = est.get_params()
    assert params["ties"] == "breslow" and params["max_size"] == 1 and params["scale"] == [1, 2]
    twin = clone(est)
    assert twin.get_params() == params and not hasattr(twin, "model_")
    cv = KFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(est, X, y, cv=cv)
    by_hand = [clone(est).fit(X.iloc[tr], y[tr]).score(X.iloc[te], y[te]) for tr, te in cv.split(X)]
    assert np.allclose(scores, by_hand) and np.all((scores > 0) & (scores < 1))


def test_fit_on_a_frame_with_a_full_formula(df):
    est = rf.RiskScoreSurvival("Surv(t, d) ~ a + b", max_size=1, scale=[1, 2], control=CONTROL).fit(df)
    assert est.n_features_in_ == 3 and list(est.feature_names_in_) == ["a", "b", "c"]
    assert np.allclose(est.predict(df), est.model_.predict(df, which="link"))


def test_bad_targets_are_refused(df):
    X, y = _xy(df)
    est = rf.RiskScoreSurvival(max_size=1, control=CONTROL)
    with pytest.raises(DataError, match="structured array"):
        est.fit(X, df["t"].to_numpy())
    both = np.empty(len(df), dtype=[("e1", "?"), ("e2", "?")])
    with pytest.raises(DataError, match="exactly one boolean field"):
        est.fit(X, both)
    bad = y.copy()
    bad["time"][0] = -1
    with pytest.raises(DataError, match="finite times"):
        est.fit(X, bad)
    with pytest.raises(SettingsError, match="requires y"):
        est.fit(X)
    with pytest.raises(SettingsError, match="names an outcome"):
        rf.RiskScoreSurvival("Surv(t, d) ~ a", control=CONTROL).fit(X, y)
    with pytest.raises(ValueError, match="rows"):
        est.fit(X.head(10), y)
    fitted = rf.RiskScoreSurvival("a + b", max_size=1, scale=[1, 2], control=CONTROL).fit(X, y)
    with pytest.raises(SettingsError, match="sample_weight"):
        fitted.score(X, y, sample_weight=np.ones(len(X)))
    pd.testing.assert_frame_equal(X, _xy(df)[0])  # the caller's data are not modified
