"""Discrimination: AUC (ties count 1/2), its DeLong confidence interval and the ROC curve."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ._inputs import check_level, prepare


def score_counts(yv, s, w):
    """Distinct scores (ascending) with the weighted number of events and non-events."""
    vals, inv = np.unique(s, return_inverse=True)
    pos = np.bincount(inv, weights=w * yv, minlength=vals.size)
    neg = np.bincount(inv, weights=w * (1 - yv), minlength=vals.size)
    return vals, pos, neg


def auc(y, score, weights=None) -> float:
    """Area under the ROC curve (Mann–Whitney form); tied scores count 1/2.

    ``AUC = (1/(n+ n-)) sum_{i: y_i=1} sum_{k: y_k=0} (1[s_i > s_k] + 1/2 * 1[s_i = s_k])``.

    Integer scores tie often, so the tie rule matters. Ustun and Rudin (2019) print the formula with a
    strict ``>`` (ties count 0), which would give a constant model an AUC of 0; the paper
    itself reports 0.500 for constant models, so the standard 1/2 rule is used here.
    ``score`` may equally be the predicted risk (any monotone transform gives the same AUC).

    Raises
    ------
    DataError
        If ``y`` has only one class (AUC is undefined).

    Examples
    --------
    >>> auc([0, 0, 1, 1], [1, 2, 2, 3])  # pairs: (2>1, 2=2, 3>1, 3>2) -> (1 + .5 + 1 + 1) / 4
    0.875
    """
    a = prepare(y, score=score, weights=weights, need_both_classes=True)
    _, pos, neg = score_counts(a["y"], a["score"], a["weights"])
    neg_below = np.cumsum(neg) - neg  # weight of non-events with a strictly lower score
    return float(np.sum(pos * (neg_below + 0.5 * neg)) / (pos.sum() * neg.sum()))


def roc_curve(y, score, weights=None) -> pd.DataFrame:
    """ROC curve: one row per distinct score used as a cut-off ``score >= threshold``.

    The first row (threshold ``inf``) is the point (0, 0); the last is (1, 1). Tied scores
    move both rates at once, so the trapezoid area under these points equals :func:`auc`.

    Examples
    --------
    >>> roc_curve([0, 1, 1], [0, 1, 2])["tpr"].tolist()
    [0.0, 0.5, 1.0, 1.0]
    """
    a = prepare(y, score=score, weights=weights, need_both_classes=True)
    vals, pos, neg = score_counts(a["y"], a["score"], a["weights"])
    tpr = np.concatenate([[0.0], np.cumsum(pos[::-1]) / pos.sum()])
    fpr = np.concatenate([[0.0], np.cumsum(neg[::-1]) / neg.sum()])
    thr = np.concatenate([[np.inf], vals[::-1]])
    return pd.DataFrame({"threshold": thr, "fpr": fpr, "tpr": tpr})


@dataclass(frozen=True)
class AUCResult:
    """AUC with its DeLong standard error and a Wald confidence interval.

    Attributes
    ----------
    auc, se : float
        Point estimate (ties count 1/2) and DeLong standard error.
    lower, upper : float
        Confidence limits ``auc -/+ z * se`` clipped to [0, 1] (plain scale, as in pROC).
    level : float
        Confidence level.
    method : str
        Always ``"DeLong"``.
    """

    auc: float
    se: float
    lower: float
    upper: float
    level: float = 0.95
    method: str = "DeLong"

    def to_dict(self) -> dict:
        """Plain dict of the fields."""
        return {"auc": self.auc, "se": self.se, "lower": self.lower, "upper": self.upper,
                "level": self.level, "method": self.method}


def auc_ci(y, score, level: float = 0.95, weights=None) -> AUCResult:
    """AUC with DeLong (1988) standard error and a confidence interval.

    Placement values: for each event ``V10_i`` is the share of non-events it outranks
    (ties 1/2), for each non-event ``V01_k`` the share of events that outrank it. Then
    ``Var(AUC) = var(V10)/n+ + var(V01)/n-`` (sample variances). The interval is the plain
    Wald interval ``auc -/+ z * se`` on the AUC scale, clipped to [0, 1] -- the same as R's
    ``pROC::ci.auc(method = "delong")``. With a single event or non-event the variance
    cannot be estimated and ``se``, ``lower`` and ``upper`` are NaN. With frequency
    ``weights`` every statistic is that of the data with each row repeated ``weight`` times.

    Examples
    --------
    >>> r = auc_ci([0, 0, 1, 1], [1, 2, 2, 3])
    >>> r.auc, round(r.se, 4)  # placement values (.75, 1) and (1, .75): sqrt(2 * .03125/2)
    (0.875, 0.1768)
    """
    check_level(level)
    a = prepare(y, score=score, weights=weights, need_both_classes=True)
    s, yv = a["score"], a["y"]
    z = stats.norm.ppf(0.5 + level / 2)
    if weights is not None:
        est, se = _delong_weighted(yv, s, a["weights"])
        lo, hi = (max(0.0, est - z * se), min(1.0, est + z * se)) if np.isfinite(se) else (np.nan,) * 2
        return AUCResult(auc=est, se=se, lower=float(lo), upper=float(hi), level=level)
    pos, neg = np.sort(s[yv == 1]), np.sort(s[yv == 0])
    n1, n0 = pos.size, neg.size
    below = np.searchsorted(neg, pos, side="left")
    tied = np.searchsorted(neg, pos, side="right") - below
    v10 = (below + 0.5 * tied) / n0
    above = n1 - np.searchsorted(pos, neg, side="right")
    tied = np.searchsorted(pos, neg, side="right") - np.searchsorted(pos, neg, side="left")
    v01 = (above + 0.5 * tied) / n1
    est = float(v10.mean())
    if n1 < 2 or n0 < 2:
        se = float("nan")
    else:
        se = float(np.sqrt(v10.var(ddof=1) / n1 + v01.var(ddof=1) / n0))
    lo, hi = (max(0.0, est - z * se), min(1.0, est + z * se)) if np.isfinite(se) else (np.nan,) * 2
    return AUCResult(auc=est, se=se, lower=float(lo), upper=float(hi), level=level)


def _delong_weighted(yv, s, w) -> tuple[float, float]:
    """AUC and DeLong standard error with frequency weights, per distinct score: every event
    at score s has the same placement value (the share of non-events below s, ties 1/2)."""
    _, pos, neg = score_counts(yv, s, w)
    n1, n0 = pos.sum(), neg.sum()
    v10 = (np.cumsum(neg) - neg + 0.5 * neg) / n0
    v01 = (n1 - np.cumsum(pos) + 0.5 * pos) / n1
    est = float(np.sum(pos * v10) / n1)
    if n1 < 2 or n0 < 2:
        return est, float("nan")
    m01 = np.sum(neg * v01) / n0
    var10 = np.sum(pos * (v10 - est) ** 2) / (n1 - 1)
    var01 = np.sum(neg * (v01 - m01) ** 2) / (n0 - 1)
    return est, float(np.sqrt(var10 / n1 + var01 / n0))
