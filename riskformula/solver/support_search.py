"""Certifying by supports: every support listed or ruled out by the bounds of its cells.

The second engine of the logistic fit, beside the branch-and-cut.  It proves the best risk score
over one of two model classes:

* **every score scale** (``fitted=True``): integer points w within their bounds, any score
  scale m > 0 and any real intercept — the logit is a·(x·w) + c with a = 1/m > 0 and c real, the
  continuous multiplier of Liu et al. (2022), not a grid of scales;
* **one scale** (``fitted=False``): the problem's own scale and intercept convention (a whole
  intercept within its range, or a real one), as in Ustun & Rudin (2019).

The objective is the mean logistic loss + Σ c0_j over the columns used.

Search
------
A support is the set of design columns a risk score uses (all its points nonzero).  The columns
are ordered once, the most informative alone first (least saturated loss, bound B1 of
:mod:`riskformula.solver.cells`).  A depth-first search lists supports as sequences of positions
in that order; a node S has a list of later positions, and its children are S + order[q] for each
q of the list that the size limit (``max_size``: ungrouped columns and groups count one each) and
the groups' ``max_used`` allow, each with the positions after q in the list.  The root's list is
every position; a node's list is the rest of its parent's, in the parent's order — the order of
the search, or one B8 chose (item 3).  A support's first listed column names the child it is
below, so every support appears once, whatever the order of each list.  At a node:

1. **Its own risk scores** (when S meets ``min_size``): pruned when B1 of S + c0(S) cannot beat the
   incumbent (the bound holds for every point vector on S, every scale, every intercept);
   otherwise every point vector with all of S nonzero is listed (for the fitted scale, only
   primitive vectors — gcd 1 — since w and g·w give the same risk scores once the scale absorbs
   g), pruned by the bound of its score cells (B2), and the rest calibrated exactly: the best
   (a, c) by a damped Newton search on the convex loss (fitted scale) or the best intercept
   (:func:`~riskformula.solver.enumeration._best_intercepts`), each with a proven lower bound
   (B3: the calibration dual, exactly feasible; B4 for a whole intercept).
2. **Its subtree**: the child S + order[q] and everything below it use only the columns of S,
   order[q] and the positions after q in the list (order[q:] in the search's order), so B1 of
   their union + c0(S) + c0(order[q]) bounds all of them (B1 of more columns too); these bounds
   rise along the list (a union with more columns has finer cells, so a lower B1, and it bounds
   the later children's subtrees too), so a child whose subtree is pruned prunes every later
   sibling.  The
   union bound is computed at a few positions found by bisection (:meth:`SupportSearch._union_bounds`):
   the children from the first position that reaches the prune level on are recorded with that
   one bound and never pushed, each earlier child gets the bound of the nearest computed position
   at or before its own, and only those earlier children get their own supports' B1.
3. **B8, the family's regression** (:meth:`SupportSearch._family_bounds`).  Every risk score below
   the children from position q on has logits a·w·x + c over the columns of S ∪ order[q:] with
   a·w real, so the least loss of the logistic regression on all those columns (real
   coefficients, real intercept: the node's *family*) bounds them all — at every scale and
   intercept, whatever the points.  B1 of the union lets each cell take any logit, the regression
   only logits linear in the columns, so B8 is far stronger with many columns (on the exact
   track's adult at size 10, the root's children from position 2 on, against 13 for B1).  It is
   computed at a few positions, searched for from where the parent's B8 first pruned (or, at
   first, from the smallest family, the last child's), by the gap bound of
   :func:`~riskformula.solver.support_points.family_lr_bound` (radii near 2G/λ; the exact column
   reduction, found once for all the columns; a retry without the cells the regression
   separates), and only where it pays (:meth:`SupportSearch._family_pays`: a speed rule, no
   bound depends on it).  At a node without groups or rows, below the root, in a tree of at
   least 4 096 supports, B8 also chooses the order of the node's list
   (:meth:`SupportSearch._family_order`): the family of the columns not yet placed is bounded,
   and while it does not reach the prune level, the column its regression leans on most becomes
   the next child (up to three), then the first child whose family prunes is found by bisection;
   the columns that keep the family's loss low so come first, and the family of the rest soon
   prunes every later child (the exact track's adult at size 10 is certified in about 40 s
   instead of 165 s, mammo at size 10 in 4 s instead of 14 s).  The children that B1 of their
   union already rules out keep their places; a node's union bounds take the cells of its list's
   columns (a suffix of the order refined by at most four others, else the suffix from the least
   of them: finer cells, a lower B1).  The exact
   track of csinva/agentic-imodels (``evolve_slim``, not packaged) bounds its subtrees by the
   same family regression and orders its candidates so (its P13); the code and proofs here are
   our own.

**Real-valued columns.**  Rows with real (not whole) values rarely share cells, so B1 is near 0
there and prunes little.  Each support is then bounded by its logistic regression (B5 by the
strong-convexity gap bound of :mod:`riskformula.solver.support_points` at the regression's Newton
point, every column scaled by a power of two: :func:`~riskformula.solver.support_points.real_lr_bound`),
a node's children that are leaves all at once (:meth:`SupportSearch._leaf_regressions`), and the
columns are ordered by that bound alone.  At a node two size units short of the limit (no groups
or rows), B8 is also taken by *blocks* (:meth:`SupportSearch._block_pairs`): the node's list is cut
into blocks of :attr:`SupportSearch.block_size` columns, every support below the node lies in its
columns and at most two blocks, so the regression on that union bounds them, and a pair of blocks
that prunes rules out every such support inside it — the children's own supports and their
leaves, which are then never regressed one by one (spambase at size 4: the tree is done in about
30 s, where 60 s did half of it).  B7 (the prefixes' bound) lists their point vectors, with
each computed prefix score's rounding bound carried into the gap bound
(:mod:`riskformula.solver.support_points`, *Computed designs*).  B2 is not used (it groups cells
by equal scores, which only exact scores tell); B3 and B4 take each computed score's rounding
bound (:func:`~riskformula.solver.cells.scores`).  For every scale > 0 (and not in a worker's
round) the listing of each support is put off, after the whole vectors along its
regression's ray, until the rest of the tree is bounded; the supports left are then listed least
bound first (:meth:`SupportSearch._listings`): the regression's bound is close to a support's
best, so the first listings give the incumbent that rules out the rest.

**Separable data at c0 > 0 (B9).**  Once the incumbent (the separating start's, first right after
its narrowest beam, or the first of the tree's that qualifies; B9 runs in the calling process,
again only for a cheaper incumbent, at most three times) is below the least loss of any score
that leaves an event row at or below a non-event row (:func:`~riskformula.solver.purity.pair_floor`),
only supports whose cells are pure and linearly separable can beat it, and
:class:`~riskformula.solver.purity.SeparationProof` reaches those below the prune level by
branching on the columns of a pair of rows left together, ruling out nodes by a packing of row
pairs (each needs an item of its own) and pure supports by a crossing witness (equal sums of two
event and two non-event cells).  When it closes,
its bound covers every support and the rest of the tree is not searched; otherwise nothing it did is used
(:meth:`SupportSearch._separated`).

**Certificate.**  Every risk score of the class has one support; the search either scored it,
or discarded a set holding it with a proven bound (each recorded).  The lower bound is the least
of the incumbent and every recorded bound, so no risk score of the class has a lower objective.
Bounds are rounded down as :mod:`riskformula.solver.cells` states; pruning uses the package's
gap tolerances, and what they prune is recorded at its own bound.  At the time limit the
unexplored subtrees (the stack) add their bounds, so the bound stays valid.

**Splitting.**  The children of any node cover disjoint sets of supports (their first column in
the order differs), so the tree splits into independent subtrees — for example the children of
the root, or of any node, given as (support, position) pairs — whose certificates merge by taking
the least bound and the best incumbent; only the incumbent needs to be shared for pruning.  With
``n_jobs`` > 1 the calling process searches alone for half the time limit, at most 2 s (5 s for a
problem of 10⁶ rows × columns or more, which each round sends to the workers;
:attr:`SupportSearch.alone_share`, :attr:`~SupportSearch.alone_small`,
:attr:`~SupportSearch.alone_cap`: a tree done by then never pays for the rounds), and on until the
stack holds 4 subtrees per process, then runs *rounds* on joblib's loky processes: the subtrees
are dealt out in turn from the top of the stack into 4 shares per process (one for the large
problems, and on a dask cluster), which the processes take one at a time as they come free; each
share is searched from the best incumbent of the previous round until the round's end, and returns
its incumbent, the least bound it recorded and the subtrees it did not finish (a support whose listing the round's
end cut short is returned whole and its partial bounds dropped, so it is listed again).  Every
support is in exactly one share or back on the stack, so the merged certificate (the least of
every bound and the best incumbent) is valid.  Rounds last 5 % of the time limit (at least 1 s)
and double each time, so a support that needs longer than a round gets it later.  A worker keeps
its search from one round to the next of the same fit (:func:`_subtrees`), so the regressions its
earlier shares solved start its later ones.

With a dask.distributed ``client`` the same rounds run on the cluster's workers (``client.submit``
of one share per worker thread, the problem scattered to them once): 4 subtrees per worker
thread before the first round, the incumbent shared only between rounds, the same merge.  Only
the support search uses the cluster: when it hands over to the branch-and-cut, the tree runs on
``n_jobs`` processes of the calling machine.

Qualification (:func:`why_not`): no constraint rows, auxiliary columns or indicators (fairness,
net benefit, operational constraints keep the branch-and-cut), whole-count weights, small integer
predictors, point ranges that include 0, and for the fitted scale a real intercept with the
default intercept range.
"""

from __future__ import annotations

import bisect
import collections
import copy
import heapq
import math
import threading
import time
import uuid
from contextlib import contextmanager

import numpy as np

from .._heap import kept_heap
from ..errors import SettingsError
from ..problem import RiskProblem
from ..problem.problem import intercept_bounds
from . import kernels
from .cells import (EPS, CellData, ball_bounds, calibrate_fitted, cell_losses, dense_ids, dual_bound, grouped_saturated,
                    lr_bound, scores, support_cells, vector_ball_bounds)
from .enumeration import _best_intercepts
from .heuristics import polish, real_beam_search
from .report import SolverReport
from .purity import SeparationProof, pair_floor
from .separation import may_separate, pure_supports, separated_loss, separating_points
from .support_points import (batch_gap_bound, batch_regression, canonical, family_lr_bound, prefix_bounds,
                             real_lr_bound, unit_scales, whole_combinations)

__all__ = ["SupportSearch", "SupportRules", "why_not", "ENGINE_NAME"]

ENGINE_NAME = "riskformula support enumeration with cell bounds"
#: the floating-point operations per second assumed when B8 decides whether a family's regression
#: (``family_iters`` Newton steps, each about C·w² + w³/3 for C cells and w columns) fits in
#: ``FAMILY_SHARE`` of the time left, so that the regressions of one node (each within that share of
#: what is left after the last) cannot run past the time limit; 3–8·10⁹ measured on one core of the
#: benchmark machine on the slow ones (wide designs, and mushroom's 114 columns on 6 499 cells), so
#: this errs towards skipping
FAMILY_FLOPS = 2e9
FAMILY_SHARE = 0.25
#: the same for the count of a node two columns short of the size limit (``_grandchildren``): at
#: most n·D² pairs of 1s for n rows and D later columns, counted at this rate (8 ms measured for
#: 755 rows × 190² on the benchmark machine, 44 s for 569 × 10 604² with its arrays of gigabytes)
PAIRS_PER_SECOND = 2e8


def fits_in_time(work: float, rate: float, left: float) -> bool:
    """Whether ``work`` operations at ``rate`` per second fit in :data:`FAMILY_SHARE` of the
    ``left`` seconds: the guard of a bound that need not be computed (one skipped rules nothing
    out), so that the bounds of one node cannot run past the time limit."""
    return work <= rate * FAMILY_SHARE * max(left, 0.0)


def regression_fits(iters: int, rows: int, width: int, left: float) -> bool:
    """:func:`fits_in_time` for ``iters`` Newton steps of a regression on ``rows`` rows (or cells)
    and ``width`` columns, each about rows·width² + width³/3 operations at :data:`FAMILY_FLOPS`."""
    return fits_in_time(iters * (rows * width * width + width ** 3 / 3), FAMILY_FLOPS, left)


#: a problem of at least this many rows × columns goes to joblib's workers in one share per
#: worker and round, after ``SupportSearch.alone_cap`` seconds alone (each share carries the rows)
SHIP_ENTRIES = 1_000_000
#: what the certificate of each model class covers, in words (the report's ``settings["scope"]``)
SCOPES = {True: "every score scale > 0 and every real intercept",
          False: "the one score scale searched, with its intercept convention"}


def why_not(problem: RiskProblem, fitted: bool, default_intercepts: bool = True) -> str:
    """Why the support search cannot certify ``problem`` ("" when it can)."""
    p = problem
    if p.n_extra_aux or p.has_aux_cost or p.exact_rows or p.indicators:
        return "the problem has auxiliary variables (fairness, risk or operational constraints)"
    if support_rows(p) is None:
        return "a constraint row reads the points, not only which terms are used"
    if np.any(p.coef_lower > 0) or np.any(p.coef_upper < 0):
        return "some point range excludes 0"
    if fitted and not (p.loss.real_intercept and default_intercepts):
        return "a fitted scale needs a real intercept over its default range"
    return CellData.why_not(p.loss)


def _rows(a: np.ndarray | None, idx) -> np.ndarray | None:
    return None if a is None else a[idx]


def support_rows(problem: RiskProblem):
    """The problem's constraint rows as rules on the support alone — (coefficients per column,
    per group, lower, upper): Σ over the columns used + Σ over the groups used within [lower,
    upper] (``at_most``, ``not_both``, ``implies``, ``max_variables``, a threshold's number of
    cuts) — or None when some row reads the points or other variables."""
    p, lay = problem, problem.layout
    d, out = p.d, []
    a0 = lay.alpha(0)
    g0 = lay.aux(p.n_extra_aux)
    for row in p.rows:
        col, grp = np.zeros(d), np.zeros(len(p.groups))
        for k, v in row.coefs.items():
            k = int(k)
            if a0 <= k < a0 + d:
                col[k - a0] += float(v)
            elif g0 <= k < g0 + len(p.groups):
                grp[k - g0] += float(v)
            else:
                return None
        out.append((col, grp, float(row.lower), float(row.upper)))
    return out


