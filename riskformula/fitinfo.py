"""What a fitted model records of its fit: the settings it was fitted with and a summary of its
training rows (no data). Below the fitted model, so that saving, loading and the backends read
and write them without the model's class."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import hashlib

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from .counterfactuals.profile import DataFacts
    from .design import DesignMatrix


@dataclass(frozen=True)
class FitSettings:
    """The arguments a model was fitted with (kept for reports and refits)."""

    max_size: int
    min_size: int
    coef_lower: tuple
    coef_upper: tuple
    intercept_range: tuple
    c0: float
    positive_weight: float
    weighted: bool
    time_limit: float
    gap_tolerance: float
    #: the ``missing=`` argument as given: one choice, or a dict of them by variable
    missing: str | dict
    constraints: tuple = ()
    factors_as_one: bool = False
    size_groups: tuple = ()
    threshold_candidates: dict = field(default_factory=dict)
    absolute_gap_tolerance: float = 1e-8
    #: the score scales searched (one: a fixed scale)
    scales: tuple = (1.0,)
    #: the intercept is a real number (chosen with a fitted score scale) rather than an integer
    real_intercept: bool = False


@dataclass(frozen=True)
class TrainingSummary:
    """What a fitted model remembers of its training rows (no data): their number, events,
    rows dropped for missing values, a fingerprint of their index, and headline metrics when
    they are not recomputed from a training evaluation (a loaded model)."""

    nobs: int
    events: int
    rows_dropped: int
    rows_digest: str
    metrics: dict | None = None
    #: the fairness constraints' values on the training rows: dicts with ``constraint``,
    #: ``quantity``, ``value``, ``bound`` and ``slack``
    constraint_values: tuple = ()
    #: the total sample weight of the training rows and of their events (None: unknown, as for
    #: a loaded model of a weighted fit saved without them); the weighted log-likelihood needs them
    weight_total: float | None = None
    weight_events: float | None = None


def index_digest(index) -> str:
    """SHA-256 of index labels (type and order included), short enough to print and store."""
    h = hashlib.sha256(str(len(index)).encode())
    h.update(pd.util.hash_pandas_object(pd.Index(index), index=False).to_numpy().tobytes())
    return h.hexdigest()[:32]


@dataclass(frozen=True)
class DistinctRows:
    """The distinct rows of a training design (``X``), with the number of training rows
    (``counts``) and of events among them (``events``) behind each: what the loss collapsed the
    rows to, from which the model's report on its training rows is computed in time that grows
    with the distinct rows."""

    X: np.ndarray
    counts: np.ndarray
    events: np.ndarray

    @classmethod
    def of_loss(cls, loss) -> "DistinctRows":
        """The distinct rows a :class:`~riskformula.problem.loss.LogisticLoss` collapsed its rows to."""
        return cls(loss.Z[:, 1:], loss.row_counts, loss.row_events)


@dataclass(frozen=True)
class FitRows:
    """The training rows a model is evaluated on as it is built (see :class:`~riskformula.RiskScore`).

    ``design``: the training :class:`~riskformula.design.DesignMatrix` (its rows, or the distinct
    patterns of a dask frame's rows); ``counts``: the rows behind each design row (None: one);
    ``data``: the caller's training frame and ``facts``: the counterfactual profile's data part
    (:func:`riskformula.model.training_facts`; None: taken from ``data``; False: the rows cannot be
    profiled), neither given: no profile; ``fairness``: the fairness constraints whose values are
    measured on ``frame`` (the training rows with the caller's columns) with ``weights``;
    ``distinct``: the design's distinct rows with their counts (None: read from ``design``), from
    which the evaluation, the items' supports and the points' moments are computed.
    """

    design: DesignMatrix
    counts: np.ndarray | None = None
    data: pd.DataFrame | None = None
    facts: DataFacts | Literal[False] | None = None
    fairness: tuple = ()
    frame: pd.DataFrame | None = None
    weights: np.ndarray | None = None
    distinct: DistinctRows | None = None

    @property
    def X(self) -> np.ndarray:
        """The design rows the report reads: the distinct rows if given, else the design's."""
        return self.design.X if self.distinct is None else self.distinct.X
