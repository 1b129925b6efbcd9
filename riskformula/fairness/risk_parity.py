"""Threshold-free fairness on the predicted risk: parity of mean predicted risk and calibration
within groups, as constraints inside the certified search.

* :func:`risk_parity` — the groups' mean predicted risk differs by at most ``max_diff``, among all
  rows, among events ("balance for the positive class") or among non-events ("balance for the
  negative class") (Kleinberg, Mullainathan & Raghavan, 2017);
* :func:`calibration_within_groups` — in every group and at every score level, observed events
  and expected events (rows × the level's risk) differ by at most ``max_diff`` × the group's rows.

How they are solved.  A row's risk σ(s) is not linear in its score s = intercept + points, but
with integer points, an integer intercept and integer-valued design rows, s is an integer, and
σ is a constant per level.  Each distinct design row r gets cumulative binaries
z_{r,k} = 1[s_r ≥ k] for the levels k = −27, …, 28 (shared by every row with that design row,
whatever its group or outcome), so the row is at level k exactly when
u_{r,k} = z_{r,k} − z_{r,k+1} is 1, and its risk is the linear

    σ(−28) + Σ_k (σ(k) − σ(k − 1)) · z_{r,k}.

Scores beyond ±28 have a risk within 1e-12 of 0 or 1 (σ(28) = 1 − 6.9e-13): they are pooled into
the end levels, whose risk is taken as σ(±28), so a mean risk is exact up to 1e-12.  A group's mean
risk is then linear in the z's (per-row counts over a constant group size), and so is its
calibration error at a level, because σ(level) is a constant (Aghaei, 2024, §2.4.3 and §4, for
the templates).

The z's of a design row are ordered (z_{r,k+1} ≤ z_{r,k}) and tied to its score by the unary
expansion s_r = −28 + Σ_k z_{r,k} (loosened beyond the end levels), which links them exactly
(margin 1) and is much tighter in the LP than one big-M link per level
(:meth:`~riskformula.problem.builder.ProblemBuilder.add_indicators` with ``chain``).

On a score scale m other than 1 (``risk_score(..., scale=...)``) the risk of level k is
σ(k/m) and the levels are the integers within ±⌈28·m⌉, so there are about 56·m of them; a
fitted scale builds them for each scale it searches.

Size (m = 1): 56 binaries and 57 rows per distinct design row (among the compared rows), plus one row
per ordered pair of groups (:func:`risk_parity`) or 57 per group, one per level
(:func:`calibration_within_groups`).  Levels that no score can reach within the final point and
intercept bounds are fixed, so with a given ``intercept_range`` fewer are live; without one the
intercept range is widened until every level can be crossed (a tight bound may be met only by
very high or very low risks), so all 56 are.  The problem grows with distinct design rows ×
levels, not with rows.  The bounds are written in units of a mean risk and tightened by the
solver's feasibility tolerance (1e-7), so the fitted score meets them on the training rows; on
new rows they hold only approximately — audit with :meth:`RiskScore.fairness`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np
import pandas as pd
from scipy.special import expit

from ..errors import SettingsError
from .groups import data_groups, disparity, group_labels, sorted_groups, stratum_name
from .mean_parity import AMONG, MeanParity, mean_parity_args
from .rows import (FairnessConstraint, Rate, add_difference_penalty, by_columns, check_side, combine, comparisons,
                   in_group, warn_small)

__all__ = ["RiskParity", "CalibrationWithinGroups", "risk_parity", "calibration_within_groups", "RISK_LEVELS"]

#: the score levels k of the cumulative indicators 1[score ≥ k] on the default scale (m = 1);
#: scores below the first have risk below σ(−28) ≈ 6.9e-13 and scores at or above the last a risk
#: above 1 − 6.9e-13.  On score scale m the levels run from −⌈28·m⌉ + 1 to ⌈28·m⌉ (risk σ(k/m)).
RISK_LEVELS = np.arange(-27, 29)

#: bounds are tightened by the solver's feasibility tolerance, so that a point the solver accepts
#: meets them without it
_ROW_TOL = 1e-7

def risk_levels(scale: float = 1.0) -> np.ndarray:
    """The levels k of the indicators 1[intercept + score ≥ k] on score scale ``scale`` (risk
    σ(k / scale)): :data:`RISK_LEVELS` for the default scale, ⌈28·m⌉ on either side of 0 for m."""
    top = int(math.ceil(28 * float(scale) - 1e-9))
    return np.arange(-top + 1, top + 1)


def _clipped(total: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Scores pooled into the end levels, as the formulation sees them."""
    levels = risk_levels(scale)
    return np.clip(total, int(levels[0]) - 1, int(levels[-1]))