def ray_vectors(direction: np.ndarray, lower: np.ndarray, upper: np.ndarray, steps: int = 48) -> np.ndarray:
    """Whole point vectors near the ray {t·direction : t > 0}: round(t·direction) clipped to the
    bounds for ``steps`` multipliers t (the largest |entry| from 0.5 to its bound), zero rows
    dropped, each divided by its gcd, duplicates removed (the star search of Liu et al., 2022).
    Only starting points: whatever they score is then attained by a calibrated risk score."""
    d = np.asarray(direction, dtype=float)
    big = float(np.abs(d).max()) if d.size else 0.0
    if not d.size or not np.isfinite(big) or big <= 0:
        return np.zeros((0, d.size), dtype=np.int64)
    top = float(max(np.max(np.abs(np.r_[lower, upper])), 1.0))
    t = np.linspace(0.5, top + 0.49, steps) / big
    Wv = np.clip(np.rint(t[:, None] * d[None, :]), lower, upper).astype(np.int64)
    Wv = Wv[np.abs(Wv).sum(axis=1) > 0]
    if not len(Wv):
        return Wv
    g = np.gcd.reduce(np.abs(Wv), axis=1)
    Wv = Wv // g[:, None]
    return np.unique(Wv, axis=0)


def _first(test, lo: int, hi: int) -> int:
    """The least i in [lo, hi] with ``test(i)`` true, by bisection, for a test false before some
    index and true from it on (``test(hi)`` is taken to be true and not called)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if test(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi


class SupportRules:
    """The size limit, the groups' ``max_used`` and the support rows of a search over supports
    (the logistic :class:`SupportSearch` and the Cox :class:`~riskformula.solver.cox_support.CoxSupportSearch`);
    needs ``p`` (the problem), ``group_of``, ``caps`` and ``rows`` (:func:`support_rows`)."""

    p: RiskProblem
    group_of: np.ndarray
    caps: list
    rows: list

    def _allowed(self, units: int, counts: dict, j: int) -> tuple[bool, int]:
        """Whether column j may join a support with ``units`` size units and group ``counts``,
        and the units after it."""
        g = int(self.group_of[j])
        if g < 0:
            return units + 1 <= self.p.max_size, units + 1
        used = counts.get(g, 0)
        if used >= self.caps[g]:
            return False, units
        if used:
            return True, units
        return units + 1 <= self.p.max_size, units + 1

    def _row_values(self, cols) -> list[float]:
        groups = {int(self.group_of[j]) for j in cols} - {-1}
        return [float(col[list(cols)].sum()) + float(sum(grp[g] for g in groups)) for col, grp, _, _ in self.rows]

    def _rows_hold(self, cols) -> bool:
        return all(lo - 1e-9 <= v <= hi + 1e-9 for v, (_, _, lo, hi) in zip(self._row_values(cols), self.rows))

    def _units(self, cols) -> int | None:
        """The size units of the support ``cols``, or None when it breaks the size limit or a
        group's ``max_used``."""
        units, counts = 0, dict[int, int]()
        for j in cols:
            ok, units = self._allowed(units, counts, j)
            if not ok:
                return None
            g = int(self.group_of[j])
            if g >= 0:
                counts[g] = counts.get(g, 0) + 1
        return units

    def _fits(self, cols) -> bool:
        units = self._units(cols)
        return units is not None and self.p.min_size <= units <= self.p.max_size and self._rows_hold(cols)


