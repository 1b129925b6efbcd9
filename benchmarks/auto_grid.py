"""How many quantile cuts ``threshold(x)`` needs on a variable with many distinct values.

For each data set, ``y ~ threshold(a) + threshold(b) + ...`` is fitted on a random 70 % of the
rows with every gap between distinct values as a candidate (``grid=None``; refused above the
2,000-cut limit of a term) and with quantile grids of 25, 50, 100, 200 and 400 cuts; the table
gives the training objective, the log loss and AUC on the held-out 30 %, the candidate cuts and
the seconds.  The data:

* ``spambase`` (bundled; 4,601 rows): the three capital-run-length and the "!" frequency
  variables (919 to 2,161 distinct values);
* ``income`` (simulated, 10,000 rows, seed 0): a log-normal income and an exponential distance in
  metres, almost every value distinct, with a logistic outcome that steps at one income and rises
  smoothly with the distance.

Run:  python benchmarks/auto_grid.py [--time-limit 60] [--max-size 4] [--grids none,25,50,100,200,400]
(results: benchmarks/auto_grid_results.txt)
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import riskformula as rf
from riskformula.errors import FormulaError
from riskformula.reports import metrics


def _income(n: int = 10_000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    income = np.round(rng.lognormal(10.5, 0.6, n), 2)
    distance = np.round(rng.exponential(2500.0, n), 1)
    z = -1.0 + 1.2 * (income < 30_000) + 0.8 * np.tanh((distance - 3000) / 1500)
    y = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    return pd.DataFrame({"y": y, "income": income, "distance": distance})


SETS = {
    "spambase": (lambda: rf.load_dataset("spambase"),
                 "Spam ~ threshold(CapitalRunLengthAverage{g}) + threshold(CapitalRunLengthTotal{g}) + "
                 "threshold(CapitalRunLengthLongest{g}) + threshold(CharFreqExcalamationMark{g})"),
    "income": (_income, "y ~ threshold(income{g}) + threshold(distance{g})"),
}


#: ``--one-variable``: one term with one cut, small enough for every search to finish (time to optimal)
ONE = {
    "spambase": (lambda: rf.load_dataset("spambase"), "Spam ~ threshold(CapitalRunLengthAverage, k=1{g})"),
    "income": (_income, "y ~ threshold(income, k=1{g})"),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--time-limit", type=float, default=60)
    ap.add_argument("--max-size", type=int, default=4)
    ap.add_argument("--grids", default="none,25,50,100,200,400", help="comma-separated; none = every gap")
    ap.add_argument("--one-variable", action="store_true", help="one threshold term with one cut (ONE)")
    args = ap.parse_args()
    sets = ONE if args.one_variable else SETS
    grids = [None if g == "none" else int(g) for g in args.grids.split(",")]
    print(f"{'data':9s} {'grid':>5s} {'cands':>6s} {'objective':>10s} {'test loss':>10s} {'test AUC':>9s} "
          f"{'time s':>7s} status")
    for name, (load, formula) in sets.items():
        df = load()
        rng = np.random.default_rng(1)
        train = rng.random(len(df)) < 0.7
        tr, te = df[train], df[~train]
        for grid in grids:
            g = ", grid=None" if grid is None else f", grid={grid}"
            t0 = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m = rf.risk_score(formula.format(g=g), tr, max_size=args.max_size, time_limit=args.time_limit)
            except FormulaError as e:
                print(f"{name:9s} {str(grid):>5s} refused: {str(e)[:70]}")
                continue
            secs = time.perf_counter() - t0
            cands = sum(len(t.cuts) for t in m.design.thresholds)
            risk, y = m.predict(te).to_numpy(), m.observed(te).to_numpy()
            print(f"{name:9s} {str(grid):>5s} {cands:6d} {m.objective:10.5f} {metrics.log_loss(y, risk):10.5f} "
                  f"{metrics.auc(y, risk):9.4f} {secs:7.1f} {m.status}", flush=True)


if __name__ == "__main__":
    main()
