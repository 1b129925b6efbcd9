"""``rashomon_set()``: every risk score whose objective is within (1 + ε) of the best, proven complete."""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import _checks as v
from .._heap import kept_heap
from .._threads import one_blas_thread
from ..backends import is_dask_frame
from ..design import build_design
from ..design.rules import Deadline
from ..errors import InfeasibleProblemError, SearchLimitError, SettingsError
from ..control import SearchControl, make_control
from ..fitinfo import FitSettings
from ..arguments import ModelArguments
from ..pipeline import design_bounds, two_class_loss
from ..problem import RiskProblem, build_problem
from ..problem.training import TrainingRows
from ..solver import BranchAndCut, SolverReport, kernels
from .result import RashomonSet
from .search import RashomonSearch

__all__ = ["rashomon_set"]

#: the share of ``time_limit`` the first phase (the certified optimum) may take at most
OPTIMUM_SHARE = 0.5
#: ... and stops once its gap is this fraction of ε
FIRST_GAP = 0.1


@one_blas_thread
@kept_heap
def rashomon_set(formula: str, data: pd.DataFrame, epsilon: float = 0.01, *, max_members: int | None = 100_000,
                 control: SearchControl | None = None, **arguments) -> RashomonSet:
    """Every integer risk score whose objective is at most (1 + ε) × the best one — the Rashomon set
    (Semenova, Rudin & Parr, 2022) of the risk scores :func:`riskformula.risk_score` chooses from —
    with a proof that none is missing.

    The class is the one :func:`~riskformula.risk_score` searches with the same arguments: at most
    ``max_size`` items, points within ``coef_range``, the ``constraints`` (operational, side
    information, fairness), ``weights``, ``positive_weight`` and a fixed score ``scale``.  The
    objective is the fit's: mean logistic loss (normalised by the sum of the weights) + ``c0`` × the
    number of items (+ the penalties of fairness constraints given with ``weight=``); it is never
    negative.  ε is relative to the best objective V*: the set holds every score whose objective is
    at most (1 + ε) · V*, and only those.

    A score is its points: each member's intercept is the best one for its points (an integer in
    the fit's intercept range, or a real number with ``real_intercept``; with rows on the risk, the
    best that meets them), so two members differ in some item's points.  Members whose points
    differ can still predict alike, when design columns are linear combinations of each other
    (complementary indicators, a factor's full set of levels).  ``threshold()`` terms keep every
    candidate cut, one per gap between consecutive distinct training values (written as the
    roundest number in the gap, as in a fit): cuts that split the training rows identically are one
    candidate, so members differ in how they split the rows.  Unlike a fit, cuts that cannot be
    optimal are *not* dropped: they can be near-optimal.

    **How completeness is proven.**  First the best score is found by the package's branch-and-cut,
    within a gap of ε/10 (or ``gap_tolerance`` if larger; at most half of ``time_limit``).  Then a
    branch-and-bound over the same LP relaxation lists every score under the level (1 + ε) × the
    best objective known: a node is discarded only when its LP bound — a lower bound on the
    objective of every score in it (loss cuts of a convex loss, lowered by a margin for the LP's
    tolerances) — is above the level, and small nodes are settled by scoring every score in them
    that could be under the level.  When the search finishes, the set is exactly the scores under
    the level, and its best member is the certified optimum (if a better score than the first phase's
    turns up, the level is lowered to (1 + ε) times its objective).  At a limit (``time_limit``,
    ``node_limit``, ``max_members``) the result says what is proven: every score whose objective is
    below its ``bound`` is listed.

    Parameters
    ----------
    formula : str
        R-style formula, as in :func:`~riskformula.risk_score`.
    data : pandas.DataFrame
        The training rows (never modified); dask frames are not supported here (every member is
        scored on the training rows).
    epsilon : float, default 0.01
        ε ≥ 0, relative to the best objective (0.01: within 1 %); 0 lists every optimal score.
    max_members : int or None, default 100000
        Stop once this many scores are listed (None: no cap); the result then says below which
        objective the list is complete.
    control : SearchControl, optional
        The search settings, as in :func:`~riskformula.risk_score`: ``time_limit`` (seconds for
        the whole call, default 120 here; the best score's fit takes at most half of them),
        ``node_limit`` (a cap on the nodes of the listing search), ``gap_tolerance`` and
        ``absolute_gap_tolerance``; the others do not apply (the search runs in this process).
    **arguments : dict
        The model's arguments, as :func:`~riskformula.risk_score` takes them (one
        :class:`~riskformula.arguments.ModelArguments`, checked the same way), and search settings as
        keywords (``time_limit=30``), overriding the fields of ``control``: see Other Parameters.

    Other Parameters
    ----------------
    max_size : int, default 5
        Most items on the card, as in :func:`~riskformula.risk_score`.
    min_size : int, default 0
        Fewest items on the card.
    coef_range : tuple of int or dict, default (-5, 5)
        Integer ``(low, high)`` for every term's points, or a dict by name, as in
        :func:`~riskformula.risk_score`.
    intercept_range : tuple of int, optional
        Integer ``(low, high)`` for the intercept; None (default): derived from the data.
    c0 : float, default 1e-6
        Penalty per item used.
    weights : str or array-like, optional
        Sample weights: a column name of ``data``, a pandas Series or one value per row.
    positive_weight : float, default 1.0
        Weight of events relative to non-events in the loss.
    event : object, optional
        The outcome level that counts as the event, when it is not 1/True.
    missing : str or dict, default "raise"
        How missing values enter (``"raise"``, ``"drop"``, ``"item"``, ``"as <value>"``, or a dict
        by variable), as in :func:`~riskformula.risk_score`.
    context : dict, optional
        Extra names (functions, constants) the formula may use.
    constraints : Constraint or list of Constraint, optional
        Operational, side-information and fairness constraints, as in
        :func:`~riskformula.risk_score`.
    factors_as_one : bool, default False
        Count all levels of a factor as one unit toward ``max_size``.
    scale : float, default 1
        One score scale m (a positive number; ``"fit"`` and lists are not supported: the set is
        defined at one scale).
    real_intercept : bool, optional
        Whether each member's intercept is a real number; None (default): an integer.

    Returns
    -------
    RashomonSet
        Prints as a report; ``to_frame()`` lists the members, ``importance()`` the variables' use
        across the set, ``filter()``/``best(prefer=...)`` pick members (``best`` returns an ordinary
        fitted :class:`~riskformula.RiskScore`).

    Raises
    ------
    InfeasibleProblemError
        No risk score satisfies the constraints.
    SearchLimitError
        The time limit passed before any risk score was found.

    Examples
    --------
    >>> import riskformula as rf
    >>> df = rf.load_dataset("breastcancer")
    >>> rs = rf.rashomon_set("Benign ~ .", df, epsilon=0.01, max_size=5, time_limit=60)  # doctest: +SKIP
    >>> len(rs), rs.complete  # doctest: +SKIP
    (2, True)
    """
    started = kernels.start_clock()  # compiling the loops in a new environment is not the search's time
    if is_dask_frame(data):
        raise SettingsError("rashomon_set needs a pandas DataFrame (every member is scored on the training rows); "
                            "collect the rows with data.compute().")
    a = _checked_arguments(epsilon=epsilon, control=control, keywords=arguments, max_members=max_members)
    m = a.model

    # every candidate cut stays: a cut that cannot be optimal can still be near-optimal
    design = build_design(formula, data, missing=m.missing, event=m.event, context=m.context, prune_cuts=False,
                          weights=m.weights, deadline=Deadline.after(a.control.time_limit, started))
    design, candidates, lower, upper = design_bounds(design, m.coef_range, m.min_size, drop_dominated=False)
    spec = design.spec
    loss = two_class_loss(design, m.positive_weight).with_real_intercept(m.intercept_is_real)
    if a.scale != 1.0:
        loss = loss.with_scale(a.scale)
    training = TrainingRows.of_design(design, data)
    opts = dict(constraints=m.constraints, factors_as_one=bool(m.factors_as_one), c0=m.c0, training=training)
    problem = build_problem(spec, loss, lower, upper, max_size=m.max_size, min_size=m.min_size,
                            intercept_range=m.intercept_range, **opts)

    # 1. the best score, within a tenth of ε; 2. every score under (1 + ε) × the best objective
    first, report, best = _best_score(problem, a, started)
    listing = RashomonSearch(problem, a.epsilon, best, a.control.options(), max_members=a.max_members,
                             cuts=first.lp.cuts(),
                             started=started,
                             lower_bound=min(float(report.lower_bound), best[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        stopped = listing.run()
    settings = _fit_settings(a, problem, lower, upper, candidates)
    rebuild = dict(spec=spec, loss=loss, lower=lower, upper=upper, max_size=m.max_size, min_size=m.min_size,
                   intercept_range=m.intercept_range, **opts)
    return RashomonSet.from_search(listing, stopped, report, problem=problem, design=design, data=data,
                                   settings=settings, epsilon=a.epsilon, elapsed=time.perf_counter() - started,
                                   rebuild=rebuild)


@dataclass(frozen=True)
class _Arguments:
    """:func:`rashomon_set`'s checked arguments: the model's (the class of scores, beside the
    formula's), ε and the search's limits."""

    epsilon: float
    model: ModelArguments
    control: SearchControl
    max_members: int | None

    @property
    def scale(self) -> float:
        """The one score scale."""
        return float(self.model.scales[0])


#: the search settings that apply to rashomon_set (its search runs in this process)
_SEARCH = ("time_limit", "node_limit", "gap_tolerance", "absolute_gap_tolerance", "progress")


def _checked_arguments(*, epsilon, control: SearchControl | None, keywords: dict, max_members) -> _Arguments:
    """The arguments of :func:`rashomon_set` checked (in this order) and normalised: ε, the model's
    arguments (as :func:`riskformula.risk_score` checks them), the search settings, ``max_members``
    and the one score scale."""
    epsilon = v.check_positive("epsilon", epsilon, allow_zero=True, maximum=v.MAX_C0)
    if not math.isfinite(epsilon):
        raise SettingsError(f"`epsilon` must be a finite number ≥ 0; got {epsilon!r}.")
    given, search = ModelArguments.split(keywords)
    for name in ("initial", "objective"):
        if name in given or name in search:
            raise SettingsError(f"`{name}` does not apply to rashomon_set: it lists every logistic risk score near "
                                "the best one, whatever the start. Leave it out.")
    model = ModelArguments(**given)
    control = make_control(control if control is not None else SearchControl(time_limit=120.0), search,
                           "rashomon_set", others=ModelArguments.names() + ("epsilon", "max_members", "control"))
    unused = [k for k in control.changed() if k not in _SEARCH]
    if unused:
        raise SettingsError(f"`{unused[0]}` does not apply to rashomon_set: its search runs in this process "
                            "(time_limit, node_limit, gap_tolerance and absolute_gap_tolerance apply).")
    max_members = v.check_int("max_members", max_members, minimum=1, allow_none=True, maximum=v.MAX_COUNT)
    if isinstance(model.scale, str) or isinstance(model.scale, (list, tuple)):
        raise SettingsError(f"`scale` must be one positive number for a Rashomon set (the set is defined at one "
                            f"score scale); got {model.scale!r}. Fit the scale with rf.risk_score(..., scale='fit') "
                            "and pass the scale it chose.")
    return _Arguments(epsilon=epsilon, model=model, control=control, max_members=max_members)


def _fit_settings(a: _Arguments, problem: RiskProblem, lower: np.ndarray, upper: np.ndarray,
                  candidates: dict) -> FitSettings:
    """The settings every member is fitted with, as :func:`riskformula.risk_score` records them."""
    control, m = a.control, a.model
    return FitSettings(max_size=m.max_size, min_size=m.min_size, coef_lower=tuple(lower.astype(int)),
                       coef_upper=tuple(upper.astype(int)), intercept_range=tuple(problem.intercept_bounds),
                       c0=m.c0, positive_weight=m.positive_weight, weighted=m.weights is not None,
                       time_limit=control.time_limit, gap_tolerance=control.gap_tolerance,
                       absolute_gap_tolerance=control.absolute_gap_tolerance, missing=m.missing,
                       constraints=m.constraints, factors_as_one=bool(m.factors_as_one),
                       size_groups=tuple(tuple(g.cols) for g in problem.groups),
                       threshold_candidates=candidates, scales=(a.scale,), real_intercept=m.intercept_is_real)


def _best_score(problem: RiskProblem, a: _Arguments,
                started: float) -> tuple[BranchAndCut, SolverReport, tuple[np.ndarray, float]]:
    """1. The best score by the branch-and-cut, within a tenth of ε (the listing search explores every
    node under the level anyway, so it finishes the proof; a tighter first phase repeats its work):
    the search, its report and the best score's ``(λ, objective)``."""
    control = a.control
    options = control.options(time_limit=OPTIMUM_SHARE * control.time_limit).quiet()
    first = BranchAndCut(problem, options.replace(gap_tolerance=max(control.gap_tolerance,
                                                                    min(FIRST_GAP * a.epsilon, 0.5))))
    report = first.solve(started=started)
    if report.status == "infeasible":
        raise InfeasibleProblemError(
            "no risk score satisfies the requested bounds, size limits and constraints "
            f"(min_size={a.model.min_size}, max_size={a.model.max_size}); rf.risk_score with the same arguments "
            "names a conflicting subset.")
    if not report.solution:
        raise SearchLimitError(f"stopped at the time limit ({time.perf_counter() - started:.2g} s) before finding "
                               "any risk score that meets the size limits and constraints; raise `time_limit`.")
    best = (np.asarray(report.solution, float), float(report.objective))
    if best[1] < 0:  # pragma: no cover - losses, c0 and penalties are never negative
        raise SettingsError("the objective is negative, so a relative ε has no meaning here.")
    return first, report, best
