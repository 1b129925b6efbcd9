"""Side by side with FasterRisk (Liu et al., 2022): training loss, certificate, time, 5-fold CV AUC and CAL.

Data: the five data sets of Ustun & Rudin (2019) shipped with riskformula, and wdbc with
``threshold()`` on all 30 predictors (FasterRisk gets the quantile indicators of its own
``BinBinarizer``, fitted on each fit's training rows).  Both: model size ≤ 5, points −5…5.  Ours:
c0 = 1e-6, ``scale="fit"`` unless ``--scale`` says otherwise (with a real intercept, the default
with a fitted scale; ``--integer-intercept`` for whole ones), ``--time-limit`` seconds per fit.
FasterRisk: default settings, the first (lowest-loss) model of its pool.

FasterRisk pins numpy < 2, pandas 1.5.2 and scikit-learn 1.2.0, so it runs in an environment of
its own: ``benchmarks/.venv-fasterrisk`` (created with ``python -m venv`` and ``pip install
fasterrisk`` when missing; gitignored), through ``_fasterrisk_worker.py`` (files in, files out).
If that fails the table is printed without FasterRisk and a line says why.

Printed per set: training loss of both (full data), our gap, status, scale and time, FasterRisk's
multiplier and time, and the mean over 5 stratified folds (the same folds for both,
:func:`riskformula.tuning.stratified_folds`, seed 0; with ``--repeats R`` the mean over R such
CVs with seeds 0..R-1, and the CAL difference per repeat) of the test AUC and CAL (by score, Ustun &
Rudin, 2019), with each model's CAL floor: the mean CAL of outcomes drawn from the model's own test
risks, i.e. what a perfectly calibrated model with those scores would show.  Targets: our training loss ≤ FasterRisk's; CV AUC ≥ FasterRisk's − 0.005; CV CAL ≤
FasterRisk's + 0.005; our time per fit ≤ 120 s (gap reported).

    python benchmarks/peers.py                         # all six, 120 s per fit (long: ~2 h)
    python benchmarks/peers.py mammo wdbc --time-limit 60
    python benchmarks/peers.py --scale 1               # our fixed-scale model instead
    python benchmarks/peers.py --integer-intercept     # the fitted scale with a whole intercept
    python benchmarks/peers.py mammo --repeats 5       # 5 x 5-fold CV (fold seeds 0-4): less noise
    python benchmarks/peers.py wdbc --per-fold         # each fold's training loss, AUC and CAL
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure this checkout's riskformula
import riskformula as rf  # noqa: E402
from riskformula.design import build_design  # noqa: E402
from riskformula.reports import metrics  # noqa: E402
from riskformula.tuning import stratified_folds  # noqa: E402

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-fasterrisk"
WORKER = HERE / "_fasterrisk_worker.py"

# name: (formula for riskformula, FasterRisk binarizes the predictors)
SETS = {
    "breastcancer": ("Benign ~ .", False),
    "mammo": ("Malignant ~ .", False),
    "adult": ("Over50K ~ .", False),
    "mushroom": ("poisonous ~ .", False),
    "spambase": ("Spam ~ .", False),
    "wdbc": ('diagnosis == "M" ~ threshold(.)', True),
}
K, LB, UB, C0 = 5, -5, 5, 1e-6


# --- FasterRisk in its own environment ------------------------------------------------------

def fasterrisk_python() -> tuple[Path | None, str]:
    """The interpreter of FasterRisk's environment, created when missing; (None, why) on failure."""
    py = VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    try:
        if not py.exists():
            print(f"creating {VENV} with fasterrisk (once) ...", flush=True)
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, capture_output=True, text=True)
        check = subprocess.run([str(py), "-c", "import fasterrisk"], capture_output=True, text=True)
        if check.returncode != 0:
            subprocess.run([str(py), "-m", "pip", "install", "-q", "fasterrisk"], check=True,
                           capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        return None, (e.stderr or e.stdout or str(e)).strip().splitlines()[-1]
    except OSError as e:
        return None, str(e)
    return py, ""


def run_fasterrisk(py: Path, X: np.ndarray, names, y, fold, binarize: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.npz", Path(tmp) / "out.json"
        np.savez(src, X=X, y=y, fold=fold, names=np.asarray(names, dtype=str), binarize=int(binarize),
                 k=K, lb=LB, ub=UB)
        r = subprocess.run([str(py), str(WORKER), str(src), str(dst)], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "no output")
        return json.loads(dst.read_text())


# --- measures ----------------------------------------------------------------------------

def logistic_loss(y, z) -> float:
    return float(np.mean(np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z))))


