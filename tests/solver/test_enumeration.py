"""Settling a search node by scoring every integer point in it, against brute force.

``best_in_box`` must return the exact optimum of a node's box (its points, used indicators, group
indicators and intercept bounds), because the search closes the node on its word: a wrong answer
there would lose the true optimum and leave a lower bound above it.  The oracle below lists every
point vector and every intercept of the box from the definitions, sharing no code with it.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import oracle_real_intercepts, slow_params

import riskformula as rf
from riskformula.problem import LogisticLoss, RiskProblem, SizeGroup
from riskformula.solver import branch_and_cut as bc
from riskformula.solver.enumeration import best_in_box, box_size, qualifies


def _random_problem(seed: int, real: bool = False):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(15, 60))
    d = 6
    kind = seed % 3
    if kind == 0:
        X = rng.integers(0, 2, (n, d)).astype(float)
    elif kind == 1:
        X = rng.integers(0, 3, (n, d)).astype(float)
    else:
        X = rng.integers(0, 5, (n, d)) / 2.0
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ rng.normal(0, 1, d) - 1)))).astype(int)
    y[:2] = [0, 1]
    w = rng.integers(1, 4, n).astype(float) if seed % 2 else None
    scale = float(rng.choice([1.0, 1.0, 1.7]))
    loss = LogisticLoss(X, y, w, positive_weight=float(rng.choice([1.0, 2.0])), scale=scale).with_real_intercept(real)
    lo = rng.choice([-2, -1, 0, 1], d).astype(float)
    hi = np.maximum(lo + rng.integers(1, 3, d), 1).astype(float)
    # columns 0-1 alone, 2-4 a group of which one may be nonzero (a threshold's cuts), 5 alone
    groups = [SizeGroup((2, 3, 4), max_used=1, name="cuts")]
    if seed % 4 == 3:  # or a group counted once whose columns may all be nonzero (a factor)
        groups = [SizeGroup((2, 3, 4), max_used=None, name="factor")]
    max_size = int(rng.integers(1, 4))
    min_size = int(rng.integers(0, 2))
    p = RiskProblem(loss, lo, hi, c0=float(rng.choice([1e-6, 0.01])), max_size=max_size, min_size=min_size,
                    groups=groups)
    return p, X, y, w


def _random_box(p: RiskProblem, rng):
    """Root bounds narrowed the way branching narrows them."""
    lower, upper = p.column_bounds()
    lay = p.layout
    b_lo, b_hi = p.intercept_bounds
    lower[0] = int(rng.integers(b_lo, 1))
    upper[0] = int(rng.integers(0, b_hi + 1))
    for j in range(p.d):
        r = rng.random()
        if r < 0.15:
            upper[lay.alpha(j)] = 0.0              # column unused
        elif r < 0.3:
            lower[lay.alpha(j)] = 1.0              # column used
        elif r < 0.45:
            lower[lay.lam(j)] = max(lower[lay.lam(j)], 0.0)  # sign split
        elif r < 0.55:
            upper[lay.lam(j)] = min(upper[lay.lam(j)], 0.0)
        elif r < 0.65:
            upper[lay.lam(j)] = min(upper[lay.lam(j)], 1.0)  # a point branching
    u = lay.aux(p._group_aux[0])
    r = rng.random()
    if r < 0.2:
        upper[u] = 0.0
    elif r < 0.4:
        lower[u] = 1.0
    return lower, upper


def _oracle(p: RiskProblem, X, y, w, lower, upper):
    """Least objective over every integer point of the box, from the definitions."""
    lay = p.layout
    values = []
    for j in range(p.d):
        lo = int(np.ceil(lower[lay.lam(j)]))
        hi = int(np.floor(upper[lay.lam(j)]))
        v = [k for k in range(lo, hi + 1) if k == 0 or p.coef_lower[j] <= k <= p.coef_upper[j]]
        if upper[lay.alpha(j)] < 0.5:
            v = [k for k in v if k == 0]
        if lower[lay.alpha(j)] > 0.5:
            v = [k for k in v if k != 0]
        values.append(v)
    grp = p.groups[0]
    u = lay.aux(p._group_aux[0])
    wt = np.ones(len(y)) if w is None else w
    pw = p.loss.w_pos.sum() / float(wt @ (y == 1))  # the positive weight the loss was built with
    best = np.inf
    kept = []
    for lam in itertools.product(*values):
        lam = np.asarray(lam, float)
        in_group = np.count_nonzero(lam[list(grp.cols)])
        if grp.max_used is not None and in_group > grp.max_used:
            continue
        if (upper[u] < 0.5 and in_group) or (lower[u] > 0.5 and not in_group):
            continue
        single = [j for j in range(p.d) if j not in grp.cols]
        size = np.count_nonzero(lam[single]) + (in_group > 0)
        if not p.min_size <= size <= p.max_size:
            continue
        if p.real_intercept:
            kept.append(lam)
            continue
        s = X @ lam
        for b in range(int(np.ceil(lower[0])), int(np.floor(upper[0])) + 1):
            z = (s + b) / p.loss.scale
            loss = wt @ np.where(y == 1, pw * np.logaddexp(0, -z), np.logaddexp(0, z)) / wt.sum()
            best = min(best, loss + float(p.c0 @ (lam != 0)))
    if kept and lower[0] <= upper[0]:
        # a real intercept in [lower, upper], for every point vector at once
        L = np.array(kept)
        S = X @ L.T
        wp, wn = wt * pw * (y == 1), wt * (y == 0)
        z = (S + oracle_real_intercepts(S, wp, wn, p.loss.scale, lower[0], upper[0])) / p.loss.scale
        loss = (wp @ np.logaddexp(0, -z) + wn @ np.logaddexp(0, z)) / wt.sum()
        best = min(best, float(np.min(loss + (L != 0) @ p.c0)))
    return best


@pytest.mark.parametrize("real", [False, True], ids=["integer intercept", "real intercept"])
@pytest.mark.parametrize("seed", range(16))
def test_the_best_point_of_a_box_is_the_brute_force_one(seed, real):
    p, X, y, w = _random_problem(seed, real)
    rng = np.random.default_rng(100 + seed)
    checked = 0
    for _ in range(6):
        lower, upper = _random_box(p, rng)
        truth = _oracle(p, X, y, w, lower, upper)
        got = best_in_box(p, lower, upper, max_work=1e12)
        if not np.isfinite(truth):
            assert got is None or got == (None, np.inf)
            continue
        lam, value = got
        assert value == pytest.approx(truth, rel=1e-10, abs=1e-14)
        # the point is in the box, feasible, and has the objective reported for it
        assert p.objective(lam) == pytest.approx(value, rel=1e-10, abs=1e-14)
        assert p.complete(lam) is not None
        assert np.all(lam >= lower[p.layout.lam_slice] - 1e-9) and np.all(lam <= upper[p.layout.lam_slice] + 1e-9)
        checked += 1
    assert checked >= 2


def test_a_box_too_large_to_list_is_left_to_branching():
    p, *_ = _random_problem(0)
    lower, upper = p.column_bounds()
    assert best_in_box(p, lower, upper, max_work=10) is None
    assert best_in_box(p, lower, upper, max_work=1e12) is not None


def test_only_plain_problems_qualify():
    p, *_ = _random_problem(0)
    assert qualifies(p)
    from riskformula.problem import LinearRow
    p.rows = [LinearRow({p.layout.lam(0): 1.0, p.layout.lam(1): 1.0}, upper=1.0, name="at most")]
    assert not qualifies(p)


def _two_thresholds(seed):
    rng = np.random.default_rng(seed)
    n = 80
    x1 = rng.integers(0, 8, n).astype(float)
    x2 = rng.integers(0, 8, n).astype(float)
    eta = 2.0 * (x1 >= 3) - 1.5 + 1.5 * (x2 >= 5)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y})


@pytest.mark.parametrize("seed", [1, 2, 4])
def test_a_search_that_settles_nodes_by_listing_them_is_the_brute_force_optimum(seed, monkeypatch):
    """Threshold searches whose deep nodes are settled by listing: the same certified optimum as
    brute force over every cut, points and intercept, and the lower bound of early stops stays
    below it."""
    from test_thresholds import brute_two_thresholds

    df = _two_thresholds(seed)
    best = brute_two_thresholds(df.x1.to_numpy(), df.x2.to_numpy(), df.y.to_numpy())
    fired = []
    init = bc.BranchAndCut.finish

    def finish(self, status):
        fired.append(self.enumerated)
        return init(self, status)

    monkeypatch.setattr(bc.BranchAndCut, "finish", finish)
    # no heuristics: the incumbent must come from the tree itself
    monkeypatch.setattr(bc.BranchAndCut, "_heuristic", lambda self, *a, **k: None)
    monkeypatch.setattr(bc.BranchAndCut, "_polish_and_offer", lambda self, *a, **k: None)
    kw = dict(coef_range=(-2, 2), intercept_range=(-10, 10), c0=1e-6, time_limit=60, engine="tree")
    m = rf.risk_score("y ~ threshold(x1, k=1) + threshold(x2, k=1)", df, **kw)
    assert fired[-1] > 0
    assert m.status == "optimal"
    assert m.objective == pytest.approx(best, rel=1e-7)
    assert m.lower_bound <= best + 1e-9 * (1 + best)
    for limit in (2, 5, 20):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rf.OptimalityGapWarning)
            early = rf.risk_score("y ~ threshold(x1, k=1) + threshold(x2, k=1)", df, node_limit=limit, **kw)
        assert early.lower_bound <= best + 1e-9 * (1 + best)
    monkeypatch.setattr(bc.BranchAndCut, "enumeration_work", 0)
    off = rf.risk_score("y ~ threshold(x1, k=1) + threshold(x2, k=1)", df, **kw)
    assert fired[-1] == 0
    assert off.objective == pytest.approx(m.objective, rel=1e-9)


def test_one_and_two_processes_give_the_same_model():
    df = _two_thresholds(2)
    kw = dict(coef_range=(-2, 2), c0=1e-6, time_limit=60, engine="tree")
    one = rf.risk_score("y ~ threshold(x1, k=1) + threshold(x2, k=1) + threshold(x1 + x2, k=1)", df, **kw)
    two = rf.risk_score("y ~ threshold(x1, k=1) + threshold(x2, k=1) + threshold(x1 + x2, k=1)", df, n_jobs=2, **kw)
    assert one.status == two.status == "optimal"
    assert one.objective == pytest.approx(two.objective, rel=1e-9)
    assert one.score_card().equals(two.score_card())
    # the nodes settled by listing are counted, in the summary and through a JSON round trip
    assert one.solver.listed > 0 and two.solver.listed > 0
    assert f"({two.solver.listed:,d} settled by listing their points)" in str(two.summary())
    assert rf.io.from_json(two.to_json(), trusted=True).solver.listed == two.solver.listed


@pytest.mark.parametrize("real", [False, True], ids=["integer intercept", "real intercept"])
@pytest.mark.parametrize("seed", slow_params(range(16), slow=(2, 3, 4, 7, *range(9, 16))))  # 2–4: 3.6 s
def test_listing_against_a_ceiling_finds_every_point_below_it(seed, real):
    """With the objective to beat, the box is listed one unit at a time and partial assignments
    whose bound cannot beat it are dropped: a point below the ceiling is still the exact optimum,
    and when there is none the bound returned is below every point of the box."""
    p, X, y, w = _random_problem(seed, real)
    rng = np.random.default_rng(200 + seed)
    for _ in range(6):
        lower, upper = _random_box(p, rng)
        truth = _oracle(p, X, y, w, lower, upper)
        if not np.isfinite(truth):
            continue
        for ceiling in (truth * 1.05 + 1e-9, truth * (1 + 1e-9) + 1e-12, truth * (1 - 1e-9), truth * 0.98):
            got = best_in_box(p, lower, upper, max_work=1e12, ceiling=ceiling)
            assert got is not None
            lam, value = got
            if truth < ceiling:
                assert lam is not None
                assert value == pytest.approx(truth, rel=1e-10, abs=1e-14)
                assert p.objective(lam) == pytest.approx(value, rel=1e-10, abs=1e-14)
                assert p.complete(lam) is not None
            else:
                assert lam is None
                assert value <= truth * (1 + 1e-12) + 1e-14


def test_a_ceiling_prunes_the_listing():
    """The bound does prune: a box too large for a tight work budget without a ceiling is settled
    within it when the ceiling is far below the box's optimum, with a bound below that optimum."""
    p, X, y, w = _random_problem(0)
    lower, upper = p.column_bounds()
    truth = _oracle(p, X, y, w, lower, upper)
    budget = 1.0
    while best_in_box(p, lower, upper, max_work=budget) is None:
        budget *= 2
    tight = budget / 8
    assert best_in_box(p, lower, upper, max_work=tight, ceiling=truth * (1 + 1e-9)) is None
    lam, bound = best_in_box(p, lower, upper, max_work=tight, ceiling=truth * 0.01)
    assert lam is None and truth * 0.01 <= bound <= truth


