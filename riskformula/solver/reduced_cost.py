"""Reduced-cost fixing: bounds of integer columns that no improving solution can break.

A node LP's dual bound (:meth:`NodeLP.dual_bound`) is ``B + Σ_j min(d_j·l_j, d_j·u_j)`` over
the node's box; it is separable in the columns, so moving an integer column ``j`` from the bound
its reduced cost ``d_j`` prefers by ``t`` raises it by ``|d_j|·t``.  Once that reaches the prune
level (the incumbent minus the gap tolerance), every solution with the column moved that far
is pruned with it: the column's range shrinks (a "used" indicator or a threshold cut is fixed
to 0 when ``t = 1`` already reaches it).  Valid in the subtree of the node whose LP gave the
duals; at the root, everywhere.  The excluded solutions' bound is returned too, so the solver's
lower bound never rises above them (as for nodes pruned by the tolerance).
"""

from __future__ import annotations

import math

import numpy as np


def fixings(bound: float, d: np.ndarray, lower: np.ndarray, upper: np.ndarray, integer: np.ndarray,
            level: float):
    """New bounds of integer columns implied by the dual bound ``bound`` with reduced costs ``d``
    over the box ``lower``/``upper`` and the prune level ``level``.

    Returns ``(cols, new_lower, new_upper, excluded)``: the columns whose range shrinks, their new
    ranges, and the least dual bound of the solutions taken out (≥ ``level``); None when nothing
    shrinks or ``bound`` is not below ``level`` (then the whole box is pruned, not fixed).

    Examples
    --------
    >>> fixings(1.0, np.array([0.5, -0.1, 0.0]), np.zeros(3), np.ones(3), np.ones(3, bool), 1.2)
    (array([0]), array([0.]), array([0.]), 1.5)
    """
    if not (math.isfinite(bound) and math.isfinite(level)) or bound >= level:
        return None
    room = level - bound
    n = len(integer)
    d, lower, upper = d[:n], lower[:n], upper[:n]
    cand = integer & (upper > lower) & (d != 0)
    with np.errstate(divide="ignore", over="ignore"):
        steps = np.floor(room / np.abs(d))  # the largest move whose bound may stay below the level
    span = upper - lower
    up = cand & (d > 0) & (steps < span)     # at its lower bound: cap the upper one
    down = cand & (d < 0) & (steps < span)   # at its upper bound: raise the lower one
    cols = np.flatnonzero(up | down)
    if not len(cols):
        return None
    new_lo, new_hi = lower[cols].copy(), upper[cols].copy()
    u, dn = up[cols], down[cols]
    new_hi[u] = lower[cols][u] + steps[cols][u]
    new_lo[dn] = upper[cols][dn] - steps[cols][dn]
    excluded = float(np.min(bound + np.abs(d[cols]) * (steps[cols] + 1.0)))
    return cols, new_lo, new_hi, excluded
