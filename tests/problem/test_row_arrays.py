"""The problem's rows as one sparse matrix (:meth:`RiskProblem.row_arrays`, what the LP and the
feasibility check read) are exactly its rows one by one (:meth:`RiskProblem.all_rows`)."""

from __future__ import annotations

import numpy as np
import pytest

from riskformula.problem import LogisticLoss, RiskProblem, SizeGroup
from riskformula.problem.problem import LinearRow


def _dense(p: RiskProblem):
    rows = p.all_rows()
    A = np.zeros((len(rows), p.n_cols))
    for i, r in enumerate(rows):
        for k, v in r.coefs.items():
            A[i, k] += v
    return A, np.array([r.lower for r in rows]), np.array([r.upper for r in rows])


@pytest.mark.parametrize("seed", range(6))
def test_row_arrays_are_all_rows(seed):
    rng = np.random.default_rng(seed)
    n, d = 30, 7
    X = rng.integers(0, 2, (n, d)).astype(float)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    lo = rng.choice([-3, -1, 0], d).astype(float)
    hi = rng.choice([0, 1, 4], d).astype(float)
    groups = [[], [SizeGroup((1, 2, 3), max_used=1, name="cuts")],
              [SizeGroup((1, 2, 3), max_used=None, name="factor"), SizeGroup((4, 5), max_used=2, name="f2")],
              [SizeGroup((0, 6), max_used=1, name="a")]][seed % 4]
    p = RiskProblem(LogisticLoss(X, y), lo, hi, max_size=int(rng.integers(1, 4)), min_size=seed % 2, groups=groups)
    if seed >= 4:
        p.rows = [LinearRow({p.layout.lam(0): 1.0, p.layout.lam(1): -2.0}, upper=1.0, name="mine")]
    starts, cols, vals, lower, upper = p.row_arrays()
    A, lo_ref, hi_ref = _dense(p)
    got = np.zeros_like(A)
    ends = np.append(starts[1:], len(cols))
    for i, (a, b) in enumerate(zip(starts, ends)):
        np.add.at(got[i], cols[a:b], vals[a:b])
    assert np.array_equal(got, A)
    assert np.array_equal(lower, lo_ref) and np.array_equal(upper, hi_ref)
    assert not np.any(vals == 0)
    # the feasibility check reads the same rows: a point is feasible exactly when every row holds
    for _ in range(50):
        lam = np.concatenate([[0.0], rng.integers(-3, 5, d)]).astype(float)
        x = p.complete(lam)
        col_lo, col_hi = p.column_bounds()
        alpha = (lam[1:] != 0).astype(float)
        used = [alpha[list(g.cols)].max() for g in p.groups]
        full = np.concatenate([lam, alpha, used])
        in_box = np.all(full >= col_lo - 1e-7) and np.all(full <= col_hi + 1e-7)
        act = A @ full
        holds = in_box and np.all(act >= lo_ref - 1e-7) and np.all(act <= hi_ref + 1e-7)
        assert (x is not None) == bool(holds)


@pytest.mark.parametrize("seed", range(4))
def test_score_range_matches_the_four_products(seed):
    """The score range's per-entry extremes, written as one product by sign, are min/max of
    x·l, x·u and 0 for design values of either sign (Ustun & Rudin, 2019, Proposition 4)."""
    from riskformula.problem.problem import score_range
    rng = np.random.default_rng(seed)
    n, d = 40, 6
    X = rng.integers(-2, 3, (n, d)).astype(float) * (rng.random((n, d)) < 0.7)
    X[:, 0] = np.abs(X[:, 0])
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    lo = rng.choice([-3, -1, 0, 1], d).astype(float)
    hi = np.maximum(lo, rng.choice([-1, 0, 2, 4], d)).astype(float)
    groups = [SizeGroup((1, 2), max_used=1, name="g")] if seed % 2 else []
    p = RiskProblem(LogisticLoss(X, y), lo, hi, max_size=int(rng.integers(1, 5)), groups=groups)
    a, b = X * lo, X * hi
    e_lo, e_hi = np.minimum(np.minimum(a, b), 0.0), np.maximum(np.maximum(a, b), 0.0)
    ref_lo, ref_hi = [], []
    for i in range(n):  # the R most extreme units, a group counting as its max_used most extreme columns
        units_lo = [e_lo[i, j] for j in range(d) if not any(j in g.cols for g in groups)]
        units_hi = [e_hi[i, j] for j in range(d) if not any(j in g.cols for g in groups)]
        for g in groups:
            units_lo.append(min(e_lo[i, list(g.cols)]))  # max_used=1
            units_hi.append(max(e_hi[i, list(g.cols)]))
        ref_lo.append(sum(sorted(units_lo)[:p.max_size]))
        ref_hi.append(sum(sorted(units_hi)[::-1][:p.max_size]))
    got_lo, got_hi = score_range(p, X)
    assert np.allclose(got_lo, ref_lo) and np.allclose(got_hi, ref_hi)
