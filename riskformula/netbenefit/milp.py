"""The exact net-benefit model as a mixed-integer linear program, built with pyomo.

Chi & Birbil's (2026) MILP (their problem 13) on collapsed rows: every distinct predictor row
``r`` (events ``a_r``, non-events ``b_r``) and decision threshold ``p_i`` get one binary
``ψ_ir`` = "row r is treated at p_i", and

    maximise  Σ_i w_i Σ_r (a_r − b_r·p_i/(1 − p_i)) ψ_ir  −  N·c0·Σ_j α_j      (then ÷ N)
    s_r = Σ_j x_rj λ_j                                      (score of row r)
    ψ_ir = 1  ⇒  s_r ≥ T_i          s_r − T_i ≥ −M_r (1 − ψ_ir)   rows with events
    ψ_ir = 0  ⇒  s_r ≤ T_i − γ      s_r − T_i ≤  M'_r ψ_ir − γ    rows with non-events
    T_1 ≤ T_2 ≤ ... ≤ T_M,   ψ_(i+1)r ≤ ψ_ir
    λ, α, the size limits, threshold terms and operational constraints: every row of the
    :class:`~riskformula.problem.RiskProblem` (the same formulation as the logistic fit).

With integer predictors the scores and cut-offs are integers and ``γ = 1`` is exact. Predictors
with a finite decimal resolution δ (every value a multiple of 10^-k, k ≤ 6) give scores on the grid
δ·Z, so ``γ = δ`` is exact too — as long as the big-M constants stay within a million γ, beyond
which the solver's tolerances could not tell ``s ≥ T`` from ``s ≥ T − γ``; otherwise
:attr:`NetBenefitMilp.exact` is False and the fit does not use the program (with γ = 0 it would
be a relaxation whose bound is the trivial one, perfect separation). The big-M constants are per
row, from the row's score range under the coefficient bounds and the size limit. The solver is any pyomo solver;
HiGHS through ``appsi_highs`` (the default) takes the local-search score as a warm start.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SettingsError, SolverError
from ..problem.problem import score_range
from .grid import DecisionGrid

#: time-limit option name of common solvers under pyomo's classic interface
TIME_OPTION = {"gurobi": "TimeLimit", "gurobi_direct": "TimeLimit", "gurobi_persistent": "TimeLimit",
               "cplex": "timelimit", "cplex_direct": "timelimit", "cplex_persistent": "timelimit",
               "cbc": "sec", "glpk": "tmlim", "scip": "limits/time", "xpress": "maxtime",
               "xpress_direct": "maxtime", "xpress_persistent": "maxtime", "mosek": "dparam.mio_max_time"}
GAP_OPTION = {"gurobi": "MIPGap", "gurobi_direct": "MIPGap", "gurobi_persistent": "MIPGap",
              "cplex": "mipgap", "cplex_direct": "mip_tolerances_mipgap", "cbc": "ratio", "glpk": "mipgap",
              "scip": "limits/gap"}


#: largest big-M constant, in units of the margin γ, for which the solver's tolerances keep the
#: big-M rows exact
MAX_BIG_M_RATIO = 1e6


def resolution(X: np.ndarray, max_digits: int = 6) -> float:
    """Largest 10^-k (k ≤ ``max_digits``) of which every value of ``X`` is a multiple; 0 if none."""
    for k in range(max_digits + 1):
        Y = X * 10.0 ** k
        if np.all(np.abs(Y - np.round(Y)) <= 1e-9 * np.maximum(1.0, np.abs(Y))):
            return 10.0 ** -k
    return 0.0


@dataclass
class MilpResult:
    """What the MILP run returned: the best points it holds (None if it found none), the
    solver's objective and bound (weighted net benefit − c0·size, maximised), status and effort."""

    points: np.ndarray | None
    objective: float
    bound: float
    status: str
    time: float
    build_time: float
    nodes: int
    solver: str
    n_indicators: int


