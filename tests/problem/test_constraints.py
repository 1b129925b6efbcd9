"""Operational constraints: each kind gives exactly the brute-force optimum under its definition."""

import itertools

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.errors import InfeasibleProblemError, SettingsError

LO, HI = -2, 2
B_LO, B_HI = -8, 8
C0 = 1e-6
COLS = ["a", "b", "c", "C(f)[T.q]", "C(f)[T.r]"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n = 90
    df = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 2, n), "c": rng.integers(0, 2, n),
                       "f": rng.choice(["p", "q", "r"], n)})
    z = -1.0 + 1.5 * df.a - 1.2 * df.b + 0.4 * df.c + 1.0 * (df.f == "q") + 2.0 * (df.f == "r")
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-z))).astype(int)
    return df


@pytest.fixture(scope="module")
def grid(data):
    """Every (intercept, points) within the bounds, with its objective."""
    X = np.column_stack([data.a, data.b, data.c, data.f == "q", data.f == "r"]).astype(float)
    y = data.y.to_numpy()
    pts = np.array(list(itertools.product(range(LO, HI + 1), repeat=5)), float)
    b = np.arange(B_LO, B_HI + 1, dtype=float)
    lam = np.repeat(pts, len(b), axis=0)
    b0 = np.tile(b, len(pts))
    s = X @ lam.T + b0
    loss = (np.logaddexp(0, -s) * y[:, None] + np.logaddexp(0, s) * (1 - y[:, None])).mean(axis=0)
    return lam, b0, loss


def brute(grid, ok=lambda lam, b0: np.ones(len(lam), bool), max_size=5, factor_as_one=False):
    lam, b0, loss = grid
    nz = lam != 0
    size = nz[:, :3].sum(1) + (nz[:, 3:].any(1).astype(int) if factor_as_one else nz[:, 3:].sum(1))
    obj = loss + C0 * nz.sum(1)
    feas = ok(lam, b0) & (size <= max_size)
    return float(obj[feas].min())


def fit(data, **kw):
    kw.setdefault("max_size", 5)
    return rf.risk_score("y ~ a + b + c + C(f)", data, coef_range=(LO, HI), intercept_range=(B_LO, B_HI),
                         c0=C0, time_limit=30, **kw)


def col(name):
    return COLS.index(name)


def check(model, best):
    assert model.status == "optimal"
    assert model.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert model.lower_bound <= best + 1e-9


def test_unconstrained_matches_brute_force(data, grid):
    check(fit(data), brute(grid))


def test_sign(data, grid):
    m = fit(data, constraints=[rf.sign("b", "+")])
    check(m, brute(grid, lambda lam, b0: lam[:, col("b")] >= 0))
    assert m.coef["b"] >= 0


def test_sign_on_factor_covers_every_level(data, grid):
    m = fit(data, constraints=[rf.sign("C(f)", "-")])
    check(m, brute(grid, lambda lam, b0: (lam[:, 3:] <= 0).all(1)))


def test_at_most_and_not_both(data, grid):
    rule = lambda lam, b0: (lam[:, col("a")] != 0).astype(int) + (lam[:, col("b")] != 0) <= 1  # noqa: E731
    check(fit(data, constraints=[rf.at_most(1, "a", "b")]), brute(grid, rule))
    check(fit(data, constraints=[rf.not_both("a", "b")]), brute(grid, rule))


def test_at_most_counts_a_factor_once(data, grid):
    def rule(lam, b0):
        return (lam[:, col("a")] != 0).astype(int) + (lam[:, 3:] != 0).any(1) <= 1
    check(fit(data, constraints=[rf.at_most(1, "a", "C(f)")]), brute(grid, rule))


def test_at_least(data, grid):
    m = fit(data, max_size=2, constraints=[rf.at_least(1, "c")])
    check(m, brute(grid, lambda lam, b0: lam[:, col("c")] != 0, max_size=2))
    assert m.coef["c"] != 0


def test_implies(data, grid):
    def rule(lam, b0):
        return (lam[:, col("a")] == 0) | (lam[:, col("c")] != 0)
    m = fit(data, max_size=2, constraints=[rf.implies("a", any_of=["c"])])
    check(m, brute(grid, rule, max_size=2))


