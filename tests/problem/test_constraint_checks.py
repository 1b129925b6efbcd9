"""The constraint checks: infeasible constraint sets are proven and named at once (also
when the conflict runs through `coef_range` or a threshold term), and side-information profiles
refuse values and omissions that would describe someone other than the user meant."""

import time

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.design import build_design
from riskformula.errors import InfeasibleProblemError, SettingsError

F = ('diagnosis == "M" ~ threshold(radius_worst, grid=5) + threshold(texture_worst, grid=5)'
     ' + concave_points_worst + smoothness_worst')
SMALL = 'diagnosis == "M" ~ threshold(radius_worst, grid=5) + smoothness_worst'
KW = dict(max_size=3, time_limit=10, n_jobs=1, progress=False)
TH = "threshold(radius_worst, grid=5)"


@pytest.fixture(scope="module")
def df():
    return rf.load_dataset("wdbc")


def refused(df, formula=F, **kw):
    """The InfeasibleProblemError message of a fit, which must come from the check before the search."""
    t0 = time.perf_counter()
    with pytest.raises(InfeasibleProblemError) as info:
        rf.risk_score(formula, df, **{**KW, **kw})
    assert time.perf_counter() - t0 < 5, "proved by the feasibility check, not by running out the search"
    return str(info.value)


# --- 1. infeasible constraint sets ------------------------------------------------------------

def test_opposite_signs_and_at_least_are_proven_infeasible_and_named(df):
    msg = refused(df, constraints=[rf.sign("smoothness_worst", "-"), rf.sign("smoothness_worst", "+"),
                                   rf.at_least(1, "smoothness_worst")])
    for name in ("sign('smoothness_worst', '-')", "sign('smoothness_worst', '+')", "at_least(1, 'smoothness_worst')"):
        assert name in msg


def test_a_zero_coef_range_and_at_least_name_the_coef_range(df):
    msg = refused(df, coef_range={"default": (-5, 5), "smoothness_worst": (0, 0)},
                  constraints=[rf.at_least(1, "smoothness_worst")])
    assert "at_least(1, 'smoothness_worst')" in msg and "coef_range['smoothness_worst']=(0, 0)" in msg


def test_a_one_sided_coef_range_against_a_sign_names_all_three(df):
    msg = refused(df, SMALL, coef_range=(0, 5), constraints=[rf.sign("smoothness_worst", "-"),
                                                             rf.at_least(1, "smoothness_worst")])
    assert "coef_range=(0, 5)" in msg and "sign('smoothness_worst', '-')" in msg and "at_least(1" in msg


def test_the_same_conflicts_on_a_threshold_term_are_named(df):
    msg = refused(df, constraints=[rf.sign(TH, "-"), rf.sign(TH, "+"), rf.at_least(1, "radius_worst")])
    assert f"sign('{TH}', '-')" in msg and f"sign('{TH}', '+')" in msg and "at_least(1, 'radius_worst')" in msg
    msg = refused(df, coef_range={"default": (-5, 5), "radius_worst": (0, 0)},
                  constraints=[rf.at_least(1, "radius_worst")])
    assert "coef_range['radius_worst']=(0, 0)" in msg and "at_least(1, 'radius_worst')" in msg


def test_an_unrelated_constraint_is_not_named(df):
    msg = refused(df, constraints=[rf.sign("concave_points_worst", "+"), rf.sign("smoothness_worst", "-"),
                                   rf.sign("smoothness_worst", "+"), rf.at_least(1, "smoothness_worst")])
    assert "concave_points_worst" not in msg


@pytest.mark.parametrize("kw", [
    dict(constraints=[rf.sign("smoothness_worst", "+"), rf.at_least(1, "smoothness_worst")]),
    dict(constraints=[rf.sign("smoothness_worst", "-"), rf.at_least(1, "smoothness_worst")]),
    dict(coef_range={"default": (-5, 5), "smoothness_worst": (0, 1)}, constraints=[rf.at_least(1, "smoothness_worst")]),
    dict(constraints=[rf.sign(TH, "+"), rf.at_least(1, "radius_worst"), rf.at_least(1, "smoothness_worst")]),
], ids=["sign+", "sign-", "one-sided range", "threshold sign"])
def test_feasible_near_misses_still_fit(df, kw):
    m = rf.risk_score(SMALL, df, **{**KW, "max_size": 2}, **kw)
    assert m.coef["smoothness_worst"] != 0 or "radius_worst" in str(kw)
    if "sign('smoothness_worst', '+')" in str(kw.get("constraints")):
        assert m.coef["smoothness_worst"] > 0
    if "sign('smoothness_worst', '-')" in str(kw.get("constraints")):
        assert m.coef["smoothness_worst"] < 0


def test_a_point_used_with_zero_points_is_no_feasible_point(df):
    # the check's MIP: α = 1 must mean nonzero points, as in the search
    from riskformula.problem import LogisticLoss, build_problem
    from riskformula.solver.feasibility import feasible_point
    design = build_design('diagnosis == "M" ~ smoothness_worst + texture_worst', df)
    loss = LogisticLoss(design.X, design.y, design.weights)
    ok = build_problem(design.spec, loss, np.array([-3.0, -3.0]), np.array([3.0, 3.0]),
                       constraints=[rf.at_least(2, "smoothness_worst", "texture_worst")], max_size=2)
    found, x = feasible_point(ok)
    assert found is True and np.all(x[1:3] != 0) and len(x) == ok.n_cols
    zero = build_problem(design.spec, loss, np.array([0.0, -3.0]), np.array([0.0, 3.0]),
                         constraints=[rf.at_least(2, "smoothness_worst", "texture_worst")], max_size=2)
    assert feasible_point(zero)[0] is False


