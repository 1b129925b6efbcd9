"""What the reports show: plots that take result objects and stay quiet about statistics they do not
show, one Hosmer-Lemeshow display, the risk formula of a zero intercept, compare labels that tell
scales apart."""

from types import SimpleNamespace


import warnings


import numpy as np

import pandas as pd

import pytest

import riskformula as rf


from riskformula.errors import CalibrationWarning, SettingsError

from riskformula.reports import metrics

from riskformula.reports.evaluation import evaluate_arrays

from riskformula.reports.size_path import SizePath
from riskformula.reports.summary import risk_formula

from conftest import binary_frame


K = dict(max_size=2, time_limit=10, progress=False)

@pytest.fixture(scope="module")
def data():
    return binary_frame(200, seed=3)

@pytest.fixture(scope="module")
def two_groups(data):
    """``y ~ x1``: two risk groups, so Hosmer–Lemeshow is undefined."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rf.risk_score("y ~ x1", data, **K)

@pytest.fixture
def csv(data, tmp_path):
    path = tmp_path / "d.csv"
    data.to_csv(path, index=False)
    return str(path)


def _formula_line(model):
    return next(s for s in str(model.summary()).splitlines() if s.startswith("risk = "))


def test_plot_size_path_takes_a_size_path():
    pytest.importorskip("matplotlib")
    table = pd.DataFrame({"size": [1, 2], "loss": [0.6, 0.5], "auc": [0.7, 0.75], "status": ["optimal"] * 2})
    path = SizePath(formula="y ~ x1 + x2", table=table, models={}, evaluated_on="training rows", notes=())
    ax, ax2 = rf.plots.plot_size_path(path).axes
    np.testing.assert_allclose(ax.lines[0].get_ydata(), table["loss"])
    with pytest.raises(rf.DataError, match="SizePath .* or a DataFrame; got list"):
        rf.plots.plot_size_path([1, 2])


def test_plot_decision_curve_takes_a_decision_curve(two_groups, data):
    pytest.importorskip("matplotlib")
    dc = rf.decision_curve(two_groups, data=data)
    fig = rf.plots.plot_decision_curve(dc)
    assert fig.axes[0].get_title() == "Decision curves"
    with pytest.raises(SettingsError, match="either a DecisionCurve"):
        rf.plots.plot_decision_curve(dc, data)


@pytest.mark.parametrize("name", ["plot_roc", "plot_score_distribution", "plot_decision_curve",
                                  "plot_reliability"])
def test_plots_do_not_warn_about_hosmer_lemeshow(two_groups, data, name):
    pytest.importorskip("matplotlib")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CalibrationWarning)
        getattr(rf.plots, name)(two_groups, data)


def test_hosmer_lemeshow_with_two_groups_reads_the_same_everywhere(two_groups, data):
    summary = str(two_groups.summary())
    with pytest.warns(CalibrationWarning, match="at least 3 groups"):
        ev = two_groups.evaluate(data)
    for text in (summary, str(ev)):
        assert "Hosmer–Lemeshow" in text and "NA (< 3 groups)" in text
    assert "nan" not in summary and "0 df" not in summary


def test_infinite_hosmer_lemeshow_shows_no_p_value():
    # a risk of 100% given to a non-event: the statistic is infinite
    y, risk = np.array([0, 1, 0, 1, 1, 0]), np.array([0.2, 0.2, 0.5, 0.5, 1.0, 1.0])
    hl = metrics.hosmer_lemeshow(y, risk)
    assert hl.df == 1 and not np.isfinite(hl.statistic)
    assert hl.describe() == "NA (a predicted risk of 0% or 100% is contradicted by an outcome)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        text = str(evaluate_arrays(None, y, risk, risk))
    line = next(s for s in text.splitlines() if s.startswith("Hosmer–Lemeshow"))
    assert "NA (a predicted risk" in line and "p =" not in line


def test_defined_hosmer_lemeshow():
    hl = metrics.hosmer_lemeshow([0, 1, 0, 1, 1, 1], [.2, .2, .5, .5, .8, .8])
    assert hl.describe() == f"1.62 on 1 df, p = {hl.p_value:.3f}"


@pytest.mark.parametrize("intercept, scale, expected", [
    (0.0, 1.0, "risk = 1 / (1 + exp(-score))"),
    (0.0, 2.0, "risk = 1 / (1 + exp(-score / 2))"),
    (-3.0, 1.0, "risk = 1 / (1 + exp(-(-3 + score)))"),        # unchanged
    (-3.0, 1.5, "risk = 1 / (1 + exp(-(-3 + score) / 1.5))"),  # unchanged
    (0.25, 1.0, "risk = 1 / (1 + exp(-(+0.2500 + score)))"),   # unchanged
])
def test_risk_formula_text(two_groups, intercept, scale, expected):
    assert _formula_line(two_groups) == risk_formula(two_groups)  # the summary prints this line
    assert risk_formula(SimpleNamespace(intercept=intercept, scale=scale)) == expected


def test_compare_labels_tell_scales_apart(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = rf.risk_score("y ~ x1 + x2", data, **K)
        two = rf.risk_score("y ~ x1 + x2", data, scale=2, **K)
        smaller = rf.risk_score("y ~ x1 + x2", data, **{**K, "max_size": 1})
        labels = list(rf.compare(one, two).frame["model"])
        assert labels == ["y ~ x1 + x2 [max_size=2, scale=1]", "y ~ x1 + x2 [max_size=2, scale=2]"]
        # labels that already differ are kept
        assert list(rf.compare(smaller, one).frame["model"]) == ["y ~ x1 + x2 [max_size=1]",
                                                                 "y ~ x1 + x2 [max_size=2]"]
