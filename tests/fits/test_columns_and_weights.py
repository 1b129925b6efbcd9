"""Input checks: weights as a labelled Series, missing weights with
missing="drop", duplicated / non-string / date columns, pandas' nullable string dtypes, and an
event level given as text."""

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.cli import main
from riskformula.errors import DataError

K = dict(max_size=2, time_limit=10, progress=False)


@pytest.fixture(scope="module")
def d():
    """The audit's frame: float age and bmi, sex "m"/"f", 0/1 smoker and a 0/1 outcome they drive."""
    rng = np.random.default_rng(1)
    n = 200
    d = pd.DataFrame({"age": rng.uniform(20, 80, n).round(1), "sex": rng.choice(["m", "f"], n),
                      "bmi": rng.normal(27, 4, n).round(1), "smoker": rng.integers(0, 2, n)})
    lp = -4 + 0.05 * d.age + 1.2 * d.smoker + 0.6 * (d.sex == "m")
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    return d


@pytest.fixture(scope="module")
def w(d):
    return pd.Series(np.random.default_rng(2).uniform(0.5, 2, len(d)), index=d.index)


# --- 1. weights given as a pandas Series are matched to the rows by label -----------------------

def test_weights_series_aligned_by_label(d, w):
    by_column = rf.risk_score("y ~ age + smoker", d.assign(w=w), weights="w", **K)
    shuffled = w.sample(frac=1, random_state=1)
    by_series = rf.risk_score("y ~ age + smoker", d, weights=shuffled, **K)
    assert by_series.objective == pytest.approx(by_column.objective, rel=1e-12)
    # an array is still taken in row order
    by_array = rf.risk_score("y ~ age + smoker", d, weights=w.to_numpy(), **K)
    assert by_array.objective == pytest.approx(by_column.objective, rel=1e-12)


@pytest.mark.parametrize("weights, says", [
    (lambda w: w.set_axis(range(1000, 1000 + len(w))), r"not in data\.index"),
    (lambda w: w.iloc[:-3], r"197 value\(s\) for 200 row"),
])
def test_weights_series_with_other_labels_refused(d, w, weights, says):
    with pytest.raises(DataError, match=says) as info:
        rf.risk_score("y ~ age + smoker", d, weights=weights(w), **K)
    assert "to_numpy()" in str(info.value) and "reindex" in str(info.value)


# --- 2. missing weights --------------------------------------------------------------------------

def test_missing_weights_dropped_with_missing_drop_drop(d, w):
    holes = w.copy()
    holes.iloc[[3, 7, 11]] = np.nan
    m = rf.risk_score("y ~ age + smoker", d.assign(w=holes), weights="w", missing="drop", **K)
    assert (m.nobs, m.rows_dropped) == (197, 3)
    complete = d.assign(w=holes).dropna(subset=["w"])
    ref = rf.risk_score("y ~ age + smoker", complete, weights="w", **K)
    assert m.objective == pytest.approx(ref.objective, rel=1e-12)
    # a Series with holes loses the same rows
    assert rf.risk_score("y ~ age + smoker", d, weights=holes, missing="drop", **K).nobs == 197


def test_missing_weights_counted_without_missing_drop(d, w):
    holes = w.copy()
    holes.iloc[[3, 7]] = np.nan
    with pytest.raises(DataError, match=r"2 missing value.*3, 7.*missing='drop'"):
        rf.risk_score("y ~ age + smoker", d, weights=holes, **K)


# --- 3-5. columns a formula cannot use -------------------------------------------------------------

def test_duplicated_column_names_named(d):
    dup = d.set_axis(["age", "sex", "age", "smoker", "y"], axis=1)
    with pytest.raises(DataError, match=r"more than one column named 'age'"):
        rf.risk_score("y ~ age + smoker", dup, **K)
    m = rf.risk_score("y ~ age + smoker", d, **K)
    with pytest.raises(DataError, match=r"`newdata` has more than one column named 'age'"):
        m.predict(dup)


def test_column_names_that_print_alike_are_refused(d):
    # "é" as one code point and as "e" + a combining accent: two columns, one label on a card
    odd = d.rename(columns={"age": "\u00e9ge", "sex": "e\u0301ge"})
    with pytest.raises(DataError, match=r"two columns whose names print alike.*two Unicode forms"):
        rf.risk_score("y ~ .", odd, **K)
    rf.risk_score("y ~ \u00e9ge + smoker", odd.drop(columns="e\u0301ge"), **K)  # one of them is fine


