"""How far a relaxation-based certificate can go on wdbc with a threshold on every predictor.

A threshold term enters the problem as one column per candidate cut, ``1[x ≤ c]``, whose points
δ are the difference between the points of the two sides of the cut (the intercept takes the
other side's), so with points −5…5 on each side δ ranges over −10…10 (Molero-Río & D'Ambrosio,
2025).  The branch-and-cut relaxes "at most one cut per term" to ``Σ_c |δ_c| ≤ 10``: any step
function of the predictor with total variation ≤ 10 instead of one step.  This is the convex hull
of the one-step functions, so it is the strongest bound that treats each term on its own.

The script measures, against the best risk score the fit finds:

* the root bound of the branch-and-cut (Kelley's cutting planes on that relaxation, and one cut
  at a near-minimiser found by a first-order method when they stall) and the relaxation's own
  least loss at the root (every term, five in all), solved here for as long as it takes;
* the relaxation on the best score's own support, and on random supports of five terms.  A
  certificate that bounds one support at a time by its relaxation, even one that enumerated all
  C(30, 5) = 142 506 supports, proves no more than the least of these.

Each relaxation is solved by the solver's own accelerated projected gradient (FISTA; Beck &
Teboulle, 2009; :mod:`riskformula.solver.relaxation`) on its feasible set: the loss it reaches is attained by feasible step functions, an upper bound on the
relaxation's minimum, which is the direction that limits a certificate.  The Frank–Wolfe bound
beside it (a lower bound on the same minimum) shows how close the solve got.

Run from the repository root (up to half an hour; ``--supports`` sets most of it)::

    PYTHONPATH=. python benchmarks/relaxation.py                    # grid=10 and every cut
    PYTHONPATH=. python benchmarks/relaxation.py --grid 10 --supports 1000
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from tabulate import tabulate

import riskformula as rf
from riskformula.problem import LogisticLoss, RiskProblem, SizeGroup
from riskformula.solver.relaxation import first_order_cut

#: points of each side of a cut (``coef_range=(-5, 5)``); a cut column's δ spans twice that
POINTS = 5
RADIUS = 2 * POINTS
SIZE = 5


def relaxation(X: np.ndarray, y: np.ndarray, groups: list[np.ndarray], intercept: tuple[float, float],
               size: int, iterations: int = 4000, seconds: float = 60.0) -> tuple[float, float]:
    """(loss reached, Frank-Wolfe lower bound) of the least mean logistic loss over an intercept
    in ``intercept`` and, per group of columns (one term's cuts), points with Σ|δ| ≤ RADIUS, at
    most ``size`` terms in all: the solver's own first-order solve
    (:func:`riskformula.solver.relaxation.first_order_cut`) on that problem."""
    cols = np.concatenate(groups)
    ends = np.cumsum([0] + [len(g) for g in groups])
    terms = [SizeGroup(tuple(range(a, b)), max_used=1) for a, b in zip(ends[:-1], ends[1:])]
    p = RiskProblem(LogisticLoss(X[:, cols], y), np.full(len(cols), -RADIUS), np.full(len(cols), RADIUS),
                    max_size=size, groups=terms, intercept_bounds=intercept)
    cut = first_order_cut(p, max_iterations=iterations, rel_tol=1e-4, deadline=time.perf_counter() + seconds)
    return cut.value, cut.bound


def study(grid: int | None, supports: int, time_limit: float, seed: int) -> list[dict]:
    df = rf.load_dataset("wdbc")
    formula = 'diagnosis == "M" ~ threshold(.' + ("" if grid is None else f", grid={grid}") + ")"
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.OptimalityGapWarning)
        m = rf.risk_score(formula, df, max_size=SIZE, coef_range=(-POINTS, POINTS), c0=1e-6,
                          time_limit=time_limit, progress=False)
    fit_time = time.perf_counter() - t0
    X = np.asarray(m.design.transform(df), float)
    y = np.asarray(df["diagnosis"] == "M", float)
    terms = list(dict.fromkeys(m.design.column_terms))
    term_of = np.array([terms.index(t) for t in m.design.column_terms])
    groups = [np.flatnonzero(term_of == k) for k in range(len(terms))]
    used = sorted({int(term_of[j]) for j in np.flatnonzero(np.asarray(m.coef) != 0)})
    intercept = tuple(float(b) for b in m.settings.intercept_range)
    label = "every cut" if grid is None else f"grid={grid}"
    loss = m.loss

    t0 = time.perf_counter()
    root, root_bound = relaxation(X, y, groups, intercept, SIZE, iterations=100_000, seconds=300)
    root_time = time.perf_counter() - t0
    own, own_bound = relaxation(X, y, [groups[k] for k in used], intercept, SIZE)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    values = np.array([relaxation(X, y, [groups[k] for k in rng.choice(len(terms), SIZE, replace=False)],
                                  intercept, SIZE)[0] for _ in range(supports)])
    least = min(own, values.min())
    share = float(np.mean(values < 0.8 * loss))
    return [
        {"design": label, "quantity": "best risk score found (training loss)", "value": f"{loss:.5f}",
         "note": f"{m.status}, gap {100 * m.gap:.2f} %, {fit_time:.0f} s; {X.shape[1]} cut columns"},
        {"design": label, "quantity": "root bound of the branch-and-cut", "value": f"{m.solver.root_bound:.6f}",
         "note": "Kelley's cutting planes, then the first-order cut if they stall"},
        {"design": label, "quantity": "root relaxation (every term, five in all)", "value": f"{root:.5f}",
         "note": f"Frank-Wolfe bound {root_bound:.5f}; {root_time:.0f} s"},
        {"design": label, "quantity": "relaxation on the best score's own support", "value": f"{own:.5f}",
         "note": f"Frank-Wolfe bound {own_bound:.5f}; {100 * own / loss:.0f} % of the loss"},
        {"design": label, "quantity": f"relaxation, {supports} random supports: least", "value": f"{values.min():.5f}",
         "note": f"5 % quantile {np.quantile(values, 0.05):.5f}, median {np.median(values):.5f}"},
        {"design": label, "quantity": "a certificate per support proves at most", "value": f"{least:.5f}",
         "note": f"the lesser of the two above: gap ≥ {100 * (1 - least / loss):.0f} %"},
        {"design": label, "quantity": "random supports below 0.8 × the loss", "value": f"{100 * share:.1f} %",
         "note": f"about {share * 142_506:,.0f} of the 142 506 supports need their cuts branched on for gap ≤ 20 %"},
        {"design": label, "quantity": "random supports below the loss", "value": f"{100 * np.mean(values < loss):.1f} %",
         "note": f"{time.perf_counter() - t0:.0f} s for the supports' relaxations"},
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", type=int, nargs="*", default=None,
                    help="grids to study (default: 10 and every cut; 0 means every cut)")
    ap.add_argument("--supports", type=int, default=300, help="random supports of five terms per design")
    ap.add_argument("--time-limit", type=float, default=120.0, help="time limit of the fit (s)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    grids = [10, None] if args.grid is None else [g or None for g in args.grid]
    for grid in grids:
        print(tabulate(study(grid, args.supports, args.time_limit, args.seed), headers="keys"), "\n", flush=True)


if __name__ == "__main__":
    main()
