"""``fairness_path``: one certified fit per fairness bound — the price of fairness, bound by bound."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd

from . import _progress
from .errors import CalibrationWarning, OptimalityGapWarning, SettingsError
from .fairness.notions import (GroupParity, conditional_statistical_parity, equal_opportunity, equalized_odds,
                               predictive_equality, statistical_parity)

__all__ = ["fairness_path", "NOTIONS"]

#: notion name -> constructor
NOTIONS: dict[str, Callable[..., GroupParity]] = {
    "statistical_parity": statistical_parity, "conditional_statistical_parity": conditional_statistical_parity,
    "predictive_equality": predictive_equality, "equal_opportunity": equal_opportunity,
    "equalized_odds": equalized_odds}


def fairness_path(formula: str, data: pd.DataFrame, *, notion: str = "statistical_parity", by,
                  max_diff=(0.2, 0.1, 0.05, 0.02, 0.01), newdata: pd.DataFrame | None = None,
                  at_risk: float | None = None, at_score: float | None = None, given: str | None = None,
                  reference=None, side: str = "both", warm_start: bool = True, progress: bool | None = None,
                  **fit_args):
    """Fit the best risk score under each bound of a fairness notion (and without it).

    Parameters
    ----------
    formula : str
        The formula, as for :func:`riskformula.risk_score`.
    data : pandas.DataFrame
        The training rows, as for :func:`riskformula.risk_score`.
    notion : str, default "statistical_parity"
        ``"statistical_parity"``, ``"conditional_statistical_parity"`` (needs ``given``),
        ``"predictive_equality"``, ``"equal_opportunity"`` or ``"equalized_odds"``.
    by : str or list of str
        The protected attribute's column (or a list of columns).
    max_diff : iterable of float, default (0.2, 0.1, 0.05, 0.02, 0.01)
        The bounds to fit, numbers from 0 to 1, fitted from the loosest to the tightest; the
        unconstrained score is fitted too.
    newdata : pandas.DataFrame, optional
        Rows to measure test AUC and disparity on (e.g. a held-out split); the training
        disparity is always reported.
    at_risk : float, optional
        As for :func:`riskformula.statistical_parity`.
    at_score : float, optional
        As for :func:`riskformula.statistical_parity`.
    given : str, optional
        As for :func:`riskformula.conditional_statistical_parity` (that notion only).
    reference : object, optional
        As for :func:`riskformula.statistical_parity`.
    side : str, default "both"
        As for :func:`riskformula.statistical_parity`.
    warm_start : bool, default True
        Start each fit from the previous (looser) bound's model; it is used only when it
        meets the tighter bound.
    progress : bool, optional
        A progress bar over the fits (``None``: in interactive sessions only).
    **fit_args : dict
        Passed to :func:`riskformula.risk_score` (``max_size``, ``time_limit``, ...; not
        ``initial``, which this function chooses).

    Returns
    -------
    FairnessPath
        ``.table``: one row per bound (``max_diff`` NaN for the unconstrained fit) with the training
        loss, objective, lower bound, gap, status, time, training disparity and, with ``newdata``,
        test AUC and disparity; ``lower_bound``/``gap`` also use the unconstrained fit's certified
        bound (valid for every bound), ``fit_gap`` is each fit's own; ``.models``; ``.plot()``
        draws the frontier.

    Examples
    --------
    >>> path = rf.fairness_path("y ~ .", df, notion="equal_opportunity", by="sex",
    ...                         max_diff=[0.1, 0.05], time_limit=30)  # doctest: +SKIP
    """
    from .fit import risk_score
    from .reports.fairness_path import PATH_COLUMNS, FairnessPath
    if notion not in NOTIONS:
        raise SettingsError(f"`notion` must be one of {sorted(NOTIONS)}; got {notion!r}.")
    for k in ("constraints", "initial"):
        if k in fit_args and k == "initial":
            raise SettingsError("`fairness_path` chooses each fit's start itself; drop `initial`.")
    try:
        bounds = sorted({float(b) for b in max_diff}, reverse=True)
    except TypeError:
        raise SettingsError(f"`max_diff` must be a list of bounds such as [0.1, 0.05]; got {max_diff!r}.") from None
    if not bounds or not all(isinstance(b, numbers.Real) and 0 <= b <= 1 for b in bounds):
        raise SettingsError(f"`max_diff` must hold numbers from 0 to 1; got {max_diff!r}.")
    extra = list(fit_args.pop("constraints", None) or [])
    make = NOTIONS[notion]
    kw = dict(at_risk=at_risk, at_score=at_score, reference=reference, side=side)
    if notion == "conditional_statistical_parity":
        kw["given"] = given
    constraints = {b: make(by, max_diff=b, **kw) for b in bounds}
    # the same notion without a bound measures the disparity of every fit
    probe = make(by, max_diff=1.0, **kw)
    progress = _progress.resolve(progress)
    rows: list[dict[str, Any]] = []
    models, unproven, notes = {}, [], []
    previous = None
    floor = -math.inf
    bar = _progress.bar(len(bounds) + 1, "fairness path", "fit", progress)
    try:
        for b in [math.nan] + bounds:
            cons = extra + ([] if b != b else [constraints[b]])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", OptimalityGapWarning)
                # the warm start is this function's own choice, not the user's `initial`: a looser
                # bound's model that breaks this bound is left out without a word, as documented
                warnings.filterwarnings("ignore", r"the starting model .* given as `initial` is not used",
                                        UserWarning)
                m = risk_score(formula, data, constraints=cons or None,
                               initial=previous if warm_start else None, **fit_args)
            train = probe.assess(m, _training_rows(m, data))[0]["value"]
            # a bound only shrinks the feasible set: the unconstrained fit's certified lower bound
            # (over every intercept, as its range provably holds an optimal one) bounds every fit
            if not rows:
                floor = m.lower_bound
            lb = max(m.lower_bound, floor)
            path_gap = 0.0 if lb >= m.objective else (m.objective - lb) / max(abs(m.objective), 1e-12)
            row = {"max_diff": b, "loss": m.loss, "objective": m.objective, "lower_bound": lb,
                   "gap": path_gap, "fit_gap": m.gap, "status": m.status, "time": m.solver.time,
                   "nodes": m.solver.nodes,
                   "train_disparity": train, "train_auc": m.training_metrics["auc"],
                   "test_auc": math.nan, "test_disparity": math.nan}
            if newdata is not None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", CalibrationWarning)
                    ev = m.evaluate(newdata)
                row["test_auc"] = ev.auc.auc if ev.auc is not None else math.nan
                row["test_disparity"] = probe.assess(m, newdata)[0]["value"]
            rows.append(row)
            models[b] = m
            if m.status != "optimal":
                unproven.append("unconstrained" if b != b else f"{b:g}")
            previous = m
            bar.update()
    finally:
        bar.close()
    what = probe.describe().replace(", max_diff=1", "")
    notes.append(f"Disparity: the largest difference of {what} between groups (max − min); the bound holds "
                 "exactly on the training rows, and only approximately on new rows.")
    notes.append("lower_bound and gap use the larger of each fit's own certified bound and the unconstrained fit's "
                 "(a fairness bound only removes models); fit_gap is the fit's own.")
    if unproven:
        msg = (f"fit(s) at max_diff {unproven} stopped before proving optimality; their loss may not be the "
               "minimum under that bound (the gap column says by how much at most). Raise `time_limit`.")
        notes.append(msg[0].upper() + msg[1:])
        warnings.warn(msg, OptimalityGapWarning, stacklevel=2)
    title, quantity = _words(probe)
    return FairnessPath(formula, what, pd.DataFrame(rows, columns=PATH_COLUMNS), models,
                        newdata is not None, tuple(notes), title=title, quantity=quantity)


def _words(probe) -> tuple[str, str]:
    """A plot's title and the bounded quantity in words, from the notion's constraint: ``("Equal
    opportunity by sex, positive at risk ≥ 30%", "true positive rate")``."""
    from .fairness.groups import NOTION_STRATA, RATE_NAMES
    name = probe.notion.replace("_", " ")
    by = ", ".join(map(str, probe.by))
    rates = list(dict.fromkeys(RATE_NAMES[k] for k in NOTION_STRATA[probe.notion]))
    quantity = " and ".join(rates)
    if probe.given is not None:
        quantity += f" within levels of {probe.given}"
    title = f"{name[0].upper()}{name[1:]} by {by}, positive at {probe.rule}"
    if probe.given is not None:
        title += f", given {probe.given}"
    if probe.reference is not None:
        title += f", compared with {probe.reference}"
    if probe.side != "both":
        title += f", one-sided ({probe.side})"
    return title, quantity


def _training_rows(model, data: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``data`` the model was fitted on (without rows dropped for missing values)."""
    if not model.rows_dropped:
        return data
    used = [v for v in model.design.variables if v in data.columns]
    return data.loc[~data[used].isna().any(axis=1).to_numpy()]
