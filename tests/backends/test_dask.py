"""Dask DataFrames in: the same design, loss, model, certificate and reports as the pandas rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")

import riskformula as rf  # noqa: E402
from riskformula.backends import is_dask_series  # noqa: E402
from riskformula.dask.design import training_patterns  # noqa: E402
from riskformula.design import build_design  # noqa: E402
from riskformula.errors import DataError, SettingsError  # noqa: E402
from riskformula.problem import LogisticLoss  # noqa: E402


def frame(n: int = 1500, seed: int = 0) -> pd.DataFrame:
    """A binary, a three-level factor, an integer-valued and a rounded continuous predictor (and
    a categorical column with an unused category, a continuous one, weights, a text outcome)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"b": rng.integers(0, 2, n), "g": rng.choice(["lo", "mid", "hi"], n),
                       "x1": rng.integers(20, 80, n).astype(float), "x2": rng.normal(size=n).round(1),
                       "x3": rng.normal(size=n), "w": rng.integers(1, 4, n).astype(float)})
    lp = -2 + 1.2 * df.b + 0.8 * (df.g == "hi") + 1.5 * (df.x1 > 55) + 0.8 * (df.x2 > 0.5)
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    df["answer"] = np.where(df.y == 1, "yes", "no")
    df["grade"] = pd.Categorical(rng.choice(["B", "A", "C"], n), categories=["C", "B", "A", "unused"])
    return df


@pytest.fixture(scope="module")
def df():
    return frame()


@pytest.fixture(scope="module")
def ddf(df):
    return dd.from_pandas(df, npartitions=4)


def _pandas_loss(formula, data, **kw):
    weights = kw.pop("weights", None)
    design = build_design(formula, data, **kw)
    w = None if weights is None else data.loc[design.index, weights].to_numpy()
    return design, LogisticLoss(design.X, design.y, w)


@pytest.mark.parametrize("formula, kw", [
    ("y ~ b + g + threshold(x1) + threshold(x2, grid=6)", {}),
    ("y ~ threshold(x1, k=2) + threshold(x3, grid=7) + C(g)", {}),
    ("y ~ b + g + threshold(x1)", {"prune_cuts": False}),
    ('answer == "yes" ~ threshold(., grid=5) - y - w - x3', {}),
    ("y ~ grade + b:g + threshold(x2)", {}),
    ("answer ~ b + g + x2 + threshold(np.log(x1))", {"event": "yes"}),
])
def test_design_and_loss_equal_the_pandas_ones(df, ddf, formula, kw):
    design, loss = _pandas_loss(formula, df, **kw)
    patterns = training_patterns(formula, ddf, **kw)
    spec, dspec = design.spec, patterns.design.spec
    for name in ("formula", "columns", "labels", "column_terms", "variables", "outcome", "event", "thresholds"):
        assert getattr(dspec, name) == getattr(spec, name), name
    assert set(dspec.levels) == set(spec.levels)
    assert dspec.model_spec.transform_state == spec.model_spec.transform_state
    assert (patterns.nobs, patterns.events, patterns.dropped) == (design.nobs, int(design.y.sum()), 0)
    got = LogisticLoss(patterns.design.X, patterns.design.y, patterns.design.weights)
    np.testing.assert_array_equal(got.Z, loss.Z)
    np.testing.assert_array_equal(got.w_pos, loss.w_pos)
    np.testing.assert_array_equal(got.w_neg, loss.w_neg)
    assert got.total_weight == loss.total_weight


def test_weights_and_dropped_rows_equal_the_pandas_ones(df):
    data = df.copy()
    data.loc[data.index[::37], "x2"] = np.nan
    data.loc[data.index[5::53], "g"] = None
    ddf = dd.from_pandas(data, npartitions=3)
    formula = "y ~ b + g + threshold(x2, grid=5)"
    design, loss = _pandas_loss(formula, data, missing="drop", weights="w")
    patterns = training_patterns(formula, ddf, missing="drop", weights="w")
    assert patterns.dropped == design.dropped > 0
    assert patterns.nobs == design.nobs
    assert patterns.design.spec.thresholds == design.spec.thresholds
    got = LogisticLoss(patterns.design.X, patterns.design.y, patterns.design.weights)
    np.testing.assert_array_equal(got.Z, loss.Z)
    np.testing.assert_allclose(got.w_pos, loss.w_pos, rtol=1e-13)
    np.testing.assert_allclose(got.w_neg, loss.w_neg, rtol=1e-13)


