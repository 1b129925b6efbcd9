"""``risk_score()``: formula and data in, certified integer risk score out.

The pipeline, one stage per package: formula + data → training design
(:mod:`riskformula.design`; threshold cuts pruned by :mod:`riskformula.thresholds`) →
optimization problem (:mod:`riskformula.problem`) → branch-and-cut (:mod:`riskformula.solver`)
→ fitted :class:`~riskformula.model.RiskScore` (reports in :mod:`riskformula.reports`).
"""

from __future__ import annotations

import dataclasses
import time
import warnings

import numpy as np
import pandas as pd

from . import _checks as v
from . import _progress
from ._threads import check_n_jobs, one_blas_thread
from .design import build_design
from .errors import (DataError, InfeasibleProblemError, OptimalityGapWarning, SearchLimitError, SettingsError,
                     warn_caller)
from .model import FitSettings, RiskScore, training_facts
from .fairness import FairnessConstraint
from .problem import LogisticLoss, build_problem
from .problem.constraints import OneVariable, RiskBound, check_constraints
from .problem.training import TrainingRows
from .reports.render import fmt_gap
from .solver import BranchAndCut
from .solver.feasibility import has_feasible_point, open_signs, raise_if_infeasible
from .solver.multiscale import MultiScaleSearch
from .solver.parallel import start_workers
from .solver.heuristics import best_intercept
from .thresholds import drop_dominated_cuts
from .backends import is_dask_frame


