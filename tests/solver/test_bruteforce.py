"""Optimality of the fitted risk score against brute-force enumeration.

On small random instances every integer point vector within the bounds and size limits is
enumerated, each with its best integer intercept (every integer in a range that provably holds
the best one), to get the true minimum of

    mean logistic loss (normalised by the sum of the sample weights, events' loss multiplied by
    ``positive_weight``) + c0 · (number of nonzero points).

The enumeration below shares no code with the package: it collapses identical rows itself and
evaluates the loss with ``np.logaddexp``.  The worst bug this project can have is a lower bound
above the optimum, so that is checked on every run, also when the solver is stopped early.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import signal
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from riskformula.solver.options import SearchOptions
import riskformula as rf
from riskformula.errors import OptimalityGapWarning
from riskformula.problem import LogisticLoss, RiskProblem
from riskformula.solver import BranchAndCut
from conftest import slow_params


# --- a watchdog: a hung solver must fail the test, not stall the suite --------------------

class Hang(Exception):
    """The code under test ran far past its time limit."""


@contextlib.contextmanager
def deadline(seconds: float):
    """Raise :class:`Hang` in the main thread once ``seconds`` of wall time have passed."""
    def on_alarm(signum, frame):
        raise Hang(f"still running after {seconds} s: the solver ignores its time limit")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(autouse=True)
def _no_test_hangs(request):
    # a slow test's fit may take minutes on a loaded machine; its own time limit is then the net
    with deadline(900 if request.node.get_closest_marker("slow") else 60):
        yield


# --- the oracle ---------------------------------------------------------------------------

@dataclass
class Instance:
    X: np.ndarray          # (n, d) predictors
    y: np.ndarray          # (n,) 0/1
    w: np.ndarray | None   # sample weights or None
    pw: float              # positive_weight
    lo: tuple              # per-column lower bound of nonzero points
    hi: tuple              # per-column upper bound
    c0: float
    max_size: int
    min_size: int = 0
    b_range: tuple | None = None  # a user's intercept_range; None: unrestricted

    @property
    def d(self):
        return self.X.shape[1]

    def frame(self) -> pd.DataFrame:
        df = pd.DataFrame(self.X, columns=[f"x{j}" for j in range(self.d)])
        df["y"] = self.y
        if self.w is not None:
            df["w"] = self.w
        return df

    def formula(self) -> str:
        return "y ~ " + " + ".join(f"x{j}" for j in range(self.d))


def my_objective(inst: Instance, intercept: float, points) -> float:
    """Objective of one model, straight from the definition (raw rows, no collapsing)."""
    w = np.ones(len(inst.y)) if inst.w is None else np.asarray(inst.w, float)
    s = intercept + inst.X @ np.asarray(points, float)
    row_loss = np.where(inst.y == 1, inst.pw * np.logaddexp(0.0, -s), np.logaddexp(0.0, s))
    return float(w @ row_loss / w.sum() + inst.c0 * np.count_nonzero(points))


def brute_force(inst: Instance):
    """True minimum objective, with one optimal (intercept, points)."""
    w = np.ones(len(inst.y)) if inst.w is None else np.asarray(inst.w, float)
    W = w.sum()
    # collapse identical rows: per unique row, total event weight and non-event weight
    uniq, inv = np.unique(inst.X, axis=0, return_inverse=True)
    inv = inv.ravel()
    wp = np.bincount(inv, weights=w * (inst.y == 1), minlength=len(uniq)) * inst.pw
    wn = np.bincount(inv, weights=w * (inst.y == 0), minlength=len(uniq))
    # every point vector: λ_j ∈ {0} ∪ [lo_j, hi_j]
    values = [sorted({0, *range(lo, hi + 1)}) for lo, hi in zip(inst.lo, inst.hi)]
    coefs = np.array(list(itertools.product(*values)), dtype=float).reshape(-1, inst.d)
    size = np.count_nonzero(coefs, axis=1)
    coefs = coefs[(size >= inst.min_size) & (size <= inst.max_size)]
    size = np.count_nonzero(coefs, axis=1)
    S = uniq @ coefs.T  # (unique rows, models)
    # for fixed scores the loss is convex in the intercept b and its real minimiser lies in
    # [-max s - |log(Wn/Wp)|, -min s + |log(Wn/Wp)|]; the best integer is within 1 of it
    M = int(math.ceil(np.abs(S).max() + abs(math.log(wn.sum() / wp.sum())))) + 3
    best = np.full(len(coefs), np.inf)
    best_b = np.zeros(len(coefs))
    b_lo, b_hi = inst.b_range or (-M, M)
    for b in range(b_lo, b_hi + 1):
        z = S + b
        loss = (wp @ np.logaddexp(0.0, -z) + wn @ np.logaddexp(0.0, z)) / W
        better = loss < best
        best[better], best_b[better] = loss[better], b
    obj = best + inst.c0 * size
    k = int(np.argmin(obj))
    assert inst.b_range or abs(best_b[k]) < M, "the intercept range of the oracle is too narrow"
    return float(obj[k]), int(best_b[k]), coefs[k].astype(int)


def random_instance(seed: int) -> Instance:
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(20, 201))
    d = int(rng.integers(2, 5))
    kind = ["binary", "binary", "small_int", "signed", "half"][seed % 5]
    if kind == "binary":
        X = rng.integers(0, 2, (n, d)).astype(float)
    elif kind == "small_int":
        X = rng.integers(0, 4, (n, d)).astype(float)
    elif kind == "signed":
        X = rng.integers(-1, 2, (n, d)).astype(float)
    else:  # non-integer predictors: the loss is not a table look-up
        X = rng.integers(0, 5, (n, d)) / 2.0
    beta = rng.normal(0, 1.2, d)
    lin = -0.3 + X @ beta - (X @ beta).mean()
    y = (rng.random(n) < 1 / (1 + np.exp(-lin))).astype(int)
    y[0], y[1] = 0, 1  # both classes
    r = int(rng.choice([2, 3]))
    c0 = float(rng.choice([1e-6, 0.01, 0.05]))
    weighted = seed % 3 == 1
    w = rng.integers(1, 4, n).astype(float) if weighted else None
    pw = float(rng.choice([1.0, 1.0, 0.5, 2.0, 3.0]))
    max_size = int(rng.integers(1, d + 1))
    return Instance(X, y, w, pw, (-r,) * d, (r,) * d, c0, max_size)


def _problem(inst: Instance) -> RiskProblem:
    loss = LogisticLoss(inst.X, inst.y, inst.w, inst.pw)
    return RiskProblem(loss, np.array(inst.lo, float), np.array(inst.hi, float), c0=inst.c0,
                       max_size=inst.max_size, min_size=inst.min_size, intercept_bounds=inst.b_range)


def _slack(v: float) -> float:
    return 1e-9 * (1.0 + abs(v))


def _fit(inst: Instance, **kw):
    coef_range = {"default": (inst.lo[0], inst.hi[0])}
    for j in range(inst.d):
        if (inst.lo[j], inst.hi[j]) != (inst.lo[0], inst.hi[0]):
            coef_range[f"x{j}"] = (inst.lo[j], inst.hi[j])
    return rf.risk_score(inst.formula(), inst.frame(), max_size=inst.max_size, min_size=inst.min_size,
                         coef_range=coef_range, c0=inst.c0, weights="w" if inst.w is not None else None,
                         positive_weight=inst.pw, intercept_range=inst.b_range, **kw)


def check_fitted(m, inst: Instance, true_min: float, rel: float = 1e-7):
    __tracebackhide__ = True
    assert m.lower_bound <= true_min + _slack(true_min), (
        f"lower bound {m.lower_bound!r} is above the true optimum {true_min!r}")
    assert m.status == "optimal"
    assert m.objective == pytest.approx(true_min, rel=rel, abs=0)
    points = m.coef.to_numpy()
    # the returned model is feasible and has the objective reported for it
    assert np.all((points == 0) | ((points >= np.array(inst.lo)) & (points <= np.array(inst.hi))))
    assert inst.min_size <= np.count_nonzero(points) <= inst.max_size
    assert my_objective(inst, m.intercept, points) == pytest.approx(m.objective, rel=1e-9, abs=0)
    assert m.loss == pytest.approx(m.objective - inst.c0 * np.count_nonzero(points), rel=1e-9, abs=1e-12)


# --- the oracle itself ------------------------------------------------------------------

def test_oracle_on_a_hand_computed_case():
    # two rows x=0 (y=0) and x=1 (y=1); with points (-2..2), c0 tiny the best model separates
    # them as much as allowed: b0 = -1, λ = 2 gives scores -1 and +1, loss log(1+e^-1)
    inst = Instance(np.array([[0.0], [1.0]]), np.array([0, 1]), None, 1.0, (-2,), (2,), 1e-6, 1)
    obj, b0, pts = brute_force(inst)
    assert (b0, pts.tolist()) == (-1, [2])
    assert obj == pytest.approx(math.log1p(math.exp(-1)) + 1e-6, rel=1e-12)
    # intercept-only (max_size 0): b0 = 0, loss log 2
    inst0 = Instance(inst.X, inst.y, None, 1.0, (-2,), (2,), 1e-6, 0)
    assert brute_force(inst0)[0] == pytest.approx(math.log(2), rel=1e-12)


def test_oracle_weights_and_positive_weight():
    inst = Instance(np.array([[0.0], [1.0], [1.0]]), np.array([0, 1, 0]), np.array([1.0, 2.0, 3.0]),
                    2.0, (-1,), (1,), 0.0, 1)
    # by definition: (1·ℓ0(s0) + 2·2·ℓ1(s1) + 3·ℓ0(s1)) / 6
    for b0, lam in [(0, 0), (-1, 1), (1, -1)]:
        s0, s1 = b0, b0 + lam
        expected = (math.log1p(math.exp(s0)) + 4 * math.log1p(math.exp(-s1)) + 3 * math.log1p(math.exp(s1))) / 6
        assert my_objective(inst, b0, [lam]) == pytest.approx(expected, rel=1e-12)


# --- risk_score against the oracle ----------------------------------------------------

@pytest.mark.parametrize("listing", [True, False], ids=["nodes listed", "tree only"])
@pytest.mark.parametrize("seed", slow_params(range(24), slow=range(12, 24)))
def test_risk_score_is_optimal_on_random_instances(seed, listing, monkeypatch):
    if not listing:  # the tree alone, without settling small nodes by scoring their points
        monkeypatch.setattr(BranchAndCut, "enumeration_work", 0)
    inst = random_instance(seed)
    true_min, _, _ = brute_force(inst)
    m = _fit(inst, gap_tolerance=1e-9, time_limit=60)
    check_fitted(m, inst, true_min)


@pytest.mark.parametrize("seed", range(24, 30))
def test_default_gap_tolerance_is_honoured(seed):
    """With the default tolerance (1e-6) the objective is within 1e-6 of the optimum."""
    inst = random_instance(seed)
    true_min, _, _ = brute_force(inst)
    m = _fit(inst)
    assert m.lower_bound <= true_min + _slack(true_min)
    assert m.status == "optimal"
    assert true_min - _slack(true_min) <= m.objective <= true_min * (1 + 1.01e-6)
    assert m.gap <= 1e-6


# Regression tests for three solver bugs found by this suite (all fixed):
# - min_size met by "used" terms with zero points (α_j = 1, λ_j = 0);
# - stopping at a node or time limit before any feasible model was reported as "infeasible";
# - endless re-cutting of an integral LP point violated within HiGHS' tolerance (time_limit ignored).


def _min_size_instance(seed):
    inst = random_instance(100 + seed)
    inst.min_size = int(np.random.default_rng(seed).integers(1, inst.d + 1))
    inst.max_size = max(inst.max_size, inst.min_size)
    inst.c0 = 0.05  # a real price per term, so min_size can bind
    return inst


def _binds(inst):
    free = Instance(**{**inst.__dict__, "min_size": 0})
    return brute_force(inst)[0] > brute_force(free)[0] + 1e-9


@pytest.mark.parametrize("seed", [1, 4])
def test_min_size_not_binding(seed):
    inst = _min_size_instance(seed)
    assert not _binds(inst)
    true_min, _, _ = brute_force(inst)
    check_fitted(_fit(inst, gap_tolerance=1e-9), inst, true_min)


@pytest.mark.parametrize("seed", [0, 2, 3, 5])
def test_min_size_binding(seed):
    inst = _min_size_instance(seed)
    assert _binds(inst)
    true_min, _, _ = brute_force(inst)
    check_fitted(_fit(inst, gap_tolerance=1e-9), inst, true_min)


@pytest.mark.parametrize("lo", [1, 2])
def test_min_size_with_positive_lower_bound(lo):
    """With nonzero points forced (lo ≥ 1) α_j = 1 implies λ_j ≠ 0, so min_size works."""
    inst = _min_size_instance(0)
    inst.lo, inst.hi = (lo,) * inst.d, (3,) * inst.d
    true_min, _, _ = brute_force(inst)
    with deadline(5):
        m = _fit(inst, gap_tolerance=1e-9, time_limit=2)
    check_fitted(m, inst, true_min)


TINY = Instance(np.array([[0.0], [1.0], [0.0], [1.0]]), np.array([1, 0, 1, 0]), None, 1.0, (0,), (3,), 0.01, 1, 1)


def test_min_size_minimal_reproduction():
    # x carries no positive signal; points must be in 1..3 because min_size=1 (0..3 allows 0 = unused)
    true_min, b0, pts = brute_force(TINY)
    assert pts.tolist() == [1]
    m = _fit(TINY, gap_tolerance=1e-9)
    assert m.size == 1  # fails: the solver returns x with 0 points, objective log 2
    check_fitted(m, TINY, true_min)


def test_node_limit_without_incumbent_minimal_reproduction():
    true_min, _, _ = brute_force(TINY)
    rep = BranchAndCut(_problem(TINY), SearchOptions(gap_tolerance=1e-9, node_limit=1)).solve()
    assert rep.status in ("node_limit", "optimal")  # never "infeasible": the problem is feasible
    assert rep.lower_bound <= true_min + _slack(true_min)


@pytest.mark.usefixtures("no_enumeration")
def test_risk_score_node_limit_without_incumbent_is_not_infeasible():
    # the greedy start meets min_size before the search, so even one node returns a model
    with pytest.warns(OptimalityGapWarning, match="node_limit"):
        m = _fit(TINY, node_limit=1)
    assert m.lower_bound <= brute_force(TINY)[0] + _slack(brute_force(TINY)[0])
    assert m.size >= 1


@pytest.mark.parametrize("seed, lo, hi", [(0, 0, 3), (1, 0, 3), (2, -3, 0), (3, 1, 3), (4, -1, 2),
                                          (5, 0, 2)])
def test_asymmetric_bounds(seed, lo, hi):
    inst = random_instance(200 + seed)
    inst.lo, inst.hi = (lo,) * inst.d, (hi,) * inst.d
    true_min, _, _ = brute_force(inst)
    m = _fit(inst, gap_tolerance=1e-9)
    check_fitted(m, inst, true_min)
    assert np.all(m.coef.to_numpy() >= min(lo, 0)) and np.all(m.coef.to_numpy() <= max(hi, 0))


def test_mixed_per_column_bounds():
    inst = random_instance(7)
    inst.lo = (0,) + (-3,) * (inst.d - 1)
    inst.hi = (2,) + (1,) * (inst.d - 1)
    true_min, _, _ = brute_force(inst)
    check_fitted(_fit(inst, gap_tolerance=1e-9), inst, true_min)


@pytest.mark.parametrize("b_range", [(0, 0), (1, 3), (-1, 0)])
def test_user_intercept_range(b_range):
    inst = random_instance(3)
    inst.b_range = b_range
    true_min, _, _ = brute_force(inst)
    m = _fit(inst, gap_tolerance=1e-9)
    check_fitted(m, inst, true_min)
    assert b_range[0] <= m.intercept <= b_range[1]


def test_intercept_only():
    inst = random_instance(5)
    inst.max_size = 0
    true_min, b0, _ = brute_force(inst)
    m = _fit(inst, gap_tolerance=1e-9)
    check_fitted(m, inst, true_min)
    assert m.size == 0 and m.intercept == b0


def test_duplicated_and_constant_columns():
    inst = random_instance(10)
    X = inst.X[:, :2]
    inst.X = np.column_stack([X, X[:, 0], np.zeros(len(X))])  # x2 == x0, x3 == 0
    inst.lo, inst.hi, inst.max_size = (-2,) * 4, (2,) * 4, 3
    true_min, _, _ = brute_force(inst)
    m = _fit(inst, gap_tolerance=1e-9)
    check_fitted(m, inst, true_min)
    assert m.coef["x3"] == 0  # a zero column only costs c0


def test_zero_and_fractional_weights():
    inst = random_instance(12)
    rng = np.random.default_rng(12)
    inst.w = rng.choice([0.0, 0.25, 1.0, 2.5], len(inst.y))
    inst.w[:2] = 1.0  # both classes keep weight
    true_min, _, _ = brute_force(inst)
    check_fitted(_fit(inst, gap_tolerance=1e-9), inst, true_min)


def test_large_c0_gives_intercept_only():
    inst = random_instance(13)
    inst.c0 = 1.0
    true_min, b0, pts = brute_force(inst)
    assert not pts.any()
    m = _fit(inst, gap_tolerance=1e-9)
    check_fitted(m, inst, true_min)
    assert m.size == 0


def test_c0_zero():
    inst = random_instance(11)
    inst.c0 = 0.0
    true_min, _, _ = brute_force(inst)
    m = _fit(inst, gap_tolerance=1e-9)
    assert m.lower_bound <= true_min + _slack(true_min)
    assert m.objective == pytest.approx(true_min, rel=1e-7, abs=0)


FOUR_ROWS = pd.DataFrame({"x": [0, 0, 1, 1], "y": [0, 1, 1, 0]})


def test_time_limit_is_honoured_with_min_size_minimal_reproduction():
    t = time.perf_counter()
    with deadline(3):
        m = rf.risk_score("y ~ x", FOUR_ROWS, coef_range=(0, 3), min_size=1, time_limit=0.5)
    assert time.perf_counter() - t < 2.5
    assert m.size == 1


def test_time_limit_is_honoured_with_tiny_gap_tolerance_minimal_reproduction():
    with deadline(3):
        m = rf.risk_score("y ~ x", FOUR_ROWS, coef_range=(-3, 3), gap_tolerance=1e-8, time_limit=0.5)
    # x is useless: the intercept-only model (loss log 2) is optimal
    assert m.objective == pytest.approx(math.log(2), rel=1e-9)


def test_four_rows_default_settings():
    with deadline(10):
        m = rf.risk_score("y ~ x", FOUR_ROWS, coef_range=(-3, 3), time_limit=5)
    assert m.status == "optimal" and m.size == 0 and m.intercept == 0
    assert m.objective == pytest.approx(math.log(2), rel=1e-12)


# --- the solver directly, also stopped early ---------------------------------------------

@pytest.mark.parametrize("seed", range(30))
def test_solver_matches_brute_force(seed):
    inst = random_instance(seed)
    true_min, _, _ = brute_force(inst)
    rep = BranchAndCut(_problem(inst), SearchOptions(time_limit=60, gap_tolerance=1e-9)).solve()
    assert rep.lower_bound <= true_min + _slack(true_min)
    assert rep.status == "optimal"
    assert rep.objective == pytest.approx(true_min, rel=1e-7, abs=0)
    lam = np.asarray(rep.solution)
    assert my_objective(inst, lam[0], lam[1:]) == pytest.approx(rep.objective, rel=1e-9, abs=0)


@pytest.mark.parametrize("node_limit", [1, 2, 3, 10])
@pytest.mark.parametrize("seed", range(12))
def test_node_limit_gives_an_honest_gap(seed, node_limit):
    inst = random_instance(300 + seed)
    inst.max_size = inst.d  # more to search
    true_min, _, _ = brute_force(inst)
    rep = BranchAndCut(_problem(inst), SearchOptions(time_limit=60, gap_tolerance=1e-9, node_limit=node_limit)).solve()
    assert rep.status in ("optimal", "node_limit")
    assert rep.nodes <= node_limit
    assert rep.lower_bound <= true_min + _slack(true_min), (
        f"lower bound {rep.lower_bound!r} above the optimum {true_min!r} ({rep.status}, {rep.nodes} nodes)")
    assert rep.objective >= true_min - _slack(true_min)
    lam = np.asarray(rep.solution)
    assert my_objective(inst, lam[0], lam[1:]) == pytest.approx(rep.objective, rel=1e-9, abs=0)
    gap = 0.0 if rep.lower_bound >= rep.objective else (rep.objective - rep.lower_bound) / rep.objective
    assert rep.gap == pytest.approx(gap, rel=1e-9, abs=1e-15)
    if rep.status == "optimal":
        assert rep.objective == pytest.approx(true_min, rel=1e-7, abs=0)


@pytest.mark.parametrize("time_limit", [1e-4, 0.01, 0.05])
@pytest.mark.parametrize("seed", range(6))
def test_time_limit_gives_an_honest_gap(seed, time_limit):
    inst = random_instance(400 + seed)
    inst.max_size = inst.d
    true_min, _, _ = brute_force(inst)
    rep = BranchAndCut(_problem(inst), SearchOptions(time_limit=time_limit, gap_tolerance=1e-9)).solve()
    assert rep.status in ("optimal", "time_limit")
    assert rep.lower_bound <= true_min + _slack(true_min)
    assert rep.objective >= true_min - _slack(true_min)
    lam = np.asarray(rep.solution)
    assert my_objective(inst, lam[0], lam[1:]) == pytest.approx(rep.objective, rel=1e-9, abs=0)


@pytest.mark.usefixtures("no_enumeration")
def test_risk_score_node_limit_warns_and_reports_honest_bounds():
    inst = random_instance(301)
    inst.max_size = inst.d
    true_min, _, _ = brute_force(inst)
    with pytest.warns(OptimalityGapWarning):
        m = _fit(inst, gap_tolerance=1e-9, node_limit=1)
    assert m.status == "node_limit"
    assert m.lower_bound <= true_min + _slack(true_min)
    assert m.objective >= true_min - _slack(true_min)
    assert my_objective(inst, m.intercept, m.coef.to_numpy()) == pytest.approx(m.objective, rel=1e-9)


@pytest.mark.parametrize("min_size, node_limit", [(1, 1), (2, 3), (3, 10), (2, 1)])
def test_min_size_with_node_limit(min_size, node_limit):
    inst = random_instance(500 + min_size)
    if inst.d < min_size:
        inst = random_instance(503)
    assert inst.d >= min_size
    inst.min_size, inst.max_size, inst.c0 = min_size, max(min_size, inst.max_size), 0.01
    inst.lo, inst.hi = (0,) * inst.d, (3,) * inst.d
    true_min, _, _ = brute_force(inst)
    rep = BranchAndCut(_problem(inst), SearchOptions(time_limit=60, gap_tolerance=1e-9, node_limit=node_limit)).solve()
    assert rep.lower_bound <= true_min + _slack(true_min)
    assert rep.objective >= true_min - _slack(true_min)
    lam = np.asarray(rep.solution)
    assert np.count_nonzero(lam[1:]) >= min_size


# --- real data ----------------------------------------------------------------------------

@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_breastcancer_reference_objective():
    df = rf.load_dataset("breastcancer")
    # the tree alone (the support search would take its share of the whole limit first); the
    # limit is a safety net, not the verdict
    m = rf.risk_score("Benign ~ .", df, max_size=5, coef_range=(-5, 5), c0=1e-6, time_limit=600, engine="tree")
    assert m.status == "optimal"
    # the published reference implementation's optimum on these data and settings
    assert m.objective == pytest.approx(0.113365, abs=1e-6)
    assert m.lower_bound <= m.objective


def test_dropped_cuts_forget_their_integer_points():
    """The pool remembers which integer points it holds a cut at, and forgets those it drops
    (a dropped exact cut must be taken again, or a node would settle below the true loss)."""
    from riskformula.solver.lp import NodeLP
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (50, 3)).astype(float)
    y = rng.integers(0, 2, 50)
    prob = RiskProblem(LogisticLoss(X, y), np.full(3, -3.0), np.full(3, 3.0), c0=1e-6)
    lp = NodeLP(prob, 0.0, 1.0)
    points = [np.array([k, 1.0, -1.0, 0.0]) for k in range(-3, 4)]
    for lam in points:
        f, g = prob.loss.value_and_gradient(lam)
        lp.add_cut(lam, f, g, key=lam.tobytes())
    lp.solve()
    lp.drop_slack_cuts(3)
    held = [lp.has_cut(lam.tobytes()) for lam in points]
    assert lp.n_cuts == 3 and sum(held) == 3
    assert lp.h.getNumRow() == lp.n_base_rows + 3


def test_saved_basis_is_only_a_warm_start():
    """Restoring a parent's basis after cuts were added and dropped changes no LP optimum."""
    from riskformula.solver.lp import NodeLP
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, (80, 4)).astype(float)
    y = rng.integers(0, 2, 80)
    prob = RiskProblem(LogisticLoss(X, y), np.full(4, -3.0), np.full(4, 3.0), c0=1e-6, max_size=2)
    lp = NodeLP(prob, 0.0, 1.0)
    lower, upper = prob.column_bounds()
    for _ in range(15):  # a few Kelley rounds
        _, _, x = lp.solve()
        lam = x[: prob.d + 1]
        f, g = prob.loss.value_and_gradient(lam)
        lp.add_cut(lam, f, g)
    lp.solve()
    saved = lp.basis()
    for k in range(5):
        lam = rng.integers(-3, 4, prob.d + 1).astype(float)
        f, g = prob.loss.value_and_gradient(lam)
        lp.add_cut(lam, f, g)
    child_upper = upper.copy()
    child_upper[[prob.layout.lam(0), prob.layout.lam(1)]] = 0.0
    lp.set_bounds(lower, child_upper)
    lp.solve()
    lp.drop_slack_cuts(6)  # drops a cut that was tight in the saved basis
    lp.set_bounds(lower, child_upper)
    _, fresh, _ = lp.solve()
    lp.set_bounds(lower, upper)
    lp.solve()
    lp.set_bounds(lower, child_upper)
    assert lp.restore(saved)
    status, warm, _ = lp.solve()
    assert status == "optimal"
    assert warm == pytest.approx(fresh, rel=1e-9, abs=1e-12)


