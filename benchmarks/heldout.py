"""Held-out accuracy beside FasterRisk (Liu et al., 2022): repeated stratified 5-fold CV on data sets
that ship inside packages, not the five binarized sets of Ustun & Rudin (2019) bundled with riskformula.

Data (each built as a DataFrame with a 0/1 outcome ``y`` and numeric predictors):

* ``wdbc``   riskformula's bundled copy (``rf.load_dataset("wdbc")``): y = diagnosis == "M", the 30
  real-valued measurements (peers.py's ``diagnosis == "M" ~ threshold(.)``);
* ``fair``   statsmodels ``fair``: y = affairs > 0; rate_marriage, age, yrs_married, children,
  religious, educ, occupation, occupation_husb (ordinal / counts);
* ``anes96`` statsmodels ``anes96``: y = vote; popul, TVnews, selfLR, ClinLR, DoleLR, PID, age, educ,
  income (logpopul dropped: a transform of popul, which thresholds make redundant);
* ``rossi``  lifelines ``load_rossi()``: y = arrest; fin, age, race, wexp, mar, paro, prio (week,
  the follow-up time, dropped);
* ``gbsg2``  lifelines ``load_gbsg2()``: y = cens; horTh (yes 1, no 0), age, menostat (Post 1, Pre
  0), tsize, tgrade (I 1 < II 2 < III 3), pnodes, progrec, estrec (time dropped).

lifelines is not a dependency of riskformula; without it rossi and gbsg2 are skipped with a note
(``pip install lifelines``).

Ours: ``rf.risk_score("y ~ threshold(.)", train, max_size=K, coef_range=(-5, 5), scale="fit",
time_limit=T)`` (``threshold(.)`` thresholds every numeric predictor with more than two values;
binary ones enter as they are); ``--threshold-args "grid=10"`` makes it ``y ~ threshold(., grid=10)``,
the arguments passed on to every threshold.  FasterRisk: the same numeric predictors, binarized by
its own ``BinBinarizer`` fitted on each training split, ``RiskScoreOptimizer`` with k = K and points
−5…5, default settings, the pool's first model (as in peers.py).  FasterRisk pins numpy < 2 and
pandas 1.5.2, so it runs in ``benchmarks/.venv-fasterrisk`` (created when missing with ``pip install
fasterrisk``, about a minute; gitignored) through ``_fasterrisk_worker.py``, one call per fold.

Folds: ``riskformula.tuning.stratified_folds(y, 5, seed)`` for each seed of ``--seeds`` (default 0
1), the same folds for both tools.  Per fold: test AUC and CAL by score
(:mod:`riskformula.reports.metrics`), the training mean log loss of both (ours ``m.loss``,
FasterRisk's from its multiplier, intercept and scores), our status, gap, wall time, card rows
(``len(m.scorecard.items)``: each threshold cut with points is one row) and terms (``m.size``), and
FasterRisk's multiplier, terms and seconds.

``--size cv``: our size is chosen inside each training split by ``rf.cv_risk_score(formula, train,
sizes=range(1, 9), folds=5, rule="1se", scale="fit", time_limit=T_inner)`` (every one of its fits,
8 sizes x 5 folds plus its refit, has ``time_limit=T_inner``, ``--inner-time-limit``, default
``--time-limit``); our model is the chosen size refitted on the training split with
``--time-limit`` (warm-started from the inner refit), and FasterRisk gets k = the chosen size on
that fold (the same size limit).  The script stops with a message when this checkout has no
``rf.cv_risk_score``.

Every finished fold is one JSON line in ``benchmarks/heldout_results.jsonl``, keyed by (set, seed,
fold, config); the config string holds the formula with its threshold arguments, the size mode, the
time limit(s) and ``--tag``.  A rerun skips the folds already there (so a run can be stopped,
resumed, or extended with more seeds or sets); ``--fresh`` refits them and appends the new lines
(the last line of a key wins).  Folds whose FasterRisk call failed are stored with the error and
refitted on the next run.

Printed (github tables, also written to ``benchmarks/heldout_results.txt``), per set and config over
all folds x seeds of this run: rows, mean test AUC ours / FasterRisk and the paired difference
ours − FR mean ± SE (SE = sd(diff, ddof=1) / sqrt(folds)), the same for CAL (percentage points),
mean training loss ours / FR and in how many folds ours ≤ FR (to 1e-9), certified folds, median
gap, mean card rows and terms, mean size limit K, mean times.  Last, per config: the mean AUC
difference over the sets and how many sets have diff ≥ −SE.

    python benchmarks/heldout.py                                  # all five sets, seeds 0 1, K=5, 30 s
    python benchmarks/heldout.py rossi --seeds 0 --time-limit 5   # a quick check (~1 min)
    python benchmarks/heldout.py --threshold-args "grid=10" --jobs 2
    python benchmarks/heldout.py fair anes96 --seeds 0 1 2 3 4    # extend: only new folds are fitted
    python benchmarks/heldout.py --size cv --inner-time-limit 5   # size by inner CV (needs rf.cv_risk_score)
    python benchmarks/heldout.py --tag after-fix --fresh          # refit, labelled "after-fix"
    python benchmarks/heldout.py --show-all                       # every cached config of these sets

Cost: with K=5 one fold is one fit of ours (it stops at the time limit unless certified earlier) plus
a FasterRisk call of 1-3 s.  Measured 2026-11-26 (seed 0, fold 0, T=30, one process on the 2-core
machine): 32-35 s per fold on every set, none certified within 30 s; so the default 5 sets x 2 seeds
x 5 folds take about 28 min in one process, about half that with ``--jobs 2``.  ``--size cv`` makes
our part up to 41 fits of T_inner seconds per fold.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure this checkout's riskformula
import riskformula as rf  # noqa: E402
from peers import LB, UB, WORKER, fasterrisk_python, logistic_loss  # noqa: E402
from riskformula.reports import metrics  # noqa: E402
from riskformula.tuning import stratified_folds  # noqa: E402

HERE = Path(__file__).resolve().parent
CACHE = HERE / "heldout_results.jsonl"
TEXT = HERE / "heldout_results.txt"
FOLDS = 5
CV_SIZES = range(1, 9)
LIFELINES = ("rossi", "gbsg2")


# --- data ------------------------------------------------------------------------------------

def _wdbc() -> pd.DataFrame:
    df = rf.load_dataset("wdbc")
    return pd.concat([(df.pop("diagnosis") == "M").astype(int).rename("y"), df], axis=1)


def _fair() -> pd.DataFrame:
    import statsmodels.api as sm
    d = sm.datasets.fair.load_pandas().data
    cols = ["rate_marriage", "age", "yrs_married", "children", "religious", "educ", "occupation", "occupation_husb"]
    return pd.concat([(d["affairs"] > 0).astype(int).rename("y"), d[cols]], axis=1)


def _anes96() -> pd.DataFrame:
    import statsmodels.api as sm
    d = sm.datasets.anes96.load_pandas().data
    cols = ["popul", "TVnews", "selfLR", "ClinLR", "DoleLR", "PID", "age", "educ", "income"]
    return pd.concat([d["vote"].astype(int).rename("y"), d[cols]], axis=1)


def _rossi() -> pd.DataFrame:
    from lifelines.datasets import load_rossi
    d = load_rossi()
    cols = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]
    return pd.concat([d["arrest"].astype(int).rename("y"), d[cols]], axis=1)


def _gbsg2() -> pd.DataFrame:
    from lifelines.datasets import load_gbsg2
    d = load_gbsg2()
    out = pd.DataFrame({"y": d["cens"].astype(int),
                        "horTh": d["horTh"].map({"no": 0, "yes": 1}),
                        "age": d["age"],
                        "menostat": d["menostat"].map({"Pre": 0, "Post": 1}),
                        "tsize": d["tsize"],
                        "tgrade": d["tgrade"].map({"I": 1, "II": 2, "III": 3}),
                        "pnodes": d["pnodes"], "progrec": d["progrec"], "estrec": d["estrec"]})
    if out.isna().any().any():
        raise ValueError("gbsg2: a string column has a level the encoding does not know")
    return out


SETS = {"wdbc": _wdbc, "fair": _fair, "anes96": _anes96, "rossi": _rossi, "gbsg2": _gbsg2}


def load(name: str) -> pd.DataFrame:
    df = SETS[name]().reset_index(drop=True)
    return df.astype({c: float for c in df.columns if c != "y"})


# --- one fold ----------------------------------------------------------------------------------

def fasterrisk_fold(py: Path, X: pd.DataFrame, y: np.ndarray, fold: np.ndarray, f: int, k: int) -> dict:
    """FasterRisk fitted on the rows with ``fold != f`` (its BinBinarizer on them), scored on ``fold == f``."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.npz", Path(tmp) / "out.json"
        np.savez(src, X=X.to_numpy(float), y=y, fold=fold, names=np.asarray(X.columns, dtype=str), binarize=1,
                 k=k, lb=LB, ub=UB, full=0, only=np.asarray([f]))
        r = subprocess.run([str(py), str(WORKER), str(src), str(dst)], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "no output")
        fit = json.loads(dst.read_text())["folds"][0]
    m, b = fit["multiplier"], fit["intercept"]
    y_train, y_test = y[fold != f], y[fold == f]
    s = np.asarray(fit["test_scores"][0])
    risk = 1 / (1 + np.exp(-(b + s) / m))
    return {"auc": metrics.auc(y_test, s), "cal": metrics.cal_by_score(y_test, risk, s),
            "loss": logistic_loss(y_train, (b + np.asarray(fit["train_score"])) / m),
            "multiplier": m, "intercept": b, "terms": len(fit["points"]), "points": fit["points"],
            "time": fit["seconds"]}


