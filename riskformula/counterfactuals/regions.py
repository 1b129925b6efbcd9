"""The moves a fitted score allows, derived from the model itself (Navas-Palencia 2021, §2).

A counterfactual changes *features*: a variable the scored terms use, or a one-hot group of 0/1
columns (which change together, so exactly one stays set).  Each feature has a finite list of
*candidates*, the regions of its values that the score tells apart:

* a thresholded numeric variable: the intervals between the model's chosen cuts, each reached
  at its value nearest to the current one (the nearest value on the other side of a cut, in the
  data's precision and inside the observed range);
* a numeric variable with a plain linear term (alone or with thresholds): the same intervals,
  inside which any value in the observed range may be chosen (the smallest change that earns
  the points);
* a categorical, boolean or 0/1 variable, or a numeric variable entering some other way
  (``I(x**2)``, ``np.log(x)``) with at most 100 observed values: its levels / observed values;
  otherwise a grid of 101 observed quantiles;
* a one-hot group: which member is set.

A missing value is in no candidate: the score's missing item (``missing(x)``) is not a region to
move to, so a person missing ``x`` can only have it measured (see :mod:`.search` for the rule and
:meth:`Feature.distance` for its cost), and a measured ``x`` never moves to missing.

Features linked by an interaction term form one *block*, whose options are the combinations of
its features' choices; blocks are independent, so the score gain of a counterfactual is the
sum of its blocks' gains.  Every number here is computed by the model's own encoding of probe
rows, so the gains are exactly what :meth:`~riskformula.RiskScore.score` will give.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..errors import DataError, SettingsError
from ..thresholds import levels_by_term
from .profile import MAX_VALUES, VariableProfile, scored_terms, term_variables
from .._json import plain as _plain

if TYPE_CHECKING:
    from ..record import ScoreRecord

#: a block's options are the product of its features' choices; more than this is refused
MAX_BLOCK_OPTIONS = 20000
STAY = -1


@dataclass
class Candidate:
    """One region of a feature's values: ``label`` reads as the required value ("> 16.795",
    "= married"); numeric regions admit values in ``[lo, hi]``; ``value`` is a level, a group
    member (None: no member set) or a grid value."""

    label: str
    lo: float = math.nan
    hi: float = math.nan
    value: object = None


@dataclass
class Feature:
    """A variable (or one-hot group) a counterfactual may change, with its candidate regions.

    ``kind``: ``"interval"`` (numeric, regions between cuts, continuous inside when ``slope``
    ≠ 0), ``"values"`` (numeric observed values or grid), ``"levels"`` (categorical, boolean,
    0/1), ``"group"`` (one-hot columns).
    """

    name: str
    columns: tuple
    kind: str
    candidates: list
    profile: VariableProfile | None = None
    slope: float = 0.0
    scale: float = 1.0
    step: float = 1.0
    order: dict | None = None     # level -> rank, when the levels are ordered
    weight: float = 1.0
    mutable: bool = True
    direction: int = 0            # +1 only increase, -1 only decrease

    @property
    def numeric(self) -> bool:
        return self.kind in ("interval", "values")

    @property
    def continuous(self) -> bool:
        return self.kind == "interval" and self.slope != 0

    @property
    def reference(self) -> float:
        """Where a missing value of a numeric variable is measured from: the training median (the
        middle of the value grid for a profile that does not keep it), in the observed range.  A
        person missing the variable moves to a measured value ``v`` at cost ``1 + |v − reference| /
        scale``: one for the measurement, plus how far ``v`` is from a typical value."""
        p = self.profile
        if p is None or p.min is None or p.max is None:
            return 0.0
        m = p.median if p.median is not None else float(np.median(p.values)) if p.values else (p.min + p.max) / 2
        return float(min(max(m, p.min), p.max))

    # --- a person's value ---------------------------------------------------------------------
    def current(self, row: dict):
        if self.kind == "group":
            on = [c for c in self.columns if _truthy(row[c])]
            return on[0] if len(on) == 1 else (None if not on else tuple(on))
        v = row[self.name]
        if is_missing(v):
            return math.nan if self.numeric else None
        return float(v) if self.numeric else _plain(v)

    def candidate_of(self, x) -> int | None:
        """The candidate holding the current value ``x`` (None when no candidate does, e.g. a
        missing value)."""
        if self.kind != "group" and is_missing(x):
            return None
        for i, c in enumerate(self.candidates):
            if self.kind == "interval":
                if c.value[0] < x <= c.value[1]:
                    return i
            elif self.kind == "values":
                if np.isclose(c.value, x, rtol=0, atol=self.step / 2):
                    return i
            elif _same(c.value, x):
                return i
        return None

    def realize(self, i: int, x):
        """The value a person at ``x`` moves to in candidate ``i`` (the nearest admissible one; from a
        missing value, the one nearest the :attr:`reference`)."""
        c = self.candidates[i]
        if self.kind == "interval":
            if is_missing(x):
                x = self.reference
            return float(min(max(x, c.lo), c.hi))
        return c.value

    def distance(self, new, x) -> float:
        """Cost of moving from ``x`` to ``new`` before the user's weight: scaled L1 for numeric
        variables (|Δ| / median absolute deviation), 1 per change of a level or group; from a
        missing value, 1 for measuring it plus (numeric) the distance from the :attr:`reference`."""
        if self.kind != "group" and is_missing(x):
            return 1.0 + (abs(float(new) - self.reference) / self.scale if self.numeric else 0.0)
        if self.numeric:
            return abs(float(new) - float(x)) / self.scale
        return 0.0 if _same(new, x) else 1.0

    def allowed_direction(self, new, x) -> bool:
        """Whether moving from ``x`` to ``new`` keeps the feature's direction (measuring a missing
        value always does: a direction constrains changes of a measured value)."""
        if not self.direction or (self.kind != "group" and is_missing(x)):
            return True
        if self.numeric:
            return (float(new) - float(x)) * self.direction > 0
        assert self.order is not None  # a direction needs ordered levels (refused otherwise when it is set)
        r_new, r_x = self.order.get(_plain(new)), self.order.get(_plain(x))
        return r_new is not None and r_x is not None and (r_new - r_x) * self.direction > 0

    def assign(self, row: dict, value) -> None:
        """Write ``value`` into a row dict (a group sets its member and clears the others)."""
        if self.kind == "group":
            for c in self.columns:
                row[c] = 1 if c == value else 0
        else:
            row[self.name] = value

    def show(self, value) -> str:
        """A value as printed in reports, in the data's precision."""
        if self.kind == "group":
            return "none of " + "/".join(self.columns) if value is None else str(value)
        if is_missing(value):
            return "missing"
        if self.profile is not None and self.profile.kind == "numeric" and isinstance(value, (int, float, np.number)):
            return _fmt(float(value), self.profile.decimals)
        return str(value)


