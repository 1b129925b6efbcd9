"""Choosing a model's size and settings: stratified K-fold cross-validation and the model-size path.

:func:`cross_validate` refits the score on each training split and evaluates it on the held-out
fold (Ustun and Rudin 2019 tune by 5-fold mean test AUC); :func:`size_path` fits the best score of every
size with a small ``c0`` (Ustun and Rudin 2019, §1.3), the integer version of a regularisation path.
:func:`cv_risk_score` combines them: it runs the size path on every training split, picks a size
from the held-out curve (the best mean, or the one-standard-error rule of ``cv.glmnet``) and refits
at that size on all rows. A time-to-event formula ``Surv(time, event) ~ ...`` is cross-validated
on folds stratified by event, every fold fit sharing the horizons of the fit on all rows, and
measured on the held-out rows by Harrell's and Uno's C, the time-dependent AUC at the first
horizon, the integrated Brier score and the partial likelihood per row. All fit models here; their reports are
:class:`~riskformula.reports.cross_validation.CrossValidation`,
:class:`~riskformula.reports.size_path.SizePath` and :class:`~riskformula.reports.size_cv.SizeCV`.
"""

from __future__ import annotations

import math
import os
import time
import warnings

import numpy as np
import pandas as pd

from . import _progress
from . import _checks as v
from ._threads import check_n_jobs
from .control import FIELDS as CONTROL_FIELDS
from .control import SearchControl
from .backends import backend_for
from .errors import (CalibrationWarning, DataError, NotApplicableError, OptimalityGapWarning, SearchLimitError,
                     SettingsError, did_you_mean)
from .fit import risk_score
from .design import build_design
from .design.survival_response import is_surv
from .reports.cross_validation import (FOLD_COLUMNS, SURVIVAL_FOLD_COLUMNS, CrossValidation,
                                       SurvivalCrossValidation)
from .reports.partial_likelihood import partial_likelihood
from .reports.render import fmt_gap
from .reports.size_cv import (CURVE_COLUMNS, FOLD_SIZE_COLUMNS, METRICS, RULES, SURVIVAL_CURVE_COLUMNS,
                              SURVIVAL_FOLD_SIZE_COLUMNS, SURVIVAL_METRICS, SizeCV, SurvivalSizeCV)
from .reports.size_path import PATH_COLUMNS, SURVIVAL_PATH_COLUMNS, SizePath, SurvivalSizePath
from .reports.survival_metrics import harrell_c
from .survival.fit import default_horizon

__all__ = ["cross_validate", "cv_risk_score", "size_path", "stratified_folds"]

CONTROL_DEFAULT_TIME = SearchControl().time_limit
#: the least time limit a fit is given out of a whole-call limit
MIN_FIT_SECONDS = 0.01


# --------------------------------------------------------------------------------------
# folds
# --------------------------------------------------------------------------------------


def stratified_folds(y, folds: int, seed: int) -> np.ndarray:
    """Fold number (0..folds-1) of every row, balancing events and non-events across folds.

    Each class is shuffled with ``numpy.random.default_rng(seed)`` and dealt round-robin, so
    fold sizes differ by at most one per class and the same seed gives the same folds.

    Examples
    --------
    >>> stratified_folds([0, 0, 0, 1, 1, 1], folds=3, seed=0).tolist()  # doctest: +SKIP
    """
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    fold = np.empty(len(y), dtype=int)
    start = 0
    for cls in (0, 1):
        idx = np.flatnonzero(y == cls)
        rng.shuffle(idx)
        # continue dealing where the previous class stopped so fold totals stay balanced too
        fold[idx] = (start + np.arange(len(idx))) % folds
        start = (start + len(idx)) % folds
    return fold


# --------------------------------------------------------------------------------------
# a time limit for the whole call
# --------------------------------------------------------------------------------------

#: the clock of the whole-call limits (a module attribute, so that tests can stand in for it)
_clock = time.perf_counter


class _Budget:
    """The time of a call that makes many fits (``total_time_limit`` seconds, None: no limit), shared
    out among them: the next fits get the smaller of the caller's per-fit ``time_limit`` and their
    equal share of what is left for the fits still to run (at least :data:`MIN_FIT_SECONDS`).  A
    fit stops at its limit with its best model and honest gap; a call whose time is spent before a
    fit starts stops with a :class:`~riskformula.errors.SearchLimitError` (``strict``) or gives the
    fits left the least time (not ``strict``: a share of a larger call, which stops instead)."""

    def __init__(self, total: float | None, fit_args: dict, what: str, strict: bool = True):
        self.strict = strict
        self.total = None if total is None else v.check_time_limit("total_time_limit", total)
        self.what = what
        control = fit_args.get("control")
        per_fit = fit_args.get("time_limit", control.time_limit if isinstance(control, SearchControl) else
                               CONTROL_DEFAULT_TIME)
        self.per_fit = v.check_time_limit("time_limit", per_fit)
        self.end = None if self.total is None else _clock() + self.total
        self.started = 0

    def seconds(self, fits_left: int, fits: int = 1) -> float | None:
        """Seconds for the next ``fits`` fits (run one after another) of the ``fits_left`` still to
        run, these included; None without a total limit."""
        if self.end is None:
            return None
        left = self.end - _clock()
        if left <= 0 and not self.strict:
            left = 0.0  # the fits left stop at their first chance, with their best model
        elif left <= 0:
            raise SearchLimitError(f"stopped at `total_time_limit` ({self.total:g} s) of {self.what} after "
                                   f"{self.started} fit(s), before the other {fits_left}; raise `total_time_limit`, "
                                   "or ask for fewer fits (fewer folds or sizes) or a smaller `time_limit` per fit.")
        self.started += fits
        return max(MIN_FIT_SECONDS * fits, min(self.per_fit * fits, left * fits / max(fits_left, fits)))

    def explained(self, error: SearchLimitError) -> SearchLimitError:
        """A fit's ``error`` (stopped by the time limit its share gave it) said in the call's terms."""
        if self.end is None or "total_time_limit" in str(error):
            return error
        return SearchLimitError(f"{str(error).rstrip('.')} — in a fit of {self.what} given its share of "
                                f"`total_time_limit={self.total:g}`; raise `total_time_limit`, or ask for fewer "
                                "fits (fewer folds or sizes).")

    def fit_args(self, fit_args: dict, fits_left: int) -> dict:
        """``fit_args`` with the ``time_limit`` of the next fit (of ``fits_left``)."""
        seconds = self.seconds(fits_left)
        return fit_args if seconds is None else {**fit_args, "time_limit": seconds}