def _assert_same_model(a, b):
    pd.testing.assert_series_equal(a.coef, b.coef)
    assert a.intercept == b.intercept
    assert (a.objective, a.lower_bound, a.gap, a.status) == (b.objective, b.lower_bound, b.gap, b.status)
    assert a.status == "optimal"
    assert (a.nobs, a.events, a.rows_dropped, a.size) == (b.nobs, b.events, b.rows_dropped, b.size)
    pd.testing.assert_frame_equal(a.thresholds, b.thresholds)
    pd.testing.assert_frame_equal(a.score_card(), b.score_card())
    pd.testing.assert_frame_equal(a.risk_table(), b.risk_table())
    assert a.settings == b.settings
    ta, tb = a.training_metrics, b.training_metrics
    assert ta == pytest.approx(tb, rel=1e-12)
    ea, eb = a.training_evaluation, b.training_evaluation
    pd.testing.assert_frame_equal(ea.reliability, eb.reliability)
    assert ea.hosmer_lemeshow.statistic == pytest.approx(eb.hosmer_lemeshow.statistic, rel=1e-9)
    assert ea.calibration.slope == pytest.approx(eb.calibration.slope, rel=1e-7)


@pytest.fixture(scope="module")
def fitted(df, ddf):
    formula = "y ~ b + g + threshold(x1, k=1) + threshold(x2, grid=6, k=1)"
    opts = dict(max_size=2, coef_range=(0, 3), time_limit=60)
    return rf.risk_score(formula, df, **opts), rf.risk_score(formula, ddf, **opts)


def test_dask_fit_is_the_pandas_fit(fitted):
    a, b = fitted
    _assert_same_model(a, b)
    assert not b.thresholds.empty


def test_weighted_fit_with_dropped_rows_is_the_pandas_fit(df):
    data = df.copy()
    data.loc[data.index[::41], "b"] = np.nan
    formula = "y ~ b + g + x2"
    opts = dict(max_size=2, weights="w", missing="drop", time_limit=60)
    a = rf.risk_score(formula, data, **opts)
    b = rf.risk_score(formula, dd.from_pandas(data, npartitions=5), **opts)
    _assert_same_model(a, b)
    assert b.settings.weighted and b.rows_dropped == 37



@pytest.mark.filterwarnings("ignore::riskformula.errors.CalibrationWarning")
def test_training_evaluation_from_score_pairs_is_the_one_from_patterns(fitted, ddf):
    """The training evaluation is computed on the distinct (score, outcome) pairs of the patterns
    (so that it fits in the time limit on many patterns): the report of every pattern."""
    from riskformula.reports.evaluation import evaluate_arrays

    _, b = fitted
    patterns = training_patterns("y ~ b + g + threshold(x1, k=1) + threshold(x2, grid=6, k=1)", ddf)
    X, y, counts = patterns.design.X, patterns.design.y, patterns.counts
    assert len(y) > 100  # many patterns, few (score, outcome) pairs
    s = b.scorecard.matrix_of_design(X) @ b.scorecard.points
    want = evaluate_arrays(b, y, b.risk_of(s), s, weights=counts)
    got = b.training_evaluation  # built with the model (RiskScore.from_fit with the patterns' counts)
    assert got.n == want.n and got.events == want.events
    pd.testing.assert_frame_equal(got.reliability, want.reliability)
    assert got.to_dict() == _approx(want.to_dict())

def test_predict_score_observed_are_lazy_dask_series(fitted, df, ddf):
    a, b = fitted
    for method in ("predict", "score", "observed"):
        lazy = getattr(b, method)(ddf)
        assert is_dask_series(lazy)
        pd.testing.assert_series_equal(lazy.compute(), getattr(a, method)(df))


