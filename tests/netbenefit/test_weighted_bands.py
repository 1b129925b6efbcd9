"""Weighted net benefit: treat-all and the band table count weights as copies of rows."""

from __future__ import annotations


import numpy as np

import pandas as pd

import pytest

import riskformula as rf


FIT = dict(time_limit=10, n_jobs=1, progress=False)

@pytest.fixture(scope="module")
def weighted_nb():
    bc = rf.load_dataset("breastcancer")
    train = bc.iloc[::2].copy()
    train["w"] = np.where(train.Benign == 1, 2.0, 1.0)
    m = rf.risk_score("Benign ~ UniformityOfCellSize + BareNuclei + ClumpThickness", train, weights="w",
                      objective=rf.net_benefit([0.3]), max_size=2, coef_range=(0, 3), c0=1e-3,
                      **FIT)
    return m, train

@pytest.fixture(scope="module")
def wdbc():
    return rf.load_dataset("wdbc")


def test_weighted_treat_all_equals_net_benefit_at_zero_and_hand_computed_at_0_3(weighted_nb):
    m, train = weighted_nb
    d = m.decisions.set_index("threshold")
    # at threshold 0 the rule is "everyone": net benefit and treat-all are the same number
    assert d.loc[0.0, "rule"] == "everyone"
    assert d.loc[0.0, "treat_all"] == pytest.approx(d.loc[0.0, "net_benefit"], abs=1e-12)
    # by hand: weighted prevalence (2·121 events of weight 463) and prev − (1 − prev)·0.3/0.7
    w, y = train["w"].to_numpy(), train["Benign"].to_numpy()
    prev = (w * y).sum() / w.sum()
    assert prev == pytest.approx(242 / 463)
    assert d.loc[0.3, "treat_all"] == pytest.approx(prev - (1 - prev) * 0.3 / 0.7)
    assert d.loc[0.3, "treat_all"] == pytest.approx(0.3181, abs=1e-4)
    shown = m.summary().tables["decisions"]
    assert shown["treat_all"].iloc[0] == pytest.approx(shown["net_benefit"].iloc[0])


def test_weighted_band_table_counts_rows_and_labels_weights(weighted_nb):
    m, train = weighted_nb
    t = m.risk_table()
    assert t["rows"].sum() == len(train) == 342
    assert t["row_events"].sum() == train["Benign"].sum()
    assert t["n"].sum() == pytest.approx(train["w"].sum())      # weighted, as the band risks use
    assert np.allclose(t["risk_from"], t["events"] / t["n"])
    # per band, the weighted counts follow from the row counts (events weigh 2, non-events 1)
    assert np.allclose(t["n"], t["rows"] + t["row_events"])
    assert np.allclose(t["events"], 2 * t["row_events"])
    text = str(m.summary())
    assert "weighted rows" in text and "weighted events" in text
    assert "Weighted events        242 of 463 (52.3%)" in text
    m2 = rf.from_json(m.to_json())
    pd.testing.assert_frame_equal(m2.risk_table(), t)
    pd.testing.assert_frame_equal(m2.decisions, m.decisions)


def test_unweighted_band_rows_equal_the_counts():
    bc = rf.load_dataset("breastcancer").iloc[::2]
    m = rf.risk_score("Benign ~ UniformityOfCellSize + BareNuclei", bc, objective=rf.net_benefit([0.3]),
                      max_size=2, coef_range=(0, 3), c0=1e-3, **FIT)
    t = m.risk_table()
    assert (t["rows"] == t["n"]).all() and (t["row_events"] == t["events"]).all()
    assert "weighted rows" not in str(m.summary())
    d = m.decisions
    prev = bc["Benign"].mean()
    assert d["treat_all"].iloc[0] == pytest.approx(prev)
