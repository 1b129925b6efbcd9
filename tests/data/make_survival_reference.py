"""Regenerate ``survival_reference.json``: scikit-survival's and lifelines' numbers for the survival
measures of :mod:`riskformula.reports.survival_metrics`.

lifelines and scikit-survival pin pandas < 3 (and scikit-survival its own scikit-learn range), so
they are not test dependencies: installing them would change the pandas a plain
``pip install riskformula`` gets. ``tests/survival/test_survival_metrics.py`` checks our numbers
against the ones stored here, with the inputs they came from. This script needs numpy, lifelines
and scikit-survival only (not riskformula), in an environment of its own::

    python -m venv /tmp/surv-ref && /tmp/surv-ref/bin/pip install lifelines scikit-survival
    /tmp/surv-ref/bin/python tests/data/make_survival_reference.py

The inputs: three seeded data sets (tied integer times with tied integer scores; continuous times;
heavy censoring), each with two predictors, a score (an integer point score) and a train/test split;
and a weighted one with tied times for lifelines' Cox fit (Efron's ties), whose coefficients and log
partial likelihood the Cox loss of ``riskformula.problem.cox`` must reproduce.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("survival_reference.json")


def _dataset(seed: int, n: int, continuous: bool, censor_rate: float) -> dict:
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 4, n)]).astype(float)
    eta = 0.8 * X[:, 0] + 0.4 * X[:, 1]
    t_event = rng.exponential(np.exp(-eta) * 10)
    t_cens = rng.exponential(10 / censor_rate, n)
    time = np.minimum(t_event, t_cens)
    time = np.round(time, 3) if continuous else np.ceil(time)
    event = (t_event <= t_cens).astype(int)
    score = (2 * X[:, 0] + X[:, 1]).astype(float)  # integer points: many tied scores
    train = (np.arange(n) % 3 != 0).astype(int)
    return {"X": X.tolist(), "time": time.tolist(), "event": event.tolist(), "score": score.tolist(),
            "train": train.tolist()}


def _reference(data: dict) -> dict:
    import pandas as pd
    from lifelines import CoxPHFitter, KaplanMeierFitter
    from lifelines.utils import concordance_index
    from sksurv.metrics import (brier_score, concordance_index_censored, concordance_index_ipcw,
                                cumulative_dynamic_auc, integrated_brier_score)
    from sksurv.nonparametric import CensoringDistributionEstimator, kaplan_meier_estimator
    from sksurv.util import Surv

    X, time, event = np.array(data["X"]), np.array(data["time"]), np.array(data["event"]).astype(bool)
    score, train = np.array(data["score"]), np.array(data["train"]).astype(bool)
    # the held-out rows measured: those before the last training time (the censoring estimate ends there)
    test = ~train & (time < time[train].max())
    y, y_train, y_test = Surv.from_arrays(event, time), Surv.from_arrays(event[train], time[train]), \
        Surv.from_arrays(event[test], time[test])
    out: dict = {}
    out["harrell_c"] = concordance_index_censored(event, time, score)[0]
    out["harrell_c_lifelines"] = concordance_index(time, -score, event)
    tau = float(np.quantile(time[event], 0.8))
    out["tau"] = tau
    out["uno_c_tau"] = concordance_index_ipcw(y, y, score, tau=tau)[0]
    out["uno_c"] = concordance_index_ipcw(y, y, score)[0]
    out["uno_c_split"] = concordance_index_ipcw(y_train, y_test, score[test], tau=tau)[0]
    # event times themselves: lifelines interpolates its baseline hazard between them
    times = np.unique(np.quantile(time[event], [0.2, 0.3, 0.45, 0.6, 0.7], method="lower"))
    out["auc_times"] = times.tolist()
    out["auc"] = cumulative_dynamic_auc(y, y, score, times)[0].tolist()
    out["auc_split"] = cumulative_dynamic_auc(y_train, y_test, score[test], times)[0].tolist()
    km_t, km_s = kaplan_meier_estimator(event, time)
    out["km_times"], out["km_survival"] = km_t.tolist(), km_s.tolist()
    kmf = KaplanMeierFitter().fit(time, event)
    out["km_lifelines"] = kmf.survival_function_at_times(km_t).to_numpy().tolist()
    cens = CensoringDistributionEstimator().fit(y)
    out["censoring_at_times"] = cens.predict_proba(km_t).tolist()
    # a Cox model (lifelines, Efron's ties) and its predicted survival from lifelines' Breslow baseline
    frame = pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "time": time, "event": event.astype(int)})
    cph = CoxPHFitter().fit(frame, "time", "event")
    beta = cph.params_[["x0", "x1"]].to_numpy()
    horizons = times
    surv = cph.predict_survival_function(frame[["x0", "x1"]], times=horizons).to_numpy().T  # rows x horizons
    out["cox_beta"], out["cox_horizons"], out["cox_survival"] = beta.tolist(), horizons.tolist(), surv.tolist()
    # Brier scores of that model's predictions, on the training rows and on a split
    out["brier"] = brier_score(y, y, surv, horizons)[1].tolist()
    out["ibs"] = integrated_brier_score(y, y, surv, horizons)
    out["ibs_split"] = integrated_brier_score(y_train, y_test, surv[test], horizons)
    # calibration: Kaplan–Meier risk by the middle horizon in each score group
    h = float(horizons[len(horizons) // 2])
    out["calibration_horizon"] = h
    obs = {}
    for g in np.unique(score):
        rows = score == g
        kt, ks = kaplan_meier_estimator(event[rows], time[rows])
        idx = np.searchsorted(kt, h, side="right") - 1
        obs[str(g)] = 1.0 - (float(ks[idx]) if idx >= 0 else 1.0)
    out["calibration_observed"] = obs
    return out


def _weighted_cox() -> dict:
    """lifelines' Cox fit with sample weights and tied times (Efron's ties): its coefficients and
    weighted log partial likelihood, which the Cox loss must reproduce."""
    import warnings

    import pandas as pd
    from lifelines import CoxPHFitter

    rng = np.random.default_rng(5)
    n = 80
    X = rng.integers(0, 3, (n, 2)).astype(float)
    t, e, w = np.ceil(rng.exponential(4, n)), rng.integers(0, 2, n), rng.integers(1, 4, n).astype(float)
    e[0] = 1
    frame = pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "t": t, "e": e, "w": w})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lifelines' advice to use robust errors with weights
        fit = CoxPHFitter().fit(frame, "t", "e", weights_col="w", robust=True)
    return {"X": X.tolist(), "time": t.tolist(), "event": e.tolist(), "weights": w.tolist(),
            "beta": fit.params_[["x0", "x1"]].to_numpy().tolist(), "log_likelihood": float(fit.log_likelihood_)}


def main() -> None:
    sets = {"ties": _dataset(1, 150, False, 0.5), "continuous": _dataset(2, 120, True, 0.4),
            "censored": _dataset(3, 100, True, 1.5)}
    doc = {"versions": {p: version(p) for p in ("lifelines", "scikit-survival", "numpy", "pandas")},
           "sets": {name: {"data": data, "reference": _reference(data)} for name, data in sets.items()},
           "weighted_cox": _weighted_cox()}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
