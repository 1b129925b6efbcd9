"""Runs FasterRisk (Liu et al., 2022) for benchmarks/peers.py inside FasterRisk's own environment.

FasterRisk pins numpy < 2, pandas 1.5.2 and scikit-learn 1.2.0, so it cannot share a process with
riskformula: peers.py writes the data to an .npz file, runs this script with the interpreter of
``benchmarks/.venv-fasterrisk`` and reads back a JSON file.  Nothing of riskformula is imported.

    python _fasterrisk_worker.py IN.npz OUT.json

IN.npz holds ``X`` (rows x predictors), ``y`` (0/1), ``fold`` (fold number per row, 0..K-1),
``names`` (predictor names), ``binarize`` (1: threshold every predictor with FasterRisk's own
``BinBinarizer``, fitted on the training rows of each fit), ``k``, ``lb``, ``ub``.  For the
full data and for every fold's training rows it fits ``RiskScoreOptimizer`` with default settings
and keeps the pool's first model (the lowest logistic loss); OUT.json holds, per fit, the
multiplier, intercept, points, the seconds taken and the scores (sum of points, intercept not
included) of the training rows and (for folds) the held-out rows.

Two optional keys narrow the work (benchmarks/heldout.py fits one fold per call): ``full`` (0: no
full-data fit, OUT.json's ``"full"`` is null; default 1) and ``only`` (the fold numbers to fit, in
that order, OUT.json's ``"folds"`` following it; default every fold 0..K-1).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time

import numpy as np
import pandas as pd


def fit(X_train: pd.DataFrame, y_train, X_tests, binarize: bool, k: int, lb: int, ub: int) -> dict:
    from fasterrisk.fasterrisk import RiskScoreOptimizer
    from fasterrisk.binarization_util import BinBinarizer

    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # FasterRisk prints progress
        if binarize:
            binarizer = BinBinarizer()
            binarizer.fit(X_train)
            Xb = binarizer.transform(X_train)[0]  # (indicators, group index)
            X_tests = [binarizer.transform(X)[0] for X in X_tests]
        else:
            Xb = X_train
        opt = RiskScoreOptimizer(X=Xb.to_numpy(float), y=np.where(np.asarray(y_train) == 1, 1, -1), k=k, lb=lb, ub=ub)
        opt.optimize()
        multiplier, intercept, coefficients = opt.get_models(model_index=0)
    seconds = time.perf_counter() - t0
    coefficients = np.asarray(coefficients, float)
    return {"multiplier": float(multiplier), "intercept": float(intercept),
            "points": {c: float(p) for c, p in zip(Xb.columns, coefficients) if p != 0},
            "seconds": seconds,
            "train_score": (Xb.to_numpy(float) @ coefficients).tolist(),
            "test_scores": [(X.to_numpy(float) @ coefficients).tolist() for X in X_tests]}


def main(path_in: str, path_out: str) -> None:
    d = np.load(path_in, allow_pickle=False)
    X = pd.DataFrame(d["X"], columns=[str(c) for c in d["names"]])
    y, fold = d["y"].astype(int), d["fold"].astype(int)
    binarize, k, lb, ub = bool(d["binarize"]), int(d["k"]), int(d["lb"]), int(d["ub"])
    full = bool(d["full"]) if "full" in d.files else True
    only = [int(f) for f in d["only"]] if "only" in d.files else range(int(fold.max()) + 1)
    out = {"full": fit(X, y, [], binarize, k, lb, ub) if full else None, "folds": []}
    for f in only:
        train, test = fold != f, fold == f
        out["folds"].append(fit(X[train].reset_index(drop=True), y[train], [X[test].reset_index(drop=True)],
                                binarize, k, lb, ub))
    with open(path_out, "w") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
