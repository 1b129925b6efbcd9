"""Data sets shipped with riskformula (sources and licences in ``data/README.md``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

_HERE = Path(__file__).resolve().parent
_AVAILABLE = {"wdbc": "wdbc.csv"}


def load_dataset(name: str = "wdbc") -> pd.DataFrame:
    """Load a bundled data set as a new DataFrame.

    ``"wdbc"``: Breast Cancer Wisconsin (Diagnostic), 569 rows; outcome ``diagnosis``
    (``"M"`` malignant / ``"B"`` benign) and 30 continuous nuclear features.

    Examples
    --------
    >>> df = load_dataset("wdbc")
    >>> df.shape
    (569, 31)
    """
    if name not in _AVAILABLE:
        raise ValueError(f"unknown data set {name!r}; available: {sorted(_AVAILABLE)}.")
    return pd.read_csv(_HERE / _AVAILABLE[name])
