"""Design + settings + constraints → :class:`RiskProblem`, and naming conflicts when it is infeasible.

Formulations (x = [λ_0..λ_d, α_1..α_d, aux]):

* **threshold(x), one cut** — one column ``1[x ≤ c]`` per candidate cut with points δ_c and a
  :class:`SizeGroup` with ``max_used=1``: at most one cut, counted once toward ``max_size`` by
  Σ_c α_c itself.  Molero-Río and D'Ambrosio (2025) scores w≤·b + w≥·(1 − b) = w≥ + (w≤ − w≥)·b with w≤, w≥ ∈ [lb, ub]; the
  intercept absorbs w≥ and δ = w≤ − w≥ ranges over exactly [lb − ub, ub − lb], so the two problems
  have the same optimal loss (exact), with half the columns and no symmetric copies.
* **threshold(x, k=m) / cut(x, [...])** — the same columns, a group with ``max_used=m`` (binary u_g)
  and "every interval's points within [lb, ub]": running sums S_r = Σ_{s ≥ r} δ_s (continuous aux,
  chained S_r = S_{r+1} + δ_r), M ≥ max(0, S), m ≤ min(0, S), M − m ≤ ub − lb.  Some shift T puts all
  levels T + S_r and T in [lb, ub] iff max − min ≤ ub − lb, so this is exact too (O(cuts) rows).
* **a term spanning several columns** (factor, threshold) in a count constraint — its "used"
  quantity is Σα for a one-cut threshold, otherwise a binary u with α_j ≤ u ≤ Σ α_j.
* **side information** — λ_0 + Σ λ_j x_j ≥ logit(p) (≤ for ``risk_at_most``).  Such rows involve
  the intercept, so the derived intercept range is widened to contain logit(p) − (extreme profile
  score): the optimal intercept for fixed points is the unconstrained one projected onto the
  interval these rows allow, which lies within the widened range.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logit

from .constraints import Constraint
from .errors import InfeasibleProblemError, SettingsError
from .problem import LinearRow, RiskProblem, SizeGroup


class Builder:
    """Collects bounds, rows, auxiliary columns and size groups over a design's columns."""

    def __init__(self, design, lower: np.ndarray, upper: np.ndarray):
        self.design = design
        self.d = len(design.columns)
        self.lower = np.array(lower, dtype=float)
        self.upper = np.array(upper, dtype=float)
        self.rows: list[LinearRow] = []
        self.aux: list[dict] = []
        self.groups: dict[tuple, SizeGroup] = {}
        self.risk_rows: list[tuple] = []
        self.threshold_ranges: dict[str, tuple] = {}
        self._used: dict[tuple, dict] = {}

    # --- columns -------------------------------------------------------------------------
    def lam(self, j: int) -> int:
        return j + 1

    def alpha(self, j: int) -> int:
        return self.d + 1 + j

    def columns(self, name: str) -> list[int]:
        """Design columns (0-based) named by a column, label, term or variable."""
        des = self.design
        hits = [j for j in range(self.d) if name in (des.columns[j], des.labels[j], des.column_terms[j])]
        if not hits:
            hits = [j for t in des.thresholds if name == t.variable for j in t.columns]
        if not hits:
            from .thresholds import _first_argument
            hits = [j for j, t in enumerate(des.column_terms)
                    if t and "(" in t and _first_argument(t) == name]
        if not hits:
            terms = list(dict.fromkeys(t for t in des.column_terms if t))
            raise SettingsError(f"a constraint names {name!r}, which is not a term, column, label or variable of "
                                f"the formula; terms are {terms[:20]}.")
        return hits

    def new_aux(self, lower: float, upper: float, integer: bool, name: str, fill) -> int:
        """Add an auxiliary column; ``fill(lam, alpha)`` gives its value implied by integer points."""
        self.aux.append(dict(lower=lower, upper=upper, integer=integer, name=name, fill=fill))
        return 2 * self.d + 1 + len(self.aux) - 1

    def add_row(self, coefs: dict, lower: float, upper: float, name: str) -> None:
        self.rows.append(LinearRow({k: v for k, v in coefs.items() if v != 0}, lower, upper, name))

    def used(self, name: str) -> dict:
        """Row coefficients of the 0/1 quantity "term ``name`` is used"."""
        cols = tuple(self.columns(name))
        if len(cols) == 1:
            return {self.alpha(cols[0]): 1.0}
        grp = self.groups.get(cols)
        if grp is not None and grp.max_used == 1:
            return {self.alpha(j): 1.0 for j in cols}
        if cols not in self._used:
            idx = np.asarray(cols)
            u = self.new_aux(0.0, 1.0, True, f"used[{name}]", lambda lam, alpha, idx=idx: float(alpha[idx].max()))
            for j in cols:
                self.add_row({self.alpha(j): 1.0, u: -1.0}, -math.inf, 0.0, f"used[{name}]")
            self.add_row({u: 1.0, **{self.alpha(j): -1.0 for j in cols}}, -math.inf, 0.0, f"used[{name}]")
            self._used[cols] = {u: 1.0}
        return self._used[cols]

    # --- formulation pieces ------------------------------------------------------------------
    def add_thresholds(self) -> None:
        """Columns, groups and level rows of every threshold()/cut() term (see module docstring)."""
        for t in self.design.thresholds:
            cols = list(t.columns)
            lb = min(float(self.lower[cols].min()), 0.0)
            ub = max(float(self.upper[cols].max()), 0.0)
            self.threshold_ranges[t.term] = (int(lb), int(ub))
            self.lower[cols], self.upper[cols] = lb - ub, ub - lb
            k = min(t.k, len(cols))
            self.groups[tuple(cols)] = SizeGroup(tuple(j + 1 for j in cols), max_used=k if k < len(cols) else None,
                                                 name=t.term)
            if k >= 2:
                self._level_rows(t.term, cols, ub - lb)

    def _level_rows(self, term: str, cols: list, width: float) -> None:
        idx = np.asarray(cols)

        def running(lam, alpha):
            return np.cumsum(lam[1:][idx][::-1])[::-1]

        m = len(cols)
        S = [self.new_aux(-width, width, False, f"{term}: level {r}",
                          lambda lam, alpha, r=r: running(lam, alpha)[r]) for r in range(m)]
        top = self.new_aux(0.0, width, False, f"{term}: max level",
                           lambda lam, alpha: max(0.0, running(lam, alpha).max()))
        bot = self.new_aux(-width, 0.0, False, f"{term}: min level",
                           lambda lam, alpha: min(0.0, running(lam, alpha).min()))
        name = f"{term}: points of every interval within the coefficient range"
        for r in range(m):
            nxt = {S[r + 1]: -1.0} if r + 1 < m else {}
            self.add_row({S[r]: 1.0, **nxt, self.lam(cols[r]): -1.0}, 0.0, 0.0, name)
            self.add_row({top: 1.0, S[r]: -1.0}, 0.0, math.inf, name)
            self.add_row({S[r]: 1.0, bot: -1.0}, 0.0, math.inf, name)
        self.add_row({top: 1.0, bot: -1.0}, -math.inf, width, name)

    def group_as_one(self, name: str) -> None:
        cols = tuple(self.columns(name))
        if len(cols) > 1 and not any(set(cols) & set(g) for g in self.groups):
            self.groups[cols] = SizeGroup(tuple(j + 1 for j in cols), None, name=name)

    def factors_as_one(self) -> None:
        terms: dict = {}
        for j, t in enumerate(self.design.column_terms):
            terms.setdefault(t if t is not None else self.design.columns[j], []).append(j)
        for t, cols in terms.items():
            if len(cols) > 1:
                self.group_as_one(t)

    def restrict_sign(self, name: str, direction: str, label: str) -> None:
        cols = self.columns(name)
        thresholded = {j for t in self.design.thresholds for j in t.columns}
        for j in cols:
            # on 1[x ≤ c] columns, "risk rises with x" means the lower side gets fewer points: δ ≤ 0
            up = (direction == "+") != (j in thresholded)
            if up:
                self.lower[j] = max(self.lower[j], 0.0)
            else:
                self.upper[j] = min(self.upper[j], 0.0)

    def profile(self, when: dict) -> np.ndarray:
        """Design row of a side-information profile (columns not named are 0)."""
        x = np.zeros(self.d)
        des = self.design
        for key, value in when.items():
            ths = [t for t in des.thresholds if key in (t.variable, t.term)]
            for t in ths:
                x[list(t.columns)] = (float(value) <= np.asarray(t.cuts)).astype(float)
            direct = [j for j in range(self.d) if key in (des.columns[j], des.labels[j])]
            if ths and not direct:
                continue
            cols = direct or self.columns(key)
            if len(cols) == 1:
                x[cols[0]] = float(value)
                continue
            hit = [j for j in cols if des.labels[j].endswith(f"= {value}") or f"[T.{value}]" in des.columns[j]]
            if hit:
                x[hit[0]] = 1.0
            elif str(value) not in self._factor_levels(des.column_terms[cols[0]]):
                levels = [des.labels[j].split("= ", 1)[-1] for j in cols]
                raise SettingsError(f"`when={{{key!r}: {value!r}}}`: {value!r} is not a level of {key!r} with its own "
                                    f"points; its levels (besides the reference) are {levels}. The reference level "
                                    f"needs no entry.")
        return x

    def _factor_levels(self, term) -> set:
        """All levels of a factor term (including its reference level), as strings."""
        state = self.design.spec.encoder_state.get(term)
        cats = state[1].get("categories", []) if state and len(state) > 1 and isinstance(state[1], dict) else []
        return {str(c) for c in cats}

    def add_risk_row(self, when: dict, risk: float, at_least: bool, name: str) -> None:
        x = self.profile(when)
        coefs = {0: 1.0, **{self.lam(j): float(x[j]) for j in range(self.d) if x[j] != 0}}
        z = float(logit(risk))
        self.add_row(coefs, z if at_least else -math.inf, math.inf if at_least else z, name)
        self.risk_rows.append((x, z, at_least))

    # --- the problem -------------------------------------------------------------------------
    def problem(self, loss, c0, max_size, min_size, intercept_range) -> RiskProblem:
        aux = self.aux
        fills = [a["fill"] for a in aux]

        def aux_rule(lam, alpha):
            return np.array([f(lam, alpha) for f in fills], dtype=float)

        p = RiskProblem(loss, self.lower, self.upper, c0=c0, max_size=max_size, min_size=min_size,
                        intercept_bounds=intercept_range, rows=list(self.rows),
                        aux_lower=np.array([a["lower"] for a in aux], float),
                        aux_upper=np.array([a["upper"] for a in aux], float),
                        aux_integer=np.array([a["integer"] for a in aux], bool),
                        aux_cost=np.zeros(len(aux)), aux_names=[a["name"] for a in aux],
                        aux_rule=aux_rule if aux else None, groups=list(self.groups.values()))
        if intercept_range is None and self.risk_rows:
            p.intercept_bounds = self._widened(p.intercept_bounds)
        return p

    def _widened(self, bounds) -> tuple[int, int]:
        lo, hi = bounds
        a, b = np.minimum(self.lower, 0), np.maximum(self.upper, 0)
        for x, z, at_least in self.risk_rows:
            s_min = float(np.minimum(x * a, x * b).sum())
            s_max = float(np.maximum(x * a, x * b).sum())
            if at_least:
                hi = max(hi, math.ceil(z - s_min) + 1)
            else:
                lo = min(lo, math.floor(z - s_max) - 1)
        return int(lo), int(hi)