@dataclass
class Block:
    """Features linked by interaction terms (most blocks hold one feature), the design columns of
    their terms, and their options (one choice per feature; ``STAY`` keeps the current value)."""

    features: list
    columns: list
    options: list = field(default_factory=list)
    static_points: np.ndarray | None = None    # single-feature blocks: points per candidate
    static_level: np.ndarray | None = None     # continuous features: points − slope·value per candidate
    card_shift: float = 0.0                    # top-interval points of its threshold terms (as the card shows)

    @property
    def single(self) -> bool:
        return len(self.features) == 1

    @property
    def continuous(self) -> bool:
        return self.single and self.features[0].continuous

    def changed(self, o: int) -> tuple:
        """Positions (within the block) of the features option ``o`` changes."""
        return tuple(k for k, ch in enumerate(self.options[o]) if ch != STAY)


@dataclass
class Space:
    """Every move the model allows: blocks of features, and the score orientation."""

    model: ScoreRecord
    blocks: list
    features: list            # all features, in block order
    coef: np.ndarray
    shift: float

    def feature(self, name: str) -> Feature:
        for f in self.features:
            if f.name == name or name in f.columns:
                return f
        raise KeyError(name)


# --------------------------------------------------------------------------------------
# building the space
# --------------------------------------------------------------------------------------

def _threshold_breaks(model) -> dict:
    """variable -> sorted chosen cuts over its threshold/cut terms with nonzero points."""
    coef = model.column_points
    out: dict = {}
    for t in model.design.thresholds:
        cuts = [c for j, c in zip(t.columns, t.cuts) if j is not None and coef[j] != 0]
        if cuts:
            out.setdefault(t.variable, set()).update(cuts)
    return {k: sorted(v) for k, v in out.items()}


