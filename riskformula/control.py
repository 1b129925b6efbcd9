"""How the search runs, apart from what model it looks for: :class:`SearchControl`.

R's ``glm(..., control = glm.control(...))`` keeps the fitting algorithm's settings apart from the
model's; so does :func:`riskformula.risk_score`: the model (formula, size, points, constraints,
objective) in its arguments, the search (time, tolerances, nodes, processes, messages, the
net-benefit fit's exact solver) in one frozen :class:`SearchControl` passed as ``control=``, and
reused unchanged by :func:`riskformula.size_path`, :func:`riskformula.cv_risk_score`,
:func:`riskformula.cross_validate`, :func:`riskformula.fairness_path`,
:class:`riskformula.RiskScoreClassifier` and the command line. As with R's ``glm``, the
search settings may also be given as keywords of the fit (``risk_score(f, df, time_limit=30)``),
which override the fields of ``control``.
"""

from __future__ import annotations

import dataclasses
import numbers
import sys
from dataclasses import dataclass
from typing import Any

from . import _checks as v
from . import _progress
from .errors import SettingsError, did_you_mean
from .solver.options import SearchOptions

__all__ = ["SearchControl"]


@dataclass(frozen=True)
class SearchControl:
    """Settings of the search for a risk score (the model itself is set by the fit's arguments).

    Parameters
    ----------
    time_limit : float, default 60
        Seconds for the whole fit, from building the design to evaluating the model on its
        training rows; at the limit the best model is returned with its honest gap.
    gap_tolerance : float, default 1e-6
        Stop once (objective − lower bound) / objective is at most this; in [0, 1).
    absolute_gap_tolerance : float, default 1e-8
        Or once objective − lower bound is at most this (as HiGHS' ``mip_abs_gap`` and CPLEX's
        ``EpAGap``); either tolerance makes the run "optimal". The default is 1 % of the default
        ``c0``, so a certified model is never worse than the best by more than a hundredth of one
        item's penalty; and it is ten times the margin (1e-9 · (1 + |objective|)) by which every LP
        bound is lowered to absorb HiGHS' tolerances, so it certifies the gaps the LP cannot
        resolve on nearly separable data (objective near 0). With a much smaller ``c0``, lower it
        to about ``c0 / 100``; 0 turns it off. Logistic objective only.
    node_limit : int or None, default None
        Cap on branch-and-bound nodes. Logistic objective only.
    n_jobs : int, default 1
        Processes for the tree search (joblib's loky backend, so scripts need no
        ``if __name__ == "__main__"`` guard); 1 searches in this process; negative values count
        back from the number of CPUs as in joblib (-1: all, -2: all but one). The root runs here,
        then the open nodes are shared out in rounds of a fixed number of nodes per process, so a
        search that ends by its tolerances or ``node_limit`` returns the same model for the same
        call every time (a ``time_limit`` stops it wherever it is). The worker processes stay
        alive after the fit, for the next one (joblib's reusable executor). Logistic objective only.
    progress : bool or None, default None
        While the search runs, print one status line (elapsed time, nodes, objective, lower
        bound, gap) to stderr every 10 s, and how it ended if any was printed. None: only in
        interactive sessions (a terminal, IPython or Jupyter).
    verbose : bool, default False
        Print the solver log (stdout) every 2 s: time, nodes, open nodes, best objective, lower
        bound, gap and cuts.
    engine : {"auto", "supports", "tree"}, default "auto"
        Logistic and Cox objectives: how the certificate is proven. ``"supports"`` lists the
        supports with bounds from the data's cells (the saturated loss of Ustun & Rudin, 2019) and
        calibrates each surviving point vector exactly; with ``scale="fit"`` its certificate covers
        every score scale > 0 (the continuous multiplier of Liu et al., 2022), not a grid. It takes
        plain problems (point ranges including 0, size limits, grouped terms, whole-count weights,
        integer predictors; no other constraints). ``"tree"`` is the branch-and-cut. ``"auto"``
        runs the support search on qualifying problems for part of the time limit and hands over to
        the branch-and-cut when it does not finish (or when ``node_limit`` is set). For a
        time-to-event (Cox) score the support search bounds supports by Cox regressions instead
        (:mod:`riskformula.solver.cox_support`), takes ``scale="fit"`` (the default there) and the
        support constraints (``at_most``, ``not_both``, ``implies``, ``max_variables``), and with
        ``"auto"`` keeps the whole time limit (the branch-and-cut would certify only a grid of
        scales); a fixed ``scale`` or a list of scales runs the branch-and-cut.
    solver : str or None, default "appsi_highs"
        Net-benefit objective only: the pyomo solver of the exact model, warm-started by a local
        search (HiGHS by default; e.g. ``"gurobi"``, ``"cbc"`` if installed), or None for the local
        search alone.
    solver_options : dict or None, default None
        Net-benefit objective only: options passed to that solver.
    client : distributed.Client or str or None, default None
        Logistic objective only: a dask.distributed ``Client``, or a scheduler's address
        (``"tcp://host:8786"``, a client is then made for the fit and closed after it), on whose
        workers the support search runs its independent subtrees in rounds, as ``n_jobs`` does on
        this machine's processes (one subtree share per worker thread; the best model is shared
        between rounds, and the certificate is the least of the workers' bounds). Only the support
        search uses it: when it hands over to the branch-and-cut, the tree runs on ``n_jobs``
        processes here, so ``engine="tree"`` refuses it. Needs ``pip install distributed``. A
        pickled control keeps a client's scheduler address, not the client; fitted models never
        record it.

    Examples
    --------
    >>> import riskformula as rf
    >>> control = rf.SearchControl(time_limit=10, gap_tolerance=0.01)
    >>> control.replace(n_jobs=2).n_jobs
    2
    >>> control
    SearchControl(time_limit=10.0, gap_tolerance=0.01)
    """

    time_limit: float = 60.0
    gap_tolerance: float = 1e-6
    absolute_gap_tolerance: float = 1e-8
    node_limit: int | None = None
    n_jobs: int = 1
    progress: bool | None = None
    verbose: bool = False
    engine: str = "auto"
    solver: str | None = "appsi_highs"
    solver_options: dict | None = None
    client: Any = None

    def __post_init__(self):
        check = object.__setattr__
        check(self, "time_limit", v.check_time_limit("time_limit", self.time_limit))
        check(self, "gap_tolerance", v.check_gap_tolerance(self.gap_tolerance))
        check(self, "absolute_gap_tolerance",
              v.check_positive("absolute_gap_tolerance", self.absolute_gap_tolerance, allow_zero=True,
                               maximum=v.MAX_C0))
        check(self, "node_limit", v.check_int("node_limit", self.node_limit, minimum=1, allow_none=True,
                                           maximum=v.MAX_COUNT))
        n = v.check_int("n_jobs", self.n_jobs)
        if n == 0:
            raise SettingsError("`n_jobs` must be a number of processes (1, 2, ...), or negative to count back "
                                "from the number of CPUs (-1: all of them, -2: all but one); got 0.")
        check(self, "n_jobs", n)
        if self.progress is not None and not isinstance(self.progress, (bool, numbers.Integral)):
            raise SettingsError(f"`progress` must be True, False or None (show it in interactive sessions "
                                f"only); got {self.progress!r}.")
        if not isinstance(self.verbose, (bool, numbers.Integral)):
            raise SettingsError(f"`verbose` must be True or False; got {self.verbose!r}.")
        if self.engine not in ("auto", "supports", "tree"):
            raise SettingsError(f"`engine` must be 'auto' (the support search where it applies, else the tree), "
                                f"'supports' or 'tree'; got {self.engine!r}.")
        if self.solver is not None and not (isinstance(self.solver, str) and self.solver):
            raise SettingsError(f"`solver` must be a pyomo solver name such as 'appsi_highs', 'gurobi' or 'cbc', or "
                                f"None for the local search alone; got {self.solver!r}.")
        if self.solver_options is not None and not isinstance(self.solver_options, dict):
            raise SettingsError(f"`solver_options` must be a dict of solver options; got "
                                f"{type(self.solver_options).__name__}.")
        if self.client is not None:
            if not (isinstance(self.client, str) and self.client.strip()) and not _is_client(self.client):
                raise SettingsError(f"`client` must be a dask.distributed Client (distributed.Client(...)) or a "
                                    f"scheduler's address such as 'tcp://127.0.0.1:8786'; got "
                                    f"{type(self.client).__name__}.")
            if self.engine == "tree":
                raise SettingsError("`client` runs the support search's subtrees on a dask cluster; "
                                    "engine='tree' does not use it (the branch-and-cut runs on `n_jobs` processes "
                                    "here). Use engine='auto' or 'supports', or leave `client` out.")

    def replace(self, **changes) -> SearchControl:
        """A copy with ``changes`` (checked like the constructor's arguments; a misspelt name is an error).

        Parameters
        ----------
        **changes : dict
            New values of fields, by name (``time_limit=10``, ``n_jobs=2``, ...).

        Returns
        -------
        SearchControl
            A new instance; this one is frozen and stays as it is.
        """
        return dataclasses.replace(self, **check_names(changes, "SearchControl"))

    def options(self, time_limit: float | None = None, n_jobs: int | None = None) -> SearchOptions:
        """The options the solvers take for these settings: the tolerances, ``node_limit`` and
        ``verbose`` as they are, ``progress`` made definite (None: shown in interactive sessions).

        Parameters
        ----------
        time_limit : float, optional
            The search's seconds, when the fit keeps part of :attr:`time_limit` for its other steps;
            None (default): :attr:`time_limit`.
        n_jobs : int, optional
            The processes the search may use (:attr:`n_jobs` checked against the machine and the
            time limit); None (default): :attr:`n_jobs`.

        Returns
        -------
        riskformula.solver.options.SearchOptions
        """
        return SearchOptions(time_limit=self.time_limit if time_limit is None else float(time_limit),
                             gap_tolerance=self.gap_tolerance, absolute_gap_tolerance=self.absolute_gap_tolerance,
                             node_limit=self.node_limit, n_jobs=self.n_jobs if n_jobs is None else int(n_jobs),
                             verbose=bool(self.verbose), progress=_progress.resolve(self.progress))

    def changed(self) -> dict:
        """The fields set to something other than their defaults.

        Returns
        -------
        dict
            Field name → value, for the fields whose value differs from the default.
        """
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != f.default}

    def __repr__(self) -> str:
        return f"SearchControl({', '.join(f'{k}={val!r}' for k, val in self.changed().items())})"

    def __getstate__(self) -> dict:
        # a live client holds sockets and threads: a pickled control keeps its scheduler's address
        state = dict(self.__dict__)
        if state.get("client") is not None and not isinstance(state["client"], str):
            state["client"] = _address(state["client"])
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


