"""What rf.risk_score says to an R or statsmodels user's arguments: subset= (R's, implemented),
na_action= and family= (answered with what riskformula takes), and a data set's name or a file's
path given as `data`."""

from pathlib import Path

import numpy as np
import pandas as pd
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
    ("nope > 1", r"names `nope`, which is not a column of `data`"),
    ("texture_worst > '1' + 2", r"could not be evaluated on `data`"),
    ([1, 2], r"boolean mask with one value per row of `data` \(569\).*int64 with 2 values"),
    (np.ones((569, 2), bool), r"shape \(569, 2\)"),
])
def test_bad_subset(wdbc, subset, message):
    with pytest.raises(SettingsError, match=message):
        fit(wdbc, subset=subset)


@pytest.mark.parametrize("condition, what", [
    ("@pd.core.frame.com.builtins.__import__('os').system('touch {marker}') == 0 or texture_worst > 1", "uses `@`"),
    ("texture_worst.__class__.__init__.__globals__ == 1", "uses an attribute"),
    ("__import__('os').system('touch {marker}') == 0", "uses a function call"),
    ("texture_worst[0] > 1", "uses a subscript"),
    ("(lambda: 1)() == 1", "uses a function call"),
])
def test_a_subset_condition_runs_no_code(wdbc, tmp_path, condition, what):
    # the condition is data: only columns, literals and operators reach pandas, with no variables
    marker = tmp_path / "ran"
    before = wdbc.copy()
    with pytest.raises(SettingsError, match=what):
        fit(wdbc, subset=condition.format(marker=marker))
    assert not marker.exists()
    pd.testing.assert_frame_equal(wdbc, before)


def test_a_subset_condition_reads_backticks_strings_and_lists(wdbc):
    data = wdbc.rename(columns={"texture_worst": "texture worst"})
    data["side"] = np.where(data["radius_mean"] > 14, "left @ 1", "right")
    keep = (data["texture worst"] > 20) & data["side"].isin(["left @ 1"]) & ~(data["radius_mean"] > 20)
    m = rf.risk_score("diagnosis == 'M' ~ threshold(radius_mean)", data, max_size=1, time_limit=10,
                      subset="`texture worst` > 20 and side in ['left @ 1'] & ~(radius_mean > 20)")
    assert m.nobs == int(keep.sum())


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


@pytest.mark.parametrize("cox", [False, True])
def test_weights_for_every_row_go_with_the_rows_a_subset_selects(cox):
    # as R's glm(weights=, subset=): an array in row order, a Series by label, a column by name
    rng = np.random.default_rng(0)
    n = 200
    d = pd.DataFrame({"x": rng.integers(0, 2, n), "age": rng.integers(20, 80, n)},
                     index=rng.permutation(1000)[:n])
    d["y"] = (rng.random(n) < 0.2 + 0.4 * d.x).astype(int)
    d["t"] = rng.exponential(5, n).round(1) + 0.1
    d["w"] = rng.integers(1, 4, n).astype(float)
    formula = "Surv(t, y) ~ x" if cox else "y ~ x"
    S = dict(max_size=1, time_limit=10)
    ref = rf.risk_score(formula, d[d.age > 40], weights="w", **S)
    shuffled = d.w.sample(frac=1, random_state=1)  # a Series in another order: matched by label
    for weights, subset in [("w", "age > 40"), (d.w.to_numpy(), "age > 40"), (shuffled, d.age > 40),
                            (list(d.w), (d.age > 40).to_numpy())]:
        m = rf.risk_score(formula, d, weights=weights, subset=subset, **S)
        assert m.nobs == ref.nobs and m.llf == pytest.approx(ref.llf, rel=1e-12)
    with pytest.raises(SettingsError, match=r"one value per row of `data` \(200, before `subset` selects"):
        rf.risk_score(formula, d, weights=d.w.to_numpy()[:10], subset="age > 40", **S)


def test_a_subset_condition_that_is_not_true_or_false(wdbc):
    with pytest.raises(SettingsError, match="does not give True or False for each row"):
        rf.risk_score("diagnosis ~ radius_mean", wdbc, subset="radius_mean + 1", max_size=1, time_limit=5)