class NetBenefitMilp:
    """Builds the pyomo model once; :meth:`solve` runs a solver on it.

    Parameters
    ----------
    problem : the :class:`~riskformula.problem.RiskProblem` (bounds, rows, size limits); its
        ``loss.Z`` rows are the distinct predictor rows.
    pos, neg : event / non-event weight per distinct row.
    grid : decision thresholds and weights.
    c0 : penalty per term used.
    """

    def __init__(self, problem, pos: np.ndarray, neg: np.ndarray, grid: DecisionGrid, c0: float):
        import pyomo.environ as pe

        t0 = time.perf_counter()
        self.problem = problem
        X = problem.loss.Z[:, 1:]
        self.X = X
        self.pos = np.asarray(pos, float)
        self.neg = np.asarray(neg, float)
        self.n = float(self.pos.sum() + self.neg.sum())
        self.grid = grid
        self.integral = bool(np.all(X == np.round(X)))
        self.gamma = 1.0 if self.integral else resolution(X)
        p, w, odds = grid.p, grid.w, grid.odds
        # thresholds that need a cut-off in the model (p = 0 treats everyone: a constant)
        self.active = [i for i in range(len(p)) if p[i] > 0 and w[i] > 0]
        self.constant = float(sum(w[i] * self.pos.sum() for i in range(len(p)) if p[i] == 0))
        s_lo, s_hi = score_range(problem)
        s_lo, s_hi = np.floor(s_lo - 1e-9), np.ceil(s_hi + 1e-9)
        self.t_lo, self.t_hi = float(s_lo.min()), float(s_hi.max()) + max(self.gamma, 1.0)
        big_m = self.t_hi - self.t_lo + self.gamma
        #: whether the program is exact: its optimum is the net-benefit optimum, its bound valid
        self.exact = self.gamma > 0 and big_m <= MAX_BIG_M_RATIO * self.gamma
        R = X.shape[0]
        self.model: Any  # the pyomo model; None when the program is not exact
        if not self.exact:
            self.model, self.d, self.build_time = None, problem.d, time.perf_counter() - t0
            return

        m = pe.ConcreteModel("net_benefit")
        lower, upper = problem.column_bounds()
        integer = problem.integer_mask()
        m.K = pe.RangeSet(0, problem.n_cols - 1)

        def xbounds(_, k):
            return (0.0, 0.0) if k == 0 else (_num(lower[k]), _num(upper[k]))

        def xdomain(_, k):
            if not integer[k]:
                return pe.Reals
            return pe.Binary if lower[k] >= 0 and upper[k] <= 1 else pe.Integers

        m.x = pe.Var(m.K, domain=xdomain, bounds=xbounds)
        m.rows = pe.ConstraintList()
        for row in problem.all_rows():
            expr = sum(c * m.x[k] for k, c in row.coefs.items())
            lo = None if math.isinf(row.lower) else row.lower
            hi = None if math.isinf(row.upper) else row.upper
            if lo is not None and hi is not None and lo == hi:
                m.rows.add(expr == lo)
            else:
                m.rows.add(pe.inequality(lo, expr, hi))
        m.R = pe.RangeSet(0, R - 1)
        m.s = pe.Var(m.R, bounds=lambda _, r: (float(s_lo[r]), float(s_hi[r])))
        d = problem.d
        cols = [np.flatnonzero(X[r]) for r in range(R)]
        m.score = pe.Constraint(m.R, rule=lambda _, r: m.s[r] == sum(float(X[r, j]) * m.x[j + 1] for j in cols[r]))
        m.I = pe.Set(initialize=self.active, ordered=True)
        m.T = pe.Var(m.I, domain=pe.Integers if self.integral else pe.Reals, bounds=(self.t_lo, self.t_hi))
        m.psi = pe.Var(m.I, m.R, domain=pe.Binary)
        has_pos, has_neg = self.pos > 0, self.neg > 0
        g = self.gamma
        m.treated = pe.Constraint(
            m.I, [r for r in range(R) if has_pos[r]],
            rule=lambda _, i, r: m.s[r] - m.T[i] >= -(self.t_hi - float(s_lo[r])) * (1 - m.psi[i, r]))
        m.untreated = pe.Constraint(
            m.I, [r for r in range(R) if has_neg[r]],
            rule=lambda _, i, r: m.s[r] - m.T[i] <= (float(s_hi[r]) - self.t_lo + g) * m.psi[i, r] - g)
        pairs = list(zip(self.active[:-1], self.active[1:]))
        m.monotone = pe.Constraint(range(len(pairs)), rule=lambda _, k: m.T[pairs[k][0]] <= m.T[pairs[k][1]])
        m.nested = pe.Constraint(range(len(pairs)), m.R,
                                 rule=lambda _, k, r: m.psi[pairs[k][1], r] <= m.psi[pairs[k][0], r])
        cost = problem.cost()
        m.obj = pe.Objective(
            expr=sum(w[i] * (self.pos[r] - odds[i] * self.neg[r]) * m.psi[i, r] for i in self.active for r in range(R)
                     if self.pos[r] - odds[i] * self.neg[r] != 0)
            - self.n * sum(float(cost[k]) * m.x[k] for k in range(problem.n_cols) if cost[k] != 0),
            sense=pe.maximize)
        self.model = m
        self.d = d
        self.build_time = time.perf_counter() - t0

    @property
    def n_indicators(self) -> int:
        return len(self.active) * self.X.shape[0]

    # --- warm start -----------------------------------------------------------------------
    def set_start(self, points: np.ndarray, cutoffs: np.ndarray) -> bool:
        """Load a score (points and its optimal cut-offs over the whole grid) as the start."""
        x = self.problem.complete(np.concatenate([[0.0], points]))
        if x is None:
            return False
        m = self.model
        for k in range(self.problem.n_cols):
            m.x[k].set_value(float(x[k]), skip_validation=True)
        s = self.X @ points
        for r in range(len(s)):
            m.s[r].set_value(float(s[r]), skip_validation=True)
        for i in self.active:
            t = float(np.clip(cutoffs[i], self.t_lo, self.t_hi))
            m.T[i].set_value(t, skip_validation=True)
            treated = np.round(s, 9) >= np.round(t, 9)
            for r in range(len(s)):
                m.psi[i, r].set_value(float(treated[r]), skip_validation=True)
        return True

    # --- solving --------------------------------------------------------------------------
    def solve(self, solver: str = "appsi_highs", *, time_limit: float = 60.0, gap_tolerance: float = 1e-6,
              verbose: bool = False, options: dict | None = None, warm_start: bool = True) -> MilpResult:
        """Run ``solver`` (a pyomo solver name) within ``time_limit`` seconds."""
        if not self.exact:
            raise SolverError("the exact model needs integer predictors or decimals with a fine enough grid; "
                              "see NetBenefitMilp.exact.")
        t0 = time.perf_counter()
        time_limit = max(1.0, float(time_limit))
        if solver == "appsi_highs":
            obj, bound, status, nodes = self._solve_appsi(time_limit, gap_tolerance, verbose, options, warm_start)
        else:
            obj, bound, status, nodes = self._solve_pyomo(solver, time_limit, gap_tolerance, verbose, options,
                                                          warm_start)
        points: np.ndarray | None = None
        if obj is not None:
            points = np.array([self.model.x[j + 1].value or 0.0 for j in range(self.d)], dtype=float)
            points = np.round(points)
        scale = 1.0 / self.n
        return MilpResult(points=points,
                          objective=-math.inf if obj is None else (obj + self.constant) * scale,
                          bound=math.inf if bound is None else (bound + self.constant) * scale,
                          status=status, time=time.perf_counter() - t0, build_time=self.build_time,
                          nodes=nodes, solver=solver, n_indicators=self.n_indicators)

    def _solve_appsi(self, time_limit, gap, verbose, options, warm_start):
        import highspy
        from pyomo.contrib.appsi.base import TerminationCondition as TC
        from pyomo.contrib.appsi.solvers import Highs

        opt = Highs()
        if not opt.available():
            raise SolverError("HiGHS is not available to pyomo (appsi_highs); install highspy.")
        # loading a large model into HiGHS takes a while: it counts against the time limit
        t0 = time.perf_counter()
        opt.set_instance(self.model)
        for key in opt.update_config.keys():
            if key != "treat_fixed_vars_as_params":
                setattr(opt.update_config, key, False)   # nothing changes between loading and solving
        time_limit = max(1.0, time_limit - (time.perf_counter() - t0))
        opt.config.time_limit = time_limit
        opt.config.mip_gap = gap
        opt.config.warmstart = warm_start
        opt.config.load_solution = False
        opt.config.stream_solver = bool(verbose)
        opt.highs_options = {"random_seed": 0, **(options or {})}
        # HiGHS keeps one thread scheduler per process, sized by the first solve after it is made,
        # and a later solve asking for another size fails ("scheduler has already been initialized");
        # so this solve gets a fresh one, and the node LPs of a fit after it get theirs
        highspy.Highs.resetGlobalScheduler(True)
        try:
            res = opt.solve(self.model)
        finally:
            highspy.Highs.resetGlobalScheduler(True)
        tc = res.termination_condition
        if tc in (TC.infeasible, TC.infeasibleOrUnbounded):
            return None, None, "infeasible", 0
        obj = res.best_feasible_objective
        if obj is not None:
            res.solution_loader.load_vars()
        bound = res.best_objective_bound
        nodes = 0
        try:
            nodes = int(opt._solver_model.getInfo().mip_node_count)
        except Exception:  # node count is informative only
            pass
        status = "optimal" if tc == TC.optimal else "time_limit" if tc == TC.maxTimeLimit else tc.name
        return obj, bound, status, nodes

    def _solve_pyomo(self, name, time_limit, gap, verbose, options, warm_start):
        import pyomo.environ as pe
        from pyomo.opt import TerminationCondition as TC

        opt = solver_factory(name)
        opts = dict(options or {})
        if name in TIME_OPTION:
            opts.setdefault(TIME_OPTION[name], time_limit)
        if name in GAP_OPTION:
            opts.setdefault(GAP_OPTION[name], gap)
        kwargs = {"tee": bool(verbose), "load_solutions": False}
        if name not in TIME_OPTION:
            kwargs["timelimit"] = time_limit
        try:
            if warm_start and getattr(opt, "warm_start_capable", lambda: False)():
                kwargs["warmstart"] = True
        except Exception:  # some plugins only know at solve time
            pass
        if opts:
            kwargs["options"] = opts
        try:
            results = opt.solve(self.model, **kwargs)
        except TypeError:   # a plugin that takes fewer keywords
            kwargs.pop("warmstart", None)
            kwargs.pop("timelimit", None)
            results = opt.solve(self.model, **kwargs)
        tc = results.solver.termination_condition
        if tc in (TC.infeasible, TC.infeasibleOrUnbounded):
            return None, None, "infeasible", 0
        obj = None
        if len(results.solution) > 0:
            self.model.solutions.load_from(results)
            obj = pe.value(self.model.obj)
        bound = getattr(results.problem, "upper_bound", None)
        bound = None if bound is None or not math.isfinite(float(bound)) else float(bound)
        status = "optimal" if tc == TC.optimal else "time_limit" if tc == TC.maxTimeLimit else str(tc)
        return obj, bound, status, 0


def solver_factory(name: str):
    """Pyomo's solver ``name``, or a SettingsError that says how to get one."""
    import pyomo.environ as pe

    opt = pe.SolverFactory(name)
    if opt is None or not opt.available(exception_flag=False):
        raise SettingsError(f"`solver={name!r}` is not a pyomo solver available here; use 'appsi_highs' "
                            "(HiGHS, installed with riskformula) or install the solver and its pyomo plugin.")
    return opt


def _num(v: float):
    return None if math.isinf(v) else float(v)
