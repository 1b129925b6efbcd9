"""The steps every objective's fit shares: the time left for what follows the search, the design's
point bounds and pruned cuts, the two-class loss, and a warm start's points.

Above the fitted model (:mod:`riskformula.model`), below the objectives' fits
(:mod:`riskformula.logistic`, :mod:`riskformula.netbenefit.fit`) and the front door
(:func:`riskformula.risk_score`).
"""

from __future__ import annotations

import numpy as np

from . import _checks as v
from .errors import DataError, InfeasibleProblemError, SettingsError
from .model import RiskScore
from .problem import LogisticLoss
from .solver.heuristics import best_intercept
from .thresholds import drop_dominated_cuts


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


def two_class_loss(design, positive_weight: float = 1.0, check=None) -> LogisticLoss:
    """The loss on the design's weighted distinct rows; both classes must keep positive weight.
    ``check`` (a function of no arguments, or None) is called between passes over a wide design."""
    loss = LogisticLoss(design.X, design.y, design.weights, positive_weight, check=check)
    if loss.w_pos.sum() == 0 or loss.w_neg.sum() == 0:
        raise DataError("the weights leave only one class with positive weight; a risk score needs both.")
    return loss


def initial_points(initial, terms, problem) -> list[np.ndarray]:
    """λ vectors (intercept first) for ``BranchAndCut.solve(initial=...)`` from a RiskScore or a
    dict of points keyed by the names ``coef_range`` takes (resolved by ``terms``, the design's
    :class:`~riskformula.design.terms.TermResolver`): the given intercept if any, and the best
    intercept for these data."""
    if isinstance(initial, RiskScore):
        # the fit's points per design column (a threshold term's top interval in the intercept)
        fitted = initial.design_points
        points = {c: int(p) for c, p in fitted.iloc[1:].items() if p != 0}
        given: float | None = fitted.iloc[0].item()
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
