"""The root of the tree search: Kelley's cutting planes on the LP relaxation, stabilised by the
in-out rule (Ustun & Rudin, 2019), and, when they stall on threshold terms, one cut at a
near-minimiser of the relaxation found by a first-order method (:mod:`.relaxation`)."""

from __future__ import annotations

import math
import time

import numpy as np

from .nodes import SearchState, safe_bound
from .relaxation import first_order_cut


class RootCuts(SearchState):
    """The root's cutting planes of a :class:`~riskformula.solver.branch_and_cut.BranchAndCut`."""

    #: the root's cutting-plane loop stops when its last ``window`` rounds closed less than this
    #: fraction of the gap to the incumbent
    root_tail_window = 20
    root_tail_fraction = 0.02

    def _root_cutting_planes(self, max_rounds: int = 500,
                             rel_tol: float = 1e-5) -> tuple[float, list[tuple[np.ndarray, np.ndarray]]]:
        """Kelley's cutting planes on the LP relaxation, stabilised by the in-out rule:
        cuts are taken between the LP point and the best relaxed point so far."""
        p, lp = self.p, self.lp
        lp.set_bounds(self.root_lower, self.root_upper)
        center: np.ndarray | None = None  # the best relaxed point so far, and its indicators
        center_alpha: np.ndarray
        center_val = math.inf
        iterates: list[tuple[np.ndarray, np.ndarray]] = []
        bound = -math.inf
        mix = 0.5
        stall = 0
        budget = self._root_time()
        history: list[float] = []
        for it in range(max_rounds):
            status, obj, x = lp.solve(self._left())
            self.lp_solves += 1
            if status == "time_limit":
                break
            if status == "infeasible":
                return math.inf, iterates
            lb = safe_bound(obj)
            if lb > bound + 1e-9 * (1 + abs(bound)):
                stall = 0
            else:
                stall += 1
            bound = max(bound, lb)
            self._status(time.perf_counter() - self.t0, 1, bound)
            lam, alpha = x[self.lam_slice], x[self.alpha_slice]
            lin = float(self.cost @ x[:-1])
            f, g = p.loss.value_and_gradient(lam)
            val = f + lin
            if val < center_val:
                center, center_val, center_alpha = lam.copy(), val, alpha.copy()
            if it % 5 == 0 or it < 5:
                iterates.append((lam.copy(), alpha.copy()))
            if (center_val - bound) <= rel_tol * max(abs(center_val), 1e-12):
                break
            if time.perf_counter() - self.t0 > budget:
                break
            assert center is not None  # else center_val is ∞ and the loop stopped above
            history.append(bound)
            if it % 50 == 49:
                self._heuristic(center, center_alpha)  # an incumbent early, to judge tailing off by
            w = self.root_tail_window
            if it >= 50 and (history[-1] - history[-1 - w]
                             < self.root_tail_fraction * (self._ceiling() - history[-1]) < math.inf):
                break  # the last rounds closed little of the gap: branching does better now
            lp.add_cut(lam, f, g)
            if self.keep_root_cuts:
                self.root_cuts.append((lam.copy(), f, g))
            if stall > 3:
                mix = min(1.0, mix + 0.25)
            q = center + mix * (lam - center) if mix < 1.0 else None
            if q is not None:
                fq, gq = p.loss.value_and_gradient(q)
                lp.add_cut(q, fq, gq)
                if self.keep_root_cuts:
                    self.root_cuts.append((q.copy(), fq, gq))
        if center is not None:
            iterates.append((center, center_alpha))
        iterates.reverse()  # the best relaxed points first
        # how far the bound stopped below the best relaxed point: the relaxation's least value lies between
        self.root_relaxation_gap = ((center_val - bound) / max(abs(center_val), 1e-12) if center is not None
                                    else math.inf)
        return bound, iterates

    def _root_time(self) -> float:
        """Seconds the root's cutting planes may take: :attr:`root_budget`, else a quarter of the time limit."""
        return 0.25 * self.time_limit if self.root_budget is None else self.root_budget

    def _first_order_root(self, bound: float) -> float:
        """When Kelley's cuts stalled on threshold terms (their bound below half of their best
        relaxed point), one cut at a near-minimiser of the relaxation found by a first-order method
        (:mod:`~riskformula.solver.relaxation`), and the root LP's bound with it; -inf when it is
        not tried or adds nothing.  A fifth of the root's budget at most, and deterministic unless
        that runs out (spambase with ``threshold(., grid=10)``, 60 s: root bound 0 → 0.13)."""
        p = self.p
        if not p.exclusive_groups or not math.isfinite(bound) or self.root_relaxation_gap < 0.5:
            # no cut positions, or Kelley's cuts did not stall: on the generator of Molero-Río &
            # D'Ambrosio (2025) their bound ends within 1-13 % of their best relaxed point, and a
            # first-order solve rarely beats it in its 3 s; on the designs above it ends at 0
            return -math.inf
        budget = self._root_time()
        # precision beyond a hundredth of the gap to the incumbent would not show in the certificate
        enough = 0.01 * (self.upper - bound) if math.isfinite(self.upper) else 0.0
        cut = first_order_cut(p, abs_tol=enough, deadline=time.perf_counter() + 0.2 * budget, known_bound=bound)
        if cut is None or cut.bound <= bound:
            return -math.inf
        # the bound only, which every node inherits: kept in the pool, this dense cut made the
        # generator's trees larger (seed 5, N = 200, p = k = 5, one process: 2 586 nodes and no
        # certificate in 60 s, against 1 952 nodes and 27 s without it, 1 769 and 20 s as a floor)
        self.lp.set_bounds(self.root_lower, self.root_upper)
        status, obj = self.lp.bound_with_cut(cut.lam, cut.value, cut.gradient, self._left())
        self.lp_solves += 1
        return safe_bound(obj) if status == "optimal" else -math.inf