def run_fold(name: str, df: pd.DataFrame, seed: int, fold: np.ndarray, f: int, conf: dict, py: str) -> dict:
    """Both tools on one fold: the cache record (without the key fields the caller adds)."""
    train, test = df[fold != f], df[fold == f]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.OptimalityGapWarning)
        if conf["size"] == "cv":
            cv = rf.cv_risk_score(conf["formula"], train, sizes=CV_SIZES, folds=FOLDS, rule="1se",
                                  time_limit=conf["inner_time_limit"], scale="fit", coef_range=(LB, UB),
                                  progress=False)
            # the chosen size refitted with the outer time limit (cv.model had the inner one), from it
            k = int(cv.size)
            m = rf.risk_score(conf["formula"], train, max_size=k, coef_range=(LB, UB), scale="fit",
                              time_limit=conf["time_limit"], initial=cv.model, progress=False)
        else:
            k = int(conf["size"])
            m = rf.risk_score(conf["formula"], train, max_size=k, coef_range=(LB, UB), scale="fit",
                              time_limit=conf["time_limit"], progress=False)
    wall = time.perf_counter() - t0
    y = m.observed(test).to_numpy()
    s, risk = m.score(test).to_numpy(), m.predict(test).to_numpy()
    ours = {"auc": metrics.auc(y, s), "cal": metrics.cal_by_score(y, risk, s), "loss": float(m.loss),
            "status": m.status, "gap": float(m.gap), "time": wall, "card_rows": len(m.scorecard.items),
            "terms": int(m.size), "scale": float(m.scale)}
    rec = {"n": len(df), "n_train": len(train), "k": k, "ours": ours, "fr": None}
    X = df.drop(columns="y")
    try:
        rec["fr"] = fasterrisk_fold(Path(py), X, df["y"].to_numpy(int), fold, f, k)
    except Exception as e:  # noqa: BLE001 -- recorded; the fold is refitted on the next run
        rec["fr_error"] = f"{type(e).__name__}: {e}"
    return rec


