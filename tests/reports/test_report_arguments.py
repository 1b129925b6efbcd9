"""What the reports say to their arguments: outcome expressions on data without the outcome,
counterfactual option types, the fairness audit's and evaluate(by=)'s group checks (shared with the
fit), and short clear messages on small or degenerate data."""

from __future__ import annotations

import warnings

import numpy as np

import pandas as pd

import pytest

import riskformula as rf

from riskformula.errors import CalibrationWarning, DataError, SettingsError, SmallGroupWarning

from riskformula.reports import metrics as rm

FIT = dict(time_limit=10, n_jobs=1, progress=False)


@pytest.fixture(scope="module")
def wdbc():
    return rf.load_dataset("wdbc")

@pytest.fixture(scope="module")
def expr_model(wdbc):
    return rf.risk_score('diagnosis == "M" ~ radius_worst + texture_mean + concave_points_worst', wdbc,
                         max_size=3, coef_range=(-3, 3), **FIT)


@pytest.mark.parametrize("call", ["evaluate", "compare", "decision_curve", "observed"])
def test_outcome_expression_without_its_column_is_a_data_error(expr_model, wdbc, call):
    nod = wdbc.drop(columns="diagnosis")
    run = {"evaluate": lambda: expr_model.evaluate(nod),
           "compare": lambda: rf.compare(expr_model, expr_model, newdata=nod),
           "decision_curve": lambda: rf.decision_curve(expr_model, data=nod),
           "observed": lambda: expr_model.observed(nod)}[call]
    with pytest.raises(DataError, match="lack the outcome column `diagnosis`"):
        run()


@pytest.mark.parametrize("kwargs, match", [
    (dict(directions=["radius_worst"]), "`directions` must be a dict"),
    (dict(costs=["radius_worst"]), "`costs` must be a dict"),
    (dict(immutable=5), "`immutable` takes a column name or a list"),
    (dict(actionable={"radius_worst": 1}), "`actionable` takes a column name or a list"),
    (dict(groups=["radius_worst"]), "`groups` must be a dict"),
])
def test_counterfactual_options_of_the_wrong_type_are_settings_errors(expr_model, wdbc, kwargs, match):
    with pytest.raises(SettingsError, match=match):
        expr_model.counterfactuals(wdbc.head(2), target_risk=0.5, **kwargs)


def test_audit_of_a_single_group_is_refused(expr_model, wdbc):
    with pytest.raises(SettingsError, match="only one group"):
        expr_model.fairness(wdbc.assign(g="a"), by="g")


def test_audit_by_a_continuous_column_asks_to_bin_it(expr_model, wdbc):
    with pytest.raises(SettingsError, match=r"too many to compare.*pd\.cut"):
        expr_model.fairness(wdbc, by="radius_mean")
    # binned, it works
    binned = wdbc.assign(r=pd.cut(wdbc["radius_mean"], 3, labels=["low", "mid", "high"]).astype(str))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallGroupWarning)
        assert len(expr_model.fairness(binned, by="r").by_group) == 3


def test_audit_warns_about_a_small_group_as_the_fit_does(expr_model, wdbc):
    g = ["a"] * 560 + ["b"] * 9
    with pytest.warns(SmallGroupWarning, match="'b' has 9 among all rows"):
        expr_model.fairness(wdbc.assign(g=g), by="g")


def test_audit_and_assess_refuse_missing_groups_as_the_fit_does(expr_model, wdbc):
    g = pd.Series(["a"] * 300 + ["b"] * 266 + [np.nan] * 3, index=wdbc.index)
    with pytest.raises(DataError, match="3 missing value"):
        expr_model.fairness(wdbc.assign(g=g), by="g")
    # what fairness_path(newdata=...) measures a fit with
    with pytest.raises(DataError, match="3 missing value"):
        rf.statistical_parity("g", max_diff=0.5).assess(expr_model, wdbc.assign(g=g))
    # and the fit itself
    with pytest.raises(DataError, match="3 missing value"):
        rf.risk_score('diagnosis == "M" ~ radius_worst', wdbc.assign(g=g), max_size=1, coef_range=(-3, 3),
                      constraints=[rf.statistical_parity("g", max_diff=0.5)], **FIT)


