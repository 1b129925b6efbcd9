"""Smoke and behaviour tests of riskformula.plots (matplotlib Agg, files in tmp_path)."""

import sys

import numpy as np
import pandas as pd
import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from riskformula import plots  # noqa: E402
from riskformula.errors import DataError, SettingsError  # noqa: E402
from riskformula.reports.evaluation import evaluate  # noqa: E402


class FakeScore:
    formula = "y ~ age60 + smoker"

    def __init__(self, points=None, intercept=-2.0):
        self.points = {"age60": 1, "smoker": 2} if points is None else points
        self.intercept = intercept

    def score(self, d):
        return sum((d[k] * v for k, v in self.points.items()), pd.Series(0.0, index=d.index))

    def predict(self, d):
        return 1 / (1 + np.exp(-(self.intercept + self.score(d))))

    def observed(self, d):
        return d["y"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(2)
    n = 400
    d = pd.DataFrame({"age60": rng.integers(0, 2, n), "smoker": rng.integers(0, 2, n),
                      "bmi": rng.normal(0, 1, n)})
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(2 - d.age60 - 2 * d.smoker))).astype(int)
    return d


@pytest.fixture(scope="module")
def ev(data):
    return evaluate(FakeScore(), data)


DIAGNOSTIC = [plots.plot_reliability, plots.plot_roc, plots.plot_decision_curve,
              plots.plot_score_distribution]


def _save(fig, path):
    assert isinstance(fig, Figure)
    fig.savefig(path, dpi=60)
    assert path.stat().st_size > 1000  # a real PNG, not an empty file


@pytest.mark.parametrize("fn", DIAGNOSTIC, ids=lambda f: f.__name__)
def test_diagnostic_plots_render_from_an_evaluation(fn, ev, tmp_path):
    _save(fn(ev), tmp_path / f"{fn.__name__}.png")


@pytest.mark.parametrize("fn", DIAGNOSTIC, ids=lambda f: f.__name__)
def test_diagnostic_plots_draw_into_a_given_ax(fn, ev, tmp_path):
    fig = Figure()
    axes = fig.subplots(1, 2)
    out = fn(ev, ax=axes[1])
    assert out is fig
    drawn = axes[1].lines + axes[1].collections + axes[1].patches
    assert len(drawn) > 0 and not (axes[0].lines or axes[0].collections or axes[0].patches)
    _save(out, tmp_path / "grid.png")


def test_model_and_data_give_the_same_reliability_points(data, ev):
    fig = plots.plot_reliability(FakeScore(), data)
    offsets = fig.axes[0].collections[-1].get_offsets()
    np.testing.assert_allclose(offsets[:, 0], ev.reliability["predicted_risk"])
    np.testing.assert_allclose(offsets[:, 1], ev.reliability["observed_risk"])
    sizes = fig.axes[0].collections[-1].get_sizes()
    assert np.argmax(sizes) == np.argmax(ev.reliability["n"])  # area follows counts


def test_argument_errors(ev, data):
    with pytest.raises(SettingsError, match="`data` is required"):
        plots.plot_roc(FakeScore())
    with pytest.raises(SettingsError, match="either an Evaluation"):
        plots.plot_roc(ev, data)


def test_real_valued_scores_use_bins_and_histogram(data, tmp_path):
    model = FakeScore({"age60": 1, "smoker": 2, "bmi": 0.37})  # > 30 distinct scores
    ev = evaluate(model, data)
    fig = plots.plot_reliability(ev)
    assert len(fig.axes[0].collections[-1].get_offsets()) == 10
    _save(plots.plot_score_distribution(ev), tmp_path / "hist.png")


def test_size_path(tmp_path):
    table = pd.DataFrame({"size": [0, 1, 2, 3], "loss": [0.69, 0.55, 0.50, 0.49],
                          "auc": [0.5, 0.70, 0.76, 0.77], "cal": [0.01, 0.02, 0.02, 0.02],
                          "gap": [0.0, 0.0, 0.0, 0.031]})
    fig = plots.plot_size_path(table)
    _save(fig, tmp_path / "path.png")
    ax, ax2 = fig.axes
    np.testing.assert_allclose(ax.lines[0].get_ydata(), table["loss"])
    np.testing.assert_allclose(ax2.lines[0].get_ydata(), table["auc"])
    assert "not proven optimal" in [t.get_text() for t in ax.get_legend().get_texts()][-1]
    own = Figure()
    target = own.add_subplot()
    assert plots.plot_size_path(table.iloc[::-1], ax=target) is own
    np.testing.assert_allclose(target.lines[0].get_xdata(), [0, 1, 2, 3])  # sorted by size
    with pytest.raises(DataError, match="lacks column\\(s\\) auc"):
        plots.plot_size_path(table.drop(columns="auc"))


def test_size_path_draws_hollow_exactly_the_unproven_sizes():
    """'optimal' means proven within gap_tolerance (here a gap of 5e-7): the status decides, not
    the gap; a size stopped by a limit is hollow even when its gap is 0."""
    table = pd.DataFrame({"size": [1, 2, 3, 4], "loss": [0.6, 0.5, 0.45, 0.44], "auc": [0.7, 0.75, 0.78, 0.79],
                          "gap": [0.0, 5e-7, 0.0, 0.02],
                          "status": ["optimal", "optimal", "time_limit", "node_limit"]})
    ax, ax2 = plots.plot_size_path(table).axes
    for axis in (ax, ax2):
        filled, hollow = axis.collections
        np.testing.assert_array_equal(filled.get_offsets()[:, 0], [1, 2])
        np.testing.assert_array_equal(hollow.get_offsets()[:, 0], [3, 4])
    # without a status column the gap is compared with risk_score's default gap_tolerance
    ax, _ = plots.plot_size_path(table.drop(columns="status")).axes
    np.testing.assert_array_equal(ax.collections[0].get_offsets()[:, 0], [1, 2, 3])


def test_missing_matplotlib_gives_install_hint(ev, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install riskformula\[plot\]"):
        plots.plot_reliability(ev)


def test_reliability_plot_on_real_fit_with_extreme_scores(tmp_path):
    """Scores whose rows are all events or all non-events (regression: a Wilson bound a rounding
    error past the observed risk made matplotlib refuse the error bars)."""
    import riskformula as rf
    df = rf.load_dataset("wdbc")
    m = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst + smoothness_worst',
                      df, max_size=3, time_limit=20)
    fig = rf.plots.plot_reliability(m, df)
    fig.savefig(tmp_path / "rel.png")
    assert (tmp_path / "rel.png").stat().st_size > 0
