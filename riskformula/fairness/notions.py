"""Group fairness notions as constraints inside the certified search (Aghaei, 2024, §2.4.3).

Each notion bounds how much a rate of "predicted positive" may differ between the groups of a
protected attribute, on the training rows:

* :func:`statistical_parity` — selection rates (Dwork et al., 2012);
* :func:`conditional_statistical_parity` — selection rates within each level of a legitimate
  factor (Corbett-Davies et al., 2017);
* :func:`predictive_equality` — false positive rates (Chouldechova, 2017);
* :func:`equal_opportunity` — true positive rates (Hardt, Price & Srebro, 2016);
* :func:`equalized_odds` — both (Hardt, Price & Srebro, 2016);

(:func:`~riskformula.fairness.mean_parity.score_balance`, threshold-free, is in :mod:`.mean_parity`; the
argument checks and row builders the notions share are in :mod:`.rows`.)

How they are solved.  "Predicted positive" is decided by a cut-off on the risk (``at_risk=0.5``:
risk ≥ 50%) or on the score (``at_score=k``: total points ≥ k).  Rows with the same design row
share one binary z = 1[score ≥ cut-off], linked to the points by two big-M rows whose M comes from
the coefficient and intercept bounds; so the problem grows with the number of distinct design rows,
not with the number of rows.  With integer points and integer-valued design rows the score is an
integer, the cut-off is the smallest integer score whose risk reaches ``at_risk`` (on score scale
m, risk ≥ p is intercept + score ≥ m·logit(p): each scale of a fitted scale has its own cut-off),
and the link is exact.  A design row with real values (a continuous predictor) has a real score; there the link
needs a margin: its score may not fall in [cut-off − 1e-4, cut-off) (:data:`REAL_SCORE_MARGIN`),
so the certificate covers the models with no training score in that band.  A group's rate is then
a linear function of the z's (counts over a constant group size), and every bound is linear:

* a difference, for each pair of groups p, q in a stratum: n_q·A_p − n_p·A_q ≤ δ·n_p·n_q with
  A the (weighted) count of predicted positives, so with whole weights the row has integer
  coefficients and is checked exactly; all pairs within δ is the same as max − min ≤ δ;
* a ratio (the "four-fifths rule", ``min_ratio=0.8``): n_q·A_p ≥ ρ·n_p·A_q for every ordered pair;
* against a ``reference`` group, optionally one-sided (``side="above"`` or ``"below"``);
* a penalty instead of a bound (``weight=w``): the objective gains w × (the largest difference).

The search accepts a model only when these rows hold for its true predictions, so the fitted
score satisfies the bounds exactly on the training rows (see the summary's fairness table); on
new rows they hold only approximately — audit with :meth:`RiskScore.fairness`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np
from scipy.special import expit, logit

from .._json import plain
from ..errors import SettingsError
from .groups import (NOTION_STRATA, RATE_NAMES, data_groups, disparity, group_column, group_labels,
                     group_rates, sorted_groups, stratum_name, strata)
from .rows import (FairnessConstraint, Rate, add_difference_penalty, all_whole, by_columns, check_bounds, check_cutoff,
                   check_side, comparisons, diff_row, in_group, ratio_row, same_group, warn_small)

__all__ = ["GroupParity", "statistical_parity", "conditional_statistical_parity", "predictive_equality",
           "equal_opportunity", "equalized_odds", "REAL_SCORE_MARGIN"]

#: scores of design rows with real values may not fall this far below the cut-off (see module notes)
REAL_SCORE_MARGIN = 1e-4


# --------------------------------------------------------------------------------------
# the threshold notions
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class GroupParity(FairnessConstraint):
    """A bound on how much group rates of "predicted positive" differ (see the module notes).

    Build it with :func:`statistical_parity`, :func:`conditional_statistical_parity`,
    :func:`predictive_equality`, :func:`equal_opportunity` or :func:`equalized_odds`.
    """

    notion: str
    by: tuple
    at_risk: float | None = 0.5
    at_score: float | None = None
    max_diff: float | None = None
    min_ratio: float | None = None
    reference: object = None
    side: str = "both"
    given: str | None = None
    weight: float | None = None

    bisect_bound = True

    def on_the_risk(self) -> bool:
        """Its decision cut-off is a risk (``at_risk``), so its rows move with the score scale."""
        return self.at_score is None

    # --- text ---------------------------------------------------------------------------
    def describe(self) -> str:
        by = repr(self.by[0]) if len(self.by) == 1 else repr(list(self.by))
        args = [by]
        if self.given is not None:
            args.append(f"given={self.given!r}")
        args.append(f"at_risk={self.at_risk:g}" if self.at_score is None else f"at_score={self.at_score:g}")
        if self.max_diff is not None:
            args.append(f"max_diff={self.max_diff:g}")
        if self.min_ratio is not None:
            args.append(f"min_ratio={self.min_ratio:g}")
        if self.weight is not None:
            args.append(f"weight={self.weight:g}")
        if self.reference is not None:
            args.append(f"reference={self.reference!r}")
        if self.side != "both":
            args.append(f"side={self.side!r}")
        return f"{self.notion}({', '.join(args)})"

    @property
    def rule(self) -> str:
        """The decision rule in words: ``risk ≥ 50%`` or ``score ≥ 3``."""
        # without at_score the cut-off is at_risk (the constructors set exactly one of them)
        return f"risk ≥ {100 * cast(float, self.at_risk):g}%" if self.at_score is None else f"score ≥ {self.at_score:g}"

    # --- the formulation ----------------------------------------------------------------
    def _groups(self, tr, what: str) -> tuple:
        groups = group_labels([tr.column(c, what) for c in self.by], self.by)
        given = tr.column(self.given, what) if self.given is not None else None
        return groups, given

    def apply(self, b) -> None:
        what = f"`{self.describe()}`"
        tr = b.training
        if tr is None:
            raise SettingsError(f"{what} is a statement about the training rows; it can only be used in "
                                "`risk_score(formula, data, constraints=[...])`.")
        if self.at_score is not None and any(b.terms.direction(j) < 0 for j in range(b.d)):
            raise SettingsError(f"{what}: `at_score` needs a score that is a sum of points; with threshold() or "
                                "cut() terms the printed score also holds the top intervals' points, which depend on "
                                "the cuts chosen. Use `at_risk=` instead.")
        groups, given = self._groups(tr, what)
        levels = sorted_groups(groups)
        if self.reference is not None and not any(same_group(self.reference, g) for g in levels):
            raise SettingsError(f"{what}: reference={self.reference!r} is not a group of {list(self.by)}; the groups "
                                f"are {levels[:20]}.")
        if len(levels) < 2:
            raise SettingsError(f"{what}: the training rows hold only one group of {list(self.by)} ({levels}); "
                                "there is nothing to compare.")
        sts = strata(self.notion, tr.y, given)
        used = np.zeros(tr.n, bool)
        for _, _, mask in sts:
            used |= mask
        patterns, inverse = np.unique(tr.X[used], axis=0, return_inverse=True)
        pattern_of = np.full(tr.n, -1)
        pattern_of[used] = inverse.ravel()
        z = b.add_indicators(*self._conditions(patterns, b.scale), name=f"predicted positive ({self.rule})")
        rates_by_stratum: dict = {}
        small: list[tuple[str, object, float]] = []
        for kind, level, mask in sts:
            where = stratum_name(kind, level, self.given)
            present = sorted_groups(groups[mask])
            for g in levels:
                if not any(same_group(g, h) for h in present) and kind != "given":
                    small.append((where, g, 0))
            rates = []
            for g in present:
                rows = mask & in_group(groups, g)
                counts = np.bincount(pattern_of[rows], weights=tr.weights[rows], minlength=len(patterns))
                n = float(tr.weights[rows].sum())
                if n <= 0:
                    continue
                small.append((where, g, n))
                coefs = {int(z[k]): float(c) for k, c in enumerate(counts) if c != 0}
                rates.append(Rate(g, where, coefs, n, all_whole(n, *counts)))
            if len(rates) >= 2:
                rates_by_stratum[where] = rates
        warn_small(self.describe(), small)
        if not rates_by_stratum:
            raise SettingsError(f"{what}: no stratum of the training rows holds two groups to compare.")
        pairs = comparisons(rates_by_stratum, self.reference, self.side)
        name = self.describe()
        for p, q in pairs:
            if self.max_diff is not None:
                diff_row(b, p, q, None, self.max_diff, name)
            if self.min_ratio is not None:
                ratio_row(b, q, p, self.min_ratio, name)  # r_q ≥ ρ·r_p: p is not above q by more than 1/ρ
        if self.weight is not None:
            self._penalty(b, pairs, patterns, z)

    def _conditions(self, patterns: np.ndarray, scale: float = 1.0):
        """(E, cutoff, margin) of "predicted positive" for each distinct design row, on score
        scale ``scale`` (risk = expit((intercept + score)/scale))."""
        k = len(patterns)
        integral = np.all(patterns == np.round(patterns), axis=1)
        if self.at_score is None:
            E = np.hstack([np.ones((k, 1)), patterns])
            tau = scale * float(logit(self.at_risk))

            def risk(s):  # as RiskScore.risk_of computes it
                return expit(s if scale == 1.0 else s / scale)
            # the smallest integer score whose risk (as predict() computes it) reaches at_risk
            k_int = next(s for s in range(math.floor(tau) - 1, math.floor(tau) + 3) if risk(s) >= self.at_risk)
        else:
            E = np.hstack([np.zeros((k, 1)), patterns])
            tau = self.at_score
            k_int = math.ceil(tau)
        cutoff = np.where(integral, float(k_int), tau)
        margin = np.where(integral, 1.0, REAL_SCORE_MARGIN)
        return E, cutoff, margin

    def _penalty(self, b, pairs, patterns, z) -> None:
        """t ≥ r_p − r_q for every bounded pair, with cost ``weight`` on t."""
        assert self.weight is not None  # called only with a weight
        E, cutoff, _ = self._conditions(patterns, b.scale)
        add_difference_penalty(b, self.describe(), self.weight, pairs, int(z[0]),
                               lambda lam: (E @ lam >= cutoff).astype(float))

    # --- measuring ----------------------------------------------------------------------
    def predicted_positive(self, model, data) -> np.ndarray:
        """0/1 "predicted positive" of ``model`` on ``data`` under this notion's cut-off."""
        if self.at_score is None:
            return (model.predict(data).to_numpy() >= self.at_risk).astype(float)
        return (model.score(data).to_numpy() >= self.at_score).astype(float)

    def rates(self, model, data, weights=None):
        """The group rate table (:func:`riskformula.fairness.groups.group_rates`) of ``model`` on ``data``."""
        y = model.observed(data).to_numpy()
        what = f"`{self.describe()}`"
        groups = data_groups(data, self.by, what)
        given = group_column(data, self.given, what) if self.given is not None else None
        w = np.ones(len(data)) if weights is None else np.asarray(weights, float)
        return group_rates(self.notion, self.predicted_positive(model, data), y, groups, w, given, self.given)

    def assess(self, model, data, weights=None) -> list[dict]:
        t = self.rates(model, data, weights)
        diff, ratio = disparity(t, self.reference, self.side)
        kinds = NOTION_STRATA[self.notion]
        rate = " and ".join(dict.fromkeys(RATE_NAMES[k] for k in kinds))
        vs = "largest difference" if self.reference is None else f"largest gap to {self.reference!r}"
        out = []
        if self.max_diff is not None or self.weight is not None:
            out.append(dict(constraint=self.describe(), quantity=f"{rate}: {vs}", value=diff,
                            bound=self.max_diff if self.max_diff is not None else math.nan,
                            slack=(self.max_diff - diff) if self.max_diff is not None else math.nan))
        if self.min_ratio is not None:
            out.append(dict(constraint=self.describe(), quantity=f"{rate}: smallest ratio", value=ratio,
                            bound=self.min_ratio, slack=ratio - self.min_ratio))
        return out