def test_factor_counts_once(data, grid):
    best = brute(grid, max_size=2, factor_as_one=True)
    check(fit(data, max_size=2, factors_as_one=True), best)
    m = fit(data, max_size=2, constraints=[rf.one_variable("C(f)")])
    check(m, best)
    assert m.size <= 2


def test_max_thresholds_limits_columns(data, grid):
    m = fit(data, constraints=[rf.max_thresholds(1, "C(f)")])
    check(m, brute(grid, lambda lam, b0: (lam[:, 3:] != 0).sum(1) <= 1))


def test_risk_at_least_and_at_most(data, grid):
    z = np.log(0.9 / 0.1)

    def lo_rule(lam, b0):
        return b0 + lam[:, col("a")] + lam[:, col("C(f)[T.r]")] >= z
    m = fit(data, constraints=[rf.risk_at_least(0.9, when={"a": 1, "f": "r"})])
    check(m, brute(grid, lo_rule))
    row = pd.DataFrame({"a": [1], "b": [0], "c": [0], "f": ["r"]})
    assert m.predict(row).iloc[0] >= 0.9 - 1e-12

    def hi_rule(lam, b0):
        return b0 <= np.log(0.2 / 0.8)
    m = fit(data, constraints=[rf.risk_at_most(0.2, when={"a": 0})])
    check(m, brute(grid, hi_rule))


def test_slack_constraint_returns_unconstrained_optimum(data, grid):
    free = fit(data)
    m = fit(data, constraints=[rf.at_most(5, "a", "b", "c"), rf.sign("C(f)", "+")])
    assert m.objective == pytest.approx(free.objective, rel=1e-9)
    assert m.coef.equals(free.coef)


def test_infeasible_names_the_conflict(data):
    with pytest.raises(InfeasibleProblemError) as e:
        fit(data, max_size=3, constraints=[rf.sign("a", "+"), rf.at_least(2, "a", "b"),
                                           rf.at_most(1, "a", "b")])
    msg = str(e.value)
    assert "at_least(2, 'a', 'b')" in msg and "at_most(1, 'a', 'b')" in msg
    assert "sign" not in msg


def test_infeasible_with_model_size(data):
    with pytest.raises(InfeasibleProblemError, match=r"max_size=1"):
        fit(data, max_size=1, constraints=[rf.at_least(2, "a", "b", "c")])


def test_unknown_name_and_bad_arguments(data):
    with pytest.raises(SettingsError, match="not a term"):
        fit(data, constraints=[rf.at_most(1, "a", "nope")])
    with pytest.raises(SettingsError, match="'\\+'"):
        rf.sign("a", "up")
    with pytest.raises(SettingsError, match="between 0 and 1"):
        rf.risk_at_least(1.5, when={"a": 1})
    with pytest.raises(SettingsError, match="constraints"):
        fit(data, constraints=["a <= 1"])
    with pytest.raises(SettingsError, match=r"count first.*at_least\(2, 'age'"):
        rf.at_least(["a", "b"], 2)  # arguments the wrong way round


def test_summary_lists_constraints(data):
    m = fit(data, constraints=[rf.not_both("a", "b")])
    text = str(m.summary())
    assert "Constraints and thresholds" in text and "not_both('a', 'b')" in text
    assert m.constraints[0].describe() == "not_both('a', 'b')"
    assert "constraints" in m.summary().tables


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_side_information_on_a_threshold_without_intercept_range():
    df = rf.synthetic_thresholds(120, 1, seed=4, min_class_share=0.2)
    cons = [rf.risk_at_least(0.99, when={"x1": 0.0}), rf.risk_at_most(0.01, when={"x1": 1.0})]
    # every gap a candidate (the two profiles sit at the ends of x1's range): certified in seconds
    m = rf.risk_score("y ~ threshold(x1, min_bin=0)", df, time_limit=20, constraints=cons)
    risk = m.predict(pd.DataFrame({"x1": [0.0, 1.0]})).to_numpy()
    assert risk[0] >= 0.99 - 1e-12 and risk[1] <= 0.01 + 1e-12
    assert m.status == "optimal"
    with pytest.raises(InfeasibleProblemError, match="risk_at_least"):
        rf.risk_score("y ~ threshold(x1, k=1)", df, time_limit=20, coef_range=(-2, 2), constraints=cons)
