"""One options object goes from SearchControl down to the solvers: the tree search, the search
over several scales, their worker processes and the Rashomon listing read the same SearchOptions."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import riskformula as rf
from riskformula.problem import LogisticLoss, RiskProblem
from riskformula.solver import BranchAndCut, SearchOptions
from riskformula.solver.multiscale import MultiScaleSearch


def _problem(seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(80, 3)).astype(float)
    y = (rng.random(80) < 1 / (1 + np.exp(-(X @ [1.0, -0.7, 0.3] - 0.5)))).astype(int)
    return RiskProblem(LogisticLoss(X, y, scale=scale), [-3, -3, -3], [3, 3, 3], c0=1e-3, max_size=2)


def test_search_control_gives_the_solvers_options():
    control = rf.SearchControl(time_limit=30, gap_tolerance=1e-4, node_limit=7, n_jobs=2, progress=False,
                               verbose=True)
    o = control.options()
    assert (o.time_limit, o.gap_tolerance, o.node_limit, o.n_jobs, o.progress, o.verbose) == (30.0, 1e-4, 7, 2,
                                                                                           False, True)
    assert control.options(time_limit=12.5, n_jobs=1).time_limit == 12.5
    assert o.quiet() == dataclasses.replace(o, node_limit=None, verbose=False, progress=False, n_jobs=1)
    bc = BranchAndCut(_problem(), o.replace(max_cuts=9, heuristic_interval=3, enumeration_work=0))
    assert (bc.time_limit, bc.gap_tolerance, bc.node_limit, bc.n_jobs, bc.verbose, bc.progress) == (
        30.0, 1e-4, 7, 2, True, False)  # progress is off when the log shows the same numbers
    assert (bc.max_cuts, bc.heuristic_interval, bc.enumeration_work) == (9, 3, 0)
    # a worker continues with the same tolerances, pool, heuristics and listing, quietly, on one process
    w = bc.worker_options()
    assert (w.gap_tolerance, w.max_cuts, w.heuristic_interval, w.enumeration_work) == (1e-4, 9, 3, 0)
    assert (w.n_jobs, w.node_limit, w.verbose, w.progress) == (1, None, False, False)


def test_each_scale_searches_with_the_options_quietly():
    problems = {m: _problem(scale=m) for m in (1.0, 2.0)}
    options = SearchOptions(time_limit=30, gap_tolerance=1e-9, node_limit=500, max_cuts=200)
    search = MultiScaleSearch(problems, options)
    for s in search.solvers.values():
        assert s.options == options.quiet() and s.max_cuts == 200 and s.gap_tolerance == 1e-9
    report = search.solve()
    one = {m: BranchAndCut(p, SearchOptions(time_limit=30, gap_tolerance=1e-9)).solve() for m, p in problems.items()}
    assert report.status == "optimal"
    assert report.objective == pytest.approx(min(r.objective for r in one.values()), abs=1e-9)
