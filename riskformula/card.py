"""The score card: the declarative model behind every use of a fitted risk score.

A card is a list of items — each a condition on one variable, or a value, with its points — an
intercept, a score scale and the score → risk map::

    risk = 1 / (1 + exp(−(intercept + score) / scale)),   score = Σ points × item

Items read the data through the design's declarative rules (:mod:`riskformula.design.rules`):

* ``interval`` — ``lower < x ≤ upper`` (either end open) of a ``threshold()``/``cut()`` term: 1 for
  the rows in it; a fitted card has one item per cut with points, ``x ≤ c`` or ``x > c`` (so a
  term's items may overlap, and a row's points from the term are the sum of those it meets);
* ``level`` — ``x == level`` of a categorical variable (its reference level has no item);
* ``value`` — the value of a numeric variable (points per unit), of an interaction, or of an
  expression the formula computes;
* ``missing`` — ``x is missing``, for a variable fitted with ``missing="item"``: a row missing ``x``
  meets none of ``x``'s other items (its points from ``x`` are this item's), so the item's points
  are those of the design column ``missing(x)`` plus the points the card moved from the intercept
  onto ``x``'s ``x > c`` items (none unless a one-signed point range forces a cut to be shown as
  ``x > c``: a variable with a missing item shows its cuts as ``x ≤ c`` when it can).

``predict``, ``score``, the printed card, the risk table, ``coef``/``intercept``, comparisons,
counterfactual targets, dask scoring and the saved document all read this one card: the
intercept is the card's, with nothing kept aside.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit

from .problem.loss import distinct_rows

if TYPE_CHECKING:
    from .design import DesignSpec

__all__ = ["Item", "ScoreCard"]

#: a value term's distinct training rows are kept up to this many (else its range)
MAX_SUPPORT_ROWS = 64
#: more attainable total scores than this and the risk table shows bands
MAX_ATTAINABLE = 5000


@dataclass(frozen=True)
class Item:
    """One row of the card: its printed condition (``label``), formula ``term``, ``kind``
    (``interval``, ``level``, ``value`` or ``missing``), ``points``, the ``variable`` it reads (None
    for an expression), an interval's ``lower``/``upper`` ends (None: open), a level's ``level``,
    the design column positions it reads (an interval: the ``1[x ≤ upper]`` and ``1[x ≤ lower]``
    columns, None for an open end) and, for an interval of a variable with a missing item, that
    item's ``missing(x)`` column (``absent``: a missing ``x`` is in no interval)."""

    label: str
    term: str
    kind: str
    points: int
    variable: str | None = None
    lower: float | None = None
    upper: float | None = None
    level: object = None
    columns: tuple = ()
    absent: int | None = None

    def values(self, X: np.ndarray) -> np.ndarray:
        """The item's value (1/0, or the variable's value) on the design matrix ``X``."""
        if self.kind == "interval":
            up, lo = self.columns
            below_upper = X[:, up] if up is not None else (1.0 if self.absent is None else 1.0 - X[:, self.absent])
            below_lower = X[:, lo] if lo is not None else 0.0
            return np.asarray(below_upper - below_lower, float) * np.ones(len(X))
        return X[:, self.columns[0]]


