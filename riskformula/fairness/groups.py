"""Groups, strata and group rates: the one computation behind the fairness constraints' rows,
their training values and the fairness audit.

A *notion* compares the rate of "predicted positive" between the groups of a protected
attribute within *strata* of rows (Aghaei, 2024, §2.4.3):

=================================  ==========================  ==========================
notion                             strata                      rate within a stratum
=================================  ==========================  ==========================
statistical parity                 all rows                    selection rate
conditional statistical parity     each level of ``given``     selection rate
predictive equality                non-events (y = 0)          false positive rate
equal opportunity                  events (y = 1)              true positive rate
equalized odds                     non-events and events       FPR and TPR
=================================  ==========================  ==========================

Rates are weighted by the sample weights (frequency weights), so a row of weight 2 counts as two.
"""

from __future__ import annotations

import math
import warnings
from typing import cast

import numpy as np
import pandas as pd

from .._checks import group_column
from ..errors import SettingsError, SmallGroupWarning, warn_caller

#: the strata each notion compares rates in: "all", "non-events", "events" or "given"
NOTION_STRATA = {
    "statistical_parity": ("all",),
    "conditional_statistical_parity": ("given",),
    "predictive_equality": ("non-events",),
    "equal_opportunity": ("events",),
    "equalized_odds": ("non-events", "events"),
}

#: what the rate within a stratum is called
RATE_NAMES = {"all": "selection rate", "given": "selection rate", "non-events": "false positive rate",
              "events": "true positive rate"}

#: fewer rows than this in a group (within a stratum) give a warning: a rate from so few rows
#: has a standard error up to 0.5/sqrt(n) ≈ 0.09
SMALL_GROUP = 30


#: more groups than this, most of them under SMALL_GROUP rows, is a continuous column (or an ID)
#: rather than a protected attribute: every rate would come from a handful of rows
MAX_GROUPS = 20


def data_groups(data: pd.DataFrame, by: tuple, what: str) -> np.ndarray:
    """Group label of every row of ``data`` (see :func:`group_labels`), refusing missing values."""
    return group_labels([group_column(data, c, what) for c in by], by)


def check_group_count(groups: np.ndarray, by, what: str, weights=None) -> None:
    """Refuse a grouping with more than :data:`MAX_GROUPS` groups, most of them smaller than
    :data:`SMALL_GROUP` rows: a continuous column (or an identifier) used as a group, whose
    thousands of one-row "groups" give rates that are noise (and a warning per group).
    ``weights``: rows per entry of ``groups`` when the rows come as counts (distinct rows)."""
    labels = pd.Series(groups, dtype=object)
    if weights is None:
        sizes = labels.value_counts(dropna=False)
    else:
        sizes = pd.Series(np.asarray(weights, float)).groupby(labels, dropna=False, sort=False).sum()
    n_small = int((sizes < SMALL_GROUP).sum())
    if len(sizes) <= MAX_GROUPS or n_small <= len(sizes) / 2:
        return
    cols = [by] if isinstance(by, str) else list(by)
    c = cols[0]
    named = repr(c) if len(cols) == 1 else f"any of {cols}"
    raise SettingsError(f"{what}: {len(sizes):,d} groups, {n_small:,d} of them with fewer than {SMALL_GROUP} rows, "
                        f"are too many to compare (is {named} a continuous column?). Bin it into a few groups "
                        f"first, e.g. data.assign({c}_group=pd.cut(data[{c!r}], 4)) and by='{c}_group', "
                        f"or merge small levels.")


def _shown(group) -> str:
    """A group's level(s) as the user wrote them (``1``, ``'f'``, ``('f', 1)``), not numpy's repr
    (``np.int64(1)``)."""
    if isinstance(group, tuple):
        return repr(tuple(g.item() if isinstance(g, np.generic) else g for g in group))
    return repr(group.item() if isinstance(group, np.generic) else group)


def warn_small_groups(describe: str, table: list, consequence: str, stacklevel: int | None = None) -> None:
    """One :class:`SmallGroupWarning` naming every group with fewer than :data:`SMALL_GROUP` rows
    in a stratum; ``table`` holds ``(stratum, group, rows)``, ``consequence`` what follows for the
    caller (a fit's bound, an audit's differences)."""
    small = [(where, g, n) for where, g, n in table if n < SMALL_GROUP]
    if not small:
        return
    items = "; ".join(f"{_shown(g)} has {n:g} among {where}" for where, g, n in small[:8])
    more = f"; and {len(small) - 8} more" if len(small) > 8 else ""
    worst = 0.5 / math.sqrt(max(min(n for _, _, n in small), 1))
    absent = (" A group with no rows in a stratum has no rate there and is left out of that comparison."
              if any(n == 0 for _, _, n in small) else "")
    msg = (f"{describe}: groups too small to estimate a rate well (fewer than {SMALL_GROUP} rows): "
           f"{items}{more}. A rate from n rows has a standard error up to 0.5/sqrt(n) (here up to "
           f"{worst:.2f}), so {consequence}; consider merging small groups.{absent}")
    if stacklevel is None:  # attributed to the user's line, however deep in a fit this runs
        warn_caller(msg, SmallGroupWarning)
    else:
        warnings.warn(msg, SmallGroupWarning, stacklevel=stacklevel + 1)


