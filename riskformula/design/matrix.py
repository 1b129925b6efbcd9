"""The training design matrix: a :class:`DesignSpec` applied to the training rows (fitting only)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .spec import DesignSpec


@dataclass(frozen=True)
class DesignMatrix:
    """The numeric problem a formula and a data frame define; exists only while fitting.

    Attributes
    ----------
    spec : the :class:`DesignSpec` that encoded these rows (and encodes new data).
    X : (n, d) design matrix, one column per ``spec.columns``.
    y : (n,) 0/1 events.
    index : the data frame's index of the rows used.
    weights : (n,) sample weights, or None.
    dropped_index : index labels of rows dropped for missing values.
    time : (n,) follow-up times of a ``Surv(time, event)`` outcome (``y`` its 0/1 events), else None.
    """

    spec: DesignSpec
    X: np.ndarray
    y: np.ndarray
    index: pd.Index
    weights: np.ndarray | None = None
    dropped_index: tuple = ()
    time: np.ndarray | None = None

    @property
    def nobs(self) -> int:
        return len(self.y)

    @property
    def dropped(self) -> int:
        """Number of rows dropped for missing values."""
        return len(self.dropped_index)

    # shortcuts to the spec, for code that holds a training design
    @property
    def columns(self) -> tuple:
        return self.spec.columns

    def transform(self, data: pd.DataFrame, what: str = "predict") -> np.ndarray:
        """Design matrix of new data (see :meth:`DesignSpec.transform`)."""
        return self.spec.transform(data, what)

    def outcome_of(self, data: pd.DataFrame) -> np.ndarray:
        """0/1 events of new data (see :meth:`DesignSpec.outcome_of`)."""
        return self.spec.outcome_of(data)
