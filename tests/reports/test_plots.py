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


def _drawn(fig):
    """Draw ``fig`` on an Agg canvas (as savefig does) and return its renderer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _marker_boxes(ax, renderer):
    """Display boxes of every scatter marker on ``ax`` (circles' bounding squares)."""
    from matplotlib.transforms import Bbox
    boxes = []
    from matplotlib.collections import PathCollection
    for c in ax.collections:
        if not isinstance(c, PathCollection):  # error bars
            continue
        offsets, sizes = c.get_offsets(), c.get_sizes()
        if not len(offsets) or not len(sizes):
            continue
        for (x, y), s in zip(ax.transData.transform(offsets), np.broadcast_to(sizes, len(offsets))):
            r = renderer.points_to_pixels(np.sqrt(s) / 2)
            boxes.append(Bbox.from_extents(x - r, y - r, x + r, y + r))
    return boxes


def _data_points(ax):
    """Display coordinates of every drawn data vertex on ``ax`` (lines in data coordinates, scatter
    points, bar corners), for checking that a legend covers none."""
    pts = [ax.transData.transform(line.get_xydata()) for line in ax.lines
           if line.get_transform() == ax.transData and len(line.get_xydata())]
    pts += [ax.transData.transform(c.get_offsets()) for c in ax.collections if len(c.get_offsets())
            and c.get_offset_transform() == ax.transData]
    for p in ax.patches:
        if p.get_transform() == ax.transData or hasattr(p, "get_bbox"):
            b = p.get_window_extent()
            if b.width > 0 and b.height > 0:
                pts.append(np.array([[b.x0, b.y1], [b.x1, b.y1], [(b.x0 + b.x1) / 2, b.y1]]))
    return np.vstack(pts) if pts else np.empty((0, 2))


def _assert_legends_cover_no_data(fig):
    _drawn(fig)
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent()
        pts = _data_points(ax)
        inside = (pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)
        assert not inside.any(), f"the legend of {ax.get_title()!r} covers data at {pts[inside][:3]}"


@pytest.mark.parametrize("fn", DIAGNOSTIC, ids=lambda f: f.__name__)
def test_diagnostic_legends_cover_no_data(fn, ev):
    _assert_legends_cover_no_data(fn(ev))


class Crowded(FakeScore):
    """Twelve scores whose risks crowd near 0: risk = expit(score − 9) for score 0..11."""

    def __init__(self):
        super().__init__({"k": 1}, intercept=-9.0)


@pytest.fixture(scope="module")
def crowded():
    rng = np.random.default_rng(5)
    d = pd.DataFrame({"k": np.repeat(np.arange(12), 40)})
    d["y"] = (rng.random(len(d)) < 1 / (1 + np.exp(9 - d.k))).astype(int)
    return evaluate(Crowded(), d)


@pytest.mark.parametrize("which", ["crowded", "ev"])
def test_reliability_labels_do_not_overlap(which, request):
    """Score labels do not overlap: every label shown is inside the axes and clear of the
    other labels, of every marker and of the legend; a crowded point's label is left out."""
    from riskformula.reports._labels import text_extent
    ev = request.getfixturevalue(which)
    fig = plots.plot_reliability(ev)
    renderer = _drawn(fig)
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_text()]
    assert len(labels) == len(ev.reliability)  # one per score, shown or not
    shown = [t for t in labels if t.get_visible()]
    assert len(shown) >= min(4, len(labels))
    boxes = [text_extent(t, renderer) for t in shown]
    frame = ax.get_window_extent(renderer)
    legend = ax.get_legend().get_window_extent(renderer)
    markers = _marker_boxes(ax, renderer)
    for i, b in enumerate(boxes):
        assert frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1
        assert not b.overlaps(legend)
        assert not any(b.overlaps(other) for other in boxes[i + 1:]), shown[i].get_text()
        assert not any(b.overlaps(m) for m in markers), shown[i].get_text()
    if which == "crowded":
        assert len(shown) < len(labels)  # the old fixed offsets drew all twelve, on top of each other
    # the same at another size and resolution: the labels are placed when the figure is drawn
    fig.set_size_inches(3, 3)
    fig.set_dpi(150)
    renderer = _drawn(fig)
    shown = [t for t in labels if t.get_visible()]
    boxes = [text_extent(t, renderer) for t in shown]
    assert all(not a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def _hollow(collection) -> bool:
    face = collection.get_facecolor()
    return len(face) > 0 and np.allclose(face[0][:3], 1.0)


def _by_fill(axis):
    """x of the filled and of the hollow markers on ``axis``."""
    filled = [c.get_offsets()[:, 0] for c in axis.collections if not _hollow(c)]
    hollow = [c.get_offsets()[:, 0] for c in axis.collections if _hollow(c)]
    return (np.concatenate(filled) if filled else np.array([]),
            np.concatenate(hollow) if hollow else np.array([]))


def _assert_stacked_panels(fig, top, bottom):
    """Two panels, one above the other, sharing x, each with its own single y axis (no twin)."""
    renderer = _drawn(fig)
    a, b = top.get_window_extent(renderer), bottom.get_window_extent(renderer)
    assert a.y0 > b.y1 and not a.overlaps(b)
    assert top.get_shared_x_axes().joined(top, bottom)
    visible = [ax for ax in fig.axes if ax.axison]
    positions = [tuple(np.round(ax.get_position().bounds, 6)) for ax in visible]
    assert len(set(positions)) == len(positions), "two axes drawn on one spot (a twin y axis)"


def test_size_path(tmp_path):
    table = pd.DataFrame({"size": [0, 1, 2, 3], "loss": [0.69, 0.55, 0.50, 0.49],
                          "auc": [0.5, 0.70, 0.76, 0.77], "cal": [0.01, 0.02, 0.02, 0.02],
                          "gap": [0.0, 0.0, 0.0, 0.031]})
    fig = plots.plot_size_path(table)
    _save(fig, tmp_path / "path.png")
    top, bottom = fig.axes
    _assert_stacked_panels(fig, top, bottom)
    np.testing.assert_allclose(top.lines[0].get_ydata(), table["loss"])
    np.testing.assert_allclose(bottom.lines[0].get_ydata(), table["auc"])
    assert "loss" in top.get_ylabel().lower() and "AUC" in bottom.get_ylabel()
    assert "not proven optimal" in [t.get_text() for t in top.get_legend().get_texts()][-1]
    own = Figure()
    target = own.add_subplot()
    assert plots.plot_size_path(table.iloc[::-1], ax=target) is own  # one Axes: split into two panels
    panels = target.child_axes
    assert len(panels) == 2 and not target.axison
    np.testing.assert_allclose(panels[0].lines[0].get_xdata(), [0, 1, 2, 3])  # sorted by size
    pair = Figure().subplots(2, 1)
    plots.plot_size_path(table, ax=pair)
    assert len(pair[0].lines) == 1 and len(pair[1].lines) == 1
    with pytest.raises(SettingsError, match="pair of Axes"):
        plots.plot_size_path(table, ax=Figure().subplots(1, 3))
    with pytest.raises(DataError, match="lacks column\\(s\\) auc"):
        plots.plot_size_path(table.drop(columns="auc"))


def test_size_path_x_is_the_cards_size_in_items():
    """x is the size of each fit, not the size limit. Each fit is drawn at
    the items its card uses; a tick whose fits had other limits names them."""
    table = pd.DataFrame({"size": [1, 2, 3, 4], "items": [1, 2, 3, 3], "loss": [0.6, 0.5, 0.45, 0.45],
                          "auc": [0.7, 0.75, 0.78, 0.78], "status": ["optimal"] * 4})
    fig = plots.plot_size_path(table)
    top, bottom = fig.axes
    _drawn(fig)
    assert "items" in bottom.get_xlabel() and "term" not in bottom.get_xlabel()
    np.testing.assert_array_equal(bottom.lines[0].get_xdata(), [1, 2, 3, 3])
    ticks = [t.get_text() for t in bottom.get_xticklabels()]
    assert ticks == ["1", "2", "3\nlimit 3–4"]
    assert not any(t.get_text() for t in top.get_xticklabels() if t.get_visible())  # x labelled once
    assert top.get_legend() is None  # nothing hollow to explain


def test_size_path_draws_hollow_exactly_the_unproven_sizes():
    """'optimal' means proven within gap_tolerance (here a gap of 5e-7): the status decides, not
    the gap; a size stopped by a limit is hollow even when its gap is 0."""
    table = pd.DataFrame({"size": [1, 2, 3, 4], "loss": [0.6, 0.5, 0.45, 0.44], "auc": [0.7, 0.75, 0.78, 0.79],
                          "gap": [0.0, 5e-7, 0.0, 0.02],
                          "status": ["optimal", "optimal", "time_limit", "node_limit"]})
    fig = plots.plot_size_path(table)
    for axis in fig.axes:
        filled, hollow = _by_fill(axis)
        np.testing.assert_array_equal(filled, [1, 2])
        np.testing.assert_array_equal(hollow, [3, 4])
    # without a status column the gap is compared with risk_score's default gap_tolerance
    top, _ = plots.plot_size_path(table.drop(columns="status")).axes
    np.testing.assert_array_equal(_by_fill(top)[0], [1, 2, 3])


def _fairness_path(statuses, title=True):
    import riskformula as rf
    from riskformula.fairness_path import _words
    from riskformula.reports.fairness_path import PATH_COLUMNS, FairnessPath
    probe = rf.equal_opportunity("sex", at_risk=0.3, max_diff=1.0)
    bounds = [np.nan, 0.1, 0.05, 0.02]
    t = pd.DataFrame({c: np.nan for c in PATH_COLUMNS}, index=range(4))
    t["max_diff"] = bounds
    t["loss"] = [0.42, 0.423, 0.431, 0.435]
    t["status"] = ["optimal"] + list(statuses)
    t["train_disparity"] = [0.23, 0.097, 0.036, 0.013]
    t["test_disparity"] = [0.23, 0.05, 0.012, 0.018]
    words = dict(zip(("title", "quantity"), _words(probe))) if title else {}
    notion = probe.describe().replace(", max_diff=1", "")
    return FairnessPath("y ~ x", notion, t, {}, True, (), **words)


@pytest.mark.parametrize("title", [True, False], ids=["from fairness_path", "notion only"])
def test_fairness_path_plot_reads_naturally(title, tmp_path):
    """The title names the constraint in words and the bound runs left to right."""
    path = _fairness_path(["optimal"] * 3, title=title)
    fig = path.plot()
    _save(fig, tmp_path / "fairness.png")
    top, bottom = fig.axes
    _assert_stacked_panels(fig, top, bottom)
    heading = top.get_title()
    assert heading.startswith("Equal opportunity by sex")
    assert not any(ch in heading for ch in "<>()='_"), heading
    if title:
        assert heading == "Equal opportunity by sex, positive at risk ≥ 30%"
        assert "true positive rate" in bottom.get_xlabel()
    assert not bottom.xaxis_inverted() and not top.xaxis_inverted()
    x = top.lines[0].get_xdata()
    np.testing.assert_array_equal(x, [0.02, 0.05, 0.1])  # loosest bound on the right
    lo, hi = bottom.get_xlim()
    assert lo < hi
    assert [t.get_text() for t in bottom.get_xticklabels()] == ["0.02", "0.05", "0.1"]
    assert "max_diff" in bottom.get_xlabel() and "looser →" in bottom.get_xlabel()
    assert all(not _hollow(c) for ax in (top, bottom) for c in ax.collections)


def test_fairness_path_draws_time_limited_fits_hollow():
    """A fit stopped by its time limit does not look like a certified one."""
    path = _fairness_path(["optimal", "time_limit", "time_limit"])
    fig = path.plot()
    top, bottom = fig.axes
    for axis in (top, bottom):
        filled, hollow = _by_fill(axis)
        assert set(filled) == {0.1} and set(hollow) == {0.02, 0.05}
    legend = [t.get_text() for t in top.get_legend().get_texts()]
    assert "not certified (time limit)" in legend and "certified optimal" in legend
    own = Figure()
    target = own.add_subplot()
    assert path.plot(ax=target) is own and len(target.child_axes) == 2
    _assert_legends_cover_no_data(fig)


def test_decision_curves_legend_beside_the_curves(data):
    import riskformula as rf
    long = "a score with a long name that would cover the curves inside the axes"
    dc = rf.decision_curve(FakeScore(), FakeScore({"age60": 2, "smoker": 1}), data=data, names=[long, "other"])
    fig = dc.plot()
    renderer = _drawn(fig)
    ax = fig.axes[0]
    assert not ax.get_legend().get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
    assert plots.plot_decision_curve(dc) is not None


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
