"""Every stage honours the time limit and every search ends: the design of a factor with many
levels (linear in rows × levels, the deadline checked inside its loops), numeric arguments
bounded to what the arithmetic supports, the bounded walks of the counterfactual targets, and the
whole-call limit of the cross-validation functions.  Nothing here is timed: deadlines are set in
the past and clocks are stand-ins."""

from __future__ import annotations

import functools
import time
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula import tuning
from riskformula.design import build_design
from riskformula.design.rules import Deadline
from riskformula.problem.loss import distinct_rows


def _levels(n: int, k: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"y": rng.integers(0, 2, n), "f": [f"l{i % k}" for i in range(n)]})


# --- 1. a factor with many levels ------------------------------------------------------------

def test_many_levels_are_level_rules_that_reproduce_the_design():
    df = _levels(3000, 1500)
    d = build_design("y ~ f", df)
    kinds = {r.kind for r in d.spec.rules}
    assert kinds == {"level"} and d.X.shape == (3000, 1499)
    # the rules compute formulaic's own columns (checked per column, as predict does)
    from riskformula.design.rules import evaluate_rules
    again = evaluate_rules(list(d.spec.rules), df, d.spec.categories, "data")
    np.testing.assert_array_equal(again, d.X)
    assert d.spec.categories["f"] == tuple(sorted(df.f.unique()))


def test_a_level_rule_that_does_not_reproduce_its_column_is_an_expression():
    from riskformula.design.rules import Rule, _check_levels
    frame = pd.DataFrame({"f": ["a", "b", "a", None]})
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    rules = [Rule("level", "f", "a"), Rule("level", "f", "b")]
    assert _check_levels(rules, frame, X, Deadline(None)) == {0, 1}
    assert [r.kind for r in rules] == ["level", "level"]
    X[3, 1] = 1.0  # a missing value is no level
    _check_levels(rules, frame, X, Deadline(None))
    assert [r.kind for r in rules] == ["level", "expression"]


def test_a_past_deadline_stops_the_design_of_a_large_factor(monkeypatch):
    # "large" from a million cells here (the real threshold is 2^24: a design that takes seconds)
    monkeypatch.setattr("riskformula.design.rules.LARGE_CELLS", 10 ** 6)
    df = _levels(2500, 2500)
    with pytest.raises(rf.SearchLimitError, match="time limit .* while .*design"):
        build_design("y ~ f", df, deadline=Deadline(time.perf_counter() - 1, 5.0))
    # a small design is never stopped there: the search returns the best model in the time left
    build_design("y ~ f", _levels(500, 500), deadline=Deadline(time.perf_counter() - 1, 5.0))


def test_a_past_deadline_stops_collapsing_a_wide_design():
    X = np.eye(2000)

    def stop():
        raise rf.SearchLimitError("stopped")
    with pytest.raises(rf.SearchLimitError):
        distinct_rows(X, stop)
    uniq, inverse = distinct_rows(X)
    assert uniq.shape == (2000, 2000) and len(set(inverse.tolist())) == 2000


def test_the_fit_checks_its_deadline_in_the_design(monkeypatch):
    # the fit's deadline already passed when its (large) design starts: it stops with a SearchLimitError
    df = _levels(2200, 1100)
    monkeypatch.setattr("riskformula.design.rules.LARGE_CELLS", 10 ** 6)
    monkeypatch.setattr(Deadline, "after", classmethod(lambda cls, seconds, started=None:
                                                       cls(time.perf_counter() - 1, seconds)))
    with pytest.raises(rf.SearchLimitError, match="raise `time_limit`"):
        rf.risk_score("y ~ f", df, time_limit=5, progress=False)


# --- 2. numeric arguments ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(1)
    d = pd.DataFrame({"a": rng.integers(0, 2, 200), "b": rng.integers(0, 3, 200)})
    d["y"] = (rng.random(200) < 1 / (1 + np.exp(-(d.a + d.b - 1.5)))).astype(int)
    return d


