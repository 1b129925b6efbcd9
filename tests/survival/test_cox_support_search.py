"""The Cox support search certifies the best integer time-to-event score over every scale > 0:
its objective and lower bound are checked against brute force (every support, every primitive
point vector, each at its best scale by a one-dimensional minimization), with size limits,
groups and support rows; each bound it uses is checked against what it bounds."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize, minimize_scalar

import riskformula as rf
from riskformula.errors import SettingsError
from riskformula.problem import SizeGroup
from riskformula.problem.cox import CoxLoss, cox_problem
from riskformula.problem.problem import LinearRow
from riskformula.solver.cox_bounds import (CoxTerms, _evaluate, _evaluate_rows, calibrate, cox_regression, gap_bound,
                                           loss_floor, primitive_vectors)
from riskformula.solver.cox_support import CoxSupportSearch, why_not_cox
from conftest import slow_params


def _data(rng, n, d):
    X = (rng.random((n, d)) < rng.uniform(0.2, 0.7, d)).astype(float)
    if rng.random() < 0.3:
        X[:, 0] = rng.integers(0, 3, n)  # a small count
    beta = rng.normal(0, 1, d)
    t = rng.exponential(np.exp(-X @ beta))
    if rng.random() < 0.5:
        t = np.round(t * 10) / 10  # tied times
    e = (rng.random(n) < 0.7).astype(int)
    e[0] = 1
    w = rng.integers(1, 3, n).astype(float) if rng.random() < 0.25 else None
    return X, t, e, w


def _problem(seed, wide=False, event_free=False):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(15, 60)), int(rng.integers(6, 9) if wide else rng.integers(2, 6))
    X, t, e, w = _data(rng, n, d)
    if event_free:  # the last column is 1 on a few rows without an event only (its coefficient runs to −∞)
        free = np.flatnonzero(e == 0)
        X[:, -1] = 0.0
        X[rng.choice(free, size=max(1, min(len(free), int(rng.integers(1, 6)))), replace=False), -1] = 1.0
    loss = CoxLoss(X, t, e, weights=w, ties="efron" if seed % 2 else "breslow")
    lo, hi = -int(rng.integers(1, 3 if wide else 4)), int(rng.integers(1, 3 if wide else 4))
    c0 = (0.0, 1e-6, 0.01)[seed % 3]
    k = int(rng.integers(2, 5) if wide else rng.integers(1, min(d, 3) + 1))
    groups = [SizeGroup(cols=(0, 1), max_used=1, name="g")] if seed % 5 == 0 else []
    p = cox_problem(loss, np.full(d, lo), np.full(d, hi), c0=c0, max_size=k, groups=groups,
                    min_size=int(seed % 7 == 3))
    if seed % 4 == 2 and d >= 3:  # not both of columns 1 and 2 (a support row)
        a = p.layout.alpha(0)
        p = cox_problem(loss, p.coef_lower, p.coef_upper, c0=c0, max_size=k, groups=groups, min_size=p.min_size,
                        rows=[LinearRow({a + 1: 1.0, a + 2: 1.0}, upper=1.0, name="not both")])
    return loss, p


def _best_at_every_scale(loss, s):
    """min over a > 0 of the loss of the scores a·s (a ≥ 0 closed: a → 0 gives the empty score)."""
    f = lambda la: loss.value_from_scores(s * math.exp(la))  # noqa: E731
    r = minimize_scalar(f, bounds=(-14, 6), method="bounded", options={"xatol": 1e-12})
    return min(float(r.fun), f(6.0), loss.value_from_scores(s * 0.0))


def _brute_force(loss, p):
    """The best objective over every support the problem allows and every point vector on it,
    each at its best scale (brute force)."""
    d = p.d
    best = math.inf
    for size in range(0, d + 1):
        for cols in itertools.combinations(range(d), size):
            lam = np.zeros(d + 1)
            lam[1 + np.asarray(cols, dtype=int)] = 1
            if p.complete(lam) is None:  # size limits, groups, rows
                continue
            if not cols:
                best = min(best, loss.value(lam))
                continue
            vals = [np.array([v for v in range(int(p.coef_lower[j]), int(p.coef_upper[j]) + 1) if v]) for j in cols]
            for w in itertools.product(*vals):
                s = loss.Z[:, 1:][:, list(cols)] @ np.asarray(w, float)
                best = min(best, _best_at_every_scale(loss, s) + float(p.c0[list(cols)].sum()))
    return best


def _check(seed, wide=False, event_free=False, **settings):
    loss, p = _problem(seed, wide, event_free)
    # the bounds carry relative margins of 10⁻⁹ of the magnitudes summed (rounding), so the
    # tolerance is a little above them
    search = CoxSupportSearch(p, loss, time_limit=60, gap_tolerance=1e-7, absolute_gap_tolerance=1e-10)
    for k, v in settings.items():
        setattr(search, k, v)
    report = search.solve()
    best = _brute_force(loss, p)
    assert report.status == "optimal"
    assert report.lower_bound <= best + 1e-10  # the certificate never claims more than is true
    assert best - 1e-9 <= report.objective <= best + 1e-7 * abs(best) + 1e-9
    lam = np.asarray(report.solution)
    assert p.complete(lam) is not None  # the card meets the size limits, groups and rows
    value = loss.with_scale(report.scale).value(lam) + float(p.c0[lam[1:] != 0].sum())
    assert value == pytest.approx(report.objective, abs=1e-12)
    assert report.settings["continuous_scale"] and report.settings["scope"] == "every score scale > 0"
    return search


@pytest.mark.parametrize("seed", slow_params(range(30), slow=(5, 6, *range(10, 30))))  # 5: 4 s, 16 and 28: 5 s
def test_certified_optimum_matches_brute_force(seed):
    _check(seed)


@pytest.mark.parametrize("seed", slow_params(range(8), slow=(0, 3, 4, 5, 6, 7)))  # 4–6: 10 s
@pytest.mark.parametrize("variant", ["plain", "reorder_root", "no_beam", "blocks"])
def test_every_variant_of_the_search_certifies_the_same_optimum(seed, variant):
    """The children's order chosen at the root too; none chosen and no child bounded in a batch;
    no start; two-short nodes bounded by pairs of one-column blocks (C2 by blocks, on every
    problem with three or more columns): speed rules only, the optimum is the same."""
    settings = {"plain": {"reorder": False, "batch_own": False, "batch_leaves": False},
                "reorder_root": {"reorder_root": True},
                "no_beam": {"beam": False, "listing_share": 0.0},
                "blocks": {"block_size": 1}}[variant]
    _check(200 + seed, **settings)


@pytest.mark.parametrize("seed, block_size", [(0, 2)] + [  # the others: 19 s
    pytest.param(s, b, marks=pytest.mark.slow) for s, b in ((0, 1), (1, 2), (1, 1), (2, 1), (2, 2))])
def test_block_pairs_rule_out_only_what_they_bound(seed, block_size):
    """C2 by blocks on wider problems (6–8 columns, size 2–4, so that two-short nodes have lists
    of several blocks): the certified optimum is brute force's, and the blocks were bounded (not
    where a group's columns are in the list)."""
    search = _check(300 + seed, wide=True, block_size=block_size)
    stats = search.stats
    assert stats["block_pairs"] + stats["block_triples"] + stats["block_sets"] > 0 or search.p.groups