@one_blas_thread
def risk_score(formula: str, data: pd.DataFrame, *, max_size: int = 5, min_size: int = 0,
               coef_range=(-5, 5), intercept_range=None, c0: float = 1e-6, weights=None,
               positive_weight: float = 1.0, event=None, na_action: str = "raise",
               time_limit: float = 60.0, gap_tolerance: float = 1e-6, node_limit: int | None = None,
               verbose: bool = False, context: dict | None = None, constraints=None,
               factors_as_one: bool = False, initial=None, progress: bool | None = None,
               absolute_gap_tolerance: float = 1e-8, scale=1, real_intercept: bool | None = None,
               objective: str = "logistic", decision_thresholds=None, decision_weights=None,
               solver: str | None = "appsi_highs", solver_options: dict | None = None,
               n_jobs: int = 1) -> RiskScore:
    """Fit the integer risk score that minimises mean logistic loss + c0 · (number of terms).

    The risk of a row is 1 / (1 + exp(−(intercept + score)/m)), where score is the sum of its
    points and m is the score scale (``scale``): with m = 1 (the default) one point is one logit,
    as in Ustun & Rudin (2019); a larger m lets small integer points express smaller effects, as
    the multiplier of Liu et al. (2022) does.

    With ``objective="net_benefit"`` it fits instead the score that maximises the weighted net
    benefit over decision thresholds − c0 · (number of terms) (Chi & Birbil, 2026), and returns a
    :class:`~riskformula.netbenefit.NetBenefitScore`.

    Parameters
    ----------
    formula : R-style formula, e.g. ``'y ~ age + C(sex)'``, ``'y ~ .'`` or ``'y == "yes" ~ x'``.
        ``threshold(x)`` lets the model choose one cut of ``x`` (points below and above it),
        ``threshold(x, k=m)`` up to m cuts, ``threshold(x, grid=100)`` chooses among about 100
        quantile gaps only, ``threshold(.)`` thresholds every numeric predictor (binary and
        categorical ones stay as they are), and ``cut(x, [40, 60])`` uses fixed cut points (see
        :mod:`riskformula.thresholds`).
    data : the training rows (never modified): a pandas DataFrame, or a dask DataFrame for data
        that do not fit in memory (``dd.read_parquet(...)``; the design is built and collapsed
        to weighted distinct rows partition by partition, see
        :mod:`riskformula.backends.dask_design`; ``weights`` must then name a column).
    max_size, min_size : limits on the number of items on the card (design columns with nonzero
        points: each cut of a ``threshold()``, each level of a factor, each numeric term); bound
        the number of variables the card reads with the constraint ``rf.max_variables(m)``.
    coef_range : integer ``(low, high)`` for every term's points, or a dict keyed by design column,
        label, formula term or variable (``{"default": (-5, 5), "age": (0, 3), "C(sex)": (0, 2)}``;
        the same names as ``initial`` and the constraints, see :mod:`riskformula.design.terms`).
    intercept_range : integer ``(low, high)`` for the intercept; by default derived from the data
        so that it provably contains an optimal intercept.
    c0 : penalty per term used; small values (the default) pick the most accurate model within
        ``max_size`` and break ties towards sparser ones.
    weights : sample weights (a column name or an array), e.g. frequencies.
    positive_weight : weight of events relative to non-events in the loss.
    event : the outcome level that counts as the event, when it is not 1/True.
    na_action : ``"raise"`` (default) or ``"drop"`` rows with missing values in used variables.
    time_limit : seconds for the whole fit, from building the design to evaluating the model on
        its training rows; at the limit the best model is returned with its honest gap.
    gap_tolerance : stop once (objective − lower bound) / objective is at most this; in [0, 1).
    absolute_gap_tolerance : or once objective − lower bound is at most this (as HiGHS'
        ``mip_abs_gap`` and CPLEX's ``EpAGap``); either tolerance makes the run "optimal". The default,
        1e-8, is 1% of the default ``c0``, so a certified model is never worse than the best by more
        than a hundredth of one term's penalty and the default ``c0`` still picks the sparser of two
        equally accurate models; and it is ten times the margin (1e-9 · (1 + |objective|)) by which
        every LP bound is lowered to absorb HiGHS' tolerances, so it certifies the gaps the LP
        cannot resolve on nearly separable data (objective near 0, where any relative gap is a
        ratio of rounding errors). With a much smaller ``c0``, lower it to about ``c0 / 100``;
        0 turns it off.
    node_limit : optional cap on branch-and-bound nodes.
    n_jobs : processes for the tree search (joblib's loky backend, so scripts need no
        ``if __name__ == "__main__"`` guard); 1 (default) searches in this process; negative
        values count back from the number of CPUs as in joblib (-1: all, -2: all but one).  The root runs
        here, then the open nodes are shared out in rounds of a fixed number of nodes per process,
        so a search that ends by its tolerances or ``node_limit`` returns the same model for the same
        call every time (a ``time_limit`` stops it wherever it is, on one process or several).
        With several score scales the roots run here and the open nodes of every scale are shared
        out.
    verbose : print the solver log (stdout) every 2 s: time, nodes, open nodes, best objective,
        lower bound, gap and cuts.
    context : extra names (functions, constants) the formula may use.
    constraints : operational constraints from :mod:`riskformula.constraints`, e.g.
        ``[rf.sign("prior_seizures", "+"), rf.at_most(1, "male", "female")]``.
    factors_as_one : count all levels of a factor as one unit toward ``max_size`` (a
        threshold's cuts still count one each).
    initial : a starting model for the search (a warm start): a fitted :class:`RiskScore`, or a
        dict of points keyed by the names ``coef_range`` takes, each naming one design column
        (``"intercept"`` optional). Its intercept is re-optimised for these data. It gives the
        search a first incumbent, which changes which nodes are pruned and in what order the tree
        is explored, so the search may take more or less time (even the optimal model as a start
        can lead to more nodes); it never changes what "optimal" means. A start that breaks the
        bounds, size limits or constraints is not used, with a ``UserWarning`` saying why.
    progress : while the search runs, print one status line (elapsed time, nodes, objective, lower
        bound, gap) to stderr every 10 s
        (:data:`riskformula.solver.branch_and_cut.STATUS_INTERVAL`), and how it ended if any was
        printed. ``None`` (default): only in interactive sessions (a terminal, IPython or Jupyter);
        ``True``: always; ``False``: never. Not needed with ``verbose=True``.
    scale : the score scale m: a positive number (``1``, the default, is one point per logit),
        ``"fit"`` to choose m jointly with the points among 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4, 5,
        6 and 8 (below 1 a point is more than one logit, for nearly separable data), plus up to
        three scales added during the search where the best score's points fit best (rounded to
        three digits, e.g. 1.61), or a list of scales to choose from (e.g. ``[1, 2, 4]``, never
        extended).  With several scales the intercept is a real number unless ``real_intercept``
        says otherwise (the points stay whole, so the card is read as before), and the
        certificate covers exactly the scales searched, which the summary lists with each one's
        bound: the model is optimal over every risk score at any of them (not at scales in
        between).
    real_intercept : whether the intercept is a real number instead of whole points. ``None``
        (default): real when the score scale is fitted (``"fit"`` or a list) and no constraint
        bounds a risk, an integer otherwise.  Nobody adds the intercept by hand — the card is read
        through its score-to-risk table — so a real intercept costs no readability, and with a
        fitted scale an integer one is coarse: at m = 0.5 its steps are 2 logits, so the risk of
        a total score of 0 can only be 27 %, 50 % or 73 %.  ``False`` keeps the integer intercept
        (the model of Ustun & Rudin, 2019, and the default with a fixed scale); ``True`` with
        ``risk_at_least``/``risk_at_most`` or fairness constraints is an error (their rows need
        whole scores).
    objective : ``"logistic"`` (default: mean logistic loss, Ustun & Rudin, 2019) or
        ``"net_benefit"`` (weighted net benefit over ``decision_thresholds``; no intercept, one score
        cut-off per threshold, band risks = observed event rates; ``intercept_range``,
        ``positive_weight``, ``node_limit``, ``scale``, ``real_intercept``, ``absolute_gap_tolerance`` and
        ``risk_at_least``/``risk_at_most`` do not apply).
    decision_thresholds : net benefit only: the risks at which a decision is taken; default 0.1, 0.2,
        ..., 0.9. Not to be confused with ``threshold()`` terms, which cut predictors.
    decision_weights : net benefit only: one weight per decision threshold (objective
        Σ w_i NB(p_i)); default the AUNBC weights p_(i+1) − p_i with p_0 = 0, so that the objective
        is the area under the net-benefit curve.
    solver : net benefit only: the pyomo solver of the exact MILP, warm-started by a local search
        (default ``"appsi_highs"``, HiGHS; e.g. ``"gurobi"``, ``"cbc"`` if installed), or None for
        the local search alone.
    solver_options : net benefit only: options passed to that solver.

    Returns
    -------
    RiskScore

    Raises
    ------
    InfeasibleProblemError
        No model satisfies the constraints; the message names a conflicting subset.

    Examples
    --------
    >>> import riskformula as rf
    >>> df = rf.load_dataset("wdbc")
    >>> m = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst', df,
    ...                   max_size=2, time_limit=10)
    >>> m.status
    'optimal'
    >>> rf.risk_score('diagnosis == "M" ~ threshold(radius_worst, k=1) + threshold(concave_points_worst, k=1)',
    ...               df, max_size=2, scale=[1, 2, 4], time_limit=30).scale  # doctest: +SKIP
    1.0
    """
    started = time.perf_counter()  # the time limit covers the setup too, not only the search
    n_jobs = check_n_jobs(n_jobs)
    if objective == "net_benefit":
        if n_jobs != 1:
            raise SettingsError("`n_jobs` applies to the logistic fit's tree search; the net-benefit fit's "
                                "exact model is solved by the pyomo solver: set its threads through "
                                "`solver_options` instead and leave `n_jobs` at 1.")
        if not (isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale == 1):
            raise SettingsError(f"`scale={scale!r}` does not apply with objective='net_benefit': a net-benefit "
                                "score's risks are the observed event rates of its score bands, not a logistic "
                                "curve of the score, so leave `scale` at 1.")
        if real_intercept:
            raise SettingsError("`real_intercept` does not apply with objective='net_benefit': a net-benefit "
                                "score has no intercept (its risks are the event rates of its score bands).")
        from .netbenefit.fit import fit_net_benefit
        return fit_net_benefit(
            formula, data, max_size=max_size, min_size=min_size, coef_range=coef_range,
            intercept_range=intercept_range, c0=c0, weights=weights, positive_weight=positive_weight,
            event=event, na_action=na_action, time_limit=time_limit, gap_tolerance=gap_tolerance,
            node_limit=node_limit, verbose=verbose, context=context, constraints=constraints,
            factors_as_one=factors_as_one, initial=initial, progress=progress,
            decision_thresholds=decision_thresholds, decision_weights=decision_weights, solver=solver,
            solver_options=solver_options)
    if objective != "logistic":
        raise SettingsError(f"`objective` must be 'logistic' or 'net_benefit'; got {objective!r}.")
    given = [k for k, val in (("decision_thresholds", decision_thresholds), ("decision_weights", decision_weights),
                              ("solver_options", solver_options)) if val is not None]
    if solver != "appsi_highs":
        given.append("solver")
    if given:
        raise SettingsError(f"`{given[0]}` applies only with objective='net_benefit'; the logistic fit runs its "
                            "own branch-and-cut.")
    max_size = v.check_int("max_size", max_size, minimum=0)
    min_size = v.check_int("min_size", min_size, minimum=0)
    if min_size > max_size:
        raise SettingsError(f"`min_size` ({min_size}) is larger than `max_size` ({max_size}).")
    c0 = v.check_positive("c0", c0, allow_zero=True)
    positive_weight = v.check_positive("positive_weight", positive_weight)
    time_limit = v.check_positive("time_limit", time_limit)
    gap_tolerance = v.check_gap_tolerance(gap_tolerance)
    absolute_gap_tolerance = v.check_positive("absolute_gap_tolerance", absolute_gap_tolerance, allow_zero=True)
    node_limit = v.check_int("node_limit", node_limit, minimum=1, allow_none=True)
    progress = _progress.resolve(progress)
    scales = v.check_scale(scale)
    if intercept_range is not None:
        intercept_range = v.check_range("intercept_range", intercept_range)
    constraints = check_constraints(constraints)
    real_intercept = _real_intercept(real_intercept, scales, constraints)
    # the settings are valid: the tree search's worker processes start while the design is built
    # (see start_workers)
    start_workers(n_jobs)

    # pruning threshold cuts assumes only the loss judges a cut's position: side information and
    # fairness bounds (which see the predictions of every row) also do
    exact_cuts = any(isinstance(c, (RiskBound, FairnessConstraint)) for c in constraints)
    # a cut that can move inside a run of one outcome is packed against its end or against
    # another cut of the variable: at most max_size of them (any number when a threshold term
    # counts once toward the size)
    cut_depth = None if any(isinstance(c, OneVariable) for c in constraints) else max_size
    patterns = None
    if is_dask_frame(data):
        if any(isinstance(c, FairnessConstraint) for c in constraints):
            raise SettingsError("fairness constraints need the rows' groups, which a dask frame's collapsed "
                                "patterns do not keep; fit them on a pandas DataFrame (data.compute()).")
        from .backends.dask_design import training_patterns
        patterns = training_patterns(formula, data, weights=weights, na_action=na_action, event=event,
                                     context=context, prune_cuts=not exact_cuts, cut_depth=cut_depth)
        design = patterns.design
    else:
        design = build_design(formula, data, na_action=na_action, event=event, context=context,
                              prune_cuts=not exact_cuts, cut_depth=cut_depth, weights=weights)
    design, candidates, lower, upper = design_bounds(design, coef_range, min_size, drop_dominated=not exact_cuts,
                                                     depth=cut_depth)
    spec = design.spec
    collapsing = time.perf_counter()
    loss = two_class_loss(design, positive_weight).with_real_intercept(real_intercept)
    collapsing = time.perf_counter() - collapsing  # one pass over the training rows, measured
    # the training rows with the caller's columns, for constraints about data (fairness by a column
    # that need not be in the formula)
    training = None if patterns is not None else TrainingRows.of_design(design, data)
    opts = dict(factors_as_one=bool(factors_as_one), c0=c0, intercept_range=intercept_range, training=training)

    def problem_at(m, quiet=True):
        """The problem on score scale m: the same rows, the loss (and rows on the risk) on that
        scale; constraints warn about the data (small groups) once, not once per scale."""
        with warnings.catch_warnings():
            if quiet:
                warnings.simplefilter("ignore")
            return build_problem(spec, loss if m == 1.0 else loss.with_scale(m), lower, upper,
                                 constraints=constraints, max_size=max_size, min_size=min_size, **opts)
    problems = {m: problem_at(m, quiet=k > 0) for k, m in enumerate(scales)}
    infeasible = []
    if constraints:
        first = problems[scales[0]]
        if len(scales) > 1 and any(_on_the_risk(c) for c in constraints):
            # rows on the risk move with the scale: some scales may admit no risk score
            infeasible = [m for m in scales if has_feasible_point(problems[m]) is False]
            first = problems[infeasible[0]] if len(infeasible) == len(scales) else None
        if first is not None:
            def rebuild(cons, max_size, min_size, opened=()):
                # the same problem with fewer constraints, and with the columns `opened` freed of a
                # sign-closing coef_range entry: how the deletion filter tests whether that entry conflicts
                lo, hi = open_signs(lower, upper, opened)
                return build_problem(spec, first.loss, lo, hi, constraints=cons, max_size=max_size,
                                     min_size=min_size, **{**opts, "intercept_range": first.intercept_bounds})
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
    problem = next(iter(problems.values()))
    starts = None if initial is None else _usable_starts(initial_points(initial, spec.terms, problem),
                                                         problems, list(spec.columns), max_size, min_size)
    # what the training rows' profile (for counterfactuals) needs of the data alone is taken before the
    # search, so that the search's clock counts it (0.4–0.9 s on 10⁶ rows) and only the model's part is
    # left for after it
    facts = training_facts(design, data) if patterns is None else None
    # the search ends early enough for what follows it (the model on its training rows) to fit in the limit
    search_limit = time_limit - after_search_reserve(time_limit, collapsing)
    if len(problems) == 1 and not infeasible:
        m = next(iter(problems))
        report = BranchAndCut(problem, time_limit=search_limit, gap_tolerance=gap_tolerance,
                              absolute_gap_tolerance=absolute_gap_tolerance, node_limit=node_limit,
                              verbose=verbose, progress=progress, n_jobs=n_jobs).solve(initial=starts, started=started)
        report = dataclasses.replace(report, scale=m)
    else:
        # scale="fit" refines its grid around the best risk score (rows on the risk would need a
        # feasibility check per new scale: those fits keep the grid)
        refine = isinstance(scale, str) and not any(_on_the_risk(c) for c in constraints)
        search = MultiScaleSearch(problems, time_limit=search_limit, gap_tolerance=gap_tolerance,
                                  absolute_gap_tolerance=absolute_gap_tolerance,
                                  node_limit=node_limit, verbose=verbose, progress=progress,
                                  infeasible=infeasible, add_scale=problem_at if refine else None,
                                  n_jobs=n_jobs)
        report = search.solve(initial=starts, started=started, initial_scale=_initial_scale(initial))
        problems = search.problems  # with the scales the search added
    problem = problems.get(report.scale, problem)
    if report.status == "infeasible":
        raise InfeasibleProblemError(
            "no risk score satisfies the requested bounds and size limits "
            f"(min_size={min_size}, max_size={max_size}, intercept_range={problem.intercept_bounds}).")
    if not report.solution:
        limit, value = (("node_limit", node_limit) if report.status == "node_limit"
                        else ("time_limit", f"{time_limit:g}"))
        raise SearchLimitError(
            f"stopped at the {limit.replace('_', ' ')} ({report.time:.2g} s, {report.nodes:,d} nodes) before "
            "finding any risk score that meets the size limits and constraints; raise "
            f"`{limit}` (now {value}) or loosen the constraints.")
    bc_lam = np.asarray(report.solution, dtype=float)
    if report.status == "numerical_gap":
        warn_caller(f"the search finished, but the LP's numerical tolerances leave a proven gap of "
                    f"{fmt_gap(report.gap, gap_tolerance)}; the model is likely optimal but not proven so.",
                    OptimalityGapWarning)
    elif report.status != "optimal":
        limit = "node_limit" if report.status == "node_limit" else "time_limit"
        warn_caller(f"stopped at the {limit.replace('_', ' ')} before proving optimality: gap "
                    f"{fmt_gap(report.gap, gap_tolerance)}. Raise `{limit}` for a smaller gap.",
                    OptimalityGapWarning)
    settings = FitSettings(max_size=max_size, min_size=min_size, coef_lower=tuple(lower.astype(int)),
                           coef_upper=tuple(upper.astype(int)), intercept_range=tuple(problem.intercept_bounds),
                           c0=c0, positive_weight=positive_weight, weighted=weights is not None,
                           time_limit=time_limit, gap_tolerance=gap_tolerance,
                           absolute_gap_tolerance=absolute_gap_tolerance, na_action=na_action,
                           constraints=constraints, factors_as_one=bool(factors_as_one),
                           size_groups=tuple(tuple(g.cols) for g in problem.groups),
                           threshold_candidates=candidates,
                           scales=tuple(sorted(scales + tuple(r["scale"] for r in report.scales if r.get("added")))),
                           real_intercept=real_intercept)
    if patterns is not None:
        return patterns.model(design, bc_lam, report, settings, loss=problem.loss.value(bc_lam))
    # the training design is dropped here: the model keeps the design spec and no training data
    model = RiskScore.from_fit(design, bc_lam, report, settings, loss=problem.loss.value(bc_lam), data=data,
                               facts=facts)
    fair = [c for c in constraints if isinstance(c, FairnessConstraint)]
    if fair:
        weights_used = None if design.weights is None else training.weights
        values = tuple(row for c in fair for row in c.assess(model, training.frame, weights_used))
        model.training = dataclasses.replace(model.training, constraint_values=values)
    return model


