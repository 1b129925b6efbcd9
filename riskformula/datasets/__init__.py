"""Data sets: the ones shipped with riskformula and synthetic ones with a known generating model."""

from .bundled import _AVAILABLE as _AVAILABLE, list_datasets, load_dataset
from .synthetic import synthetic_thresholds

__all__ = ["load_dataset", "list_datasets", "synthetic_thresholds"]
