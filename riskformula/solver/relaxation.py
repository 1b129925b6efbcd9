"""The continuous relaxation solved by a first-order method: one cut where Kelley's are slow.

The branch-and-cut bounds the loss with Kelley's cutting planes: an LP over the relaxed points
(column j's points in ``[l_j·α_j, u_j·α_j]``, ``α`` relaxed to [0, 1], one cut position per
threshold, the size limit on the ``α`` s) and one linearization of the loss per round.  When
threshold terms bring many cut columns, the LP's points run to where the loss is nearly 0 and its
gradient nearly flat, and the bound stalls far below the relaxation's least loss: at a loss bound
of 0 for spambase with ``threshold(., grid=10)`` (199 cut columns), whose relaxation's least loss
is 0.135.

:func:`first_order_cut` minimises the loss over the same relaxed points by accelerated projected
gradient (FISTA, Beck & Teboulle, 2009, restarted when the loss rises: O'Donoghue & Candès, 2015)
and returns the loss's linearization at the best point.  Every linearization of the convex loss is
a valid cut, wherever it is taken; at a near-minimiser it gives the LP the relaxation's bound at
once (the least value of ``l(w) + ∇l(w)·(λ − w)`` over the LP's set is the Frank–Wolfe bound at
``w``).  So the projection needs to be good, not exact: what it leaves out (the user's rows, groups
that may use several columns) can make the cut less useful, never invalid.  The solver solves its
root LP once with the cut and takes that LP's bound (not this module's Frank–Wolfe bound) as a
floor for every node; it does not keep the cut, which made some trees larger.

Examples
--------
>>> import numpy as np
>>> from riskformula.problem import LogisticLoss, RiskProblem
>>> rng = np.random.default_rng(0)
>>> X = rng.integers(0, 2, size=(200, 6)).astype(float)
>>> y = X[:, 0] + X[:, 1] + rng.normal(size=200) > 1
>>> p = RiskProblem(LogisticLoss(X, y), -np.full(6, 5), np.full(6, 5), max_size=2)
>>> cut = first_order_cut(p)
>>> cut.bound <= cut.value  # the reached loss is above the relaxation's minimum, which is above the bound
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np


@dataclass
class FirstOrderCut:
    """The best point ``lam`` (intercept first), its loss ``value`` and ``gradient`` (the cut is
    ``L ≥ value + gradient·(λ − lam)``), the Frank–Wolfe ``bound`` on the least loss over the
    projection's set, and the ``iterations`` taken."""

    lam: np.ndarray
    value: float
    gradient: np.ndarray
    bound: float
    iterations: int


class RelaxedPoints:
    """The relaxed points as the projection sees them.

    A real intercept within the problem's range; column j's points spend ``λ_j / u_j`` (λ_j > 0)
    or ``λ_j / l_j`` (λ_j < 0) of its size unit, the relaxed ``α_j``; a unit (a column, or the cut
    positions of one threshold: a group with ``max_used == 1``) spends at most 1, and all units
    together at most ``max_size``."""

    def __init__(self, p):
        self.lo = np.minimum(p.coef_lower, 0.0)
        self.hi = np.maximum(p.coef_upper, 0.0)
        self.rate_pos = 1.0 / np.where(self.hi > 0, self.hi, np.inf)  # 0 where λ_j cannot be > 0
        self.rate_neg = 1.0 / np.where(self.lo < 0, -self.lo, np.inf)
        unit = np.arange(p.d)
        for g, grp in enumerate(p.groups):
            if grp.max_used == 1:
                unit[list(grp.cols)] = p.d + g
        _, self.unit = np.unique(unit, return_inverse=True)
        self.unit = self.unit.ravel()
        self.n_units = int(self.unit.max()) + 1 if p.d else 0
        self.budget = float(p.max_size)
        self.intercept = (float(p.intercept_bounds[0]), float(p.intercept_bounds[1]))

    def _spend(self, a: np.ndarray, rate: np.ndarray, level: np.ndarray) -> np.ndarray:
        return np.bincount(self.unit, weights=rate * np.maximum(a - level * rate, 0.0), minlength=self.n_units)

    def project(self, v: np.ndarray, steps: int = 50) -> np.ndarray:
        """The nearest point of the set to ``v`` (intercept first), up to the bisections' precision.

        Column j moves to ``sign(v_j)·max(|v_j| − θ·rate_j, 0)`` (a weighted soft threshold); θ of
        a unit is the larger of its own level (its spend ≤ 1) and the common level (the total ≤
        ``max_size``), each the least such level, found by bisection over all units at once."""
        w = np.empty_like(v, dtype=float)
        w[0] = min(max(v[0], self.intercept[0]), self.intercept[1])
        x = v[1:]
        if len(x) == 0:
            return w
        rate = np.where(x > 0, self.rate_pos, self.rate_neg)
        allowed = rate > 0
        a = np.where(allowed, np.abs(x), 0.0)
        rate = np.where(allowed, rate, 1.0)
        top = np.zeros(self.n_units)
        np.maximum.at(top, self.unit, a / rate)
        own = np.zeros(self.n_units)
        over = self._spend(a, rate, own[self.unit]) > 1.0
        if over.any():
            lo, hi = np.zeros(self.n_units), top.copy()
            for _ in range(steps):
                mid = 0.5 * (lo + hi)
                big = self._spend(a, rate, mid[self.unit]) > 1.0
                lo, hi = np.where(big, mid, lo), np.where(big, hi, mid)
            own = np.where(over, hi, 0.0)
        level = own
        if self._spend(a, rate, own[self.unit]).sum() > self.budget:
            lo_c, hi_c = 0.0, float(top.max())
            for _ in range(steps):
                mid = 0.5 * (lo_c + hi_c)
                if self._spend(a, rate, np.maximum(own, mid)[self.unit]).sum() > self.budget:
                    lo_c = mid
                else:
                    hi_c = mid
            level = np.maximum(own, hi_c)
        moved = np.maximum(a - level[self.unit] * rate, 0.0)
        w[1:] = np.sign(x) * np.minimum(moved, np.where(x > 0, self.hi, -self.lo))
        return w

    def least_linear(self, g: np.ndarray) -> float:
        """min over the set of ``g·λ``: each unit's best column at full spend, the ``max_size``
        units that gain most."""
        value = g[0] * (self.intercept[1] if g[0] < 0 else self.intercept[0])
        if len(g) > 1:
            gx = g[1:]
            per = np.minimum(np.minimum(gx * self.hi, gx * self.lo), 0.0)
            best = np.zeros(self.n_units)
            np.minimum.at(best, self.unit, per)
            k = int(min(self.budget, self.n_units))
            value += float(np.sort(best)[:k].sum())
        return float(value)


