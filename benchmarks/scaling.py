"""Scaling in the number of rows: synthetic data, n = 10^4 .. 10^6, d binary predictors.

Rows are collapsed to weighted unique rows before solving, so with binary predictors the solver's
work depends on the number of distinct patterns, not on n (Ustun & Rudin 2019: linear in n at fixed d).

    python benchmarks/scaling.py                  # n = 1e4, 1e5, 1e6 with d = 20
    python benchmarks/scaling.py --d 30 --time-limit 60
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from tabulate import tabulate

import riskformula as rf


def synthetic(n: int, d: int, seed: int = 0) -> pd.DataFrame:
    """Correlated binary predictors and a logistic outcome from a sparse integer model."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 4)) @ rng.normal(size=(4, d)) + rng.normal(size=(n, d))
    X = (latent > rng.normal(size=d)).astype(np.int8)
    w = np.zeros(d)
    w[rng.choice(d, 4, replace=False)] = rng.choice([-3, -2, 2, 3], 4)
    p = 1 / (1 + np.exp(-(X @ w - 1)))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    df.insert(0, "y", (rng.random(n) < p).astype(int))
    return df


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="*", default=[1e4, 1e5, 1e6])
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--time-limit", type=float, default=60)
    args = ap.parse_args()
    rows = []
    for n in map(int, args.sizes):
        df = synthetic(n, args.d)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rf.OptimalityGapWarning)
            m = rf.risk_score("y ~ .", df, max_size=5, time_limit=args.time_limit)
        wall = time.perf_counter() - t0
        unique = len(np.unique(df.drop(columns="y").to_numpy(), axis=0))
        rows.append({"n": f"{n:,d}", "d": args.d, "unique rows": f"{unique:,d}", "wall (s)": f"{wall:.1f}",
                     "solver (s)": f"{m.solver.time:.1f}", "objective": f"{m.objective:.6f}",
                     "gap": f"{100 * m.gap:.3f}%", "nodes": m.solver.nodes, "status": m.status})
        print(rows[-1], flush=True)
    print(tabulate(pd.DataFrame(rows), headers="keys", showindex=False, disable_numparse=True))


if __name__ == "__main__":
    main()
