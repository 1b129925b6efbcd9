"""A threshold term of a design: its columns and cuts, its formulation, and how the card shows it.

How a term is scored (points per interval, "levels"): with cuts c_1 < … < c_q chosen and points δ_r
on ``1[x ≤ c_r]``, a row in the interval just below c_r gets T + Σ_{s ≥ r} δ_s, the top interval
gets T.  The intercept absorbs T, so the fit only needs the δ's (see
:mod:`riskformula.thresholds.formulation`); :func:`levels` recovers the card's per-interval
points and the shift T, and :meth:`ThresholdTerm.condition` the readable interval conditions.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import numpy as np
from formulaic.utils.code import format_expr, sanitize_variable_names

from ..errors import FormulaError
from .formulation import formulate, interval_range


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

    # --- the fit --------------------------------------------------------------------------
    def interval_range(self, lower, upper) -> tuple[int, int]:
        """Range of each interval's points, from the point bounds of all design columns."""
        cols = list(self.columns)
        return interval_range(np.asarray(lower)[cols], np.asarray(upper)[cols])

    def apply(self, builder) -> None:
        """Write the term's columns, size group and level rows into a problem builder."""
        formulate(self, builder)

    # --- the fitted term ------------------------------------------------------------------
    def levels(self, points, interval_range: tuple) -> tuple[list[int], np.ndarray, float]:
        """Chosen cuts, points per interval and shift of the fitted points of all design
        columns (``points`` indexed by design column), see :func:`levels`."""
        lb, ub = interval_range
        return levels(np.asarray(points)[list(self.columns)], lb, ub)

    def condition(self, r: int, chosen: list[int]) -> str:
        """Readable condition of interval r (0 = lowest) between the chosen cuts (indices into cuts)."""
        c = [self.cuts[i] for i in chosen]
        x = self.variable
        if r == 0:
            return f"{x} ≤ {c[0]:.6g}"
        if r == len(c):
            return f"{x} > {c[-1]:.6g}"
        return f"{c[r - 1]:.6g} < {x} ≤ {c[r]:.6g}"

    def card_rows(self, points, interval_range: tuple) -> list[tuple[str, int]]:
        """``(condition, points)`` of every interval with nonzero points, lowest first."""
        chosen, lv, _ = self.levels(points, interval_range)
        return [(self.condition(r, chosen), int(p)) for r, p in enumerate(lv) if chosen and p != 0]


def levels(delta: np.ndarray, lower: float, upper: float) -> tuple[list[int], np.ndarray, float]:
    """Points per interval of a fitted threshold term.

    ``delta`` are the fitted points on the term's ``1[x ≤ c]`` columns.  Returns the chosen cut
    indices, the points of each interval (lowest first) and the shift T moved out of the
    intercept: the top interval's points, chosen as close to 0 as the range [lower, upper] allows.
    """
    chosen = [i for i in range(len(delta)) if delta[i] != 0]
    if not chosen:
        return [], np.zeros(1), 0.0
    d = np.asarray(delta, float)[chosen]
    rel = np.concatenate([np.cumsum(d[::-1])[::-1], [0.0]])  # level − T per interval
    lo_t, hi_t = lower - rel.min(), upper - rel.max()
    t = float(min(max(0.0, lo_t), hi_t)) if lo_t <= hi_t else 0.0
    return chosen, rel + t, t


def levels_by_term(thresholds, points, ranges: dict) -> dict:
    """term -> (chosen cut indices, points per interval, shift) of every threshold term.

    ``ranges`` maps a term to its interval range (see :meth:`ThresholdTerm.interval_range`);
    (−5, 5) when missing."""
    return {t.term: t.levels(points, ranges.get(t.term, (-5, 5))) for t in thresholds}


def score_shift(thresholds, points, ranges: dict) -> int:
    """Sum of the threshold terms' top-interval points, moved out of the intercept."""
    return int(sum(s for _, _, s in levels_by_term(thresholds, points, ranges).values()))


def first_argument(term: str) -> str:
    """``"threshold(age, k=2)"`` -> ``"age"``: the first argument of a function-call term."""
    inner = term[term.index("(") + 1:]
    depth = 0
    for i, ch in enumerate(inner):
        if ch in "([{":
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


def threshold_terms(spec, columns, column_terms) -> list[ThresholdTerm]:
    """The threshold/cut terms of a formulaic ModelSpec, with their design column positions."""
    out = []
    states = spec.transform_state
    for term in dict.fromkeys(t for t in column_terms if t is not None):
        if not (term.startswith("threshold(") or term.startswith("cut(")):
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
        cols = [None] * len(st["keys"])
        for j, name in enumerate(columns):
            if name in by_key:
                cols[by_key[name]] = j
        out.append(ThresholdTerm(term=term, variable=first_argument(term).strip("`"), kind=st["kind"],
                                 cuts=tuple(st["cuts"]), columns=tuple(cols), k=int(st["k"]),
                                 on_grid=bool(st["on_grid"]), n_distinct=st["n_distinct"]))
    return out