def _families(p, rng):
    """Mark runs of neighbouring columns as the cuts of one threshold term (as the builder does)."""
    cols = list(range(p.d))
    fams, s = [], 0
    while s < p.d:
        n = int(rng.integers(1, 5))
        if n > 1 and s + n <= p.d:
            fams.append(tuple(cols[s:s + n]))
        s += n
    p.cut_families = fams
    return p


def test_each_column_has_one_block_and_a_cut_family_is_cut_in_runs():
    """The blocks of C2 by blocks partition the columns: each family of cuts in runs of at most
    block_size neighbouring cuts of near-equal lengths, the other columns in runs of block_size in
    the search's order."""
    loss, p = _problem(300, wide=True)
    p.cut_families = [(0, 1, 2, 3, 4, 5, 6), (7,)]
    for bs in (1, 2, 3, 5):
        search = CoxSupportSearch(p, loss, time_limit=5)
        search.block_size = bs
        search.order = list(range(p.d))[::-1]
        blk = search._make_blocks()
        assert np.all(blk >= 0)
        fam = blk[:7]
        runs = [list(np.flatnonzero(fam == b)) for b in dict.fromkeys(fam.tolist())]
        assert all(max(r) - min(r) + 1 == len(r) <= bs for r in runs)  # neighbouring cuts, at most bs
        assert max(map(len, runs)) - min(map(len, runs)) <= 1
        assert not set(blk[7:].tolist()) & set(fam.tolist())
        others = blk[7:]
        assert all(np.sum(others == b) <= bs for b in set(others.tolist()))


