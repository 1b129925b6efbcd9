"""Model-chosen thresholds: brute force over every cut and every set of points, predict agreement."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.errors import FormulaError

LO, HI = -2, 2
B = np.arange(-10, 11, dtype=float)
C0 = 1e-6


def mean_loss(s, y):
    return (np.logaddexp(0, -s) * y[:, None] + np.logaddexp(0, s) * (1 - y[:, None])).mean(axis=0)


def step_scores(x, cuts, levels):
    """Points of each row under a step function with the given cuts (ascending) and interval levels."""
    return np.asarray(levels, float)[np.searchsorted(np.asarray(cuts, float), x, side="left")]


def cut_columns(x):
    """``1[x ≤ c]`` for a cut in every gap between distinct values of ``x``."""
    v = np.unique(x)
    return [(x <= c).astype(float) for c in (v[:-1] + v[1:]) / 2]


def brute_items(groups, y, max_items, caps=None, extra=None, lo=LO, hi=HI):
    """min of loss + c0·(items) over ≤ ``max_items`` columns with points in [lo, hi] \\ {0} (at most
    ``caps[g]`` from group g) and the intercept: each column of ``groups`` (one list per
    variable) is one card item, as a threshold's cuts are."""
    cols = [(g, c) for g, group in enumerate(groups) for c in group]
    caps = caps or [max_items] * len(groups)
    base = extra if extra is not None else np.zeros(len(y))
    pts = [p for p in range(lo, hi + 1) if p != 0]
    best = mean_loss(base[:, None] + B[None, :], y).min()
    for q in range(1, max_items + 1):
        for chosen in itertools.combinations(range(len(cols)), q):
            if any(sum(cols[i][0] == g for i in chosen) > caps[g] for g in range(len(groups))):
                continue
            M = np.column_stack([cols[i][1] for i in chosen])
            for w in itertools.product(pts, repeat=q):
                s = base + M @ np.asarray(w, float)
                best = min(best, mean_loss(s[:, None] + B[None, :], y).min() + C0 * q)
    return best


def brute_threshold(x, y, k, extra=None):
    """One threshold with at most ``k`` cuts (items)."""
    return brute_items([cut_columns(x)], y, k, extra=extra)


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(7)
    n = 40
    x = rng.integers(0, 9, n).astype(float)  # 9 distinct values, 8 gaps
    p = 1 / (1 + np.exp(-(np.where(x <= 3, -1.5, 0.5) + np.where(x > 6, 1.5, 0.0))))
    y = (rng.uniform(size=n) < p).astype(int)
    return pd.DataFrame({"x": x, "y": y})


def fit(df, formula, **kw):
    return rf.risk_score(formula, df, coef_range=(LO, HI), intercept_range=(-10, 10), c0=C0, time_limit=30, **kw)


def test_one_threshold_is_the_brute_force_optimum(small):
    m = fit(small, "y ~ threshold(x, k=1)")
    best = brute_threshold(small.x.to_numpy(), small.y.to_numpy(), 1)
    assert m.status == "optimal"
    assert m.objective == pytest.approx(best, rel=1e-7)
    assert m.lower_bound <= best + 1e-9
    card = m.score_card()
    assert all(LO <= p <= HI for p in card["points"])


def test_two_thresholds_are_the_brute_force_optimum(small):
    m = fit(small, "y ~ threshold(x, k=2)")
    best = brute_threshold(small.x.to_numpy(), small.y.to_numpy(), 2)
    assert m.status == "optimal"
    assert m.objective == pytest.approx(best, rel=1e-7)
    assert m.lower_bound <= best + 1e-9
    assert len(m.thresholds) <= 2
    assert all(LO <= p <= HI for p in m.score_card()["points"])


def test_threshold_with_another_term(small):
    rng = np.random.default_rng(1)
    df = small.assign(z=rng.integers(0, 2, len(small)))
    m = fit(df, "y ~ threshold(x, k=1) + z")
    x, y, z = df.x.to_numpy(), df.y.to_numpy(), df.z.to_numpy().astype(float)
    best = min(brute_threshold(x, y, 1, extra=w * z) + (C0 if w else 0.0) for w in range(LO, HI + 1))
    assert m.objective == pytest.approx(best, rel=1e-7)