# --------------------------------------------------------------------------------------
# cross-validation
# --------------------------------------------------------------------------------------


def _fit_fold(k: int, formula: str, train: pd.DataFrame, test: pd.DataFrame, fit_args: dict):
    """Fit on ``train``, evaluate on ``test``; top-level so worker processes can run it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # the caller's bar (if any) reports the folds; a fold's own status lines would break it
        model = risk_score(formula, train, progress=False, **fit_args)
        ev = model.evaluate(test)
    messages = [f"fold {k + 1}: {w.message}" for w in caught
                if issubclass(w.category, CalibrationWarning)]
    tm = model.training_metrics
    if _is_survival_model(model):
        return _survival_fold_row(k + 1, model, ev, partial_likelihood(model, test)), model, messages
    row = {"fold": k + 1, "n_train": model.nobs, "n_test": ev.n, "test_events": ev.events,
           "size": model.size, "auc": ev.auc.auc if ev.auc is not None else np.nan, "cal": ev.cal,
           "loss": ev.log_loss, "brier": ev.brier, "train_auc": tm["auc"], "train_cal": tm["cal"],
           "train_loss": model.loss, "objective": model.objective, "gap": model.gap,
           "status": model.status, "time": model.solver.time, "scale": model.scale}
    return row, model, messages


def _is_survival_model(model) -> bool:
    """Whether a fitted model is a time-to-event score (its outcome is ``Surv(time, event)``)."""
    return getattr(model.design, "survival", None) is not None


def _survival_fold_row(fold: int, model, ev, pl) -> dict:
    """A time-to-event fold's row: its model's ``evaluate()`` (``ev``) and partial likelihood (``pl``) on
    the held-out rows, and the fit's facts."""
    return {"fold": fold, "n_train": model.nobs, "n_test": ev.n, "test_events": ev.events, "size": model.size,
            "harrell_c": ev.harrell_c, "uno_c": ev.uno_c, "auc": float(ev.auc[0]),
            "integrated_brier": ev.integrated_brier, "loss": pl.loss,
            "train_harrell_c": model.training_metrics["harrell_c"], "train_loss": model.loss,
            "objective": model.objective, "gap": model.gap, "status": model.status, "time": model.solver.time,
            "scale": model.scale}


def _is_survival_fit(formula, fit_args: dict) -> bool:
    """Whether ``risk_score(formula, ..., **fit_args)`` fits a time-to-event score (as it decides)."""
    objective = fit_args.get("objective")
    if objective is not None:
        return objective == "cox"
    return isinstance(formula, str) and "~" in formula and is_surv(formula.split("~", 1)[0])


def _survival_fit_args(design, fit_args: dict) -> dict:
    """``fit_args`` with the horizons every fold fit shares: the caller's, or the default of the fit on
    all rows (the median follow-up of ``design``'s rows), so that every fold model states its risks,
    and is measured, at the same times as the model on all rows."""
    if fit_args.get("horizon") is not None:
        return fit_args
    return {**fit_args, "horizon": default_horizon(design.time, design.y)}


def _check_survival_folds(design, fold: np.ndarray, horizon, seed: int) -> None:
    """Every fold's held-out rows reach past the last horizon, have an event by the first and one
    before the last, and its training rows reach the last horizon: else a SettingsError before any fit
    (its evaluation at the horizons would be undefined)."""
    hs = sorted(float(h) for h in np.atleast_1d(horizon))
    first, last = hs[0], hs[-1]
    t, e = np.asarray(design.time, float), np.asarray(design.y, int) == 1
    for k in range(int(fold.max()) + 1):
        test, train = fold == k, fold != k
        where = f"fold {k + 1} (seed {seed})"
        if t[test].max() <= last:
            raise SettingsError(f"the held-out rows of {where} are followed up to {t[test].max():g} only, not past "
                                f"the horizon {last:g}, so the risk within it cannot be checked there. Choose a "
                                "shorter `horizon`, fewer folds, or another seed.")
        if not np.any(e[test] & (t[test] <= first)) or not np.any(e[test] & (t[test] < last)):
            raise SettingsError(f"the held-out rows of {where} have no event by the horizon {first:g}, so its AUC "
                                "and Uno's C are undefined there. Choose a later `horizon`, fewer folds, or another "
                                "seed.")
        if t[train].max() < last:
            raise SettingsError(f"the training rows of {where} are followed up to {t[train].max():g} only, before "
                                f"the horizon {last:g}. Choose a shorter `horizon`, fewer folds, or another seed.")
        if not np.any(e[train] & (t[train] <= first)):
            raise SettingsError(f"the training rows of {where} have no event by the horizon {first:g}, so every risk "
                                "within it would be 0. Choose a later `horizon`, fewer folds, or another seed.")


def _check_missing_folds(design, fold: np.ndarray, seed: int) -> None:
    """Every fold's training rows hold a missing value of each variable scored by its own missing
    item (``missing="item"``) that its held-out rows hold: else a SettingsError before any fit.  A
    fold fit without one has no such item, and its card then cannot score those held-out rows."""
    X = design.X if isinstance(design.X, np.ndarray) else None
    if X is None:
        return
    for j, rule in enumerate(design.spec.rules):
        if rule.kind != "missing":
            continue
        absent = X[:, j] == 1
        for k in range(int(fold.max()) + 1):
            held = int(np.sum(absent & (fold == k)))
            if held and not np.any(absent & (fold != k)):
                raise SettingsError(
                    f"the training rows of fold {k + 1} (seed {seed}) have no missing `{rule.variable}`: all "
                    f"{held} of its missing values are in that fold's held-out rows, so the fold's card would have "
                    f"no `{rule.variable} missing` item to score them (missing=\"item\" gives an item to a variable "
                    f"with missing values in the rows fitted). " + (
                        "Use fewer folds or another seed, or " if absent.sum() > 1 else
                        "With one missing value in the data, every split has such a fold: drop that row, or use ")
                    + f"missing={{{rule.variable!r}: \"as <value>\"}} for it.")