def _parity(notion: str, fn: str, by, at_risk, at_score, max_diff, min_ratio, reference, side, weight,
            given=None) -> GroupParity:
    cols = by_columns(fn, by)
    risk, score = check_cutoff(fn, at_risk, at_score)
    max_diff, min_ratio, weight = check_bounds(fn, max_diff, min_ratio, weight)
    if isinstance(reference, list):
        reference = tuple(reference)
    return GroupParity(notion, cols, risk, score, max_diff, min_ratio, plain(reference),
                       check_side(fn, reference, side), given, weight)


def statistical_parity(by, *, at_risk=None, at_score=None, max_diff=0.05, min_ratio=None, reference=None,
                       side="both", weight=None) -> GroupParity:
    """Statistical parity (demographic parity): the share of rows predicted positive differs by at most
    ``max_diff`` between the groups of ``by`` (Dwork et al., 2012).

    Parameters
    ----------
    by : str or list of str
        The protected attribute, a column of the training data (in the formula or not), or a list
        of columns (intersectional groups).
    at_risk : float, optional
        The decision cut-off as a risk in (0, 1): predicted positive when risk ≥ ``at_risk``; None
        (default): 0.5, unless ``at_score`` is given.
    at_score : float, optional
        The decision cut-off as total points instead: predicted positive when the score ≥
        ``at_score`` (give one of ``at_risk`` and ``at_score``, not both).
    max_diff : float or None, default 0.05
        Largest allowed difference of two groups' selection rates (every pair, i.e. max − min), or
        of a group's and the ``reference`` group's, from 0 to 1; None for no difference bound.
    min_ratio : float, optional
        Smallest allowed ratio of two groups' selection rates (above 0, at most 1), e.g. 0.8 for the
        four-fifths rule; None (default): no ratio bound.
    reference : object, optional
        A group (a level of ``by``; a tuple of levels with several columns): compare every group
        with this one instead of every pair.
    side : {"both", "above", "below"}, default "both"
        ``"above"`` bounds only how far a group's rate may be above the reference's, ``"below"``
        only how far below (one-sided; needs ``reference``).
    weight : float, optional
        A positive number: instead of (or besides) a bound, add ``weight`` × (largest difference)
        to the objective (with ``max_diff=None`` for a penalty only).

    Returns
    -------
    GroupParity
        The constraint, for ``risk_score(..., constraints=[...])``.

    Examples
    --------
    >>> statistical_parity("sex", at_risk=0.5, max_diff=0.05).describe()
    "statistical_parity('sex', at_risk=0.5, max_diff=0.05)"
    """
    return _parity("statistical_parity", "statistical_parity", by, at_risk, at_score, max_diff, min_ratio,
                   reference, side, weight)


