"""B1 of a node's children and grandchildren at once (``CellData.grandchildren_saturated``), and the
support search that uses it two columns short of the size limit, against brute force.

The counts come from a product per cell (numpy, in single or double precision) or row by row
(compiled); each must give B1 of the refined cells exactly as the one-partition code does, a sum
stopped early must stay a lower bound at the level it was asked for, and the search must reach
the brute-force optimum with a valid lower bound whether the pass is on or off.
"""

from __future__ import annotations

import numpy as np
import pytest

from riskformula.problem import LogisticLoss, RiskProblem
from riskformula.solver import kernels
from riskformula.solver.cells import CellData
from riskformula.solver.support_search import SupportSearch

from test_support_search import models_of, oracle_values
from conftest import slow_params


class _Loss:
    """The fields of a loss that CellData reads."""

    def __init__(self, X, P, Q):
        self.Z = np.c_[np.ones(len(X)), X]
        self.w_pos, self.w_neg = P, Q
        self.total_weight = float(P.sum() + Q.sum())


def _data(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(5, 90)), int(rng.integers(3, 9))
    X = (rng.random((n, d)) < rng.random(d)).astype(float)
    if seed % 3 == 0:
        X[:, 1] = 1 - X[:, 0]  # complementary columns: empty cells after refining
    P = rng.integers(0, 4, n).astype(float)
    Q = rng.integers(0, 4, n).astype(float)
    Q[(P + Q) == 0] = 1
    return X, CellData(_Loss(X, P, Q)), rng


def _ones(X, q0):
    r_i, r_q = np.nonzero(X == 1)
    slot = np.r_[np.full(q0, -1), np.arange(X.shape[1] - q0)].astype(np.int64)  # column q0 + i is the i-th
    return np.r_[0, np.cumsum(np.bincount(r_i, minlength=len(X)))].astype(np.int64), r_q.astype(np.int64), slot


def _by_group(X, q0, order, starts):
    """Each group's positions of 1s from q0 on (its first row's), by group: the ``ones`` the
    support search gives (``SupportSearch._equal_after``), built here by a plain loop."""
    rows = [order[a] for a in starts[:-1]]
    lists = [[t for t in range(q0, X.shape[1]) if X[r, t] == 1] for r in rows]
    gptr = np.r_[0, np.cumsum([len(x) for x in lists])].astype(np.int64)
    gpos = np.array([t for x in lists for t in x], dtype=np.int64)
    slot = np.r_[np.full(q0, -1), np.arange(X.shape[1] - q0)].astype(np.int64)
    return gptr, gpos, slot, order, starts, True


# the compiled counts choose between the rows' pairs of 1s and a product per cell by the rows'
# density (kernels.DENSE_PAIRS); each is forced here, and the numpy code they replace is audited
# wherever numba is installed
PATHS = {"compiled": None, "compiled rows": 1e-300, "compiled product": 1e300, "numpy": None}


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("seed", range(40))
def test_children_and_grandchildren_are_b1_of_their_refined_cells(seed, path, monkeypatch):
    if path == "numpy":
        monkeypatch.setattr(kernels, "compiled", lambda: None)
    elif PATHS[path] is not None:
        monkeypatch.setattr(kernels, "DENSE_PAIRS", PATHS[path])
    X, data, rng = _data(seed)
    d = X.shape[1]
    cell, n_cells = data.partition([0, 2][: int(rng.integers(0, 3))])
    q0 = int(rng.integers(0, 3))
    cols = list(range(q0, d))
    K = int(rng.integers(1, len(cols) + 1))
    Xo = np.ascontiguousarray(X, dtype=np.float32 if seed % 2 else float)
    # rows equal on the columns from q0 on, grouped (counted once per cell and group)
    sid = data.partition(list(range(q0, d)))[0]
    order = np.argsort(sid, kind="stable").astype(np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(sid[order])) + 1, len(sid)].astype(np.int64)
    ways = [None, _ones(Xo, q0), (*_ones(Xo, q0), order, starts), _by_group(Xo, q0, order, starts)]
    if kernels.compiled() is None:
        ways = [None]
    for ones in ways:
        own, pair = data.grandchildren_saturated(cell, n_cells, Xo[:, q0:], K, ones)
        assert own == pytest.approx(data.children_saturated(cell, n_cells, cols[:K]), rel=1e-12, abs=1e-15)
        for k in range(K):
            c1, n1 = data.refine(cell, cols[k])
            assert np.all(np.isinf(pair[k, :k + 1]))
            for i in range(k + 1, len(cols)):
                c2, n2 = data.refine(c1, cols[i])
                assert pair[k, i] == pytest.approx(data.saturated(c2, n2), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("seed", range(24))
def test_the_product_per_cell_counts_what_the_rows_count(seed, monkeypatch):
    # the compiled counts of the pairs of 1s by one product per cell (BLAS; rows with many 1s, as
    # nested threshold cuts have) and row by row or group by group: sums of whole counts either
    # way, so the same bounds bit for bit — in single precision, and in double once the total
    # weight reaches 2^24
    if kernels.compiled() is None:
        pytest.skip("the product per cell is in the compiled counts")
    X, data, rng = _data(seed)
    if seed % 2:
        P, Q = data.P * 2.0 ** 22, data.Q * 2.0 ** 22
        data = CellData(_Loss(X, P, Q))
        assert data.P.sum() + data.Q.sum() >= 2 ** 24
    d = X.shape[1]
    cell, n_cells = data.partition([0, 2][: int(rng.integers(0, 3))])
    q0 = int(rng.integers(0, 3))
    K = int(rng.integers(1, d - q0 + 1))
    sid = data.partition(list(range(q0, d)))[0]
    order = np.argsort(sid, kind="stable").astype(np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(sid[order])) + 1, len(sid)].astype(np.int64)
    for ones in (_ones(X, q0), (*_ones(X, q0), order, starts), _by_group(X, q0, order, starts)):
        got = {}
        for dense in (1e-300, 1e300):
            monkeypatch.setattr(kernels, "DENSE_PAIRS", dense)
            got[dense] = data.grandchildren_saturated(cell, n_cells, X[:, q0:], K, ones)
        assert np.array_equal(got[1e-300][0], got[1e300][0]) and np.array_equal(got[1e-300][1], got[1e300][1])
    with monkeypatch.context() as m:
        m.setattr(kernels, "compiled", lambda: None)
        own, pair = data.grandchildren_saturated(cell, n_cells, X[:, q0:], K)
    np.testing.assert_allclose(got[1e300][0], own, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got[1e300][1], pair, rtol=1e-12, atol=1e-15)


