"""cross_validate(), stratified folds and size_path()."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from conftest import binary_frame
from riskformula.errors import DataError, SettingsError
from riskformula.reports import metrics
from riskformula.reports.cross_validation import FOLD_COLUMNS
from riskformula.tuning import stratified_folds

FORMULA = "y ~ x1 + x2 + x3 + C(grp)"
FIT = dict(max_size=2, coef_range=(-3, 3), time_limit=10)


def make_data(n=200, seed=5):
    return binary_frame(n, seed, levels=("a", "b"), intercept=-1.2, effect_c=0.0)


@pytest.fixture(scope="module")
def data():
    return make_data()


@pytest.fixture(scope="module")
def cv(data):
    return rf.cross_validate(FORMULA, data, folds=4, seed=1, n_jobs=1, **FIT)


def test_stratified_folds_balance_and_seed():
    y = np.r_[np.ones(23), np.zeros(77)].astype(int)
    f = stratified_folds(y, 5, seed=3)
    assert np.array_equal(f, stratified_folds(y, 5, seed=3))
    assert not np.array_equal(f, stratified_folds(y, 5, seed=4))
    sizes = np.bincount(f)
    events = np.bincount(f, weights=y)
    assert sizes.max() - sizes.min() <= 1 and events.max() - events.min() <= 1


def test_cross_validation_table(cv, data):
    t = cv.to_frame()
    assert list(t.columns) == FOLD_COLUMNS and len(t) == 4 and len(cv.models) == 4
    assert t["n_test"].sum() == len(data) and (t["n_train"] + t["n_test"] == len(data)).all()
    # fold 2's numbers are its model evaluated on its held-out rows
    test = data.loc[cv.fold_of.index[cv.fold_of == 2]]
    m = cv.models[1]
    y, risk, score = m.observed(test), m.predict(test), m.score(test)
    assert t.loc[1, "auc"] == pytest.approx(metrics.auc(y, score))
    assert t.loc[1, "loss"] == pytest.approx(metrics.log_loss(y, risk))
    assert t.loc[1, "cal"] == pytest.approx(metrics.cal_by_score(y, risk, score))
    s = cv.summary_frame()
    assert s.loc["auc", "mean"] == pytest.approx(t["auc"].mean())
    assert s.loc["auc", "sd"] == pytest.approx(t["auc"].std(ddof=1))


def test_cross_validation_is_reproducible(cv, data):
    again = rf.cross_validate(FORMULA, data, folds=4, seed=1, n_jobs=1, **FIT)
    pd.testing.assert_frame_equal(again.folds.drop(columns="time"), cv.folds.drop(columns="time"))
    pd.testing.assert_series_equal(again.fold_of, cv.fold_of)


@pytest.mark.slow  # 5-8 s: the default run stays within about 6 minutes
def test_parallel_folds_match_serial(cv, data):
    par = rf.cross_validate(FORMULA, data, folds=4, seed=1, n_jobs=2, **FIT)
    pd.testing.assert_frame_equal(par.folds.drop(columns="time"), cv.folds.drop(columns="time"))
    pd.testing.assert_series_equal(par.fold_of, cv.fold_of)
    for a, b in zip(par.models, cv.models, strict=True):  # in fold order, whichever worker finished first
        pd.testing.assert_series_equal(a.coef, b.coef)
        assert a.intercept == b.intercept
    assert par.notes == cv.notes


def test_cross_validation_renders_and_converts(cv):
    text = str(cv)
    assert "mean ± sd" in text and "Folds" in text
    assert cv.to_markdown().startswith("# Cross-validation") and "<table>" in cv._repr_html_()
    assert "\\begin{tabular}" in cv.to_latex()
    d = cv.to_dict()
    json.dumps(d)
    assert d["k"] == 4 and d["seed"] == 1 and len(d["folds"]) == 4
    assert repr(cv).startswith("<CrossValidation:")


def test_cross_validation_errors(data):
    with pytest.raises(SettingsError, match="folds"):
        rf.cross_validate(FORMULA, data, folds=1)
    with pytest.raises(SettingsError, match="rarer outcome class"):
        rf.cross_validate(FORMULA, data.iloc[:12], folds=10, n_jobs=1, **FIT)
    with pytest.raises(DataError, match="duplicated index"):
        rf.cross_validate(FORMULA, pd.concat([data, data.iloc[:5]]), folds=3)
    with pytest.raises(SettingsError, match="name a column"):
        rf.cross_validate(FORMULA, data, folds=3, weights=np.ones(len(data)))


def test_size_path(data):
    before = data.copy()
    path = rf.size_path(FORMULA, data, sizes=[3, 1, 2], coef_range=(-3, 3), time_limit=10)
    t = path.to_frame()
    assert list(t["size"]) == [1, 2, 3] and set(path.models) == {1, 2, 3}
    assert {"size", "loss", "auc", "cal", "gap", "status", "objective", "lower_bound", "time"} <= set(t.columns)
    assert (t["items"] <= t["size"]).all()
    assert (np.diff(t["loss"]) <= 1e-9).all()  # a larger size limit never fits worse
    for size, m in path.models.items():
        assert m.settings.max_size == size and m.settings.c0 == 1e-8
    assert path.points().loc["intercept", 1] == path.models[1].intercept
    text = str(path)
    assert "Points by size limit" in text and "<table>" in path.to_html()
    json.dumps(path.to_dict())
    pd.testing.assert_frame_equal(data, before)


def test_size_path_plot_and_newdata(data, tmp_path):
    pytest.importorskip("matplotlib")
    new = make_data(100, seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.errors.CalibrationWarning)
        path = rf.size_path(FORMULA, data, sizes=range(1, 3), newdata=new, time_limit=10)
    ev = rf.evaluate(path.models[2], new)
    assert path.table.loc[1, "auc"] == pytest.approx(ev.auc.auc) and path.evaluated_on == "newdata"
    fig = path.plot()
    fig.savefig(tmp_path / "path.png")
    assert (tmp_path / "path.png").stat().st_size > 0


def test_size_path_takes_weights_in_row_order(data):
    # every fit of a path is on all rows: an array of weights is as unambiguous as a column
    w = np.where(np.arange(len(data)) % 3 == 0, 2.0, 1.0)
    by_array = rf.size_path(FORMULA, data, sizes=[1, 2], weights=w, time_limit=5)
    by_name = rf.size_path(FORMULA, data.assign(w=w), sizes=[1, 2], weights="w", time_limit=5)
    np.testing.assert_allclose(by_array.table["loss"], by_name.table["loss"], rtol=1e-12)


def test_size_path_errors(data):
    with pytest.raises(SettingsError, match="max_size"):
        rf.size_path(FORMULA, data, sizes=[1], max_size=3)
    with pytest.raises(SettingsError, match="empty"):
        rf.size_path(FORMULA, data, sizes=[])
    with pytest.raises(SettingsError, match="whole number"):
        rf.size_path(FORMULA, data, sizes=[1.5])
    with pytest.raises(SettingsError, match="iterable"):
        rf.size_path(FORMULA, data, sizes=3)
    with pytest.raises(SettingsError, match="min_size"):
        rf.size_path(FORMULA, data, sizes=[1, 2], min_size=2)


def test_a_fold_whose_training_rows_miss_no_value_of_an_item_variable_is_named():
    # missing="item": a fold fit gives an item only to variables missing in its own training rows,
    # so a fold holding all of a variable's missing values could not score its held-out rows
    df = rf.load_dataset("breastcancer").sample(300, random_state=0).reset_index(drop=True)
    df.loc[5, "UniformityOfCellSize"] = np.nan
    f = "Benign ~ threshold(UniformityOfCellSize, grid=3)"
    fold = stratified_folds((df.Benign == 1).astype(int).to_numpy(), 3, 0)
    with pytest.raises(SettingsError, match=rf"training rows of fold {fold[5] + 1} \(seed 0\) have no missing "
                                            r"`UniformityOfCellSize`.*one missing value.*drop that row"):
        rf.cross_validate(f, df, folds=3, n_jobs=1, missing="item", max_size=2, time_limit=5)
    with pytest.raises(SettingsError, match="have no missing `UniformityOfCellSize`"):
        rf.cv_risk_score(f, df, sizes=[1, 2], folds=3, missing="item", time_limit=5)
    # missing values in every fold's training rows: every held-out row is scored by its own item
    df.loc[[6, 100, 200, 250, 299], "UniformityOfCellSize"] = np.nan
    cv = rf.cross_validate(f, df, folds=3, n_jobs=1, missing="item", max_size=2, time_limit=5)
    assert cv.to_frame()["n_test"].sum() == len(df)
