"""Details of the plots a reader sees: reliability markers at a risk of 0 or 1 drawn whole, the
best member of a Rashomon set drawn once, and a variable's points read "+1" when every member agrees."""

import warnings

import matplotlib
import numpy as np
import pytest

import riskformula as rf
from riskformula.rashomon.plots import points_range

matplotlib.use("Agg")


def test_reliability_markers_at_0_and_1_are_inside_the_axes():
    df = rf.load_dataset("breastcancer")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score("Benign ~ BareNuclei + ClumpThickness", df, max_size=2, time_limit=20)
    fig = rf.plots.plot_reliability(m, df)
    ax = fig.axes[0]
    obs = m.evaluate(df).reliability["observed_risk"]
    assert obs.min() == 0 and obs.max() == 1  # markers sit on both edges
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    assert x0 < 0 and x1 > 1 and y0 < 0 and y1 > 1
    # the marker of largest area keeps its whole radius inside the axes (in pixels)
    fig.canvas.draw()
    marks = ax.collections[-1]
    radius = np.sqrt(marks.get_sizes().max()) / 2 * fig.dpi / 72
    corners = ax.transData.transform([[0, 0], [1, 1]])
    box = ax.bbox
    assert corners[0, 0] - radius >= box.x0 - 0.5 and corners[1, 1] + radius <= box.y1 + 0.5


@pytest.fixture(scope="module")
def rashomon():
    df = rf.load_dataset("mammo")
    return rf.rashomon_set("Malignant ~ IrregularShape + Age_geq_60 + SpiculatedMargin + CircumscribedMargin", df,
                           epsilon=0.05, max_size=3, coef_range=(-3, 3), time_limit=60)


def test_rashomon_plot_draws_the_best_member_once(rashomon):
    ax = rf.plots.plot_rashomon(rashomon).axes[0]
    points = [c.get_offsets() for c in ax.collections]
    assert sum(len(p) for p in points) == len(rashomon)  # one marker per member
    star = points[1]
    assert len(star) == 1 and star[0, 1] == rashomon.losses[0]


def test_variable_use_labels(rashomon):
    assert points_range(1, 1) == "+1" and points_range(-2, 3) == "-2 to +3"
    ax = rf.plots.plot_variable_use(rashomon).axes[0]
    labels = [t.get_text() for t in ax.texts]
    assert labels and not any(a == b for a, _, b in (t.partition(" to ") for t in labels if " to " in t))
