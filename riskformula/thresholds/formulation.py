"""How a threshold term enters the optimization problem (through the problem builder's primitives).

One column ``1[x ≤ c]`` per candidate cut with points δ_c: each cut with points is one item of the
card and one unit of the model size, exactly as a binary predictor is (the class of risk-slim and
FasterRisk on quantile indicators, with every gap a candidate).  The card shows a cut as
``x ≤ c`` with δ points or as ``x > c`` with −δ points (the intercept taking δ), whichever lies in
the term's range [lb, ub] (positive points when both do, see :func:`shown_above`), so with
lb ≤ 0 ≤ ub the column's δ ranges over [−M, M], M = max(ub, −lb): exactly the cuts whose item
has points in the range.  A range without 0 keeps δ in [lb, ub] (items ``x ≤ c`` only).

``k`` (the term's limit on its cuts) is a row Σ_c α_c ≤ k; with k = 1 the columns form a size group
with at most one used column, which the solver branches on as one decision (that group counts
exactly its one used cut).
"""

from __future__ import annotations

import math

import numpy as np


def term_range(lower, upper, columns) -> tuple[int, int]:
    """The range [lb, ub] of a threshold term's item points, from its columns' point bounds."""
    cols = list(columns)
    return int(min(lower[j] for j in cols)), int(max(upper[j] for j in cols))


def shown_above(delta: float, lb: float, ub: float, below_first: bool = False) -> bool:
    """Whether a cut with points δ on ``1[x ≤ c]`` is shown as ``x > c`` (with −δ points): when only
    that lies in [lb, ub], or when both do and δ < 0 (positive points read best) — unless
    ``below_first`` (a variable with a missing item): then only when ``x ≤ c`` is out of range, so
    that a missing value, which meets no item of its variable, gets what the fit gives it."""
    below_ok, above_ok = lb <= delta <= ub, lb <= -delta <= ub
    return (not below_ok) or (above_ok and delta < 0 and not below_first)


def formulate(term, b) -> None:
    """Point bounds and the limit on the number of cuts of one threshold term, written into builder ``b``."""
    cols = list(term.columns)
    lo, hi = b.bounds(cols)
    lb, ub = float(np.min(lo)), float(np.max(hi))
    if lb <= 0 <= ub:
        m = max(ub, -lb)
        b.set_bounds(cols, -m, m)
    k = min(term.k, len(cols))
    if k >= len(cols):
        return
    if k == 1:
        b.add_group(cols, max_used=1, name=term.term)
        return
    b.add_row({b.layout.alpha(j): 1.0 for j in cols}, -math.inf, float(k), f"{term.term}: at most {k} cuts")
