"""Counterfactual changes: none that only fills a step of a threshold, none that moves a value to its own
rounding."""

from __future__ import annotations

import warnings

import numpy as np

import pandas as pd

import pytest

import riskformula as rf


def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rf.risk_score(*args, progress=False, **kwargs)

@pytest.fixture(scope="module")
def breastcancer():
    return rf.load_dataset("breastcancer")


def _linear_frame():
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"a": rng.normal(size=n), "i": rng.integers(0, 2, n), "g": rng.integers(0, 2, n),
                       "age": rng.normal(size=n), "grp": rng.choice(["e", "u"], n)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(df["a"] + df["i"] - df["g"] + df["age"])))).astype(int)
    return df


def test_counterfactual_has_no_change_that_only_fills_a_step():
    df = _linear_frame()
    m = _quiet("y ~ .", df, max_size=3, coef_range=(-3, 3), time_limit=10)
    cf = m.counterfactuals(df.head(2), target_risk=0.3)
    one = m.counterfactuals(df.head(2), target_risk=0.3, max_changes=1)
    frame = cf.to_frame()
    assert (frame["changes"] == 1).all(), frame
    assert frame["feature"].tolist() == ["a", "a"]
    for p, q in zip(cf.people, one.people):
        assert p.counterfactuals[0].values == q.counterfactuals[0].values
    assert (m.predict(cf.apply()) <= 0.3).all()


def test_counterfactual_never_moves_a_value_to_its_own_rounding():
    from riskformula.counterfactuals.instance import _step_away
    # 0.6462424 prints as 0.646242 at 6 decimals: moving there is no change
    assert _step_away(0.6462424, 1e-6) == (0.646241, 0.646243)
    assert _step_away(0.6462427, 1e-6) == (0.646242, 0.646244)
    assert _step_away(3.0, 1.0) == (2.0, 4.0)