@dataclass(frozen=True)
class ScoreCard:
    """Items, intercept, score scale and the supports of the value terms (their distinct training
    rows, or their ranges): all a risk score is.  ``design`` holds the rules the items read."""

    design: DesignSpec
    items: tuple
    intercept: float
    scale: float
    #: term -> ("rows", array) or ("box", array of [lo, hi]): its value items' columns in training
    support: dict

    # --- from fitted points -------------------------------------------------------------
    @classmethod
    def from_points(cls, design, lam: np.ndarray, scale: float, support: dict, lower, upper,
                    real_intercept: bool = False) -> "ScoreCard":
        """The card of fitted points ``lam`` (intercept first, then one per design column): one item
        per threshold cut with points (``x ≤ c`` with δ points or ``x > c`` with −δ, the intercept
        taking δ, whichever lies in the term's range: ``lower``/``upper`` are the point bounds
        per design column) and one per other column with points."""
        points = np.round(np.asarray(lam[1:], float)).astype(int)
        by_col = {j: t for t in design.thresholds for j in t.columns}
        absent = missing_columns(design)
        items, shift, done = [], 0, set()
        moved: dict = {}  # variable -> the points of its x > c items (a missing row meets none)
        for j, col in enumerate(design.columns):
            t = by_col.get(j)
            rule = design.rules[j] if design.rules else None
            if rule is not None and rule.kind == "missing":
                p = int(points[j]) + moved.get(rule.variable, 0)
                if p != 0:
                    items.append(Item(label=design.labels[j], term=design.column_terms[j] or col, kind="missing",
                                      points=p, variable=rule.variable, columns=(j,)))
                continue
            if t is None:
                if points[j] != 0:
                    kind = "level" if rule is not None and rule.kind == "level" else "value"
                    items.append(Item(label=design.labels[j], term=design.column_terms[j] or col, kind=kind,
                                      points=int(points[j]), variable=None if rule is None else rule.variable,
                                      level=rule.value if rule is not None and kind == "level" else None,
                                      columns=(j,)))
                continue
            if t.term in done:
                continue
            done.add(t.term)
            # the data column the cuts compare; None for a threshold of an expression
            variable = t.variable if design.rules and design.rules[t.columns[0]].kind == "le" else None
            gone = absent.get(variable) if variable is not None else None
            for label, p, i, above in t.items(points, lower, upper):
                c, jc = float(t.cuts[i]), t.columns[i]
                if above:
                    shift += p
                    if gone is not None:
                        moved[variable] = moved.get(variable, 0) + p
                    items.append(Item(label=label, term=t.term, kind="interval", points=p, variable=variable,
                                      lower=c, upper=None, columns=(None, jc), absent=gone))
                else:
                    items.append(Item(label=label, term=t.term, kind="interval", points=p, variable=variable,
                                      lower=None, upper=c, columns=(jc, None)))
        intercept = float(lam[0]) - shift if real_intercept else int(round(float(lam[0]))) - shift
        return cls(design=design, items=tuple(items), intercept=intercept, scale=float(scale), support=support)

    def design_points(self) -> np.ndarray:
        """The fitted points per design column, intercept first, that give this card: an interval
        ``lower < x ≤ upper`` is ``1[x ≤ upper] − 1[x ≤ lower]`` (an open upper end: 1).  The
        inverse of :meth:`from_points`."""
        lam = np.zeros(len(self.design.columns) + 1)
        lam[0] = self.intercept
        for it in self.items:
            if it.kind != "interval":
                lam[1 + it.columns[0]] += it.points
                continue
            up, lo = it.columns
            if up is None:
                lam[0] += it.points
                if it.absent is not None:
                    lam[1 + it.absent] -= it.points
            else:
                lam[1 + up] += it.points
            if lo is not None:
                lam[1 + lo] -= it.points
        return lam

    # --- facts --------------------------------------------------------------------------
    @property
    def points(self) -> np.ndarray:
        return np.array([it.points for it in self.items], dtype=float)

    @property
    def read_columns(self) -> list:
        """Design column positions the items read (an interval's ``missing(x)`` column too: a
        missing x is in no interval)."""
        return sorted({j for it in self.items for j in (*it.columns, it.absent) if j is not None})

    def terms(self) -> dict:
        """term -> its items, in card order."""
        out: dict = {}
        for it in self.items:
            out.setdefault(it.term, []).append(it)
        return out

    def contributions(self) -> list:
        """Per term, the points a row can get from it: an array of values, or (lo, hi) for a value
        term whose training rows are summarised by their range."""
        out: list[np.ndarray | tuple[float, float]] = []
        terms = self.terms()
        # a missing item and the one interval or level term of its variable are exclusive: a row
        # missing x meets none of x's other items (else the two count as independent terms)
        by_variable: dict = {}
        for term, items in terms.items():
            if items[0].kind != "missing" and items[0].variable is not None:
                by_variable.setdefault(items[0].variable, []).append(term)
        joined = {}
        for term, items in terms.items():
            if items[0].kind == "missing":
                own = by_variable.get(items[0].variable, [])
                if len(own) == 1 and all(it.kind in ("interval", "level") for it in terms[own[0]]):
                    joined[own[0]] = items[0].points
        for term, items in terms.items():
            pts = np.array([it.points for it in items], float)
            if items[0].kind == "missing" and any(joined.get(t) is not None for t in
                                                  by_variable.get(items[0].variable, [])):
                continue  # counted with its variable's term
            extra = [float(joined[term])] if term in joined else []
            if items[0].kind == "interval":
                out.append(np.unique(np.concatenate([interval_points(items), extra])))
            elif all(it.kind in ("level", "missing") for it in items):
                out.append(np.unique(np.concatenate([pts, [0.0], extra])))
            else:
                how, table = self.support[term]
                if how == "rows":
                    out.append(np.unique((np.asarray(table, float) @ pts).round(9)))
                else:
                    box = np.asarray(table, float)
                    out.append((float(np.minimum(box[:, 0] * pts, box[:, 1] * pts).sum()),
                                float(np.maximum(box[:, 0] * pts, box[:, 1] * pts).sum())))
        return out

    def attainable_scores(self) -> np.ndarray | None:
        """Every total score the card can give, or None when there are too many (real values)."""
        scores = np.zeros(1)
        for c in self.contributions():
            if isinstance(c, tuple):
                return None
            scores = np.unique((scores[:, None] + c[None, :]).ravel().round(9))
            if len(scores) > MAX_ATTAINABLE:
                return None
        return scores

    def score_limits(self) -> tuple[float, float]:
        lo = hi = 0.0
        for c in self.contributions():
            a, b = (c if isinstance(c, tuple) else (float(c.min()), float(c.max())))
            lo, hi = lo + a, hi + b
        return lo, hi

    # --- data -----------------------------------------------------------------------------
    def matrix(self, data, what: str = "predict", name: str = "newdata") -> np.ndarray:
        """One column per item: its value on every row of ``data`` (1/0 for conditions)."""
        X = self.design.transform(data, what, name=name, columns=self.read_columns)
        return self.matrix_of_design(X)

    def matrix_of_design(self, X: np.ndarray) -> np.ndarray:
        """The item matrix of rows already encoded as design columns ``X``."""
        out = np.empty((len(X), len(self.items)))
        for k, it in enumerate(self.items):
            out[:, k] = it.values(X)
        return out

    def score(self, data, what: str = "predict", name: str = "newdata") -> np.ndarray:
        """Total points of every row (intercept not included)."""
        return self.matrix(data, what, name) @ self.points if self.items else np.zeros(len(data))

    def risk_of(self, score) -> np.ndarray:
        """The logistic risk at total score(s) ``score``."""
        z = self.intercept + np.asarray(score, dtype=float)
        return expit(z if self.scale == 1.0 else z / self.scale)

    # --- document -----------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Plain JSON values: intercept, scale, items (design columns by name) and supports."""
        cols = self.design.columns

        def name(j):
            return None if j is None else cols[j]

        items = []
        for it in self.items:
            d = {"label": it.label, "term": it.term, "kind": it.kind, "points": int(it.points)}
            if it.kind == "interval":
                d.update(variable=it.variable, lower=it.lower, upper=it.upper,
                         columns=[name(j) for j in it.columns])
            else:
                d.update(variable=it.variable, column=cols[it.columns[0]])
                if it.kind == "level":
                    d["level"] = it.level
            items.append(d)
        support = {t: {"how": how, "values": np.asarray(v, float).tolist()} for t, (how, v) in self.support.items()}
        return {"intercept": self.intercept, "scale": self.scale, "items": items, "support": support}