def _wide_k4(seed):
    """8–9 columns and up to 4 items (so that nodes three and two short have lists of several
    blocks), points ±1 so that brute force stays quick, some columns marked as cut families."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(25, 60)), int(rng.integers(8, 10))
    X, t, e, w = _data(rng, n, d)
    loss = CoxLoss(X, t, e, weights=w, ties="efron" if seed % 2 else "breslow")
    p = cox_problem(loss, np.full(d, -1), np.full(d, 1), c0=(0.0, 1e-6, 0.01)[seed % 3], max_size=4)
    return loss, _families(p, rng)


@pytest.mark.parametrize("seed", slow_params(range(12), slow=range(1, 12)))  # 4–6 s each
@pytest.mark.parametrize("block_size", slow_params([1, 2, 3], slow=(1, 3)))
def test_sets_of_blocks_and_the_sets_they_close_rule_out_only_what_they_bound(seed, block_size):
    """C2 by blocks at nodes four and three short (sets of four and three blocks), two short (pairs,
    some closed by the parent's sets without a regression), one short (the children of one block
    together): the certified optimum is brute force's, and sets of four blocks were bounded at the root
    where there are more than four."""
    loss, p = _wide_k4(600 + seed)
    search = CoxSupportSearch(p, loss, time_limit=60, gap_tolerance=1e-7, absolute_gap_tolerance=1e-10)
    search.block_size = block_size
    report = search.solve()
    best = _brute_force(loss, p)
    assert report.status == "optimal"
    assert report.lower_bound <= best + 1e-10
    assert best - 1e-9 <= report.objective <= best + 1e-7 * abs(best) + 1e-9
    if len(set(search._blk.tolist())) > 4:  # more blocks than the root's sets hold
        assert search.stats["block_sets"] + search.stats["block_triples"] > 0
    assert search.stats["blocks_inherited"] > 0 or block_size > 1  # a child read the sets its parent closed


def _support_values(loss, p, k):
    """Brute force's best objective on each support of at most k columns (every point vector, each
    at its best scale, + c0)."""
    out = {}
    for size in range(1, k + 1):
        for cols in itertools.combinations(range(p.d), size):
            vals = [np.array([v for v in range(int(p.coef_lower[j]), int(p.coef_upper[j]) + 1) if v]) for j in cols]
            best = math.inf
            for w in itertools.product(*vals):
                s = loss.Z[:, 1:][:, list(cols)] @ np.asarray(w, float)
                best = min(best, _best_at_every_scale(loss, s))
            out[frozenset(cols)] = best + float(p.c0[list(cols)].sum())
    return out


@pytest.mark.parametrize("seed", slow_params(range(4), slow=(1, 2, 3)))  # 3–5 s each
def test_each_support_a_set_of_blocks_rules_out_is_no_better_than_the_prune_level(seed):
    """Every claim of C2 by blocks, checked against brute force on each support it covers, with the
    incumbent set so that some sets prune and some do not: at nodes four, three and two short, a
    child's own support ruled out, a later column dropped from its list (every support of the child
    with it), a set of blocks shut for the child (every support of the child within it); one short,
    the children of one block ruled out together."""
    loss, p = _wide_k4(700 + seed)
    values = _support_values(loss, p, 4)
    search = CoxSupportSearch(p, loss, time_limit=60)
    search.block_size = 2
    search._prepare()
    search._deadline = math.inf
    search.best = float(np.quantile([v for s, v in values.items() if len(s) == 4], 0.1))
    claims = 0

    def ruled(cols):  # the support is no better than the prune level
        return search._prunes(values[frozenset(cols)])

    order = list(search.order)
    blk = search._blk
    for depth in range(3):
        for cols in itertools.combinations(order, depth):
            lst = tuple(c for c in order if order.index(c) > max((order.index(c2) for c2 in cols), default=-1))
            t = 4 - depth
            c0sum = float(p.c0[list(cols)].sum())
            if not search._blocks_apply(lst, t, len(cols)):
                continue
            sets = search._block_sets(cols, c0sum, lst, {}, len(lst) - 1, t, None)
            for i, j in enumerate(lst):
                own_ok, drop, shut = sets(i)
                # a shut set is the bit mask of its blocks, with the blocks themselves
                assert all(A == sum(1 << g for g in P) and len(P) == t - 1 for A, P in (shut or {}).items())
                later = lst[i + 1:]
                below = [cols + (j,) + extra for m in range(t) for extra in itertools.combinations(later, m)]
                if not own_ok:
                    claims += 1
                    assert ruled(cols + (j,))
                for sup in below:
                    extra = sup[len(cols) + 1:]
                    if any(int(blk[c]) in drop for c in extra):
                        claims += 1
                        assert ruled(sup)
                    if shut and extra and any({int(blk[c]) for c in extra} <= set(A) for A in shut.values()):
                        claims += 1
                        assert ruled(sup)
        if depth == 3 - 1:
            for cols in itertools.combinations(order, 3):
                js = [c for c in order if c not in cols]
                gone = search._leaf_blocks(cols, {}, js, float(p.c0[list(cols)].sum()))
                for b in np.flatnonzero(gone):
                    claims += 1
                    assert ruled(cols + (js[b],))
    assert claims > 0


@pytest.mark.parametrize("seed", slow_params(range(6), slow=(5,)))  # 5: 13 s
def test_an_event_free_item_is_bounded_by_the_rows_left(seed):
    """An item that is 1 only on rows without an event has no finite Cox coefficient, so no
    regression with it closes; the search bounds those by the rows left without it (a lower
    loss for every score) and still certifies brute force's optimum, and ruled something out."""
    search = _check(400 + seed, wide=seed % 2 == 1, event_free=True, block_size=1 + seed % 2)
    assert search._dead and search.stats["event_free"] > 0