@pytest.mark.parametrize("formula", ["y ~ .", "y ~ threshold(.)", "y ~ . - `0`", "y ~ age + `0`"])
def test_non_string_column_names_refused_when_used(d, formula):
    odd = d.rename(columns={"bmi": 0})
    with pytest.raises(DataError, match=r"not strings.*\[0\].*astype\(str\)"):
        rf.risk_score(formula, odd, **K)


def test_unused_non_string_column_ignored(d):
    odd = d.rename(columns={"bmi": 0})
    m = rf.risk_score("y ~ age + smoker", odd, **K)
    assert m.objective == pytest.approx(rf.risk_score("y ~ age + smoker", d, **K).objective)
    assert np.allclose(m.predict(odd), m.predict(d))


@pytest.fixture(scope="module")
def dated(d):
    return d.assign(dt=pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(len(d)), "D"),
                    td=pd.to_timedelta(np.arange(len(d)), "D"))


@pytest.mark.parametrize("formula, column", [("y ~ . - td", "dt"), ("y ~ age + td", "td"),
                                             ("y ~ threshold(dt)", "dt"), ("y ~ threshold(.) - td", "dt")])
def test_dates_and_durations_refused(dated, formula, column):
    with pytest.raises(DataError, match=rf"\['{column}'\].*dates or durations.*dt\.days"):
        rf.risk_score(formula, dated, **K)


def test_dates_left_out_or_converted_in_the_formula(d, dated):
    m = rf.risk_score("y ~ . - dt - td", dated, **K)
    assert m.objective == pytest.approx(rf.risk_score("y ~ .", d, **K).objective)
    assert rf.risk_score("y ~ I(dt.dt.month)", dated, **K).design.columns == ("I(dt.dt.month)",)


# --- 6. nullable string dtypes are text like object columns ---------------------------------------

def _pyarrow_string():
    pytest.importorskip("pyarrow")
    return "string[pyarrow]"


@pytest.mark.parametrize("convert", [
    lambda d: d.convert_dtypes(),
    lambda d: d.astype({"sex": _pyarrow_string()}),
    lambda d: d.astype({"sex": "category"}),
])
def test_nullable_strings_fit_and_predict_like_object(d, convert):
    other = convert(d)
    before = other.dtypes.copy()
    plain = rf.risk_score("y ~ age + sex + smoker", d, **K)
    m = rf.risk_score("y ~ age + sex + smoker", other, **K)
    assert (other.dtypes == before).all()  # the caller's frame keeps its dtypes
    assert m.objective == pytest.approx(plain.objective, rel=1e-12)
    assert m.coef.equals(plain.coef) and m.intercept == plain.intercept
    # a model predicts on either kind of frame, whichever it was fitted on
    for model in (plain, m):
        assert np.allclose(model.predict(other), model.predict(d))
        assert (model.observed(other) == model.observed(d)).all()


def test_nullable_string_outcome_expression(d):
    text = d.assign(out=np.where(d.y == 1, "yes", "no")).astype({"out": "string"})
    m = rf.risk_score('out == "yes" ~ age + smoker', text, **K)
    assert m.objective == pytest.approx(rf.risk_score("y ~ age + smoker", d, **K).objective, rel=1e-12)
    assert (m.observed(text) == d.y).all()


# --- 7. an event level given as text -------------------------------------------------------------

def test_event_as_text_for_a_numeric_outcome(d):
    d12 = d.assign(y=d.y + 1)
    m = rf.risk_score("y ~ age + smoker", d12, event="2", **K)
    assert m.event == 2 and type(m.event) is int
    assert m.objective == pytest.approx(rf.risk_score("y ~ age + smoker", d12, event=2, **K).objective)
    with pytest.raises(DataError, match="not a level"):
        rf.risk_score("y ~ age + smoker", d12, event="3", **K)


def test_cli_event_for_a_numeric_outcome(d, tmp_path, capsys):
    path = tmp_path / "d12.csv"
    d.assign(y=d.y + 1).to_csv(path, index=False)
    code = main(["fit", "y ~ age + smoker", "--data", str(path), "--event", "2", "--max-size", "2",
                 "--time-limit", "10", "--no-progress"])
    assert code == 0, capsys.readouterr().err


def test_cross_validate_folds_leave_out_rows_without_weight(d, w):
    holes = w.copy()
    holes.iloc[[3, 7, 11]] = np.nan
    cv = rf.cross_validate("y ~ age + smoker", d.assign(w=holes), folds=2, n_jobs=1, weights="w",
                           missing="drop", **K)
    assert sum(m.nobs for m in cv.models) == 197 and cv.fold_of.notna().sum() == 197
