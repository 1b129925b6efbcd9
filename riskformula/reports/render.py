"""The one place that turns numbers and tables into text (tabulate).

Report objects keep their content as pandas DataFrames and ``(label, value)`` pairs;
this module decides how those look in plain text, Markdown, HTML and LaTeX: the cell
formatters (``fmt_*``), the blocks (:func:`table`, :func:`pairs`, :func:`heading`,
:func:`paragraph`, :func:`notes`) and :class:`Rendered`, the base class that lays every
report out in the same order.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from tabulate import tabulate

#: tabulate formats for each output kind
FORMATS = {"text": "simple", "markdown": "github", "html": "html", "latex": "latex_booktabs"}


# --------------------------------------------------------------------------------------
# cells
# --------------------------------------------------------------------------------------


def _finite(v) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def fmt_percent(p: float, digits: int = 1) -> str:
    """``0.1234 -> '12.3%'``; tiny and huge risks keep their sign of extremity; NA when not finite."""
    if not _finite(p):
        return "NA"
    x = 100.0 * p
    low = 10.0 ** (-digits)
    if 0 < x < low:
        return f"<{low:.{digits}f}%"
    if 100 - low < x < 100:
        return f">{100 - low:.{digits}f}%"
    return f"{x:.{digits}f}%"


def fmt_fixed(v, digits: int = 3) -> str:
    """``digits`` decimals (``0.71234 -> '0.712'``); NA when missing or not finite."""
    return f"{v:.{digits}f}" if _finite(v) else "NA"


def fmt_ci(est, lower, upper, digits: int = 3) -> str:
    """``'0.812 (0.771, 0.853)'``; the estimate alone when the limits are not finite."""
    if not _finite(est):
        return "NA"
    if not (_finite(lower) and _finite(upper)):
        return fmt_fixed(est, digits)
    return f"{est:.{digits}f} ({lower:.{digits}f}, {upper:.{digits}f})"


def fmt_p(p) -> str:
    """A p-value with 4 decimals, ``<0.0001`` below that."""
    if not _finite(p):
        return "NA"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


#: the solver's default relative gap tolerance (``risk_score(gap_tolerance=...)``)
DEFAULT_GAP_TOLERANCE = 1e-6


def fmt_gap(gap, tolerance: float | None = DEFAULT_GAP_TOLERANCE, *, state_tolerance: bool = False) -> str:
    """An optimality gap (a fraction) as a percentage, as MIP solvers print it.

    A gap at or below ``tolerance`` — what the solver certifies as optimal — prints as ``0%``
    (with ``state_tolerance``, ``0% within tolerance 1e-06``); a larger one with three
    significant digits and never in exponent notation; NaN or infinity (no bound) as ``NA``.
    The unrounded gap stays in ``RiskScore.gap``, ``to_dict()`` and JSON.

    Examples
    --------
    >>> fmt_gap(6.8e-9), fmt_gap(6.8e-9, state_tolerance=True), fmt_gap(0.50512), fmt_gap(2.5e-6)
    ('0%', '0% within tolerance 1e-06', '50.5%', '0.00025%')
    """
    if not _finite(gap):
        return "NA"
    g = float(gap)
    tol = tolerance if tolerance is not None and math.isfinite(tolerance) else 0.0
    if g <= tol:
        return "0%" + (f" within tolerance {tol:g}" if state_tolerance else "")
    text = np.format_float_positional(100.0 * g, precision=3, fractional=False, trim="-")
    if text == "100" and g < 1:  # rounded up: the lower bound is above zero
        text = ">99.9"
    return f"{text}%"


def fmt_points(v: float) -> str:
    """Signed integer points: ``+3``, ``-2``; non-integers (real-valued columns) keep 3 digits."""
    if float(v).is_integer():
        return f"{int(v):+d}"
    return f"{v:+.3g}"


def fmt_number(v, digits: int = 6) -> str:
    """General number: integers with thousands separators, floats with ``digits`` significant."""
    if v is None:
        return "NA"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,d}"
    if isinstance(v, float):
        if math.isnan(v):
            return "NA"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.{digits}g}"
    return str(v)


def points_display(points: pd.DataFrame, labels: Sequence[str] | None = None) -> pd.DataFrame:
    """A points table (terms by models, intercept last) as printed: signed points, unused terms blank."""
    shown = pd.DataFrame({"term": points.index})
    for c, label in zip(points.columns, labels if labels is not None else points.columns):
        shown[label] = ["" if v == 0 and t != "intercept" else fmt_points(v) for t, v in points[c].items()]
    return shown


# --------------------------------------------------------------------------------------
# plain values (to_dict)
# --------------------------------------------------------------------------------------


def plain(v):
    """A numpy scalar as the Python value it holds; anything else unchanged."""
    return v.item() if hasattr(v, "item") else v


def records(df: pd.DataFrame) -> list[dict]:
    """The rows of ``df`` as dicts of plain Python values."""
    return [{k: plain(v) for k, v in rec.items()} for rec in df.to_dict("records")]


# --------------------------------------------------------------------------------------
# blocks
# --------------------------------------------------------------------------------------


def check_kind(kind) -> str:
    """``kind`` if it is one of :data:`FORMATS`, else a :class:`SettingsError` listing them."""
    if not isinstance(kind, str) or kind not in FORMATS:
        from ..errors import SettingsError

        raise SettingsError(f"`kind` must be one of {', '.join(map(repr, FORMATS))}; got {kind!r}.")
    return kind


def table(df: pd.DataFrame, kind: str = "text", floatfmt: str = ".4g", index: bool = False) -> str:
    """Render a DataFrame with tabulate in one of :data:`FORMATS`."""
    return tabulate(df, headers="keys", tablefmt=FORMATS[kind], showindex=index,
                    floatfmt=floatfmt, disable_numparse=True)


def pairs(items: Iterable[tuple[str, object]], kind: str = "text") -> str:
    """Render ``(label, value)`` header pairs as a two-column table without headers."""
    rows = [(label, value if isinstance(value, str) else fmt_number(value)) for label, value in items]
    if kind == "markdown":  # Markdown tables need a header row
        return tabulate(rows, headers=["", ""], tablefmt=FORMATS[kind], disable_numparse=True)
    return tabulate(rows, tablefmt={"text": "plain"}.get(kind, FORMATS[kind]), disable_numparse=True)


def heading(title: str, kind: str = "text", level: int = 2) -> str:
    """A section heading in the output format."""
    if kind == "markdown":
        return "#" * level + " " + title
    if kind == "html":
        return f"<h{level}>{title}</h{level}>"
    if kind == "latex":
        return "\\paragraph{" + title + "}"
    rule = "=" if level <= 1 else "-"
    return f"{title}\n{rule * len(title)}"


def paragraph(text: str, kind: str = "text") -> str:
    """A line of free text, escaped (a ``<p>`` in HTML)."""
    text = escape(text, kind)
    return f"<p>{text}</p>" if kind == "html" else text


def notes(lines: Sequence[str], kind: str = "text") -> str:
    """Numbered notes: ``[1] ...``."""
    out = [f"[{i}] {s}" for i, s in enumerate(lines, 1)]
    # LaTeX joins consecutive lines into one paragraph, so force a line break there too
    sep = {"html": "<br>\n", "latex": " \\\\\n"}.get(kind, "\n")
    return sep.join(out)


_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                   "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                   "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}"}


def escape(text: str, kind: str = "text") -> str:
    """Escape free text (headings, notes) for HTML or LaTeX; text and Markdown pass through.

    Table cells need no escaping: tabulate escapes them itself.
    """
    if kind == "html":
        import html

        return html.escape(text, quote=False)
    if kind == "latex":
        return "".join(_LATEX_SPECIALS.get(c, c) for c in text)
    return text


def document(blocks: Sequence[str], kind: str = "text") -> str:
    """Join rendered blocks with blank lines."""
    return "\n\n".join(b for b in blocks if b)


# --------------------------------------------------------------------------------------
# the report skeleton
# --------------------------------------------------------------------------------------


class Rendered:
    """Base class of every report: a report declares its content, this class lays it out.

    Every report reads, in order: a title, ``(label, value)`` header pairs, its sections and
    numbered notes. A subclass sets :attr:`_title` and defines :meth:`_header` (pairs),
    :meth:`_sections` (``(heading or None, DataFrame or line of text)``), :meth:`_tables`
    (the raw DataFrames behind :attr:`tables`) and, unless its ``notes`` attribute holds
    them, :meth:`_note_lines`. Reports that are dataclasses get their ``notes`` stored as a
    tuple. :meth:`render` checks ``kind`` once and escapes all free text; ``str()``,
    ``to_markdown()``, ``to_html()``, ``to_latex()`` and Jupyter's HTML all follow from it.
    """

    #: level-1 heading of the report
    _title: str = ""
    #: heading above the numbered notes (None: the notes follow the last section directly)
    _notes_heading: str | None = "Notes"

    def __post_init__(self):
        # reports are built with a list of notes and keep them as a tuple
        if isinstance(getattr(self, "notes", None), list):
            object.__setattr__(self, "notes", tuple(self.notes))

    # ---- content (subclasses) -------------------------------------------------------
    def _header(self) -> list[tuple[str, object]]:
        return []

    def _sections(self) -> list[tuple[str | None, pd.DataFrame | str]]:
        return []

    def _note_lines(self) -> Sequence[str]:
        return getattr(self, "notes", ())

    def _tables(self) -> dict[str, pd.DataFrame | None]:
        return {}

    # ---- conversions ----------------------------------------------------------------
    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table of the report as a DataFrame (copies)."""
        return {k: t.copy() for k, t in self._tables().items() if t is not None}

    # ---- rendering ------------------------------------------------------------------
    def render(self, kind: str = "text") -> str:
        """The report in ``"text"``, ``"markdown"``, ``"html"`` or ``"latex"``."""
        check_kind(kind)
        blocks = [heading(escape(self._title, kind), kind, 1), pairs(self._header(), kind)]
        for title, body in self._sections():
            if title is not None:
                blocks.append(heading(escape(title, kind), kind))
            blocks.append(table(body, kind) if isinstance(body, pd.DataFrame) else paragraph(body, kind))
        lines = list(self._note_lines())
        if lines:
            if self._notes_heading is not None:
                blocks.append(heading(escape(self._notes_heading, kind), kind))
            blocks.append(notes([escape(s, kind) for s in lines], kind))
        return document(blocks, kind)

    def __str__(self) -> str:
        return self.render("text")

    def _repr_html_(self) -> str:
        return self.render("html")

    def to_markdown(self) -> str:
        """The report as GitHub Markdown."""
        return self.render("markdown")

    def to_html(self) -> str:
        """The report as an HTML fragment."""
        return self.render("html")

    def to_latex(self) -> str:
        """The report as LaTeX (booktabs tables)."""
        return self.render("latex")
