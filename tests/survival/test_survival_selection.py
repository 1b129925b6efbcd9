"""Model comparison and selection of time-to-event cards: compare()/anova() on the partial
likelihood (checked against statsmodels' PHReg), cross-validation whose fold metrics are each fold
model's evaluate() on its held-out rows, size_path and cv_risk_score; and the refusals."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.duration.hazard_regression import PHReg

import riskformula as rf
from riskformula.errors import DataError, NotApplicableError, SettingsError
from riskformula.reports.partial_likelihood import partial_likelihood
from riskformula.reports.survival_metrics import harrell_c
from riskformula.survival.fit import default_horizon

sys.path.insert(0, str(Path(__file__).parent))
from test_survival_card import _data  # noqa: E402

F = "Surv(t, d) ~ a + b + C(c)"
#: small, deterministic fits: a node limit, no clock
FAST = dict(scale=[1, 2], node_limit=300, time_limit=60)


@pytest.fixture(scope="module")
def df():
    return _data(3, n=120)


@pytest.fixture(scope="module")
def pair(df):
    small = rf.risk_score(F, df, max_size=1, horizon=[3, 6], **FAST)
    big = rf.risk_score(F, df, max_size=3, horizon=[3, 6], **FAST)
    return small, big


def _phreg_llf(m, data):
    """statsmodels' log partial likelihood at the card's coefficients (points / scale)."""
    X = m.encode_design(data)
    beta = m.design_points.to_numpy(float)[1:] / m.scale
    return PHReg(data["t"].to_numpy(float), X, status=data["d"].to_numpy(), ties=m.ties).loglike(beta)


# --------------------------------------------------------------------------------------------
# compare / anova


def test_a_scale_fitted_over_every_scale_counts_as_a_parameter(df):
    # the Cox support search chooses the scale among every scale > 0 and keeps only the chosen one
    # in settings.scales: it is still one more parameter, as for the logistic fit
    m = rf.risk_score(F, df, max_size=2, horizon=[3, 6], time_limit=60)
    assert m.solver.settings.get("continuous_scale") and len(m.settings.scales) == 1
    assert m.df_model == m.size + 1
    assert m.aic == pytest.approx(-2 * m.llf + 2 * (m.size + 1))


def test_compare_points_have_no_intercept_row_for_cards_without_one(df, pair):
    small, big = pair
    points = rf.compare(small, big, data=df).tables["points"]
    assert small.intercept == big.intercept == 0  # no threshold terms: nothing moves onto the intercept
    assert "intercept" not in points.index
    for m, col in zip(pair, points.columns):  # each column is the card
        assert dict(points[col][points[col] != 0]) == {it.label: it.points for it in m.scorecard.items}


def test_compare_numbers_are_the_partial_likelihoods(df, pair):
    small, big = pair
    table = rf.compare(small, big, data=df)
    assert table.survival and rf.anova is rf.compare
    f = table.to_frame()
    assert list(f.columns)[:3] == ["model", "n", "events"] and "harrell_c" in f and "auc" not in f
    for i, m in enumerate(pair):
        llf = _phreg_llf(m, df)
        assert m.llf == pytest.approx(llf, rel=1e-10)
        row = f.iloc[i]
        assert row["deviance"] == pytest.approx(-2 * llf, rel=1e-10)
        assert row["loss"] == pytest.approx(-llf / len(df), rel=1e-10)
        k = m.size + 1  # the items and the scale chosen among [1, 2]
        assert m.df_model == k
        assert row["aic"] == pytest.approx(-2 * llf + 2 * k, rel=1e-10)
        assert row["bic"] == pytest.approx(-2 * llf + math.log(df["d"].sum()) * k, rel=1e-10)
        assert row["harrell_c"] == pytest.approx(harrell_c(df["t"], df["d"], m.predict(df, which="score")))
        assert row["events"] == df["d"].sum()
    lr = table.lr_tests.iloc[0]
    change = 2 * (_phreg_llf(big, df) - _phreg_llf(small, df))
    assert lr["nested"] and lr["df"] == big.df_model - small.df_model == big.size - small.size
    assert lr["deviance_change"] == pytest.approx(change, rel=1e-9)
    assert lr["p_value"] == pytest.approx(stats.chi2.sf(change, lr["df"]), rel=1e-9)
    # the reference row: statsmodels' unpenalized Cox fit on the largest design
    ref = f.iloc[-1]
    assert ref["status"] == "reference"
    X = big.encode_design(df)
    res = PHReg(df["t"].to_numpy(float), X, status=df["d"].to_numpy(), ties=big.ties).fit()
    assert ref["deviance"] == pytest.approx(-2 * res.llf, rel=1e-8)
    assert ref["deviance"] <= f.iloc[1]["deviance"] + 1e-9  # real coefficients fit at least as well
    text = str(table)
    assert "Harrell's C" in text and "partial likelihood" in text and "AUC" not in text


def test_compare_on_newdata(df, pair):
    small, big = pair
    new = _data(11, n=80)
    f = rf.compare(small, big, newdata=new).to_frame()
    for i, m in enumerate(pair):
        llf = _phreg_llf(m, new)
        assert f.iloc[i]["loss"] == pytest.approx(-llf / len(new), rel=1e-10)
        assert partial_likelihood(m, new).llf == pytest.approx(llf, rel=1e-10)
        ev = m.evaluate(new)
        assert f.iloc[i]["harrell_c"] == pytest.approx(ev.harrell_c)
        assert f.iloc[i]["uno_c"] == pytest.approx(ev.uno_c)
        assert np.isnan(f.iloc[i]["aic"])


def test_partial_likelihood_on_training_rows_is_the_cards(df, pair):
    for m in pair:
        assert partial_likelihood(m, df).llf == pytest.approx(m.llf, rel=1e-12)


def test_not_nested_says_why(df, pair):
    small, big = pair
    reversed_ = rf.compare(big, small)
    assert not reversed_.lr_tests.iloc[0]["nested"] and np.isnan(reversed_.lr_tests.iloc[0]["p_value"])
    assert any("size limit" in n for n in reversed_.notes)
    one_scale = rf.risk_score(F, df, max_size=3, horizon=[3, 6], scale=[1], node_limit=300)
    t = rf.compare(small, one_scale)
    assert not t.lr_tests.iloc[0]["nested"]
    assert any("score scales lack 2" in n and "scale=[1, 2, 4]" in n for n in t.notes)


def test_refusals(df, pair):
    small, _ = pair
    binary = rf.risk_score("d ~ a + b", df, max_size=1, node_limit=100)
    with pytest.raises(DataError, match="time-to-event score .* beside the binary"):
        rf.compare(small, binary)
    with pytest.raises(DataError, match="time-to-event score .* beside the binary"):
        rf.anova(binary, small, newdata=df)
    other_rows = rf.risk_score(F, df.iloc[:100], max_size=1, horizon=[3, 6], **FAST)
    with pytest.raises(DataError, match="different rows"):
        rf.compare(small, other_rows)
    breslow = rf.risk_score(F, df, max_size=1, horizon=[3, 6], objective=rf.cox(ties="breslow"), **FAST)
    with pytest.raises(DataError, match="tied event times"):
        rf.compare(small, breslow)


# --------------------------------------------------------------------------------------------
# cross-validation


@pytest.fixture(scope="module")
def cv(df):
    return rf.cross_validate(F, df, folds=3, seed=1, n_jobs=1, max_size=2, **FAST)


def test_fold_metrics_are_each_fold_models_evaluate(df, cv):
    assert type(cv).__name__ == "SurvivalCrossValidation"
    h = default_horizon(df["t"], df["d"])
    assert cv.horizons == (h,)
    f = cv.to_frame()
    assert len(f) == 3 and set(cv.fold_of.unique()) == {1, 2, 3}
    events = [int(df.loc[cv.fold_of.index[cv.fold_of == k], "d"].sum()) for k in (1, 2, 3)]
    assert max(events) - min(events) <= 1  # stratified by event
    for k, m in enumerate(cv.models):
        assert m.horizons == (h,)
        test = df.loc[cv.fold_of.index[cv.fold_of == k + 1]]
        train = df.drop(test.index)
        assert m.nobs == len(train)
        ev = m.evaluate(test)
        row = f.iloc[k]
        assert row["harrell_c"] == ev.harrell_c and row["uno_c"] == ev.uno_c
        assert row["auc"] == ev.auc[0] and row["integrated_brier"] == ev.integrated_brier
        assert row["loss"] == pytest.approx(-_phreg_llf(m, test) / len(test), rel=1e-10)
        assert row["train_loss"] == m.loss and row["n_test"] == len(test)
    s = cv.summary_frame()
    assert s.loc["harrell_c", "mean"] == pytest.approx(f["harrell_c"].mean())
    assert "stratified by event" in str(cv) and "Harrell's C" in str(cv)
    d = cv.to_dict()
    assert d["horizons"] == [h] and d["summary"]["loss"]["mean"] == pytest.approx(f["loss"].mean())


def test_horizon_is_passed_to_every_fold(df):
    cv = rf.cross_validate(F, df, folds=2, n_jobs=1, max_size=1, horizon=[2, 4], **FAST)
    assert all(m.horizons == (2.0, 4.0) for m in cv.models)


def test_cv_refusals(df):
    with pytest.raises(SettingsError, match="followed up to .* not past the horizon"):
        rf.cross_validate(F, df, folds=3, n_jobs=1, max_size=1, horizon=float(df["t"].max() - 0.5), **FAST)
    with pytest.raises(SettingsError, match="more than the .* events"):
        rf.cross_validate(F, df.head(12), folds=12, n_jobs=1, max_size=1, **FAST)
    dd = pytest.importorskip("dask.dataframe")
    with pytest.raises(NotApplicableError, match="dask frame"):
        rf.cross_validate(F, dd.from_pandas(df, npartitions=2), folds=3, max_size=1)
    with pytest.raises(NotApplicableError, match="dask frame"):
        rf.cv_risk_score(F, dd.from_pandas(df, npartitions=2), sizes=[1], folds=3)


def test_size_path(df):
    new = _data(11, n=80)
    path = rf.size_path(F, df, sizes=[1, 2], **FAST)
    t = path.to_frame()
    assert type(path).__name__ == "SurvivalSizePath" and "harrell_c" in t and "auc" not in t
    for _, row in t.iterrows():
        m = path.models[int(row["size"])]
        assert row["loss"] == m.loss and row["harrell_c"] == m.training_metrics["harrell_c"]
    held = rf.size_path(F, df, sizes=[1, 2], newdata=new, **FAST).to_frame()
    for _, row in held.iterrows():
        m = path.models[int(row["size"])]
        assert row["loss"] == pytest.approx(-_phreg_llf(m, new) / len(new), rel=1e-10)
        assert row["harrell_c"] == pytest.approx(harrell_c(new["t"], new["d"], m.predict(new, which="score")))
    fig = path.plot()
    assert "Harrell" in fig.axes[1].get_ylabel()


@pytest.mark.slow  # 5-8 s: the default run stays within about 6 minutes
def test_cv_risk_score(df):
    cv = rf.cv_risk_score(F, df, sizes=[1, 2], folds=3, **FAST)
    assert type(cv).__name__ == "SurvivalSizeCV" and cv.metric == "harrell_c"
    folds = cv.folds
    assert len(folds) == 6
    curve = cv.to_frame().set_index("size")
    for size, g in folds.groupby("size"):
        assert curve.loc[size, "mean"] == pytest.approx(g["harrell_c"].mean())
        assert curve.loc[size, "loss"] == pytest.approx(g["loss"].mean())
        assert curve.loc[size, "se"] == pytest.approx(g["harrell_c"].std(ddof=1) / math.sqrt(3))
    assert cv.model.settings.max_size == cv.size and cv.model.horizons == (default_horizon(df["t"], df["d"]),)
    by_loss = rf.cv_risk_score(F, df, sizes=[1, 2], folds=3, metric="loss", rule="min", **FAST)
    c = by_loss.to_frame()
    assert by_loss.size == int(c.loc[c["mean"].idxmin(), "size"])
    pd.testing.assert_series_equal(c["mean"], c["loss"], check_names=False)
    assert "held-out partial likelihood loss" in str(by_loss)
    fig = by_loss.plot()
    assert "partial likelihood" in fig.axes[0].get_ylabel() and "lower is better" in fig.axes[0].get_title()
    with pytest.raises(SettingsError, match="harrell_c"):
        rf.cv_risk_score(F, df, sizes=[1], folds=3, metric="cal", **FAST)
    with pytest.raises(SettingsError, match="time-to-event"):
        rf.cv_risk_score("d ~ a + b", df, sizes=[1], folds=3, metric="harrell_c")
