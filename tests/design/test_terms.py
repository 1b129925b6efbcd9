"""One rule for naming terms: the same names work in coef_range, initial, constraints and profiles."""

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.design import build_design
from riskformula.errors import SettingsError

FORMULA = "y ~ C(sex) + age + smoker"
#: every way to name the one column of a two-level factor: column, label, formula term, variable
SEX = ["C(sex)[T.m]", "sex = m", "C(sex)", "sex"]
FIT = dict(max_size=3, coef_range=(-3, 3), time_limit=20)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n = 300
    d = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "age": rng.integers(0, 4, n),
                      "smoker": rng.integers(0, 2, n), "grp": rng.choice(["a", "b", "c"], n)})
    lin = -1.5 + 1.2 * (d.sex == "m") + 0.5 * d.age - 0.8 * d.smoker
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-lin))).astype(int)
    return d


@pytest.fixture(scope="module")
def by_column(data):
    """Fits that name the column as the design does, to compare every other name with."""
    col = SEX[0]
    return {
        "coef_range": rf.risk_score(FORMULA, data, **{**FIT, "coef_range": {"default": (-3, 3), col: (-1, 0)}}),
        "constraint": rf.risk_score(FORMULA, data, **FIT, constraints=[rf.at_most(0, col)]),
        "profile": rf.risk_score(FORMULA, data, **FIT, constraints=[rf.risk_at_most(0.2, when={col: 1})]),
        "plain": rf.risk_score(FORMULA, data, **FIT),
    }


def test_resolver_maps_every_name_to_the_column(data):
    terms = build_design(FORMULA, data).spec.terms
    assert all(terms.columns(name) == [0] for name in SEX)
    assert terms.columns("age") == [1]


@pytest.mark.parametrize("name", SEX)
def test_coef_range_takes_every_name(data, by_column, name):
    m = rf.risk_score(FORMULA, data, **{**FIT, "coef_range": {"default": (-3, 3), name: (-1, 0)}})
    assert m.coef.to_dict() == by_column["coef_range"].coef.to_dict()
    assert m.settings.coef_lower[0] == -1 and m.settings.coef_upper[0] == 0


@pytest.mark.parametrize("name", SEX)
def test_initial_takes_every_name(data, by_column, name):
    m = rf.risk_score(FORMULA, data, **FIT, initial={name: 2, "age": 1})
    assert m.objective == pytest.approx(by_column["plain"].objective, rel=1e-9)


@pytest.mark.parametrize("name", SEX)
def test_constraints_take_every_name(data, by_column, name):
    m = rf.risk_score(FORMULA, data, **FIT, constraints=[rf.at_most(0, name)])
    assert m.coef[SEX[0]] == 0
    assert m.coef.to_dict() == by_column["constraint"].coef.to_dict()


@pytest.mark.parametrize("name", SEX)
def test_profiles_take_every_name(data, by_column, name):
    # a column or its label takes the column's value; a factor term or variable takes a level
    value = 1 if name in SEX[:2] else "m"
    m = rf.risk_score(FORMULA, data, **FIT, constraints=[rf.risk_at_most(0.2, when={name: value})])
    assert m.coef.to_dict() == by_column["profile"].coef.to_dict()
    risk = m.predict(pd.DataFrame({"sex": ["m"], "age": [0], "smoker": [0]}))
    assert risk.iloc[0] <= 0.2 + 1e-12


def test_profile_reference_level_needs_no_column(data):
    terms = build_design(FORMULA, data).spec.terms
    assert terms.profile({"sex": "f"}).tolist() == [0.0, 0.0, 0.0]
    assert terms.profile({"sex": "m", "age": 2}).tolist() == [1.0, 2.0, 0.0]
    with pytest.raises(SettingsError, match="not a level"):
        terms.profile({"sex": "x"})


def test_threshold_variable_is_a_name_everywhere(data):
    formula = "y ~ C(sex) + threshold(age)"
    terms = build_design(formula, data).spec.terms
    assert terms.columns("age") == terms.columns("threshold(age)") and len(terms.columns("age")) > 1
    m = rf.risk_score(formula, data, **{**FIT, "coef_range": {"default": (-3, 3), "age": (0, 0)}})
    assert (m.coef[[c for c in m.coef.index if c.startswith("threshold")]] == 0).all()
    m = rf.risk_score(formula, data, **FIT, constraints=[rf.sign("age", "+")])
    risk = m.predict(pd.DataFrame({"sex": "f", "age": [0, 1, 2, 3]})).to_numpy()
    assert np.all(np.diff(risk) >= 0)  # "+": risk does not fall as age rises


@pytest.mark.parametrize("where, call", [
    ("`coef_range`", lambda d: rf.risk_score(FORMULA, d, **{**FIT, "coef_range": {"height": (0, 1)}})),
    ("`initial`", lambda d: rf.risk_score(FORMULA, d, **FIT, initial={"height": 1})),
    ("a constraint", lambda d: rf.risk_score(FORMULA, d, **FIT, constraints=[rf.at_most(1, "height")])),
    ("a constraint", lambda d: rf.risk_score(FORMULA, d, **FIT, constraints=[rf.risk_at_least(0.5, when={"height": 1})])),
])
def test_one_error_for_an_unknown_name(data, where, call):
    with pytest.raises(SettingsError) as info:
        call(data)
    msg = str(info.value)
    assert msg.startswith(f"{where} names 'height'")
    # the valid names: terms, columns and variables
    assert "valid names are" in msg and "'C(sex)'" in msg and "'C(sex)[T.m]'" in msg and "'sex'" in msg


def test_initial_name_must_pick_one_column(data):
    with pytest.raises(SettingsError, match=r"covers 2 design columns.*name one column"):
        rf.risk_score("y ~ C(grp) + age", data, **FIT, initial={"grp": 1})