#: what follows the search — scoring the training rows, their evaluation on the distinct (outcome,
#: score) pairs, the value terms' supports, the profile's model part, fairness values — reads the
#: training rows a few times, about as long as collapsing them to distinct rows took this many times
#: (measured at 10⁶ rows × 20 columns: 0.3–0.4 s after the search, 0.13–0.2 s to collapse)
AFTER_SEARCH_PASSES = 2.0
#: ... but the search keeps at least this share of the time limit
AFTER_SEARCH_CAP = 0.1


def after_search_reserve(time_limit: float, collapse_seconds: float) -> float:
    """Seconds the search leaves, of ``time_limit``, for what follows it: ``AFTER_SEARCH_PASSES`` times
    the measured time of collapsing the training rows (``collapse_seconds``), and at least 1 % of the
    limit (at most 1 s; 0.2 s of evaluation on 32 000 rows), at most ``AFTER_SEARCH_CAP`` of it."""
    least = min(1.0, 0.01 * time_limit)
    return min(max(least, AFTER_SEARCH_PASSES * collapse_seconds), max(least, AFTER_SEARCH_CAP * time_limit))


def _real_intercept(choice, scales: tuple, constraints) -> bool:
    """Whether the intercept is real: ``choice``, or by default with a fitted scale (several
    scales) unless a risk bound or fairness constraint is given (their rows are written for
    whole scores)."""
    # not the scale-dependent _on_the_risk: every fairness row (at_score too) needs whole scores
    whole_scores = [c for c in constraints if isinstance(c, (RiskBound, FairnessConstraint))]
    if choice is None:
        return len(scales) > 1 and not whole_scores
    if not isinstance(choice, (bool, np.bool_)):
        raise SettingsError(f"`real_intercept` must be True, False or None (real with a fitted scale); "
                            f"got {choice!r}.")
    if choice and whole_scores:
        raise SettingsError(f"`real_intercept=True` does not combine with {type(whole_scores[0]).__name__} "
                            "constraints: their rows on the risk are written for whole scores. Leave "
                            "`real_intercept` at None (or False) to fit them with an integer intercept.")
    return bool(choice)


