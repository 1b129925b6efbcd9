"""Row-count reductions (no dask needed): value tables, exact quantiles, weighted patterns, and
metrics with frequency weights equal to the metrics of the repeated rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from riskformula.backends.counts import collapse_patterns, merge_patterns, merge_value_tables
from riskformula.thresholds.candidates import cuts_from_table, linear_quantiles, value_table
from riskformula.problem import LogisticLoss
from riskformula.reports import metrics as m
from riskformula.thresholds import candidate_cuts


def _sample(rng, kind: int, n: int) -> np.ndarray:
    if kind == 0:
        return rng.integers(0, int(rng.integers(2, 200)), n).astype(float)
    if kind == 1:
        return rng.normal(size=n).round(int(rng.integers(0, 3)))
    if kind == 2:
        return rng.normal(size=n)
    x = rng.integers(0, 50, n).astype(float)
    x[rng.random(n) < 0.05] = np.inf
    return x


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_candidate_cuts_from_split_value_tables_equal_candidate_cuts_on_the_rows():
    rng = np.random.default_rng(1)
    for trial in range(600):
        n = int(rng.integers(2, 2000))
        x = _sample(rng, trial % 4, n)
        y = (rng.random(n) < (0.1 if trial % 3 == 0 else 1 / (1 + np.exp(-np.clip(x, -5, 5))))).astype(int)
        grid = [None, 1, 3, 5, 10, 50, 100][trial % 7]
        min_bin, depth = [0.0, 0.05, 0.2][trial % 3], [None, 1, 2, 5][trial % 4]
        parts = np.array_split(rng.permutation(n), int(rng.integers(1, 6)))
        table = merge_value_tables([value_table(x[i], y[i]) for i in parts])
        for prune in (True, False):
            want, want_grid = candidate_cuts(x, grid, y if prune else None, min_bin=min_bin, depth=depth)
            got, got_grid = cuts_from_table(*table, grid=grid, prune=prune, min_bin=min_bin, depth=depth)
            assert got_grid == want_grid
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [7, 12, 101, 1001, 100_001])
def test_linear_quantiles_are_numpys_to_the_bit(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=n).round(1)
    v, c = np.unique(x, return_counts=True)
    for g in (1, 2, 3, 4, 5, 9, 10, 11, 99, 100):
        q = np.arange(1, g + 1) / (g + 1)
        np.testing.assert_array_equal(linear_quantiles(v, c, q), np.quantile(x, q))
    q = rng.random(50)
    np.testing.assert_array_equal(linear_quantiles(v, c, q), np.quantile(x, q))


def test_value_table_ignores_non_finite_values():
    v, ev, ne = value_table([3.0, 1.0, 3.0, np.inf, -np.inf], [1, 0, 0, 1, 0])
    assert v.tolist() == [1.0, 3.0] and ev.tolist() == [0, 1] and ne.tolist() == [1, 1]


def test_merged_patterns_give_the_loss_of_the_rows():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(5000, 4)).astype(float)
    y = rng.integers(0, 2, 5000)
    w = rng.random(5000)
    parts = np.array_split(np.arange(5000), 7)
    Z, sums = merge_patterns([collapse_patterns(np.column_stack([X[i], y[i]]), n=np.ones(len(i)), w=w[i])
                              for i in parts])
    assert len(Z) == len(np.unique(np.column_stack([X, y]), axis=0))
    assert sums["n"].sum() == 5000
    rows = LogisticLoss(X, y, w)
    pats = LogisticLoss(Z[:, :-1], Z[:, -1], sums["w"])
    lam = np.array([-0.5, 1.0, -2.0, 0.5, 3.0])
    assert pats.value(lam) == pytest.approx(rows.value(lam), rel=1e-12)
    np.testing.assert_allclose(pats.w_pos, rows.w_pos, rtol=1e-12)
    np.testing.assert_array_equal(pats.Z, rows.Z)


def test_collapse_patterns_treats_minus_zero_as_zero():
    Z, sums = collapse_patterns(np.array([[0.0, 1.0], [-0.0, 1.0]]), n=np.ones(2))
    assert len(Z) == 1 and sums["n"].tolist() == [2.0]


def test_metrics_with_frequency_weights_equal_the_repeated_rows():
    rng = np.random.default_rng(4)
    score = rng.integers(-3, 4, 60).astype(float)
    y = (rng.random(60) < 1 / (1 + np.exp(-score))).astype(float)
    w = rng.integers(1, 5, 60).astype(float)
    risk = 1 / (1 + np.exp(-(score - 0.3)))
    ry, rr, rs = (np.repeat(a, w.astype(int)) for a in (y, risk, score))
    a, b = m.auc_ci(y, score, weights=w), m.auc_ci(ry, rs)
    assert (a.auc, a.se, a.lower, a.upper) == pytest.approx((b.auc, b.se, b.lower, b.upper), rel=1e-12)
    h1, h2 = m.hosmer_lemeshow(y, risk, weights=w), m.hosmer_lemeshow(ry, rr)
    assert (h1.statistic, h1.df, h1.groups) == pytest.approx((h2.statistic, h2.df, h2.groups), rel=1e-12)
    pd.testing.assert_frame_equal(h1.table, h2.table)
    assert m.expected_calibration_error(y, risk, weights=w) == pytest.approx(m.expected_calibration_error(ry, rr))
    c1, c2 = m.calibration_intercept_slope(y, risk, weights=w), m.calibration_intercept_slope(ry, rr)
    assert c1.to_dict() == pytest.approx(c2.to_dict(), rel=1e-7)


@pytest.mark.filterwarnings("ignore::riskformula.errors.CalibrationWarning")
def test_evaluate_arrays_with_counts_equals_evaluate_on_rows():
    import riskformula as rf
    from riskformula.reports.evaluation import evaluate_arrays
    from conftest import binary_frame

    df = binary_frame(800, seed=5)
    fit = rf.risk_score("y ~ x1 + x2 + C(grp)", df, max_size=2, time_limit=10)
    rows = rf.evaluate(fit, df, by="grp")
    t = pd.DataFrame({"y": fit.observed(df), "risk": fit.predict(df), "score": fit.score(df), "by": df.grp})
    t = t.groupby(list(t.columns)).size().rename("n").reset_index()
    counted = evaluate_arrays(fit, t.y, t.risk, t.score, weights=t.n, by="grp", by_values=t.by.to_numpy())
    a, b = counted.to_dict(), rows.to_dict()
    assert a.keys() == b.keys()
    for k in a:
        if k == "by_group":
            for level in b[k]:
                assert a[k][level] == _approx(b[k][level])
        else:
            assert a[k] == _approx(b[k]), k
    pd.testing.assert_frame_equal(counted.reliability, rows.reliability)
    pd.testing.assert_frame_equal(counted.net_benefit, rows.net_benefit, rtol=1e-12)


def _approx(want):
    """pytest.approx for numbers (NaN equal to NaN), recursing into dicts and lists; other values compare equal."""
    if isinstance(want, dict):
        return {k: _approx(v) for k, v in want.items()}
    if isinstance(want, (list, tuple)):
        return type(want)(_approx(v) for v in want)
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return pytest.approx(want, rel=1e-9, nan_ok=True)
    return want


def test_narrowest_keeps_whole_numbers_exactly_in_a_small_integer_dtype():
    from riskformula.backends.counts import narrowest
    assert narrowest(np.array([[0.0, 1.0], [-0.0, 1.0]])).dtype == np.int8
    assert narrowest(np.array([-129.0, 3.0])).dtype == np.int16
    assert narrowest(np.array([70_000.0, 0.0])).dtype == np.int32
    for same in (np.array([0.5, 1.0]), np.array([2.0 ** 40, 1.0]), np.array([np.nan, 1.0]), np.array([np.inf]),
                 np.zeros((0, 3))):
        assert narrowest(same) is same
    ints = np.array([[1, 2]], dtype=np.int64)
    assert narrowest(ints) is ints
    x = np.random.default_rng(0).integers(-300, 300, (50, 4)).astype(float)
    assert np.array_equal(narrowest(x).astype(float), x)


@pytest.mark.parametrize("seed", range(4))
def test_patterns_kept_narrow_merge_to_the_float_patterns(seed):
    """Pattern tables of whole numbers kept in a small integer dtype (and mixed with float tables)
    merge to the same distinct rows and sums as the tables kept as floats."""
    from riskformula.backends.counts import narrowest
    rng = np.random.default_rng(seed)
    parts, narrow = [], []
    for k in range(5):
        Z = rng.integers(0, 3, (200, 4)).astype(float)
        if k == 3 and seed % 2:
            Z[:, 1] += 0.5  # one table of non-whole numbers stays float
        Z[rng.random(200) < 0.1, 0] = -0.0
        w = rng.random(200)
        part = collapse_patterns(Z, n=np.ones(200), w=w)
        parts.append(part)
        narrow.append((narrowest(part[0]), part[1]))
    Zf, sf = merge_patterns(parts)
    Zn, sn = merge_patterns(narrow)
    assert (Zn.dtype == np.int8) == (seed % 2 == 0)
    order_f, order_n = np.lexsort(Zf.T[::-1]), np.lexsort(Zn.astype(float).T[::-1])
    assert np.array_equal(Zf[order_f], Zn[order_n].astype(float))
    for k in ("n", "w"):
        np.testing.assert_allclose(sf[k][order_f], sn[k][order_n], rtol=1e-12)