@pytest.mark.filterwarnings("ignore::riskformula.errors.CalibrationWarning")
def test_evaluate_dask_equals_evaluate_pandas(fitted, df, ddf):
    a, b = fitted
    for kw in ({}, {"by": "g", "thresholds": [0.1, 0.2, 0.5]}):
        want, got = rf.evaluate(a, df, **kw), b.evaluate(ddf, **kw)
        assert got.n == want.n and got.events == want.events
        pd.testing.assert_frame_equal(got.reliability, want.reliability)
        pd.testing.assert_frame_equal(got.net_benefit, want.net_benefit, rtol=1e-12)
        for k, v in want.to_dict().items():
            if k == "by_group":
                assert set(got.to_dict()[k]) == set(v)
                for level, row in v.items():
                    assert got.to_dict()[k][level] == _approx(row)
            else:
                assert got.to_dict()[k] == _approx(v), k


def test_a_saved_dask_model_scores_like_the_pandas_model(fitted, df):
    a, b = fitted
    loaded = rf.from_json(b.to_json())
    pd.testing.assert_series_equal(loaded.predict(df), a.predict(df))


def test_functions_that_need_pandas_say_so(ddf):
    with pytest.raises(DataError, match="is a dask DataFrame"):
        rf.cross_validate("y ~ b", ddf, folds=2)


def test_parquet_files_in(tmp_path, df):
    path = tmp_path / "rows"
    path.mkdir()
    for i, start in enumerate(range(0, len(df), 500)):
        df.iloc[start:start + 500].to_parquet(path / f"part{i}.parquet")
    ddf = dd.read_parquet(path)
    assert any(isinstance(t, pd.StringDtype) for t in ddf.dtypes)  # dask reads text as `string`
    design, loss = _pandas_loss("y ~ b + g + threshold(x2, grid=6)", df)
    patterns = training_patterns("y ~ b + g + threshold(x2, grid=6)", ddf)
    assert patterns.design.spec.columns == design.spec.columns
    np.testing.assert_array_equal(LogisticLoss(patterns.design.X, patterns.design.y, patterns.design.weights).Z,
                                  loss.Z)


# --------------------------------------------------------------------------------------
# the same errors as with pandas
# --------------------------------------------------------------------------------------


def _same_error(kind, call, data, **kw):
    with pytest.raises(kind) as want:
        call(data)
    with pytest.raises(kind) as got:
        call(dd.from_pandas(data, npartitions=3), **kw)
    assert str(got.value) == str(want.value)
    return str(got.value)


def test_missing_values_are_refused_with_the_pandas_message(df):
    data = df.copy()
    data.loc[data.index[::50], "x1"] = np.nan
    msg = _same_error(DataError, lambda d: rf.risk_score("y ~ b + threshold(x1)", d), data)
    assert "'x1': 30" in msg


@pytest.mark.parametrize("outcome, formula, event", [
    (lambda d: np.zeros(len(d), int), "y ~ b", None),                       # one level
    (lambda d: d.index % 3, "y ~ b", None),                                  # three levels
    (lambda d: np.where(d.b == 1, "p", "q"), "y ~ x1", None),               # which is the event?
    (lambda d: d.y, "y ~ b", 7),                                             # not a level
])
def test_bad_outcomes_get_the_pandas_message(df, outcome, formula, event):
    data = df[["b", "x1"]].assign(y=outcome(df))
    _same_error(DataError, lambda d: rf.risk_score(formula, d, event=event), data)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_non_finite_design_values_get_the_pandas_message(df):
    data = df.assign(x1=df.x1 - 20)
    msg = _same_error(DataError, lambda d: rf.risk_score("y ~ b + np.log(x1)", d), data)
    assert "infinite or undefined" in msg


def test_bad_weights_get_the_pandas_message(df):
    data = df.assign(w=np.where(df.index == 7, -1.0, df.w))
    _same_error(DataError, lambda d: rf.risk_score("y ~ b", d, weights="w"), data)
    with pytest.raises(SettingsError, match="name of a column"):
        rf.risk_score("y ~ b", dd.from_pandas(df, npartitions=2), weights=df.w.to_numpy())


