"""The row collapse of the logistic loss (``distinct_rows``) means what ``np.unique(X, axis=0,
return_inverse=True)`` means, in any dtype, and the loss on the collapsed rows is the loss on the
raw rows."""

import tracemalloc

import numpy as np
import pytest

from riskformula.problem import loss as loss_module
from riskformula.problem.loss import LogisticLoss, distinct_rows


def _reference(X):
    uniq, inverse = np.unique(np.asarray(X, dtype=float), axis=0, return_inverse=True)
    return uniq, inverse.ravel()


def _check(X):
    uniq, inverse = distinct_rows(X)
    want_uniq, want_inverse = _reference(X)
    assert uniq.dtype == np.float64
    np.testing.assert_array_equal(uniq, want_uniq)  # same rows, same (lexicographic) order
    np.testing.assert_array_equal(inverse, want_inverse)
    np.testing.assert_array_equal(uniq[inverse], np.asarray(X, dtype=float))
    assert not np.signbit(uniq[uniq == 0]).any()  # -0.0 is written 0.0
    return uniq, inverse


def _brute_force(X):
    """Distinct rows by comparing every pair of rows (a row's group is its first equal row)."""
    X = np.asarray(X, dtype=float)
    groups = {}
    for i, row in enumerate(X):
        for first in groups:
            if np.array_equal(X[first], row):
                groups[first].append(i)
                break
        else:
            groups[i] = [i]
    return groups


@pytest.mark.parametrize("seed", range(30))
def test_small_integers_in_every_dtype(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 80)), int(rng.integers(1, 7))
    lo = int(rng.integers(-3, 3))
    X = rng.integers(lo, lo + int(rng.integers(1, 4)), size=(n, d))
    for dtype in (np.int64, np.int8, np.uint8, np.int16, np.float64, np.float32):
        if np.dtype(dtype).kind == "u" and lo < 0:
            continue
        _check(X.astype(dtype))
    _check(X > lo)  # bool
    groups = _brute_force(X)
    uniq, inverse = distinct_rows(X)
    assert len(uniq) == len(groups)
    for members in groups.values():  # rows equal exactly when they share a distinct row
        assert len(set(inverse[members])) == 1
    assert len({inverse[members[0]] for members in groups.values()}) == len(groups)


@pytest.mark.parametrize("seed", range(30))
def test_floats_with_signed_zeros_and_infinities(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 80)), int(rng.integers(1, 6))
    pool = np.array([0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, np.inf, -np.inf, 3.0, 2 ** 60, 0.1])
    X = rng.choice(pool[: int(rng.integers(2, len(pool) + 1))], size=(n, d))
    _check(X)
    assert len(distinct_rows(X)[0]) == len(_brute_force(X))


def test_integer_extremes_do_not_overflow():
    info8, info64 = np.iinfo(np.int8), np.iinfo(np.int64)
    _check(np.array([[info8.max, 0], [info8.min, 1], [info8.max, 0], [0, 1]], dtype=np.int8))
    X = np.array([[info64.max], [info64.max - 3], [info64.max], [info64.max - 1]], dtype=np.int64)
    uniq, inverse = distinct_rows(X)
    np.testing.assert_array_equal(inverse, [2, 0, 2, 1])
    big = np.array([[2 ** 64 - 1], [2 ** 64 - 2], [2 ** 64 - 1]], dtype=np.uint64)
    np.testing.assert_array_equal(distinct_rows(big)[1], [1, 0, 1])


def test_wide_ranges_and_many_columns_pack_in_several_keys(monkeypatch):
    rng = np.random.default_rng(1)
    # counts over a range wider than 2^20 (ranked, not offset) beside small integers and reals
    X = np.column_stack([rng.integers(0, 3, 500), rng.integers(0, 2 ** 40, 500) // 2 ** 37,
                         rng.choice([0.5, 1.25, -7.0], 500), rng.integers(0, 2, (500, 70))])
    X[:250] = X[250:]  # every row twice
    uniq, _ = _check(X)
    assert len(uniq) < 500
    # more than 62 bits of codes: several keys, each ranked before the next is appended
    monkeypatch.setattr(loss_module, "_KEY_LIMIT", 1 << 5)
    _check(X)
    _check(rng.integers(0, 3, (300, 12)))


def test_nan_keeps_np_unique_meaning():
    X = np.array([[np.nan, 1.0], [0.0, 1.0], [0.0, 1.0]])
    uniq, inverse = distinct_rows(X)
    want_uniq, want_inverse = _reference(X)
    np.testing.assert_array_equal(uniq, want_uniq)
    np.testing.assert_array_equal(inverse, want_inverse)


