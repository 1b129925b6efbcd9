"""What rf.risk_score says to an R or statsmodels user's arguments: subset= (R's, implemented),
na_action= and family= (answered with what riskformula takes), and a data set's name or a file's
path given as `data`."""

from pathlib import Path

import numpy as np
import pytest

import riskformula as rf
from riskformula.errors import DataError, SettingsError

FORMULA = 'diagnosis == "M" ~ radius_worst'


@pytest.fixture(scope="module")
def wdbc():
    return rf.load_dataset("wdbc")


def fit(data, **kw):
    return rf.risk_score(FORMULA, data, max_size=1, time_limit=10, **kw)


def test_subset_as_a_condition_and_as_a_mask(wdbc):
    keep = wdbc.texture_worst > 20
    by_text = fit(wdbc, subset="texture_worst > 20")
    by_mask = fit(wdbc, subset=keep)
    by_array = fit(wdbc, subset=keep.to_numpy())
    direct = fit(wdbc[keep])
    for m in (by_text, by_mask, by_array):
        assert m.nobs == int(keep.sum()) and m.rows_digest == direct.rows_digest
        assert m.objective == direct.objective
    assert (by_text.fittedvalues.index == wdbc.index[keep]).all()


def test_subset_series_is_matched_by_label(wdbc):
    keep = (wdbc.texture_worst > 20)[::-1]  # another order: matched by index label, as pandas does
    assert fit(wdbc, subset=keep).nobs == int(keep.sum())


@pytest.mark.parametrize("subset, message", [
    ("nope > 1", r"could not be evaluated on `data`.*nope"),
    ([1, 2], r"boolean mask with one value per row of `data` \(569\).*int64 with 2 values"),
    (np.ones((569, 2), bool), r"shape \(569, 2\)"),
])
def test_bad_subset(wdbc, subset, message):
    with pytest.raises(SettingsError, match=message):
        fit(wdbc, subset=subset)


def test_subset_selecting_nothing(wdbc):
    with pytest.raises(DataError, match="selects no rows"):
        fit(wdbc, subset="texture_worst < 0")


def test_na_action_points_to_missing(wdbc):
    with pytest.raises(SettingsError, match=r"no argument `na_action`: missing values are handled by `missing=`"):
        fit(wdbc, na_action="omit")


def test_subset_elsewhere_says_to_select_the_rows(wdbc):
    with pytest.raises(SettingsError, match=r"no argument `subset`: select the rows first"):
        rf.rashomon_set(FORMULA, wdbc, max_size=1, subset="texture_worst > 20")


def test_family_is_answered(wdbc):
    with pytest.raises(SettingsError, match="binomial family, logit link"):
        fit(wdbc, family="binomial")


def test_a_data_set_name_as_data():
    with pytest.raises(DataError, match=r"got the string 'wdbc'\. Load the bundled data set first: "
                                        r"`data=rf.load_dataset\('wdbc'\)`"):
        rf.risk_score(FORMULA, "wdbc")


@pytest.mark.parametrize("path, reader", [("data/train.csv", "pd.read_csv"), (Path("x.parquet"), "pd.read_parquet")])
def test_a_file_path_as_data(path, reader):
    with pytest.raises(DataError, match=rf"Read the file first: `data={reader}\("):
        rf.risk_score(FORMULA, path)


def test_a_path_given_to_predict_and_evaluate(wdbc):
    m = fit(wdbc)
    with pytest.raises(DataError, match=r"`newdata` must be a pandas DataFrame; got the string 'test\.csv'.*pd\.read_csv"):
        m.predict("test.csv")
    with pytest.raises(DataError, match=r"rf\.load_dataset\('wdbc'\)"):
        m.evaluate("wdbc")
