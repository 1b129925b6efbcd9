"""Calibration: CAL and the reliability table by score (Ustun and Rudin 2019), Hosmer–Lemeshow,
the equal-width-bin ECE (Chi and Birbil 2026), and the calibration intercept and slope."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special, stats

from ...errors import CalibrationWarning, DataError, SettingsError
from ._inputs import as_float_array, check_level, prepare, tidy_number, weighted_mean

#: above this many distinct scores, scores are grouped into quantile bins (Ustun & Rudin, 2019, Sec. 5.1)
MAX_DISTINCT_SCORES = 30
#: number of quantile bins used when there are more than ``MAX_DISTINCT_SCORES`` scores
SCORE_BINS = 10


# --------------------------------------------------------------------------------------
# grouping by score
# --------------------------------------------------------------------------------------


def quantile_codes(values: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
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
    s = as_float_array(score, "score")
    w = np.ones(s.size) if weights is None else as_float_array(weights, "weights")
    vals, inv = np.unique(s, return_inverse=True)
    if vals.size <= MAX_DISTINCT_SCORES:
        return inv, False
    return quantile_codes(s, w, SCORE_BINS), True


def _range_label(lo: float, hi: float) -> str:
    return f"{lo:.4g}" if lo == hi else f"[{lo:.4g}, {hi:.4g}]"


def cal_by_score(y, risk, score, weights=None) -> float:
    """CAL (Ustun & Rudin, 2019): mean absolute gap between predicted and observed risk per score.

    ``CAL = (1/n) sum_s sum_{i: s_i = s} |p_i - pbar_s|`` where ``pbar_s`` is the observed
    event rate among rows with score ``s``. With more than 30 distinct scores (real-valued
    columns) the rows are grouped into 10 quantile bins of score instead, as the paper does
    for its reliability diagrams (see :func:`score_groups`), and each bin is scored by its
    mean predicted risk against its observed rate: the expected calibration error of Naeini
    et al. (2015), and the distance of each point of :func:`reliability_table` from the
    diagonal.  (Per-row risks within a bin would count the spread of risks inside the bin as
    miscalibration, so even a perfectly calibrated model with real-valued scores would not
    reach 0.)

    Examples
    --------
    >>> # score 0: risks .2,.2, outcomes 0,1 -> pbar .5, gaps .3+.3; score 1: risk .9, y 1 -> .1
    >>> round(cal_by_score([0, 1, 1], [0.2, 0.2, 0.9], [0, 0, 1]), 4)
    0.2333
    """
    a = prepare(y, risk, score, weights)
    codes, binned = score_groups(a["score"], a["weights"])
    w, risk = a["weights"], a["risk"]
    total = np.bincount(codes, weights=w)
    events = np.bincount(codes, weights=w * a["y"])
    if binned:
        risk = (np.bincount(codes, weights=w * risk) / total)[codes]
    observed = (events / total)[codes]
    return weighted_mean(np.abs(risk - observed), w)


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
    check_level(level)
    a = prepare(y, risk, score, weights)
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
        label = [tidy_number(v) for v in np.unique(s)]
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

    def describe(self) -> str:
        """The test in one line, as every report shows it: ``'5.31 on 3 df, p = 0.150'``, or NA
        with the reason when the test is undefined (no p-value is shown next to an NA statistic)."""
        if self.df < 1:
            return "NA (< 3 groups)"
        if not np.isfinite(self.statistic):
            # a group predicted with certainty (risk 0 or 1) holds an outcome against it
            return "NA (a predicted risk of 0% or 100% is contradicted by an outcome)"
        p = f"p = {self.p_value:.3f}" if self.p_value >= 0.001 else "p < 0.001"
        return f"{self.statistic:.2f} on {self.df} df, {p}"


def hosmer_lemeshow(y, risk, groups: int = 10, weights=None) -> HosmerLemeshowResult:
    """Hosmer–Lemeshow test with tie-aware grouping of the predicted risk.

    Integer scores give few distinct risks, so the classic "deciles of risk" would split
    rows with the same prediction at random. Instead:

    * if there are at most ``groups`` distinct predicted risks, each distinct risk is a
      group;
    * otherwise rows are put into ``groups`` quantile groups of predicted risk that never
      split tied risks (so slightly fewer groups can result).

    ``df = G - 2`` for ``G`` groups used; frequency ``weights`` count rows. With fewer than 3 groups the test is
    undefined: the statistic is still returned but ``p_value`` is NaN and a ``CalibrationWarning`` is issued.

    Examples
    --------
    >>> hl = hosmer_lemeshow([0, 1, 0, 1, 1, 1], [.2, .2, .5, .5, .8, .8])
    >>> hl.groups, hl.df, round(hl.statistic, 4)  # (1-.4)^2/.32 + 0 + (2-1.6)^2/.32
    (3, 1, 1.625)
    """
    if not (isinstance(groups, (int, np.integer)) and not isinstance(groups, bool) and groups >= 3):
        raise SettingsError(f"`groups` must be an integer of at least 3; got {groups!r}.")
    a = prepare(y, risk, weights=weights)
    p, yv, w = a["risk"], a["y"], a["weights"]
    vals, inv = np.unique(p, return_inverse=True)
    if vals.size <= groups:
        codes = inv
        grouping = f"one group per distinct predicted risk ({vals.size} distinct values)"
    else:
        codes = quantile_codes(p, w, groups)
        grouping = (f"{codes.max() + 1} quantile groups of predicted risk "
                    f"(asked for {groups}; tied risks are never split)")
    g = int(codes.max()) + 1
    n = np.bincount(codes, weights=w, minlength=g)
    obs = np.bincount(codes, weights=w * yv, minlength=g)
    exp = np.bincount(codes, weights=w * p, minlength=g)
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


def expected_calibration_error(y, risk, bins: int = 10, weights=None) -> float:
    """Expected calibration error with equal-width bins of predicted risk.

    ``ECE = sum_b (N_b/N) |O_b/N_b - mean(p in b)|`` over the bins ``[0, 1/B), [1/B, 2/B),
    ..., [(B-1)/B, 1]``. With ``bins=10`` this is Chi & Birbil's (2026) grouping ``[p_i, p_{i+1})`` for
    ``p_i = i/10``. Empty bins contribute nothing; frequency ``weights`` count rows.

    Examples
    --------
    >>> # bin [0.2, 0.3): risks .2,.2, one event -> |.5 - .2| * 2/3; bin [0.9, 1]: |1 - .9| * 1/3
    >>> round(expected_calibration_error([0, 1, 1], [0.2, 0.2, 0.9]), 4)
    0.2333
    """
    if not (isinstance(bins, (int, np.integer)) and not isinstance(bins, bool) and bins >= 1):
        raise SettingsError(f"`bins` must be a positive integer; got {bins!r}.")
    a = prepare(y, risk, weights=weights)
    p, w = a["risk"], a["weights"]
    # edges i/B (not linspace) so that e.g. a risk of exactly 0.3 falls in [0.3, 0.4)
    edges = np.arange(bins + 1) / bins
    b = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, bins - 1)
    n = np.bincount(b, weights=w, minlength=bins)
    obs = np.bincount(b, weights=w * a["y"], minlength=bins)
    pred = np.bincount(b, weights=w * p, minlength=bins)
    used = n > 0
    return float(np.sum(np.abs(obs[used] - pred[used])) / w.sum())


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


def calibration_intercept_slope(y, risk, level: float = 0.95, weights=None) -> CalibrationResult:
    """Calibration intercept and slope by logistic recalibration (statsmodels GLM Binomial).

    * slope: fit ``y ~ 1 + logit(p)``; the coefficient of ``logit(p)``.
    * intercept (calibration-in-the-large): fit ``y ~ 1`` with offset ``logit(p)``.

    Intervals are Wald intervals from the GLM. When every risk is the same (a model with
    no points), the slope is not identifiable: it is reported as NaN with a
    ``CalibrationWarning``. Frequency ``weights`` enter the GLMs as ``freq_weights``.

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
    # the GLM module alone: statsmodels.api also imports its plotting and time-series modules
    from statsmodels.genmod.families import Binomial
    from statsmodels.genmod.generalized_linear_model import GLM

    check_level(level)
    a = prepare(y, risk, weights=weights, need_both_classes=True)
    p, yv = a["risk"], a["y"]
    if np.any((p <= 0) | (p >= 1)):
        raise DataError("`risk` has values of exactly 0 or 1, whose logit is infinite; "
                        "calibration intercept and slope need risks strictly inside (0, 1).")
    # each distinct (outcome, risk) pair once with its total frequency: the same likelihood, so the
    # same estimates and Wald intervals, from a few rows instead of all of them
    w = np.ones(p.size) if weights is None else np.asarray(a["weights"], dtype=float)
    pairs, inverse = np.unique(np.column_stack([yv, p]), axis=0, return_inverse=True)
    freq = {"freq_weights": np.bincount(inverse.ravel(), weights=w, minlength=len(pairs))}
    yv, p = pairs[:, 0], pairs[:, 1]
    lp = special.logit(p)
    alpha = 1 - level
    family = Binomial()
    with np.errstate(divide="ignore", invalid="ignore"):
        # with as many distinct (outcome, risk) pairs as parameters statsmodels divides by zero
        # residual degrees of freedom for a scale the binomial family does not use
        citl = GLM(yv, np.ones((p.size, 1)), family=family, offset=lp, **freq).fit()
    ci = np.asarray(citl.conf_int(alpha=alpha))
    intercept, ilo, ihi = float(np.asarray(citl.params)[0]), float(ci[0, 0]), float(ci[0, 1])
    events, others = lp[yv == 1], lp[yv == 0]
    if np.ptp(lp) == 0:
        warnings.warn("All predicted risks are equal, so the calibration slope is undefined; "
                      "it is reported as NA.", CalibrationWarning, stacklevel=2)
        slope = slo = shi = float("nan")
    elif events.min() >= others.max() or events.max() <= others.min():
        # the risk separates events from non-events (a small group, typically): the slope's
        # likelihood has no finite maximum, and the GLM would return an arbitrary large number
        warnings.warn("The predicted risks separate events from non-events completely, so the calibration "
                      "slope has no finite estimate; it is reported as NA.", CalibrationWarning, stacklevel=2)
        slope = slo = shi = float("nan")
    else:
        fit = GLM(yv, np.column_stack([np.ones(p.size), lp]), family=family, **freq).fit()
        ci = np.asarray(fit.conf_int(alpha=alpha))
        slope, slo, shi = float(np.asarray(fit.params)[1]), float(ci[1, 0]), float(ci[1, 1])
    return CalibrationResult(intercept, ilo, ihi, slope, slo, shi, level)