def test_cuts_are_items_within_the_size_and_the_brute_force_optimum(small):
    """No ``k``: a step function of up to ``max_size`` cuts, each one card item."""
    for size in (2, 3):
        m = fit(small, "y ~ threshold(x)", max_size=size)
        best = brute_threshold(small.x.to_numpy(), small.y.to_numpy(), size)
        assert m.status == "optimal"
        assert m.objective == pytest.approx(best, rel=1e-7)
        assert m.lower_bound <= best + 1e-9
        assert len(m.scorecard.items) == m.size <= size
        assert all(1 <= p <= HI for p in m.score_card()["points"])  # "x > c" items carry −δ


def test_predict_applies_the_stored_cuts(small):
    m = fit(small, "y ~ threshold(x)", max_size=3)
    # the card, read by hand: every item whose condition holds, plus the intercept
    card = m.score_card()
    assert len(card) >= 2

    def by_hand(x):
        total = m.intercept
        for term, p in zip(card["term"], card["points"]):
            var, op, c = term.split(" ")
            total += p * ((x <= float(c)) if op == "≤" else (x > float(c)))
        return total

    new = pd.DataFrame({"x": [-5.0, 0.0, 3.5, 4.2, 8.0, 100.0]})
    expect = 1 / (1 + np.exp(-np.array([by_hand(x) for x in new.x])))
    assert np.allclose(m.predict(new), expect)
    # and on the training rows it reproduces the fitted loss
    s = m.intercept + m.score(small).to_numpy()
    y = small.y.to_numpy()
    assert np.mean(np.logaddexp(0, -s) * y + np.logaddexp(0, s) * (1 - y)) == pytest.approx(m.loss, rel=1e-12)


def test_threshold_cuts_count_toward_max_size(small):
    rng = np.random.default_rng(2)
    df = small.assign(w=rng.normal(size=len(small)).round(1))
    m = fit(df, "y ~ threshold(x, k=2) + threshold(w)", max_size=1)
    assert m.size == 1 and len(m.scorecard.items) == 1
    m = fit(df, "y ~ threshold(x, k=2) + threshold(w)", max_size=3)
    assert m.size == len(m.scorecard.items) <= 3
    assert (m.thresholds["variable"] == "x").sum() <= 2


def test_risk_table_adds_overlapping_items(small):
    m = fit(small, "y ~ threshold(x)", max_size=3)
    cuts = sorted(m.thresholds["cut"])
    # one attainable score per interval between the chosen cuts (fewer when two intervals tie)
    reps = [cuts[0] - 1] + [(a + b) / 2 for a, b in zip(cuts, cuts[1:])] + [cuts[-1] + 1]
    scores = m.score(pd.DataFrame({"x": reps})).to_numpy()
    assert sorted(set(scores)) == sorted(m.attainable_scores())
    assert set(m.risk_table()["score_from"]) <= set(scores)


def test_user_cut_points(small):
    m = fit(small, "y ~ cut(x, [3.5, 6.5])")
    x, y = small.x.to_numpy(), small.y.to_numpy()
    best = brute_items([[(x <= 3.5).astype(float), (x <= 6.5).astype(float)]], y, 2)
    assert m.objective == pytest.approx(best, rel=1e-7)
    assert set(m.thresholds["cut"]) <= {3.5, 6.5}


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_grid_is_reported():
    # noisy labels: many gaps can hold an optimal cut, more than the grid allows
    rng = np.random.default_rng(3)
    x = rng.random(400)
    df = pd.DataFrame({"x1": x, "y": (rng.random(400) < 0.2 + 0.6 * (x > 0.5)).astype(int)})
    m = rf.risk_score("y ~ threshold(x1, grid=10)", df, time_limit=20)
    assert m.design.thresholds[0].on_grid and len(m.design.thresholds[0].cuts) <= 10
    text = str(m.summary())
    assert "quantile grid" in text and "relative to that grid" in text


