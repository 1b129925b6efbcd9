"""evaluate_survival, score_bands and the calibration intervals: the report's numbers against the
survival measures, against scikit-survival's and lifelines' stored numbers
(tests/data/survival_reference.json), against hand computations and against published Kaplan–Meier
tables; its text; its errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from riskformula.errors import DataError, SettingsError, SmallGroupWarning
from riskformula.reports import survival_metrics as sm
from riskformula.reports.score_bands import ScoreBands, score_bands
from riskformula.reports.survival_evaluation import SurvivalEvaluation, evaluate_survival

REF = json.loads((Path(__file__).parents[1] / "data" / "survival_reference.json").read_text())
SETS = sorted(REF["sets"])


def _load(name):
    s = REF["sets"][name]
    d = {k: np.asarray(v) for k, v in s["data"].items()}
    d["train"] = d["train"].astype(bool)
    d["test"] = ~d["train"] & (d["time"] < d["time"][d["train"]].max())
    return d, s["reference"]


def _cox_risk(t, e, eta):
    base = sm.breslow_baseline(t, e, eta)
    return lambda h: sm.risk_within(eta, h, *base)


@pytest.fixture(scope="module")
def sim():
    """A point score 0..5 with proportional hazards, continuous times, about 20% censored."""
    rng = np.random.default_rng(11)
    n = 300
    x = rng.integers(0, 6, n).astype(float)
    eta = 0.35 * x
    t_event, t_cens = rng.exponential(np.exp(-eta) * 8), rng.exponential(20, n)
    t = np.round(np.minimum(t_event, t_cens), 2)
    e = (t_event <= t_cens).astype(int)
    return t, e, x, eta


# --------------------------------------------------------------------------------------
# against scikit-survival and lifelines (stored numbers)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SETS)
def test_numbers_match_scikit_survival(name):
    d, r = _load(name)
    t, e, s = d["time"], d["event"], d["score"]
    eta = d["X"] @ np.asarray(r["cox_beta"])
    horizons = sorted({*r["cox_horizons"], r["tau"]})
    ev = evaluate_survival(t, e, s, _cox_risk(t, e, eta), horizons, brier_times=r["cox_horizons"])
    assert ev.harrell_c == pytest.approx(r["harrell_c"], abs=1e-12)
    if max(horizons) == r["tau"]:  # Uno's C runs to the last horizon
        assert ev.uno_c == pytest.approx(r["uno_c_tau"], abs=1e-12)
    k = np.searchsorted(ev.horizons, r["auc_times"])
    assert np.allclose(ev.horizons[k], r["auc_times"])
    assert np.allclose(ev.auc[k], r["auc"], atol=1e-12)
    # our Breslow risks equal lifelines' predicted survival to 1e-10 (test_survival_metrics)
    assert np.allclose(ev.brier[np.searchsorted(ev.horizons, r["cox_horizons"])], r["brier"], atol=1e-9)
    assert ev.integrated_brier == pytest.approx(r["ibs"], abs=1e-9)
    assert np.array_equal(ev.brier_times, r["cox_horizons"])


@pytest.mark.parametrize("name", SETS)
def test_censoring_weights_from_training_rows(name):
    d, r = _load(name)
    t, e, s, tr, te = d["time"], d["event"], d["score"], d["train"], d["test"]
    eta = d["X"] @ np.asarray(r["cox_beta"])
    base = sm.breslow_baseline(t, e, eta)

    def risk_at(h):
        return sm.risk_within(eta[te], h, *base)

    ev = evaluate_survival(t[te], e[te], s[te], risk_at, r["auc_times"], train=(t[tr], e[tr]),
                           brier_times=r["cox_horizons"])
    assert ev.censoring_from_train
    assert np.allclose(ev.auc, r["auc_split"], atol=1e-12)
    assert ev.integrated_brier == pytest.approx(r["ibs_split"], abs=1e-9)
    tau = float(np.max(r["auc_times"]))
    assert ev.uno_c == pytest.approx(sm.uno_c(t[te], e[te], s[te], tau=tau, train=(t[tr], e[tr])), abs=1e-15)
    assert "from the training rows" in str(ev)


@pytest.mark.parametrize("name", SETS)
def test_calibration_by_score_matches_kaplan_meier_reference(name):
    d, r = _load(name)
    t, e, s = d["time"], d["event"], d["score"]
    eta = d["X"] @ np.asarray(r["cox_beta"])
    h = r["calibration_horizon"]
    ev = evaluate_survival(t, e, s, _cox_risk(t, e, eta), [h], groups=s)
    table = ev.calibration_at(h)
    assert ev.group_name == "group"
    for g, obs in zip(table.group, table.observed):
        assert obs == pytest.approx(r["calibration_observed"][str(float(g))], abs=1e-12)


# --------------------------------------------------------------------------------------
# against the measures and hand computations
# --------------------------------------------------------------------------------------


def test_every_number_is_the_measure_it_names(sim):
    t, e, x, eta = sim
    risk_at = _cox_risk(t, e, eta)
    hs = [2.0, 5.0, 8.0]
    ev = evaluate_survival(t, e, x, risk_at, hs)
    assert isinstance(ev, SurvivalEvaluation)
    assert ev.n == len(t) and ev.events == e.sum()
    assert np.array_equal(ev.horizons, hs)
    assert ev.harrell_c == sm.harrell_c(t, e, x)
    assert ev.uno_c == sm.uno_c(t, e, x, tau=8.0) and ev.uno_tau == 8.0
    assert np.array_equal(ev.auc, sm.cumulative_dynamic_auc(t, e, x, hs))
    R = np.column_stack([risk_at(h) for h in hs])
    assert np.allclose(ev.brier, sm.brier_scores(t, e, 1 - R, hs), atol=1e-15)
    assert np.allclose(ev.predicted_risk, R.mean(axis=0), atol=1e-15)
    km_t, km_s = sm.kaplan_meier(t, e)
    assert np.allclose(ev.observed_risk, 1 - sm.step_at(km_t, km_s, hs), atol=1e-15)
    assert ev.events_by.tolist() == [int(np.sum(e.astype(bool) & (t <= h))) for h in hs]
    assert ev.event_free_after.tolist() == [int(np.sum(t > h)) for h in hs]
    # the default Brier grid: the horizons' range with the event times inside it
    inside = np.unique(t[(e == 1) & (t > 2) & (t < 8)])
    assert 10 < len(inside) <= 100
    grid = ev.brier_times
    assert np.array_equal(grid, np.r_[2.0, inside, 8.0])
    G = np.column_stack([risk_at(g) for g in grid])
    assert ev.integrated_brier == pytest.approx(sm.integrated_brier_score(t, e, 1 - G, grid), abs=1e-15)


def test_one_horizon_integrates_from_the_first_event(sim):
    t, e, x, eta = sim
    ev = evaluate_survival(t, e, x, _cox_risk(t, e, eta), 3)
    assert ev.brier_times[0] == t[e == 1].min() and ev.brier_times[-1] == 3.0
    assert ev.horizons.tolist() == [3.0]


def test_long_brier_grid_is_thinned_to_quantiles(sim):
    t, e, x, eta = sim
    ev = evaluate_survival(t, e, x, _cox_risk(t, e, eta), [0.2, 15])
    events_inside = np.unique(t[(e == 1) & (t > 0.2) & (t < 15)])
    assert len(events_inside) > 100
    assert len(ev.brier_times) <= 102 and set(ev.brier_times[1:-1]) <= set(events_inside)


def test_calibration_by_band_is_kaplan_meier_of_the_band(sim):
    t, e, x, eta = sim
    risk_at = _cox_risk(t, e, eta)
    ev = evaluate_survival(t, e, x, risk_at, [2.0, 5.0])
    bands = score_bands(x)
    assert ev.group_name == "score band"
    for table in ev.calibration:
        h = table.horizon
        risk = risk_at(h)
        assert list(table.group) == list(bands.labels)
        for j, label in enumerate(bands.labels):
            rows = bands.codes == j
            km_t, km_s = sm.kaplan_meier(t[rows], e[rows])
            k = list(table.group).index(label)
            assert table.observed[k] == pytest.approx(1 - sm.step_at(km_t, km_s, h), abs=1e-15)
            assert table.predicted[k] == pytest.approx(risk[rows].mean(), abs=1e-15)
            assert table.n[k] == rows.sum()
            assert table.events[k] == np.sum((e[rows] == 1) & (t[rows] <= h))
    frame = ev.tables["calibration"]
    assert len(frame) == 2 * len(bands) and set(frame["horizon"]) == {2.0, 5.0}
    assert np.all(frame["lower"] <= frame["observed"]) and np.all(frame["observed"] <= frame["upper"])


def test_groups_as_a_number_or_given_bands(sim):
    t, e, x, eta = sim
    risk_at = _cox_risk(t, e, eta)
    five = evaluate_survival(t, e, x, risk_at, [3.0], groups=5)
    assert len(five.calibration[0].group) == len(score_bands(x, 5))
    # bands made on other rows are applied to these rows' scores by their cut-offs
    bands = score_bands(x[:150], [2, 4])
    ev = evaluate_survival(t, e, x, risk_at, [3.0], groups=bands)
    table = ev.calibration[0]
    assert list(table.group) == list(bands.labels)
    assert table.n.tolist() == [int(np.sum(x < 2)), int(np.sum((x >= 2) & (x < 4))), int(np.sum(x >= 4))]
    assert "the 3 score bands given" in str(ev)


def test_greenwood_against_published_tables():
    """The 6-MP arm of Gehan's (1965) leukaemia trial: Greenwood standard errors as R's
    survfit prints them, and the log(−log) 95% interval at week 6 as Stata's `sts list` prints it;
    the control arm's first row (week 1) likewise."""
    t = np.array([6, 6, 6, 6, 7, 9, 10, 10, 11, 13, 16, 17, 19, 20, 22, 23, 25, 32, 32, 34, 35.])
    e = np.array([1, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0])
    published = {6: (0.8571, 0.0764), 7: (0.8067, 0.0869), 10: (0.7529, 0.0963), 13: (0.6902, 0.1068),
                  16: (0.6275, 0.1141), 22: (0.5378, 0.1282), 23: (0.4482, 0.1346)}
    zero = np.zeros(len(t))
    for h, (surv, se) in published.items():
        table = sm.calibration_at(t, e, zero, zero, h)
        assert 1 - table.observed[0] == pytest.approx(surv, abs=5e-5)
        assert table.se[0] == pytest.approx(se, abs=5e-5)
    lo, hi = sm.calibration_at(t, e, zero, zero, 6).ci()
    assert (1 - hi[0], 1 - lo[0]) == pytest.approx((0.6197, 0.9516), abs=5e-5)  # S's interval
    control = np.array([1, 1, 2, 2, 3, 4, 4, 5, 5, 8, 8, 8, 8, 11, 11, 12, 12, 15, 17, 22, 23.])
    table = sm.calibration_at(control, np.ones(21), np.zeros(21), np.zeros(21), 1)
    assert 1 - table.observed[0] == pytest.approx(0.9048, abs=5e-5)
    assert table.se[0] == pytest.approx(0.0641, abs=5e-5)
    assert 1 - table.ci()[1][0] == pytest.approx(0.6700, abs=5e-5)


