"""Group fairness notions as constraints inside the certified search (Aghaei, 2024, §2.4.3).

Each notion bounds how much a rate of "predicted positive" may differ between the groups of a
protected attribute, on the training rows:

* :func:`statistical_parity` — selection rates (Dwork et al., 2012);
* :func:`conditional_statistical_parity` — selection rates within each level of a legitimate
  factor (Corbett-Davies et al., 2017);
* :func:`predictive_equality` — false positive rates (Chouldechova, 2017);
* :func:`equal_opportunity` — true positive rates (Hardt, Price & Srebro, 2016);
* :func:`equalized_odds` — both (Hardt, Price & Srebro, 2016);
* :func:`score_balance` — threshold-free: mean score of each group, among all rows, events
  ("balance for the positive class") or non-events (Kleinberg, Mullainathan & Raghavan, 2017).

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

import abc
import math
import numbers
from dataclasses import dataclass
from typing import cast
from fractions import Fraction

import numpy as np
from scipy.special import expit, logit

from ..errors import SettingsError
from ..problem.constraints import Constraint
from .groups import (NOTION_STRATA, RATE_NAMES, data_groups, disparity, group_column, group_labels,
                     group_rates, sorted_groups, stratum_name, strata, warn_small_groups)

__all__ = ["FairnessConstraint", "GroupParity", "MeanParity", "ScoreBalance", "statistical_parity",
           "conditional_statistical_parity", "predictive_equality", "equal_opportunity", "equalized_odds",
           "score_balance", "REAL_SCORE_MARGIN"]

#: scores of design rows with real values may not fall this far below the cut-off (see module notes)
REAL_SCORE_MARGIN = 1e-4

#: ratio bounds are written with integer coefficients when their fraction has a denominator up to this
_MAX_DENOMINATOR = 10 ** 6


class FairnessConstraint(Constraint):
    """Base class of the fairness notions: a constraint that can also measure itself on data."""

    # group rates see every row's prediction, and their rows are written for whole scores
    prunes_cuts = False
    whole_scores = True
    reads_rows = True

    @abc.abstractmethod
    def assess(self, model, data, weights=None) -> list[dict]:
        """The constrained quantities of ``model`` on ``data``: one dict per bound with
        ``constraint``, ``quantity``, ``value``, ``bound`` and ``slack`` (≥ 0 when it holds)."""


# --------------------------------------------------------------------------------------
# argument checks
# --------------------------------------------------------------------------------------


def _by(fn: str, by) -> tuple:
    cols = (by,) if isinstance(by, str) else tuple(by) if isinstance(by, (list, tuple)) else None
    if not cols or not all(isinstance(c, str) and c for c in cols):
        raise SettingsError(f"`{fn}` needs `by` as the protected attribute's column name (e.g. 'sex') or a list "
                            f"of names for intersectional groups (e.g. ['sex', 'race']); got {by!r}.")
    return cols


def _cutoff(fn: str, at_risk, at_score) -> tuple:
    if at_risk is not None and at_score is not None:
        raise SettingsError(f"`{fn}` takes one decision cut-off: `at_risk` (a risk, e.g. 0.5) or `at_score` "
                            f"(total points, e.g. 3), not both.")
    if at_score is not None:
        if isinstance(at_score, bool) or not isinstance(at_score, numbers.Real) or not math.isfinite(at_score):
            raise SettingsError(f"`{fn}(at_score=...)` must be a number of points such as 3; got {at_score!r}.")
        return None, float(at_score)
    at_risk = 0.5 if at_risk is None else at_risk
    if isinstance(at_risk, bool) or not isinstance(at_risk, numbers.Real) or not 0 < at_risk < 1:  # type: ignore[operator]  # typeshed: numbers.Real has no __gt__/__ge__
        raise SettingsError(f"`{fn}(at_risk=...)` must be a risk strictly between 0 and 1 (e.g. 0.5); got {at_risk!r}.")
    return float(at_risk), None


def _fraction(fn: str, name: str, v, upper: float = 1.0, allow_zero: bool = True) -> float | None:
    if v is None:
        return None
    ok = isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)
    if not ok or v < 0 or v > upper or (v == 0 and not allow_zero):
        span = f"{'0' if allow_zero else 'above 0'} to {upper:g}"
        raise SettingsError(f"`{fn}({name}=...)` must be a number from {span}; got {v!r}.")
    return float(v)


def _bounds(fn: str, max_diff, min_ratio, weight, diff_upper: float = 1.0) -> tuple:
    max_diff = _fraction(fn, "max_diff", max_diff, upper=diff_upper)
    min_ratio = _fraction(fn, "min_ratio", min_ratio, allow_zero=False)
    if weight is not None:
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or not 0 < weight < math.inf:  # type: ignore[operator]  # typeshed: numbers.Real has no __gt__/__ge__
            raise SettingsError(f"`{fn}(weight=...)` must be a positive number (the objective's cost per unit of "
                                f"disparity); got {weight!r}.")
        weight = float(weight)
    if max_diff is None and min_ratio is None and weight is None:
        raise SettingsError(f"`{fn}` needs a bound: `max_diff` (e.g. 0.05), `min_ratio` (e.g. 0.8, the four-fifths "
                            f"rule) or, for a penalty instead of a bound, `weight`.")
    return max_diff, min_ratio, weight


def _side(fn: str, reference, side) -> str:
    if side not in ("both", "above", "below"):
        raise SettingsError(f"`{fn}(side=...)` must be 'both', 'above' (no group's rate above the reference's by "
                            f"more than the bound) or 'below' (none below it); got {side!r}.")
    if side != "both" and reference is None:
        raise SettingsError(f"`{fn}(side={side!r})` bounds the gap to one group: name it with `reference=` "
                            f"(e.g. reference='White').")
    return side


def _plain(v):
    return v.item() if hasattr(v, "item") else v


# --------------------------------------------------------------------------------------
# rows with exact arithmetic
# --------------------------------------------------------------------------------------


def _exact(*counts) -> bool:
    return all(float(c).is_integer() for c in counts)


def _combine(a: dict, ca, b: dict, cb) -> dict:
    """ca·a − cb·b over the union of keys."""
    out = {k: ca * v for k, v in a.items()}
    for k, v in b.items():
        out[k] = out.get(k, 0) - cb * v
    return {k: float(v) for k, v in out.items() if v != 0}


@dataclass(frozen=True)
class _Rate:
    """The predicted-positive count of one group in one stratum: Σ coefs[z]·z over n rows."""

    group: object
    stratum: str
    coefs: dict
    n: float
    integral: bool


def _diff_row(b, p: _Rate, q: _Rate, lower: float | None, upper: float | None, name: str) -> None:
    """lower ≤ r_p − r_q ≤ upper (None: no bound on that side), integer-exact when counts are whole."""
    if p.integral and q.integral:
        n_p, n_q = int(p.n), int(q.n)
        g = math.gcd(n_p, n_q)
        coefs = _combine(p.coefs, n_q // g, q.coefs, n_p // g)
        scale = Fraction(n_p * n_q, g)
        hi = math.inf if upper is None else math.floor(Fraction(repr(upper)) * scale)
        lo = -math.inf if lower is None else math.ceil(Fraction(repr(lower)) * scale)
        b.add_row(coefs, float(lo), float(hi), name)
    else:
        coefs = _combine(p.coefs, 1.0 / p.n, q.coefs, 1.0 / q.n)
        b.add_row(coefs, -math.inf if lower is None else lower, math.inf if upper is None else upper, name)


def _ratio_row(b, p: _Rate, q: _Rate, ratio: float, name: str) -> None:
    """r_p ≥ ratio·r_q."""
    frac = Fraction(repr(ratio))
    if p.integral and q.integral and frac.denominator <= _MAX_DENOMINATOR:
        a, c = frac.denominator * int(q.n), frac.numerator * int(p.n)
        g = math.gcd(a, c)
        b.add_row(_combine(p.coefs, a // g, q.coefs, c // g), 0.0, math.inf, name)
    else:
        b.add_row(_combine(p.coefs, 1.0 / p.n, q.coefs, ratio / q.n), 0.0, math.inf, name)


def add_difference_penalty(b, name: str, weight: float, pairs, first: int, indicators) -> None:
    """A penalty ``weight`` × t with t ≥ r_p − r_q for every compared pair of rates (rows over
    indicator columns numbered from ``first``); t is filled with the largest difference (or 0)
    from ``indicators(lam)``, the indicators' values at a score."""
    terms = [tuple((np.array([k - first for k in r.coefs], int), np.array(list(r.coefs.values())) / r.n)
                   for r in pq) for pq in pairs]

    def worst(lam, alpha):
        zval = indicators(lam)
        return max([0.0] + [float(zval[ip] @ cp - zval[iq] @ cq) for (ip, cp), (iq, cq) in terms])

    t = b.add_aux(0.0, 1.0, integer=False, name=f"{name}: largest difference", fill=worst, cost=weight)
    for p, q in pairs:
        coefs = _combine(p.coefs, 1.0 / p.n, q.coefs, 1.0 / q.n)
        coefs[t] = coefs.get(t, 0.0) - 1.0
        b.add_row(coefs, -math.inf, 0.0, f"{name}: penalty")


