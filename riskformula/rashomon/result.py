"""The Rashomon set as a result: its members, the variables' use across it, and picking a member."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np
import pandas as pd

from ..errors import SettingsError
from ..fairness import FairnessConstraint
from ..model import RiskScore
from ..problem.training import TrainingRows
from ..reports import render
from ..reports.render import fmt_fixed, fmt_percent
from ..solver import SolverReport
from ..solver.nodes import highs_version
from .reliance import best_without
from .search import ROUNDING, under
from .plots import plot_rashomon, plot_variable_use

if TYPE_CHECKING:
    from ..design import DesignMatrix
    from ..fitinfo import FitSettings
    from ..problem import RiskProblem
    from .search import RashomonSearch

__all__ = ["RashomonSet", "RashomonMember", "MEMBER_COLUMNS", "IMPORTANCE_COLUMNS"]

#: the leading columns of :meth:`RashomonSet.to_frame` (then one column of points per design column used)
MEMBER_COLUMNS = ["objective", "loss", "size", "auc", "intercept"]
#: columns of :meth:`RashomonSet.importance`
IMPORTANCE_COLUMNS = ["variable", "share", "members", "points_min", "points_max", "best_without",
                      "best_without_status", "increase"]
#: statuses of a member picked from the set that is not the certified optimum (saved models keep it)
MEMBER_STATUS = "rashomon_member"


@dataclass(frozen=True)
class RashomonMember:
    """One score of a :class:`RashomonSet`: its rank (0 = best objective), objective, loss, size
    (items), intercept and points (``{design column label: points}``, used items only).  ``model()``
    returns it as a fitted :class:`~riskformula.RiskScore`."""

    rank: int
    objective: float
    loss: float
    size: int
    intercept: float
    points: dict
    _owner: RashomonSet | None = field(repr=False, compare=False, default=None)

    def model(self) -> RiskScore:
        """This member as an ordinary fitted :class:`~riskformula.RiskScore`."""
        assert self._owner is not None  # members come from RashomonSet.member, which sets it
        return self._owner.model(self.rank)


@dataclass(repr=False, eq=False)
class RashomonSet(render.Rendered):
    """Every risk score within (1 + ε) of the best objective, built by :func:`riskformula.rashomon_set`.

    Attributes
    ----------
    formula : str
    epsilon : float
        The relative tolerance ε.
    optimum : float
        The best objective found (mean logistic loss + c0 · size); ``optimum_certified`` says whether
        it is proven optimal.
    level : float
        (1 + ε) × ``optimum``: the set holds the scores whose objective is at most this.
    complete : bool
        True when the search finished: the set is exactly the scores under ``level``.
    bound : float
        What is proven when the search stopped at a limit: every score whose objective is below
        ``bound`` is listed (∞ for a complete set).
    status : str
        ``"complete"``, ``"time_limit"``, ``"node_limit"`` or ``"member_limit"``.
    optimum_lower : float
        A proven lower bound on the best objective (``optimum`` when certified).
    time, nodes, listed_nodes : the search's effort (seconds for the whole call; nodes of the
        listing search; nodes settled by listing their scores).
    settings : the :class:`~riskformula.model.FitSettings` every member is fitted with.
    notes : tuple of str
    """

    formula: str
    epsilon: float
    optimum: float
    level: float
    complete: bool
    bound: float
    status: str
    optimum_certified: bool
    optimum_lower: float
    time: float
    nodes: int
    listed_nodes: int
    settings: FitSettings
    lams: np.ndarray                 # (members, 1 + d): intercept, then points per design column
    objectives: np.ndarray
    losses: np.ndarray
    sizes: np.ndarray
    columns: tuple                   # design columns
    labels: tuple                    # their labels
    variables: dict                  # data variable -> design columns
    first_report: SolverReport       # the best score's certified fit
    notes: tuple = ()
    # what the members are refitted and scored with (set by from_search, the one constructor)
    _design: DesignMatrix = field(kw_only=True)
    _data: pd.DataFrame = field(kw_only=True)
    _problem: RiskProblem = field(kw_only=True)
    _rebuild: dict = field(kw_only=True)          # build_problem's arguments, for fits without a variable
    _auc: np.ndarray | None = None
    _exact_without: dict = field(default_factory=dict)
    _filters: tuple = ()
    _pts: np.ndarray | None = None

    _title = "Rashomon set of risk scores"

    # ---- construction -----------------------------------------------------------------
    @classmethod
    def from_search(cls, search: RashomonSearch, stopped: str | None, report: SolverReport, *,
                    problem: RiskProblem, design: DesignMatrix, data: pd.DataFrame, settings: FitSettings,
                    epsilon: float, elapsed: float, rebuild: dict) -> RashomonSet:
        """The result of a finished (``stopped`` None) or stopped :class:`~.search.RashomonSearch`."""
        # the best member (the best score known is always listed first): its objective as the
        # members' are computed
        values = [float(val) for _, val in search.members.values()]
        best = float(search.best_value)
        if values and under(min(values), best):
            best = min(values)
        level = (1.0 + epsilon) * best
        items = sorted(((float(val), int(np.count_nonzero(lam[1:])), tuple(lam[1:]), lam)
                        for lam, val in search.members.values() if under(val, level)), key=lambda t: t[:3])
        lams = np.array([t[3] for t in items]).reshape(len(items), problem.d + 1)
        objectives = np.array([t[0] for t in items], float)
        losses = np.array([problem.loss.value(lam) for lam in lams], float)
        sizes = np.array([problem.model_size(lam) for lam in lams], int)
        complete = stopped is None
        bound = math.inf if complete else min(search.open_bound(), level)
        # listed scores are no better than the best, unlisted ones no better than the bound
        lower = min(best, max(float(report.lower_bound), min(best, bound)))
        certified = (complete or bound >= best or best - lower <= settings.absolute_gap_tolerance
                     or (best - lower) / max(abs(best), 1e-12) <= settings.gap_tolerance)
        spec = design.spec
        out = cls(formula=spec.formula, epsilon=float(epsilon), optimum=best, level=level, complete=complete,
                  bound=bound, status=stopped if stopped is not None else "complete", optimum_certified=bool(certified),
                  optimum_lower=float(lower), time=float(elapsed), nodes=int(search.nodes),
                  listed_nodes=int(search.listed_nodes), settings=settings, lams=lams, objectives=objectives,
                  losses=losses, sizes=sizes, columns=tuple(spec.columns), labels=tuple(spec.labels),
                  variables={k: tuple(c) for k, c in spec.terms.variable_columns().items()},
                  first_report=report, _design=design, _data=data, _problem=problem, _rebuild=rebuild)
        object.__setattr__(out, "notes", tuple(out._default_notes()))
        return out

    def _subset(self, keep: np.ndarray, described: str, same_class: bool = False) -> "RashomonSet":
        """The members ``keep``; ``same_class``: the subset is the Rashomon set of the same class (a
        smaller ε), so the certified fits without a variable still apply."""
        keep = np.asarray(keep, bool)
        auc = None if self._auc is None else self._auc[keep]
        out = dataclasses.replace(self, lams=self.lams[keep], objectives=self.objectives[keep],
                                  losses=self.losses[keep], sizes=self.sizes[keep], _auc=auc, _pts=None,
                                  _exact_without=dict(self._exact_without) if same_class else {},
                                  _filters=self._filters + (described,), notes=())
        object.__setattr__(out, "notes", tuple(out._default_notes()))
        return out

    # ---- basic facts ------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.objectives)

    def __iter__(self) -> Iterator[RashomonMember]:
        return (self.member(i) for i in range(len(self)))

    @property
    def points(self) -> np.ndarray:
        """Points of every member (rows, best objective first) per design column (columns)."""
        if self._pts is None or len(self._pts) != len(self.lams):
            self._pts = np.round(self.lams[:, 1:]).astype(int)
        return self._pts

    def member(self, i: int) -> RashomonMember:
        """The member of rank ``i`` (0: the best objective) as a :class:`RashomonMember`."""
        i = self._rank(i)
        pts = self.points[i]
        base = self.lams[i, 0]
        return RashomonMember(rank=i, objective=float(self.objectives[i]), loss=float(self.losses[i]),
                              size=int(self.sizes[i]),
                              intercept=float(base) if self.settings.real_intercept else int(round(base)),
                              points={self.labels[j]: int(pts[j]) for j in np.flatnonzero(pts)}, _owner=self)

    def _rank(self, i) -> int:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise SettingsError(f"a member is chosen by its rank, an integer; got {i!r}.")
        if not -len(self) <= i < len(self):
            raise SettingsError(f"the set has {len(self)} member(s); rank {i} does not exist.")
        return int(i) % len(self)

    @property
    def auc(self) -> np.ndarray:
        """Training AUC of every member (ties count 1/2; the rows' sample weights, as the fit's)."""
        if self._auc is None:
            auc = _aucs(self._problem.loss, self.points)
            object.__setattr__(self, "_auc", auc)
            return auc
        return self._auc

    # ---- conversions ------------------------------------------------------------------
    def to_frame(self, labels: bool = True) -> pd.DataFrame:
        """One row per member, best objective first: ``objective``, ``loss``, ``size``, ``auc``,
        ``intercept`` and the points of every design column some member uses (named by its label,
        or by its design column with ``labels=False``)."""
        pts = self.points
        used = np.flatnonzero(np.any(pts != 0, axis=0)) if len(self) else np.zeros(0, int)
        names = self.labels if labels else self.columns
        frame = pd.DataFrame({"objective": self.objectives, "loss": self.losses, "size": self.sizes,
                              "auc": self.auc if len(self) else np.zeros(0),
                              "intercept": (self.lams[:, 0] if self.settings.real_intercept
                                            else np.round(self.lams[:, 0]).astype(int))})
        for j in used:
            frame[names[j]] = pts[:, j]
        frame.index.name = "rank"
        return frame

    def to_dict(self) -> dict:
        """The set's certificate, members and importance table as plain Python values."""
        members = [{"rank": i, "objective": float(self.objectives[i]), "loss": float(self.losses[i]),
                    "size": int(self.sizes[i]), "auc": float(self.auc[i]),
                    "intercept": render.plain(self.member(i).intercept),
                    "points": self.member(i).points} for i in range(len(self))]
        return {"formula": self.formula, "epsilon": self.epsilon, "optimum": self.optimum,
                "optimum_certified": self.optimum_certified, "optimum_lower": self.optimum_lower,
                "level": self.level, "complete": self.complete, "status": self.status,
                "bound": None if math.isinf(self.bound) else self.bound, "n_members": len(self),
                "time": self.time, "nodes": self.nodes, "listed_nodes": self.listed_nodes,
                "filters": list(self._filters), "members": members,
                "importance": render.records(self.importance()), "notes": list(self.notes)}

    def _tables(self) -> dict:
        return {"members": self.to_frame(), "importance": self.importance()}

    # ---- variable importance ----------------------------------------------------------
    def importance(self, exact: bool = False, time_limit: float = 60.0) -> pd.DataFrame:
        """Each variable's use across the set, one row per data variable the formula reads.

        ``share`` and ``members``: the share and number of members with nonzero points on some
        design column of the variable; ``points_min``/``points_max``: the range of those points
        (per design column; a threshold's cut ``x ≤ c`` carries the points of its column, which the
        card may show as ``x > c`` with the opposite sign); ``best_without``: the best objective of
        a score that does not use the variable — the model class reliance of Fisher, Rudin &
        Dominici (2019) reads it against the optimum — and ``increase`` = best_without / optimum −
        1 (NaN when a stopped search only knows a bound below the best objective found).
        ``best_without_status`` says what is proven:

        * ``"exact"``: a member without the variable is the best score without it (the set holds
          every score under the level, or under ``bound`` for a stopped search);
        * ``"above level"``: every member uses it, so no score without it is within ε of the best
          (``best_without`` is then the level, a strict lower bound); a proven statement;
        * ``"at least"``: a stopped search: no listed member below ``bound`` lacks it, so the best
          without it is at least ``best_without``;
        * ``"certified fit"``: computed by a certified fit with the variable's columns at 0
          (``exact=True``, for the variables every member uses), ``inf`` when no score without it
          meets the constraints.

        ``exact=True`` runs that certified fit for each variable whose best objective without it
        the set does not give, each within ``time_limit`` seconds (a fit stopped at its limit reports
        its lower bound, ``"at least"``); not on a filtered set, whose conditions the fit would not
        know.  On a filtered set the other statements hold among the scores that meet its
        conditions.
        """
        if exact and self._filters:
            raise SettingsError("importance(exact=True) fits the best score without each variable over the whole "
                                f"class; this set is filtered ({'; '.join(self._filters)}): call it on the "
                                "unfiltered set.")
        pts = self.points
        rows = []
        for var, cols in self.variables.items():
            block = pts[:, list(cols)] if len(self) else np.zeros((0, len(cols)), int)
            used = np.any(block != 0, axis=1)
            nz = block[block != 0]
            without = self.objectives[~used]
            if len(without) and (self.complete or without.min() <= self.bound):
                best, how = float(without.min()), "exact"
            elif self.complete:
                best, how = self.level, "above level"
            else:
                best, how = (float(min(self.bound, without.min())) if len(without) else self.bound), "at least"
            if how != "exact" and (exact or var in self._exact_without):
                best, how = self._best_without(var, cols, time_limit)
            rows.append({"variable": var, "share": float(used.mean()) if len(self) else float("nan"),
                         "members": int(used.sum()),
                         "points_min": int(nz.min()) if len(nz) else 0, "points_max": int(nz.max()) if len(nz) else 0,
                         "best_without": best, "best_without_status": how,
                         # a stopped search's "at least" below the best found says nothing of the increase
                         "increase": (best / self.optimum - 1.0 if self.optimum > 0 and not
                                      (how == "at least" and best < self.optimum) else float("nan"))})
        t = pd.DataFrame(rows, columns=IMPORTANCE_COLUMNS)
        return t.sort_values(["share", "best_without"], ascending=[False, False], kind="stable").reset_index(drop=True)

    def _best_without(self, var: str, cols, time_limit: float):
        """(objective, status) of the best score with ``cols`` at 0: a certified fit (cached; see
        :func:`riskformula.rashomon.reliance.best_without`)."""
        if var in self._exact_without:
            return self._exact_without[var]
        out = best_without(self._rebuild, cols, time_limit, self.settings.gap_tolerance,
                           self.settings.absolute_gap_tolerance)
        self._exact_without[var] = out
        return out

    # ---- choosing members -------------------------------------------------------------
    def _columns_of(self, names, what: str) -> list[list[int]]:
        if names is None:
            return []
        if isinstance(names, str):
            names = [names]
        terms = self._design.spec.terms
        return [terms.columns(n, where=f"`{what}`") for n in names]

    def filter(self, required=None, forbidden=None, max_size: int | None = None,
               max_objective: float | None = None, where: Callable | None = None) -> "RashomonSet":
        """The members that use every ``required`` variable (or term, column, label: the names
        ``coef_range`` takes), none of the ``forbidden`` ones, at most ``max_size`` items, an
        objective at most ``max_objective``, and for which ``where(member)`` (a
        :class:`RashomonMember`) is true; a set of its own (its importance describes it).  A
        complete set stays complete: the subset is exactly the scores under the level that meet
        the conditions."""
        keep = np.ones(len(self), bool)
        pts = self.points
        said = []
        for cols, name in zip(self._columns_of(required, "required"), [required] if isinstance(required, str)
                              else (required or [])):
            keep &= np.any(pts[:, cols] != 0, axis=1)
            said.append(f"uses {name}")
        for cols, name in zip(self._columns_of(forbidden, "forbidden"), [forbidden] if isinstance(forbidden, str)
                              else (forbidden or [])):
            keep &= ~np.any(pts[:, cols] != 0, axis=1)
            said.append(f"without {name}")
        if max_size is not None:
            keep &= self.sizes <= int(max_size)
            said.append(f"size ≤ {int(max_size)}")
        if max_objective is not None:
            keep &= self.objectives <= float(max_objective)
            said.append(f"objective ≤ {float(max_objective):.6g}")
        if where is not None:
            keep &= np.array([bool(where(self.member(i))) if keep[i] else False for i in range(len(self))], bool)
            said.append("where(...)")
        return self._subset(keep, ", ".join(said) or "all")

    def within(self, epsilon: float) -> "RashomonSet":
        """The members within (1 + ``epsilon``) of the optimum (``epsilon`` ≤ the set's ε): the
        Rashomon set at a smaller ε, complete when this one is."""
        if not 0 <= epsilon <= self.epsilon:
            raise SettingsError(f"`epsilon` must be between 0 and the set's ε ({self.epsilon:g}); got {epsilon!r}.")
        level = (1.0 + epsilon) * self.optimum
        out = self._subset(self.objectives <= level + ROUNDING * abs(level), f"within {epsilon:.4g} of the optimum",
                           same_class=True)
        return dataclasses.replace(out, epsilon=float(epsilon), level=level, _filters=self._filters)

    def best(self, prefer=None, required=None, forbidden=None, max_size: int | None = None):
        """The member a user prefers, as an ordinary fitted :class:`~riskformula.RiskScore`.

        ``prefer`` ranks the members (lowest first; ties go to the lower objective):

        * None: the objective itself (the best score);
        * a dict of costs, ``{"bmi": 3, "C(smoker)": 1}`` (a variable, term, column or label; a
          ``"default"`` entry for every variable not named, 0 if absent): a member's cost is the sum
          over the variables it uses (each counted once, whatever the number of its items);
        * a function of a :class:`RashomonMember` returning a number.

        ``required``, ``forbidden`` and ``max_size`` first restrict the members as :meth:`filter`.
        The model's certificate compares it with the best score: its ``lower_bound`` is the proven
        lower bound on the best objective, its ``gap`` how far above that it is, and its
        ``status`` is ``"optimal"`` for a best score and ``"rashomon_member"`` otherwise.
        """
        pool = self.filter(required=required, forbidden=forbidden, max_size=max_size) if (
            required is not None or forbidden is not None or max_size is not None) else self
        if not len(pool):
            raise SettingsError("no member of the set meets `required`, `forbidden` and `max_size`; the set "
                                f"has {len(self)} member(s): loosen the conditions or raise `epsilon`.")
        cost = pool._costs(prefer)
        order = np.lexsort((np.arange(len(pool)), pool.objectives, cost))
        return pool.model(int(order[0]))

    def _costs(self, prefer) -> np.ndarray:
        if prefer is None:
            return np.zeros(len(self))
        if callable(prefer):
            return np.array([float(prefer(self.member(i))) for i in range(len(self))], float)
        if not isinstance(prefer, dict):
            raise SettingsError("`prefer` must be None, a dict of costs per variable (e.g. {'bmi': 3}) or a "
                                f"function of a member; got {type(prefer).__name__}.")
        pts = self.points
        default = float(prefer.get("default", 0.0))
        named = {k: float(c) for k, c in prefer.items() if k != "default"}
        col_cost = np.full(len(self.columns), np.nan)
        for name, c in named.items():
            for j in self._columns_of([name], "prefer")[0]:
                col_cost[j] = c
        total = np.zeros(len(self))
        for var, cols in self.variables.items():
            cols = list(cols)
            used = np.any(pts[:, cols] != 0, axis=1)
            # a variable's cost: the one named for it (or for its columns); else the default
            named_cost = col_cost[cols]
            c = float(np.nanmax(named_cost)) if np.any(~np.isnan(named_cost)) else default
            total += used * c
        return total

    def model(self, rank: int = 0):
        """The member of rank ``rank`` (0: best objective) as an ordinary fitted
        :class:`~riskformula.RiskScore`, built as :func:`riskformula.risk_score` builds its result
        (evaluated on the training rows; card, predict, summary, save all work)."""
        i = self._rank(rank)
        lam = self.lams[i].copy()
        obj = float(self.objectives[i])
        lower = min(self.optimum_lower, obj)
        gap = 0.0 if lower >= obj else (obj - lower) / max(abs(obj), 1e-12)
        s = self.settings
        optimal = self.optimum_certified and (gap <= s.gap_tolerance or obj - lower <= s.absolute_gap_tolerance)
        rep = SolverReport(
            status="optimal" if optimal else MEMBER_STATUS, objective=obj, lower_bound=lower, gap=gap,
            time=self.time, nodes=self.first_report.nodes + self.nodes, cuts=self.first_report.cuts,
            lp_solves=self.first_report.lp_solves, root_bound=self.first_report.root_bound,
            solver=f"riskformula Rashomon set search on HiGHS {highs_version()}",
            settings={"time_limit": s.time_limit, "gap_tolerance": s.gap_tolerance,
                      "absolute_gap_tolerance": s.absolute_gap_tolerance, "epsilon": self.epsilon,
                      "rashomon_rank": i, "rashomon_members": len(self), "rashomon_complete": self.complete},
            solution=tuple(lam.tolist()), scale=float(s.scales[0]), listed=self.listed_nodes)
        p = self._problem
        fair = tuple(c for c in s.constraints if isinstance(c, FairnessConstraint))
        frame = weights = None
        if fair:
            training = TrainingRows.of_design(self._design, self._data)
            frame = training.frame
            weights = None if self._design.weights is None else training.weights
        return RiskScore.from_fit(self._design, lam, rep, s, loss=p.loss.value(lam), data=self._data,
                                  fairness=fair, frame=frame, weights=weights)

    # ---- plots ------------------------------------------------------------------------
    def plot(self, kind: str = "loss", ax=None):
        """``kind="loss"``: :func:`~riskformula.rashomon.plots.plot_rashomon` (members' loss
        against size); ``"importance"``: :func:`~riskformula.rashomon.plots.plot_variable_use`.
        Returns the figure."""
        if kind == "loss":
            return plot_rashomon(self, ax=ax)
        if kind == "importance":
            return plot_variable_use(self, ax=ax)
        raise SettingsError(f"`kind` must be 'loss' or 'importance'; got {kind!r}.")

    # ---- text -------------------------------------------------------------------------
    def statement(self) -> str:
        """What is proven, in one sentence."""
        if self.complete:
            these = f"these {len(self):,d} scores are" if len(self) != 1 else "this score is"
            return (f"Complete: {these} every risk score within the limits whose objective is "
                    f"at most {self.level:.8g} = (1 + {self.epsilon:g}) × {self.optimum:.8g}.")
        return (f"Stopped at the {self.status.replace('_', ' ')}: {len(self):,d} score{'s' if len(self) != 1 else ''} "
                "listed; every risk score "
                f"within the limits whose objective is below {self.bound:.8g} is among them (the level is "
                f"{self.level:.8g}).")

    def _class_text(self) -> str:
        s = self.settings
        lo, hi = min(s.coef_lower), max(s.coef_upper)
        b_lo, b_hi = s.intercept_range
        parts = [f"at most {s.max_size} items" + (f", at least {s.min_size}" if s.min_size else ""),
                 f"points {lo:+d} to {hi:+d}",
                 f"intercept {'real' if s.real_intercept else 'integer'} in {b_lo}..{b_hi}"]
        if s.scales[0] != 1.0:
            parts.append(f"scale {s.scales[0]:g}")
        if s.constraints:
            parts.append("constraints: " + "; ".join(c.describe() for c in s.constraints))
        return ", ".join(parts)

    def _header(self) -> list:
        cert = ("certified optimal" if self.optimum_certified
                else f"not certified (the best possible is at least {self.optimum_lower:.8g})")
        out = [("Formula", self.formula), ("Scores searched", self._class_text()),
               ("Objective", f"mean logistic loss + c0 × size (c0 = {self.settings.c0:g})"),
               ("Best objective", f"{self.optimum:.8g} ({cert})"),
               ("Level", f"(1 + ε) × best = {self.level:.8g} (ε = {fmt_percent(self.epsilon, 2)})"),
               ("Scores in the set", f"{len(self):,d}"),
               ("Status", "complete (proven)" if self.complete
                else f"{self.status.replace('_', ' ')}: complete below {self.bound:.8g}"),
               ("Search", f"{self.time:.1f} s, {self.nodes:,d} nodes ({self.listed_nodes:,d} settled by listing)")]
        if self._filters:
            out.insert(6, ("Filtered", "; ".join(self._filters)))
        return out

    def _members_display(self, top: int = 10) -> pd.DataFrame:
        n = min(top, len(self))
        pts = self.points
        items = []
        for i in range(n):
            items.append(", ".join(f"{render.fmt_points(pts[i, j])} {self.labels[j]}" for j in np.flatnonzero(pts[i])))
        return pd.DataFrame({"rank": list(range(n)), "objective": [f"{x:.6f}" for x in self.objectives[:n]],
                             "above best": [fmt_percent(x / self.optimum - 1.0, 2) if self.optimum > 0 else ""
                                            for x in self.objectives[:n]],
                             "AUC": [fmt_fixed(x) for x in self.auc[:n]],
                             "size": [str(int(x)) for x in self.sizes[:n]],
                             "intercept": [render.fmt_number(self.member(i).intercept) for i in range(n)],
                             "points": items})

    def _importance_display(self) -> pd.DataFrame:
        t = self.importance()
        def best(row):
            if row.best_without_status == "above level":
                return f"> {row.best_without:.6f}"
            if row.best_without_status == "at least":
                return f"≥ {row.best_without:.6f}"
            return "none" if math.isinf(row.best_without) else f"{row.best_without:.6f}"
        def inc(row):
            if math.isinf(row.best_without) or math.isnan(row.increase):
                return ""
            sign = {"above level": "> ", "at least": "≥ "}.get(row.best_without_status, "")
            return sign + fmt_percent(row.increase, 2)
        share, members = t["share"], t["members"]
        return pd.DataFrame({
            "variable": t["variable"], "in members": [f"{fmt_percent(s)} ({m:,d})" for s, m in zip(share, members)],
            "points": [f"{a:+d} to {b:+d}" if m else "" for a, b, m in zip(t["points_min"], t["points_max"], members)],
            "best without it": [best(r) for r in t.itertuples()],
            "above best": [inc(r) for r in t.itertuples()]})

    def _sections(self) -> list[tuple[str | None, pd.DataFrame | str]]:
        out: list[tuple[str | None, pd.DataFrame | str]] = [(None, self.statement())]
        if len(self):
            shown = min(10, len(self))
            title = "Members" if shown == len(self) else f"Members (best {shown} of {len(self):,d})"
            out.append((title, self._members_display(shown)))
        out.append(("Variables across the set", self._importance_display()))
        return out

    def _default_notes(self) -> list[str]:
        s = self.settings
        out = [("The search prunes a part of the space only when its LP bound, a lower bound on the objective of "
                "every score in it, is above the level; the rest is listed and every listed score is scored "
                "exactly, so no score under the level can be missing"
                + ("." if self.complete else f"; it stopped at the {self.status.replace('_', ' ')}, so only the "
                   f"scores below {self.bound:.8g} are proven listed."))]
        if not self.optimum_certified:
            out.append(f"The best objective is not proven optimal (it lies between {self.optimum_lower:.8g} and "
                       f"{self.optimum:.8g}): the level is taken from the best score found.")
        out.append("A member is its points: its intercept is the best one for them"
                   + (" (a real number)." if s.real_intercept else
                      f" (an integer in {s.intercept_range[0]}..{s.intercept_range[1]}"
                      + (", meeting the constraints)." if s.constraints else ")."))
                   + " Members with different points can predict alike when design columns are linear combinations "
                     "of each other (complementary indicators).")
        if any(True for _ in self._design.spec.thresholds):
            out.append("Threshold terms: one candidate cut per gap between consecutive distinct training values "
                       "(cuts that split the training rows identically count once, written as the roundest number "
                       "in the gap); cuts that cannot be optimal are kept, as they can be near-optimal.")
        out.append("'best without it' is the best objective of a score that does not use the variable, read from "
                   "the set (model class reliance, Fisher, Rudin & Dominici 2019): '>' means every member uses it, "
                   "so no score without it is within ε of the best; importance(exact=True) computes it with a "
                   "certified fit.")
        if self.optimum == 0:
            out.append("The best objective is 0: the set holds the scores with objective 0.")
        return out

    def __repr__(self) -> str:
        state = "complete" if self.complete else f"{self.status}, complete below {self.bound:.6g}"
        return (f"<RashomonSet: {self.formula}; {len(self):,d} scores within {self.epsilon:g} of "
                f"{self.optimum:.6g}; {state}>")


def _aucs(loss, points: np.ndarray, chunk: int = 256) -> np.ndarray:
    """Training AUC (ties 1/2) of the scores ``points`` (members × design columns) on the loss's
    weighted distinct rows; a uniform weight on the events (``positive_weight``) does not change it."""
    X = loss.Z[:, 1:]
    wp, wn = loss.w_pos, loss.w_neg
    out = np.empty(len(points))
    for a in range(0, len(points), chunk):
        S = X @ points[a:a + chunk].T.astype(float)
        for k in range(S.shape[1]):
            vals, inv = np.unique(S[:, k], return_inverse=True)
            pos = np.bincount(inv, weights=wp, minlength=len(vals))
            neg = np.bincount(inv, weights=wn, minlength=len(vals))
            below = np.cumsum(neg) - neg
            out[a + k] = float(np.sum(pos * (below + 0.5 * neg)) / (pos.sum() * neg.sum()))
    return out
