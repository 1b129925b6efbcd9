"""``risk_score(..., objective="net_benefit")``: the integer score with the most net benefit.

Pipeline: formula → design and problem (the same bounds, size limits, ``threshold()`` terms and
operational constraints as the logistic fit) → local search with exact cut-offs
(:mod:`.heuristic`) → a proof: branch and bound over the points when the problem has only bounds
and size limits and few points vectors (:mod:`.exact_search`), else the exact MILP warm-started
with the local search's score (:mod:`.milp`, pyomo) → exact cut-offs and band risks for the best
points (:mod:`.cutoffs`) → :class:`.model.NetBenefitScore`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..design import DesignMatrix, build_design
from ..errors import InfeasibleProblemError, OptimalityGapWarning, SearchLimitError, SettingsError, warn_caller
from ..fitinfo import FitSettings
from ..model import training_facts
from ..problem import LogisticLoss, RiskProblem, build_problem
from ..control import SearchControl
from .._json import plain
from ..arguments import ModelArguments
from ..objectives import Objective, register_objective
from ..pipeline import after_search_reserve, design_bounds, initial_points, two_class_loss
from ..backends import backend_for
from ..solver import SolverReport
from ..solver.feasibility import feasible_point, raise_if_infeasible
from ..thresholds import score_shift
from .cutoffs import band_of, optimal_cutoffs, score_bands
from .exact_search import PointsBranchAndBound, points_space
from .grid import DecisionGrid, decision_grid
from .heuristic import (ELITES, LocalSearch, NetBenefitScorer, logistic_direction, points_key, rounded_starts,
                        sparse_directions)
from .milp import NetBenefitMilp, solver_factory
from .model import NetBenefitFit, NetBenefitScore, training_log_loss

#: share of ``time_limit`` (from the start of the fit, setup included) by which the logistic regressions
#: behind the starts must end: one running then stops at its iterate, those not begun are skipped
STARTS_SHARE = 0.7
#: share of ``time_limit`` the local search may use before the exact solver starts
SEARCH_SHARE = 0.3
#: above this many indicators (rows × thresholds) the exact model rarely closes the gap in
#: minutes, so the local search gets the larger share (1 − SEARCH_SHARE) of the time
LARGE_MILP = 20_000
#: pyomo builds the exact model at about one model row per millisecond, and handing it over to HiGHS
#: takes up to HANDOVER_PER_BUILD times as long again (wdbc with threshold(.), 10 811 rows: built in
#: 13.1 s, handed over in 21.7 s, on a loaded 2-core machine); the exact model is skipped when building
#: and handing it over would take more than BUILD_SHARE of the time left once the starts are found
BUILD_SECONDS_PER_ROW = 1e-3
HANDOVER_PER_BUILD = 2.0
BUILD_SHARE = 0.5
#: the exact model is solved only if, after handing it over, at least this many seconds are left
MIN_SOLVE_SECONDS = 1.0
#: plain problems (bounds and size limits only) with at most this many points vectors are solved by
#: branch and bound over the points (:mod:`.exact_search`) instead of the MILP: measured on
#: breastcancer (240 distinct rows), 1.1e4 vectors take 0.6 s, 9e4 2.7 s, 4.8e5 13 s
EXACT_SEARCH_SPACE = 1e6
#: the iterated local search stops after this many kicks in a row without a better score (fixed
#: seed: the same call gives the same score unless its time share runs out first); on the ten
#: folds of breastcancer and mammo, 1 000 finds better scores than 200 on eight and none worse
SEARCH_ROUNDS = 1000
#: ... and after this many, with one chain, when the branch and bound will prove the score (it only seeds it)
SEEDING_ROUNDS = 200


def fit_net_benefit(formula: str, data: pd.DataFrame, arguments: ModelArguments,
                    control: SearchControl) -> NetBenefitScore:
    """See :func:`riskformula.risk_score` (``objective="net_benefit"`` or ``rf.net_benefit(...)``).

    The stages: the settings checked; the design and problem (:func:`prepare`); starts and the
    local search; the proof step, branch and bound over the points or the exact MILP
    (:func:`_proof_step`, :func:`_prove`); the verdict (:func:`_verdict`); the fitted model."""
    time_limit, verbose, solver = control.time_limit, control.verbose, control.solver
    a = arguments
    max_size, min_size, c0, constraints, missing = a.max_size, a.min_size, a.c0, a.constraints, a.missing
    factors_as_one, initial = a.factors_as_one, a.initial
    grid = _checked(data, control, a)
    t_start = time.perf_counter()
    setup = prepare(formula, data, missing=missing, event=a.event, context=a.context, weights=a.weights,
                    coef_range=a.coef_range, constraints=constraints, factors_as_one=factors_as_one, c0=c0,
                    max_size=max_size, min_size=min_size)
    design, problem, loss = setup.design, setup.problem, setup.loss
    # the profile's part that needs the data only is taken now, and the searches end early enough for
    # what follows them (the model on its training rows) to fit in the limit: as in the logistic fit
    facts = training_facts(design, data)
    time_limit_search = time_limit - after_search_reserve(time_limit, setup.collapse_seconds)
    lower, upper, w, candidates = setup.lower, setup.upper, setup.weights, setup.candidates
    X, pos, neg = loss.Z[:, 1:], loss.w_pos, loss.w_neg
    info: dict = {}
    scorer = NetBenefitScorer(X, pos, neg, grid)
    search = LocalSearch(problem, scorer, c0)
    # the regressions behind the starts stop at a share of the limit (on wdbc with threshold(.), 10 000
    # columns, the ridge and lasso path take 14 s), so that the search and the proof get the rest
    starts = _starts(problem, search, X, pos, neg, initial, design, deadline=t_start + STARTS_SHARE * time_limit)
    if not any(search.feasible(s) for s in starts):
        point = _feasible_point(problem)
        if point is None:
            raise SearchLimitError("no score meeting the size limits and constraints was found; loosen them.")
        starts.append(point)
    exact, milp = _proof_step(problem, search, scorer, grid, c0, min_size, solver,
                              time_left=max(0.0, time_limit_search - (time.perf_counter() - t_start)), info=info)
    # the local search gets the smaller share when the proof step can close the gap in time
    proof_can_close = exact is not None or (milp is not None and milp.n_indicators <= LARGE_MILP)
    share = SEARCH_SHARE if proof_can_close else 1 - SEARCH_SHARE
    left = time_limit_search - (time.perf_counter() - t_start)
    # the exact model's hand-over to the solver (measured: up to HANDOVER_PER_BUILD times its build)
    # cannot be interrupted: the local search leaves time for it and a short solve
    handover = 0.0 if milp is None else HANDOVER_PER_BUILD * milp.build_time
    budget = left if milp is None and exact is None else \
        max(0.0, min(share * time_limit, left - handover - (milp is not None) * MIN_SOLVE_SECONDS))
    rounds, chains = (SEARCH_ROUNDS, ELITES) if exact is None else (SEEDING_ROUNDS, 1)
    found = search.run(starts, rounds=rounds, time_limit=budget, elites=chains)
    if verbose:
        print(f"local search: objective {found.objective:.6g} after {found.evaluations:,d} evaluations, "
              f"{found.time:.1f}s")
    info.update({"search_objective": found.objective, "search_time": found.time,
                 "search_evaluations": found.evaluations, "search_rounds": found.rounds})
    points, bound, status, nodes = _prove(exact, milp, search, found, X, pos, neg, grid, c0 * min_size, control,
                                          deadline=t_start + time_limit_search, info=info)
    value_pen = search.objective(points)
    bound, gap, status = _verdict(value_pen, bound, status, control, proved=milp is not None or exact is not None)
    elapsed = time.perf_counter() - t_start

    # the score has no intercept: λ_0 is the threshold terms' shift (moved out of the printed
    # intercept by RiskScore), so that ``intercept`` is 0
    spec = design.spec
    shift = score_shift(spec.thresholds, points, lower, upper)
    lam = np.concatenate([[float(shift)], points])
    settings = FitSettings(max_size=max_size, min_size=min_size, coef_lower=tuple(lower.astype(int)),
                           coef_upper=tuple(upper.astype(int)), intercept_range=(0, 0), c0=c0,
                           positive_weight=1.0, weighted=w is not None, time_limit=time_limit,
                           gap_tolerance=control.gap_tolerance, missing=missing, constraints=constraints,
                           factors_as_one=bool(factors_as_one),
                           size_groups=tuple(tuple(g.cols) for g in problem.groups), threshold_candidates=candidates)
    report = SolverReport(status=status, objective=-value_pen, lower_bound=-bound, gap=gap, time=elapsed,
                          nodes=nodes, cuts=0, lp_solves=0, root_bound=-_rowwise_bound(pos, neg, grid, 0.0),
                          solver=_solver_name(solver, exact is not None),
                          settings={k: _stored(x) for k, x in info.items()},
                          solution=tuple(lam))
    nb = _net_benefit_fit(X @ points, pos, neg, grid, shift, c0, solver, info,
                          rows=(np.asarray(design.X, float) @ points, np.asarray(design.y)))
    return NetBenefitScore.from_fit(design, lam, report, settings,
                                    loss=training_log_loss(nb.band_n, nb.band_events, nb.band_risk), data=data,
                                    facts=facts, nb=nb)


def _checked(data, control: SearchControl, arguments: ModelArguments) -> DecisionGrid:
    """What a net-benefit fit needs beyond the checked arguments: the solver known, constraints and
    data it supports; returns the decision grid (``rf.net_benefit(...)``'s, or the default one)."""
    solver = control.solver
    if solver is not None and solver != "appsi_highs":
        solver_factory(solver)  # a name that is no solver fails now, not after the search
    grid = arguments.objective if isinstance(arguments.objective, DecisionGrid) else decision_grid()
    constraints = arguments.constraints
    bad = [c for c in constraints if c.logistic_only]
    if bad:
        raise SettingsError(f"{bad[0].describe()} is not yet supported with objective='net_benefit' (band risks "
                            "are observed rates, not a formula of the points); use it with the default logistic "
                            "objective.")

    fair = [c for c in constraints if c.reads_rows]
    if fair:
        raise SettingsError(f"{fair[0].describe()}: fairness constraints are not yet supported with "
                            "objective='net_benefit' (its search and exact model do not bound group rates); fit "
                            "with the default logistic objective, or audit a net-benefit score with m.fairness().")

    if backend_for(data) is not None:
        raise SettingsError("dask data frames are not yet supported with objective='net_benefit'; pass a pandas "
                            "DataFrame (`data.compute()`), or use the logistic objective.")
    return grid


def _proof_step(problem, search, scorer, grid, c0, min_size, solver, time_left, info):
    """What proves the local search's score: branch and bound over the points (small plain
    problems), the exact MILP, or nothing (no solver, a model too large to build and hand over
    in the ``time_left``, or predictors the big-M model cannot hold exactly: ``info["milp_status"]``
    says which)."""
    if solver is None:
        return None, None
    if _plain_problem(problem) and points_space(search.lo, search.hi, problem.max_size, min_size) <= EXACT_SEARCH_SPACE:
        return PointsBranchAndBound(scorer, search.lo, search.hi, c0, problem.max_size, min_size), None
    rows = model_rows(scorer.pos, scorer.neg, grid)
    if rows * BUILD_SECONDS_PER_ROW * (1 + HANDOVER_PER_BUILD) > BUILD_SHARE * time_left:
        info["milp_status"] = (f"skipped: the exact model ({rows:,d} rows) would take about "
                               f"{rows * BUILD_SECONDS_PER_ROW * (1 + HANDOVER_PER_BUILD):.0f} s to build in "
                               f"pyomo and hand over to the solver, more than {100 * BUILD_SHARE:.0f}% of the "
                               "time left")
        return None, None
    milp = NetBenefitMilp(problem, scorer.pos, scorer.neg, grid, c0)
    if not milp.exact:
        info["milp_status"] = ("skipped: the predictors are not integers or decimals on a fine enough grid for "
                               "an exact big-M model")
        return None, None
    return None, milp


def _prove(exact, milp, search, found, X, pos, neg, grid, size_penalty, control: SearchControl, deadline, info):
    """The proof step run from the local search's score ``found``: the best points, the bound on
    the objective, the status so far and the nodes searched."""
    gap_tolerance, verbose, solver = control.gap_tolerance, control.verbose, control.solver
    points = found.points
    bound = _rowwise_bound(pos, neg, grid, size_penalty)
    status, nodes = "heuristic", 0
    if exact is not None and bound > found.objective + 1e-12:
        left = deadline - time.perf_counter()
        res = exact.run(points, time_limit=max(0.0, left), gap_tolerance=gap_tolerance)
        if verbose:
            print(f"branch and bound over the points: {res.status}, objective {res.objective:.6g}, bound "
                  f"{res.bound:.6g} after {res.nodes:,d} nodes, {res.time:.1f}s")
        info.update(exact_search_status=res.status, exact_search_objective=res.objective,
                    exact_search_bound=res.bound, exact_search_time=res.time, exact_search_nodes=res.nodes)
        nodes = res.nodes
        if res.status == "infeasible":
            raise InfeasibleProblemError("no score satisfies the coefficient ranges and size limits.")
        if res.objective > found.objective + 1e-12:
            points = res.points
        bound = min(bound, res.bound)
        status = "time_limit"
    handover = 0.0 if milp is None else HANDOVER_PER_BUILD * milp.build_time
    if milp is not None and bound > found.objective + 1e-12 and deadline - time.perf_counter() < handover + \
            MIN_SOLVE_SECONDS:
        info["milp_status"] = (f"skipped: {deadline - time.perf_counter():.1f} s left, "
                               f"too little to hand the exact model over to the solver (about {handover:.1f} s) "
                               "and solve it")
        milp = None
    if milp is not None and bound > found.objective + 1e-12:
        milp.set_start(points, optimal_cutoffs(X @ points, pos, neg, grid).cutoffs)
        left = deadline - time.perf_counter()
        res = milp.solve(solver, time_limit=max(1.0, left), gap_tolerance=gap_tolerance, verbose=verbose,
                         options=control.solver_options)
        info.update(milp_status=res.status, milp_objective=res.objective, milp_bound=res.bound,
                    milp_time=res.time, milp_build_time=res.build_time, indicators=res.n_indicators)
        nodes = res.nodes
        if res.status == "infeasible":
            raise InfeasibleProblemError("no score satisfies the coefficient ranges, size limits and constraints.")
        if res.points is not None and search.feasible(res.points):
            if search.objective(res.points) > found.objective + 1e-12:
                points = res.points
        bound = min(bound, res.bound)
        status = "time_limit"
    return points, bound, status, nodes


def _verdict(value_pen, bound, status, control: SearchControl, proved: bool):
    """The bound, gap and status of the score ``value_pen`` (the penalised objective), with a
    warning when it is not proven optimal."""
    gap_tolerance, solver = control.gap_tolerance, control.solver
    bound = max(bound, value_pen)
    gap = (bound - value_pen) / max(abs(value_pen), 1e-12) if bound - value_pen > 1e-12 else 0.0
    if gap <= gap_tolerance:
        status = "optimal"
    elif solver is None:
        warn_caller(f"local search only (solver=None): the score is not proven optimal; gap to the simple "
                    f"bound {100 * gap:.3g}%. Pass a solver for a tighter bound.", OptimalityGapWarning)
    elif not proved:
        warn_caller(f"local search only: the exact model needs integer predictors (or decimals with few "
                    f"digits); the score is not proven optimal, gap to the simple bound {100 * gap:.3g}%.",
                    OptimalityGapWarning)
    else:
        warn_caller(f"stopped at the time limit before proving optimality: gap {100 * gap:.3g}%. Raise "
                    "`time_limit` for a smaller gap.", OptimalityGapWarning)
    return bound, gap, status


@dataclass
class Setup:
    """The training design and the problem of a net-benefit fit (bounds, size limits, threshold
    terms, constraints); ``loss.Z[:, 1:]`` holds the distinct rows, ``loss.w_pos``/``w_neg`` their
    event and non-event weight."""

    design: DesignMatrix
    problem: RiskProblem
    loss: LogisticLoss
    lower: np.ndarray
    upper: np.ndarray
    weights: np.ndarray | None
    candidates: dict
    #: seconds collapsing the training rows to distinct rows took (what follows the search is timed by it)
    collapse_seconds: float = 0.0


def prepare(formula, data, *, missing="raise", event=None, context=None, weights=None, coef_range=(-5, 5),
            constraints=(), factors_as_one=False, c0=0.0, max_size=5, min_size=0) -> Setup:
    """Design and problem of a net-benefit fit (also used by the tests to reach the exact model)."""
    depth = None if any(c.counts_terms_once for c in constraints) else max_size
    design = build_design(formula, data, missing=missing, event=event, context=context, prune_cuts=True,
                          cut_depth=depth, weights=weights)
    w = design.weights
    # moving a cut across rows of one outcome moves their net benefit one way: ends suffice
    design, candidates, lower, upper = design_bounds(design, coef_range, min_size, depth=depth)
    spec = design.spec
    collapsing = time.perf_counter()
    loss = two_class_loss(design)
    collapsing = time.perf_counter() - collapsing
    opts = dict(factors_as_one=bool(factors_as_one), c0=c0, intercept_range=(0, 0))
    problem = build_problem(spec, loss, lower, upper, constraints=constraints, max_size=max_size,
                            min_size=min_size, **opts)
    if constraints:
        def rebuild(cons, max_size, min_size):  # the same problem with fewer constraints
            return build_problem(spec, loss, lower, upper, constraints=cons, max_size=max_size, min_size=min_size,
                                 **opts)
        raise_if_infeasible(problem, constraints, rebuild, max_size=max_size, min_size=min_size)
    return Setup(design, problem, loss, lower, upper, w, candidates, collapsing)


def _net_benefit_fit(s, pos, neg, grid, shift, c0, solver, info, rows=None) -> NetBenefitFit:
    """Exact cut-offs and bands of the final points, in the units of ``score()`` (raw + shift).

    ``rows``: (score, 0/1 outcome) of every training row, to count the rows and events of each
    band as well (``pos``/``neg`` are sample weights of the distinct rows, not row counts)."""
    cut = optimal_cutoffs(s, pos, neg, grid)
    dec = grid.p > 0
    bands = score_bands(s, pos, neg, cut.cutoffs[dec], grid.decision)
    cutoffs = cut.cutoffs.copy()
    cutoffs[dec] = bands.cutoffs
    # net benefit of the final cut-offs (band edges may have moved by a tie)
    tp = np.array([pos[np.round(s, 9) >= c].sum() for c in cutoffs])
    fp = np.array([neg[np.round(s, 9) >= c].sum() for c in cutoffs])
    n = pos.sum() + neg.sum()
    nb = (tp - grid.odds * fp) / n
    band_rows = band_row_events = None
    if rows is not None:
        row_band = band_of(rows[0], bands.cutoffs)
        size = len(bands.n)
        band_rows = tuple(int(x) for x in np.bincount(row_band, minlength=size))
        band_row_events = tuple(int(x) for x in np.bincount(row_band, weights=rows[1], minlength=size))
    return NetBenefitFit(band_rows=band_rows, band_row_events=band_row_events,
                         grid=grid, cutoffs=tuple(float(c + shift) for c in cutoffs),
                         band_n=tuple(float(x) for x in bands.n), band_events=tuple(float(x) for x in bands.events),
                         band_risk=tuple(float(x) for x in bands.risk), net_benefit=tuple(float(x) for x in nb),
                         value=float(grid.w @ nb), c0=float(c0), solver=solver,
                         search={k: _stored(x) for k, x in info.items()})


def _starts(problem, search, X, pos, neg, initial, design, deadline: float | None = None) -> list:
    """The empty score, the user's start if any, and the rounded logistic directions (ridge, then
    the lasso path); the regressions stop at ``deadline`` (a ``time.perf_counter()`` value), those
    not begun by then are skipped."""
    d = X.shape[1]
    starts = [np.zeros(d)]
    if initial is not None:
        starts.insert(0, initial_points(initial, design.spec.terms, problem)[0][1:])
    if d and (deadline is None or time.perf_counter() < deadline):
        starts += rounded_starts(problem, logistic_direction(X, pos, neg, deadline=deadline), search.lo, search.hi)
        for direction in sparse_directions(X, pos, neg, deadline=deadline):
            starts += rounded_starts(problem, direction, search.lo, search.hi)
    unique: dict[bytes, np.ndarray] = {}
    for lam in starts:  # the first of equal starts keeps its place
        unique.setdefault(points_key(lam), lam)
    return list(unique.values())


def model_rows(pos, neg, grid) -> int:
    """Number of linear rows of the exact model: one big-M row per indicator and outcome present in
    its row, one nesting row per indicator, one score row per distinct row."""
    m = int(np.sum((grid.p > 0) & (grid.w > 0)))
    R = len(pos)
    return int(m * (np.count_nonzero(pos) + np.count_nonzero(neg) + R) + R)


def _rowwise_bound(pos, neg, grid, penalty: float) -> float:
    """Upper bound: every distinct row decided on its own (the best any rule of x can do)."""
    n = pos.sum() + neg.sum()
    best = np.maximum(0.0, pos[None, :] - grid.odds[:, None] * neg[None, :]).sum(axis=1) / n
    return float(grid.w @ best) - penalty


def _feasible_point(problem):
    """Points satisfying the bounds and rows with no intercept (HiGHS, zero objective), or None."""
    x = feasible_point(problem, time_limit=30.0, intercept=0.0)[1]
    return None if x is None else np.round(x[1:problem.d + 1])


def _plain_problem(problem) -> bool:
    """Whether any points within the bounds and the size limits are feasible (no other rows)."""
    return not problem.needs_row_check and problem.n_aux == 0


def _solver_name(solver, exact: bool = False) -> str:
    if solver is None:
        return "local search (exact cut-offs)"
    if exact:
        return "local search (exact cut-offs) + branch and bound over the points"
    return f"local search (exact cut-offs) + MILP via pyomo/{solver}"


def _stored(x):
    """A search statistic as the report stores it: a Python value, None for a non-finite number."""
    x = plain(x)
    return None if isinstance(x, float) and not math.isfinite(x) else x


_NO_INTERCEPT = "a net-benefit score has no intercept (its risks are the event rates of its score bands)"
register_objective(Objective(
    "net_benefit", fit_net_benefit,
    arguments=frozenset(ModelArguments.names()) - {"intercept_range", "positive_weight", "scale", "real_intercept",
                                                   *ModelArguments.SURVIVAL_ONLY},
    search=frozenset({"time_limit", "gap_tolerance", "progress", "verbose", "solver", "solver_options"}),
    description="weighted net benefit over decision thresholds − c0 · size (Chi & Birbil, 2026)",
    why_not={"horizon": "it is read by a time-to-event fit, whose formula's left side is Surv(time, event)",
             "ties": "it is read by a time-to-event fit, whose formula's left side is Surv(time, event)",
             "intercept_range": "the score has no intercept, the cut-off of each decision threshold plays its part",
             "positive_weight": "the decision thresholds set the exchange rate of events and non-events (p/(1-p))",
             "scale": "a net-benefit score's risks are the observed event rates of its score bands, not a logistic "
                      "curve of the score",
             "real_intercept": _NO_INTERCEPT,
             "node_limit": "its search is bounded by `time_limit`",
             "absolute_gap_tolerance": "its exact solver stops at `gap_tolerance`",
             "n_jobs": "the net-benefit fit's exact model is solved by the pyomo solver: set its threads through "
                       "`solver_options`",
             "client": "the dask cluster runs the logistic fit's support search; the net-benefit fit's exact model "
                       "is solved by the pyomo solver in this process"}))
