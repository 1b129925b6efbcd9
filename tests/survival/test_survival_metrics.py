"""The survival measures against scikit-survival and lifelines: numbers those packages produced on
three stored data sets (tests/data/survival_reference.json, made by
tests/data/make_survival_reference.py in an environment of their own)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from riskformula.errors import DataError
from riskformula.reports import survival_metrics as sm

REF = json.loads((Path(__file__).parents[1] / "data" / "survival_reference.json").read_text())
SETS = sorted(REF["sets"])


def _load(name):
    s = REF["sets"][name]
    d = {k: np.asarray(v) for k, v in s["data"].items()}
    d["train"] = d["train"].astype(bool)
    d["test"] = ~d["train"] & (d["time"] < d["time"][d["train"]].max())
    return d, s["reference"]


@pytest.mark.parametrize("name", SETS)
def test_concordance(name):
    d, r = _load(name)
    t, e, s = d["time"], d["event"], d["score"]
    assert sm.harrell_c(t, e, s) == pytest.approx(r["harrell_c"], abs=1e-12)
    assert sm.harrell_c(t, e, s) == pytest.approx(r["harrell_c_lifelines"], abs=1e-12)
    assert sm.uno_c(t, e, s) == pytest.approx(r["uno_c"], abs=1e-12)
    assert sm.uno_c(t, e, s, tau=r["tau"]) == pytest.approx(r["uno_c_tau"], abs=1e-12)
    tr, te = d["train"], d["test"]
    assert sm.uno_c(t[te], e[te], s[te], tau=r["tau"], train=(t[tr], e[tr])) == pytest.approx(r["uno_c_split"],
                                                                                               abs=1e-12)


@pytest.mark.parametrize("name", SETS)
def test_time_dependent_auc(name):
    d, r = _load(name)
    t, e, s, tr, te = d["time"], d["event"], d["score"], d["train"], d["test"]
    assert np.allclose(sm.cumulative_dynamic_auc(t, e, s, r["auc_times"]), r["auc"], atol=1e-12)
    assert np.allclose(sm.cumulative_dynamic_auc(t[te], e[te], s[te], r["auc_times"], train=(t[tr], e[tr])),
                       r["auc_split"], atol=1e-12)


@pytest.mark.parametrize("name", SETS)
def test_kaplan_meier_and_censoring(name):
    d, r = _load(name)
    times, surv = sm.kaplan_meier(d["time"], d["event"])
    assert np.allclose(times, r["km_times"]) and np.allclose(surv, r["km_survival"], atol=1e-12)
    assert np.allclose(surv, r["km_lifelines"], atol=1e-12)
    g_times, g = sm.censoring_survival(d["time"], d["event"])
    assert np.allclose(sm.step_at(g_times, g, r["km_times"]), r["censoring_at_times"], atol=1e-12)


@pytest.mark.parametrize("name", SETS)
def test_breslow_risk_and_brier(name):
    d, r = _load(name)
    t, e, X = d["time"], d["event"], d["X"]
    eta = X @ np.asarray(r["cox_beta"])
    base_t, H0 = sm.breslow_baseline(t, e, eta)
    risk = sm.risk_within(eta, np.asarray(r["cox_horizons"]), base_t, H0)
    assert np.allclose(1 - risk, r["cox_survival"], atol=1e-10)  # lifelines' predicted survival
    # a shift of every linear predictor changes nothing
    base2, H2 = sm.breslow_baseline(t, e, eta + 3.0)
    assert np.allclose(sm.risk_within(eta + 3.0, np.asarray(r["cox_horizons"]), base2, H2), risk, atol=1e-12)
    surv = np.asarray(r["cox_survival"])
    assert np.allclose(sm.brier_scores(t, e, surv, r["cox_horizons"]), r["brier"], atol=1e-12)
    assert sm.integrated_brier_score(t, e, surv, r["cox_horizons"]) == pytest.approx(r["ibs"], abs=1e-12)
    tr, te = d["train"], d["test"]
    assert sm.integrated_brier_score(t[te], e[te], surv[te], r["cox_horizons"],
                                     train=(t[tr], e[tr])) == pytest.approx(r["ibs_split"], abs=1e-12)


@pytest.mark.parametrize("name", SETS)
def test_calibration_observed_is_kaplan_meier(name):
    d, r = _load(name)
    t, e, s = d["time"], d["event"], d["score"]
    h = r["calibration_horizon"]
    eta = d["X"] @ np.asarray(r["cox_beta"])
    risk = sm.risk_within(eta, h, *sm.breslow_baseline(t, e, eta))
    table = sm.calibration_at(t, e, risk, s, h)
    for g, obs, pred in zip(table.group, table.observed, table.predicted):
        assert obs == pytest.approx(r["calibration_observed"][str(float(g))], abs=1e-12)
        assert pred == pytest.approx(risk[s == g].mean(), abs=1e-15)
    assert table.n.sum() == len(t) and np.all(table.se >= 0)


def test_efron_baseline_equals_breslow_without_ties():
    rng = np.random.default_rng(0)
    t, e, eta = rng.exponential(1, 40), rng.integers(0, 2, 40), rng.normal(size=40)
    e[0] = 1
    a, b = sm.breslow_baseline(t, e, eta), sm.breslow_baseline(t, e, eta, ties="efron")
    assert np.allclose(a[1], b[1], rtol=1e-13)
    t2 = np.ceil(t * 3)  # tied event times: Efron's increments are larger
    assert np.all(sm.breslow_baseline(t2, e, eta, ties="efron")[1] >= sm.breslow_baseline(t2, e, eta)[1] - 1e-15)


def test_bad_inputs():
    with pytest.raises(DataError, match="0 \\(censored\\)"):
        sm.harrell_c([1, 2], [0, 2], [1, 2])
    with pytest.raises(DataError, match="no comparable pairs"):
        sm.harrell_c([1, 2], [0, 0], [1, 2])
    with pytest.raises(DataError, match="`score` has 1 values"):
        sm.harrell_c([1, 2], [1, 0], [1])
    with pytest.raises(DataError, match="no controls"):
        sm.cumulative_dynamic_auc([1, 2], [1, 1], [1, 2], [5])