def test_greenwood_by_hand():
    """Five rows: events at 1 and 3, censored at 2, 4, 5. S(3) = 4/5 · 2/3 and Greenwood's variance
    S² (1/(5·4) + 1/(3·2)); the interval is S^exp(±1.96 se / (S |log S|))."""
    t, e = np.array([1, 2, 3, 4, 5.]), np.array([1, 0, 1, 0, 0])
    table = sm.calibration_at(t, e, np.full(5, 0.3), np.zeros(5), 3)
    S = 4 / 5 * 2 / 3
    se = S * np.sqrt(1 / 20 + 1 / 6)
    assert table.observed[0] == pytest.approx(1 - S, abs=1e-15)
    assert table.se[0] == pytest.approx(se, abs=1e-15)
    w = 1.959963984540054 * se / (S * -np.log(S))
    lo, hi = table.ci()
    assert lo[0] == pytest.approx(1 - S ** np.exp(-w), abs=1e-12)
    assert hi[0] == pytest.approx(1 - S ** np.exp(w), abs=1e-12)
    # a 90% interval is narrower; a group without events by t, or with all rows' events, is a point
    lo90, hi90 = table.ci(0.9)
    assert lo[0] < lo90[0] < hi90[0] < hi[0]
    ends = sm.calibration_at([1, 2, 5, 6], [1, 1, 0, 0], np.zeros(4), [0, 0, 1, 1], 3)
    assert ends.observed.tolist() == [1.0, 0.0]
    assert [a.tolist() for a in ends.ci()] == [[1.0, 0.0], [1.0, 0.0]]
    with pytest.raises(SettingsError, match="`level` must be between 0 and 1"):
        table.ci(95)


