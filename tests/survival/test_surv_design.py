"""Surv(time, event) outcomes in the design: times and events beside the design matrix, one clear
error for each kind of bad input, the formula guard on every term, and the caller's data untouched."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.design import build_design as _build_design
from riskformula.design.survival_response import parse_surv
from riskformula.errors import DataError, FormulaError


def build_design(formula, data, **kw):
    return _build_design(formula, data, survival=True, **kw)


@pytest.fixture
def df():
    rng = np.random.default_rng(3)
    n = 60
    return pd.DataFrame({"days": rng.exponential(100, n).round(1), "status": rng.integers(0, 2, n),
                         "age": rng.integers(30, 80, n), "sex": rng.choice(["f", "m"], n),
                         "bmi": rng.normal(26, 3, n).round(1)})


def test_times_and_events_beside_the_design(df):
    before = df.copy()
    D = build_design("Surv(days, status) ~ age + C(sex)", df)
    assert np.array_equal(D.time, df["days"].to_numpy())
    assert np.array_equal(D.y, df["status"].to_numpy())
    assert D.spec.survival == ("days", "status")
    assert D.spec.outcome == "Surv(days, status)" and D.spec.event == 1
    assert D.spec.columns == ("age", "C(sex)[T.m]")
    pd.testing.assert_frame_equal(df, before)  # the caller's data are not modified
    # the event of new data is read as for a binary outcome
    assert np.array_equal(D.outcome_of(df), df["status"].to_numpy())


def test_dot_leaves_out_time_and_event(df):
    D = build_design("Surv(days, status) ~ .", df)
    assert set(D.spec.columns) == {"age", "sex[T.m]", "bmi"}
    D = build_design("Surv(days, status) ~ threshold(.)", df)
    assert not any(c.startswith(("threshold(days)", "threshold(status)", "days", "status")) for c in D.spec.columns)


def test_event_as_boolean_and_as_a_level(df):
    data = df.assign(died=df["status"] == 1, vital=np.where(df["status"] == 1, "dead", "alive"))
    D1 = build_design("Surv(days, died) ~ age", data)
    D2 = build_design("Surv(days, vital) ~ age", data, event="dead")
    assert np.array_equal(D1.y, df["status"].to_numpy()) and np.array_equal(D2.y, df["status"].to_numpy())
    assert D1.spec.event is True and D2.spec.event == "dead"
    with pytest.raises(DataError, match="say which is the event with `event=...`"):
        build_design("Surv(days, vital) ~ age", data)
    with pytest.raises(DataError, match="not a level"):
        build_design("Surv(days, vital) ~ age", data, event="gone")


def test_no_censoring_is_allowed(df):
    D = build_design("Surv(days, status) ~ age", df.assign(status=1))
    assert D.y.all()


@pytest.mark.parametrize("change, message", [
    (lambda d: d.assign(days=-d["days"]), "negative time"),
    (lambda d: d.assign(days=d["days"].where(d.index != 3, np.inf)), "infinite or missing"),
    (lambda d: d.assign(days=d["days"].astype(str)), "needs follow-up times as numbers"),
    (lambda d: d.assign(days=d["days"] > 50), "true/false"),
    (lambda d: d.assign(status=d["status"] + d.index % 3), "has 4 levels"),
    (lambda d: d.assign(status=0), "every row is censored"),
    (lambda d: d.assign(days=d["days"].where(d.index != 2)), "missing values in the outcome"),
    (lambda d: d.assign(status=d["status"].where(d.index != 2)), "missing values in the outcome"),
])
def test_bad_outcomes_are_one_data_error(df, change, message):
    with pytest.raises(DataError, match=message):
        build_design("Surv(days, status) ~ age", change(df))


def test_missing_outcomes_dropped_under_drop(df):
    data = df.assign(days=df["days"].where(df.index != 2))
    D = build_design("Surv(days, status) ~ age", data, missing="drop")
    assert D.nobs == len(df) - 1 and 2 in D.dropped_index and np.all(np.isfinite(D.time))


@pytest.mark.parametrize("lhs, message", [
    ("Surv(start, days, status)", "Left truncation"),
    ("Surv(days)", "two column names"),
    ("Surv(days, status == 1)", "two column names"),
    ("Surv(dayz, status)", "Did you mean `days`"),
    ("Surv(days, days)", "same column"),
])
def test_bad_surv_calls(df, lhs, message):
    with pytest.raises(FormulaError, match=message):
        build_design(f"{lhs} ~ age", df)


def test_guard_checks_every_term(df):
    with pytest.raises(FormulaError, match="may not use"):
        build_design("Surv(days, status) ~ age + I(__import__('os').getcwd())", df)
    with pytest.raises(FormulaError):  # nothing inside Surv() is code
        build_design("Surv(__import__('os').getcwd(), status) ~ age", df)


def test_quoted_names():
    data = pd.DataFrame({"follow up": [1.0, 2.0, 3.0, 4.0], "dead?": [1, 0, 1, 1], "x": [0, 1, 0, 1]})
    resp = parse_surv("Surv(`follow up`, `dead?`)", data.columns)
    assert (resp.time, resp.event) == ("follow up", "dead?")
    D = build_design("Surv(`follow up`, `dead?`) ~ x", data)
    assert D.time.tolist() == [1.0, 2.0, 3.0, 4.0] and D.y.tolist() == [1, 0, 1, 1]
    assert parse_surv("y", data.columns) is None


def test_binary_fits_refuse_a_time_to_event_outcome(df):
    """Without survival=True (every fit of a binary outcome), Surv() is refused, never read as the
    event column alone."""
    with pytest.raises(FormulaError, match="time-to-event outcome"):
        _build_design("Surv(days, status) ~ age", df)
    with pytest.raises(FormulaError, match="time-to-event outcome"):
        rf.risk_score("Surv(days, status) ~ age + C(sex)", df, max_size=2, objective="logistic", time_limit=5)


def test_survival_of_new_data(df):
    D = build_design("Surv(days, status) ~ age", df.iloc[:40])
    t, e = D.spec.survival_of(df.iloc[40:])
    assert np.array_equal(t, df["days"].iloc[40:].to_numpy()) and np.array_equal(e, df["status"].iloc[40:].to_numpy())
    with pytest.raises(DataError, match="lack the outcome"):
        D.spec.survival_of(df.drop(columns="days"))
    with pytest.raises(DataError, match="negative"):
        D.spec.survival_of(df.assign(days=-1.0))
    with pytest.raises(rf.SettingsError, match="not a time-to-event"):
        _build_design("status ~ age", df).spec.survival_of(df)


@pytest.mark.parametrize("rhs", ["days + age", "age + C(status)", "threshold(days)"])
def test_outcome_columns_cannot_be_terms(df, rhs):
    with pytest.raises(FormulaError, match="its own outcome"):
        build_design(f"Surv(days, status) ~ {rhs}", df)
