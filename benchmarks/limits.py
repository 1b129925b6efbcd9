"""Limits on big data: does ``time_limit`` bound the whole fit, and how far above the data does memory go?

Two tables, every configuration in a fresh process:

* **time**: the wall time of the ``rf.risk_score`` call over its ``time_limit`` (target ≤ 1.2) on
  every path: the logistic loss on 10⁶ rows × 20 binary columns (``y ~ .``, size ≤ 5), the same with
  a fitted score scale (``scale="fit"``) and with ``n_jobs=2``; net benefit on wdbc with
  ``threshold(.)`` (size ≤ 3, points 0…5, c0 = 1e-3); a fairness bound on adult (13 binary
  predictors, ``equal_opportunity("sex", at_risk=0.3, max_diff=0.05)``, size ≤ 5); **wide**: wdbc
  with ``threshold(.)`` (30 measurements, about 11 000 candidate cuts on 569 rows; size ≤ 5, points
  −5…5, ``scale="fit"``); and **dask**:
  the logistic fit of the same 10⁶ rows as a dask user has them, ``dd.read_parquet(folder)`` of
  parquet files written beforehand (not timed) in files of 100 000 rows (10 partitions; the
  reading of the files is part of the fit, as it is for that user).  Limits 5 and 20 s
  (``--long`` adds 60 s).
* **memory**: the peak resident set (``ru_maxrss``) of a logistic fit (``time_limit=20``) against
  the data's size for 10⁵ and 10⁶ rows in a pandas frame and 10⁶ rows from parquet with dask
  (``--big`` adds 10⁷ rows, both ways, and in a frame over one row-major numpy array, as
  ``pd.DataFrame(X, copy=False)`` (or ``pd.DataFrame(X)`` with pandas 2) gives, whose columns are
  read with a stride): the data are the rows as a
  frame a user would read (20 int64 columns and an int64 outcome, as ``read_csv`` gives, each column
  contiguous: 168 bytes a row, whether or not the
  frame is ever made; the dask rows are never held as one frame: a generator writes them to parquet
  files of max(100 000, n / 20) rows, in another process, and the fit reads them), "before fit" is
  the resident set with the frame made (pandas) or the parquet folder opened (dask; the interpreter
  and the imports are about 180 MiB), and "fit peak / data" is (peak − before fit) / data
  (target ≤ 3).  The first row, 10³ rows, measures what a fit costs whatever the data (the
  listing search's blocks of candidate scores, the LP): "above the fixed cost / data" takes it off.

Every row records the 1-minute load average just before its process started (the machine is
shared).

``--profile PATH LIMIT`` runs one configuration under cProfile and prints the stages (riskformula's
functions by cumulative time) that the table's overruns come from.

    python benchmarks/limits.py                  # both tables, limits 5 and 20 s, 1e5 and 1e6 rows
    python benchmarks/limits.py --long --big     # also 60 s, and 1e7 rows
    python benchmarks/limits.py --only time      # or memory
    python benchmarks/limits.py --profile logistic 5   # or dask, on parquet files as above
    python benchmarks/limits.py --only time --paths wide n_jobs=2 --limits 2 5 20
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import riskformula as rf  # noqa: E402

PATHS = ["logistic", "fitted scale", "n_jobs=2", "dask", "wide", "net benefit", "fairness"]
ADULT = ("Over50K ~ Married + Bachelors + Graduate + NoHS + AnyCapitalGains + AnyCapitalLoss + Age_22_to_29 + "
         "Age_30_to_44 + Age_45_to_59 + Age_geq_60 + HSDiploma + JobManagerial + WorkHrsPerWeek_geq_50")


BLOCK = 100_000
ROW_BYTES = 21 * 8  # an int64 outcome and 20 int64 predictors


def binary_blocks(n: int, d: int = 20, seed: int = 0):
    """The rows of :func:`binary_rows` in blocks of ``BLOCK`` rows: (X, y) int64 arrays."""
    rng = np.random.default_rng(seed)
    load, cut = rng.normal(size=(4, d)), rng.normal(size=d)
    w = np.zeros(d)
    w[rng.choice(d, 4, replace=False)] = rng.choice([-3, -2, 2, 3], 4)
    for i in range(0, n, BLOCK):
        k = min(BLOCK, n - i)
        X = (rng.normal(size=(k, 4)) @ load + rng.normal(size=(k, d)) > cut).astype(np.int64)
        y = (rng.random(k) < 1 / (1 + np.exp(-(X @ w - 1)))).astype(np.int64)
        yield X, y


def _frame(X: np.ndarray, y: np.ndarray) -> pd.DataFrame:
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])], copy=False)
    df.insert(0, "y", y)
    return df


def binary_rows(n: int, d: int = 20, seed: int = 0, row_major: bool = False) -> pd.DataFrame:
    """Correlated binary predictors and a logistic outcome (``scaling.py``'s binary experiment),
    in int64 columns as ``pd.read_csv`` gives them: each column contiguous in memory.  With
    ``row_major``, the predictors are a frame over one row-major numpy array, as
    ``pd.DataFrame(X, copy=False)`` (or ``pd.DataFrame(X)`` with pandas 2) gives them: the same
    values, each column read with a stride of a row."""
    X = np.empty((n, d) if row_major else (d, n), dtype=np.int64)
    y = np.empty(n, dtype=np.int64)
    i = 0
    for Xb, yb in binary_blocks(n, d, seed):  # in blocks, so making the data peaks near the data's size
        if row_major:
            X[i:i + len(yb)] = Xb
        else:
            X[:, i:i + len(yb)] = Xb.T
        y[i:i + len(yb)] = yb
        i += len(yb)
    return _frame(X if row_major else X.T, y)


def file_rows(n: int) -> int:
    """Rows per parquet file (one dask partition each): 100 000 at 10⁶ rows, 500 000 at 10⁷."""
    return max(BLOCK, n // 20 // BLOCK * BLOCK)


def write_parquet(folder: Path, n: int) -> Path:
    """The rows of :func:`binary_rows` (the same rows) written to ``folder`` as parquet files of
    :func:`file_rows` rows, from the generator: no more than one file's rows are ever in memory."""
    folder.mkdir(parents=True, exist_ok=True)
    per_file, pending, k = file_rows(n), [], 0
    for X, y in binary_blocks(n):
        pending.append(_frame(X, y))
        if sum(map(len, pending)) >= per_file:
            pd.concat(pending, ignore_index=True).to_parquet(folder / f"part-{k:04d}.parquet", index=False)
            pending, k = [], k + 1
    if pending:
        pd.concat(pending, ignore_index=True).to_parquet(folder / f"part-{k:04d}.parquet", index=False)
    return folder


def folder_mib(folder: Path) -> float:
    return sum(f.stat().st_size for f in Path(folder).iterdir()) / 2 ** 20


def problem(path: str, n: int, folder: str | None = None):
    """(formula, data, options) of a path (``dask``: the parquet files in ``folder``)."""
    if path == "dask":
        import dask.dataframe as dd
        return "y ~ .", dd.read_parquet(folder), dict(max_size=5)
    if path in ("logistic", "fitted scale", "n_jobs=2", "row-major"):
        extra = {"fitted scale": {"scale": "fit"}, "n_jobs=2": {"n_jobs": 2}}.get(path, {})
        return "y ~ .", binary_rows(n, row_major=path == "row-major"), dict(max_size=5, **extra)
    if path == "wide":  # thousands of candidate cuts on 569 rows: the setup, not the rows, is the cost
        return ('diagnosis == "M" ~ threshold(.)', rf.load_dataset("wdbc"),
                dict(max_size=5, coef_range=(-5, 5), scale="fit"))
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


def run_one(path: str, limit: float, n: int, folder: str | None = None) -> dict:
    formula, data, options = problem(path, n, folder)
    if path == "dask":  # the rows as an int64 frame would hold them (never made)
        data_mib = n * sum(t.itemsize for t in data.dtypes) / 2 ** 20
    else:
        data_mib = data.memory_usage(deep=True).sum() / 2 ** 20
    before = _resident_mib()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score(formula, data, time_limit=limit, progress=False, **options)
    wall = time.perf_counter() - t0
    return {"path": path, "rows": int(m.nobs), "limit": limit, "wall": wall, "status": m.status,
            "gap": m.gap, "nodes": m.solver.nodes, "data_mib": data_mib, "before_mib": before,
            "peak_mib": _rss_mib()}


def in_a_process(path: str, limit: float, n: int, folder: Path | None = None) -> dict:
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, __file__, "--one", path, str(limit), str(n)]
                         + ([str(folder)] if folder is not None else []), capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["load"] = load
    print(json.dumps(row), flush=True)
    return row


