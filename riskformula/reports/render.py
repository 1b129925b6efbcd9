"""The one place that turns numbers and tables into text (tabulate).

Report objects keep their content as pandas DataFrames and ``(label, value)`` pairs;
this module only decides how those look in plain text, Markdown, HTML and LaTeX.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from tabulate import tabulate

#: tabulate formats for each output kind
FORMATS = {"text": "simple", "markdown": "github", "html": "html", "latex": "latex_booktabs"}


def fmt_percent(p: float, digits: int = 1) -> str:
    """``0.1234 -> '12.3%'``; tiny and huge risks keep their sign of extremity."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "NA"
    x = 100.0 * p
    low = 10.0 ** (-digits)
    if 0 < x < low:
        return f"<{low:.{digits}f}%"
    if 100 - low < x < 100:
        return f">{100 - low:.{digits}f}%"
    return f"{x:.{digits}f}%"


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
    try:
        g = float(gap)
    except (TypeError, ValueError):
        return "NA"
    if math.isnan(g) or math.isinf(g):
        return "NA"
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


class Rendered:
    """Mixin for report objects: everything follows from ``render(kind)``."""

    def render(self, kind: str = "text") -> str:  # pragma: no cover - every report defines it
        raise TypeError(f"{type(self).__name__} must define render(kind)")

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
