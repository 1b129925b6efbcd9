"""The node LP: the problem's linear part plus an epigraph column for the loss, solved by HiGHS.

Loss cuts ``L ≥ l(λᵗ) + ∇l(λᵗ)·(λ − λᵗ)`` are appended as rows; every node re-solves the same
HiGHS instance after changing column bounds, so the simplex warm-starts from the last basis.
Cuts dropped from the LP to keep it small go to a :class:`CutArchive`, from which a node takes
back the ones its LP point violates most.
"""

from __future__ import annotations

import math
from typing import Any

import highspy
import numpy as np

from ..errors import SolverError
from ..problem import RiskProblem

_INF = highspy.kHighsInf
#: a node LP's dual simplex gets this many seconds before the primal simplex takes over
STALL_SECONDS = 2.0
_BASIC = highspy.HighsBasisStatus.kBasic.value
_LOWER = highspy.HighsBasisStatus.kLower.value
_STATUS = np.empty(1 + max(v.value for v in highspy.HighsBasisStatus.__members__.values()), dtype=object)
for _v in highspy.HighsBasisStatus.__members__.values():
    _STATUS[_v.value] = _v


class _SilentHighs(highspy.Highs):
    """``highspy.Highs`` that prints nothing.  highspy 1.16 enables its callbacks while it is made,
    and HiGHS prints its banner on stdout at that first call unless ``output_flag`` is already off;
    options cannot be set earlier, so they are set here, just before."""

    def enableCallbacks(self):
        self.setOptionValue("output_flag", False)
        super().enableCallbacks()


def silent_highs() -> highspy.Highs:
    """A HiGHS instance with its output off from the start (no banner on stdout)."""
    h = _SilentHighs()
    h.setOptionValue("output_flag", False)
    return h


def _csr(rows):
    starts, idx, vals = [0], [], []
    for r in rows:
        for k, v in r.coefs.items():
            if v != 0:
                idx.append(k)
                vals.append(v)
        starts.append(len(idx))
    return (np.array(starts[:-1], dtype=np.int32), np.array(idx, dtype=np.int32),
            np.array(vals, dtype=float))


def _finite(a):
    a = np.asarray(a, dtype=float)
    return np.where(np.isposinf(a), _INF, np.where(np.isneginf(a), -_INF, a))


class CutArchive:
    """Loss cuts dropped from the node LP, kept as dense rows over the points and the loss column.

    A pool of a few hundred rows keeps every LP fast, but a node's bound needs the cuts that are
    tight near its own optimum, often taken at other nodes long ago; :meth:`take_violated` hands
    those back.  At most ``capacity`` rows are kept (the oldest go first)."""

    def __init__(self, n_coef: int, capacity: int):
        self.n_coef = int(n_coef)
        self.capacity = int(capacity)
        self.A = np.zeros((0, self.n_coef + 1))  # points' coefficients, then the loss column's
        self.rhs = np.zeros(0)  # −∞ marks a row taken out (removed for good at the next compaction)
        self.keys: list = []
        self.serials = np.zeros(0, dtype=np.int64)
        self._taken = 0

    def __len__(self) -> int:
        return len(self.rhs) - self._taken

    def add(self, rows, n_cols: int) -> None:
        """Archive cut rows ``(rhs, columns, values, key, serial)`` of an LP with ``n_cols`` columns
        (its last column is the loss)."""
        if not rows:
            return
        A = np.zeros((len(rows), self.n_coef + 1))
        idx = np.concatenate([r[1] for r in rows])
        at = np.repeat(np.arange(len(rows)), [len(r[1]) for r in rows])
        A[at, np.where(idx == n_cols - 1, self.n_coef, idx)] = np.concatenate([r[2] for r in rows])
        self.extend(A, np.array([r[0] for r in rows], dtype=float), [r[3] for r in rows],
                    np.array([r[4] for r in rows], dtype=np.int64))

    def extend(self, A, rhs, keys, serials) -> None:
        """Append dense rows (as :meth:`state` gives them), keeping the newest ``capacity``."""
        if not self.capacity:
            return
        self._compact()
        keep = self.capacity
        self.A = np.vstack([self.A, A])[-keep:]
        self.rhs = np.concatenate([self.rhs, rhs])[-keep:]
        self.keys = (self.keys + list(keys))[-keep:]
        self.serials = np.concatenate([self.serials, serials])[-keep:]

    def take_violated(self, x: np.ndarray, limit: int, tol: float):
        """Remove and return the (at most ``limit``) rows most violated, by more than ``tol``, at
        the LP point ``x`` (points first, loss column last), most violated first, as ``(rhs,
        rows, keys, serials)`` (``rows`` dense over ``x``'s positions)."""
        if not len(self) or limit <= 0:
            return np.zeros(0), np.zeros((0, self.n_coef + 1)), [], np.zeros(0, dtype=np.int64)
        violation = self.rhs - self.A @ x
        top = np.flatnonzero(violation > tol)
        if len(top) > limit:
            top = top[np.argpartition(-violation[top], limit - 1)[:limit]]
        top = top[np.lexsort((top, -violation[top]))]
        out = (self.rhs[top].copy(), self.A[top], [self.keys[r] for r in top], self.serials[top].copy())
        self._take(top)
        return out

    def discard_key(self, key) -> None:
        """Drop the archived cut taken at the integer point ``key`` (it is back in the LP)."""
        live = [r for r, k in enumerate(self.keys) if k == key and self.rhs[r] > -np.inf]
        if live:
            self._take(live)

    def _take(self, rows) -> None:
        self.rhs[rows] = -np.inf  # never violated: out of every later search
        self._taken += len(rows)
        if self._taken > len(self.rhs) // 2:
            self._compact()

    def _compact(self) -> None:
        if not self._taken:
            return
        keep = self.rhs > -np.inf
        self.A, self.rhs, self.serials = self.A[keep], self.rhs[keep], self.serials[keep]
        self.keys = [k for k, on in zip(self.keys, keep) if on]
        self._taken = 0

    def state(self) -> tuple:
        """``(A, rhs, keys, serials)``, for :meth:`extend` on another archive (another process)."""
        self._compact()
        return self.A, self.rhs, list(self.keys), self.serials


