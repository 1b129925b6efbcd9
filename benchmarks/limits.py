"""Limits on big data: does ``time_limit`` bound the whole fit, and how far above the data does memory go?

Two tables, every configuration in a fresh process:

* **time**: the wall time of the ``rf.risk_score`` call over its ``time_limit`` (target ≤ 1.2) on
  every path: the logistic loss on 10⁶ rows × 20 binary columns (``y ~ .``, size ≤ 5), the same with
  a fitted score scale (``scale="fit"``) and with ``n_jobs=2``; net benefit on wdbc with
  ``threshold(.)`` (size ≤ 3, points 0…5, c0 = 1e-3); a fairness bound on adult (13 binary
  predictors, ``equal_opportunity("sex", at_risk=0.3, max_diff=0.05)``, size ≤ 5).  Limits 5 and
  20 s (``--long`` adds 60 s).
* **memory**: the peak resident set (``ru_maxrss``) of a logistic fit (``time_limit=20``) against
  the data's size for 10⁵ and 10⁶ rows (``--big`` adds 10⁷): the data are the frame a user would
  read (20 int64 columns and an int64 outcome, as ``read_csv`` gives), "before fit" is the resident
  set with the frame made (the interpreter and the imports are about 180 MiB), and "fit peak / data"
  is (peak − before fit) / data (target ≤ 3).

``--profile PATH LIMIT`` runs one configuration under cProfile and prints the stages (riskformula's
functions by cumulative time) that the table's overruns come from.

    python benchmarks/limits.py                  # both tables, limits 5 and 20 s, 1e5 and 1e6 rows
    python benchmarks/limits.py --long --big     # also 60 s, and 1e7 rows
    python benchmarks/limits.py --only time      # or memory
    python benchmarks/limits.py --profile logistic 5
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import riskformula as rf  # noqa: E402

PATHS = ["logistic", "fitted scale", "n_jobs=2", "net benefit", "fairness"]
ADULT = ("Over50K ~ Married + Bachelors + Graduate + NoHS + AnyCapitalGains + AnyCapitalLoss + Age_22_to_29 + "
         "Age_30_to_44 + Age_45_to_59 + Age_geq_60 + HSDiploma + JobManagerial + WorkHrsPerWeek_geq_50")


def binary_rows(n: int, d: int = 20, seed: int = 0) -> pd.DataFrame:
    """Correlated binary predictors and a logistic outcome (``scaling.py``'s binary experiment),
    in int64 columns as ``pd.read_csv`` gives them."""
    rng = np.random.default_rng(seed)
    load, cut = rng.normal(size=(4, d)), rng.normal(size=d)
    w = np.zeros(d)
    w[rng.choice(d, 4, replace=False)] = rng.choice([-3, -2, 2, 3], 4)
    X, y = np.empty((n, d), dtype=np.int64), np.empty(n, dtype=np.int64)
    for i in range(0, n, 100_000):  # in blocks, so making the data peaks near the data's size
        k = min(100_000, n - i)
        X[i:i + k] = rng.normal(size=(k, 4)) @ load + rng.normal(size=(k, d)) > cut
        y[i:i + k] = rng.random(k) < 1 / (1 + np.exp(-(X[i:i + k] @ w - 1)))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)], copy=False)
    df.insert(0, "y", y)
    return df


def problem(path: str, n: int):
    """(formula, data, options) of a path."""
    if path in ("logistic", "fitted scale", "n_jobs=2"):
        extra = {"fitted scale": {"scale": "fit"}, "n_jobs=2": {"n_jobs": 2}}.get(path, {})
        return "y ~ .", binary_rows(n), dict(max_size=5, **extra)
    if path == "net benefit":
        return ('diagnosis == "M" ~ threshold(.)', rf.load_dataset("wdbc"),
                dict(objective="net_benefit", max_size=3, coef_range=(0, 5), c0=1e-3))
    if path == "fairness":
        adult = rf.load_dataset("adult")
        adult["sex"] = np.where(adult["Female"] == 1, "female", "male")
        return ADULT, adult, dict(max_size=5, coef_range=(-5, 5),
                                  constraints=[rf.equal_opportunity("sex", at_risk=0.3, max_diff=0.05)])
    raise ValueError(path)


def _rss_mib() -> float:
    """The peak resident set of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _resident_mib() -> float:
    """The resident set of this process now (Linux)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize() / 2 ** 20


def run_one(path: str, limit: float, n: int) -> dict:
    formula, data, options = problem(path, n)
    data_mib = data.memory_usage(deep=True).sum() / 2 ** 20
    before = _resident_mib()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score(formula, data, time_limit=limit, progress=False, **options)
    wall = time.perf_counter() - t0
    return {"path": path, "rows": len(data), "limit": limit, "wall": wall, "status": m.status,
            "gap": m.gap, "nodes": m.solver.nodes, "data_mib": data_mib, "before_mib": before,
            "peak_mib": _rss_mib()}


def in_a_process(path: str, limit: float, n: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", path, str(limit), str(n)],
                         capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    row = json.loads(out.stdout.strip().splitlines()[-1])
    print(json.dumps(row), flush=True)
    return row


def time_table(limits) -> str:
    rows = []
    for path in PATHS:
        for limit in limits:
            r = in_a_process(path, limit, 10 ** 6)
            rows.append({"path": path, "rows": f"{r['rows']:,d}", "time_limit (s)": f"{limit:g}",
                         "wall (s)": f"{r['wall']:.1f}", "wall / limit": f"{r['wall'] / limit:.2f}",
                         "status": r["status"], "gap": f"{100 * r['gap']:.2f} %", "nodes": r["nodes"],
                         "target ≤ 1.2": "yes" if r["wall"] <= 1.2 * limit else "no"})
    return tabulate(rows, headers="keys", tablefmt="github", disable_numparse=True)


def memory_table(sizes) -> str:
    rows = []
    for n in sizes:
        r = in_a_process("logistic", 20.0, n)
        extra = r["peak_mib"] - r["before_mib"]
        rows.append({"rows": f"{n:,d}", "data (MiB)": f"{r['data_mib']:.0f}",
                     "before fit (MiB)": f"{r['before_mib']:.0f}", "peak (MiB)": f"{r['peak_mib']:.0f}",
                     "fit peak / data": f"{extra / r['data_mib']:.2f}",
                     "peak / data": f"{r['peak_mib'] / r['data_mib']:.2f}",
                     "wall (s)": f"{r['wall']:.1f}", "status": r["status"]})
    return tabulate(rows, headers="keys", tablefmt="github", disable_numparse=True)


def profile(path: str, limit: float, n: int) -> None:
    formula, data, options = problem(path, n)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prof.runcall(rf.risk_score, formula, data, time_limit=limit, progress=False, **options)
    print(f"{path}, time_limit={limit:g}: wall {time.perf_counter() - t0:.1f} s")
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(r"riskformula", 45)
    print(text.getvalue())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["time", "memory"])
    ap.add_argument("--long", action="store_true", help="also time_limit=60")
    ap.add_argument("--big", action="store_true", help="also 10^7 rows in the memory table")
    ap.add_argument("--profile", nargs=2, metavar=("PATH", "LIMIT"))
    ap.add_argument("--rows", type=float, default=1e6, help="rows of the binary data (--profile)")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], float(args.one[1]), int(float(args.one[2])))))
    elif args.profile:
        profile(args.profile[0], float(args.profile[1]), int(args.rows))
    else:
        if args.only in (None, "time"):
            print(time_table([5.0, 20.0] + [60.0] * args.long))
        if args.only in (None, "memory"):
            print(memory_table([10 ** 5, 10 ** 6] + [10 ** 7] * args.big))


if __name__ == "__main__":
    main()