@pytest.mark.parametrize("kw, words", [
    (dict(scale=1e300), "`scale` values must lie between"),
    (dict(scale=1e-9), "`scale` values must lie between"),
    (dict(scale=[1, 1e300]), "`scale` values must lie between"),
    (dict(coef_range=(-10 ** 9, 10 ** 9)), "within ±10,000"),
    (dict(coef_range={"default": (-5, 5), "a": (0, 10 ** 12)}), "coef_range['a']"),
    (dict(intercept_range=(-10 ** 12, 0)), "`intercept_range` must lie within"),
    (dict(c0=1e300), "`c0` must be between"),
    (dict(positive_weight=1e-300), "`positive_weight` must be between"),
    (dict(positive_weight=1e300), "`positive_weight` must be between"),
    (dict(max_size=10 ** 30), "`max_size` must be at most"),
    (dict(min_size=10 ** 30, max_size=10 ** 30), "must be at most"),
    (dict(time_limit=1e300), "`time_limit` must be at most"),
    (dict(node_limit=10 ** 30), "`node_limit` must be at most"),
    (dict(absolute_gap_tolerance=1e300), "`absolute_gap_tolerance` must be between"),
])
def test_numeric_arguments_beyond_the_arithmetic_are_refused(small, kw, words):
    with pytest.raises(rf.SettingsError, match=words.replace("[", r"\[").replace("(", r"\(")):
        rf.risk_score("y ~ a + b", small, progress=False, **kw)


def test_numeric_arguments_of_the_other_entry_points_are_bounded(small):
    with pytest.raises(rf.SettingsError, match="epsilon"):
        rf.rashomon_set("y ~ a + b", small, epsilon=1e300)
    with pytest.raises(rf.SettingsError, match="max_members"):
        rf.rashomon_set("y ~ a + b", small, epsilon=0.01, max_members=10 ** 30)
    with pytest.raises(rf.SettingsError, match="scale"):
        rf.rashomon_set("y ~ a + b", small, epsilon=0.01, scale=1e300)
    with pytest.raises(rf.SettingsError, match="folds"):
        rf.cross_validate("y ~ a + b", small, folds=10 ** 30)
    with pytest.raises(rf.SettingsError, match="repeats"):
        rf.cv_risk_score("y ~ a + b", small, repeats=10 ** 30)
    with pytest.raises(rf.SettingsError, match="sizes"):
        rf.size_path("y ~ a + b", small, sizes=[10 ** 30])
    with pytest.raises(rf.SettingsError, match="c0"):
        rf.cv_risk_score("y ~ a + b", small, c0=1e300)
    with pytest.raises(rf.SettingsError, match="total_time_limit"):
        rf.cross_validate("y ~ a + b", small, total_time_limit=1e300)
    with pytest.raises(rf.SettingsError, match="total_time_limit"):
        rf.cv_risk_score("y ~ a + b", small, total_time_limit=-1)


def test_counterfactual_arguments_are_bounded(small):
    m = rf.risk_score("y ~ a + b", small, max_size=2, progress=False)
    people = small.head(2)
    for kw, words in [(dict(target_risk=1e-300), "target_risk"), (dict(target_risk=1 - 1e-15), "target_risk"),
                      (dict(target_score=1e300), "target_score"), (dict(target_risk=0.2, n=10 ** 30), "`n`"),
                      (dict(target_risk=0.2, time_limit=1e300), "time_limit"),
                      (dict(target_risk=0.2, closeness=1e300), "closeness"),
                      (dict(target_risk=0.2, max_changes=10 ** 30), "max_changes")]:
        with pytest.raises(rf.SettingsError, match=words):
            m.counterfactuals(people, **kw)