def conditional_statistical_parity(by, given, *, at_risk=None, at_score=None, max_diff=0.05, min_ratio=None,
                                   reference=None, side="both", weight=None) -> GroupParity:
    """Conditional statistical parity: statistical parity within each level of a legitimate factor
    ``given`` (a column of the data), e.g. the same selection rates for men and women with the same
    number of prior offences (Corbett-Davies et al., 2017).

    Parameters
    ----------
    by : str or list of str
        The protected attribute, a column of the training data (in the formula or not), or a list
        of columns (intersectional groups).
    given : str
        The legitimate factor's column; the groups are compared within each of its levels.
    at_risk : float, optional
        The decision cut-off as a risk in (0, 1): predicted positive when risk ≥ ``at_risk``; None
        (default): 0.5, unless ``at_score`` is given.
    at_score : float, optional
        The decision cut-off as total points instead: predicted positive when the score ≥
        ``at_score`` (give one of ``at_risk`` and ``at_score``, not both).
    max_diff : float or None, default 0.05
        Largest allowed difference of two groups' selection rates within a level of ``given`` (every
        pair, i.e. max − min), or of a group's and the ``reference`` group's, from 0 to 1; None for
        no difference bound.
    min_ratio : float, optional
        Smallest allowed ratio of two groups' selection rates within a level of ``given`` (above 0,
        at most 1), e.g. 0.8 for the four-fifths rule; None (default): no ratio bound.
    reference : object, optional
        A group (a level of ``by``; a tuple of levels with several columns): compare every group
        with this one instead of every pair.
    side : {"both", "above", "below"}, default "both"
        ``"above"`` bounds only how far a group's rate may be above the reference's, ``"below"``
        only how far below (one-sided; needs ``reference``).
    weight : float, optional
        A positive number: instead of (or besides) a bound, add ``weight`` × (largest difference)
        to the objective (with ``max_diff=None`` for a penalty only).

    Returns
    -------
    GroupParity
        The constraint, for ``risk_score(..., constraints=[...])``.

    Examples
    --------
    >>> conditional_statistical_parity("race", given="priors_band", max_diff=0.1).describe()
    "conditional_statistical_parity('race', given='priors_band', at_risk=0.5, max_diff=0.1)"
    """
    if not isinstance(given, str) or not given:
        raise SettingsError("`conditional_statistical_parity` needs `given` as the column name of the legitimate "
                            f"factor (e.g. given='priors_band'); got {given!r}.")
    return _parity("conditional_statistical_parity", "conditional_statistical_parity", by, at_risk, at_score,
                   max_diff, min_ratio, reference, side, weight, given=given)


