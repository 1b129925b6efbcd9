"""Every integer point of a small box under an objective level, scored exactly.

The Rashomon search (:mod:`.search`) closes a node of its tree by listing the integer points
of the node's box whose objective is at most the set's level ``ceiling``.  The listing is the one
of :mod:`riskformula.solver.enumeration` (:func:`~riskformula.solver.enumeration.list_units`: one
size unit at a time, over the rows collapsed to their distinct patterns on the free columns); here
it keeps *every* complete assignment under the ceiling instead of the best one. A partial
assignment is dropped only when its lower bound is above the ceiling: every positive row at the
highest score the units still open can add, every negative row at the lowest, at the best
intercept for those scores (rows choose independently, so no completion scores less), plus the
least c0 those units must add and the least the auxiliaries' costs can add. This bound holds for
every completion, whatever the other rows of the problem say, so the listing returns a superset of
the box's members; each listed point is then scored exactly by :func:`score_points` (its
feasibility under every row, and its best feasible intercept when rows or penalties involve the
intercept).
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from ..problem import RiskProblem
from ..solver.enumeration import list_units, open_box
from ..solver.heuristics import best_intercept

__all__ = ["list_box", "score_points", "intercept_matters", "least_aux_cost"]


def least_aux_cost(problem: RiskProblem) -> float:
    """The least the auxiliaries' costs (penalties) can add to an objective (0 without penalties)."""
    p = problem
    on = p.aux_cost != 0
    if not on.any():
        return 0.0
    return float(np.minimum(p.aux_cost[on] * p.aux_lower[on], p.aux_cost[on] * p.aux_upper[on]).sum())


def intercept_matters(problem: RiskProblem) -> bool:
    """Whether a row, an indicator or a penalty involves the intercept, so that the best intercept
    of a score's points may differ from the one that minimises its loss."""
    p = problem
    at = p.layout.intercept
    if p.has_aux_cost or p.exact_rows:
        return True
    if any(at in r.coefs and r.coefs[at] != 0 for r in p.rows):
        return True
    return any(np.any(E[:, 0] != 0) for _, E, _, _ in p.indicators)


def list_box(problem: RiskProblem, lower: np.ndarray, upper: np.ndarray, ceiling: float, max_work: float):
    """Points of the box ``lower``/``upper`` (bounds of every column of the problem's variable
    vector) within the size limits and size groups whose objective may be at most ``ceiling``.

    Returns ``(points, intercepts, values)``: one row of ``points`` (design columns) per listed
    assignment, its best intercept for its loss and its loss there + c0 · size (+ the least
    auxiliary cost), which is its objective when no row, indicator or penalty involves the
    intercept and a lower bound on it otherwise.  Every point of the box whose objective is at
    most ``ceiling`` is listed (other rows of the problem are not checked here).  None when the
    listing's work (partial assignments × distinct row patterns, summed over the units) passes
    ``max_work``.  The listing is :func:`riskformula.solver.enumeration.list_units`', which keeps
    ties with the ceiling here.
    """
    empty = (np.zeros((0, problem.d)), np.zeros(0), np.zeros(0))
    box = open_box(problem, lower, upper)
    if box is None:
        return empty
    listed = list_units(problem, box, ceiling, max_work, extra=least_aux_cost(problem), ties=True)
    if listed is None:
        return None
    # a margin for rounding: the listing keeps what is within it, the exact scoring decides
    on = np.flatnonzero(listed.values <= ceiling + 1e-12 * (1.0 + abs(ceiling)))
    return listed.points(on), listed.intercepts[on], listed.values[on]


def score_points(problem: RiskProblem, points: np.ndarray, intercepts: np.ndarray, ceiling: float):
    """The exact objective of integer ``points`` (one row per score, design columns) at their best
    feasible intercept, and that intercept: ``(lams, objectives)`` with λ rows (intercept first),
    ``inf`` for a score that no intercept makes feasible or whose objective is above ``ceiling``
    (then its λ row is not meaningful).

    ``intercepts`` are the intercepts that minimise each score's loss (from :func:`list_box`).  The
    objective is the package's (:meth:`RiskProblem.objective`: loss + c0 · size + penalties), and a
    score is feasible when :meth:`RiskProblem.complete` accepts it (every bound, row and size
    group).  When rows, indicators or penalties involve the intercept, the integer intercepts are
    tried in order of increasing loss from the loss's best one (the loss is convex in the
    intercept, so that order is a walk outwards from it), and the walk stops once the loss alone
    passes the ceiling or the best objective found."""
    p = problem
    k = len(points)
    lams = np.zeros((k, p.d + 1))
    lams[:, 1:] = points
    lams[:, 0] = intercepts
    values = np.full(k, math.inf)
    if k == 0:
        return lams, values
    Z = p.loss.Z[:, 1:]
    # bounds, size limits and size groups are all the listing needed to respect
    plain = not p.rows and p.n_extra_aux == 0 and not p.has_aux_cost
    if plain:
        # a batch: scores of every listed point at its intercept, the package's loss of each
        S = Z @ points.T + lams[:, 0][None, :]
        values = p.loss.value_from_scores(S) + (points != 0) @ p.c0
        values = np.where(values <= ceiling, values, math.inf)
        return lams, np.atleast_1d(values)
    walk = intercept_matters(p)
    c0s = (points != 0) @ p.c0
    for i in range(k):
        lam = lams[i]
        if not walk:
            x = p.complete(lam)
            if x is not None:
                v = p.objective(lam, x)
                values[i] = v if v <= ceiling else math.inf
            continue
        found = _best_feasible_intercept(p, lam, float(c0s[i]), ceiling)
        if found is not None:
            lams[i, 0], values[i] = found
    return lams, values


def _best_feasible_intercept(p: RiskProblem, lam: np.ndarray, c0: float,
                             ceiling: float) -> tuple[float, float] | None:
    """(intercept, objective) of the best feasible integer intercept of the points ``lam[1:]``
    within the problem's intercept range, when its objective is at most ``ceiling``; else None."""
    s = p.loss.Z[:, 1:] @ lam[1:]
    lo, hi = (int(v) for v in p.intercept_bounds)
    if p.real_intercept:
        # rows on the intercept need whole scores: the package refuses a real intercept with them
        b = best_intercept(p, s)
        trial = lam.copy()
        trial[0] = b
        x = p.complete(trial)
        if x is None:
            return None
        v = p.objective(trial, x)
        return (b, v) if v <= ceiling else None
    grid = np.arange(lo, hi + 1, dtype=float)
    losses = cast(np.ndarray, p.loss.value_from_scores(s[:, None] + grid[None, :]))  # one per intercept
    order = np.argsort(losses, kind="stable")
    least = c0 + least_aux_cost(p)
    best = None
    for at in order:
        if losses[at] + least > ceiling or (best is not None and losses[at] + least >= best[1]):
            break  # no later intercept (a larger loss) does better
        trial = lam.copy()
        trial[0] = grid[at]
        x = p.complete(trial)
        if x is None:
            continue
        v = p.objective(trial, x)
        if v <= ceiling and (best is None or v < best[1]):
            best = (float(grid[at]), v)
    return best
