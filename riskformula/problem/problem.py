"""A risk-score problem: minimise loss + Σ c0_j·α_j over integer points and binary indicators.

Variables, in this order (one vector ``x``):

* ``λ_0 .. λ_d``  integer points, intercept first (the intercept has no indicator);
* ``α_1 .. α_d``  binary "term j is used" indicators, linked by ``lb_j α_j ≤ λ_j ≤ ub_j α_j``;
* auxiliary columns added by later constraint kinds (binary or integer or continuous).

Every operational constraint is a :class:`LinearRow` over these columns, so the solver
sees one generic "convex loss + linear rows over integer and binary variables" problem.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .loss import LogisticLoss


@dataclass(frozen=True)
class LinearRow:
    """``lower ≤ Σ coefs[k]·x[k] ≤ upper`` with a name to quote in error messages."""

    coefs: dict
    lower: float = -math.inf
    upper: float = math.inf
    name: str = ""


@dataclass
class RiskProblem:
    """Data and constraints of one fit.

    Parameters
    ----------
    loss : the :class:`LogisticLoss` on the training rows.
    coef_lower, coef_upper : integer bounds of λ_1..λ_d (length d).
    c0 : per-term sparsity penalty (length d) or a scalar.
    max_size, min_size : limits on the number of used terms.
    intercept_bounds : ``(lo, hi)``; derived from the data when ``None`` (see
        :func:`intercept_bounds`).
    rows : extra :class:`LinearRow` constraints over the variable vector.
    """

    loss: LogisticLoss
    coef_lower: np.ndarray
    coef_upper: np.ndarray
    c0: np.ndarray | float = 1e-6
    max_size: int | None = None
    min_size: int = 0
    intercept_bounds: tuple[int, int] | None = None
    rows: list = field(default_factory=list)
    aux_lower: np.ndarray = field(default_factory=lambda: np.zeros(0))
    aux_upper: np.ndarray = field(default_factory=lambda: np.zeros(0))
    aux_integer: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    aux_cost: np.ndarray = field(default_factory=lambda: np.zeros(0))
    aux_names: list = field(default_factory=list)

    def __post_init__(self):
        d = self.loss.d
        self.coef_lower = np.asarray(self.coef_lower, dtype=float).reshape(d)
        self.coef_upper = np.asarray(self.coef_upper, dtype=float).reshape(d)
        self.c0 = np.broadcast_to(np.asarray(self.c0, dtype=float), (d,)).copy()
        if self.max_size is None:
            self.max_size = d
        self.max_size = int(min(self.max_size, d))
        if self.intercept_bounds is None:
            self.intercept_bounds = intercept_bounds(self)

    # --- column layout -------------------------------------------------------------------
    @property
    def d(self) -> int:
        return self.loss.d

    @property
    def n_aux(self) -> int:
        return len(self.aux_lower)

    @property
    def n_cols(self) -> int:
        return 2 * self.d + 1 + self.n_aux

    def lam(self, j: int) -> int:
        """Column of λ_j (j = 0 is the intercept)."""
        return j

    def alpha(self, j: int) -> int:
        """Column of α_j for term j = 1..d."""
        return self.d + j

    def aux(self, k: int) -> int:
        return 2 * self.d + 1 + k

    def column_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lo0, hi0 = self.intercept_bounds
        lower = np.concatenate([[lo0], np.minimum(self.coef_lower, 0), np.zeros(self.d), self.aux_lower])
        upper = np.concatenate([[hi0], np.maximum(self.coef_upper, 0), np.ones(self.d), self.aux_upper])
        return lower, upper

    def integer_mask(self) -> np.ndarray:
        return np.concatenate([np.ones(2 * self.d + 1, dtype=bool), self.aux_integer.astype(bool)])

    def cost(self) -> np.ndarray:
        """Linear part of the objective (the loss is added by the solver's epigraph column)."""
        return np.concatenate([np.zeros(self.d + 1), self.c0, self.aux_cost])

    def all_rows(self) -> list[LinearRow]:
        """Indicator links, size limits and the user's rows."""
        rows = []
        for j in range(1, self.d + 1):
            rows.append(LinearRow({self.lam(j): 1.0, self.alpha(j): -self.coef_upper[j - 1]}, upper=0.0,
                                  name=f"link_upper[{j}]"))
            rows.append(LinearRow({self.lam(j): 1.0, self.alpha(j): -self.coef_lower[j - 1]}, lower=0.0,
                                  name=f"link_lower[{j}]"))
        if self.d and (self.max_size < self.d or self.min_size > 0):
            rows.append(LinearRow({self.alpha(j): 1.0 for j in range(1, self.d + 1)},
                                  lower=float(self.min_size), upper=float(self.max_size), name="model size"))
        return rows + list(self.rows)

    # --- evaluating candidate solutions -----------------------------------------------------
    def objective(self, lam: np.ndarray, x: np.ndarray | None = None) -> float:
        """True objective of an integer point: loss + Σ c0_j [λ_j ≠ 0] (+ aux cost)."""
        val = self.loss.value(lam) + float(self.c0 @ (lam[1:] != 0))
        if x is not None and self.n_aux:
            val += float(self.aux_cost @ x[2 * self.d + 1:])
        return val

    def complete(self, lam: np.ndarray) -> np.ndarray | None:
        """The full variable vector implied by integer points ``lam`` (α_j = [λ_j ≠ 0]),
        or None when that vector breaks a bound or row, or needs auxiliary columns."""
        if self.n_aux:
            return None
        alpha = (lam[1:] != 0).astype(float)
        x = np.concatenate([lam, alpha])
        return x if self.is_feasible(x) else None

    def is_feasible(self, x: np.ndarray, tol: float = 1e-7) -> bool:
        lower, upper = self.column_bounds()
        if np.any(x < lower - tol) or np.any(x > upper + tol):
            return False
        for r in self.all_rows():
            act = sum(v * x[k] for k, v in r.coefs.items())
            if act < r.lower - tol or act > r.upper + tol:
                return False
        return True


def score_range(problem: RiskProblem) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest attainable score (without intercept) of every unique row,
    under the coefficient bounds and the size limit (seed 001, Proposition 4)."""
    X = problem.loss.Z[:, 1:]
    a = X * problem.coef_lower
    b = X * problem.coef_upper
    lo = np.minimum(np.minimum(a, b), 0.0)
    hi = np.maximum(np.maximum(a, b), 0.0)
    R = problem.max_size
    if R < problem.d:
        # only the R most extreme contributions can be used at once
        lo = np.sort(lo, axis=1)[:, :R]
        hi = -np.sort(-hi, axis=1)[:, :R]
    return lo.sum(axis=1), hi.sum(axis=1)


def intercept_bounds(problem: RiskProblem) -> tuple[int, int]:
    """Integer intercept range that provably contains an optimal intercept.

    With scores s_i ∈ [s_min_i, s_max_i] fixed, the loss is convex in λ_0 and its derivative is
    positive once λ_0 > −min s + log(W+/W−)⁺ and negative once λ_0 < −max s − log(W−/W+)⁺;
    the best integer intercept is within 1 of the real one.  Rows that constrain the intercept
    (side information) need the user to widen this range; the solver reports when it binds.
    """
    s_lo, s_hi = score_range(problem)
    wp, wn = problem.loss.w_pos.sum(), problem.loss.w_neg.sum()
    log_ratio = math.log(wp / wn) if wp > 0 and wn > 0 else 0.0
    hi = -float(s_lo.min()) + max(0.0, log_ratio) + 1
    lo = -float(s_hi.max()) - max(0.0, -log_ratio) - 1
    return int(math.floor(lo)), int(math.ceil(hi))


def loss_bounds(problem: RiskProblem) -> tuple[float, float]:
    """Best- and worst-case loss over the feasible scores (seed 001, Proposition 4)."""
    s_lo, s_hi = score_range(problem)
    b0_lo, b0_hi = problem.intercept_bounds
    L = problem.loss
    lo = L._norm * (L.w_pos @ np.logaddexp(0, -(s_hi + b0_hi)) + L.w_neg @ np.logaddexp(0, s_lo + b0_lo))
    hi = L._norm * (L.w_pos @ np.logaddexp(0, -(s_lo + b0_lo)) + L.w_neg @ np.logaddexp(0, s_hi + b0_hi))
    return float(lo), float(hi)