def cal_floor(risk, score, draws: int = 200, seed: int = 0) -> float:
    """The CAL a perfectly calibrated model with these test risks and scores would show on average:
    outcomes drawn from the risks themselves.  CAL by score grows with the number of distinct
    scores and shrinks with the rows per score, so part of any model's CAL is this sampling floor."""
    rng = np.random.default_rng(seed)
    return float(np.mean([metrics.cal_by_score((rng.random(risk.size) < risk).astype(int), risk, score)
                          for _ in range(draws)]))


def fr_metrics(fit: dict, y_train, y_test=None) -> dict:
    m, b = fit["multiplier"], fit["intercept"]
    s_train = np.asarray(fit["train_score"])
    out = {"loss": logistic_loss(y_train, (b + s_train) / m)}
    if y_test is not None:
        s = np.asarray(fit["test_scores"][0])
        risk = 1 / (1 + np.exp(-(b + s) / m))
        out.update(auc=metrics.auc(y_test, s), cal=metrics.cal_by_score(y_test, risk, s), floor=cal_floor(risk, s))
    return out


def our_fit(formula, data, time_limit, scale, real_intercept=None):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.OptimalityGapWarning)
        m = rf.risk_score(formula, data, max_size=K, coef_range=(LB, UB), c0=C0, time_limit=time_limit,
                          scale=scale, real_intercept=real_intercept, progress=False)
    return m, time.perf_counter() - t0


def our_fold(formula, df, fold, f, time_limit, scale, real_intercept=None):
    m, wall = our_fit(formula, df[fold != f], time_limit, scale, real_intercept)
    test = df[fold == f]
    y = m.observed(test).to_numpy()
    s, risk = m.score(test).to_numpy(), m.predict(test).to_numpy()
    return {"auc": metrics.auc(y, s), "cal": metrics.cal_by_score(y, risk, s), "floor": cal_floor(risk, s), "wall": wall,
            "gap": m.gap, "scale": m.scale, "loss": m.loss}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(SETS))
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per fit of ours (default 120)")
    ap.add_argument("--scale", default="fit", help='our score scale: "fit" (default), a number or a list 1,2,4')
    ap.add_argument("--integer-intercept", action="store_true", help="our intercept in whole points")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=1,
                    help="repeat the CV with fold seeds 0..R-1 and average over all R x folds (default 1)")
    ap.add_argument("--jobs", type=int, default=1, help="our CV folds in parallel (joblib); times then overlap")
    ap.add_argument("--per-fold", action="store_true",
                    help="print each fold's training loss, test AUC and CAL for both")
    ap.add_argument("--format", default="simple", help="tabulate format (simple, github, ...)")
    args = ap.parse_args()
    scale = args.scale if args.scale == "fit" else [float(x) for x in args.scale.split(",")]
    real = False if args.integer_intercept else None
    py, why = fasterrisk_python()
    if py is None:
        print(f"FasterRisk is not available ({why}); showing riskformula only.", flush=True)
    rows = []
    for name in args.names:
        formula, binarize = SETS[name]
        df = rf.load_dataset(name)
        design = build_design(formula.replace("threshold(.)", "."), df)
        y = design.y.astype(int)
        fold_ids = [(r, f) for r in range(args.repeats) for f in range(args.folds)]
        splits = [(stratified_folds(y, args.folds, seed=r), f) for r, f in fold_ids]
        fr = None
        if py is not None:
            try:  # one FasterRisk run per repeat: its full-data fit is the same each time
                fr_runs = [run_fasterrisk(py, design.X, design.spec.columns, y, splits[r * args.folds][0], binarize)
                           for r in range(args.repeats)]
                fr = {"full": fr_runs[0]["full"],
                      "folds": [run["folds"][f] for run in fr_runs for f in range(args.folds)]}
            except Exception as e:  # noqa: BLE001 -- the benchmark reports it and goes on
                print(f"{name}: FasterRisk failed ({e}); showing riskformula only.", flush=True)
        m, wall = our_fit(formula, df, args.time_limit, scale, real)
        print(f"{name}: {m.certificate_line()}  scale {m.scale:g}, size {m.size}", flush=True)
        if args.jobs == 1:
            folds = [our_fold(formula, df, fold, f, args.time_limit, scale, real) for fold, f in splits]
        else:
            from joblib import Parallel, delayed
            folds = Parallel(n_jobs=args.jobs, backend="loky")(
                delayed(our_fold)(formula, df, fold, f, args.time_limit, scale, real) for fold, f in splits)
        row = {"data": name, "n": len(df), "loss": m.loss, "gap": m.gap, "status": m.status, "scale": m.scale,
               "time (s)": wall, "CV AUC": np.mean([f["auc"] for f in folds]),
               "CV CAL": np.mean([f["cal"] for f in folds]), "CAL floor": np.mean([f["floor"] for f in folds]),
               "max fold time": max(f["wall"] for f in folds),
               "max fold gap": max(f["gap"] for f in folds)}
        if fr is not None:
            full = fr_metrics(fr["full"], y)
            fr_folds = [fr_metrics(run, y[fold != f], y[fold == f]) for run, (fold, f) in zip(fr["folds"], splits)]
            row.update({"FR loss": full["loss"], "FR m": fr["full"]["multiplier"],
                        "FR time (s)": fr["full"]["seconds"],
                        "FR CV AUC": np.mean([f["auc"] for f in fr_folds]),
                        "FR CV CAL": np.mean([f["cal"] for f in fr_folds]),
                        "FR CAL floor": np.mean([f["floor"] for f in fr_folds])})
            if args.per_fold:
                print(tabulate([{"seed": split[0], "fold": split[1], "loss": f"{a['loss']:.5f}",
                                 "FR loss": f"{b['loss']:.5f}", "scale": f"{a['scale']:g}",
                                 "AUC": f"{a['auc']:.3f}", "FR AUC": f"{b['auc']:.3f}",
                                 "CAL": f"{100 * a['cal']:.1f}%", "FR CAL": f"{100 * b['cal']:.1f}%"}
                                for split, a, b in zip(fold_ids, folds, fr_folds)],
                               headers="keys", tablefmt=args.format, disable_numparse=True), flush=True)
            if args.repeats > 1:  # how much of the CAL difference is the choice of folds
                d = np.array([a["cal"] - b["cal"] for a, b in zip(folds, fr_folds)]).reshape(args.repeats, -1).mean(1)
                print(f"  CV CAL ours - FasterRisk by repeat: {', '.join(f'{100 * x:+.2f}' for x in d)} points "
                      f"(mean {100 * d.mean():+.2f})", flush=True)
        rows.append(row)
        print(f"  ours: loss {row['loss']:.5f}, CV AUC {row['CV AUC']:.3f}, CV CAL {100 * row['CV CAL']:.1f}%"
              + (f"; FasterRisk: loss {row['FR loss']:.5f} (m {row['FR m']:.2f}), CV AUC {row['FR CV AUC']:.3f}, "
                 f"CV CAL {100 * row['FR CV CAL']:.1f}%" if fr is not None else ""), flush=True)
    print()
    print(tabulate(_table(rows), headers="keys", tablefmt=args.format, showindex=False, disable_numparse=True))
    if any("FR loss" in r for r in rows):
        print("\nTargets: loss <= FR loss; CV AUC >= FR CV AUC - 0.005; CV CAL <= FR CV CAL + 0.005; time <= 120 s.")