class Parquet:
    """Parquet folders of the binary rows, written once per size (by another process, so that the
    writing never counts in a measured process) in a temporary folder."""

    def __init__(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="limits-")
        self._folders: dict = {}

    def __call__(self, n: int) -> Path:
        if n not in self._folders:
            folder = Path(self._tmp.name) / f"rows-{n}"
            subprocess.run([sys.executable, __file__, "--write", str(folder), str(n)], check=True)
            self._folders[n] = folder
        return self._folders[n]

    def close(self):
        self._tmp.cleanup()


def time_table(limits, parquet: Parquet, paths=PATHS) -> str:
    rows = []
    for path in paths:
        for limit in limits:
            r = in_a_process(path, limit, 10 ** 6, parquet(10 ** 6) if path == "dask" else None)
            rows.append({"path": path, "rows": f"{r['rows']:,d}", "time_limit (s)": f"{limit:g}",
                         "wall (s)": f"{r['wall']:.1f}", "wall / limit": f"{r['wall'] / limit:.2f}",
                         "status": r["status"], "gap": f"{100 * r['gap']:.2f} %", "nodes": r["nodes"],
                         "target ≤ 1.2": "yes" if r["wall"] <= 1.2 * limit else "no",
                         "load": f"{r['load']:.2f}"})
    return tabulate(rows, headers="keys", tablefmt="github", disable_numparse=True)