def build_space(model, profile, groups: dict | None = None, columns=None) -> Space:
    """The features and blocks of ``model``'s scored terms, with static points of every option."""
    design = model.design
    coef = model.column_points.astype(float)
    shift = float(getattr(model, "_shift", 0.0))
    tvars = term_variables(design)
    terms = scored_terms(model)
    thr_terms = {t.term: t for t in design.thresholds}
    breaks = _threshold_breaks(model)
    lv = levels_by_term(design.thresholds, coef, model.settings.coef_lower, model.settings.coef_upper)
    used = sorted({v for t, _ in terms for v in tvars.get(t, set())})

    # one-hot groups: the user's, then those found in the training rows
    owner: dict = {}
    group_defs: list = []
    for name, members in (groups or {}).items():
        cols = [m for m in members if m is not None]
        group_defs.append((str(name), tuple(cols), None in members))
    for part in profile.partitions:
        if columns is not None and not set(part) <= set(columns):
            continue  # the people lack a member: its columns move one by one
        if any(c in used for c in part) and not any(c in g[1] for g in group_defs for c in part):
            group_defs.append((_group_name(part), tuple(part), False))
    for name, cols, none_ok in group_defs:
        for c in cols:
            owner[c] = name

    features: dict = {}
    for name, cols, none_ok in group_defs:
        if not any(c in used for c in cols):
            continue
        cands = [Candidate(f"= {c}", value=c) for c in cols]
        if none_ok:
            cands.append(Candidate("= none of " + "/".join(cols), value=None))
        features[name] = Feature(name, cols, "group", cands)
    # how each variable enters the scored terms
    plain: dict[str, float] = {}
    other, multi = set(), set()
    for t, cols in terms:
        vs = tvars.get(t, set())
        if all(design.rules[j].kind == "missing" for j in cols):
            continue  # a missing item: it scores the rows missing the variable, not its values
        if len(vs) > 1:
            multi |= vs
            continue
        for v in vs:
            if t in thr_terms:
                continue
            if t.strip("`") == v and len(cols) == 1 and design.columns[cols[0]].strip("`") == v:
                plain[v] = plain.get(v, 0.0) + float(coef[cols[0]])
            else:
                other.add(v)
    for v in used:
        if v in owner:
            continue
        p = profile.variables.get(v)
        if p is None:
            raise SettingsError(f"the training profile has no entry for `{v}`; pass the training rows as "
                                "`data=` so the counterfactual search knows its range and scale.")
        features[v] = _variable_feature(v, p, breaks.get(v, []), plain.get(v, 0.0),
                                        single=v not in multi and v not in other)

    # blocks: features sharing a term
    parent = {f: f for f in features}

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    term_feats = []
    for t, cols in terms:
        fs = sorted({owner.get(v, v) for v in tvars.get(t, set())} & set(features))
        term_feats.append((fs, cols))
        for a, b in zip(fs, fs[1:]):
            parent[find(a)] = find(b)
    comps: dict = {}
    for f in features:
        comps.setdefault(find(f), []).append(f)
    blocks = []
    for members in sorted(comps.values(), key=lambda m: m[0]):
        cols = sorted({j for fs, cs in term_feats if fs and fs[0] in members for j in cs})
        fl = [features[m] for m in members]
        size = math.prod(len(f.candidates) + 1 for f in fl)
        if size > MAX_BLOCK_OPTIONS:
            raise SettingsError(f"the interaction of {', '.join(members)} has {size:,d} combinations of regions "
                                f"to search, more than {MAX_BLOCK_OPTIONS:,d}; make some of them immutable or "
                                "threshold the numeric ones.")
        opts = [tuple(o) for o in itertools.product(*[[STAY] + list(range(len(f.candidates))) for f in fl])]
        top = sum(lv[t.term][2] for t in design.thresholds if t.term in lv and set(t.columns) & set(cols))
        blocks.append(Block(fl, cols, opts, card_shift=float(top)))
    return Space(model, blocks, [f for b in blocks for f in b.features], coef, shift)


def _group_name(cols) -> str:
    prefix = "".join(c[0] for c in itertools.takewhile(lambda t: len(set(t)) == 1, zip(*cols))).rstrip("_ .=")
    return prefix if len(prefix) >= 3 else "/".join(cols)