def _comparisons(rates_by_stratum: dict, reference, side: str):
    """(p, q, sign) triples meaning "r_p − r_q is bounded above" for every bound to write."""
    out = []
    for rates in rates_by_stratum.values():
        if reference is None:
            for i, p in enumerate(rates):
                for q in rates[i + 1:]:
                    out += [(p, q), (q, p)]
            continue
        ref = next((r for r in rates if r.group == reference), None)
        if ref is None:
            continue
        for r in rates:
            if r is ref:
                continue
            if side in ("both", "above"):
                out.append((r, ref))  # r above ref by at most δ
            if side in ("both", "below"):
                out.append((ref, r))  # r below ref by at most δ
    return out


def _warn_small(describe: str, table: list) -> None:
    """One warning naming every group with fewer than :data:`SMALL_GROUP` rows in a stratum."""
    warn_small_groups(describe, table, "the bound mostly constrains noise")


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
        if self.reference is not None and not any(_same(self.reference, g) for g in levels):
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
                if not any(_same(g, h) for h in present) and kind != "given":
                    small.append((where, g, 0))
            rates = []
            for g in present:
                rows = mask & _is(groups, g)
                counts = np.bincount(pattern_of[rows], weights=tr.weights[rows], minlength=len(patterns))
                n = float(tr.weights[rows].sum())
                if n <= 0:
                    continue
                small.append((where, g, n))
                coefs = {int(z[k]): float(c) for k, c in enumerate(counts) if c != 0}
                rates.append(_Rate(g, where, coefs, n, _exact(n, *counts)))
            if len(rates) >= 2:
                rates_by_stratum[where] = rates
        _warn_small(self.describe(), small)
        if not rates_by_stratum:
            raise SettingsError(f"{what}: no stratum of the training rows holds two groups to compare.")
        pairs = _comparisons(rates_by_stratum, self.reference, self.side)
        name = self.describe()
        for p, q in pairs:
            if self.max_diff is not None:
                _diff_row(b, p, q, None, self.max_diff, name)
            if self.min_ratio is not None:
                _ratio_row(b, q, p, self.min_ratio, name)  # r_q ≥ ρ·r_p: p is not above q by more than 1/ρ
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


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _is(values: np.ndarray, g) -> np.ndarray:
    if isinstance(g, tuple):
        return np.fromiter((v == g for v in values), bool, len(values))
    return values == g