def test_the_largest_scale_gives_counterfactuals_that_end(small):
    # the scale that once made the risk-boundary walk loop forever is refused; the largest allowed
    # resolves every target risk a score can reach, and the walk is bounded in any case
    m = rf.risk_score("y ~ a + b", small, max_size=2, scale=1e4, progress=False, node_limit=50)
    cf = m.counterfactuals(small.head(3), target_risk=0.3)
    assert len(cf.status) == 3
    for t in (1e-12, 0.5, 1 - 1e-12):
        for sign in (-1, 1):
            s, tau = m.score_for_risk(t, sign)
            assert np.isfinite(s) and abs(s - tau) < 100


def test_the_risk_boundary_walk_is_bounded(small, monkeypatch):
    m = rf.risk_score("y ~ a + b", small, max_size=2, progress=False)
    # a score → risk map that never crosses the target: the walk gives up with a clear error
    monkeypatch.setattr(type(m), "_risk_at", lambda self, s: 0.9)
    with pytest.raises(rf.SettingsError, match="no whole score has a risk at the boundary"):
        m.score_for_risk(0.5, -1)


def test_grid_steps_beyond_float_precision_are_an_error():
    from riskformula.counterfactuals.instance import _below
    from riskformula.counterfactuals.regions import _above, _at_most
    assert _above(1.0, 0.5) == 1.5 and _at_most(1.2, 0.5) == 1.0 and _below(1.0, 0.5) == 0.5
    for f in (_above, _below):
        with pytest.raises(rf.DataError, match="too large for its precision step"):
            f(1e20, 0.01)


@pytest.mark.parametrize("value", [1e308, 1e-320, 1e200, 1e-200])
def test_uniform_extreme_weights_fit_as_unit_weights(small, value):
    ref = rf.risk_score("y ~ a + b", small, max_size=2, progress=False)
    m = rf.risk_score("y ~ a + b", small, max_size=2, weights=np.full(len(small), value), progress=False)
    pd.testing.assert_frame_equal(pd.DataFrame(m.points), pd.DataFrame(ref.points))
    assert m.objective == pytest.approx(ref.objective, rel=1e-9)


# --- 3. a limit for the whole call ------------------------------------------------------------

class _Clock:
    """A stand-in clock that moves only when a fit "runs": by ``factor`` times the fit's limit."""

    def __init__(self, factor: float):
        self.now = 0.0
        self.factor = factor
        self.limits: list = []

    def __call__(self):
        return self.now


@pytest.fixture
def clocked(monkeypatch, small):
    """(clock, fits): every fit made by the tuning functions records its time limit and advances the
    stand-in clock; the fits themselves are real, on a node limit."""
    clock = _Clock(1.0)
    monkeypatch.setattr(tuning, "_clock", clock)
    real = tuning.risk_score

    @functools.wraps(real)
    def fit(*args, **kwargs):
        clock.limits.append(kwargs.get("time_limit"))
        clock.now += clock.factor * kwargs["time_limit"]
        kwargs = {**kwargs, "node_limit": 20}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return real(*args, **kwargs)
    monkeypatch.setattr(tuning, "risk_score", fit)
    return clock


def test_cross_validate_shares_its_total_time_among_the_folds(clocked, small):
    cv = rf.cross_validate("y ~ a + b", small, folds=4, n_jobs=1, max_size=2, time_limit=5, total_time_limit=10)
    assert clocked.limits == pytest.approx([2.5] * 4) and clocked.now <= 10 + 1e-9
    assert len(cv.models) == 4
    # the per-fit limit when it is the smaller
    clocked.limits.clear()
    clocked.now = 0.0
    rf.cross_validate("y ~ a + b", small, folds=4, n_jobs=1, max_size=2, time_limit=1, total_time_limit=10)
    assert clocked.limits == pytest.approx([1.0] * 4)


def test_cross_validate_stops_when_its_total_time_is_spent(clocked, small):
    clocked.factor = 2.0  # every fit overruns its share twice over
    with pytest.raises(rf.SearchLimitError, match=r"total_time_limit.*after 3 fit\(s\), before the other 1"):
        rf.cross_validate("y ~ a + b", small, folds=4, n_jobs=1, max_size=2, time_limit=5, total_time_limit=10)


