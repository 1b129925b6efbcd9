"""The logistic objective (Ustun & Rudin, 2019): mean logistic loss + c0 · size, certified by the
package's branch-and-cut; registered as ``objective="logistic"`` of :func:`riskformula.risk_score`.

The pipeline, one stage per package: formula + data → training design
(:mod:`riskformula.design`; threshold cuts pruned by :mod:`riskformula.thresholds`) →
optimization problem (:mod:`riskformula.problem`) → branch-and-cut (:mod:`riskformula.solver`)
→ fitted :class:`~riskformula.model.RiskScore` (reports in :mod:`riskformula.reports`).
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _checks as v
from ._threads import check_n_jobs
from .design import build_design
from .design.rules import Deadline
from .errors import (InfeasibleProblemError, OptimalityGapWarning, PerfectSeparationWarning, SearchLimitError,
                     SettingsError, SmallSampleWarning, warn_caller)
from .control import SearchControl
from .fitinfo import DistinctRows, FitSettings
from .arguments import ModelArguments
from .objectives import Objective, register_objective
from .pipeline import after_search_reserve, design_bounds, initial_points, two_class_loss
from .model import RiskScore, training_facts
from .problem import build_problem
from .problem.training import TrainingRows
from .reports.render import fmt_gap
from .solver import BranchAndCut, kernels
from .solver.feasibility import has_feasible_point, open_signs, raise_if_infeasible
from .solver.multiscale import MultiScaleSearch, refined_scale, refinement_seconds, searched_scales
from .solver.support_search import SupportSearch, why_not
from .solver.parallel import start_workers, workers_for
from .backends import backend_for
from .thresholds import coarse_columns

if TYPE_CHECKING:
    from .design import DesignMatrix
    from .problem import LogisticLoss


def fit_logistic(formula: str, data, arguments: ModelArguments, control: SearchControl) -> RiskScore:
    """The certified logistic risk score; see :func:`riskformula.risk_score` for the arguments
    (``arguments``: the model's, checked; ``control``: the search's).

    The stages: the worker processes started; the training design and its loss
    (:func:`_training_design`); one problem per score scale, checked for feasibility
    (:func:`_problems`); the search (:func:`_search`); the fitted model on its training rows."""
    # the time limit covers the setup too, not only the search, and the compiled loops' loading; a
    # first fit in a new environment compiles them (10–30 s), which is not the search's time
    started = kernels.start_clock()
    a = arguments
    max_size, min_size, c0, constraints, scale = a.max_size, a.min_size, a.c0, a.constraints, a.scale
    coef_range, intercept_range, weights, missing = a.coef_range, a.intercept_range, a.weights, a.missing
    factors_as_one, initial, positive_weight = a.factors_as_one, a.initial, a.positive_weight
    scales, real_intercept = a.scales, a.intercept_is_real
    n_jobs = workers_for(check_n_jobs(control.n_jobs), control.time_limit)
    # the settings are valid: the tree search's worker processes start while the design is built
    # (see start_workers; a short time limit searches in this process, see workers_for)
    start_workers(n_jobs, BranchAndCut)

    t = _training_design(formula, data, constraints, coef_range=coef_range, min_size=min_size, max_size=max_size,
                         weights=weights, missing=missing, event=a.event, context=a.context,
                         positive_weight=positive_weight, real_intercept=real_intercept,
                         deadline=Deadline.after(control.time_limit, started))
    opts = dict(factors_as_one=bool(factors_as_one), c0=c0, intercept_range=intercept_range, training=t.training,
                constraints=constraints, max_size=max_size, min_size=min_size)
    problems, infeasible, problem_at = _problems(t, scales, coef_range, opts)
    problem = next(iter(problems.values()))
    starts = None if initial is None else _usable_starts(initial_points(initial, t.design.spec.terms, problem),
                                                         problems, list(t.design.spec.columns), max_size, min_size)
    # what the training rows' profile (for counterfactuals) needs of the data alone is taken before the
    # search, so that the search's clock counts it (0.4–0.9 s on 10⁶ rows) and only the model's part is
    # left for after it
    facts = training_facts(t.design, data) if t.patterns is None else None
    # scale="fit" refines its grid around the best risk score (rows on the risk would need a
    # feasibility check per new scale: those fits keep the grid)
    refine = isinstance(scale, str) and not any(c.on_the_risk() for c in constraints)
    # the support search certifies plain problems over every scale > 0 (scale="fit") or at the one scale
    cells = _CellChoice(fitted=isinstance(scale, str), default_intercepts=intercept_range is None,
                        problem_at=problem_at, coarse=coarse_columns(t.design)) \
        if len(scales) == 1 or isinstance(scale, str) else None
    report, problems = _search(problems, infeasible, control, n_jobs, started, t.collapse_seconds, starts,
                               initial_scale=_initial_scale(initial), add_scale=problem_at if refine else None,
                               cells=cells)
    problem = problems.get(report.scale, problem)
    bc_lam = _solution(report, problem, control, max_size, min_size)
    settings = FitSettings(max_size=max_size, min_size=min_size, coef_lower=tuple(t.lower.astype(int)),
                           coef_upper=tuple(t.upper.astype(int)), intercept_range=tuple(problem.intercept_bounds),
                           c0=c0, positive_weight=positive_weight, weighted=weights is not None,
                           time_limit=control.time_limit, gap_tolerance=control.gap_tolerance,
                           absolute_gap_tolerance=control.absolute_gap_tolerance, missing=missing,
                           constraints=constraints, factors_as_one=bool(factors_as_one),
                           size_groups=tuple(tuple(g.cols) for g in problem.groups),
                           threshold_candidates=t.candidates,
                           scales=((float(report.scale),) if report.settings.get("continuous_scale") else
                                   searched_scales(scales, problems, report)),
                           real_intercept=real_intercept)
    if len(settings.scales) > 1 or report.settings.get("continuous_scale"):
        _warn_separated(problem.loss, bc_lam, float(report.scale))
    if t.patterns is not None:
        return _warn_few_rows(t.patterns.model(t.design, bc_lam, report, settings, loss=problem.loss.value(bc_lam)))
    # the training design is dropped here: the model keeps the design spec and each training row's
    # score and outcome (for fittedvalues and the residuals), no other training data
    fair = tuple(c for c in constraints if c.reads_rows)
    assert t.training is not None  # a pandas fit (no patterns) keeps its training rows
    model = RiskScore.from_fit(t.design, bc_lam, report, settings, loss=problem.loss.value(bc_lam), data=data,
                               facts=facts, fairness=fair, frame=t.training.frame if fair else None,
                               weights=t.training.weights if fair and t.design.weights is not None else None,
                               distinct=DistinctRows.of_loss(problem.loss))
    return _warn_few_rows(model)


def _warn_separated(loss: LogisticLoss, lam: np.ndarray, scale: float) -> None:
    """A :class:`~riskformula.PerfectSeparationWarning` when the score with points ``lam`` puts every
    training event above every non-event (a fitted scale: the loss then has no minimum)."""
    scores = loss.Z[:, 1:] @ np.asarray(lam, dtype=float)[1:]
    events, others = scores[loss.w_pos > 0], scores[loss.w_neg > 0]
    if len(events) and len(others) and events.min() > others.max():
        warn_caller(f"The score separates the training rows: every event scores above every non-event, so the "
                    f"logistic loss has no minimum over the score scale (it falls toward 0 as the scale shrinks), "
                    f"and the fit's scale of {scale:.3g} points per logit stands for that limit, with risks of "
                    "nearly 0 and 1. Such risks rarely hold on new data: check the score with `rf.cross_validate`, "
                    "or fix the scale (e.g. scale=1) for risks in between.", PerfectSeparationWarning)


def _warn_few_rows(model: RiskScore) -> RiskScore:
    """``model``, after a :class:`~riskformula.SmallSampleWarning` when its training rows are few
    for its items (see :func:`riskformula.reports.summary.few_rows_note`)."""
    from .reports.summary import few_rows_note
    note = few_rows_note(model)
    if note:
        warn_caller(note, SmallSampleWarning)
    return model


@dataclasses.dataclass
class _Training:
    """The training design (``patterns``: a backend's weighted distinct patterns, or None), its
    candidate cuts and point bounds, its loss, the seconds the loss took to collapse the rows, and
    the training rows with the caller's columns (None with a backend)."""

    design: DesignMatrix
    patterns: Any  # a registered backend's training patterns (see riskformula.backends)
    candidates: dict
    lower: np.ndarray
    upper: np.ndarray
    loss: LogisticLoss
    collapse_seconds: float
    training: TrainingRows | None


def _training_design(formula, data, constraints, *, coef_range, min_size, max_size, weights, missing, event,
                     context, positive_weight, real_intercept, deadline=None) -> _Training:
    """The training design and its loss, from a pandas frame or through a registered backend."""
    # pruning threshold cuts assumes only the loss judges a cut's position: side information and
    # fairness bounds (which see the predictions of every row) also do
    exact_cuts = not all(c.prunes_cuts for c in constraints)
    # a cut that can move inside a run of one outcome is packed against its end or against
    # another cut of the variable: at most max_size of them (any number when a threshold term
    # counts once toward the size)
    cut_depth = None if any(c.counts_terms_once for c in constraints) else max_size
    patterns = None
    backend = backend_for(data)
    if backend is not None:
        needs_rows = [c for c in constraints if c.reads_rows]
        if needs_rows:
            raise SettingsError(f"{needs_rows[0].describe()} needs the rows' groups, which a dask frame's collapsed "
                                "patterns do not keep; fit it on a pandas DataFrame (data.compute()).")
        patterns = backend.training_patterns(formula, data, weights=weights, missing=missing, event=event,
                                             context=context, prune_cuts=not exact_cuts, cut_depth=cut_depth)
        design = patterns.design
    else:
        design = build_design(formula, data, missing=missing, event=event, context=context,
                              prune_cuts=not exact_cuts, cut_depth=cut_depth, weights=weights, deadline=deadline)
    design, candidates, lower, upper = design_bounds(design, coef_range, min_size, drop_dominated=not exact_cuts,
                                                     depth=cut_depth)
    collapsing = time.perf_counter()
    # a small design reaches the search, which returns the best model it finds in the time left
    large = deadline is not None and deadline.for_cells(design.X.size).at is not None
    check = (lambda: deadline.check("collapsing the training rows")) if large else None
    if check is not None:
        check()
    loss = two_class_loss(design, positive_weight, check=check).with_real_intercept(real_intercept)
    collapsing = time.perf_counter() - collapsing  # one pass over the training rows, measured
    if check is not None:
        check()
    # the training rows with the caller's columns, for constraints about data (fairness by a column
    # that need not be in the formula)
    training = None if patterns is not None else TrainingRows.of_design(design, data)
    return _Training(design, patterns, candidates, lower, upper, loss, collapsing, training)


def _problems(t: _Training, scales: tuple, coef_range, opts: dict):
    """One problem per score scale, the scales at which no risk score meets the constraints, and
    the function that builds the problem at a new scale; an :class:`InfeasibleProblemError`
    naming a conflicting subset of the constraints when none does."""
    spec, lower, upper, loss = t.design.spec, t.lower, t.upper, t.loss
    constraints, max_size, min_size = opts["constraints"], opts["max_size"], opts["min_size"]

    def problem_at(m, quiet=True):
        """The problem on score scale m: the same rows, the loss (and rows on the risk) on that
        scale; constraints warn about the data (small groups) once, not once per scale."""
        with warnings.catch_warnings():
            if quiet:
                warnings.simplefilter("ignore")
            return build_problem(spec, loss if m == 1.0 else loss.with_scale(m), lower, upper, **opts)
    problems = {m: problem_at(m, quiet=k > 0) for k, m in enumerate(scales)}
    infeasible: list = []
    if not constraints:
        return problems, infeasible, problem_at
    first = problems[scales[0]]
    if len(scales) > 1 and any(c.on_the_risk() for c in constraints):
        # rows on the risk move with the scale: some scales may admit no risk score
        infeasible = [m for m in scales if has_feasible_point(problems[m]) is False]
        first = problems[infeasible[0]] if len(infeasible) == len(scales) else None
    if first is not None:
        def rebuild(cons, max_size, min_size, opened=()):
            # the same problem with fewer constraints, and with the columns `opened` freed of a
            # sign-closing coef_range entry: how the deletion filter tests whether that entry conflicts
            lo, hi = open_signs(lower, upper, opened)
            return build_problem(spec, first.loss, lo, hi, **{**opts, "constraints": cons, "max_size": max_size,
                                                               "min_size": min_size,
                                                               "intercept_range": first.intercept_bounds})
        try:
            raise_if_infeasible(first, constraints, rebuild, max_size=max_size, min_size=min_size,
                                coef_ranges=v.sign_closed_ranges(coef_range, spec.terms))
        except InfeasibleProblemError as e:
            hint = _loosest_fairness_hint(getattr(e, "conflict", []), constraints,
                                          lambda cons: rebuild(cons, max_size, min_size))
            if hint:
                raise InfeasibleProblemError(f"{e} {hint}") from None
            raise
    for m in infeasible:
        del problems[m]
    return problems, infeasible, problem_at


@dataclasses.dataclass
class _CellChoice:
    """What the support search needs to know of a fit: every scale > 0 (``fitted``) or the one
    scale, whether the intercept range is the default one, and how to build the problem at a scale."""

    fitted: bool
    default_intercepts: bool
    problem_at: Any
    #: the columns of a smaller class the support search searches first for a start (a quantile
    #: grid of each threshold's cuts: :func:`~riskformula.thresholds.coarse_columns`), or None
    coarse: Any = None

    #: seconds of a time limit up to which the support search's share grows with it (see :meth:`budget`)
    CAP_SECONDS = 60.0

    def share(self) -> float:
        """The share of the search's time (of at most a minute, see :meth:`budget`) after which the
        support search goes on only while projected to finish (it gives up sooner when its work so
        far projects far past it): 80 % for a
        fitted scale, whose certificate only the support search gives over every scale > 0 (the
        branch-and-cut certifies the grid of scales only: on the exact track's adult at size 7 and
        mushroom at size 4 it leaves gaps of 6 % and 87 % after 60 s, where the listing certifies
        every scale in 41 s and 34 s; with a 60 % share both were handed over at 36 s), 30 % at one
        scale, so a problem the branch-and-cut alone certifies keeps most of its time."""
        return 0.8 if self.fitted else 0.3

    def budget(self, left: float) -> tuple[float, float]:
        """The support search's seconds out of ``left``: (limit, checkpoint).  The checkpoint is
        the share of at most :data:`CAP_SECONDS` (48 s for a fitted scale, 18 s at one scale).  Past
        it the support search goes on only while the part of its tree done so far projects the
        whole within the limit, else it hands over — so a long time limit (600 s) does not keep the
        tree waiting for a share that grows with it, while a listing on its way to finishing goes
        on.  The limit is the share of ``left`` at one scale (up to a 60 s limit the two are
        equal), and all of ``left`` for a fitted scale: the tree certifies only its grid of scales,
        and in the last fifth of a minute it certified none of the exact track's problems, where a
        listing projected to finish did (adult at size 7 needs 44–52 s on this machine, past the
        48 s checkpoint; see :func:`_cell_search` for a listing that the limit stops)."""
        share = self.share()
        checkpoint = max(0.0, min(left, self.CAP_SECONDS) * share)
        return (max(0.0, left) if self.fitted else max(0.0, left * share)), checkpoint


def _cell_search(problems: dict, infeasible: list, cells: _CellChoice | None, control: SearchControl,
                 started: float, search_limit: float, n_jobs: int = 1):
    """The support search's report and problems when the fit qualifies and it certifies within its
    share of the time; else None (and the best risk score it found, as a start for the tree)."""
    if control.engine == "tree" or cells is None or infeasible or (control.node_limit is not None
                                                                   and control.engine == "auto"):
        if control.engine == "supports":
            raise SettingsError("`engine='supports'` needs one score scale or scale='fit' (not a list of scales), "
                                "and constraints that the support search can list; use engine='auto' or 'tree'.")
        return None, None
    problem = problems.get(1.0, next(iter(problems.values()))) if cells.fitted else next(iter(problems.values()))
    why = why_not(problem, cells.fitted, cells.default_intercepts)
    X = problem.loss.Z[:, 1:]
    if not why and not cells.fitted and control.engine == "auto" and _rows_apart(X, problem.max_size):
        # at one scale, predictors whose full-size supports can put every row in a cell of its own
        # (real values, or whole ones of many values such as 1–10 ratings): the branch-and-cut,
        # which certifies them there without listing supports.  Each support's point vectors would
        # be calibrated row by row: on the breast cancer data of Ustun & Rudin (2019) at size 5 the
        # listing did 13 supports in its 18 s, and the fit took 31 s where the branch-and-cut alone
        # takes 0.8 s.  (The support search takes them when asked, engine="supports"; a fitted
        # scale keeps it, as only it certifies every scale > 0.)
        return None, None
    if why:
        if control.engine == "supports":
            raise SettingsError(f"`engine='supports'` cannot certify this fit: {why}; use engine='auto' (the "
                                "branch-and-cut then) or 'tree'.")
        return None, None
    left = search_limit - (time.perf_counter() - started)
    budget, checkpoint = (max(0.0, left), None) if control.engine == "supports" else cells.budget(left)
    search = SupportSearch(problem, cells.fitted, time_limit=budget, gap_tolerance=control.gap_tolerance,
                           absolute_gap_tolerance=control.absolute_gap_tolerance, n_jobs=n_jobs,
                           client=control.client, checkpoint=checkpoint, coarse=cells.coarse)
    if control.engine == "supports":
        search.give_up = math.inf  # asked for: it runs to the time limit and states its bound
    report = search.solve()
    if report.status != "optimal" and control.engine == "auto":
        if not (cells.fitted and report.status == "time_limit" and not report.settings.get("gave_up")
                and report.solution):
            return None, report
        # a fitted scale's listing went on past its checkpoint, projected to finish, and the limit
        # came first: no time is left for the tree, and its own bound holds for every scale > 0
    if not report.solution:
        raise SearchLimitError(f"the support search stopped at the time limit ({report.time:.2g} s) before finding "
                               "a risk score; raise `time_limit` or use engine='auto'.")
    return _restated(report, problems, cells)


def _rows_apart(X: np.ndarray, max_size: int) -> bool:
    """Whether a support of ``max_size`` columns of ``X`` (the distinct rows) can have as many cells
    as there are rows: the product of the most distinct values of that many columns (a real-valued
    column: every row its own value) reaches the number of rows."""
    if not bool(np.all(X == np.round(X))):
        return True
    counts = sorted((len(np.unique(X[:, j])) for j in range(X.shape[1])), reverse=True)
    cells = 1.0
    for c in counts[:max(1, int(max_size))]:
        cells *= c
    return cells >= len(X)


def _restated(report, problems: dict, cells: _CellChoice):
    """The support search's report with its objective as the model's own loss states it (the same
    risk scores at the same scale), and the problems with its scale added."""
    problems = dict(problems)
    m = float(report.scale)
    if m not in problems:
        problems[m] = cells.problem_at(m)
    lam = np.asarray(report.solution, dtype=float)
    objective = problems[m].objective(lam)
    lower = min(report.lower_bound, objective)
    gap = 0.0 if lower >= objective else (objective - lower) / max(abs(objective), 1e-12)
    return dataclasses.replace(report, objective=objective, lower_bound=lower, gap=gap), problems


def _search(problems: dict, infeasible: list, control: SearchControl, n_jobs: int, started: float,
            collapse_seconds: float, starts, initial_scale, add_scale, cells: _CellChoice | None = None):
    """The support search when it qualifies and certifies in its share of the time (see
    :mod:`riskformula.solver.support_search`), else the branch-and-cut (one scale) or the search over
    several scales; returns its report and the problems (with any scales the search added)."""
    # the search ends early enough for what follows it (the model on its training rows) to fit in the limit
    search_limit = control.time_limit - after_search_reserve(control.time_limit, collapse_seconds)
    # scale="fit": the search leaves a little time to improve its best score (see refined_scale)
    refine_time = refinement_seconds(control.time_limit) if add_scale is not None else 0.0

    def refined(report, problems: dict, share: float = 1.0):
        # the best score moved to its own scale and improved near it (see refined_scale) in the time
        # kept for it (``share`` of it); the problems with its scale. A listing stopped by the limit
        # gets it too: its bound holds for every score at every scale > 0, the improved one as well
        report, at = refined_scale(report, problems, add_scale,
                                   deadline=min(started + search_limit, time.perf_counter() + share * refine_time))
        return report, {**problems, float(report.scale): at}

    certified, tried = _cell_search(problems, infeasible, cells, control, started, search_limit - refine_time,
                                    n_jobs)
    if certified is not None:
        if add_scale is not None and certified.status != "optimal":
            return refined(certified, tried)
        return certified, tried
    if tried is not None and tried.solution and not starts and cells is not None and (
            not cells.fitted or float(tried.scale) in problems):
        # the support search's best risk score starts the tree when the tree searches its scale.
        # Its own scale is not added to a fitted scale's grid: the tree would then have to
        # certify that scale too, and at a large scale it may not (breastcancer, size 10: the
        # grid alone is certified in 18 s, with the added scale not in 60)
        starts = [np.asarray(tried.solution, dtype=float)]
        if cells.fitted:
            initial_scale = float(tried.scale)
    # scale="fit": the tree leaves a little time to move its best score to its own scale and improve it there
    options = control.options(time_limit=search_limit - refine_time, n_jobs=n_jobs)
    if len(problems) == 1 and not infeasible:
        m, problem = next(iter(problems.items()))
        report = BranchAndCut(problem, options).solve(initial=starts, started=started)
        return dataclasses.replace(report, scale=m), problems
    search = MultiScaleSearch(problems, options, infeasible=infeasible, add_scale=add_scale)
    report = search.solve(initial=starts, started=started, initial_scale=initial_scale)
    if (tried is not None and tried.solution and cells is not None and cells.fitted
            and float(tried.scale) not in problems and report.status != "infeasible"):
        # the support search found its best score at a scale off the tree's grid: when that score is
        # better than the tree's, it is the fit, with the support search's own bound (the only one
        # that holds for every scale > 0; the tree's holds for its grid) and status
        restated, with_scale = _restated(tried, search.problems, cells)
        # its time: the whole search's, the tree's too (the tree's counts from the fit's start)
        restated = dataclasses.replace(restated, time=max(restated.time, report.time))
        if not report.solution or restated.objective < report.objective - 1e-12:
            if add_scale is None:
                return restated, with_scale
            if not report.solution:
                return refined(restated, with_scale)
            # both scores improved by the same moves, each in half of the time kept, and the
            # better kept with its own report: the moves may end lower from the tree's score
            # (spambase at size 10: the listing's 0.266746 ends at 0.266231, the tree's 0.266829
            # at 0.266021, the best known)
            listing = refined(restated, with_scale, 0.5)
            tree = refined(report, search.problems)
            return listing if listing[0].objective <= tree[0].objective else tree
    # scale="fit": the best score's own scale, its points fixed (the tree's scales are a grid)
    return (report, dict(search.problems)) if add_scale is None else refined(report, search.problems)


def _solution(report, problem, control: SearchControl, max_size: int, min_size: int) -> np.ndarray:
    """The search's best points (intercept first); an error when it found none, a warning when it
    is not proven optimal."""
    if report.status == "infeasible":
        raise InfeasibleProblemError(
            "no risk score satisfies the requested bounds and size limits "
            f"(min_size={min_size}, max_size={max_size}, intercept_range={problem.intercept_bounds}).")
    if not report.solution:
        limit, value = (("node_limit", control.node_limit) if report.status == "node_limit"
                        else ("time_limit", f"{control.time_limit:g}"))
        raise SearchLimitError(
            f"stopped at the {limit.replace('_', ' ')} ({report.time:.2g} s, {report.nodes:,d} nodes) before "
            "finding any risk score that meets the size limits and constraints; raise "
            f"`{limit}` (now {value}) or loosen the constraints.")
    if report.status == "numerical_gap":
        warn_caller(f"the search finished, but the LP's numerical tolerances leave a proven gap of "
                    f"{fmt_gap(report.gap, control.gap_tolerance)}; the model is likely optimal but not proven so.",
                    OptimalityGapWarning)
    elif report.status != "optimal":
        limit = "node_limit" if report.status == "node_limit" else "time_limit"
        warn_caller(f"stopped at the {limit.replace('_', ' ')} before proving optimality: gap "
                    f"{fmt_gap(report.gap, control.gap_tolerance)}. Raise `{limit}` for a smaller gap.",
                    OptimalityGapWarning)
    return np.asarray(report.solution, dtype=float)


def _initial_scale(initial):
    """The score scale of a starting model (None for a dict of points)."""
    return float(initial.scale) if isinstance(initial, RiskScore) else None


def _loosest_fairness_hint(conflict, constraints, rebuild) -> str:
    """For a group-rate fairness bound in the conflict: the tightest bound that is feasible with
    the other constraints (by bisection; empty when it cannot be found quickly)."""
    from .solver.feasibility import smallest_feasible
    fair = [c for c in conflict if c.bisect_bound]
    if len(fair) != 1 or (fair[0].max_diff is not None and getattr(fair[0], "min_ratio", None) is not None):
        return ""
    c = fair[0]
    # rates differ by at most 1 and have ratio at least 0: the loosest bounds are always feasible
    # when this constraint is what conflicts; a ratio loosens downwards, so bisect on ratio − x
    if c.max_diff is not None:
        field, value = "max_diff", (lambda x: x)
        found = smallest_feasible(rebuild, lambda x: [dataclasses.replace(k, max_diff=x) if k is c else k
                                                      for k in constraints], c.max_diff, 1.0)
    else:
        field, value = "min_ratio", (lambda x: c.min_ratio - x)
        found = smallest_feasible(rebuild, lambda x: [dataclasses.replace(k, min_ratio=c.min_ratio - x) if k is c
                                                      else k for k in constraints], 0.0, c.min_ratio)
    if found is None:
        return ""
    if abs(found[1] - found[0]) > 0.01:
        # the bisection stopped early (HiGHS undecided): only the bracket is known
        a, b = sorted((value(found[0]), value(found[1])))
        return (f"With the other constraints, `{c.describe()}` is feasible with {field}={value(found[1]):.3g}; the "
                f"tightest feasible {field} lies between {a:.3g} and {b:.3g}.")
    return (f"With the other constraints, `{c.describe()}` needs {field} {'≥' if field == 'max_diff' else '≤'} "
            f"about {value(found[1]):.3g} to be feasible.")


def _usable_starts(starts, problems, columns, max_size, min_size) -> list[np.ndarray]:
    """The starts the search can use; a :class:`UserWarning` for each it cannot (the search
    would drop it without a word, and the user would think the warm start had been used)."""
    usable = []
    for lam in starts:
        if any(not p.can_complete or p.complete(lam) is not None for p in problems.values()):
            usable.append(lam)  # feasible at some scale (or not checkable here): the search decides
            continue
        p = next(iter(problems.values()))
        lower, upper = (b[p.layout.lam_slice] for b in p.column_bounds())
        names = ["intercept"] + columns
        out = [f"{names[k]} = {lam[k]:g} (allowed {lower[k]:g} to {upper[k]:g})"
               for k in np.flatnonzero((lam < lower - 1e-9) | (lam > upper + 1e-9))]
        used = int(np.count_nonzero(lam[1:]))
        if out:
            why = "points outside their bounds: " + ", ".join(out[:5]) + ("..." if len(out) > 5 else "")
        elif used > max_size or used < min_size:
            why = f"it uses {used} terms, outside min_size {min_size} to max_size {max_size}"
        else:
            why = "it breaks the constraints (or the size limits of grouped terms)"
        shown = ", ".join(f"{names[k]}: {lam[k]:g}" for k in np.flatnonzero(lam)[:8])
        warn_caller(f"the starting model ({shown}) given as `initial` is not used: {why}. The search runs "
                    "without it.", UserWarning)
    return usable


register_objective(Objective(
    "logistic", fit_logistic,
    arguments=frozenset(ModelArguments.names()) - set(ModelArguments.SURVIVAL_ONLY),
    search=frozenset({"time_limit", "gap_tolerance", "absolute_gap_tolerance", "node_limit", "n_jobs", "progress",
                      "verbose", "engine", "client"}),
    description="mean logistic loss + c0 · size (Ustun & Rudin, 2019)",
    why_not={**{k: "it is read by a time-to-event fit, whose formula's left side is Surv(time, event)"
                for k in ModelArguments.SURVIVAL_ONLY},
             "solver": "the logistic fit runs its own branch-and-cut (`solver` is the net-benefit fit's exact solver)",
             "solver_options": "the logistic fit runs its own branch-and-cut (`solver_options` are the net-benefit "
                               "fit's exact solver's)"}))