def _parity(notion: str, fn: str, by, at_risk, at_score, max_diff, min_ratio, reference, side, weight,
            given=None) -> GroupParity:
    cols = _by(fn, by)
    risk, score = _cutoff(fn, at_risk, at_score)
    max_diff, min_ratio, weight = _bounds(fn, max_diff, min_ratio, weight)
    if isinstance(reference, list):
        reference = tuple(reference)
    return GroupParity(notion, cols, risk, score, max_diff, min_ratio, _plain(reference), _side(fn, reference, side),
                       given, weight)


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


# --------------------------------------------------------------------------------------
# the threshold-free notion: mean score
# --------------------------------------------------------------------------------------


_AMONG = {"all": "all", "events": "events", "non_events": "non-events"}


@dataclass(frozen=True, repr=False)
class MeanParity(FairnessConstraint):
    """A bound on how much a per-group mean differs among all rows, events or non-events: the
    common part of :class:`ScoreBalance` (mean points) and ``RiskParity`` (mean predicted risk)."""

    by: tuple
    among: str = "all"
    max_diff: float | None = None
    reference: object = None
    side: str = "both"
    weight: float | None = None

    #: the function that builds the constraint, as :meth:`describe` shows it
    function = ""

    def describe(self) -> str:
        by = repr(self.by[0]) if len(self.by) == 1 else repr(list(self.by))
        args = [by, f"among={self.among!r}"]
        if self.max_diff is not None:
            args.append(f"max_diff={self.max_diff:g}")
        if self.weight is not None:
            args.append(f"weight={self.weight:g}")
        if self.reference is not None:
            args.append(f"reference={self.reference!r}")
        if self.side != "both":
            args.append(f"side={self.side!r}")
        return f"{self.function}({', '.join(args)})"

    def _mask(self, y):
        kind = _AMONG[self.among]
        return np.ones(len(y), bool) if kind == "all" else (y == 1) if kind == "events" else (y == 0)

    def _compared_groups(self, groups: np.ndarray, mask: np.ndarray, what: str) -> tuple[str, list]:
        """(stratum name, sorted groups present among ``mask``), checking the reference and that
        there are two groups to compare."""
        where = stratum_name(_AMONG[self.among], None, None)
        present = sorted_groups(groups[mask])
        if self.reference is not None and not any(_same(self.reference, g) for g in present):
            raise SettingsError(f"{what}: reference={self.reference!r} is not a group of {list(self.by)} among "
                                f"{where}; the groups are {present[:20]}.")
        if len(present) < 2:
            raise SettingsError(f"{what}: the training rows ({where}) hold only one group of {list(self.by)}; "
                                f"there is nothing to compare.")
        return where, present


