"""Plots of a fitted time-to-event score on data (``rf.plots``): Kaplan–Meier curves by score
band and calibration within a horizon; matplotlib (``pip install riskformula[plot]``) is imported
only when a plot is drawn."""

from __future__ import annotations

import numpy as np

from ..errors import SettingsError
from ..reports.score_bands import score_bands
from ..reports.survival_evaluation import SurvivalEvaluation
from ..reports.survival_plots import plot_km_by_group, plot_survival_calibration as _plot_calibration
from .model import SurvivalScore

__all__ = ["plot_km_by_score", "plot_survival_calibration"]


def _survival_model(model, what: str) -> SurvivalScore:
    if not isinstance(model, SurvivalScore):
        raise SettingsError(f"{what} draws a time-to-event score (fitted with a Surv(time, event) formula); got "
                            f"{type(model).__name__}.")
    return model


def plot_km_by_score(model, data, *, bands=3, horizon=None, ax=None):
    """Kaplan–Meier curves of the rows of ``data`` by band of the score ``model`` gives them.

    Parameters
    ----------
    model : SurvivalScore
        A fitted time-to-event score.
    data : pandas.DataFrame
        Rows with the card's variables and the follow-up time and event columns (held-out rows
        show how well the bands separate on new data).
    bands : int or sequence of numbers, default 3
        The score bands: a number of bands near the score's quantiles, or increasing cut-offs (see
        :func:`~riskformula.reports.score_bands.score_bands`).
    horizon : float, optional
        A dashed line at this time; None: at the card's first horizon.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes; None (default): on a new figure not attached to pyplot.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on.
    """
    m = _survival_model(model, "plot_km_by_score")
    obs = m.observed_survival(data)
    groups = score_bands(m.score(data).to_numpy(), bands)
    return plot_km_by_group(obs["time"].to_numpy(), obs["event"].to_numpy(), groups, ax=ax,
                            horizon=m.horizon if horizon is None else horizon)


def plot_survival_calibration(model_or_evaluation, data=None, *, horizon=None, ax=None):
    """Predicted risk within a horizon against the Kaplan–Meier risk observed by score band, with
    Greenwood 95% intervals.

    Parameters
    ----------
    model_or_evaluation : SurvivalScore or SurvivalEvaluation
        A fitted time-to-event score (evaluated on ``data``) or its evaluation (``m.evaluate(data)``).
    data : pandas.DataFrame, optional
        The rows; required with a model, not allowed with an evaluation.
    horizon : float, optional
        The horizon; None: the first of the evaluation's (the card's first).
    ax : matplotlib.axes.Axes, optional
        Draw on these axes; None (default): on a new figure not attached to pyplot.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on.
    """
    if isinstance(model_or_evaluation, SurvivalEvaluation):
        if data is not None:
            raise SettingsError("`data` is for a model; an evaluation already holds its rows' results.")
        ev = model_or_evaluation
    else:
        m = _survival_model(model_or_evaluation, "plot_survival_calibration")
        if data is None:
            raise SettingsError("plot_survival_calibration(model, data) needs the rows to evaluate the model on.")
        ev = m.evaluate(data, horizon=None if horizon is None else [horizon])
    h = ev.horizons[0] if horizon is None else float(horizon)
    if not np.any(np.isclose(ev.horizons, h)):
        raise SettingsError(f"the evaluation has the horizons {list(ev.horizons)}; got horizon={horizon!r}.")
    return _plot_calibration(ev.calibration_at(h), ax=ax)
