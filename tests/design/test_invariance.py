"""A fit depends on the data, not on how they are laid out: row order, duplicated rows vs.
integer weights, term order in the formula, and repeated calls give the same model."""

import numpy as np
import pandas as pd
import pytest

import riskformula as rf

SETTINGS = dict(max_size=3, coef_range=(-3, 3), c0=0.01, gap_tolerance=1e-9, time_limit=30)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(42)
    n = 150
    df = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 3, n),
                       "c": rng.integers(0, 2, n), "grp": rng.choice(["u", "v", "w"], n)})
    lin = -1 + 1.5 * df.a - 0.8 * df.b + 1.0 * (df.grp == "w")
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-lin))).astype(int)
    df.index = pd.Index(rng.permutation(1000)[:n], name="id")  # a non-default index
    return df


@pytest.fixture(scope="module")
def base(data):
    return rf.risk_score("y ~ a + b + c + C(grp)", data, **SETTINGS)


def same_model(m1, m2, rel=1e-9):
    assert m1.intercept == m2.intercept
    pd.testing.assert_series_equal(m1.coef, m2.coef)
    assert m1.objective == pytest.approx(m2.objective, rel=rel, abs=0)
    assert m1.loss == pytest.approx(m2.loss, rel=rel, abs=0)


def test_row_permutation(data, base):
    for seed in (1, 2):
        shuffled = data.sample(frac=1.0, random_state=seed)
        assert not shuffled.index.equals(data.index)
        m = rf.risk_score("y ~ a + b + c + C(grp)", shuffled, **SETTINGS)
        same_model(base, m)
        # predictions follow the rows, whatever their order
        pd.testing.assert_series_equal(m.predict(shuffled), base.predict(data).loc[shuffled.index])


def test_duplicated_rows_equal_integer_weights(data):
    rng = np.random.default_rng(3)
    k = rng.integers(1, 4, len(data))
    dup = data.loc[data.index.repeat(k)].reset_index(drop=True)
    weighted = data.assign(w=k)
    m_dup = rf.risk_score("y ~ a + b + c + C(grp)", dup, **SETTINGS)
    m_w = rf.risk_score("y ~ a + b + c + C(grp)", weighted, weights="w", **SETTINGS)
    m_arr = rf.risk_score("y ~ a + b + c + C(grp)", data, weights=k, **SETTINGS)
    same_model(m_dup, m_w)
    same_model(m_dup, m_arr)
    # and the weights matter: the unweighted fit differs in objective
    m_plain = rf.risk_score("y ~ a + b + c + C(grp)", data, **SETTINGS)
    assert m_plain.objective != pytest.approx(m_w.objective, rel=1e-9)


def test_term_order_in_formula(data, base):
    m = rf.risk_score("y ~ C(grp) + c + b + a", data, **SETTINGS)
    assert m.objective == pytest.approx(base.objective, rel=1e-9, abs=0)
    assert m.lower_bound <= base.objective + 1e-9
    # the same points per column, whatever the column order
    pd.testing.assert_series_equal(m.coef.sort_index(), base.coef.sort_index(), check_like=True)


def test_column_order_of_data_frame(data, base):
    m = rf.risk_score("y ~ a + b + c + C(grp)", data[data.columns[::-1]], **SETTINGS)
    same_model(base, m)


def test_determinism(data, base):
    m = rf.risk_score("y ~ a + b + c + C(grp)", data, **SETTINGS)
    same_model(base, m, rel=0)
    assert m.lower_bound == base.lower_bound
    assert m.solver.nodes == base.solver.nodes
    assert m.status == base.status


def test_positive_weight_equals_duplicating_events_up_to_normalisation(data):
    """positive_weight=2 scales each event's loss by 2 with the same normaliser (the sum of
    sample weights), so its objective is loss_dup · n_dup / n  with events duplicated."""
    events = data[data.y == 1]
    dup = pd.concat([data, events])
    s = dict(SETTINGS, c0=0.0)
    m_pw = rf.risk_score("y ~ a + b + c + C(grp)", data, positive_weight=2.0, **s)
    m_dup = rf.risk_score("y ~ a + b + c + C(grp)", dup, **s)
    assert m_pw.intercept == m_dup.intercept
    pd.testing.assert_series_equal(m_pw.coef, m_dup.coef)
    assert m_pw.objective == pytest.approx(m_dup.objective * len(dup) / len(data), rel=1e-9)
