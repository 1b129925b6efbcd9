"""``threshold(.)``: a threshold of every numeric predictor, equal to writing them by hand."""

import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.cli import main
from riskformula.errors import FormulaError
from riskformula.design import build_design
from riskformula.thresholds import expand_threshold_dot

S = dict(max_size=3, coef_range=(-3, 3), c0=1e-6, time_limit=30)


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(11)
    n = 200
    d = pd.DataFrame({
        "age": rng.integers(20, 80, n),                 # numeric: thresholded
        "bmi": np.round(rng.normal(26, 4, n), 0),       # numeric: thresholded
        "male": rng.integers(0, 2, n),                  # 0/1: an item as it is
        "smoker": rng.random(n) < 0.4,                  # boolean: as it is
        "stage": rng.choice([1, 2], n),                 # numeric with two values: as it is
        "sex": rng.choice(["f", "m"], n),               # categorical: as it is
    })
    lin = -2 + 2.5 * (d.age > 55) + 2 * d.smoker + 1.5 * (d.bmi > 29)
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-lin))).astype(int)
    return d


BY_HAND = "y ~ threshold(age, grid=4) + threshold(bmi, grid=4) + male + smoker + stage + sex"


def test_expansion_is_the_thresholds_written_by_hand(df):
    assert expand_threshold_dot("y", "threshold(., grid=4)", df) == BY_HAND.split(" ~ ")[1]
    dot, hand = build_design("y ~ threshold(., grid=4)", df), build_design(BY_HAND, df)
    assert dot.columns == hand.columns and dot.spec.labels == hand.spec.labels
    np.testing.assert_array_equal(dot.X, hand.X)
    assert [t.term for t in dot.spec.thresholds] == ["threshold(age, grid=4)", "threshold(bmi, grid=4)"]


def test_fit_equals_the_fit_written_by_hand(df):
    before = df.copy()
    m_dot = rf.risk_score("y ~ threshold(., grid=4)", df, **S)
    m_hand = rf.risk_score(BY_HAND, df, **S)
    pd.testing.assert_frame_equal(df, before)  # the caller's data are untouched
    assert m_dot.status == "optimal"
    assert m_dot.coef.to_dict() == m_hand.coef.to_dict() and m_dot.intercept == m_hand.intercept
    assert m_dot.objective == pytest.approx(m_hand.objective, abs=1e-12)
    pd.testing.assert_frame_equal(m_dot.score_card(), m_hand.score_card())
    # the model keeps the formula the user wrote; the design holds the expanded terms
    assert m_dot.formula == "y ~ threshold(., grid=4)"
    assert "Formula                   y ~ threshold(., grid=4)" in str(m_dot.summary())
    assert "threshold(age, grid=4)" in m_dot.design.column_terms


@pytest.mark.parametrize("rhs, expected", [
    # variables named elsewhere are not thresholded again
    ("threshold(.) + C(sex)", "threshold(age) + threshold(bmi) + male + smoker + stage + C(sex)"),
    ("age + threshold(.)", "age + threshold(bmi) + male + smoker + stage + sex"),
    ("threshold(.) + I(bmi > 30)", "threshold(age) + male + smoker + stage + sex + I(bmi > 30)"),
    # removal, as with '.'
    ("threshold(.) - bmi - sex", "threshold(age) + male + smoker + stage - bmi - sex"),
    # arguments pass through to every threshold
    ("threshold(., k=2, grid=10) + smoker:male",
     "threshold(age, k=2, grid=10) + threshold(bmi, k=2, grid=10) + stage + sex + smoker:male"),
])
def test_interplay_with_other_terms(df, rhs, expected):
    assert expand_threshold_dot("y", rhs, df) == expected


def test_outcome_on_the_left_is_excluded(df):
    d = df.assign(out=np.where(df.y == 1, "yes", "no")).drop(columns="y")
    assert expand_threshold_dot('I(out == "yes")', "threshold(.)", d).startswith("threshold(age)")
    assert "out" not in expand_threshold_dot('I(out == "yes")', "threshold(.)", d)


def test_with_other_terms_the_fit_matches_by_hand(df):
    m = rf.risk_score("y ~ threshold(., grid=4) - sex + C(sex)", df, **S)
    h = rf.risk_score("y ~ threshold(age, grid=4) + threshold(bmi, grid=4) + male + smoker + stage + C(sex)",
                      df, **S)
    assert list(m.coef.index) == list(h.coef.index) and m.coef.tolist() == h.coef.tolist()
    assert m.objective == pytest.approx(h.objective, abs=1e-12)