@pytest.fixture(scope="module")
def on_g_and_x2(df, ddf):
    """A score with points on the categorical g and on x2 (the `fitted` score has none there)."""
    formula = "y ~ g + threshold(x2, grid=6, k=1)"
    opts = dict(max_size=2, min_size=2, coef_range=(-3, 3), time_limit=60)
    a, b = rf.risk_score(formula, df, **opts), rf.risk_score(formula, ddf, **opts)
    assert a.scored_terms == b.scored_terms == ["g", "threshold(x2, grid=6, k=1)"]
    return a, b


def test_variables_without_points_are_not_read(fitted, df):
    a, b = fitted
    assert a.scored_terms == ["b", "threshold(x1, k=1)"]
    new = df.head(60).copy()
    new.loc[new.index[:4], "g"] = "unknown"
    new.loc[new.index[::10], "x2"] = np.nan
    want = a.predict(df.head(60))
    pd.testing.assert_series_equal(a.predict(new), want)
    pd.testing.assert_series_equal(b.predict(dd.from_pandas(new.drop(columns=["g", "x2"]), npartitions=2)).compute(),
                                   want)


def test_unseen_categories_and_missing_values_when_scoring(on_g_and_x2, df):
    a, b = on_g_and_x2
    new = df.head(60).copy()
    new.loc[new.index[:4], "g"] = "unknown"
    with pytest.raises(DataError) as want:
        a.predict(new)
    with pytest.raises(DataError) as got:
        b.predict(dd.from_pandas(new, npartitions=1)).compute()
    assert str(got.value) == str(want.value)
    _same_error(DataError, lambda d: rf.evaluate(b, d), new)
    gaps = df.head(90).copy()
    gaps.loc[gaps.index[::10], "x2"] = np.nan
    _same_error(DataError, lambda d: rf.evaluate(b, d), gaps)       # totals over partitions
    with pytest.raises(DataError, match="lacks the column"):
        b.predict(dd.from_pandas(df.drop(columns="x2"), npartitions=2))  # before anything is computed


def test_unseen_categories_are_refused_in_every_thread(on_g_and_x2, df):
    """Encoding makes formulaic's unseen-category warning an error with process-wide warning
    filters; concurrent partitions must not undo each other's filter (which would score an unseen
    level as the reference level)."""
    from concurrent.futures import ThreadPoolExecutor

    import dask

    a, b = on_g_and_x2
    new = pd.concat([df.head(40)] * 24, ignore_index=True)
    new.loc[new.index % 40 == 0, "g"] = "unknown"
    ddf = dd.from_pandas(new, npartitions=24)
    # the pool is joined on exit: tasks still running after the first error finish inside the test
    with ThreadPoolExecutor(8) as pool, dask.config.set(scheduler="threads", pool=pool):
        for _ in range(3):
            with pytest.raises(DataError, match="never saw in training"):
                b.predict(ddf).compute()


# --------------------------------------------------------------------------------------
# a dask.distributed cluster; dask stays optional
# --------------------------------------------------------------------------------------


def test_local_cluster_fit_equals_pandas(df):
    distributed = pytest.importorskip("distributed")
    formula, opts = "y ~ b + g + threshold(x2, grid=6)", dict(max_size=2, coef_range=(0, 3), time_limit=60)
    want = rf.risk_score(formula, df, **opts)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        ddf = dd.from_pandas(df, npartitions=4)
        got = rf.risk_score(formula, ddf, **opts)
        risk = got.predict(ddf).compute()
    _assert_same_model(want, got)
    pd.testing.assert_series_equal(risk, want.predict(df))


def _approx(want):
    """pytest.approx for numbers (NaN equal to NaN), recursing into dicts and lists; other values compare equal."""
    if isinstance(want, dict):
        return {k: _approx(v) for k, v in want.items()}
    if isinstance(want, (list, tuple)):
        return type(want)(_approx(v) for v in want)
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return pytest.approx(want, rel=1e-9, nan_ok=True)
    return want
