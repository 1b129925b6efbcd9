"""Diagnostic plots for risk scores (matplotlib, an optional dependency).

Every function draws on ``ax`` when given, otherwise on a new
:class:`matplotlib.figure.Figure` that is not attached to pyplot (nothing is shown and no
global state is touched), and returns the figure. Save it with ``fig.savefig(path)``.

The diagnostic plots accept either an :class:`~riskformula.reports.evaluation.Evaluation`
or a fitted model plus the data to evaluate it on (the same functions are ``rf.plots.*``)::

    fig = plot_reliability(fit, test_data)
    fig = plot_reliability(evaluate(fit, test_data))   # same figure
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..errors import CalibrationWarning, DataError, SettingsError
from .decision_curve import DecisionCurve
from .evaluation import Evaluation, evaluate
from .render import DEFAULT_GAP_TOLERANCE
from ._axes import new_axes as _new_axes

__all__ = ["plot_decision_curve", "plot_reliability", "plot_roc", "plot_score_distribution",
           "plot_size_cv", "plot_size_path"]

_EVENT, _NON_EVENT, _MODEL = "#c0392b", "#2c7fb8", "#222222"


def _evaluation(model_or_evaluation, data) -> Evaluation:
    if isinstance(model_or_evaluation, Evaluation):
        if data is not None:
            raise SettingsError("Pass either an Evaluation, or a model together with `data`; "
                            "an Evaluation already holds its data's results.")
        return model_or_evaluation
    if data is None:
        raise SettingsError("`data` is required when plotting a model: "
                        "plot_xxx(model, data), or plot_xxx(evaluate(model, data)).")
    if getattr(getattr(model_or_evaluation, "design", None), "survival", None) is not None:
        raise SettingsError("this plot reads a binary outcome's evaluation; for a time-to-event score draw "
                            "rf.plots.plot_km_by_score(m, data) or rf.plots.plot_survival_calibration(m, data).")
    with warnings.catch_warnings():
        # these warnings are about Hosmer–Lemeshow, the calibration slope and AUC, which no plot
        # shows (plot_roc raises its own error when AUC is undefined)
        warnings.simplefilter("ignore", CalibrationWarning)
        return evaluate(model_or_evaluation, data)


#: the reliability diagram's margin around [0, 1], in risk units
MARGIN = 0.05


def plot_reliability(model_or_evaluation, data=None, ax=None):
    """Reliability diagram: observed vs predicted risk, one point per score.

    Marker area is proportional to the number of rows with that score; vertical bars are
    Wilson 95% intervals of the observed risk; the dashed diagonal is perfect calibration.
    With more than 30 distinct scores the points are 10 quantile bins of score (Ustun & Rudin, 2019).
    With at most 15 points each is labelled with its score (or bin) where the label has room: labels
    never overlap one another, a marker or the legend, and a crowded point's label is left out
    (the points with the most rows are labelled first).

    Parameters
    ----------
    model_or_evaluation : RiskScore or Evaluation
        An :class:`~riskformula.reports.evaluation.Evaluation` (from :func:`riskformula.evaluate`),
        or a fitted model to evaluate on ``data``.
    data : pandas.DataFrame, optional
        The rows to evaluate the model on; required with a model, not allowed with an Evaluation.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes; None (default): on a new figure not attached to pyplot.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (the axes' figure when ``ax`` is given).
    """
    ev = _evaluation(model_or_evaluation, data)
    fig, ax = _new_axes(ax)
    r = ev.reliability
    x, obs = r["predicted_risk"].to_numpy(), r["observed_risk"].to_numpy()
    n = r["n"].to_numpy(dtype=float)
    ax.plot([0, 1], [0, 1], ls="--", lw=1, color="grey", label="perfect calibration", zorder=1)
    # Wilson bounds can sit a rounding error past the observed risk (0 or 1 events)
    below = np.maximum(obs - r["ci_lower"].to_numpy(), 0.0)
    above = np.maximum(r["ci_upper"].to_numpy() - obs, 0.0)
    ax.errorbar(x, obs, yerr=[below, above], fmt="none",
                ecolor=_NON_EVENT, elinewidth=1, capsize=2, alpha=0.7, zorder=2)
    area = 15 + 300 * n / n.max()
    ax.scatter(x, obs, s=area, color=_NON_EVENT, edgecolor="white", linewidth=0.8, zorder=3,
               label="score (area ∝ rows)")
    # a margin around [0, 1]: markers at a risk of 0 or 1 (common for a steep score) stay whole
    ax.set(xlim=(-MARGIN, 1 + MARGIN), ylim=(-MARGIN, 1 + MARGIN), xlabel="Predicted risk", ylabel="Observed risk",
           title=f"Reliability (CAL {100 * ev.cal:.1f}%, n = {ev.n:,d})")
    ax.set_xticks(np.linspace(0, 1, 6))
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_aspect("equal")
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    if len(r) <= 15:
        # each point's score beside it, placed when the figure is drawn so that no two labels
        # overlap or cover a marker or the legend; a crowded point's label is left out (the
        # largest groups of rows are labelled first)
        texts = [label if isinstance(label, str) else f"{label:g}" for label in r["score"]]
        from ._labels import place_point_labels  # imports matplotlib: only when a plot is drawn
        place_point_labels(ax, texts, x, obs, np.sqrt(area) / 2 + 0.8, n,
                           fontsize=8, color="#444444")
    return fig


def plot_roc(model_or_evaluation, data=None, ax=None):
    """ROC curve of the total score, with the AUC and its DeLong 95% CI in the legend.

    Tied scores move both rates at once, so those steps are drawn as diagonal segments
    (the area under the drawn curve is exactly the reported AUC).

    Parameters
    ----------
    model_or_evaluation : RiskScore or Evaluation
        An :class:`~riskformula.reports.evaluation.Evaluation` (from :func:`riskformula.evaluate`),
        or a fitted model to evaluate on ``data``.
    data : pandas.DataFrame, optional
        The rows to evaluate the model on; required with a model, not allowed with an Evaluation.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes; None (default): on a new figure not attached to pyplot.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (the axes' figure when ``ax`` is given).

    Raises
    ------
    DataError
        When the data hold only events or only non-events (no ROC curve).
    """
    ev = _evaluation(model_or_evaluation, data)
    if ev.roc is None:
        raise DataError("The ROC curve needs both events and non-events in the data.")
    fig, ax = _new_axes(ax)
    a = ev.auc
    ax.plot([0, 1], [0, 1], ls="--", lw=1, color="grey", label="chance")
    ax.plot(ev.roc["fpr"], ev.roc["tpr"], marker="o", ms=3, color=_MODEL,
            label=f"AUC {a.auc:.3f} ({a.lower:.3f}, {a.upper:.3f})")
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="False positive rate (1 - specificity)",
           ylabel="True positive rate (sensitivity)", title="ROC curve")
    ax.set_aspect("equal")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    return fig


def plot_decision_curve(model_or_evaluation, data=None, ax=None):
    """Decision curve: net benefit of the model, treat-all and treat-none by threshold.

    The y-axis is cut a little below 0 because treat-all falls steeply at high thresholds
    and would otherwise flatten the part of the plot that matters.

    A :class:`~riskformula.reports.decision_curve.DecisionCurve` (from :func:`riskformula.decision_curve`,
    several models) is accepted too and drawn by its :meth:`~DecisionCurve.plot`.

    Parameters
    ----------
    model_or_evaluation : RiskScore or Evaluation or DecisionCurve
        An :class:`~riskformula.reports.evaluation.Evaluation` (from :func:`riskformula.evaluate`),
        a :class:`~riskformula.reports.decision_curve.DecisionCurve`, or a fitted model to
        evaluate on ``data``.
    data : pandas.DataFrame, optional
        The rows to evaluate the model on; required with a model, not allowed with an Evaluation
        or a DecisionCurve.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes; None (default): on a new figure not attached to pyplot.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (the axes' figure when ``ax`` is given).
    """
    if isinstance(model_or_evaluation, DecisionCurve):
        if data is not None:
            raise SettingsError("Pass either a DecisionCurve, or a model together with `data`; "
                                "a DecisionCurve already holds its data's results.")
        return model_or_evaluation.plot(ax=ax)
    ev = _evaluation(model_or_evaluation, data)
    fig, ax = _new_axes(ax)
    nb = ev.net_benefit
    t = nb["threshold"]
    ax.plot(t, nb["treat_none"], color="grey", lw=1, label="treat none")
    ax.plot(t, nb["treat_all"], color=_EVENT, lw=1, ls="--", label="treat all")
    ax.plot(t, nb["net_benefit"], color=_MODEL, lw=1.8, label="model")
    top = max(ev.observed_risk, float(nb["net_benefit"].max()), 0.01)
    ax.set(xlim=(float(t.min()), float(t.max())), ylim=(-0.15 * top, 1.1 * top),
           xlabel="Threshold probability", ylabel="Net benefit",
           title=f"Decision curve (AUNBC {ev.aunbc:.3f})")
    ax.legend(loc="best", fontsize=8, frameon=False)
    return fig


def plot_score_distribution(model_or_evaluation, data=None, ax=None):
    """Number of rows at each total score, events and non-events side by side.

    With more than 30 distinct scores (real-valued columns) a 20-bin histogram is drawn.

    Parameters
    ----------
    model_or_evaluation : RiskScore or Evaluation
        An :class:`~riskformula.reports.evaluation.Evaluation` (from :func:`riskformula.evaluate`),
        or a fitted model to evaluate on ``data``.
    data : pandas.DataFrame, optional
        The rows to evaluate the model on; required with a model, not allowed with an Evaluation.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes; None (default): on a new figure not attached to pyplot.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (the axes' figure when ``ax`` is given).
    """
    ev = _evaluation(model_or_evaluation, data)
    fig, ax = _new_axes(ax)
    c = ev.score_counts
    s = c["score"].to_numpy()
    if len(c) <= 30:
        gap = np.min(np.diff(s)) if len(s) > 1 else 1.0
        w = 0.4 * gap
        ax.bar(s - w / 2, c["non_events"], width=w, color=_NON_EVENT, label="no event (y = 0)")
        ax.bar(s + w / 2, c["events"], width=w, color=_EVENT, label="event (y = 1)")
        ax.set_xticks(s, [f"{v:g}" for v in s])
    else:
        edges = np.histogram_bin_edges(s, bins=20)
        ax.hist(s, bins=edges, weights=c["non_events"], histtype="step", lw=1.5,
                color=_NON_EVENT, label="no event (y = 0)")
        ax.hist(s, bins=edges, weights=c["events"], histtype="step", lw=1.5,
                color=_EVENT, label="event (y = 1)")
    ax.set(xlabel="Total score (points)", ylabel="Rows", title="Score distribution by outcome")
    ax.set_ylim(0, 1.2 * ax.get_ylim()[1])  # headroom so the legend clears the bars
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    return fig


def _panels(ax, figsize, heights=(1.0, 1.0)):
    """``(figure, (top, bottom))``: two stacked panels sharing the x axis. ``ax`` may be None (a new
    pyplot-free figure), a pair of Axes (used as they are) or one Axes, whose area is split in two
    (the Axes itself is turned off and holds the two panels)."""
    if ax is None:
        fig, top = _new_axes(None, figsize=figsize)
        fig.clear()
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=list(heights))
        return fig, (top, bottom)
    if isinstance(ax, (list, tuple, np.ndarray)):
        axes = list(np.ravel(ax))
        if len(axes) != 2:
            raise SettingsError(f"`ax` must be one Axes or a pair of Axes (top, bottom); got {len(axes)} Axes.")
        fig, _ = _new_axes(axes[0])
        axes[1].sharex(axes[0])
        return fig, tuple(axes)
    fig, ax = _new_axes(ax)
    ax.set_axis_off()
    share = heights[0] / sum(heights)
    gap = 0.06
    top = ax.inset_axes([0.0, (1 - share) + gap / 2, 1.0, share - gap / 2])
    bottom = ax.inset_axes([0.0, 0.0, 1.0, (1 - share) - gap / 2], sharex=top)
    return fig, (top, bottom)


def _hollow_where(axis, x, y, proven, colour, **kw):
    """Filled markers where ``proven``, hollow ones elsewhere (a filled marker on top where both fall
    on one spot: the proven fit there is the certified one)."""
    if (~proven).any():
        axis.scatter(x[~proven], y[~proven], facecolor="white", edgecolor=colour, linewidth=1.5, zorder=3, **kw)
    axis.scatter(x[proven], y[proven], color=colour, zorder=3.1, **kw)


def _limit_text(limits) -> str:
    limits = sorted(int(v) for v in limits)
    if len(limits) > 1 and limits == list(range(limits[0], limits[-1] + 1)):
        return f"{limits[0]}–{limits[-1]}"
    return ", ".join(map(str, limits))


def plot_size_path(table, ax=None):
    """Loss (top panel) and AUC (bottom panel) of the best score of each size, against the card's
    size in items.

    Each fit is drawn at the number of items its card uses, which can be below its size limit when
    another item does not lower the loss; a tick whose fits had other limits names them
    (``3`` over ``limit 3–4``: limits 3 and 4 both gave a three-item card).

    Parameters
    ----------
    table : SizePath or DataFrame
        The result of :func:`riskformula.size_path` (its ``.table`` is drawn), or a table with
        one row per size and columns ``size``, ``loss`` and ``auc`` (and ``items``, the items each
        card uses, when known: without it the points are drawn at ``size``); a time-to-event
        score's path has ``harrell_c`` instead of ``auc`` and is drawn as the partial likelihood
        loss and Harrell's C. Sizes whose model is
        not proven optimal are drawn hollow: ``status`` other than ``"optimal"`` when the table
        has that column (as :func:`riskformula.size_path` gives), else a ``gap`` above
        ``risk_score``'s default ``gap_tolerance`` (1e-6).
    ax : matplotlib.axes.Axes or tuple of matplotlib.axes.Axes, optional
        One Axes: its area is split into the two panels. A pair (a tuple, a list or an array of
        two): loss on the first, AUC on the second. None (default): a new figure not attached to
        pyplot.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (the axes' figure when ``ax`` is given).
    """
    where = None
    if not isinstance(table, pd.DataFrame) and isinstance(getattr(table, "table", None), pd.DataFrame):
        where = getattr(table, "evaluated_on", None)  # a SizePath
        table = table.table
    if not isinstance(table, pd.DataFrame):
        raise DataError(f"`table` must be a SizePath (from riskformula.size_path) or a DataFrame; "
                        f"got {type(table).__name__}.")
    # a time-to-event score's path: partial likelihood loss and Harrell's C
    survival = "harrell_c" in table.columns and "auc" not in table.columns
    second = "harrell_c" if survival else "auc"
    missing = [c for c in ("size", "loss", second) if c not in table.columns]
    if missing:
        raise DataError(f"`table` lacks column(s) {', '.join(missing)}; it needs `size`, "
                        f"`loss` and `auc` (or `harrell_c`). Got columns: {', '.join(map(str, table.columns))}.")
    if table.empty:
        raise DataError("`table` has no rows to plot.")
    t = table.sort_values("size")
    limit = t["size"].to_numpy()
    x = t["items"].to_numpy() if "items" in t.columns else limit
    if "status" in t.columns:  # the solver's verdict, with the tolerance the fit used
        proven = (t["status"] == "optimal").to_numpy()
    elif "gap" in t.columns:
        proven = t["gap"].fillna(np.inf).to_numpy() <= DEFAULT_GAP_TOLERANCE
    else:
        proven = np.ones(len(t), dtype=bool)
    fig, (top, bottom) = _panels(ax, figsize=(6.0, 5.0))
    panels = ((top, "loss", _NON_EVENT, "Partial likelihood loss\n(lower is better)" if survival
               else "Log loss\n(lower is better)"),
              (bottom, second, _EVENT, "Harrell's C\n(higher is better)" if survival else "AUC\n(higher is better)"))
    for axis, col, colour, label in panels:
        y = t[col].to_numpy(float)
        axis.plot(x, y, color=colour, lw=1.5, zorder=2)
        _hollow_where(axis, x, y, proven, colour)
        axis.set_ylabel(label)
        axis.margins(y=0.15)
    ticks = np.unique(x)
    names = []
    for k in ticks:
        limits = limit[x == k]
        names.append(f"{k:g}" if list(limits) == [k] else f"{k:g}\nlimit {_limit_text(limits)}")
    bottom.set_xticks(ticks, names)
    top.tick_params(labelbottom=False)
    bottom.set_xlabel("Card size (items)" if "items" in t.columns else "Size limit (items)")
    top.set_title("Size path" + (f" (loss and {'C' if survival else 'AUC'} on {where})" if where else ""))
    if (~proven).any():
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], ls="none", marker="o", color="grey"),
                   Line2D([], [], ls="none", marker="o", mfc="white", mec="grey", mew=1.5)]
        top.legend(handles, ["proven optimal", "not proven optimal"], loc="best", fontsize=8, frameon=False)
    return fig


def plot_size_cv(result, ax=None):
    """The cross-validation curve of :func:`riskformula.cv_risk_score`: mean held-out metric
    (AUC or log loss) at each size limit with ±1 standard-error bars, and vertical lines at the
    size with the best mean (``size_min``) and at the one-standard-error size (``size_1se``); a
    horizontal line marks the 1se rule's bound (the best mean minus one SE for AUC, plus one SE
    for log loss).

    Sizes where some fold fit is not proven optimal are drawn hollow.

    Parameters
    ----------
    result : SizeCV
        The result of :func:`riskformula.cv_risk_score`.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes; None (default): on a new figure not attached to pyplot.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (the axes' figure when ``ax`` is given).
    """
    if not all(hasattr(result, a) for a in ("table", "metric_label", "higher_is_better", "size_min", "size_1se")):
        raise DataError(f"`result` must be a SizeCV (from riskformula.cv_risk_score); "
                        f"got {type(result).__name__}.")
    t = result.table.sort_values("size")
    fig, ax = _new_axes(ax, figsize=(7.5, 4.0))
    size, mean, se = t["size"].to_numpy(), t["mean"].to_numpy(float), t["se"].fillna(0).to_numpy(float)
    proven = (t["certified"] == t["fits"]).to_numpy()
    label, higher = result.metric_label, result.higher_is_better
    ax.errorbar(size, mean, yerr=se, color=_MODEL, lw=1.5, capsize=3, zorder=2)
    _hollow_where(ax, size, mean, proven, _MODEL)
    lines = [("min", result.size_min, _NON_EVENT, "--", f"best mean: size {result.size_min}"),
             ("1se", result.size_1se, _EVENT, ":", f"smallest within 1 SE: size {result.size_1se}")]
    best = t.loc[t["size"] == result.size_min].iloc[0]
    bound = best["mean"] + (-1 if higher else 1) * (best["se"] if pd.notna(best["se"]) else 0.0)
    handles = [ax.axhline(bound, color="grey", ls="-", lw=0.8, alpha=0.6, zorder=1,
                          label=f"best mean {'−' if higher else '+'} 1 SE")]
    for rule, x, colour, style, text in lines:
        handles.append(ax.axvline(x, color=colour, ls=style, lw=1.2, zorder=1,
                                  label=text + ("\n(chosen)" if rule == result.rule else "")))
    n_fits = int(t["fits"].max())
    ax.set(xlabel="Size limit (max_size, in card items)",
           ylabel=f"{label[0].upper() + label[1:]}\n(mean ± 1 SE over {n_fits} fold fits)",
           title=f"Cross-validated size ({'higher' if higher else 'lower'} is better)")
    ax.set_xticks(size)
    ax.margins(x=0.08)
    labels = [h.get_label() for h in handles]
    if (~proven).any():
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], ls="none", marker="o", mfc="white", mec="grey", mew=1.5))
        labels.append("some fold fits\nnot proven optimal")
    # beside the axes, where it cannot cover a point or an error bar
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    return fig
