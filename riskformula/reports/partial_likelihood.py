"""The Cox partial likelihood of a fitted time-to-event score on any rows: the held-out loss that
model comparison and cross-validation report for a survival card.

The rows' risk sets are formed among the rows given (for a held-out fold: the fold's own rows, as
``cv.glmnet`` does for a Cox model with ``grouped=FALSE``), each row's log relative hazard is the
card's (``m.predict(data, which="link")``), and tied event times are handled as in the card's fit
(Efron's or Breslow's).  On the training rows it is the card's own ``llf``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..problem.cox import CoxLoss

__all__ = ["PartialLikelihood", "partial_likelihood"]


@dataclass(frozen=True)
class PartialLikelihood:
    """The log partial likelihood ``llf`` of a score on ``n`` rows with ``events`` events; ``loss``
    is −llf / n, the negative log partial likelihood per row (the fit's loss on its own rows)."""

    n: int
    events: int
    llf: float

    @property
    def loss(self) -> float:
        return -self.llf / self.n

    @property
    def deviance(self) -> float:
        """−2 llf."""
        return -2.0 * self.llf


def partial_likelihood(model, data) -> PartialLikelihood:
    """The log partial likelihood (unweighted) of the time-to-event score ``model`` on the rows of
    ``data`` (with the card's variables and the follow-up time and event columns).

    Parameters
    ----------
    model : SurvivalScore
        A fitted time-to-event score.
    data : pandas.DataFrame
        The rows; their risk sets are formed among them.

    Returns
    -------
    PartialLikelihood

    Examples
    --------
    >>> partial_likelihood(m, test).loss  # doctest: +SKIP
    """
    obs = model.observed_survival(data)
    eta = model.predict(data, which="link").to_numpy(float)
    loss = CoxLoss(eta.reshape(-1, 1), obs["time"].to_numpy(float), obs["event"].to_numpy(int), ties=model.ties)
    n = len(eta)
    return PartialLikelihood(n=n, events=int(obs["event"].sum()), llf=-loss.value(np.array([0.0, 1.0])) * n)