def predictive_equality(by, *, at_risk=None, at_score=None, max_diff=0.05, min_ratio=None, reference=None,
                        side="both", weight=None) -> GroupParity:
    """Predictive equality: false positive rates (predicted positive among non-events) differ by
    at most ``max_diff`` between groups (Chouldechova, 2017).

    Parameters
    ----------
    by : str or list of str
        The protected attribute, a column of the training data (in the formula or not), or a list
        of columns (intersectional groups).
    at_risk : float, optional
        The decision cut-off as a risk in (0, 1): predicted positive when risk ≥ ``at_risk``; None
        (default): 0.5, unless ``at_score`` is given.
    at_score : float, optional
        The decision cut-off as total points instead: predicted positive when the score ≥
        ``at_score`` (give one of ``at_risk`` and ``at_score``, not both).
    max_diff : float or None, default 0.05
        Largest allowed difference of two groups' false positive rates (every pair, i.e. max − min),
        or of a group's and the ``reference`` group's, from 0 to 1; None for no difference bound.
    min_ratio : float, optional
        Smallest allowed ratio of two groups' false positive rates (above 0, at most 1), e.g. 0.8
        for the four-fifths rule; None (default): no ratio bound.
    reference : object, optional
        A group (a level of ``by``; a tuple of levels with several columns): compare every group
        with this one instead of every pair.
    side : {"both", "above", "below"}, default "both"
        ``"above"`` bounds only how far a group's rate may be above the reference's, ``"below"``
        only how far below (one-sided; needs ``reference``).
    weight : float, optional
        A positive number: instead of (or besides) a bound, add ``weight`` × (largest difference)
        to the objective (with ``max_diff=None`` for a penalty only).

    Returns
    -------
    GroupParity
        The constraint, for ``risk_score(..., constraints=[...])``.

    Examples
    --------
    >>> predictive_equality("race", at_score=3, max_diff=0.05).describe()
    "predictive_equality('race', at_score=3, max_diff=0.05)"
    """
    return _parity("predictive_equality", "predictive_equality", by, at_risk, at_score, max_diff, min_ratio,
                   reference, side, weight)