def _is_client(obj) -> bool:
    """Whether ``obj`` is a dask.distributed ``Client`` (without importing distributed: an object of
    its class exists only once the module is imported)."""
    distributed = sys.modules.get("distributed")
    return distributed is not None and isinstance(obj, distributed.Client)


def _address(client) -> str | None:
    """The scheduler address of a dask ``client`` (None if it has none, e.g. once closed)."""
    try:
        return str(client.scheduler.address)
    except AttributeError:
        return None


#: the names of the search settings
FIELDS = tuple(f.name for f in dataclasses.fields(SearchControl))


#: arguments of R's ``glm`` and statsmodels' ``glm`` a user may reach for, with what riskformula
#: takes instead (a call passing one is told this rather than the list of search settings)
OTHER_NAMES = {
    "na_action": "missing values are handled by `missing=` (\"raise\", the default; \"drop\" as R's na.omit; "
                 "\"item\"; \"as <value>\"), for every variable or per variable with a dict.",
    "subset": "select the rows first, `data[mask]` or `data.query(\"age >= 18\")` (rf.risk_score takes "
              "`subset=` itself).",
    "decision_thresholds": "the decision thresholds are the net-benefit objective's own: "
                           "objective=rf.net_benefit(thresholds=[...], weights=[...]).",
    "decision_weights": "the decision weights are the net-benefit objective's own: "
                        "objective=rf.net_benefit(thresholds=[...], weights=[...]).",
    "family": "a risk score is a logistic model (binomial family, logit link); `objective=\"net_benefit\"` "
              "fits the net-benefit score instead.",
}