# --- cache -------------------------------------------------------------------------------------

def config_string(conf: dict) -> str:
    parts = [conf["formula"], f"size={conf['size']}"]
    # with --size cv, --time-limit only supplies the default of the inner one, which is what the fits use
    parts.append(f"T_inner={conf['inner_time_limit']:g}" if conf["size"] == "cv" else f"T={conf['time_limit']:g}")
    if conf["tag"]:
        parts.append(f"tag={conf['tag']}")
    return " | ".join(parts)


def read_cache() -> dict:
    """(set, seed, fold, config) -> record; the last line of a key wins."""
    out = {}
    if CACHE.exists():
        for line in CACHE.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                out[(r["set"], r["seed"], r["fold"], r["config"])] = r
    return out


# --- table -------------------------------------------------------------------------------------

def _mean_se(d) -> tuple[float, float]:
    d = np.asarray(d, float)
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan")


def _pm(mean: float, se: float, digits: int, scale: float = 1.0) -> str:
    se_txt = "n/a" if np.isnan(se) else f"{scale * se:.{digits}f}"
    return f"{scale * mean:+.{digits}f} ± {se_txt}"


def summarize(recs: list[dict]) -> tuple[dict, float, float]:
    """One table row for the records of one set and config; also the AUC difference and its SE."""
    ok = [r for r in recs if r["fr"] is not None]
    o = {key: np.array([r["ours"][key] for r in ok], float)
         for key in ("auc", "cal", "loss", "gap", "time", "card_rows", "terms")}
    fr = {key: np.array([r["fr"][key] for r in ok], float) for key in ("auc", "cal", "loss", "time")}
    d_auc, se_auc = _mean_se(o["auc"] - fr["auc"])
    d_cal, se_cal = _mean_se(o["cal"] - fr["cal"])
    row = {"set": ok[0]["set"], "config": ok[0]["config"], "n": ok[0]["n"],
           "folds": f"{len(ok)}" + (f" (+{len(recs) - len(ok)} FR failed)" if len(ok) < len(recs) else ""),
           "AUC": f"{o['auc'].mean():.4f}", "FR AUC": f"{fr['auc'].mean():.4f}",
           "ΔAUC ± SE": _pm(d_auc, se_auc, 4),
           "CAL": f"{100 * o['cal'].mean():.2f}%", "FR CAL": f"{100 * fr['cal'].mean():.2f}%",
           "ΔCAL ± SE (pts)": _pm(d_cal, se_cal, 2, 100),
           "loss": f"{o['loss'].mean():.5f}", "FR loss": f"{fr['loss'].mean():.5f}",
           "loss ≤ FR": f"{int(np.sum(o['loss'] <= fr['loss'] + 1e-9))} of {len(ok)}",
           "certified": f"{sum(r['ours']['status'] == 'optimal' for r in ok)} of {len(ok)}",
           "gap (median)": f"{100 * np.median(o['gap']):.2f}%",
           "card rows": f"{o['card_rows'].mean():.1f}", "terms": f"{o['terms'].mean():.1f}",
           "K": f"{np.mean([r['k'] for r in ok]):g}",
           "time (s)": f"{o['time'].mean():.1f}", "FR time (s)": f"{fr['time'].mean():.1f}"}
    return row, d_auc, se_auc


