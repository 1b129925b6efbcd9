"""The Cox objective: an integer risk score for a time-to-event outcome ``Surv(time, event) ~ ...``,
certified; registered as ``objective="cox"`` of :func:`riskformula.risk_score`, which picks it for
a formula whose left side is ``Surv(time, event)``.

The pipeline is the logistic fit's, with the Cox (1972) partial likelihood as the loss
(:class:`~riskformula.problem.cox.CoxLoss`; Efron's (1977) ties by default, Breslow's (1974) with
``objective=rf.cox(ties="breslow")``): formula + data → time-to-event design
(:mod:`riskformula.design`; threshold
cuts are not pruned, since the outcome-run argument that prunes them is the binary loss's) →
one problem per score scale, the intercept fixed at 0 (the partial likelihood does not see it) →
the Cox support search over every score scale > 0 (:mod:`riskformula.solver.cox_support`; with
``scale="fit"``, the default) or the branch-and-cut over the scales (``engine="tree"``, a fixed
scale or a list of them, or a problem the support search cannot list) → the Breslow baseline
hazard of the training rows at the fitted score → :class:`~riskformula.survival.SurvivalScore`.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from typing import cast

import numpy as np

from .._threads import check_n_jobs
from ..arguments import ModelArguments
from ..backends import backend_for
from ..card import value_supports
from ..control import SearchControl
from ..design import build_design
from ..design.rules import Deadline
from ..errors import FormulaError, NotApplicableError, SearchLimitError, SettingsError
from ..fitinfo import FitSettings, FittedRows, TrainingSummary, index_digest
from ..counterfactuals.profile import TrainingProfile
from ..logistic import _solution, _usable_starts, _warn_few_rows
from ..model import training_facts
from ..objectives import Objective, register_objective
from ..pipeline import after_search_reserve, design_bounds, initial_points
from ..problem import build_problem
from ..problem.cox import CoxLoss
from ..reports.survival_metrics import breslow_baseline, harrell_c, kaplan_meier
from ..solver import BranchAndCut, kernels
from ..solver.cox_support import CoxSupportSearch, why_not_cox
from ..solver.multiscale import MultiScaleSearch, refined_scale, refinement_seconds, searched_scales
from ..solver.parallel import start_workers, workers_for
from .model import SurvivalFit, SurvivalScore
from .objective import ties_of

__all__ = ["fit_cox", "COX_FIT_SCALES", "default_horizon"]

#: the score scales ``scale="fit"`` (the Cox fit's default) searches: from 1 (a point is a hazard
#: ratio of e ≈ 2.7) to 16 (a point is a hazard ratio of e^(1/16) ≈ 1.06), since hazard ratios per
#: item are mostly between 1.1 and 3; the search adds scales where the best score's points fit best
COX_FIT_SCALES = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0)


def default_horizon(time, event) -> float:
    """The median follow-up by the reverse Kaplan–Meier method (Schemper & Smith, 1996): the time
    by which half the rows would have been censored had none had the event; the largest event
    time when the censoring curve never falls to one half.  It is kept before the longest
    follow-up, where the card's own rows can still be evaluated (the censoring-weighted Brier score
    and AUC need rows followed past the horizon): when half the rows are followed to the end (one
    date of administrative censoring), the last event time before it.  Rounded *down* to three
    significant digits (1317 → 1310), and never below the first event time."""
    time, event = np.asarray(time, float), np.asarray(event, int)
    t, s = kaplan_meier(time, 1 - event)
    below = np.flatnonzero(s <= 0.5)
    events = time[event == 1]
    h = float(t[below[0]]) if len(below) else float(np.max(events))
    last = float(time.max())
    if h >= last and np.any(events < last):
        h = float(np.max(events[events < last]))
    rounded = float(f"{h:.3g}")
    if rounded > h:  # one step down in the third digit
        rounded = float(f"{rounded - 10.0 ** (math.floor(math.log10(h)) - 2):.3g}")
    return rounded if len(events) == 0 or rounded >= float(np.min(events)) else h


def fit_cox(formula: str, data, arguments: ModelArguments, control: SearchControl) -> SurvivalScore:
    """The certified time-to-event risk score; see :func:`riskformula.risk_score` for the arguments."""
    # the clock covers the support search's compiled loops' loading, not their compiling (a first
    # fit in a new environment), as for the logistic fit
    started = kernels.start_clock()
    a = arguments
    if backend_for(data) is not None:
        raise NotApplicableError("a time-to-event score on a dask frame is not supported: the partial likelihood "
                                 "compares every row with all rows still at risk at each event time, which the "
                                 "partition-by-partition collapse cannot do. Fit it on a pandas DataFrame "
                                 "(data.compute()).")
    rows_bound = [c for c in a.constraints if c.reads_rows or c.whole_scores or c.on_the_risk()]
    if rows_bound:
        raise SettingsError(f"{rows_bound[0].describe()} does not apply to a time-to-event score: fairness and risk "
                            "constraints are written for a binary outcome's risk. The structural constraints "
                            "(at_most, not_both, implies, max_variables, sign, ...) apply.")
    n_jobs = workers_for(check_n_jobs(control.n_jobs), control.time_limit)
    start_workers(n_jobs, BranchAndCut)
    deadline = Deadline.after(control.time_limit, started)
    design = build_design(formula, data, missing=a.missing, event=a.event, context=a.context, prune_cuts=False,
                          weights=a.weights, deadline=deadline, survival=True)
    if design.time is None:
        raise FormulaError(f"objective='cox' fits a time-to-event outcome: write the formula's left side as "
                           f"Surv(time, event), e.g. 'Surv(days, died) ~ ...'; got {formula!r}.")
    design, candidates, lower, upper = design_bounds(design, a.coef_range, a.min_size, drop_dominated=False)
    ties = ties_of(a.objective)
    loss = CoxLoss(design.X, design.time, design.y, weights=design.weights, ties=ties)
    fitted_scale = a.fitted_scale or a.scale is None  # the Cox fit's default: scale="fit"
    scales = COX_FIT_SCALES if fitted_scale else a.scales
    opts = dict(factors_as_one=bool(a.factors_as_one), c0=a.c0, intercept_range=(0, 0), constraints=a.constraints,
                max_size=a.max_size, min_size=a.min_size)

    def problem_at(m, quiet=True):
        with warnings.catch_warnings():
            if quiet:
                warnings.simplefilter("ignore")
            return build_problem(design.spec, loss.with_scale(m), lower, upper, **opts)
    problems = {m: problem_at(m, quiet=k > 0) for k, m in enumerate(scales)}
    problem = next(iter(problems.values()))
    starts = None if a.initial is None else _usable_starts(initial_points(a.initial, design.spec.terms, problem),
                                                           problems, list(design.spec.columns), a.max_size, a.min_size)
    search_limit = control.time_limit - after_search_reserve(control.time_limit, 0.0)
    report = _support_search(problems, loss, a, control, fitted_scale, started, search_limit, starts)
    # scale="fit": the search leaves a little time to move its best score to its own scale and improve it there
    refine_time = refinement_seconds(control.time_limit) if fitted_scale else 0.0
    options = control.options(time_limit=search_limit - refine_time, n_jobs=n_jobs)
    if report is not None:
        m = float(report.scale)
        problems = {m: problem_at(m)}
        lam = np.asarray(report.solution, dtype=float)
        objective = problems[m].objective(lam)
        proven = min(report.lower_bound, objective)
        gap = 0.0 if proven >= objective else (objective - proven) / max(abs(objective), 1e-12)
        report = dataclasses.replace(report, objective=objective, lower_bound=proven, gap=gap)
    elif len(problems) == 1:
        m, problem = next(iter(problems.items()))
        report = dataclasses.replace(BranchAndCut(problem, options).solve(initial=starts, started=started), scale=m)
    else:
        search = MultiScaleSearch(problems, options, add_scale=problem_at if fitted_scale else None)
        report = search.solve(initial=starts, started=started,
                              initial_scale=float(a.initial.scale) if isinstance(a.initial, SurvivalScore) else None)
        problems = dict(search.problems)
        if fitted_scale:  # the best score's own scale, its points fixed (the search's scales are a grid)
            refine_until = min(started + search_limit, time.perf_counter() + refine_time)
            report, at = refined_scale(report, problems, problem_at, deadline=refine_until)
            problems[float(report.scale)] = at
    problem = problems.get(report.scale, problem)
    lam = _solution(report, problem, control, a.max_size, a.min_size)
    m = float(report.scale)
    settings = FitSettings(max_size=a.max_size, min_size=a.min_size, coef_lower=tuple(lower.astype(int)),
                           coef_upper=tuple(upper.astype(int)), intercept_range=(0, 0), c0=a.c0, positive_weight=1.0,
                           weighted=a.weights is not None, time_limit=control.time_limit,
                           gap_tolerance=control.gap_tolerance, absolute_gap_tolerance=control.absolute_gap_tolerance,
                           missing=a.missing, constraints=a.constraints, factors_as_one=bool(a.factors_as_one),
                           size_groups=tuple(tuple(g.cols) for g in problem.groups),
                           threshold_candidates=candidates,
                           scales=((float(report.scale),) if report.settings.get("continuous_scale")
                                   else searched_scales(scales, problems, report)),
                           real_intercept=False)
    return cast(SurvivalScore, _warn_few_rows(survival_model(design, lam, report, settings, loss, m, a, data=data)))


def _support_search(problems: dict, loss: CoxLoss, a: ModelArguments, control: SearchControl, fitted_scale: bool,
                    started: float, search_limit: float, starts):
    """The Cox support search's report (every score scale > 0), or None where it does not apply
    (``engine="tree"``, a fixed scale or list of scales, or a problem it cannot list: see
    :func:`~riskformula.solver.cox_support.why_not_cox`).  It takes all the time: the branch-and-cut
    would certify only its grid of scales, and where the support search stops at the limit its
    bound (at least the Cox regression's on every column) holds for every scale > 0."""
    if control.engine == "tree":
        return None
    if not fitted_scale:
        if control.engine == "supports":
            raise SettingsError("`engine='supports'` certifies every score scale > 0: use scale='fit' (the default "
                                "of a time-to-event fit), or engine='auto' or 'tree' for a fixed scale.")
        return None
    if control.node_limit is not None and control.engine == "auto":
        return None
    problem = problems.get(1.0, next(iter(problems.values())))
    why = why_not_cox(problem, loss, a.max_size)
    if why:
        if control.engine == "supports":
            raise SettingsError(f"`engine='supports'` cannot certify this fit: {why}; use engine='auto' (the "
                                "branch-and-cut then) or 'tree'.")
        return None
    left = max(0.0, search_limit - (time.perf_counter() - started))
    search = CoxSupportSearch(problem, loss.with_scale(1.0), time_limit=left, gap_tolerance=control.gap_tolerance,
                              absolute_gap_tolerance=control.absolute_gap_tolerance, node_limit=control.node_limit)
    report = search.solve(initial=starts)
    if not report.solution:
        if control.engine == "supports":
            raise SearchLimitError(f"the support search stopped at the time limit ({report.time:.2g} s) before "
                                   "finding a risk score; raise `time_limit` or use engine='auto'.")
        return None
    return report


def survival_model(design, lam, report, settings: FitSettings, loss: CoxLoss, scale: float,
                   a: ModelArguments, data=None) -> SurvivalScore:
    """The fitted :class:`SurvivalScore` of a time-to-event design and its points ``lam``: the
    Breslow baseline of the training rows at the fitted score, the horizons, the partial
    likelihoods, and the training rows' scores and concordance."""
    ties = ties_of(a.objective)
    t, e = np.asarray(design.time, float), np.asarray(design.y, int)
    w = None if design.weights is None else np.asarray(design.weights, float)
    eta = (lam[0] + design.X @ lam[1:]) / scale  # = (card intercept + card score) / scale
    base_times, base_hazard = breslow_baseline(t, e, eta, weights=w, ties=ties)
    max_time = float(t.max())
    horizons = a.horizon if a.horizon is not None else (default_horizon(t, e),)
    late = [h for h in horizons if h > max_time]
    if late:
        raise SettingsError(f"`horizon={late[0]:g}` is beyond the longest follow-up of the training rows "
                            f"({max_time:g}): no risk can be estimated there. Ask for a horizon of at most "
                            f"{max_time:g}.")
    early = [h for h in horizons if h < base_times[0]]
    if early:
        raise SettingsError(f"`horizon={early[0]:g}` comes before the first event ({base_times[0]:g}): every risk "
                            f"within it is 0. Ask for a later horizon.")
    total = loss.total_weight
    events_w = float(e.sum() if w is None else w[e == 1].sum())
    fitted_loss = loss.with_scale(scale).value(lam)  # mean negative log partial likelihood of the card
    surv = SurvivalFit(horizons=tuple(horizons), ties=ties, base_times=tuple(map(float, base_times)),
                       base_hazard=tuple(map(float, base_hazard)), llf=-fitted_loss * total,
                       llnull=-loss.value(np.zeros_like(lam)) * total, max_time=max_time, events_weight=events_w)
    training = TrainingSummary(nobs=design.nobs, events=int(e.sum()), rows_dropped=design.dropped,
                               rows_digest=index_digest(design.index),
                               weight_total=float(len(t) if w is None else w.sum()), weight_events=events_w)
    model = SurvivalScore(design.spec, lam, report, settings, fitted_loss, training,
                          value_supports(design.spec, design.X, np.round(lam[1:])), surv=surv)
    score = model.scorecard.matrix_of_design(design.X) @ model.scorecard.points
    metrics = {"n": float(design.nobs), "events": float(e.sum()), "harrell_c": float(harrell_c(t, e, score))}
    model = model._replace(fitted=FittedRows(design.index, np.asarray(score, float), e.astype(np.int8)),
                           training=dataclasses.replace(training, metrics=metrics))
    # the training variables' ranges and scales, for counterfactuals without data=
    facts = None if data is None else training_facts(design, data)
    if facts is None or facts is False:
        return model
    try:
        return model._replace(profile=TrainingProfile.from_data(model, None, X=design.X, facts=facts))
    except (TypeError, ValueError):
        return model


register_objective(Objective(
    "cox", fit_cox,
    arguments=frozenset(ModelArguments.names()) - {"intercept_range", "positive_weight", "real_intercept"},
    search=frozenset({"time_limit", "gap_tolerance", "absolute_gap_tolerance", "node_limit", "n_jobs", "progress",
                      "verbose", "engine"}),
    description="negative log partial likelihood per row + c0 · size (Cox, 1972)",
    why_not={"intercept_range": "the partial likelihood does not depend on an intercept (the baseline hazard plays "
                                "its part)",
             "positive_weight": "events and censored rows enter the partial likelihood together; weigh rows with "
                                "`weights`",
             "real_intercept": "a time-to-event score has no intercept (the baseline hazard plays its part)",
             "client": "the time-to-event fit runs on this machine (`n_jobs` processes)",
             "solver": "the time-to-event fit runs its own branch-and-cut",
             "solver_options": "the time-to-event fit runs its own branch-and-cut"}))
