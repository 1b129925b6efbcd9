"""The one place that turns numbers and tables into text (tabulate).

Report objects keep their content as pandas DataFrames and ``(label, value)`` pairs;
this module decides how those look in plain text, Markdown, HTML and LaTeX: the cell
formatters (``fmt_*``), the blocks (:func:`table`, :func:`pairs`, :func:`heading`,
:func:`paragraph`, :func:`notes`) and :class:`Rendered`, the base class that lays every
report out in the same order.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
from tabulate import tabulate

from .._text import visible
from ..errors import SettingsError

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


def fmt_percent_exact(p: float) -> str:
    """A risk the user chose (a target), with the decimals it needs to be told from 0 and 1:
    ``0.2 -> '20.0%'``, ``0.99967 -> '99.967%'``, ``0.0005 -> '0.050%'``; NA when not finite."""
    if not _finite(p):
        return "NA"
    tail = 100.0 * min(p, 1.0 - p)
    digits = 1 if tail <= 0 else max(1, min(8, math.ceil(-math.log10(tail)) + 1))
    return f"{100.0 * p:.{digits}f}%"


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
#: the solver's default absolute gap tolerance (``risk_score(absolute_gap_tolerance=...)``)
DEFAULT_ABSOLUTE_GAP_TOLERANCE = 1e-8


def _zero_floor(tolerance: float | None, default: float) -> float:
    """The largest gap printed as 0: the run's tolerance, but never above the default one.

    Gaps within the default tolerances are the LP's rounding noise, so they print as 0. A
    looser tolerance the user chose only stops the search earlier: the gap it leaves is real
    and is printed (a gap of 4.57% "within tolerance 50%" is not a 0% gap).
    """
    tol = tolerance if tolerance is not None and math.isfinite(tolerance) else 0.0
    return min(max(tol, 0.0), default)


def _tolerance_text(tol: float) -> str:
    """A relative tolerance as a percentage, like the gap it bounds (``50%``), except a tiny one
    (below 0.01%), which reads better as the parameter is written (``1e-06``) than with many zeros."""
    if tol < 1e-4:
        return f"{tol:g}"
    return np.format_float_positional(100.0 * tol, precision=3, fractional=False, trim="-") + "%"


def gap_is_zero(gap, tolerance: float | None = DEFAULT_GAP_TOLERANCE) -> bool:
    """Does :func:`fmt_gap` print this relative gap as ``0%``? (A run whose gap is within its
    tolerance but not zero is optimal only *within the tolerance*, and reports say so.)"""
    return _finite(gap) and float(gap) <= _zero_floor(tolerance, DEFAULT_GAP_TOLERANCE)


def absolute_gap_is_zero(objective, lower, tolerance: float | None = DEFAULT_ABSOLUTE_GAP_TOLERANCE) -> bool:
    """Does :func:`fmt_absolute_gap` print this absolute gap as ``0``?"""
    return (_finite(objective) and _finite(lower)
            and float(objective) - float(lower) <= _zero_floor(tolerance, DEFAULT_ABSOLUTE_GAP_TOLERANCE))


def fmt_gap(gap, tolerance: float | None = DEFAULT_GAP_TOLERANCE, *, state_tolerance: bool = False) -> str:
    """An optimality gap (a fraction) as a percentage, as MIP solvers print it.

    A gap within both ``tolerance`` and the default tolerance (1e-6: LP rounding noise) prints
    as ``0%``; any other gap with three significant digits, never in exponent notation, even
    when a looser ``tolerance`` certified the run. With ``state_tolerance`` a gap within
    ``tolerance`` says so (``0% within tolerance 1e-06``, ``4.57% within tolerance 50%``).
    NaN or infinity (no bound) prints as ``NA``. The unrounded gap stays in
    ``RiskScore.gap``, ``to_dict()`` and JSON.

    Examples
    --------
    >>> fmt_gap(6.8e-9), fmt_gap(6.8e-9, state_tolerance=True), fmt_gap(0.50512), fmt_gap(2.5e-6)
    ('0%', '0% within tolerance 1e-06', '50.5%', '0.00025%')
    >>> fmt_gap(0.04567, 0.5, state_tolerance=True)
    '4.57% within tolerance 50%'
    """
    if not _finite(gap):
        return "NA"
    g = float(gap)
    tol = tolerance if tolerance is not None and math.isfinite(tolerance) else 0.0
    if gap_is_zero(g, tol):
        text = "0"
    else:
        text = np.format_float_positional(100.0 * g, precision=3, fractional=False, trim="-")
        if text == "100" and g < 1:  # rounded up: the lower bound is above zero
            text = ">99.9"
    within = state_tolerance and g <= tol
    return f"{text}%" + (f" within tolerance {_tolerance_text(tol)}" if within else "")


def fmt_absolute_gap(objective, lower, tolerance: float | None = None, *, state_tolerance: bool = False) -> str:
    """Objective minus lower bound, in objective units, as :func:`fmt_gap` prints the relative gap:
    ``0`` within both ``tolerance`` and the default 1e-8, otherwise three significant digits,
    never in exponent notation; with ``state_tolerance`` a gap within a positive ``tolerance``
    says so; ``NA`` without a finite bound.

    Examples
    --------
    >>> fmt_absolute_gap(0.25, 0.2493), fmt_absolute_gap(2.2e-4, 2.2e-4 - 1e-9, 1e-8, state_tolerance=True)
    ('0.0007', '0 within tolerance 1e-08')
    >>> fmt_absolute_gap(0.480082, 0.458155, 0.05, state_tolerance=True)
    '0.0219 within tolerance 0.05'
    """
    if not (_finite(objective) and _finite(lower)):
        return "NA"
    g = max(float(objective) - float(lower), 0.0)
    tol = tolerance if tolerance is not None and math.isfinite(tolerance) else 0.0
    text = "0" if g <= _zero_floor(tol, DEFAULT_ABSOLUTE_GAP_TOLERANCE) else \
        np.format_float_positional(g, precision=3, fractional=False, trim="-")
    # in objective units, like the gap itself: no percentage
    return text + (f" within tolerance {tol:g}" if state_tolerance and 0 < tol and g <= tol else "")


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

        raise SettingsError(f"`kind` must be one of {', '.join(map(repr, FORMATS))}; got {kind!r}.")
    return kind


def _escape_cells(df: pd.DataFrame, kind: str, index: bool) -> pd.DataFrame:
    """``df`` with its text cells, column names (and index labels) escaped for ``kind``; numbers
    stay numbers, so ``floatfmt`` still formats them."""
    def esc(v):
        return escape(v, kind, cell=True) if isinstance(v, str) else v

    # column by column: DataFrame.map needs pandas 2.1
    out = df.apply(lambda col: col.map(esc)).rename(columns=lambda c: escape(str(c), kind, cell=True))
    if index:
        out.index = out.index.map(esc)
    return out


def _visible_cells(df: pd.DataFrame, index: bool) -> pd.DataFrame:
    """``df`` with control and bidirectional characters of its text cells, column names (and index
    labels) written as escapes (:func:`~riskformula._text.visible`); a copy only when one has them."""
    def vis(v):
        return visible(v) if isinstance(v, str) else v

    out = df.apply(lambda col: col.map(vis)).rename(columns=lambda c: visible(c) if isinstance(c, str) else c)
    if index:
        out.index = out.index.map(vis)
    return out


def table(df: pd.DataFrame, kind: str = "text", floatfmt: str = ".4g", index: bool = False) -> str:
    """Render a DataFrame with tabulate in one of :data:`FORMATS`, its text escaped for ``kind``
    (names' control and bidirectional characters shown as escapes in every format)."""
    fmt = FORMATS[kind]
    if kind in _SELF_ESCAPED:
        df = _escape_cells(df, kind, index)
        fmt = _SELF_ESCAPED[kind]
    elif len(df):
        df = _visible_cells(df, index)
    return tabulate(df, headers="keys", tablefmt=fmt, showindex=index,
                    floatfmt=floatfmt, disable_numparse=True)


def pairs(items: Iterable[tuple[str, object]], kind: str = "text") -> str:
    """Render ``(label, value)`` header pairs as a two-column table without headers."""
    rows = [(label, value if isinstance(value, str) else fmt_number(value)) for label, value in items]
    if kind in _SELF_ESCAPED:
        rows = [(escape(str(label), kind, cell=True), escape(value, kind, cell=True)) for label, value in rows]
    else:
        rows = [(visible(label), visible(value)) for label, value in rows]
    if kind == "markdown":  # Markdown tables need a header row
        return tabulate(rows, headers=["", ""], tablefmt=FORMATS[kind], disable_numparse=True)
    return tabulate(rows, tablefmt={"text": "plain"}.get(kind, _SELF_ESCAPED.get(kind, FORMATS[kind])),
                    disable_numparse=True)


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
                   "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
                   "|": r"\textbar{}",  # a bare | prints as a dash in LaTeX's default (OT1) fonts
                   # the symbols riskformula's own reports and notes use: stock pdflatex has no
                   # definition for most of them ("Unicode character ... not set up for use with LaTeX")
                   "≥": r"\ensuremath{\geq}", "≤": r"\ensuremath{\leq}", "≠": r"\ensuremath{\neq}",
                   "≈": r"\ensuremath{\approx}", "±": r"\ensuremath{\pm}", "×": r"\ensuremath{\times}",
                   "·": r"\ensuremath{\cdot}", "÷": r"\ensuremath{\div}", "∞": r"\ensuremath{\infty}",
                   "→": r"\ensuremath{\rightarrow}", "⇒": r"\ensuremath{\Rightarrow}",
                   "↑": r"\ensuremath{\uparrow}", "↓": r"\ensuremath{\downarrow}", "∈": r"\ensuremath{\in}",
                   "²": r"\ensuremath{^{2}}", "χ": r"\ensuremath{\chi}", "λ": r"\ensuremath{\lambda}",
                   "α": r"\ensuremath{\alpha}", "β": r"\ensuremath{\beta}", "γ": r"\ensuremath{\gamma}",
                   "δ": r"\ensuremath{\delta}", "Δ": r"\ensuremath{\Delta}", "σ": r"\ensuremath{\sigma}",
                   "Σ": r"\ensuremath{\Sigma}", "μ": r"\ensuremath{\mu}", "ρ": r"\ensuremath{\rho}",
                   "θ": r"\ensuremath{\theta}", "−": "-", "–": "--", "—": "---", "…": r"\ldots{}",
                   "\u00a0": "~"}

