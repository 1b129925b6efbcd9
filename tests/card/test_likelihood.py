"""statsmodels' results attributes of a fitted risk score (params, llf, aic, residuals, predict's
``which=``), each number checked against statsmodels' binomial GLM evaluated at the card's fixed
coefficients on the same design, and the attributes that do not apply refused."""

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from statsmodels.genmod.generalized_linear_model import GLMResults

import riskformula as rf
from conftest import binary_frame
from riskformula.errors import DataError, NotApplicableError, SettingsError

FORMULA = "y ~ x1 + x2 + x3 + C(grp)"


@pytest.fixture(scope="module")
def data():
    d = binary_frame(300, 3)
    d.index = pd.RangeIndex(100, 400)  # not 0..n-1: the attributes keep the data's index
    d["w"] = np.random.default_rng(5).integers(1, 4, len(d)).astype(float)
    return d


@pytest.fixture(scope="module")
def plain(data):
    return rf.risk_score(FORMULA, data, max_size=3, time_limit=20)


def own_design(data):
    """The formula's design built by hand (no riskformula code): intercept, x1, x2, x3, grp b, grp c."""
    return np.column_stack([np.ones(len(data)), data.x1, data.x2, data.x3, data.grp == "b", data.grp == "c"]).astype(float)


def glm_at(m, y, X, beta, freq_weights=None):
    """statsmodels' GLM results at fixed coefficients ``beta`` (no fitting), keeping only the
    columns with a nonzero coefficient so that its df_model counts the items."""
    keep = np.r_[True, beta[1:] != 0]
    mod = sm.GLM(y, X[:, keep], family=sm.families.Binomial(), freq_weights=freq_weights)
    return GLMResults(mod, beta[keep], np.eye(int(keep.sum())), 1.0)


def check_against(m, r, tol=1e-9):
    assert m.llf == pytest.approx(r.llf, rel=tol)
    assert m.llnull == pytest.approx(r.llnull, rel=tol)
    assert m.deviance == pytest.approx(r.deviance, rel=tol)
    assert m.null_deviance == pytest.approx(r.null_deviance, rel=tol)
    assert m.df_model == r.df_model
    assert m.df_resid == pytest.approx(r.df_resid)
    assert m.aic == pytest.approx(r.aic, rel=tol)
    assert m.bic == pytest.approx(r.bic_llf, rel=tol)


