"""Certifying a time-to-event score by supports: every support listed or ruled out by the bound of
a Cox regression.

The support engine of the Cox fit (:mod:`riskformula.survival.fit`), beside the branch-and-cut.
It proves the best integer score under the Cox (1972) partial likelihood over **every score scale
m > 0**: integer points w within their bounds (each used column's point nonzero), linear predictor
η = a·(x·w) with a = 1/m > 0, objective the mean negative log partial likelihood (Breslow's or
Efron's ties, as :class:`~riskformula.problem.cox.CoxLoss` states them) + Σ c0_j over the columns
used.  The partial likelihood has no intercept (a shift of every score leaves it unchanged).

Bounds (:mod:`riskformula.solver.cox_bounds`, where each is proven and made valid in floating
point): **C1**, the Cox regression on a support's columns, bounds every score on it at every
scale; **C2**, the node's *family*: the supports below a node's children from position q on use
only the node's columns and its list's columns from q on, so C1 of that union bounds all of them
(as B8 of the logistic support search; Liu et al.'s (2022) continuous relaxation restricted to the
union), a union with more columns has the lower bound, so the bounds rise along the list and the
first position whose family reaches the prune level rules out every later child; **C2 by
blocks**, at a node t columns short of the size limit (t = 2 … 5; its supports add at most t
columns of its list): with the columns partitioned into blocks (neighbouring cuts of one
``threshold()`` term, which a block's regression fits little better than one of them), each such
support lies in the node's columns and at most t blocks, so C1 of that union bounds it — a set
of t blocks that prunes rules out every support of the node with its columns in those blocks.
Its children learn which of their sets of t − 1 blocks are ruled out (without a regression), and
drop from their lists a column all of whose supports are; one column short, the children of one
block are bounded together (the family's subsets of every size, whose bound the many-column
family is too weak for); **C3**, a
support's point vectors (primitive: gcd 1, the scale absorbs the rest) far from its regression's
direction are ruled out together, and the others calibrated to their best scale with a tangent
bound.

Search
------
Columns are ordered by C1 of each alone (the most informative first); a depth-first search lists
supports as sequences of positions in each node's list (each support once: a support's first
listed column names the child it is below, whatever the order of a list), under the size limit,
each group's ``max_used`` and the support rows (``at_most``, ``not_both``, ``implies``,
``max_variables``: :func:`~riskformula.solver.support_search.support_rows`), checked on each
support scored.  Speed rules, on which no bound depends:

* **Incumbent first**: the sparse beam search of Liu et al. (2022) on real points and a beam on the
  Cox regression's score test, each support's whole vectors along its real points' ray
  calibrated.  Supports that C1 does not rule out wait in a queue, least bound first, and are
  listed within 30 % of the time so far while the tree is searched, the rest after it.
* **The children's order** (below the root, as the logistic search's P13): while the family of the
  columns not yet placed does not prune, the column its regression leans on most (|coefficient| ×
  standard deviation) is placed next (up to 40 times); the first child whose family prunes is
  then found by bisection.  A family's Newton steps stop at the first point whose loss is below
  the prune level (its minimum is then below it: it cannot prune there).
* **Children bounded at once**: each child's own support (and, one column short of the size limit,
  every child, with no family) is bounded by C1 from a few Newton steps taken on all of them in one
  batch from the parent's point, each settled as soon as its bound prunes or its loss shows it
  cannot; the children left are regressed one by one when popped.  With numba installed, these
  Newton steps and those of the blocks' regressions are compiled
  (:func:`riskformula.solver.kernels.cox_regressions`: points only; the bounds are computed from
  them here, as from numpy's).
* **Blocks** (C2 by blocks) replace the family's order and bisection where they apply (no grouped
  column in the list, more than t blocks in it, at most :attr:`max_block_sets` sets whose
  regressions fit in a quarter of the time left); the partition is the same at every node, so
  siblings share a set's union and each one's Newton steps start where a sibling's ended.

The certificate's lower bound is the least of the incumbent and every bound that ruled something
out (and, at the time limit, of the subtrees and listings left), floored by C1 of every column
(every score of the class uses a subset of them, and c0 ≥ 0) and by the loss's own floor
(:func:`~riskformula.solver.cox_bounds.loss_floor`), so no risk score of the class has a lower
objective.  Pruning uses the package's gap tolerances.
"""

from __future__ import annotations

import copy
import heapq
import itertools
import math
import time

import numpy as np

from ..problem import RiskProblem
from ..problem.cox import CoxLoss
from . import kernels
from .cox_bounds import (CoxTerms, GapBound, calibrate, cox_regression, gap_bound, gap_parts, gap_values,
                         loss_floor, primitive_vectors)
from .heuristics import real_beam_search
from .report import SolverReport
from .support_search import FAMILY_FLOPS, SupportRules, fits_in_time, ray_vectors, regression_fits, support_rows

__all__ = ["CoxSupportSearch", "why_not_cox", "COX_ENGINE_NAME"]

COX_ENGINE_NAME = "riskformula support enumeration with Cox regression bounds"
COX_SCOPE = "every score scale > 0"
#: the largest dense table of terms × rows the engine builds (8 bytes each)
MAX_TABLE = 2.5e7


def why_not_cox(problem: RiskProblem, loss: CoxLoss, max_size: int) -> str:
    """Why the Cox support search cannot certify ``problem`` ("" when it can)."""
    p = problem
    if p.n_extra_aux or p.has_aux_cost or p.exact_rows or p.indicators:
        return "the problem has auxiliary variables"
    if support_rows(p) is None:
        return "a constraint row reads the points, not only which terms are used"
    if np.any(p.coef_lower > 0) or np.any(p.coef_upper < 0):
        return "some point range excludes 0"
    if len(loss.k_group) * loss.n_unique > MAX_TABLE:
        return (f"its table of {len(loss.k_group):,d} event terms × {loss.n_unique:,d} distinct rows is too large "
                f"(the engine keeps it in memory up to {MAX_TABLE:.3g} entries)")
    width = max((int(p.coef_upper[j] - p.coef_lower[j]) for j in range(p.d)), default=0)
    if width ** max(int(max_size), 0) > 2e6:
        return (f"it lists the point vectors of each support it cannot rule out, {width}^{max_size} per support "
                "at this size limit and point range (up to 2·10⁶)")
    return ""


