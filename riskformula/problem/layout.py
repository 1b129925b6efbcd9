"""Where each variable of a risk-score problem sits in the one variable vector ``x``.

``x = [λ_0, λ_1 .. λ_d, α_1 .. α_d, aux_0 .. aux_{m−1}]``:

* ``λ_0`` is the intercept (no indicator), ``λ_{1+j}`` the integer points of design column ``j``;
* ``α_{1+j}`` the binary "column j is used" indicator, linked by ``lb_j α ≤ λ ≤ ub_j α``;
* auxiliary columns: those the formulation adds (a threshold's running sums, a term's "used"
  binary), then one binary per size group.

Design columns are numbered from 0 everywhere; this object is the only place that turns such
a number into a position in ``x``.  The builder, the problem, the solver and the heuristics all
use it, so the layout cannot drift between them.  A λ vector (``x[layout.lam_slice]``) has the
intercept first, so column ``j``'s points are ``lam[1 + j]``.

Examples
--------
>>> layout = VariableLayout(d=3, n_aux=2)
>>> layout.intercept, layout.lam(0), layout.alpha(0), layout.aux(1), layout.n_cols
(0, 1, 4, 8, 9)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class VariableLayout:
    """Positions of λ, α and auxiliary variables for ``d`` design columns and ``n_aux`` auxiliaries."""

    d: int
    n_aux: int = 0

    #: position of the intercept λ_0
    intercept = 0

    def lam(self, j):
        """Position of the points of design column ``j`` (0-based; an int or an integer array)."""
        return 1 + np.asarray(j) if isinstance(j, (list, tuple, np.ndarray)) else 1 + j

    def alpha(self, j):
        """Position of the "used" indicator of design column ``j`` (0-based)."""
        return 1 + self.d + np.asarray(j) if isinstance(j, (list, tuple, np.ndarray)) else 1 + self.d + j

    def aux(self, k: int) -> int:
        """Position of auxiliary variable ``k`` (0-based, in the order they were added)."""
        return 1 + 2 * self.d + k

    @property
    def n_cols(self) -> int:
        return 1 + 2 * self.d + self.n_aux

    @property
    def lam_slice(self) -> slice:
        """The λ vector: intercept, then the points of every design column."""
        return slice(0, self.d + 1)

    @property
    def alpha_slice(self) -> slice:
        return slice(self.d + 1, 2 * self.d + 1)

    @property
    def aux_slice(self) -> slice:
        return slice(2 * self.d + 1, 2 * self.d + 1 + self.n_aux)

    def with_aux(self, n_aux: int) -> "VariableLayout":
        """The same layout with ``n_aux`` auxiliary variables."""
        return replace(self, n_aux=int(n_aux))