def design_bounds(design, coef_range, min_size: int, drop_dominated: bool = True, depth: int | None = None):
    """(design, candidate cuts per threshold term, lower, upper): the design without the cuts no
    optimum with at most ``depth`` cuts per variable can use (when ``drop_dominated``), and the
    checked point bounds of its columns."""
    candidates = {t.term: (len(t.cuts), len(t.cuts)) for t in design.spec.thresholds}
    if drop_dominated:
        design, kept = drop_dominated_cuts(design, depth)
        candidates.update(kept)
    lower, upper = v.check_coef_bounds(coef_range, design.spec.terms)
    usable = int(np.sum((lower != 0) | (upper != 0)))
    if min_size > usable:
        raise InfeasibleProblemError(
            f"`min_size={min_size}` asks for more terms than can be nonzero: the design has {usable} "
            f"column(s) whose `coef_range` allows nonzero points.")
    return design, candidates, lower, upper


def two_class_loss(design, positive_weight: float = 1.0) -> LogisticLoss:
    """The loss on the design's weighted distinct rows; both classes must keep positive weight."""
    loss = LogisticLoss(design.X, design.y, design.weights, positive_weight)
    if loss.w_pos.sum() == 0 or loss.w_neg.sum() == 0:
        raise DataError("the weights leave only one class with positive weight; a risk score needs both.")
    return loss