def _check_fit_args(fit_args: dict, taken: tuple[str, ...], folds: bool = True) -> None:
    import inspect

    # caught here, not as a TypeError inside every fold's fit
    known = [p for p in inspect.signature(risk_score).parameters if p not in ("formula", "data", "search")]
    unknown = [k for k in fit_args if k not in known and k not in CONTROL_FIELDS]
    if unknown:
        hint = did_you_mean(unknown[0], known + list(CONTROL_FIELDS))
        raise SettingsError(f"unknown fit argument `{unknown[0]}`.{hint} risk_score takes {', '.join(known)}, and the "
                            f"search settings {', '.join(CONTROL_FIELDS)} (rf.SearchControl).")
    for k in taken:
        if k in fit_args:
            raise SettingsError(f"`{k}` is set by this function; do not pass it in the fit arguments.")
    if folds and fit_args.get("weights") is not None and not isinstance(fit_args["weights"], str):
        raise SettingsError("`weights` must name a column of `data` here (e.g. weights='w') so every "
                            "fold takes its own rows' weights; an array cannot be split by fold.")


def _numbered(i: int, worker, args: tuple):
    """``(i, worker(*args))``: lets :func:`_run_folds` put unordered results back in task order."""
    return i, worker(*args)


def _run_folds(tasks: list, n_jobs: int, bar, worker=_fit_fold, prepare=None) -> list:
    """Every task's ``worker(*task)`` result (by default a fold's :func:`_fit_fold`) in task
    order, advancing ``bar`` as tasks finish.  In one process, ``prepare(i, task)`` (if given)
    gives the task to run just before it runs (its time limit, from what is left of the call's).

    Workers are joblib's loky processes: they import this package afresh and receive the task
    by (cloud)pickle, so a calling script needs no ``if __name__ == "__main__"`` guard and
    functions defined in a notebook can be sent. joblib also caps each worker's BLAS threads at
    ``cpu_count // n_jobs`` (the node LPs already run HiGHS on one thread), so the workers do not
    oversubscribe the cores.
    """
    if n_jobs == 1:
        results = []
        for i, t in enumerate(tasks):
            results.append(worker(*(t if prepare is None else prepare(i, t))))
            bar.update()
        return results
    from joblib import Parallel, delayed

    done = {}
    # unordered, so the bar moves when any task is done; the results are put back in task order
    # and every task is fitted from the same inputs, so they equal the one-process results
    run = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered",
                   max_nbytes=None)  # no memory-mapping: fold frames arrive as ordinary, writable copies
    for i, result in run(delayed(_numbered)(i, worker, t) for i, t in enumerate(tasks)):
        done[i] = result
        bar.update()
    return [done[i] for i in range(len(tasks))]


def _sendable(obj) -> bool:
    """Whether loky's pickler (cloudpickle: lambdas and notebook functions are fine) can send ``obj``."""
    from joblib.externals.loky.backend.reduction import dumps
    try:
        dumps(obj)
    except Exception:  # e.g. an open file or a database connection in `context`
        return False
    return True


def _fold_design(formula: str, data: pd.DataFrame, folds: int, fit_args: dict):
    """The design of ``data`` (its used rows and outcome), after checking the rows can be split
    into ``folds`` stratified folds that each hold both outcome classes (for a time-to-event
    formula: an event each)."""
    survival = _is_survival_fit(formula, fit_args)
    if survival and backend_for(data) is not None:
        raise NotApplicableError("cross-validating a time-to-event score on a dask frame is not supported: its "
                                 "fit compares every row with all rows still at risk at each event time, which "
                                 "the partition-by-partition collapse cannot do. Cross-validate on a pandas "
                                 "DataFrame (data.compute()).")
    if isinstance(data, pd.DataFrame) and not data.index.is_unique:
        raise DataError("`data` has a duplicated index, so fold rows cannot be selected by label; "
                        "call data.reset_index(drop=True) first.")
    design = build_design(formula, data, missing=fit_args.get("missing", "raise"),
                          event=fit_args.get("event"), context=fit_args.get("context"),
                          weights=fit_args.get("weights"), survival=survival)
    y = design.y
    if survival:
        events = int(np.sum(y == 1))
        if events < 2:
            raise DataError(f"the data are too small for cross-validation: they hold {events} event(s), and every "
                            "one of at least 2 folds needs one. Use more rows, or evaluate a fit on separate test "
                            "data.")
        if folds > events:
            raise SettingsError(f"`folds={folds}` is more than the {events} events; every fold needs one. Use "
                                f"folds <= {events}.")
        return design
    smaller = int(min(y.sum(), len(y) - y.sum()))
    if smaller < 2:
        # no number of folds works (folds must be >= 2): say so instead of suggesting folds <= 1
        raise DataError(f"the data are too small for cross-validation: the rarer outcome class has {smaller} "
                        "row(s), and every one of at least 2 folds needs both classes. Use more rows, or "
                        "evaluate a fit on separate test data.")
    if folds > smaller:
        raise SettingsError(f"`folds={folds}` is more than the {smaller} rows of the rarer outcome class; "
                            f"every fold needs both classes. Use folds <= {smaller}.")
    return design


