"""Plots of a Rashomon set (matplotlib, an optional dependency); also ``rf.plots.plot_rashomon`` and
``rf.plots.plot_variable_use``.  Each draws on ``ax`` when given, otherwise on a new figure that is
not attached to pyplot, and returns the figure."""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..reports._axes import new_axes as _new_axes
from ..reports.plots import _EVENT, _MODEL, _NON_EVENT

__all__ = ["plot_rashomon", "plot_variable_use"]


def _check(result):
    if not all(hasattr(result, a) for a in ("lams", "importance", "epsilon")):
        raise DataError(f"`result` must be a RashomonSet (from riskformula.rashomon_set); got {type(result).__name__}.")
    if not len(result):
        raise DataError("the Rashomon set has no members to plot.")


def points_range(low: int, high: int) -> str:
    """A variable's points across the members: ``+1`` when they agree, ``-2 to +3`` otherwise."""
    return f"{low:+d}" if low == high else f"{low:+d} to {high:+d}"


def plot_rashomon(result, ax=None, seed: int = 0):
    """Every member's training loss against its size (number of items), jittered sideways so that
    members of one size do not hide each other; the best score is marked and a dashed line shows
    the loss at the set's level ((1 + ε) × the best objective, less c0 × size, drawn at the
    largest size).

    Parameters
    ----------
    result : RashomonSet
        The result of :func:`riskformula.rashomon_set`.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes; None (default): on a new figure not attached to pyplot.
    seed : int, default 0
        The sideways jitter's random seed.

    Returns
    -------
    matplotlib.figure.Figure
    """
    _check(result)
    fig, ax = _new_axes(ax, figsize=(6.0, 4.0))
    rng = np.random.default_rng(seed)
    size = result.sizes.astype(float)
    x = size + rng.uniform(-0.18, 0.18, len(size))
    # the best score (the first member) is drawn once, as the star, where its jitter puts it
    ax.scatter(x[1:], result.losses[1:], s=14, color=_NON_EVENT, alpha=0.6, lw=0,
               label=f"members ({len(result):,d}, the best included)")
    ax.scatter(x[:1], result.losses[:1], s=90, marker="*", color=_EVENT, edgecolor="white", linewidth=0.5,
               zorder=3, label="best objective")
    c0 = result.settings.c0
    top = int(size.max())
    ax.axhline(result.level - c0 * top, color=_MODEL, ls="--", lw=1,
               label=f"level: (1 + {result.epsilon:g}) × best")
    sizes, counts = np.unique(result.sizes, return_counts=True)
    ax.set_xticks(sizes, [f"{s}\n({n:,d} score{'s' if n > 1 else ''})" for s, n in zip(sizes, counts)])
    state = "complete" if result.complete else f"complete below {result.bound:.4g}"
    ax.set(xlabel="Size (items on the card)", ylabel="Training log loss",
           title=f"Rashomon set, ε = {100 * result.epsilon:g} % ({state})")
    ax.legend(fontsize=8, frameon=False, loc="lower left")
    return fig


def plot_variable_use(result, ax=None, top: int = 20):
    """The share of members that use each variable (bars), with the range of its points written
    beside the bar; variables every member uses are drawn in red (in a complete set, no score without
    them is within ε of the best).

    Parameters
    ----------
    result : RashomonSet
        The result of :func:`riskformula.rashomon_set`.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes; None (default): on a new figure not attached to pyplot.
    top : int, default 20
        How many variables to show at most (the most used first).

    Returns
    -------
    matplotlib.figure.Figure
    """
    _check(result)
    t = result.importance().head(top).iloc[::-1]
    fig, ax = _new_axes(ax, figsize=(6.0, 0.35 * len(t) + 1.2))
    y = np.arange(len(t))
    every = (t["members"] == len(result)).to_numpy()
    colours = np.where(every, _EVENT, _NON_EVENT)
    ax.barh(y, t["share"], color=colours)
    for k, row in enumerate(t.itertuples()):
        if row.members:
            ax.text(min(row.share, 1.0) + 0.01, k, points_range(row.points_min, row.points_max), va="center",
                    fontsize=8)
    ax.set_yticks(y, t["variable"])
    ax.set_xlim(0, 1.18)
    ax.set(xlabel="Share of the members that use it",
           title=f"Variable use across {len(result):,d} scores within {100 * result.epsilon:g} % of the best")
    if every.any():
        from matplotlib.patches import Patch
        ax.legend([Patch(color=_EVENT), Patch(color=_NON_EVENT)],
                  ["in every good score (proven)" if result.complete else "in every listed score",
                   "not in every score"], fontsize=8, frameon=False, loc="lower right")
    return fig
