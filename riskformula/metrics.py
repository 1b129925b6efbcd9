"""Discrimination, calibration and decision metrics for risk scores.

Every function takes plain arrays (or pandas Series): ``y`` holds 0/1 event indicators,
``risk`` predicted probabilities in [0, 1], ``score`` the total points (integer or real),
and the optional ``weights`` nonnegative *frequency* weights (a row with weight 2 counts
exactly like two copies of that row). Inputs are validated and never modified.

The definitions follow two papers:

* Ustun & Rudin (2019), "Learning Optimized Risk Scores", JMLR: CAL by score, the
  reliability diagram (one point per score, 10 bins above 30 distinct scores), AUC.
* Chi & Birbil (2026), "Learning an Interpretable Risk Scoring System for Maximizing Decision
  Net Benefit", arXiv:2604.04241: net benefit, treat-all / treat-none, AUNBC, the
  equal-width-bin ECE.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special, stats

from riskformula.errors import CalibrationWarning, DataError, SettingsError

__all__ = [
    "AUCResult",
    "CalibrationResult",
    "HosmerLemeshowResult",
    "auc",
    "auc_ci",
    "aunbc",
    "brier_score",
    "cal_by_score",
    "calibration_intercept_slope",
    "expected_calibration_error",
    "hosmer_lemeshow",
    "log_loss",
    "net_benefit",
    "reliability_table",
    "roc_curve",
    "score_groups",
]

#: above this many distinct scores, scores are grouped into quantile bins (Ustun & Rudin, 2019, Sec. 5.1)
MAX_DISTINCT_SCORES = 30
#: number of quantile bins used when there are more than ``MAX_DISTINCT_SCORES`` scores
SCORE_BINS = 10
#: Chi & Birbil's (2026) threshold grid p_i = i/10, i = 1..9
PAPER_THRESHOLDS = np.arange(1, 10) / 10
#: risks are clipped to [EPS, 1 - EPS] inside the log loss so a confident miss costs
#: about 34.5 nats instead of infinity
EPS = 1e-15


# --------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------


def _check_level(level) -> None:
    """A confidence level strictly between 0 and 1 (an argument, hence SettingsError)."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)) or not 0 < level < 1:
        raise SettingsError(f"`level` must be a number between 0 and 1, such as 0.95; got {level!r}.")


def _as_float_array(x, name: str) -> np.ndarray:
    """1-d float copy of ``x``; pandas nullable values become NaN."""
    if isinstance(x, (pd.Series, pd.Index)):
        try:
            x = x.to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError) as e:
            raise DataError(f"`{name}` must be numeric; got dtype {x.dtype}.") from e
    try:
        arr = np.array(x, dtype=float)  # np.array copies: the caller's data is never touched
    except (TypeError, ValueError) as e:
        raise DataError(f"`{name}` must be numeric; got {type(x).__name__} that cannot be "
                        "converted to numbers.") from e
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise DataError(f"`{name}` must be one-dimensional; got shape {arr.shape}.")
    return arr


def _positions(mask: np.ndarray, limit: int = 5) -> str:
    idx = np.flatnonzero(mask)
    shown = ", ".join(str(i) for i in idx[:limit])
    return shown + (", ..." if idx.size > limit else "")


