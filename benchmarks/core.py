"""Core benchmark: the five data sets of Ustun & Rudin (2019) at size ≤ 5, points −5..5, c0 = 1e-6.

The data ship with riskformula (``rf.load_dataset(name)``; sources in ``data/README.md``). Prints
one row per data set: rows, columns, time, objective, lower bound, gap, nodes, beside the figures
of the reference implementation (Ustun & Rudin's risk-slim on CPLEX 22.2 Community Edition,
measured on the same kind of machine; in CASES below) and whether our targets are met.

    python benchmarks/core.py                 # all five
    python benchmarks/core.py mammo adult     # some
    python benchmarks/core.py --format github # Markdown table
    python benchmarks/core.py --scale fit     # the score scale chosen with the points
"""

from __future__ import annotations

import argparse
import time
import warnings

import sys
from pathlib import Path

import pandas as pd
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure this checkout's riskformula
import riskformula as rf  # noqa: E402

# name: (outcome, time limit, reference objective, reference gap, reference wall time, target)
CASES = {
    "breastcancer": ("Benign", 60, 0.113365, 0.00001, 0.7, "certified (gap <= 0.1%) in < 10 s"),
    "mammo": ("Malignant", 60, 0.468559, 0.00009, 9.2, "certified (gap <= 0.1%) in < 30 s"),
    "adult": ("Over50K", 120, 0.384056, 0.0919, 125.0, "objective <= ref and gap <= 9.19% in 120 s"),
    "mushroom": ("poisonous", 120, 0.068693, 0.0791, 121.0, "objective <= ref and gap <= 7.91% in 120 s"),
    "spambase": ("Spam", 120, None, None, None, "reference cannot run it (CPLEX CE size limit)"),
}


def met(name: str, m) -> str:
    _, _, ref_obj, ref_gap, _, _ = CASES[name]
    tol = 1e-6
    if name in ("breastcancer", "mammo"):
        limit = 10 if name == "breastcancer" else 30
        ok = m.gap <= 0.001 and m.objective <= ref_obj + tol and m.solver.time < limit
    elif ref_obj is not None:
        ok = m.objective <= ref_obj + tol and m.gap <= ref_gap
    else:
        return "n/a"
    return "yes" if ok else "NO"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(CASES))
    ap.add_argument("--format", default="simple", help="tabulate format (simple, github, ...)")
    ap.add_argument("--time-limit", type=float, help="override every time limit (seconds)")
    ap.add_argument("--scale", default="1", help='score scale: a number (default 1), "fit" or a list 1,2,4')
    args = ap.parse_args()
    scale = args.scale if args.scale == "fit" else [float(x) for x in args.scale.split(",")]
    rows = []
    for name in args.names:
        outcome, limit, ref_obj, ref_gap, ref_time, target = CASES[name]
        df = rf.load_dataset(name)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rf.OptimalityGapWarning)
            m = rf.risk_score(f"{outcome} ~ .", df, max_size=5, coef_range=(-5, 5), c0=1e-6,
                              time_limit=args.time_limit or limit, scale=scale)
        wall = time.perf_counter() - t0
        rows.append({
            "data": name, "rows": len(df), "cols": df.shape[1] - 1,
            "time (s)": f"{m.solver.time:.1f}", "wall (s)": f"{wall:.1f}",
            "objective": f"{m.objective:.6f}", "lower bound": f"{m.lower_bound:.6f}",
            "gap": f"{100 * m.gap:.3f}%", "nodes": m.solver.nodes, "status": m.status,
            "scale": f"{m.scale:g}", "loss": f"{m.loss:.6f}",
            "ref objective": "-" if ref_obj is None else f"{ref_obj:.6f}",
            "ref gap": "-" if ref_gap is None else f"{100 * ref_gap:.2f}%",
            "ref time (s)": "-" if ref_time is None else f"{ref_time:g}",
            "target met": met(name, m),
        })
        print(f"{name}: {m.certificate_line()}  size {m.size}: "
              + ", ".join(f"{k} {v:+d}" for k, v in m.coef[m.coef != 0].items()) + f"; intercept {m.intercept}",
              flush=True)
    print()
    print(tabulate(pd.DataFrame(rows), headers="keys", tablefmt=args.format, showindex=False,
                   disable_numparse=True))


if __name__ == "__main__":
    main()
