"""Risk scores that separate the training rows: a start for the support search on separable data.

When some support's cells are *pure* (each cell holds only events or only non-events), its points
may order every event above every non-event; such a score's logistic loss tends to 0 as the score
scale m shrinks (the logit a·(score + c) with a = 1/m → ∞), the infimum of every risk score's
loss.  On such data (mushroom: a 7-item score separates its rows) the beam search of Liu et al.
(2022) on real points, bounded at ±5, stops short of separation, and the tree's bounds are ~0 at
every shallow node, so the search neither finds nor proves the best score.  This module finds one:

0. :func:`may_separate` — whether the linear relaxation on all the columns' cells separates the
   rows at all (on data whose cells are pure but not separable, breastcancer, nothing more is done);
1. :func:`pure_supports` — a beam over supports ordered by their saturated loss (bound B1 of
   :mod:`riskformula.solver.cells`, which is 0 exactly when every cell is pure), widened one
   column at a time until a support of the size limit is reached;
2. :func:`separating_points` — on a pure support's cells, whole points within their ranges whose
   scores put every event cell strictly above every non-event cell, with the fewest nonzero points
   (a small mixed-integer program on HiGHS through :func:`scipy.optimize.milp`; its answer is
   checked in exact integer arithmetic, so a tolerance of the solver can never make a
   non-separating score pass);
3. :func:`separated_loss` — the score's loss at a scale small enough that it is below 10⁻¹⁵ per
   row: the intercept midway between the two classes' scores and a = 40 / (half the gap).

These are incumbents only: the certificate is the support search's, whose bounds do not read
them.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .cells import CellData, cell_losses

__all__ = ["may_separate", "pure_supports", "separating_points", "separated_loss", "LOGIT_MARGIN"]

#: the logit of the rows nearest the boundary at the separating score's scale: each row's loss is
#: then log(1 + e⁻⁴⁰) ≈ 4·10⁻¹⁸
LOGIT_MARGIN = 40.0


def pure_supports(data: CellData, usable, can_add, max_size: int, width: int = 20,
                  deadline: float | None = None) -> list[tuple]:
    """Supports (sorted column tuples) whose cells are all pure, found by a beam of ``width``
    supports kept by their saturated loss at each size up to ``max_size``; those of the least size
    at which any is found.  ``can_add(cols, j)`` says whether column ``j`` may join ``cols``
    (size units, groups).  Empty when none is found by ``deadline`` (perf_counter seconds)."""
    usable = list(usable)
    beam: list[tuple] = [()]
    cells = {(): data.partition(())}
    for _ in range(max_size):
        # each support's saturated loss, and the kept support and column it came from
        scored: dict[tuple, tuple[float, tuple, int]] = {}
        for cols in beam:
            if deadline is not None and time.perf_counter() > deadline:
                return []
            cell, n_cells = cells[cols]
            later = [j for j in usable if j not in cols and can_add(cols, j)]
            if not later:
                continue
            for j, b in zip(later, data.children_saturated(cell, n_cells, later)):
                key = tuple(sorted(cols + (j,)))
                if key not in scored or b < scored[key][0]:
                    scored[key] = (float(b), cols, j)
        if not scored:
            return []
        beam = sorted(scored, key=lambda k: (scored[k][0], k))[:width]
        cells = {key: data.refine(cells[scored[key][1]][0], scored[key][2]) for key in beam}
        pure = []
        for cols in beam:
            cell, n_cells = cells[cols]
            P = np.bincount(cell, weights=data.P, minlength=n_cells)
            Q = np.bincount(cell, weights=data.Q, minlength=n_cells)
            if bool(np.all((P == 0) | (Q == 0))):
                pure.append(cols)
        if pure:
            return pure
    return []


def separating_points(Xc: np.ndarray, P: np.ndarray, Q: np.ndarray, lower, upper,
                      time_limit: float = 5.0) -> np.ndarray | None:
    """Whole points w (lower ≤ w ≤ upper, columnwise; 0 allowed) on a support's cells ``Xc`` (cells
    × columns, integers) with counts ``P`` (events) and ``Q`` (non-events) whose scores Xc·w are
    larger on every cell with events than on every cell with non-events, with the fewest nonzero
    points; None when no such points exist (or a cell holds both, or the solver stops first).

    The program: w integer, a real intercept b, indicators z_j ≥ |w_j| / max(|lower_j|, upper_j);
    Xc·w + b ≥ 1/2 on event cells, ≤ −1/2 on the others (whole scores differ by at least 1, so
    this is no loss of generality); minimise Σ z.  The solution is checked again in int64."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    Xc = np.asarray(Xc, dtype=np.int64)
    margin = _margin_rows(Xc, P, Q)
    if margin is None:
        return None
    A0, pos, neg = margin
    s = Xc.shape[1]
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    top = np.maximum(np.abs(lo), np.abs(hi))
    if s == 0 or not bool((top > 0).all()):
        return None
    span = float(np.abs(Xc).max(initial=0) * top.sum() + 1.0)
    # variables: w (s), b, z (s); the margin rows, then ±w_j − top_j z_j ≤ 0
    eye, link = np.eye(s), -np.diag(top)
    A = np.vstack([np.c_[A0, np.zeros((len(A0), s))], np.c_[eye, np.zeros((s, 1)), link],
                   np.c_[-eye, np.zeros((s, 1)), link]])
    ub = np.r_[np.full(len(A0), -0.5), np.zeros(2 * s)]
    integrality = np.r_[np.ones(s), 0, np.ones(s)]
    bounds = Bounds(np.r_[lo, -span, np.zeros(s)], np.r_[hi, span, np.ones(s)])
    try:
        res = milp(np.r_[np.zeros(s + 1), np.ones(s)], constraints=LinearConstraint(A, -np.inf, ub),
                   integrality=integrality, bounds=bounds,
                   options={"time_limit": max(float(time_limit), 0.01), "disp": False})
    except (ValueError, np.linalg.LinAlgError):
        return None
    if res.x is None:
        return None
    w = np.rint(res.x[:s]).astype(np.int64)
    if bool((w < lo).any()) or bool((w > hi).any()):
        return None
    S = Xc @ w
    if not S[pos].min() > S[neg].max():  # exact: whole scores
        return None
    return w