@pytest.mark.parametrize("seed", range(4))
def test_the_bound_by_the_rows_left_is_below_the_loss_everywhere(seed):
    """The bound of a column set with an event-free column (the regression on the rows left) is
    below the whole data's loss at random points and as the event-free coefficient runs to −∞."""
    loss, p = _problem(500 + seed, wide=True, event_free=True)
    search = CoxSupportSearch(p, loss, time_limit=5)
    dead = max(search._dead)
    rng = np.random.default_rng(seed)
    for cols in [(dead,), (0, dead), (0, 1, dead), tuple(range(p.d))]:
        gb, _ = search._regression(cols)
        assert gb is not None and gb.reduced and np.isfinite(gb.value)
        for _ in range(50):
            lam = np.zeros(p.d + 1)
            lam[1 + np.asarray(cols)] = rng.normal(0, 1.5, len(cols))
            if rng.random() < 0.3:
                lam[1 + dead] = -40.0
            assert gb.value <= loss.value(lam) + 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("block", range(10))
def test_brute_force_audit(block):
    """200 more random problems (20 per block), 0 wrong; a third of them with C2 by blocks of one
    column, a third with blocks of two, on 2–8 columns, a fifth with an event-free column."""
    for seed in range(1000 + 20 * block, 1020 + 20 * block):
        _check(seed, wide=seed % 2 == 0, event_free=seed % 5 == 4, block_size=(6, 1, 2)[seed % 3])