def _table(rows) -> pd.DataFrame:
    out = []
    for r in rows:
        have = "FR loss" in r
        met = ([r["loss"] <= r["FR loss"] + 1e-9, r["CV AUC"] >= r["FR CV AUC"] - 0.005,
                r["CV CAL"] <= r["FR CV CAL"] + 0.005] if have else [])
        met.append(r["time (s)"] <= 120 and r["max fold time"] <= 120)
        out.append({
            "data": r["data"], "loss": f"{r['loss']:.5f}", "FR loss": f"{r['FR loss']:.5f}" if have else "-",
            "gap": f"{100 * r['gap']:.2f}%", "status": r["status"], "scale": f"{r['scale']:g}",
            "FR m": f"{r['FR m']:.2f}" if have else "-",
            "time (s)": f"{r['time (s)']:.0f}", "FR time (s)": f"{r['FR time (s)']:.1f}" if have else "-",
            "CV AUC": f"{r['CV AUC']:.3f}", "FR CV AUC": f"{r['FR CV AUC']:.3f}" if have else "-",
            "CV CAL": f"{100 * r['CV CAL']:.1f}%", "FR CV CAL": f"{100 * r['FR CV CAL']:.1f}%" if have else "-",
            "CAL floor": f"{100 * r['CAL floor']:.1f}%",
            "FR CAL floor": f"{100 * r['FR CAL floor']:.1f}%" if have else "-",
            "fold time (max)": f"{r['max fold time']:.1f}", "fold gap (max)": f"{100 * r['max fold gap']:.2f}%",
            "targets met": "all" if all(met) else f"{sum(met)}/{len(met)}"})
    return pd.DataFrame(out)


if __name__ == "__main__":
    main()
