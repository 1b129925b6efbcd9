"""The survival plots (matplotlib Agg): what each draws, against the numbers it shows."""

from __future__ import annotations

import sys

import numpy as np
import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from riskformula.errors import DataError, SettingsError  # noqa: E402
from riskformula.reports import survival_metrics as sm  # noqa: E402
from riskformula.reports.score_bands import score_bands  # noqa: E402
from riskformula.reports.survival_evaluation import evaluate_survival  # noqa: E402
from riskformula.reports.survival_plots import plot_km_by_group, plot_survival_calibration  # noqa: E402


@pytest.fixture(scope="module")
def sim():
    rng = np.random.default_rng(5)
    n = 240
    x = rng.integers(0, 6, n).astype(float)
    eta = 0.4 * x
    t_event, t_cens = rng.exponential(np.exp(-eta) * 6, n), rng.exponential(15, n)
    t = np.round(np.minimum(t_event, t_cens), 2)
    e = (t_event <= t_cens).astype(int)
    return t, e, x, eta


def _curves(ax):
    return [ln for ln in ax.lines if ln.get_linestyle() == "-"]


def test_km_by_band_draws_the_kaplan_meier_of_each_band(sim, tmp_path):
    t, e, x, _ = sim
    bands = score_bands(x)
    fig = plot_km_by_group(t, e, bands)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    curves = _curves(ax)
    assert len(ax.lines) == len(curves) == len(bands) == 3
    for j, line in enumerate(curves):
        rows = bands.codes == j
        km_t, km_s = sm.kaplan_meier(t[rows], e[rows])
        xs, ys = line.get_xdata(), line.get_ydata()
        assert xs[0] == 0 and ys[0] == 1
        assert np.array_equal(xs[1:-1], km_t) and np.allclose(ys[1:-1], km_s, atol=0)
        assert xs[-1] == t[rows].max() and ys[-1] == km_s[-1]  # drawn to the band's last follow-up
        assert line.get_label() == (f"score {bands.labels[j]} (n = {rows.sum():,d}, "
                                    f"{int(e[rows].sum()):,d} events)")
    # one tick per distinct censored time of each band, on its curve
    ticks = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(ticks) == 3
    for j, c in enumerate(ticks):
        rows = bands.codes == j
        cens = np.unique(t[rows][e[rows] == 0])
        km_t, km_s = sm.kaplan_meier(t[rows], e[rows])
        assert np.allclose(c.get_offsets()[:, 0], cens)
        assert np.allclose(c.get_offsets()[:, 1], sm.step_at(km_t, km_s, cens))
    legend = [tx.get_text() for tx in ax.get_legend().get_texts()]
    assert legend == [ln.get_label() for ln in curves]
    fig.savefig(tmp_path / "km.png", dpi=50)
    assert (tmp_path / "km.png").stat().st_size > 1000


def test_km_horizon_line_labels_and_given_axes(sim):
    t, e, x, _ = sim
    fig0 = Figure()
    ax = fig0.add_subplot()
    fig = plot_km_by_group(t, e, x >= 3, ax=ax, labels={False: "low", True: "high"}, horizon=4)
    assert fig is fig0
    assert len(ax.lines) == 3 and len(_curves(ax)) == 2
    vline = [ln for ln in ax.lines if ln.get_linestyle() == "--"][0]
    assert list(vline.get_xdata()) == [4, 4] and vline.get_label() == "horizon t = 4"
    names = [ln.get_label() for ln in _curves(ax)]
    assert names[0].startswith("low (n = ") and names[1].startswith("high (n = ")
    # labels as a list, in sorted group order; groups of any sortable values
    fig = plot_km_by_group(t, e, np.where(x >= 3, "b", "a"), labels=["A", "B"])
    assert [ln.get_label()[0] for ln in _curves(fig.axes[0])] == ["A", "B"]
    assert fig.axes[0].get_title() == "Kaplan–Meier curves"


def test_km_errors(sim):
    t, e, x, _ = sim
    with pytest.raises(DataError, match="`group` has 3 values for 240 rows"):
        plot_km_by_group(t, e, [1, 2, 3])
    with pytest.raises(DataError, match="made from 100 rows, not these 240"):
        plot_km_by_group(t, e, score_bands(x[:100]))
    with pytest.raises(SettingsError, match="`labels` has 1 entries for 3 groups"):
        plot_km_by_group(t, e, score_bands(x), labels=["only one"])
    with pytest.raises(DataError, match=r"0 \(censored\) and 1 \(event\) only"):
        plot_km_by_group(t, e + 1, x)
    with pytest.raises(DataError, match="`time` has 240 values and `event` 239"):
        plot_km_by_group(t, e[1:], x)
    with pytest.raises(SettingsError, match="`horizon` must be a finite time"):
        plot_km_by_group(t, e, x, horizon=-1)


def test_calibration_plot_shows_the_table(sim, tmp_path):
    t, e, x, eta = sim
    base = sm.breslow_baseline(t, e, eta)
    ev = evaluate_survival(t, e, x, lambda h: sm.risk_within(eta, h, *base), [3.0], groups=4)
    table = ev.calibration[0]
    fig = plot_survival_calibration(table)
    ax = fig.axes[0]
    diagonal = [ln for ln in ax.lines if ln.get_label() == "perfect calibration"]
    assert len(diagonal) == 1 and np.array_equal(diagonal[0].get_xdata(), diagonal[0].get_ydata())
    points = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(points) == 1
    assert np.allclose(points[0].get_offsets(), np.column_stack([table.predicted, table.observed]))
    # the error bars are the table's 95% intervals
    lower, upper = table.ci()
    bars = [c for c in ax.collections if c not in points][0]
    segs = np.array([s for s in bars.get_segments()])
    assert np.allclose(segs[:, 0, 1], lower) and np.allclose(segs[:, 1, 1], upper)
    assert np.allclose(segs[:, 0, 0], table.predicted)
    assert ax.get_title() == f"Calibration within t = 3 (n = {int(table.n.sum()):,d})"
    assert ax.get_xlim()[1] >= max(table.predicted.max(), upper.max())
    fig.savefig(tmp_path / "cal.png", dpi=50)
    texts = [a.get_text() for a in ax.texts]
    assert texts == [str(g) for g in table.group]  # each point's label (hidden only when crowded)


def test_calibration_plot_errors_and_missing_matplotlib(sim, monkeypatch):
    with pytest.raises(DataError, match="must be a CalibrationTable"):
        plot_survival_calibration({"group": [1]})
    t, e, x, _ = sim
    table = sm.calibration_at(t, e, np.full(len(t), 0.3), x >= 3, 2.0)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install riskformula\[plot\]"):
        plot_survival_calibration(table)
    with pytest.raises(ImportError, match=r"pip install riskformula\[plot\]"):
        plot_km_by_group(t, e, x)
