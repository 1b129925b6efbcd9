"""The registry of data frames besides pandas (dask DataFrames in, the same certified model out).

A backend is registered here by name (:func:`register_backend`): how to recognise its frames
without importing its library, and the module of its adapter, which the fit, the model and the
reports load when such a frame arrives (:func:`backend_for`), so that none of them imports it.
An adapter module has ``training_patterns(formula, frame, ...)`` (the training design as weighted
distinct patterns, :mod:`riskformula.dask.design`), ``map_rows(model, what, frame)``
(lazy score, predict or observed) and ``evaluate(model, frame, by, thresholds)``
(:mod:`riskformula.dask.scoring`; the adapters stand above the fitted model, this registry below
it).  :mod:`riskformula.backends.counts` holds the pure-numpy
reductions (weighted distinct patterns and threshold candidates from value counts).

The dask detection never imports dask: a frame can only be a dask collection if dask is already
imported (whoever made the frame imported it), so :func:`is_dask_frame` looks in ``sys.modules``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

__all__ = ["Backend", "register_backend", "backend_for", "is_dask_frame", "is_dask_series"]


@dataclass(frozen=True)
class Backend:
    """A kind of data frame besides pandas: ``recognises(frame)`` (without importing its
    library) and ``adapter``, the module of its adapter functions."""

    name: str
    recognises: Callable[[object], bool]
    adapter: str


_BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> None:
    """Fit, score and evaluate frames that ``backend`` recognises through its adapter."""
    _BACKENDS[backend.name] = backend


def backend_for(data) -> ModuleType | None:
    """The adapter module of the registered backend that recognises ``data`` (None: pandas)."""
    for b in _BACKENDS.values():
        if b.recognises(data):
            return importlib.import_module(b.adapter)
    return None


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


register_backend(Backend("dask", is_dask_frame, "riskformula.dask.adapter"))
