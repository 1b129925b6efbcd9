"""Fairness constraints against brute force: on tiny instances every integer score (points and
intercept) is enumerated, the notion is checked with exact rational arithmetic by code that
shares nothing with the package, and the fit must

* reach the true constrained optimum (objective equal to the enumeration's minimum),
* never report a lower bound above it,
* satisfy the constraint exactly on the training rows.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import riskformula as rf

LOGIT_MARGIN = 1e-4  # the documented band below the cut-off that real-valued scores may not enter


def make(seed: int, n: int = 60, groups=("a", "b"), real: bool = False, weights: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(list(groups), n)
    x1 = rng.integers(0, 2, n)
    # x2 is more common in group "a": the unconstrained score treats the groups differently
    x2 = (rng.random(n) < np.where(g == groups[0], 0.7, 0.3)).astype(int)
    x3 = np.round(rng.normal(0, 1, n), 1) if real else rng.integers(0, 2, n)
    lp = -1.0 + 1.5 * x1 + 1.2 * x2 + 0.8 * x3
    y = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    df = pd.DataFrame({"y": y, "x1": x1, "x2": x2, "x3": x3, "g": g, "legit": rng.choice(["lo", "hi"], n)})
    if weights:
        df["w"] = rng.integers(1, 4, n)
    return df


# --- the oracle: enumeration with exact fairness checks -------------------------------------

def _rates(pred, y, g, w, notion, legit):
    """{stratum: {group: Fraction rate}} for a notion, over rows with positive weight."""
    if notion == "statistical_parity":
        strata = {"all": np.ones(len(y), bool)}
    elif notion == "conditional_statistical_parity":
        strata = {lv: legit == lv for lv in sorted(set(legit))}
    elif notion == "predictive_equality":
        strata = {"neg": y == 0}
    elif notion == "equal_opportunity":
        strata = {"pos": y == 1}
    else:
        strata = {"neg": y == 0, "pos": y == 1}
    out = {}
    for k, mask in strata.items():
        r = {}
        for grp in sorted(set(g[mask])):
            m = mask & (g == grp)
            n = int(w[m].sum())
            if n > 0:
                r[grp] = Fraction(int((w[m] * pred[m]).sum()), n)
        out[k] = r
    return out


def _holds(rates, max_diff=None, min_ratio=None, reference=None, side="both"):
    for r in rates.values():
        if len(r) < 2:
            continue
        pairs = ([(p, q) for p in r for q in r if p != q] if reference is None else
                 [(p, reference) for p in r if p != reference and side in ("both", "above")] +
                 [(reference, p) for p in r if p != reference and side in ("both", "below")])
        for p, q in pairs:  # r_p may exceed r_q by at most the bound
            if reference is not None and reference not in r:
                continue
            if max_diff is not None and r[p] - r[q] > Fraction(repr(max_diff)):
                return False
            if min_ratio is not None and r[q] < Fraction(repr(min_ratio)) * r[p]:
                return False
    return True


def _worst_diff(rates):
    return max((max(r.values()) - min(r.values()) for r in rates.values() if len(r) >= 2), default=Fraction(0))


def oracle(df, cols, notion, *, lo=-2, hi=2, max_size=2, c0=1e-6, at_risk=0.5, at_score=None, b_range=(-14, 14),
           weights=None, penalty=None, check=None, **bound):
    """The minimum objective over every integer score (and the constraint check of each)."""
    X = df[cols].to_numpy(float)
    y = df["y"].to_numpy()
    g = df["g"].to_numpy()
    legit = df["legit"].to_numpy()
    w = np.ones(len(df)) if weights is None else df[weights].to_numpy(float)
    real = ~np.all(X == np.round(X), axis=1)
    tau = math.log(at_risk / (1 - at_risk))
    best = math.inf
    for lam in itertools.product(range(lo, hi + 1), repeat=len(cols)):
        lam = np.array(lam, float)
        if np.count_nonzero(lam) > max_size:
            continue
        base = X @ lam
        for b in range(b_range[0], b_range[1] + 1):
            s = b + base
            if at_score is None:
                pred = (1 / (1 + np.exp(-s)) >= at_risk).astype(int)
                if np.any(real & (s < tau) & (s >= tau - LOGIT_MARGIN)):
                    continue
            else:
                pred = (base >= at_score).astype(int)
            loss = float(w @ (y * np.logaddexp(0, -s) + (1 - y) * np.logaddexp(0, s)) / w.sum())
            obj = loss + c0 * np.count_nonzero(lam)
            if check is not None:
                if not check(lam, b, pred, s):
                    continue
            else:
                rates = _rates(pred, y, g, w, notion, legit)
                if penalty is not None:
                    obj += penalty * float(_worst_diff(rates))
                elif not _holds(rates, **bound):
                    continue
            best = min(best, obj)
    return best


def fit(df, cols, constraint, *, lo=-2, hi=2, max_size=2, weights=None, c0=1e-6):
    return rf.risk_score("y ~ " + " + ".join(cols), df, max_size=max_size, coef_range=(lo, hi), c0=c0,
                         time_limit=30, constraints=[constraint], weights=weights)


def fitted_rates(m, df, notion, weights=None, at_risk=0.5, at_score=None):
    pred = ((m.predict(df) >= at_risk) if at_score is None else (m.score(df) >= at_score)).astype(int).to_numpy()
    w = np.ones(len(df)) if weights is None else df[weights].to_numpy(float)
    return _rates(pred, df["y"].to_numpy(), df["g"].to_numpy(), w, notion, df["legit"].to_numpy())


def agree(m, best):
    assert m.status == "optimal"
    assert m.lower_bound <= best + 1e-9
    assert m.objective == pytest.approx(best, rel=1e-9, abs=1e-12)


MAKERS = {"statistical_parity": rf.statistical_parity, "predictive_equality": rf.predictive_equality,
          "equal_opportunity": rf.equal_opportunity, "equalized_odds": rf.equalized_odds}

# instances where the bound binds and the constrained optimum does not predict every row alike
BINDING = [("statistical_parity", 4, 0.1), ("statistical_parity", 4, 0.05), ("predictive_equality", 4, 0.05),
           ("predictive_equality", 7, 0.1), ("equal_opportunity", 1, 0.05), ("equal_opportunity", 6, 0.05),
           ("equalized_odds", 4, 0.1), ("equalized_odds", 4, 0.15)]


@pytest.mark.parametrize("notion, seed, max_diff", [b if i % 2 == 0 else pytest.param(*b, marks=pytest.mark.slow)
                                                 for i, b in enumerate(BINDING)])  # one of each notion by default
def test_difference_bound_reaches_the_constrained_optimum(notion, seed, max_diff):
    df = make(seed)
    cols = ["x1", "x2", "x3"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.SmallGroupWarning)
        m = fit(df, cols, MAKERS[notion]("g", at_risk=0.5, max_diff=max_diff))
    best = oracle(df, cols, notion, max_diff=max_diff)
    agree(m, best)
    assert _holds(fitted_rates(m, df, notion), max_diff=max_diff)
    free = oracle(df, cols, notion, max_diff=1.0)
    assert best > free + 1e-4  # the bound binds: without it the optimum is unfair
    assert 0 < (m.predict(df) >= 0.5).mean() < 1
    (row,) = m.training.constraint_values
    assert row["value"] <= max_diff and row["slack"] >= 0


def test_conditional_statistical_parity():
    df = make(7, n=80)
    cols = ["x1", "x2", "x3"]
    m = fit(df, cols, rf.conditional_statistical_parity("g", given="legit", max_diff=0.1))
    best = oracle(df, cols, "conditional_statistical_parity", max_diff=0.1)
    agree(m, best)
    assert best > oracle(df, cols, "conditional_statistical_parity", max_diff=1.0) + 1e-4
    assert _holds(fitted_rates(m, df, "conditional_statistical_parity"), max_diff=0.1)


@pytest.mark.parametrize("seed", [5, 7])
def test_four_fifths_ratio(seed):
    df = make(seed, n=70)
    cols = ["x1", "x2", "x3"]
    c = rf.statistical_parity("g", at_risk=0.6, max_diff=None, min_ratio=0.8)
    m = fit(df, cols, c)
    best = oracle(df, cols, "statistical_parity", at_risk=0.6, min_ratio=0.8)
    agree(m, best)
    assert best > oracle(df, cols, "statistical_parity", at_risk=0.6, max_diff=1.0) + 1e-4
    rates = fitted_rates(m, df, "statistical_parity", at_risk=0.6)
    assert _holds(rates, min_ratio=0.8)
    (v,) = [r["value"] for r in m.training.constraint_values]
    r = rates["all"]
    assert v == pytest.approx(float(min(r.values()) / max(r.values())) if max(r.values()) > 0 else 1.0)


def test_three_groups_and_a_one_sided_reference():
    df = make(8, n=75, groups=("a", "b", "c"))
    cols = ["x1", "x2", "x3"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.SmallGroupWarning)
        m = fit(df, cols, rf.equal_opportunity("g", max_diff=0.05, reference="b", side="below"))
        both = fit(df, cols, rf.equal_opportunity("g", max_diff=0.05))
    best = oracle(df, cols, "equal_opportunity", max_diff=0.05, reference="b", side="below")
    agree(m, best)
    assert _holds(fitted_rates(m, df, "equal_opportunity"), max_diff=0.05, reference="b", side="below")
    agree(both, oracle(df, cols, "equal_opportunity", max_diff=0.05))
    assert m.objective < both.objective - 1e-4  # one-sided is looser here
    assert best > oracle(df, cols, "equal_opportunity", max_diff=1.0) + 1e-4


def test_cut_off_on_the_score():
    df = make(8)
    cols = ["x1", "x2", "x3"]
    m = fit(df, cols, rf.statistical_parity("g", at_score=2, max_diff=0.1))
    best = oracle(df, cols, "statistical_parity", at_score=2, max_diff=0.1)
    agree(m, best)
    assert best > oracle(df, cols, "statistical_parity", at_score=2, max_diff=1.0) + 1e-4
    assert _holds(fitted_rates(m, df, "statistical_parity", at_score=2), max_diff=0.1)


def test_sample_weights_count_as_copies():
    df = make(10, n=50, weights=True)
    cols = ["x1", "x2", "x3"]
    m = fit(df, cols, rf.statistical_parity("g", max_diff=0.1), weights="w")
    best = oracle(df, cols, "statistical_parity", max_diff=0.1, weights="w")
    agree(m, best)
    assert best > oracle(df, cols, "statistical_parity", max_diff=1.0, weights="w") + 1e-4
    assert _holds(fitted_rates(m, df, "statistical_parity", weights="w"), max_diff=0.1)


def test_real_valued_predictor_with_the_margin():
    df = make(10, n=50, real=True)
    cols = ["x1", "x2", "x3"]
    m = fit(df, cols, rf.equal_opportunity("g", max_diff=0.05), lo=-1, hi=2)
    best = oracle(df, cols, "equal_opportunity", max_diff=0.05, lo=-1, hi=2)
    agree(m, best)
    assert best > oracle(df, cols, "equal_opportunity", max_diff=1.0, lo=-1, hi=2) + 1e-4
    assert _holds(fitted_rates(m, df, "equal_opportunity"), max_diff=0.05)


def test_penalty_form():
    df = make(13)
    cols = ["x1", "x2", "x3"]
    free = rf.risk_score("y ~ x1 + x2 + x3", df, max_size=2, coef_range=(-2, 2), time_limit=30)
    for weight in (0.2, 2.0):
        m = fit(df, cols, rf.statistical_parity("g", max_diff=None, weight=weight))
        agree(m, oracle(df, cols, "statistical_parity", penalty=weight))
        rates = fitted_rates(m, df, "statistical_parity")
        assert m.objective == pytest.approx(m.loss + 1e-6 * m.size + weight * float(_worst_diff(rates)), abs=1e-12)
    assert m.coef.to_dict() != free.coef.to_dict()  # a heavy penalty changes the score


def test_score_balance_among_events():
    df = make(13)
    cols = ["x1", "x2", "x3"]
    y, g = df["y"].to_numpy(), df["g"].to_numpy()
    X = df[cols].to_numpy(float)

    def balanced(lam, b, pred, s):
        mean = [Fraction(int((X[(y == 1) & (g == k)] @ lam).sum()), int(((y == 1) & (g == k)).sum())) for k in "ab"]
        return abs(mean[0] - mean[1]) <= Fraction(1, 4)

    m = fit(df, cols, rf.score_balance("g", among="events", max_diff=0.25))
    best = oracle(df, cols, None, check=balanced)
    agree(m, best)
    assert best > oracle(df, cols, None, check=lambda *a: True) + 1e-4
    (row,) = m.training.constraint_values
    s = m.score(df)
    means = s[(y == 1)].groupby(g[y == 1]).mean()
    assert row["value"] == pytest.approx(abs(means["a"] - means["b"])) and row["value"] <= 0.25 + 1e-12


def test_loose_bound_changes_nothing():
    df = make(13)
    cols = ["x1", "x2", "x3"]
    free = rf.risk_score("y ~ x1 + x2 + x3", df, max_size=2, coef_range=(-2, 2), time_limit=30)
    loose = fit(df, cols, rf.equalized_odds("g", max_diff=1.0))
    assert loose.objective == pytest.approx(free.objective, rel=1e-12)