def test_group_without_events_no_future_warning_and_equalized_odds_from_fpr(expr_model, wdbc):
    # every malignant row in group a: group b has no events, so its TPR is undefined
    g = np.where(wdbc.diagnosis == "M", "a", np.where(np.arange(len(wdbc)) % 2, "a", "b"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        audit = expr_model.fairness(wdbc.assign(g=g), by="g")
    kinds = {w.category for w in caught}
    assert FutureWarning not in kinds
    assert kinds == {SmallGroupWarning}
    assert any("'b' has 0 among events" in str(w.message) for w in caught)
    d = audit.differences.set_index("notion")
    assert np.isnan(d.loc["equal opportunity", "difference"])
    assert d.loc["equalized odds", "difference"] == d.loc["predictive equality", "difference"] > 0
    assert d.loc["equalized odds", "ratio"] == d.loc["predictive equality", "ratio"]
    # the same number as the fit's own measure of equalized odds on these rows
    fit_measure = rf.equalized_odds("g", max_diff=1.0).assess(expr_model, wdbc.assign(g=g))[0]["value"]
    assert d.loc["equalized odds", "difference"] == pytest.approx(fit_measure)
    assert any("Equalized odds" in n for n in audit.notes)


def test_evaluate_by_a_continuous_column_is_refused_with_the_same_rule(expr_model, wdbc):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(SettingsError, match=r"too many to compare.*pd\.cut"):
            expr_model.evaluate(wdbc, by="radius_mean")


def test_evaluate_by_a_list_says_lists_are_not_taken(expr_model, wdbc):
    data = wdbc.assign(a=np.arange(len(wdbc)) % 2, b=np.arange(len(wdbc)) % 3)
    with pytest.raises(SettingsError, match="one column name"):
        expr_model.evaluate(data, by=["a", "b"])


def test_evaluate_tiny_group_warns_without_numpy_or_statsmodels_noise(expr_model, wdbc):
    g = ["a"] * 300 + ["b"] * 267 + ["c"] * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = expr_model.evaluate(wdbc.assign(g=g), by="g")
    kinds = {w.category for w in caught}
    assert kinds <= {SmallGroupWarning, CalibrationWarning}, [str(w.message) for w in caught]
    assert any(w.category is SmallGroupWarning and "'c' has 2" in str(w.message) for w in caught)
    row = ev.by_group.set_index("g").loc["c"]
    assert np.isnan(row["calibration_slope"])


def test_calibration_slope_is_na_under_complete_separation():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.warns(CalibrationWarning, match="separate events from non-events"):
            r = rm.calibration_intercept_slope([0, 1, 0, 1], [0.1, 0.8, 0.2, 0.9])
    assert np.isnan(r.slope) and np.isfinite(r.intercept)


def test_cross_validation_on_too_few_rows_says_so(wdbc):
    with pytest.raises(DataError, match="too small for cross-validation") as e:
        rf.cross_validate('diagnosis == "M" ~ radius_worst', wdbc.head(20), folds=10, **FIT)
    assert "folds <= 1" not in str(e.value)


def test_nan_threshold_is_named(expr_model, wdbc):
    with pytest.raises(SettingsError, match="1 NaN"):
        rf.decision_curve(expr_model, data=wdbc, thresholds=[np.nan, 0.2])


@pytest.mark.parametrize("call", ["counterfactuals", "reasons"])
def test_missing_values_in_people_name_people(expr_model, wdbc, call):
    people = wdbc.head(2).copy()
    people.loc[people.index[0], "radius_worst"] = np.nan
    kw = {"target_risk": 0.5} if call == "counterfactuals" else {}
    with pytest.raises(DataError, match=r"`people` has missing values in \{'radius_worst': 1\}"):
        getattr(expr_model, call)(people, **kw)
