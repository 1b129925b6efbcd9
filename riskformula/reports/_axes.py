"""The figure and axes every plot draws on (below the plots and the reports that draw themselves)."""

from __future__ import annotations


def new_axes(ax, figsize=(5.0, 4.5)):
    """``(figure, axes)``: the given axes' top-level figure, or a fresh pyplot-free figure."""
    if ax is not None:
        get = getattr(ax, "get_figure", None)
        try:
            fig = get(root=True)  # matplotlib >= 3.10: the top figure, not a subfigure
        except TypeError:
            fig = ax.figure
        return fig, ax
    try:
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError("riskformula's plots need matplotlib, which is not installed. "
                          "Install it with `pip install riskformula[plot]`.") from e
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()
