"""How the tree search branches: a whole group's "used" indicator first; the sign of the points of
an exclusive group (at most one nonzero column, e.g. the candidate cuts of a one-cut threshold);
its columns (SOS1, split at the LP's median); then single integer columns, chosen by pseudo-cost
once it is reliable, before that by the LP bounds of both children (reliability branching), which
then become the children's bounds."""

from __future__ import annotations

import math

import numpy as np

from .nodes import INT_TOL, Branch, Change, Child, NodePoint, SearchState, only_fractional, safe_bound


class Branching(SearchState):
    """The branching rules of a :class:`~riskformula.solver.branch_and_cut.BranchAndCut`."""

    def _branch(self, point: NodePoint, changes: tuple[Change, ...], lower: np.ndarray,
                upper: np.ndarray) -> list[Child] | None:
        """The children of a fractional node: on a group's indicator, a sign or SOS1 split of a
        group, else on one column (None: every child is pruned by its strong-branching bound)."""
        xi, frac, bound = point.xi, point.frac, point.bound
        units = only_fractional(frac, self.p.unit_columns)
        if units is not None:
            # keep or drop a whole group (a thresholded variable) before choosing its columns
            col, (b_down, b_up) = self._branch_column(xi, units, lower, upper, bound)
            v = xi[col]
            return self._children([(b_down, changes + (([col], -math.inf, 0.0),), (col, 0, v, bound)),
                                   (b_up, changes + (([col], 1.0, math.inf),), (col, 1, 1.0 - v, bound))])
        signs = self._sign_split(xi)
        if signs is not None:
            return [(bound, changes + ((signs, 0.0, math.inf),), None),
                    (bound, changes + ((signs, -math.inf, 0.0),), None)]
        sos = self._sos_split(xi)
        if sos is not None:
            left, right = sos
            return [(bound, changes + ((right, 0.0, 0.0),), None),
                    (bound, changes + ((left, 0.0, 0.0),), None)]
        # on 0/1 columns the points only scale indicators, and the LP spreads the support thin: which
        # items are used is settled first (support_first); with a count or a real-valued column,
        # branching on points did better (benchmarks/README.md)
        items = only_fractional(frac, self.alpha_slice) if self.support_first else None
        col, (b_down, b_up) = self._branch_column(xi, frac if items is None else items, lower, upper, bound)
        v = xi[col]
        down: Child = (b_down, changes + (([col], -math.inf, math.floor(v)),), (col, 0, v - math.floor(v), bound))
        up: Child = (b_up, changes + (([col], math.ceil(v), math.inf),), (col, 1, math.ceil(v) - v, bound))
        return self._children([up, down] if v - math.floor(v) >= 0.5 else [down, up])

    #: reliability branching: up to this many candidate columns whose pseudo-costs rest on fewer
    #: than :attr:`reliability` observations per direction get both children's LPs solved, and the
    #: best of them is branched on with those LP bounds (0: pseudo-costs alone).  Measured on one
    #: process: mammo certified in 4.3 s instead of 9.6 s, mushroom in 30 s instead of 57 s, adult's
    #: gap at 120 s 0.73 % instead of 2.9 %
    strong_candidates = 4
    reliability = 1

    def _children(self, kids: list[Child]) -> list[Child] | None:
        """Children whose strong-branching bound already settles them are pruned here."""
        out = []
        for kid in kids:
            if kid[0] >= self._prune_level():
                self._note_tol_prune(kid[0])
            else:
                out.append(kid)
        return out or None

    def _branch_column(self, xi: np.ndarray, frac: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                       bound: float) -> tuple[int, tuple[float, float]]:
        """The column to branch on and its children's bounds ``(down, up)``: by pseudo-cost, or by
        the children's LP bounds for candidates whose pseudo-costs are not yet reliable (reliability
        branching); an infeasible child gets bound ∞."""
        col = self._choose_branch(xi, frac)
        if not self.strong_candidates:
            return col, (bound, bound)
        cand = np.flatnonzero(frac > INT_TOL)
        unreliable = cand[self.pseudo_n[:, cand].min(axis=0) < self.reliability]
        if not len(unreliable):
            return col, (bound, bound)
        order = np.argsort(-frac[unreliable] * (1 - frac[unreliable]), kind="stable")  # most fractional first
        trial = unreliable[order[: self.strong_candidates]]
        lp = self.lp
        saved = lp.basis()
        best, best_score, best_bounds = col, -1.0, (bound, bound)
        try:
            for j in trial:
                v = xi[j]
                res = []
                for direction, (lo, hi) in enumerate(((lower[j], math.floor(v)), (math.ceil(v), upper[j]))):
                    lo_b, hi_b = lower.copy(), upper.copy()
                    lo_b[j], hi_b[j] = lo, hi
                    lp.set_bounds(lo_b, hi_b)
                    lp.restore(saved)
                    status, obj, _ = lp.solve(self._left())
                    self.lp_solves += 1
                    if status == "time_limit":
                        return col, (bound, bound)
                    child = math.inf if status == "infeasible" else max(safe_bound(obj), bound)
                    res.append(child)
                    dist = (v - math.floor(v)) if direction == 0 else (math.ceil(v) - v)
                    if dist > 1e-9 and math.isfinite(child):
                        self.pseudo[direction, j] += (child - bound) / dist
                        self.pseudo_n[direction, j] += 1
                gain = [min(r, self._ceiling()) - bound for r in res]
                score = max(gain[0], 1e-9) * max(gain[1], 1e-9)
                if score > best_score:
                    best, best_score, best_bounds = int(j), score, (res[0], res[1])
            return best, best_bounds
        finally:  # the node's own bounds and basis, for its children's warm starts
            lp.set_bounds(lower, upper)
            lp.restore(saved)

    def _split_used(self, j: int, bound: float, changes: tuple[Change, ...], lower: np.ndarray,
                    upper: np.ndarray) -> list[Child]:
        """Three children that exclude "used with zero points" for design column j: not used; used
        with λ_j ≥ 1; used with λ_j ≤ −1 (children that the node's bounds already rule out are dropped)."""
        a, lam_col = self.p.layout.alpha(j), self.p.layout.lam(j)
        kids: list[Child] = [(bound, changes + (([a], -math.inf, 0.0),), None)]
        if upper[lam_col] >= 1:
            kids.append((bound, changes + (([a, lam_col], 1.0, math.inf),), None))
        if lower[lam_col] <= -1:
            kids.append((bound, changes + (([a, lam_col], [1.0, -math.inf], [math.inf, -1.0]),), None))
        return kids

    def _sign_split(self, xi: np.ndarray) -> np.ndarray | None:
        """Split a one-nonzero group whose LP points have both signs: one child keeps every point
        of the group ≥ 0, the other ≤ 0.  An integer point has one nonzero, so it lies in a child;
        the LP loses its "bumps" (a rise and a fall made of two fractional cuts), which no single
        cut can score."""
        best, best_mass = None, INT_TOL
        for cols in self.sign_groups:
            lam = xi[cols]
            mixed = min(lam[lam > 0].sum(), -lam[lam < 0].sum())
            if mixed > best_mass:
                best, best_mass = cols, mixed
        return best

    def _sos_split(self, xi: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """SOS1 branching on a group whose columns may hold at most one nonzero (e.g. the
        candidate cuts of one threshold): when the LP spreads the group's indicators over several
        columns, split the group (in column order) at the α-weighted median; one child forbids
        the left part, the other the right part.  Every integer point lies in one child, and the
        depth is logarithmic in the group size instead of one level per column."""
        best, best_mass = None, INT_TOL
        for cols in self.sos_groups:
            a = xi[cols]
            if np.count_nonzero(a > INT_TOL) >= 2 and a.sum() > best_mass:
                best, best_mass = cols, a.sum()
        if best is None:
            return None
        a = xi[best]
        k = int(np.searchsorted(np.cumsum(a), 0.5 * a.sum()))
        nz = np.flatnonzero(a > INT_TOL)
        k = min(max(k, nz[0]), nz[-1] - 1)  # both parts keep some of the LP's mass
        return best[: k + 1], best[k + 1:]

    def _update_pseudocost(self, branch: Branch, bound: float) -> None:
        col, direction, dist, parent = branch
        if dist > 1e-9:
            self.pseudo[direction, col] += (bound - parent) / dist
            self.pseudo_n[direction, col] += 1


    def _choose_branch(self, xi: np.ndarray, frac: np.ndarray) -> int:
        cand = np.flatnonzero(frac > INT_TOL)
        f_down = xi[cand] - np.floor(xi[cand])
        f_up = 1.0 - f_down
        n = self.pseudo_n[:, cand]
        tot = self.pseudo_n.sum(axis=1)
        avg = np.where(tot > 0, self.pseudo.sum(axis=1) / np.maximum(tot, 1), 1.0)
        pc_down = np.where(n[0] > 0, self.pseudo[0, cand] / np.maximum(n[0], 1), avg[0])
        pc_up = np.where(n[1] > 0, self.pseudo[1, cand] / np.maximum(n[1], 1), avg[1])
        eps = 1e-9
        score = np.maximum(pc_down * f_down, eps) * np.maximum(pc_up * f_up, eps)
        return int(cand[int(np.argmax(score))])