def group_labels(frame_or_columns, by: tuple) -> np.ndarray:
    """One label per row: the value of the ``by`` column, or a tuple of values for several
    columns (intersectional groups, as fairlearn's ``MetricFrame`` forms them)."""
    cols = [np.asarray(c) for c in frame_or_columns]
    if len(cols) == 1:
        return cols[0]
    out = np.empty(len(cols[0]), dtype=object)
    out[:] = list(zip(*cols))
    return out


def strata(notion: str, y: np.ndarray, given: np.ndarray | None) -> list[tuple[str, object, np.ndarray]]:
    """``(kind, level, mask)`` of every stratum of ``notion`` (``level`` is the ``given`` value
    for conditional statistical parity, else None)."""
    out: list[tuple[str, object, np.ndarray]] = []
    for kind in NOTION_STRATA[notion]:
        if kind == "all":
            out.append((kind, None, np.ones(len(y), bool)))
        elif kind == "events":
            out.append((kind, None, y == 1))
        elif kind == "non-events":
            out.append((kind, None, y == 0))
        else:
            for level in _sorted_levels(cast(np.ndarray, given)):  # the "given" stratum: its column
                out.append((kind, level, given == level))
    return out


def _sorted_levels(values: np.ndarray) -> list:
    levels = pd.unique(pd.Series(values, dtype=object))
    try:
        return sorted(levels)
    except TypeError:  # mixed types: keep the order of appearance
        return list(levels)


def sorted_groups(labels: np.ndarray) -> list:
    """The distinct group labels, sorted when they can be."""
    return _sorted_levels(labels)


def stratum_name(kind: str, level, given: str | None) -> str:
    if kind == "given":
        return f"{given} = {level}"
    return {"all": "all rows", "events": "events (y = 1)", "non-events": "non-events (y = 0)"}[kind]


def group_rates(notion: str, pred: np.ndarray, y: np.ndarray, groups: np.ndarray, weights: np.ndarray,
                given: np.ndarray | None = None, given_name: str | None = None) -> pd.DataFrame:
    """Rate of ``pred`` (0/1) per stratum and group: columns ``stratum``, ``kind``, ``group``,
    ``n`` (weighted rows), ``positives`` (weighted predicted positives) and ``rate``."""
    rows = []
    for kind, level, mask in strata(notion, y, given):
        for g in sorted_groups(groups[mask]):
            m = mask & _equal(groups, g)
            n = float(weights[m].sum())
            pos = float((weights[m] * pred[m]).sum())
            rows.append((stratum_name(kind, level, given_name), kind, g, n, pos, pos / n if n > 0 else np.nan))
    return pd.DataFrame(rows, columns=["stratum", "kind", "group", "n", "positives", "rate"])


def _equal(values: np.ndarray, g) -> np.ndarray:
    if isinstance(g, tuple):
        return np.fromiter((v == g for v in values), bool, len(values))
    return values == g


def disparity(rates: pd.DataFrame, reference=None, side: str = "both") -> tuple[float, float]:
    """``(difference, ratio)`` of a rate table (see :func:`group_rates`), the worst over strata.

    Without a reference: the largest max − min of the rates within a stratum, and the smallest
    min / max.  With a reference group: the largest gap to the reference (signed by ``side``:
    "above" counts how far a group is above it, "below" how far below, "both" either) and the
    smallest ratio in that direction.  A ratio of two zero rates is 1."""
    diff, ratio = -np.inf, np.inf
    for _, t in rates.groupby("stratum", sort=False):
        r = t.set_index("group")["rate"].dropna()
        if len(r) < 2:
            continue
        if reference is None:
            hi, lo = float(r.max()), float(r.min())
            diff = max(diff, hi - lo)
            ratio = min(ratio, _ratio(lo, hi))
            continue
        # by position: a tuple (an intersectional group) would be read by .loc as several keys
        at = [i for i, g in enumerate(r.index) if _same_group(g, reference)]
        if not at:
            continue
        values = r.to_numpy(float)
        ref = float(values[at[0]])
        for v in np.delete(values, at[0]):
            if side in ("both", "above"):
                diff = max(diff, v - ref)
                ratio = min(ratio, _ratio(ref, v))
            if side in ("both", "below"):
                diff = max(diff, ref - v)
                ratio = min(ratio, _ratio(v, ref))
    return (float(diff) if np.isfinite(diff) else np.nan, float(ratio) if np.isfinite(ratio) else np.nan)


def _same_group(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _ratio(small: float, large: float) -> float:
    if large <= 0:
        return 1.0
    return small / large