def _level_risk(scale: float = 1.0) -> tuple[float, np.ndarray]:
    """σ at the bottom level and the risk step σ(k) − σ(k − 1) at every level (on ``scale``)."""
    k = risk_levels(scale).astype(float)
    m = float(scale)
    return float(expit((k[0] - 1) / m)), expit(k / m) - expit((k - 1) / m)


@dataclass(frozen=True)
class _Levels:
    """Level indicators of the distinct design rows: ``z[p, i]`` is the position of
    1[score of pattern p ≥ RISK_LEVELS[i]]; ``pattern_of`` maps training rows to patterns (−1:
    not used)."""

    patterns: np.ndarray
    pattern_of: np.ndarray
    z: np.ndarray


def _level_indicators(b, used: np.ndarray, what: str) -> _Levels:
    tr = b.training
    patterns, inverse = np.unique(tr.X[used], axis=0, return_inverse=True)
    real = ~np.all(patterns == np.round(patterns), axis=0)
    if real.any():
        spec = getattr(b.terms, "_spec", None)
        names = [str(c) for c, r in zip(getattr(spec, "columns", range(len(real))), real) if r]
        raise SettingsError(
            f"{what} needs integer scores, but design column(s) {names[:6]} take non-integer values, so a "
            f"row's risk is not one of finitely many levels. Use the variable through `threshold(...)` or "
            f"`cut(...)` in the formula (or round it), or bound the score itself with `score_balance`.")
    pattern_of = np.full(tr.n, -1)
    pattern_of[used] = inverse.ravel()
    k = len(patterns)
    levels = risk_levels(b.scale)
    n_levels = len(levels)
    E = np.repeat(np.hstack([np.ones((k, 1)), patterns]), n_levels, axis=0)
    cut = np.tile(levels.astype(float), k)
    # chained: ordered and tied to the score's unary expansion, which the LP needs to be tight
    z = b.add_indicators(E, cut, 1.0, name=f"{what}: score level", chain=n_levels).reshape(k, n_levels)
    return _Levels(patterns, pattern_of, z)


