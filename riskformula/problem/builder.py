"""Design spec + bounds + formulations → :class:`RiskProblem`, through one small interface.

Everything that adds to the problem beyond "points within bounds, at most ``max_size`` terms"
— a ``threshold()`` term (:mod:`riskformula.thresholds`), ``factors_as_one``, every
:class:`~riskformula.problem.constraints.Constraint` — is an object with ``apply(builder)`` that
writes its own formulation with the primitives of :class:`ProblemBuilder`:

* ``builder.columns(name)`` — the design columns a name covers (one resolver for every argument,
  :class:`~riskformula.design.terms.TermResolver`; ``builder.terms`` for the rest of it);
* ``builder.layout`` — positions in the variable vector (``intercept``, ``lam(j)``, ``alpha(j)``);
* ``bounds(cols)``, ``set_bounds(cols, lower, upper)``, ``tighten(cols, lower=, upper=)`` — the
  integer point bounds of design columns;
* ``add_row(coefs, lower, upper, name)`` — a linear row over variable positions;
* ``add_aux(lower, upper, integer=, name=, fill=, cost=)`` — an auxiliary variable and the rule
  that fills it from integer points (so heuristics can complete candidate solutions), with an
  optional cost in the objective (a penalty);
* ``add_indicators(E, cutoff, margin, name)`` — binaries z_i = 1[E_i·λ ≥ cutoff_i] of linear score
  conditions (big-M rows whose M the builder derives from the final bounds);
* ``training`` — the training rows (design rows, outcomes, weights, the data frame) for
  constraints that are statements about data, see :class:`~riskformula.problem.training.TrainingRows`;
* ``used(name)`` — row coefficients of the 0/1 quantity "term ``name`` has nonzero points";
* ``add_group(cols, max_used=, name=)`` — columns that count once toward the model size.

A new kind of constraint (fairness, net benefit, ...) is one module with
:class:`~riskformula.problem.constraints.Constraint` subclasses that use only these (the fairness
notions of :mod:`riskformula.fairness` are an example).

Rows that involve the intercept (side information) widen the derived intercept range: the
optimal intercept for fixed points is the unconstrained one projected onto the interval these
rows allow, which lies within the widened range.
"""

from __future__ import annotations

import math

import numpy as np

from .constraints import Constraint, OneVariable
from .layout import VariableLayout
from .problem import LinearRow, RiskProblem, SizeGroup, score_range

__all__ = ["ProblemBuilder", "build_problem"]


