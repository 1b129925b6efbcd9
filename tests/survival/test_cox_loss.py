"""The Cox partial likelihood loss: its values and gradients against statsmodels' PHReg (Breslow
and Efron ties), merged rows, shift invariance, the log-domain path for far-apart scores, and the
bounds the solver starts from."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.duration.hazard_regression import PHReg

from riskformula.errors import DataError, SettingsError
from riskformula.problem.cox import CoxLoss, cox_problem
from riskformula.problem.problem import loss_bounds, score_range


def _data(seed, n=50, d=3):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (n, d)).astype(float)
    X[: n // 5] = X[n // 5: 2 * (n // 5)]  # some rows repeat (their times may differ)
    t = rng.integers(1, 9, n).astype(float)  # many ties
    e = rng.integers(0, 2, n)
    e[0] = 1
    return X, t, e, rng


@pytest.mark.parametrize("ties", ["breslow", "efron"])
@pytest.mark.parametrize("seed", range(6))
def test_matches_statsmodels(ties, seed):
    X, t, e, rng = _data(seed)
    for scale in (1.0, 0.7, 3.0):
        beta = rng.normal(0, 1.5, X.shape[1])
        L = CoxLoss(X, t, e, ties=ties, scale=scale)
        ref = PHReg(t, X, status=e, ties=ties)
        v, g = L.value_and_gradient(np.r_[5.0, beta])  # the intercept is ignored
        n = len(t)
        assert v * n == pytest.approx(-ref.loglike(beta / scale), rel=1e-12, abs=1e-10)
        assert np.allclose(g[1:] * n, -ref.score(beta / scale) / scale, rtol=1e-10, atol=1e-10)
        assert g[0] == 0.0
    assert CoxLoss(np.vstack([X, X]), np.r_[t, t], np.r_[e, e]).n_unique == L.n_unique  # copies merged


def test_far_apart_scores_take_the_log_path():
    X, t, e, _ = _data(11, n=30)
    beta = np.array([400.0, -300.0, 5.0])  # exp() of the shifted scores underflows
    for ties in ("breslow", "efron"):
        L = CoxLoss(X, t, e, ties=ties)
        ref = PHReg(t, X, status=e, ties=ties)
        v, g = L.value_and_gradient(np.r_[0.0, beta])
        assert np.isfinite(v) and v * 30 == pytest.approx(-ref.loglike(beta), rel=1e-12)
        assert np.allclose(g[1:] * 30, -ref.score(beta), rtol=1e-9, atol=1e-8)


def _naive(X, t, e, w, lam, ties, scale=1.0):
    """The partial likelihood from its definition (survival::coxph's conventions), row by row."""
    eta = X @ lam / scale
    total = 0.0
    for tg in np.unique(t[e == 1]):
        R, D = t >= tg, (t == tg) & (e == 1)
        sr, sd, wd, d = (w * np.exp(eta))[R].sum(), (w * np.exp(eta))[D].sum(), w[D].sum(), D.sum()
        if ties == "breslow":
            total += wd * np.log(sr)
        else:
            total += wd / d * sum(np.log(sr - k / d * sd) for k in range(d))
        total -= (w * eta)[D].sum()
    return total / w.sum()


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_merged_rows_give_the_loss_of_the_raw_rows(ties):
    X, t, e, rng = _data(5, n=40)
    X = np.vstack([X, X[:10]])  # exact copies of rows: merged with their weights and counts
    t, e = np.r_[t, t[:10]], np.r_[e, e[:10]]
    w = rng.integers(1, 4, len(t)).astype(float)
    for scale in (1.0, 2.5):
        lam = rng.normal(size=3)
        L = CoxLoss(X, t, e, weights=w, ties=ties, scale=scale)
        assert L.n_unique < len(t)
        assert L.value(np.r_[0.0, lam]) == pytest.approx(_naive(X, t, e, w, lam, ties, scale), rel=1e-12)
    # Breslow: a weight of k is k copies of a row
    if ties == "breslow":
        rep = np.repeat(np.arange(len(t)), w.astype(int))
        a = CoxLoss(X, t, e, weights=w, ties=ties)
        b = CoxLoss(X[rep], t[rep], e[rep], ties=ties)
        assert a.value(np.r_[0.0, lam]) == pytest.approx(b.value(np.r_[0.0, lam]), rel=1e-12)


def test_shift_invariance_and_matrix_scores():
    X, t, e, rng = _data(2)
    L = CoxLoss(X, t, e)
    s = L.margins(np.r_[0.0, 1.0, -1.0, 2.0])
    S = np.column_stack([s, s + 7.0, 2 * s])
    vals = L.value_from_scores(S)
    assert vals[0] == pytest.approx(vals[1], rel=1e-13)
    assert vals[2] == pytest.approx(L.value_from_scores(2 * s), rel=1e-13)


def test_convex_along_lines():
    X, t, e, rng = _data(9)
    L = CoxLoss(X, t, e, ties="efron")
    for _ in range(20):
        a, b = np.r_[0, rng.normal(0, 2, 3)], np.r_[0, rng.normal(0, 2, 3)]
        fa, ga = L.value_and_gradient(a)
        fb = L.value(b)
        assert fb >= fa + ga @ (b - a) - 1e-12  # every linearization is below the loss


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_bounds_hold_over_the_box(ties):
    X, t, e, rng = _data(4, n=35, d=2)
    L = CoxLoss(X, t, e, ties=ties, scale=1.5)
    p = cox_problem(L, [-3, -3], [3, 3], max_size=2)
    lo, hi = loss_bounds(p)
    s_lo, s_hi = score_range(p)
    vals = [L.value(np.r_[0, a, b]) for a in range(-3, 4) for b in range(-3, 4)]
    assert lo <= min(vals) and max(vals) <= hi
    # random score vectors within the rows' ranges, not only those of integer points
    for _ in range(200):
        s = s_lo + rng.random(len(s_lo)) * (s_hi - s_lo)
        assert lo <= L.value_from_scores(s) <= hi


def test_bad_inputs():
    X = np.zeros((3, 1))
    with pytest.raises(DataError, match="every row is censored"):
        CoxLoss(X, [1, 2, 3], [0, 0, 0])
    with pytest.raises(DataError, match="0 \\(censored\\) and 1"):
        CoxLoss(X, [1, 2, 3], [0, 2, 1])
    with pytest.raises(DataError, match="≥ 0"):
        CoxLoss(X, [1, -2, 3], [0, 1, 1])
    with pytest.raises(SettingsError, match="ties"):
        CoxLoss(X, [1, 2, 3], [0, 1, 1], ties="exact")
    with pytest.raises(SettingsError, match="scale"):
        CoxLoss(X, [1, 2, 3], [0, 1, 1], scale=0)


def test_weighted_efron_matches_lifelines():
    """lifelines' weighted Cox fit (Efron's ties, stored in tests/data/survival_reference.json):
    the loss at its coefficients is its log partial likelihood, and the gradient there is 0."""
    ref = json.loads((Path(__file__).parents[1] / "data" / "survival_reference.json").read_text())["weighted_cox"]
    w = np.asarray(ref["weights"])
    L = CoxLoss(np.asarray(ref["X"]), ref["time"], ref["event"], weights=w, ties="efron")
    v, g = L.value_and_gradient(np.r_[0.0, ref["beta"]])
    assert -v * w.sum() == pytest.approx(ref["log_likelihood"], rel=1e-12)
    assert np.abs(g).max() < 1e-7
