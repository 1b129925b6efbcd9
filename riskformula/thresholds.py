"""Model-chosen thresholds for continuous predictors (Molero-Río & D'Ambrosio, 2025): ``threshold(x)``,
``threshold(.)`` (every numeric predictor), ``cut(x, [...])``.

Only the order of a predictor's values matters to a threshold: any cut between two consecutive
distinct training values splits the rows the same way.  ``threshold(x)`` therefore expands into one
indicator column ``1[x ≤ c]`` per candidate cut ``c`` (the midpoints of the gaps between distinct
values), and the fit lets at most ``k`` of them carry points.  The cut points live in the formula's
stored state, so ``predict`` applies exactly the same cuts to new data.

How a term is scored (points per interval, "levels"): with cuts c_1 < … < c_q chosen and points δ_r
on ``1[x ≤ c_r]``, a row in the interval just below c_r gets T + Σ_{s ≥ r} δ_s, the top interval
gets T.  The intercept absorbs T, so the fit only needs the δ's, plus "every level within the
coefficient range": for one cut that is ``δ ∈ [lb − ub, ub − lb]`` (Molero-Río & D'Ambrosio's
w≤/w≥ form, w≤ − w≥ = δ); for several cuts the fit adds rows on running sums (see
:mod:`riskformula.compile`).
:func:`levels` recovers the card's per-interval points.
"""

from __future__ import annotations

import ast
import keyword
import numbers
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from formulaic import Formula
from formulaic.errors import FormulaicError
from formulaic.transforms import stateful_transform
from formulaic.utils.code import format_expr, sanitize_variable_names

from .errors import FormulaError

#: more candidate cuts than this in one term need ``grid=`` (the design has one column per cut)
MAX_CUTS = 2000


def _values(x, what: str) -> np.ndarray:
    try:
        v = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise FormulaError(f"`{what}` needs a numeric variable; got values like {list(x)[:3]!r}.") from None
    return v


#: context keys build_design uses to talk to threshold(): a cheap first pass, and the outcome
PROBE = "__riskformula_probe__"
OUTCOME = "__riskformula_outcome__"


