"""The training rows a problem is built on, for constraints that are statements about data.

Most constraints speak about points only (signs, counts, side information).  Some speak about
what the score does on the training rows — a fairness constraint bounds group rates of
"predicted positive".  :class:`TrainingRows` gives them the design rows, outcomes, weights and the
caller's data on the same rows (so a column outside the formula, such as a protected attribute,
is aligned with the rows the design kept, including after ``missing="drop"``).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._checks import group_column
from ..errors import SettingsError


@dataclass(frozen=True, eq=False)
class TrainingRows:
    """Design rows ``X`` (n, d), 0/1 outcomes ``y``, sample ``weights`` (ones when none were given)
    and ``frame``, the caller's data on these rows in the same order (or None)."""

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    frame: pd.DataFrame | None = None

    @property
    def n(self) -> int:
        return len(self.y)

    def column(self, name, what: str) -> np.ndarray:
        """Values of the data column ``name`` on the training rows; ``what`` names the argument
        (e.g. "`statistical_parity(by=...)`") in error messages.  Missing values are an error:
        every row needs a value to be counted in a group."""
        if self.frame is None:
            raise SettingsError(f"{what} needs the training data frame; fit with `risk_score(formula, data, ...)`.")
        if not isinstance(name, Hashable) or name not in self.frame.columns:
            cols = ", ".join(map(str, list(self.frame.columns)[:12]))
            raise SettingsError(f"{what}: {name!r} is not a column of `data`. Columns: {cols}"
                                f"{', ...' if self.frame.shape[1] > 12 else ''}.")
        return group_column(self.frame, name, what, rows="the training rows")

    @classmethod
    def of_design(cls, design, data: pd.DataFrame | None) -> "TrainingRows":
        """The rows of a training :class:`~riskformula.design.DesignMatrix` and the same rows of
        ``data`` (positional, so a duplicated index is no problem)."""
        frame = None
        if data is not None:
            frame = data
            if design.dropped:
                # the design dropped rows with a missing value in a variable the formula uses
                used = [v for v in design.spec.variables if v in data.columns]
                frame = data.loc[~data[used].isna().any(axis=1).to_numpy()]
        w = np.ones(design.nobs) if design.weights is None else np.asarray(design.weights, float)
        return cls(np.asarray(design.X, float), np.asarray(design.y).astype(int), w, frame)