class SupportSearch(SupportRules):
    """Depth-first search over supports with cell bounds (see the module docstring).

    Parameters
    ----------
    problem : a qualifying :class:`~riskformula.problem.RiskProblem` (its loss at any scale for
        ``fitted=True``; the scale searched otherwise).
    fitted : certify over every score scale > 0 (True) or the problem's own scale (False).
    time_limit, gap_tolerance, absolute_gap_tolerance : as for the branch-and-cut.
    max_vectors : point vectors one support may list; a support with more makes the search
        give up (status ``"too_large"``: the caller falls back to the branch-and-cut), except for a
        fitted scale on three columns or more, whose prefixes B7 prunes.
    beam : start from the supports of a real beam search (Liu et al., 2022).
    n_jobs : processes for the subtrees (see *Splitting*); 1 searches in this process.
    client : a dask.distributed ``Client``, or a scheduler's address (a client is made for the
        search and closed after it): the subtrees run on its workers instead (see *Splitting*).
    checkpoint : seconds after which the search goes on only while the part of the tree done so
        far (supports scored or ruled out, of the most the tree can hold) projects the whole within
        ``time_limit`` (elapsed × total / done); otherwise it stops with status ``"too_large"``
        (the caller hands over).  None: no checkpoint.  The early give-up (:attr:`give_up`) waits
        for 40 % of the smaller of the two (25 % with real-valued columns).
    coarse : design columns of a smaller class to search first, for a start (see
        :meth:`_coarse_start`; the caller's choice, e.g. a quantile grid of each threshold's cuts);
        None: none.
    """

    #: the share of the time limit the search of the ``coarse`` columns may take (see _coarse_start)
    coarse_share = 0.3

    #: with ``n_jobs`` > 1 or a cluster, the calling process searches alone for this share of the
    #: time limit, at most ``alone_cap`` seconds, before the first round: a tree it finishes by
    #: then never pays for the rounds (each worker's setup and the rows sent to it, every round).
    #: 10⁶ rows × 20 items at size 5: one process certified in 2.6 s; two, starting rounds at
    #: once, had done 74 % of the tree when the 4.9 s share ran out
    alone_share = 0.5
    alone_cap = 5.0
    #: ``alone_cap`` for a problem of fewer than :data:`SHIP_ENTRIES` rows × columns, which the
    #: rounds send quickly: there the calling process alone is one core idle (spambase at size 5 on
    #: 2 processes: 9.5 s before the first round with 5 s alone, against 3.7 s with 1 s)
    alone_small = 2.0
    #: the shares of the subtrees per worker in each round on joblib's processes (see _run_parallel);
    #: one for a problem of at least :data:`SHIP_ENTRIES` rows × columns (each share carries it), and
    #: on a dask cluster (spambase at size 5 on a LocalCluster(2): 107.6 s with four, 99.5 s with one)
    shares_per_worker = 4

    def __init__(self, problem: RiskProblem, fitted: bool, time_limit: float = 60.0, gap_tolerance: float = 1e-6,
                 absolute_gap_tolerance: float = 1e-8, max_vectors: float = 2e6, beam: bool = True, n_jobs: int = 1,
                 client=None, checkpoint: float | None = None, coarse=None):
        self.p = problem
        self.coarse = None if coarse is None else sorted({int(j) for j in coarse})
        self.fitted = bool(fitted)
        self.time_limit = float(time_limit)
        self.gap_tolerance = float(gap_tolerance)
        self.absolute_gap_tolerance = float(absolute_gap_tolerance)
        self.max_vectors = float(max_vectors)
        self.beam = beam
        self.n_jobs = max(1, int(n_jobs))
        self.client = client
        self._cluster = False  # whether the subtrees ran on a dask cluster (for the report)
        #: a support cut short by the time goes back on the stack whole (a worker's round) instead
        #: of being recorded at its bound
        self.requeue = False
        #: after this many seconds, give up when the work done so far projects the whole tree to more
        #: than ``give_up`` times the time limit (status "too_large": the caller falls back); the
        #: first supports are the costliest (the most informative columns, listed before the
        #: incumbent is good), so the projection waits for 40 % of the time and allows 30×
        self.checkpoint = None if checkpoint is None else float(checkpoint)
        self.projection_after = max(1.0, 0.4 * min(self.time_limit, self.checkpoint or math.inf))
        self.give_up = 30.0
        self.data = CellData(problem.loss)
        if self.data.real:
            # real predictors: every support is bounded by a regression, at a steady cost per
            # support, so the projection settles once the start is over (spambase at size 4: 11×
            # the limit from 10 s to 47 s; at size 3, which finishes in 40 s, 1.2-1.4× from 15 s):
            # it is read after 25 % of the time and allows 3×
            self.projection_after = max(1.0, 0.25 * min(self.time_limit, self.checkpoint or math.inf))
            self.give_up = 3.0
        d = problem.d
        self.c0 = np.asarray(problem.c0, dtype=float)
        self.values = [np.array([v for v in range(int(problem.coef_lower[j]), int(problem.coef_upper[j]) + 1) if v],
                                dtype=np.int64) for j in range(d)]
        self.group_of = np.asarray(problem._group_of)
        self.caps = [len(g.cols) if g.max_used is None else int(g.max_used) for g in problem.groups]
        self.rows = support_rows(problem) or []
        self.best = math.inf
        #: children's and grandchildren's B1 at once two columns short of the size limit (see _grandchildren)
        self.leaf_pass = True
        self.best_lam: np.ndarray | None = None
        self.best_scale = float(problem.loss.scale)
        self.discarded = math.inf  # the least bound of everything ruled out without scoring it
        self.nodes = 0
        self.vectors = 0
        self.lr_solves = 0
        self._theta: np.ndarray | None = None  # the last support's regression (a calibration start)
        #: B5 and the regression of each support solved (see :meth:`_support_lr`)
        self._lr_cache: dict[tuple, tuple[float, np.ndarray]] = {}
        #: Newton steps of B5's regression (12 reach a decrement below 10⁻¹⁰ of the loss on the
        #: exact track's problems; fewer steps only weaken the bound, never invalidate it)
        self.lr_iters = 12
        #: Newton steps of the children's batched regressions (:meth:`_leaf_regressions`), from the
        #: parent's point: on spambase at size 3, 10 steps rule out all but about 1 100 of 29 000
        #: children (4 steps: 18 000 pass and are bounded one by one, 80 s against 68 s in all with
        #: a first, row-by-row batch); a child they do not rule out is bounded again with
        #: :attr:`lr_iters` steps when it is searched
        self.leaf_iters = 10
        #: supports whose listing waits (bound, tie-break, columns, c0 sum): see :meth:`_listings`
        self._deferred: list = []
        #: whether a real-valued support's listing may wait (see :meth:`_listings`); not before the
        #: rounds of several processes (:meth:`_run_parallel`), where the waiting listings would all
        #: come at the end of the calling process's share, with the workers idle
        self.defer = True
        #: seconds alone before a dask cluster's workers load the compiled loops (:meth:`_run_parallel`)
        self.warm_after = 0.5
        self._off: tuple | None = None  # each column's most frequent value and other rows (_leaf_regressions)
        #: the last coefficients of each pair of blocks' columns (a start for :meth:`_block_pairs`)
        self._block_warm: dict[tuple, np.ndarray] = {}
        #: the design's columns scaled by :func:`unit_scales` over every row, and those scales (a
        #: pair of blocks' regression reads every row: its columns' scales are these, made once)
        self._unit_X: tuple[np.ndarray, np.ndarray] | None = None
        self.root_bound = 0.0
        #: whether B9 (:meth:`_separated`) certified the search
        self._separation = False
        #: the prune level at which B9 last stopped at a pure support without a witness (it is tried
        #: again only for a cheaper incumbent; inf: not yet; -inf: never again), and its floor
        #: (found when first asked)
        self._separation_tried = math.inf
        self._separation_runs = 0  # at most three
        self._floor: float | None = None
        #: when the time started (``solve`` sets it again): the clock of a search used in parts
        self.t0 = time.perf_counter()
        #: when the starts' shares of the time begin (after :meth:`_coarse_start`)
        self._started = self.t0
        #: Newton steps of the first calibration stage (see :meth:`_calibrate`)
        self.first_steps = 4
        #: how many point vectors each bound ruled out (B6, B2, the first calibration stage), how many
        #: were calibrated to the end, and the prefixes B7 bounded and ruled out (for profiling)
        self.stats = {"b6": 0, "b2": 0, "stage1": 0, "full": 0, "b7": 0, "b7_pruned": 0, "b8": 0, "b8_pruned": 0,
                      "b8_orders": 0, "b8_too_wide": 0, "block_pairs": 0, "block_leaves": 0, "block_own": 0}
        #: B8 (the family's regression) bounds the subtrees the union's B1 leaves (see _family_bounds)
        self.family = True
        #: Newton steps of B8's regressions
        self.family_iters = 20
        #: where B8 is tried on a node without groups or rows, below the root, in a tree of at least
        #: ``order_tree`` supports, its children's order is chosen by B8's regressions (see
        #: _family_order); otherwise they follow the search's column order.  The root's order
        #: (the most informative alone first) finds a good incumbent soonest, and in a small tree
        #: listing the point vectors costs most and the order supports are listed in matters more
        #: (breastcancer at size 10, 512 supports: 19 s with the choice, 7.5 s without; adult at
        #: size 10: 41 s against 165 s, mammo at size 10 4 s against 14 s)
        self.reorder = True
        self.order_tree = 4096.0
        #: how many columns _family_order places before its bisection
        self.order_steps = 3
        #: the block size of :meth:`_block_pairs` (0: off)
        self.block_size = 3
        #: the union bound of a list's tail refines a suffix's cells by at most this many columns
        self.union_refines = 4

    # --- bookkeeping ------------------------------------------------------------------------
    def _prune_level(self) -> float:
        return self.best - max(self.gap_tolerance * abs(self.best), self.absolute_gap_tolerance) \
            if math.isfinite(self.best) else math.inf

    def _discard(self, bound: float) -> None:
        self.discarded = min(self.discarded, float(bound))

    def _left(self) -> float:
        return self.time_limit - (time.perf_counter() - self.t0)

    # --- one support --------------------------------------------------------------------------
    def _support_lr(self, cols: tuple, Xc: np.ndarray, P: np.ndarray, Q: np.ndarray) -> float:
        """B5 of the support ``cols`` (:func:`~riskformula.solver.cells.lr_bound`), its regression
        left in ``self._theta``.  Each support's regression is kept (until the cache holds 2¹⁶),
        so that a support is not solved twice (its bound, then its listing) and its children's
        Newton steps start from it (its coefficients, 0 for the new column): only a start point,
        the bound's proof does not depend on it."""
        hit = self._lr_cache.get(cols)
        if hit is not None:
            lr, self._theta = hit
            return lr
        parent = self._lr_cache.get(cols[:-1])
        start = np.r_[parent[1], 0.0] if parent is not None else None
        if self.data.real:
            lr, self._theta = real_lr_bound(Xc, P, Q, self.data.W, iters=self.lr_iters, start=start)
        else:
            lr, self._theta = lr_bound(Xc, P, Q, self.data.W, iters=self.lr_iters, start=start)
        if len(self._lr_cache) >= 1 << 16:
            self._lr_cache.clear()
        self._lr_cache[cols] = (lr, self._theta)
        return lr

    def _score_support(self, cols: tuple, cell: np.ndarray, n_cells: int, c0S: float, support_bound: float,
                       ray_only: bool = False) -> bool:
        """List and calibrate the point vectors with support exactly ``cols``; False when the
        time ran out (the support's bound is then recorded).  ``ray_only``: only the whole vectors
        along its regression's ray (a start; the listing is left to the caller)."""
        Xc, P, Q = support_cells(self.data, cell, n_cells, cols)
        if not cols:
            self._calibrate(np.zeros((1, 0), dtype=np.int64), np.zeros((1, n_cells)), P, Q, cols, c0S)
            return True
        sizes = [len(self.values[j]) for j in cols]
        total = int(np.prod(sizes))
        # the regression on the support's cells (B5's) and its strong-convexity balls (B6)
        self._support_lr(cols, Xc, P, Q)
        assert self._theta is not None
        balls: tuple[list, np.ndarray | None]
        if self.data.real:
            # real predictors: the balls in the units of :func:`unit_scales` (powers of two: exact),
            # where the regression's coefficients are of order one, so one list of radii fits
            e = unit_scales(Xc, P + Q)
            balls = (ball_bounds(Xc * e[None, :], P, Q, self._theta / np.r_[1.0, e]), e)
        else:
            balls = (ball_bounds(Xc, P, Q, self._theta), None)
        if self.fitted and len(cols) > 1:
            # the whole vectors along the regression's ray first: a good incumbent prunes the listing
            top = max(int(np.abs(self.values[j]).max()) for j in cols)
            Wr = ray_vectors(self._theta[1:], np.full(len(cols), -top), np.full(len(cols), top))
            Wr = Wr[np.all(Wr != 0, axis=1)] if len(Wr) else Wr
            ok = np.all([np.isin(Wr[:, k], self.values[j]) for k, j in enumerate(cols)], axis=0) if len(Wr) else []
            Wr = Wr[ok] if len(Wr) else Wr
            if len(Wr):
                Sr, serr = scores(Wr, Xc, self.data.real)
                self._calibrate(Wr, Sr, P, Q, cols, c0S, serr)
        if ray_only:
            return True
        if self.fitted and len(cols) > 2:
            found = self._prefixes(cols, Xc, P, Q, c0S, support_bound)
            if found is None:
                self._discard(support_bound)
                return False
            pref, pb = found
            last = self.values[cols[-1]]
            step = max(1, (1 << 15) // max(len(last), 1))
            for b0 in range(0, len(pref), step):
                if self._left() <= 0:
                    self._discard(support_bound)
                    return False
                part, bound = pref[b0:b0 + step], pb[b0:b0 + step]
                Wv = np.column_stack([np.repeat(part, len(last), axis=0), np.tile(last, len(part))])
                lb = np.repeat(bound, len(last))
                prim = np.gcd.reduce(np.abs(Wv), axis=1) == 1
                if not self._list(Wv[prim], lb[prim], Xc, P, Q, cols, c0S, balls):
                    self._discard(support_bound)
                    return False
            return True
        chunk = max(1, min(total, 1 << 15))
        for start in range(0, total, chunk):
            if self._left() <= 0:
                self._discard(support_bound)
                return False
            idx = np.arange(start, min(total, start + chunk))
            pos = np.unravel_index(idx, sizes)
            Wv = np.column_stack([self.values[j][q] for j, q in zip(cols, pos)])
            if self.fitted and len(cols) > 1:
                Wv = Wv[np.gcd.reduce(np.abs(Wv), axis=1) == 1]
            if not self._list(Wv, np.full(len(Wv), -np.inf), Xc, P, Q, cols, c0S, balls):
                self._discard(support_bound)
                return False
        return True

    def _prefixes(self, cols: tuple, Xc: np.ndarray, P: np.ndarray, Q: np.ndarray, c0S: float,
                  support_bound: float):
        """The prefixes (points of every column of ``cols`` but the last) that B7
        (:mod:`riskformula.solver.support_points`) does not rule out, with their bounds; the
        bound of every prefix ruled out is recorded.  None when the time ran out."""
        s = len(cols)
        W = self.data.W
        pref = self.values[cols[0]][:, None]
        pb = np.full(len(pref), float(support_bound))
        for t in range(1, s - 1):
            vals = self.values[cols[t]]
            kids = np.column_stack([np.repeat(pref, len(vals), axis=0), np.tile(vals, len(pref))])
            kb = np.repeat(pb, len(vals))
            canon, inv = np.unique(canonical(kids), axis=0, return_inverse=True)
            inv = inv.ravel()
            if self._left() <= 0:
                return None
            # chunks of at most ~5·10⁵ design entries: a chunk takes well under a second, so the time
            # limit is looked at often enough
            chunk = max(1, 500_000 // max(1, Xc.shape[0] * (s - t + 1)))
            cb = prefix_bounds(canon, Xc, P, Q, W, t, chunk, left=self._left, real=self.data.real)
            if cb is None:
                return None
            cb = cb + c0S * (1 - 4 * EPS)
            self.stats["b7"] += len(canon)
            kb = np.maximum(kb, cb[inv])
            keep = kb < self._prune_level()
            if (~keep).any():
                self._discard(float(kb[~keep].min()))
                self.stats["b7_pruned"] += int((~keep).sum())
            pref, pb = kids[keep], kb[keep]
            if not len(pref):
                break
        return pref, pb

    def _list(self, Wv: np.ndarray, lb: np.ndarray, Xc: np.ndarray, P: np.ndarray, Q: np.ndarray, cols: tuple,
              c0S: float, balls) -> bool:
        """Bound (B6, B2) and calibrate the point vectors ``Wv`` of the support ``cols`` whose bounds
        so far are ``lb``; False when the time ran out (the bounds of the vectors left are recorded)."""
        W = self.data.W
        if not len(Wv):
            return True
        balls, e = balls
        if balls and self._theta is not None:
            a_fixed = None if self.fitted else 1.0 / float(self.p.loss.scale)
            # in the balls' units (θ_j/e_j): the point a·w becomes a·(w_j/e_j)
            Wb, theta = (Wv, self._theta) if e is None else (Wv / e[None, :], self._theta / np.r_[1.0, e])
            lb = np.maximum(lb, vector_ball_bounds(Wb, theta, balls, W, a_fixed) + c0S * (1 - 4 * EPS))
        near = lb < self._prune_level()
        self.stats["b6"] += int((~near).sum())
        if (~near).any():
            self._discard(float(lb[~near].min()))
            Wv, lb = Wv[near], lb[near]
        if not len(Wv):
            return True
        S, serr = scores(Wv, Xc, self.data.real)
        if serr is None:
            # B2 groups the cells by equal scores: only exact (whole) scores tell which are equal
            lb = np.maximum(lb, grouped_saturated(S, P, Q, W) + c0S * (1 - 4 * EPS))
        keep = lb < self._prune_level()
        self.stats["b2"] += int((~keep).sum())
        if (~keep).any():
            self._discard(float(lb[~keep].min()))
        order = np.flatnonzero(keep)[np.argsort(lb[keep], kind="stable")]
        for b0 in range(0, len(order), 2048):
            part = order[b0:b0 + 2048]
            part = part[lb[part] < self._prune_level()]
            if not len(part):
                self._discard(float(lb[order[b0:]].min()))
                break
            self._calibrate(Wv[part], S[part], P, Q, cols, c0S, None if serr is None else serr[part])
            if self._left() <= 0:
                rest = order[b0 + 2048:]
                if len(rest):
                    self._discard(float(lb[rest].min()))
                return False
        return True

    def _calibrate(self, Wv: np.ndarray, S: np.ndarray, P: np.ndarray, Q: np.ndarray, cols: tuple, c0S: float,
                   serr: np.ndarray | None = None, best: bool = False,
                   regression_start: bool = True) -> tuple[float, np.ndarray, float] | None:
        """Exact calibration of point vectors ``Wv`` (scores ``S`` on the support's cells, with
        their rounding bounds ``serr`` for real predictors: see :func:`~riskformula.solver.cells.scores`):
        the best becomes the incumbent when it beats it; every lower bound is recorded.  With
        ``best`` (a fitted scale), the best vector's value, points (intercept first) and scale are
        returned, whether or not it beat the incumbent.  ``regression_start``: start each vector's
        calibration from the last support's regression (``self._theta``, when it is of ``cols``);
        otherwise from the intercept-only model."""
        W = self.data.W
        self.vectors += len(Wv)
        p = self.p
        if self.fitted:
            start = None
            if regression_start and cols and self._theta is not None and len(self._theta) == len(cols) + 1:
                # the regression's coefficients projected on each vector's direction
                th = self._theta[1:]
                a0 = (Wv @ th) / np.maximum((Wv * Wv).sum(axis=1), 1)
                start = (a0, np.full(len(Wv), self._theta[0]))
            # in two stages: a few Newton steps give every vector a dual bound (B3 holds at any
            # iterate), and only the vectors it does not rule out are calibrated to the end
            a, c, f, Z = calibrate_fitted(S, P, Q, iters=self.first_steps, start=start)
            lbs = dual_bound(S, Z, P, Q, W, serr=serr) + c0S * (1 - 4 * EPS)
            more = np.flatnonzero(lbs < self._prune_level())
            self.stats["stage1"] += len(lbs) - len(more)
            self.stats["full"] += len(more)
            if len(more):
                a2, c2, f2, Z2 = calibrate_fitted(S[more], P, Q, start=(a[more], c[more]))
                a[more], c[more], f[more] = a2, c2, f2
                lbs[more] = np.maximum(lbs[more], dual_bound(S[more], Z2, P, Q, W, serr=_rows(serr, more))
                                       + c0S * (1 - 4 * EPS))
                if start is not None:
                    # a start far out on the sigmoid's flat tails (a regression's diverging
                    # coefficients on nearly separable cells) can leave Newton's clipped steps short
                    # of the optimum, and the bound there loose: those vectors again from the
                    # intercept-only model, keeping the better point and the larger bound (both hold)
                    vals = f[more] / W + c0S
                    short = np.maximum(self.gap_tolerance * np.abs(vals), self.absolute_gap_tolerance)
                    loose = more[(lbs[more] < self._prune_level()) & (lbs[more] < vals - short)]
                    if len(loose):
                        a3, c3, f3, Z3 = calibrate_fitted(S[loose], P, Q)
                        better = f3 < f[loose]
                        a[loose] = np.where(better, a3, a[loose])
                        c[loose] = np.where(better, c3, c[loose])
                        f[loose] = np.where(better, f3, f[loose])
                        lbs[loose] = np.maximum(lbs[loose], dual_bound(S[loose], Z3, P, Q, W, serr=_rows(serr, loose))
                                                + c0S * (1 - 4 * EPS))
            if cols:
                # a = 0 is the limit of no scale: a scale of 10¹² points per logit and more stands
                # for it (the logits move by at most 10⁻¹²), so that the vector's value is attained
                flat = a <= 0
                if flat.any():
                    a = np.where(flat, 1e-12 / (1.0 + np.abs(S).max(axis=1)), a)
                    f = np.where(flat, cell_losses(a[:, None] * S + c[:, None], P, Q), f)
            vals = f / W + c0S
            self._discard(float(lbs.min()))
            k = int(np.argmin(vals))
            if vals[k] < self.best or best:
                m = 1.0 / a[k] if cols else 1.0
                lam = np.zeros(p.d + 1)
                lam[0] = c[k] * m
                lam[1 + np.asarray(cols, dtype=np.intp)] = Wv[k]
                if vals[k] < self.best:
                    self._offer(lam, m, float(vals[k]))
                return float(vals[k]), lam, m
            return None
        lo, hi = p.intercept_bounds
        m = float(p.loss.scale)
        b, loss = _best_intercepts(p, P, Q, S.T, lo, hi)
        vals = loss + c0S
        if p.real_intercept:
            Z = (S + b[:, None]) / m
            lbs = dual_bound(S, Z, P, Q, W, a_fixed=1.0 / m, serr=serr) + c0S * (1 - 4 * EPS)
        else:
            # B4: the computed loss of the best whole intercept, less its rounding and the
            # convexity slack over the intercept range
            C = S.shape[1]
            lbs = loss * (1 - (2 * (hi - lo + 1) + 2) * (C + 8) * 4 * EPS) - 4 * EPS + c0S * (1 - 4 * EPS)
            if serr is not None:
                # computed scores of real predictors: the exact logits (s_c + b)/m are within
                # serr_c/m of the computed ones, and a cell's loss has slope at most max(P_c, Q_c)
                lbs = lbs - (serr @ np.maximum(P, Q)) / m / W * (1 + 8 * EPS)
        self._discard(float(lbs.min()))
        k = int(np.argmin(vals))
        if vals[k] < self.best:
            lam = np.zeros(p.d + 1)
            lam[0] = b[k]
            lam[1 + np.asarray(cols, dtype=np.intp)] = Wv[k]
            self._offer(lam, m, float(vals[k]))
        return None

    def _offer(self, lam: np.ndarray, m: float, value: float) -> None:
        self.best, self.best_lam, self.best_scale = value, lam, m

    # --- the tree -----------------------------------------------------------------------------
    def _start(self) -> None:
        """An incumbent before the tree: the best score of the caller's smaller class, when it gave
        one (:meth:`_coarse_start`); on separable data (every scale > 0), a score that separates
        the rows (:meth:`_separating_start`); then, unless that score already meets the root's
        bound (with c0 = 0 its loss, below 10⁻¹⁵, is the infimum 0 within the tolerance) or B9
        closes on it (c0 > 0), the best point vector on each support of the sparse beam search of
        Liu et al. (2022) on real points."""
        self._started = self.t0
        if not self.beam or self.p.max_size < 1:
            return
        self._coarse_start()
        # the starts below have their shares of the time from here (the smaller class's search
        # took its own share)
        self._started = time.perf_counter()
        if self.fitted and self.root_bound == 0.0 and not self.data.real:
            try:
                self._separating_start()
            except (ValueError, FloatingPointError, np.linalg.LinAlgError):
                pass  # only a start: the tree and the beam below still search every support
            if self.root_bound >= self._prune_level():
                return  # the separating score meets the root's bound (c0 = 0): nothing can beat it
            if self._separation or self._separated():
                return  # B9 closed on the separating score (c0 > 0): nothing can beat it either
        try:
            found = real_beam_search(self.p, deadline=self._started + 0.05 * self.time_limit,
                                     stop=self._started + 0.1 * self.time_limit)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            return
        for lam in found[:5]:
            if time.perf_counter() - self._started >= 0.2 * self.time_limit:
                break
            cols = tuple(int(j) for j in np.flatnonzero(lam[1:]))
            if not cols or not self._fits(cols):
                continue
            cell, n_cells = self.data.partition(cols)
            if self.fitted:
                # every scale > 0: whole vectors along the ray of the beam's real points first; the
                # best of them improved by coordinate descent when it left a column of the beam's out
                ray_best = self._ray_start(cols, lam[1 + np.asarray(cols, dtype=np.intp)])
                if ray_best is not None and np.count_nonzero(ray_best[1][1:]) < len(cols):
                    self._polish_start(*ray_best)
            # only supports quick to list (vectors × cells): the tree lists the others in turn
            if np.prod([len(self.values[j]) for j in cols]) * n_cells > 4e6:
                continue
            c0S = float(self.c0[list(cols)].sum())
            if math.isfinite(self.best):
                Xc, P, Q = support_cells(self.data, cell, n_cells, cols)
                lr = self._support_lr(cols, Xc, P, Q)
                if lr + c0S * (1 - 4 * EPS) >= self._prune_level():
                    continue  # cannot beat the incumbent (the tree records the bound when it meets it)
            else:
                self._theta = None
            # the bound recorded if the time runs out here: 0 (a loss is never negative)
            self._score_support(cols, cell, n_cells, c0S, 0.0)

    def _coarse_start(self) -> None:
        """The best risk score over the ``coarse`` columns alone (the other columns' points fixed at
        0: a smaller class, every score of it in this one), found by a search like this one in at
        most :attr:`coarse_share` of the time limit (past a quarter of that, only while its work so
        far projects it to finish), as the incumbent — only when the class is less than half as
        wide.  The starts after it have their shares of the time from its end.  With every gap of
        a threshold a candidate the class can be too large to search in the time while a quantile
        grid of its cuts is certified in seconds and holds a score near the best (anes96 at size 5:
        195 cuts, the grid's 10 a variable certified in 7 s with the loss the whole class reached
        only after 10 minutes).  Only a start: every support of this class is still listed or
        ruled out, and nothing the smaller search bounded is kept."""
        if self.coarse is None:
            return
        usable = [j for j in range(self.p.d) if len(self.values[j])]
        keep = [j for j in self.coarse if len(self.values[j])]
        if not keep or 2 * len(keep) > len(usable):
            return
        mask = np.zeros(self.p.d, dtype=bool)
        mask[keep] = True
        q = copy.copy(self.p)
        q.coef_lower = np.where(mask, self.p.coef_lower, 0.0)
        q.coef_upper = np.where(mask, self.p.coef_upper, 0.0)
        limit = min(self.coarse_share * self.time_limit, self._left())
        # past a quarter of its share it goes on only while projected to finish in it (a class
        # still too large, as the 300 grid cuts of wdbc's 30 variables, hands the time back)
        sub = SupportSearch(q, self.fitted, time_limit=limit, gap_tolerance=self.gap_tolerance,
                            absolute_gap_tolerance=self.absolute_gap_tolerance, max_vectors=self.max_vectors,
                            checkpoint=0.25 * limit)
        try:
            report = sub.solve()
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            return
        self.stats["coarse_certified"] = int(report.status == "optimal")
        if report.solution and report.objective < self.best:
            self._offer(np.asarray(report.solution, dtype=float), float(report.scale), float(report.objective))

    def _separating_start(self) -> None:
        """On data whose cells under every column are pure (B1 of them all is 0) and separable by
        points within their ranges in the linear relaxation
        (:func:`~riskformula.solver.separation.may_separate`, asked once the narrowest beam has found
        a pure support): the pure supports
        of :func:`~riskformula.solver.separation.pure_supports` (beams of 10, 20 and 40), and on the
        cells of each beam's union of them the fewest whole points that separate the rows
        (:func:`~riskformula.solver.separation.separating_points`), at the scale where each row's
        loss is below 10⁻¹⁵ (:func:`~riskformula.solver.separation.separated_loss`); at most 5 % of
        the time limit.  The narrowest beam's union is tried first; the relaxation on every column
        is asked only before a wider beam, and no wider beam runs once the incumbent meets the
        root's bound, or B9 (:meth:`_separated`, tried after each beam's score) proves that no
        cheaper support separates the rows."""
        deadline = self._started + 0.05 * self.time_limit
        usable = [j for j in range(self.p.d) if len(self.values[j])]
        grouped = bool((np.asarray(self.group_of) >= 0).any())

        def can_add(cols: tuple, j: int) -> bool:
            if not grouped:
                return len(cols) < self.p.max_size
            return self._units(cols + (j,)) is not None

        tried: set[tuple] = set()
        for width in (10, 20, 40):
            if self.root_bound >= self._prune_level() or self._separation:
                return  # the last beam's score meets the root's bound, or B9 closed: no wider one can beat it
            found = pure_supports(self.data, usable, can_add, self.p.max_size, width=width, deadline=deadline)
            if width == 10 and not found:
                # the narrow beam finds no pure support within the size limit (mushroom at sizes 3–5):
                # the wider ones rarely do, and they would cost more than the rest of a small fit
                return
            cols = tuple(sorted(set().union(*found)))
            left = deadline - time.perf_counter()
            if cols and cols not in tried and left > 0:
                tried.add(cols)
                self._separating_on(cols, left)
                if self._separated():
                    return  # no cheaper support separates: no wider beam is needed
            if width == 10 and self.root_bound < self._prune_level():
                # wider beams only where the linear relaxation on every column separates the rows
                everything = self._suffix[0]
                order = list(self._order)
                Xc, P, Q = support_cells(self.data, everything, int(everything.max()) + 1, order)
                if not may_separate(Xc, P, Q, self.p.coef_lower[order], self.p.coef_upper[order],
                                    time_limit=deadline - time.perf_counter()):
                    return

    def _separating_on(self, cols: tuple, left: float) -> None:
        """Offer the fewest whole points on ``cols`` that separate the rows, if any are found
        within ``left`` seconds (:func:`~riskformula.solver.separation.separating_points`)."""
        cell, n_cells = self.data.partition(cols)
        Xc, P, Q = support_cells(self.data, cell, n_cells, cols)
        idx = list(cols)
        w = separating_points(Xc, P, Q, self.p.coef_lower[idx], self.p.coef_upper[idx], time_limit=left)
        if w is None:
            return
        sub = tuple(j for j, v in zip(cols, w) if v)
        if not self._fits(sub):
            return
        m, c, f = separated_loss(Xc @ w, P, Q)
        value = f / self.data.W + float(self.c0[list(sub)].sum())
        if value < self.best:
            lam = np.zeros(self.p.d + 1)
            lam[0] = c
            lam[1 + np.asarray(cols, dtype=np.intp)] = w
            self._offer(lam, m, value)

    def _ray_start(self, cols: tuple, direction: np.ndarray) -> tuple[float, np.ndarray, float] | None:
        """Calibrate the whole vectors near the ray of ``direction`` on ``cols`` (:func:`ray_vectors`),
        each on its own support (its nonzero columns, when that support is allowed), so that the
        incumbent is good before supports are listed; returns the best one's value, points and
        scale (None when none was calibrated)."""
        lo = np.array([self.values[j].min() if len(self.values[j]) else 0 for j in cols])
        hi = np.array([self.values[j].max() if len(self.values[j]) else 0 for j in cols])
        Wv = ray_vectors(direction, np.minimum(lo, 0), np.maximum(hi, 0))
        if not len(Wv):
            return None
        found = None
        patterns: dict[tuple, list[int]] = {}
        for i, row in enumerate(Wv):
            patterns.setdefault(tuple(int(cols[k]) for k in np.flatnonzero(row)), []).append(i)
        for sub, rows in patterns.items():
            if not self._fits(sub):
                continue
            keep = [k for k, j in enumerate(cols) if j in sub]
            got = self._calibrate_on(sub, Wv[np.asarray(rows)][:, keep])
            if got is not None and (found is None or got[0] < found[0]):
                found = got
        return found

    def _calibrate_on(self, cols: tuple, Wv: np.ndarray) -> tuple[float, np.ndarray, float] | None:
        """:meth:`_calibrate` of the whole vectors ``Wv`` on the support ``cols`` (its cells formed
        here, each vector from the intercept-only model: no regression's start), returning the best."""
        cell, n_cells = self.data.partition(cols)
        Xc, P, Q = support_cells(self.data, cell, n_cells, cols)
        S, serr = scores(Wv, Xc, self.data.real)
        return self._calibrate(Wv, S, P, Q, cols, float(self.c0[list(cols)].sum()), serr, best=True,
                               regression_start=False)

    def _polish_start(self, value: float, lam: np.ndarray, m: float) -> None:
        """Improve the whole vector ``lam`` (value ``value`` at its best scale ``m``) by coordinate
        descent at that scale (:func:`~riskformula.solver.heuristics.polish`, the DCD of Ustun &
        Rudin, 2019, as the rounding of Liu et al., 2022, ends), then calibrate the result on its
        own support (its best scale and intercept, offered when it beats the incumbent), while
        that lowers the value (at most three rounds).  The ray's vectors often round a column of
        the beam's support to 0 (a real point far smaller than the others: on the exact track's
        spambase at size 5 the beam's best support has one at 0.02 beside 4.6 and −5); the descent
        then gives the freed place to another column.  Only a start: every support is still
        listed, and the vectors calibrated here record their bounds as the listing's do."""
        for _ in range(3):
            if time.perf_counter() - self._started >= 0.2 * self.time_limit:
                return
            q = copy.copy(self.p)
            q.loss = self.p.loss.with_scale(m)
            q.intercept_bounds = intercept_bounds(q)
            new, _ = polish(q, lam, deadline=self._started + 0.2 * self.time_limit)
            cols = tuple(int(j) for j in np.flatnonzero(new[1:]))
            if not cols or np.array_equal(new[1:], lam[1:]) or not self._fits(cols):
                return
            got = self._calibrate_on(cols, new[1 + np.asarray(cols, dtype=np.intp)][None, :])
            if got is None or not got[0] < value:
                return
            value, lam, m = got

    def _rows_reachable(self, cols, rest_lo: list, rest_hi: list) -> bool:
        """Whether some support of the subtree of ``cols`` may satisfy the rows: the values can
        still move by at most [rest_lo, rest_hi] (the columns after it, and every group)."""
        return all(v + a <= hi + 1e-9 and v + b >= lo - 1e-9
                   for v, a, b, (_, _, lo, hi) in zip(self._row_values(cols), rest_lo, rest_hi, self.rows))

    def _prepare(self) -> list:
        """The column order, the suffixes' cells and the rows' reach; returns the root's stack."""
        data, p = self.data, self.p
        usable = [j for j in range(p.d) if len(self.values[j])]
        self._root_cell = np.zeros(data.n, dtype=np.int64)
        single = data.children_saturated(self._root_cell, 1, usable)
        if data.real and usable:
            # real predictors: B1 of one column mostly counts its distinct values; its regression's
            # B5 says how informative it is (only the order: every support is still listed)
            single = np.maximum(single, self._leaf_regressions((), np.asarray(usable, dtype=np.intp)))
        # columns that can be nonzero, the most informative alone first
        order = self._order = [usable[k] for k in np.argsort(single, kind="stable")]
        # the cells of every suffix order[q:] of the order, for the subtree bounds
        suffix = [np.zeros(data.n, dtype=np.int64) for _ in range(len(order) + 1)]
        for q in range(len(order) - 1, -1, -1):
            suffix[q], _ = data.refine(suffix[q + 1], order[q])
        self._suffix = suffix
        self.root_bound = data.saturated(suffix[0], int(suffix[0].max()) + 1 if data.n else 1)
        # how far each row's value can still move below a node whose next position is q
        self._reach = [(np.r_[np.cumsum(np.minimum(col[order], 0)[::-1])[::-1], 0.0] + np.minimum(grp, 0).sum(),
                        np.r_[np.cumsum(np.maximum(col[order], 0)[::-1])[::-1], 0.0] + np.maximum(grp, 0).sum())
                       for col, grp, _, _ in self.rows]
        L = len(order)
        # whether a grouped column comes at or after each position (a full support may still grow there)
        self._grouped_after = np.r_[np.cumsum((self.group_of[order] >= 0)[::-1])[::-1], 0] if L else np.zeros(1)
        self._below_tab: np.ndarray | None = None
        self._total, self._done = self._below(0, 0), 0.0
        # stack entries: (subtree bound, own bound, position after the last column, columns, units,
        # group counts, c0 sum, parent's cells, parent's cell count, B1 of its children when its
        # parent computed them: see _grandchildren, the positions of its children's columns in
        # their order when B8 chose one (see _family_order; the position is then the count of
        # positions after those, and None means every position from it on))
        self._groups_after: dict = {}
        self._ordered: tuple | None = None  # _grandchildren's copies of the data, made on first use
        # B8: each column's position, and the exact linear dependencies between the columns
        # (positions, each on earlier ones: one-hot levels, complementary items), found once
        self._position = {j: q for q, j in enumerate(order)}
        #: per depth (size units): B8's calls, seconds and supports ruled out (see _family_pays)
        self._family_use: dict[int, list] = collections.defaultdict(lambda: [0, 0.0, 0.0])
        self._family_total = [0.0, 0.0]  # B8's seconds and supports ruled out in all
        #: per depth: seconds and supports disposed of at its nodes, less B8's (see _clock)
        self._depth_use: dict[int, list] = collections.defaultdict(lambda: [0.0, 0.0])
        self._last_node: tuple | None = None
        #: seconds and supports done, every quarter second (_projected_past)
        self._progress: tuple[list, list] = ([], [])
        #: per node searched by B8: where it first pruned (a position; None) and its last
        #: regression's coefficients, a guess and a start for its children's B8
        self._family_hint: dict[tuple, tuple] = {}
        self._combos_found: dict[int, list[int]] | None = None  # see _combos
        # each column's standard deviation over the rows (weighted by their counts): B8's
        # coefficient times it says how much a column moves the logits (see _family_order)
        N = data.P + data.Q
        mean = N @ data.X / data.W if data.n else np.zeros(data.d)
        self._sd = np.sqrt(np.maximum(N @ (data.X - mean) ** 2 / data.W, 0.0)) if data.n else np.zeros(data.d)
        return [(self.root_bound, data.saturated(self._root_cell, 1), 0, (), 0, {}, 0.0, None, 1, None, None)]

    def _below(self, q: int, units: int) -> float:
        """Supports in the subtree of a node whose next position is q (an upper bound): its entry
        of :meth:`_below_table` (more units than max_size + 1 count as many as that)."""
        tab = self._below_table()
        return float(tab[q, min(units, tab.shape[1] - 1)])

    def _below_table(self) -> np.ndarray:
        """The supports of at most max_size − u more columns among the L − q after position q,
        Σ_{t ≤ max_size − u} comb(L − q, t) as a float of the exact integer sum, for every q ≤ L
        and size units u ≤ max_size + 1; built once per search (one entry at a time, 0.6 s at
        10 604 columns)."""
        if self._below_tab is None:
            L, K = len(self._order), self.p.max_size
            tab = np.empty((L + 1, K + 2))
            for q in range(L + 1):
                n, c, acc, sums = L - q, 1, 0, []
                for t in range(K + 1):  # c = comb(n, t), exactly
                    acc += c
                    sums.append(acc)
                    c = c * (n - t) // (t + 1)
                tab[q] = [float(sums[max(0, K - u)]) for u in range(K + 2)]
            self._below_tab = tab
        return self._below_tab

    def solve(self, started: float | None = None) -> SolverReport:
        self.t0 = time.perf_counter() if started is None else started
        stack = self._prepare()
        self._start()
        if stack and (self._separation or self._separated()):
            stack.clear()  # B9 ruled out every support at once
        if self.client is not None:
            with _dask_client(self.client) as client:
                status = self._run_parallel(stack, client)
        elif self.n_jobs > 1:
            status = self._run_parallel(stack)
        else:
            status = self._run(stack)
        for entry in stack:
            self._discard(entry[0])
        return self._report(status)

    @property
    def _combos(self) -> dict[int, list[int]]:
        """The exact column reduction of the order's columns (:func:`whole_combinations`, keyed by
        position), found when B8 first asks (a search that B9 closes never does); at most a tenth
        of the time: past it, the columns not reached are kept, and a family with one of them may
        not close, which rules nothing out."""
        if self._combos_found is None:
            order = self._order
            self._combos_found = whole_combinations(self.data.X[:, order], time.perf_counter()
                                                     + 0.1 * self.time_limit) if len(order) else {}
        return self._combos_found

    def _pair_floor(self) -> float:
        if self._floor is None:
            self._floor = pair_floor(self.data)
        return self._floor

    def _separation_pending(self) -> bool:
        """Whether B9 should be tried now: not yet closed, not yet tried at this prune level or a
        lower one (at most three times), in the calling process (not a worker's round),
        whole-valued columns, and an incumbent whose prune level the floor reaches but the
        root's bound does not (with c0 = 0 a separating score meets the root's bound: nothing to
        prove)."""
        return (self._prune_level() < self._separation_tried and self._separation_runs < 3
                and not self._separation and not self.requeue
                and not self.data.real and math.isfinite(self.best)
                and self.root_bound < self._prune_level() <= self._pair_floor())

    def _separated(self) -> bool:
        """B9 (:mod:`riskformula.solver.purity`): when every score that does not separate the rows
        has a loss of at least the incumbent's prune level, prove that no support below the level
        separates them; within half the time left, after the separating start's first score, after
        the start, or when the tree first finds such an incumbent.  Tried again only for a cheaper
        incumbent once it stopped at a pure support with no witness (at most three times in all),
        and not again once it ran out of its time or the rows are too many.  True when the proof
        closed (its bound is then recorded and the tree has nothing left to search)."""
        if self.p.max_size < 1 or not self._separation_pending():
            return False
        level = self._prune_level()
        self._separation_runs += 1
        proof = SeparationProof(self, self._pair_floor(), level,
                                time.perf_counter() + 0.5 * max(self._left(), 0.0))
        bound = proof.run()
        self.stats["b9_nodes"] = self.stats.get("b9_nodes", 0) + proof.nodes
        self.nodes += proof.nodes
        self.stats["b9_pure"] = self.stats.get("b9_pure", 0) + proof.pure
        if bound is None:
            if proof.timed_out or proof.nodes == 0:
                self._separation_tried = -math.inf  # out of its time, or the rows too many: not again
            else:
                self._separation_tried = level  # a pure support with no witness: again only below it
            return False
        self._discard(bound)
        self._separation = True
        return True

    def _projected_past(self) -> bool:
        """Whether the work done so far projects the whole tree past what the search may take:
        ``give_up`` times the time limit (after ``projection_after``), or the time limit itself
        after the checkpoint."""
        elapsed = time.perf_counter() - self.t0
        times, dones = self._progress
        if not times or elapsed - times[-1] >= 0.25:
            times.append(elapsed)
            dones.append(self._done)
        if elapsed <= self.projection_after or self._done <= 0:
            return False
        projected = elapsed * self._total / self._done
        if self.data.real or not self.fitted:
            # with real-valued columns (or at one scale, where the caller's branch-and-cut certifies
            # the same class), also at the rate of the second half of the time: B8 may rule out
            # much of the tree at once at the start, and the average rate then hides how slowly the
            # rest goes (spambase at size 5: 20 % in 5 s, 0.2 % in the next 30 s; mushroom at size
            # 5 and one scale: 13.8 % in 1 s, 0.2 % in the next 16 s)
            k = bisect.bisect_left(times, elapsed / 2)
            t_half, done_half = times[k], dones[k]
            if elapsed > t_half and self._done > done_half:
                rate = (self._done - done_half) / (elapsed - t_half)
                projected = max(projected, elapsed + (self._total - self._done) / rate)
        if self.checkpoint is not None and elapsed > self.checkpoint and projected > self.time_limit:
            return True
        return projected > self.give_up * self.time_limit

    def _run(self, stack: list, until: int | None = None, stop_at: float | None = None) -> str | None:
        """Search the subtrees on ``stack`` (depth first) until it is empty, the time is up, (with
        ``until``) it holds that many subtrees, or (with ``stop_at``, a ``time.perf_counter()``
        value) that time has come; what is left stays on ``stack``.  Returns the status
        ("time_limit", "too_large" or None)."""
        data, p = self.data, self.p
        order, reach, below = self._order, self._reach, self._below
        order_arr = np.asarray(order, dtype=np.intp)
        plain = not self.rows and not bool((self.group_of >= 0).any())
        # supports below a node whose next position is q with u size units: below(q, u), tabled
        below_tab = self._below_table()
        status = None
        while stack:
            if until is not None and len(stack) >= until:
                break
            if stop_at is not None and time.perf_counter() >= stop_at:
                break
            if self._left() <= 0:
                status = "time_limit"
                break
            if self._projected_past():
                status = "too_large"  # projected beyond its time: the caller's tree takes over
                break
            if self._separation_pending() and self._separated():
                stack.clear()  # B9, once the tree found a separating score: every support ruled out
                break
            entry = stack.pop()
            sub, own, q0, cols, units, counts, c0S, cell, n_cells, leaves, listed = entry
            self._clock(units)
            if sub >= self._prune_level():
                self._discard(sub)
                self._done += below(q0, units)
                continue
            self.nodes += 1
            self._done += 1
            if cols:
                cell, n_cells = data.refine(cell, cols[-1])
            else:
                cell, n_cells = self._root_cell, 1
            # 1. its own risk scores
            if units >= p.min_size and (not self.rows or self._rows_hold(cols)):
                if own < self._prune_level() and cols:
                    # B5: the logistic regression on the support's cells, before listing its vectors
                    Xc, P, Q = support_cells(data, cell, n_cells, cols)
                    lr = self._support_lr(cols, Xc, P, Q)
                    own = max(own, lr + c0S * (1 - 4 * EPS))
                    self.lr_solves += 1
                if own >= self._prune_level():
                    self._discard(own)
                else:
                    n_vec = float(np.prod([len(self.values[j]) for j in cols])) if cols else 1.0
                    if n_vec > self.max_vectors and not (self.fitted and len(cols) > 2):
                        # (B7 prunes the prefixes of whole predictors' supports there)
                        status = "too_large"
                        self._discard(sub)
                        break
                    before = self.discarded
                    if self.data.real and self.fitted and self.defer and not self.requeue and len(cols) > 1:
                        # real predictors: the vectors near the regression's ray now, the listing
                        # later, least bound first (see _listings)
                        self._score_support(cols, cell, n_cells, c0S, own, ray_only=True)
                        heapq.heappush(self._deferred, (own, self.nodes, cols, c0S))
                    elif not self._score_support(cols, cell, n_cells, c0S, own):
                        status = "time_limit"
                        if self.requeue:
                            # the support is scored again from the start in a later round: what its
                            # partial listing recorded is taken back, the whole subtree goes back
                            self.discarded = before
                            self.nodes -= 1
                            stack.append(entry)
                        else:
                            self._discard(sub)
                        break
            # 2. its children (positions qs, columns js, size units u2s), bounded all at once; child
            # k's children are at the positions after k in qs (in the order plain nodes' B8 may
            # choose), or (with groups or rows) every position after its own
            L = len(order)
            family_done = False
            if plain:
                # no groups and no rows: every later column may join while the size allows
                if units + 1 > p.max_size or q0 >= L:
                    continue
                qs = np.arange(q0, L) if listed is None else listed
                u2s = np.full(len(qs), units + 1)
                # the count of positions after each child's (what its subtree can still add)
                nxt = L - (len(qs) - 1 - np.arange(len(qs)))
            else:
                kept = []
                for q in range(q0, L):
                    j = order[q]
                    ok, u2 = self._allowed(units, counts, j)
                    if ok and self.rows and not self._rows_reachable(cols + (j,), [r[0][q + 1] for r in reach],
                                                                     [r[1][q + 1] for r in reach]):
                        ok = False  # no support below it meets the rows: nothing to bound
                        self._done += below(q + 1, u2)
                    if ok:
                        kept.append((q, u2))
                if not kept:
                    continue
                qs = np.array([q for q, _ in kept])
                u2s = np.array([u2 for _, u2 in kept])
                nxt = qs + 1
            js = order_arr[qs]
            full = qs  # a plain node's child k has the children full[k + 1:]
            grows = (u2s < p.max_size) | (self._grouped_after[np.minimum(nxt, L)] > 0)
            deeper = (nxt < L) & grows
            c2s = c0S + self.c0[js]
            extra = c2s * (1 - 4 * EPS)
            # the union bounds' children: indices in a plain node's list (whose child k has the
            # columns full[k:] below it), else positions (every later column may join)
            ulist = full if plain else None
            uidx = np.arange(len(qs)) if plain else qs
            union = None  # the union bounds, when computed for the children's order as it stands
            if plain and self.family and self.reorder and units >= 1 and self._total >= self.order_tree \
                    and units + 1 < p.max_size and len(qs) > 1 and self._family_pays(units):
                # B1 of the unions along the list first (cheap): the children from ``cut`` on are
                # ruled out by it; then B8 bounds the children before it, choosing their order
                # (see _family_order; the children from ``cut`` on keep their places, so the same
                # bound still rules them out)
                union, cut = self._union_bounds(cell, n_cells, uidx, extra, ulist)
                tail = float(union[cut] + extra[cut:].min()) if cut < len(qs) else math.inf
                if cut > 1:
                    started = time.perf_counter()
                    qs, pruned_from, b8 = self._family_order(cell, n_cells, cols, qs, c0S, cut)
                    union = None  # (taken again in the order chosen)
                    family_done = True
                    listed = full = ulist = qs
                    js = order_arr[qs]
                    c2s = c0S + self.c0[js]
                    extra = c2s * (1 - 4 * EPS)
                    ruled = 0.0
                    if pruned_from < cut:
                        ruled = float(below_tab[nxt[pruned_from:cut], np.minimum(u2s[pruned_from:cut],
                                                                                 below_tab.shape[1] - 1)].sum())
                        self.stats["b8_pruned"] += cut - pruned_from
                        tail = min(tail, float(b8[pruned_from] + extra[pruned_from:].min()))
                        cut = pruned_from
                    self._family_spent(units, time.perf_counter() - started, ruled)
                if cut < len(qs):
                    self._discard(tail)
                    self._done += float(below_tab[nxt[cut:], np.minimum(u2s[cut:], below_tab.shape[1] - 1)].sum())
                    qs, js, u2s, nxt, c2s, extra, uidx = (a[:cut] for a in (qs, js, u2s, nxt, c2s, extra, uidx))
                    deeper = deeper[:cut]
                    union = None if union is None else union[:cut]
                    if not cut:
                        continue
            # a node two columns short of the size limit (no groups or rows, 0/1 columns after it):
            # its children's and grandchildren's own B1 at once (B1'), the grandchildren's kept
            # with each child for when it is searched
            two_short = (plain and self.leaf_pass and units + 2 == p.max_size and len(full) > 1
                         and bool(self.data.binary[order_arr[full]].all())
                         # its count goes over each row's pairs of 1s: not with thousands of cuts
                         # (nested: most rows hold hundreds of 1s) in what is left of the time
                         and fits_in_time(data.n * len(full) ** 2, PAIRS_PER_SECOND, self._left()))
            pair = None
            if deeper.all():
                # subtree bounds first: the children from position ``cut`` on are pruned by one
                # union bound, and only those before it need their own supports' bounds
                if union is None:
                    union, cut = self._union_bounds(cell, n_cells, uidx, extra, ulist)
                else:
                    cut = len(qs)  # (those it rules out are gone)
                if cut < len(qs):
                    self._discard(float((union[cut:] + extra[cut:]).min()))
                    self._done += float(below_tab[nxt[cut:], np.minimum(u2s[cut:], below_tab.shape[1] - 1)].sum())
                    qs, js, u2s, nxt, c2s, extra, union, uidx = (a[:cut] for a in
                                                                 (qs, js, u2s, nxt, c2s, extra, union, uidx))
                    if not cut:
                        continue
                if two_short:
                    own_b, pair, sub_b = self._grandchildren(cell, n_cells, full, len(qs), c0S)
                    sub_b = np.maximum(sub_b, union)
                else:
                    # (real predictors: rows rarely share cells below the root, so B1 of a child is
                    # near 0 and costs a count over every row; its own support gets B5 when searched)
                    own_b = np.zeros(len(js)) if data.real and cols else data.children_saturated(cell, n_cells,
                                                                                                   js.tolist())
                    sub_b = union
            elif two_short:
                own_b, pair, sub_b = self._grandchildren(cell, n_cells, full, len(qs), c0S)
            else:
                if data.real and plain and not deeper.any() and units + 1 >= p.min_size:
                    # real predictors, children that are leaves: their regressions' gap bounds at
                    # once, in place of B1 (rows with real values are nearly all distinct, so B1 is
                    # near 0 there; B1 ≤ B5 anyway, both bounding every real point vector)
                    own_b = np.maximum(self._leaf_regressions(cols, js, cell, n_cells), 0.0)
                else:
                    own_b = leaves if leaves is not None else data.children_saturated(cell, n_cells, js.tolist())
                sub_b = own_b.copy()
                if deeper.any():
                    sub_b[deeper] = union[deeper] if union is not None else \
                        self._union_bounds(cell, n_cells, uidx[deeper], extra[deeper], ulist)[0]
            if family_done:
                for i, b in b8.items():  # each covers the children from its own on
                    if i < len(qs):
                        sub_b[i:] = np.maximum(sub_b[i:], b)
                        own_b[i:] = np.maximum(own_b[i:], b)
            elif self.family and deeper.any() and listed is None and self._family_pays(units):
                # B8: the family's regression bounds the subtrees that B1 of the union left (in
                # the search's order: at the root, in small trees, with groups or rows)
                alive = np.flatnonzero(sub_b + extra < self._prune_level())
                if len(alive):
                    started = time.perf_counter()
                    known, cut = self._family_bounds(cell, n_cells, cols, qs[alive], extra[alive])
                    self.stats["b8_pruned"] += len(alive) - cut
                    for m, b in sorted(known.items()):  # each covers the children from its own on
                        k = int(alive[m])
                        sub_b[k:] = np.maximum(sub_b[k:], b)
                        own_b[k:] = np.maximum(own_b[k:], b)
                    # what it cost and the supports it ruled out, for _family_pays
                    ruled_k = alive[sub_b[alive] + extra[alive] >= self._prune_level()]
                    self._family_spent(units, time.perf_counter() - started,
                                       float(below_tab[nxt[ruled_k], np.minimum(u2s[ruled_k],
                                                                                below_tab.shape[1] - 1)].sum()))
            # a child whose subtree is pruned now is recorded here instead of pushed (it would be
            # pruned when popped: the level only falls); most children end so
            pruned = sub_b + extra >= self._prune_level()
            if pruned.any():
                self._discard(float((sub_b + extra)[pruned].min()))
                self._done += float(below_tab[nxt[pruned], np.minimum(u2s[pruned], below_tab.shape[1] - 1)].sum())
            blocks = None
            if plain and data.real and self.block_size and units + 2 == p.max_size and not pruned.all() \
                    and len(full) > 2 * self.block_size:
                # two units short: the pairs of blocks of the list bound the children's own supports
                # and their leaves (see _block_pairs); each child's list keeps the leaves left
                blocks = self._block_pairs(cols, full, int(np.flatnonzero(~pruned).max()), c0S)
            for k in np.flatnonzero(~pruned)[::-1]:
                j, u2 = int(js[k]), int(u2s[k])
                own_k, nxt_k = float(own_b[k] + extra[k]), int(nxt[k])
                rest_k = None if listed is None else full[k + 1:]
                if blocks is not None:
                    ruled, keep = blocks(int(k))
                    rest_k = full[k + 1:][keep]
                    self._done += float(len(keep) - len(rest_k))  # leaves ruled out (each one support)
                    self.stats["block_leaves"] += len(keep) - len(rest_k)
                    nxt_k = L - len(rest_k)
                    if ruled is not None:
                        own_k = max(own_k, ruled)
                        self.stats["block_own"] += 1
                        if not len(rest_k):
                            self._discard(ruled)
                            self._done += 1.0
                            continue
                counts2 = counts
                g = int(self.group_of[j])
                if g >= 0:
                    counts2 = dict(counts)
                    counts2[g] = counts2.get(g, 0) + 1
                stack.append((float(sub_b[k] + extra[k]), own_k, nxt_k, cols + (j,), u2,
                              counts2, float(c2s[k]), cell, n_cells, None if pair is None else pair[k, k + 1:],
                              rest_k))
        return self._listings(status)

    def _listings(self, status: str | None) -> str | None:
        """The supports whose listing was put off (real predictors, every scale > 0), listed least
        bound first: with real values the regression's bound (B5) is close to each support's best,
        so the first listings give the incumbent that rules out the rest.  Once the least bound
        left cannot beat the incumbent, or the search stopped, the least bound left is recorded
        (every support put off is then covered)."""
        deferred = self._deferred
        while deferred and status is None and deferred[0][0] < self._prune_level():
            if self._left() <= 0:
                status = "time_limit"
                break
            own, _, cols, c0S = heapq.heappop(deferred)
            cell, n_cells = self.data.partition(cols)
            if not self._score_support(cols, cell, n_cells, c0S, own):
                status = "time_limit"  # its bound is recorded
        if deferred:
            self._discard(float(deferred[0][0]))
            deferred.clear()
        return status

    def _leaf_regressions(self, cols: tuple, js: np.ndarray, cell: np.ndarray | None = None,
                          n_cells: int = 1) -> np.ndarray:
        """B5 of each support ``cols`` + j (j in ``js``) for real predictors, all children in one
        batch of Newton steps from the node's own regression with 0 for the new column, then the
        gap bound (:func:`~riskformula.solver.support_points.batch_gap_bound`), each column scaled as
        :func:`~riskformula.solver.support_points.real_lr_bound` does; −∞ where it does not close
        (the child's own B5, with its separated cells dropped, is tried when it is searched).
        Each child's design is the node's cells (``cell``, ``n_cells``) for its rows where column j
        takes its most frequent value (rows that then agree on every column of the child, merged
        exactly), and its other rows one by one: mostly far fewer than the rows.  Each child's
        regression is cached as its start."""
        data = self.data
        if cell is None:
            cell = np.zeros(data.n, dtype=np.int64)
        if self._off is None:
            self._off = self._off_mode()
        modes, off_rows = self._off
        Xc, Pc, Qc = support_cells(data, cell, n_cells, cols)
        s = len(cols)
        out = np.full(len(js), -np.inf)
        parent = self._lr_cache.get(cols)
        # the children in order of their designs' lengths, so that a batch pads little
        by_len = np.argsort([len(off_rows[j]) for j in js], kind="stable")
        js_sorted = js[by_len]
        per = n_cells + np.array([len(off_rows[j]) for j in js_sorted], dtype=np.int64)
        found = np.full(len(js), -np.inf)
        budget = 2_000_000 // (s + 2)
        b0 = 0
        while b0 < len(js):
            # as many children as fit in about 2·10⁶ design entries (at least one)
            b1 = b0 + 1
            while b1 < len(js) and (b1 + 1 - b0) * int(per[b1]) <= budget:
                b1 += 1
            part = js_sorted[b0:b1]
            V, C = len(part), int(per[b1 - 1])
            U = np.zeros((V, C, s + 2))
            P2, Q2 = np.zeros((V, C)), np.zeros((V, C))
            for k, jj in enumerate(part):
                off = off_rows[jj]
                m = len(off)
                U[k, :n_cells, 0] = 1.0
                U[k, :n_cells, 1:-1] = Xc
                U[k, :n_cells, -1] = modes[jj]
                P2[k, :n_cells] = Pc - np.bincount(cell[off], weights=data.P[off], minlength=n_cells)
                Q2[k, :n_cells] = Qc - np.bincount(cell[off], weights=data.Q[off], minlength=n_cells)
                U[k, n_cells:n_cells + m, 0] = 1.0
                U[k, n_cells:n_cells + m, 1:-1] = data.X[np.ix_(off, list(cols))]
                U[k, n_cells:n_cells + m, -1] = data.X[off, jj]
                P2[k, n_cells:n_cells + m] = data.P[off]
                Q2[k, n_cells:n_cells + m] = data.Q[off]
            # the counts are whole numbers: the differences above are exact (and ≥ 0)
            np.maximum(P2, 0.0, out=P2)
            np.maximum(Q2, 0.0, out=Q2)
            N2 = P2 + Q2
            e = np.ones((V, s + 2))
            e[:, 1:] = unit_scales(U[:, :, 1:], N2)
            U *= e[:, None, :]
            th0 = None
            if parent is not None:
                th0 = np.column_stack([np.tile(parent[1], (V, 1)), np.zeros(V)]) / e
            theta = batch_regression(U, P2, Q2, self.leaf_iters, th0)
            found[b0:b1] = batch_gap_bound(U, P2, Q2, theta, data.W)
            self.lr_solves += V
            for k, jj in enumerate(part):
                if np.isfinite(found[b0 + k]) and len(self._lr_cache) < 1 << 16:
                    self._lr_cache[cols + (int(jj),)] = (float(found[b0 + k]), theta[k] * e[k])
            b0 = b1
        out[by_len] = found
        return out

    def _block_pairs(self, cols: tuple, full: np.ndarray, last: int, c0S: float):
        """B8 by blocks at a node two size units short of the limit (real predictors, no groups or
        rows), whose supports add at most two columns of its list ``full`` (positions): with the
        list cut into blocks of :attr:`block_size` (counted from the list's end), every such
        support lies in the node's columns and at most two blocks, so the logistic regression on
        that union bounds it — at every scale and intercept (B8's theorem, for a superset of the
        support's columns).  Each pair of blocks (one of them holding a child up to index
        ``last``, the other at or after it) is bounded on every row by the gap bound of
        :func:`~riskformula.solver.support_points.batch_gap_bound`, and a pair that reaches the
        prune level with the least c0 of a support it holds (c0(S) + the least c0 of its columns)
        rules out every support of the node in it.  Returns, for child k, the bound that rules
        out its own support (None: open) and whether each later index i of the list keeps its
        leaf {k, i}: both in pruned blocks' pairs (two of one block: any pruned pair with that
        block)."""
        data, order = self.data, self._order
        bs, L = self.block_size, len(full)
        nb = (L + bs - 1) // bs
        span = [(max(0, L - (x + 1) * bs), L - x * bs) for x in range(nb)]
        js = [order[int(q)] for q in full]
        blk = [js[a0:a1] for a0, a1 in span]
        pairs = [(a, b) for a in range(nb) for b in range(a, nb) if min(span[a][0], span[b][0]) <= last]
        level = self._prune_level()
        N = data.P + data.Q
        parent = self._lr_cache.get(cols)
        designs = [list(cols) + blk[a] + (blk[b] if b != a else []) for a, b in pairs]
        extra = np.array([(c0S + min(float(self.c0[j]) for j in d[len(cols):])) * (1 - 4 * EPS) for d in designs])
        vals = np.full(len(pairs), -np.inf)
        by_w: dict[int, list[int]] = {}
        for t, d in enumerate(designs):
            by_w.setdefault(len(d), []).append(t)
        if self._unit_X is None:
            unit = unit_scales(data.X, N)
            self._unit_X = (np.asfortranarray(data.X * unit), unit)  # powers of two: exact
        Xs, unit = self._unit_X
        for w, ts in by_w.items():
            per = max(1, 4_000_000 // (data.n * (w + 1) or 1))
            for b0 in range(0, len(ts), per):
                part = ts[b0:b0 + per]
                U = np.empty((len(part), data.n, w + 1))
                U[:, :, 0] = 1.0
                e = np.ones((len(part), w + 1))
                for k, t in enumerate(part):
                    U[k, :, 1:] = Xs[:, designs[t]]
                    e[k, 1:] = unit[designs[t]]
                # the start (only a start: no bound depends on it): the node's regression for its
                # columns, and for each block's the coefficients a sibling's pair with the same
                # blocks ended at (siblings' lists are suffixes of one list, and the blocks are
                # counted from its end), else 0
                th0 = np.zeros((len(part), w + 1))
                if parent is not None:
                    th0[:, :len(parent[1])] = parent[1]
                s0 = len(cols) + 1
                for k, t in enumerate(part):
                    warm = self._block_warm.get(tuple(designs[t][len(cols):]))
                    if warm is not None:
                        th0[k, s0:] = warm
                th0 /= e
                # a pair whose loss falls below its level cannot prune: its Newton steps stop there
                levels = (level - extra[part]) * data.W
                theta = batch_regression(U, data.P, data.Q, self.family_iters, th0, levels)
                vals[part] = batch_gap_bound(U, data.P, data.Q, theta, data.W)
                self.lr_solves += len(part)
                if len(self._block_warm) > 100_000:
                    self._block_warm.clear()
                for k, t in enumerate(part):
                    if np.all(np.isfinite(theta[k])):
                        self._block_warm[tuple(designs[t][len(cols):])] = theta[k, s0:] * e[k, s0:]
        self.stats["block_pairs"] += len(pairs)
        pruned = np.zeros((nb, nb), dtype=bool)
        at = np.full((nb, nb), np.inf)
        for (a, b), v, x in zip(pairs, vals, extra):
            if v + x >= level:
                pruned[a, b] = pruned[b, a] = True
                at[a, b] = at[b, a] = v + x
                self._discard(v + x)
        own_at = at.min(axis=1)

        def child(k: int) -> tuple[float | None, np.ndarray]:
            a = (L - 1 - k) // bs
            later = (L - 1 - np.arange(k + 1, L)) // bs
            keep = ~pruned[a, later]
            keep[later == a] = not np.isfinite(own_at[a])
            return (float(own_at[a]) if np.isfinite(own_at[a]) else None), keep
        return child

    def _off_mode(self) -> tuple[np.ndarray, list]:
        """Per column, its most frequent value among the rows (by count) and the rows where it
        takes another value (see :meth:`_leaf_regressions`)."""
        data = self.data
        N = data.P + data.Q
        modes = np.zeros(data.d)
        off = []
        for j in range(data.d):
            code = int(np.argmax(np.bincount(data.codes[j], weights=N))) if data.n else 0
            at = data.codes[j] == code
            modes[j] = data.X[int(np.argmax(at)), j] if data.n else 0.0
            off.append(np.flatnonzero(~at))
        return modes, off

    def _grandchildren(self, cell: np.ndarray, n_cells: int, full: np.ndarray, K: int,
                       c0S: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For a node two columns short of the size limit, whose children are the first ``K`` of
        the positions ``full`` (each child's children: the positions after its own there) and have
        only full-size supports below them: B1 of each child's support, B1 of each grandchild's
        (row k holds child k's children), and each child's subtree bound — the least of its own
        B1 and its children's, which bounds every support below it (they are all listed there),
        and is at least B1 of the union (B1 falls as cells are refined).  One count of the node's
        cells gives them all (:meth:`~riskformula.solver.cells.CellData.grandchildren_saturated`);
        a grandchild's count stops once it is pruned whatever its columns' c0 (≥ 0) add to the
        node's: its bound is then a partial sum, still a lower bound above the prune level."""
        q0 = int(full[0])
        enough = self._prune_level() - c0S * (1 - 4 * EPS)
        if self._ordered is None:
            data, order = self.data, self._order
            # the columns in the search's order (single precision when every sum of counts is
            # below 2^24, so exact), and each row's positions of the 0/1 columns equal to 1
            X = np.ascontiguousarray(data.X[:, order], dtype=np.float32 if data.W < 2.0 ** 24 else float)
            r_i, r_q = np.nonzero((X == 1) & data.binary[order][None, :])
            ptr = np.r_[0, np.cumsum(np.bincount(r_i, minlength=data.n))].astype(np.int64)
            self._ordered = (X, ptr, r_q.astype(np.int64))
        X, ptr, pos = self._ordered
        L = len(self._order)
        slot = np.full(L, -1, dtype=np.int64)  # each position's column among the node's (−1: none)
        slot[full] = np.arange(len(full))
        if len(full) == L - q0 and bool(np.all(np.diff(full) == 1)):
            Xb = X[:, q0:]  # every position from q0 on, in order
        else:
            def Xb():  # an order B8 chose: these columns' copy (needed without the compiled loops)
                return np.ascontiguousarray(X[:, full])
        # the rows grouped by their values on every column from the first of these positions on
        # (so equal on these columns), with each group's positions of 1s there
        gptr, gpos, rows, starts = self._equal_after(int(np.min(full)), ptr, pos)
        own, pair = self.data.grandchildren_saturated(cell, n_cells, Xb, K, (gptr, gpos, slot, rows, starts, True),
                                                      enough)
        return own, pair, np.minimum(own, pair.min(axis=1))  # a row with no grandchildren is all +inf

    def _equal_after(self, q0: int, ptr: np.ndarray, pos: np.ndarray) -> tuple:
        """The rows grouped by their values on the columns from position q0 on (the cells of that
        suffix), with each group's positions of 1s from q0 on (its rows share them): (each
        group's start in ``gptr`` and its positions ``gpos``, as ``ptr`` and ``pos`` give them
        row by row; rows in group order, group starts), for the ``ones`` of
        :meth:`~riskformula.solver.cells.CellData.grandchildren_saturated` by group — read in
        sequence, where a row's own positions would be fetched from all over memory, one group
        at a time.  Kept for the positions asked (at most 256)."""
        hit = self._groups_after.get(q0)
        if hit is None:
            sid = self._suffix[q0]
            order = np.argsort(sid, kind="stable").astype(np.int64)
            cuts = np.flatnonzero(np.diff(sid[order])) + 1
            starts = np.r_[0, cuts, len(sid)].astype(np.int64)
            first = order[starts[:-1]]  # each group's first row, and its positions from q0 on
            lo, many = ptr[first], ptr[first + 1] - ptr[first]
            at = np.r_[0, np.cumsum(many)]
            every = pos[np.repeat(lo - at[:-1], many) + np.arange(at[-1], dtype=np.int64)]
            kept = every >= q0
            group = np.repeat(np.arange(len(first)), many)[kept]
            gptr = np.r_[0, np.cumsum(np.bincount(group, minlength=len(first)))]
            hit = (gptr.astype(np.int64), np.ascontiguousarray(every[kept], dtype=np.int64), order, starts)
            if len(self._groups_after) >= 256:
                self._groups_after.clear()
            self._groups_after[q0] = hit
        return hit

    def _list_cells(self, rest: np.ndarray) -> np.ndarray:
        """Cells for the union bound of the columns at the positions ``rest`` (a list's tail):
        those of the longest run of positions up to the last that ``rest`` holds (a suffix of the
        order, its cells made once), refined by each other position of ``rest`` when there are
        at most ``union_refines`` of them, else the cells of every position from the least of
        ``rest`` on (finer cells than the union's: a lower B1, still a bound)."""
        L = len(self._order)
        present = np.zeros(L, dtype=bool)
        present[rest] = True
        missing = np.flatnonzero(~present)
        m = int(missing[-1]) + 1 if len(missing) else 0  # [m, L) is all in rest
        others = [int(q) for q in rest if q < m]
        if len(others) > self.union_refines:
            return self._suffix[min(others)]
        cells = self._suffix[m]
        for q in others:
            cells, _ = self.data.refine(cells, self._order[q])
        return cells

    def _union_bounds(self, cell: np.ndarray, n_cells: int, qs: np.ndarray,
                      extra: np.ndarray, full: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """Subtree bounds of the children at positions ``qs`` (increasing) of a node with cells
        ``cell``: B1 of the union of the node's cells with the columns order[q:] bounds every support
        below (and at) the child at q, and a union with more columns (a smaller q) bounds it too (B1
        falls when cells are refined).  With ``full`` (a node's list), ``qs`` are indices in it,
        increasing, and the union of child i is that of the node with the columns full[i:] (the
        child's and its later ones).  So B1 is computed only at a few children, found by
        bisection: the first i* where it reaches the prune level (with the least ``extra``
        from there on) prunes every child from i* on with one bound, and each child before it gets
        the bound of the nearest one computed before its own (the first is always computed).
        Returns the bounds and i* (len(qs) when none is pruned)."""
        data, suffix = self.data, self._suffix
        K = len(qs)
        tail = np.minimum.accumulate(extra[::-1])[::-1]  # the least extra from each position on
        level = self._prune_level()
        known: dict[int, float] = {}

        def at(i: int) -> float:
            if i not in known:
                other = suffix[int(qs[i])] if full is None else self._list_cells(full[int(qs[i]):])
                known[i] = float(data.pair_saturated(cell, n_cells, [other])[0])
            return known[i]

        hi = K  # the first child pruned (K: none)
        if at(0) + tail[0] >= level:
            hi = 0
        elif at(K - 1) + tail[K - 1] >= level:
            hi = _first(lambda i: at(i) + tail[i] >= level, 1, K - 1)
        out = np.empty(K)
        done = sorted(known)
        for i in range(K):
            if i >= hi and hi < K:
                out[i] = known[hi]
            else:
                out[i] = known[max(k for k in done if k <= i)]
        return out, hi

    def _clock(self, units: int) -> None:
        """Charge the time and progress since the last node popped (less B8's) to that node's
        depth (see :meth:`_family_pays`)."""
        now = time.perf_counter()
        last = self._last_node
        if last is not None:
            depth, t, done, b8_time, b8_ruled = last
            rec = self._depth_use[depth]
            rec[0] += (now - t) - (self._family_total[0] - b8_time)
            rec[1] += (self._done - done) - (self._family_total[1] - b8_ruled)
        self._last_node = (units, now, self._done, *self._family_total)

    def _family_pays(self, units: int) -> bool:
        """Whether to try B8 at a node of ``units`` size units (a speed rule only: every child is
        bounded either way).  B8 costs regressions on many columns, and the subtrees it rules out
        would otherwise be searched: by the node itself (the union bounds of its children and, two
        columns short of the size limit, the count of its children's and grandchildren's B1, all
        charged to its depth by :meth:`_clock`) and by the nodes deeper than it.  So at each depth
        it is tried once (while B8 has taken at most a quarter of the time, plus a second), then
        while it rules out supports (counted as the search's progress counts them) at least as
        fast per second as the nodes at its depth and deeper dispose of them without B8, and
        otherwise only while B8 has taken at most 5 % of the time (the rates change as the
        incumbent improves).  Compared with the deeper nodes alone, B8 two columns short of the
        limit looked worth its cost where the count of the node's grandchildren disposes of the
        same supports 25 times as fast: anes96 with ``threshold(.)`` at size 5 (195 cuts, the
        first held-out fold) had 75 % of its tree done after 300 s, 85 % of them spent in B8
        there, and is certified in 57 s with the node's own depth counted."""
        calls, spent, ruled = self._family_use[units]
        elapsed = time.perf_counter() - self.t0
        total_spent = self._family_total[0]
        if not calls:
            return total_spent <= 0.25 * elapsed + 1.0
        deeper = [rec for depth, rec in self._depth_use.items() if depth >= units]
        deeper_time = sum(r[0] for r in deeper)
        if deeper_time <= 0:
            return True
        rest = sum(r[1] for r in deeper) / deeper_time
        return ruled / max(spent, 1e-9) >= rest or total_spent <= 0.05 * elapsed

    def _family_at(self, cell: np.ndarray, n_cells: int, cols: tuple, rest, warm: dict,
                   need: float = -np.inf) -> tuple[float, dict]:
        """B8 of the family of a node with columns ``cols`` (cells ``cell``) and the later columns
        at positions ``rest``: a lower bound (mean) on the loss of every real coefficient vector on
        those columns, which bounds every support below the node's children whose columns are in
        ``rest`` and that use only those later ones, at every scale and intercept (they use a
        subset of the columns with a·w real).  The regression is on the cells of the node refined
        by every column from the first position of ``rest`` on (cells at least as fine as the
        family's: rows equal on its columns in one of them, so the same loss as a function of the
        coefficients); a column that is an exact combination of the intercept and other columns
        of the family (``_combos``) is left out first: the span of the logits, so the minimum, is
        unchanged (each left-out column is in the span of the columns its combination names, and
        those are kept or, by induction on the position, in the span of the kept ones), and
        without it the Hessian is singular and the gap bound cannot close.  The bound is
        :func:`~riskformula.solver.support_points.family_lr_bound`'s gap bound, with radii near
        2G/λ.  ``warm``: coefficients by column (−1: the intercept) of the node's last family
        whose regression did not separate cells, a start for the Newton steps (0 for the columns
        it lacked), updated here; only a start, not part of the proof.  ``need``: the value it
        must reach to prune (−∞ is returned, no bound computed, when the regression already fits
        below it).  Returns the bound and the regression's coefficient of each column kept (a
        guide for the order of the children, not part of the proof)."""
        data, order = self.data, self._order
        rest = [int(t) for t in rest]
        positions = [self._position[j] for j in cols] + rest
        present = set(positions)
        kept = [order[t] for t in positions if not (t in self._combos and present.issuperset(self._combos[t]))]
        other = self._suffix[min(rest)]
        span = int(other.max()) + 1 if len(other) else 1
        ids, C = dense_ids(cell * span + other, n_cells * span)
        if not regression_fits(self.family_iters, C, len(kept) + 1, self._left()):
            # too wide for the time left (thousands of threshold cuts: one regression would take
            # minutes): no bound, so nothing is ruled out by it
            self.stats["b8_too_wide"] += 1
            return -math.inf, {}
        Xc, P, Q = support_cells(data, ids, C, kept)
        self.stats["b8"] += 1
        start = np.array([warm.get(-1, 0.0)] + [warm.get(j, 0.0) for j in kept]) if warm else None
        bound, theta, clean = family_lr_bound(Xc.astype(float), P, Q, data.W, iters=self.family_iters, start=start,
                                              need=need)
        if clean and np.all(np.isfinite(theta)):
            warm.clear()
            warm[-1] = float(theta[0])
            warm.update(zip(kept, theta[1:].tolist()))
        return bound, dict(zip(kept, theta[1:].tolist()))

    def _family_order(self, cell: np.ndarray, n_cells: int, cols: tuple, qs: np.ndarray,
                      c0S: float, limit: int) -> tuple[np.ndarray, int, dict]:
        """B8 at a node without groups or rows, choosing the order of the first ``limit``
        positions of its list ``qs`` as it goes (the rest, whose children B1 already rules out,
        keep their places).  The children of a node cover every support below it once whatever
        the order of its list (module docstring), and the family of the node with the listed
        columns from index i on bounds the subtrees of children i, i + 1, ....  So: the family of
        the whole list is bounded; if it does not reach the prune level, the first ``limit``
        positions are sorted by how much the regression leans on each column (|coefficient| ×
        standard deviation, the largest first), and the family without the first one is bounded
        in turn, up to ``order_steps`` times (each time the rest of them sorted again); then the
        first index below ``limit`` whose family prunes is found by bisection (after the
        smallest such family: when it does not prune, none does).  The columns that keep the
        family's loss low so come first, and the family of the rest soon reaches the level.  Each
        regression starts from the last one's coefficients, and a child whose family was bounded
        here (the same columns as its own first family) gets that bound and those coefficients
        with it.  Returns the positions in the chosen
        order, the index from which the children are ruled out (``limit`` when none before it
        is), and the bounds by index (each covers the children from its own on)."""
        order, sd = self._order, self._sd
        level = self._prune_level()
        hint = self._family_hint.get(cols)
        warm: dict = dict(hint[1]) if hint is not None else {}
        first = hint[2] if hint is not None and len(hint) > 2 else None
        extra = {int(q): (c0S + float(self.c0[order[q]])) * (1 - 4 * EPS) for q in qs}
        lst = [int(q) for q in qs]
        bounds: dict[int, float] = {}
        coefs: dict[int, dict] = {}
        self.stats["b8_orders"] += 1
        if len(self._family_hint) >= 1 << 16:
            self._family_hint.clear()

        def least(i: int) -> float:
            return min(extra[q] for q in lst[i:])

        def prunes(i: int) -> bool:
            nonlocal first
            if i not in bounds:
                if i == 0 and first is not None:
                    bounds[0], coefs[0] = first  # bounded when the parent placed this node
                else:
                    bounds[i], coefs[i] = self._family_at(cell, n_cells, cols, lst[i:], warm, level - least(i))
            return bounds[i] + least(i) >= level

        def result(cut: int) -> tuple[np.ndarray, int, dict]:
            for i in bounds:  # the children whose first family was bounded here
                if i < cut:
                    self._family_hint[cols + (order[lst[i]],)] = (None, dict(warm), (bounds[i], coefs[i]))
            return np.array(lst, dtype=np.intp), cut, bounds

        i = 0
        while True:
            if prunes(i):
                return result(i)
            if i == limit - 1:
                return result(limit)
            if i >= self.order_steps:
                break
            coef = coefs[i]  # the column the last failed family leans on most goes next
            k = max(range(i, limit), key=lambda t: abs(coef.get(order[lst[t]], 0.0)) * sd[order[lst[t]]])
            lst.insert(i, lst.pop(k))
            i += 1
        if not prunes(limit - 1):
            return result(limit)
        return result(_first(prunes, i + 1, limit - 1))

    def _family_spent(self, units: int, spent: float, ruled: float) -> None:
        """Record B8's time and the supports it ruled out at a node of ``units`` (for _family_pays)."""
        use = self._family_use[units]
        use[0] += 1
        use[1] += spent
        use[2] += ruled
        self._family_total[0] += spent
        self._family_total[1] += ruled

    def _family_bounds(self, cell: np.ndarray, n_cells: int, cols: tuple, qs: np.ndarray,
                       extra: np.ndarray) -> tuple[dict, int]:
        """B8 at a few of the children's positions ``qs`` (increasing): the family from position
        i on bounds the subtrees of children i, i + 1, ...; the first i where it reaches the prune
        level (with the least ``extra`` from there on) is searched for from a guess — the position
        where the parent's B8 first pruned, when it did — by steps doubling away from it, then by
        bisection; without a guess, the last child's family (the smallest) is tried first, and
        when it does not prune, none is.  The Newton steps start from the parent's family's
        coefficients.  Returns the bounds computed (by child index) and i* (len(qs) when none
        prunes).  The search needs no order of the bounds: each one only covers the children from
        its own position on."""
        K = len(qs)
        tail = np.minimum.accumulate(extra[::-1])[::-1]
        level = self._prune_level()
        known: dict[int, float] = {}
        hint = self._family_hint.get(cols[:-1]) if cols else None
        warm: dict[int, float] = dict(hint[1]) if hint is not None else {}

        def prunes(i: int) -> bool:
            if i not in known:
                known[i] = self._family_at(cell, n_cells, cols, range(int(qs[i]), len(self._order)), warm,
                                           level - tail[i])[0]
            return known[i] + tail[i] >= level
        if not K:
            return known, K
        guess = K - 1 if hint is None or hint[0] is None else min(int(np.searchsorted(qs, hint[0])), K - 1)
        if prunes(guess):
            lo, hi, step = guess, guess, 1  # the first pruning index is in (lo', hi]
            while hi > 0:
                lo = max(hi - step, 0)
                if not prunes(lo):
                    lo += 1
                    break
                hi, step = lo, 2 * step
            lo = min(lo, hi)
        else:
            lo, hi, step = guess + 1, K, 1  # none at or before ``guess``
            while lo < K:
                at = min(lo + step - 1, K - 1)
                if prunes(at):
                    hi = at
                    break
                lo, step = at + 1, 2 * step
        hi = _first(prunes, lo, hi)
        if len(self._family_hint) >= 1 << 16:
            self._family_hint.clear()
        self._family_hint[cols] = (int(qs[hi]) if hi < K else None, dict(warm))
        return known, hi

    def _run_parallel(self, stack: list, client=None) -> str | None:
        """The subtrees on ``n_jobs`` processes, or on the workers of a dask ``client``, in rounds
        (module docstring, *Splitting*)."""
        from contextlib import ExitStack
        workers = self.n_jobs if client is None else _cluster_threads(client, self._left())
        if client is not None:
            self.n_jobs, self._cluster = workers, True
        small = self.data.X.size < SHIP_ENTRIES
        self.defer = False
        alone = min(self.alone_share * self.time_limit, self.alone_small if small else self.alone_cap)
        started = time.perf_counter()
        warming: list = []
        status = None
        if client is not None:
            # a tree not done in its first half second alone: each dask worker loads the compiled
            # loops (numba's cache: 1–3 s a process) while this process goes on alone, instead of
            # at the start of its first share (on another worker if that one has left: the rounds
            # wait for these; a fit done within the half second starts none)
            status = self._run(stack, stop_at=started + min(alone, self.warm_after))
            if status is None and stack:
                warming = [client.submit(_load_loops, pure=False, workers=[address], allow_other_workers=True)
                           for address in client.nthreads()]
                # run to their end even when this process finishes alone and drops them (a dropped
                # running task is cancelled, and each worker logs a warning)
                from distributed import fire_and_forget
                fire_and_forget(warming)
        if status is None and stack:
            status = self._run(stack, stop_at=started + alone)
        if status is None and stack:
            status = self._run(stack, until=4 * workers)
        if status is not None or not stack:
            return status
        span = max(1.0, 0.05 * self.time_limit)
        token = uuid.uuid4().hex  # this fit's name in the workers (see _subtrees)
        settings = dict(gap_tolerance=self.gap_tolerance, absolute_gap_tolerance=self.absolute_gap_tolerance,
                        max_vectors=self.max_vectors)
        with ExitStack() as context:
            if client is None:
                from joblib import Parallel, delayed
                # one share at a time to each worker as it comes free (batch_size 1: joblib's
                # automatic batching could hand one worker two shares at once)
                parallel = context.enter_context(Parallel(n_jobs=workers, backend="loky", batch_size=1))
                problem = self.p

                def run(calls):
                    return parallel(delayed(_subtrees)(*call) for call in calls)
            else:
                # the problem goes to every worker once, not with each share of each round
                problem = client.scatter(self.p, broadcast=True, hash=False)
                client.gather(warming)

                def run(calls):
                    return client.gather([client.submit(_subtrees, *call, pure=False) for call in calls])
            while stack and self._left() > 0:
                if self._projected_past():
                    return "too_large"
                seconds = min(span, self._left())
                to_checkpoint = math.inf if self.checkpoint is None else \
                    self.checkpoint - (time.perf_counter() - self.t0)
                if to_checkpoint > 0:
                    # a round does not run far past the checkpoint before the projection is looked at
                    seconds = min(seconds, max(1.0, to_checkpoint))
                # dealt out in turn from the top of the stack (the next subtrees first) into a few shares
                # per worker, which the workers take one at a time as they come free, until the round's
                # end: a worker whose share is done takes the next instead of waiting for the others
                per = self.shares_per_worker if small and client is None else 1
                n_shares = min(len(stack), per * workers)
                shares = [stack[::-1][k::n_shares][::-1] for k in range(n_shares)]
                incumbent = (self.best, self.best_lam, self.best_scale)
                # the round's end, and never past the search's, on one clock in every process
                end = time.time() + min(seconds, self._left())
                results = run([(problem, self.fitted, settings, incumbent, sh, seconds, end, token) for sh in shares])
                stack.clear()
                for r in results:
                    if r["best"] < self.best:
                        self.best, self.best_lam, self.best_scale = r["best"], r["best_lam"], r["best_scale"]
                    self.discarded = min(self.discarded, r["discarded"])
                    self.nodes += r["nodes"]
                    self.vectors += r["vectors"]
                    self.lr_solves += r["lr_solves"]
                    self._done += r["done"]
                    stack.extend(r["stack"])
                stack.sort(key=lambda e: -e[0])  # the least bound on top
                span *= 2  # a support that needs longer than a round gets it in a later one
        return "time_limit" if stack else None

    def _report(self, status: str | None) -> SolverReport:
        elapsed = time.perf_counter() - self.t0
        lower = min(self.best, self.discarded)
        if self.best_lam is None:
            status = status or "infeasible"
            gap = math.inf
        else:
            gap = 0.0 if lower >= self.best else (self.best - lower) / max(abs(self.best), 1e-12)
            if status is None:
                within = gap <= self.gap_tolerance or self.best - lower <= self.absolute_gap_tolerance
                status = "optimal" if within else "numerical_gap"
        scope = SCOPES[self.fitted]
        return SolverReport(
            status=status if status != "too_large" else "time_limit", objective=self.best, lower_bound=lower,
            gap=gap, time=elapsed, nodes=self.nodes, cuts=0, lp_solves=self.lr_solves, root_bound=self.root_bound,
            solver=ENGINE_NAME,
            settings={"time_limit": self.time_limit, "gap_tolerance": self.gap_tolerance,
                      "absolute_gap_tolerance": self.absolute_gap_tolerance, "n_jobs": self.n_jobs, "engine": "cells",
                      "bound": (("saturated loss of the support's cells (Ustun & Rudin, 2019), the gap bound of each "
                                 "support's logistic regression (real-valued columns), and the calibration dual of "
                                 "each scored point vector") if self.data.real else
                                ("saturated loss of the support's cells (Ustun & Rudin, 2019), of its score cells, "
                                 "and the calibration dual of each scored point vector"))
                      + ("; whole subtrees by the gap bound of the logistic regression on a node's columns and "
                         "every later one" if self.family else "")
                      + ("; every support that could separate the rows by a count of the columns telling event "
                         "rows from non-event rows and equal sums of cells, every other by the least loss of a "
                         "score that does not separate them" if self._separation else ""),
                      "scope": scope, "continuous_scale": self.fitted, "gave_up": status == "too_large",
                      **({"cluster": "dask"} if self._cluster else {}),
                      **({"separation_proof": True} if self._separation else {})},
            solution=tuple(self.best_lam.tolist()) if self.best_lam is not None else (),
            scale=self.best_scale, listed=self.vectors)


#: per worker thread: the search of the last fit whose rounds it ran (its token and the search),
#: kept so that the caches of its later rounds' searches start full (see :func:`_subtrees`)
_kept = threading.local()


@kept_heap  # a dask worker's environment fixes malloc's thresholds (riskformula._heap)
def _subtrees(problem: RiskProblem, fitted: bool, settings: dict, incumbent: tuple, entries: list,
              seconds: float, end: float, token: str | None = None) -> dict:
    """One share of a round: the subtrees ``entries`` searched from the shared ``incumbent`` for at
    most ``seconds`` and never past ``end`` (a ``time.time()``: the round's end, so a share a
    worker takes late in the round gets what is left of it); returns its incumbent, the least bound
    it recorded, its counts, and the subtrees it did not finish (a support cut short is returned
    whole, its partial bounds dropped).

    ``token`` names the fit: a worker that ran an earlier round of the same fit goes on with that
    round's search (its column order, and its caches: each support's regression bound and point,
    each pair of blocks' last coefficients, B8's hints), with its counts and recorded bound reset.
    What the caches hold depends on the problem alone (bounds of fixed sets of columns, or starts),
    so the round's result is as valid as a fresh search's; only its speed changes (spambase at size
    5 on 2 processes: the rounds after the first re-solved the regressions the first one had)."""
    left = max(min(seconds, end - time.time()), 0.0)
    kept = getattr(_kept, "search", None)
    if token is not None and kept is not None and kept[0] == token:
        search = kept[1]
        search.time_limit = left
        # this round's own counts and bound (the caller adds them up)
        search.discarded = math.inf
        search.nodes = search.vectors = search.lr_solves = 0
        search._done = 0.0
        search._progress, search._last_node = ([], []), None
    else:
        _kept.search = None  # an earlier fit's search is not kept past its rounds
        search = SupportSearch(problem, fitted, time_limit=left, beam=False, **settings)
        search.give_up = math.inf
        search.requeue = True
        search._prepare()
        if token is not None:
            _kept.search = (token, search)
    search.t0 = time.perf_counter()
    search.best, search.best_lam, search.best_scale = incumbent
    stack = list(entries)
    search._run(stack)
    return {"best": search.best, "best_lam": search.best_lam, "best_scale": search.best_scale,
            "discarded": search.discarded, "nodes": search.nodes, "vectors": search.vectors,
            "lr_solves": search.lr_solves, "done": search._done, "stack": stack}


def _load_loops() -> bool:
    """A dask worker's first task of a fit: the compiled loops loaded (see :func:`_run_parallel`)."""
    return kernels.compiled() is not None


@contextmanager
def _dask_client(client):
    """``client`` itself, or for a scheduler's address a client made here and closed on leaving."""
    if not isinstance(client, str):
        yield client
        return
    try:
        import distributed
    except ImportError:
        raise SettingsError("`client` names a dask scheduler, and dask.distributed is not installed: "
                            "pip install distributed (or leave `client` out).") from None
    try:
        made = distributed.Client(client, set_as_default=False, timeout=10)
    except (OSError, TimeoutError) as exc:
        raise SettingsError(f"`client`: no dask scheduler answered at {client!r} ({exc}); start one "
                            "(dask scheduler) or pass a distributed.Client.") from None
    try:
        yield made
    finally:
        made.close()


def _cluster_threads(client, seconds: float) -> int:
    """The worker threads of ``client``'s cluster (waiting up to ``seconds`` for a first worker)."""
    threads = sum(client.nthreads().values())
    if threads == 0:
        try:
            client.wait_for_workers(1, timeout=max(seconds, 1.0))
        except TimeoutError:
            raise SettingsError("`client`: the dask cluster has no workers; start some (dask worker "
                                "<scheduler address>) or leave `client` out.") from None
        threads = sum(client.nthreads().values())
    return max(1, threads)
