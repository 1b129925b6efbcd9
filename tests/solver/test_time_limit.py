"""What keeps a fit within its ``time_limit`` without changing what it finds: the time the search
leaves for what follows it, the score ranges shared by the scales of a fitted scale, the beam
search's stop, and the parallel search's workers started with the fit.  Correctness only; nothing
here is timed (``benchmarks/limits.py`` measures the wall times)."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.pipeline import AFTER_SEARCH_CAP, AFTER_SEARCH_PASSES, after_search_reserve
from riskformula.problem import LogisticLoss, RiskProblem
from riskformula.problem.problem import SizeGroup, _score_range, intercept_bounds, loss_bounds, score_range
from riskformula.solver.heuristics import real_beam_search
from riskformula.solver.parallel import start_workers
from riskformula.solver import BranchAndCut


def _problem(seed: int = 0, scale: float = 1.0, groups=(), loss=None) -> RiskProblem:
    rng = np.random.default_rng(seed)
    n, d = 150, 6
    X = rng.integers(0, 3, (n, d)).astype(float)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ rng.normal(0, 1, d) - 1)))).astype(float)
    loss = LogisticLoss(X, y) if loss is None else loss
    return RiskProblem(loss if scale == 1 else loss.with_scale(scale), np.full(d, -3.0), np.full(d, 2.0),
                       c0=np.full(d, 1e-6), max_size=3, groups=list(groups))


def test_the_search_leaves_room_for_what_follows_it():
    # small data (a fast collapse): 1 % of the limit, at most 1 s, as before
    assert after_search_reserve(20.0, 1e-4) == pytest.approx(0.2)
    assert after_search_reserve(300.0, 1e-4) == 1.0
    # large data: a multiple of the measured collapse...
    assert after_search_reserve(20.0, 0.2) == pytest.approx(AFTER_SEARCH_PASSES * 0.2)
    # ... but never more than a share of the limit
    assert after_search_reserve(5.0, 10.0) == pytest.approx(AFTER_SEARCH_CAP * 5.0)
    for limit in (0.01, 1.0, 5.0, 60.0):
        for collapse in (0.0, 0.01, 1.0, 100.0):
            r = after_search_reserve(limit, collapse)
            assert min(1.0, 0.01 * limit) <= r + 1e-15 and r <= max(min(1.0, 0.01 * limit), AFTER_SEARCH_CAP * limit)


def test_score_ranges_are_shared_by_the_scales_and_equal_a_fresh_computation():
    base = _problem()
    problems = [_problem(scale=m, loss=base.loss) for m in (1.0, 0.5, 2.0, 4.0)]
    fresh = _score_range(base, base.loss.Z[:, 1:])
    for p in problems:
        lo, hi = score_range(p)
        assert np.array_equal(lo, fresh[0]) and np.array_equal(hi, fresh[1])
        lo[:] = np.nan  # the caller's copy: the cache is not changed through it
    assert np.array_equal(score_range(problems[0])[0], fresh[0])
    assert len(base.loss._score_ranges) == 1  # one entry for all four scales
    # other bounds or groups are other entries, each equal to its own computation
    grouped = _problem(groups=[SizeGroup((0, 1), max_used=1)], loss=base.loss)
    assert np.array_equal(score_range(grouped)[1], _score_range(grouped, base.loss.Z[:, 1:])[1])
    assert len(base.loss._score_ranges) == 2
    # and what the ranges serve is unchanged
    assert intercept_bounds(problems[2]) == intercept_bounds(_problem(scale=2.0))
    assert loss_bounds(problems[3]) == loss_bounds(_problem(scale=4.0))
    # the cache travels empty to a parallel search's workers
    assert len(pickle.loads(pickle.dumps(base.loss))._score_ranges) == 0


def test_the_beam_stops_growing_past_its_stop():
    p = _problem(1)
    full = real_beam_search(p)
    assert max(np.count_nonzero(lam[1:]) for lam in full) == 3
    assert all(np.array_equal(a, b) for a, b in zip(full, real_beam_search(p, stop=math.inf)))
    # past the stop: the first size is still grown (the search has supports to ray), no more
    late = real_beam_search(p, stop=-math.inf)
    assert late and all(np.count_nonzero(lam[1:]) == 1 for lam in late)


def test_the_workers_start_with_the_fit_and_the_search_is_unchanged():
    assert start_workers(1, BranchAndCut) is None
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, (400, 8))
    y = (rng.random(400) < 1 / (1 + np.exp(-(X @ rng.normal(0, 1.5, 8) - 1)))).astype(int)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(8)]).assign(y=y)
    thread = start_workers(2, BranchAndCut)
    thread.join(timeout=120)
    assert not thread.is_alive()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = rf.risk_score("y ~ .", df, max_size=4, time_limit=120, progress=False)
        two = rf.risk_score("y ~ .", df, max_size=4, time_limit=120, progress=False, n_jobs=2)
    assert one.status == two.status == "optimal"
    assert one.objective == pytest.approx(two.objective, abs=1e-8)


def test_a_polish_stops_at_its_deadline_with_a_feasible_point_and_is_unchanged_before_it():
    import time

    from riskformula.solver.heuristics import polish
    p = _problem(2)
    start = np.zeros(p.d + 1)
    full, value = polish(p, start, swaps=True)
    # a deadline that is not reached: the same descent, step for step
    same, same_value = polish(p, start, swaps=True, deadline=time.perf_counter() + 3600)
    assert np.array_equal(same, full) and same_value == value
    # a deadline already past: no step is taken, and the point returned is the (feasible) start
    late, late_value = polish(p, start, swaps=True, deadline=time.perf_counter() - 1)
    assert np.count_nonzero(late[1:]) == 0 and p.complete(late) is not None
    assert late_value == pytest.approx(p.full_objective(late)) and late_value >= value
    assert value < late_value  # the full descent did move: the deadline is what stopped this one


@pytest.mark.parametrize("fit", ["risk_score", "rashomon_set"])
def test_readying_the_compiled_loops_does_not_take_the_time_limit(fit, monkeypatch):
    # the first fit of a new environment compiles numba's loops (10–30 s); the fits do it before
    # their clock starts, so a short limit still finds the cut (a first call that takes longer
    # than the limit and than SLOW_WARM_UP stands in for compiling, with or without numba installed)
    import time
    from riskformula.solver import kernels
    ready = kernels.compiled
    monkeypatch.setattr(kernels, "SLOW_WARM_UP", 2.0)
    calls = []

    def slow_first_call():
        if not calls:
            time.sleep(2.5)
        calls.append(1)
        return ready()

    monkeypatch.setattr(kernels, "compiled", slow_first_call)
    df = pd.DataFrame({"age": [30, 40, 50, 60], "y": [0, 0, 1, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fit == "risk_score":
            m = rf.risk_score("y ~ threshold(age, k=1)", df, time_limit=2)
            assert m.status == "optimal" and m.thresholds["cut"].tolist() == [40.0]
        else:
            rs = rf.rashomon_set("y ~ threshold(age, k=1)", df, epsilon=0.05, time_limit=2)
            assert rs.complete and len(rs) >= 1
    assert calls


def test_a_family_too_wide_for_the_time_left_is_not_regressed(monkeypatch):
    """B8 (``SupportSearch._family_at``) skips a family whose regression would not fit in 5 % of
    the time left (thousands of threshold cuts took minutes past the limit): no bound, so nothing
    ruled out; with time left the same family is bounded."""
    import time

    from riskformula.solver.support_search import SupportSearch

    rng = np.random.default_rng(3)
    X = (rng.random((300, 40)) < 0.4).astype(float)
    y = (rng.random(300) < 1 / (1 + np.exp(-(X[:, :5].sum(axis=1) - 2)))).astype(int)
    p = RiskProblem(LogisticLoss(X, y).with_real_intercept(True), np.full(40, -3.0), np.full(40, 3.0), c0=0.0,
                    max_size=3)
    search = SupportSearch(p, True, time_limit=60)
    search.t0 = time.perf_counter()
    search._prepare()
    rest = range(1, len(search._order))
    bound, coefs = search._family_at(search._root_cell, 1, (search._order[0],), rest, {})
    assert math.isfinite(bound) and coefs and search.stats["b8_too_wide"] == 0
    # a machine of one operation per second: no family fits in a quarter of a minute
    monkeypatch.setattr("riskformula.solver.support_search.FAMILY_FLOPS", 1.0)
    bound, coefs = search._family_at(search._root_cell, 1, (search._order[0],), rest, {})
    assert bound == -math.inf and coefs == {} and search.stats["b8_too_wide"] == 1
    monkeypatch.undo()
    search.t0 = time.perf_counter() - 61.0  # past the time limit: none at all
    bound, coefs = search._family_at(search._root_cell, 1, (search._order[0],), rest, {})
    assert bound == -math.inf and coefs == {} and search.stats["b8_too_wide"] == 2


def test_loading_the_compiled_loops_counts_in_the_time_limit_and_compiling_does_not(monkeypatch):
    # loading them from numba's cache (about a second, a process's first fit) is part of the fit's
    # time; only a readying longer than SLOW_WARM_UP (compiling, which the fit announces) is not
    import time
    from riskformula.solver import kernels
    monkeypatch.setattr(kernels, "compiled", lambda: time.sleep(0.2))
    monkeypatch.setattr(kernels, "SLOW_WARM_UP", 10.0)
    started = kernels.start_clock()
    assert time.perf_counter() - started >= 0.2  # the clock started before the loading
    monkeypatch.setattr(kernels, "SLOW_WARM_UP", 0.1)
    before = time.perf_counter()
    assert kernels.start_clock() - before >= 0.2  # and after a compiling


def test_the_first_guess_of_the_scales_is_polished_within_the_time_limit(monkeypatch):
    # the multi-scale search's first guess (a coordinate descent from the intercept-only model)
    # stops at the search's time limit: on a million distinct rows it took 1.8 s of a 5 s fit
    # that the support search had used up before handing over
    from riskformula.solver import multiscale
    from riskformula.solver.multiscale import MultiScaleSearch
    from riskformula.solver.options import SearchOptions
    seen = []
    polish = multiscale.polish

    def recorded(problem, lam, *args, **kw):
        seen.append(kw.get("deadline"))
        return polish(problem, lam, *args, **kw)
    monkeypatch.setattr(multiscale, "polish", recorded)
    problems = {m: _problem(0, scale=m) for m in (0.5, 1.0, 2.0)}
    search = MultiScaleSearch(problems, SearchOptions(time_limit=7.0))
    search.solve(started=123.0)  # long past: the search ends at once, after its first guesses
    assert seen and seen[0] == 123.0 + 7.0
