"""Data that does not fit in one pandas frame: dask DataFrames in, the same certified model out.

Only the detection helpers live here, and they never import dask: a frame can only be a dask
collection if dask is already imported (whoever made the frame imported it), so
:func:`is_dask_frame` looks in ``sys.modules`` instead of importing anything.  The reductions
are in :mod:`riskformula.backends.dask_design` (fitting), :mod:`riskformula.backends.dask_scoring`
(predict, score, evaluate) and :mod:`riskformula.backends.counts` (pure numpy: weighted
distinct patterns and threshold candidates from value counts).
"""

from __future__ import annotations

import sys

__all__ = ["is_dask_frame", "is_dask_series"]


def _dask_dataframe_module():
    return sys.modules.get("dask.dataframe")


def is_dask_frame(obj) -> bool:
    """Whether ``obj`` is a dask DataFrame (False, without importing dask, when dask is not loaded)."""
    dd = _dask_dataframe_module()
    return dd is not None and isinstance(obj, dd.DataFrame)


def is_dask_series(obj) -> bool:
    """Whether ``obj`` is a dask Series (False, without importing dask, when dask is not loaded)."""
    dd = _dask_dataframe_module()
    return dd is not None and isinstance(obj, dd.Series)