def _prepare(y, risk=None, score=None, weights=None, *, need_both_classes: bool = False):
    """Validate and convert inputs; drop rows with zero weight (they count as absent)."""
    arrays = {"y": _as_float_array(y, "y")}
    if risk is not None:
        arrays["risk"] = _as_float_array(risk, "risk")
    if score is not None:
        arrays["score"] = _as_float_array(score, "score")
    if weights is not None:
        arrays["weights"] = _as_float_array(weights, "weights")
    n = arrays["y"].size
    if n == 0:
        raise DataError("`y` is empty; at least one observation is needed.")
    for name, arr in arrays.items():
        if arr.size != n:
            raise DataError(f"`{name}` has {arr.size} values but `y` has {n}; "
                            "pass arrays of the same length.")
    for name, arr in arrays.items():
        bad = np.isnan(arr)
        if bad.any():
            raise DataError(f"`{name}` has {int(bad.sum())} missing (NaN) value(s) at "
                            f"position(s) {_positions(bad)}; drop or impute them first.")
        bad = np.isinf(arr)
        if bad.any():
            raise DataError(f"`{name}` has {int(bad.sum())} infinite value(s) at "
                            f"position(s) {_positions(bad)}.")
    yv = arrays["y"]
    bad = (yv != 0) & (yv != 1)
    if bad.any():
        vals = ", ".join(f"{v:g}" for v in np.unique(yv[bad])[:5])
        raise DataError(f"`y` must hold 0/1 event indicators; got other values ({vals}) at "
                        f"position(s) {_positions(bad)}.")
    if "risk" in arrays:
        r = arrays["risk"]
        bad = (r < 0) | (r > 1)
        if bad.any():
            raise DataError(f"`risk` must be probabilities in [0, 1]; got values outside at "
                            f"position(s) {_positions(bad)} (e.g. {r[bad][0]:g}). "
                            "Pass predicted risks, not scores or logits.")
    if "weights" in arrays:
        w = arrays["weights"]
        bad = w < 0
        if bad.any():
            raise DataError(f"`weights` must be nonnegative frequency weights; got negative "
                            f"values at position(s) {_positions(bad)}.")
        if w.sum() <= 0:
            raise DataError("`weights` sum to zero; at least one row needs a positive weight.")
        keep = w > 0
        if not keep.all():
            arrays = {k: v[keep] for k, v in arrays.items()}
    else:
        arrays["weights"] = np.ones(n)
    if need_both_classes:
        w, yv = arrays["weights"], arrays["y"]
        if not (w[yv == 1].sum() > 0 and w[yv == 0].sum() > 0):
            only = "events (y = 1)" if (yv == 1).all() else "non-events (y = 0)"
            raise DataError(f"`y` contains only {only}; this metric needs both classes.")
    return arrays


def _weighted_mean(x: np.ndarray, w: np.ndarray) -> float:
    return float(np.sum(w * x) / np.sum(w))


def _tidy_number(v: float):
    """Return an int for integral floats so tables show ``3`` rather than ``3.0``."""
    return int(v) if float(v).is_integer() else float(v)


# --------------------------------------------------------------------------------------
# losses
# --------------------------------------------------------------------------------------


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
    a = _prepare(y, risk, weights=weights)
    p = np.clip(a["risk"], EPS, 1 - EPS)
    # xlogy gives 0 * log(.) = 0 exactly, so only the observed outcome's term counts
    ll = special.xlogy(a["y"], p) + special.xlogy(1 - a["y"], 1 - p)
    return -_weighted_mean(ll, a["weights"])


def brier_score(y, risk, weights=None) -> float:
    """Brier score: mean squared difference between risk and outcome.

    Examples
    --------
    >>> round(brier_score([1, 0], [0.8, 0.4]), 4)  # (0.2**2 + 0.4**2) / 2
    0.1
    """
    a = _prepare(y, risk, weights=weights)
    return _weighted_mean((a["risk"] - a["y"]) ** 2, a["weights"])


# --------------------------------------------------------------------------------------
# discrimination
# --------------------------------------------------------------------------------------


def _score_counts(yv, s, w):
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
    a = _prepare(y, score=score, weights=weights, need_both_classes=True)
    _, pos, neg = _score_counts(a["y"], a["score"], a["weights"])
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
    a = _prepare(y, score=score, weights=weights, need_both_classes=True)
    vals, pos, neg = _score_counts(a["y"], a["score"], a["weights"])
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


