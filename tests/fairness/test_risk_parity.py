"""Parity of mean predicted risk and calibration within groups against brute force: on tiny
instances every integer score (points and intercept) is enumerated, the notion is checked on the
true risks by code that shares nothing with the package, and the fit must

* reach the true constrained optimum (objective equal to the enumeration's minimum),
* never report a lower bound above it,
* satisfy the constraint on the training rows.
"""

from __future__ import annotations

import itertools
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf

from test_fairness_bruteforce import make

COLS = ["x1", "x2", "x3"]
FORMULA = "y ~ x1 + x2 + x3"
END = 28  # scores beyond ±28 (risks within 1e-12 of 0 or 1) pool into one level per end


def _sigma(s):
    return 1.0 / (1.0 + np.exp(-np.asarray(s, float)))


def mean_risk_gap(risk, y, g, among, reference=None, side="both"):
    """Largest difference of the groups' mean risk among the rows of ``among``."""
    mask = {"all": np.ones(len(y), bool), "events": y == 1, "non_events": y == 0}[among]
    means = {k: float(risk[mask & (g == k)].mean()) for k in sorted(set(g[mask]))}
    if reference is None:
        return max(means.values()) - min(means.values())
    ref = means[reference]
    gaps = [(v - ref) if side == "above" else (ref - v) if side == "below" else abs(v - ref)
            for k, v in means.items() if k != reference]
    return max(gaps)


def calibration_error(total, y, g, scale=1):
    """Largest |observed − expected events| / group rows over groups and (pooled) score levels."""
    end = math.ceil(END * scale)
    level = np.clip(total, -end, end)
    risk = _sigma(np.asarray(total, float) / scale)
    worst = 0.0
    for k in sorted(set(g)):
        m = g == k
        for lv in np.unique(level[m]):
            at = m & (level == lv)
            worst = max(worst, abs(float(y[at].sum() - risk[at].sum())) / m.sum())
    return worst


def oracle(df, check, *, lo=-2, hi=2, max_size=2, c0=1e-6, b_range=(-40, 40), penalty=None, scale=1):
    """The minimum objective over every integer score whose risks pass ``check(total)`` (or, with
    ``penalty``, of loss + penalty(total)); on score scale ``scale`` the logit is total / scale."""
    X = df[COLS].to_numpy(float)
    y = df["y"].to_numpy()
    best = math.inf
    for lam in itertools.product(range(lo, hi + 1), repeat=len(COLS)):
        lam = np.array(lam, float)
        if np.count_nonzero(lam) > max_size:
            continue
        base = X @ lam
        for b in range(b_range[0], b_range[1] + 1):
            s = b + base
            t = s / scale
            obj = float(np.mean(y * np.logaddexp(0, -t) + (1 - y) * np.logaddexp(0, t))) + c0 * np.count_nonzero(lam)
            if penalty is not None:
                obj += penalty(s)
            elif not check(s):
                continue
            best = min(best, obj)
    return best


def min_calibration_error(df, *, lo=-2, hi=2, max_size=2, b_range=(-40, 40)):
    """The least calibration error of any integer score."""
    X = df[COLS].to_numpy(float)
    y, g = df["y"].to_numpy(), df["g"].to_numpy()
    return min(calibration_error(b + X @ np.array(lam, float), y, g)
               for lam in itertools.product(range(lo, hi + 1), repeat=len(COLS)) if np.count_nonzero(lam) <= max_size
               for b in range(b_range[0], b_range[1] + 1))


def fit(df, constraint, *, lo=-2, hi=2, max_size=2, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.SmallGroupWarning)
        # the limit is a safety net: these searches end by their tolerance (about 30 s on a quiet machine for
        # the slowest), and a loaded machine must not turn them into failures
        return rf.risk_score(FORMULA, df, max_size=max_size, coef_range=(lo, hi), time_limit=300,
                             constraints=[constraint], **kw)


def total(m, df):
    return (m.intercept + m.score(df)).to_numpy()


def shown_in_reports(m, df, quantity):
    """The summary's fairness table and the audit list the constraint with its training value."""
    (c,) = m.constraints
    t = m.summary().fairness_table()
    assert list(t["constraint"]) == [c.describe()] and t["quantity"].iloc[0].startswith(quantity)
    assert t["slack"].iloc[0] >= 0 and t["value"].iloc[0] <= t["bound"].iloc[0]
    audit = m.fairness(df, by="g")
    a = audit.constraints
    assert a["training_value"].iloc[0] == pytest.approx(a["value"].iloc[0], abs=1e-12)  # audited on training rows
    assert c.describe() in str(audit)