def check_names(options: dict, where: str, others: tuple = ()) -> dict:
    """``options`` when every key names a search setting; else a :class:`SettingsError` naming the
    nearest of those and ``others`` (the caller's own arguments)."""
    unknown = [k for k in options if k not in FIELDS]
    if unknown and unknown[0] in OTHER_NAMES:  # an argument of R's glm or statsmodels, said our way
        raise SettingsError(f"{where}() has no argument `{unknown[0]}`: {OTHER_NAMES[unknown[0]]}")
    if unknown:
        hint = did_you_mean(unknown[0], FIELDS + tuple(others))
        raise SettingsError(f"{where}() got an unexpected argument `{unknown[0]}`.{hint} The search settings are "
                            f"{', '.join(FIELDS)} (see rf.SearchControl).")
    return options


def make_control(control: SearchControl | None, options: dict, where: str, others: tuple = ()) -> SearchControl:
    """The search settings of a call: ``control`` (default: the defaults) with the keyword
    ``options`` over it."""
    if control is not None and not isinstance(control, SearchControl):
        raise SettingsError(f"`control` must be an rf.SearchControl(...) (e.g. rf.SearchControl(time_limit=30)); "
                            f"got {type(control).__name__}.")
    check_names(options, where, others)
    base = control if control is not None else SearchControl()
    return dataclasses.replace(base, **options) if options else base
