"""Plots of a time-to-event risk score (matplotlib, an optional dependency: ``pip install
riskformula[plot]``, imported only when a plot is drawn).

As in :mod:`riskformula.reports.plots`, every function draws on ``ax`` when given, otherwise on a
new :class:`matplotlib.figure.Figure` that is not attached to pyplot (nothing is shown and no global
state is touched), and returns the figure. Save it with ``fig.savefig(path)``.

* :func:`plot_km_by_group` — Kaplan–Meier (1958) curves by score band (or any grouping);
* :func:`plot_survival_calibration` — predicted against Kaplan–Meier observed risk within a horizon,
  per group, with the Greenwood intervals of :meth:`CalibrationTable.ci`.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError, SettingsError
from ._axes import new_axes as _new_axes
from .score_bands import ScoreBands
from .survival_metrics import CalibrationTable, kaplan_meier

__all__ = ["plot_km_by_group", "plot_survival_calibration"]

_DIAGONAL, _POINTS = "grey", "#2c7fb8"


def _colours(k: int) -> list:
    """``k`` colours from blue (the lowest band) through purple to red (the highest), each dark
    enough to read on white."""
    from matplotlib.colors import LinearSegmentedColormap

    cmap = LinearSegmentedColormap.from_list("bands", ["#2c7fb8", "#7b3294", "#c0392b"])
    return [cmap(0.0)] if k == 1 else [cmap(j / (k - 1)) for j in range(k)]


def _check_survival(time, event) -> tuple[np.ndarray, np.ndarray]:
    try:
        t = np.asarray(time, dtype=float).reshape(-1)
        e = np.asarray(event, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise DataError("`time` and `event` must be numbers, one per row.") from None
    if len(t) != len(e):
        raise DataError(f"`time` has {len(t)} values and `event` {len(e)}; give one of each per row.")
    if not len(t):
        raise DataError("no rows to plot.")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise DataError("every `time` must be a finite number ≥ 0.")
    if not np.all((e == 0) | (e == 1)):
        raise DataError("`event` must hold 0 (censored) and 1 (event) only.")
    return t, e.astype(bool)


def _group_labels(group, n: int, labels) -> tuple[np.ndarray, list, list[str]]:
    """Each row's group, the groups in order, and each group's legend text."""
    if isinstance(group, ScoreBands):
        codes = np.asarray(group.codes)
        if len(codes) != n:
            raise DataError(f"the score bands were made from {len(codes)} rows, not these {n}; pass "
                            "`bands.assign(score)` for other rows (with `labels=bands.labels`).")
        order = [j for j in range(len(group)) if np.any(codes == j)]
        shown = [f"score {group.labels[j]}" for j in order]
        values = codes
    else:
        values = np.asarray(group).reshape(-1)
        if len(values) != n:
            raise DataError(f"`group` has {len(values)} values for {n} rows; give each row's group (e.g. its score "
                            "band, from score_bands(score).codes).")
        try:
            order = list(np.unique(values))
        except TypeError:
            raise DataError("`group` must hold values that can be sorted (numbers or text).") from None
        shown = [str(g) for g in order]
    if labels is not None:
        if isinstance(labels, dict):
            shown = [str(labels.get(g, s)) for g, s in zip(order, shown)]
        else:
            texts = [str(x) for x in labels]
            if isinstance(group, ScoreBands) and len(texts) == len(group):
                texts = [texts[j] for j in order]
            if len(texts) != len(order):
                raise SettingsError(f"`labels` has {len(texts)} entries for {len(order)} groups; give one per group "
                                    "(in sorted order) or a dict from group to label.")
            shown = texts
    return values, order, shown


def plot_km_by_group(time, event, group, *, ax=None, labels=None, horizon=None):
    """Kaplan–Meier curves, one per group (e.g. per score band), with each group's rows and events in
    the legend.

    Each curve is the Kaplan–Meier estimate of its group's rows, a step down at each event time,
    drawn up to the group's last follow-up time; a censored time is marked by a small tick.

    Parameters
    ----------
    time, event : array-like
        Each row's follow-up time and whether it ended in the event (1) or censoring (0).
    group : array-like or ScoreBands
        Each row's group: a :class:`~riskformula.reports.score_bands.ScoreBands` of these rows (from
        :func:`~riskformula.reports.score_bands.score_bands`: one curve per band, labelled with its
        scores), or any values (one curve per distinct value, in sorted order).
    ax : matplotlib.axes.Axes, optional
        Draw on these axes; None (default): on a new figure not attached to pyplot.
    labels : sequence of str or dict, optional
        The legend's name of each group: one per group in order, or a dict from group value to name.
    horizon : float, optional
        Draw a dashed vertical line at this time (the horizon of the risk the card predicts).

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (the axes' figure when ``ax`` is given).
    """
    t, e = _check_survival(time, event)
    values, order, shown = _group_labels(group, len(t), labels)
    if horizon is not None:
        try:
            horizon = float(horizon)
        except (TypeError, ValueError):
            raise SettingsError(f"`horizon` must be a time; got {horizon!r}.") from None
        if not np.isfinite(horizon) or horizon < 0:
            raise SettingsError(f"`horizon` must be a finite time ≥ 0; got {horizon!r}.")
    fig, ax = _new_axes(ax, figsize=(6.0, 4.5))
    for g, name, colour in zip(order, shown, _colours(len(order))):
        rows = values == g
        tg, eg = t[rows], e[rows]
        steps, surv = kaplan_meier(tg, eg)
        x = np.concatenate([[0.0], steps, [tg.max()]])
        y = np.concatenate([[1.0], surv, [surv[-1]]])
        ax.step(x, y, where="post", color=colour, lw=1.8,
                label=f"{name} (n = {int(rows.sum()):,d}, {int(eg.sum()):,d} events)")
        cens = np.unique(tg[~eg])
        if len(cens):
            idx = np.searchsorted(steps, cens, side="right") - 1
            ax.scatter(cens, np.where(idx >= 0, surv[np.maximum(idx, 0)], 1.0), marker="|", s=25,
                       color=colour, linewidths=1, zorder=3)
    if horizon is not None:
        ax.axvline(horizon, color="#555555", ls="--", lw=1, label=f"horizon t = {horizon:g}")
    ax.set(xlim=(0, None), ylim=(0, 1.02), xlabel="Time", ylabel="Event-free probability (Kaplan–Meier)",
           title="Kaplan–Meier curves by score band" if isinstance(group, ScoreBands) else "Kaplan–Meier curves")
    ax.legend(loc="best", fontsize=8, frameon=False)
    return fig


def plot_survival_calibration(table: CalibrationTable, *, ax=None):
    """Predicted against observed risk within the table's horizon, one point per group.

    The x axis is each group's mean predicted risk within t, the y axis its Kaplan–Meier risk
    1 − S(t), with the 95% interval of :meth:`CalibrationTable.ci` (Greenwood's standard error on
    the log(−log S) scale) as a vertical bar; marker area is proportional to the group's rows, and
    the dashed diagonal is perfect calibration. Points are labelled with their group where the
    label has room.

    Parameters
    ----------
    table : CalibrationTable
        From :func:`~riskformula.reports.survival_metrics.calibration_at`, or one of a
        :class:`~riskformula.reports.survival_evaluation.SurvivalEvaluation`'s ``calibration``.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes; None (default): on a new figure not attached to pyplot.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (the axes' figure when ``ax`` is given).
    """
    if not isinstance(table, CalibrationTable):
        raise DataError(f"`table` must be a CalibrationTable (from calibration_at, or a survival evaluation's "
                        f"`calibration`); got {type(table).__name__}.")
    if not len(table.group):
        raise DataError("`table` has no groups to plot.")
    fig, ax = _new_axes(ax)
    x = np.asarray(table.predicted, dtype=float)
    obs = np.asarray(table.observed, dtype=float)
    n = np.asarray(table.n, dtype=float)
    lower, upper = table.ci()
    top = float(min(1.0, max(np.max(x), np.max(upper), 0.05) * 1.1))
    margin = 0.04 * top
    ax.plot([0, top], [0, top], ls="--", lw=1, color=_DIAGONAL, label="perfect calibration", zorder=1)
    ax.errorbar(x, obs, yerr=[np.maximum(obs - lower, 0.0), np.maximum(upper - obs, 0.0)], fmt="none",
                ecolor=_POINTS, elinewidth=1, capsize=2, alpha=0.7, zorder=2)
    area = 15 + 300 * n / max(n.max(), 1.0)
    ax.scatter(x, obs, s=area, color=_POINTS, edgecolor="white", linewidth=0.8, zorder=3,
               label="group (area ∝ rows)")
    ax.set(xlim=(-margin, top + margin), ylim=(-margin, top + margin),
           xlabel=f"Predicted risk within t = {table.horizon:g}",
           ylabel=f"Observed risk within t = {table.horizon:g} (Kaplan–Meier)",
           title=f"Calibration within t = {table.horizon:g} (n = {int(n.sum()):,d})")
    ax.set_aspect("equal")
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    if len(x) <= 15:
        from ._labels import place_point_labels  # imports matplotlib: only once it is known to be there

        place_point_labels(ax, [str(g) for g in table.group], x, obs, np.sqrt(area) / 2 + 0.8, n,
                           fontsize=8, color="#444444")
    return fig
