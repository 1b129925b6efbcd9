"""cv_risk_score(): the size chosen by cross-validation, its rules, its report and its plot."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from conftest import binary_frame, tree_only
from riskformula.errors import CalibrationWarning, DataError, OptimalityGapWarning, SettingsError
from riskformula.reports.size_cv import CURVE_COLUMNS, FOLD_SIZE_COLUMNS
from riskformula.tuning import _choose_size, _size_curve, stratified_folds

FORMULA = "y ~ x1 + x2 + x3 + C(grp)"
FIT = dict(coef_range=(-3, 3), time_limit=5)
SIZES = [0, 1, 2, 3]


@pytest.fixture(scope="module")
def data():
    return binary_frame(200, 5, levels=("a", "b"), intercept=-1.2, effect_c=0.0)


@pytest.fixture(scope="module")
def cv(data):
    return rf.cv_risk_score(FORMULA, data, sizes=SIZES, folds=3, seed=1, **FIT)


@pytest.fixture(scope="module")
def cv_repeats(data):
    """Two repeats from seed 0: its second repeat's folds are those of seed 1."""
    return rf.cv_risk_score(FORMULA, data, sizes=SIZES, folds=3, seed=0, repeats=2, rule="min", metric="loss",
                            **FIT)


# --------------------------------------------------------------------------------------
# the rules, on hand-made curves
# --------------------------------------------------------------------------------------


def test_rules_on_an_auc_curve():
    sizes = [1, 2, 3, 4, 5]
    mean = [0.70, 0.78, 0.80, 0.81, 0.805]
    se = [0.02, 0.02, 0.015, 0.02, 0.01]
    # best mean 0.81 at size 4; bound 0.81 - 0.02 = 0.79: size 3 (0.80) is the smallest within it
    assert _choose_size(sizes, mean, se, "auc") == (4, 3)
    # with a wider SE at the best size, size 2 (0.78 >= 0.81 - 0.035) qualifies
    assert _choose_size(sizes, mean, [0.02, 0.02, 0.015, 0.035, 0.01], "auc") == (4, 2)
    # only the best size's SE counts, and SE 0 makes the 1se size the best one
    assert _choose_size(sizes, mean, [0.5, 0.5, 0.5, 0.0, 0.5], "auc") == (4, 4)


def test_rules_on_a_loss_curve():
    sizes = [1, 2, 3, 4, 5]
    mean = [0.60, 0.55, 0.52, 0.51, 0.515]
    se = [0.01, 0.01, 0.01, 0.02, 0.01]
    # lower is better: best 0.51 at size 4, bound 0.53, size 3 (0.52) the smallest within
    assert _choose_size(sizes, mean, se, "loss") == (4, 3)
    # the same numbers read as AUC pick the other end
    assert _choose_size(sizes, mean, se, "auc") == (1, 1)


def test_rules_ties_order_bounds_and_missing_values():
    # tied best means: the smaller size is the best one
    assert _choose_size([1, 2, 3], [0.7, 0.8, 0.8], [0.0, 0.0, 0.0], "auc") == (2, 2)
    # a mean exactly on the bound (up to rounding: 0.81 - 0.02 != 0.79 in floating point) is within it
    assert _choose_size([1, 2], [0.79, 0.81], [0.01, 0.02], "auc") == (2, 1)
    assert _choose_size([1, 2], [0.53, 0.51], [0.01, 0.02], "loss") == (2, 1)
    # sizes need not come sorted
    assert _choose_size([3, 1, 2], [0.80, 0.70, 0.79], [0.02, 0.02, 0.02], "auc") == (3, 2)
    # a NaN mean is never chosen; a NaN SE counts as 0
    assert _choose_size([1, 2, 3], [np.nan, 0.7, 0.8], [0.1, 0.2, np.nan], "auc") == (3, 3)
    with pytest.raises(DataError, match="no size has a finite mean"):
        _choose_size([1, 2], [np.nan, np.nan], [0.1, 0.1], "auc")


def test_curve_of_a_hand_made_fold_table():
    folds = pd.DataFrame({"size": [1, 1, 1, 2, 2, 2], "auc": [0.6, 0.7, 0.8, 0.7, 0.8, 0.9],
                          "loss": [0.6, 0.5, 0.4, 0.5, 0.4, 0.3], "cal": [0.1] * 6,
                          "train_loss": [0.5, 0.5, 0.5, 0.4, 0.4, 0.4], "items": [1, 1, 1, 2, 1, 2],
                          "status": ["optimal", "time_limit", "optimal", "optimal", "optimal", "optimal"]})
    curve = _size_curve(folds, "auc")
    assert list(curve.columns) == CURVE_COLUMNS and list(curve["size"]) == [1, 2]
    assert curve["mean"].tolist() == pytest.approx([0.7, 0.8])
    assert curve["se"].tolist() == pytest.approx([0.1 / np.sqrt(3)] * 2)  # sd 0.1 (ddof 1) / sqrt(3)
    assert curve["certified"].tolist() == [2, 3] and curve["fits"].tolist() == [3, 3]
    assert curve["items"].tolist() == pytest.approx([1, 5 / 3])
    assert _size_curve(folds, "loss")["mean"].tolist() == pytest.approx([0.5, 0.4])


