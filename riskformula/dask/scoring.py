"""Scoring and evaluating dask DataFrames: lazy dask Series out, reports from reductions.

``m.predict(ddf)``, ``m.score(ddf)`` and ``m.observed(ddf)`` return dask Series built with
``map_partitions`` (nothing is computed until you ask).  ``m.evaluate(ddf)`` (and
:func:`riskformula.evaluate`) reduce every partition to the number of rows per distinct
(outcome, risk, score[, by]) and compute the report from those counts, so the report is that of
the pandas rows without gathering them: integer scores leave a few dozen distinct rows.

Missing values are scored as pandas scores them: a variable fitted with ``missing="item"`` (or
``"as <value>"``) is scored where it is missing; any other missing value is the pandas error, with
the counts of every partition.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pandas as pd

from ..design.missing import refused, scorable
from ..errors import DataError, SettingsError
from .design import ENCODING_LOCK, plain_strings, tree_reduce
from ..reports.evaluation import _collect, evaluate_arrays

__all__ = ["map_rows", "evaluate_dask"]

_NAMES = {"score": "score", "predict": "risk", "observed": "event"}


def _needed(model) -> list:
    """The columns scoring reads: the variables of the card's items."""
    return model.design.required_variables(columns=model.scorecard.read_columns)


def _check_columns(model, ddf, outcome: bool = False) -> None:
    """The checks that need no data: the model can encode data, and the columns exist."""
    design = model.design
    missing = [v for v in _needed(model) if v not in ddf.columns]
    if missing:
        raise DataError(f"`newdata` lacks the column(s) {missing} that the score's points are on; "
                        f"it has {list(ddf.columns)[:20]}.")
    absent = [v for v in design.lhs_variables() if v not in ddf.columns] if outcome else []
    if absent:
        raise DataError(f"the data lack the outcome column(s) {absent} that the outcome `{design.outcome}` reads.")


def _apply(part: pd.DataFrame, model, method: str) -> pd.Series:
    if len(part) == 0:
        return pd.Series(np.zeros(0, dtype=float if method != "observed" else int), index=part.index,
                         name=_NAMES[method])
    with ENCODING_LOCK:
        return getattr(model, method)(plain_strings(part))


def map_rows(model, method: str, ddf):
    """``model.<method>(partition)`` of every partition as a lazy dask Series indexed like ``ddf``.

    Errors in the data (missing values, categories never seen in training) are raised when the
    Series is computed, naming the counts of the partition where they were found.
    """
    _check_columns(model, ddf, outcome=method == "observed")
    dtype = int if method == "observed" else float
    meta = pd.Series(np.zeros(0, dtype=dtype), name=_NAMES[method])
    return ddf.map_partitions(_apply, model, method, meta=meta)


# --------------------------------------------------------------------------------------
# evaluate: counts per distinct (outcome, risk, score, by)
# --------------------------------------------------------------------------------------


def _eval_counts(part: pd.DataFrame, model, by) -> dict:

    part = plain_strings(part)
    design = model.design
    needed = _needed(model)
    # missing values the score cannot score (a variable fitted with missing="item" or "as" is scored)
    na = {v: int(part[v].isna().sum()) for v in needed
          if not scorable(design.missing.get(v)) and part[v].isna().any()}
    outcome_na = int(part[design.lhs_variables()].isna().any(axis=1).sum())
    if na or outcome_na or len(part) == 0:
        return {"table": None, "dropped": 0, "na": na, "outcome_na": outcome_na}
    with ENCODING_LOCK:
        frame, dropped = _collect(model, part, by)
    keys = ["y", "risk", "score"] + (["by"] if by is not None else [])
    table = frame.groupby(keys, dropna=False, sort=False, observed=True).size().rename("n").reset_index()
    return {"table": table, "dropped": dropped, "na": {}, "outcome_na": 0}


def _combine_counts(parts: list) -> dict:
    na: dict = {}
    for p in parts:
        for c, v in p["na"].items():
            na[c] = na.get(c, 0) + v
    tables = [p["table"] for p in parts if p["table"] is not None and len(p["table"])]
    if tables:
        t = pd.concat(tables, ignore_index=True)
        keys = [c for c in t.columns if c != "n"]
        table = t.groupby(keys, dropna=False, sort=False, observed=True)["n"].sum().reset_index()
    else:
        table = None
    return {"table": table, "dropped": sum(p["dropped"] for p in parts), "na": na,
            "outcome_na": sum(p["outcome_na"] for p in parts)}


def evaluate_dask(model, ddf, by: str | None = None, thresholds=None):
    """:func:`riskformula.evaluate` of a dask DataFrame, from per-partition counts."""


    if by is not None and (not isinstance(by, Hashable) or by not in ddf.columns):
        cols = ", ".join(map(str, list(ddf.columns)[:10]))
        more = ", ..." if len(ddf.columns) > 10 else ""
        raise SettingsError(f"`by` = {by!r} is not a column of `data`. Columns: {cols}{more}.")
    if not all(callable(getattr(model, f, None)) for f in ("predict", "score", "observed")) \
            or not hasattr(model, "design"):
        raise SettingsError(f"evaluating a dask DataFrame needs a fitted RiskScore; got {type(model).__name__}.")
    _check_columns(model, ddf, outcome=True)
    out = tree_reduce(ddf, _eval_counts, _combine_counts, model, by)
    if out["na"]:  # the pandas message, with the counts totalled over the partitions
        na = {v: out["na"][v] for v in _needed(model) if v in out["na"]}  # in the order pandas names them
        raise refused("newdata", na, model.design.missing)
    if out["outcome_na"]:
        raise DataError(f"the outcome `{model.design.outcome}` has {out['outcome_na']} missing value(s) in these data.")
    t = out["table"]
    if t is None or t.empty:
        raise DataError("No rows left to evaluate: the model returned no complete "
                        "(outcome, risk, score) triple for any row of `data`.")
    return evaluate_arrays(model, t["y"].to_numpy(), t["risk"].to_numpy(), t["score"].to_numpy(),
                           weights=t["n"].to_numpy(dtype=float), by=by,
                           by_values=t["by"].to_numpy() if by is not None else None,
                           dropped=out["dropped"], thresholds=thresholds)