class NodeLP:
    """LP relaxation of a :class:`RiskProblem` with a pool of loss cuts; ``scaled=False`` turns
    HiGHS' scaling off (for an LP rebuilt from another's pool, see below)."""

    #: rows the :class:`CutArchive` keeps at most: dense rows over the points, so fewer when there
    #: are many columns (4 MB at most: the archive travels to every worker process each round)
    archive_rows = 4000

    def __init__(self, problem: RiskProblem, loss_lower: float, loss_upper: float, scaled: bool = True):
        self.problem = problem
        self.n_coef = problem.d + 1
        self.n_cols = problem.n_cols + 1  # last column: the loss L
        self.L = self.n_cols - 1
        h = silent_highs()
        for name, value in (("threads", 1), ("presolve", "off"), ("solver", "simplex"), ("random_seed", 0)):
            h.setOptionValue(name, value)
        if not scaled:
            # an LP rebuilt with a pool of cuts (a search continued in another process) gets column
            # scales from the cut rows, and its dual simplex stalled for seconds at many nodes;
            # unscaled, it solves as fast as the LP that grew its pool (measured on both)
            h.setOptionValue("simplex_scale_strategy", 0)
        lower, upper = problem.column_bounds()
        cost = np.concatenate([problem.cost(), [1.0]])
        lower = np.concatenate([lower, [loss_lower]])
        upper = np.concatenate([upper, [loss_upper]])
        h.addCols(self.n_cols, cost, _finite(lower), _finite(upper), 0,
                  np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        starts, idx, vals, row_lower, row_upper = problem.row_arrays()
        self.n_base_rows = len(starts)
        if len(starts):
            h.addRows(len(starts), _finite(row_lower), _finite(row_upper), len(idx), starts, idx, vals)
        self.h = h
        self.n_cuts = 0
        self._cut_keys: list = []  # per cut row: the integer point it was taken at, or None
        self._cut_rows: list = []  # per cut row: (rhs, columns, values)
        self._cut_ids: list[int] = []  # per cut row: a serial number, to match saved bases
        self._next_id = 0
        self._all_cols = np.arange(self.n_cols, dtype=np.int32)
        self.archive = CutArchive(self.n_coef, min(self.archive_rows, 500_000 // (self.n_coef + 1)))
        self.lower = lower
        self.upper = upper

    def add_cut(self, lam: np.ndarray, value: float, grad: np.ndarray, key: bytes | None = None) -> None:
        """Add L − ∇l·λ ≥ l(λᵗ) − ∇l·λᵗ, scaled so its largest gradient entry is 1; ``key``
        names the integer point it was taken at (see :meth:`has_cut`).

        Near-separable data have tiny gradients, and HiGHS treats matrix entries below 1e-9 as
        zero; scaling the row (the same inequality) keeps its relative precision."""
        big = float(np.abs(grad).max()) if len(grad) else 0.0
        scale = 1.0 / big if 0.0 < big < 1.0 else 1.0
        nz = np.flatnonzero(grad)
        idx = np.concatenate([nz, [self.L]]).astype(np.int32)
        vals = scale * np.concatenate([-grad[nz], [1.0]])
        rhs = scale * (value - float(grad @ lam))
        self.h.addRow(rhs, _INF, len(idx), idx, vals)
        self._keep(rhs, idx, vals, key)
        if key is not None:
            self.archive.discard_key(key)

    def bound_with_cut(self, lam: np.ndarray, value: float, grad: np.ndarray, seconds: float | None = None):
        """``(status, objective)`` of the LP with one more cut (as :meth:`add_cut`), which is then
        removed again: the pool, its bookkeeping and the search's LPs stay as they were."""
        self.add_cut(lam, value, grad)
        status, obj, _ = self.solve(seconds)
        row = self.n_base_rows + self.n_cuts - 1
        self.h.deleteRows(1, np.array([row], dtype=np.int32))
        self.n_cuts -= 1
        self._cut_rows.pop()
        self._cut_keys.pop()
        self._cut_ids.pop()
        return status, obj

    def add_rows(self, cuts) -> None:
        """Add cut rows ``(rhs, columns, values, key[, serial])`` (as :meth:`cuts` returns them: with
        their serial numbers, saved bases that name them stay valid here)."""
        if not cuts:
            return
        starts = np.cumsum([0] + [len(c[1]) for c in cuts[:-1]]).astype(np.int32)
        idx = np.concatenate([c[1] for c in cuts]).astype(np.int32)
        vals = np.concatenate([c[2] for c in cuts])
        rhs = np.array([c[0] for c in cuts], dtype=float)
        self.h.addRows(len(cuts), rhs, np.full(len(cuts), _INF), len(idx), starts, idx, vals)
        for cut in cuts:
            self._keep(*cut)

    def _keep(self, rhs, idx, vals, key, serial=None) -> None:
        """Book a row just added to HiGHS as the pool's newest cut."""
        self._cut_rows.append((rhs, idx, vals))
        self._cut_keys.append(key)
        if serial is None:
            serial = self._next_id
        self._cut_ids.append(serial)
        self._next_id = max(self._next_id, serial + 1)
        self.n_cuts += 1

    def cuts(self) -> list:
        """The pool's cut rows ``(rhs, columns, values, key, serial)``, oldest first: another NodeLP
        of the same problem takes them with :meth:`add_rows` (a search continued in another process)."""
        return [(*row, key, i) for row, key, i in zip(self._cut_rows, self._cut_keys, self._cut_ids)]

    @property
    def next_serial(self) -> int:
        """The serial number the next cut gets (above every archived cut's too)."""
        archived = int(self.archive.serials.max()) + 1 if len(self.archive) else 0
        return max(self._next_id, archived)

    def number_cuts_from(self, first: int) -> None:
        """Number the cuts added from now on from ``first`` on (searches in several processes give
        each its own range, so their cuts and saved bases can be merged)."""
        self._next_id = max(self._next_id, int(first))

    def has_cut(self, key: bytes) -> bool:
        """Whether the pool still holds the cut taken at the integer point ``key``."""
        return key in self._cut_keys

    def restore_archived(self, x: np.ndarray, limit: int, tol: float) -> int:
        """Move back into the LP the (at most ``limit``) archived cuts most violated, by more than
        ``tol``, at its point ``x``; returns how many.  They keep their serial numbers, so saved
        bases that name them stay valid."""
        point = np.concatenate([x[: self.n_coef], x[self.L:self.L + 1]])
        rhs, rows, keys, serials = self.archive.take_violated(point, limit, tol)
        cuts = []
        for k, row in enumerate(rows):
            pos = np.flatnonzero(row)
            idx = np.where(pos == self.n_coef, self.L, pos).astype(np.int32)
            cuts.append((float(rhs[k]), idx, row[pos], keys[k], int(serials[k])))
        self.add_rows(cuts)
        return len(cuts)

    def set_bounds(self, lower: np.ndarray, upper: np.ndarray) -> None:
        """Column bounds of the problem's columns (the loss column keeps its own)."""
        lo = self.lower.copy()
        hi = self.upper.copy()
        lo[:-1] = lower
        hi[:-1] = upper
        self.h.changeColsBounds(self.n_cols, self._all_cols, lo, hi)

    def set_loss_bounds(self, lo: float, hi: float) -> None:
        self.lower[-1] = lo
        self.upper[-1] = hi
        self.h.changeColBounds(self.L, lo, hi)

    def solve(self, seconds: float | None = None):
        """Return ``(status, objective, x)``; status is 'optimal', 'infeasible' or, when the solve
        takes more than ``seconds``, 'time_limit' (one LP can be slow: degenerate big-M rows)."""
        h = self.h
        left = math.inf if seconds is None else max(float(seconds), 0.01)
        # HiGHS compares its limit with the run time summed over every run of this instance
        h.setOptionValue("time_limit", float(h.getRunTime()) + min(left, STALL_SECONDS))
        h.run()
        st = h.getModelStatus()
        if st == highspy.HighsModelStatus.kTimeLimit and left > STALL_SECONDS:
            # the dual simplex can stall on degenerate LPs (thousands of big-M indicator rows);
            # the primal simplex, started afresh, solves them
            h.clearSolver()
            h.setOptionValue("simplex_strategy", 4)
            h.setOptionValue("time_limit", float(h.getRunTime()) + (left - STALL_SECONDS))
            h.run()
            h.setOptionValue("simplex_strategy", 1)
            st = h.getModelStatus()
        h.setOptionValue("time_limit", _INF)
        if st == highspy.HighsModelStatus.kTimeLimit:
            return "time_limit", np.nan, None
        if st == highspy.HighsModelStatus.kOptimal:
            x = np.asarray(h.getSolution().col_value)
            return "optimal", h.getInfo().objective_function_value, x
        if st == highspy.HighsModelStatus.kInfeasible:
            return "infeasible", np.inf, None
        # numerical trouble: retry from scratch, then with the primal simplex, then with the
        # interior point method (seen with nearly separable data, where the loss tends to 0)
        retries: tuple[tuple[str | None, Any, Any], ...] = (
            (None, None, None), ("simplex_strategy", 4, 1), ("solver", "ipm", "simplex"))
        for option, value, default in retries:
            h.clearSolver()
            if option:
                h.setOptionValue(option, value)
            h.run()
            if option:
                h.setOptionValue(option, default)
            st = h.getModelStatus()
            if st == highspy.HighsModelStatus.kTimeLimit:
                return "time_limit", np.nan, None
            if st == highspy.HighsModelStatus.kOptimal:
                return "optimal", h.getInfo().objective_function_value, np.asarray(h.getSolution().col_value)
            if st == highspy.HighsModelStatus.kInfeasible:
                return "infeasible", np.inf, None
        raise SolverError(f"HiGHS could not solve a node LP (status: {h.modelStatusToString(st)}).")

    def drop_slack_cuts(self, keep: int) -> None:
        """Remove the most slack cuts so at most ``keep`` remain (valid: fewer rows, weaker LP);
        they go to the :attr:`archive`."""
        if self.n_cuts <= keep:
            return
        sol = self.h.getSolution()
        row_val = np.asarray(sol.row_value)[self.n_base_rows:]
        lp = self.h.getLp()
        row_lo = np.asarray(lp.row_lower_)[self.n_base_rows:]
        slack = row_val - row_lo
        order = np.argsort(-slack)
        gone = np.sort(order[: self.n_cuts - keep])
        drop = gone + self.n_base_rows
        self.h.deleteRows(len(drop), drop.astype(np.int32))
        self.n_cuts -= len(drop)
        dropped = set(gone.tolist())
        self.archive.add([(*self._cut_rows[r], self._cut_keys[r], self._cut_ids[r]) for r in gone],
                         self.n_cols)
        self._cut_keys = [k for r, k in enumerate(self._cut_keys) if r not in dropped]
        self._cut_rows = [k for r, k in enumerate(self._cut_rows) if r not in dropped]
        self._cut_ids = [k for r, k in enumerate(self._cut_ids) if r not in dropped]

    # --- warm starts across the tree -------------------------------------------------------
    def basis(self):
        """The optimal basis of the last solve, for :meth:`restore` at a child node (children
        are solved later, after other nodes have moved the simplex elsewhere)."""
        b = self.h.getBasis()
        if not b.valid:
            return None
        cols = np.array([v.value for v in b.col_status], dtype=np.int8)
        rows = np.array([v.value for v in b.row_status], dtype=np.int8)
        cuts = rows[self.n_base_rows:]
        tight = np.flatnonzero(cuts != _BASIC)  # a restored cut is basic unless saved otherwise
        return cols, rows[: self.n_base_rows], {self._cut_ids[k]: int(cuts[k]) for k in tight}

    def restore(self, saved) -> bool:
        """Start the next solve from a saved basis (True if set); cuts added since are basic.  A
        basis whose tight cuts were dropped since gets as many other cuts made tight (HiGHS repairs
        a singular one)."""
        if saved is None:
            return False
        cols, base, cuts = saved
        rows = np.concatenate([base, np.fromiter((cuts.get(i, _BASIC) for i in self._cut_ids), np.int8,
                                                 len(self._cut_ids))])
        extra = int(np.count_nonzero(cols == _BASIC) + np.count_nonzero(rows == _BASIC)) - len(rows)
        if extra > 0:
            # cuts that were tight in the saved basis have been dropped since: as many of the
            # newest basic cuts become tight instead, so the basis stays square
            loose = np.flatnonzero(rows[self.n_base_rows:] == _BASIC) + self.n_base_rows
            if len(loose) < extra:
                return False
            rows[loose[-extra:]] = _LOWER
        elif extra < 0:
            return False
        b = highspy.HighsBasis()
        b.col_status = _STATUS[cols].tolist()
        b.row_status = _STATUS[rows].tolist()
        return self.h.setBasis(b) == highspy.HighsStatus.kOk
