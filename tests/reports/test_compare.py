"""compare() / anova(): rows, likelihood-ratio tests and the reference row against statsmodels."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import riskformula as rf
from conftest import binary_frame
from riskformula.errors import DataError

FORMULA = "y ~ x1 + x2 + x3 + C(grp)"


def make_data(n=300, seed=1):
    return binary_frame(n, seed)


@pytest.fixture(scope="module")
def data():
    return make_data()


@pytest.fixture(scope="module")
def fits(data):
    return [rf.risk_score(FORMULA, data, max_size=k, time_limit=10) for k in (1, 2)]


def loglik(model, data):
    """statsmodels' log-likelihood of the integer model at its fixed points (independent oracle)."""
    X = np.column_stack([np.ones(model.nobs), model.design.model_spec.get_model_matrix(data)[list(model.design.columns)]])
    return sm.Logit(model.observed(data).to_numpy(), X).loglike(
        np.r_[model.intercept, model.coef.to_numpy(float)])


def test_lr_test_matches_statsmodels_and_scipy(fits, data):
    small, big = fits
    t = rf.compare(small, big)
    lr = t.lr_tests.iloc[0]
    n = small.nobs
    assert lr["deviance_change"] == pytest.approx(2 * n * (small.loss - big.loss), rel=1e-10)
    assert lr["deviance_change"] == pytest.approx(-2 * (loglik(small, data) - loglik(big, data)), rel=1e-8)
    assert lr["df"] == big.size - small.size == 1
    assert lr["p_value"] == pytest.approx(stats.chi2.sf(lr["deviance_change"], 1), rel=1e-12)
    assert bool(lr["nested"])


def test_rows_deviance_aic_bic(fits):
    t = rf.compare(*fits).to_frame()
    for m, row in zip(fits, t.itertuples()):
        dev = 2 * m.nobs * m.loss
        assert row.deviance == pytest.approx(dev)
        assert row.aic == pytest.approx(dev + 2 * (m.size + 1))
        assert row.bic == pytest.approx(dev + (m.size + 1) * np.log(m.nobs))
        assert row.auc == pytest.approx(m.training_evaluation.auc.auc)
        assert row.points_min == m.coef[m.coef != 0].min() and row.status == m.status
    assert list(t.columns) == rf.compare(*fits).frame.columns.tolist()


def test_reference_row_is_statsmodels_logit(fits, data):
    t = rf.compare(*fits, data=data).to_frame()
    ref = t.iloc[-1]
    assert ref["status"] == "reference"
    X = sm.add_constant(fits[1].design.model_spec.get_model_matrix(data)[list(fits[1].design.columns)].to_numpy(float))
    res = sm.Logit(data["y"].to_numpy(), X).fit(disp=0)
    assert ref["deviance"] == pytest.approx(-2 * res.llf, rel=1e-6)
    assert ref["aic"] == pytest.approx(res.aic, rel=1e-6)
    assert ref["loss"] <= t["loss"].iloc[:-1].min() + 1e-9  # real coefficients can only do better


def test_without_data_reference_is_skipped_with_note(fits):
    t = rf.compare(*fits)
    assert (t.frame["status"] != "reference").all()
    assert any("data=" in s for s in t.notes)
    assert not any("No reference row" in s for s in rf.compare(*fits, reference=False).notes)


def test_refuses_different_rows_unless_newdata(data):
    a = rf.risk_score(FORMULA, data, max_size=1, time_limit=10)
    b = rf.risk_score(FORMULA, data.iloc[:250], max_size=1, time_limit=10)
    with pytest.raises(DataError, match="different rows"):
        rf.compare(a, b)
    # same number of rows, different rows
    c = rf.risk_score(FORMULA, data.iloc[50:], max_size=1, time_limit=10)
    d = rf.risk_score(FORMULA, data.iloc[:250], max_size=1, time_limit=10)
    with pytest.raises(DataError, match="different rows"):
        rf.compare(c, d)
    t = rf.compare(a, b, newdata=data.iloc[250:])
    assert t.evaluated_on == "newdata" and (t.frame["n"] == 50).all()
    assert t.lr_tests is None and t.frame["aic"].isna().all()


def test_refuses_different_outcomes(data, fits):
    other = data.assign(z=1 - data["y"])
    m = rf.risk_score("z ~ x1 + x2", other, max_size=1, time_limit=10)
    with pytest.raises(DataError, match="different outcomes"):
        rf.compare(fits[0], m)


def test_data_must_be_the_training_rows(fits, data):
    with pytest.raises(DataError, match="not the rows"):
        rf.compare(*fits, data=data.iloc[:200])


