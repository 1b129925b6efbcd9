"""The dask backend's adapter (registered in :mod:`riskformula.backends`): fitting from a dask
DataFrame's weighted distinct patterns, and lazy scoring and evaluation partition by partition."""

from .design import training_patterns
from .scoring import evaluate_dask as evaluate, map_rows

__all__ = ["training_patterns", "map_rows", "evaluate"]
