"""The decision thresholds and their weights: what a net-benefit score is optimised for.

A clinician acts on a patient when the risk reaches a threshold ``p``; at that threshold a
model's net benefit is ``NB(p) = TP/N − FP/N · p/(1 − p)`` (Vickers & Elkin, 2006). A
net-benefit score maximises ``Σ_i w_i NB(p_i)`` over a grid of thresholds (Chi & Birbil, 2026,
problem 3). With the default weights ``w_i = p_{i+1} − p_i`` (``p_0 = 0``, ``p_{M+1} = 1``) the
sum is the area under the net-benefit curve, AUNBC (their Definition 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import SettingsError

#: Chi & Birbil's (2026) decision thresholds p_i = i/10, i = 1..9
PAPER_GRID = tuple(np.arange(1, 10) / 10)


@dataclass(frozen=True)
class DecisionGrid:
    """Thresholds ``p`` (ascending, in [0, 1)) and their weights ``w`` in the objective.

    ``aunbc`` is True when the weights are the AUNBC widths (then ``p[0] == 0`` and the objective
    is the area under the net-benefit curve).
    """

    thresholds: tuple
    weights: tuple
    aunbc: bool
    #: the registered objective this grid is the setting of (``risk_score(objective=rf.net_benefit(...))``)
    objective: ClassVar[str] = "net_benefit"

    @property
    def p(self) -> np.ndarray:
        return np.asarray(self.thresholds, dtype=float)

    @property
    def w(self) -> np.ndarray:
        return np.asarray(self.weights, dtype=float)

    @property
    def odds(self) -> np.ndarray:
        """``p / (1 − p)``: how many false positives one true positive is worth at each threshold."""
        p = self.p
        return p / (1 - p)

    @property
    def decision(self) -> np.ndarray:
        """The thresholds above 0, one score cut-off each (at 0 everyone is treated)."""
        p = self.p
        return p[p > 0]

    def to_dict(self) -> dict:
        return {"thresholds": [float(x) for x in self.thresholds], "weights": [float(x) for x in self.weights],
                "aunbc": bool(self.aunbc)}

    @classmethod
    def from_dict(cls, d: dict) -> "DecisionGrid":
        return cls(tuple(float(x) for x in d["thresholds"]), tuple(float(x) for x in d["weights"]),
                   bool(d["aunbc"]))

    def describe(self) -> str:
        ps = ", ".join(f"{x:g}" for x in self.decision)
        if self.aunbc:
            return f"AUNBC over thresholds {ps} (weights p_(i+1) - p_i, p_0 = 0 included)"
        return "weighted net benefit: " + ", ".join(f"{w:g} x NB({p:g})" for p, w in zip(self.p, self.w))


def net_benefit(thresholds=None, weights=None) -> DecisionGrid:
    """The net-benefit objective (Chi & Birbil, 2026) at chosen decision thresholds, for
    ``rf.risk_score(..., objective=rf.net_benefit(...))``, as R's ``glm`` takes ``family=binomial(link=...)``.

    Parameters
    ----------
    thresholds : sequence of float, optional
        The distinct risks in [0, 1) at which a decision is taken; None (default): 0.1, 0.2, ..., 0.9.
        Without ``weights``, 0 is added (the grid is then 0, 0.1, ..., 0.9).  Not to be confused
        with ``threshold()`` terms, which cut predictors.
    weights : sequence of float, optional
        One nonnegative weight per decision threshold (objective Σ w_i NB(p_i)); None (default): the
        AUNBC weights p_(i+1) − p_i over the thresholds with p_0 = 0 added and 1 after the last
        (0.1 each on the default grid), so that the objective is the area under the net-benefit
        curve as a left Riemann sum.

    Returns
    -------
    DecisionGrid
        The thresholds and weights, checked; ``objective="net_benefit"`` is ``rf.net_benefit()``.

    Examples
    --------
    >>> import riskformula as rf
    >>> rf.net_benefit([0.2, 0.5], weights=[1.0, 3.0]).describe()
    'weighted net benefit: 1 x NB(0.2), 3 x NB(0.5)'
    """
    return decision_grid(thresholds, weights)


def decision_grid(thresholds=None, weights=None) -> DecisionGrid:
    """Check and complete the decision thresholds and weights of a net-benefit fit.

    Parameters
    ----------
    thresholds : risks in [0, 1) at which a decision is taken; default 0.1, 0.2, ..., 0.9 (with
        0 added when the weights are the default ones).
    weights : one nonnegative weight per threshold (the objective is ``Σ w_i NB(p_i)``, as
        given, not renormalised); default: the AUNBC weights ``p_{i+1} − p_i`` with ``p_0 = 0``
        added and 1 after the last, so that the objective is the area under the net-benefit curve.

    Examples
    --------
    >>> g = decision_grid([0.2, 0.5])
    >>> g.thresholds, g.weights
    ((0.0, 0.2, 0.5), (0.2, 0.3, 0.5))
    """
    if thresholds is None:
        p = np.asarray(PAPER_GRID)
    else:
        try:
            p = np.asarray(thresholds, dtype=float).ravel()
        except (TypeError, ValueError):
            raise SettingsError(f"`thresholds` must be numbers in [0, 1) such as [0.1, 0.2, 0.3]; "
                                f"got {thresholds!r}.") from None
        if p.size == 0:
            raise SettingsError("`thresholds` is empty; give at least one risk in (0, 1).")
        if not np.all(np.isfinite(p)) or (p < 0).any() or (p >= 1).any():
            raise SettingsError("`thresholds` must lie in [0, 1): at 1 the net benefit weight "
                                f"p/(1-p) is infinite. Got {p.tolist()}.")
        if (p > 1 - 1e-9).any():
            raise SettingsError(f"`thresholds` must stay below 1 − 1e-9: above it the net benefit weight "
                                f"p/(1-p) is beyond 10⁹ and no score's benefit is resolved. Got {p.tolist()}.")
        if np.unique(p).size != p.size:
            raise SettingsError(f"`thresholds` has repeated values: {p.tolist()}; give each once "
                                "(use `weights` to weigh one more).")
    if weights is None:
        p = np.unique(np.concatenate([[0.0], p]))
        w = np.round(np.diff(np.concatenate([p, [1.0]])), 12)  # 0.1, not 0.09999999999999998
        return DecisionGrid(tuple(float(x) for x in p), tuple(float(x) for x in w), True)
    try:
        w = np.asarray(weights, dtype=float).ravel()
    except (TypeError, ValueError):
        raise SettingsError(f"`weights` must be numbers, one per decision threshold; "
                            f"got {weights!r}.") from None
    if w.size != p.size:
        raise SettingsError(f"`weights` has {w.size} value(s) but there are {p.size} decision "
                            "thresholds; give one weight per threshold (the default thresholds are "
                            "0.1, 0.2, ..., 0.9).")
    if not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0 or w.max() > 1e12:
        raise SettingsError(f"`weights` must be finite, nonnegative, at most 1e12 and not all zero; got "
                            f"{w.tolist()}.")
    order = np.argsort(p)
    return DecisionGrid(tuple(float(x) for x in p[order]), tuple(float(x) for x in w[order]), False)