def test_empty_and_single_row():
    _check(np.zeros((1, 3)))
    uniq, inverse = distinct_rows(np.zeros((0, 2)))
    assert uniq.shape == (0, 2) and len(inverse) == 0


@pytest.mark.parametrize("seed", range(10))
def test_loss_weights_sum_per_distinct_row_and_loss_equals_the_raw_rows(seed):
    rng = np.random.default_rng(seed)
    n, d = 400, 4
    X = rng.integers(0, 3, size=(n, d)).astype(rng.choice([np.int8, np.float64]))
    y = rng.random(n) < 0.3
    w = rng.random(n) * 3
    loss = LogisticLoss(X, y, w, positive_weight=2.0)
    uniq, inverse = _reference(X)
    np.testing.assert_array_equal(loss.Z[:, 1:], uniq)
    assert loss.Z.dtype == np.float64 and loss.n_unique == len(uniq) and loss.n_raw == n
    for r in range(len(uniq)):
        rows = inverse == r
        assert loss.w_pos[r] == pytest.approx(2.0 * w[rows & y].sum(), rel=1e-12)
        assert loss.w_neg[r] == pytest.approx(w[rows & ~y].sum(), rel=1e-12)
    lam = rng.integers(-3, 4, size=d + 1).astype(float)
    s = lam[0] + np.asarray(X, float) @ lam[1:]
    raw = (2.0 * w * y * np.logaddexp(0, -s) + w * ~y * np.logaddexp(0, s)).sum() / w.sum()
    assert loss.value(lam) == pytest.approx(raw, rel=1e-12)


def test_loss_reads_the_rows_in_their_own_dtype():
    """The raw rows are never copied whole, nor converted to float (the old collapse did both):
    the memory the loss allocates is well below one float copy of the data."""
    rng = np.random.default_rng(0)
    patterns = rng.integers(0, 2, size=(6, 60)).astype(np.int8)
    X = patterns[rng.integers(0, 6, 40_000)]
    y = rng.random(40_000) < 0.3
    tracemalloc.start()
    try:
        loss = LogisticLoss(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.5 * X.size * 8  # a float copy is X.size * 8 bytes
    assert loss.n_unique == len(np.unique(X, axis=0))


@pytest.mark.parametrize("seed", range(4))
def test_loss_on_a_few_columns_is_the_loss_of_points_zero_elsewhere(seed):
    # LogisticLoss.on_columns: the rows regrouped by their values on the columns kept; every
    # value and gradient is that of the full loss with the other points 0
    rng = np.random.default_rng(seed)
    n, d = 300, 7
    X = rng.integers(0, 3, (n, d)).astype(float)
    y = rng.integers(0, 2, n)
    w = rng.integers(1, 4, n).astype(float)
    full = LogisticLoss(X, y, weights=w, positive_weight=[1.0, 2.5][seed % 2], scale=[1.0, 1.7][seed % 2])
    cols = np.array([0, 2, 5, 6])
    sub = full.on_columns(cols)
    assert sub.n_unique < full.n_unique and sub.Z.shape[1] == len(cols)
    assert sub.row_counts.sum() == n and sub.row_events.sum() == y.sum()
    for _ in range(3):
        x = rng.normal(0, 2, len(cols))
        lam = np.zeros(d + 1)
        lam[cols] = x
        f, g = full.value_and_gradient(lam)
        fs, gs = sub.value_and_gradient(x)
        assert fs == pytest.approx(f, rel=1e-12)
        np.testing.assert_allclose(gs, g[cols], rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("seed", range(6))
def test_dense_codes_by_counting_and_by_hashing_agree(seed):
    # integer keys within a narrow range are counted (bincount), the others hashed: both give the
    # rank of each key among the distinct keys
    rng = np.random.default_rng(seed)
    for width in (1, 7, 5_000, 1 << 40):
        key = rng.integers(-width, width, size=int(rng.integers(1, 3_000)), dtype=np.int64)
        codes, k = loss_module._dense(key)
        values, want = np.unique(key, return_inverse=True)
        assert k == len(values)
        np.testing.assert_array_equal(codes, want.ravel())


@pytest.mark.parametrize("seed", range(4))
def test_known_column_ranges_give_the_same_rows(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(-2, 3, size=(500, 5)).astype(float)
    X[:, 1] = rng.normal(size=500).round(1)  # one column of decimals: ranked, not counted
    lo, hi, whole, _ = loss_module._column_ranges(X)
    uniq, inverse = distinct_rows(X, ranges=(lo, hi, whole))
    want_uniq, want_inverse = _reference(X)
    np.testing.assert_array_equal(uniq, want_uniq)
    np.testing.assert_array_equal(inverse, want_inverse)
