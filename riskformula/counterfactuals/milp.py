"""K counterfactuals jointly as one mixed-integer program (Navas-Palencia 2021, formulations 3 and 13),
written in pyomo and solved by HiGHS through pyomo's persistent interface.

Per counterfactual k and block b one binary ``z[k,b,o]`` picks an option (``o = 0`` keeps the
block); a continuous feature (a linear term) also carries the value ``y[k,b,o]`` it moves to in
interval o, in the data's precision (an integer number of steps).  Because points are integers
and the score → risk map is monotone, the outcome condition is the linear ``gain ≥ deficit``:
no piecewise-linear approximation of the logistic function is needed.  Cost is the weighted
scaled L1 distance; sparsity caps the changed features; diversity among the K answers is
eq. 11 (changed-feature sets differ), eq. 12 (no shared region on a feature both change) or the
soft Hamming objective of §2.3.2; ``closeness`` adds the L1 Mahalanobis distance of the
counterfactual's term points to the training mean (§2.2.4, after Kanamori et al. 2020).

The pyomo model is built once per batch; each person only updates mutable parameters and fixes
the options they may not take, so HiGHS re-solves a model it already holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from .dp import Solution
from .instance import Instance

#: gap accepted as optimal (costs are sums of scaled distances; ties are broken by the DP order)
MIP_GAP = 1e-9


@dataclass
class MilpResult:
    status: str               # "optimal", "infeasible", "time_limit" (with or without solutions)
    solutions: list           # list[Solution], cheapest first
    gap: float = 0.0


class CounterfactualMILP:
    """The joint model for ``K`` counterfactuals over one :class:`~.regions.Space`.

    Parameters
    ----------
    space : the features and blocks of the fitted score.
    K : counterfactuals solved jointly.
    diversity : None, ``"features"`` (eq. 11), ``"values"`` (eqs. 11 and 12), ``"soft"``
        (maximise the changed-feature Hamming distance with weight ``diversity_weight``) or
        ``"distinct"`` (the K answers differ in some region).
    closeness : weight of the L1 Mahalanobis term (``L``, ``mu``: Cholesky factor of the inverse
        covariance and mean of block points over the training rows).
    """

    def __init__(self, space, K: int = 1, diversity: str | None = None, diversity_weight: float = 1.0,
                 closeness: float = 0.0, L: np.ndarray | None = None, mu: np.ndarray | None = None,
                 time_limit: float = 10.0):
        import pyomo.environ as pyo
        from pyomo.contrib import appsi

        self.space, self.K, self.diversity = space, K, diversity
        self.pyo = pyo
        blocks = space.blocks
        self.opts = [(b, o) for b, bl in enumerate(blocks) for o in range(len(bl.options))]
        self.cont = [(b, o) for b, o in self.opts if blocks[b].continuous and o > 0]
        self._cont_blocks = sorted({b for b, _ in self.cont})
        self._feats = [(b, i) for b, bl in enumerate(blocks) for i in range(len(bl.features))]
        self._by_block = {b: [o for bb, o in self.opts if bb == b] for b in range(len(blocks))}
        self._steps = {b: blocks[b].features[0].step for b in self._cont_blocks}
        self.m = pyo.ConcreteModel()
        self._declare_sets_and_parameters()
        self._declare_variables()
        self._add_choice_constraints()
        obj = self._add_target_sparsity_and_cost()
        obj = self._add_diversity(obj, diversity_weight)
        self.closeness = closeness > 0 and L is not None
        if self.closeness:
            assert L is not None and mu is not None  # given together (mahalanobis_factor)
            obj = self._add_closeness(obj, closeness, L, mu)
        self.m.obj = pyo.Objective(expr=obj)
        self.solver = _configured(appsi.solvers.Highs(), time_limit)

    # --- building the model (in this order: the order of pyomo's components is HiGHS's) ----
    def _declare_sets_and_parameters(self) -> None:
        """Declare the index sets and the mutable parameters that :meth:`load` writes per person."""
        pyo, m, blocks = self.pyo, self.m, self.space.blocks
        m.K = pyo.RangeSet(0, self.K - 1)
        m.O = pyo.Set(initialize=self.opts, dimen=2)
        m.C = pyo.Set(initialize=self.cont, dimen=2)
        m.CB = pyo.Set(initialize=self._cont_blocks)
        m.B = pyo.RangeSet(0, len(blocks) - 1) if blocks else pyo.Set(initialize=[])
        m.gain = pyo.Param(m.O, mutable=True, initialize=0.0)
        m.cost = pyo.Param(m.O, mutable=True, initialize=0.0)
        m.lo = pyo.Param(m.C, mutable=True, initialize=0.0)
        m.hi = pyo.Param(m.C, mutable=True, initialize=0.0)
        m.beta = pyo.Param(m.C, mutable=True, initialize=0.0)
        m.alpha = pyo.Param(m.CB, mutable=True, initialize=0.0)
        m.x = pyo.Param(m.CB, mutable=True, initialize=0.0)
        m.w = pyo.Param(m.CB, mutable=True, initialize=1.0)
        m.fc = pyo.Param(m.CB, mutable=True, initialize=0.0)   # the cost of measuring a missing value
        m.D = pyo.Param(mutable=True, initialize=0.0)
        m.theta = pyo.Param(mutable=True, initialize=len(self._feats))

    def _declare_variables(self) -> None:
        """Declare the option choices ``z``, the steps ``n`` of continuous moves and their distance ``tp − tm``."""
        pyo, m = self.pyo, self.m
        m.z = pyo.Var(m.K, m.O, domain=pyo.Binary)
        m.n = pyo.Var(m.K, m.C, domain=pyo.Integers)   # steps: y = step · n
        m.tp = pyo.Var(m.K, m.CB, domain=pyo.NonNegativeReals)
        m.tm = pyo.Var(m.K, m.CB, domain=pyo.NonNegativeReals)

    def _y(self, k, b, o):
        """The value counterfactual ``k`` moves continuous block ``b`` to in interval ``o`` (step · n)."""
        return self._steps[b] * self.m.n[k, b, o]

    def _gain(self, k, b):
        """The points counterfactual ``k`` gains on block ``b``."""
        m, by_block = self.m, self._by_block
        if b in self._steps:
            return sum(m.alpha[b] * self._y(k, b, o) + m.beta[b, o] * m.z[k, b, o] for o in by_block[b] if o > 0)
        return sum(m.gain[b, o] * m.z[k, b, o] for o in by_block[b] if o > 0)

    def _cost(self, k):
        """The cost of counterfactual ``k``: option costs plus weighted distances of continuous moves."""
        m = self.m
        return (sum(m.cost[b, o] * m.z[k, b, o] for b, o in self.opts if b not in self._steps and o > 0)
                + sum(m.w[b] * (m.tp[k, b] + m.tm[k, b]) + m.fc[b] * (1 - m.z[k, b, 0]) for b in self._cont_blocks))

    def _add_choice_constraints(self) -> None:
        """One option per block; a continuous move inside its interval, and its distance from the person."""
        pyo, m, y, by_block = self.pyo, self.m, self._y, self._by_block
        m.one = pyo.Constraint(m.K, m.B, rule=lambda m, k, b: sum(m.z[k, b, o] for o in by_block[b]) == 1)
        m.ylo = pyo.Constraint(m.K, m.C, rule=lambda m, k, b, o: y(k, b, o) >= m.lo[b, o] * m.z[k, b, o])
        m.yhi = pyo.Constraint(m.K, m.C, rule=lambda m, k, b, o: y(k, b, o) <= m.hi[b, o] * m.z[k, b, o])
        m.dev = pyo.Constraint(m.K, m.CB, rule=lambda m, k, b: m.tp[k, b] - m.tm[k, b] == sum(
            y(k, b, o) for o in by_block[b] if o > 0) - m.x[b] * (1 - m.z[k, b, 0]))

    def _add_target_sparsity_and_cost(self):
        """Each answer gains the deficit, changes at most ``theta`` features, costs no less than the previous;
        returns the total cost."""
        pyo, m, K, blocks = self.pyo, self.m, self.K, self.space.blocks
        nchg = {(b, o): len(blocks[b].changed(o)) for b, o in self.opts}
        m.reach = pyo.Constraint(m.K, rule=lambda m, k: sum(self._gain(k, b) for b in range(len(blocks))) >= m.D)
        m.sparse = pyo.Constraint(m.K, rule=lambda m, k: sum(
            nchg[b, o] * m.z[k, b, o] for b, o in self.opts if nchg[b, o]) <= m.theta)
        m.costk = pyo.Expression(m.K, rule=lambda m, k: self._cost(k))
        if K > 1:
            m.order = pyo.Constraint(range(K - 1), rule=lambda m, k: m.costk[k] <= m.costk[k + 1] + 1e-9)
        return sum(m.costk[k] for k in range(K))

    def _add_diversity(self, obj, diversity_weight: float):
        """Make the K answers differ as ``diversity`` asks; returns the objective (``"soft"`` rewards differences)."""
        pairs = [(k, j) for k in range(self.K) for j in range(k + 1, self.K)]
        if not pairs:
            return obj
        self.m.P = self.pyo.Set(initialize=pairs, dimen=2)
        if self.diversity in ("features", "values", "soft"):
            obj = self._differ_in_features(obj, pairs, diversity_weight)
        if self.diversity == "values":
            self._differ_in_values()
        if self.diversity in ("distinct", "soft"):
            self._differ_in_options()
        return obj

    def _differ_in_features(self, obj, pairs, diversity_weight: float):
        """Eqs. 10-11: each pair differs in a changed feature (``"soft"``: the objective rewards each difference)."""
        pyo, m, blocks, by_block, feats = self.pyo, self.m, self.space.blocks, self._by_block, self._feats
        changes = {(b, i): [o for o in by_block[b] if i in blocks[b].changed(o)] for b, i in feats}
        m.F = pyo.Set(initialize=feats, dimen=2)
        m.a = pyo.Expression(m.K, m.F, rule=lambda m, k, b, i: sum(m.z[k, b, o] for o in changes[b, i]))
        # u = 1 only if exactly one of the pair changes the feature (eq. 10, the two upper bounds
        # suffice: u is only ever pushed up)
        m.u = pyo.Var(m.P, m.F, bounds=(0, 1))
        m.u1 = pyo.Constraint(m.P, m.F, rule=lambda m, k, j, b, i: m.u[k, j, b, i] <= m.a[k, b, i] + m.a[j, b, i])
        m.u2 = pyo.Constraint(m.P, m.F,
                              rule=lambda m, k, j, b, i: m.u[k, j, b, i] <= 2 - m.a[k, b, i] - m.a[j, b, i])
        if self.diversity == "soft":
            obj = obj - diversity_weight * sum(m.u[k, j, b, i] for (k, j) in pairs for b, i in feats)
        else:
            m.div = pyo.Constraint(m.P, rule=lambda m, k, j: sum(m.u[k, j, b, i] for b, i in feats) >= 1)
        return obj

    def _differ_in_values(self) -> None:
        """Eq. 12: a feature both of a pair change never takes the same region in both."""
        pyo, m, blocks, by_block = self.pyo, self.m, self.space.blocks, self._by_block
        region = [(b, i, c) for b, i in self._feats for c in range(len(blocks[b].features[i].candidates))]
        takes = {(b, i, c): [o for o in by_block[b] if blocks[b].options[o][i] == c] for b, i, c in region}
        m.R = pyo.Set(initialize=region, dimen=3)
        m.vals = pyo.Constraint(m.P, m.R, rule=lambda m, k, j, b, i, c: sum(
            m.z[k, b, o] + m.z[j, b, o] for o in takes[b, i, c]) <= 1 if takes[b, i, c] else pyo.Constraint.Skip)

    def _differ_in_options(self) -> None:
        """The answers of a pair differ in some region: some option taken by k and not by j."""
        pyo, m = self.pyo, self.m
        m.e = pyo.Var(m.P, m.O, bounds=(0, 1))
        m.e1 = pyo.Constraint(m.P, m.O, rule=lambda m, k, j, b, o: m.e[k, j, b, o] <= m.z[k, b, o])
        m.e2 = pyo.Constraint(m.P, m.O, rule=lambda m, k, j, b, o: m.e[k, j, b, o] <= 1 - m.z[j, b, o])
        m.dis = pyo.Constraint(m.P, rule=lambda m, k, j: sum(m.e[k, j, b, o] for b, o in self.opts) >= 1)

    def _add_closeness(self, obj, closeness: float, L: np.ndarray, mu: np.ndarray):
        """Add the L1 Mahalanobis distance of each answer's block points to the training mean to the objective."""
        pyo, m = self.pyo, self.m
        nb = len(self.space.blocks)
        m.pcur = pyo.Param(m.B, mutable=True, initialize=0.0)
        m.sgn = pyo.Param(mutable=True, initialize=1.0)
        m.mp = pyo.Var(m.K, m.B, domain=pyo.NonNegativeReals)
        m.mm = pyo.Var(m.K, m.B, domain=pyo.NonNegativeReals)
        m.maha = pyo.Constraint(m.K, m.B, rule=lambda m, k, f: m.mp[k, f] - m.mm[k, f] == sum(
            float(L[g, f]) * (m.pcur[g] + m.sgn * self._gain(k, g) - float(mu[g])) for g in range(f, nb)
            if L[g, f] != 0))
        return obj + closeness * sum(m.mp[k, f] + m.mm[k, f] for k in range(self.K) for f in range(nb))

    # --- one person ----------------------------------------------------------------------
    def load(self, inst: Instance, max_changes: int) -> None:
        """Write the person's gains, costs, bounds and allowed options into the model."""
        m = self.m
        for b, bl in enumerate(inst.blocks):
            if bl.block.continuous:
                f = bl.block.features[0]
                m.alpha[b] = float(bl.alpha)
                # a missing value: distances from the feature's reference, plus one for measuring it
                m.x[b] = bl.anchor
                m.w[b] = f.weight / f.scale
                m.fc[b] = f.weight if bl.measures else 0.0
                for o in range(1, len(bl.block.options)):
                    m.beta[b, o] = float(bl.beta[o])
                    ok = bool(bl.allowed[o])
                    m.lo[b, o] = float(bl.lo[o]) if ok else 0.0
                    m.hi[b, o] = float(bl.hi[o]) if ok else 0.0
            else:
                for o in range(1, len(bl.block.options)):
                    m.gain[b, o] = float(bl.gain[o]) if bl.allowed[o] else 0.0
                    m.cost[b, o] = float(bl.cost[o]) if bl.allowed[o] else 0.0
            for k in range(self.K):
                for o in range(1, len(bl.block.options)):
                    z = m.z[k, b, o]
                    if bl.allowed[o]:
                        if z.fixed:
                            z.unfix()
                    elif not z.fixed or z.value != 0:
                        z.fix(0)
        m.D = float(inst.deficit)
        m.theta = float(max_changes)
        if self.closeness:
            m.sgn = float(inst.sign)

    def set_current_points(self, pcur) -> None:
        if self.closeness:
            for b, v in enumerate(pcur):
                self.m.pcur[b] = float(v)

    def solve(self, inst: Instance) -> MilpResult:
        res = self.solver.solve(self.m)
        tc = str(res.termination_condition).split(".")[-1]
        if res.best_feasible_objective is None:
            if tc in ("infeasible", "infeasibleOrUnbounded"):
                return MilpResult("infeasible", [])
            if tc == "maxTimeLimit":
                return MilpResult("time_limit", [])
            raise SolverError(f"HiGHS stopped with status {tc} on a counterfactual problem.")
        res.solution_loader.load_vars()
        gap = 0.0
        if res.best_objective_bound is not None and res.best_feasible_objective:
            gap = (abs(res.best_feasible_objective - res.best_objective_bound)
                   / max(1e-9, abs(res.best_feasible_objective)))
        sols = [self._solution(inst, k) for k in range(self.K)]
        return MilpResult("optimal" if tc == "optimal" else "time_limit", sols, gap)

    def _solution(self, inst: Instance, k: int) -> Solution:
        m = self.m
        picks, cost, gain, feats = [], 0.0, 0.0, set()
        off = 0
        for b, bl in enumerate(inst.blocks):
            o = max(range(len(bl.block.options)), key=lambda o: m.z[k, b, o].value or 0.0)
            v = None
            if bl.block.continuous and o > 0:
                f = bl.block.features[0]
                v = round(f.step * round(m.n[k, b, o].value), 12)
            picks.append((o, v))
            if o > 0:
                cost += bl.cost_at(o, v)
                gain += bl.gain_at(o, v)
                feats |= {off + i for i in bl.block.changed(o)}
            off += len(bl.block.features)
        return Solution(cost, picks, gain, len(feats), frozenset(feats))


