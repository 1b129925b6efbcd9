"""The threshold-free notion on the score: parity of a per-group mean (:class:`MeanParity`), and
:func:`score_balance` — the groups' mean total points, among all rows, events ("balance for the
positive class") or non-events (Kleinberg, Mullainathan & Raghavan, 2017).

The mean score of a group is linear in the points, so the bound needs no indicator: one row per
compared pair of groups (:func:`~riskformula.fairness.rows.diff_row`).  :mod:`.risk_parity` bounds the
mean predicted *risk* on the same :class:`MeanParity` base.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._json import plain
from ..errors import SettingsError
from .groups import data_groups, disparity, group_labels, sorted_groups, stratum_name
from .rows import (FairnessConstraint, Rate, all_whole, by_columns, check_side, combine, comparisons, diff_row,
                   in_group, same_group, warn_small)

__all__ = ["MeanParity", "ScoreBalance", "score_balance", "AMONG", "mean_parity_args"]

AMONG = {"all": "all", "events": "events", "non_events": "non-events"}


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
        kind = AMONG[self.among]
        return np.ones(len(y), bool) if kind == "all" else (y == 1) if kind == "events" else (y == 0)

    def _compared_groups(self, groups: np.ndarray, mask: np.ndarray, what: str) -> tuple[str, list]:
        """(stratum name, sorted groups present among ``mask``), checking the reference and that
        there are two groups to compare."""
        where = stratum_name(AMONG[self.among], None, None)
        present = sorted_groups(groups[mask])
        if self.reference is not None and not any(same_group(self.reference, g) for g in present):
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
            rows = mask & in_group(groups, g)
            w = tr.weights[rows]
            n = float(w.sum())
            sums = w @ tr.X[rows]  # Σ w·x per design column: the group's total score is sums·λ (+ n·λ_0)
            small.append((where, g, n))
            rates.append(Rate(g, where, {int(lay.lam(j)): float(v) for j, v in enumerate(sums) if v != 0}, n,
                               all_whole(n, *sums)))
        warn_small(self.describe(), small)
        pairs = comparisons({where: rates}, self.reference, self.side)
        if self.max_diff is not None:
            for p, q in pairs:
                diff_row(b, p, q, None, self.max_diff, self.describe())
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
                coefs = combine(p.coefs, 1.0 / p.n, q.coefs, 1.0 / q.n)
                coefs[t] = coefs.get(t, 0.0) - 1.0
                b.add_row(coefs, -math.inf, 0.0, f"{self.describe()}: penalty")

    def assess(self, model, data, weights=None) -> list[dict]:
        y = model.observed(data).to_numpy()
        mask = self._mask(y)
        groups = data_groups(data, self.by, f"`{self.describe()}`")
        score = model.score(data).to_numpy()
        w = np.ones(len(data)) if weights is None else np.asarray(weights, float)
        import pandas as pd
        rows = [(stratum_name(AMONG[self.among], None, None), "x", g,
                 float(w[mask & in_group(groups, g)].sum()), 0.0,
                 float(np.average(score[mask & in_group(groups, g)], weights=w[mask & in_group(groups, g)])))
                for g in sorted_groups(groups[mask])]
        t = pd.DataFrame(rows, columns=["stratum", "kind", "group", "n", "positives", "rate"])
        diff, _ = disparity(t, self.reference, self.side)
        vs = "largest difference" if self.reference is None else f"largest gap to {self.reference!r}"
        return [dict(constraint=self.describe(), quantity=f"mean score among {AMONG[self.among]}: {vs}", value=diff,
                     bound=self.max_diff if self.max_diff is not None else math.nan,
                     slack=(self.max_diff - diff) if self.max_diff is not None else math.nan)]


def mean_parity_args(fn: str, among, max_diff, weight, reference, unit: str, example: str):
    """Checked (among, weight, reference) of a :class:`MeanParity` constraint built by ``fn``."""
    if among not in AMONG:
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
    return among, None if weight is None else float(weight), plain(reference)


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
    cols = by_columns("score_balance", by)
    if max_diff is not None and (isinstance(max_diff, bool) or not isinstance(max_diff, numbers.Real)
                                 or not 0 <= max_diff < math.inf):  # type: ignore[operator]  # typeshed: numbers.Real has no __gt__/__ge__
        raise SettingsError(f"`score_balance(max_diff=...)` must be a number of points ≥ 0; got {max_diff!r}.")
    among, weight, reference = mean_parity_args("score_balance", among, max_diff, weight, reference,
                                                 "points", "a number of points, e.g. 0.5")
    return ScoreBalance(cols, among, None if max_diff is None else float(max_diff), reference,
                        check_side("score_balance", reference, side), weight)
