"""The formula layer: every kind of term and outcome, the design against formulaic's own
model matrix, and predict/score on new data encoded exactly as the training data were."""

import math

import numpy as np
import pandas as pd
import pytest
from formulaic import model_matrix

import riskformula as rf

S = dict(max_size=3, coef_range=(-3, 3), c0=1e-6, time_limit=20)


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(7)
    n = 160
    d = pd.DataFrame({
        "age": rng.integers(20, 80, n),
        "smoker": rng.random(n) < 0.4,
        "sex": rng.choice(["f", "m"], n),
        "stage": rng.integers(1, 4, n),
        "bmi": np.round(rng.normal(26, 4, n), 1),
    })
    lin = -1 + 0.08 * (d.age - 50) + 1.5 * d.smoker + 1.0 * (d.sex == "m") + 1.0 * (d.stage - 2)
    y = rng.random(n) < 1 / (1 + np.exp(-lin))
    d["y"] = y.astype(int)
    d["yb"] = y
    d["out"] = np.where(y, "yes", "no")
    d["pm"] = np.where(y, 1, -1)
    d.index = pd.RangeIndex(100, 100 + n)
    return d


@pytest.fixture(scope="module")
def newdata(df):
    rng = np.random.default_rng(8)
    n = 25
    return pd.DataFrame({
        "age": rng.integers(20, 80, n), "smoker": rng.random(n) < 0.5, "sex": rng.choice(["f", "m"], n),
        "stage": rng.integers(1, 4, n), "bmi": np.round(rng.normal(26, 4, n), 1),
    }, index=[f"p{i}" for i in range(n)])


def formulaic_design(formula_rhs, data):
    """formulaic's model matrix without its Intercept column, and its spec for new data."""
    mm = model_matrix(formula_rhs, data)
    return pd.DataFrame(mm).drop(columns=["Intercept"]), mm.model_spec


def check_design_and_predict(m, rhs, data, newdata):
    """The design equals formulaic's (minus the intercept); predict = b0 + X·points on new data."""
    expected, spec = formulaic_design(rhs, data)
    assert m.design.columns == tuple(expected.columns)
    assert list(m.coef.index) == list(expected.columns)
    np.testing.assert_array_equal(m.design.transform(data), expected.to_numpy(float))
    X_new = pd.DataFrame(spec.get_model_matrix(newdata)).drop(columns=["Intercept"])
    manual_score = X_new.to_numpy(float) @ m.coef.to_numpy(float)
    score = m.score(newdata)
    risk = m.predict(newdata)
    for s in (score, risk):
        assert isinstance(s, pd.Series)
        assert s.index.equals(newdata.index)
    np.testing.assert_allclose(score.to_numpy(), manual_score, rtol=0, atol=1e-12)
    np.testing.assert_allclose(risk.to_numpy(), 1 / (1 + np.exp(-(m.intercept + manual_score))), rtol=1e-12)
    # and on the training rows: the same encoding as training
    train_score = expected.to_numpy(float) @ m.coef.to_numpy(float)
    np.testing.assert_allclose(m.score(data).to_numpy(), train_score, atol=1e-12)


@pytest.mark.parametrize("rhs", [
    "age + bmi + smoker",        # numeric (raw age needs tiny points: likely 0)
    "smoker",                    # boolean
    "C(stage)",                  # categorical from integers
    "sex + smoker",              # string column
    "I(age > 50) + I(bmi >= 30)",  # expressions
    "smoker:sex",                # interaction only
    "smoker*sex",                # main effects and interaction
    "C(stage) + I(age // 10)",
])
def test_terms(df, newdata, rhs):
    m = rf.risk_score(f"y ~ {rhs}", df, **S)
    check_design_and_predict(m, rhs, df, newdata)
    assert m.nobs == len(df) and m.events == int(df.y.sum())
    assert m.size > 0  # so the predict check above has points to apply


def test_dot_means_all_other_columns(df, newdata):
    data = df[["age", "smoker", "sex", "stage", "y"]]
    m = rf.risk_score("y ~ .", data, **S)
    assert set(m.design.columns) == {"age", "smoker", "sex[T.m]", "stage"}
    check_design_and_predict(m, "age + smoker + sex + stage", data, newdata)


def test_dot_excludes_the_source_of_a_comparison_outcome(df):
    data = df[["smoker", "sex", "out"]]
    m = rf.risk_score('out == "yes" ~ .', data, **S)
    assert m.design.columns == ("smoker", "sex[T.m]")  # `out` is not a predictor of itself


def test_readable_labels(df):
    m = rf.risk_score("y ~ C(stage) + sex + smoker", df, **S)
    labels = m.labels.to_dict()
    assert labels["C(stage)[T.2]"] == "stage = 2"
    assert labels["sex[T.m]"] == "sex = m"
    assert labels["smoker"] == "smoker"


# --- outcomes -------------------------------------------------------------------------------

def reference(df):
    return rf.risk_score("y ~ smoker + sex + C(stage)", df, **S)