@pytest.mark.parametrize("seed", [0, 1, 2, 4, 5, 6])
def test_box_size_counts_the_feasible_assignments(seed):
    """With a group that holds one nonzero column, the count of point vectors within the size
    limits is exact (it decides which nodes are listed, and a count of 0 closes a node)."""
    p, X, y, w = _random_problem(seed)
    rng = np.random.default_rng(300 + seed)
    lay, grp = p.layout, p.groups[0]
    u = lay.aux(p._group_aux[0])
    for _ in range(8):
        lower, upper = _random_box(p, rng)
        values = []
        for j in range(p.d):
            v = [k for k in range(int(np.ceil(lower[lay.lam(j)])), int(np.floor(upper[lay.lam(j)])) + 1)
                 if k == 0 or p.coef_lower[j] <= k <= p.coef_upper[j]]
            v = [k for k in v if (k == 0 or upper[lay.alpha(j)] >= 0.5) and (k != 0 or lower[lay.alpha(j)] <= 0.5)]
            values.append(v)
        count = 0
        for lam in itertools.product(*values):
            in_group = np.count_nonzero(np.asarray(lam)[list(grp.cols)])
            if in_group > 1 or (upper[u] < 0.5 and in_group) or (lower[u] > 0.5 and not in_group):
                continue
            size = sum(1 for j in range(p.d) if j not in grp.cols and lam[j] != 0) + (in_group > 0)
            count += p.min_size <= size <= p.max_size
        size, units = box_size(p, lower, upper)
        assert size == count
        # with a cap on the open units: the same count, or ∞ once the lone columns pass the cap
        singles = [j for j in range(p.d) if j not in grp.cols]
        open_singles = sum(len(values[j]) > 1 for j in singles)
        for cap in (0, 1, 2, 10):
            capped = box_size(p, lower, upper, max_units=cap)
            assert capped == ((math.inf, open_singles) if open_singles > cap else (size, units))
