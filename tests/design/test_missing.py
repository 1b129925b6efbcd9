"""Missing values as items: ``missing="item"`` gives "x is missing" its own points, ``"as <value>"``
counts it as a value; every view agrees with ``predict`` on rows with missing values, the
certificate covers the missing items' points (brute force), documents round-trip, and new data
missing a variable the score cannot score is one clear error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from test_bruteforce import Instance, brute_force, check_fitted

import riskformula as rf
from riskformula.design import build_design
from riskformula.errors import DataError, FormulaError, SettingsError


def _frame(n=300, seed=5):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"lactate": rng.gamma(2.0, 1.0, n).round(1), "age": rng.integers(20, 90, n).astype(float),
                      "sex": rng.choice(["f", "m"], n), "ward": rng.choice(["icu", "med", "surg"], n)})
    lp = -1.5 + 0.5 * (d.lactate - 2) + 0.03 * (d.age - 55) + 0.4 * (d.ward == "icu")
    d["y"] = (rng.random(n) < expit(lp)).astype(int)
    # a lab is not ordered for patients who look well (missing not at random), a few ages unknown
    # and some wards not recorded
    d.loc[(d.y == 0) & (rng.random(n) < 0.35), "lactate"] = np.nan
    d.loc[rng.random(n) < 0.05, "lactate"] = np.nan
    d.loc[rng.random(n) < 0.08, "age"] = np.nan
    d.loc[rng.random(n) < 0.1, "ward"] = None
    return d


DATA = _frame()

CASES = {
    "threshold item": ("y ~ threshold(lactate, missing='item') + C(sex)", {}),
    "factor and linear items": ("y ~ lactate + age + C(ward)", {"missing": "item", "coef_range": (-3, 3)}),
    "items and a value": ("y ~ threshold(lactate, k=2) + threshold(age)",
                          {"missing": {"lactate": "item", "age": "as 50"}}),
    "as a level, drop the rest": ("y ~ C(ward) + threshold(lactate)",
                                  {"missing": {"ward": "as med", ".": "drop"}}),
}


@pytest.fixture(scope="module", params=list(CASES))
def fitted(request):
    formula, kw = CASES[request.param]
    return rf.risk_score(formula, DATA, max_size=3, time_limit=5, **kw)


def _by_hand(m, data) -> np.ndarray:
    """A clinician's arithmetic from the printed items: a missing value meets no condition on its
    variable but "x missing"; an "as" value is filled in first."""
    data = data.copy()
    for v, p in m.design.missing.items():
        if p["action"] == "as":
            data[v] = data[v].fillna(p["value"])
    total = np.zeros(len(data))
    for _, it in m.points.iterrows():
        x = data[it["variable"]]
        if it["kind"] == "missing":
            total += it["points"] * x.isna().to_numpy()
        elif it["kind"] == "interval":
            v = x.to_numpy(dtype=float)
            inside = ~np.isnan(v)
            if it["lower"] is not None and not pd.isna(it["lower"]):
                inside &= v > it["lower"]
            if it["upper"] is not None and not pd.isna(it["upper"]):
                inside &= v <= it["upper"]
            total += it["points"] * inside
        elif it["kind"] == "level":
            total += it["points"] * (x == it["level"]).to_numpy()
        else:
            total += it["points"] * x.fillna(0).to_numpy(dtype=float)
    return total


def test_views_agree_with_predict_on_rows_with_missing_values(fitted):
    m = fitted
    rows = DATA if m.settings.missing != "drop" and "." not in m.settings.missing else DATA.dropna(subset=["lactate"])
    p = m.predict(rows).to_numpy()
    assert np.isfinite(p).all()
    z = (m.intercept + m.encode(rows) @ m.coef.to_numpy(dtype=float)) / m.scale
    np.testing.assert_allclose(expit(z), p, rtol=0, atol=1e-12)
    dp = m.design_points
    z = dp.iloc[0] + m.design.transform(rows) @ dp.iloc[1:].to_numpy(dtype=float)
    np.testing.assert_allclose(expit(z / m.scale), p, rtol=0, atol=1e-12)
    np.testing.assert_allclose(_by_hand(m, rows), m.score(rows).to_numpy(), atol=1e-9)
    scores = m.attainable_scores()
    if scores is not None:
        assert set(np.round(m.score(rows).to_numpy(), 9)) <= set(np.round(scores, 9))
    m2 = rf.from_json(m.to_json())
    assert m2.scorecard.items == m.scorecard.items and m2.design.missing == m.design.missing
    np.testing.assert_array_equal(m2.predict(rows).to_numpy(), p)
    assert str(m2).split("Certificate")[0] == str(m).split("Certificate")[0]


def test_threshold_item_is_a_card_row_and_reads_as_the_clinician_would():
    m = rf.risk_score("y ~ threshold(lactate, missing='item')", DATA, max_size=3, time_limit=5)
    card = m.score_card()
    assert "lactate missing" in list(card["term"]), card
    it = card.set_index("term").loc["lactate missing"]
    assert it["kind"] == "missing"
    # a row missing lactate scores the missing item's points, whatever else the card says of lactate
    miss = DATA[DATA.lactate.isna()]
    assert set(m.score(miss).round(9)) == {float(it["points"])}
    assert "lactate missing" in str(m)


def test_certificate_covers_the_missing_items_points():
    """Brute force over every point vector, the missing items' points included (the design built
    by hand: the value with missing as 0, and 1[x is missing])."""
    rng = np.random.default_rng(11)
    for seed in range(4):
        n = 120
        x0 = rng.integers(0, 3, n).astype(float)
        x1 = rng.integers(0, 2, n).astype(float)
        y = (rng.random(n) < expit(-0.5 + 0.7 * x0 - 0.8 * x1)).astype(int)
        miss = rng.random(n) < 0.25 + 0.2 * y  # informative
        x0m = np.where(miss, np.nan, x0)
        df = pd.DataFrame({"y": y, "x0": x0m, "x1": x1})
        X = np.column_stack([np.where(miss, 0.0, x0), x1, miss.astype(float)])
        max_size = 1 + seed % 3
        inst = Instance(X, y, None, 1.0, (-2,) * 3, (2,) * 3, 1e-6 if seed % 2 else 0.01, max_size)
        true_min, _, _ = brute_force(inst)
        m = rf.risk_score("y ~ x0 + x1", df, missing="item", coef_range=(-2, 2), c0=inst.c0, max_size=max_size,
                          time_limit=30)
        assert list(m.design.columns) == ["x0", "x1", "missing(x0)"]
        check_fitted(m, inst, true_min)


def test_threshold_cuts_are_found_on_the_measured_values_only():
    d = build_design("y ~ threshold(lactate, missing='item')", DATA)
    measured = DATA.lactate.dropna()
    t = d.spec.thresholds[0]
    assert min(t.cuts) >= measured.min() and max(t.cuts) < measured.max()
    miss = DATA.lactate.isna().to_numpy()
    cols = list(t.columns)
    assert (d.X[miss][:, cols] == 0).all() and (d.X[:, -1] == miss).all()
    np.testing.assert_array_equal(d.spec.transform(DATA), d.X)


def test_a_size_counts_the_missing_item_when_it_has_points_of_its_own():
    """Size counts the design columns with points: ``missing(x)`` counts once when the search scores
    a missing value apart from the variable's baseline (above every cut); the card prints the points
    a missing row gets either way."""
    m = rf.risk_score("y ~ threshold(lactate, missing='item')", DATA, max_size=1, time_limit=5)
    assert m.size <= 1 and np.count_nonzero(m.design_points.iloc[1:].to_numpy()) <= 1
    miss = DATA[DATA.lactate.isna()]
    card = m.score_card().set_index("term")
    expected = card.loc["lactate missing", "points"] if "lactate missing" in card.index else 0
    assert set(m.score(miss).round(9)) == {float(expected)}


def test_new_data_missing_what_the_score_cannot_score_is_one_clear_error():
    m = rf.risk_score("y ~ threshold(lactate, missing='item') + C(sex)", DATA, max_size=2, time_limit=5)
    new = DATA.head(5).copy()
    new.loc[new.index[0], "sex"] = None
    with pytest.raises(DataError, match=r"sex.*missing=\"raise\".*refit with missing=\"item\""):
        m.design.transform(new)  # every variable of the formula (predict reads the card's only)
    complete = DATA.dropna(subset=["lactate"]).copy()
    m2 = rf.risk_score("y ~ threshold(lactate)", complete, missing="item", max_size=1, time_limit=5)
    assert m2.design.missing == {"lactate": {"action": "item", "seen": False}}
    with pytest.raises(DataError, match="no missing values in training"):
        m2.predict(DATA)
    m3 = rf.risk_score("y ~ threshold(lactate)", DATA, missing="drop", max_size=1, time_limit=5)
    with pytest.raises(DataError, match=r"fitted with missing=\"drop\""):
        m3.predict(DATA)


def test_as_a_value_scores_missing_rows_as_that_value():
    m = rf.risk_score("y ~ threshold(lactate)", DATA, missing={"lactate": "as 1.0"}, max_size=2, time_limit=5)
    filled = DATA.assign(lactate=DATA.lactate.fillna(1.0))
    np.testing.assert_array_equal(m.predict(DATA).to_numpy(), m.predict(filled).to_numpy())
    assert m.nobs == len(DATA)


def test_as_a_value_for_every_variable():
    # as the docstring says: one choice (here "as 1.0") for every variable, checked against each
    m = rf.risk_score("y ~ threshold(lactate)", DATA, missing="as 1.0", max_size=2, time_limit=5)
    ref = rf.risk_score("y ~ threshold(lactate)", DATA, missing={"lactate": "as 1.0"}, max_size=2, time_limit=5)
    assert m.design.missing == ref.design.missing == {"lactate": {"action": "as", "value": 1.0}}
    np.testing.assert_array_equal(m.predict(DATA).to_numpy(), ref.predict(DATA).to_numpy())


def test_bad_choices_are_one_message():
    with pytest.raises(SettingsError, match="\"raise\", \"drop\", \"item\" or \"as <value>\""):
        rf.risk_score("y ~ lactate", DATA, missing="impute")
    with pytest.raises(SettingsError, match="not a variable of the formula"):
        rf.risk_score("y ~ lactate", DATA, missing={"lactat": "item"})
    with pytest.raises(SettingsError, match="is numeric"):
        rf.risk_score("y ~ lactate", DATA, missing={"lactate": "as normal"})
    with pytest.raises(SettingsError, match="not one of its levels"):
        rf.risk_score("y ~ C(ward)", DATA, missing={"ward": "as ward9"})
    with pytest.raises(SettingsError, match="for `ward`.*not one of its levels"):  # one value for every variable
        rf.risk_score("y ~ lactate + C(ward)", DATA, missing="as 1")
    with pytest.raises((SettingsError, FormulaError), match="missing="):
        rf.risk_score("y ~ threshold(lactate, missing='sometimes')", DATA)
    with pytest.raises(DataError, match=r"missing=\"item\""):
        rf.risk_score("y ~ lactate + age", DATA)


def test_outcome_is_never_an_item():
    d = DATA.copy()
    d.loc[d.index[:3], "y"] = np.nan
    with pytest.raises(DataError, match="outcome"):
        rf.risk_score("y ~ threshold(lactate)", d, missing="item")
    m = rf.risk_score("y ~ threshold(lactate)", d, missing={"lactate": "item", ".": "drop"}, max_size=1, time_limit=5)
    assert m.nobs == len(d) - 3


def test_callers_data_are_not_modified():
    before = DATA.copy()
    rf.risk_score("y ~ threshold(age) + C(ward)", DATA, missing={"age": "as 50", "ward": "item"}, max_size=2,
                  time_limit=5)
    pd.testing.assert_frame_equal(DATA, before)


def test_command_line_missing_option(tmp_path, capsys):
    from riskformula.cli import _missing, main
    assert _missing(None) == "raise" and _missing(["item"]) == "item"
    assert _missing(["drop", "lactate=as 1.0"]) == {".": "drop", "lactate": "as 1.0"}
    data, model = tmp_path / "d.csv", tmp_path / "m.json"
    DATA.to_csv(data, index=False)
    argv = ["fit", "y ~ threshold(lactate) + C(ward)", "--data", str(data), "--max-size", "2", "--time-limit", "3",
            "--no-progress", "--json", str(model)]
    assert main([*argv, "--missing", "item"]) == 0
    m = rf.from_json(model.read_text())
    assert m.settings.missing == "item" and set(m.design.missing) == {"lactate", "ward"}
    out = tmp_path / "scored.csv"
    assert main(["predict", str(model), "--data", str(data), "--out", str(out)]) == 0
    scored = pd.read_csv(out, float_precision="round_trip")
    np.testing.assert_allclose(scored["risk"], m.predict(DATA), rtol=1e-15)
    capsys.readouterr()
    assert main([*argv, "--missing", "ward=item", "--missing", "lactate=as 1.0"]) == 0
    assert rf.from_json(model.read_text()).design.missing == {"ward": {"action": "item"},
                                                              "lactate": {"action": "as", "value": 1.0}}
    capsys.readouterr()
    assert main([*argv, "--missing", "sometimes"]) == 2  # a usage error
    err = capsys.readouterr().err
    assert "\"item\"" in err and err.count("\n") == 1


def test_scikit_learn_estimator_takes_nan_with_missing_item():
    pytest.importorskip("sklearn")
    X, y = DATA[["lactate", "age"]].to_numpy(), DATA.y.to_numpy()
    c = rf.RiskScoreClassifier(max_size=2, missing="item", control=rf.SearchControl(time_limit=5, progress=False))
    p = c.fit(X, y).predict_proba(X)[:, 1]
    frame = pd.DataFrame(X, columns=["x0", "x1"])  # the names the estimator gives array columns
    np.testing.assert_array_equal(p, c.model_.predict(frame).to_numpy())
    with pytest.raises(ValueError, match="NaN"):
        rf.RiskScoreClassifier(max_size=2, control=rf.SearchControl(time_limit=5, progress=False)).fit(X, y)


@pytest.mark.parametrize("formula, kw", [
    ("y ~ threshold(lactate, missing='item') + C(ward)", {"missing": {"ward": "item"}}),
    ("y ~ threshold(age) + C(ward) + lactate", {"missing": {"age": "as 50", "ward": "drop", "lactate": "item"}}),
    ("y ~ threshold(., missing='item') - sex - ward", {}),  # threshold(.) written out on the dask frame
    ("y ~ threshold(., missing='drop') - sex - ward", {}),
])
def test_a_dask_fit_is_the_pandas_fit_with_missing_values(formula, kw):
    dd = pytest.importorskip("dask.dataframe")
    opts = dict(max_size=2, coef_range=(-3, 3), time_limit=20, **kw)
    a = rf.risk_score(formula, DATA, **opts)
    b = rf.risk_score(formula, dd.from_pandas(DATA, npartitions=3), **opts)
    assert a.design.columns == b.design.columns and a.design.missing == b.design.missing
    assert a.nobs == b.nobs and a.objective == pytest.approx(b.objective, rel=1e-9)
    rows = DATA if "drop" not in str(formula) + str(kw) else DATA.dropna()  # a drop fit cannot score missing values
    np.testing.assert_allclose(a.predict(rows), b.predict(rows), rtol=0, atol=1e-12)


def _mnar_wdbc():
    df = rf.load_dataset("wdbc")[["diagnosis", "radius_worst", "texture_worst"]].copy()
    x = df["radius_worst"].to_numpy()
    rng = np.random.default_rng(1)
    df.loc[rng.uniform(size=len(df)) < np.where(x < np.median(x), 0.4, 0.05), "radius_worst"] = np.nan
    return df


@pytest.mark.slow  # a fit to certificate (~8 s)
def test_size_is_the_card_rows_and_predict_is_the_fit_when_missing_cancels_a_cut():
    """The reported case: the fit gives missing(x) the points that cancel x's cut for a missing row.
    With a range on both sides of 0 the cut is shown as ``x ≤ c``, so the card has exactly the fit's
    items and a missing row meets only "x missing"; with a one-signed range the cut must be shown as
    ``x > c``, and predict (and the exports) still read the missing column to keep the missing row
    out of that interval."""
    from test_export_sql import run_sqlite

    from riskformula.export import to_sql
    from riskformula.reports import metrics
    df = _mnar_wdbc()
    formula = 'diagnosis == "M" ~ threshold(radius_worst) + threshold(texture_worst)'
    # the fits need not be certified: every view must agree with predict whatever the search found
    m = rf.risk_score(formula, df, missing="item", max_size=2, time_limit=6)
    assert m.size == len(m.scorecard.items) == np.count_nonzero(m.design_points.iloc[1:].to_numpy())
    assert metrics.log_loss(m.observed(df), m.predict(df)) == pytest.approx(m.loss, rel=1e-12)
    one_signed = rf.risk_score(formula, df, missing="item", max_size=2, coef_range=(0, 5), time_limit=6)
    assert metrics.log_loss(one_signed.observed(df), one_signed.predict(df)) == pytest.approx(one_signed.loss,
                                                                                             rel=1e-12)
    np.testing.assert_allclose(_by_hand(one_signed, df), one_signed.score(df).to_numpy(), atol=1e-9)
    rows = df.assign(id=np.arange(len(df)))
    out = run_sqlite(to_sql(one_signed, "t", dialect="sqlite", keep=["id"]), rows)
    np.testing.assert_allclose(out["risk"].astype(float), one_signed.predict(rows).to_numpy(), rtol=0, atol=1e-9)
