"""The time-to-event card from the front door: ``rf.risk_score("Surv(t, d) ~ ...")`` is certified
against brute force, every view (predict, table, survival curves, document) reads the one
score → risk map, and what does not apply is refused in one message."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.duration.hazard_regression import PHReg

import riskformula as rf
from riskformula.io import _digest
from riskformula.errors import DataError, FormulaError, NotApplicableError, SettingsError
from riskformula.problem.cox import CoxLoss
from riskformula.reports.survival_metrics import breslow_baseline


def _data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = rng.integers(0, 2, n)
    c = rng.choice(["x", "y", "z"], n)
    haz = np.exp(0.8 * a - 0.5 * b + 0.4 * (c == "z"))
    T = np.ceil(rng.exponential(5 / haz))  # ties
    C = np.ceil(rng.exponential(8, n))
    return pd.DataFrame({"t": np.minimum(T, C), "d": (T <= C).astype(int), "a": a, "b": b, "c": c})


def _brute(df, scale, ties, B=2, c0=1e-6, max_size=2):
    X = df[["a", "b"]].to_numpy(float)
    loss = CoxLoss(X, df["t"], df["d"], ties=ties, scale=scale)
    best = np.inf
    for lam in itertools.product(range(-B, B + 1), repeat=2):
        size = np.count_nonzero(lam)
        if size <= max_size:
            best = min(best, loss.value(np.r_[0.0, lam]) + c0 * size)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_certified_card_matches_brute_force(seed):
    df = _data(seed)
    ties = ("efron", "breslow")[seed % 2]
    scales = [1.0, 2.0] if seed % 3 else [1.5]
    m = rf.risk_score("Surv(t, d) ~ a + b", df, coef_range=(-2, 2), max_size=2, objective=rf.cox(ties),
                      scale=scales if len(scales) > 1 else scales[0], gap_tolerance=1e-9, time_limit=60)
    best = min(_brute(df, s, ties) for s in scales)
    assert m.status == "optimal"
    assert m.lower_bound <= best + 1e-12  # the certificate is a theorem
    assert m.objective == pytest.approx(best, abs=1e-9)
    # the partial likelihood is statsmodels' at the card's coefficients (points / scale)
    beta = np.array([m.coef["a"], m.coef["b"]], float) / m.scale
    ref = PHReg(df["t"].to_numpy(float), df[["a", "b"]].to_numpy(float), status=df["d"].to_numpy(),
                ties=ties).loglike(beta)
    assert m.llf == pytest.approx(ref, rel=1e-10)
    assert m.loss == pytest.approx(-ref / len(df), rel=1e-10)


@pytest.fixture(scope="module")
def fitted():
    df = _data(3, n=120)
    before = df.copy()
    m = rf.risk_score("Surv(t, d) ~ a + b + C(c)", df, max_size=3, horizon=[3, 6], time_limit=60)
    pd.testing.assert_frame_equal(df, before)  # the caller's data are not modified
    return m, df


def test_every_view_reads_the_one_map(fitted):
    m, df = fitted
    assert isinstance(m, rf.SurvivalScore) and m.horizons == (3.0, 6.0) and m.horizon == 3.0
    X = m.encode_design(df)
    lam = m.design_points.to_numpy(float)
    eta = (lam[0] + X @ lam[1:]) / m.scale
    assert np.allclose(m.predict(df, which="link"), eta)
    t, H = breslow_baseline(df["t"].to_numpy(float), df["d"].to_numpy(), eta, ties="efron")
    for h in (3.0, 6.0, 4.5):
        Hh = H[t <= h][-1]
        expected = 1 - np.exp(-Hh * np.exp(eta))
        assert np.allclose(m.predict(df, horizon=h), expected, rtol=1e-12)
    both = m.predict(df, horizon=[3, 6])
    assert list(both.columns) == ["risk within 3", "risk within 6"]
    assert np.allclose(both.iloc[:, 1], m.predict(df, horizon=6))
    assert np.allclose(m.predict(df, which="survival", horizon=6), 1 - m.predict(df, horizon=6))
    assert np.allclose(m.predict(df, which="hazard_ratio"), np.exp(eta))
    assert np.allclose(m.predict(), m.predict(df))  # the training rows' own scores
    curves = m.survival_function(df.head(4), times=[3, 6])
    assert np.allclose(curves.loc[6.0].to_numpy(), 1 - m.predict(df.head(4), horizon=6).to_numpy())
    table = m.risk_table()
    for _, row in table.iterrows():
        assert row["risk within 6"] == pytest.approx(float(m.risk_of(row["score_from"], 6)))
    # the card prints those numbers
    text = m.card()
    assert "risk within 3" in text and "risk within 6" in text
    assert "Certificate" in str(m)


def test_document_round_trip_and_edits(fitted):
    m, df = fitted
    text = m.to_json()
    m2 = rf.from_json(text)
    assert isinstance(m2, rf.SurvivalScore) and m2.horizons == m.horizons
    pd.testing.assert_series_equal(m2.predict(df, horizon=6), m.predict(df, horizon=6))
    doc = json.loads(text)

    def load(edit):
        d = json.loads(text)
        edit(d)
        d["digest"] = _digest(d)
        return rf.from_json(json.dumps(d))
    with pytest.raises(DataError, match="never decreases"):
        load(lambda d: d["survival"]["base_hazard"].reverse())
    with pytest.raises(DataError, match="horizon"):
        load(lambda d: d["survival"].update(horizons=[doc["survival"]["max_time"] * 2]))
    with pytest.raises(DataError, match="Surv"):
        load(lambda d: d["outcome"].pop("survival"))


def test_statsmodels_attributes(fitted):
    m, _ = fitted
    assert m.deviance == pytest.approx(-2 * m.llf)
    assert m.aic == pytest.approx(-2 * m.llf + 2 * m.df_model)
    assert m.bic == pytest.approx(-2 * m.llf + np.log(m.events) * m.df_model)
    assert m.llf >= m.llnull - 1e-9
    assert list(m.params.index)[-1] == "(scale)"
    s = m.summary()
    frame = s.to_frame()
    assert np.allclose(frame["hazard_ratio"], np.exp(frame["points"] / m.scale))
    assert "Harrell's C" in str(s)


def test_refusals():
    df = _data(1)
    with pytest.raises(SettingsError, match="horizon.*Surv"):
        rf.risk_score("d ~ a + b", df, horizon=3, time_limit=5)
    with pytest.raises(FormulaError, match="Surv"):
        rf.risk_score("d ~ a + b", df, objective="cox", time_limit=5)
    with pytest.raises(FormulaError):
        rf.risk_score("Surv(t, d) ~ a + b", df, objective="logistic", time_limit=5)
    with pytest.raises(SettingsError, match="intercept_range"):
        rf.risk_score("Surv(t, d) ~ a + b", df, intercept_range=(-3, 3), time_limit=5)
    with pytest.raises(SettingsError, match="beyond the longest follow-up"):
        rf.risk_score("Surv(t, d) ~ a + b", df, horizon=1e6, time_limit=5)
    with pytest.raises(SettingsError, match="does not apply to a time-to-event"):
        rf.risk_score("Surv(t, d) ~ a + b", df, constraints=rf.statistical_parity("c", max_diff=0.1),
                      time_limit=5)
    with pytest.raises(SettingsError, match="ties"):
        rf.risk_score("Surv(t, d) ~ a + b", df, objective=rf.cox(ties="exact"), time_limit=5)
    m = rf.risk_score("Surv(t, d) ~ a + b", df, max_size=1, time_limit=30)
    with pytest.raises(SettingsError, match="beyond the longest follow-up"):
        m.predict(df, horizon=1e6)
    with pytest.raises(NotApplicableError):
        m.resid_pearson  # noqa: B018


def test_default_horizon_is_the_median_follow_up():
    df = _data(2, n=200)
    m = rf.risk_score("Surv(t, d) ~ a + b", df, max_size=1, time_limit=30)
    from riskformula.reports.survival_metrics import kaplan_meier
    t, s = kaplan_meier(df["t"].to_numpy(float), 1 - df["d"].to_numpy())
    median = t[np.flatnonzero(s <= 0.5)[0]]
    assert median * 0.99 <= m.horizon <= median and float(f"{m.horizon:.3g}") == m.horizon


@pytest.mark.parametrize("end", [1317.0, 1000.0])
def test_default_horizon_is_one_the_training_rows_can_be_evaluated_at(end):
    # half the rows followed to the end of the study: the reverse Kaplan–Meier median is the last
    # follow-up (1317 rounded to three digits was 1320, beyond it), and evaluate needs rows past it
    rng = np.random.default_rng(0)
    d = pd.DataFrame({"x": rng.integers(0, 2, 200)})
    t = rng.exponential(2000 / np.exp(d.x))
    d["time"], d["event"] = np.minimum(t, end), (t <= end).astype(int)
    m = rf.risk_score("Surv(time, event) ~ x", d, max_size=1, time_limit=10)
    before = d.time[(d.event == 1) & (d.time < end)].max()
    assert before * 0.99 <= m.horizon <= before < end
    np.testing.assert_allclose(m.evaluate(d).horizons, [m.horizon])


def test_structural_constraints_apply():
    df = _data(4, n=80)
    m = rf.risk_score("Surv(t, d) ~ a + b + C(c)", df, max_size=3, constraints=[rf.not_both("a", "b")],
                      time_limit=60)
    assert not (m.coef["a"] != 0 and m.coef["b"] != 0)


def test_evaluation_and_plots_read_the_card(fitted):
    import matplotlib
    matplotlib.use("Agg")
    m, df = fitted
    ev = m.evaluate(df)
    assert np.allclose(ev.horizons, m.horizons)
    from riskformula.reports.survival_metrics import harrell_c
    assert ev.harrell_c == pytest.approx(harrell_c(df["t"], df["d"], m.score(df)))
    assert ev.harrell_c == pytest.approx(m.training_metrics["harrell_c"])
    table = ev.calibration_at(6.0)
    assert np.isclose(np.average(table.predicted, weights=table.n), m.predict(df, horizon=6).mean())
    fig = rf.plots.plot_km_by_score(m, df, bands=2)
    assert len(fig.axes) == 1
    fig = rf.plots.plot_survival_calibration(m, df, horizon=6)
    assert len(fig.axes) == 1
    with pytest.raises(SettingsError, match="time-to-event"):
        rf.plots.plot_km_by_score(object(), df)


def test_binary_views_refuse_or_dispatch(fitted):
    m, df = fitted
    ev = rf.evaluate(m, df)  # the front door evaluates at the horizons
    assert ev.harrell_c == pytest.approx(m.evaluate(df).harrell_c)
    with pytest.raises(SettingsError, match="horizon"):
        rf.evaluate(m, df, by="c")
    with pytest.raises(SettingsError, match="time-to-event"):
        rf.decision_curve(m, data=df)
    with pytest.raises(SettingsError, match="plot_km_by_score"):
        rf.plots.plot_reliability(m, df)
    with pytest.raises(NotApplicableError, match="censored"):
        m.fairness(df, by="c")
    # counterfactuals read the risk within the card's first horizon
    target = 0.3
    cf = m.counterfactuals(df.head(3), target_risk=target)
    assert cf is not None
    s, _ = m.score_for_risk(target, -1)
    assert m.risk_of(s) <= target < m.risk_of(s + 1)