def _terms(seed, n=60, d=4, ties="efron"):
    rng = np.random.default_rng(seed)
    X, t, e, w = _data(rng, n, d)
    X[:, -1] = rng.normal(size=n)  # a real-valued column: every row its own cell
    return CoxLoss(X, t, e, weights=w, ties=ties)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_the_loss_on_cells_and_on_rows_is_the_cox_loss(ties):
    loss = _terms(1, ties=ties)
    T = CoxTerms(loss)
    rng = np.random.default_rng(2)
    for _ in range(5):
        b = rng.normal(size=loss.d) * 0.7
        lam = np.r_[0.0, b]
        v, g = loss.value_and_gradient(lam)
        H = loss.hessian_on(loss.Z, lam)[1:, 1:]
        for at in (_evaluate(T.N, T.d, T.X, T.coef, T.norm, b), _evaluate_rows(T, T.X, b)):
            assert at[0] == pytest.approx(v, abs=1e-12)
            np.testing.assert_allclose(at[1], g[1:], atol=1e-12)
            np.testing.assert_allclose(at[2], H, atol=1e-12)
        cols = [0, 1]
        N, d, U = T.cells(cols)
        assert U.shape[0] < loss.n_unique
        eta = U @ b[cols]
        lam2 = np.zeros(loss.d + 1)
        lam2[1 + np.asarray(cols)] = b[cols]
        assert T.norm * (T.coef @ np.log(N @ np.exp(eta)) - d @ eta) == pytest.approx(loss.value(lam2), abs=1e-12)


def _least(loss, cols):
    """The Cox regression's minimum on ``cols`` by BFGS from Newton's point (a reference)."""
    Z = loss.Z[:, 1:][:, list(cols)]
    f = lambda b: loss.value_from_scores(Z @ b)  # noqa: E731
    best = math.inf
    for x0 in (np.zeros(len(cols)), np.ones(len(cols))):
        r = minimize(f, x0, method="BFGS", options={"gtol": 1e-12})
        best = min(best, float(r.fun))
    return best


@pytest.mark.parametrize("seed", slow_params(range(8), slow=range(3, 8)))
def test_the_regression_bound_is_below_the_regression_and_every_point(seed):
    loss = _terms(seed)
    T = CoxTerms(loss)
    rng = np.random.default_rng(seed)
    for cols in ([0], [0, 1], [1, 2, 3], [0, 1, 2, 3]):
        for rows in (False, True):
            N, d, U = T.rows(cols) if rows else T.cells(cols)
            fit = cox_regression(T if rows else N, d, U, T.coef, T.norm)
            for precise in (False, True):
                gb = gap_bound(N, d, U, T.coef, T.norm, fit, precise=precise)
                least = _least(loss, cols)
                assert gb.value <= least + 1e-12
                assert gb.value > least - 1e-6 or not math.isfinite(gb.value) or not precise
                # C3: at every point at distance ≥ ρ from the Newton point the loss is above far(ρ)
                if gb.H0 is not None:
                    for _ in range(20):
                        b = fit[0] + rng.normal(size=len(cols)) * rng.choice([0.01, 0.1, 1.0])
                        v = b - fit[0]
                        rho = math.sqrt(max(float(v @ gb.H0 @ v), 0.0)) * (1 - 1e-9)
                        val = loss.value_from_scores(loss.Z[:, 1:][:, list(cols)] @ b)
                        assert gb.far(np.array([rho]))[0] <= val + 1e-12