# --- the absolute gap tolerance -----------------------------------------------------------

def near_separable_instance(seed: int = 7) -> Instance:
    """Four noisy copies of the outcome (2% flipped): the best score nearly separates the rows, so
    the optimum is about 2e-4 and the LP's safety margin (1e-9) alone is a relative gap of 5e-6."""
    r = np.random.default_rng(seed)
    n = 120
    y = r.integers(0, 2, n)
    X = np.column_stack([np.where(r.random(n) < 0.02, 1 - y, y) for _ in range(4)]).astype(float)
    return Instance(X, y, None, 1.0, (-5,) * 4, (5,) * 4, 1e-6, 4)


@pytest.mark.usefixtures("no_enumeration")
def test_near_separable_data_are_certified_by_the_absolute_tolerance():
    inst = near_separable_instance()
    true_min, _, _ = brute_force(inst)
    assert true_min < 1e-3
    # only the relative tolerance: the whole tree is searched, yet the gap left by the LP's
    # margin is above 1e-6 of an objective this small
    with pytest.warns(OptimalityGapWarning):
        old = _fit(inst, absolute_gap_tolerance=0.0, engine="tree")
    assert old.status == "numerical_gap" and old.gap > 1e-6
    m = _fit(inst, engine="tree")
    assert m.settings.absolute_gap_tolerance == 1e-8
    assert m.gap > m.settings.gap_tolerance and m.objective - m.lower_bound <= 1e-8
    check_fitted(m, inst, true_min)
    # the support search's bounds have no LP margin: it certifies these data without either tolerance
    check_fitted(_fit(inst, absolute_gap_tolerance=0.0, engine="supports"), inst, true_min)


@pytest.mark.parametrize("seed", range(6))
def test_a_loose_absolute_tolerance_stops_early_with_an_honest_bound(seed):
    """A large absolute tolerance ends the search early: the bound stays below the optimum and
    the objective within the tolerance of it."""
    inst = random_instance(500 + seed)
    inst.max_size = inst.d
    true_min, _, _ = brute_force(inst)
    tol = 0.02
    rep = BranchAndCut(_problem(inst), SearchOptions(time_limit=60, gap_tolerance=0.0, absolute_gap_tolerance=tol)).solve()
    assert rep.status == "optimal"
    assert rep.lower_bound <= true_min + _slack(true_min)
    assert true_min - _slack(true_min) <= rep.objective <= true_min + tol + _slack(true_min)
    assert rep.objective - rep.lower_bound <= tol
