"""A risk-score problem: minimise loss + Σ c0_j·α_j over integer points and binary indicators.

The variables (points λ, "used" indicators α, auxiliaries) sit in one vector ``x`` laid out by
:class:`~riskformula.problem.layout.VariableLayout`; auxiliary columns come from the
formulation (see :mod:`riskformula.problem.builder`), then one binary ``u_g`` per
:class:`SizeGroup` ("some column of group g is used").

Every operational constraint is a :class:`LinearRow` over these columns, so the solver
sees one generic "convex loss + linear rows over integer and binary variables" problem.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from .layout import VariableLayout
from .loss import LogisticLoss


@dataclass(frozen=True)
class LinearRow:
    """``lower ≤ Σ coefs[k]·x[k] ≤ upper`` with a name to quote in error messages."""

    coefs: dict
    lower: float = -math.inf
    upper: float = math.inf
    name: str = ""


@dataclass(frozen=True)
class SizeGroup:
    """Design columns (0-based) that count once toward the model size.

    ``max_used`` caps how many of them may be nonzero (1 for one model-chosen threshold, None for
    no cap).  Each group gets a binary ``u_g`` = "some column of g is used", counted by the size
    row: ``u_g = Σα_j`` when ``max_used == 1``, otherwise ``α_j ≤ u_g ≤ Σα_j``.  The solver
    branches on ``u_g`` first (keep or drop a whole variable).
    """

    cols: tuple
    max_used: int | None = None
    name: str = ""

    @property
    def exclusive(self) -> bool:
        """At most one of several columns may be nonzero (e.g. the candidate cuts of one threshold)."""
        return self.max_used == 1 and len(self.cols) > 1


@dataclass
class RiskProblem:
    """Data and constraints of one fit.

    Parameters
    ----------
    loss : the :class:`LogisticLoss` on the training rows.
    coef_lower, coef_upper : integer bounds of the points of the d design columns.
    c0 : per-term sparsity penalty (length d) or a scalar.
    max_size, min_size : limits on the number of used terms.
    intercept_bounds : ``(lo, hi)``; derived from the data when ``None`` (see
        :func:`intercept_bounds`).
    rows : extra :class:`LinearRow` constraints over the variable vector.
    aux_* : bounds, integrality, cost and names of extra auxiliary columns used by ``rows``.
    aux_rule : ``f(lam, alpha) -> values`` of those extra columns implied by integer points, so
        that :meth:`complete` (and with it the heuristics) works with them; None if there is none.
    groups : :class:`SizeGroup` s; each counts once toward ``max_size``/``min_size``.
    exact_rows : the rows hold auxiliaries that ``aux_rule`` defines exactly (indicators of a
        score condition): the solver then accepts an integer point only through :meth:`complete`,
        so rows over them hold for their true values, not for the LP's rounded ones.
    indicators : ``(positions, E, cutoff, margin)`` blocks of binaries z = 1[E·λ ≥ cutoff]
        (see :meth:`ProblemBuilder.add_indicators`), for :meth:`fix_indicators`.
    cut_families : the columns of each threshold term (its candidate cuts), for the heuristics.

    ``layout`` (a :class:`VariableLayout`) says where each variable sits in ``x``.
    """

    loss: LogisticLoss
    coef_lower: np.ndarray
    coef_upper: np.ndarray
    c0: np.ndarray | float = 1e-6
    # None is resolved in __post_init__ (n_units; derived bounds), so after construction these are set
    max_size: int = None  # type: ignore[assignment]
    min_size: int = 0
    intercept_bounds: tuple[int, int] = None  # type: ignore[assignment]
    rows: list = field(default_factory=list)
    aux_lower: np.ndarray = field(default_factory=lambda: np.zeros(0))
    aux_upper: np.ndarray = field(default_factory=lambda: np.zeros(0))
    aux_integer: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    aux_cost: np.ndarray = field(default_factory=lambda: np.zeros(0))
    aux_names: list = field(default_factory=list)
    aux_rule: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    groups: list = field(default_factory=list)
    exact_rows: bool = False
    indicators: list = field(default_factory=list)
    #: column tuples that are the candidate cuts of one variable (a ``threshold()`` term): the
    #: heuristics treat each as one unit when they look for diverse supports
    cut_families: list = field(default_factory=list)

    def __post_init__(self):
        d = self.loss.d
        self.coef_lower = np.asarray(self.coef_lower, dtype=float).reshape(d)
        self.coef_upper = np.asarray(self.coef_upper, dtype=float).reshape(d)
        self.c0 = np.broadcast_to(np.asarray(self.c0, dtype=float), (d,)).copy()
        self.n_extra_aux = len(self.aux_lower)
        self._group_of = np.full(d, -1)
        for g, grp in enumerate(self.groups):
            if any(self._group_of[j] >= 0 for j in grp.cols):
                raise ValueError(f"column(s) of size group {grp.name!r} are already in another group")
            self._group_of[list(grp.cols)] = g
        # one binary u_g per group, after the caller's auxiliary columns
        n_groups = len(self.groups)
        self._group_aux = list(range(self.n_extra_aux, self.n_extra_aux + n_groups))
        self.aux_lower = np.append(self.aux_lower, np.zeros(n_groups))
        self.aux_upper = np.append(self.aux_upper, np.ones(n_groups))
        self.aux_integer = np.append(np.asarray(self.aux_integer, bool), np.ones(n_groups, bool))
        self.aux_cost = np.append(self.aux_cost, np.zeros(n_groups))
        self.aux_names = list(self.aux_names) + [f"used[{grp.name}]" for grp in self.groups]
        self.layout = VariableLayout(d, len(self.aux_lower))
        if self.max_size is None:
            self.max_size = self.n_units
        self.max_size = int(min(self.max_size, self.n_units))
        self._row_matrix: tuple | None = None
        self._row_csr: tuple | None = None
        if self.intercept_bounds is None:
            self.intercept_bounds = intercept_bounds(self)

    # --- sizes ----------------------------------------------------------------------------
    @property
    def d(self) -> int:
        return self.loss.d

    @property
    def n_aux(self) -> int:
        return self.layout.n_aux

    @property
    def n_cols(self) -> int:
        return self.layout.n_cols

    # --- size units: an ungrouped term or a group -----------------------------------------
    @property
    def n_units(self) -> int:
        return int(np.sum(self._group_of < 0)) + len(self.groups)

    def _unit_capacity(self) -> list[int]:
        caps = [1] * int(np.sum(self._group_of < 0))
        return caps + [len(g.cols) if g.max_used is None else min(g.max_used, len(g.cols)) for g in self.groups]

    @property
    def max_nonzero(self) -> int:
        """Most nonzero points a feasible model can have (groups may hold several per size unit)."""
        caps = sorted(self._unit_capacity(), reverse=True)
        return int(sum(caps[: self.max_size]))

    @property
    def exclusive_groups(self) -> list[SizeGroup]:
        """Groups of several columns of which at most one may be nonzero (the solver splits them
        by sign and in halves, SOS1-style)."""
        return [g for g in self.groups if g.exclusive]

    @property
    def unit_columns(self) -> np.ndarray:
        """Positions of the group indicators u_g."""
        return np.array([self.layout.aux(k) for k in self._group_aux], dtype=int)

    @property
    def can_complete(self) -> bool:
        """Whether :meth:`complete` can fill every auxiliary column from integer points."""
        return self.n_extra_aux == 0 or self.aux_rule is not None

    @property
    def needs_row_check(self) -> bool:
        """Whether points within their bounds and the size limit can still break a row."""
        return bool(self.rows) or bool(self.groups)

    def fix_indicators(self, lower: np.ndarray, upper: np.ndarray) -> None:
        """Fix (in place) every indicator z = 1[E·λ ≥ cutoff] whose condition cannot change within
        the column bounds ``lower``/``upper`` (of a search node): met for every λ in the box → 1,
        missed (by the margin) for every λ → 0.  The big-M rows imply this only loosely."""
        if not self.indicators:
            return
        lam = self.layout.lam_slice
        lo, hi = lower[lam], upper[lam]
        for pos, E, cut, eps in self.indicators:
            e_lo = np.minimum(E * lo, E * hi).sum(axis=1)
            e_hi = np.maximum(E * lo, E * hi).sum(axis=1)
            met = e_lo >= cut
            missed = e_hi <= cut - eps
            lower[pos[met]] = np.maximum(lower[pos[met]], 1.0)
            upper[pos[missed]] = np.minimum(upper[pos[missed]], 0.0)

    def model_size(self, lam: np.ndarray) -> int:
        """Number of size units with nonzero points."""
        used = np.asarray(lam[1:]) != 0
        n = int(np.sum(used & (self._group_of < 0)))
        return n + sum(bool(used[np.asarray(g.cols)].any()) for g in self.groups)

    def select_support(self, order) -> np.ndarray:
        """Greedy support in the given priority order of design columns that respects the size
        limit and every group's ``max_used``; used by rounding heuristics."""
        keep = np.zeros(self.d, dtype=bool)
        size = 0
        used_in = np.zeros(len(self.groups), dtype=int)
        for j in order:
            g = self._group_of[j]
            if g < 0:
                if size < self.max_size:
                    keep[j] = True
                    size += 1
                continue
            cap = self.groups[g].max_used
            if cap is not None and used_in[g] >= cap:
                continue
            if used_in[g] == 0:
                if size >= self.max_size:
                    continue
                size += 1
            used_in[g] += 1
            keep[j] = True
        return keep

    def column_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lo0, hi0 = self.intercept_bounds
        lower = np.concatenate([[lo0], np.minimum(self.coef_lower, 0), np.zeros(self.d), self.aux_lower])
        upper = np.concatenate([[hi0], np.maximum(self.coef_upper, 0), np.ones(self.d), self.aux_upper])
        return lower, upper

    @property
    def real_intercept(self) -> bool:
        """Whether the intercept is a real number (the loss's choice) rather than an integer."""
        return self.loss.real_intercept

    def integer_mask(self) -> np.ndarray:
        mask = np.concatenate([np.ones(2 * self.d + 1, dtype=bool), self.aux_integer.astype(bool)])
        mask[self.layout.intercept] = not self.real_intercept
        return mask

    def cost(self) -> np.ndarray:
        """Linear part of the objective (the loss is added by the solver's epigraph column)."""
        return np.concatenate([np.zeros(self.d + 1), self.c0, self.aux_cost])

    def all_rows(self) -> list[LinearRow]:
        """Indicator links, size limits and the user's rows (:meth:`row_arrays` holds the same
        rows as one sparse matrix)."""
        cols, vals, lower, upper = self._link_arrays()
        rows = [LinearRow(dict(zip(cols[i].tolist(), vals[i].tolist())), lower=float(lower[i]), upper=float(upper[i]),
                          name=f"link_{'upper' if i % 2 == 0 else 'lower'}[{i // 2 + 1}]") for i in range(len(cols))]
        return rows + self._other_rows()

    def _link_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The indicator links as ``(columns, values, lower, upper)``: row 2j is λ_j − u_j α_j ≤ 0,
        row 2j + 1 is λ_j − l_j α_j ≥ 0, each with its λ entry first, then its α entry."""
        d = self.d
        j = np.arange(d)
        pair = np.stack([self.layout.lam(j), self.layout.alpha(j)], 1)
        cols = np.stack([pair, pair], 1).reshape(2 * d, 2)
        vals = np.stack([np.stack([np.ones(d), -self.coef_upper], 1),
                         np.stack([np.ones(d), -self.coef_lower], 1)], 1).reshape(2 * d, 2)
        return cols, vals, np.tile([-math.inf, 0.0], d), np.tile([0.0, math.inf], d)

    def _other_rows(self) -> list[LinearRow]:
        """The rows after the indicator links: size groups, the size limit and the user's rows."""
        lay = self.layout
        rows = []
        size = dict.fromkeys(lay.alpha(np.flatnonzero(self._group_of < 0)).tolist(), 1.0)
        for g, grp in enumerate(self.groups):
            alphas = {lay.alpha(j): 1.0 for j in grp.cols}
            if grp.max_used is not None and grp.max_used < len(grp.cols):
                rows.append(LinearRow(alphas, upper=float(grp.max_used), name=f"{grp.name}: at most {grp.max_used}"))
            u = lay.aux(self._group_aux[g])
            if grp.max_used == 1:  # at most one column used: Σα is the group's count itself
                rows.append(LinearRow({u: 1.0, **{a: -1.0 for a in alphas}}, lower=0.0, upper=0.0,
                                      name=f"{grp.name}: used"))
            else:
                rows += [LinearRow({a: 1.0, u: -1.0}, upper=0.0, name=f"{grp.name}: used") for a in alphas]
                rows.append(LinearRow({u: 1.0, **{a: -1.0 for a in alphas}}, upper=0.0, name=f"{grp.name}: used"))
            size[u] = 1.0
        if self.d and (self.max_size < self.n_units or self.min_size > 0):
            rows.append(LinearRow(size, lower=float(self.min_size), upper=float(self.max_size), name="model size"))
        return rows + list(self.rows)

    def row_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`all_rows` as CSR arrays ``(starts, columns, values, lower, upper)`` (int32
        row starts and columns, zero entries left out), the indicator links written with numpy:
        thousands of candidate cuts make 2·d link rows, too many to build one by one at every scale
        and check.  Cached until rows are added (rows are fixed once solving starts)."""
        if self._row_matrix is not None and self._row_matrix[5] == len(self.rows):
            return self._row_matrix[:5]
        link_cols, link_vals, link_lower, link_upper = self._link_arrays()
        other = self._other_rows()
        cols = [link_cols.ravel()] + [np.fromiter(r.coefs.keys(), int, len(r.coefs)) for r in other]
        vals = [link_vals.ravel()] + [np.fromiter(r.coefs.values(), float, len(r.coefs)) for r in other]
        lengths = np.concatenate([np.full(len(link_cols), 2), [len(r.coefs) for r in other]]).astype(np.int64)
        cols_all, vals_all = np.concatenate(cols).astype(np.int64), np.concatenate(vals)
        row_of = np.repeat(np.arange(len(lengths)), lengths)
        keep = vals_all != 0
        counts = np.bincount(row_of[keep], minlength=len(lengths))
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32)
        lower = np.concatenate([link_lower, [r.lower for r in other]]).astype(float)
        upper = np.concatenate([link_upper, [r.upper for r in other]]).astype(float)
        arrays = (starts, cols_all[keep].astype(np.int32), vals_all[keep], lower, upper)
        self._row_matrix = (*arrays, len(self.rows))
        return arrays

    # --- evaluating candidate solutions -----------------------------------------------------
    def objective(self, lam: np.ndarray, x: np.ndarray | None = None) -> float:
        """True objective of an integer point: loss + Σ c0_j [λ_j ≠ 0] (+ aux cost)."""
        val = self.loss.value(lam) + float(self.c0 @ (lam[1:] != 0))
        if x is not None and self.n_aux:
            val += float(self.aux_cost @ x[self.layout.aux_slice])
        return val

    @property
    def has_aux_cost(self) -> bool:
        """Whether auxiliaries carry a cost (a penalty), so the objective needs :meth:`complete`."""
        return bool(np.any(self.aux_cost != 0))

    def full_objective(self, lam: np.ndarray) -> float:
        """The objective of integer points ``lam`` with their auxiliaries' cost (inf when the
        completed point is infeasible); :meth:`objective` when no auxiliary has a cost."""
        if not self.has_aux_cost:
            return self.objective(lam)
        x = self.complete(lam)
        return math.inf if x is None else self.objective(lam, x)

    def complete(self, lam: np.ndarray) -> np.ndarray | None:
        """The full variable vector implied by integer points ``lam`` (α_j = [λ_j ≠ 0]),
        or None when that vector breaks a bound or row.  Auxiliary columns are filled by
        ``aux_rule`` and group indicators by u_g = max α_j; without a rule it is None."""
        if not self.can_complete:
            return None
        alpha = (lam[1:] != 0).astype(float)
        # extra auxiliaries and can_complete: there is a rule
        extra = np.asarray(cast(Callable, self.aux_rule)(lam, alpha), float) if self.n_extra_aux else np.zeros(0)
        used = [float(alpha[np.asarray(grp.cols)].max()) for grp in self.groups]
        x = np.concatenate([lam, alpha, extra, used])
        return x if self.is_feasible(x) else None

    def is_feasible(self, x: np.ndarray, tol: float = 1e-7) -> bool:
        lower, upper = self.column_bounds()
        if np.any(x < lower - tol) or np.any(x > upper + tol):
            return False
        starts, cols, vals, lo, hi = self.row_arrays()
        if self._row_csr is None or self._row_csr[1] is not cols:
            from scipy.sparse import csr_matrix
            indptr = np.append(starts, len(cols))
            self._row_csr = (csr_matrix((vals, cols, indptr), shape=(len(starts), self.n_cols)), cols)
        A = self._row_csr[0]
        act = A @ x
        return not (np.any(act < lo - tol) or np.any(act > hi + tol))


def score_range(problem: RiskProblem, X: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest attainable score (without intercept) of every unique row (or of
    every row of ``X``), under the coefficient bounds and the size limit (Ustun & Rudin, 2019,
    Proposition 4).

    A size group contributes the sum of its ``max_used`` most extreme columns and counts as one
    of the ``max_size`` units."""
    if X is None:
        # the same at every score scale: the copies of one loss (:meth:`LogisticLoss.with_scale`) share
        # the ranges found for given bounds, size limit and groups (0.04 s each on 10⁶ rows, twice per scale)
        cache = getattr(problem.loss, "_score_ranges", None)
        key = (problem.coef_lower.tobytes(), problem.coef_upper.tobytes(), str(problem.coef_lower.dtype),
               str(problem.coef_upper.dtype), problem.max_size,
               tuple((tuple(g.cols), g.max_used) for g in problem.groups))
        if cache is not None and key in cache:
            return tuple(r.copy() for r in cache[key])
        ranges = _score_range(problem, problem.loss.Z[:, 1:])
        if cache is not None:
            cache[key] = tuple(r.copy() for r in ranges)
        return ranges
    return _score_range(problem, np.atleast_2d(np.asarray(X, float)))