# --------------------------------------------------------------------------------------
# score bands
# --------------------------------------------------------------------------------------


def test_score_bands_are_contiguous_and_keep_equal_scores_together():
    rng = np.random.default_rng(3)
    s = rng.integers(-3, 9, 500)
    for k in (1, 2, 3, 4, 6):
        b = score_bands(s, k)
        assert isinstance(b, ScoreBands) and 1 <= len(b) <= k
        assert b.n.sum() == len(s) and np.all(b.n >= 10)
        assert np.all(b.upper[:-1] < b.lower[1:])  # contiguous, no score in two bands
        for j in range(len(b)):
            assert np.all(s[b.codes == j] >= b.lower[j]) and np.all(s[b.codes == j] <= b.upper[j])
        assert np.array_equal(b.assign(s), b.codes)
    third = score_bands(s, 3)
    assert np.all(np.abs(third.n - len(s) / 3) < 60)  # near tertiles
    assert third.labels[0] == f"{third.lower[0]:g} to {third.upper[0]:g}"  # negative scores: "−3 to 0"


def test_score_bands_merge_small_bands_and_take_cut_offs():
    s = np.r_[np.zeros(60), np.ones(5), np.full(40, 2.0)]
    b = score_bands(s, 3)
    assert np.all(b.n >= 10) and b.n.sum() == 105
    assert score_bands(s, 3, min_rows=1).labels == ("0", "1", "2")
    cut = score_bands(np.arange(10), [3, 7], min_rows=1)
    assert cut.labels == ("0–2", "3–6", "7–9") and cut.cuts.tolist() == [3.0, 7.0]
    assert cut.assign([-5, 3, 6.5, 100]).tolist() == [0, 1, 1, 2]
    assert score_bands(np.r_[1.0, 1, 1], 3).labels == ("1",)
    with pytest.warns(SmallGroupWarning, match="fewer than 10 rows"):
        score_bands(np.arange(30), [2])
    with pytest.raises(DataError, match="band from 20 to below 40 holds no rows"):
        score_bands(np.r_[np.arange(10), 50], [20, 40])
    with pytest.raises(SettingsError, match="strictly increasing"):
        score_bands(np.arange(10), [5, 2])
    with pytest.raises(SettingsError, match="number of bands ≥ 1"):
        score_bands(np.arange(10), 0)
    with pytest.raises(DataError, match="finite numbers"):
        score_bands([1, np.nan])


