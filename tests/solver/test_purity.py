"""B9 (riskformula.solver.purity): the floor of every score that does not separate the rows, the
pairs' sets and their packing, the crossing witness, and the support search that B9 certifies,
each against brute force that shares no code with the package."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linprog

from riskformula.problem import LogisticLoss, RiskProblem
from riskformula.problem.problem import SizeGroup
from riskformula.solver import purity
from riskformula.solver.cells import CellData
from riskformula.solver.purity import SeparationProof, crossing_witness, distinguishing_sets, pair_floor
from riskformula.solver.support_search import SupportSearch
from conftest import slow_params

from test_separation import _separates
from test_support_search import models_of, oracle_values


def _mean_loss(z, y) -> float:
    return float(np.mean(np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z))))


def _pure(X, y, cols) -> bool:
    keys = [tuple(r) for r in X[:, list(cols)]]
    seen: dict = {}
    for k, v in zip(keys, y):
        seen.setdefault(k, set()).add(int(v))
    return all(len(v) == 1 for v in seen.values())


# --- the floor ----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", slow_params(range(6), slow=(0, 1, 2)))
def test_the_floor_is_below_every_score_that_does_not_separate(seed):
    rng = np.random.default_rng(400 + seed)
    n, d = int(rng.integers(8, 40)), 3
    X = rng.integers(0, 3, (n, d)).astype(float)
    y = (rng.random(n) < 0.5).astype(int)
    y[0], y[1] = 0, 1
    floor = pair_floor(CellData(LogisticLoss(X, y)))
    # repeated rows count more than once: the least counts decide
    assert floor == pytest.approx(2 * math.log(2) / n, rel=1e-12) or floor > 2 * math.log(2) / n
    models = models_of([-2] * d, [2] * d, d)
    S = X @ models.T
    hit = 0
    for k in range(S.shape[1]):
        s = S[:, k]
        if _separates(s, y):
            continue
        hit += 1
        for a, c in ((0.0, 0.3), (0.01, -2.0), (1.0, 0.0), (7.0, 3.0), (50.0, -40.0)):
            assert _mean_loss(a * s + c, y) >= floor
    assert hit
    # the least loss over every scale ≥ 0 and intercept too (the oracle's calibration)
    keep = np.array([not _separates(S[:, k], y) for k in range(S.shape[1])])
    assert oracle_values(X, y, models[keep][:40], "fit").min() >= floor


def test_the_floor_is_tight_for_two_rows_and_zero_without_a_class():
    X = np.array([[0.0], [0.0]])
    y = np.array([0, 1])
    assert pair_floor(CellData(LogisticLoss(X, y))) == pytest.approx(math.log(2), rel=1e-14)
    assert pair_floor(CellData(LogisticLoss(X, np.array([1, 1])))) == 0.0


@pytest.mark.parametrize("big", [1, 3, 1000, 10 ** 6])
def test_the_floor_is_rounded_down_with_unequal_counts(big):
    """One event row against ``big`` equal non-event rows: h(1, big) = log(1 + big) + big·log1p(1/big),
    computed here with log1p (accurate where log of a ratio near 1 is not), is at least the floor."""
    X = np.r_[np.ones(1), np.zeros(big)][:, None]
    y = np.r_[1, np.zeros(big, dtype=int)]
    floor = pair_floor(CellData(LogisticLoss(X, y)))
    exact = (math.log1p(big) + big * math.log1p(1 / big)) / (big + 1)
    assert floor <= exact and floor == pytest.approx(exact, rel=1e-9)


# --- the pairs' sets and their packing ----------------------------------------------------------

def _all_sets(X, y) -> set:
    E, N = X[y == 1], X[y == 0]
    return {frozenset(np.flatnonzero(e != m).tolist()) for e in E for m in N}


@pytest.mark.parametrize("seed", range(12))
def test_the_sets_are_the_minimal_sets_of_the_row_pairs(seed):
    rng = np.random.default_rng(500 + seed)
    n, d = int(rng.integers(10, 40)), int(rng.integers(3, 8))
    # 0/1 columns, or columns of two to four values side by side
    X = rng.integers(0, 2 if seed % 2 else rng.integers(2, 5, d), (n, d)).astype(float)
    X = np.unique(X, axis=0)
    y = (rng.random(len(X)) < 0.5).astype(int)
    y[0], y[-1] = 0, 1
    sets = distinguishing_sets(CellData(LogisticLoss(X, y)), list(range(d)), max_pairs=10 ** 6)
    got = {frozenset(np.flatnonzero(r).tolist()) for r in sets}
    every = _all_sets(X, y)
    minimal = {D for D in every if not any(o < D for o in every)}
    assert got == minimal and len(sets) == len(got)
    assert list(sets.sum(1)) == sorted(sets.sum(1))
    # fewer pairs: still sets of pairs, each minimal among those kept
    few = distinguishing_sets(CellData(LogisticLoss(X, y)), list(range(d)), max_pairs=5)
    kept = [frozenset(np.flatnonzero(r).tolist()) for r in few]
    assert set(kept) <= every and not any(a < b for a in kept for b in kept)


@pytest.mark.parametrize("max_pairs", [10 ** 6, 40, 3])
@pytest.mark.parametrize("seed", range(4))
def test_the_nearest_pairs_of_many_columns_are_all_kept(seed, max_pairs):
    # more columns than the first pass's near distances (16): the pairs that differ on at most t
    # columns, t the largest distance whose pairs fit in max_pairs (at least the nearest pairs'),
    # are all kept, and their minimal sets are the sets
    rng = np.random.default_rng(700 + seed)
    n, d = int(rng.integers(20, 50)), 40 + seed
    X = np.unique((rng.random((n, d)) < rng.uniform(0.2, 0.8)).astype(float), axis=0)
    y = (rng.random(len(X)) < 0.5).astype(int)
    y[0], y[-1] = 0, 1
    sets = distinguishing_sets(CellData(LogisticLoss(X, y)), list(range(d)), max_pairs=max_pairs)
    pairs = [frozenset(np.flatnonzero(e != m).tolist()) for e in X[y == 1] for m in X[y == 0]]
    cum = np.cumsum(np.bincount([len(D) for D in pairs], minlength=d + 1))
    t = max(int(np.searchsorted(cum, max_pairs, side="right")) - 1, min(len(D) for D in pairs))
    near = {D for D in pairs if len(D) <= t}
    minimal = {D for D in near if not any(o < D for o in near)}
    assert {frozenset(np.flatnonzero(r).tolist()) for r in sets} == minimal and len(sets) == len(minimal)


def _proof_on(X, y, max_pairs=10 ** 6):
    d = X.shape[1]
    p = RiskProblem(LogisticLoss(X, y).with_real_intercept(True), np.full(d, -3.0), np.full(d, 3.0), c0=1e-6,
                    max_size=d)
    search = SupportSearch(p, True, time_limit=30)
    proof = SeparationProof(search, pair_floor(search.data), 1e-3, math.inf, max_pairs=max_pairs)
    return search, proof


@pytest.mark.parametrize("max_pairs", [10 ** 6, 6])  # every pair's set, or a few of the nearest
@pytest.mark.parametrize("seed", range(10))
def test_the_packing_never_asks_for_more_columns_than_a_pure_support_needs(seed, max_pairs):
    rng = np.random.default_rng(600 + seed)
    n, d = int(rng.integers(12, 50)), int(rng.integers(4, 8))
    X = np.unique((rng.random((n, d)) < 0.5).astype(float), axis=0)
    y = (rng.random(len(X)) < 0.5).astype(int)
    y[0], y[-1] = 0, 1
    search, proof = _proof_on(X, y, max_pairs=max_pairs)
    assert proof.prepare()
    cols, L = proof.cols, len(proof.cols)
    checked = 0
    for size in range(0, 3):
        for S in itertools.combinations(range(L), size):
            start = (max(S) + 1) if S else 0
            Smask = sum(1 << q for q in S)
            Lmask = ((1 << L) - 1) ^ ((1 << start) - 1)
            k, active, closed, branch = proof.packing(Smask, Lmask)
            base = [cols[q] for q in S]
            rest = list(range(start, L))
            # brute force: every set of columns of the list that makes S's cells pure; the fewest
            pure = [R for r in range(0, len(rest) + 1) for R in itertools.combinations(rest, r)
                    if _pure(X, y, base + [cols[q] for q in R])]
            least = len(pure[0]) if pure else math.inf
            assert k <= least, (S, k, least)
            if branch:
                # the branching set: within the list, and every pure support below holds one of its columns
                assert branch & ~Lmask == 0
                assert all(any(branch >> q & 1 for q in R) for R in pure), (S, branch)
            assert not closed or least == math.inf
            if not active and max_pairs > 10 ** 5:
                # no pair of the family left together (the family is complete here): S is pure
                assert _pure(X, y, base)
            checked += 1
    assert checked


# --- the crossing witness -----------------------------------------------------------------------

def _separable_by_lp(Xe, Xn) -> bool:
    """Whether the two sets of points have disjoint convex hulls (linear programming)."""
    ne, nn, k = len(Xe), len(Xn), Xe.shape[1]
    A = np.zeros((k + 2, ne + nn))
    A[:k, :ne], A[:k, ne:] = Xe.T, -Xn.T
    A[k, :ne], A[k + 1, ne:] = 1, 1
    res = linprog(np.zeros(ne + nn), A_eq=A, b_eq=np.r_[np.zeros(k), 1, 1], bounds=(0, None), method="highs")
    return res.status != 0


@pytest.mark.parametrize("seed", range(12))
def test_a_crossing_witness_means_no_linear_score_separates(seed):
    rng = np.random.default_rng(700 + seed)
    k = int(rng.integers(2, 5))
    cells = np.array(list(itertools.product(*[range(int(rng.integers(2, 4)))] * k)), dtype=float)
    cells = cells[rng.random(len(cells)) < 0.6]
    if len(cells) < 2:
        cells = np.array([[0.0] * k, [1.0] * k])
    side = rng.random(len(cells)) < 0.5
    side[0], side[-1] = True, False
    P, Q = side.astype(float), (~side).astype(float)
    said = crossing_witness(cells, P, Q)
    if said:
        assert not _separable_by_lp(cells[side], cells[~side])
        # and no whole points do (every vector in −4..4)
        for w in itertools.product(range(-4, 5), repeat=k):
            s = cells @ np.array(w, float)
            assert not s[side].min() > s[~side].max()


def test_the_crossing_witness_finds_xor_and_not_a_separable_pair():
    cells = np.array([[0, 0], [1, 1], [1, 0], [0, 1]], dtype=float)
    assert crossing_witness(cells, np.array([0, 0, 1, 1.0]), np.array([1, 1, 0, 0.0]))
    assert not crossing_witness(cells, np.array([0, 1, 1, 1.0]), np.array([1, 0, 0, 0.0]))


# --- the search certified by B9, against brute force ---------------------------------------------

def _b9_problem(seed: int, wide: bool = False):
    """Separable 0/1 data at c0 > 0 whose least pure support need not separate: y = x0 xor x1
    (x0 and x1 alone are pure, and only with x0·x1 do points separate), or a linear rule, with
    noise columns; some with a group (a term counted once)."""
    rng = np.random.default_rng(9400 + seed)
    n = int(rng.integers(30, 70))
    x0, x1 = rng.random(n) < 0.5, rng.random(n) < 0.5
    noise = rng.random((n, int(rng.integers(1, 3)))) < 0.5
    if seed % 3 == 2:
        X = np.column_stack([x0, x1, noise]).astype(float)
        y = (2 * X[:, 0] - X[:, 1] + X[:, 2] > 0.5).astype(int)
    else:
        X = np.column_stack([x0, x1, x0 & x1, noise]).astype(float)
        y = (x0 ^ x1).astype(int)
    if y.min() == y.max():
        y[0], y[1] = 0, 1
    d = X.shape[1]
    lo, hi = [-1] * d, [1] * d
    if seed % 3 == 2:
        hi[0] = 2  # 2·x0 − x1 + x2
    else:
        lo[2] = -2  # x0 + x1 − 2·x0·x1
    if wide:
        lo, hi = [-4] * d, [4] * d
    groups = [((d - 2, d - 1), None)] if seed % 4 == 3 and d >= 5 else []
    c0 = float(rng.choice([1e-6, 1e-4, 1e-3]))
    max_size = int(rng.integers(3, d - len(groups) + 1 if not groups else d))
    if wide:
        max_size = d - len(groups)
    p = RiskProblem(LogisticLoss(X, y).with_real_intercept(True), np.array(lo, float), np.array(hi, float), c0=c0,
                    max_size=max_size, groups=[SizeGroup(tuple(g), cap, f"g{k}") for k, (g, cap) in enumerate(groups)])
    return p, X, y, models_of(lo, hi, max_size, groups), c0


def _brute_objectives(X, y, models, c0) -> tuple[np.ndarray, np.ndarray]:
    """Each model's brute-force objective (its loss at the best scale, 0 when it separates the
    rows, plus c0 per item) and whether it separates the rows."""
    S = X @ models.T
    separating = np.array([_separates(S[:, k], y) for k in range(S.shape[1])])
    loss = np.zeros(len(models))
    if (~separating).any():
        loss[~separating] = oracle_values(X, y, models[~separating], "fit")
    return loss + c0 * np.count_nonzero(models, axis=1), separating


def _check_b9(seed: int) -> bool:
    p, X, y, models, c0 = _b9_problem(seed)
    truth = float(_brute_objectives(X, y, models, c0)[0].min())
    search = SupportSearch(p, True, time_limit=60, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12)
    rep = search.solve()
    assert rep.lower_bound <= truth + 1e-12, (seed, rep.lower_bound, truth)
    assert rep.status == "optimal"
    lam = np.asarray(rep.solution)
    z = (lam[0] + X @ lam[1:]) / rep.scale
    own = _mean_loss(z, y) + c0 * np.count_nonzero(lam[1:])
    assert own == pytest.approx(rep.objective, abs=1e-10)
    assert own <= truth + 1e-7, (seed, own, truth)
    assert any(np.array_equal(lam[1:], w) for w in models)
    if search._separation:
        assert "separate the rows" in rep.settings["bound"] and rep.nodes >= search.stats["b9_nodes"] > 0
    return search._separation


QUICK = (0, 2, 9)


@pytest.mark.parametrize("seed", slow_params(range(40), slow=[s for s in range(40) if s not in QUICK]))
def test_b9_certifies_the_brute_force_optimum(seed):
    _check_b9(seed)


def test_b9_closes_on_most_of_its_problems():
    """Not a test of a bound: that the audit above exercises B9 (it certifies most problems)."""
    used = []
    for seed in range(12):
        p = _b9_problem(seed)[0]
        search = SupportSearch(p, True, time_limit=60, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12)
        search.solve()
        used.append(search._separation)
    assert sum(used) >= 11, used


@pytest.mark.parametrize("seed", slow_params(range(12), slow=range(2, 12)))
def test_b9_found_by_the_tree_certifies_the_brute_force_optimum(seed, monkeypatch):
    """No start: the tree finds the separating score, and B9 is tried then."""
    monkeypatch.setattr(SupportSearch, "_start", lambda self: None)
    _check_b9(seed)


def test_b9_steps_aside_when_a_pure_support_has_no_witness(monkeypatch):
    """A pure support whose cells no witness rules out below the level: B9 does not close, and the
    search still certifies the brute-force optimum by its tree."""
    monkeypatch.setattr(purity, "crossing_witness", lambda *a, **k: False)
    p, X, y, models, c0 = _b9_problem(0)
    search = SupportSearch(p, True, time_limit=60, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12)
    rep = search.solve()
    assert not search._separation and rep.status == "optimal"
    assert "separate the rows" not in rep.settings["bound"]


def test_a_fit_on_mushroom_like_data_names_the_bound():
    import pandas as pd

    import riskformula as rf

    rng = np.random.default_rng(3)
    df = pd.DataFrame((rng.random((300, 5)) < 0.5).astype(int), columns=list("abcde"))
    df["ab"] = df.a * df.b
    df["y"] = (df.a ^ df.b).astype(int)
    with pytest.warns(rf.PerfectSeparationWarning):
        m = rf.risk_score("y ~ a + b + ab + c + d + e", df, scale="fit", max_size=4, time_limit=30)
    assert m.status == "optimal" and m.size == 3
    assert "separate the rows" in m.solver.settings["bound"] and m.solver.settings["separation_proof"]
    assert "every support that could order all events above all non-events" in str(m.summary())
    assert np.all((m.predict(df) > 0.5) == (df.y == 1))


@pytest.mark.parametrize("seed", slow_params(range(16), slow=range(2, 16)))
def test_b9_never_certifies_a_separating_score_with_more_items_than_needed(seed, monkeypatch):
    """The incumbent before the tree is a separating score with more items than the fewest that
    separate: B9 must not close (the cheaper separating support is pure and has no witness), and
    the search still ends at the brute-force optimum."""
    from riskformula.solver.separation import separated_loss

    p, X, y, models, c0 = _b9_problem(seed, wide=True)
    S = X @ models.T
    separating = np.array([_separates(S[:, k], y) for k in range(S.shape[1])])
    if not separating.any():
        pytest.skip("nothing separates within the size limit")
    nnz = np.count_nonzero(models, axis=1)
    least = nnz[separating].min()
    more = np.flatnonzero(separating & (nnz > least))
    if not len(more):
        pytest.skip("no separating score with more items")
    w = models[more[0]]

    def start(self):
        cell, n_cells = self.data.partition(tuple(range(self.p.d)))
        from riskformula.solver.cells import support_cells
        Xc, P, Q = support_cells(self.data, cell, n_cells, tuple(range(self.p.d)))
        m, c, f = separated_loss(Xc @ w, P, Q)
        lam = np.r_[c, w]
        self._offer(lam, m, f / self.data.W + c0 * np.count_nonzero(w))

    monkeypatch.setattr(SupportSearch, "_start", start)
    search = SupportSearch(p, True, time_limit=60, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12)
    rep = search.solve()
    assert not search._separation
    assert rep.status == "optimal"
    assert rep.objective <= c0 * least + 1e-9


@pytest.mark.parametrize("seed", slow_params(range(24), slow=(1, 3, 4, 5, 6, 7, *range(8, 24))))
def test_the_proof_from_one_pair_reaches_every_pure_support(seed):
    """The branching starts from the listed pairs' sets and takes in a pair whenever a support's
    cells leave one together, so its verdict does not hang on how many pairs it starts from: from
    one pair or from all, it closes or stops alike, a bound it records is below the brute-force
    optimum, and above the optimum it always finds the optimal separating support (pure, with no
    witness) and stops."""
    p, X, y, models, c0 = _b9_problem(seed)
    objective, separating = _brute_objectives(X, y, models, c0)
    truth = float(objective.min())
    search = SupportSearch(p, True, time_limit=60, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12)
    search.solve()
    floor = pair_floor(search.data)
    verdicts = {}
    for max_pairs in (1, 10 ** 6):
        proof = SeparationProof(search, floor, search._prune_level(), math.inf, max_pairs=max_pairs)
        bound = proof.run()
        verdicts[max_pairs] = bound is None
        if bound is not None:
            assert bound <= truth + 1e-12, (seed, max_pairs, bound, truth)
        if separating[int(np.argmin(objective))] and floor >= truth + 0.5 * c0:
            assert SeparationProof(search, floor, truth + 0.5 * c0, math.inf, max_pairs=max_pairs).run() is None
    assert verdicts[1] == verdicts[10 ** 6], verdicts


def _linear_rule_problem(seed: int):
    """0/1 data on 8–11 columns whose events follow a linear rule of three of them (points 1 or 2),
    so that one support of three columns separates the rows and few others can."""
    rng = np.random.default_rng(9900 + seed)
    n, d = int(rng.integers(40, 90)), int(rng.integers(8, 12))
    X = (rng.random((n, d)) < 0.5).astype(float)
    cols = rng.choice(d, 3, replace=False)
    w = rng.integers(1, 3, 3)
    s = X[:, cols] @ w
    y = (s >= np.median(s)).astype(int)
    if y.min() == y.max():
        y[0], y[1] = 0, 1
    return X, y


@pytest.mark.parametrize("max_pairs", [1, 10 ** 6])
@pytest.mark.parametrize("seed", slow_params(range(16), slow=range(5, 16)))
def test_the_proof_closes_exactly_when_no_support_below_the_level_separates(seed, max_pairs):
    """Brute force over every support: at a level that admits m items, when some support of at
    most m columns is pure and its cells are separable by a linear score (disjoint convex hulls,
    by linear programming), the proof must not close, from one pair or from all; when none is,
    it may close (a pure support with no witness stops it, as it should)."""
    X, y = _linear_rule_problem(seed)
    n, d = X.shape
    c0 = 1e-4
    p = RiskProblem(LogisticLoss(X, y).with_real_intercept(True), np.full(d, -5.0), np.full(d, 5.0), c0=c0,
                    max_size=d)
    search = SupportSearch(p, True, time_limit=30)
    floor = pair_floor(search.data)
    separable_at = math.inf  # the fewest columns of a pure support whose cells a linear score separates
    for m in range(1, 4):
        for cols in itertools.combinations(range(d), m):
            if _pure(X, y, cols):
                Z = np.unique(np.column_stack([X[:, list(cols)], y]), axis=0)
                if _separable_by_lp(Z[Z[:, -1] == 1, :-1], Z[Z[:, -1] == 0, :-1]):
                    separable_at = min(separable_at, m)
    assert separable_at <= 3  # the rule's own support
    for m in range(1, 4):
        level = (m + 0.5) * c0
        assert floor >= level
        bound = SeparationProof(search, floor, level, math.inf, max_pairs=max_pairs).run()
        if separable_at <= m:
            assert bound is None, (seed, m, separable_at)
        elif bound is not None:
            assert bound >= level