def test_plain_fit_matches_statsmodels(plain, data):
    m = plain
    beta = m.design_points.to_numpy(float) / m.scale
    y = data.y.to_numpy()
    r = glm_at(m, y, own_design(data), beta)
    check_against(m, r)
    assert m.nobs == r.nobs == len(data)
    # the same numbers through statsmodels' Logit
    assert m.llf == pytest.approx(sm.Logit(y, own_design(data)).loglike(beta), rel=1e-10)
    np.testing.assert_allclose(m.fittedvalues.to_numpy(), r.fittedvalues, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(m.resid_response.to_numpy(), r.resid_response, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(m.resid_pearson.to_numpy(), r.resid_pearson, rtol=1e-10)
    np.testing.assert_allclose(m.resid_deviance.to_numpy(), r.resid_deviance, rtol=1e-10)
    assert (m.fittedvalues.index == data.index).all() and m.fittedvalues.name == "risk"
    assert (m.resid_deviance ** 2).sum() == pytest.approx(m.deviance, rel=1e-10)


def test_params_are_the_card(plain):
    m = plain
    p = m.params
    assert p.index[0] == "(intercept)" and p.index[-1] == "(scale)"
    assert p["(intercept)"] == m.intercept and p["(scale)"] == m.scale
    items = {it.label: it.points for it in m.scorecard.items}
    assert dict(p.iloc[1:-1]) == items and len(items) == m.size == m.df_model


def test_weighted_fit_matches_statsmodels_frequency_weights(data):
    m = rf.risk_score(FORMULA, data, max_size=3, weights="w", positive_weight=2.0, time_limit=20)
    y = data.y.to_numpy()
    beta = m.design_points.to_numpy(float) / m.scale
    # the fit weighs a row by its sample weight, an event by positive_weight on top
    r = glm_at(m, y, own_design(data), beta, freq_weights=data.w.to_numpy() * np.where(y == 1, 2.0, 1.0))
    check_against(m, r)
    assert m.df_resid == pytest.approx(r.df_resid)  # statsmodels' weighted n minus the parameters
    # residuals are per row, unweighted (as statsmodels' with frequency weights)
    np.testing.assert_allclose(m.resid_deviance.to_numpy(), r.resid_deviance, rtol=1e-10)
    np.testing.assert_allclose(m.resid_pearson.to_numpy(), r.resid_pearson, rtol=1e-10)


def test_threshold_and_fitted_scale(data):
    df = rf.load_dataset("wdbc")
    m = rf.risk_score('diagnosis == "M" ~ threshold(radius_worst, k=1) + concave_points_worst', df, max_size=2,
                      scale=[1, 2], time_limit=30)
    y = m.observed(df).to_numpy()
    E = m.encode(df)  # one column per entry of coef; intercept + E @ coef = scale × logit
    X = np.column_stack([np.ones(len(df)), E])
    beta = np.r_[m.intercept, m.coef.to_numpy(float)] / m.scale
    r = glm_at(m, y, X, beta)
    assert m.llf == pytest.approx(r.llf, rel=1e-9) and m.llnull == pytest.approx(r.llnull, rel=1e-9)
    # a score scale chosen by the fit is one parameter more than statsmodels sees
    assert m.df_model == r.df_model + 1
    assert m.aic == pytest.approx(r.aic + 2, rel=1e-9)
    assert m.bic == pytest.approx(r.bic_llf + np.log(len(df)), rel=1e-9)
    np.testing.assert_allclose(m.predict(df, which="link").to_numpy(), X @ beta, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(m.resid_deviance.to_numpy(), r.resid_deviance, rtol=1e-9)


def test_predict_which(plain, data):
    m = plain
    risk, score, link = (m.predict(data, which=w) for w in ("risk", "score", "link"))
    pd.testing.assert_series_equal(risk, m.predict(data))  # the default is unchanged
    pd.testing.assert_series_equal(score, m.score(data))
    assert link.name == "link" and np.allclose(link, (m.intercept + score) / m.scale)
    assert np.allclose(1 / (1 + np.exp(-link)), risk)
    pd.testing.assert_series_equal(m.predict(), m.fittedvalues)  # no newdata: the training rows
    with pytest.raises(SettingsError, match=r"\"mean\" is 'risk' here|'mean' is 'risk' here"):
        m.predict(data, which="mean")
    with pytest.raises(SettingsError, match="Did you mean `link`"):
        m.predict(data, which="lnk")


@pytest.mark.parametrize("name", ["bse", "pvalues", "tvalues"])
def test_standard_errors_are_refused(plain, name):
    with pytest.raises(NotApplicableError, match="rashomon_set.*cross_validate"):
        getattr(plain, name)
    assert not hasattr(plain, name)  # an AttributeError: duck typing sees no standard errors


@pytest.mark.parametrize("name", ["conf_int", "cov_params"])
def test_intervals_are_refused(plain, name):
    with pytest.raises(NotApplicableError, match="whole numbers chosen by an exact search"):
        getattr(plain, name)()


def test_compare_reads_the_same_numbers(plain, data):
    small = rf.risk_score(FORMULA, data, max_size=1, time_limit=20)
    t = rf.compare(small, plain).to_frame()
    for m, row in zip((small, plain), t.itertuples()):
        assert (row.deviance, row.aic, row.bic) == (m.deviance, m.aic, m.bic)
    lr = rf.compare(small, plain).lr_tests.iloc[0]
    assert lr["df"] == plain.df_model - small.df_model


def test_compare_of_weighted_fits_is_weighted(data):
    fits = [rf.risk_score(FORMULA, data, max_size=k, weights="w", time_limit=20) for k in (1, 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = rf.compare(*fits)
    assert list(t.frame["aic"]) == [m.aic for m in fits]
    assert any("weighted as its fit is" in n for n in t.notes)


def test_loaded_model_keeps_the_scalars_not_the_rows(plain, data):
    weighted = rf.risk_score(FORMULA, data, max_size=2, weights="w", time_limit=20)
    for m in (plain, weighted):
        again = rf.from_json(m.to_json())
        for name in ("llf", "llnull", "deviance", "null_deviance", "aic", "bic", "df_model", "df_resid", "nobs"):
            assert getattr(again, name) == pytest.approx(getattr(m, name), rel=1e-12), name
        pd.testing.assert_series_equal(again.params, m.params)
        with pytest.raises(DataError, match="^fittedvalues needs.*does not keep.*m.predict\\(data\\)"):
            again.fittedvalues
        with pytest.raises(DataError, match="does not keep"):
            again.resid_deviance
        pd.testing.assert_series_equal(again.predict(data, which="link"), m.predict(data, which="link"))


def test_loaded_weighted_model_without_its_weight_total(data):
    import json
    m = rf.risk_score(FORMULA, data, max_size=2, weights="w", time_limit=20)
    doc = json.loads(m.to_json())
    del doc["training"]["weight_total"], doc["training"]["weight_events"]
    from riskformula.io import _digest
    doc["digest"] = _digest(doc)
    again = rf.from_json(json.dumps(doc))
    with pytest.raises(DataError, match="fitted with sample weights and saved without their total"):
        again.llf
    assert "AIC" not in str(again.summary())  # the summary leaves the row out


def test_summary_to_frame_is_a_coefficient_table(plain):
    s = plain.summary()
    t = s.to_frame()
    assert list(t.columns) == ["term", "points", "coef", "odds_ratio", "variable", "kind"]
    assert t["term"].iloc[0] == "(intercept)" and t["points"].iloc[0] == plain.intercept
    assert list(t["points"].iloc[1:]) == list(plain.score_card()["points"])
    assert np.allclose(t["coef"], t["points"] / plain.scale) and np.allclose(t["odds_ratio"], np.exp(t["coef"]))
    pd.testing.assert_frame_equal(s.score_card(), plain.score_card())
    assert "AIC / BIC" in str(s)
    assert s.to_dict()["likelihood"] == {k: float(getattr(plain, k)) for k in (
        "llf", "llnull", "deviance", "null_deviance", "aic", "bic", "df_model", "df_resid")}


def test_net_benefit_score_has_a_likelihood(data):
    m = rf.risk_score(FORMULA, data, max_size=2, objective="net_benefit", time_limit=20)
    risk = m.fittedvalues.to_numpy()
    y = data.y.to_numpy()
    ll = float(np.sum(y * np.log(risk) + (1 - y) * np.log1p(-risk)))
    assert m.llf == pytest.approx(ll, rel=1e-9)
    assert m.df_model == m.size + m.band(data).nunique() - 1  # the band risks stand for the intercept
    assert np.isnan(m.summary().to_frame()["coef"]).all()  # its points are not logits


def test_a_net_benefit_score_counts_the_bands_its_rows_fell_in():
    # bands between equal cut-offs hold no score: their risks are not parameters of the card
    bc = rf.load_dataset("breastcancer").iloc[::2]
    m = rf.risk_score("Benign ~ .", bc, objective="net_benefit", max_size=2, coef_range=(0, 3), c0=1e-3,
                      time_limit=20)
    used = m.band(bc).nunique()
    assert used < len(m.nb.band_risk)  # the case: empty bands
    assert m.df_model == m.size + used - 1 == m.size + m.fittedvalues.nunique() - 1
    assert m.aic == pytest.approx(2 * (m.df_model + 1) - 2 * m.llf, rel=1e-12)


def test_dask_fit_has_the_same_totals_and_no_rows(plain, data):
    dd = pytest.importorskip("dask.dataframe")
    lazy = rf.risk_score(FORMULA, dd.from_pandas(data, npartitions=3), max_size=3, time_limit=20)
    for name in ("llf", "llnull", "aic", "bic", "df_model", "df_resid"):
        assert getattr(lazy, name) == pytest.approx(getattr(plain, name), rel=1e-10), name
    with pytest.raises(DataError, match="dask frame's distinct rows"):
        lazy.fittedvalues
    link = lazy.predict(dd.from_pandas(data, npartitions=3), which="link").compute()
    pd.testing.assert_series_equal(link, plain.predict(data, which="link"))


def test_a_scale_chosen_among_every_scale_is_one_parameter(data):
    """The support search's certificate covers every scale > 0; the model keeps the one scale it
    chose, and that scale still counts as a parameter."""
    m = rf.risk_score("y ~ x1 + x2 + x3", data, max_size=2, coef_range=(-3, 3), scale="fit",
                      control=rf.SearchControl(engine="supports", time_limit=600))
    assert m.solver.settings.get("continuous_scale") and len(m.settings.scales) == 1
    items = int(np.count_nonzero(m.coef.to_numpy(float)))
    assert m.df_model == items + 1
    assert m.aic == pytest.approx(-2 * m.llf + 2 * (items + 2), rel=1e-12)