class ProblemBuilder:
    """Collects bounds, rows, auxiliary variables and size groups over a design's columns.

    Parameters
    ----------
    terms : the design's :class:`~riskformula.design.terms.TermResolver` (names → columns).
    lower, upper : integer point bounds of the design columns (copied).
    scale : the score scale m of the loss (rows on the risk, such as side information or a
        fairness cut-off ``at_risk``, are written on the score scale: risk ≥ p is
        λ_0 + score ≥ m·logit(p)).
    training : the :class:`~riskformula.problem.training.TrainingRows` of the fit, or None.
    """

    def __init__(self, terms, lower: np.ndarray, upper: np.ndarray, scale: float = 1.0, training=None):
        self.terms = terms
        #: the score scale m: a score (intercept included) of m points is one logit
        self.scale = float(scale)
        self.d = terms.n_columns
        self.layout = VariableLayout(self.d)
        self.lower = np.array(lower, dtype=float)
        self.upper = np.array(upper, dtype=float)
        self.training = training
        self.rows: list[LinearRow] = []
        self.aux: list[dict] = []
        self.groups: dict[tuple, SizeGroup] = {}
        self._used: dict[tuple, dict] = {}
        self._indicators: list[dict] = []

    # --- names and bounds -----------------------------------------------------------------
    def columns(self, name: str) -> list[int]:
        """Design columns (0-based) named by a column, label, formula term or variable."""
        return self.terms.columns(name, where="a constraint")

    def bounds(self, cols) -> tuple[np.ndarray, np.ndarray]:
        """Current point bounds of ``cols`` (copies)."""
        cols = list(cols)
        return self.lower[cols].copy(), self.upper[cols].copy()

    def set_bounds(self, cols, lower: float, upper: float) -> None:
        cols = list(cols)
        self.lower[cols], self.upper[cols] = lower, upper

    def tighten(self, cols, lower: float | None = None, upper: float | None = None) -> None:
        """Raise the lower and/or lower the upper point bound of ``cols``."""
        cols = list(cols)
        if lower is not None:
            self.lower[cols] = np.maximum(self.lower[cols], lower)
        if upper is not None:
            self.upper[cols] = np.minimum(self.upper[cols], upper)

    # --- rows, auxiliaries, groups --------------------------------------------------------
    def add_row(self, coefs: dict, lower: float, upper: float, name: str) -> None:
        """``lower ≤ Σ coefs[k]·x[k] ≤ upper`` over variable positions (see :attr:`layout`)."""
        self.rows.append(LinearRow({k: v for k, v in coefs.items() if v != 0}, lower, upper, name))

    def add_aux(self, lower: float, upper: float, *, integer: bool, name: str, fill, cost: float = 0.0) -> int:
        """Add an auxiliary variable; ``fill(lam, alpha)`` gives its value implied by integer
        points (``lam`` intercept first, ``alpha`` one entry per design column), the best one when
        it has a ``cost`` in the objective.  Returns its position."""
        self.aux.append(dict(lower=lower, upper=upper, integer=integer, name=name, fill=fill, cost=float(cost)))
        return self.layout.aux(len(self.aux) - 1)

    def add_indicators(self, E, cutoff, margin, name: str, chain: int | None = None) -> np.ndarray:
        """Binaries z_i with z_i = 1 ⇔ E_i·λ ≥ cutoff_i and z_i = 0 ⇔ E_i·λ ≤ cutoff_i − margin_i.

        ``E`` is (k, d + 1) over the λ vector (intercept first); a score strictly between
        ``cutoff − margin`` and ``cutoff`` is infeasible, so with integer E_i, integer cutoff and
        margin 1 the link is exact.  Each z gets two big-M rows; M comes from the final point and
        intercept bounds and the size limit (so it is as small as those allow), and a z whose
        condition cannot change is fixed.  The intercept range is widened so that every
        condition can be met and missed (an optimal intercept may sit where a row flips).

        ``chain=L``: the rows come in runs of L with the same integer E_i and cut-offs k, k + 1, …,
        k + L − 1 (margin 1), i.e. the levels 1[score ≥ k + i] of one integer score.  Each run's
        z's are then also ordered (z_{i+1} ≤ z_i) and tied to the score by its unary expansion
        score = k − 1 + Σ_i z_i (loosened below the first and above the last level), which is
        exact for integer points and much tighter in the LP than the big-M rows alone.
        Returns the positions of the z's."""
        E = np.atleast_2d(np.asarray(E, float))
        k = E.shape[0]
        cutoff = np.broadcast_to(np.asarray(cutoff, float), (k,)).copy()
        margin = np.broadcast_to(np.asarray(margin, float), (k,)).copy()
        if E.shape[1] != self.d + 1 or np.any(margin <= 0):
            raise ValueError("add_indicators needs E of shape (k, d + 1) and positive margins")
        if chain is not None:
            runs = k // chain
            steps = cutoff.reshape(runs, chain) - cutoff.reshape(runs, chain)[:, :1]
            if (k % chain or np.any(steps != np.arange(chain)) or np.any(margin != 1)
                    or np.any(E.reshape(runs, chain, -1) != E.reshape(runs, chain, -1)[:, :1])):
                raise ValueError("add_indicators(chain=L) needs runs of L rows with one E and cut-offs k, k + 1, ...")
        start = len(self.aux)
        for i in range(k):
            self.aux.append(dict(lower=0.0, upper=1.0, integer=True, name=f"{name}[{i}]", fill=None, cost=0.0))
        self._indicators.append(dict(start=start, E=E, cutoff=cutoff, margin=margin, name=name, chain=chain))
        return np.array([self.layout.aux(start + i) for i in range(k)], dtype=int)

    def add_group(self, cols, max_used: int | None = None, name: str = "") -> bool:
        """Count ``cols`` once toward the model size, with at most ``max_used`` of them nonzero.

        A column counts through one group only: if any of ``cols`` is already grouped, nothing
        is added and False is returned."""
        cols = tuple(cols)
        if any(set(cols) & set(g) for g in self.groups):
            return False
        self.groups[cols] = SizeGroup(cols, max_used=max_used, name=name)
        return True

    def used(self, name: str) -> dict:
        """Row coefficients of the 0/1 quantity "term ``name`` is used".

        One column: its α.  A group with at most one column used: Σα.  Otherwise a binary u with
        α_j ≤ u ≤ Σ α_j, added once per term."""
        cols = tuple(self.columns(name))
        lay = self.layout
        if len(cols) == 1:
            return {lay.alpha(cols[0]): 1.0}
        grp = self.groups.get(cols)
        if grp is not None and grp.max_used == 1:
            return {lay.alpha(j): 1.0 for j in cols}
        if cols not in self._used:
            idx = np.asarray(cols)
            u = self.add_aux(0.0, 1.0, integer=True, name=f"used[{name}]",
                             fill=lambda lam, alpha, idx=idx: float(alpha[idx].max()))
            for j in cols:
                self.add_row({lay.alpha(j): 1.0, u: -1.0}, -math.inf, 0.0, f"used[{name}]")
            self.add_row({u: 1.0, **{lay.alpha(j): -1.0 for j in cols}}, -math.inf, 0.0, f"used[{name}]")
            self._used[cols] = {u: 1.0}
        return self._used[cols]

    # --- the problem ------------------------------------------------------------------------
    def problem(self, loss, c0, max_size, min_size, intercept_range) -> RiskProblem:
        aux = self.aux
        singles = [(k, a["fill"]) for k, a in enumerate(aux) if a["fill"] is not None]
        blocks = [(b["start"], b["E"], b["cutoff"]) for b in self._indicators]
        n = len(aux)

        def aux_rule(lam, alpha):
            out = np.empty(n)
            for start, E, cut in blocks:  # indicators first: other fills may read them
                out[start:start + len(cut)] = E @ lam >= cut
            for k, f in singles:
                out[k] = f(lam, alpha)
            return out

        p = RiskProblem(loss, self.lower, self.upper, c0=c0, max_size=max_size, min_size=min_size,
                        intercept_bounds=intercept_range, rows=list(self.rows),
                        aux_lower=np.array([a["lower"] for a in aux], float),
                        aux_upper=np.array([a["upper"] for a in aux], float),
                        aux_integer=np.array([a["integer"] for a in aux], bool),
                        aux_cost=np.array([a["cost"] for a in aux], float), aux_names=[a["name"] for a in aux],
                        aux_rule=aux_rule if aux else None, groups=list(self.groups.values()),
                        exact_rows=bool(self._indicators),
                        indicators=[(np.array([self.layout.aux(b["start"] + i) for i in range(len(b["cutoff"]))], int),
                                     b["E"], b["cutoff"], b["margin"]) for b in self._indicators])
        if intercept_range is None:
            p.intercept_bounds = self._widened(p.intercept_bounds)
            if self._indicators:
                p.intercept_bounds = self._widened_for_indicators(p)
        for b in self._indicators:
            self._link(p, b)
        return p

    def _widened_for_indicators(self, p: RiskProblem) -> tuple[int, int]:
        """Widen the intercept range so that every indicator's condition can hold and fail: for
        fixed points, the best intercept either is the unconstrained one (inside the derived
        range) or sits where some row's condition flips."""
        lo, hi = p.intercept_bounds
        for b in self._indicators:
            E, cut, eps = b["E"], b["cutoff"], b["margin"]
            c = E[:, 0]
            on = c != 0
            if not on.any():
                continue
            s_lo, s_hi = score_range(p, E[on, 1:])
            c = c[on]
            # c·λ_0 + s ≥ cut needs λ_0 up to (cut − s_lo)/c (c > 0); ≤ cut − eps needs it down to (cut − eps − s_hi)/c
            up = np.where(c > 0, (cut[on] - s_lo) / c, (cut[on] - eps[on] - s_hi) / c)
            down = np.where(c > 0, (cut[on] - eps[on] - s_hi) / c, (cut[on] - s_lo) / c)
            hi = max(hi, math.ceil(float(up.max())) + 1)
            lo = min(lo, math.floor(float(down.min())) - 1)
        return int(lo), int(hi)

    @staticmethod
    def _link(p: RiskProblem, b: dict) -> None:
        """The big-M rows of one block of indicators (or, for a chain, its unary rows), with M from
        the problem's final bounds."""
        lay = p.layout
        E, cut, eps = b["E"], b["cutoff"], b["margin"]
        s_lo, s_hi = score_range(p, E[:, 1:])
        lo0, hi0 = p.intercept_bounds
        c = E[:, 0]
        e_lo = s_lo + np.minimum(c * lo0, c * hi0)
        e_hi = s_hi + np.maximum(c * lo0, c * hi0)
        for i in range(E.shape[0]):
            z = lay.aux(b["start"] + i)
            k = z - lay.aux(0)
            coefs = {lay.intercept: float(c[i]), **{lay.lam(j): float(v) for j, v in enumerate(E[i, 1:]) if v != 0}}
            if e_lo[i] >= cut[i]:  # always met
                p.aux_lower[k] = 1.0
                continue
            if e_hi[i] <= cut[i] - eps[i]:  # never met
                p.aux_upper[k] = 0.0
                continue
            if e_hi[i] < cut[i]:  # cannot be met; only the margin band needs excluding
                p.aux_upper[k] = 0.0
            if b.get("chain"):  # the run's unary rows (below) link it exactly, and tighter
                continue
            m_down = cut[i] - e_lo[i]  # z = 1 ⇒ e ≥ cut:  e − M↓·z ≥ cut − M↓
            p.rows.append(LinearRow({**coefs, z: -m_down}, lower=cut[i] - m_down,
                                    name=f"{b['name']}[{i}]: z = 1 ⇒ met"))
            m_up = e_hi[i] - cut[i] + eps[i]  # z = 0 ⇒ e ≤ cut − margin:  e − M↑·z ≤ cut − margin
            p.rows.append(LinearRow({**coefs, z: -m_up}, upper=cut[i] - eps[i],
                                    name=f"{b['name']}[{i}]: z = 0 ⇒ missed"))
        if b.get("chain"):
            ProblemBuilder._chain(p, b, e_lo, e_hi)

    @staticmethod
    def _chain(p: RiskProblem, b: dict, e_lo: np.ndarray, e_hi: np.ndarray) -> None:
        """Order the z's of each run of levels and tie them to the score's unary expansion:
        k − 1 + Σz − M↓·(1 − z_first) ≤ e ≤ k − 1 + Σz + M↑·z_last (exact for integer scores)."""
        lay = p.layout
        E, cut, L = b["E"], b["cutoff"], b["chain"]
        for r in range(0, E.shape[0], L):
            zs = [lay.aux(b["start"] + r + i) for i in range(L)]
            for i in range(L - 1):
                p.rows.append(LinearRow({zs[i + 1]: 1.0, zs[i]: -1.0}, upper=0.0,
                                        name=f"{b['name']}[{r + i}]: in order"))
            coefs = {lay.intercept: float(E[r, 0]), **{lay.lam(j): float(v) for j, v in enumerate(E[r, 1:]) if v != 0}}
            base = float(cut[r]) - 1.0
            m_down = max(base - float(e_lo[r]), 0.0)
            m_up = max(float(e_hi[r]) - float(cut[r + L - 1]), 0.0)
            lo = {**coefs, **{z: -1.0 for z in zs}}
            lo[zs[0]] -= m_down
            p.rows.append(LinearRow(lo, lower=base - m_down, name=f"{b['name']}[{r}]: score ≥ levels counted"))
            hi = {**coefs, **{z: -1.0 for z in zs}}
            hi[zs[-1]] -= m_up
            p.rows.append(LinearRow(hi, upper=base, name=f"{b['name']}[{r}]: score ≤ levels counted"))

    def _widened(self, bounds) -> tuple[int, int]:
        """The intercept range, widened so that every row on the intercept can hold for any
        points within their bounds: c·λ_0 + s ≥ lower needs λ_0 up to (lower − min s)/c."""
        lo, hi = bounds
        lay = self.layout
        a, b = np.minimum(self.lower, 0), np.maximum(self.upper, 0)
        aux_lo = np.array([x["lower"] for x in self.aux], float)
        aux_hi = np.array([x["upper"] for x in self.aux], float)
        for row in self.rows:
            c = row.coefs.get(lay.intercept, 0.0)
            if c == 0:
                continue
            x = np.zeros(self.d)
            s_min = s_max = 0.0
            for k, v in row.coefs.items():
                if k == lay.intercept:
                    continue
                if k < lay.alpha(0):
                    x[k - 1] = v
                else:  # an α (in [0, 1]) or an auxiliary variable
                    top, bottom = (1.0, 0.0) if k < lay.aux(0) else (aux_hi[k - lay.aux(0)], aux_lo[k - lay.aux(0)])
                    s_min += min(v * top, v * bottom)
                    s_max += max(v * top, v * bottom)
            s_min += float(np.minimum(x * a, x * b).sum())
            s_max += float(np.maximum(x * a, x * b).sum())
            need_lo: list[float] = []  # values λ_0 must be able to take
            need_hi: list[float] = []
            if math.isfinite(row.lower):
                (need_hi if c > 0 else need_lo).append((row.lower - (s_min if c > 0 else s_max)) / c)
            if math.isfinite(row.upper):
                (need_lo if c > 0 else need_hi).append((row.upper - (s_max if c > 0 else s_min)) / c)
            for z in need_hi:
                hi = max(hi, math.ceil(z) + 1)
            for z in need_lo:
                lo = min(lo, math.floor(z) - 1)
        return int(lo), int(hi)


