"""Scaling in the number of rows: pandas in one process, and dask on a local cluster.

The fit collapses the rows to weighted distinct (design row, outcome) patterns before solving
(Ustun & Rudin 2019), so once the data are read, the solver's work depends on the number of
distinct patterns, not on the number of rows.  Two experiments:

``mixed`` (default): a binary predictor, a four-level factor and two thresholded continuous
predictors (age in whole years 18-90, a lab value with one decimal), the formula
``y ~ smoker + C(region) + threshold(age, grid=10) + threshold(lab, grid=10)``.  The quantile
grid (computed exactly from the value counts of all rows) keeps at most 11 intervals per
variable, so there are at most 2·4·11·11 distinct design rows at any n.  The rows are generated
partition by partition inside the dask graph (``dd.from_map``), so with dask the full frame never
exists in one process; pandas builds the same rows in memory.  Every configuration runs in a
fresh process; peak memory is the maximum resident set size (ru_maxrss) of that process, and
with dask also of each of the 2 worker processes.

``binary``: the earlier experiment, n = 10^4 .. 10^6 rows of d correlated binary predictors in
pandas.

    python benchmarks/scaling.py                                 # mixed: dask 1e5..1e7, pandas 1e5..1e6
    python benchmarks/scaling.py --sizes 1e5 1e6 --backends pandas dask
    python benchmarks/scaling.py --experiment binary --d 20      # n = 1e4, 1e5, 1e6
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import riskformula as rf  # noqa: E402

FORMULA = "y ~ smoker + C(region) + threshold(age, grid=10) + threshold(lab, grid=10)"
OPTIONS = dict(max_size=4, coef_range=(-5, 5), time_limit=300, progress=False)
#: rows per generated partition
PARTITION_ROWS = 500_000
REGIONS = np.array(["north", "south", "east", "west"], dtype=object)


# --------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------


def partition(i: int, rows: int, seed: int = 0) -> pd.DataFrame:
    """Partition ``i`` of the synthetic rows: its own random stream, so any partition can be made alone."""
    rng = np.random.default_rng([seed, i])
    smoker = rng.integers(0, 2, rows).astype(np.int8)
    region = REGIONS[rng.integers(0, 4, rows)]
    age = rng.integers(18, 91, rows).astype(np.int16)
    lab = np.round(np.clip(rng.gamma(4.0, 1.0, rows), 0, 15), 1)
    lp = (-3.0 + 0.8 * smoker + 0.6 * (region == "south") - 0.4 * (region == "west")
          + 1.3 * (age > 60) + 0.9 * (lab > 6.0))
    y = (rng.random(rows) < expit(lp)).astype(np.int8)
    return pd.DataFrame({"y": y, "smoker": smoker, "region": region, "age": age, "lab": lab})


def _pieces(n: int) -> list[tuple[int, int]]:
    k = max(2, -(-n // PARTITION_ROWS))
    sizes = [n // k + (i < n % k) for i in range(k)]
    return list(enumerate(sizes))


def _make(piece):
    return partition(*piece)


def pandas_rows(n: int) -> pd.DataFrame:
    return pd.concat([partition(i, r) for i, r in _pieces(n)], ignore_index=True)


def dask_rows(n: int):
    import dask.dataframe as dd

    pieces = _pieces(n)
    return dd.from_map(_make, pieces, meta=partition(0, 0), divisions=[None] * (len(pieces) + 1))


# --------------------------------------------------------------------------------------
# one configuration, in its own process
# --------------------------------------------------------------------------------------


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _count_patterns(seen: list) -> None:
    """Record how many distinct rows the solver gets (instrumentation of this benchmark only)."""
    import riskformula.pipeline as fit

    class Counting(fit.LogisticLoss):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.append(self.n_unique)

    fit.LogisticLoss = Counting


def run_one(n: int, backend: str) -> dict:
    seen: list = []
    _count_patterns(seen)
    t0 = time.perf_counter()
    workers: dict = {}
    if backend == "pandas":
        data = pandas_rows(n)
        generated = time.perf_counter() - t0
        t1 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rf.OptimalityGapWarning)
            m = rf.risk_score(FORMULA, data, **OPTIONS)
        fit_time = time.perf_counter() - t1
    else:
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                          memory_limit="3GiB") as cluster, Client(cluster) as client:
            generated = 0.0
            t1 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", rf.OptimalityGapWarning)
                m = rf.risk_score(FORMULA, dask_rows(n), **OPTIONS)
            fit_time = time.perf_counter() - t1
            workers = client.run(_peak_mib)
    total = time.perf_counter() - t0
    return {"n": n, "backend": backend, "patterns": seen[-1], "fit_s": fit_time, "solver_s": m.solver.time,
            "total_s": total, "generate_s": generated, "objective": m.objective, "gap": m.gap,
            "status": m.status, "nodes": m.solver.nodes, "peak_mib": _peak_mib(),
            "worker_peak_mib": sorted(workers.values()), "card": m.score_card()["term"].tolist()}


def mixed(args) -> None:
    rows = []
    for n in map(int, args.sizes):
        for backend in args.backends:
            if backend == "pandas" and n > args.pandas_max:
                continue
            out = subprocess.run([sys.executable, __file__, "--one", str(n), backend], capture_output=True,
                                 text=True, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
            if out.returncode:
                print(out.stderr[-3000:], file=sys.stderr)
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(r)
            print(json.dumps(r), flush=True)
    print(table(rows))


def table(rows: list[dict]) -> str:
    """The results as a Markdown table (``python benchmarks/scaling.py --table results.jsonl``
    re-renders saved result lines)."""
    from riskformula.reports.render import fmt_gap

    out = []
    for r in rows:
        w = r["worker_peak_mib"]
        out.append({
            "rows": f"{r['n']:,d}", "backend": r["backend"], "distinct patterns": f"{r['patterns']:,d}",
            "fit (s)": f"{r['fit_s']:.1f}", "solver (s)": f"{r['solver_s']:.1f}",
            "end to end (s)": f"{r['total_s']:.1f}",
            "peak memory": _gib(r["peak_mib"]) + (f" + workers {' / '.join(_gib(v) for v in w)}" if w else ""),
            "objective": f"{r['objective']:.6f}", "gap": fmt_gap(r["gap"]), "status": r["status"]})
    return tabulate(pd.DataFrame(out), headers="keys", showindex=False, disable_numparse=True, tablefmt="github")


def _gib(mib: float) -> str:
    return f"{mib / 1024:.2f} GiB" if mib >= 1024 else f"{mib:.0f} MiB"


# --------------------------------------------------------------------------------------
# the binary experiment
# --------------------------------------------------------------------------------------


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


def binary(args) -> None:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiment", choices=["mixed", "binary"], default="mixed")
    ap.add_argument("--sizes", type=float, nargs="*", default=None)
    ap.add_argument("--backends", nargs="*", default=["pandas", "dask"], choices=["pandas", "dask"])
    ap.add_argument("--pandas-max", type=float, default=1e6, help="largest n run with pandas (default 1e6)")
    ap.add_argument("--d", type=int, default=20, help="binary experiment: number of predictors")
    ap.add_argument("--time-limit", type=float, default=60, help="binary experiment: seconds per fit")
    ap.add_argument("--one", nargs=2, metavar=("N", "BACKEND"), help=argparse.SUPPRESS)
    ap.add_argument("--table", metavar="FILE", help="print the table of saved result lines (one JSON object each)")
    args = ap.parse_args()
    if args.table:
        lines = Path(args.table).read_text().splitlines()
        print(table([json.loads(x) for x in lines if x.startswith("{")]))
    elif args.one:
        print(json.dumps(run_one(int(float(args.one[0])), args.one[1])))
    elif args.experiment == "binary":
        args.sizes = args.sizes or [1e4, 1e5, 1e6]
        binary(args)
    else:
        args.sizes = args.sizes or [1e5, 1e6, 1e7]
        mixed(args)


if __name__ == "__main__":
    main()
