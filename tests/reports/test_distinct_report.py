"""A fitted model's report on its training rows (the evaluation, the items' supports, the profile's
moments of points) is computed from the distinct rows the loss collapsed the rows to, with the
rows and events behind each: the very same report as from the rows one by one."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula import fitinfo
from riskformula.problem import LogisticLoss


def _data(seed: int = 0, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 2, n), "age": rng.integers(20, 80, n),
                      "count": rng.poisson(1.5, n), "grp": rng.choice(list("pqr"), n)})
    z = -2 + 1.5 * d.a - d.b + 0.04 * (d.age - 50) + 0.5 * d["count"]
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    return d


def test_the_loss_keeps_the_rows_and_events_behind_each_distinct_row():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, (200, 3)).astype(float)
    y = rng.integers(0, 2, 200)
    w = rng.random(200) * 3
    loss = LogisticLoss(X, y, weights=w, positive_weight=2.0)  # weights do not enter the counts
    Xd = loss.Z[:, 1:]
    for i, row in enumerate(Xd):
        at = (X == row).all(axis=1)
        assert loss.row_counts[i] == at.sum() and loss.row_events[i] == y[at].sum()
    assert loss.row_counts.sum() == len(y) and loss.row_events.dtype == np.int64


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("formula, options", [
    ("y ~ a + b + age + count", dict(max_size=3)),
    ("y ~ a + b + threshold(age) + C(grp)", dict(max_size=3, coef_range=(-4, 4))),
    ("y ~ a + b + age", dict(max_size=2, scale="fit")),
    ("y ~ a + b + count", dict(max_size=3, weights="w", positive_weight=1.5)),
])
def test_the_report_from_distinct_rows_is_the_report_from_the_rows(formula, options, monkeypatch):
    d = _data()
    d["w"] = np.random.default_rng(2).random(len(d)) + 0.5
    if options.get("weights") == "w":
        options = {**options, "weights": d["w"]}

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return rf.risk_score(formula, d, node_limit=400, **options)

    collapsed = fit()
    monkeypatch.setattr(fitinfo.DistinctRows, "of_loss", classmethod(lambda cls, loss: None))
    rows = fit()
    assert np.array_equal(collapsed.scorecard.points, rows.scorecard.points)
    pd.testing.assert_frame_equal(collapsed.training_evaluation.to_frame(), rows.training_evaluation.to_frame(),
                                  check_exact=True)
    for kind in ("text", "html"):
        assert collapsed.card(kind) == rows.card(kind)
    assert collapsed.profile.to_dict() == rows.profile.to_dict()
    # and both are the report of evaluate() on the training rows, encoded again
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = rf.evaluate(collapsed, d)
    pd.testing.assert_frame_equal(collapsed.training_evaluation.to_frame(), again.to_frame(), rtol=1e-12)


def test_a_fit_reports_from_the_distinct_rows(monkeypatch):
    """risk_score hands the model the loss's distinct rows (so the report does not grow with the rows)."""
    seen = []
    real = fitinfo.DistinctRows.of_loss.__func__

    def spy(cls, loss):
        out = real(cls, loss)
        seen.append(len(out.X))
        return out

    monkeypatch.setattr(fitinfo.DistinctRows, "of_loss", classmethod(spy))
    d = pd.concat([_data()] * 5, ignore_index=True)  # every row five times
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score("y ~ a + b + count", d, max_size=2)
    frame = m.training_evaluation.to_frame().set_index("metric")
    assert seen and seen[0] < len(d) / 5 and frame.loc["n", "value"] == len(d)