def auc_ci(y, score, level: float = 0.95) -> AUCResult:
    """AUC with DeLong (1988) standard error and a confidence interval.

    Placement values: for each event ``V10_i`` is the share of non-events it outranks
    (ties 1/2), for each non-event ``V01_k`` the share of events that outrank it. Then
    ``Var(AUC) = var(V10)/n+ + var(V01)/n-`` (sample variances). The interval is the plain
    Wald interval ``auc -/+ z * se`` on the AUC scale, clipped to [0, 1] -- the same as R's
    ``pROC::ci.auc(method = "delong")``. With a single event or non-event the variance
    cannot be estimated and ``se``, ``lower`` and ``upper`` are NaN.

    Examples
    --------
    >>> r = auc_ci([0, 0, 1, 1], [1, 2, 2, 3])
    >>> r.auc, round(r.se, 4)  # placement values (.75, 1) and (1, .75): sqrt(2 * .03125/2)
    (0.875, 0.1768)
    """
    _check_level(level)
    a = _prepare(y, score=score, need_both_classes=True)
    s, yv = a["score"], a["y"]
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
    z = stats.norm.ppf(0.5 + level / 2)
    lo, hi = (max(0.0, est - z * se), min(1.0, est + z * se)) if np.isfinite(se) else (np.nan,) * 2
    return AUCResult(auc=est, se=se, lower=float(lo), upper=float(hi), level=level)


# --------------------------------------------------------------------------------------
# grouping by score
# --------------------------------------------------------------------------------------