def test_sign_makes_threshold_monotone(small):
    m = fit(small, "y ~ threshold(x, k=2)", constraints=[rf.sign("x", "-")])
    lv = m.predict(pd.DataFrame({"x": np.arange(-1, 10, 0.5)})).to_numpy()
    assert np.all(np.diff(lv) <= 1e-12)


def test_bad_threshold_terms():
    df = pd.DataFrame({"x": [1.0] * 6, "z": [1, 2, 3, 4, 5, 6], "y": [0, 1, 0, 1, 0, 1]})
    with pytest.raises(FormulaError, match="constant"):
        rf.risk_score("y ~ threshold(x)", df)
    with pytest.raises(FormulaError, match="k="):
        rf.risk_score("y ~ threshold(z, k=0)", df)
    with pytest.raises(FormulaError, match="numeric cut points"):
        rf.risk_score("y ~ cut(z, ['a'])", df)


def test_synthetic_generator_matches_its_truth():
    df, truth = rf.synthetic_thresholds(300, 3, seed=5, return_truth=True)
    X = df[["x1", "x2", "x3"]].to_numpy()
    score = truth["w0"] + np.where(X <= truth["t"], truth["w_le"], truth["w_ge"]).sum(axis=1)
    assert np.array_equal(df.y.to_numpy(), (score >= 0).astype(int))
    assert df.equals(rf.synthetic_thresholds(300, 3, seed=5))
    assert ((X >= 0) & (X <= 1)).all()


@pytest.mark.slow
@pytest.mark.parametrize("n,p", [(200, 2), (1000, 1), (200, 3), (200, 5), (1000, 2)])
def test_paper_small_configurations_are_certified(n, p):
    """Molero-Río and D'Ambrosio (2025) configurations that must close within 60 s over every cut position,
    in their class: one cut per variable, both sides scored within −5…5 (one item within −10…10)."""
    df = rf.synthetic_thresholds(n, p, seed=1, min_class_share=0.1)
    f = "y ~ " + " + ".join(f"threshold(x{j + 1}, k=1)" for j in range(p))
    # certified in seconds on a quiet machine; the limit is a safety net, not the test (a busy
    # 2-core machine once stopped p = 5 at 60 s)
    m = rf.risk_score(f, df, max_size=p, coef_range=(-10, 10), time_limit=600)
    assert m.status == "optimal"
    assert m.training_evaluation.auc.auc == pytest.approx(1.0)


def test_only_undominated_cuts_are_candidates():
    """Separable labels along x leave one gap that can hold an optimal single cut, found exactly at
    any N; with up to three cuts of x, the gaps packed next to it too."""
    x = np.linspace(0, 1, 5000)
    df = pd.DataFrame({"x": x, "y": (x > 0.3).astype(int)})
    m = rf.risk_score("y ~ threshold(x, k=1)", df, time_limit=20)
    t = m.design.thresholds[0]
    assert not t.on_grid and len(t.cuts) == 1
    m3 = rf.risk_score("y ~ threshold(x)", df, max_size=3, time_limit=20)
    assert len(m3.design.thresholds[0].cuts) == 5 and m3.status == "optimal"
    assert 0.3 - 1e-3 < t.cuts[0] < 0.3 + 1e-3
    assert m.status == "optimal"


def test_grid_is_placed_over_all_gaps():
    """When a grid is needed, it sits at quantile gaps of x whatever the outcome (regression:
    the grid once indexed the pruned list of gaps)."""
    from riskformula.thresholds import candidate_cuts
    rng = np.random.default_rng(7)
    x = rng.random(3000)
    y = (rng.random(3000) < 0.3 + 0.4 * (x > 0.6)).astype(int)
    with_y, on_grid = candidate_cuts(x, 20, y)
    assert on_grid
    np.testing.assert_array_equal(with_y, candidate_cuts(x, 20)[0])
    exact, on_grid = candidate_cuts(x, None, y)
    assert not on_grid and len(exact) > 20