def test_cv_risk_score_shares_its_total_time_among_every_fit(clocked, small):
    sizes = [1, 2, 3]
    cv = rf.cv_risk_score("y ~ a + b", small, sizes=sizes, folds=3, n_jobs=1, time_limit=5, total_time_limit=20)
    assert len(clocked.limits) == 3 * 3 + 1  # one per size and fold, and the refit
    assert sum(clocked.limits) <= 20 + 1e-9 and clocked.now <= 20 + 1e-9
    assert clocked.limits == pytest.approx([2.0] * 10)
    assert cv.model.settings.time_limit == pytest.approx(2.0)


def test_cv_risk_score_overrun_shortens_the_later_fits_and_stops(clocked, small):
    clocked.factor = 10.0  # the first fit overruns the whole call's time
    with pytest.raises(rf.SearchLimitError, match=r"total_time_limit.*after 2 fit\(s\), before the other 5"):
        rf.cv_risk_score("y ~ a + b", small, sizes=[1, 2], folds=3, n_jobs=1, time_limit=5, total_time_limit=10)
    # within a fold's path the sizes left get the least time rather than an error
    assert min(clocked.limits) == pytest.approx(tuning.MIN_FIT_SECONDS)


def test_size_path_total_time(clocked, small):
    path = rf.size_path("y ~ a + b", small, sizes=[1, 2], time_limit=5, total_time_limit=4)
    assert clocked.limits == pytest.approx([2.0, 2.0]) and len(path.models) == 2


def test_worker_processes_get_a_rounds_share(clocked, small, monkeypatch):
    # with workers, the folds run in rounds of n_jobs: each fold's limit is a round's share (the tasks
    # are run here, in one process, to read their limits)
    seen = []

    def run(tasks, n_jobs, bar, worker=tuning._fit_fold, prepare=None):
        seen.extend(t[-1] for t in tasks)
        return [worker(*t) for t in tasks]
    monkeypatch.setattr(tuning, "_run_folds", run)
    monkeypatch.setattr(tuning, "_sendable", lambda obj: True)
    rf.cross_validate("y ~ a + b", small, folds=4, n_jobs=2, max_size=2, time_limit=60, total_time_limit=10)
    assert [a["time_limit"] for a in seen] == pytest.approx([5.0] * 4)  # 2 rounds of 2 folds
    seen.clear()
    rf.cv_risk_score("y ~ a + b", small, sizes=[1, 2], folds=4, n_jobs=2, time_limit=60, total_time_limit=10)
    # 2 rounds × 2 sizes + the refit = 5 shares of 2 s; a fold path gets 2 of them
    assert seen == pytest.approx([4.0] * 4)


def test_net_benefit_decision_grid_is_bounded():
    from riskformula.netbenefit.grid import decision_grid
    with pytest.raises(rf.SettingsError, match="below 1 − 1e-9"):
        decision_grid([0.5, 1 - 1e-12])
    with pytest.raises(rf.SettingsError, match="at most 1e12"):
        decision_grid([0.2, 0.5], [1.0, 1e300])
    assert decision_grid([0.2, 0.5], [1.0, 2.0]).weights == (1.0, 2.0)


def test_a_fit_stopped_in_its_share_of_a_total_says_so(clocked, small, monkeypatch):
    def stopped(*args, **kwargs):
        raise rf.SearchLimitError("stopped at the time limit (1 s) while building the design's columns.")
    monkeypatch.setattr(tuning, "risk_score", stopped)
    with pytest.raises(rf.SearchLimitError, match=r"share of `total_time_limit=10`"):
        rf.cross_validate("y ~ a + b", small, folds=2, n_jobs=1, total_time_limit=10)
    with pytest.raises(rf.SearchLimitError, match="^stopped at the time limit .1 s.*columns.$"):
        rf.cross_validate("y ~ a + b", small, folds=2, n_jobs=1)  # no total: the fit's own words