def _quantile_codes(values: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    """Codes 0..G-1 (G <= k) of weighted quantile groups that never split tied values.

    Each distinct value is placed in the quantile group that contains the midpoint of
    its cumulative-weight interval, so a value is never cut in two and groups hold
    roughly equal weight. Empty groups are dropped and the codes renumbered.
    """
    vals, inv = np.unique(values, return_inverse=True)
    wv = np.bincount(inv, weights=w, minlength=vals.size)
    total = wv.sum()
    mid = (np.cumsum(wv) - wv / 2) / total
    g = np.minimum(np.floor(mid * k).astype(int), k - 1)
    _, g = np.unique(g, return_inverse=True)
    return g[inv]


def score_groups(score, weights=None) -> tuple[np.ndarray, bool]:
    """Group codes by distinct score, or by 10 quantile bins above 30 distinct scores.

    This is Ustun & Rudin's (2019) rule for the reliability diagram ("if a model has over 30 distinct
    scores, we group them into 10 bins"); it is used for CAL and the reliability table too,
    so real-valued scores do not make every group a single row. Bins are weighted score
    quantiles and never split tied scores.

    Returns
    -------
    codes : ndarray of int
        Group of each row, ordered by score (0 = lowest).
    binned : bool
        True when quantile bins were used.

    Examples
    --------
    >>> score_groups([3, 1, 1, 2])[0].tolist()
    [2, 0, 0, 1]
    """
    s = _as_float_array(score, "score")
    w = np.ones(s.size) if weights is None else _as_float_array(weights, "weights")
    vals, inv = np.unique(s, return_inverse=True)
    if vals.size <= MAX_DISTINCT_SCORES:
        return inv, False
    return _quantile_codes(s, w, SCORE_BINS), True


def _range_label(lo: float, hi: float) -> str:
    return f"{lo:.4g}" if lo == hi else f"[{lo:.4g}, {hi:.4g}]"


def cal_by_score(y, risk, score, weights=None) -> float:
    """Ustun and Rudin (2019)'s CAL: mean absolute gap between predicted and observed risk per score.

    ``CAL = (1/n) sum_s sum_{i: s_i = s} |p_i - pbar_s|`` where ``pbar_s`` is the observed
    event rate among rows with score ``s``. With more than 30 distinct scores (real-valued
    columns) the rows are grouped into 10 quantile bins of score instead, as the paper does
    for its reliability diagrams (see :func:`score_groups`).

    Examples
    --------
    >>> # score 0: risks .2,.2, outcomes 0,1 -> pbar .5, gaps .3+.3; score 1: risk .9, y 1 -> .1
    >>> round(cal_by_score([0, 1, 1], [0.2, 0.2, 0.9], [0, 0, 1]), 4)
    0.2333
    """
    a = _prepare(y, risk, score, weights)
    codes, _ = score_groups(a["score"], a["weights"])
    w = a["weights"]
    events = np.bincount(codes, weights=w * a["y"])
    total = np.bincount(codes, weights=w)
    observed = (events / total)[codes]
    return _weighted_mean(np.abs(a["risk"] - observed), w)


def _wilson(events: np.ndarray, n: np.ndarray, level: float):
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(events, n, alpha=1 - level, method="wilson")
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def reliability_table(y, risk, score, weights=None, level: float = 0.95) -> pd.DataFrame:
    """Predicted vs observed risk per attainable score (the reliability diagram's data).

    One row per distinct score present, or per quantile bin of score when there are more
    than 30 distinct scores (then ``score`` is a range label such as ``"[1.5, 2.25]"``).
    ``ci_lower``/``ci_upper`` are Wilson score intervals for the observed risk
    (``statsmodels.stats.proportion.proportion_confint(method="wilson")``).

    Returns
    -------
    DataFrame
        Columns ``score, n, events, predicted_risk, observed_risk, ci_lower, ci_upper``,
        sorted by score. ``n`` and ``events`` are weighted counts.

    Examples
    --------
    >>> reliability_table([0, 1, 1], [0.2, 0.2, 0.9], [0, 0, 1])[["score", "n", "events"]]
       score  n  events
    0      0  2       1
    1      1  1       1
    """
    _check_level(level)
    a = _prepare(y, risk, score, weights)
    w, s = a["weights"], a["score"]
    codes, binned = score_groups(s, w)
    g = codes.max() + 1
    n = np.bincount(codes, weights=w, minlength=g)
    events = np.bincount(codes, weights=w * a["y"], minlength=g)
    pred = np.bincount(codes, weights=w * a["risk"], minlength=g) / n
    lo, hi = _wilson(events, n, level)
    if binned:
        smin = pd.Series(s).groupby(codes).min().to_numpy()
        smax = pd.Series(s).groupby(codes).max().to_numpy()
        label = [_range_label(a_, b_) for a_, b_ in zip(smin, smax)]
    else:
        label = [_tidy_number(v) for v in np.unique(s)]
    integral = bool(np.all(np.mod(w, 1) == 0))
    out = pd.DataFrame({
        "score": label,
        "n": n.astype(int) if integral else n,
        "events": events.astype(int) if integral else events,
        "predicted_risk": pred,
        "observed_risk": events / n,
        "ci_lower": lo,
        "ci_upper": hi,
    })
    return out


# --------------------------------------------------------------------------------------
# calibration
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HosmerLemeshowResult:
    """Hosmer–Lemeshow goodness-of-fit test.

    Attributes
    ----------
    statistic : float
        ``sum_g (O_g - E_g)^2 / (E_g (1 - E_g/N_g))``.
    df : int
        Degrees of freedom, number of groups minus 2.
    p_value : float
        Upper tail of chi-squared with ``df`` degrees of freedom (NaN when ``df < 1``).
    groups : int
        Number of groups actually used.
    grouping : str
        How the groups were formed (in words).
    table : DataFrame
        Per group: ``risk_min, risk_max, n, observed, expected``.
    """

    statistic: float
    df: int
    p_value: float
    groups: int
    grouping: str
    table: pd.DataFrame = field(repr=False, compare=False)

    def to_dict(self) -> dict:
        """Scalars only (the group table is left out)."""
        return {"statistic": self.statistic, "df": self.df, "p_value": self.p_value,
                "groups": self.groups, "grouping": self.grouping}


def hosmer_lemeshow(y, risk, groups: int = 10) -> HosmerLemeshowResult:
    """Hosmer–Lemeshow test with tie-aware grouping of the predicted risk.

    Integer scores give few distinct risks, so the classic "deciles of risk" would split
    rows with the same prediction at random. Instead:

    * if there are at most ``groups`` distinct predicted risks, each distinct risk is a
      group;
    * otherwise rows are put into ``groups`` quantile groups of predicted risk that never
      split tied risks (so slightly fewer groups can result).

    ``df = G - 2`` for ``G`` groups used. With fewer than 3 groups the test is undefined: the
    statistic is still returned but ``p_value`` is NaN and a ``CalibrationWarning`` is issued.

    Examples
    --------
    >>> hl = hosmer_lemeshow([0, 1, 0, 1, 1, 1], [.2, .2, .5, .5, .8, .8])
    >>> hl.groups, hl.df, round(hl.statistic, 4)  # (1-.4)^2/.32 + 0 + (2-1.6)^2/.32
    (3, 1, 1.625)
    """
    if not (isinstance(groups, (int, np.integer)) and not isinstance(groups, bool) and groups >= 3):
        raise SettingsError(f"`groups` must be an integer of at least 3; got {groups!r}.")
    a = _prepare(y, risk)
    p, yv = a["risk"], a["y"]
    vals, inv = np.unique(p, return_inverse=True)
    if vals.size <= groups:
        codes = inv
        grouping = f"one group per distinct predicted risk ({vals.size} distinct values)"
    else:
        codes = _quantile_codes(p, np.ones(p.size), groups)
        grouping = (f"{codes.max() + 1} quantile groups of predicted risk "
                    f"(asked for {groups}; tied risks are never split)")
    g = int(codes.max()) + 1
    n = np.bincount(codes, minlength=g).astype(float)
    obs = np.bincount(codes, weights=yv, minlength=g)
    exp = np.bincount(codes, weights=p, minlength=g)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = (obs - exp) ** 2 / (exp * (1 - exp / n))
    # a group predicted with certainty (all risks 0 or 1) that is observed exactly
    # contributes nothing; one that is contradicted makes the statistic infinite
    terms = np.where((exp * (1 - exp / n) == 0) & (obs == exp), 0.0, terms)
    stat = float(terms.sum())
    df = g - 2
    if df < 1:
        warnings.warn(f"Hosmer–Lemeshow needs at least 3 groups of predicted risk; got {g}. "
                      "The p-value is reported as NA.", CalibrationWarning, stacklevel=2)
        pval = float("nan")
    else:
        pval = float(stats.chi2.sf(stat, df))
    table = pd.DataFrame({
        "risk_min": pd.Series(p).groupby(codes).min().to_numpy(),
        "risk_max": pd.Series(p).groupby(codes).max().to_numpy(),
        "n": n.astype(int), "observed": obs.astype(int), "expected": exp,
    })
    return HosmerLemeshowResult(stat, df, pval, g, grouping, table)


def expected_calibration_error(y, risk, bins: int = 10) -> float:
    """Expected calibration error with equal-width bins of predicted risk.

    ``ECE = sum_b (N_b/N) |O_b/N_b - mean(p in b)|`` over the bins ``[0, 1/B), [1/B, 2/B),
    ..., [(B-1)/B, 1]``. With ``bins=10`` this is Chi & Birbil's (2026) grouping ``[p_i, p_{i+1})`` for
    ``p_i = i/10``. Empty bins contribute nothing.

    Examples
    --------
    >>> # bin [0.2, 0.3): risks .2,.2, one event -> |.5 - .2| * 2/3; bin [0.9, 1]: |1 - .9| * 1/3
    >>> round(expected_calibration_error([0, 1, 1], [0.2, 0.2, 0.9]), 4)
    0.2333
    """
    if not (isinstance(bins, (int, np.integer)) and not isinstance(bins, bool) and bins >= 1):
        raise SettingsError(f"`bins` must be a positive integer; got {bins!r}.")
    a = _prepare(y, risk)
    p = a["risk"]
    # edges i/B (not linspace) so that e.g. a risk of exactly 0.3 falls in [0.3, 0.4)
    edges = np.arange(bins + 1) / bins
    b = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, bins - 1)
    n = np.bincount(b, minlength=bins)
    obs = np.bincount(b, weights=a["y"], minlength=bins)
    pred = np.bincount(b, weights=p, minlength=bins)
    used = n > 0
    return float(np.sum(np.abs(obs[used] - pred[used])) / p.size)