def lipschitz(loss, iterations: int = 30) -> float:
    """An upper estimate of the loss gradient's Lipschitz constant, ¼·λ_max(Zᵀ W Z) / (Σw·m²),
    by power iteration (10 % to spare); a loss that knows its own bound (the Cox loss) gives it."""
    own = getattr(loss, "gradient_lipschitz", None)
    if own is not None:
        return float(own())
    Z, w = loss.Z, loss.w_all
    v = np.full(Z.shape[1], 1.0 / math.sqrt(Z.shape[1]))
    top = 0.0
    for _ in range(iterations):
        u = Z.T @ (w * (Z @ v))
        top = float(np.linalg.norm(u))
        if top == 0.0:
            return 1.0
        v = u / top
    return 1.1 * 0.25 * top / (loss.total_weight * loss.scale ** 2)


def first_order_cut(p, max_iterations: int = 20_000, rel_tol: float = 1e-3, abs_tol: float = 0.0,
                    deadline: float | None = None, known_bound: float | None = None) -> FirstOrderCut | None:
    """The loss's linearization at a near-minimiser of the relaxation of problem ``p`` (see the
    module notes), by FISTA with restarts from the intercept-only point.

    Stops when the Frank–Wolfe gap is below ``rel_tol`` of the loss or below ``abs_tol``, after
    ``max_iterations`` steps, or at ``deadline`` (a ``time.perf_counter()`` value).  Returns None
    when the loss reached comes that close to ``known_bound`` (a bound the caller already has):
    the relaxation's minimum lies between the two, so the cut could add little; and when half the
    time to ``deadline`` has gone with the Frank–Wolfe bound still below ``known_bound`` (on wdbc's
    5 022 cut columns it stays below 0 for far longer than the root can give it)."""
    started = time.perf_counter()
    S = RelaxedPoints(p)
    step = 1.0 / lipschitz(p.loss)
    x = S.project(np.zeros(p.d + 1))
    f_x, g_x = p.loss.value_and_gradient(x)
    y, t = x.copy(), 1.0
    best = (f_x, x, g_x)
    bound = -math.inf
    k = 0
    for k in range(1, max_iterations + 1):
        _, g_y = p.loss.value_and_gradient(y)
        x_new = S.project(y - step * g_y)
        f_new, g_new = p.loss.value_and_gradient(x_new)
        if f_new > f_x:  # momentum overshot: restart from the last point
            y, t = x.copy(), 1.0
            continue
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        y = x_new + ((t - 1.0) / t_new) * (x_new - x)
        x, f_x, g_x, t = x_new, f_new, g_new, t_new
        if f_x < best[0]:
            best = (f_x, x, g_x)
        bound = max(bound, f_x + S.least_linear(g_x) - float(g_x @ x))
        tol = max(rel_tol * max(abs(best[0]), 1e-12), abs_tol)
        if known_bound is not None and best[0] - known_bound <= tol:
            return None
        if (known_bound is not None and deadline is not None and bound <= known_bound
                and time.perf_counter() > 0.5 * (started + deadline)):
            return None  # half the time gone and no better bound yet: too slow to converge here
        if best[0] - bound <= tol or (deadline is not None and time.perf_counter() > deadline):
            break
    f, lam, g = best
    return FirstOrderCut(lam=lam.copy(), value=float(f), gradient=g.copy(), bound=float(bound), iterations=k)
