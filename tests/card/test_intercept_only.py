"""A formula with no predictors (``y ~ 1``) fits the base-rate model instead of failing."""
import numpy as np
import pandas as pd
import pytest

import riskformula as rf


def _frame(n=60, events=23):
    return pd.DataFrame({"y": [1] * events + [0] * (n - events), "x": np.arange(n) % 2})


def _loss(y, z):
    return float(np.mean(np.logaddexp(0, -np.where(y == 1, 1, -1) * z)))


@pytest.mark.parametrize("formula", ["y ~ 1", "y ~ x - x"])
def test_whole_intercept_is_the_best_one(formula):
    df = _frame()
    m = rf.risk_score(formula, df, time_limit=10, progress=False)
    y = df["y"].to_numpy()
    best = min(range(-5, 6), key=lambda b: _loss(y, b))  # brute force over whole intercepts
    assert m.status == "optimal" and m.coef.empty
    assert m.intercept == best
    assert m.loss == pytest.approx(_loss(y, best), abs=1e-9)
    assert np.allclose(m.predict(df), 1 / (1 + np.exp(-best)))


def test_fitted_scale_reaches_the_base_rate():
    df = _frame()
    m = rf.risk_score("y ~ 1", df, scale="fit", time_limit=10, progress=False)
    rate = df["y"].mean()
    entropy = -(rate * np.log(rate) + (1 - rate) * np.log(1 - rate))
    assert m.loss == pytest.approx(entropy, abs=1e-6)
    assert m.lower_bound <= entropy + 1e-9
    assert np.allclose(m.predict(df), rate, atol=1e-3)