def _score_range(problem: RiskProblem, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # with l ≤ u, min(x·l, x·u, 0) is x·min(l, 0) for x ≥ 0 and x·max(u, 0) for x < 0 (max: swapped);
    # design values are mostly ≥ 0 (indicators), where this is one product per entry, not four passes
    neg_part, pos_part = np.minimum(problem.coef_lower, 0.0), np.maximum(problem.coef_upper, 0.0)
    # row-major: the partition below runs along rows, in place (on a column-major design it copied
    # and strided: 0.4 s for 569 rows × 11 000 candidate cuts)
    lo, hi = np.multiply(X, neg_part, order="C"), np.multiply(X, pos_part, order="C")
    negative = np.flatnonzero((X < 0).any(axis=0))
    if len(negative):
        Xn = X[:, negative]
        lo[:, negative] = np.where(Xn < 0, Xn * pos_part[negative], lo[:, negative])
        hi[:, negative] = np.where(Xn < 0, Xn * neg_part[negative], hi[:, negative])
    if problem.groups:
        single = problem._group_of < 0
        lo_units, hi_units = [lo[:, single]], [hi[:, single]]
        for grp in problem.groups:
            cols = np.asarray(grp.cols)
            m = len(cols) if grp.max_used is None else min(grp.max_used, len(cols))
            lo_units.append(np.sort(lo[:, cols], axis=1)[:, :m].sum(axis=1, keepdims=True))
            hi_units.append(-np.sort(-hi[:, cols], axis=1)[:, :m].sum(axis=1, keepdims=True))
        lo, hi = np.hstack(lo_units), np.hstack(hi_units)
    R = problem.max_size
    if R < lo.shape[1]:
        # only the R most extreme contributions can be used at once (a partition, not a sort:
        # thousands of candidate cuts per row)
        if R > 0:
            lo = np.ascontiguousarray(lo)
            lo.partition(R - 1, axis=1)
            hi = np.negative(hi, order="C")
            hi.partition(R - 1, axis=1)
            lo, hi = lo[:, :R], -hi[:, :R]
        else:
            lo, hi = lo[:, :0], hi[:, :0]
    return lo.sum(axis=1), hi.sum(axis=1)


def intercept_bounds(problem: RiskProblem) -> tuple[int, int]:
    """Integer intercept range that provably contains an optimal intercept.

    With scores s_i ∈ [s_min_i, s_max_i] fixed, the loss is convex in λ_0 and its derivative is
    positive once λ_0 > −min s + m·log(W+/W−)⁺ and negative once λ_0 < −max s − m·log(W−/W+)⁺
    (score scale m: the logit is (λ_0 + s)/m); the best integer intercept is within 1 of the real one,
    so the range holds both.  Rows that constrain the intercept
    (side information) are not seen here: :mod:`riskformula.problem.builder` widens the range for them,
    and the summary reports when the intercept ends at an end of its range.
    """
    s_lo, s_hi = score_range(problem)
    wp, wn = problem.loss.w_pos.sum(), problem.loss.w_neg.sum()
    # with score scale m the logit is (s + λ_0)/m: the log-odds margin is m times wider in points
    log_ratio = problem.loss.scale * (math.log(wp / wn) if wp > 0 and wn > 0 else 0.0)
    hi = -float(s_lo.min()) + max(0.0, log_ratio) + 1
    lo = -float(s_hi.max()) - max(0.0, -log_ratio) - 1
    return int(math.floor(lo)), int(math.ceil(hi))


def loss_bounds(problem: RiskProblem) -> tuple[float, float]:
    """Best- and worst-case loss over the feasible scores (Ustun & Rudin, 2019, Proposition 4); a
    loss without an intercept (the Cox partial likelihood) bounds itself (``bounds_over``)."""
    s_lo, s_hi = score_range(problem)
    own = getattr(problem.loss, "bounds_over", None)
    if own is not None:
        return own(s_lo, s_hi)
    b0_lo, b0_hi = problem.intercept_bounds
    L = problem.loss
    m = L.scale
    lo = L._norm * (L.w_pos @ np.logaddexp(0, -(s_hi + b0_hi) / m) + L.w_neg @ np.logaddexp(0, (s_lo + b0_lo) / m))
    hi = L._norm * (L.w_pos @ np.logaddexp(0, -(s_lo + b0_lo) / m) + L.w_neg @ np.logaddexp(0, (s_hi + b0_hi) / m))
    return float(lo), float(hi)