@dataclass(frozen=True, repr=False)
class ScoreBalance(MeanParity):
    """A bound on how much the groups' mean scores (total points) differ; see :func:`score_balance`."""

    function = "score_balance"

    def apply(self, b) -> None:
        what = f"`{self.describe()}`"
        tr = b.training
        if tr is None:
            raise SettingsError(f"{what} is a statement about the training rows; it can only be used in "
                                "`risk_score(formula, data, constraints=[...])`.")
        groups = group_labels([tr.column(c, what) for c in self.by], self.by)
        mask = self._mask(tr.y)
        where, present = self._compared_groups(groups, mask, what)
        lay = b.layout
        rates, small = [], []
        for g in present:
            rows = mask & _is(groups, g)
            w = tr.weights[rows]
            n = float(w.sum())
            sums = w @ tr.X[rows]  # Σ w·x per design column: the group's total score is sums·λ (+ n·λ_0)
            small.append((where, g, n))
            rates.append(_Rate(g, where, {int(lay.lam(j)): float(v) for j, v in enumerate(sums) if v != 0}, n,
                               _exact(n, *sums)))
        _warn_small(self.describe(), small)
        pairs = _comparisons({where: rates}, self.reference, self.side)
        if self.max_diff is not None:
            for p, q in pairs:
                _diff_row(b, p, q, None, self.max_diff, self.describe())
        if self.weight is not None:
            means = [(p, q) for p, q in pairs]

            def worst(lam, alpha):
                return max([0.0] + [sum(c * lam[k] for k, c in p.coefs.items()) / p.n
                                    - sum(c * lam[k] for k, c in q.coefs.items()) / q.n for p, q in means])

            lo, hi = b.bounds(range(b.d))
            top = float(np.abs(tr.X).max(initial=0.0) * np.maximum(np.abs(lo), np.abs(hi)).sum()) * 2
            t = b.add_aux(0.0, max(top, 1.0), integer=False, name=f"{self.describe()}: largest difference",
                          fill=worst, cost=self.weight)
            for p, q in pairs:
                coefs = _combine(p.coefs, 1.0 / p.n, q.coefs, 1.0 / q.n)
                coefs[t] = coefs.get(t, 0.0) - 1.0
                b.add_row(coefs, -math.inf, 0.0, f"{self.describe()}: penalty")

    def assess(self, model, data, weights=None) -> list[dict]:
        y = model.observed(data).to_numpy()
        mask = self._mask(y)
        groups = data_groups(data, self.by, f"`{self.describe()}`")
        score = model.score(data).to_numpy()
        w = np.ones(len(data)) if weights is None else np.asarray(weights, float)
        import pandas as pd
        rows = [(stratum_name(_AMONG[self.among], None, None), "x", g,
                 float(w[mask & _is(groups, g)].sum()), 0.0,
                 float(np.average(score[mask & _is(groups, g)], weights=w[mask & _is(groups, g)])))
                for g in sorted_groups(groups[mask])]
        t = pd.DataFrame(rows, columns=["stratum", "kind", "group", "n", "positives", "rate"])
        diff, _ = disparity(t, self.reference, self.side)
        vs = "largest difference" if self.reference is None else f"largest gap to {self.reference!r}"
        return [dict(constraint=self.describe(), quantity=f"mean score among {_AMONG[self.among]}: {vs}", value=diff,
                     bound=self.max_diff if self.max_diff is not None else math.nan,
                     slack=(self.max_diff - diff) if self.max_diff is not None else math.nan)]


