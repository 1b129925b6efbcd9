"""A threshold term of a design: its columns and cuts, its formulation, and how the card shows it.

How a term is scored: with points δ_c on the columns ``1[x ≤ c]``, each cut with points is one card
item, ``x ≤ c`` (δ > 0) or ``x > c`` (points −δ, the intercept taking δ); :meth:`ThresholdTerm.items`
lists them and :func:`levels` gives the points of every interval between the chosen cuts (what
counterfactuals and reasons move between).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import numpy as np
from formulaic.utils.code import format_expr, sanitize_variable_names

from ..errors import FormulaError
from .formulation import formulate, shown_above, term_range


@dataclass(frozen=True)
class ThresholdTerm:
    """A ``threshold(...)``/``cut(...)`` term of a design: its columns (0-based), cuts and limit k."""

    term: str
    variable: str
    kind: str
    cuts: tuple
    columns: tuple
    k: int
    on_grid: bool
    n_distinct: int | None
    #: its variable has a missing item (``missing="item"``): cuts are shown as ``x ≤ c`` when that
    #: lies in range, so a missing value (in no interval) scores exactly its item's points
    missing_item: bool = False

    # --- the fit --------------------------------------------------------------------------
    def apply(self, builder) -> None:
        """Write the term's limit on its cuts into a problem builder."""
        formulate(self, builder)

    # --- the fitted term ------------------------------------------------------------------
    def range(self, lower, upper) -> tuple[int, int]:
        """[lb, ub] of the term's item points, from the point bounds of all design columns."""
        return term_range(lower, upper, self.columns)

    def levels(self, points, lower, upper) -> tuple[list[int], np.ndarray, float]:
        """Chosen cuts, points per interval and card shift of the fitted points of all design
        columns (``points``, ``lower``, ``upper`` indexed by design column), see :func:`levels`."""
        return levels(np.asarray(points)[list(self.columns)], *self.range(lower, upper), below_first=self.missing_item)

    def items(self, points, lower, upper) -> list[tuple[str, int, int, bool]]:
        """The card items of the fitted points of all design columns: ``(label, points, cut
        index, above)`` per cut with points, lowest cut first; ``above`` means ``x > c``."""
        lb, ub = self.range(lower, upper)
        delta = np.asarray(points)[list(self.columns)]
        out = []
        for i, d in enumerate(delta):
            if d == 0:
                continue
            if shown_above(d, lb, ub, self.missing_item):
                out.append((f"{self.variable} > {self.cuts[i]:.6g}", int(-d), i, True))
            else:
                out.append((f"{self.variable} ≤ {self.cuts[i]:.6g}", int(d), i, False))
        return out


def levels(delta: np.ndarray, lb: float = -5, ub: float = 5,
           below_first: bool = False) -> tuple[list[int], np.ndarray, float]:
    """Points per interval of a fitted threshold term, as its card items add up.

    ``delta`` are the fitted points on the term's ``1[x ≤ c]`` columns.  The card shows a cut as
    ``x ≤ c`` with δ points or as ``x > c`` with −δ points (:func:`shown_above` for the range
    [lb, ub]), so a row's points from the term are Σ_{c ≥ x} δ_c + T, with the card shift T (the
    points of the ``x > c`` items) taken from the intercept.  Returns the chosen cut indices, the
    points of each interval between them (lowest first) and T.

    Examples
    --------
    >>> chosen, lv, t = levels(np.array([2.0, 0.0, -3.0]))
    >>> chosen, lv.tolist(), t
    ([0, 2], [2.0, 0.0, 3.0], 3.0)
    """
    chosen = [i for i in range(len(delta)) if delta[i] != 0]
    if not chosen:
        return [], np.zeros(1), 0.0
    d = np.asarray(delta, float)[chosen]
    t = float(sum(-x for x in d if shown_above(x, lb, ub, below_first)))
    rel = np.concatenate([np.cumsum(d[::-1])[::-1], [0.0]])  # points − T per interval
    return chosen, rel + t, t


def levels_by_term(thresholds, points, lower, upper) -> dict:
    """term -> (chosen cut indices, points per interval, card shift) of every threshold term."""
    return {t.term: t.levels(points, lower, upper) for t in thresholds}


def score_shift(thresholds, points, lower, upper) -> int:
    """Sum of the threshold terms' card shifts (the points of their ``x > c`` items), which the
    card moves from the intercept onto the items."""
    return int(sum(s for _, _, s in levels_by_term(thresholds, points, lower, upper).values()))