def _exact_b1(cell, P, Q, W) -> float:
    """B1 of a partition as a mean, in 50-digit decimal arithmetic (a reference far more precise
    than any double computation)."""
    from decimal import Decimal, getcontext
    getcontext().prec = 50
    Pt = np.bincount(cell, weights=P)
    Qt = np.bincount(cell, weights=Q)
    total = Decimal(0)
    for a, b in zip(Pt, Qt):
        if a > 0 and b > 0:
            A, B = Decimal(int(a)), Decimal(int(b))
            total += A * ((A + B) / A).ln() + B * ((A + B) / B).ln()
    return float(total / Decimal(int(W)))


@pytest.mark.parametrize("seed", range(12))
def test_the_table_of_x_log_x_gives_bounds_below_exact_b1(seed):
    # the compiled count reads its h terms from a table of x·log x (CellData.xlogx) and subtracts
    # the table's own margin: every bound it returns is at or below B1 computed exactly, on nested
    # threshold-like columns with large counts (where the table's cancellation is largest), and
    # within 1e-12 of it
    if kernels.compiled() is None:
        pytest.skip("the table is read by the compiled counts")
    rng = np.random.default_rng(4200 + seed)
    n = int(rng.integers(20, 70))
    v = rng.normal(size=n)
    cuts = np.sort(rng.choice(v, size=int(rng.integers(3, 7)), replace=False))
    X = np.column_stack([(v <= c).astype(float) for c in cuts] + [(rng.random(n) < 0.5).astype(float)])
    big = 10 ** int(rng.integers(2, 5))
    P = rng.integers(0, big, n).astype(float)
    Q = rng.integers(0, big, n).astype(float)
    Q[(P + Q) == 0] = 1
    data = CellData(_Loss(X, P, Q))
    assert data.xlogx is not None and len(data.xlogx) == int(data.W) + 1
    cell, n_cells = data.partition([X.shape[1] - 1][: seed % 2])
    d = X.shape[1]
    own, pair = data.grandchildren_saturated(cell, n_cells, X, d, _ones(X, 0))
    for k in range(d):
        c1, n1 = data.refine(cell, k)
        exact = _exact_b1(c1, P, Q, data.W)
        assert own[k] <= exact and own[k] >= exact - 1e-12
        for i in range(k + 1, d):
            c2, _ = data.refine(c1, i)
            exact = _exact_b1(c2, P, Q, data.W)
            assert pair[k, i] <= exact and pair[k, i] >= exact - 1e-12


def test_no_table_above_its_limit_or_without_whole_counts(monkeypatch):
    X, data, _ = _data(1)
    assert data.xlogx is not None
    with monkeypatch.context() as m:
        m.setattr(CellData, "TABLE_MAX", int(data.W) - 1)
        assert CellData(_Loss(X, data.P, data.Q)).xlogx is None
    # fractional weights that add up to a whole total: no table (a count would not be an index)
    P = data.P.copy()
    P[:2] += 0.5
    assert (P.sum() + data.Q.sum()) % 1 == 0
    assert CellData(_Loss(X, P, data.Q)).xlogx is None