@pytest.fixture(scope="module")
def bumps():
    """Two predictors whose risk rises then falls: the LP likes fractional "bumps" (a rise and a
    fall made of two cuts of one threshold), which no single cut can score."""
    rng = np.random.default_rng(3)
    n = 60
    x1 = rng.integers(0, 6, n).astype(float)
    x2 = rng.integers(0, 6, n).astype(float)
    eta = 2.0 * ((x1 >= 2) & (x1 <= 3)) - 1.0 + 1.5 * (x2 >= 4) - 1.5 * (x2 <= 0)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y})


def brute_two_thresholds(x1, x2, y):
    """min over one cut (or none) per predictor, its points in [LO, HI] and the intercept."""
    w = np.arange(LO, HI + 1, dtype=float)

    def columns(x):
        v = np.unique(x)
        return [None] + [(x <= c).astype(float) for c in (v[:-1] + v[1:]) / 2]

    best = np.inf
    for a in columns(x1):
        for b in columns(x2):
            for w1 in (w if a is not None else [0.0]):
                for w2 in (w if b is not None else [0.0]):
                    s = (w1 * a if a is not None else 0.0) + (w2 * b if b is not None else 0.0) + np.zeros(len(y))
                    best = min(best, mean_loss(s[:, None] + B[None, :], y).min()
                               + C0 * (np.count_nonzero([w1, w2])))
    return best


def test_two_thresholds_with_bumps_are_the_brute_force_optimum(bumps):
    best = brute_two_thresholds(bumps.x1.to_numpy(), bumps.x2.to_numpy(), bumps.y.to_numpy())
    m = fit(bumps, "y ~ threshold(x1, k=1) + threshold(x2, k=1)")
    assert m.status == "optimal"
    assert m.objective == pytest.approx(best, rel=1e-7)
    for limit in (1, 3, 7, 15):  # stopped early, the bound is still below the optimum
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rf.OptimalityGapWarning)  # stopping early is the point
            early = fit(bumps, "y ~ threshold(x1, k=1) + threshold(x2, k=1)", node_limit=limit)
        assert early.lower_bound <= best + 1e-9


def test_step_functions_of_two_variables_are_the_brute_force_optimum(bumps):
    """Any number of cuts per variable within the size: a bump (two cuts of x1) is two items."""
    x1, x2, y = bumps.x1.to_numpy(), bumps.x2.to_numpy(), bumps.y.to_numpy()
    best = brute_items([cut_columns(x1), cut_columns(x2)], y, 3)
    m = fit(bumps, "y ~ threshold(x1) + threshold(x2)", max_size=3)
    assert m.status == "optimal"
    assert m.objective == pytest.approx(best, rel=1e-7)
    assert len(m.scorecard.items) == m.size <= 3
    for limit in (1, 3, 7, 15):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rf.OptimalityGapWarning)
            early = fit(bumps, "y ~ threshold(x1) + threshold(x2)", max_size=3, node_limit=limit)
        assert early.lower_bound <= best + 1e-9
    capped = fit(bumps, "y ~ threshold(x1, k=1) + threshold(x2)", max_size=3)
    assert capped.objective == pytest.approx(brute_items([cut_columns(x1), cut_columns(x2)], y, 3, caps=[1, 3]),
                                             rel=1e-7)