# --------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------


def test_report_text_and_frames(sim):
    t, e, x, eta = sim
    ev = evaluate_survival(t, e, x, _cox_risk(t, e, eta), [2.0, 5.0])
    text = str(ev)
    assert text.startswith("Survival risk score evaluation") and "Formula" not in text
    shown = str(evaluate_survival(t, e, x, _cox_risk(t, e, eta), [2.0], formula="Surv(t, d) ~ age + sex"))
    assert shown.splitlines()[3].split() == ["Formula", "Surv(t,", "d)", "~", "age", "+", "sex"]
    assert text.split("Harrell's C")[1].splitlines()[0].strip() == f"{ev.harrell_c:.3f}"
    assert "Uno's C (events before t = 5)" in text and f"{ev.uno_c:.3f}" in text
    assert "Calibration within t = 2" in text and "Calibration within t = 5" in text
    assert "score band" in text and "observed (KM)" in text and "95% CI" in text
    assert "Kalbfleisch & Prentice, 1980" in text and "Graf et al., 1999" in text
    for kind in ("markdown", "html", "latex"):
        assert "Harrell" in ev.render(kind)
    frame = ev.to_frame()
    assert list(frame.columns) == ["metric", "horizon", "value"]
    row = frame[(frame.metric == "auc") & (frame.horizon == 5.0)]
    assert row["value"].iloc[0] == ev.auc[1]
    assert frame.loc[frame.metric == "n", "value"].iloc[0] == ev.n
    assert isinstance(frame.loc[frame.metric == "n", "value"].iloc[0], int)
    assert ev.horizon_frame()["brier"].tolist() == ev.brier.tolist()
    d = ev.to_dict()
    assert d["harrell_c"] == ev.harrell_c and len(d["calibration"]) == 2 * len(ev.calibration[0].group)
    json.dumps(d)
    assert repr(ev).startswith("<SurvivalEvaluation: 300 obs")
    with pytest.raises(SettingsError, match="not one of the evaluated horizons"):
        ev.calibration_at(3.0)


