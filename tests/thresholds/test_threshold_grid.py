"""threshold(x)'s default candidate cuts on any size: every gap up to AUTO_ABOVE distinct values,
an AUTO_GRID-cut quantile grid above (said in the summary's notes), grid=None for every gap, and
one clear message for a misspelt argument."""

import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.errors import FormulaError
from riskformula.thresholds.candidates import AUTO_ABOVE, AUTO_GRID, cuts_from_table, resolve_grid, value_table


def frame(n, distinct, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.choice(np.arange(distinct) * 0.37 + 10, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(x - x.mean()) / x.std()))).astype(int)
    return pd.DataFrame({"x": x, "y": y})


def fit(formula, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short time limit: only the candidates matter here
        return rf.risk_score(formula, data, max_size=1, time_limit=5)


def test_resolve_grid():
    assert resolve_grid("auto", AUTO_ABOVE) is None
    assert resolve_grid("auto", AUTO_ABOVE + 1) == AUTO_GRID
    assert resolve_grid(None, 10 ** 6) is None and resolve_grid(50, 3) == 50


def test_many_distinct_values_get_a_grid_by_default():
    d = frame(6000, 3000)
    assert d.x.nunique() > AUTO_ABOVE
    m = fit("y ~ threshold(x)", d)
    t = m.design.thresholds[0]
    assert t.on_grid and len(t.cuts) <= AUTO_GRID + 1
    # the same cuts as an explicit grid of that size
    explicit = fit(f"y ~ threshold(x, grid={AUTO_GRID})", d).design.thresholds[0]
    assert list(t.cuts) == list(explicit.cuts)
    notes = " ".join(m.summary().notes())
    assert f"{AUTO_GRID}-cut quantile grid was chosen automatically for threshold(x)" in notes
    assert "grid=None" in notes
    # an explicit grid is the user's choice: no "automatically" note
    assert "automatically" not in " ".join(fit(f"y ~ threshold(x, grid={AUTO_GRID})", d).summary().notes())


def test_grid_none_keeps_every_gap():
    d = frame(6000, 1500)
    every = fit("y ~ threshold(x, grid=None, min_bin=0)", d).design.thresholds[0]
    assert not every.on_grid and len(every.cuts) > AUTO_GRID


def test_few_distinct_values_keep_every_gap():
    d = frame(3000, 400)
    t = fit("y ~ threshold(x, min_bin=0)", d).design.thresholds[0]
    assert not t.on_grid
    v, ev, ne = value_table(d.x, d.y)
    assert list(t.cuts) == list(cuts_from_table(v, ev, ne, grid=None, prune=True, depth=1)[0])


def test_a_variable_above_the_old_limit_fits_with_the_defaults():
    # more than 2,000 candidate cuts used to be refused with the default arguments
    d = frame(10_000, 8000, seed=2)
    with pytest.raises(FormulaError, match="candidate cuts"):
        fit("y ~ threshold(x, grid=None, min_bin=0)", d)
    assert fit("y ~ threshold(x, min_bin=0)", d).design.thresholds[0].on_grid


def test_misspelt_argument_gets_a_did_you_mean():
    with pytest.raises(FormulaError, match=r"threshold\(\) has no argument `grids`.*Did you mean `grid`\?"):
        fit("y ~ threshold(x, grids=3)", frame(100, 20))


def test_bad_grid_names_auto():
    with pytest.raises(FormulaError, match='"auto"'):
        fit('y ~ threshold(x, grid="fine")', frame(100, 20))


def test_dask_frames_get_the_same_grid_and_message():
    dd = pytest.importorskip("dask.dataframe")
    d = frame(6000, 3000)
    lazy = fit("y ~ threshold(x)", dd.from_pandas(d, npartitions=3)).design.thresholds[0]
    assert lazy.on_grid and list(lazy.cuts) == list(fit("y ~ threshold(x)", d).design.thresholds[0].cuts)
    with pytest.raises(FormulaError, match="Did you mean `grid`"):
        fit("y ~ threshold(x, grids=3)", dd.from_pandas(frame(100, 20), npartitions=2))


def test_a_fit_stopped_over_many_cuts_suggests_a_grid():
    d = frame(600, 200, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score("y ~ threshold(x, min_bin=0)", d, max_size=4, node_limit=1, time_limit=60)
    assert m.status == "node_limit"
    n = len(m.design.thresholds[0].cuts)
    assert n >= 40
    notes = " ".join(m.summary().notes())
    assert f"before its certificate over {n:,d} candidate cuts of threshold() terms" in notes
    assert "more than 10 in threshold(x, min_bin=0)" in notes and "`threshold(x, grid=10)`" in notes
    assert "`threshold(., grid=10)` for every predictor" in notes
    # a certified fit, or one over a few cuts, gets no such note
    assert "candidate cuts of threshold()" not in " ".join(fit("y ~ threshold(x, min_bin=0)", d).summary().notes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        few = rf.risk_score("y ~ threshold(x, grid=8)", d, max_size=4, node_limit=1, time_limit=60)
    assert few.status == "node_limit" and "candidate cuts of threshold()" not in " ".join(few.summary().notes())


def test_coarse_columns_thin_each_wide_threshold_to_a_quantile_grid():
    from riskformula.design import build_design
    from riskformula.thresholds import COARSE_GRID, coarse_columns
    d = frame(600, 200, seed=3)
    d["z"] = (np.arange(len(d)) % 3 == 0).astype(int)
    design = build_design("y ~ threshold(x, min_bin=0) + z", d)
    t = design.spec.thresholds[0]
    assert len(t.columns) > 4 * COARSE_GRID
    cols = coarse_columns(design)
    kept = [j for j in cols if j in t.columns]
    others = [j for j in range(design.X.shape[1]) if j not in t.columns]
    assert set(others) <= set(cols) and len(kept) == COARSE_GRID
    # the cuts kept leave about 1/11, 2/11, ..., 10/11 of the rows on one side
    share = np.sort(design.X[:, kept].mean(axis=0))
    targets = np.arange(1, COARSE_GRID + 1) / (COARSE_GRID + 1)
    assert np.abs(share - targets).max() < 0.02, share
    # no term wider than the grid: nothing to thin
    assert coarse_columns(build_design("y ~ threshold(x, grid=8) + z", d)) is None
