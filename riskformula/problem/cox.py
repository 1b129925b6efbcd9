"""The Cox partial likelihood of an integer score: the loss of a time-to-event risk score.

For rows with follow-up times ``t_i``, event indicators ``δ_i`` (1 = event, 0 = censored), sample
weights ``w_i`` and linear predictor ``η_i = s_i / m`` (the score ``s_i = x_i·λ`` in points over the
scale ``m``: ``m`` points are one log hazard ratio), the negative log partial likelihood of Cox
(1972), with tied event times handled as Breslow (1974) or Efron (1977) proposed, is

* Breslow: ``Σ_g W_g log Σ_{j ∈ R_g} w_j e^{η_j} − Σ_i δ_i w_i η_i``;
* Efron: ``Σ_g (W_g / d_g) Σ_{k=0}^{d_g−1} log(Σ_{j ∈ R_g} w_j e^{η_j} − (k / d_g) Σ_{j ∈ D_g} w_j e^{η_j})
  − Σ_i δ_i w_i η_i``,

over the distinct event times ``g``: ``R_g`` the rows still at risk (time ≥ ``t_g``), ``D_g`` the
events at ``t_g`` (``d_g`` rows, weight ``W_g``).  These are the conventions of R's
``survival::coxph`` (weights included), whose default is Efron's.  :class:`CoxLoss` divides the
sum by the total weight Σ w_i (a mean per row, as the logistic loss is).

Each term is the log of a positive combination of exponentials of the scores minus a linear
function of them, so the loss is convex in the points λ and its linearizations are valid cuts
everywhere: the branch-and-cut of :mod:`riskformula.solver.branch_and_cut` certifies it as it does
the logistic loss.  The loss does not change when every score moves by the same amount, so it has
no intercept: a problem built on it fixes λ_0 = 0 (:func:`cox_problem`), and the gradient in λ_0
is 0.  The baseline hazard that turns a score into a risk within a time is estimated after the
fit, from the same rows (Breslow, 1974; see :mod:`riskformula.reports.survival_metrics`).

Rows with the same predictors, the same time and the same event indicator are merged into one
row whose weight is their total weight and whose count is their number: both sums above are the
same on the merged rows (Efron's ``d_g`` counts rows, so the counts are kept), so the loss is
exactly the loss of the raw rows.
"""

from __future__ import annotations

import copy
import math
from typing import cast

import numpy as np

from ..errors import DataError, SettingsError
from .loss import _Cache, distinct_rows

__all__ = ["CoxLoss", "cox_problem", "TIES"]

#: ways to handle tied event times
TIES = ("efron", "breslow")


