"""Point labels that do not collide: placed when the figure is drawn, so they fit the final layout.

Imported by :mod:`.plots` only once matplotlib is known to be installed.
"""

from __future__ import annotations

import math

from matplotlib.artist import Artist
from matplotlib.text import Text
from matplotlib.transforms import Bbox

__all__ = ["place_point_labels", "text_extent"]

# directions tried around a point, best first: right, above, left, below, then the diagonals
# (dx, dy, horizontal alignment, vertical alignment)
_DIRECTIONS = [(1, 0, "left", "center"), (0, 1, "center", "bottom"), (-1, 0, "right", "center"),
               (0, -1, "center", "top"), (1, 1, "left", "bottom"), (-1, 1, "right", "bottom"),
               (-1, -1, "right", "top"), (1, -1, "left", "top")]


def text_extent(label, renderer) -> Bbox:
    """The display box of an annotation's text alone (its leader line left out)."""
    label.update_positions(renderer)
    return Text.get_window_extent(label, renderer)


class _LabelPlacer(Artist):
    """Draws nothing; before the labels are drawn it moves each to the first spot around its point
    where it stays inside the axes and clears the markers, the legend and the labels already
    placed, and hides it when there is none. Labels are placed in ``order`` (most important first)."""

    def __init__(self, ax, labels, radii, order):
        super().__init__()
        self._ax, self._labels, self._radii, self._order = ax, labels, radii, order
        self.set_zorder(0)          # drawn before the labels (zorder 3) and the legend
        self.set_in_layout(False)

    def draw(self, renderer):
        ax = self._ax
        frame = ax.get_window_extent(renderer)
        px = renderer.points_to_pixels(1.0)
        centres = [ax.transData.transform(a.xy) for a in self._labels]
        markers = [Bbox.from_extents(x - r * px, y - r * px, x + r * px, y + r * px)
                   for (x, y), r in zip(centres, self._radii)]
        taken = list(markers)
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            taken.append(legend.get_window_extent(renderer))
        pad = 1.5 * px
        for i in self._order:
            label, r = self._labels[i], self._radii[i]
            label.set_visible(True)
            spot = None
            for ring in (r + 2.0, r + 12.0):
                for dx, dy, ha, va in _DIRECTIONS:
                    k = ring / math.hypot(dx, dy) if dx and dy else ring
                    label.set_position((dx * k, dy * k))
                    label.set_horizontalalignment(ha)
                    label.set_verticalalignment(va)
                    box = text_extent(label, renderer).padded(pad)
                    inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1
                              and box.y0 >= frame.y0 and box.y1 <= frame.y1)
                    if inside and not any(box.overlaps(other) for other in taken):
                        spot = box
                        break
                if spot is not None:
                    break
            if spot is None:
                label.set_visible(False)
            else:
                taken.append(spot)
                # a label set further out is tied to its point by a thin line
                label.arrow_patch.set_visible(ring > r + 2.0)
        self.stale = False


def place_point_labels(ax, texts, xs, ys, radii, priority, **text_kw):
    """Label the points ``(xs, ys)`` (data coordinates) with ``texts``, each kept clear of the
    markers (``radii`` in points), of the legend and of the other labels; a label with no free spot
    near its point is left out. Labels are placed by descending ``priority``. Returns the labels
    (matplotlib Annotations; the hidden ones have ``get_visible() == False`` once drawn)."""
    labels = []
    for text, x, y, r in zip(texts, xs, ys, radii):
        a = ax.annotate(text, (x, y), xytext=(0, 0), textcoords="offset points",
                        arrowprops=dict(arrowstyle="-", color="#999999", lw=0.6, shrinkA=1, shrinkB=r),
                        **text_kw)
        a.set_in_layout(False)      # the labels stay inside the axes: no room is made for them
        labels.append(a)
    order = sorted(range(len(labels)), key=lambda i: -priority[i])
    ax.add_artist(_LabelPlacer(ax, labels, list(radii), order))
    return labels