def first_argument(term: str) -> str:
    """``"threshold(age, k=2)"`` -> ``"age"``: the first argument of a function-call term."""
    inner = term[term.index("(") + 1:]
    depth, quoted = 0, False
    for i, ch in enumerate(inner):
        if ch == "`":  # a backtick-quoted name may hold any character: `a, b (mg)`
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return inner[:i].strip()
            depth -= 1
        elif ch == "," and depth == 0:
            return inner[:i].strip()
    return inner.strip()


def _state_key(term: str) -> str:
    try:
        return format_expr(ast.parse(sanitize_variable_names(term, {}, {}), mode="eval").body)
    except SyntaxError:
        return term


#: a call of the formula function threshold() or cut() (not ``pd.cut(`` or ``my_cut(``)
_CALL = re.compile(r"(?<![\w.])(threshold|cut)\(")


def top_level_parts(text: str, separators: str) -> list[tuple[str, str]]:
    """``text`` split at each character of ``separators`` outside brackets, quotes and backticks:
    (the separator before each part, "" for the first; the part, stripped).  ``"0+x - I(x-1)"``
    at ``"+-"`` -> ``[("", "0"), ("+", "x"), ("-", "I(x-1)")]``."""
    parts, sep, start, depth, quote = [], "", 0, 0, None
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch in separators and depth == 0:
            parts.append((sep, text[start:i].strip()))
            sep, start = ch, i + 1
    parts.append((sep, text[start:].strip()))
    return parts


def threshold_terms(spec, columns, column_terms) -> list[ThresholdTerm]:
    """The threshold/cut terms of a formulaic ModelSpec, with their design column positions."""
    out = []
    states = spec.transform_state
    for term in dict.fromkeys(t for t in column_terms if t is not None):
        if not (term.startswith("threshold(") or term.startswith("cut(")) or len(top_level_parts(term, ":")) > 1:
            if _CALL.search(term):
                raise FormulaError(f"the term {term!r} combines a threshold with something else; a threshold "
                                   "must be a term of its own (interactions of thresholds are not supported).")
            continue
        # formulaic keys the state by the expression with `quoted names` made Python names
        st = states.get(term) or states.get(_state_key(term))
        if not st or "cuts" not in st:
            raise FormulaError(f"could not find the cut points of the term {term!r}; if its variable name "
                               "needs `backticks`, rename the column to a plain name.")
        by_key = {f"{term}[{k}]": i for i, k in enumerate(st["keys"])}
        cols: list[int | None] = [None] * len(st["keys"])
        for j, name in enumerate(columns):
            if name in by_key:
                cols[by_key[name]] = j
        out.append(ThresholdTerm(term=term, variable=first_argument(term).strip("`"), kind=st["kind"],
                                 cuts=tuple(st["cuts"]), columns=tuple(cols), k=int(st["k"]),
                                 on_grid=bool(st["on_grid"]), n_distinct=st["n_distinct"]))
    return out


#: the quantile grid of cuts a fit searches first for a start (:func:`coarse_columns`), and that
#: the notes of a fit stopped before its certificate suggest: with it fair, anes96, rossi and gbsg2
#: (``benchmarks/heldout.py``, size 5) were certified within 60 s, where anes96's and gbsg2's
#: classes of every gap were not in 600 s
COARSE_GRID = 10


def coarse_columns(design, grid: int = COARSE_GRID) -> list[int] | None:
    """The columns of a training design (a :class:`~riskformula.design.DesignMatrix`) with each
    ``threshold()`` term of more than ``grid`` cuts thinned to the ``grid`` cuts nearest the evenly
    spaced quantiles of the training rows (by the share of rows on each side of a cut, as the
    design's column holds it): a smaller class of risk scores, each of them in the design's class,
    for the support search to start from; None when no term is thinned."""
    X = design.X
    drop: set[int] = set()
    for t in design.spec.thresholds:
        if t.kind != "threshold" or len(t.columns) <= grid:
            continue
        cols = list(t.columns)
        share = np.asarray(X[:, cols], dtype=float).mean(axis=0)
        if share[0] > share[-1]:
            share = 1.0 - share  # the share of rows at or below each cut, rising along the cuts
        chosen = {int(np.argmin(np.abs(share - q))) for q in np.arange(1, grid + 1) / (grid + 1)}
        drop.update(c for i, c in enumerate(cols) if i not in chosen)
    if not drop:
        return None
    return [j for j in range(X.shape[1]) if j not in drop]