def may_separate(Xc: np.ndarray, P: np.ndarray, Q: np.ndarray, lower, upper, time_limit: float = 5.0) -> bool:
    """False when no points within [lower, upper] (columnwise, whole or not) put every event cell of
    ``Xc`` above every non-event cell by 1 (the linear relaxation of :func:`separating_points`
    is infeasible, so it has no solution either); True otherwise, or when the solver stops first."""
    from scipy.optimize import linprog

    margin = _margin_rows(np.asarray(Xc), P, Q)
    if margin is None:
        return False
    A = margin[0]
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    res = linprog(np.zeros(A.shape[1]), A_ub=A, b_ub=np.full(len(A), -0.5),
                  bounds=list(zip(lo, hi)) + [(None, None)], method="highs",
                  options={"time_limit": max(float(time_limit), 0.01)})
    return res.status != 2  # 2: infeasible


def _margin_rows(Xc: np.ndarray, P, Q):
    """The rows A over (w, b) of A·(w, b) ≤ −1/2 — −(x·w + b) on each event cell, x·w + b on each
    non-event cell — with the two classes' masks; None when a cell holds both classes or a class
    is absent (nothing to separate)."""
    pos, neg = np.asarray(P) > 0, np.asarray(Q) > 0
    if bool((pos & neg).any()) or not pos.any() or not neg.any():
        return None
    X = np.asarray(Xc, dtype=float)
    A = np.vstack([-np.c_[X[pos], np.ones(int(pos.sum()))], np.c_[X[neg], np.ones(int(neg.sum()))]])
    return A, pos, neg


def separated_loss(S: np.ndarray, P: np.ndarray, Q: np.ndarray) -> tuple[float, float, float]:
    """For whole scores ``S`` on cells that put every event cell above every non-event cell: the
    scale m, the intercept c (in points: the logit is (score + c) / m) and the loss sum there,
    with c midway between the classes and m = (half the gap) / :data:`LOGIT_MARGIN`."""
    S = np.asarray(S, dtype=float)
    pos, neg = np.asarray(P) > 0, np.asarray(Q) > 0
    low, high = float(S[neg].max()), float(S[pos].min())
    half = (high - low) / 2.0
    c = -(high + low) / 2.0
    m = half / LOGIT_MARGIN
    f = float(cell_losses(((S + c) / m)[None, :], np.asarray(P, float), np.asarray(Q, float))[0])
    if not math.isfinite(f):
        raise FloatingPointError("separated loss")
    return m, c, f
