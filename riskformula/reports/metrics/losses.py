"""Losses of predicted risks: mean log loss and Brier score."""

from __future__ import annotations

import numpy as np
from scipy import special

from ._inputs import prepare, weighted_mean

#: risks are clipped to [EPS, 1 - EPS] inside the log loss so a confident miss costs
#: about 34.5 nats instead of infinity
EPS = 1e-15


def log_loss(y, risk, weights=None) -> float:
    """Mean logistic loss (negative log-likelihood per observation).

    ``-(1/n) * sum(y*log(p) + (1-y)*log(1-p))``, weighted by frequency weights.
    Risks are clipped to ``[1e-15, 1 - 1e-15]`` so a risk of exactly 0 or 1 on the wrong
    outcome gives a large finite loss instead of infinity. For a logistic model this equals
    Ustun & Rudin's (2019) ``(1/n) sum log(1 + exp(-y_i s_i))`` with ``y`` in {-1, +1}.

    Examples
    --------
    >>> round(log_loss([1, 0], [0.8, 0.4]), 4)  # -(log 0.8 + log 0.6) / 2
    0.367
    """
    a = prepare(y, risk, weights=weights)
    p = np.clip(a["risk"], EPS, 1 - EPS)
    # xlogy gives 0 * log(.) = 0 exactly, so only the observed outcome's term counts
    ll = special.xlogy(a["y"], p) + special.xlogy(1 - a["y"], 1 - p)
    return -weighted_mean(ll, a["weights"])


def brier_score(y, risk, weights=None) -> float:
    """Brier score: mean squared difference between risk and outcome.

    Examples
    --------
    >>> round(brier_score([1, 0], [0.8, 0.4]), 4)  # (0.2**2 + 0.4**2) / 2
    0.1
    """
    a = prepare(y, risk, weights=weights)
    return weighted_mean((a["risk"] - a["y"]) ** 2, a["weights"])