# --------------------------------------------------------------------------------------
# the fits
# --------------------------------------------------------------------------------------


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_fold_metrics_equal_a_manual_size_path(cv, data):
    f = cv.folds
    assert list(f.columns) == FOLD_SIZE_COLUMNS and len(f) == 3 * len(SIZES)
    fold = stratified_folds(data["y"], 3, seed=1)
    for k in range(3):
        train, test = data[fold != k], data[fold == k]
        path = rf.size_path(FORMULA, train, sizes=SIZES, progress=False, **FIT)
        for size, m in path.models.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", CalibrationWarning)
                ev = m.evaluate(test)
            row = f[(f["fold"] == k + 1) & (f["size"] == size)].iloc[0]
            assert row["auc"] == pytest.approx(ev.auc.auc)
            assert row["loss"] == pytest.approx(ev.log_loss)
            assert row["cal"] == pytest.approx(ev.cal)
            assert row["train_loss"] == pytest.approx(m.loss)
            assert row["items"] == m.size and row["n_test"] == len(test) and row["n_train"] == len(train)


def test_curve_and_choice_follow_the_folds(cv):
    t, f = cv.to_frame(), cv.folds
    assert list(t.columns) == CURVE_COLUMNS and list(t["size"]) == SIZES
    g = f.groupby("size")["auc"]
    assert t["mean"].tolist() == pytest.approx(g.mean().tolist())
    assert t["se"].tolist() == pytest.approx((g.std(ddof=1) / np.sqrt(3)).tolist())
    assert (t["fits"] == 3).all() and (t["certified"] == 3).all()
    assert (cv.size_min, cv.size_1se) == _choose_size(t["size"], t["mean"], t["se"], "auc")
    assert cv.rule == "1se" and cv.metric == "auc" and cv.size == cv.size_1se
    assert cv.size_1se <= cv.size_min


def test_refit_has_the_chosen_size(cv, data):
    m = cv.model
    assert isinstance(m, rf.RiskScore)
    assert m.settings.max_size == cv.size and m.settings.c0 == 1e-8 and m.size <= cv.size
    assert m.nobs == len(data) and m.status == "optimal"
    direct = rf.risk_score(FORMULA, data, max_size=cv.size, c0=1e-8, progress=False, **FIT)
    pd.testing.assert_series_equal(m.coef, direct.coef)


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_repeats_use_the_next_seeds_and_rule_min(cv, cv_repeats):
    f = cv_repeats.folds
    assert sorted(f["repeat"].unique()) == [1, 2] and len(f) == 2 * 3 * len(SIZES)
    second = f[f["repeat"] == 2].drop(columns=["repeat", "time"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(second, cv.folds.drop(columns=["repeat", "time"]))
    t = cv_repeats.table
    assert (t["fits"] == 6).all()
    assert t["mean"].tolist() == pytest.approx(f.groupby("size")["loss"].mean().tolist())
    assert cv_repeats.size == cv_repeats.size_min == _choose_size(t["size"], t["mean"], t["se"], "loss")[0]
    assert cv_repeats.model.settings.max_size == cv_repeats.size
    assert any("not independent" in n for n in cv_repeats.notes)


def test_unproven_fold_fits_are_noted(data):
    with tree_only(), pytest.warns(OptimalityGapWarning) as caught:  # the refit may warn too
        res = rf.cv_risk_score(FORMULA, data, sizes=[1, 2], folds=2, node_limit=1, **FIT)
    assert any("fold fits stopped before proving optimality" in str(w.message) for w in caught)
    assert (res.table["certified"] < res.table["fits"]).any()
    assert any("stopped before proving optimality" in n and "`node_limit`" in n for n in res.notes)
    if res.model.status != "optimal":
        assert "not proven optimal" in str(res) and any(n.startswith("The refit model stopped") for n in res.notes)


# --------------------------------------------------------------------------------------
# arguments
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, message", [
    (dict(rule="2se"), r"`rule` must be '1se'.*or 'min'"),
    (dict(rule=None), "`rule` must be"),
    (dict(metric="brier"), r"`metric` must be 'auc'.*or 'loss'"),
    (dict(folds=1), "`folds` must be at least 2"),
    (dict(folds=2.5), "`folds` must be a whole number"),
    (dict(repeats=0), "`repeats` must be at least 1"),
    (dict(seed=-1), "`seed` must be at least 0"),
    (dict(c0=-1.0), "`c0` must be non-negative"),
    (dict(n_jobs=0), "`n_jobs` must be a number of processes"),
    (dict(progress="yes"), "`progress` must be True, False or None"),
    (dict(sizes=[]), "`sizes` is empty"),
    (dict(sizes=3), "`sizes` must be an iterable"),
    (dict(sizes=[1.5]), "whole number"),
    (dict(sizes=[1, 2], min_size=2), "`min_size=2` is larger than the smallest size 1"),
    (dict(max_size=3), "`max_size` is set by this function"),
    (dict(initial={"x1": 1}), "`initial` is set by this function"),
    (dict(newdata=None), r"unknown fit argument `newdata`"),
    (dict(weights=np.ones(200)), "must name a column"),
    (dict(folds=100), r"`folds=100` is more than the .* rarer outcome class; .*Use folds <="),
])
def test_bad_arguments(data, kwargs, message):
    with pytest.raises(SettingsError, match=message):
        rf.cv_risk_score(FORMULA, data, **({"sizes": [1, 2]} | kwargs))


