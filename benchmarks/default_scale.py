"""Which score scale should ``risk_score`` use by default? Held-out measurement, as the ``threshold()``
default grid was chosen (``benchmarks/auto_grid.py``).

For each data set and each stratified fold (``riskformula.tuning.stratified_folds(y, 5, seed)``), the
same formula is fitted at ``scale=1`` (one point is one logit, Ustun & Rudin, 2019: today's default)
and at ``scale="fit"`` (the points and a real multiplier chosen together, Liu et al., 2022), with
the same size, points range and time limit; the held-out rows give the mean log loss, AUC and CAL
by score (:mod:`riskformula.reports.metrics`). The table prints the mean per set and the paired
difference ("fit" − 1) with its standard error over folds, beside each setting's certified fits
and seconds.

Data: the bundled RiskSLIM sets (``y ~ .``, items already binary; adult subsampled to 3 000 rows,
stratified, seed 0, to keep a fold's fit within the limit) and wdbc with ``threshold(., grid=10)``
(real-valued predictors).

Run from the repository root::

    PYTHONPATH=. python benchmarks/default_scale.py                   # every set, 5 folds, 20 s a fit
    PYTHONPATH=. python benchmarks/default_scale.py --sets mammo --time-limit 10
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd

import riskformula as rf
from riskformula.reports.metrics import auc, cal_by_score, log_loss
from riskformula.tuning import stratified_folds

SETS = {
    "breastcancer": ("Benign ~ .", lambda: rf.load_dataset("breastcancer")),
    "mammo": ("Malignant ~ .", lambda: rf.load_dataset("mammo")),
    "mushroom": ("poisonous ~ .", lambda: rf.load_dataset("mushroom")),
    "adult": ("Over50K ~ .", lambda: _subsample(rf.load_dataset("adult"), "Over50K", 3000)),
    "wdbc": ('diagnosis == "M" ~ threshold(., grid=10)', lambda: rf.load_dataset("wdbc")),
}


def _subsample(df: pd.DataFrame, outcome: str, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    y = df[outcome].to_numpy()
    keep = np.concatenate([rng.choice(np.flatnonzero(y == v), int(round(n * np.mean(y == v))), replace=False)
                           for v in np.unique(y)])
    return df.iloc[np.sort(keep)].reset_index(drop=True)


def run(sets, folds: int, seed: int, max_size: int, time_limit: float) -> pd.DataFrame:
    rows = []
    for name in sets:
        formula, load = SETS[name]
        df = load()
        probe = rf.risk_score(formula, df.head(200), max_size=1, time_limit=5, node_limit=1)
        y = probe.observed(df).to_numpy()
        fold = stratified_folds(y, folds, seed)
        for k in range(folds):
            train, test = df[fold != k], df[fold == k]
            for scale in (1, "fit"):
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m = rf.risk_score(formula, train, max_size=max_size, coef_range=(-5, 5), scale=scale,
                                      time_limit=time_limit)
                secs = time.perf_counter() - t0
                yt, risk, score = m.observed(test).to_numpy(), m.predict(test).to_numpy(), m.score(test).to_numpy()
                rows.append({"set": name, "fold": k, "scale": str(scale), "log_loss": log_loss(yt, risk),
                             "auc": auc(yt, score), "cal": cal_by_score(yt, risk, score),
                             "certified": m.status == "optimal", "seconds": secs, "fitted_scale": m.scale})
                print(f"{name} fold {k} scale={scale}: loss {rows[-1]['log_loss']:.4f} AUC {rows[-1]['auc']:.4f} "
                      f"{m.status} {secs:.1f} s (m = {m.scale:g})", flush=True)
    return pd.DataFrame(rows)


def table(res: pd.DataFrame) -> str:
    out = []
    for name, g in res.groupby("set", sort=False):
        one, fit = g[g.scale == "1"].set_index("fold"), g[g.scale == "fit"].set_index("fold")
        row = {"set": name, "folds": len(one)}
        for col, digits in (("log_loss", 4), ("auc", 4), ("cal", 4)):
            d = (fit[col] - one[col]).to_numpy()
            se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
            row[f"{col} (1)"] = f"{one[col].mean():.{digits}f}"
            row[f"{col} (fit)"] = f"{fit[col].mean():.{digits}f}"
            row[f"Δ{col} ± SE"] = f"{d.mean():+.{digits}f} ± {se:.{digits}f}"
        row["certified (1 / fit)"] = f"{int(one.certified.sum())} / {int(fit.certified.sum())}"
        row["s (1 / fit)"] = f"{one.seconds.median():.1f} / {fit.seconds.median():.1f}"
        row["m (fit, median)"] = f"{fit.fitted_scale.median():.3g}"
        out.append(row)
    return pd.DataFrame(out).to_markdown(index=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-size", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "default_scale_results.txt"))
    args = ap.parse_args()
    start = time.strftime("%Y-%m-%d %H:%M")
    load0 = os.getloadavg()[0]
    res = run(args.sets, args.folds, args.seed, args.max_size, args.time_limit)
    text = (f"riskformula {rf.__version__}; started {start}; {args.folds} folds, seed {args.seed}, max_size "
            f"{args.max_size}, points -5..5, time limit {args.time_limit:g} s; load average {load0:.1f} at the "
            f"start, {os.getloadavg()[0]:.1f} at the end\n\n" + table(res) + "\n")
    print(text)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
