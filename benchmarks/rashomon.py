"""Rashomon sets of the five data sets of Ustun & Rudin (2019): size ≤ 5, points −5…5, c0 = 1e-6, ε = 0.5 %, 1 %, 2 %.

For each data set and ε: the number of scores within (1 + ε) × the best objective, whether the list is
proven complete (else the bound below which it is), the time of the whole call (the first phase's fit
included) and the nodes; then, per data set, the variables' use across the set at ε = 1 %.  The load
average of the machine is printed beside each run (the machine is shared).

Targets: breastcancer and mammo complete at ε = 1 % within 60 s on 2 cores.

    python benchmarks/rashomon.py                          # all five, ε = 0.5, 1, 2 %
    python benchmarks/rashomon.py mammo --eps 0.01         # some
    python benchmarks/rashomon.py --format github --exact  # Markdown; "best without" by a certified fit
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure this checkout's riskformula
import riskformula as rf  # noqa: E402

# name: (outcome, time limit in s, target)
CASES = {
    "breastcancer": ("Benign", 60, "complete at 1 % in < 60 s"),
    "mammo": ("Malignant", 60, "complete at 1 % in < 60 s"),
    "adult": ("Over50K", 300, "report"),
    "mushroom": ("poisonous", 300, "report"),
    "spambase": ("Spam", 300, "report"),
}

#: how a "best objective without the variable" is known: above the level, at least a bound, else exact
SIGN = {"above level": "> ", "at least": "≥ "}


def load() -> str:
    return "{:.2f}".format(os.getloadavg()[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(CASES))
    ap.add_argument("--eps", default="0.005,0.01,0.02", help="comma-separated ε values")
    ap.add_argument("--time-limit", type=float, help="override every time limit (seconds)")
    ap.add_argument("--format", default="simple", help="tabulate format (simple, github, ...)")
    ap.add_argument("--exact", action="store_true",
                    help="importance: the best objective without a variable every member uses, by a certified fit")
    args = ap.parse_args()
    epsilons = [float(e) for e in args.eps.split(",")]
    rows, tables = [], []
    for name in args.names:
        outcome, limit, target = CASES[name]
        df = rf.load_dataset(name)
        for eps in epsilons:
            before = load()
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rs = rf.rashomon_set(f"{outcome} ~ .", df, epsilon=eps, max_size=5, coef_range=(-5, 5), c0=1e-6,
                                     time_limit=args.time_limit or limit)
            wall = time.perf_counter() - t0
            ok = "-"
            if target.startswith("complete") and eps == 0.01:
                ok = "yes" if rs.complete and wall < 60 else "NO"
            rows.append({"data": name, "ε": f"{100 * eps:g} %", "members": len(rs),
                         "complete": "yes" if rs.complete else f"no: {rs.status}",
                         "proven bound": "-" if rs.complete else f"{rs.bound:.6f}",
                         "level": f"{rs.level:.6f}", "best objective": f"{rs.optimum:.6f}",
                         "certified": "yes" if rs.optimum_certified else "no",
                         "sizes": ",".join(str(s) for s in sorted(set(rs.sizes.tolist()))),
                         "time (s)": f"{wall:.1f}", "nodes": rs.nodes, "load": f"{before}/{load()}",
                         "target met": ok})
            print(f"{name} ε={eps:g}: {len(rs)} members, {rs.statement()} ({wall:.1f} s, load {before}->{load()})",
                  flush=True)
            if eps == 0.01 or (0.01 not in epsilons and eps == epsilons[0]):
                imp = rs.importance(exact=args.exact, time_limit=60)
                imp = imp[imp["members"] > 0]
                shown = pd.DataFrame({
                    "variable": imp["variable"], "share": [f"{100 * s:.0f} %" for s in imp["share"]],
                    "points": [f"{a:+d}..{b:+d}" for a, b in zip(imp["points_min"], imp["points_max"])],
                    "best without": [SIGN.get(st, "") + f"{v:.6f}"
                                     for v, st in zip(imp["best_without"], imp["best_without_status"])],
                    "status": imp["best_without_status"],
                    "increase": ["-" if v != v else SIGN.get(st, "") + f"{100 * v:.2f} %"
                                 for v, st in zip(imp["increase"], imp["best_without_status"])]})
                tables.append((f"{name}, ε = {100 * eps:g} % ({len(rs)} members, "
                               f"{'complete' if rs.complete else 'incomplete'})", shown))
    print()
    print(tabulate(pd.DataFrame(rows), headers="keys", tablefmt=args.format, showindex=False, disable_numparse=True))
    for title, t in tables:
        print(f"\n{title}; variables used by some member\n")
        print(tabulate(t, headers="keys", tablefmt=args.format, showindex=False, disable_numparse=True))


if __name__ == "__main__":
    main()