@pytest.mark.parametrize("seed", slow_params(range(6), slow=range(3, 6)))
def test_the_ray_bound_holds_along_each_ray(seed):
    loss = _terms(seed)
    T = CoxTerms(loss)
    cols = [0, 1, 2]
    N, d, U = T.cells(cols)
    fit = cox_regression(N, d, U, T.coef, T.norm)
    gb = gap_bound(N, d, U, T.coef, T.norm, fit, precise=True)
    W = primitive_vectors([np.array([-3, -2, -1, 1, 2, 3])] * 3)
    far = gb.far(gb.ray_distance(W.astype(float)))
    for w, bound in zip(W, far):
        s = loss.Z[:, 1:][:, cols] @ w
        for a in np.exp(np.linspace(-6, 3, 25)):
            assert bound <= loss.value_from_scores(a * s) + 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_calibration_bound_is_below_every_scale(seed):
    loss = _terms(seed)
    T = CoxTerms(loss)
    cols = [0, 1, 2]
    N, d, U = T.cells(cols)
    W = primitive_vectors([np.array([-2, -1, 1, 2])] * 3)
    S = (U @ W.T.astype(float)).T
    F, a, lower = calibrate(N, d, T.coef, T.norm, S, np.full(len(W), 0.3))
    # both kinds of vector: those whose loss rises from a = 0 (taken at a tiny a, no Newton steps)
    # and those calibrated by Newton steps
    assert np.any(a < 1e-8) and np.any(a > 1e-4)
    for w, f, ak, lo in zip(W, F, a, lower):
        s = loss.Z[:, 1:][:, cols] @ w
        assert f == pytest.approx(loss.value_from_scores(ak * s), abs=1e-12)  # attained at a
        best = _best_at_every_scale(loss, s)
        assert lo <= best + 1e-12
        assert f <= best + 1e-8  # the calibration reaches the best scale
        assert not np.isfinite(lo) or lo >= best - 1e-6


@pytest.mark.parametrize("iters", [0, 1, 3])
def test_batched_bounds_are_below_each_childs_regression(iters):
    loss = _terms(3, n=80, d=5)
    p = cox_problem(loss, np.full(5, -3), np.full(5, 3), c0=0.0, max_size=3)
    search = CoxSupportSearch(p, loss)
    search._prepare()
    search.best = 0.0  # no child settled early: every bound after its steps
    N, d, U = search.terms.cells([0])
    fit = cox_regression(N, d, U, search.terms.coef, search.terms.norm)
    vals = search._batch_c1((0,), {0: float(fit[0][0])}, [1, 2, 3, 4], np.zeros(4), iters=iters)
    for j, v in zip([1, 2, 3, 4], vals):
        least = _least(loss, [0, j])
        assert v <= least + 1e-12
        if iters == 3:
            assert v > least - 1e-4  # three steps from the parent's point come close


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_the_loss_floor_is_below_the_loss_everywhere(ties):
    for seed in range(5):
        loss = _terms(seed, ties=ties)
        floor = loss_floor(loss)
        rng = np.random.default_rng(seed)
        for scale in (0.1, 1.0, 10.0, 100.0):
            for _ in range(10):
                assert floor <= loss.value_from_scores(rng.normal(size=loss.n_unique) * scale) + 1e-12
        # scores that put each event time's events alone above everyone still at risk come close
        order = np.argsort(loss.time)
        s = np.empty(loss.n_unique)
        s[order] = -np.arange(loss.n_unique, dtype=float)
        s[loss.event] = np.round(s[loss.event])
        assert floor <= loss.value_from_scores(1e3 * s) + 1e-12


def test_why_not():
    loss = _terms(0)
    p = cox_problem(loss, np.full(4, -5), np.full(4, 5), max_size=3)
    assert why_not_cox(p, loss, 3) == ""
    assert "excludes 0" in why_not_cox(cox_problem(loss, np.full(4, 1), np.full(4, 5), max_size=3), loss, 3)
    assert "point vectors" in why_not_cox(p, loss, 8)


def _frame(seed=0, n=150):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(30, 80, n), "stage": rng.choice(["I", "II", "III"], n),
                       "marker": rng.normal(size=n).round(2)})
    lp = 0.04 * (df.age - 55) + (df.stage == "III") * 0.8 + 0.5 * df.marker
    df["time"] = np.ceil(rng.exponential(50 * np.exp(-lp)))
    df["event"] = (rng.random(n) < 0.75).astype(int)
    return df