# Markdown (CommonMark/GitHub): ``|`` would end a table cell, ``<...>`` passes as raw HTML, ``*``
# starts emphasis (``y ~ a*b + c*d``) and a backslash would escape what follows it. Backticks are
# left alone (the notes quote code with them on purpose), and so is the text of a code span.
_MARKDOWN_SPECIALS = {"\\": "\\\\", "|": "\\|", "*": "\\*", "<": "&lt;", ">": "&gt;"}
#: an ``&`` that Markdown would read as the start of an entity (``&amp;``, ``&#60;``); others stay readable
_MARKDOWN_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
#: a Markdown code span: a run of backticks, text, the same run
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)

#: formats whose cells :func:`table` escapes itself (tabulate escapes neither Markdown nor the
#: Unicode symbols above), with tabulate formats that leave the escaped text as it is
try:
    # booktabs rules around cells tabulate leaves as they are; its table of formats is private,
    # so a tabulate without it gets plain \hline rules (latex_raw) instead
    from tabulate import _table_formats as _tabulate_formats
    _LATEX = _tabulate_formats["latex_booktabs"]._replace(headerrow=_tabulate_formats["latex_raw"].headerrow,
                                                          datarow=_tabulate_formats["latex_raw"].datarow)
except (ImportError, KeyError, AttributeError):
    _LATEX = "latex_raw"