def build_problem(design, loss, lower, upper, *, constraints=(), factors_as_one=False, c0=1e-6,
                  max_size=5, min_size=0, intercept_range=None):
    """Compile thresholds and constraints; returns ``(problem, builder)``."""
    b = Builder(design, lower, upper)
    b.add_thresholds()
    if factors_as_one:
        b.factors_as_one()
    for c in constraints:
        c.apply(b)
    return b.problem(loss, c0, max_size, min_size, intercept_range), b


def check_constraints(constraints) -> tuple:
    if constraints is None:
        return ()
    if isinstance(constraints, Constraint):
        constraints = [constraints]
    out = tuple(constraints)
    bad = [c for c in out if not isinstance(c, Constraint)]
    if bad:
        raise SettingsError(f"`constraints` must hold constraints built by riskformula (rf.at_most, rf.sign, "
                            f"rf.implies, ...); got {bad[0]!r}.")
    return out


def raise_if_infeasible(design, loss, lower, upper, constraints, *, factors_as_one, c0, max_size, min_size,
                        intercept_range, problem) -> None:
    """Raise :class:`InfeasibleProblemError` naming a minimal conflicting set of the user's constraints
    (a deletion filter: drop each one in turn and keep it dropped while the rest stay infeasible)."""
    from .solver.feasibility import has_feasible_point
    if has_feasible_point(problem) is not False:
        return
    items = list(constraints) + ["max_size", "min_size"]

    def feasible(keep) -> bool:
        cons = [c for c in keep if isinstance(c, Constraint)]
        p, _ = build_problem(design, loss, lower, upper, constraints=cons, factors_as_one=factors_as_one, c0=c0,
                             max_size=max_size if "max_size" in keep else 10 ** 6,
                             min_size=min_size if "min_size" in keep else 0,
                             intercept_range=problem.intercept_bounds)
        return has_feasible_point(p) is not False

    conflict = list(items)
    for item in items:
        trial = [c for c in conflict if c is not item]
        if not feasible(trial):
            conflict = trial
    names = [f"max_size={max_size}" if c == "max_size" else f"min_size={min_size}" if c == "min_size"
             else c.describe() for c in conflict]
    if conflict:
        raise InfeasibleProblemError(
            "no risk score satisfies these constraints together: " + "; ".join(names) +
            ". Dropping or relaxing any one of them makes the problem feasible.")
    raise InfeasibleProblemError("no risk score satisfies the coefficient and intercept ranges with these "
                                 f"constraints (intercept range {problem.intercept_bounds}); widen `coef_range` "
                                 "or `intercept_range`.")
