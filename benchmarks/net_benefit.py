"""Net-benefit scores on the five bundled data sets, with the protocol of Chi & Birbil (2026), Table 4.

Ten-fold stratified cross-validation, decision thresholds p_i = i/10, AUNBC weights, c0 = 1e-3,
points -10..10 and no size limit. For each data set it prints, as mean ± sd over the folds run,
the train and test AUNBC, AUROC (of the predicted risks, ties counted 1/2), ECE (10 equal-width
bins) and size of

* our net-benefit score (``objective="net_benefit"``: local search + exact MILP, per fold
  ``--time-limit`` seconds; the logistic score below is one of the search's starts),
* our logistic-loss score (``objective="logistic"``, same points and c0, ``--logistic-time``
  seconds per fold),
* the paper's RSS-DNB (exact MILP, Gurobi, 10 min) and RSS-DNB-SA (simulated annealing) figures,

and, for the net-benefit score, the penalised training objective (AUNBC − c0·size) beside the
paper's implied one, the gap, how many folds were certified optimal, and the time per fold.
The target "train AUNBC ≥ the paper's best RSS-DNB variant" is checked per data set.

    python benchmarks/net_benefit.py                          # all five, 10 folds (hours)
    python benchmarks/net_benefit.py --folds 1                # the first fold of each set
    python benchmarks/net_benefit.py --sets mammo breastcancer --folds 3 --time-limit 120
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from tabulate import tabulate

import riskformula as rf
from riskformula.reports.metrics import auc, aunbc, expected_calibration_error
from riskformula.tuning import stratified_folds

#: outcome column of each set (breastcancer's "Benign" column is 1 for the malignant 35%)
OUTCOME = {"breastcancer": "Benign", "mammo": "Malignant", "adult": "Over50K", "mushroom": "poisonous",
           "spambase": "Spam"}

#: Chi & Birbil (2026), Table 4: mean over 10 folds of train AUNBC, test AUNBC, train AUROC, test
#: AUROC, train ECE, test ECE, size — for RSS-DNB (exact MILP) and RSS-DNB-SA
PAPER = {
    "adult": {"RSS-DNB": (0.102, 0.102, 0.881, 0.880, 0.000, 0.013, 22.2),
              "RSS-DNB-SA": (0.103, 0.102, 0.878, 0.877, 0.000, 0.014, 24.8)},
    "breastcancer": {"RSS-DNB": (0.325, 0.305, 0.992, 0.985, 0.000, 0.022, 6.5),
                     "RSS-DNB-SA": (0.324, 0.306, 0.994, 0.979, 0.000, 0.018, 8.7)},
    "mammo": {"RSS-DNB": (0.262, 0.252, 0.859, 0.845, 0.000, 0.078, 6.5),
              "RSS-DNB-SA": (0.260, 0.249, 0.854, 0.834, 0.000, 0.085, 9.4)},
    "mushroom": {"RSS-DNB": (0.482, 0.482, 1.000, 1.000, 0.000, 0.000, 22.3),
                 "RSS-DNB-SA": (0.482, 0.482, 1.000, 1.000, 0.000, 0.000, 19.8)},
    "spambase": {"RSS-DNB": (0.298, 0.295, 0.954, 0.951, 0.000, 0.011, 33.2),
                 "RSS-DNB-SA": (0.318, 0.311, 0.963, 0.958, 0.000, 0.019, 38.7)},
}
C0 = 1e-3
POINTS = (-10, 10)


def fold_metrics(model, train: pd.DataFrame, test: pd.DataFrame) -> dict:
    out = {}
    for part, d in (("train", train), ("test", test)):
        y, r = model.observed(d).to_numpy(), model.predict(d).to_numpy()
        out[f"{part}_aunbc"] = aunbc(y, r)
        out[f"{part}_auroc"] = auc(y, r)
        out[f"{part}_ece"] = expected_calibration_error(y, r)
    out["size"] = model.size
    return out


def _statuses(messages) -> str:
    """The folds' exact-model outcomes, counted (a skip's reason once, without its per-fold sizes)."""
    short = pd.Series([str(m).split(":")[0] for m in messages]).value_counts()
    return ", ".join(f"{k} ({n})" for k, n in short.items())


def run_set(name: str, folds: int, time_limit: float, logistic_time: float, solver, c0: float = C0) -> tuple[list, list]:
    df = rf.load_dataset(name)
    outcome = OUTCOME[name]
    formula = f"{outcome} ~ ."
    p = df.shape[1] - 1
    codes = stratified_folds(df[outcome].to_numpy(), 10, 0)
    nb_rows, lr_rows = [], []
    for k in range(folds):
        train, test = df[codes != k], df[codes == k]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rf.OptimalityGapWarning)
            t0 = time.perf_counter()
            lr = rf.risk_score(formula, train, max_size=p, coef_range=POINTS, c0=c0, time_limit=logistic_time,
                               progress=False)
            lr_wall = time.perf_counter() - t0
            t0 = time.perf_counter()
            # the logistic score is one more start of the net-benefit search (``initial=``)
            m = rf.risk_score(formula, train, objective="net_benefit", max_size=p, coef_range=POINTS, c0=c0,
                              time_limit=time_limit, solver=solver, initial=lr, progress=False)
            wall = time.perf_counter() - t0
        row = fold_metrics(m, train, test)
        row.update(fold=k + 1, objective=m.objective, upper_bound=m.upper_bound, gap=m.gap, status=m.status,
                   time=wall, search=m.solver.settings.get("search_objective"),
                   milp=m.solver.settings.get("milp_status", "-"))
        nb_rows.append(row)
        lr_row = fold_metrics(lr, train, test)
        lr_row.update(fold=k + 1, gap=lr.gap, status=lr.status, time=lr_wall)
        lr_rows.append(lr_row)
        print(f"{name} fold {k + 1}: net benefit train AUNBC {row['train_aunbc']:.4f} test {row['test_aunbc']:.4f} "
              f"size {row['size']} objective {m.objective:.5f} bound {m.upper_bound:.5f} ({m.status}, "
              f"{wall:.0f}s; exact model: {row['milp']}); logistic train AUNBC {lr_row['train_aunbc']:.4f} "
              f"test {lr_row['test_aunbc']:.4f} size {lr_row['size']} ({lr.status}, {lr_wall:.0f}s)", flush=True)
    return nb_rows, lr_rows


def _ms(values, digits=3) -> str:
    v = np.asarray(values, float)
    return f"{v.mean():.{digits}f} ± {v.std(ddof=1):.{digits}f}" if len(v) > 1 else f"{v.mean():.{digits}f}"


def _size(values) -> str:
    v = np.asarray(values, float)
    return f"{v.mean():.1f} ({v.min():.0f}–{v.max():.0f})"


def set_table(name: str, nb: list, lr: list, c0: float = C0) -> pd.DataFrame:
    nbf, lrf = pd.DataFrame(nb), pd.DataFrame(lr)
    paper = PAPER[name]
    rows = []
    for label, key in (("Train AUNBC", "train_aunbc"), ("Test AUNBC", "test_aunbc"), ("Train AUROC", "train_auroc"),
                       ("Test AUROC", "test_auroc"), ("Train ECE", "train_ece"), ("Test ECE", "test_ece")):
        idx = ["train_aunbc", "test_aunbc", "train_auroc", "test_auroc", "train_ece", "test_ece"].index(key)
        rows.append({"metric": label, "net benefit (ours)": _ms(nbf[key]), "logistic (ours)": _ms(lrf[key]),
                     "RSS-DNB (paper)": f"{paper['RSS-DNB'][idx]:.3f}",
                     "RSS-DNB-SA (paper)": f"{paper['RSS-DNB-SA'][idx]:.3f}"})
    rows.append({"metric": "Size", "net benefit (ours)": _size(nbf["size"]), "logistic (ours)": _size(lrf["size"]),
                 "RSS-DNB (paper)": f"{paper['RSS-DNB'][6]:.1f}", "RSS-DNB-SA (paper)": f"{paper['RSS-DNB-SA'][6]:.1f}"})
    implied = {k: v[0] - c0 * v[6] for k, v in paper.items()}
    rows.append({"metric": f"Train AUNBC - {c0:g} x size", "net benefit (ours)": _ms(nbf["objective"], 4),
                 "logistic (ours)": _ms(lrf["train_aunbc"] - c0 * lrf["size"], 4),
                 "RSS-DNB (paper)": f"{implied['RSS-DNB']:.4f}", "RSS-DNB-SA (paper)": f"{implied['RSS-DNB-SA']:.4f}"})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="*", default=list(OUTCOME), choices=list(OUTCOME))
    ap.add_argument("--folds", type=int, default=10, help="how many of the 10 folds to run (from the first)")
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds per net-benefit fit (default 300)")
    ap.add_argument("--logistic-time", type=float, default=120.0, help="seconds per logistic fit (default 120)")
    ap.add_argument("--solver", default="appsi_highs", help="pyomo solver of the exact model ('none': local search)")
    ap.add_argument("--c0", type=float, default=C0, help=f"penalty per term (default {C0:g}, the paper's)")
    ap.add_argument("--format", default="simple", help="tabulate format (simple, github, ...)")
    args = ap.parse_args()
    solver = None if args.solver.lower() == "none" else args.solver
    folds = max(1, min(10, args.folds))
    summary = []
    for name in args.sets:
        nb, lr = run_set(name, folds, args.time_limit, args.logistic_time, solver, args.c0)
        print()
        print(f"{name} ({folds} of 10 folds)")
        print(tabulate(set_table(name, nb, lr, args.c0), headers="keys", tablefmt=args.format, showindex=False,
                       disable_numparse=True))
        print()
        nbf = pd.DataFrame(nb)
        best = max(v[0] for v in PAPER[name].values())
        summary.append({
            "data": name, "folds": folds, "train AUNBC": f"{nbf['train_aunbc'].mean():.4f}",
            "paper best": f"{best:.3f}",
            "target met": "yes" if round(nbf["train_aunbc"].mean(), 3) >= best else "NO",
            "objective": f"{nbf['objective'].mean():.4f}", "bound": f"{nbf['upper_bound'].mean():.4f}",
            "gap": f"{100 * nbf['gap'].mean():.2f}%", "certified": f"{(nbf['status'] == 'optimal').sum()}/{folds}",
            "time/fold (s)": f"{nbf['time'].mean():.0f}", "exact model": _statuses(nbf["milp"]),
        })
    print(tabulate(pd.DataFrame(summary), headers="keys", tablefmt=args.format, showindex=False,
                   disable_numparse=True))


if __name__ == "__main__":
    main()