def agree(m, best):
    assert m.status == "optimal"
    assert m.lower_bound <= best + 1e-9
    assert m.objective == pytest.approx(best, rel=1e-9, abs=1e-12)


# --- parity of mean predicted risk ----------------------------------------------------------

# (among, seed, max_diff): the bound binds, the constrained optimum is not a constant score
PARITY = [("all", 4, 0.037), ("events", 4, 0.03), ("non_events", 13, 0.03)]


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("among, seed, max_diff", PARITY)
def test_risk_parity_reaches_the_constrained_optimum(among, seed, max_diff):
    df = make(seed, n=40)
    y, g = df["y"].to_numpy(), df["g"].to_numpy()
    m = fit(df, rf.risk_parity("g", among=among, max_diff=max_diff))
    best = oracle(df, lambda s: mean_risk_gap(_sigma(s), y, g, among) <= max_diff)
    agree(m, best)
    assert best > oracle(df, lambda s: True) + 1e-4  # the bound binds
    assert m.size > 0
    gap = mean_risk_gap(m.predict(df).to_numpy(), y, g, among)
    assert gap <= max_diff
    (row,) = m.training.constraint_values
    assert row["value"] == pytest.approx(gap, abs=1e-12) and row["slack"] >= 0 and row["bound"] == max_diff
    shown_in_reports(m, df, f"mean predicted risk among {among.replace('_', '-')}")


def test_risk_parity_one_sided_against_a_reference():
    df = make(4, n=40)
    y, g = df["y"].to_numpy(), df["g"].to_numpy()
    c = rf.risk_parity("g", among="events", max_diff=0.02, reference="b", side="below")
    m = fit(df, c)
    best = oracle(df, lambda s: mean_risk_gap(_sigma(s), y, g, "events", "b", "below") <= 0.02)
    agree(m, best)
    assert mean_risk_gap(m.predict(df).to_numpy(), y, g, "events", "b", "below") <= 0.02
    both = oracle(df, lambda s: mean_risk_gap(_sigma(s), y, g, "events") <= 0.02)
    assert best < both - 1e-4  # one-sided is looser here


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_risk_parity_penalty():
    df = make(4, n=40)
    y, g = df["y"].to_numpy(), df["g"].to_numpy()
    m = fit(df, rf.risk_parity("g", max_diff=None, weight=1.0))
    best = oracle(df, None, penalty=lambda s: 1.0 * mean_risk_gap(_sigma(s), y, g, "all"))
    agree(m, best)
    free = oracle(df, lambda s: True)
    assert m.loss > free + 1e-4  # the penalty moves the score away from the unconstrained optimum
    gap = mean_risk_gap(m.predict(df).to_numpy(), y, g, "all")
    assert m.objective == pytest.approx(m.loss + 1e-6 * m.size + gap, abs=1e-9)


def test_sample_weights_count_as_copies():
    df = make(10, n=30, weights=True)
    c = rf.risk_parity("g", among="events", max_diff=0.03)
    m = fit(df, c, weights="w")
    copies = df.loc[df.index.repeat(df["w"])].reset_index(drop=True)
    y, g = copies["y"].to_numpy(), copies["g"].to_numpy()
    best = oracle(copies, lambda s: mean_risk_gap(_sigma(s), y, g, "events") <= 0.03)
    agree(m, best)
    assert best > oracle(copies, lambda s: True) + 1e-4
    gap = mean_risk_gap(m.predict(copies).to_numpy(), y, g, "events")
    assert gap <= 0.03 and m.training.constraint_values[0]["value"] == pytest.approx(gap, abs=1e-12)


@pytest.mark.slow  # 15-40 s on two busy cores (the fit's search)
def test_intersectional_groups_against_a_reference():
    df = make(4, n=40)
    m = fit(df, rf.risk_parity(["g", "legit"], max_diff=0.1, reference=["a", "hi"]))
    risk = m.predict(df).to_numpy()
    key = list(zip(df["g"], df["legit"]))
    means = {k: float(np.mean([r for r, kk in zip(risk, key) if kk == k])) for k in set(key)}
    assert len(means) == 4
    gap = max(abs(v - means[("a", "hi")]) for k, v in means.items() if k != ("a", "hi"))
    (row,) = m.training.constraint_values
    assert row["value"] == pytest.approx(gap, abs=1e-12) and gap <= 0.1
    assert "gap to ('a', 'hi')" in row["quantity"]


