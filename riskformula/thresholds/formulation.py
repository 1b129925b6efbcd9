"""How a threshold term enters the optimization problem (through the problem builder's primitives).

* **threshold(x), one cut** — one column ``1[x ≤ c]`` per candidate cut with points δ_c and a size
  group with ``max_used=1``: at most one cut, counted once toward ``max_size`` by Σ_c α_c itself.
  Molero-Río and D'Ambrosio (2025) score w≤·b + w≥·(1 − b) = w≥ + (w≤ − w≥)·b with w≤, w≥ ∈ [lb, ub];
  the intercept absorbs w≥ and δ = w≤ − w≥ ranges over exactly [lb − ub, ub − lb], so the two
  problems have the same optimal loss (exact), with half the columns and no symmetric copies.
* **threshold(x, k=m) / cut(x, [...])** — the same columns, a group with ``max_used=m`` and "every
  interval's points within [lb, ub]": running sums S_r = Σ_{s ≥ r} δ_s (continuous auxiliaries,
  chained S_r = S_{r+1} + δ_r), M ≥ max(0, S), m ≤ min(0, S), M − m ≤ ub − lb.  Some shift T puts
  all levels T + S_r and T in [lb, ub] iff max − min ≤ ub − lb, so this is exact too (O(cuts) rows).
"""

from __future__ import annotations

import math

import numpy as np


def interval_range(lower, upper) -> tuple[int, int]:
    """Range of every interval's points from the point bounds of a term's columns: the widest
    bounds, with 0 included (the top interval's points, moved into the intercept, may be 0)."""
    return int(min(float(np.min(lower)), 0.0)), int(max(float(np.max(upper)), 0.0))


def formulate(term, b) -> None:
    """Columns, size group and level rows of one threshold term, written into builder ``b``."""
    cols = list(term.columns)
    lb, ub = interval_range(*b.bounds(cols))
    b.set_bounds(cols, lb - ub, ub - lb)
    k = min(term.k, len(cols))
    b.add_group(cols, max_used=k if k < len(cols) else None, name=term.term)
    if k >= 2:
        _level_rows(b, term.term, cols, ub - lb)


def _level_rows(b, name: str, cols: list, width: float) -> None:
    idx = np.asarray(cols)

    def running(lam, alpha):
        return np.cumsum(lam[1:][idx][::-1])[::-1]

    m = len(cols)
    S = [b.add_aux(-width, width, integer=False, name=f"{name}: level {r}",
                   fill=lambda lam, alpha, r=r: running(lam, alpha)[r]) for r in range(m)]
    top = b.add_aux(0.0, width, integer=False, name=f"{name}: max level",
                    fill=lambda lam, alpha: max(0.0, running(lam, alpha).max()))
    bot = b.add_aux(-width, 0.0, integer=False, name=f"{name}: min level",
                    fill=lambda lam, alpha: min(0.0, running(lam, alpha).min()))
    row = f"{name}: points of every interval within the coefficient range"
    for r in range(m):
        nxt = {S[r + 1]: -1.0} if r + 1 < m else {}
        b.add_row({S[r]: 1.0, **nxt, b.layout.lam(cols[r]): -1.0}, 0.0, 0.0, row)
        b.add_row({top: 1.0, S[r]: -1.0}, 0.0, math.inf, row)
        b.add_row({S[r]: 1.0, bot: -1.0}, 0.0, math.inf, row)
    b.add_row({top: 1.0, bot: -1.0}, -math.inf, width, row)