@pytest.mark.parametrize("formula, kw, event", [
    ("yb ~ smoker + sex + C(stage)", {}, True),
    ('out == "yes" ~ smoker + sex + C(stage)', {}, True),
    ("out ~ smoker + sex + C(stage)", {"event": "yes"}, "yes"),
    ("pm ~ smoker + sex + C(stage)", {}, 1),
    ("y == 1 ~ smoker + sex + C(stage)", {}, True),
])
def test_outcome_codings_give_the_same_model(df, formula, kw, event):
    ref = reference(df)
    m = rf.risk_score(formula, df, **S, **kw)
    assert m.event == event
    assert m.events == ref.events == int(df.y.sum())
    assert m.intercept == ref.intercept
    pd.testing.assert_series_equal(m.coef, ref.coef)
    assert m.objective == pytest.approx(ref.objective, rel=1e-12)
    np.testing.assert_array_equal(m.observed(df).to_numpy(), df.y.to_numpy())


def test_event_no_flips_the_model(df):
    ref = reference(df)
    m = rf.risk_score("out ~ smoker + sex + C(stage)", df, event="no", **S)
    assert m.events == len(df) - ref.events
    # the logistic loss is symmetric: negated points and intercept fit the flipped outcome
    assert m.objective == pytest.approx(ref.objective, rel=1e-9)
    assert m.intercept == -ref.intercept
    pd.testing.assert_series_equal(m.coef, -ref.coef)


def test_event_level_in_summary(df):
    m = rf.risk_score("out ~ smoker + sex", df, event="yes", **S)
    text = str(m.summary())
    assert "event: out = 'yes'" in text
    m2 = rf.risk_score('out == "yes" ~ smoker + sex', df, **S)
    assert 'out == "yes"' in str(m2.summary())


def test_context_functions(df, newdata):
    m = rf.risk_score("y ~ I(old(age)) + smoker", df, context={"old": lambda a: a >= 60}, **S)
    expected = (newdata.age >= 60).astype(float) * m.coef.iloc[0] + newdata.smoker * m.coef.iloc[1]
    np.testing.assert_allclose(m.score(newdata).to_numpy(), expected.to_numpy())


def test_predict_on_a_subset_of_levels(df):
    """New data holding only one level of a factor are still encoded against all levels."""
    m = rf.risk_score("y ~ C(stage) + sex", df, **S)
    one = pd.DataFrame({"stage": [3, 3], "sex": ["m", "m"]}, index=["a", "b"])
    expected = m.intercept + m.coef["C(stage)[T.3]"] + m.coef["sex[T.m]"]
    np.testing.assert_allclose(m.predict(one).to_numpy(), 1 / (1 + math.exp(-expected)))


def test_predict_ignores_extra_and_outcome_columns(df):
    m = rf.risk_score("y ~ smoker + sex", df, **S)
    a = m.predict(df[["smoker", "sex"]])
    b = m.predict(df)
    pd.testing.assert_series_equal(a, b)


def test_design_values_are_the_frame_without_intercept_as_floats(monkeypatch):
    """build_design converts a small model matrix at once and a large one a column at a time, cast
    as it is written (no copy of the frame without its intercept): the same array, column-major as
    pandas gives it, and the same errors."""
    import riskformula.design.spec as spec_module
    from riskformula.design.spec import design_values, drop_intercept
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 2, 50), "b": rng.normal(size=50), "g": rng.choice(list("xyz"), 50),
                       "t": rng.random(50) < 0.5, "y": rng.integers(0, 2, 50)})
    mm = model_matrix("y ~ a + b + C(g) + t + a:b", df).rhs
    mm["n"] = pd.array(rng.integers(0, 5, 50), dtype="Int64")  # a pandas dtype: converted by pandas
    mm["u"] = rng.integers(0, 3, 50).astype(np.uint8)
    want = drop_intercept(mm).to_numpy(dtype=float)
    for cells in (spec_module.WHOLE_CELLS, 0):  # at once, a column at a time
        monkeypatch.setattr(spec_module, "WHOLE_CELLS", cells)
        X, columns = design_values(mm)
        assert np.array_equal(X, want) and X.flags.f_contiguous
        assert columns == list(drop_intercept(mm).columns)
        with pytest.raises((TypeError, ValueError)):
            design_values(pd.DataFrame({"Intercept": [1.0, 1.0], "a": ["p", "q"]}))


@pytest.mark.parametrize("column, kw, event", [("yb", {"event": 1}, True), ("yf", {}, 1.0), ("yf", {"event": 1}, 1.0),
                                               ("yb", {"event": "True"}, True)])
def test_the_event_is_the_level_as_the_data_hold_it(df, column, kw, event):
    d = df.assign(yf=df.y.astype(float))
    m = rf.risk_score(f"{column} ~ smoker + sex", d, **S, **kw)
    assert m.event == event and type(m.event) is type(event)
    assert rf.from_json(m.to_json()).event == event


def test_a_survival_event_is_the_level_as_the_data_hold_it(df):
    d = df.assign(t=df.age / 10.0, e=df.y.astype(float))
    m = rf.risk_score("Surv(t, e) ~ smoker + sex", d, max_size=2, time_limit=20)
    assert type(m.event) is float and m.event == 1.0
    assert type(rf.from_json(m.to_json()).event) is float