def _variable_feature(v: str, p: VariableProfile, cuts: list, slope: float, single: bool) -> Feature:
    if p.kind in ("categorical", "boolean"):
        levels = list(p.levels)
        order = {lv: i for i, lv in enumerate(levels)} if (p.kind == "boolean" or p.ordered) else None
        return Feature(v, (v,), "levels", [Candidate(f"= {lv}", value=lv) for lv in levels], p, order=order)
    if p.min is None or p.max is None:  # set together
        raise SettingsError(f"`{v}` has no finite values in the training profile.")
    if p.binary:
        vals = list(p.values)
        return Feature(v, (v,), "levels", [Candidate(f"= {_fmt(x, p.decimals)}", value=x) for x in vals], p,
                       order={x: i for i, x in enumerate(vals)})
    step = p.step
    if single:
        # piecewise linear in v: constant (thresholds) or with slope (plain term) between cuts
        edges = [-math.inf] + list(cuts) + [math.inf]
        cands = []
        for a, b in zip(edges, edges[1:]):
            lo = max(p.min, _above(a, step)) if a > -math.inf else p.min
            hi = min(p.max, _at_most(b, step)) if b < math.inf else p.max
            if lo > hi + 1e-12:
                continue  # no observed-range value in this interval
            cands.append(Candidate(_interval_label(v, a, b, p.decimals), lo=lo, hi=hi, value=(a, b)))
        return Feature(v, (v,), "interval", cands, p, slope=float(slope), scale=p.scale, step=step)
    vals = list(p.values)
    label = "=" if p.n_distinct <= MAX_VALUES else "≈"
    return Feature(v, (v,), "values", [Candidate(f"{label} {_fmt(x, p.decimals)}", lo=x, hi=x, value=x) for x in vals],
                   p, scale=p.scale, step=step, order={x: i for i, x in enumerate(vals)})


def _above(c: float, step: float) -> float:
    """Smallest multiple of ``step`` strictly above the cut ``c``."""
    k = math.floor(c / step + 1e-9) + 1
    v = round(k * step, 12)
    for _ in range(_GRID_STEPS):  # rounding moves it a step or two at most, where the grid is resolved
        if v > c:
            return v
        k += 1
        v = round(k * step, 12)
    return _unresolved(c, step)


def _at_most(c: float, step: float) -> float:
    """Largest multiple of ``step`` at or below the cut ``c``."""
    k = math.floor(c / step + 1e-9)
    v = round(k * step, 12)
    for _ in range(_GRID_STEPS):
        if v <= c:
            return v
        k -= 1
        v = round(k * step, 12)
    return _unresolved(c, step)


#: the most grid steps a value may be moved by rounding before the grid counts as unresolved
_GRID_STEPS = 64


def _unresolved(c: float, step: float):
    """The error of a value whose grid of multiples of ``step`` floating point cannot resolve."""
    raise DataError(f"the value {c!r} is too large for its precision step {step!r} (neighbouring multiples of "
                    "the step are the same number in floating point); rescale the variable (e.g. to thousands) or "
                    "round it.")


def _fmt(x: float, d: int) -> str:
    """``x`` in ``d`` decimals without trailing zeros (2019, 0.14235)."""
    s = f"{x:.{d}f}"
    return s.rstrip("0").rstrip(".") if "." in s else s


def _interval_label(v: str, a: float, b: float, d: int) -> str:
    if a == -math.inf and b == math.inf:
        return "any value"
    if a == -math.inf:
        return f"≤ {b:.6g}"
    if b == math.inf:
        return f"> {a:.6g}"
    return f"> {a:.6g} and ≤ {b:.6g}"


def is_missing(v) -> bool:
    """Whether a person's value is missing (None, NaN, pandas' NA or NaT)."""
    if v is None:
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False  # a list or the like: a value


def _truthy(v) -> bool:
    return bool(v) and not (isinstance(v, float) and math.isnan(v))



def _same(a, b) -> bool:
    if isinstance(a, (int, float, np.number)) and isinstance(b, (int, float, np.number)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return float(a) == float(b)
    return _plain(a) == _plain(b)


# --------------------------------------------------------------------------------------
# static points: one probe encoding per model
# --------------------------------------------------------------------------------------

def probe_points(space: Space, base: dict, columns: list) -> None:
    """Fill ``static_points``/``static_level`` of single-feature blocks from one encoded probe frame
    (``base`` is any complete row; a block's points do not depend on the other variables)."""
    rows, where = [], []
    for b in space.blocks:
        if not b.single:
            continue
        f = b.features[0]
        for i, c in enumerate(f.candidates):
            r = dict(base)
            val = (c.lo + c.hi) / 2 if f.kind == "interval" else c.value
            if f.kind == "interval" and f.profile is not None:
                val = min(max(round(round(val / f.step) * f.step, 12), c.lo), c.hi)
            f.assign(r, val)
            rows.append(r)
            where.append((b, i, val))
    if not rows:
        return
    frame = pd.DataFrame(rows, columns=columns)
    X = space.model.encode_design(frame)
    for b in space.blocks:
        if b.single:
            n = len(b.features[0].candidates)
            b.static_points = np.zeros(n)
            b.static_level = np.zeros(n)
    for k, (b, i, val) in enumerate(where):
        pts = float(X[k, b.columns] @ space.coef[b.columns])
        b.static_points[i] = pts
        f = b.features[0]
        b.static_level[i] = pts - f.slope * float(val) if f.kind == "interval" else pts