class CoxLoss:
    """l(λ) = −log PL(X λ / m) / Σ_i w_i on merged rows (see the module's docstring).

    Parameters
    ----------
    X : (n, d) predictors (no intercept column).
    time : (n,) follow-up times (finite, ≥ 0).
    event : (n,) 1 for an event at ``time``, 0 for a row censored then.
    weights : (n,) nonnegative sample weights, default 1.
    ties : ``"efron"`` (Efron, 1977; the default, as in R's ``coxph``) or ``"breslow"`` (Breslow, 1974).
    scale : the score scale m > 0: a score difference of m points is one log hazard ratio.

    ``lam`` vectors have the layout of the other losses: ``[λ_0, λ_1..λ_d]``; λ_0 is ignored (the
    loss is invariant to a shift of every score) and its gradient is 0.

    Examples
    --------
    >>> import numpy as np
    >>> f = CoxLoss(np.array([[1.0], [0.0], [0.0]]), time=[1.0, 2.0, 3.0], event=[1, 1, 0])
    >>> round(f.value(np.zeros(2)), 6)  # (log 3 + log 2) / 3
    0.597253
    """

    #: the loss does not depend on the intercept (a shift of every score)
    has_intercept = False
    real_intercept = False
    #: scores are never looked up in a table of whole logits
    integral = False

    def __init__(self, X, time, event, weights=None, ties: str = "efron", scale: float = 1.0):
        if ties not in TIES:
            raise SettingsError(f"`ties` must be one of {list(TIES)}; got {ties!r}.")
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"`X` must be a 2-d array; got {X.ndim} dimension(s).")
        n = X.shape[0]
        time = np.asarray(time, dtype=float).reshape(-1)
        event = np.asarray(event)
        w = np.ones(n) if weights is None else np.asarray(weights, dtype=float).reshape(-1)
        if len(time) != n or len(event) != n or len(w) != n:
            raise DataError(f"`X` has {n} rows but `time`, `event` and `weights` have {len(time)}, {len(event)} "
                            f"and {len(w)}.")
        if not np.all(np.isfinite(time)) or np.any(time < 0):
            raise DataError("every follow-up time must be a finite number ≥ 0.")
        if not np.all((event == 0) | (event == 1)):
            raise DataError("`event` must hold 0 (censored) and 1 (event) only.")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
            raise DataError("`weights` must be finite, ≥ 0 and not all 0.")
        event = event.astype(bool)
        if not np.any(event & (w > 0)):
            raise DataError("every row is censored (or has weight 0): the partial likelihood needs events.")
        self.ties = ties
        self.n_raw = n
        self.total_weight = float(w.sum())
        self._norm = 1.0 / self.total_weight
        # merge rows equal in predictors, time and event; then order them by time
        uniq, inverse = distinct_rows(np.column_stack([X, time, event.astype(float)]))
        m = uniq.shape[0]
        order = np.lexsort((uniq[:, -1], uniq[:, -2]))  # by time, censored before events at a time
        rank = np.empty(m, dtype=np.intp)
        rank[order] = np.arange(m)
        inverse = rank[inverse]
        uniq = uniq[order]
        self.time = uniq[:, -2].copy()
        self.event = uniq[:, -1] == 1.0
        self.w = np.bincount(inverse, weights=w, minlength=m)
        self.row_counts = np.bincount(inverse, minlength=m)
        self.row_events = np.where(self.event, self.row_counts, 0).astype(np.int64)
        X_u = uniq[:, :-2]
        self.Z = np.hstack([np.ones((m, 1)), X_u])
        self.n_unique = m
        self._integer_scores = bool(np.all(X_u == np.round(X_u)))
        # no 0/1 or sparse shortcuts: the heuristics then score every move on whole score vectors
        self.binary = np.zeros(X_u.shape[1], dtype=bool)
        self.X_binary_T = np.zeros((0, m))
        self._setup_ties()
        self.scale = 1.0
        self._score_ranges = _Cache()
        self._set_scale(scale)

    def _setup_ties(self) -> None:
        """Index arrays of the distinct event times (groups g) and of Efron's terms k."""
        t, ev, w = self.time, self.event, self.w
        ev_rows = np.flatnonzero(ev & (w > 0))
        # groups: the distinct times with an event of positive weight
        g_time, g_of_ev = np.unique(t[ev_rows], return_inverse=True)
        G = len(g_time)
        self.g_time = g_time
        # rows are sorted by time: the risk set of g starts at the first row with time ≥ t_g
        self.g_start = np.searchsorted(t, g_time, side="left")
        # and the rows after t_g start here
        self.g_after = np.searchsorted(t, g_time, side="right")
        self.g_weight = np.bincount(g_of_ev, weights=w[ev_rows], minlength=G)  # W_g
        self.g_count = np.bincount(g_of_ev, weights=self.row_counts[ev_rows], minlength=G).astype(np.int64)  # d_g
        self.ev_rows, self.g_of_ev = ev_rows, g_of_ev
        # the censored rows (and events of weight 0) at t_g belong to A_g = R_g \ D_g
        in_g = np.full(len(t), -1)
        pos = np.searchsorted(g_time, t)
        hit = (pos < G) & (g_time[np.minimum(pos, G - 1)] == t)
        in_g[hit] = pos[hit]
        self.row_group = in_g  # the group at each row's own time (−1: no event then)
        self.row_is_tied_event = ev & (w > 0)
        self.cens_at = np.flatnonzero((in_g >= 0) & ~self.row_is_tied_event)
        # the same sums as sparse 0/1 matrices (groups × rows): one product per sum, for vectors and
        # for matrices of scores alike
        from scipy.sparse import csr_matrix
        m = len(t)
        self._sum_events = csr_matrix((np.ones(len(ev_rows)), (g_of_ev, ev_rows)), shape=(G, m))
        self._sum_censored = csr_matrix((np.ones(len(self.cens_at)), (in_g[self.cens_at], self.cens_at)),
                                        shape=(G, m))
        # Efron's terms: for group g, k = 0..d_g−1 with coefficient W_g/d_g and fraction (1 − k/d_g);
        # Breslow has one term per group with coefficient W_g and fraction 1
        if self.ties == "efron":
            counts = self.g_count
            self.k_group = np.repeat(np.arange(G), counts)
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            k = np.arange(int(counts.sum())) - np.repeat(starts, counts)
            self.k_frac = 1.0 - k / np.repeat(counts, counts)
            self.k_coef = np.repeat(self.g_weight / counts, counts)
        else:
            self.k_group = np.arange(G)
            self.k_frac = np.ones(G)
            self.k_coef = self.g_weight.copy()
        # Σ_i δ_i w_i η_i reads these weights
        self.event_weight = np.where(self.row_is_tied_event, w, 0.0)

    def _set_scale(self, scale: float) -> None:
        scale = float(scale)
        if not (math.isfinite(scale) and scale > 0):
            raise SettingsError(f"the score scale must be a number > 0; got {scale!r}.")
        self.scale = scale

    @property
    def integer_scores(self) -> bool:
        """Whether integer points give integer scores (integer predictors)."""
        return self._integer_scores

    @property
    def d(self) -> int:
        """Number of predictors (the intercept column of :attr:`Z` not counted)."""
        return self.Z.shape[1] - 1

    def with_scale(self, scale: float) -> "CoxLoss":
        """The same loss (sharing the merged rows) with score scale ``scale``."""
        other = copy.copy(self)
        other._set_scale(scale)
        return other

    def sparse_columns(self) -> dict:
        """None of the shortcuts of a loss that is a sum over rows: the partial likelihood is not."""
        return {}

    def margins(self, lam: np.ndarray) -> np.ndarray:
        """Scores x·λ of every merged row (λ_0 ignored)."""
        return self.Z[:, 1:] @ np.asarray(lam)[1:]

    # --- the loss ------------------------------------------------------------------------
    def _denominators(self, eta: np.ndarray):
        """e_j = w_j exp(η_j − c) (c the largest η, per column) and, per term k, Efron's denominator
        A_g + f_k S_g (A_g: the weight at risk at t_g outside the events then; S_g: the events'), and c."""
        c = eta.max(axis=0)
        e = self.w.reshape((-1,) + (1,) * (eta.ndim - 1)) * np.exp(eta - c)
        # reverse cumulative sums: R[i] = Σ_{j ≥ i} e_j (rows sorted by time)
        R = np.concatenate([np.cumsum(e[::-1], axis=0)[::-1], np.zeros((1,) + e.shape[1:])], axis=0)
        after = R[self.g_after]  # time > t_g
        S = self._sum_events @ e
        A = after + self._sum_censored @ e
        f = self.k_frac.reshape((-1,) + (1,) * (eta.ndim - 1))
        D = A[self.k_group] + f * S[self.k_group]
        return e, D, c

    def _log_denominators(self, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log(w_j e^{η_j}) per row and log of Efron's denominators per term, by log-sum-exps: no
        term underflows, whatever the spread of the scores (the path :meth:`_denominators` takes
        only when its shifted exponentials could underflow)."""
        with np.errstate(divide="ignore"):
            lw = np.log(self.w).reshape((-1,) + (1,) * (eta.ndim - 1))
        x = lw + eta
        tail = np.full((1,) + x.shape[1:], -np.inf)
        R = np.concatenate([np.logaddexp.accumulate(x[::-1], axis=0)[::-1], tail], axis=0)
        G = len(self.g_time)
        cens = np.full((G,) + x.shape[1:], -np.inf)
        np.logaddexp.at(cens, self.row_group[self.cens_at], x[self.cens_at])
        S = np.full((G,) + x.shape[1:], -np.inf)
        np.logaddexp.at(S, self.g_of_ev, x[self.ev_rows])
        logA = np.logaddexp(R[self.g_after], cens)
        f = np.log(self.k_frac).reshape((-1,) + (1,) * (eta.ndim - 1))
        return x, np.logaddexp(logA[self.k_group], f + S[self.k_group])

    def _log_d(self, eta: np.ndarray) -> np.ndarray:
        """log of Efron's denominators (unshifted), per term."""
        _, D, c = self._denominators(eta)
        if np.all(D > 1e-250):
            return np.log(D) + c
        return self._log_denominators(eta)[1]

    def _eta(self, s: np.ndarray) -> np.ndarray:
        return s / self.scale if self.scale != 1.0 else s

    def value_from_scores(self, s: np.ndarray, integral: bool = False) -> float | np.ndarray:
        """Loss of scores ``s`` in points (one per merged row; column-wise for a (rows, k) matrix).
        ``integral`` is accepted for the interface of the other losses and ignored."""
        eta = self._eta(np.asarray(s, dtype=float))
        val = self.k_coef @ self._log_d(eta) - self.event_weight @ eta
        return float(self._norm * val) if eta.ndim == 1 else self._norm * val

    def value(self, lam: np.ndarray) -> float:
        """l(λ)."""
        return cast(float, self.value_from_scores(self.margins(lam)))

    def _score_gradient(self, eta: np.ndarray) -> tuple[float, np.ndarray]:
        """The loss and its gradient in η (one entry per merged row), for a vector η."""
        # row j is in A_g for every g with t_g < t_j, and for g at t_j when it is not an event there
        # (∂/∂A_g: a_g = Σ_k coef_k / D_k); in D_g when it is an event at t_g (b_g = Σ_k coef_k f_k / D_k)
        G = len(self.g_time)
        first = np.searchsorted(self.g_time, self.time, side="left")
        at = self.row_group >= 0
        tied = self.row_is_tied_event[at]
        e, D, c = self._denominators(eta)
        if np.all(D > 1e-250):
            val = self._norm * (float(self.k_coef @ (np.log(D) + c)) - float(self.event_weight @ eta))
            a = np.bincount(self.k_group, weights=self.k_coef / D, minlength=G)
            b = np.bincount(self.k_group, weights=self.k_coef * self.k_frac / D, minlength=G)
            before = np.concatenate([[0.0], np.cumsum(a)])[first]
            own = np.zeros(len(eta))
            own[at] = np.where(tied, b[self.row_group[at]], a[self.row_group[at]])
            return val, self._norm * (e * (before + own) - self.event_weight)
        # the same in logs: e_j / D_k ≤ 1 / f_k for every row j in the sums, so nothing overflows
        x, logD = self._log_denominators(eta)
        val = self._norm * (float(self.k_coef @ logD) - float(self.event_weight @ eta))
        la = np.full(G, -np.inf)
        np.logaddexp.at(la, self.k_group, np.log(self.k_coef) - logD)
        lb = np.full(G, -np.inf)
        np.logaddexp.at(lb, self.k_group, np.log(self.k_coef * self.k_frac) - logD)
        log_before = np.concatenate([[-np.inf], np.logaddexp.accumulate(la)])[first]
        log_own = np.full(len(eta), -np.inf)
        log_own[at] = np.where(tied, lb[self.row_group[at]], la[self.row_group[at]])
        return val, self._norm * (np.exp(x + np.logaddexp(log_before, log_own)) - self.event_weight)

    def value_and_gradient(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        """l(λ) and ∇l(λ) (gradient with respect to [λ_0, λ_1..λ_d]; its λ_0 entry is 0)."""
        return self.value_and_gradient_on(self.Z, np.asarray(lam, dtype=float))

    def value_and_gradient_on(self, Z: np.ndarray, lam: np.ndarray) -> tuple[float, np.ndarray]:
        """l and its gradient for the columns ``Z`` (a column subset of :attr:`Z`, the intercept
        column first when it is there) and real points ``lam`` on them."""
        intercept = np.all(Z[:, 0] == 1.0) if Z.shape[1] else False
        s = Z[:, 1:] @ lam[1:] if intercept else Z @ lam
        val, r = self._score_gradient(self._eta(s))
        g = Z.T @ r / self.scale
        if intercept:
            g[0] = 0.0  # the loss does not depend on a shift of every score
        return val, g

    def hessian_on(self, Z: np.ndarray, lam: np.ndarray) -> np.ndarray | None:
        """The Hessian of l in real points ``lam`` on the columns ``Z`` (as in
        :meth:`value_and_gradient_on`): Σ_k coef_k (E_k[z zᵀ] − E_k[z] E_k[z]ᵀ) / (Σ w · m²), E_k the
        mean over Efron's denominator k (weights w_j e^{η_j}, the tied events' times f_k); the
        intercept's row and column are 0.  None when the scores are so far apart that the shifted
        exponentials underflow (a caller then stops its Newton steps)."""
        intercept = bool(np.all(Z[:, 0] == 1.0)) if Z.shape[1] else False
        Zs = Z[:, 1:] if intercept else Z
        eta = self._eta(Zs @ (lam[1:] if intercept else lam))
        e, D, _ = self._denominators(eta)
        if not np.all(D > 1e-250):
            return None
        G = len(self.g_time)

        def sums(arr):  # per group: the sum over A_g and over D_g
            R = np.concatenate([np.cumsum(arr[::-1], axis=0)[::-1], np.zeros((1,) + arr.shape[1:])], axis=0)
            A = R[self.g_after]
            np.add.at(A, self.row_group[self.cens_at], arr[self.cens_at])
            S = np.zeros((G,) + arr.shape[1:])
            np.add.at(S, self.g_of_ev, arr[self.ev_rows])
            return A, S

        ez = e[:, None] * Zs
        A1, S1 = sums(ez)
        A2, S2 = sums(ez[:, :, None] * Zs[:, None, :])
        kg, f = self.k_group, self.k_frac
        mean = (A1[kg] + f[:, None] * S1[kg]) / D[:, None]
        second = (A2[kg] + f[:, None, None] * S2[kg]) / D[:, None, None]
        cov = second - mean[:, :, None] * mean[:, None, :]
        H = np.tensordot(self.k_coef, cov, axes=1) * (self._norm / self.scale ** 2)
        if intercept:
            full = np.zeros((Z.shape[1], Z.shape[1]))
            full[1:, 1:] = H
            return full
        return H

    @property
    def w_all(self) -> np.ndarray:
        """The weight of each merged row (events and censored rows alike)."""
        return self.w

    # --- bounds for the solver -------------------------------------------------------------
    def bounds_over(self, s_lo: np.ndarray, s_hi: np.ndarray) -> tuple[float, float]:
        """A lower and an upper bound on the loss over every score vector with ``s_lo ≤ s ≤ s_hi``
        (per merged row, in points).

        For group g with mean event score η̄ (weighted), each Efron term is
        ``log(A_g e^{−η̄} + f_k S_g e^{−η̄})`` and the linear part cancels the η̄'s; since
        ``η̄ ≤ max_{D_g} s_hi / m`` and ``S_g e^{−η̄} ≥ W_g`` (Jensen), a term is at least
        ``log(Σ_{A_g} w_j e^{(s_lo_j − max_{D_g} s_hi)/m} + f_k W_g)``; the upper bound swaps the roles
        (``S_g e^{−η̄} ≤ Σ_{D_g} w_j e^{(s_hi_j − min_{D_g} s_lo)/m}``).  Sums are taken as
        log-sum-exps; the results are widened by 10⁻⁹ relative, far above the rounding of a few
        hundred floating-point operations, so the bounds hold as computed."""
        m = self.scale
        G = len(self.g_time)
        lw = np.log(np.maximum(self.w, 1e-300))
        lw[self.w <= 0] = -np.inf

        def at_risk_lse(v):
            """log Σ_{A_g} w_j e^{v_j} for every g."""
            x = lw + v
            R = np.concatenate([np.logaddexp.accumulate(x[::-1])[::-1], [-np.inf]])
            cens = np.full(G, -np.inf)
            np.logaddexp.at(cens, self.row_group[self.cens_at], x[self.cens_at])
            return np.logaddexp(R[self.g_after], cens)

        H = np.full(G, -np.inf)
        np.maximum.at(H, self.g_of_ev, s_hi[self.ev_rows])
        L = np.full(G, np.inf)
        np.minimum.at(L, self.g_of_ev, s_lo[self.ev_rows])
        A_lo = at_risk_lse(s_lo / m) - H / m
        A_hi = at_risk_lse(s_hi / m) - L / m
        S_hi = np.full(G, -np.inf)
        np.logaddexp.at(S_hi, self.g_of_ev, lw[self.ev_rows] + s_hi[self.ev_rows] / m)
        S_hi -= L / m
        kg, f = self.k_group, self.k_frac
        lo = float(self.k_coef @ np.logaddexp(A_lo[kg], np.log(f * self.g_weight[kg])))
        hi = float(self.k_coef @ np.logaddexp(A_hi[kg], np.log(f) + S_hi[kg]))
        lo, hi = self._norm * lo, self._norm * hi
        return lo - 1e-9 * (1 + abs(lo)), hi + 1e-9 * (1 + abs(hi))

    def gradient_lipschitz(self) -> float:
        """An upper bound on the Lipschitz constant of ∇l (in λ): the Hessian in η is a weighted sum
        of covariance matrices of the risk sets, each below E[(x − c)(x − c)ᵀ] for any c, so
        ‖∇²l‖ ≤ Σ_g W_g · max_j ‖x_j − c‖² / (Σ w · m²) with c the centre of the rows' bounding box."""
        X = self.Z[:, 1:]
        if X.shape[1] == 0:
            return 1.0
        c = 0.5 * (X.min(axis=0) + X.max(axis=0))
        r2 = float(((X - c) ** 2).sum(axis=1).max())
        return max(self._norm * float(self.g_weight.sum()) * r2 / self.scale ** 2, 1e-12) * 1.01


def cox_problem(loss: CoxLoss, coef_lower, coef_upper, c0=1e-6, max_size: int | None = None,
                min_size: int = 0, **kwargs):
    """A :class:`~riskformula.problem.problem.RiskProblem` on the Cox loss: the intercept fixed at 0
    (the loss ignores it); the other arguments as :class:`RiskProblem` takes them."""
    from .problem import RiskProblem
    return RiskProblem(loss, coef_lower, coef_upper, c0=c0, max_size=max_size,  # type: ignore[arg-type]
                       min_size=min_size, intercept_bounds=(0, 0), **kwargs)