def test_bad_data(data):
    with pytest.raises(DataError, match="duplicated index"):
        rf.cv_risk_score(FORMULA, pd.concat([data, data.iloc[:5]]), sizes=[1])


# --------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------


def test_report_prints_and_converts(cv):
    text = str(cv)
    assert text.startswith("Cross-validated model size")
    assert "AUC ± SE" in text and "(chosen)" in text and "certified optimal" in text
    assert f"Chosen size  {cv.size}" in text and "Refit model (all rows" in text
    assert cv.why() in text
    assert cv.to_markdown().startswith("# Cross-validated model size") and "<table>" in cv.to_html()
    assert "\\begin{tabular}" in cv.to_latex()
    assert set(cv.tables) == {"curve", "folds", "points"}
    d = cv.to_dict()
    json.dumps(d)
    assert d["size"] == cv.size and d["rule"] == "1se" and d["metric"] == "auc" and d["k"] == 3
    assert len(d["curve"]) == len(SIZES) and len(d["folds"]) == 3 * len(SIZES)
    assert d["model"]["max_size"] == cv.size and d["model"]["status"] == "optimal"
    assert repr(cv).startswith("<SizeCV: ") and f"size {cv.size}" in repr(cv)
    pts = cv.points()
    assert pts.loc["intercept"].iloc[0] == cv.model.intercept


def test_report_explains_the_rule(cv_repeats):
    text = str(cv_repeats)
    assert "log loss ± SE" in text and "lower is better" in text and "3 × 2 repeats" in text
    assert cv_repeats.why().startswith(f"Size {cv_repeats.size} has the best mean held-out log loss")


def test_public_names():
    assert rf.cv_risk_score is rf.tuning.cv_risk_score and rf.SizeCV.__name__ == "SizeCV"
    assert "cv_risk_score" in rf.__all__ and "SizeCV" in rf.__all__ and "cv_risk_score" in rf.tuning.__all__
    assert "plot_size_cv" in rf.plots.__all__


def test_plot(cv, cv_repeats, tmp_path):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    from matplotlib.figure import Figure

    fig = cv.plot()
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert "AUC" in ax.get_ylabel() and "SE" in ax.get_ylabel() and "max_size" in ax.get_xlabel()
    assert "items" in ax.get_xlabel()
    # the legend sits beside the axes, where it covers no point or error bar
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    assert not ax.get_legend().get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
    xs = {line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() in ("--", ":")}
    assert xs == {cv.size_min, cv.size_1se}
    fig.savefig(tmp_path / "cv.png", dpi=60)
    assert (tmp_path / "cv.png").stat().st_size > 1000
    # on given axes, for the loss metric
    other = Figure()
    ax = other.add_subplot()
    assert rf.plots.plot_size_cv(cv_repeats, ax=ax) is other
    assert "log loss" in ax.get_ylabel()
    with pytest.raises(DataError, match="must be a SizeCV"):
        rf.plots.plot_size_cv(cv.table)


@pytest.mark.slow
def test_parallel_folds_match_serial(cv, data):
    par = rf.cv_risk_score(FORMULA, data, sizes=SIZES, folds=3, seed=1, n_jobs=2, **FIT)
    pd.testing.assert_frame_equal(par.folds.drop(columns="time"), cv.folds.drop(columns="time"))
    pd.testing.assert_frame_equal(par.table, cv.table)
    assert par.size == cv.size and par.notes == cv.notes