def test_a_fit_is_certified_over_every_scale_and_its_views_agree():
    df = _frame()
    m = rf.risk_score("Surv(time, event) ~ threshold(age, k=2) + C(stage) + marker", df, max_size=3, time_limit=60)
    assert m.status == "optimal"
    assert m.solver.settings["engine"] == "cox_supports"
    assert m.settings.scales == (m.scale,)
    text = str(m.summary())
    assert "every score scale > 0" in text and "Cox regression" in text
    # the branch-and-cut's certified optimum at one scale (2: its tree closes in seconds, where the
    # grid of scales takes half a minute) is a card of the class every scale > 0 covers
    tree = rf.risk_score("Surv(time, event) ~ threshold(age, k=2) + C(stage) + marker", df, max_size=3,
                         time_limit=60, scale=2.0)
    assert tree.status == "optimal" and tree.solver.settings.get("engine") != "cox_supports"
    assert m.objective <= tree.objective + 1e-9
    assert m.lower_bound <= tree.objective + 1e-9


@pytest.mark.slow
def test_the_support_search_is_no_worse_than_the_tree_over_its_grid_of_scales():
    df = _frame()
    m = rf.risk_score("Surv(time, event) ~ threshold(age, k=2) + C(stage) + marker", df, max_size=3, time_limit=60)
    tree = rf.risk_score("Surv(time, event) ~ threshold(age, k=2) + C(stage) + marker", df, max_size=3,
                         time_limit=60, engine="tree")
    # the tree covers its grid of scales only, a subset of every scale: the support search's card is no worse
    assert m.status == "optimal" and tree.solver.settings.get("engine") != "cox_supports"
    assert m.objective <= tree.objective + 1e-9
    assert m.lower_bound <= tree.objective + 1e-9


def test_engine_settings_of_a_time_to_event_fit():
    df = _frame(1)
    with pytest.raises(SettingsError, match="every score scale"):
        rf.risk_score("Surv(time, event) ~ C(stage) + marker", df, max_size=2, scale=2.0, engine="supports")
    m = rf.risk_score("Surv(time, event) ~ C(stage) + marker", df, max_size=2, scale=2.0)
    assert m.solver.settings.get("engine") != "cox_supports"  # a fixed scale: the branch-and-cut
    m = rf.risk_score("Surv(time, event) ~ C(stage) + marker", df, max_size=2, engine="supports")
    assert m.solver.settings["engine"] == "cox_supports" and m.status == "optimal"


def test_batched_gap_values_are_the_scalar_bounds():
    """:func:`gap_values` (the batched searches' bound) is :class:`GapBound`'s value entry by entry,
    −∞ where the radius does not close."""
    from riskformula.solver.cox_bounds import GapBound, gap_values
    rng = np.random.default_rng(0)
    B = 400
    F = rng.normal(1.0, 0.5, B)
    G = np.where(rng.random(B) < 0.1, 0.0, 10 ** rng.uniform(-6, 0, B))
    shrink = np.where(rng.random(B) < 0.05, 0.0, rng.uniform(0.5, 1.0, B))
    h = 10 ** rng.uniform(-1, 2, B)
    G[:3], h[3:5] = np.inf, np.inf
    got = gap_values(F, G, shrink, h)
    want = np.array([GapBound(F[b], G[b], shrink[b], h[b], np.zeros(0), None).value for b in range(B)])
    assert np.array_equal(np.isfinite(got), np.isfinite(want)) and np.isfinite(got).sum() > 50
    assert np.allclose(got[np.isfinite(got)], want[np.isfinite(want)], rtol=0, atol=1e-15)