def cross_validate(formula: str, data: pd.DataFrame, folds: int = 5, seed: int = 0,
                   n_jobs: int | None = None, progress: bool | None = None, total_time_limit: float | None = None,
                   **fit_args) -> CrossValidation:
    """Stratified K-fold cross-validation of :func:`risk_score`.

    Rows are assigned to folds by :func:`stratified_folds` (events and non-events spread
    evenly, reproducible for a ``seed``); each fold's model is fitted on the other folds and
    evaluated on it.

    Parameters
    ----------
    formula : str
        The formula, as for :func:`risk_score`.
    data : pandas.DataFrame
        The training rows, as for :func:`risk_score` (not modified).
    folds : int, default 5
        Number of folds, at least 2 and at most the number of events or non-events.
    seed : int, default 0
        Seed of the fold assignment.
    n_jobs : int, optional
        Worker processes (joblib's loky backend, safe in scripts without a
        ``__main__`` guard, notebooks and interactive sessions); None (default):
        ``min(folds, os.cpu_count())``. 1 fits in this process; negative values count back from
        the number of CPUs as in joblib (-1: all, -2: all but one). The results do not depend on it.
    progress : bool, optional
        Show a progress bar (tqdm, on stderr) that advances as folds finish. ``None``
        (default): only in interactive sessions (a terminal, IPython or Jupyter); ``True``:
        always; ``False``: never. The fold fits print no status lines of their own.
    total_time_limit : float, optional
        Seconds for the whole call (None, the default: no limit beyond each fit's). Each fold's fit
        gets the smaller of ``time_limit`` and its equal share of the time left (in one process:
        what is left divided by the folds still to fit; with worker processes: the time divided by
        the rounds of folds the workers run); a fit stops at its limit with its best model and its
        gap (see the ``status`` and ``gap`` columns). If the time is spent before a fold starts,
        a :class:`~riskformula.SearchLimitError`.
    **fit_args : dict
        Passed to :func:`risk_score` (``max_size``, ``coef_range``, ``time_limit``...):
        ``time_limit`` is the limit of each fold's fit.

    Returns
    -------
    CrossValidation
        Per-fold test AUC, CAL, loss and Brier score with mean ± sd, and the fold models; for a
        time-to-event formula ``Surv(time, event) ~ ...`` a
        :class:`~riskformula.reports.cross_validation.SurvivalCrossValidation`: folds stratified
        by event, each fold model's ``evaluate()`` on its held-out rows (Harrell's and Uno's C,
        the time-dependent AUC at the first horizon, the integrated Brier score) and its partial
        likelihood per held-out row. Without ``horizon`` every fold fit gets the default horizon
        of the fit on all rows, so all fold models are measured at the same time.

    Raises
    ------
    NotApplicableError
        A time-to-event formula on a dask frame (its fit needs every row at once).
    SettingsError
        For a time-to-event formula, when some fold's held-out rows do not reach past the last
        horizon or have no event by the first.

    Examples
    --------
    >>> cv = rf.cross_validate('diagnosis == "M" ~ radius_worst + texture_worst', df,
    ...                        folds=5, max_size=2, time_limit=10)  # doctest: +SKIP
    >>> cv.summary_frame().loc["auc", "mean"]  # doctest: +SKIP
    """
    folds = v.check_int("folds", folds, minimum=2, maximum=v.MAX_SIZE)
    seed = v.check_int("seed", seed, minimum=0)
    n_jobs = check_n_jobs(n_jobs, allow_none=True)
    progress = _progress.resolve(progress)
    _check_fit_args(fit_args, ())
    budget = _Budget(total_time_limit, fit_args, "cross_validate")
    design = _fold_design(formula, data, folds, fit_args)
    y = design.y
    fold = stratified_folds(y, folds, seed)
    _check_missing_folds(design, fold, seed)
    survival = _is_survival_fit(formula, fit_args)
    if survival:
        fit_args = _survival_fit_args(design, fit_args)
        _check_survival_folds(design, fold, fit_args["horizon"], seed)
    rows = design.index
    tasks = []
    for k in range(folds):
        tasks.append((k, formula, data.loc[rows[fold != k]], data.loc[rows[fold == k]], fit_args))

    notes: list[str] = []
    if n_jobs is None:
        n_jobs = min(folds, os.cpu_count() or 1)
    n_jobs = min(n_jobs, folds)
    if n_jobs > 1 and not _sendable(fit_args):
        n_jobs = 1
        notes.append("Folds were fitted one after another: the fit arguments (e.g. an open file in "
                     "`context`) cannot be sent to worker processes.")
    prepare = None
    if n_jobs > 1 and budget.end is not None:
        # the workers fit the folds in rounds of n_jobs at once: every fold gets a round's share
        share = budget.fit_args(fit_args, -(-folds // n_jobs))
        tasks = [t[:-1] + (share,) for t in tasks]
    elif budget.end is not None:
        def prepare(i, task):
            return task[:-1] + (budget.fit_args(task[-1], folds - i),)
    bar = _progress.bar(folds, "cross-validation", "fold", progress)
    try:
        results = _run_folds(tasks, n_jobs, bar, prepare=prepare)
    except SearchLimitError as e:
        raise budget.explained(e) from None
    finally:
        bar.close()

    table = pd.DataFrame([r[0] for r in results], columns=SURVIVAL_FOLD_COLUMNS if survival else FOLD_COLUMNS)
    models = [r[1] for r in results]
    for r in results:
        notes += r[2]
    unproven = table.loc[table["status"] != "optimal", "fold"].tolist()
    if unproven:
        msg = (f"fold(s) {unproven} stopped before proving optimality (see the gap column); raise "
               "`time_limit` for certified fold models.")
        notes.append(msg[0].upper() + msg[1:])
        warnings.warn(msg, OptimalityGapWarning, stacklevel=2)
    if survival:
        notes.insert(0, _SURVIVAL_FOLD_NOTE.format(horizon=f"{models[0].horizon:g}"))
    else:
        notes.insert(0, "Test metrics on each held-out fold; mean ± sd over folds (sd with ddof 1). AUC counts "
                        "tied scores as 1/2; CAL is the calibration error by score of Ustun & Rudin (2019); "
                        "loss is the mean log loss.")
    if design.dropped:
        notes.append(f"{design.dropped:,d} row(s) with missing values were dropped before the folds were made.")
    fold_of = pd.Series(fold + 1, index=rows, name="fold")
    if survival:
        return SurvivalCrossValidation(formula, table, models, fold_of, seed, dict(fit_args), tuple(notes),
                                       horizons=models[0].horizons)
    return CrossValidation(formula, table, models, fold_of, seed, dict(fit_args), tuple(notes))


#: what a time-to-event score's held-out metrics are
_SURVIVAL_FOLD_NOTE = (
    "Test metrics on each held-out fold (folds stratified by event), from the fold model's evaluate() on its "
    "held-out rows: Harrell's C (Harrell et al., 1982), Uno's C (Uno et al., 2011; events before the last "
    "horizon), the time-dependent AUC at t = {horizon}, the integrated Brier score (Graf et al., 1999; censoring "
    "weights from the held-out rows), and the negative log partial likelihood per held-out row (Cox, 1972; risk "
    "sets among the fold's own rows). Every fold model states its risks at the horizons of the fit on all rows. "
    "Mean ± sd over folds (sd with ddof 1).")


# --------------------------------------------------------------------------------------
# size path
# --------------------------------------------------------------------------------------


def _fit_size(formula, data, size, c0, initial, fit_args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)  # size_path reports them once
        # the caller's bar (if any) reports the sizes; a fit's own status lines would break it
        return risk_score(formula, data, max_size=size, c0=c0, initial=initial, progress=False, **fit_args)


def _check_sizes(sizes, fit_args: dict) -> list[int]:
    """``sizes`` as a sorted list of distinct whole numbers, none below ``fit_args``' ``min_size``."""
    try:
        sizes = sorted({v.check_int("sizes", s, minimum=0, maximum=v.MAX_SIZE) for s in sizes})
    except TypeError:
        raise SettingsError(f"`sizes` must be an iterable of whole numbers such as range(1, 6); "
                            f"got {sizes!r}.") from None
    if not sizes:
        raise SettingsError("`sizes` is empty; give at least one size, e.g. sizes=[3].")
    min_size = fit_args.get("min_size", 0)
    if isinstance(min_size, int) and min_size > sizes[0]:
        raise SettingsError(f"`min_size={min_size}` is larger than the smallest size {sizes[0]}; drop "
                            "the smaller sizes or lower `min_size`.")
    return sizes


def size_path(formula: str, data: pd.DataFrame, sizes=range(1, 11), *, c0: float = 1e-8,
              newdata: pd.DataFrame | None = None, warm_start: bool = True,
              progress: bool | None = None, total_time_limit: float | None = None, **fit_args) -> SizePath:
    """Fit the best risk score of each model size (the ℓ0 path of Ustun and Rudin 2019).

    Each size ``R`` is one :func:`risk_score` fit with ``max_size=R`` and a small ``c0``, so
    the fit is the most accurate score with at most ``R`` card items.

    Parameters
    ----------
    formula : str
        The formula, as for :func:`risk_score`.
    data : pandas.DataFrame
        The training rows, as for :func:`risk_score`.
    sizes : iterable of int, default range(1, 11)
        Size limits to fit, e.g. ``range(1, 6)``; fitted in increasing order.
    c0 : float, default 1e-8
        Penalty per term; tiny (as in Ustun and Rudin 2019) so it only breaks ties towards sparser
        scores.
    newdata : pandas.DataFrame, optional
        Report ``loss``, ``auc`` and ``cal`` on these rows instead of the training rows.
    warm_start : bool, default True
        Start each fit from the previous size's model (a valid score of the larger size too).
    progress : bool, optional
        Show a progress bar (tqdm, on stderr) that advances as sizes finish. ``None``
        (default): only in interactive sessions (a terminal, IPython or Jupyter); ``True``:
        always; ``False``: never. The fits print no status lines of their own.
    total_time_limit : float, optional
        Seconds for the whole path (None, the default: no limit beyond each fit's): each size's
        fit gets the smaller of ``time_limit`` and the time left divided by the sizes still to
        fit; a :class:`~riskformula.SearchLimitError` if the time is spent before a size starts.
    **fit_args : dict
        Passed to :func:`risk_score` (``coef_range``, ``time_limit``...; not ``max_size``):
        ``time_limit`` is the limit of each size's fit.

    Returns
    -------
    SizePath
        ``.table`` (size, items, loss, auc, cal, gap, status, objective, lower_bound, time,
        nodes) for :func:`riskformula.plots.plot_size_path`, and ``.models``.

    Examples
    --------
    >>> path = rf.size_path('diagnosis == "M" ~ .', df, sizes=range(1, 4), time_limit=10)  # doctest: +SKIP
    >>> fig = path.plot()  # doctest: +SKIP
    """
    _check_fit_args(fit_args, ("max_size", "initial"), folds=False)  # every fit on all rows: any weights
    progress = _progress.resolve(progress)
    sizes = _check_sizes(sizes, fit_args)
    budget = _Budget(total_time_limit, fit_args, "size_path")
    return _path(formula, data, sizes, c0, newdata, warm_start, progress, budget, fit_args)


def _path(formula, data, sizes: list, c0: float, newdata, warm_start: bool, progress, budget: _Budget,
          fit_args: dict) -> SizePath:
    """:func:`size_path` with its arguments checked, its fits timed by ``budget``."""
    rows, models = [], {}
    unproven: list[int] = []
    extra: list[str] = []
    previous = None
    bar = _progress.bar(len(sizes), "size path", "fit", progress)
    try:
        for i, size in enumerate(sizes):
            bar.set_postfix_str(f"size {size}")
            try:
                m = _fit_size(formula, data, size, c0, previous if warm_start else None,
                              budget.fit_args(fit_args, len(sizes) - i))
            except SearchLimitError as e:
                raise budget.explained(e) from None
            if _is_survival_model(m):
                rows.append(_survival_path_row(size, m, newdata))
                models[size] = m
                if m.status != "optimal":
                    unproven.append(size)
                previous = m
                bar.update()
                continue
            if newdata is None:
                t = m.training_metrics
                loss, auc, cal = m.loss, t["auc"], t["cal"]
            else:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", CalibrationWarning)
                    ev = m.evaluate(newdata)
                extra += [f"size {size}: {w.message}" for w in caught if issubclass(w.category, CalibrationWarning)]
                loss, auc, cal = ev.log_loss, (ev.auc.auc if ev.auc is not None else math.nan), ev.cal
            rows.append({"size": size, "items": m.size, "loss": loss, "auc": auc, "cal": cal, "gap": m.gap,
                         "status": m.status, "objective": m.objective, "lower_bound": m.lower_bound,
                         "time": m.solver.time, "nodes": m.solver.nodes, "scale": m.scale})
            models[size] = m
            if m.status != "optimal":
                unproven.append(size)
            previous = m
            bar.update()
    finally:
        bar.close()
    notes = [f"One fit per size limit with c0 = {c0:g}: each row is the lowest-loss score with at most "
             "`size` items; `items` is how many it uses."] + extra
    if unproven:
        msg = (f"size(s) {unproven} stopped before proving optimality; their loss may not be the "
               "minimum for that size (hollow points in plot_size_path). Raise `time_limit`.")
        notes.append(msg[0].upper() + msg[1:])
        warnings.warn(msg, OptimalityGapWarning, stacklevel=2)
    survival = bool(models) and _is_survival_model(next(iter(models.values())))
    if survival:
        notes[0] = notes[0].replace("lowest-loss score", "score of lowest partial likelihood loss")
        notes.append("loss = negative log partial likelihood per row (Cox, 1972), harrell_c = Harrell's C (Harrell "
                     "et al., 1982), on " + ("the training rows." if newdata is None else
                                             "`newdata` (risk sets among its own rows)."))
        return SurvivalSizePath(formula, pd.DataFrame(rows, columns=SURVIVAL_PATH_COLUMNS), models,
                                "training rows" if newdata is None else "newdata", tuple(notes))
    return SizePath(formula, pd.DataFrame(rows, columns=PATH_COLUMNS), models,
                    "training rows" if newdata is None else "newdata", tuple(notes))


def _survival_path_row(size: int, m, newdata) -> dict:
    """A time-to-event size's row: the partial likelihood loss and Harrell's C on the training rows
    or on ``newdata``."""
    if newdata is None:
        loss, c = m.loss, m.training_metrics["harrell_c"]
    else:
        obs = m.observed_survival(newdata)
        loss = partial_likelihood(m, newdata).loss
        c = harrell_c(obs["time"].to_numpy(float), obs["event"].to_numpy(int),
                      m.predict(newdata, which="score").to_numpy(float))
    return {"size": size, "items": m.size, "loss": loss, "harrell_c": c, "gap": m.gap, "status": m.status,
            "objective": m.objective, "lower_bound": m.lower_bound, "time": m.solver.time, "nodes": m.solver.nodes,
            "scale": m.scale}


# --------------------------------------------------------------------------------------
# size chosen by cross-validation
# --------------------------------------------------------------------------------------


def _fit_fold_path(repeat: int, fold: int, formula: str, train: pd.DataFrame, test: pd.DataFrame,
                   sizes: list[int], c0: float, fit_args: dict, seconds: float | None = None) -> list[dict]:
    """The size path on ``train`` (in at most ``seconds``, None: no limit beyond each fit's), every
    size's model evaluated on ``test``: one row per size.

    Top-level so worker processes can run it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)  # cv_risk_score counts them from the statuses
        # a share of a call's time: spent, the sizes left stop at once with their best model (the call
        # stops before its next fold path instead)
        path = _path(formula, train, sizes, c0, None, True, False,
                     _Budget(seconds, fit_args, "cv_risk_score", strict=False), fit_args)
    rows = []
    for size, m in path.models.items():
        if _is_survival_model(m):
            r = _survival_fold_row(fold, m, m.evaluate(test), partial_likelihood(m, test))
            rows.append({**{k: r[k] for k in ("fold", "n_train", "n_test", "test_events", "harrell_c", "uno_c", "auc",
                                              "integrated_brier", "loss", "train_loss", "objective", "gap", "status",
                                              "time")},
                         "repeat": repeat, "size": size, "items": m.size})
            continue
        with warnings.catch_warnings():
            # they concern the Hosmer–Lemeshow test and the calibration slope, which SizeCV does not report
            warnings.simplefilter("ignore", CalibrationWarning)
            ev = m.evaluate(test)
        rows.append({"repeat": repeat, "fold": fold, "size": size, "items": m.size, "n_train": m.nobs,
                     "n_test": ev.n, "test_events": ev.events,
                     "auc": ev.auc.auc if ev.auc is not None else math.nan, "loss": ev.log_loss, "cal": ev.cal,
                     "brier": ev.brier, "train_loss": m.loss, "objective": m.objective, "gap": m.gap,
                     "status": m.status, "time": m.solver.time})
    return rows


def _size_curve(folds: pd.DataFrame, metric: str, survival: bool = False) -> pd.DataFrame:
    """The cross-validation curve of a per fold × size table: one row per size (CURVE_COLUMNS, or
    SURVIVAL_CURVE_COLUMNS for a time-to-event score's)."""
    g = folds.groupby("size", sort=True)
    fits = g[metric].count()
    if survival:
        curve = pd.DataFrame({"mean": g[metric].mean(), "se": g[metric].std(ddof=1) / np.sqrt(fits),
                              **{c: g[c].mean() for c in ("harrell_c", "uno_c", "auc", "loss", "integrated_brier",
                                                          "train_loss")},
                              "certified": g["status"].agg(lambda s: int((s == "optimal").sum())),
                              "fits": g.size(), "items": g["items"].mean()})
        return curve.rename_axis("size").reset_index()[SURVIVAL_CURVE_COLUMNS]
    curve = pd.DataFrame({"mean": g[metric].mean(), "se": g[metric].std(ddof=1) / np.sqrt(fits),
                          "auc": g["auc"].mean(), "loss": g["loss"].mean(), "cal": g["cal"].mean(),
                          "train_loss": g["train_loss"].mean(),
                          "certified": g["status"].agg(lambda s: int((s == "optimal").sum())),
                          "fits": g.size(), "items": g["items"].mean()})
    return curve.rename_axis("size").reset_index()[CURVE_COLUMNS]


def _choose_size(sizes, mean, se, metric: str, metrics: dict = METRICS) -> tuple[int, int]:
    """``(size_min, size_1se)`` of a cross-validation curve.

    ``size_min`` has the best mean (the smallest such size when several tie); ``size_1se`` is the
    smallest size whose mean is within one standard error of the best mean, the SE being that of
    the best size (the rule of ``cv.glmnet``). AUC (``metric="auc"``) is better higher, log loss
    (``"loss"``) lower. Sizes with a NaN mean are never chosen; a NaN SE counts as 0.
    """
    sizes, mean, se = np.asarray(sizes), np.asarray(mean, dtype=float), np.asarray(se, dtype=float)
    order = np.argsort(sizes, kind="stable")
    sizes, mean, se = sizes[order], mean[order], se[order]
    finite = np.isfinite(mean)
    if not finite.any():
        raise DataError(f"no size has a finite mean {metrics[metric][0]}, so none can be chosen.")
    # as "higher is better" for both metrics
    gain = np.where(finite, mean if metrics[metric][1] else -mean, -np.inf)
    best = int(np.argmax(gain))  # the first, i.e. smallest, of tied best sizes
    margin = se[best] if np.isfinite(se[best]) else 0.0
    # a hair of slack, so a mean equal to the bound up to rounding counts as within it
    within = gain >= gain[best] - margin - 1e-12 * max(1.0, abs(gain[best]))
    return int(sizes[best]), int(sizes[np.flatnonzero(within)[0]])


def _raise_limits(statuses) -> str:
    """Advice for fits that stopped with these statuses: raise the limits that stopped them."""
    hit = [f"`{s}`" for s in ("time_limit", "node_limit") if s in set(statuses)]
    return f" Raise {' and '.join(hit)} for certified fits." if hit else ""


def cv_risk_score(formula: str, data: pd.DataFrame, sizes=range(1, 11), *, folds: int = 5, seed: int = 0,
                  repeats: int = 1, rule: str = "1se", metric: str | None = None, c0: float = 1e-8,
                  n_jobs: int | None = 1, progress: bool | None = None, total_time_limit: float | None = None,
                  **fit_args) -> SizeCV:
    """Fit a risk score whose size is chosen by cross-validation (as R's ``cv.glmnet``).

    On each of ``folds`` stratified folds (:func:`stratified_folds`), the best score of every size
    limit is fitted on the other folds (:func:`size_path`: one fit per size, each warm-started from
    the previous size's model, with a small ``c0``) and evaluated on the held-out fold. The mean
    held-out metric over the folds (and repeats) gives a curve over sizes; ``rule`` chooses a size
    from it, and the score is refitted on all rows with ``max_size`` set to that size.

    Parameters
    ----------
    formula : str
        The formula, as for :func:`risk_score`.
    data : pandas.DataFrame
        The training rows, as for :func:`risk_score` (not modified).
    sizes : iterable of int, default range(1, 11)
        Size limits (``max_size``) to compare, e.g. ``range(1, 6)``.
    folds : int, default 5
        Number of folds, at least 2 and at most the number of events or non-events.
    seed : int, default 0
        Seed of the fold assignment; repeat ``r`` (0, 1, ...) uses ``seed + r``.
    repeats : int, default 1
        How many times to repeat the K-fold split with new folds (at least 1); the curve
        averages over all ``folds × repeats`` fold fits. The fits of different repeats share rows,
        so the SE is then somewhat optimistic.
    rule : {"1se", "min"}, default "1se"
        ``"1se"``: the smallest size whose mean metric is within one standard
        error of the best mean, SE = sd over the ``folds × repeats`` fold results (ddof 1) / √their
        number, taken at the best size; ``"min"``: the size with the best mean (the smallest one
        on ties).
    metric : {"auc", "loss", "harrell_c", "uno_c"}, optional
        ``"auc"``: held-out AUC, higher is better; ``"loss"``: held-out mean log loss, lower is
        better. None (default): ``"auc"``. For a time-to-event formula ``Surv(time, event) ~ ...``
        (folds stratified by event, every fit at the horizons of the fit on all rows):
        ``"harrell_c"`` (the default), ``"uno_c"``, ``"auc"`` (the time-dependent AUC at the first
        horizon), all higher is better, or ``"loss"``, the negative log partial likelihood per
        held-out row (risk sets among the fold's rows), lower is better. Harrell's C is the default
        as AUC is for a binary score: the held-out discrimination a card is read for, in the units
        users compare cards in; the partial likelihood also weighs the score scale (how much risk a
        point adds), and is the choice of ``cv.glmnet`` for a Cox model.
    c0 : float, default 1e-8
        Penalty per term of every fit, the refit included; tiny (as in :func:`size_path`) so it
        only breaks ties towards sparser scores.
    n_jobs : int or None, default 1
        Worker processes that fit folds in parallel (joblib's loky backend, as in
        :func:`cross_validate`); 1 fits in this process, ``None`` uses
        ``min(folds × repeats, os.cpu_count())``, negative values count back from the number of
        CPUs (-1: all). The results do not depend on it.
    progress : bool, optional
        Show a progress bar (tqdm, on stderr) that advances as fold paths and the refit finish. ``None``
        (default): only in interactive sessions; ``True``: always; ``False``: never.
    total_time_limit : float, optional
        Seconds for the whole call, refit included (None, the default: no limit beyond each
        fit's). Every fit gets the smaller of ``time_limit`` and its equal share of the time left
        (in one process: what is left divided by the fits still to run; with worker processes:
        the time divided by the rounds of fold paths the workers run, plus the refit); a fit
        stops at its limit with its best model and its gap (counted in the ``certified``
        column). If the time is spent before a fit starts, a :class:`~riskformula.SearchLimitError`.
    **fit_args : dict
        Passed to every :func:`risk_score` fit (``coef_range``, ``time_limit``,
        ``weights`` as a column name...; not ``max_size`` or ``initial``, which this function
        sets). ``time_limit`` applies to each fit: one per size, fold and repeat, plus the refit;
        ``total_time_limit`` bounds them all.

    Returns
    -------
    SizeCV
        ``.table`` (the curve: mean metric and SE, mean held-out AUC, log loss and CAL, mean
        training loss, certified fold fits and mean items per size), ``.folds`` (per repeat ×
        fold × size), ``.size_min``, ``.size_1se``, ``.size`` (chosen), ``.rule``, ``.metric``
        and ``.model``, the refitted :class:`RiskScore`. ``.plot()`` draws the curve.

    Examples
    --------
    >>> cv = rf.cv_risk_score('diagnosis == "M" ~ .', df, sizes=range(1, 6),
    ...                       time_limit=10)  # doctest: +SKIP
    >>> cv.size, cv.size_min  # doctest: +SKIP
    >>> print(cv.model.summary())  # doctest: +SKIP
    >>> fig = cv.plot()  # doctest: +SKIP
    """
    folds = v.check_int("folds", folds, minimum=2, maximum=v.MAX_SIZE)
    seed = v.check_int("seed", seed, minimum=0)
    repeats = v.check_int("repeats", repeats, minimum=1, maximum=10_000)
    if not isinstance(rule, str) or rule not in RULES:
        raise SettingsError(f"`rule` must be '1se' (the smallest size within one standard error of the best "
                            f"mean) or 'min' (the size with the best mean); got {rule!r}.")
    survival = _is_survival_fit(formula, fit_args)
    metrics = SURVIVAL_METRICS if survival else METRICS
    if metric is None:
        metric = "harrell_c" if survival else "auc"
    if survival and (not isinstance(metric, str) or metric not in metrics):
        raise SettingsError(f"`metric` of a time-to-event score must be 'harrell_c' (held-out Harrell's C, the "
                            "default), 'uno_c' (Uno's C), 'auc' (the time-dependent AUC at the first horizon), all "
                            "higher is better, or 'loss' (held-out partial likelihood per row, lower is better); got "
                            f"{metric!r}.")
    if not isinstance(metric, str) or metric not in metrics:
        hint = " (Harrell's and Uno's C are a time-to-event score's)" if metric in SURVIVAL_METRICS else ""
        raise SettingsError(f"`metric` must be 'auc' (held-out AUC, higher is better) or 'loss' (held-out "
                            f"mean log loss, lower is better); got {metric!r}{hint}.")
    c0 = v.check_positive("c0", c0, allow_zero=True, maximum=v.MAX_C0)
    n_jobs = check_n_jobs(n_jobs, allow_none=True)
    progress = _progress.resolve(progress)
    _check_fit_args(fit_args, ("max_size", "initial"))
    sizes = _check_sizes(sizes, fit_args)
    budget = _Budget(total_time_limit, fit_args, "cv_risk_score")
    design = _fold_design(formula, data, folds, fit_args)
    if survival:
        fit_args = _survival_fit_args(design, fit_args)
    rows = design.index
    tasks: list[tuple] = []
    for r in range(repeats):
        fold = stratified_folds(design.y, folds, seed + r)
        _check_missing_folds(design, fold, seed + r)
        if survival:
            _check_survival_folds(design, fold, fit_args["horizon"], seed + r)
        for k in range(folds):
            tasks.append((r + 1, k + 1, formula, data.loc[rows[fold != k]], data.loc[rows[fold == k]],
                          sizes, c0, fit_args))

    notes: list[str] = []
    if n_jobs is None:
        n_jobs = min(len(tasks), os.cpu_count() or 1)
    n_jobs = min(n_jobs, len(tasks))
    if n_jobs > 1 and not _sendable(fit_args):
        n_jobs = 1
        notes.append("Folds were fitted one after another: the fit arguments (e.g. an open file in "
                     "`context`) cannot be sent to worker processes.")
    n_fits = len(sizes)
    prepare = None
    if n_jobs > 1 and budget.end is not None:
        # the workers run the fold paths in rounds of n_jobs at once; then the refit
        seconds = budget.seconds(-(-len(tasks) // n_jobs) * n_fits + 1, n_fits)
        tasks = [t + (seconds,) for t in tasks]
    elif budget.end is not None:
        def prepare(i, task):
            return task + (budget.seconds((len(tasks) - i) * n_fits + 1, n_fits),)
    bar = _progress.bar(len(tasks) + 1, "cross-validated size", "fit", progress)
    try:
        results = _run_folds(tasks, n_jobs, bar, worker=_fit_fold_path, prepare=prepare)
        table = pd.DataFrame([row for rs in results for row in rs],
                             columns=SURVIVAL_FOLD_SIZE_COLUMNS if survival else FOLD_SIZE_COLUMNS)
        curve = _size_curve(table, metric, survival)
        size_min, size_1se = _choose_size(curve["size"], curve["mean"], curve["se"], metric, metrics)
        size = size_1se if rule == "1se" else size_min
        bar.set_postfix_str(f"refit at size {size}")
        # the refit's own OptimalityGapWarning, if any, reaches the caller: it is the model returned
        # the refit is the model returned: past the total, it still runs (briefly), with its honest gap
        budget.strict = False
        model = risk_score(formula, data, max_size=size, c0=c0, progress=False, **budget.fit_args(fit_args, 1))
        bar.update()
    except SearchLimitError as e:
        raise budget.explained(e) from None
    finally:
        bar.close()

    n = len(tasks)
    notes.insert(0, f"Held-out metrics of the best score of each size limit, fitted on the other folds "
                    f"(c0 = {c0:g}, each size warm-started from the previous one), on each of {folds} folds"
                    + (f" in each of {repeats} repeats" if repeats > 1 else "")
                    + f"; mean over the {n} fold fits, SE = sd (ddof 1) / √{n}. `size` is the limit "
                    "(max_size); `items` the mean number of card items the fold models use. "
                    + (f"Folds stratified by event; every fit at the horizons of the fit on all rows. Each fold "
                       f"model's evaluate() on its held-out rows gives Harrell's C, Uno's C (events before the last "
                       f"horizon), the time-dependent AUC at t = {model.horizon:g} and the integrated Brier score "
                       "(IBS); PL loss is its negative log partial likelihood per held-out row (risk sets among the "
                       "fold's rows)." if survival else
                       "AUC counts tied scores as 1/2; CAL is the calibration error by score of Ustun & Rudin (2019)."))
    if repeats > 1:
        notes.append("Repeats reuse the same rows, so their fold results are not independent and the SE "
                     "understates the uncertainty of each mean somewhat.")
    unproven = table[table["status"] != "optimal"]
    if len(unproven):
        at = sorted(set(unproven["size"].tolist()))
        msg = (f"{len(unproven)} of {len(table)} fold fits stopped before proving optimality (size limit(s) "
               f"{at}; see the `certified` column): their held-out metrics are those of the best score "
               f"found, which may not be the best of its size.{_raise_limits(unproven['status'])}")
        notes.append(msg)
        warnings.warn(msg, OptimalityGapWarning, stacklevel=2)
    if model.status != "optimal":
        gap = fmt_gap(model.gap, model.settings.gap_tolerance)
        notes.append(f"The refit model stopped at the {model.status.replace('_', ' ')} before proving "
                     f"optimality (gap {gap}).{_raise_limits([model.status])}")
    if design.dropped:
        notes.append(f"{design.dropped:,d} row(s) with missing values were dropped before the folds were made.")
    if survival:
        return SurvivalSizeCV(formula, curve, table, size_min, size_1se, size, rule, metric, model, folds, repeats,
                              seed, c0, dict(fit_args), tuple(notes), horizons=model.horizons)
    return SizeCV(formula, curve, table, size_min, size_1se, size, rule, metric, model, folds, repeats, seed,
                  c0, dict(fit_args), tuple(notes))