def equal_opportunity(by, *, at_risk=None, at_score=None, max_diff=0.05, min_ratio=None, reference=None,
                      side="both", weight=None) -> GroupParity:
    """Equal opportunity: true positive rates (predicted positive among events) differ by at most
    ``max_diff`` between groups (Hardt, Price & Srebro, 2016).

    Parameters
    ----------
    by : str or list of str
        The protected attribute, a column of the training data (in the formula or not), or a list
        of columns (intersectional groups).
    at_risk : float, optional
        The decision cut-off as a risk in (0, 1): predicted positive when risk ≥ ``at_risk``; None
        (default): 0.5, unless ``at_score`` is given.
    at_score : float, optional
        The decision cut-off as total points instead: predicted positive when the score ≥
        ``at_score`` (give one of ``at_risk`` and ``at_score``, not both).
    max_diff : float or None, default 0.05
        Largest allowed difference of two groups' true positive rates (every pair, i.e. max − min),
        or of a group's and the ``reference`` group's, from 0 to 1; None for no difference bound.
    min_ratio : float, optional
        Smallest allowed ratio of two groups' true positive rates (above 0, at most 1), e.g. 0.8 for
        the four-fifths rule; None (default): no ratio bound.
    reference : object, optional
        A group (a level of ``by``; a tuple of levels with several columns): compare every group
        with this one instead of every pair.
    side : {"both", "above", "below"}, default "both"
        ``"above"`` bounds only how far a group's rate may be above the reference's, ``"below"``
        only how far below (one-sided; needs ``reference``).
    weight : float, optional
        A positive number: instead of (or besides) a bound, add ``weight`` × (largest difference)
        to the objective (with ``max_diff=None`` for a penalty only).

    Returns
    -------
    GroupParity
        The constraint, for ``risk_score(..., constraints=[...])``.

    Examples
    --------
    >>> equal_opportunity("race", at_risk=0.5, max_diff=0.05).describe()
    "equal_opportunity('race', at_risk=0.5, max_diff=0.05)"
    """
    return _parity("equal_opportunity", "equal_opportunity", by, at_risk, at_score, max_diff, min_ratio,
                   reference, side, weight)