_SELF_ESCAPED = {"markdown": FORMATS["markdown"], "latex": _LATEX}


def escape(text: str, kind: str = "text", *, cell: bool = False) -> str:
    """Escape text (headings, notes, table cells) for Markdown, HTML or LaTeX; text passes through.

    :func:`table` and :func:`pairs` escape their cells with it (``cell=True``) for Markdown and
    LaTeX; tabulate escapes HTML cells itself.  In every format, control characters (a line break
    in a name), bidirectional overrides and lone surrogates are written as visible escapes
    (``\\n``, ``\\u202e``: :func:`~riskformula._text.visible`).
    """
    text = visible(text)
    if kind == "html":
        import html

        return html.escape(text, quote=False)
    if kind == "latex":
        out = "".join(_LATEX_SPECIALS.get(c, c) for c in text)
        return out.replace(_LATEX_SPECIALS["χ"] + _LATEX_SPECIALS["²"], r"\ensuremath{\chi^{2}}")  # one symbol
    if kind == "markdown":
        # code spans (`i|j`, as formulas quote odd names) are shown literally: escapes there would
        # show up as typed. Only a pipe needs one, in a table cell, where GitHub splits cells first.
        parts, pos = [], 0
        for span in _CODE_SPAN.finditer(text):
            parts += [_markdown_plain(text[pos:span.start()]), span[0].replace("|", "\\|") if cell else span[0]]
            pos = span.end()
        return "".join(parts) + _markdown_plain(text[pos:])
    return text


def _markdown_plain(text: str) -> str:
    return "".join(_MARKDOWN_SPECIALS.get(c, c) for c in _MARKDOWN_ENTITY.sub("&amp;", text))


def document(blocks: Sequence[str], kind: str = "text") -> str:
    """Join rendered blocks with blank lines."""
    return "\n\n".join(b for b in blocks if b)


# --------------------------------------------------------------------------------------
# the report skeleton
# --------------------------------------------------------------------------------------


class Formats:
    """``to_markdown()``, ``to_html()``, ``to_latex()`` and Jupyter's HTML, for any result with a
    ``render(kind)`` method (every report, and results such as counterfactuals)."""

    render: Callable[[str], str]  # declared for the type checker; each subclass defines the method

    def _repr_html_(self) -> str:
        return self.render("html")

    def to_markdown(self) -> str:
        """As GitHub Markdown."""
        return self.render("markdown")

    def to_html(self) -> str:
        """As an HTML fragment."""
        return self.render("html")

    def to_latex(self) -> str:
        """As LaTeX (booktabs tables)."""
        return self.render("latex")


class Rendered(Formats):
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
    def _header(self) -> Sequence[tuple[str, object]]:
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