def _mean_parity_args(fn: str, among, max_diff, weight, reference, unit: str, example: str):
    """Checked (among, weight, reference) of a :class:`MeanParity` constraint built by ``fn``."""
    if among not in _AMONG:
        raise SettingsError(f"`{fn}(among=...)` must be 'all', 'events' (balance for the positive class) "
                            f"or 'non_events' (balance for the negative class); got {among!r}.")
    if weight is not None and (isinstance(weight, bool) or not isinstance(weight, numbers.Real)
                               or not 0 < weight < math.inf):  # type: ignore[operator]  # typeshed: numbers.Real has no __gt__/__ge__
        raise SettingsError(f"`{fn}(weight=...)` must be a positive number (the objective's cost per unit of "
                            f"difference in {unit}); got {weight!r}.")
    if max_diff is None and weight is None:
        raise SettingsError(f"`{fn}` needs `max_diff` ({example}) or, for a penalty instead of a bound, `weight`.")
    if isinstance(reference, list):
        reference = tuple(reference)
    return among, None if weight is None else float(weight), _plain(reference)


def score_balance(by, *, among="all", max_diff=1.0, reference=None, side="both", weight=None) -> ScoreBalance:
    """Balance of the score: the groups' mean total points differ by at most ``max_diff`` points.

    ``among="events"`` is balance for the positive class, ``"non_events"`` for the negative class
    (Kleinberg, Mullainathan & Raghavan, 2017), ``"all"`` parity of the mean score.  It is bounded on
    the score (points: the logit of the risk times the score scale, so with a fitted ``scale=`` the
    bound stays in the card's points), where it is linear in the points and needs no indicator;
    :func:`risk_parity` bounds the mean predicted *risk* instead, through one binary per score
    level.

    Parameters
    ----------
    by : str or list of str
        The protected attribute, a column of the training data (in the formula or not), or a list
        of columns (intersectional groups).
    among : {"all", "events", "non_events"}, default "all"
        The rows whose mean score is compared.
    max_diff : float or None, default 1.0
        Largest allowed difference of two groups' mean scores in points (every pair, i.e. max −
        min), or of a group's and the ``reference`` group's, ≥ 0; None for a penalty only.
    reference : object, optional
        A group (a level of ``by``; a tuple of levels with several columns): compare every group
        with this one instead of every pair.
    side : {"both", "above", "below"}, default "both"
        ``"above"`` bounds only how far a group's mean score may be above the reference's,
        ``"below"`` only how far below (one-sided; needs ``reference``).
    weight : float, optional
        A positive number: instead of (or besides) a bound, add ``weight`` × (largest difference
        in points) to the objective.

    Returns
    -------
    ScoreBalance
        The constraint, for ``risk_score(..., constraints=[...])``.

    Examples
    --------
    >>> score_balance("race", among="events", max_diff=0.5).describe()
    "score_balance('race', among='events', max_diff=0.5)"
    """
    cols = _by("score_balance", by)
    if max_diff is not None and (isinstance(max_diff, bool) or not isinstance(max_diff, numbers.Real)
                                 or not 0 <= max_diff < math.inf):  # type: ignore[operator]  # typeshed: numbers.Real has no __gt__/__ge__
        raise SettingsError(f"`score_balance(max_diff=...)` must be a number of points ≥ 0; got {max_diff!r}.")
    among, weight, reference = _mean_parity_args("score_balance", among, max_diff, weight, reference,
                                                 "points", "a number of points, e.g. 0.5")
    return ScoreBalance(cols, among, None if max_diff is None else float(max_diff), reference,
                        _side("score_balance", reference, side), weight)
