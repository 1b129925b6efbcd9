"""Branch-and-cut over a finite set of score scales: the best risk score of any of them, certified.

With score scale m the risk is 1 / (1 + exp(−(b + score)/m)) (the multiplier of Liu et al., 2022);
for a fixed m the problem is the risk-score problem of Ustun & Rudin (2019) with the link divided
by m, solved by :class:`~riskformula.solver.branch_and_cut.BranchAndCut`.  This module runs one
such search per scale of a finite set and makes them one search:

* **shared incumbents** — every risk score found at one scale is offered to every other scale,
  twice: with the same points (a score vector is a candidate at every scale) and with its points
  rescaled to the other scale (round(points·m'/m), the same logit coefficients where the bounds
  allow), each with that scale's best intercept (an integer, or a real number when the
  intercept is real);
* **one cutoff** — every scale prunes the nodes that cannot beat the best objective of *any*
  scale, so a scale whose root bound is above it is settled without branching;
* **warm starts** — a scale's root starts from the incumbents found so far and from the loss cuts
  of the scales solved before it, rescaled: a tangent of l(λ/m) at μ is, after substituting
  λ·m/m', a tangent of l(λ/m') at μ·m'/m, so these cuts are exact for the new scale and cost no
  pass over the data;
* **rays** — after the star-ray search of Liu et al. (2022): on the support of a good incumbent,
  the best real points within the bounds at every scale, rounded (sequential rounding) and
  polished (coordinate descent with swaps), once per support;
* **beam** — before any root, the supports found by Liu et al.'s sparse beam search on real
  points (:func:`~riskformula.solver.heuristics.real_beam_search`) get rays, the best first,
  for a tenth of the time limit;
* **order** — a quick coordinate descent at the middle scale and the rays rank the scales; the
  most promising one gets the root a fixed-scale search would get, the others share the rest of
  the roots' time (:attr:`MultiScaleSearch.root_share` of the time limit);
* **one tree** — after the roots, the open node with the least bound over all scales is
  processed next (best-first over the union), under one time and node limit;
* **refinement** (when the caller can build problems at new scales) — a risk score's own best
  scale lies between those of the set: with its points fixed the loss is convex in 1/m, so that
  scale is found by a one-dimensional search, for the best score of every scale; the one that
  fits best at its own scale joins the set (rounded to three significant digits) with a search
  of its own when it beats the best objective and no scale of the set is within 1 % of it.  When
  the best risk score is at the set's least scale with a point at its bound, the scale below it
  (over √2) joins first: its points cannot grow, only a smaller scale gives larger effects.  This
  is how FasterRisk's continuous multiplier is matched while the certificate stays over a stated
  set.

The certificate covers the finite set only: the global lower bound is the least of the scales'
bounds (each scale's open nodes, its nodes pruned by the gap tolerance, and the best objective),
so no risk score at any of these scales — the added ones included — has an objective below it.
Scales between those of the set are not covered.  The fits then move the best score to its own
scale (:func:`refined_scale`): the card may sit between the scales of the set, at least as good
as every score at them.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

import numpy as np

from .._checks import SCALE_RANGE
from ..problem.problem import loss_bounds
from . import search_log
from .branch_and_cut import BranchAndCut
from .nodes import LP_PRECISION, highs_version, limit_status
from .parallel import Rounds, on_workers
from .options import SearchOptions
from .heuristics import (best_intercept, polish, quantile_columns, real_beam_search, real_fit, sequential_rounding,
                         support_bounds)
from .report import SolverReport

if TYPE_CHECKING:
    from ..problem import RiskProblem

__all__ = ["MultiScaleSearch", "SCALE_STATUSES"]

#: what the per-scale rows of a report's ``scales`` say
SCALE_STATUSES = {
    "best": "holds the best risk score found",
    "searched": "every node was settled against the best objective",
    "root bound": "settled by its root bound alone (cannot beat the best objective)",
    "stopped": "open nodes remained at the time or node limit",
    "not started": "the time limit came before its root",
    "infeasible": "no risk score satisfies the constraints at this scale",
}


class MultiScaleSearch:
    """Solve one :class:`~riskformula.problem.RiskProblem` per score scale as one search.

    Parameters
    ----------
    problems : dict of scale m → problem (the same design, bounds and constraints; the loss with
        ``scale=m``).
    options : :class:`~riskformula.solver.options.SearchOptions`, as for
        :class:`~riskformula.solver.branch_and_cut.BranchAndCut`, for the whole search (the roots run
        in this process; ``n_jobs`` processes share the open nodes of every scale after them; each
        scale's own search takes them :meth:`~SearchOptions.quiet`).
    root_share : fraction of the time limit the roots may use together.
    infeasible : scales left out because no risk score satisfies the constraints there (listed in
        the report's per-scale rows).
    add_scale : callable m → problem at scale m (or None when m cannot be searched); when given,
        the search refines the set around the best risk score (at most ``max_added`` scales, each
        within the range of the given ones).
    """

    def __init__(self, problems: dict, options: SearchOptions | None = None, *, root_share: float = 0.35,
                 infeasible=(), add_scale=None, max_added: int = 3):
        if not problems:
            raise ValueError("no score scale to search")
        options = SearchOptions() if options is None else options
        self.options = options
        self.problems = {float(m): p for m, p in problems.items()}
        self.n_jobs = int(options.n_jobs)
        self.time_limit = float(options.time_limit)
        self.gap_tolerance = float(options.gap_tolerance)
        self.absolute_gap_tolerance = float(options.absolute_gap_tolerance)
        self.node_limit = options.node_limit
        self.verbose = options.verbose
        self.log_interval = options.log_interval
        self.progress = bool(options.progress) and not options.verbose
        self.root_share = root_share
        self.first_root_share = 0.55 if len(problems) > 1 else 1.0
        self.infeasible = tuple(float(m) for m in infeasible)
        self.solvers: dict[float, BranchAndCut] = {}
        for m, p in self.problems.items():
            self._new_solver(m, p)
        self.add_scale = add_scale
        self.max_added = int(max_added)
        self.added: list[float] = []
        self._edges: set = set()  # the scales below which _edge_scale looked already
        #: (scale, points) → (objective at their own scale, that scale), or None once used
        self._refined: dict = {}
        self.scale_range = (min(self.problems), max(self.problems))
        self.best = math.inf
        self.best_scale: float | None = None
        self.best_lam: np.ndarray | None = None
        self.started: list[float] = []
        self._shared: dict[float, float] = {m: math.inf for m in self.problems}
        # (scale found at, λ) of shared incumbents (scale None: a caller's start of unknown scale)
        self._pool: list[tuple[float | None, np.ndarray]] = []
        self.log_lines: list[str] = []
        self._static_bound: dict[float, float] = {}
        self._rays: set = set()
        self._to_ray: list = []
        self._ray_time = 0.0
        self._last_status = 0.0
        self._status_shown = False

    def _new_solver(self, m: float, p) -> BranchAndCut:
        s = BranchAndCut(p, self.options.quiet())
        s.keep_root_cuts = True
        self.solvers[m] = s
        return s

    # --- incumbents shared across scales --------------------------------------------------
    def _candidates(self, m: float, found_at: float | None, lam: np.ndarray) -> list[np.ndarray]:
        """λ found at scale ``found_at`` (None: unknown) as candidates at scale ``m``: λ itself when
        found at m; else the same points and the points rescaled by m/found_at (clipped to the
        bounds), each with scale m's best intercept."""
        if found_at == m:
            return [np.asarray(lam, float)]
        p = self.problems[m]
        X = p.loss.Z[:, 1:]
        out = []
        pts = [np.asarray(lam[1:], float)]
        if found_at is not None:
            lo, hi = np.minimum(p.coef_lower, 0), np.maximum(p.coef_upper, 0)
            pts.append(np.clip(np.round(pts[0] * (m / found_at)), lo, hi))
        for q in pts:
            cand = np.concatenate([[0.0], q])
            cand[0] = best_intercept(p, X @ q)
            out.append(cand)
        return out

    def _share(self) -> None:
        """Offer every new incumbent to every started scale and lower every scale's cutoff."""
        changed = False
        for m in list(self.started):
            s = self.solvers[m]
            if s.upper < self._shared[m]:
                assert s.best_lam is not None  # a finite upper bound comes with its points
                self._shared[m] = s.upper
                lam = s.best_lam.copy()
                self._pool.append((m, lam))
                self._to_ray.append((m, lam))
                for other in self.started:
                    if other != m:
                        for cand in self._candidates(other, m, lam):
                            self.solvers[other].offer(cand)
                changed = True
            if s.upper < self.best:
                assert s.best_lam is not None  # a finite upper bound comes with its points
                self.best, self.best_scale, self.best_lam = s.upper, m, s.best_lam.copy()
                changed = True
        if changed:
            for m in self.started:
                self.solvers[m].set_cutoff(self.best)
            if any(self.solvers[m].upper < self._shared[m] for m in self.started):
                self._share()

    # --- refinement: the best risk score's own scale joins the set -------------------------
    def _own_scale(self, p, scores: np.ndarray, b: float, at: float) -> float:
        """The scale within :attr:`scale_range` at which points-only ``scores`` (of problem ``p``'s
        rows, intercept ``b`` at scale ``at``) have the least loss, the intercept re-chosen:
        for fixed points and intercept the loss is convex in t = 1/m (a convex function of t times
        the scores), so a bounded scalar search on t, alternated with the intercept until neither
        moves."""
        from scipy.optimize import minimize_scalar
        unit = p.loss.with_scale(1.0)
        lo, hi = self.scale_range
        m = at
        for _ in range(4):
            z = scores + b
            res = minimize_scalar(lambda t: unit.value_from_scores(z * t), bounds=(1.0 / hi, 1.0 / lo),
                                  method="bounded", options={"xatol": 1e-6})
            m = 1.0 / float(res.x)
            b_new = _loss_at_scale(p, scores, m)[1]
            if b_new == b:
                break
            b = b_new
        return m

    def _refine(self) -> None:
        """Add a scale to the set (see the module notes): each scale's best risk score is moved to
        its own scale, and the one that fits best there joins the set when it beats the best
        objective and no scale of the set is within 1 % of it; once per risk score, at most
        :attr:`max_added` times.  Every scale's best, not only the overall one: a score that is
        second at the grid's scales can be first at its own (adult, 120 s: 0.37701 at 1.65 from the
        second best at 1.5, where the best at 2 reaches only 0.37750 at 2.03)."""
        if self.add_scale is None or self.best_lam is None or len(self.added) >= self.max_added:
            return
        if time.perf_counter() - self.t0 > 0.8 * self.time_limit:
            return  # too late for a search of its own: its bound would only widen the gap
        for at in self.started:
            lam = self.solvers[at].best_lam
            if lam is None or not np.any(np.asarray(lam[1:]) != 0):
                continue  # the intercept-only model is about as good at any scale
            key = (at, tuple(np.asarray(lam, float).tolist()))
            if key not in self._refined:
                p = self.problems[at]
                scores = p.loss.Z[:, 1:] @ np.asarray(lam[1:], float)
                m = float(f"{self._own_scale(p, scores, float(lam[0]), at):.3g}")
                # the same points, so the objective moves by the loss alone
                value = self.solvers[at].upper - (p.loss.value(lam) - _loss_at_scale(p, scores, m)[0])
                self._refined[key] = (value, m)
        edge = self._edge_scale()
        if edge is not None:
            m, at, lam = edge
        else:
            # a scale of the set within 1 % is as good: the points are a candidate there already
            open_ = [(v[0], v[1], key) for key, v in self._refined.items()
                     if v is not None and min(abs(math.log(v[1] / a)) for a in self.problems) >= math.log(1.01)]
            if not open_:
                return
            value, m, key = min(open_)
            # worth a search only if its points alone already beat the best by more than the tolerances
            if self.best - value <= max(self.absolute_gap_tolerance, self.gap_tolerance * abs(self.best)):
                return
            self._refined[key] = None
            at, lam = key[0], np.asarray(key[1], float)
        p = self.add_scale(m)
        if p is None:
            return
        self.problems[m] = p
        self._shared[m] = math.inf
        self.added.append(m)
        s = self._new_solver(m, p)
        now = time.perf_counter() - self.t0
        # the best score's neighbourhood deserves a real root: a fifth of the time, as a
        # fixed-scale search gives its root, or a third of what is left.  No root heuristics:
        # its incumbent is the best score, already polished, and one polish with swaps over
        # thousands of cut columns can take longer than the time that is left
        s.time_limit = max(self.time_limit - now, 1e-3)
        s.root_budget = min(0.2 * self.time_limit, max(0.0, self.time_limit - now) / 3)
        s.root_heuristic_budget = 0.0
        s.seed_cuts = self._rescaled_cuts(m)
        s.set_cutoff(self.best)
        s.start([c for found, cand in self._pool for c in self._candidates(m, found, cand)]
                + self._candidates(m, at, lam) + self._candidates(m, self.best_scale, self.best_lam))
        self.started.append(m)
        self._share()

    def _edge_scale(self):
        """(m, scale, points) of a scale below the set's, when the best risk score is at the set's
        least scale with a point at its bound: its points cannot grow, so only a smaller scale (a
        point worth more than 1/m logits) gives its items larger effects (spambase, size 3: the
        best at 0.5 has a point at 5; at 0.354 the best loss falls from 0.40054 to 0.39846).  m is
        that scale over √2, rounded to three digits, within the scales allowed; once per scale."""
        at, lam = self.best_scale, self.best_lam
        if at is None or lam is None or at > min(self.problems) or at in self._edges:
            return None
        p = self.problems[at]
        w = np.asarray(lam[1:], float)
        if not np.any((w != 0) & ((w <= p.coef_lower) | (w >= p.coef_upper))):
            return None
        self._edges.add(at)
        m = float(f"{at / math.sqrt(2):.3g}")
        if m < SCALE_RANGE[0] or any(abs(math.log(m / a)) < math.log(1.01) for a in self.problems):
            return None
        return m, at, np.asarray(lam, float)

    # --- rays: one direction of real coefficients, rounded at every scale ----------------------
    def _ray_on_new_best(self) -> None:
        """Rays on the supports of the new incumbents close to the best objective (within 2 %),
        the best first; they take at most about a sixth of the time so far."""
        todo, self._to_ray = self._to_ray, []
        if self.best_lam is not None:
            todo.append((self.best_scale, self.best_lam))
        for m, lam in sorted(todo, key=lambda t: self.problems[t[0]].full_objective(t[1])):
            if self.problems[m].full_objective(lam) > 1.02 * self.best:
                break
            t = time.perf_counter()
            allowance = 0.15 * (t - self.t0) + 1.0 - self._ray_time
            if allowance <= 0:
                break
            self._ray(lam, m, deadline=min(t + allowance, self.t0 + self.time_limit))
            self._ray_time += time.perf_counter() - t

    def _ray(self, lam: np.ndarray, at: float, deadline: float) -> None:
        """After the star-ray search of Liu et al. (2022): on the support of ``lam`` (a risk score at
        scale ``at``) fit real points within the bounds at every scale m, round them (sequential
        rounding, then coordinate descent with swaps) and offer the result there; the nearest
        scales first, until ``deadline`` (a ``time.perf_counter()`` value).  Once per support."""
        support = tuple(np.flatnonzero(np.asarray(lam[1:]) != 0))
        if support in self._rays:
            return
        self._rays.add(support)
        idx = np.asarray(support, int)
        for m in sorted(self.problems, key=lambda m: abs(math.log(m / at))):
            p = self.problems[m]
            if not p.can_complete or time.perf_counter() > deadline:
                continue
            # the best real points on this support within the bounds, at this scale
            beta = real_fit(p.loss, support, np.asarray(lam, float) * (m / at), *support_bounds(p, support))
            if beta is None:
                continue
            real = np.zeros(p.d + 1)
            real[0] = beta[0]
            real[1 + idx] = beta[1:]
            if m in self.started:
                self.solvers[m]._heuristic(real, None, swaps=True)
                continue
            cand = sequential_rounding(p, real)
            if p.complete(cand) is None:
                continue
            cand, _ = polish(p, cand, swaps=True)
            if p.complete(cand) is not None:
                self._pool.append((m, cand))
                val = p.full_objective(cand)
                if val < self.best:
                    self.best, self.best_scale, self.best_lam = val, m, cand.copy()
        self._share()

    def _beam(self, deadline: float, stop: float | None = None) -> list[tuple[float, np.ndarray]]:
        """Real points from the sparse beam search of Liu et al. (2022) at the least scale of the
        set, where the bounds bind least, as (scale, λ) starts for rays, the lowest loss first.
        The search's own supports can miss what a real fit finds: on wdbc with a threshold on all
        30 predictors (4 055 cut columns), a 120 s search without it ended at 0.0830 on a training
        fold where the rays on the beam's best support reach 0.0753 in about 9 s."""
        m = min(self.problems)
        p = self.problems[m]
        if not p.can_complete or p.max_size < 1:
            return []
        t0 = time.perf_counter()
        found = real_beam_search(p, deadline=deadline, stop=stop)
        grid = quantile_columns(p)
        if grid is not None:
            # the same search on FasterRisk's grid of cuts (Liu et al., 2022): with every gap a
            # candidate, the steepest cut of a variable is often not the one that refits best.
            # It may take as long as the first search did, within the same deadline.
            grid_deadline = min(deadline, time.perf_counter() + (time.perf_counter() - t0))
            found += real_beam_search(p, deadline=grid_deadline, stop=stop, columns=grid)
        found.sort(key=p.loss.value)  # the lowest loss first
        return [(m, lam) for lam in found]

    # --- order of the roots ---------------------------------------------------------------
    def _first_guesses(self, initial, initial_scale) -> dict[float, float]:
        """A quick risk score (coordinate descent from the intercept-only model at the middle
        scale of the set) and the caller's starts, shared across scales; returns each scale's best
        objective among them, which orders the roots (the most promising first)."""
        found: list[tuple[float | None, np.ndarray]] = []
        scales = sorted(self.problems)
        m = scales[len(scales) // 2]
        p = self.problems[m]
        if p.can_complete:
            zero = np.zeros(p.d + 1)
            zero[0] = best_intercept(p, np.zeros(p.loss.n_unique))
            if p.complete(zero) is not None:
                # within the search's time: one polish of a million distinct rows took 1.8 s
                found.append((m, polish(p, zero, deadline=self.t0 + self.time_limit)[0]))
        found += [(initial_scale, np.asarray(lam, float)) for lam in initial or []]
        self._pool.extend(found)
        guess = {}
        for m, p in self.problems.items():
            guess[m] = math.inf
            for at, lam in found:
                for c in self._candidates(m, at, lam):
                    val = p.full_objective(c) if p.complete(c) is not None else math.inf
                    if val == math.inf:
                        continue
                    guess[m] = min(guess[m], val)
                    if val < self.best:  # the incumbent until a search finds better
                        self.best, self.best_scale, self.best_lam = val, m, c.copy()
        return guess

    # --- main -----------------------------------------------------------------------------
    def solve(self, initial: list[np.ndarray] | None = None, initial_scale: float | None = None,
              started: float | None = None) -> SolverReport:
        """Search every scale; ``initial`` holds starting λ vectors (intercept first) of a model at
        scale ``initial_scale`` (None: unknown), offered at every scale.  ``started``: as for
        :meth:`BranchAndCut.solve`."""
        t0 = self.t0 = time.perf_counter() if started is None else float(started)
        guess = self._first_guesses(initial, initial_scale)
        deadline = t0 + 0.1 * self.time_limit
        # past its deadline the beam grows from one parent per size, and not at all past the time limit
        starts = self._beam(deadline, stop=t0 + self.time_limit)
        if self.best_lam is not None:
            assert self.best_scale is not None  # set with best_lam
            starts.append((self.best_scale, self.best_lam))
        for at, lam in starts:
            if time.perf_counter() > deadline:
                break
            self._ray(lam, at, deadline=deadline)
        for m, p in self.problems.items():  # the rays' risk scores join the guesses
            for found_at, lam in self._pool:
                if found_at == m and p.complete(lam) is not None:
                    guess[m] = min(guess[m], p.full_objective(lam))
        order = sorted(self.problems, key=lambda m: (guess[m], m))
        root_time = self.root_share * self.time_limit
        status = None
        for k, m in enumerate(order):
            now = time.perf_counter() - t0
            if now > self.time_limit:
                status = "time_limit"
                break
            s = self.solvers[m]
            # its clock starts now: one LP may take only what is left of the whole search's time
            s.time_limit = max(self.time_limit - now, 1e-3)
            # the most promising scale gets the root a fixed-scale search would get (a fifth of
            # the time); the others share what is left of the roots' time
            share = self.first_root_share if k == 0 else 1.0 / (len(order) - k)
            s.root_budget = max(0.0, (root_time - now) * share)
            s.root_heuristic_budget = min(s.root_budget * 1.2, max(0.0, self.time_limit - now))
            s.seed_cuts = self._rescaled_cuts(m)
            s.set_cutoff(self.best)
            s.start([c for at, lam in self._pool for c in self._candidates(m, at, lam)])
            self.started.append(m)
            self._share()
            self._ray_on_new_best()
            self._report_progress(time.perf_counter() - t0)
        if status is None:
            self._refine()

        if status is not None:
            return self._finish(status)
        return self._finish(on_workers(self.n_jobs, self._tree))

    def _tree(self, parallel) -> str | None:
        """The search after the roots: best-first over the open nodes of every scale, on this
        process or, with ``parallel`` (a joblib ``Parallel``), in rounds on its workers (see
        :mod:`riskformula.solver.parallel`); returns the limit that stopped it, if any."""
        rounds = Rounds(self.n_jobs) if parallel is not None else None
        t0 = self.t0
        status = None
        last_log = -1e9
        while status is None:
            lower = self._lower()
            if self._within_tolerance(lower):
                break
            live = [m for m in self.started if self.solvers[m].has_open_nodes()]
            if not live:
                break
            now = time.perf_counter() - t0
            status = limit_status(now, self.time_limit, self.nodes, self.node_limit)
            if status:
                break
            if self.verbose and now - last_log >= self.log_interval:
                self._log(now, lower)
                last_log = now
            self._report_progress(now, lower)
            if rounds is not None and rounds.ready([self.solvers[m] for m in live]):
                rounds.run(parallel, [self.solvers[m] for m in live], self.node_limit, self.nodes,
                           Rounds.deadline(self.time_limit, now))
                improved = [m for m in live if self.solvers[m].upper < self._shared[m]]
            else:
                m = min(live, key=lambda m: self.solvers[m].next_bound())
                self.solvers[m].step()
                improved = [m] if self.solvers[m].upper < self._shared[m] else []
            if improved:
                self._share()
                self._ray_on_new_best()
                self._refine()
        return status

    def _rescaled_cuts(self, m: float) -> list:
        """The root cuts of the scales started so far, made exact for scale ``m`` (see the module
        notes); the nearest scale's first."""
        cuts = []
        for a in sorted(self.started, key=lambda a: abs(math.log(a / m))):
            r = a / m
            cuts += [(lam / r, f, g * r) for lam, f, g in self.solvers[a].root_cuts]
        return cuts[: max(200, 4 * self.problems[m].d)]

    # --- bounds ---------------------------------------------------------------------------
    @property
    def nodes(self) -> int:
        return sum(s.nodes for s in self.solvers.values())

    def _scale_bound(self, m: float) -> float:
        """Proven lower bound on scale m's objectives (capped at the best objective): its search's
        bound once started, else the loss bound of Ustun & Rudin (2019, Proposition 4)."""
        if m in self.started:
            return self.solvers[m].final_bound()
        if m not in self._static_bound:
            p = self.problems[m]
            self._static_bound[m] = loss_bounds(p)[0] + (float(np.min(p.c0)) if p.d else 0.0) * p.min_size
        return min(self._static_bound[m], self.best)

    def _lower(self) -> float:
        return min(min(self._scale_bound(m) for m in self.problems), self.best)

    def _gap(self, lower: float) -> float:
        if not math.isfinite(self.best):
            return math.inf
        if lower >= self.best:
            return 0.0
        return (self.best - lower) / max(abs(self.best), 1e-12)

    def _within_tolerance(self, lower: float) -> bool:
        """The relative or the absolute gap of the best objective over all scales is small enough."""
        return self._gap(lower) <= self.gap_tolerance or self.best - lower <= self.absolute_gap_tolerance

    # --- the report -----------------------------------------------------------------------
    def _finish(self, status: str | None) -> SolverReport:
        elapsed = time.perf_counter() - self.t0
        lower = self._lower()
        if self.best_lam is None:
            if status is None:
                status = "infeasible"
                lower = math.inf
        elif self._within_tolerance(lower) or (status is None and self._gap(lower) <= LP_PRECISION):
            status = "optimal"
        elif status is None:
            status = "numerical_gap"
        rows = []
        for m in sorted(self.problems):
            s = self.solvers[m]
            bound = self._scale_bound(m)
            if m not in self.started:
                st = "not started"
            elif m == self.best_scale:
                st = "best"
            elif s.has_open_nodes() and s.next_bound() < s._prune_level():
                st = "stopped"
            elif s.nodes <= 1:
                st = "root bound"
            else:
                st = "searched"
            rows.append({"scale": m, "objective": s.upper if m in self.started else math.inf,
                         "lower_bound": bound, "root_bound": getattr(s, "root_bound", -math.inf),
                         "nodes": s.nodes, "status": st, "added": m in self.added})
        rows += [{"scale": m, "objective": math.inf, "lower_bound": math.inf, "root_bound": math.inf,
                  "nodes": 0, "status": "infeasible", "added": False} for m in self.infeasible]
        rows.sort(key=lambda r: r["scale"])
        if self.verbose:
            self._log(elapsed, lower, final=status)
        elif self._status_shown:
            self._report_progress(elapsed, lower, final=status)
        started = [self.solvers[m] for m in self.started]
        return SolverReport(
            status=status, objective=self.best, lower_bound=lower, gap=self._gap(lower), time=elapsed,
            nodes=self.nodes, cuts=sum(s.lp.n_cuts for s in started),
            lp_solves=sum(s.lp_solves for s in started), listed=sum(s.enumerated for s in started),
            root_bound=min((s.root_bound for s in started), default=-math.inf),
            solver=f"riskformula branch-and-cut on HiGHS {highs_version()}, one tree per score scale",
            settings={"time_limit": self.time_limit, "gap_tolerance": self.gap_tolerance,
                      "absolute_gap_tolerance": self.absolute_gap_tolerance, "node_limit": self.node_limit,
                      "n_jobs": self.n_jobs},
            solution=tuple(self.best_lam.tolist()) if self.best_lam is not None else (),
            log=tuple(self.log_lines), scale=self.best_scale if self.best_scale is not None else 1.0,
            scales=tuple(rows))

    def _line(self, now, lower, final=None) -> str:
        open_nodes = sum(len(self.solvers[m].heap) + (self.solvers[m].plunge is not None) for m in self.started)
        scale = "-" if self.best_scale is None else f"{self.best_scale:g}"
        line = (f"{now:8.1f}s  nodes {self.nodes:>8d}  open {open_nodes:>7d}  best {self.best:11.6f}  "
                f"bound {lower:11.6f}  gap {100 * self._gap(lower):7.3f}%  scale {scale:>5s}  "
                f"roots {len(self.started)}/{len(self.problems)}")
        return line + (f"  [{final}]" if final else "")

    def _log(self, now, lower, final=None):
        line = self._line(now, lower, final)
        self.log_lines.append(line)
        print(line, flush=True)

    def _report_progress(self, now, lower=None, final=None):
        """The log line on stderr at most once per :data:`~riskformula.solver.search_log.STATUS_INTERVAL`."""
        if not self.progress or (final is None and now - self._last_status < search_log.STATUS_INTERVAL):
            return
        self._last_status = now
        self._status_shown = True
        print(self._line(now, self._lower() if lower is None else lower, final), file=sys.stderr, flush=True)


def scale_table(report: SolverReport):
    """The per-scale rows of a multi-scale report as a DataFrame (empty for one scale)."""
    import pandas as pd
    return pd.DataFrame(list(report.scales), columns=["scale", "objective", "lower_bound", "root_bound",
                                                      "nodes", "status", "added"])


__all__ += ["scale_table"]


def _loss_at_scale(p, scores: np.ndarray, m: float) -> tuple[float, float]:
    """(loss, best intercept) of points-only ``scores`` of problem ``p``'s rows at scale m."""
    there = SimpleNamespace(loss=p.loss.with_scale(m), intercept_bounds=p.intercept_bounds)
    b = float(best_intercept(cast("RiskProblem", there), scores))  # it reads the loss and intercept bounds only
    return there.loss.value_from_scores(scores + b), b


def refinement_seconds(time_limit: float) -> float:
    """The seconds a fit with ``scale="fit"`` keeps from its tree's time limit for
    :func:`refined_scale`: 3 % of ``time_limit``, at most 2 s."""
    return min(2.0, 0.03 * time_limit)


def refined_scale(report: SolverReport, problems: dict, problem_at,
                  deadline: float | None = None) -> tuple[SolverReport, "RiskProblem"]:
    """The search's best risk score moved to the score scale where its points fit best, when that
    lowers the objective: with the points fixed, the loss is convex in t = 1/m and, for a real
    intercept, jointly in (t, intercept / m), so a local minimizer is the global one (with a whole
    intercept, the least over whole intercepts is searched locally in t).  Until
    ``deadline`` (a ``time.perf_counter()`` value; None: no time for more) the points are then
    improved: by coordinate descent at nearby scales, each result at its own (:func:`_scale_ladder`,
    once), then by moving one or two of them by ±1 together with the scale (:func:`_joint_move`:
    the logistic loss with a real intercept, and the partial likelihood), by coordinate descent with swaps at the scale
    (:func:`polish`), and moved to their own scale again, while each round lowers the objective
    (at most three rounds).  ``problems``
    are the scales searched; ``problem_at(m)`` builds the problem at scale m (the same rows,
    bounds and constraints).  Returns the report (its ``settings["refined_from"]`` the scale the
    search found the score at, ``settings["unrefined_objective"]`` its objective there, unless its
    certificate covers every scale > 0, the report itself when nothing lowered the objective; its lower
    bound the least of the search's and the new objective: it still holds for every risk score at
    the scales searched, no more; its time the search's and this one's) and the problem at its
    scale.  Every move keeps the points within their bounds, the size limits and the problem's
    rows (a move that breaks one, or an intercept outside the new scale's range, is not taken); a
    whole-number intercept stays whole (best one per trial scale).  Rows written on the risk move
    with the scale: the callers refine only fits without them, as they add scales only then."""
    began = time.perf_counter()
    m = float(report.scale)
    p = problems[m]
    if not report.solution or report.status == "infeasible":
        return report, p
    # (a score already at its own scale, as a support search's is, goes on to the moves below)
    best, p_best = _own_scale_of(report, p, problem_at) or (report, p)
    # a step of the descent started before its deadline runs to its end (one step with swaps on a
    # few thousand rows: about 0.3 s), so the descent starts none in the last half of the time left
    polish_until = None if deadline is None else deadline - 0.5 * max(0.0, deadline - time.perf_counter())
    if polish_until is not None:
        best, p_best = _scale_ladder(best, p_best, problem_at, deadline=polish_until)
    for _ in range(3):
        if polish_until is None or time.perf_counter() >= polish_until:
            break
        # the points moved together with their scale: a pair of points can improve only at another scale
        while time.perf_counter() < polish_until:
            moved_pair = _joint_move(best, p_best, problem_at, deadline=polish_until)
            if moved_pair is None:
                break
            best, p_best = moved_pair
        if time.perf_counter() >= polish_until:
            break
        lam, _ = polish(p_best, np.asarray(best.solution, dtype=float), swaps=True, deadline=polish_until)
        objective = float(p_best.objective(lam))
        if not objective < best.objective - 1e-12 * max(1.0, abs(best.objective)):
            break
        moved = _with_objective(best, lam, objective)
        best, p_best = _own_scale_of(moved, p_best, problem_at) or (moved, p_best)
    if best is report:
        return report, p  # nothing lowered the objective
    # a certificate over every scale > 0 (a support search's) names no scale the score was found at
    info = report.settings if report.settings.get("continuous_scale") else {
        **report.settings, "refined_from": m, "unrefined_objective": report.objective}
    return dataclasses.replace(best, settings=info, time=report.time + time.perf_counter() - began), p_best


#: the scales :func:`_scale_ladder` polishes a score at, as multiples of its own: 2^(j/4), the nearest first
LADDER = tuple(2.0 ** (j / 4) for j in (-1, 1, -2, 2, -3, 3, -4, 4))


def _scale_ladder(report: SolverReport, p, problem_at,
                  deadline: float) -> tuple[SolverReport, "RiskProblem"]:
    """The score's points improved at other scales: at each scale m·r of :data:`LADDER` (its own
    scale m; the intercept moved with it), coordinate descent on the points (:func:`polish`,
    no swaps), then the result moved to its own scale (:func:`_own_scale_of`); the best of them
    when it lowers the objective, else the score as it was.  A score at its own scale is often a
    local minimum of the moves at that scale whose points fit better at another: on the exact
    track's spambase at size 10 the tree's best score at scale 0.936 (loss 0.266829) polished at
    0.936/2^(1/4) and moved to its own scale 0.777 is the best known score (0.266021), which no
    move at 0.936 reaches.  Each candidate is checked as :func:`refined_scale`'s moves are (bounds,
    size limits and rows by :func:`polish` and :func:`_own_scale_of`, the intercept range, the
    objective recomputed at its scale), and only scales within ``SCALE_RANGE`` are tried; no new
    scale is tried after ``deadline``."""
    m = float(report.scale)
    lam = np.asarray(report.solution, dtype=float)
    best, p_best = report, p
    for r in LADDER:
        if time.perf_counter() >= deadline:
            break
        if not SCALE_RANGE[0] <= m * r <= SCALE_RANGE[1]:
            continue  # a card's scale stays within the range a user may ask for
        q = problem_at(m * r)
        if q is None:
            continue
        start = lam.copy()
        start[0] = lam[0] * r  # the same logit intercept b/m at the new scale
        moved, objective = polish(q, start, deadline=deadline)
        if not math.isfinite(objective) or (q.needs_row_check and q.complete(moved) is None):
            continue
        there = _with_objective(report, moved, float(q.objective(moved)), scale=m * r)
        candidate, p_candidate = _own_scale_of(there, q, problem_at) or (there, q)
        if candidate.objective < best.objective - 1e-12 * max(1.0, abs(best.objective)):
            best, p_best = candidate, p_candidate
    return best, p_best


#: about how many scores (neighbours × rows) :func:`_joint_move` fits between two looks at its deadline
JOINT_CHUNK = 250_000


def _joint_move(report: SolverReport, p, problem_at,
                deadline: float | None = None) -> tuple[SolverReport, "RiskProblem"] | None:
    """The best of the score's neighbours, each at its own scale and intercept, when it lowers the
    objective: one point, or two, of the items used moved by ±1 within their bounds (to 0 too).
    Coordinate descent at a fixed scale misses such a move when the neighbour is better only at
    another scale: on the exact track's spambase at size 5 the tree's best score
    (2, −2, −3, −1, 5) at scale 0.465 is 1.4·10⁻³ above (2, −1, −3, −1, 4) at 0.371, and no single
    point's change at either scale improves it.  For the logistic loss with a real intercept (the
    scale and intercept of every neighbour found at once by a damped Newton search on the convex
    loss in (1/m, intercept/m)) and for the partial likelihood, which has no intercept (the scale by
    :func:`_best_slopes`); None otherwise (a whole intercept).  The candidate is checked as a move of
    :func:`refined_scale` is (bounds; the size limits and other rows by :meth:`complete`; the
    intercept range) and its objective recomputed by the problem at its scale.  ``deadline`` (a
    ``time.perf_counter()`` value): no new chunk of neighbours (:data:`JOINT_CHUNK` scores) is
    fitted after it; the ones fitted compete."""
    from .cells import calibrate_fitted
    loss = p.loss
    cox = not getattr(loss, "has_intercept", True)
    if not (cox or (loss.real_intercept and hasattr(loss, "w_pos"))):
        return None
    lam = np.asarray(report.solution, dtype=float)
    used = np.flatnonzero(lam[1:]) + 1
    lo, hi = p.coef_lower, p.coef_upper
    moves = [(i, s) for i in used for s in (-1, 1)]
    cands = []
    for first, (i, s) in enumerate(moves):
        for j, t in [(None, 0)] + moves[first + 1:]:
            if j == i:
                continue
            cand = lam.copy()
            cand[i] += s
            if j is not None:
                cand[j] += t
            if np.all(cand[1:] >= lo) and np.all(cand[1:] <= hi) and np.any(cand[1:] != 0):
                cands.append(cand)
    if not cands:
        return None
    C = np.array(cands)
    m = float(report.scale)
    # the neighbours in chunks of about JOINT_CHUNK scores: past the deadline the ones fitted so far compete
    n_rows = max(1, loss.Z.shape[0])
    step = max(1, JOINT_CHUNK // n_rows)
    # what every chunk reads, once: the loss at scale 1 (Cox) or the cells' class weights (logistic)
    if cox:
        unit = loss.with_scale(1.0)
    else:
        w_pos, w_neg = np.asarray(loss.w_pos, float), np.asarray(loss.w_neg, float)
    a, c, f = np.zeros(0), np.zeros(0), np.zeros(0)
    for lo_k in range(0, len(C), step):
        if lo_k and deadline is not None and time.perf_counter() >= deadline:
            break
        S = C[lo_k:lo_k + step, 1:] @ loss.Z[:, 1:].T
        if cox:
            ak, fk = _best_slopes(unit, S)
            ck = np.zeros(len(S))
        else:
            start = (np.full(len(S), 1.0 / m), np.full(len(S), lam[0] / m))
            ak, ck, fk, _ = calibrate_fitted(S, w_pos, w_neg, start=start)
            fk = fk / float(loss.total_weight)
        a, c, f = np.r_[a, ak], np.r_[c, ck], np.r_[f, fk]
    C = C[:len(a)]
    penalty = (C[:, 1:] != 0) @ np.asarray(p.c0, dtype=float)
    rank = np.argsort(f + penalty)
    for k in rank[:5]:  # the best few by the search's values; each then checked as the problem states it
        if not (a[k] > 0 and np.isfinite(f[k])):
            continue
        m2 = 1.0 / float(a[k])
        if not SCALE_RANGE[0] <= m2 <= SCALE_RANGE[1]:
            continue
        out = C[k].copy()
        out[0] = float(c[k]) / float(a[k])
        p2 = problem_at(m2)
        if p2 is None or not p2.intercept_bounds[0] <= out[0] <= p2.intercept_bounds[1]:
            continue
        if p2.complete(out) is None:
            continue
        objective = float(p2.full_objective(out))
        if objective < report.objective - 1e-12 * max(1.0, abs(report.objective)):
            return _with_objective(report, out, objective, scale=m2), p2
        break  # the search's best does not improve once computed exactly: the rest are no better
    return None


def _best_slopes(unit, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of scores ``S`` (candidates × the loss's merged rows) under a loss without an
    intercept (the partial likelihood at scale 1, ``unit``): the slope t = 1/m within the scales
    allowed that minimizes the loss of t·s, and that loss.  The loss is convex in t, so the least
    of a grid on log t brackets the minimum, which golden-section steps (all candidates at once)
    then narrow to 10⁻⁹ of t."""
    t_lo, t_hi = 1.0 / SCALE_RANGE[1], 1.0 / SCALE_RANGE[0]
    grid = np.exp(np.linspace(math.log(t_lo), math.log(t_hi), 57))
    V = len(S)
    vals = np.empty((V, len(grid)))
    for i in range(V):
        vals[i] = unit.value_from_scores(S[i][:, None] * grid[None, :])
    j = np.argmin(vals, axis=1)
    lo, hi = grid[np.maximum(j - 1, 0)], grid[np.minimum(j + 1, len(grid) - 1)]
    g = (math.sqrt(5) - 1) / 2

    def at(t):
        return np.asarray(unit.value_from_scores((S * t[:, None]).T), dtype=float)
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = at(x1), at(x2)
    for _ in range(60):
        if np.all(hi - lo <= 1e-9 * hi):
            break
        left = f1 < f2  # the minimum is in [lo, x2]: x1 becomes the new x2; else in [x1, hi]: x2 the new x1
        hi, lo = np.where(left, x2, hi), np.where(left, lo, x1)
        x1, x2, f1, f2 = (np.where(left, hi - g * (hi - lo), x2), np.where(left, x1, lo + g * (hi - lo)),
                          np.where(left, np.nan, f2), np.where(left, f1, np.nan))
        fresh = at(np.where(left, x1, x2))
        f1, f2 = np.where(left, fresh, f1), np.where(left, f2, fresh)
    t = np.where(f1 < f2, x1, x2)
    best = np.minimum(f1, f2)
    # a grid point may still be lower (the minimum at an end of the range)
    on_grid = vals[np.arange(V), j]
    use_grid = on_grid < best
    return np.where(use_grid, grid[j], t), np.where(use_grid, on_grid, best)


def _with_objective(report: SolverReport, lam: np.ndarray, objective: float, **changes) -> SolverReport:
    """``report`` with the points ``lam`` and their ``objective``; its lower bound at most that."""
    lower = min(report.lower_bound, objective)
    gap = 0.0 if lower >= objective else (objective - lower) / max(abs(objective), 1e-12)
    return dataclasses.replace(report, solution=tuple(float(v) for v in lam), objective=objective, lower_bound=lower,
                               gap=gap, **changes)


def _own_scale_of(report: SolverReport, p, problem_at) -> tuple[SolverReport, "RiskProblem"] | None:
    """The report's points at their own scale and intercept (see :func:`refined_scale`) with the
    problem there, or None when that does not lower the objective."""
    from scipy.optimize import minimize, minimize_scalar
    m = float(report.scale)
    lam = np.asarray(report.solution, dtype=float)
    scores = p.loss.Z[:, 1:] @ lam[1:]
    if not len(scores) or np.all(scores == scores[0]):
        return None  # no item with points, or one score for every row: no scale to choose
    unit = p.loss.with_scale(1.0)
    t_lo, t_hi = 1.0 / SCALE_RANGE[1], 1.0 / SCALE_RANGE[0]
    out = lam.copy()
    if not getattr(p.loss, "has_intercept", True):  # the partial likelihood: no intercept
        res = minimize_scalar(lambda t: unit.value_from_scores(scores * t), bounds=(t_lo, t_hi), method="bounded",
                              options={"xatol": 1e-12})
        t = float(res.x)
    elif p.loss.real_intercept:
        res = minimize(lambda v: unit.value_from_scores(scores * v[0] + v[1]), np.array([1.0 / m, lam[0] / m]),
                       method="L-BFGS-B", bounds=[(t_lo, t_hi), (None, None)],
                       options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 500})
        t = float(res.x[0])
        out[0] = float(res.x[1]) / t
    else:  # a whole intercept: the best one at each trial scale (a least of convex functions: a local search)
        res = minimize_scalar(lambda t: _loss_at_scale(p, scores, 1.0 / t)[0], bounds=(t_lo, t_hi),
                              method="bounded", options={"xatol": 1e-12})
        t = float(res.x)
        out[0] = _loss_at_scale(p, scores, 1.0 / t)[1]
    m2 = 1.0 / t
    if m2 == m and out[0] == lam[0]:
        return None
    p2 = problem_at(m2)
    if p2 is None or not p2.intercept_bounds[0] <= out[0] <= p2.intercept_bounds[1]:
        return None
    if p2.needs_row_check and p2.complete(out) is None:
        return None  # a row (e.g. on the scores with the intercept) no longer holds there
    objective = float(p2.objective(out))
    if not objective < report.objective - 1e-12 * max(1.0, abs(report.objective)):
        return None
    return _with_objective(report, out, objective, scale=m2), p2


__all__ += ["refined_scale", "refinement_seconds"]


def searched_scales(scales, problems: dict, report: SolverReport) -> tuple[float, ...]:
    """The score scales a search's certificate covers: the grid ``scales``, the scales the search
    added (``problems`` and the report's rows), not the one its best score was refined to."""
    refined = {float(report.scale)} if report.settings.get("refined_from") is not None else set()
    return tuple(sorted(set(scales) | (set(problems) - refined)
                        | {r["scale"] for r in report.scales if r.get("added")}))


__all__ += ["searched_scales"]