def _undominated_gaps(x: np.ndarray, y: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Gaps between consecutive distinct values ``v`` worth a cut: a cut inside a run of values
    whose rows all share one outcome is never better than a cut at an end of the run (moving it
    changes every moved row's loss in the same direction), see :func:`drop_dominated_cuts`."""
    code = np.searchsorted(v, x)
    ev = np.bincount(code, weights=(y == 1), minlength=len(v))
    ne = np.bincount(code, weights=(y == 0), minlength=len(v))
    status = np.where((ev > 0) & (ne == 0), 1, np.where((ne > 0) & (ev == 0), 0, 2))
    return (status[:-1] == 2) | (status[1:] == 2) | (status[:-1] != status[1:])


def candidate_cuts(x: np.ndarray, grid: int | None = None, y: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """Midpoints between consecutive distinct values of ``x`` (only the gaps that can hold an
    optimal cut when the outcome ``y`` is given); with ``grid`` at most that many, placed at the
    gaps that contain the ``grid`` evenly spaced quantiles.  Returns (cuts, on_grid)."""
    finite = np.isfinite(x)
    v = np.unique(x[finite])
    mids = (v[:-1] + v[1:]) / 2
    useful = mids[_undominated_gaps(x[finite], np.asarray(y)[finite], v)] if y is not None and len(mids) else mids
    if grid is None or len(useful) <= grid:
        return useful, False
    # the grid is placed over all gaps (a run of one outcome may hold several grid gaps; the
    # dominated ones among them are dropped later, on the design)
    q = np.quantile(x[finite], np.arange(1, grid + 1) / (grid + 1))
    gap = np.clip(np.searchsorted(v, q, side="right") - 1, 0, len(mids) - 1)
    return mids[np.unique(gap)], True


def _keys(cuts) -> list[str]:
    short = [f"<={c:.6g}" for c in cuts]
    return short if len(set(short)) == len(short) else [f"<={c!r}" for c in cuts]


def _indicators(x, state) -> dict:
    x = _values(x, state["kind"])
    return {key: (x <= c).astype(float) for key, c in zip(state["keys"], state["cuts"])}


def _outcome_for(x, context):
    """The training outcome aligned with ``x``, when build_design provided it."""
    if context is None or OUTCOME not in context:
        return None
    y = context[OUTCOME]
    if hasattr(x, "index") and len(x) == len(y):
        return y.reindex(x.index).to_numpy()
    return None


@stateful_transform
def threshold(x, k=1, grid=None, _state=None, _context=None):
    """Let the model choose up to ``k`` cuts of ``x`` (one by default), points on each side.

    Use in a formula: ``y ~ threshold(age) + threshold(bmi, k=2) + threshold(income, grid=100)``.
    ``grid`` limits the candidate cuts to about that many quantile gaps (for large data); the
    certificate is then optimal relative to that grid.

    Examples
    --------
    >>> import pandas as pd, riskformula as rf
    >>> df = pd.DataFrame({"age": [30, 40, 50, 60], "y": [0, 0, 1, 1]})
    >>> m = rf.risk_score("y ~ threshold(age)", df, time_limit=5)
    >>> m.score_card()["term"].tolist()
    ['age ≤ 45', 'age > 45']
    """
    if "cuts" not in _state:
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise FormulaError(f"threshold(..., k=) must be a whole number of cuts ≥ 1; got k={k!r}.")
        if grid is not None and (isinstance(grid, bool) or not isinstance(grid, numbers.Integral) or grid < 1):
            raise FormulaError(f"threshold(..., grid=) must be a whole number of candidate cuts ≥ 1; got grid={grid!r}.")
        v = _values(x, "threshold")
        if _context is not None and PROBE in _context:
            # first pass (variables, missing values, outcome): a single dummy column and no stored state
            return {"probe": np.zeros(len(v))}
        cuts, on_grid = candidate_cuts(v, grid, _outcome_for(x, _context))
        if len(cuts) == 0:
            raise FormulaError("threshold(...) needs a variable with at least two distinct values; "
                               "this one is constant in the training rows.")
        if len(cuts) > MAX_CUTS:
            raise FormulaError(f"threshold(...) has {len(cuts):,d} candidate cuts (gaps between distinct values "
                               "that can hold an optimal cut), more than "
                               f"{MAX_CUTS:,d}; limit them with a quantile grid, e.g. threshold(x, grid=100).")
        _state.update(kind="threshold", cuts=[float(c) for c in cuts], keys=_keys(cuts), k=int(min(k, len(cuts))),
                      grid=grid, on_grid=bool(on_grid), n_distinct=int(len(np.unique(v[np.isfinite(v)]))))
    return _indicators(x, _state)


@stateful_transform
def cut(x, points, _state=None):
    """Fixed cut points chosen by the user: ``cut(age, [40, 60])`` gives one level of points per
    interval (x ≤ 40, 40 < x ≤ 60, x > 60), each within the coefficient range.

    Examples
    --------
    >>> import pandas as pd, riskformula as rf
    >>> df = pd.DataFrame({"age": [30, 45, 50, 70], "y": [0, 0, 1, 1]})
    >>> m = rf.risk_score("y ~ cut(age, [40, 60])", df, time_limit=5)
    >>> m.size
    1
    """
    if "cuts" not in _state:
        try:
            pts = sorted({float(p) for p in np.atleast_1d(points)})
        except (TypeError, ValueError):
            raise FormulaError(f"cut(x, points) needs numeric cut points such as [40, 60]; got {points!r}.") from None
        if not pts or not all(np.isfinite(pts)):
            raise FormulaError(f"cut(x, points) needs at least one finite cut point; got {points!r}.")
        _state.update(kind="cut", cuts=pts, keys=_keys(pts), k=len(pts), grid=None, on_grid=False,
                      n_distinct=None)
    return _indicators(x, _state)


FORMULA_FUNCTIONS = {"threshold": threshold, "cut": cut}


# --------------------------------------------------------------------------------------
# threshold(.): a threshold of every numeric predictor
# --------------------------------------------------------------------------------------

_DOT = re.compile(r"(?<![\w.])threshold\(\s*\.\s*(?=[,)])")


def _quoted(name: str) -> str:
    """A column name as formula text (backticks when it is not a Python name)."""
    return name if name.isidentifier() and not keyword.iskeyword(name) else f"`{name}`"


def _thresholdable(s: pd.Series) -> bool:
    """Numeric with more than two distinct values: binary (0/1, two-valued, boolean) and
    categorical columns are items as they are."""
    return (pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
            and s.nunique(dropna=True) > 2)


def _closing(text: str, start: int) -> int:
    """Index of the parenthesis closing the one opened just before ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            if depth == 0:
                return i
            depth -= 1
    raise FormulaError(f"`threshold(.` is not closed in {text!r}.")


def _formula_variables(formula: str, columns: list) -> tuple[list, set]:
    """(variables the rhs's ``.`` brings in as plain terms, variables the rhs requires), by formulaic."""
    try:
        f = Formula.from_spec(formula, context={"__formulaic_variables_available__": columns})
    except FormulaicError as e:
        raise FormulaError(f"could not read the formula {formula!r}: {e}") from e
    lone = [t.factors[0].expr for t in f.rhs if len(t.factors) == 1
            and t.factors[0].eval_method.value == "lookup"]
    return lone, set(f.rhs.required_variables)


def expand_threshold_dot(lhs: str, rhs: str, data: pd.DataFrame) -> str:
    """``rhs`` with ``threshold(.)`` written out for ``data``; other formulas unchanged.

    ``threshold(.)`` covers the columns ``.`` would (every column except the outcome and the
    variables the formula names elsewhere; ``- x`` removes ``x``): each numeric column with more
    than two distinct values becomes ``threshold(column, <arguments>)``, and binary and
    categorical columns stay plain terms.  ``threshold(., k=2, grid=10)`` passes the arguments
    on to every threshold.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": [0, 1, 0, 1], "age": [30, 41, 52, 63], "male": [0, 1, 1, 0],
    ...                    "bmi": [21.0, 25.5, 30.2, 27.9]})
    >>> expand_threshold_dot("y", "threshold(., grid=10) - bmi", df)
    'threshold(age, grid=10) + male - bmi'
    """
    hits = list(_DOT.finditer(rhs))
    if not hits:
        return rhs
    if len(hits) > 1:
        raise FormulaError(f"`threshold(.)` appears {len(hits)} times in {rhs!r}; write it once "
                           "(its arguments apply to every column it covers).")
    start, dot_end = hits[0].start(), hits[0].end()
    end = _closing(rhs, dot_end) + 1
    args = rhs[dot_end:end - 1].strip()  # "" or ", k=2"
    before, after = rhs[:start].rstrip(), rhs[end:].lstrip()
    depth = sum(rhs[:start].count(c) for c in "([{") - sum(rhs[:start].count(c) for c in ")]}")
    if depth or (before and before[-1] != "+") or (after and after[0] not in "+-"):
        raise FormulaError(f"`threshold(.)` must be a term of its own, joined to the others with + or -, "
                           f"e.g. 'y ~ threshold(.) + C(sex)'; got {rhs!r}. It cannot be part of an "
                           "interaction or a function call.")
    columns = [c for c in data.columns if isinstance(c, str)]
    dot_terms, _ = _formula_variables(f"{lhs} ~ {rhs[:start]}.{rhs[end:]}", columns)
    _, named = _formula_variables(f"{lhs} ~ {rhs[:start]}1{rhs[end:]}", columns)
    dot = set(dot_terms) - named
    covered = [c for c in columns if c in dot]
    if not covered:
        raise FormulaError(f"`threshold(.)` covers no columns: every column of `data` is the outcome or "
                           f"is already named in the formula {rhs!r}.")
    numeric = [c for c in covered if _thresholdable(data[c])]
    if not numeric:
        raise FormulaError(f"`threshold(.)` has nothing to threshold: none of the columns it covers "
                           f"({covered[:10]}{'...' if len(covered) > 10 else ''}) is numeric with more than "
                           "two distinct values (binary and categorical columns enter as they are). "
                           "Write '.' instead, or threshold a numeric column by name.")
    terms = [f"threshold({_quoted(c)}{args})" if c in numeric else _quoted(c) for c in covered]
    return f"{rhs[:start]}{' + '.join(terms)}{rhs[end:]}"


@dataclass(frozen=True)
class ThresholdTerm:
    """A ``threshold(...)``/``cut(...)`` term of a design: its columns (0-based), cuts and limit k."""

    term: str
    variable: str
    kind: str
    cuts: tuple
    columns: tuple
    k: int
    on_grid: bool
    n_distinct: int | None

    def condition(self, r: int, chosen: list[int]) -> str:
        """Readable condition of interval r (0 = lowest) between the chosen cuts (indices into cuts)."""
        c = [self.cuts[i] for i in chosen]
        x = self.variable
        if r == 0:
            return f"{x} ≤ {c[0]:.6g}"
        if r == len(c):
            return f"{x} > {c[-1]:.6g}"
        return f"{c[r - 1]:.6g} < {x} ≤ {c[r]:.6g}"


def _first_argument(term: str) -> str:
    inner = term[term.index("(") + 1:]
    depth = 0
    for i, ch in enumerate(inner):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return inner[:i].strip()
            depth -= 1
        elif ch == "," and depth == 0:
            return inner[:i].strip()
    return inner.strip()


def _state_key(term: str) -> str:
    try:
        return format_expr(ast.parse(sanitize_variable_names(term, {}, {}), mode="eval").body)
    except SyntaxError:
        return term


def threshold_terms(spec, columns: list, column_terms: list) -> list[ThresholdTerm]:
    """The threshold/cut terms of a formulaic ModelSpec, with their design column positions."""
    out = []
    states = spec.transform_state
    for term in dict.fromkeys(t for t in column_terms if t is not None):
        if not (term.startswith("threshold(") or term.startswith("cut(")):
            if "threshold(" in term or "cut(" in term:
                raise FormulaError(f"the term {term!r} combines a threshold with something else; a threshold "
                                   "must be a term of its own (interactions of thresholds are not supported).")
            continue
        # formulaic keys the state by the expression with `quoted names` made Python names
        st = states.get(term) or states.get(_state_key(term))
        if not st or "cuts" not in st:
            raise FormulaError(f"could not find the cut points of the term {term!r}; if its variable name "
                               "needs `backticks`, rename the column to a plain name.")
        by_key = {f"{term}[{k}]": i for i, k in enumerate(st["keys"])}
        cols = [None] * len(st["keys"])
        for j, name in enumerate(columns):
            if name in by_key:
                cols[by_key[name]] = j
        out.append(ThresholdTerm(term=term, variable=_first_argument(term).strip("`"), kind=st["kind"],
                                 cuts=tuple(st["cuts"]), columns=tuple(cols), k=int(st["k"]),
                                 on_grid=bool(st["on_grid"]), n_distinct=st["n_distinct"]))
    return out


def levels(delta: np.ndarray, lower: float, upper: float) -> tuple[list[int], np.ndarray, float]:
    """Points per interval of a fitted threshold term.

    ``delta`` are the fitted points on the term's ``1[x ≤ c]`` columns.  Returns the chosen cut
    indices, the points of each interval (lowest first) and the shift T moved out of the
    intercept: the top interval's points, chosen as close to 0 as the range [lower, upper] allows.
    """
    chosen = [i for i in range(len(delta)) if delta[i] != 0]
    if not chosen:
        return [], np.zeros(1), 0.0
    d = np.asarray(delta, float)[chosen]
    rel = np.concatenate([np.cumsum(d[::-1])[::-1], [0.0]])  # level − T per interval
    lo_t, hi_t = lower - rel.min(), upper - rel.max()
    t = float(min(max(0.0, lo_t), hi_t)) if lo_t <= hi_t else 0.0
    return chosen, rel + t, t


def drop_dominated_cuts(design, weights=None) -> dict:
    """Remove candidate cuts that can never beat a neighbouring cut; returns term -> cuts kept.

    Moving a cut across a run of consecutive distinct values whose rows all have the same
    outcome changes every moved row's loss in the same direction (the logistic loss of an event
    falls as its score rises, that of a non-event rises), so the best position inside such a run
    is at one of its ends.  Only gaps next to a value with events and non-events, or between a
    value with only events and one with only non-events, stay candidates.  This is exact for
    any other terms and any points, so certificates still hold over every cut position.
    (Not used when side information fixes the risk of a profile: moving a cut changes that
    profile.)  The design is changed in place; ``predict`` keeps using the stored cut points.
    """
    import dataclasses

    if not design.thresholds:
        return {}
    y = np.asarray(design.y)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, float)
    drop, kept, new_terms = set(), {}, []
    for t in design.thresholds:
        if t.kind != "threshold":
            new_terms.append(t)
            continue
        # outcome status of the rows between consecutive candidate cuts: 1 events only, 0 none, 2 mixed/empty
        X = design.X[:, list(t.columns)]
        pos = (X.sum(axis=1)).astype(int)  # number of cuts ≥ x: rows with equal pos share a bin
        nb = len(t.cuts) + 1
        ev = np.bincount(pos, weights=w * (y == 1) * (w > 0), minlength=nb)
        ne = np.bincount(pos, weights=w * (y == 0) * (w > 0), minlength=nb)
        status = np.where((ev > 0) & (ne == 0), 1, np.where((ne > 0) & (ev == 0), 0, 2))
        # cut r (0-based, ascending) separates bin pos = len-r (below... ) — bins count cuts above x
        keep_cols, keep_cuts = [], []
        for r, (j, c) in enumerate(zip(t.columns, t.cuts)):
            below, above = nb - 1 - r, nb - 2 - r  # x just below cut r has len(cuts) − r cuts ≥ x
            if status[below] == 2 or status[above] == 2 or status[below] != status[above]:
                keep_cols.append(j)
                keep_cuts.append(c)
            else:
                drop.add(j)
        if not keep_cols:  # cannot happen with both outcomes present; keep the term well-formed anyway
            keep_cols, keep_cuts = [t.columns[0]], [t.cuts[0]]
            drop.discard(t.columns[0])
        kept[t.term] = (len(keep_cuts), len(t.cuts))
        new_terms.append(dataclasses.replace(t, columns=tuple(keep_cols), cuts=tuple(keep_cuts),
                                             k=min(t.k, max(len(keep_cuts), 1))))
    if not drop:
        return kept
    keep = [j for j in range(len(design.columns)) if j not in drop]
    remap = {j: i for i, j in enumerate(keep)}
    design.X = design.X[:, keep]
    design.columns = [design.columns[j] for j in keep]
    design.labels = [design.labels[j] for j in keep]
    design.column_terms = [design.column_terms[j] for j in keep]
    design.thresholds = [dataclasses.replace(t, columns=tuple(remap[j] for j in t.columns)) for t in new_terms]
    return kept