# --- calibration within groups --------------------------------------------------------------

@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("seed, max_diff", [(1, 0.081), (4, 0.05)])
def test_calibration_within_groups_reaches_the_constrained_optimum(seed, max_diff):
    df = make(seed, n=40)
    y, g = df["y"].to_numpy(), df["g"].to_numpy()
    m = fit(df, rf.calibration_within_groups("g", max_diff=max_diff))
    best = oracle(df, lambda s: calibration_error(s, y, g) <= max_diff)
    agree(m, best)
    assert best > oracle(df, lambda s: True) + 1e-4  # the bound binds
    err = calibration_error(total(m, df), y, g)
    assert err <= max_diff
    (row,) = m.training.constraint_values
    assert row["value"] == pytest.approx(err, abs=1e-12) and row["slack"] >= 0
    shown_in_reports(m, df, "calibration per score level")


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_calibration_infeasible_names_the_constraint_and_the_tightest_bound():
    df = make(6, n=40)
    c = rf.calibration_within_groups("g", max_diff=0.01)
    with pytest.raises(rf.InfeasibleProblemError, match=r"calibration_within_groups\('g', max_diff=0.01\)") as e:
        fit(df, c)
    hint = float(re.search(r"needs max_diff ≥ about ([0-9.]+)", str(e.value)).group(1))
    tightest = min_calibration_error(df)
    assert tightest > 0.01
    assert tightest - 1e-3 <= hint <= tightest + 0.01  # bisection from 0.01 to 1 in 8 steps, 3 digits shown


# --- values by hand -----------------------------------------------------------------------

def test_hand_computed_mean_risk_and_calibration():
    df = make(4, n=40)
    m = rf.risk_score(FORMULA, df, max_size=1, coef_range={"x1": (2, 2), "default": (0, 0)}, intercept_range=(-1, -1),
                      time_limit=10)
    assert (m.intercept, m.coef["x1"]) == (-1, 2)
    # group a: x1 = 1, 1, 0 (y = 1, 0, 1); group b: x1 = 0, 0 (y = 0, 0)
    hand = pd.DataFrame({"y": [1, 0, 1, 0, 0], "x1": [1, 1, 0, 0, 0], "x2": 0, "x3": 0, "g": list("aaabb")})
    e = math.e
    risk_hi, risk_lo = 1 / (1 + e ** -1), 1 / (1 + e)  # scores 1 and −1
    mean_a, mean_b = (2 * risk_hi + risk_lo) / 3, risk_lo
    (row,) = rf.risk_parity("g", max_diff=0.5).assess(m, hand)
    assert row["value"] == pytest.approx(mean_a - mean_b, abs=1e-15)
    assert row["slack"] == pytest.approx(0.5 - (mean_a - mean_b), abs=1e-15)
    (row,) = rf.risk_parity("g", among="events", max_diff=0.5).assess(m, hand)
    assert np.isnan(row["value"])  # only group a has events: nothing to compare
    (row,) = rf.risk_parity("g", among="non_events", max_diff=0.5).assess(m, hand)
    assert row["value"] == pytest.approx(risk_hi - risk_lo, abs=1e-15)
    t = rf.calibration_within_groups("g", max_diff=0.5).errors(m, hand).set_index(["group", "level"])
    # group a: level 1 has 2 rows, 1 event; level −1 has 1 row, 1 event; group b: level −1, 2 rows, no event
    assert t.loc[("a", 1), "error"] == pytest.approx(abs(1 - 2 * risk_hi) / 3, abs=1e-15)
    assert t.loc[("a", -1), "error"] == pytest.approx((1 - risk_lo) / 3, abs=1e-15)
    assert t.loc[("b", -1), "error"] == pytest.approx(2 * risk_lo / 2, abs=1e-15)
    (row,) = rf.calibration_within_groups("g", max_diff=0.5).assess(m, hand)
    assert row["value"] == pytest.approx(max((1 - risk_lo) / 3, risk_lo, abs(1 - 2 * risk_hi) / 3), abs=1e-15)


def test_small_groups_warn():
    df = make(4, n=40)
    with pytest.warns(rf.SmallGroupWarning, match="risk_parity"):
        rf.risk_score(FORMULA, df, max_size=2, coef_range=(-2, 2), time_limit=60,
                      constraints=[rf.risk_parity("g", max_diff=1.0)])


# --- a loose bound --------------------------------------------------------------------------