def test_json_round_trip_and_predict_on_new_data(df):
    m = rf.risk_score("y ~ threshold(., grid=4)", df, **S)
    assert m.size == 3 and len(m.design.thresholds) == 2  # thresholds and a plain item
    m2 = rf.from_json(m.to_json())
    assert m2.formula == "y ~ threshold(., grid=4)"
    rng = np.random.default_rng(3)
    new = pd.DataFrame({"age": rng.integers(10, 95, 30), "bmi": np.round(rng.normal(27, 6, 30)),
                        "male": rng.integers(0, 2, 30), "smoker": rng.random(30) < 0.5,
                        "stage": rng.choice([1, 2], 30), "sex": rng.choice(["f", "m"], 30)},
                       index=[f"r{i}" for i in range(30)])
    pd.testing.assert_series_equal(m2.predict(new), m.predict(new))
    pd.testing.assert_series_equal(m2.score(new), m.score(new))
    # new data are scored with the training cuts, by the card's rule
    manual = pd.Series(0.0, index=new.index)
    for term, column, pts in m.score_card()[["term", "column", "points"]].itertuples(index=False):
        if column.startswith("threshold("):
            var, op, cut = term.split(" ")
            x = new[var].astype(float)
            manual += pts * ((x <= float(cut)) if op == "≤" else (x > float(cut)))
        else:  # a plain item: 0/1 or boolean
            manual += pts * new[column].astype(float)
    np.testing.assert_allclose(m.score(new).to_numpy(), manual.to_numpy())


def test_quoted_column_names(df):
    d = df.rename(columns={"age": "age (years)"})
    assert expand_threshold_dot("y", "threshold(., grid=4)", d).startswith("threshold(`age (years)`, grid=4)")
    m = rf.risk_score("y ~ threshold(., grid=4)", d, **S)
    assert [t.variable for t in m.design.thresholds] == ["age (years)", "bmi"]
    assert any(term.startswith("age (years) ") for term in m.score_card()["term"])


def test_no_dot_leaves_the_formula_alone(df):
    for rhs in ("threshold(age)", "threshold(age, grid=.5)", ".", "age + bmi"):
        assert expand_threshold_dot("y", rhs, df) == rhs


@pytest.mark.parametrize("formula, match", [
    ("y ~ threshold(.) + threshold(., k=2)", "appears 2 times"),
    ("y ~ threshold(.):sex", "term of its own"),
    ("y ~ log(threshold(.))", "term of its own"),
    ("y ~ threshold(.) + age + bmi + male + smoker + stage + sex", "covers no columns"),
    ("y ~ threshold(.) - age - bmi", "nothing to threshold"),
    ("y ~ threshold(., k=0)", "k="),
])
def test_errors(df, formula, match):
    with pytest.raises(FormulaError, match=match):
        rf.risk_score(formula, df, **S)


def test_error_without_numeric_columns():
    d = pd.DataFrame({"y": [0, 1, 0, 1, 1, 0], "sex": list("fmfmfm"), "flag": [0, 1, 1, 0, 1, 0]})
    with pytest.raises(FormulaError, match=r"none of the columns it covers \(\['sex', 'flag'\]\)"):
        rf.risk_score("y ~ threshold(.)", d, **S)


@pytest.mark.slow
def test_readme_quick_start_certifies_the_worked_example(capsys):
    """The README's command line (all 30 columns thresholded) proves optimal the score card its
    worked example prints (fitted on the 10 `_worst` columns), as the README says."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    command = next(line for line in readme.splitlines() if line.startswith("pip install . && riskformula fit"))
    assert main(shlex.split(command.split("riskformula ", 1)[1])) == 0
    out = capsys.readouterr().out
    assert re.search(r"^Status\s+optimal$", out, re.M)
    example = readme.split("## A worked example")[1]
    card = example[example.index("term "):example.index("score = sum of points")].splitlines()[2:]
    assert card and all(line.strip() in out for line in card)


@pytest.mark.parametrize("quoted", ['Q("age years")', "Q('age years')", "Q( 'age years' )"])
@pytest.mark.parametrize("call", ["threshold({}, grid=4)", "cut({}, [40, 60])"])
def test_quoted_names_in_threshold_and_cut(df, quoted, call):
    # formulaic cannot evaluate Q() inside a stateful transform; the name is read as backticks
    spaced = df.rename(columns={"age": "age years"})
    a = rf.risk_score(f"y ~ {call.format(quoted)} + male", spaced, **S)
    b = rf.risk_score(f"y ~ {call.format('`age years`')} + male", spaced, **S)
    assert a.objective == b.objective and list(a.coef.index) == list(b.coef.index)
    assert np.array_equal(a.predict(spaced), rf.from_json(a.to_json()).predict(spaced))