def missing_columns(design) -> dict:
    """variable -> the position of its ``missing(x)`` design column, for every variable fitted with
    ``missing="item"`` (see :mod:`riskformula.design.missing`)."""
    return {r.variable: j for j, r in enumerate(design.rules or ()) if r.kind == "missing"}


def interval_points(items) -> np.ndarray:
    """The points a row gets from one term's interval items, in each region between their ends
    (lowest first): the items may overlap (``x > 40`` and ``x > 60`` both hold for 70)."""
    cuts = sorted({c for it in items for c in (it.lower, it.upper) if c is not None})
    out = np.zeros(len(cuts) + 1)
    for it in items:
        lo = 0 if it.lower is None else cuts.index(it.lower) + 1  # first region above the lower end
        hi = len(cuts) if it.upper is None else cuts.index(it.upper)  # last region at or below the upper end
        out[lo:hi + 1] += it.points
    return out


def value_supports(design, X: np.ndarray, points: np.ndarray) -> dict:
    """term -> its value items' columns in the training rows ``X``: ("rows", distinct rows) when
    there are few, else ("box", per-column [min, max]).  Value items are the points on columns that
    are not threshold cuts (a term whose columns are all levels needs none)."""
    thr = {j for t in design.thresholds for j in t.columns}
    by_term: dict = {}
    for j, p in enumerate(points):
        if p != 0 and j not in thr:
            by_term.setdefault(design.column_terms[j] or design.columns[j], []).append(j)
    out = {}
    for term, cols in by_term.items():
        if design.rules and all(design.rules[j].kind in ("level", "missing") for j in cols):
            continue  # a factor's levels or a missing item: its contributions are its points and 0
        # the term's items in card order are its columns in design order
        sub = X[:, cols]
        rows = distinct_rows(sub)[0] if len(sub) else sub
        if len(rows) <= MAX_SUPPORT_ROWS:
            out[term] = ("rows", rows)
        else:
            out[term] = ("box", np.column_stack([sub.min(axis=0), sub.max(axis=0)]))
    return out