# --- 2. bad values in a profile ---------------------------------------------------------------

@pytest.mark.parametrize("fn", [rf.risk_at_least, rf.risk_at_most])
@pytest.mark.parametrize("bad", [np.nan, float("inf"), None, [1]])
def test_a_missing_or_non_number_value_is_refused_when_built(fn, bad):
    with pytest.raises(SettingsError) as info:
        fn(0.5, when={"radius_worst": 15, "smoothness_worst": bad})
    msg = str(info.value)
    assert fn.__name__ in msg and "'smoothness_worst'" in msg and repr(bad) in msg


@pytest.mark.parametrize("when, names", [
    ({"smoothness_worst": "high", "radius_worst": 15}, "'smoothness_worst'"),
    ({"smoothness_worst": 0.1, "radius_worst": "big"}, "'radius_worst'"),
])
def test_a_string_for_a_number_is_a_settings_error(df, when, names):
    with pytest.raises(SettingsError) as info:
        rf.risk_score(SMALL, df, **KW, constraints=[rf.risk_at_most(0.5, when=when)])
    msg = str(info.value)
    assert msg.startswith("risk_at_most(0.5, when=") and names in msg and "finite number" in msg


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    n = 80
    return pd.DataFrame({"y": rng.integers(0, 2, n), "g": rng.choice(["a", "b", "c"], n),
                         "z": rng.choice([2, 5], n), "x": rng.uniform(1, 5, n), "t": rng.uniform(0, 1, n),
                         "k": rng.uniform(0, 1, n)})


def test_an_unknown_level_names_the_constraint(small):
    terms = build_design("y ~ C(g) + x", small).spec.terms
    with pytest.raises(SettingsError, match=r"^risk_at_least\(.*'q' is not a level of 'g'"):
        terms.profile({"g": "q"}, owner="risk_at_least(0.5, when={'g': 'q'})")
    with pytest.raises(SettingsError, match=r"risk_at_most\(0.5, when=\{'g': 'q'\}\).*not a level"):
        rf.risk_score("y ~ C(g) + x", small, max_size=2, time_limit=10,
                      constraints=[rf.risk_at_most(0.5, when={"g": "q"})])


def test_a_numeric_level_is_a_level_not_a_column_value(small):
    terms = build_design("y ~ C(z) + x", small).spec.terms
    assert terms.profile({"z": 5}).tolist() == [1.0, 0.0]  # was [5, 0]: a column value of 5
    assert terms.profile({"z": 5.0}).tolist() == [1.0, 0.0]
    assert terms.profile({"z": 2}).tolist() == [0.0, 0.0]  # the reference level (was [2, 0])
    with pytest.raises(SettingsError, match="not a level"):
        terms.profile({"z": 3})


def test_a_transformed_term_is_not_named_by_its_variable(small):
    terms = build_design("y ~ np.log(x)", small).spec.terms
    with pytest.raises(SettingsError, match=r"'x', the variable of the term 'np.log\(x\)'"):
        terms.profile({"x": 2.0}, owner="risk_at_least(0.5, when={'x': 2.0})")
    assert terms.profile({"np.log(x)": 0.5}).tolist() == [0.5]


# --- 3. what a profile may leave out ----------------------------------------------------------

def test_a_profile_must_name_every_threshold_variable(small, df):
    terms = build_design("y ~ threshold(t, grid=4) + C(g) + x", small).spec.terms
    with pytest.raises(SettingsError, match=r"no value for 't'.*no\s+neutral value"):
        terms.profile({"x": 1.0}, owner="risk_at_least(0.5, when={'x': 1.0})")
    with pytest.raises(SettingsError,
                       match=r"^risk_at_most\(0.5, when=\{'smoothness_worst': 0.1\}\): .*'radius_worst'"):
        rf.risk_score(SMALL, df, **KW, constraints=[rf.risk_at_most(0.5, when={"smoothness_worst": 0.1})])


def test_what_leaving_out_means_for_other_terms(small):
    spec = build_design("y ~ threshold(t, grid=4) + C(g) + x + k", small).spec
    th = spec.thresholds[0]
    row = spec.terms.profile({"t": 0.0})  # by the variable
    assert row[list(th.columns)].tolist() == [1.0] * len(th.columns)  # 0 is below every cut
    rest = [j for j in range(len(row)) if j not in th.columns]
    assert row[rest].tolist() == [0.0] * len(rest)  # C(g) at its reference level "a", x = k = 0
    assert np.array_equal(spec.terms.profile({spec.thresholds[0].term: 0.0}), row)  # by the term


def test_a_full_profile_holds_in_the_fitted_model(df):
    when = {"radius_worst": 20, "smoothness_worst": 0.15}
    m = rf.risk_score(SMALL, df, **{**KW, "max_size": 2}, constraints=[rf.risk_at_least(0.9, when=when)])
    assert m.predict(pd.DataFrame([when])).iloc[0] >= 0.9 - 1e-12