def report(recs: list[dict], names: list[str]) -> str:
    groups: dict[tuple, list] = {}
    for r in recs:
        groups.setdefault((r["config"], r["set"]), []).append(r)
    configs = list(dict.fromkeys(c for c, _ in groups))
    blocks = []
    for config in configs:
        rows, diffs = [], []
        for name in names:
            g = groups.get((config, name))
            if not g or all(r["fr"] is None for r in g):
                continue
            row, d, se = summarize(g)
            del row["config"]
            rows.append(row)
            diffs.append((d, se))
        if not rows:
            continue
        met = sum(d >= -se if not np.isnan(se) else d >= 0 for d, se in diffs)
        blocks.append(f"config: {config}\n\n"
                      + tabulate(rows, headers="keys", tablefmt="github", disable_numparse=True)
                      + f"\n\nMean AUC difference (ours − FasterRisk) over {len(diffs)} set(s): "
                      f"{np.mean([d for d, _ in diffs]):+.4f}; sets with diff ≥ −SE: {met} of {len(diffs)}.")
    return "\n\n".join(blocks)


# --- main --------------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="*", default=list(SETS), help=f"data sets (default all: {' '.join(SETS)})")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="fold seeds (default 0 1)")
    ap.add_argument("--size", default="5", help='size limit K of both (default 5), or "cv": ours by inner CV')
    ap.add_argument("--time-limit", type=float, default=30.0, help="seconds per fit of ours (default 30)")
    ap.add_argument("--inner-time-limit", type=float, default=None,
                    help="--size cv: time_limit of each fit inside cv_risk_score (default --time-limit)")
    ap.add_argument("--threshold-args", default="", help='e.g. "grid=10" for y ~ threshold(., grid=10)')
    ap.add_argument("--jobs", type=int, default=1, help="folds of a set in parallel (processes; times overlap)")
    ap.add_argument("--fresh", action="store_true", help="refit folds already in the cache")
    ap.add_argument("--tag", default="", help="a label that becomes part of the config (cache key and table)")
    ap.add_argument("--show-all", action="store_true",
                    help="tabulate every cached config and seed of these sets, not only this run's")
    args = ap.parse_args()

    unknown = [s for s in args.sets if s not in SETS]
    if unknown:
        ap.error(f"unknown set(s) {unknown}; choose from {list(SETS)}")
    if args.size != "cv" and not (args.size.isdigit() and int(args.size) >= 1):
        ap.error(f'--size must be a whole number >= 1 or "cv"; got {args.size!r}')
    if args.size == "cv" and not hasattr(rf, "cv_risk_score"):
        sys.exit("--size cv needs rf.cv_risk_score, which this checkout of riskformula does not have yet "
                 f"({Path(rf.__file__).parent}); merge the branch that adds it, or use --size 5.")
    targs = args.threshold_args.strip().lstrip(",").strip()
    conf = {"formula": f"y ~ threshold(.{', ' + targs if targs else ''})", "size": args.size,
            "time_limit": args.time_limit, "tag": args.tag,
            "inner_time_limit": args.inner_time_limit if args.inner_time_limit is not None else args.time_limit}
    config = config_string(conf)
    try:
        import lifelines  # noqa: F401
    except ImportError:
        skipped = [s for s in args.sets if s in LIFELINES]
        if skipped:
            print(f"lifelines is not installed: skipping {', '.join(skipped)} (pip install lifelines).", flush=True)
        args.sets = [s for s in args.sets if s not in LIFELINES]

    py, why = fasterrisk_python()
    if py is None:
        sys.exit(f"FasterRisk is not available ({why}); this benchmark compares with it, so nothing was run.")
    cache = {} if args.fresh else read_cache()
    print(f"config: {config}", flush=True)
    for name in args.sets:
        df = load(name)
        y = df["y"].to_numpy(int)
        tasks = []
        for seed in args.seeds:
            fold = stratified_folds(y, FOLDS, seed)
            for f in range(FOLDS):
                r = cache.get((name, seed, f, config))
                if r is None or r["fr"] is None:
                    tasks.append((seed, fold, f))
        done = len(args.seeds) * FOLDS - len(tasks)
        print(f"{name}: {len(df)} rows, {df.shape[1] - 1} predictors, {y.mean():.1%} events; "
              f"{len(tasks)} fold(s) to fit, {done} cached", flush=True)
        if not tasks:
            continue
        calls = [(name, df, seed, fold, f, conf, str(py)) for seed, fold, f in tasks]
        if args.jobs == 1:
            results = ((c[2], c[4], run_fold(*c)) for c in calls)
        else:
            from joblib import Parallel, delayed
            run = Parallel(n_jobs=args.jobs, backend="loky", return_as="generator_unordered")
            results = run(delayed(_numbered)(c) for c in calls)
        for seed, f, rec in results:
            rec = {"set": name, "seed": seed, "fold": f, "config": config, **rec}
            with CACHE.open("a") as fh:
                fh.write(json.dumps(rec) + "\n")
            cache[(name, seed, f, config)] = rec
            o, fr = rec["ours"], rec["fr"]
            print(f"  seed {seed} fold {f}: ours AUC {o['auc']:.4f} CAL {100 * o['cal']:.2f}% loss {o['loss']:.5f} "
                  f"{o['status']} gap {100 * o['gap']:.2f}% {o['time']:.1f} s, {o['card_rows']} rows, K={rec['k']}; "
                  + (f"FR AUC {fr['auc']:.4f} CAL {100 * fr['cal']:.2f}% loss {fr['loss']:.5f} "
                     f"m {fr['multiplier']:.2f} {fr['time']:.1f} s" if fr else f"FR failed: {rec['fr_error']}"),
                  flush=True)

    if args.show_all:
        recs = [r for r in read_cache().values() if r["set"] in args.sets]
    else:
        recs = [cache[(name, seed, f, config)] for name in args.sets for seed in args.seeds for f in range(FOLDS)
                if (name, seed, f, config) in cache]
    text = report(recs, args.sets)
    header = (f"python benchmarks/heldout.py {shlex.join(sys.argv[1:])}\n"
              f"{time.strftime('%Y-%m-%d %H:%M')}; seeds {' '.join(map(str, args.seeds))}"
              f"{' (this run)' if not args.show_all else ' (this run; --show-all: every cached seed)'}, "
              f"{FOLDS} folds\n\n")
    print()
    print(text)
    TEXT.write_text(header + text + "\n")


def _numbered(call: tuple) -> tuple:
    return call[2], call[4], run_fold(*call)


if __name__ == "__main__":
    main()
