"""The formula functions ``threshold(x)`` and ``cut(x, [...])`` and their candidate cuts.

Only the order of a predictor's values matters to a threshold: any cut between two consecutive
distinct training values splits the rows the same way.  ``threshold(x)`` therefore expands into one
indicator column ``1[x ≤ c]`` per candidate cut ``c`` (the midpoints of the gaps between distinct
values, only those that can hold an optimal cut when the outcome is known), and the fit lets at
most ``k`` of them carry points.  The cut points live in the formula's stored state, so
``predict`` applies exactly the same cuts to new data.
"""

from __future__ import annotations

import numbers

import numpy as np
from formulaic.transforms import stateful_transform

from ..errors import FormulaError

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
            raise FormulaError(f"threshold(..., grid=) must be a whole number of candidate cuts ≥ 1; "
                               f"got grid={grid!r}.")
        v = _values(x, "threshold")
        if _context is not None and PROBE in _context:
            # first pass (variables, missing values, outcome): a single dummy column and no stored state
            return {"probe": np.zeros(len(v))}
        cuts, on_grid = candidate_cuts(v, grid, _outcome_for(x, _context))
        _state.update(threshold_state(cuts, on_grid, k, grid, n_distinct=len(np.unique(v[np.isfinite(v)]))))
    return _indicators(x, _state)


def threshold_state(cuts, on_grid: bool, k: int, grid, n_distinct: int) -> dict:
    """The state a ``threshold()`` term stores, from its candidate cuts (checked here)."""
    if len(cuts) == 0:
        raise FormulaError("threshold(...) needs a variable with at least two distinct values; "
                           "this one is constant in the training rows.")
    if len(cuts) > MAX_CUTS:
        raise FormulaError(f"threshold(...) has {len(cuts):,d} candidate cuts (gaps between distinct values "
                           "that can hold an optimal cut), more than "
                           f"{MAX_CUTS:,d}; limit them with a quantile grid, e.g. threshold(x, grid=100).")
    return {"kind": "threshold", "cuts": [float(c) for c in cuts], "keys": _keys(cuts),
            "k": int(min(k, len(cuts))), "grid": grid, "on_grid": bool(on_grid), "n_distinct": int(n_distinct)}


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