def test_loose_bounds_change_nothing():
    df = make(13, n=40)
    free = rf.risk_score(FORMULA, df, max_size=2, coef_range=(-2, 2), time_limit=30)
    for c in (rf.risk_parity("g", among="events", max_diff=1.0), rf.calibration_within_groups("g", max_diff=1.0)):
        loose = fit(df, c)
        assert loose.objective == pytest.approx(free.objective, rel=1e-12)
        assert loose.coef.to_dict() == free.coef.to_dict() and loose.intercept == free.intercept


# --- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(among="positives"), "among"),
    (dict(max_diff=-0.1), "max_diff"),
    (dict(max_diff=1.5), "max_diff"),
    (dict(max_diff="0.1"), "max_diff"),
    (dict(max_diff=True), "max_diff"),
    (dict(max_diff=None), "needs `max_diff`"),
    (dict(weight=0), "weight"),
    (dict(side="above"), "reference"),
    (dict(side="up", reference="a"), "side"),
])
def test_risk_parity_bad_arguments(kwargs, match):
    with pytest.raises(rf.SettingsError, match=match):
        rf.risk_parity("g", **kwargs)


def test_bad_arguments_and_data():
    with pytest.raises(rf.SettingsError, match="`by`"):
        rf.risk_parity(3)
    with pytest.raises(rf.SettingsError, match="max_diff"):
        rf.calibration_within_groups("g", max_diff=None)
    with pytest.raises(rf.SettingsError, match="max_diff"):
        rf.calibration_within_groups("g", max_diff=2)
    df = make(4, n=40)
    with pytest.raises(rf.SettingsError, match="not a group"):
        fit(df, rf.risk_parity("g", max_diff=0.1, reference="z"))
    with pytest.raises(rf.SettingsError, match="only one group"):
        fit(df.assign(g="a"), rf.risk_parity("g", max_diff=0.1))
    with pytest.raises(rf.SettingsError, match="not a column"):
        fit(df, rf.calibration_within_groups("race", max_diff=0.1))
    real = make(4, n=40, real=True)
    with pytest.raises(rf.SettingsError, match=r"integer scores.*x3.*threshold"):
        fit(real, rf.risk_parity("g", max_diff=0.1))


# --- on a score scale other than 1 ------------------------------------------------------------

@pytest.mark.slow  # 12-45 s on two busy cores (the fit's search)
def test_risk_parity_on_a_fixed_score_scale():
    """With scale m the risk of a total score s is σ(s/m): the levels and their risks follow it."""
    df = make(4, n=40)
    y, g = df["y"].to_numpy(), df["g"].to_numpy()
    m = fit(df, rf.risk_parity("g", max_diff=0.037), scale=2)
    assert m.scale == 2
    best = oracle(df, lambda s: mean_risk_gap(_sigma(s / 2), y, g, "all") <= 0.037, b_range=(-80, 80), scale=2)
    agree(m, best)
    assert best > oracle(df, lambda s: True, b_range=(-80, 80), scale=2) + 1e-4  # the bound binds
    assert mean_risk_gap(m.predict(df).to_numpy(), y, g, "all") <= 0.037


@pytest.mark.slow  # 30-60 s on two busy cores (the fit's search)
def test_calibration_within_groups_on_a_fixed_score_scale():
    df = make(4, n=40)
    y, g = df["y"].to_numpy(), df["g"].to_numpy()
    m = fit(df, rf.calibration_within_groups("g", max_diff=0.05), scale=2)
    best = oracle(df, lambda s: calibration_error(s, y, g, scale=2) <= 0.05, b_range=(-80, 80), scale=2)
    agree(m, best)
    assert calibration_error(total(m, df), y, g, scale=2) <= 0.05
    (row,) = m.training.constraint_values
    assert row["value"] == pytest.approx(calibration_error(total(m, df), y, g, scale=2), abs=1e-12)


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_json_round_trip_keeps_the_risk_constraints():
    df = make(4, n=40)
    m = fit(df, rf.risk_parity("g", among="events", max_diff=0.1, reference="b", side="below"))
    m2 = rf.from_json(m.to_json())
    assert m2.constraints == m.constraints
    assert m2.summary().fairness_table().equals(m.summary().fairness_table())
    c = fit(df, rf.calibration_within_groups("g", max_diff=0.081))
    c2 = rf.from_json(c.to_json())
    assert c2.constraints == c.constraints
    assert (c2.predict(df) == c.predict(df)).all()