def memory_table(sizes, parquet: Parquet) -> str:
    """The memory table; its first size (10³ rows) measures the fit's fixed cost, which "above the
    fixed cost / data" takes off the other rows' fit peak."""
    rows, fixed = [], None
    for backend, n in sizes:
        folder = parquet(n) if backend == "dask" else None
        r = in_a_process({"pandas": "logistic"}.get(backend, backend), 20.0, n, folder)
        extra = r["peak_mib"] - r["before_mib"]
        fixed = extra if fixed is None else fixed
        rows.append({"data": {"dask": "dask, parquet", "row-major": "pandas, row-major"}.get(backend, backend),
                     "rows": f"{n:,d}",
                     "data (MiB)": f"{r['data_mib']:.0f}",
                     "on disk (MiB)": f"{folder_mib(folder):.0f}" if folder else "",
                     "before fit (MiB)": f"{r['before_mib']:.0f}", "peak (MiB)": f"{r['peak_mib']:.0f}",
                     "fit peak (MiB)": f"{extra:.0f}", "fit peak / data": f"{extra / r['data_mib']:.2f}",
                     "above the fixed cost / data": f"{(extra - fixed) / r['data_mib']:.2f}",
                     "peak / data": f"{r['peak_mib'] / r['data_mib']:.2f}",
                     "target ≤ 3": "yes" if extra <= 3 * r["data_mib"] else "no",
                     "wall (s)": f"{r['wall']:.1f}", "status": r["status"], "load": f"{r['load']:.2f}"})
    return tabulate(rows, headers="keys", tablefmt="github", disable_numparse=True)


def profile(path: str, limit: float, n: int) -> None:
    parquet = Parquet() if path == "dask" else None
    formula, data, options = problem(path, n, parquet(n) if parquet else None)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prof.runcall(rf.risk_score, formula, data, time_limit=limit, progress=False, **options)
    print(f"{path}, time_limit={limit:g}: wall {time.perf_counter() - t0:.1f} s")
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(r"riskformula", 45)
    print(text.getvalue())
    if parquet:
        parquet.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["time", "memory"])
    ap.add_argument("--long", action="store_true", help="also time_limit=60")
    ap.add_argument("--big", action="store_true", help="also 10^7 rows in the memory table")
    ap.add_argument("--profile", nargs=2, metavar=("PATH", "LIMIT"))
    ap.add_argument("--rows", type=float, default=1e6, help="rows of the binary data (--profile)")
    ap.add_argument("--paths", nargs="+", choices=PATHS, default=PATHS, help="paths of the time table")
    ap.add_argument("--limits", nargs="+", type=float, help="time limits of the time table (default 5 20)")
    ap.add_argument("--one", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--write", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        folder = args.one[3] if len(args.one) > 3 else None
        print(json.dumps(run_one(args.one[0], float(args.one[1]), int(float(args.one[2])), folder)))
    elif args.write:
        write_parquet(Path(args.write[0]), int(float(args.write[1])))
    elif args.profile:
        profile(args.profile[0], float(args.profile[1]), int(args.rows))
    else:
        parquet = Parquet()
        try:
            if args.only in (None, "time"):
                limits = args.limits or [5.0, 20.0] + [60.0] * args.long
                print(time_table(limits, parquet, args.paths), flush=True)
            if args.only in (None, "memory"):
                sizes = [("pandas", 10 ** 3), ("pandas", 10 ** 5), ("pandas", 10 ** 6), ("dask", 10 ** 6)]
                sizes += [("pandas", 10 ** 7), ("row-major", 10 ** 7), ("dask", 10 ** 7)] * args.big
                print(memory_table(sizes, parquet), flush=True)
        finally:
            parquet.close()


if __name__ == "__main__":
    main()