@pytest.mark.parametrize("seed", [3, 5, 8])
def test_sign_split_keeps_the_optimum(seed, monkeypatch):
    """With the heuristics off the search itself must reach the brute-force optimum: the split on
    a threshold's sign (used on these data) loses no integer point, and a tiny cut pool (cuts
    dropped and taken again at the same integer points) changes nothing."""
    from riskformula.solver import branch_and_cut as bc
    rng = np.random.default_rng(seed)
    n = 60
    x1 = rng.integers(0, 6, n).astype(float)
    x2 = rng.integers(0, 6, n).astype(float)
    eta = 2.0 * ((x1 >= 2) & (x1 <= 3)) - 1.0 + 1.5 * (x2 >= 4) - 1.5 * (x2 <= 0)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
    df = pd.DataFrame({"x1": x1, "x2": x2, "y": y})
    splits = []
    original = bc.BranchAndCut._sign_split

    def counting(self, xi):
        out = original(self, xi)
        splits.append(out is not None)
        return out

    init = bc.BranchAndCut.__init__

    def small_pool(self, *a, **kw):
        init(self, *a, **kw)
        self.max_cuts = 12

    monkeypatch.setattr(bc.BranchAndCut, "_sign_split", counting)
    monkeypatch.setattr(bc.BranchAndCut, "__init__", small_pool)
    monkeypatch.setattr(bc.BranchAndCut, "_heuristic", lambda self, *a, **k: None)
    monkeypatch.setattr(bc.BranchAndCut, "_polish_and_offer", lambda self, *a, **k: None)
    # nodes settled by listing their points would leave these small trees no split to test
    monkeypatch.setattr(bc.BranchAndCut, "enumeration_work", 0)
    best = brute_two_thresholds(x1, x2, y)
    m = fit(df, "y ~ threshold(x1, k=1) + threshold(x2, k=1)", engine="tree")  # the tree's split is tested
    assert any(splits)
    assert m.status == "optimal"
    assert m.objective == pytest.approx(best, rel=1e-7)


def test_other_functions_named_cut_are_not_thresholds():
    """``C(pd.cut(x, 4))`` is an ordinary factor; only the formula functions threshold()/cut() are
    thresholds, and only they must stand alone in a term."""
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.normal(size=200), "z": rng.integers(0, 2, 200)})
    df["y"] = (rng.random(200) < 1 / (1 + np.exp(-df.x))).astype(int)
    m = rf.risk_score("y ~ C(pd.cut(x, 3)) + z", df, time_limit=10, context={"pd": pd})
    assert m.design.thresholds == () and len(m.design.columns) == 3
    with pytest.raises(FormulaError, match="a term of its own"):
        rf.risk_score("y ~ z:threshold(x)", df, time_limit=10)


def test_max_variables_bounds_the_variables_not_the_items(bumps):
    """``max_variables(1)``: up to three items, all on one variable (brute force), saved and loaded."""
    x1, x2, y = bumps.x1.to_numpy(), bumps.x2.to_numpy(), bumps.y.to_numpy()
    best = min(brute_items([cut_columns(x1)], y, 3), brute_items([cut_columns(x2)], y, 3))
    m = fit(bumps, "y ~ threshold(x1) + threshold(x2)", max_size=3, constraints=[rf.max_variables(1)])
    assert m.status == "optimal"
    assert m.objective == pytest.approx(best, rel=1e-7)
    assert m.thresholds["variable"].nunique() == 1
    back = rf.from_json(m.to_json())
    assert back.constraints[0].describe() == "max_variables(1)"
    np.testing.assert_array_equal(back.predict(bumps).to_numpy(), m.predict(bumps).to_numpy())


@pytest.mark.parametrize("term", ["threshold(age):C(g)", "cut(age, [40, 60]):d", "d:cut(age, [50])",
                                  "C(g):threshold(age, k=2)"])
def test_a_threshold_in_an_interaction_is_refused_as_one(term):
    # on either side of the ':' (a threshold first was a message about backticks and cut points)
    rng = np.random.default_rng(1)
    d = pd.DataFrame({"age": rng.integers(20, 80, 200).astype(float), "g": rng.choice(["a", "b"], 200),
                      "d": rng.integers(0, 2, 200)})
    d["y"] = (rng.random(200) < 1 / (1 + np.exp(-(d.age - 50) / 8))).astype(int)
    with pytest.raises(FormulaError, match="combines a threshold with something else.*interactions of thresholds"):
        rf.risk_score(f"y ~ {term}", d, max_size=2, time_limit=5)