def build_problem(spec, loss, lower, upper, *, constraints=(), factors_as_one=False, c0=1e-6,
                  max_size=5, min_size=0, intercept_range=None, training=None) -> RiskProblem:
    """The :class:`RiskProblem` of a design: its threshold terms' formulation, then
    ``factors_as_one`` groups, then the constraints, each through :class:`ProblemBuilder`.

    ``spec`` is the :class:`~riskformula.design.spec.DesignSpec` (its ``terms`` resolve names
    and its ``thresholds`` formulate themselves); ``training`` the
    :class:`~riskformula.problem.training.TrainingRows` for constraints about data."""
    b = ProblemBuilder(spec.terms, lower, upper, scale=loss.scale, training=training)
    for t in spec.thresholds:
        t.apply(b)
    if factors_as_one:
        thresholds = {t.term for t in spec.thresholds}
        for term in spec.terms.multi_column_terms():
            if term not in thresholds:  # a threshold's cuts are items of their own
                OneVariable(term).apply(b)
    for c in constraints:
        if not isinstance(c, Constraint):
            raise TypeError(f"not a constraint: {c!r}")
        c.apply(b)
    p = b.problem(loss, c0, max_size, min_size, intercept_range)
    p.cut_families = [tuple(t.columns) for t in spec.thresholds if len(t.columns) > 1]
    return p
