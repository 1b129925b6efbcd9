"""Synthetic data with known generating models, for checking what the solver recovers."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from .._checks import check_int
from ..errors import SettingsError

#: generating models drawn before giving up on ``min_class_share``
MAX_DRAWS = 1000


def synthetic_thresholds(n: int = 200, p: int = 1, seed: int | None = 0, return_truth: bool = False,
                         min_class_share: float = 0.0):
    """Synthetic data of Molero-Río & D'Ambrosio: continuous predictors whose effect is a single threshold.

    ``x1..xp ~ U[0, 1]``; integer points ``w0``, ``w_le_j``, ``w_ge_j`` uniform on −5..5 and thresholds
    ``t_j ~ U[0, 1]``; score = w0 + Σ_j (w_le_j·1[x_j ≤ t_j] + w_ge_j·1[x_j > t_j]); the label is
    deterministic: ``y = 1`` iff P(y = 1 | x) = σ(score) ≥ 0.5 (the paper's rule, so the generating
    model separates the classes).  A draw that labels every row alike (or, with
    ``min_class_share``, leaves the smaller class below that share of rows) is redrawn.

    Parameters
    ----------
    n : int, default 200
        Number of rows (at least 2, one per class).
    p : int, default 1
        Number of predictors (at least 1).
    seed : int or None, default 0
        Seed of ``numpy.random.default_rng``.
    return_truth : bool, default False
        Also return the generating points and thresholds as a dict.
    min_class_share : float, default 0.0
        Redraw the generating model until each class has at least this share of rows
        (in [0, 0.5]); a :class:`~riskformula.SettingsError` if none of 1 000 draws does.

    Returns
    -------
    pandas.DataFrame or tuple
        The data, with columns ``x1..xp`` and ``y`` (0/1); with ``return_truth``, ``(data, truth)``,
        where ``truth`` holds ``w0``, ``w_le``, ``w_ge``, ``t`` (the generating points and
        thresholds) and ``score`` (each row's generating score).

    Examples
    --------
    >>> df = synthetic_thresholds(200, 2, seed=1)
    >>> df.shape
    (200, 3)
    """
    n = check_int("n", n, minimum=2)
    p = check_int("p", p, minimum=1)
    if isinstance(min_class_share, bool) or not isinstance(min_class_share, numbers.Real) \
            or not 0 <= min_class_share <= 0.5:
        raise SettingsError(f"`min_class_share` must be a share of rows in [0, 0.5] (the smaller class holds at "
                            f"most half of them); got {min_class_share!r}.")
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, p))
    # the paper does not say what it did when a draw gives one class only; we redraw the
    # generating model (not X) until both labels occur
    for _ in range(MAX_DRAWS):
        w0 = int(rng.integers(-5, 6))
        w_le = rng.integers(-5, 6, size=p)
        w_ge = rng.integers(-5, 6, size=p)
        t = rng.uniform(0.0, 1.0, size=p)
        score = w0 + np.where(X <= t, w_le, w_ge).sum(axis=1)
        y = (score >= 0).astype(int)  # σ(score) ≥ 0.5 exactly when score ≥ 0
        if 0 < y.sum() < n and min(y.mean(), 1 - y.mean()) >= min_class_share:
            break
    else:
        raise SettingsError(f"none of {MAX_DRAWS:,d} generating models gave each class at least "
                            f"{min_class_share:g} of the {n} rows (seed {seed!r}); lower `min_class_share`, "
                            "add rows or try another seed.")
    data = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)])
    data["y"] = y
    if not return_truth:
        return data
    return data, {"w0": w0, "w_le": w_le.tolist(), "w_ge": w_ge.tolist(), "t": t.tolist(), "score": score}