def equalized_odds(by, *, at_risk=None, at_score=None, max_diff=0.05, min_ratio=None, reference=None,
                   side="both", weight=None) -> GroupParity:
    """Equalized odds: both true and false positive rates differ by at most ``max_diff`` between
    groups (Hardt, Price & Srebro, 2016).

    Parameters
    ----------
    by : str or list of str
        The protected attribute, a column of the training data (in the formula or not), or a list
        of columns (intersectional groups).
    at_risk : float, optional
        The decision cut-off as a risk in (0, 1): predicted positive when risk ≥ ``at_risk``; None
        (default): 0.5, unless ``at_score`` is given.
    at_score : float, optional
        The decision cut-off as total points instead: predicted positive when the score ≥
        ``at_score`` (give one of ``at_risk`` and ``at_score``, not both).
    max_diff : float or None, default 0.05
        Largest allowed difference of two groups' true positive rates, and of their false positive
        rates (every pair, i.e. max − min), or of a group's and the ``reference`` group's, from 0 to
        1; None for no difference bound.
    min_ratio : float, optional
        Smallest allowed ratio of two groups' true positive rates, and of their false positive rates
        (above 0, at most 1), e.g. 0.8 for the four-fifths rule; None (default): no ratio bound.
    reference : object, optional
        A group (a level of ``by``; a tuple of levels with several columns): compare every group
        with this one instead of every pair.
    side : {"both", "above", "below"}, default "both"
        ``"above"`` bounds only how far a group's rate may be above the reference's, ``"below"``
        only how far below (one-sided; needs ``reference``).
    weight : float, optional
        A positive number: instead of (or besides) a bound, add ``weight`` × (largest difference)
        to the objective (with ``max_diff=None`` for a penalty only).

    Returns
    -------
    GroupParity
        The constraint, for ``risk_score(..., constraints=[...])``.

    Examples
    --------
    >>> equalized_odds("sex", max_diff=0.1).describe()
    "equalized_odds('sex', at_risk=0.5, max_diff=0.1)"
    """
    return _parity("equalized_odds", "equalized_odds", by, at_risk, at_score, max_diff, min_ratio,
                   reference, side, weight)