def _group_counts(levels: _Levels, rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted rows of each pattern among ``rows`` (a mask)."""
    return np.bincount(levels.pattern_of[rows], weights=weights[rows], minlength=len(levels.patterns))


def _bound(max_diff: float) -> float:
    return max_diff - _ROW_TOL if max_diff > _ROW_TOL else max_diff


@overload
def _check_max_diff(fn: str, max_diff, allow_none: Literal[False]) -> float: ...
@overload
def _check_max_diff(fn: str, max_diff, allow_none: bool) -> float | None: ...


def _check_max_diff(fn: str, max_diff, allow_none: bool) -> float | None:
    if max_diff is None and allow_none:
        return None
    if isinstance(max_diff, bool) or not isinstance(max_diff, numbers.Real) or not 0 <= max_diff <= 1:  # type: ignore[operator]  # typeshed: numbers.Real has no __gt__/__ge__
        raise SettingsError(f"`{fn}(max_diff=...)` must be a share from 0 to 1 (a difference of risks, e.g. 0.02); "
                            f"got {max_diff!r}.")
    return float(max_diff)


def _groups(c, b, what: str) -> np.ndarray:
    tr = b.training
    if tr is None:
        raise SettingsError(f"{what} is a statement about the training rows; it can only be used in "
                            "`risk_score(formula, data, constraints=[...])`.")
    return group_labels([tr.column(col, what) for col in c.by], c.by)


def _describe_by(by: tuple) -> str:
    return repr(by[0]) if len(by) == 1 else repr(list(by))


# --------------------------------------------------------------------------------------
# parity of mean predicted risk
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class RiskParity(MeanParity):
    """A bound on how much the groups' mean predicted risks differ; see :func:`risk_parity`."""

    bisect_bound = True

    function = "risk_parity"

    def apply(self, b) -> None:
        what = f"`{self.describe()}`"
        groups = _groups(self, b, what)
        tr = b.training
        mask = self._mask(tr.y) & (tr.weights > 0)
        where, present = self._compared_groups(groups, mask, what)
        levels = _level_indicators(b, mask, what)
        _, step = _level_risk(b.scale)
        rates, small = [], []
        for g in present:
            rows = mask & in_group(groups, g)
            counts = _group_counts(levels, rows, tr.weights)
            n = float(tr.weights[rows].sum())
            small.append((where, g, n))
            # the group's total risk (less the constant σ(−28) per row, which cancels in a difference)
            coefs = {int(levels.z[p, i]): float(c * step[i]) for p, c in enumerate(counts) if c != 0
                     for i in range(len(step))}
            rates.append(Rate(g, where, coefs, n, False))
        warn_small(self.describe(), small)
        pairs = comparisons({where: rates}, self.reference, self.side)
        name = self.describe()
        if self.max_diff is not None:
            for p, q in pairs:
                b.add_row(combine(p.coefs, 1.0 / p.n, q.coefs, 1.0 / q.n), -math.inf, _bound(self.max_diff), name)
        if self.weight is not None:
            self._penalty(b, pairs, levels)

    def _penalty(self, b, pairs, levels: _Levels) -> None:
        """t ≥ R_p − R_q for every bounded pair, with cost ``weight`` on t."""
        assert self.weight is not None  # called only with a weight
        E = np.hstack([np.ones((len(levels.patterns), 1)), levels.patterns])
        cut = risk_levels(b.scale).astype(float)
        add_difference_penalty(b, self.describe(), self.weight, pairs, int(levels.z.flat[0]),
                               lambda lam: ((E @ lam)[:, None] >= cut[None, :]).astype(float).ravel())

    def means(self, model, data, weights=None) -> pd.DataFrame:
        """Each group's mean predicted risk among the rows of ``among``: columns ``stratum``,
        ``kind``, ``group``, ``n`` (weighted rows), ``positives`` (unused, 0) and ``rate`` (the mean)."""
        y = model.observed(data).to_numpy()
        w = np.ones(len(data)) if weights is None else np.asarray(weights, float)
        mask = self._mask(y) & (w > 0)
        groups = data_groups(data, self.by, f"`{self.describe()}`")
        risk = model.predict(data).to_numpy()
        where = stratum_name(AMONG[self.among], None, None)
        rows = []
        for g in sorted_groups(groups[mask]):
            m = mask & in_group(groups, g)
            rows.append((where, AMONG[self.among], g, float(w[m].sum()), 0.0,
                         float(np.average(risk[m], weights=w[m]))))
        return pd.DataFrame(rows, columns=["stratum", "kind", "group", "n", "positives", "rate"])

    def assess(self, model, data, weights=None) -> list[dict]:
        diff, _ = disparity(self.means(model, data, weights), self.reference, self.side)
        vs = "largest difference" if self.reference is None else f"largest gap to {self.reference!r}"
        return [dict(constraint=self.describe(), quantity=f"mean predicted risk among {AMONG[self.among]}: {vs}",
                     value=diff, bound=self.max_diff if self.max_diff is not None else math.nan,
                     slack=(self.max_diff - diff) if self.max_diff is not None else math.nan)]


def risk_parity(by, *, among="all", max_diff=0.05, reference=None, side="both", weight=None) -> RiskParity:
    """Parity of mean predicted risk: the groups' mean predicted risks differ by at most ``max_diff``.

    ``among="events"`` is balance for the positive class (people with the event get the same mean
    risk whatever their group), ``"non_events"`` balance for the negative class (Kleinberg,
    Mullainathan & Raghavan, 2017), ``"all"`` parity of the mean risk over all rows.  Needs integer
    scores (a continuous predictor enters through ``threshold()`` or ``cut()``); each distinct
    design row gets up to 56 binaries, one per score level (see :mod:`riskformula.fairness.risk_parity`).
    :func:`score_balance` bounds the mean *score* instead, with no binaries.

    Parameters
    ----------
    by : str or list of str
        The protected attribute, a column of the training data (in the formula or not), or a list
        of columns (intersectional groups).
    among : {"all", "events", "non_events"}, default "all"
        The rows whose mean risk is compared.
    max_diff : float or None, default 0.05
        Largest allowed difference of two groups' mean risks (every pair, i.e. max − min), or of
        a group's and the ``reference`` group's, from 0 to 1; None for a penalty only.
    reference : object, optional
        A group (a level of ``by``; a tuple of levels with several columns): compare every group
        with this one instead of every pair.
    side : {"both", "above", "below"}, default "both"
        ``"above"`` bounds only how far a group's mean risk may be above the reference's,
        ``"below"`` only how far below (one-sided; needs ``reference``).
    weight : float, optional
        A positive number: instead of (or besides) a bound, add ``weight`` × (largest difference)
        to the objective.

    Returns
    -------
    RiskParity
        The constraint, for ``risk_score(..., constraints=[...])``.

    Examples
    --------
    >>> risk_parity("race", among="events", max_diff=0.02).describe()
    "risk_parity('race', among='events', max_diff=0.02)"
    """
    cols = by_columns("risk_parity", by)
    max_diff = _check_max_diff("risk_parity", max_diff, allow_none=True)
    among, weight, reference = mean_parity_args("risk_parity", among, max_diff, weight, reference,
                                                 "mean risk", "a difference of mean risks, e.g. 0.02")
    return RiskParity(cols, among, max_diff, reference, check_side("risk_parity", reference, side), weight)


# --------------------------------------------------------------------------------------
# calibration within groups
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class CalibrationWithinGroups(FairnessConstraint):
    """A bound on every group's calibration error at every score level; see
    :func:`calibration_within_groups`."""

    bisect_bound = True

    by: tuple
    max_diff: float = 0.02

    def describe(self) -> str:
        return f"calibration_within_groups({_describe_by(self.by)}, max_diff={self.max_diff:g})"

    def apply(self, b) -> None:
        what = f"`{self.describe()}`"
        groups = _groups(self, b, what)
        tr = b.training
        used = tr.weights > 0
        present = sorted_groups(groups[used])
        levels = _level_indicators(b, used, what)
        z = levels.z
        top = risk_levels(b.scale)
        bottom = int(top[0]) - 1
        risk = expit(np.arange(bottom, int(top[-1]) + 1) / b.scale)  # σ of each pooled level
        bound = _bound(self.max_diff)
        small = []
        for g in present:
            rows = used & in_group(groups, g)
            n = float(tr.weights[rows].sum())
            small.append(("all rows", g, n))
            counts = _group_counts(levels, rows, tr.weights)
            events = _group_counts(levels, rows & (tr.y == 1), tr.weights)
            on = np.flatnonzero(counts)
            for j, r in enumerate(risk):
                # (observed − expected events at level j) / n = Σ_p a_p·u_{p,j}, with
                # u_{p,j} = z_{p,j−1} − z_{p,j} (z_{p,−1} = 1 below the first level, z_{p,56} = 0 above the last)
                a = (events[on] - r * counts[on]) / n
                coefs: dict = {}
                const = 0.0
                for p, v in zip(on, a):
                    if j == 0:
                        const += v
                    else:
                        coefs[int(z[p, j - 1])] = coefs.get(int(z[p, j - 1]), 0.0) + v
                    if j < z.shape[1]:
                        coefs[int(z[p, j])] = coefs.get(int(z[p, j]), 0.0) - v
                b.add_row(coefs, -bound - const, bound - const, f"{self.describe()}: group {g!r}, level {j + bottom}")
        warn_small(self.describe(), small)

    def errors(self, model, data, weights=None) -> pd.DataFrame:
        """Calibration by group and score level on ``data``: columns ``group``, ``level`` (intercept +
        points, pooled beyond ±28), ``n``, ``observed`` and ``expected`` events, and ``error`` =
        |observed − expected| / (the group's rows)."""
        y = model.observed(data).to_numpy()
        w = np.ones(len(data)) if weights is None else np.asarray(weights, float)
        groups = data_groups(data, self.by, f"`{self.describe()}`")
        risk = model.predict(data).to_numpy()
        level = _clipped(model.intercept + model.score(data).to_numpy(), getattr(model, "scale", 1.0))
        t = pd.DataFrame({"group": list(groups), "level": level, "n": w, "observed": w * y, "expected": w * risk})
        t = t[w > 0]
        size = t.groupby("group", sort=False)["n"].transform("sum")
        t = t.assign(size=size).groupby(["group", "level"], sort=True).agg(
            n=("n", "sum"), observed=("observed", "sum"), expected=("expected", "sum"), size=("size", "first"))
        t["error"] = (t["observed"] - t["expected"]).abs() / t["size"]
        return t.drop(columns="size").reset_index()

    def assess(self, model, data, weights=None) -> list[dict]:
        t = self.errors(model, data, weights)
        worst = float(t["error"].max()) if len(t) else math.nan
        return [dict(constraint=self.describe(),
                     quantity="calibration per score level: largest |observed − expected events| / group rows",
                     value=worst, bound=self.max_diff, slack=self.max_diff - worst)]


def calibration_within_groups(by, *, max_diff=0.02) -> CalibrationWithinGroups:
    """Calibration within groups: in every group and at every score level, the observed events and
    the expected events (rows at the level × the level's risk) differ by at most ``max_diff`` ×
    the group's rows (Kleinberg, Mullainathan & Raghavan, 2017, for the notion).

    The bound is on the calibration error's share of the group, level by level, so the errors a
    group may have sum to at most (number of levels) × ``max_diff``; a level with few rows of a
    group cannot be far off in count.  Scores beyond ±28 (risks within 1e-12 of 0 or 1) are pooled
    into one level at each end.  Needs integer scores; each distinct design row gets up to 56
    binaries (see :mod:`riskformula.fairness.risk_parity`).

    Parameters
    ----------
    by : str or list of str
        The protected attribute, a column of the training data (in the formula or not), or a list
        of columns (intersectional groups).
    max_diff : float, default 0.02
        Largest allowed |observed − expected events| at a score level, as a share of the group's
        rows (0 to 1).

    Returns
    -------
    CalibrationWithinGroups
        The constraint, for ``risk_score(..., constraints=[...])``.

    Examples
    --------
    >>> calibration_within_groups("sex", max_diff=0.02).describe()
    "calibration_within_groups('sex', max_diff=0.02)"
    """
    cols = by_columns("calibration_within_groups", by)
    return CalibrationWithinGroups(cols, _check_max_diff("calibration_within_groups", max_diff, allow_none=False))