def test_newdata_metrics_come_from_evaluate(fits, data):
    new = make_data(200, seed=7)
    t = rf.compare(*fits, newdata=new, data=data).to_frame()
    for m, row in zip(fits, t.itertuples()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rf.errors.CalibrationWarning)  # HL needs 3 risk groups
            ev = rf.evaluate(m, new)
        assert row.loss == pytest.approx(ev.log_loss) and row.auc == pytest.approx(ev.auc.auc)
        assert row.deviance == pytest.approx(2 * 200 * ev.log_loss) and row.n == 200
    assert t.iloc[-1]["status"] == "reference" and t.iloc[-1]["n"] == 200


def test_not_nested_gives_no_p_value(data):
    a = rf.risk_score("y ~ x1", data, max_size=1, time_limit=10)
    b = rf.risk_score("y ~ x2 + x3", data, max_size=2, time_limit=10)
    lr = rf.compare(a, b).lr_tests.iloc[0]
    assert not lr["nested"] and np.isnan(lr["p_value"])


def test_names_labels_and_argument_errors(fits):
    t = rf.compare(*fits, names=["small", "big"])
    assert list(t.frame["model"]) == ["small", "big"] and "small vs big" in str(t)
    assert list(t.points.columns) == ["small", "big"]
    assert t.points.loc["intercept", "big"] == fits[1].intercept
    with pytest.raises(rf.SettingsError, match="one per model"):
        rf.compare(*fits, names=["only one"])
    with pytest.raises(rf.SettingsError, match="separate arguments"):
        rf.compare(list(fits))
    with pytest.raises(rf.SettingsError):
        rf.compare()


def test_anova_is_compare(fits):
    assert rf.anova is rf.compare
    assert rf.anova(*fits).to_frame().equals(rf.compare(*fits).to_frame())


def test_renders_and_converts(fits, data):
    t = rf.compare(*fits, data=data)
    text = str(t)
    assert "Likelihood-ratio tests" in text and "approximate" in text and "reference" in text
    assert t.to_markdown().startswith("# Model comparison")
    assert "<table>" in t.to_html() and t._repr_html_() == t.to_html()
    assert "\\begin{tabular}" in t.to_latex()
    d = t.to_dict()
    json.dumps(d)
    assert len(d["models"]) == 3 and d["lr_tests"][0]["df"] == 1
    assert repr(t).startswith("<ComparisonTable: 2 model(s)")


def test_does_not_modify_data(fits, data):
    before = data.copy()
    rf.compare(*fits, data=data, newdata=data)
    pd.testing.assert_frame_equal(data, before)


def _above_half(x):
    return x > 0.5


def test_reference_row_uses_the_models_context(data):
    """A formula calling the user's function (context=) is rebuilt with it for the reference row,
    also on newdata; a model loaded from JSON without it says to pass context= again."""
    small = rf.risk_score("y ~ f(x1)", data, max_size=1, time_limit=10, context={"f": lambda x: x > 0.5})
    big = rf.risk_score("y ~ f(x1) + x2", data, max_size=2, time_limit=10, context={"f": lambda x: x > 0.5})
    t = rf.compare(small, big, data=data)
    ref = t.frame[t.frame["status"] == "reference"]
    assert len(ref) == 1 and np.isfinite(ref["loss"].iloc[0])
    new = make_data(120, seed=5)
    assert (rf.compare(small, big, data=data, newdata=new).frame["status"] == "reference").sum() == 1
    loaded = rf.from_json(big.to_json(), trusted=True)
    with pytest.raises(rf.SettingsError, match=r"context=\{'f': \.\.\.\}"):
        rf.compare(small, loaded, data=data)
    again = rf.from_json(big.to_json(), trusted=True, context={"f": _above_half})
    pd.testing.assert_frame_equal(rf.compare(small, again, data=data).frame, t.frame)


def test_notes_count_a_continuous_scale_as_the_table_does(data):
    # a scale chosen among every scale > 0 (the support search keeps only the one chosen in
    # settings.scales) is one more parameter in the table and in the notes that explain it
    grid = rf.risk_score("y ~ x1 + x2", data, max_size=2, time_limit=10, scale=1.0)
    fitted = rf.risk_score("y ~ x1 + x2", data, max_size=2, time_limit=10, scale="fit")
    assert len(fitted.settings.scales) == 1 and fitted.df_model == fitted.size + 1
    t = rf.compare(grid, fitted)
    assert t.lr_tests.iloc[0]["df"] == fitted.df_model - grid.df_model
    notes = " ".join(t.notes)
    assert "counts as one more parameter" in notes and "difference in df_model" in notes
    row = t.to_frame().iloc[1]
    assert row.aic == pytest.approx(2 * fitted.nobs * fitted.loss + 2 * (fitted.size + 2))
