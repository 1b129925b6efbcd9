"""What a fitted model records of its fit: the settings it was fitted with, a summary of its
training rows (no data), and the training rows' scores a model fitted in this session keeps.  On
the card floor, beside :mod:`riskformula.card`, so that the record, saving, loading and the
backends read and write them without the model's class."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd


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
class FittedRows:
    """The training rows as the fit saw them, for ``fittedvalues`` and the residuals: their
    index, total score and 0/1 outcome (kept by a model fitted in this session; not saved)."""

    index: pd.Index
    score: np.ndarray
    y: np.ndarray
