"""The formula functions ``threshold(x)`` and ``cut(x, [...])`` and their candidate cuts.

Only the order of a predictor's values matters to a threshold: any cut between two consecutive
distinct training values splits the rows the same way.  ``threshold(x)`` therefore expands into one
indicator column ``1[x ≤ c]`` per candidate cut ``c`` (one per gap between distinct values, see
:mod:`~riskformula.thresholds.candidates`), and every cut that carries points is one item of the
card and counts once toward the model size.  The cut points live in the formula's stored state, so
``predict`` applies exactly the same cuts to new data.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import pandas as pd
from formulaic.transforms import stateful_transform

from ..errors import DataError, FormulaError
from .candidates import AUTO, AUTO_ABOVE, AUTO_GRID, cuts_from_table, resolve_grid, value_table

#: more candidate cuts than this in one term need ``grid=`` (the design has one column per cut)
MAX_CUTS = 2000


def _values(x, what: str) -> np.ndarray:
    """``x`` as float64; non-numeric, complex and infinite values are the error."""
    if np.iscomplexobj(x) or (hasattr(x, "dtype") and pd.api.types.is_complex_dtype(x.dtype)):
        raise FormulaError(f"`{what}` needs real numbers; got complex numbers (use x.real, x.imag or abs(x)).")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            v = (x.to_numpy(dtype=float, na_value=np.nan) if isinstance(x, pd.Series)
                 else np.asarray(x, dtype=float))
    except (TypeError, ValueError, np.exceptions.ComplexWarning):
        raise FormulaError(f"`{what}` needs a numeric variable; got values like {list(x)[:3]!r}.") from None
    bad = np.isinf(v)
    if bad.any():
        raise DataError(f"`{what}` got {int(bad.sum()):,d} infinite value(s), which a risk score cannot score (a cut "
                        "compares finite numbers); fix or drop those rows.")
    return v


#: context keys build_design uses to talk to threshold(): a cheap first pass, the outcome, and
#: the most cuts one variable can take in the fit (its size limit; for pruning cuts)
PROBE = "__riskformula_probe__"
OUTCOME = "__riskformula_outcome__"
CUT_DEPTH = "__riskformula_cut_depth__"


def candidate_cuts(x: np.ndarray, grid: int | None = None, y: np.ndarray | None = None, *,
                   min_bin: float = 0.0, depth: int | None = None) -> tuple[np.ndarray, bool]:
    """Candidate cuts of the values ``x`` (see :mod:`riskformula.thresholds.candidates`): one per
    gap between distinct values, the dominated ones dropped when the outcome ``y`` is given
    (for at most ``depth`` cuts of the variable; None: no limit), each side holding at least
    ``min_bin`` of the rows, at most ``grid`` of them at quantiles.  Returns (cuts, on_grid)."""
    v, ev, ne = value_table(x, y)
    return cuts_from_table(v, ev, ne, grid=grid, min_bin=min_bin, depth=depth, prune=y is not None)


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


#: the default candidate cuts of ``threshold(x)``, chosen by ``benchmarks/heldout.py`` (five data
#: sets, 20 folds each, beside FasterRisk): every gap that leaves at least 5 % of the rows on each
#: side.  Every gap (``min_bin=0``) fits the training rows slightly better and held-out rows
#: slightly worse (rossi: −0.006 ± 0.006 AUC against +0.007 ± 0.006)
DEFAULT_GRID: int | str | None = AUTO
DEFAULT_MIN_BIN: float = 0.05

#: threshold()'s arguments, for the did-you-mean of a misspelt one
ARGUMENTS = ("k", "grid", "min_bin", "missing")


def _check_arguments(k, grid, min_bin) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1):
        raise FormulaError(f"threshold(..., k=) must be a whole number of cuts ≥ 1 (or None: any number "
                           f"within the model size); got k={k!r}.")
    if isinstance(grid, str) and grid == AUTO:
        return _check_min_bin(min_bin)
    if grid is not None and (isinstance(grid, bool) or not isinstance(grid, numbers.Integral) or grid < 1):
        raise FormulaError(f"threshold(..., grid=) must be a whole number of candidate cuts ≥ 1, \"auto\" (the "
                           f"default: a {AUTO_GRID}-cut quantile grid above {AUTO_ABOVE:,d} distinct values) or "
                           f"None (every gap between distinct values); got grid={grid!r}.")
    _check_min_bin(min_bin)


def _check_min_bin(min_bin) -> None:
    if isinstance(min_bin, bool) or not isinstance(min_bin, numbers.Real) or not 0 <= min_bin < 0.5:  # type: ignore[operator]  # typeshed: numbers.Real has no __gt__/__ge__
        raise FormulaError(f"threshold(..., min_bin=) must be a share of the rows in [0, 0.5), e.g. 0.05; "
                           f"got min_bin={min_bin!r}.")


@stateful_transform
def threshold(x, k=None, grid=DEFAULT_GRID, min_bin=DEFAULT_MIN_BIN, missing=None, _state=None, _context=None,
              **unknown):
    """Let the model choose cuts of ``x``: each chosen cut is one item of the card
    (``x ≤ c`` or ``x > c`` with its points), at most ``k`` of them (None: as many as the model
    size allows, a step function).

    Use in a formula: ``y ~ threshold(age) + threshold(bmi, k=1) + threshold(income, grid=100)``.
    The candidate cuts are the gaps between distinct training values, each written as the
    roundest number that splits the rows the same way; ``min_bin`` keeps only cuts with at least
    that share of the rows on each side (5 % by default; 0 keeps every gap), and ``grid`` at most
    about that many, at quantiles (the certificate is optimal relative to the candidates); by
    default a variable with more than 1,000 distinct values gets a 100-cut quantile grid.
    ``missing`` says how missing values of ``x`` enter the score (``"item"``, ``"as 1.0"``,
    ``"drop"``, ``"raise"``; see :mod:`riskformula.design.missing`): build_design reads it from
    the formula; missing values fall below no cut.

    Parameters
    ----------
    x : array-like
        The numeric variable (a column of the data, as the formula names it).
    k : int, optional
        The most cuts of ``x`` the card may use, at least 1 (None: as many as the model size
        allows).
    grid : int or str or None, default "auto"
        Keep at most about this many candidate cuts, at quantiles; ``"auto"`` (the default):
        every gap up to 1,000 distinct training values, a 100-cut quantile grid above (the card's
        notes say so); None: every gap between distinct training values, whatever their number
        (at most 2,000 candidate cuts per term).
    min_bin : float, default 0.05
        Keep only cuts with at least this share of the rows on each side, in [0, 0.5) (0: every
        gap between distinct training values).
    missing : str, optional
        How missing values of ``x`` enter the score: ``"raise"``, ``"drop"``, ``"item"`` or
        ``"as <value>"`` (None: as the fit's ``missing=`` says).
    **unknown : dict
        None: any other argument is a :class:`~riskformula.FormulaError` naming the nearest one
        (``threshold(x, grids=3)``: did you mean ``grid``?).

    Returns
    -------
    dict
        The term's design columns: the 0/1 indicator ``x ≤ c`` of each candidate cut ``c``, as
        numpy arrays by column key (the formula's transform, which the design reads).

    Examples
    --------
    >>> import pandas as pd, riskformula as rf
    >>> df = pd.DataFrame({"age": [30, 40, 50, 60], "y": [0, 0, 1, 1]})
    >>> m = rf.risk_score("y ~ threshold(age, k=1)", df, time_limit=5)
    >>> m.score_card()["term"].tolist()
    ['age > 40']
    """
    if "cuts" not in _state:
        if unknown:
            from ..errors import did_you_mean
            name = next(iter(unknown))
            raise FormulaError(f"threshold() has no argument `{name}`; its arguments are x, "
                               f"{', '.join(ARGUMENTS)}.{did_you_mean(name, ARGUMENTS)}")
        _check_arguments(k, grid, min_bin)
        v = _values(x, "threshold")
        if _context is not None and PROBE in _context:
            # first pass (variables, missing values, outcome): a single dummy column and no stored state
            return {"probe": np.zeros(len(v))}
        depth = None if _context is None else _context.get(CUT_DEPTH)
        if k is not None:
            depth = k if depth is None else min(depth, k)
        cuts, on_grid = candidate_cuts(v, grid, _outcome_for(x, _context), min_bin=float(min_bin), depth=depth)
        _state.update(threshold_state(cuts, on_grid, k, grid, n_distinct=len(np.unique(v[np.isfinite(v)])),
                                      min_bin=float(min_bin)))
    return _indicators(x, _state)


def threshold_state(cuts, on_grid: bool, k, grid, n_distinct: int, min_bin: float = 0.0) -> dict:
    """The state a ``threshold()`` term stores, from its candidate cuts (checked here); ``k`` None
    (no limit on the cuts) is stored as the number of candidates.  ``min_bin``: the share of the rows
    each side of a cut had to keep (for the message when none did)."""
    if len(cuts) == 0 and n_distinct >= 2:
        raise FormulaError(f"threshold(...) found no candidate cut: the variable has {n_distinct:,d} distinct values, "
                           "but every cut between them that could be optimal leaves fewer than "
                           f"min_bin={min_bin:g} of the rows on one side (with few events, as in a fold of a rare "
                           "outcome, the cuts that could separate them lie near an end of the values). Lower "
                           "`min_bin`, e.g. threshold(x, min_bin=0.01) or threshold(x, min_bin=0).")
    if len(cuts) == 0:
        raise FormulaError("threshold(...) needs a variable with at least two distinct values; "
                           "this one is constant in the training rows.")
    if len(cuts) > MAX_CUTS:
        raise FormulaError(f"threshold(...) has {len(cuts):,d} candidate cuts (gaps between distinct values "
                           "that can hold an optimal cut), more than "
                           f"{MAX_CUTS:,d}; limit them with a quantile grid, e.g. threshold(x, grid=100).")
    k = len(cuts) if k is None else int(min(k, len(cuts)))
    grid = resolve_grid(grid, n_distinct)
    return {"kind": "threshold", "cuts": [float(c) for c in cuts], "keys": _keys(cuts),
            "k": k, "grid": grid, "on_grid": bool(on_grid), "n_distinct": int(n_distinct)}


@stateful_transform
def cut(x, points, missing=None, _state=None):
    """Fixed cut points chosen by the user: ``cut(age, [40, 60])`` lets the model score each of
    them (``age ≤ 40`` or ``age > 40``, ``age ≤ 60`` or ``age > 60``); each cut with points is one
    item of the card.  ``missing``: as for :func:`threshold`.

    Parameters
    ----------
    x : array-like
        The numeric variable (a column of the data, as the formula names it).
    points : float or list of float
        The cut points: at least one, all finite (sorted, duplicates dropped).
    missing : str, optional
        How missing values of ``x`` enter the score: ``"raise"``, ``"drop"``, ``"item"`` or
        ``"as <value>"`` (None: as the fit's ``missing=`` says).

    Returns
    -------
    dict
        The term's design columns: the 0/1 indicator ``x ≤ c`` of each cut point ``c``, as numpy
        arrays by column key (the formula's transform, which the design reads).

    Examples
    --------
    >>> import pandas as pd, riskformula as rf
    >>> df = pd.DataFrame({"age": [30, 45, 50, 70], "y": [0, 0, 1, 1]})
    >>> m = rf.risk_score("y ~ cut(age, [40, 60])", df, time_limit=5)
    >>> m.size
    2
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