@pytest.mark.parametrize("seed", range(20))
def test_a_count_stopped_early_is_still_below_b1_and_reaches_the_level(seed):
    if kernels.compiled() is None:
        pytest.skip("the early stop is in the compiled counts")
    X, data, rng = _data(seed)
    cell, n_cells = data.partition([0])
    full = data.grandchildren_saturated(cell, n_cells, X, X.shape[1], _ones(X, 0))[1]
    finite = full[np.isfinite(full)]
    if not finite.size:
        return
    enough = float(np.quantile(finite, 0.3))
    part = data.grandchildren_saturated(cell, n_cells, X, X.shape[1], _ones(X, 0), enough)[1]
    ok = np.isfinite(full)
    assert np.all(part[ok] <= full[ok] + 1e-15)  # a partial sum: never above the full bound
    assert np.all(part[ok & (full >= enough)] >= enough * (1 - 1e-12) - 1e-15)  # still prunes what B1 prunes


def _binary_problem(seed: int):
    rng = np.random.default_rng(9100 + seed)
    n, d = int(rng.integers(30, 80)), int(rng.integers(4, 7))
    X = (rng.random((n, d)) < rng.uniform(0.25, 0.75, d)).astype(float)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ rng.normal(0, 1.4, d) - 0.5)))).astype(int)
    y[0], y[1] = 0, 1
    max_size = int(rng.integers(2, min(d, 4) + 1))
    lo, hi = [-2] * d, [2] * d
    c0 = float(rng.choice([0.0, 1e-6, 0.01]))
    mode = "fit" if seed % 3 == 0 else "real"
    loss = LogisticLoss(X, y, scale=1.0).with_real_intercept(True)
    p = RiskProblem(loss, np.array(lo, float), np.array(hi, float), c0=c0, max_size=max_size)
    return p, X, y, models_of(lo, hi, max_size), c0, mode


@pytest.mark.parametrize("seed", slow_params(range(12), slow=(0, 2, 4, 5, 6, 8, 9, 10, 11)))  # 0, 6, 9: 46 s
def test_the_search_with_the_pass_is_the_brute_force_optimum(seed, monkeypatch):
    p, X, y, models, c0, mode = _binary_problem(seed)
    truth = float((oracle_values(X, y, models, mode) + c0 * np.count_nonzero(models, axis=1)).min())
    calls = []
    original = SupportSearch._grandchildren

    def counted(self, *args):
        calls.append(1)
        return original(self, *args)
    monkeypatch.setattr(SupportSearch, "_grandchildren", counted)
    reports = []
    for on in (True, False):
        search = SupportSearch(p, mode == "fit", time_limit=60, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12)
        search.leaf_pass = on
        reports.append(search.solve())
        if on:
            assert calls, "the pass was not used"
            calls.clear()
    assert not calls  # off means off
    for rep in reports:
        assert rep.status == "optimal"
        assert rep.lower_bound <= truth + 1e-12, (seed, rep.lower_bound, truth)
        assert rep.objective <= truth + 1e-7
    assert reports[0].objective == pytest.approx(reports[1].objective, abs=1e-9)


@pytest.mark.parametrize("numpy_only", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_the_pass_over_an_order_b8_chose_is_b1_of_the_refined_cells(seed, numpy_only, monkeypatch):
    # a node whose later columns come in an order B8 chose (some positions, not consecutive, not
    # increasing): the children are the first K of them, each child's children the columns after
    # it in that list; B1 of each is that of its refined cells, as for the search's own order
    if numpy_only:
        monkeypatch.setattr(kernels, "compiled", lambda: None)
    rng = np.random.default_rng(700 + seed)
    n, d = int(rng.integers(30, 120)), 8
    X = (rng.random((n, d)) < rng.uniform(0.2, 0.7, d)).astype(float)
    X[:, 3] = X[:, 2]  # equal columns: rows equal on a later column set, cells left empty
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ rng.normal(0, 1, d) - 0.5)))).astype(int)
    p = RiskProblem(LogisticLoss(X, y), np.full(d, -2.0), np.full(d, 2.0), c0=1e-6, max_size=4)
    s = SupportSearch(p, True, beam=False)
    s._prepare()
    order, data = s._order, s.data
    cell, n_cells = data.refine(np.zeros(data.n, dtype=np.int64), order[0])
    L = len(order)
    full = rng.permutation(np.arange(1, L))[: int(rng.integers(3, L))]
    K = int(rng.integers(1, len(full) + 1))
    own, pair, sub = s._grandchildren(cell, n_cells, full, K, 1e-6)
    cols = [order[q] for q in full]
    assert own == pytest.approx(data.children_saturated(cell, n_cells, cols[:K]), rel=1e-12, abs=1e-15)
    for k in range(K):
        c1, _ = data.refine(cell, cols[k])
        assert np.all(np.isinf(pair[k, :k + 1]))
        for i in range(k + 1, len(cols)):
            c2, n2 = data.refine(c1, cols[i])
            assert pair[k, i] == pytest.approx(data.saturated(c2, n2), rel=1e-12, abs=1e-15)
    assert np.all(sub <= own)
