"""Post-hoc AUNBC improvement of any risk model (Chi & Birbil, 2026, Algorithm 1).

Group the predicted risks into the threshold bins ``[p_i, p_{i+1})``. A bin whose observed event
rate is below its lower edge (``O_i < p_i N_i``) is overestimated: moving its risks down to
``p_{i−1}`` stops acting on it at ``p_i`` and strictly raises the net benefit there. A bin whose
rate is above its upper edge (``O_i > p_{i+1} N_i``) is underestimated: moving it up to
``p_{i+1}`` acts on it at ``p_{i+1}`` and strictly raises the net benefit there (their
Theorem 2). The bins are visited in increasing order with the counts recomputed as the risks
change; we repeat the pass until no bin moves (the paper runs one pass; every move raises the
AUNBC, so further passes can only help). Optionally 1% of the original risk is added back so
that rows moved onto one value keep their order (their Remark 2).

The moves depend only on the original risk, so they form a map risk → improved risk that is
learnt on one data set and applied to another (:class:`AUNBCImproved`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import DataError, SettingsError
from ..reports.evaluation import evaluate
from ..reports.metrics._inputs import prepare
from ..reports.metrics.decision import check_thresholds
from .grid import PAPER_GRID


def _grid(thresholds) -> np.ndarray:
    t = np.asarray(PAPER_GRID) if thresholds is None else check_thresholds(thresholds, allow_zero=False)
    return np.concatenate([[0.0], t, [1.0]])


def _bin(c: np.ndarray, p: np.ndarray) -> np.ndarray:
    # bins [p_i, p_{i+1}) for i < M and [p_M, 1] for the last one
    return np.clip(np.searchsorted(p, c, side="right") - 1, 0, len(p) - 2)


def improvement_steps(y, risk, thresholds=None, weights=None) -> list[tuple[int, float]]:
    """The moves of Algorithm 1 on ``(y, risk)``: a list of ``(bin i, new risk)`` in order.

    Examples
    --------
    >>> # bin [0.1, 0.2) holds two rows, both events: underestimated, moved up to 0.2
    >>> improvement_steps([1, 1, 0], [0.15, 0.15, 0.05], thresholds=[0.1, 0.2])
    [(1, 0.2)]
    """
    a = prepare(y, risk, weights=weights)
    yv, c, w = a["y"], a["risk"].copy(), a["weights"]
    p = _grid(thresholds)
    M = len(p) - 2
    steps = []
    for _ in range(2 * (M + 1)):
        moved = False
        for i in range(M + 1):
            b = _bin(c, p)
            inside = b == i
            n = float(w[inside].sum())
            if n == 0:
                continue
            o = float((w * yv)[inside].sum())
            if i > 0 and o < p[i] * n:
                target = float(p[i - 1])
            elif i < M and o > p[i + 1] * n:
                target = float(p[i + 1])
            else:
                continue
            c[inside] = target
            steps.append((i, target))
            moved = True
        if not moved:
            break
    return steps


def apply_steps(risk, steps, thresholds=None, keep_order: bool = True) -> np.ndarray:
    """Apply the moves of :func:`improvement_steps` to risks (of the same or of new rows)."""
    p = _grid(thresholds)
    c0 = np.asarray(risk, dtype=float)
    c = c0.copy()
    for i, target in steps:
        c[_bin(c, p) == i] = target
    if keep_order:
        c = np.minimum(c + c0 / 100, 1.0)
    return c


class AUNBCImproved:
    """A risk model whose predictions went through Chi & Birbil's (2026) Algorithm 1.

    Built by :func:`improve_aunbc`; ``predict`` maps the model's risks with the moves learnt on
    the training data, ``score`` and ``observed`` are the model's, so it evaluates, compares and
    plots like any fitted score. ``steps`` lists the moves as a DataFrame.
    """

    def __init__(self, model, steps, thresholds, keep_order: bool):
        self.model = model
        self._steps = list(steps)
        self.thresholds = tuple(float(x) for x in _grid(thresholds)[1:-1])
        self.keep_order = keep_order
        self.formula = getattr(model, "formula", None)

    @property
    def base_model(self):
        """The model whose risks are mapped."""
        return self.model

    @property
    def kind_names(self) -> tuple:
        """What kind of model this is, for labels: the model's kinds, then ``"AUNBC improved"``."""
        return (*getattr(self.model, "kind_names", ()), "AUNBC improved")

    @property
    def steps(self) -> pd.DataFrame:
        p = np.concatenate([[0.0], self.thresholds, [1.0]])
        return pd.DataFrame({"bin_from": [p[i] for i, _ in self._steps], "bin_to": [p[i + 1] for i, _ in self._steps],
                             "moved_to": [t for _, t in self._steps]})

    def predict(self, newdata: pd.DataFrame) -> pd.Series:
        r = self.model.predict(newdata)
        return pd.Series(apply_steps(r.to_numpy(), self._steps, self.thresholds, self.keep_order), index=r.index,
                         name="risk")

    def score(self, newdata: pd.DataFrame) -> pd.Series:
        return self.model.score(newdata)

    def observed(self, newdata: pd.DataFrame) -> pd.Series:
        return self.model.observed(newdata)

    def evaluate(self, data: pd.DataFrame, by: str | None = None, thresholds=None):
        return evaluate(self, data, by=by, thresholds=thresholds)

    def __repr__(self) -> str:
        return f"<AUNBCImproved: {self.model!r}; {len(self._steps)} bin move(s)>"


def improve_aunbc(model, data: pd.DataFrame, thresholds=None, keep_order: bool = True) -> AUNBCImproved:
    """Raise a fitted model's AUNBC on ``data`` by moving miscalibrated risk bins (Algorithm 1 of
    Chi & Birbil, 2026); the result predicts new data with the same moves.

    Parameters
    ----------
    model : RiskScore
        Any fitted score with ``predict(data)`` and ``observed(data)`` (a RiskScore, a
        NetBenefitScore, ...).
    data : pandas.DataFrame
        The rows the moves are learnt on (usually the training data).
    thresholds : list of float, optional
        The AUNBC thresholds ``p_1..p_M``; None: 0.1, ..., 0.9.
    keep_order : bool, default True
        Add 1% of the original risk back so that rows keep their order (Remark 2).

    Returns
    -------
    AUNBCImproved
        The model with the moves: ``predict`` maps its risks with them, ``score`` and ``observed``
        are the model's; ``steps`` lists the moves.

    Examples
    --------
    >>> better = rf.improve_aunbc(m, train)               # doctest: +SKIP
    >>> rf.decision_curve(m, better, data=test)           # doctest: +SKIP
    """
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    if not (callable(getattr(model, "predict", None)) and callable(getattr(model, "observed", None))):
        raise SettingsError(f"`model` must be a fitted score with predict(data) and observed(data); got "
                            f"{type(model).__name__}.")
    y = model.observed(data)
    r = model.predict(data)
    keep = y.notna() & r.notna()
    steps = improvement_steps(y[keep].to_numpy(), r[keep].to_numpy(), thresholds)
    return AUNBCImproved(model, steps, thresholds, bool(keep_order))