def _configured(solver, time_limit: float):
    """``solver`` (pyomo's HiGHS) set to solve to :data:`MIP_GAP` on one thread, repeatably, within ``time_limit``."""
    if not solver.available():
        raise SolverError("pyomo cannot reach HiGHS (the highspy package); install highspy.")
    solver.config.load_solution = False
    solver.config.stream_solver = False
    solver.config.time_limit = float(time_limit)
    solver.config.mip_gap = MIP_GAP
    # output_flag off: no HiGHS line on stdout (such as its notes on a coefficient of 0 that a re-solve
    # sets, which pyomo passes on); errors still reach us as statuses
    solver.highs_options = {"threads": 1, "mip_abs_gap": MIP_GAP, "random_seed": 0, "output_flag": False}
    return solver


def mahalanobis_factor(space, profile) -> tuple[np.ndarray, np.ndarray] | None:
    """(L, mu) of block points: ``inv(cov) = L Lᵀ`` with L lower triangular, from the training
    profile's term moments; None when the profile lacks them."""
    if not profile.term_names:
        return None
    design = space.model.design
    idx = {t: i for i, t in enumerate(profile.term_names)}
    A = np.zeros((len(space.blocks), len(profile.term_names)))
    for bi, b in enumerate(space.blocks):
        terms = {design.column_terms[j] if design.column_terms[j] is not None else design.columns[j] for j in b.columns}
        for t in terms:
            if t in idx:
                A[bi, idx[t]] = 1.0
    mu = A @ np.asarray(profile.term_mean, float)
    cov = A @ np.asarray(profile.term_cov, float) @ A.T
    # a constant or collinear block makes the covariance singular: a small ridge keeps it invertible
    ridge = 1e-6 * max(1.0, float(np.trace(cov)) / max(1, len(cov)))
    inv = np.linalg.inv(cov + ridge * np.eye(len(cov)))
    L = np.linalg.cholesky((inv + inv.T) / 2)
    return L, mu