@dataclass(frozen=True)
class CalibrationResult:
    """Logistic recalibration: calibration-in-the-large intercept and calibration slope.

    Attributes
    ----------
    intercept, intercept_lower, intercept_upper : float
        ``a`` in ``logit P(y=1) = a + logit(p)`` (slope fixed at 1, offset ``logit(p)``)
        with its Wald interval. 0 means mean calibration; > 0 means risks are too low.
    slope, slope_lower, slope_upper : float
        ``b`` in ``logit P(y=1) = a' + b logit(p)`` with its Wald interval. 1 is ideal;
        < 1 means risks are too extreme (overfitting). NaN when all risks are equal.
    level : float
        Confidence level.
    """

    intercept: float
    intercept_lower: float
    intercept_upper: float
    slope: float
    slope_lower: float
    slope_upper: float
    level: float = 0.95

    def to_dict(self) -> dict:
        """Plain dict of the fields."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def calibration_intercept_slope(y, risk, level: float = 0.95) -> CalibrationResult:
    """Calibration intercept and slope by logistic recalibration (statsmodels GLM Binomial).

    * slope: fit ``y ~ 1 + logit(p)``; the coefficient of ``logit(p)``.
    * intercept (calibration-in-the-large): fit ``y ~ 1`` with offset ``logit(p)``.

    Intervals are Wald intervals from the GLM. When every risk is the same (a model with
    no points), the slope is not identifiable: it is reported as NaN with a
    ``CalibrationWarning``.

    Raises
    ------
    DataError
        If ``y`` has one class only, or a risk is exactly 0 or 1 (its logit is infinite).

    Examples
    --------
    >>> # observed rates equal the risks in both groups (1/3 and 1/2): a perfect recalibration
    >>> r = calibration_intercept_slope([0, 0, 1, 0, 1], [1/3, 1/3, 1/3, .5, .5])
    >>> abs(r.intercept) < 1e-8, round(r.slope, 3)
    (True, 1.0)
    """
    import statsmodels.api as sm

    _check_level(level)
    a = _prepare(y, risk, need_both_classes=True)
    p, yv = a["risk"], a["y"]
    if np.any((p <= 0) | (p >= 1)):
        raise DataError("`risk` has values of exactly 0 or 1, whose logit is infinite; "
                        "calibration intercept and slope need risks strictly inside (0, 1).")
    lp = special.logit(p)
    alpha = 1 - level
    family = sm.families.Binomial()
    citl = sm.GLM(yv, np.ones((p.size, 1)), family=family, offset=lp).fit()
    ci = np.asarray(citl.conf_int(alpha=alpha))
    intercept, ilo, ihi = float(np.asarray(citl.params)[0]), float(ci[0, 0]), float(ci[0, 1])
    if np.ptp(lp) == 0:
        warnings.warn("All predicted risks are equal, so the calibration slope is undefined; "
                      "it is reported as NA.", CalibrationWarning, stacklevel=2)
        slope = slo = shi = float("nan")
    else:
        fit = sm.GLM(yv, sm.add_constant(lp, has_constant="add"), family=family).fit()
        ci = np.asarray(fit.conf_int(alpha=alpha))
        slope, slo, shi = float(np.asarray(fit.params)[1]), float(ci[1, 0]), float(ci[1, 1])
    return CalibrationResult(intercept, ilo, ihi, slope, slo, shi, level)


# --------------------------------------------------------------------------------------
# decision curves
# --------------------------------------------------------------------------------------


def _check_thresholds(thresholds, *, allow_zero: bool = True) -> np.ndarray:
    try:
        t = _as_float_array(thresholds, "thresholds")
    except DataError as e:
        raise SettingsError(str(e)) from None
    if t.size == 0:
        raise SettingsError("`thresholds` is empty; pass at least one threshold in [0, 1).")
    if np.isnan(t).any() or (t < 0).any() or (t >= 1).any():
        raise SettingsError("`thresholds` must lie in [0, 1): the net benefit weight t/(1-t) is "
                        f"infinite at 1. Got min {np.nanmin(t):g}, max {np.nanmax(t):g}.")
    if not allow_zero:
        t = t[t > 0]
    return np.unique(t)


def _tp_fp(yv, p, w, t):
    """Weighted TP and FP fractions when treating ``risk >= t`` (as Chi & Birbil, 2026, do)."""
    order = np.argsort(p)
    ps, ys, ws = p[order], yv[order], w[order]
    # suffix sums: weight of rows with risk >= t
    first = np.searchsorted(ps, t, side="left")
    cum_pos = np.concatenate([np.cumsum((ws * ys)[::-1])[::-1], [0.0]])
    cum_neg = np.concatenate([np.cumsum((ws * (1 - ys))[::-1])[::-1], [0.0]])
    total = w.sum()
    return cum_pos[first] / total, cum_neg[first] / total


def net_benefit(y, risk, thresholds, weights=None) -> pd.DataFrame:
    """Decision-curve table: net benefit of the model, treat-all and treat-none.

    Per Chi & Birbil (2026, eq. 2), treating everyone with ``risk >= t``:
    ``NB(t) = TP/n - FP/n * t/(1-t)``; ``treat_all(t) = prev - (1 - prev) * t/(1-t)``;
    ``treat_none = 0``.

    Parameters
    ----------
    thresholds : array-like
        Risk thresholds in [0, 1); sorted and de-duplicated.

    Examples
    --------
    >>> net_benefit([0, 1, 1, 0], [.1, .6, .8, .7], [0.5])  # TP 2/4 - FP 1/4 * 1
    ...  # doctest: +NORMALIZE_WHITESPACE
       threshold  net_benefit  treat_all  treat_none
    0        0.5         0.25        0.0         0.0
    """
    a = _prepare(y, risk, weights=weights)
    t = _check_thresholds(thresholds)
    tp, fp = _tp_fp(a["y"], a["risk"], a["weights"], t)
    odds = t / (1 - t)
    prev = _weighted_mean(a["y"], a["weights"])
    return pd.DataFrame({
        "threshold": t,
        "net_benefit": tp - fp * odds,
        "treat_all": prev - (1 - prev) * odds,
        "treat_none": np.zeros(t.size),
    })


def aunbc(y, risk, thresholds=None, weights=None) -> float:
    """Area under the net-benefit curve exactly as Chi & Birbil (2026) define it (Definition 2, eq. 6).

    With thresholds ``0 < p_1 < ... < p_M < 1`` plus ``p_0 = 0`` and ``p_{M+1} = 1``:
    ``AUNBC = sum_{i=0}^{M} (p_{i+1} - p_i) * NB(p_i)``, a *left* Riemann sum over [0, 1]
    (not a trapezoid), where ``NB(p_0) = NB(0)`` is the prevalence. Treat-all and
    treat-none are *not* subtracted, and the value is not standardized: it is at most the
    prevalence (perfect separation) and can be negative.

    Parameters
    ----------
    thresholds : array-like, optional
        ``p_1..p_M`` in (0, 1). Default: Chi & Birbil's (2026) grid 0.1, 0.2, ..., 0.9. A 0 in the
        list is ignored (``p_0 = 0`` is always included).

    Examples
    --------
    >>> # a perfect model reaches the prevalence
    >>> aunbc([0, 0, 1, 1], [0.05, 0.05, 0.95, 0.95])
    0.5
    """
    a = _prepare(y, risk, weights=weights)
    t = PAPER_THRESHOLDS if thresholds is None else _check_thresholds(thresholds, allow_zero=False)
    p = np.concatenate([[0.0], t])
    widths = np.diff(np.concatenate([p, [1.0]]))
    tp, fp = _tp_fp(a["y"], a["risk"], a["weights"], p)
    nb = tp - fp * p / (1 - p)
    return float(np.sum(widths * nb))