def _initial_scale(initial):
    """The score scale of a starting model (None for a dict of points)."""
    return float(initial.scale) if isinstance(initial, RiskScore) else None


def _on_the_risk(c) -> bool:
    """Whether a constraint bounds the risk (so its rows move with the score scale): side
    information and fairness cut-offs given as a risk (``at_risk``)."""
    from .fairness import GroupParity
    return isinstance(c, RiskBound) or (isinstance(c, GroupParity) and c.at_score is None)


def _loosest_fairness_hint(conflict, constraints, rebuild) -> str:
    """For a group-rate fairness bound in the conflict: the tightest bound that is feasible with
    the other constraints (by bisection; empty when it cannot be found quickly)."""
    from .fairness import CalibrationWithinGroups, GroupParity, RiskParity
    from .solver.feasibility import smallest_feasible
    fair = [c for c in conflict if isinstance(c, (GroupParity, RiskParity, CalibrationWithinGroups))]
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


def initial_points(initial, terms, problem) -> list[np.ndarray]:
    """λ vectors (intercept first) for ``BranchAndCut.solve(initial=...)`` from a RiskScore or a
    dict of points keyed by the names ``coef_range`` takes (resolved by ``terms``, the design's
    :class:`~riskformula.design.terms.TermResolver`): the given intercept if any, and the best
    intercept for these data."""
    if isinstance(initial, RiskScore):
        # the fit's points per design column (a threshold term's top interval in the intercept)
        points = {c: int(p) for c, p in zip(initial.design.columns, initial._points) if p != 0}
        given = initial._base
    elif isinstance(initial, dict):
        points = {k: v for k, v in initial.items() if k != "intercept"}
        given = initial.get("intercept")
    else:
        raise SettingsError(f"`initial` must be a fitted RiskScore or a dict of points such as "
                            f"{{'age': 2, 'intercept': -3}}; got {type(initial).__name__}.")
    lam = np.zeros(terms.n_columns + 1)
    for key, value in points.items():
        j = terms.column(key, where="`initial`")
        if not float(value).is_integer():
            raise SettingsError(f"`initial` points must be whole numbers; got {key!r}: {value!r}.")
        lam[problem.layout.lam(j)] = value
    lam[0] = best_intercept(problem, problem.loss.Z[:, 1:] @ lam[1:])
    starts = [lam]
    # a real intercept is re-chosen for every candidate's points, and a real one given for an
    # integer intercept (a model fitted with one) has its best integer start above already
    from_real = isinstance(initial, RiskScore) and initial.settings.real_intercept
    if given is not None and given != lam[0] and not problem.real_intercept and not from_real:
        other = lam.copy()
        other[0] = v.check_int("initial['intercept']", given)
        starts.append(other)
    return starts