def test_note_when_a_band_is_not_followed_to_the_horizon():
    t = np.array([1, 2, 3, 2.5, 6, 7, 8, 9, 10, 11.])
    e = np.array([1, 0, 0, 1, 1, 0, 1, 1, 0, 1])
    g = np.array(["a"] * 3 + ["b"] * 7)
    ev = evaluate_survival(t, e, np.r_[np.zeros(3), np.ones(7)], lambda h: np.full(10, 0.4), [5.0], groups=g)
    assert any("no row of group(s) a is followed beyond t" in n for n in ev.notes)


def test_inputs_are_not_modified(sim):
    t, e, x, eta = sim
    copies = [a.copy() for a in (t, e, x)]
    evaluate_survival(t, e, x, _cox_risk(t, e, eta), [2.0], groups=pd.Series(x).to_numpy())
    assert all(np.array_equal(a, b) for a, b in zip((t, e, x), copies))


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------


def test_bad_inputs(sim):
    t, e, x, eta = sim
    risk_at = _cox_risk(t, e, eta)
    last = t.max()
    cases = [
        (DataError, r"one value per row; got 300, 299 and 300", (t, e[:-1], x, risk_at, [2])),
        (DataError, "no event among its 300 rows", (t, np.zeros(300), x, risk_at, [2])),
        (DataError, r"0 \(censored\) and 1 \(event\) only", (t, np.full(300, 2), x, risk_at, [2])),
        (DataError, "finite number ≥ 0", (np.r_[-1.0, t[1:]], e, x, risk_at, [2])),
        (DataError, "`score` must be finite", (t, e, np.r_[np.nan, x[1:]], risk_at, [2])),
        (SettingsError, f"horizon {last + 1:g} is at or beyond the last follow-up time \\({last:g}\\)",
         (t, e, x, risk_at, [2, last + 1])),
        (SettingsError, "before the first event", (t, e, x, risk_at, [t[e == 1].min() / 2])),
        (SettingsError, "finite times > 0", (t, e, x, risk_at, [0, 2])),
        (SettingsError, "`risk_at` must be a function", (t, e, x, risk_at(2), [2])),
        (DataError, r"`risk_at\(2\)` returned 299 risks for 300 rows", (t, e, x, lambda h: risk_at(h)[1:], [2])),
        (DataError, r"probabilities in \[0, 1\]", (t, e, x, lambda h: 2 * risk_at(h) + 0.5, [2])),
    ]
    for cls, message, args in cases:
        with pytest.raises(cls, match=message):
            evaluate_survival(*args)
    with pytest.raises(SettingsError, match="`train` must be a pair"):
        evaluate_survival(t, e, x, risk_at, [2], train=t)
    with pytest.raises(DataError, match="`train` holds 300 times and 10 event"):
        evaluate_survival(t, e, x, risk_at, [2], train=(t, e[:10]))
    with pytest.raises(DataError, match="`groups` has 5 values for 300 rows"):
        evaluate_survival(t, e, x, risk_at, [2], groups=[1, 2, 3, 4, 5])
    with pytest.raises(SettingsError, match=r"Uno's C counts the events before the last horizon \(2\)"):
        evaluate_survival([1, 2, 3, 4], [0, 1, 0, 1], [0, 3, 1, 2], lambda h: np.full(4, 0.2), [2])
    with pytest.raises(DataError, match="mixes values that cannot be sorted"):
        evaluate_survival(t, e, x, risk_at, [2], groups=np.array([1, "a"] * 150, dtype=object))
    with pytest.raises(SettingsError, match="at least two increasing times"):
        evaluate_survival(t, e, x, risk_at, [2], brier_times=[3, 1])
    with pytest.raises(SettingsError, match="`brier_times` reach"):
        evaluate_survival(t, e, x, risk_at, [2], brier_times=[1, last])