class CoxSupportSearch(SupportRules):
    """The certified best integer Cox score over every scale > 0 (see the module's docstring).

    ``problem`` gives the point bounds, c0, the size limits, the groups and the support rows;
    ``loss`` the partial likelihood at scale 1."""

    def __init__(self, problem: RiskProblem, loss: CoxLoss, time_limit: float = 60.0, gap_tolerance: float = 1e-6,
                 absolute_gap_tolerance: float = 1e-9, node_limit: int | None = None):
        self.p, self.loss = problem, loss
        self.time_limit = float(time_limit)
        self.gap_tolerance, self.absolute_gap_tolerance = float(gap_tolerance), float(absolute_gap_tolerance)
        self.node_limit = node_limit
        self.terms = CoxTerms(loss)
        d = problem.d
        self.c0 = np.asarray(problem.c0, dtype=float)
        self.values = [np.array([v for v in range(int(problem.coef_lower[j]), int(problem.coef_upper[j]) + 1) if v],
                                dtype=np.int64) for j in range(d)]
        self.group_of = np.asarray(problem._group_of)
        self.caps = [len(g.cols) if g.max_used is None else int(g.max_used) for g in problem.groups]
        self.rows = support_rows(problem) or []
        self.best = math.inf
        self.best_lam: np.ndarray | None = None
        self.best_scale = 1.0
        self.discarded = math.inf
        self.nodes = self.vectors = self.regressions = 0
        self.root_bound = -math.inf
        self._fam_cache: dict = {}
        self._block_warm: dict = {}
        #: event-free columns (≥ 0, nonzero only on rows without an event), and the terms of the
        #: rows left without each set of them (:meth:`_regression_without`)
        X, dw = self.terms.X, self.terms.d
        self._dead = {j for j in range(d) if X[:, j].min() >= 0 and X[:, j].max() > 0 and not dw[X[:, j] > 0].any()}
        self._reduced: dict = {}
        self._deferred: list = []
        self._tick = 0
        self._deadline = math.inf
        #: the share of the time the listings may take while the tree is searched (they improve the
        #: incumbent the tree prunes with)
        self.listing_share = 0.3
        #: an incumbent from a beam search before the tree (:meth:`_beam_start`)
        self.beam = True
        #: C2 chooses the order of each node's children (:meth:`_family_order`), below the root
        #: unless ``reorder_root``, and not one column short of the size limit (every child is
        #: bounded there: :meth:`_leaf_children`)
        self.reorder = True
        self.reorder_root = False
        #: at most this many columns placed before the bisection (on gbsg at size 5: 3 → 74 s,
        #: 6 → 60 s, 12 → 56 s, 40 → 54 s, measured beside another fit)
        self.order_steps = 40
        #: supports bounded and ruled out by C1, families bounded, point vectors ruled out by C3 and
        #: calibrated, children's own supports (inner, and leaves) ruled out by the batched C1, and
        #: the share of the tree's supports left at a limit
        self.stats: dict[str, float] = {"supports": 0, "supports_pruned": 0, "families": 0, "far": 0,
                                        "calibrated": 0, "own_batched": 0, "leaves_batched": 0,
                                        "block_pairs": 0, "block_triples": 0, "block_sets": 0,
                                        "blocks_inherited": 0, "own_blocks": 0, "leaf_blocks": 0, "event_free": 0,
                                        "families_too_wide": 0}
        #: the children's own supports bounded at once before any is regressed (:meth:`_batch_c1`)
        self.batch_own = True
        #: the children of a node one column short of the size limit bounded at once (:meth:`_leaf_children`)
        self.batch_leaves = True
        #: the batched Newton steps compiled (:func:`riskformula.solver.kernels.cox_regressions`) when numba is
        #: installed, with at most this many steps per regression; else numpy's, with 3
        self.compiled = kernels.compiled() is not None
        self.compiled_iters = 8
        #: the most columns of a block of :meth:`_block_sets` (0: off), and whether the sets of blocks
        #: replace the family's order and bisection where they apply
        self.block_size = 5
        self.blocks_only = True
        #: C2 by blocks at nodes up to this many columns short of the size limit (t blocks at a node t
        #: short: pairs, triples, ...), at most :attr:`max_block_sets` sets of blocks per node
        self.block_depth = 5
        self.max_block_sets = 20000
        #: the Newton steps per set of blocks that the time guard of :meth:`_blocks_apply` counts
        self.set_steps = 10
        #: C2 by blocks one column short of the size limit: the children of one block bounded together
        #: before each is bounded alone (:meth:`_leaf_children`)
        self.leaf_blocks = True
        #: each column's block (:meth:`_make_blocks`, set by :meth:`_prepare`), and the sets of blocks a
        #: node's sets ruled out for each child (by the child's columns, read when it is popped)
        self._blk = np.zeros(problem.d, dtype=np.int64)
        self._closed: dict[tuple, dict[int, tuple]] = {}
        self._cox_arrays: tuple = kernels.cox_arrays(loss) if self.compiled else ()
        self._X2 = self.terms.X * self.terms.X if self.compiled else np.zeros((0, 0))  # each design's max |x|

    # --- pruning -----------------------------------------------------------------------------
    def _prunes(self, bound: float) -> bool:
        b = self.best
        if not math.isfinite(b):
            return False
        return bound >= b or b - bound <= max(self.absolute_gap_tolerance, self.gap_tolerance * abs(b))

    # --- bounds -----------------------------------------------------------------------------
    def _regression(self, cols, beta0=None, iters: int = 25, rows: bool = False,
                    stop_below: float = -math.inf) -> tuple[GapBound | None, tuple | None]:
        dead = [c for c in cols if c in self._dead]
        if dead:
            return self._regression_without(tuple(cols), dead, beta0, iters, rows, stop_below)
        N, d, U = self.terms.rows(cols) if rows else self.terms.cells(cols)
        self.regressions += 1
        fit = cox_regression(self.terms if N is self.terms.N else N, d, U, self.terms.coef, self.terms.norm, beta0,
                             iters, stop_below)
        if fit is None:
            return None, None
        gb = gap_bound(N, d, U, self.terms.coef, self.terms.norm, fit)
        gb.fit = fit
        return gb, (N, d, U)

    def _regression_without(self, cols: tuple, dead: list, beta0, iters: int, rows: bool,
                            stop_below: float) -> tuple[GapBound | None, tuple | None]:
        """C1 of ``cols`` where some of them are *event-free* (≥ 0, nonzero only on rows without an
        event: their coefficient runs to −∞, and no regression with them closes).  Deleting those
        columns' nonzero rows from every risk set lowers every denominator and leaves the events'
        sum unchanged, so for every β the loss is at least the loss of the rows left (the same
        loss, its Efron terms and 1/W, with those rows' weights 0), which does not read the deleted
        columns: the bound of that regression on the other columns bounds every score on ``cols``.
        The bound returned has no point for C3 (``reduced``: its listing calibrates every vector),
        and the cells returned are the support's own."""
        key = frozenset(dead)
        terms = self._reduced.get(key)
        if terms is None:
            # the same loss (its Efron terms, coefficients and 1/W) with those rows' weights 0
            sub = copy.copy(self.loss)
            sub.w = np.where(np.all(self.terms.X[:, dead] == 0, axis=1), self.loss.w, 0.0)
            terms = CoxTerms(sub)
            self._reduced[key] = terms
        live = [i for i, c in enumerate(cols) if c not in key]
        sub_cols = [cols[i] for i in live]
        N, d, U = terms.rows(sub_cols) if rows else terms.cells(sub_cols)
        self.regressions += 1
        self.stats["event_free"] += 1
        b0 = None if beta0 is None else np.asarray(beta0, dtype=float)[live]
        fit = cox_regression(terms if N is terms.N else N, d, U, terms.coef, terms.norm, b0, iters, stop_below)
        if fit is None:
            return None, None
        gb = gap_bound(N, d, U, terms.coef, terms.norm, fit)
        theta = np.zeros(len(cols))
        theta[live] = gb.theta
        gb.theta, gb.H0, gb.R0, gb.reduced = theta, None, None, True
        gb.fit = (theta, math.inf) + tuple(fit[2:])  # no loss of the whole data attained at a point
        return gb, (None if rows else self.terms.cells(cols))

    def _leaf_children(self, cols, units, counts, c0sum, lst, theta) -> list | None:
        """When no child of the node can grow (one column short of the size limit), every child's
        own support is bounded by C1 at once (:meth:`_batch_c1`), with no family (a child costs
        less than a family there): the children it does not rule out are returned (their C1 is
        computed again, with their listing, when popped).  None when some child can grow."""
        kids = []
        # the groups among each suffix of the list: a full support grows only by a column of a group
        # it already uses (as :meth:`_allowed` reads it)
        suffix: list[frozenset] = [frozenset()] * (len(lst) + 1)
        for i in range(len(lst) - 1, -1, -1):
            g = int(self.group_of[lst[i]])
            suffix[i] = suffix[i + 1] | {g} if g >= 0 else suffix[i + 1]
        for i, j in enumerate(lst):
            ok, u2 = self._allowed(units, counts, j)
            if not ok:
                continue
            if i + 1 < len(lst):
                if u2 < self.p.max_size:
                    return None
                if suffix[i + 1]:
                    c2 = dict(counts)
                    g = int(self.group_of[j])
                    if g >= 0:
                        c2[g] = c2.get(g, 0) + 1
                    if any(c2.get(h, 0) < self.caps[h] and c2.get(h, 0) > 0 for h in suffix[i + 1]):
                        return None
            if u2 >= self.p.min_size and self._rows_hold(cols + (j,)):
                kids.append((i, j, u2))
        if not kids:
            return []
        if self.leaf_blocks:
            gone = self._leaf_blocks(cols, theta, [j for _, j, _ in kids], c0sum)
            kids = [k for k, x in zip(kids, gone) if not x]
            if not kids:
                return []
        js = [j for _, j, _ in kids]
        offsets = c0sum + self.c0[js]
        vals = self._batch_c1(cols, theta, js, offsets) + offsets
        out = []
        for (i, j, u2), v in zip(kids, vals):
            if self._prunes(float(v)):
                self.discarded = min(self.discarded, float(v))
                self.stats["leaves_batched"] += 1
                continue
            c2 = dict(counts)
            g = int(self.group_of[j])
            if g >= 0:
                c2[g] = c2.get(g, 0) + 1
            out.append((float(v), cols + (j,), u2, c2, c0sum + float(self.c0[j]), (), theta, False))
        return out

    def _leaf_blocks(self, cols: tuple, theta: dict, js: list[int], c0sum: float) -> np.ndarray:
        """C2 by blocks one column short of the size limit: the children ``js`` of one block (two or
        more) are bounded together by C1 of the node's columns and theirs, which bounds each one's
        own support (a subset); returns which children that rules out (compiled only)."""
        gone = np.zeros(len(js), dtype=bool)
        if not self.compiled or self._dead.intersection(cols):
            return gone
        by: dict[int, list[int]] = {}
        for b, j in enumerate(js):
            if j not in self._dead:
                by.setdefault(int(self._blk[j]), []).append(b)
        groups = [g for g in by.values() if len(g) > 1]
        if not groups:
            return gone
        designs = [tuple(cols) + tuple(js[b] for b in g) for g in groups]
        starts = [[theta.get(c, 0.0) for c in cols] + [0.0] * len(g) for g in groups]
        offs = [c0sum + float(self.c0[[js[b] for b in g]].min()) for g in groups]
        vals, _ = self._compiled_designs(designs, starts, np.array([self._level(o) for o in offs]))
        for g, v, o in zip(groups, vals, offs):
            if self._prunes(float(v) + o):
                gone[g] = True
                self.discarded = min(self.discarded, float(v) + o)
                self.stats["leaf_blocks"] += len(g)
        return gone

    def _compiled_designs(self, designs: list[tuple], starts: list, levels: np.ndarray):
        """C1 of each design (a tuple of columns) by :meth:`_compiled_c1` in batches of one width,
        from starts[k], each stopping at levels[k]: (bounds, points), −∞ and None where a batch was
        not computed (without the kernels)."""
        vals = np.full(len(designs), -math.inf)
        points: list = [None] * len(designs)
        by_p: dict[int, list[int]] = {}
        for k, dsg in enumerate(designs):
            by_p.setdefault(len(dsg), []).append(k)
        for _, ks in sorted(by_p.items()):
            got = self._compiled_c1(np.array([designs[k] for k in ks], dtype=np.int64),
                                    np.array([starts[k] for k in ks], dtype=float), levels[ks], 20)
            if got is None:
                break
            vals[ks] = got[0]
            for r, k in enumerate(ks):
                points[k] = got[1][r]
        return vals, points

    def _batch_c1(self, cols: tuple, theta: dict, js: list[int], offsets: np.ndarray, iters: int = 3) -> np.ndarray:
        """C1 of each support cols + (j,) for j in ``js``: damped Newton steps on all of them at
        once over the rows (from θ on cols and 0 on j), each one's gap bound after each step; a
        child stops once its bound + its ``offsets`` (c0) prunes or its loss shows it cannot."""
        if self._dead:  # event-free columns: their regressions by the rows left (:meth:`_regression_without`)
            bad = [b for b, j in enumerate(js) if j in self._dead or self._dead.intersection(cols)]
            if bad:
                out = np.full(len(js), -math.inf)
                good = [b for b in range(len(js)) if b not in set(bad)]
                if good:
                    out[good] = self._batch_c1(cols, theta, [js[b] for b in good], offsets[good], iters)
                for b in bad:
                    key = tuple(cols) + (js[b],)
                    gb, _ = self._regression(key, beta0=np.array([theta.get(c, 0.0) for c in key]))
                    out[b] = -math.inf if gb is None else gb.value
                return out
        terms, loss = self.terms, self.loss
        X, d, coef, norm, w = terms.X, terms.d, terms.coef, terms.norm, loss.w
        c = list(cols)
        B, p, n = len(js), len(c) + 1, terms.n
        K = norm * float(coef.sum())
        levels = np.array([self._level(float(o)) for o in offsets])
        if self.compiled:
            C = np.empty((B, p), dtype=np.int64)
            C[:, :-1], C[:, -1] = c, js
            start = np.zeros((B, p))
            start[:, :-1] = [theta.get(j, 0.0) for j in c]
            got = self._compiled_c1(C, start, levels, self.compiled_iters)
            if got is not None:
                return got[0]
        U = np.empty((B, n, p))
        U[:, :, :-1] = X[:, c][None, :, :]
        U[:, :, -1] = X[:, js].T
        beta = np.zeros((B, p))
        beta[:, :-1] = [theta.get(j, 0.0) for j in c]

        def evaluate(beta, idx=None):
            Ui = U if idx is None else U[idx]
            eta = (Ui @ beta[:, :, None])[:, :, 0].T
            top = eta.max(axis=0)
            e = w[:, None] * np.exp(eta - top)
            D = terms.term_sums(e)  # K × B
            ok = np.all(D > 1e-250, axis=0)
            D = np.where(D > 1e-250, D, 1.0)
            logD = np.log(D)
            F = norm * (coef @ (logD + top) - d @ eta)
            mag = norm * (coef @ (np.abs(logD) + np.abs(top)) + np.abs(d) @ np.abs(eta))
            q = e * terms.row_weights_batch(D)
            UT = Ui.transpose(0, 2, 1)  # B × p × n
            g = norm * (UT @ (q - d[:, None]).T[:, :, None])[:, :, 0]
            m = (terms.term_sums(e[:, :, None] * Ui.transpose(1, 0, 2)) / D[:, :, None]).transpose(1, 0, 2)  # B×K×p
            H = norm * (UT @ (Ui * q.T[:, :, None]) - m.transpose(0, 2, 1) @ (m * coef[None, :, None]))
            return np.where(ok, F, np.inf), g, H, mag

        out = np.full(B, -math.inf)
        act = np.arange(B)
        F, g, H, mag = evaluate(beta)
        damp = np.ones(B)
        eye = np.eye(p)
        for it in range(iters + 1):
            # the bounds so far (each valid); a child is settled once its bound prunes or its loss
            # is below the prune level (its minimum is then below it too)
            fin = np.isfinite(F)
            if np.any(fin):
                vals = gap_values(*gap_parts(F[fin], mag[fin], g[fin], H[fin], U[act[fin]], K))
                out[act[fin]] = np.maximum(out[act[fin]], vals)
            keep = ~((out[act] >= levels[act]) | (F < levels[act]))
            if it == iters or not np.any(keep):
                break
            act, beta, F, g, H, mag, damp = (x[keep] for x in (act, beta, F, g, H, mag, damp))
            ridge = 1e-10 * (1.0 + np.trace(H, axis1=1, axis2=2))
            try:
                step = np.linalg.solve(H + ridge[:, None, None] * eye, g[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                break
            nb = beta - damp[:, None] * step
            nF, ng, nH, nmag = evaluate(nb, act)
            better = nF <= F + 1e-15 * np.abs(F)
            beta = np.where(better[:, None], nb, beta)
            F, mag = np.where(better, nF, F), np.where(better, nmag, mag)
            g, H = np.where(better[:, None], ng, g), np.where(better[:, None, None], nH, H)
            damp = np.where(better, 1.0, damp * 0.25)
        self.regressions += B
        return out

    def _compiled_c1(self, C: np.ndarray, start: np.ndarray, levels: np.ndarray, iters: int):
        """C1 of each column set C[b] (B × p) from the compiled Newton points started at start[b]
        (:func:`riskformula.solver.kernels.cox_regressions`, each stopping at levels[b]), bounded by
        :func:`gap_parts` as numpy's points are: (bounds, points), or None without the kernels."""
        # in chunks, so that a long list (hundreds of threshold cuts on many rows: thousands of
        # regressions) stops at the deadline; a design not reached keeps its start and −∞ (it rules
        # nothing out)
        B, p = C.shape
        beta, F = start.astype(float), np.full(B, np.inf)
        g, H, mag = np.zeros((B, p)), np.zeros((B, p, p)), np.full(B, np.inf)
        for k in range(0, B, 64):
            if k and time.perf_counter() > self._deadline:
                break
            fast = kernels.cox_regressions(self._cox_arrays, C[k:k + 64], start[k:k + 64], levels[k:k + 64], iters)
            if fast is None:
                return None
            beta[k:k + 64], F[k:k + 64], g[k:k + 64], H[k:k + 64], mag[k:k + 64] = fast
        out = np.full(len(C), -math.inf)
        fin = np.isfinite(F)
        if np.any(fin):
            xmax = np.sqrt(self._X2[:, C[fin]].sum(axis=2).max(axis=0))
            K = self.terms.norm * float(self.terms.coef.sum())
            out[fin] = gap_values(*gap_parts(F[fin], mag[fin], g[fin], H[fin], None, K, xmax=xmax))
        self.regressions += len(C)
        return out, beta, F

    def _make_blocks(self) -> np.ndarray:
        """Each column's block for C2 by blocks (:meth:`_block_sets`): the candidate cuts of one
        ``threshold()`` term in runs of at most :attr:`block_size` neighbouring cuts (nearly
        collinear, so that a block's regression fits little better than one of its cuts, and unions
        of blocks prune), the other columns in runs of :attr:`block_size` in the search's order.  Any
        partition gives valid bounds; each node reads the blocks restricted to its list, the same at
        every node, so that a node's sets can tell its children which of theirs they rule out."""
        d, bs = self.p.d, max(int(self.block_size), 1)
        blk = np.full(d, -1, dtype=np.int64)
        nid = 0
        for fam in self.p.cut_families:
            cuts = [int(c) for c in fam if 0 <= int(c) < d and blk[int(c)] < 0]
            for part in (np.array_split(np.asarray(cuts), -(-len(cuts) // bs)) if cuts else []):
                blk[part] = nid
                nid += 1
        rest = list(dict.fromkeys(j for j in list(self.order) + list(range(d)) if blk[j] < 0))
        for s in range(0, len(rest), bs):
            blk[rest[s:s + bs]] = nid
            nid += 1
        return blk

    def _blocks_apply(self, lst, t: int, ncols: int) -> bool:
        """Whether :meth:`_block_sets` bounds a node t columns short of the size limit with the list
        ``lst`` and ``ncols`` columns of its own: 2 ≤ t ≤ :attr:`block_depth`, more than t blocks in
        it, no grouped column (each adds one size unit), and for t ≥ 3 at most :attr:`max_block_sets`
        sets whose regressions fit in a quarter of the time left (:attr:`set_steps` Newton steps
        each, on the node's columns and its t largest blocks: no design is wider)."""
        if not 0 < self.block_size or not 2 <= t <= self.block_depth:
            return False
        if np.any(self.group_of[list(lst)] >= 0):
            return False
        sizes = np.unique(self._blk[list(lst)], return_counts=True)[1]
        nb = len(sizes)
        if nb <= t:
            return False
        if t >= 3:
            count, p = math.comb(nb, t), ncols + int(np.sort(sizes)[-t:].sum())
            return count <= self.max_block_sets and fits_in_time(
                count * self.set_steps * (self.terms.n * p * p + p ** 3 / 3), FAMILY_FLOPS,
                self._deadline - time.perf_counter())
        return True

    def _block_sets(self, cols: tuple, c0sum: float, lst: tuple, theta: dict, last: int, t: int,
                    closed: dict | None):
        """C2 by blocks at a node t columns short of the size limit (2 ≤ t ≤ :attr:`block_depth`),
        whose supports add at most t of its list's columns (none grouped): each such support lies in
        the node's columns and at most t blocks of the list (:meth:`_make_blocks`), so C1 of the
        node's columns and any t blocks holding its columns bounds it.  Each set of t blocks (one
        holding a child up to position ``last``) is bounded, except those ``closed`` (ruled out by
        the parent's sets: they count as pruning); a support is ruled out when some set that prunes
        holds its blocks.  Returns, for a child at position i: whether its own support is still open,
        the blocks of its list whose columns it drops (every support of the child with one of them is
        ruled out), and for t ≥ 3 the sets of t − 1 blocks whose supports the child may no longer use
        (its ``closed``: each set's bit mask of block ids → its blocks).  Only where
        :meth:`_blocks_apply` holds (the caller asks it once per node)."""
        pos = [int(self._blk[c]) for c in lst]
        members: dict[int, list[int]] = {}
        first: dict[int, int] = {}
        for i, (c, g) in enumerate(zip(lst, pos)):
            if g not in members:
                members[g], first[g] = [], i
            members[g].append(c)
        # a set of blocks is the bit mask of its (global) block ids, as the parent's closed sets are
        sets = [(sum(1 << g for g in T), T) for T in itertools.combinations(members, t)
                if min(first[g] for g in T) <= last]
        level = self._level(c0sum)
        pruned: dict[int, tuple] = {}
        todo = []
        for mask, T in sets:
            if closed and mask in closed:
                pruned[mask] = T
                self.stats["blocks_inherited"] += 1
            else:
                todo.append((mask, T))
        extra = [tuple(c for g in T for c in members[g]) for _, T in todo]
        designs = [cols + e for e in extra]
        vals = np.full(len(todo), -math.inf)
        # compiled in batches of one width, but not the designs with an event-free column (by the rows
        # left, :meth:`_regression_without`) nor without the kernels: those by :meth:`_family`
        fast = [k for k, dsg in enumerate(designs) if self.compiled and not self._dead.intersection(dsg)]
        done: set[int] = set()
        if fast:
            starts = []
            for k in fast:
                warm = self._block_warm.get(extra[k], {})
                starts.append([theta[c] if c in theta else warm.get(c, 0.0) for c in designs[k]])
            got, points = self._compiled_designs([designs[k] for k in fast], starts, np.full(len(fast), level))
            if len(self._block_warm) > 200_000:
                self._block_warm.clear()
            for k, v, beta in zip(fast, got, points):
                if beta is not None:
                    vals[k] = v
                    done.add(k)
                    self._block_warm[extra[k]] = dict(zip(extra[k], beta[len(cols):].tolist()))
        for k in range(len(designs)):
            if k not in done and time.perf_counter() <= self._deadline:
                vals[k] = self._family(designs[k], theta, level)[0]
        self.stats["block_pairs" if t == 2 else "block_triples" if t == 3 else "block_sets"] += len(todo)
        for (mask, T), v in zip(todo, vals):
            if self._prunes(float(v) + c0sum):
                pruned[mask] = T
                self.discarded = min(self.discarded, float(v) + c0sum)
        touched = 0  # the blocks in some set that prunes
        for mask in pruned:
            touched |= mask

        if t == 2:
            def child(i: int):
                # the blocks of the later positions whose supports with i are ruled out
                a = pos[i]
                drop = {b for b in members if b != a and (1 << a | 1 << b) in pruned}
                if touched >> a & 1:
                    drop.add(a)
                return not touched >> a & 1, drop, None
            return child

        # the sets of t − 1 blocks a child's supports may no longer use: those that, with the child's
        # own block, lie in a set that prunes (each such set's subsets of t − 1 blocks), as masks
        holding: dict[int, list[tuple[int, tuple]]] = {}
        for mask, T in pruned.items():
            for g in T:
                holding.setdefault(g, []).append((mask, T))
        shut: dict[int, dict[int, tuple]] = {}
        after = [0] * len(pos)  # the blocks of the positions after i
        for i in range(len(pos) - 1, 0, -1):
            after[i - 1] = after[i] | 1 << pos[i]

        def child_sets(i: int):
            a = pos[i]
            if a not in shut:
                shut[a] = {mask ^ 1 << g: tuple(h for h in T if h != g)
                           for mask, T in holding.get(a, ()) for g in T}
            # a later block whose every set of t − 1 of the child's blocks is shut: the child's supports
            # with its columns are all ruled out
            later = after[i]
            drop: set[int] = set()
            n_after = later.bit_count()
            if n_after >= t - 1:
                count: dict[int, int] = {}
                for S, P in shut[a].items():
                    if not S & ~later:
                        for g in P:
                            count[g] = count.get(g, 0) + 1
                full = math.comb(n_after - 1, t - 2)
                drop = {g for g, c in count.items() if c == full}
            return not touched >> a & 1, drop, shut[a]
        return child_sets

    def _family_order(self, cols: tuple, c0sum: float, lst: tuple, theta: dict) -> tuple:
        """The node's list in the order C2 chooses (any order lists each support once: a support's
        first listed column names the child it is below): while the family of the columns not yet
        placed does not reach the prune level, the column its regression leans on most
        (|coefficient| × standard deviation) is placed next, up to :attr:`order_steps` times; the
        rest keep their order.  The family of what is left then prunes sooner."""
        placed: list[int] = []
        rest = list(lst)
        warm = theta
        for _ in range(self.order_steps):
            if len(rest) < 2:
                break
            val, th = self._family(cols + tuple(rest), warm, self._level(c0sum))
            if self._prunes(val + c0sum) or not th:
                break
            j = max(rest, key=lambda c: abs(th.get(c, 0.0)) * self._sd[c])
            placed.append(j)
            rest.remove(j)
            warm = th
        return tuple(placed + rest)

    def _level(self, c0sum: float) -> float:
        """The least regression bound that prunes, for subtrees whose columns cost ``c0sum``."""
        b = self.best
        if not math.isfinite(b):
            return math.inf
        return b - max(self.absolute_gap_tolerance, self.gap_tolerance * abs(b)) - c0sum

    def _family(self, cols: tuple, warm: dict | None = None, level: float = -math.inf) -> tuple[float, dict]:
        """C2: a lower bound of the regression on the columns ``cols`` and its coefficients by
        column (cached; ``warm``, coefficients by column, starts its Newton steps).  Its Newton
        steps stop at a loss below ``level``: the family's minimum is then below it too, so it
        cannot prune there, and the bound returned (valid, at that point) may be far below."""
        key = tuple(sorted(cols))
        hit = self._fam_cache.get(key)
        if hit is not None and (hit[0] >= level or hit[2] < level):
            return hit[0], hit[1]  # the same answer at this level
        if len(key) > 8 and not regression_fits(20, self.terms.n, len(key), self._deadline - time.perf_counter()):
            # too wide for the time left (hundreds of threshold cuts on many rows), or past the
            # deadline: no bound, so nothing is ruled out by it
            self.stats["families_too_wide"] += 1
            return -math.inf, {}
        self.stats["families"] += 1
        if hit is not None:
            warm = hit[1]
        beta0 = None if warm is None else np.array([warm.get(j, 0.0) for j in key])
        out: tuple[float, dict, float]
        got = None
        if self.compiled and not self._dead.intersection(key):  # the compiled Newton points, bounded as numpy's
            got = self._compiled_c1(np.array([key], dtype=np.int64),
                                    np.zeros((1, len(key))) if beta0 is None else beta0[None, :],
                                    np.array([level]), 20)
        if got is not None:
            val, beta, F = float(got[0][0]), got[1][0], float(got[2][0])
            out = (val, dict(zip(key, beta.tolist())), F) if math.isfinite(F) else (-math.inf, {}, math.inf)
        elif (gb := self._regression(key, beta0=beta0, iters=20, rows=len(key) > 8, stop_below=level)[0]) is None \
                or gb.fit is None:
            out = (-math.inf, {}, math.inf)
        else:
            out = (gb.value, dict(zip(key, gb.theta.tolist())), float(gb.fit[1]))
        if len(self._fam_cache) > 100_000:
            self._fam_cache.clear()
        self._fam_cache[key] = out
        return out[0], out[1]

    # --- a support's own scores -------------------------------------------------------------
    def _bound_support(self, cols: tuple, c0sum: float, warm: dict) -> dict:
        """C1 of the support ``cols``: ruled out, or its vectors along its regression's ray
        calibrated (an incumbent) and its listing put off (:meth:`_list_support`); returns the
        regression's coefficients by column (``warm`` starts it)."""
        self.stats["supports"] += 1
        gb, cells = self._regression(cols, beta0=np.array([warm.get(j, 0.0) for j in cols]))
        support_lb = -math.inf if gb is None else gb.value
        theta = warm if gb is None else dict(zip(cols, gb.theta.tolist()))
        if self._prunes(support_lb + c0sum):
            self.stats["supports_pruned"] += 1
            self.discarded = min(self.discarded, support_lb + c0sum)
            return theta
        if cells is None:
            cells = self.terms.cells(cols)
        if gb is not None and gb.theta.size:
            Wr = ray_vectors(gb.theta, np.array([self.values[j].min() for j in cols]),
                             np.array([self.values[j].max() for j in cols]))
            Wr = Wr[np.all(Wr != 0, axis=1)] if len(Wr) else Wr
            if len(Wr):
                self._calibrate(cols, c0sum, cells, Wr, gb, support_lb, bound=False)
        self._tick += 1
        heapq.heappush(self._deferred, (support_lb + c0sum, self._tick, cols, c0sum, gb, cells))
        return theta

    def _calibrate(self, cols, c0sum, cells, Wc, gb, support_lb, bound: bool = True) -> None:
        """Calibrate the point vectors ``Wc`` of the support; the best becomes the incumbent, and
        with ``bound`` their least lower bound is recorded."""
        N, d, U = cells
        S = (U @ Wc.T.astype(float)).T  # V × C scores
        if gb is not None and gb.theta.size:
            a0 = np.maximum((Wc @ gb.theta) / np.maximum((Wc * Wc).sum(axis=1), 1), 1e-3)
        else:
            a0 = np.full(len(Wc), 0.1)
        F, a, lower = calibrate(N, d, self.terms.coef, self.terms.norm, S, a0)
        obj = F + c0sum
        k = int(np.argmin(obj))
        if obj[k] < self.best and np.isfinite(obj[k]) and a[k] > 0:
            self.best = float(obj[k])
            lam = np.zeros(self.p.d + 1)
            lam[1 + np.asarray(cols)] = Wc[k]
            self.best_lam, self.best_scale = lam, float(1.0 / a[k])
        if bound:
            self.stats["calibrated"] += len(Wc)
            self.discarded = min(self.discarded, float((np.maximum(lower, support_lb) + c0sum).min()))

    def _list_support(self, cols: tuple, c0sum: float, gb, cells) -> None:
        """List the primitive point vectors of the support ``cols`` that C3 does not rule out,
        calibrate them, and record the bound of what is ruled out."""
        support_lb = -math.inf if gb is None else gb.value
        N, d, U = cells
        if gb is not None and not gb.reduced:  # C3 needs the cells' H⁻¹-norms themselves
            fine = gap_bound(N, d, U, self.terms.coef, self.terms.norm, gb.fit, precise=True)
            gb = fine if fine.value >= gb.value else gb
        W = primitive_vectors([self.values[j] for j in cols])
        chunk = max(1, int(4e6 // max(U.shape[0], self.terms.K, 1)))
        for s in range(0, len(W), chunk):
            if time.perf_counter() > self._deadline:  # the support's C1 bounds the vectors not listed
                self.discarded = min(self.discarded, support_lb + c0sum)
                return
            Wc = W[s:s + chunk]
            self.vectors += len(Wc)
            if gb is not None and gb.R0 is not None:
                far = gb.far(gb.ray_distance(Wc.astype(float))) + c0sum
                keep = ~self._prunes_array(far)
                if np.any(~keep):
                    self.stats["far"] += int((~keep).sum())
                    self.discarded = min(self.discarded, float(far[~keep].min()))
                Wc = Wc[keep]
                if not len(Wc):
                    continue
            self._calibrate(cols, c0sum, cells, Wc, gb, support_lb)

    def _prunes_array(self, bounds: np.ndarray) -> np.ndarray:
        b = self.best
        if not math.isfinite(b):
            return np.zeros(bounds.shape, dtype=bool)
        return (bounds >= b) | (b - bounds <= max(self.absolute_gap_tolerance, self.gap_tolerance * abs(b)))

    # --- the tree ---------------------------------------------------------------------------
    def _prepare(self) -> list:
        usable = [j for j in range(self.p.d) if len(self.values[j])]
        single = []
        for j in usable:
            gb, _ = self._regression((j,))
            single.append(math.inf if gb is None else gb.value)
        self.order = [usable[k] for k in np.argsort(single, kind="stable")]
        self._blk = self._make_blocks()
        w = self.loss.w / self.loss.w.sum()
        mean = w @ self.terms.X
        self._sd = np.sqrt(np.maximum(w @ (self.terms.X - mean) ** 2, 0.0))
        gb, _ = self._regression(tuple(self.order), rows=len(self.order) > 8)
        self.root_bound = -math.inf if gb is None else gb.value
        # the empty score (every scale gives the same loss)
        if self.p.min_size <= 0 and self._rows_hold(()):
            null = self.loss.value(np.zeros(self.p.d + 1))
            self.best, self.best_lam, self.best_scale = null, np.zeros(self.p.d + 1), 1.0
        # stack entries: (subtree bound, columns, units, group counts, c0 sum, list of columns, the
        # parent's regression coefficients by column: a start for the node's own)
        return [(self.root_bound, (), 0, {}, 0.0, tuple(self.order), {}, False)]

    def _children(self, cols, units, counts, c0sum, lst, theta: dict, closed: dict | None = None) -> list:
        """The node's children (column, position in the list, units, counts), with the family
        bound of each, and the least bound of the children it ruled out (``closed``: the sets of
        blocks its parent's sets ruled out for it, :meth:`_block_sets`)."""
        if not any(self._allowed(units, counts, j)[0] for j in lst):
            return []
        if self.batch_leaves and cols:
            leaves = self._leaf_children(cols, units, counts, c0sum, list(lst), theta)
            if leaves is not None:
                return leaves
        # (not one column short of the size limit: there a child costs less than a family)
        short = int(self.p.max_size) - units
        blocks = self._blocks_apply(lst, short, len(cols))
        if (self.reorder and (cols or self.reorder_root) and len(lst) > 1 and units + 1 < self.p.max_size
                and not (blocks and self.blocks_only)):
            lst = self._family_order(cols, c0sum, tuple(lst), theta)
        kids = []
        for i, j in enumerate(lst):
            ok, u2 = self._allowed(units, counts, j)
            if ok:
                kids.append((i, j, u2))
        if not kids:
            return []
        n = len(kids)
        bounds: dict[int, float] = {}
        warm: dict[int, dict] = {}

        def fam(m: int) -> float:
            if m not in bounds:
                bigger = [b for b in warm if b < m]
                val, th = self._family(cols + tuple(lst[kids[m][0]:]), warm[max(bigger)] if bigger else theta,
                                       self._level(c0sum))
                bounds[m], warm[m] = val + c0sum, th
            return bounds[m]
        # the first child whose family prunes (families shrink along the list, their bounds rise)
        lo, hi = 0, n
        if blocks and self.blocks_only:
            lo = n  # the sets of blocks rule children out instead (:meth:`_block_sets`)
        elif self._prunes(fam(n - 1)):
            while lo < hi:
                mid = (lo + hi) // 2
                if self._prunes(fam(mid)):
                    hi = mid
                else:
                    lo = mid + 1
        else:
            lo = n
        if lo < n:
            self.discarded = min(self.discarded, fam(lo))
        out = []
        known = sorted(bounds)
        # the children's own supports, bounded at once without Newton steps
        sets = self._block_sets(cols, c0sum, lst, theta, kids[lo - 1][0], short, closed) if lo and blocks else None
        own = [m for m in range(lo) if kids[m][2] >= self.p.min_size and (sets is None or sets(kids[m][0])[0])]
        ruled = set()
        if own and self.batch_own and cols:
            js = [kids[m][1] for m in own]
            offsets = c0sum + self.c0[js]
            vals = self._batch_c1(cols, theta, js, offsets) + offsets
            for m, v in zip(own, vals):
                if self._prunes(float(v)):
                    ruled.add(m)
                    self.discarded = min(self.discarded, float(v))
                    self.stats["own_batched"] += 1
        for m in range(lo):
            i, j, u2 = kids[m]
            before = [b for b in known if b <= m]
            sub = bounds[before[-1]] if before else -math.inf
            c2 = dict(counts)
            g = int(self.group_of[j])
            if g >= 0:
                c2[g] = c2.get(g, 0) + 1
            rest = tuple(lst[i + 1:])
            shut = None
            if sets is not None:
                own_ok, drop, shut = sets(i)
                if drop:
                    rest = tuple(c for c in rest if int(self._blk[c]) not in drop)
                if not own_ok and m not in ruled:
                    ruled.add(m)
                    self.stats["own_blocks"] += 1
            if m in ruled and (not rest or u2 >= self.p.max_size and self.group_of[j] < 0 and not self.caps):
                continue  # a leaf whose scores are ruled out
            if shut:
                self._closed[cols + (j,)] = shut
            out.append((sub, cols + (j,), u2, c2, c0sum + float(self.c0[j]), rest, theta, m in ruled))
        return out

    def solve(self, initial=None, started: float | None = None) -> SolverReport:
        self.t0 = started if started is not None else time.perf_counter()
        self._listing_time = 0.0
        deadline = self._deadline = self.t0 + self.time_limit
        stack = self._prepare()
        for lam in ([] if initial is None else initial):
            self._try_start(np.asarray(lam, dtype=float))
        if self.beam:
            self._beam_start()
        status = None
        while stack:
            if time.perf_counter() > deadline:
                status = "time_limit"
                break
            if self.node_limit is not None and self.nodes >= self.node_limit:
                status = "node_limit"
                break
            bound, cols, units, counts, c0sum, lst, theta, ruled = stack.pop()
            closed = self._closed.pop(cols, None) if self._closed else None
            if self._prunes(bound):
                self.discarded = min(self.discarded, bound)
                continue
            self.nodes += 1
            if cols and not ruled and units >= self.p.min_size and self._rows_hold(cols):
                theta = self._bound_support(cols, c0sum, theta)
            if lst:
                kids = self._children(cols, units, counts, c0sum, lst, theta, closed)
                stack.extend(reversed(kids))
            # listings, least bound first, within their share of the time so far
            while self._deferred and self._listing_time < self.listing_share * (time.perf_counter() - self.t0):
                self._next_listing()
        # the listings left, least bound first: the first give the incumbent that rules out the rest
        while status is None and self._deferred:
            if time.perf_counter() > deadline:
                status = "time_limit"
                break
            self._next_listing()
        if status is not None:
            total = self._count(len(self.order), 0)
            self.stats["left"] = sum(self._count(len(e[5]), e[2]) for e in stack) / max(total, 1)
            for e in stack:
                self.discarded = min(self.discarded, e[0])
            for e in self._deferred:
                self.discarded = min(self.discarded, e[0])
        return self._report(status)

    def _beam_start(self) -> None:
        """An incumbent before the tree: the sparse beam search of Liu et al. (2022) on real points
        (:func:`~riskformula.solver.heuristics.real_beam_search`, which keeps the cuts of one
        ``threshold()`` from filling the beam), and on each support it found the whole vectors
        along its real points' ray, calibrated.  Only an incumbent: no bound is read."""
        try:
            beam = real_beam_search(self.p, width=10, expand=10,
                                    stop=self.t0 + 0.25 * self.time_limit)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            return
        for lam in beam:
            cols = tuple(int(j) for j in np.flatnonzero(lam[1:]))
            if not cols or not self._fits(cols):
                continue
            Wr = ray_vectors(lam[1:][list(cols)], np.array([self.values[j].min() for j in cols]),
                             np.array([self.values[j].max() for j in cols]))
            Wr = Wr[np.all(Wr != 0, axis=1)] if len(Wr) else Wr
            if len(Wr):
                self._calibrate(cols, float(self.c0[list(cols)].sum()), self.terms.cells(cols), Wr, None,
                                -math.inf, bound=False)
        self._screen_beam()

    def _screen_beam(self, width: int = 5, screen: int = 10) -> None:
        """More incumbents before the tree: a beam search over supports with the Cox regression's
        score test — each support of the beam grows by the ``screen`` columns the test ranks best
        (the decrease g_j²/(2H_jj) of the loss from a step in column j alone), each grown support is
        fitted by :func:`cox_regression` (no bounds on its coefficients), the best ``width`` kept,
        and the vectors along each one's ray calibrated.  Only an incumbent: no bound is read."""
        X, d, coef, norm = self.terms.X, self.terms.d, self.terms.coef, self.terms.norm
        beam: list[tuple[float, tuple, dict, int, dict]] = [(0.0, (), {}, 0, {})]
        usable = np.array(self.order, dtype=np.intp)
        for _ in range(int(self.p.max_size)):
            grown: dict[tuple, tuple] = {}
            for _, cols, theta, units, counts in beam:
                beta = np.array([theta.get(j, 0.0) for j in cols])
                eta = X[:, list(cols)] @ beta if cols else np.zeros(self.terms.n)
                e = self.loss.w * np.exp(eta - eta.max())
                D = self.terms.term_sums(e)
                if not np.all(D > 1e-250):
                    continue
                q = e * self.terms.row_weights(D)
                Xu = X[:, usable]
                g = norm * (Xu.T @ (q - d))
                m1 = self.terms.term_sums(e[:, None] * Xu) / D[:, None]
                h = norm * ((Xu * Xu).T @ q - coef @ (m1 * m1))
                gain = np.where(h > 1e-12, g * g / np.where(h > 1e-12, h, 1.0), 0.0)
                ranked = usable[np.argsort(-gain, kind="stable")]
                taken = 0
                for j in ranked:
                    if taken >= screen:
                        break
                    j = int(j)
                    if j in cols:
                        continue
                    ok, u2 = self._allowed(units, counts, j)
                    if not ok:
                        continue
                    taken += 1
                    key = tuple(sorted(cols + (j,)))
                    if key in grown:
                        continue
                    gb, cells = self._regression(key, beta0=np.array([theta.get(c, 0.0) for c in key]))
                    if gb is None:
                        continue
                    c2 = dict(counts)
                    grp = int(self.group_of[j])
                    if grp >= 0:
                        c2[grp] = c2.get(grp, 0) + 1
                    grown[key] = (float(gb.value), key, dict(zip(key, gb.theta.tolist())), u2, c2, gb, cells)
            if not grown:
                break
            best = sorted(grown.values(), key=lambda t: t[0])[:width]
            for val, key, theta, u2, c2, gb, cells in best:
                if u2 >= self.p.min_size and self._rows_hold(key) and gb.theta.size:
                    Wr = ray_vectors(gb.theta, np.array([self.values[j].min() for j in key]),
                                     np.array([self.values[j].max() for j in key]))
                    Wr = Wr[np.all(Wr != 0, axis=1)] if len(Wr) else Wr
                    if len(Wr):
                        c0sum = float(self.c0[list(key)].sum())
                        self._calibrate(key, c0sum, cells, Wr, gb, -math.inf, bound=False)
            beam = [(v, k2, th, u2, c2) for v, k2, th, u2, c2, _, _ in best]

    def _count(self, L: int, units: int) -> int:
        """How many supports (up to the size limit) a node with ``units`` and a list of L columns has
        below it, groups ignored (the share of the tree left at a limit, in ``stats``)."""
        return sum(math.comb(L, t) for t in range(0, max(int(self.p.max_size) - units, 0) + 1))

    def _next_listing(self) -> None:
        """List the deferred support of least bound (or rule it out by the incumbent)."""
        t = time.perf_counter()
        bound, _, cols, c0sum, gb, cells = heapq.heappop(self._deferred)
        if self._prunes(bound):
            self.discarded = min(self.discarded, bound)
        else:
            self._list_support(cols, c0sum, gb, cells)
        self._listing_time += time.perf_counter() - t

    def _try_start(self, lam: np.ndarray) -> None:
        """A start's points, calibrated over every scale (only an incumbent: no bound is read)."""
        if lam.shape != (self.p.d + 1,):
            return
        w = np.rint(lam[1:]).astype(np.int64)
        cols = tuple(int(j) for j in np.flatnonzero(w))
        if not cols or not all(self.p.coef_lower[j] <= w[j] <= self.p.coef_upper[j] for j in cols):
            return
        N, d, U = self.terms.cells(cols)
        S = (U @ w[list(cols)].astype(float))[None, :]
        F, a, _ = calibrate(N, d, self.terms.coef, self.terms.norm, S, np.array([0.2]))
        obj = float(F[0]) + float(self.c0[list(cols)].sum())
        if obj < self.best and a[0] > 0:
            lam2 = np.zeros(self.p.d + 1)
            lam2[1:] = w
            self.best, self.best_lam, self.best_scale = obj, lam2, float(1.0 / a[0])

    def _report(self, status: str | None) -> SolverReport:
        elapsed = time.perf_counter() - self.t0
        # C1 of every column bounds every score of the class (c0 ≥ 0), so it floors what was ruled out,
        # and so does the loss's own floor (where that regression's bound does not close)
        lower = min(self.best, max(self.discarded, self.root_bound, loss_floor(self.loss)))
        if self.best_lam is None:
            status = status or "infeasible"
            gap = math.inf
        else:
            gap = 0.0 if lower >= self.best else (self.best - lower) / max(abs(self.best), 1e-12)
            if status is None:
                within = gap <= self.gap_tolerance or self.best - lower <= self.absolute_gap_tolerance
                status = "optimal" if within else "numerical_gap"
        return SolverReport(
            status=status, objective=self.best, lower_bound=lower, gap=gap, time=elapsed, nodes=self.nodes, cuts=0,
            lp_solves=self.regressions, root_bound=self.root_bound if math.isfinite(self.root_bound) else 0.0,
            solver=COX_ENGINE_NAME,
            settings={"time_limit": self.time_limit, "gap_tolerance": self.gap_tolerance,
                      "absolute_gap_tolerance": self.absolute_gap_tolerance, "n_jobs": 1, "engine": "cox_supports",
                      "bound": ("the gap bound of the Cox regression on each support, on each node's columns "
                                f"with every later one and, t = 2 to {self.block_depth} columns short of the size "
                                "limit, on the node's columns with t blocks of its later ones (runs of neighbouring "
                                "cuts of one variable), and the tangent bound of each listed point vector, "
                                "calibrated"),
                      "scope": COX_SCOPE, "continuous_scale": True},
            solution=tuple(self.best_lam.tolist()) if self.best_lam is not None else (),
            scale=self.best_scale, listed=self.vectors)
