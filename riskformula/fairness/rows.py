"""What the fairness constraints share: their base class, the checks of their arguments and the
builders of their rows.

Every notion (:mod:`.notions`: group rates of "predicted positive"; :mod:`.mean_parity`: mean
scores; :mod:`.risk_parity`: mean risks and calibration) compares per-group quantities that are
linear in the problem's columns (a :class:`Rate`), and bounds their differences
(:func:`diff_row`) or ratios (:func:`ratio_row`) or penalises the largest difference
(:func:`add_difference_penalty`), over the pairs :func:`comparisons` lists.  With whole counts a
row is written with integer coefficients, so it is checked exactly.
"""

from __future__ import annotations

import abc
import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import SettingsError
from ..problem.constraints import Constraint
from .groups import warn_small_groups

__all__ = ["FairnessConstraint", "Rate", "by_columns", "check_cutoff", "check_fraction", "check_bounds", "check_side",
           "all_whole", "combine", "diff_row", "ratio_row", "add_difference_penalty", "comparisons", "warn_small",
           "same_group", "in_group"]

#: ratio bounds are written with integer coefficients when their fraction has a denominator up to this
MAX_DENOMINATOR = 10 ** 6


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


def by_columns(fn: str, by) -> tuple:
    cols = (by,) if isinstance(by, str) else tuple(by) if isinstance(by, (list, tuple)) else None
    if not cols or not all(isinstance(c, str) and c for c in cols):
        raise SettingsError(f"`{fn}` needs `by` as the protected attribute's column name (e.g. 'sex') or a list "
                            f"of names for intersectional groups (e.g. ['sex', 'race']); got {by!r}.")
    return cols


def check_cutoff(fn: str, at_risk, at_score) -> tuple:
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


def check_fraction(fn: str, name: str, v, upper: float = 1.0, allow_zero: bool = True) -> float | None:
    if v is None:
        return None
    ok = isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)
    if not ok or v < 0 or v > upper or (v == 0 and not allow_zero):
        span = f"{'0' if allow_zero else 'above 0'} to {upper:g}"
        raise SettingsError(f"`{fn}({name}=...)` must be a number from {span}; got {v!r}.")
    return float(v)


def check_bounds(fn: str, max_diff, min_ratio, weight, diff_upper: float = 1.0) -> tuple:
    max_diff = check_fraction(fn, "max_diff", max_diff, upper=diff_upper)
    min_ratio = check_fraction(fn, "min_ratio", min_ratio, allow_zero=False)
    if weight is not None:
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or not 0 < weight < math.inf:  # type: ignore[operator]  # typeshed: numbers.Real has no __gt__/__ge__
            raise SettingsError(f"`{fn}(weight=...)` must be a positive number (the objective's cost per unit of "
                                f"disparity); got {weight!r}.")
        weight = float(weight)
    if max_diff is None and min_ratio is None and weight is None:
        raise SettingsError(f"`{fn}` needs a bound: `max_diff` (e.g. 0.05), `min_ratio` (e.g. 0.8, the four-fifths "
                            f"rule) or, for a penalty instead of a bound, `weight`.")
    return max_diff, min_ratio, weight


def check_side(fn: str, reference, side) -> str:
    if side not in ("both", "above", "below"):
        raise SettingsError(f"`{fn}(side=...)` must be 'both', 'above' (no group's rate above the reference's by "
                            f"more than the bound) or 'below' (none below it); got {side!r}.")
    if side != "both" and reference is None:
        raise SettingsError(f"`{fn}(side={side!r})` bounds the gap to one group: name it with `reference=` "
                            f"(e.g. reference='White').")
    return side


# --------------------------------------------------------------------------------------
# rows with exact arithmetic
# --------------------------------------------------------------------------------------


def all_whole(*counts) -> bool:
    return all(float(c).is_integer() for c in counts)


def combine(a: dict, ca, b: dict, cb) -> dict:
    """ca·a − cb·b over the union of keys."""
    out = {k: ca * v for k, v in a.items()}
    for k, v in b.items():
        out[k] = out.get(k, 0) - cb * v
    return {k: float(v) for k, v in out.items() if v != 0}


@dataclass(frozen=True)
class Rate:
    """The predicted-positive count of one group in one stratum: Σ coefs[z]·z over n rows."""

    group: object
    stratum: str
    coefs: dict
    n: float
    integral: bool


def diff_row(b, p: Rate, q: Rate, lower: float | None, upper: float | None, name: str) -> None:
    """lower ≤ r_p − r_q ≤ upper (None: no bound on that side), integer-exact when counts are whole."""
    if p.integral and q.integral:
        n_p, n_q = int(p.n), int(q.n)
        g = math.gcd(n_p, n_q)
        coefs = combine(p.coefs, n_q // g, q.coefs, n_p // g)
        scale = Fraction(n_p * n_q, g)
        hi = math.inf if upper is None else math.floor(Fraction(repr(upper)) * scale)
        lo = -math.inf if lower is None else math.ceil(Fraction(repr(lower)) * scale)
        b.add_row(coefs, float(lo), float(hi), name)
    else:
        coefs = combine(p.coefs, 1.0 / p.n, q.coefs, 1.0 / q.n)
        b.add_row(coefs, -math.inf if lower is None else lower, math.inf if upper is None else upper, name)


def ratio_row(b, p: Rate, q: Rate, ratio: float, name: str) -> None:
    """r_p ≥ ratio·r_q."""
    frac = Fraction(repr(ratio))
    if p.integral and q.integral and frac.denominator <= MAX_DENOMINATOR:
        a, c = frac.denominator * int(q.n), frac.numerator * int(p.n)
        g = math.gcd(a, c)
        b.add_row(combine(p.coefs, a // g, q.coefs, c // g), 0.0, math.inf, name)
    else:
        b.add_row(combine(p.coefs, 1.0 / p.n, q.coefs, ratio / q.n), 0.0, math.inf, name)


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
        coefs = combine(p.coefs, 1.0 / p.n, q.coefs, 1.0 / q.n)
        coefs[t] = coefs.get(t, 0.0) - 1.0
        b.add_row(coefs, -math.inf, 0.0, f"{name}: penalty")


def comparisons(rates_by_stratum: dict, reference, side: str):
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


def warn_small(describe: str, table: list) -> None:
    """One warning naming every group with fewer than :data:`SMALL_GROUP` rows in a stratum."""
    warn_small_groups(describe, table, "the bound mostly constrains noise")


def same_group(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def in_group(values: np.ndarray, g) -> np.ndarray:
    if isinstance(g, tuple):
        return np.fromiter((v == g for v in values), bool, len(values))
    return values == g