def test_least_radii_close_the_gap_and_are_the_least():
    """Each radius of :func:`least_radii` satisfies R·μ(R) ≥ 2G in floating point (what the bounds
    read), no radius 10⁻⁶ below it does (it is the least fixed point, not just one), one is found
    wherever a fixed point exists with room (z = 4G·h/shrink ≤ (1 − 10⁻⁶)/e, including next to the
    tangency), none where z > 1/e, and the fixed-point iteration of the docstring's definition
    reaches the same radius."""
    from riskformula.solver.cox_bounds import least_radii
    rng = np.random.default_rng(3)
    B = 20000
    G = 10 ** rng.uniform(-12, 1, B)
    h = 10 ** rng.uniform(-4, 4, B)
    shrink = rng.uniform(0.01, 1.0, B)
    # a quarter right below the tangency z = 1/e, a few just above it, some with h = 0 or G = 0
    near = slice(0, B // 4)
    G[near] = math.exp(-1.0) * (1 - 10 ** rng.uniform(-6, -1, B // 4)) * shrink[near] / (4 * h[near])
    G[B // 4:B // 4 + 50] = math.exp(-1.0) * (1 + 1e-6) * shrink[B // 4:B // 4 + 50] / (4 * h[B // 4:B // 4 + 50])
    h[-20:] = 0.0
    G[-40:-20] = 0.0
    F = np.zeros(B)
    R = least_radii(F, G, shrink, h)
    z = 4 * G * h / shrink
    assert np.all(np.isnan(R[B // 4:B // 4 + 50]))
    assert np.all(R[-40:-20] == 0.0)
    room = z <= (1 - 1e-6) * math.exp(-1.0)
    assert np.all(np.isfinite(R[room]))
    fin = np.isfinite(R) & (G > 0)
    mu = np.exp(-2 * R[fin] * h[fin]) * shrink[fin]
    assert np.all(R[fin] * mu >= 2 * G[fin])
    lower = R[fin] * (1 - 1e-6)
    assert np.all(lower * np.exp(-2 * lower * h[fin]) * shrink[fin] < 2 * G[fin])
    # the iteration R ← 2G/μ(R) from 2G/shrink, where it converges quickly (z ≤ 0.2)
    easy = fin & (z <= 0.2)
    it = 2 * G[easy] / shrink[easy]
    for _ in range(200):
        it = 2 * G[easy] / (np.exp(-2 * it * h[easy]) * shrink[easy])
    assert np.allclose(R[easy], it, rtol=1e-9, atol=0)


def test_past_the_deadline_wide_families_and_long_batches_rule_nothing_out():
    """Past its deadline the Cox search regresses no family wider than 8 columns (C2: hundreds of
    threshold cuts ran past the limit) and stops a batch of compiled regressions after its first
    64; those it did are the same as with time left, the others −∞ (nothing ruled out)."""
    import time

    from riskformula.solver import kernels

    rng = np.random.default_rng(4)
    X, t, e, w = _data(rng, 120, 12)
    loss = CoxLoss(X, t, e, ties="efron")
    p = cox_problem(loss, np.full(12, -3), np.full(12, 3), c0=0.0, max_size=3)
    search = CoxSupportSearch(p, loss)
    search._prepare()
    cols = tuple(range(10))
    val, th = search._family(cols)
    assert math.isfinite(val) and th
    search._fam_cache.clear()
    search._deadline = time.perf_counter() - 1.0
    assert search._family(cols) == (-math.inf, {}) and search.stats["families_too_wide"] == 1
    if kernels.compiled() is None:
        return
    C = np.array([(a, b) for a in range(12) for b in range(12) if a != b][:100], dtype=np.int64)
    start, levels = np.zeros(C.shape), np.full(len(C), -np.inf)
    search._deadline = math.inf
    full = search._compiled_c1(C, start, levels, 8)[0]
    search._deadline = time.perf_counter() - 1.0
    part, beta = search._compiled_c1(C, start, levels, 8)[:2]
    assert np.all(np.isfinite(full))
    assert np.array_equal(part[:64], full[:64]) and np.all(part[64:] == -np.inf)
    assert np.array_equal(beta[64:], start[64:])
