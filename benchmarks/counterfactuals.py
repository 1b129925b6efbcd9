"""Counterfactual explanations: speed, validity and optimality on adult and wdbc, beside DiCE.

For each data set a risk score is fitted (adult: ``Over50K ~ .``, size ≤ 5; wdbc: every numeric
column thresholded, ``threshold(., grid=5)``, size ≤ 6, points 0–3), then 1 000 people who do not
meet the target ask for counterfactuals (adult: P(income > 50K) ≥ 50 %, with sex, race and
nativity immutable; wdbc: risk of malignancy ≤ 20 %).  wdbc has 569 rows, so its 1 000 people are
drawn with replacement from the rows above the target.  Reported per setting: median and max
time per person (the person's options and the search; the setup shared by the batch is shown
apart), validity (every counterfactual re-scored by ``predict``), mean number of changed features
and mean cost (scaled L1: |Δ| / median absolute deviation for numeric variables, 1 per changed
0/1 item or one-hot group).  Optimality: the cheapest cost equals a brute-force enumeration of
every combination of regions on a sample of people.  DiCE (Mothilal et al. 2020, ``dice-ml``, its
default "random" method) runs on the same people in whatever Python has it (``--dice-python``,
e.g. a separate virtual environment: ``python -m venv --system-site-packages /tmp/dice-venv &&
/tmp/dice-venv/bin/pip install dice-ml``).

    python benchmarks/counterfactuals.py                       # both data sets, 1 000 people each
    python benchmarks/counterfactuals.py wdbc --people 200     # quicker
    python benchmarks/counterfactuals.py --dice-python /tmp/dice-venv/bin/python
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import riskformula as rf  # noqa: E402

ADULT_GROUPS = {
    "education": ["HSDiploma", "ProfVocOrAS", "Bachelors", "Graduate", "NoHS", None],
    "sector": ["EmployedInPrivateSector", "EmployedInPublicSector", "SelfEmployedNotInc", "SelfEmployedInc", None],
    "job": ["JobManagerial", "JobAdministrative", "JobArmedForces", "JobService", "JobSkilledSpecialty",
            "JobAgriculture", None],
    "native": ["NativeUSorCanada", "NativeImmigrant", None],
}
CASES = {
    # node limits, not time limits: the same score (and so the same people) on any machine
    "adult": dict(formula="Over50K ~ .", fit=dict(max_size=5, coef_range=(-5, 5), node_limit=2000, time_limit=600),
                  target=0.5, goal="above", groups=ADULT_GROUPS,
                  immutable=["Male", "Female", "White", "Black", "OtherRace", "NativeUSorCanada", "NativeImmigrant"]),
    "wdbc": dict(formula='diagnosis == "M" ~ threshold(., grid=5)', fit=dict(max_size=6, coef_range=(0, 3),
                                                                             node_limit=2000, time_limit=600),
                 target=0.2, goal="below", groups=None, immutable=[]),
}


# --------------------------------------------------------------------------------------
# an independent cost function and brute force (no code shared with the package)
# --------------------------------------------------------------------------------------

def decimals(x: np.ndarray) -> int:
    for d in range(7):
        if np.allclose(x, np.round(x, d), rtol=0, atol=1e-9 * max(1.0, float(np.abs(x).max()))):
            return d
    return 6


class Pricing:
    """Features of a data set (variables, or one-hot groups) and the cost of moving between rows."""

    def __init__(self, train: pd.DataFrame, variables: list, groups: dict):
        self.groups = {g: [c for c in cols if c is not None] for g, cols in (groups or {}).items()}
        grouped = {c for cols in self.groups.values() for c in cols}
        self.single = [v for v in variables if v not in grouped]
        self.unit = {}
        for v in self.single:
            x = train[v].to_numpy(float)
            if len(np.unique(x)) > 2:
                mad = float(np.median(np.abs(x - np.median(x))))
                self.unit[v] = mad if mad > 0 else float(np.std(x))

    def features(self):
        return self.single + list(self.groups)

    def changed(self, a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
        """Which features differ between rows of ``a`` and ``b`` (aligned)."""
        out = {}
        for v in self.single:
            out[v] = ~np.isclose(a[v].to_numpy(float), b[v].to_numpy(float), rtol=0, atol=1e-9)
        for g, cols in self.groups.items():
            out[g] = (a[cols].to_numpy(float) != b[cols].to_numpy(float)).any(axis=1)
        return pd.DataFrame(out, index=a.index)

    def cost(self, a: pd.DataFrame, b: pd.DataFrame) -> np.ndarray:
        ch = self.changed(a, b)
        c = np.zeros(len(a))
        for v in ch.columns:
            if v in self.unit:
                c += np.abs(a[v].to_numpy(float) - b[v].to_numpy(float)) / self.unit[v]
            else:
                c += ch[v].to_numpy()
        return c


def brute_force(model, train, person: pd.Series, pricing: Pricing, groups: dict, immutable: list,
                target: float, goal: str) -> float:
    """Cheapest cost over every combination of the score's regions (inf when none meets the target)."""
    coef = model.coef
    cuts: dict = {}
    for _, r in model.thresholds.iterrows():
        cuts.setdefault(r["variable"], []).append(float(r["cut"]))
    used_cols = {c for c, p in coef.items() if p != 0}
    choices = []  # per feature: list of {column: value}
    for g, cols in (groups or {}).items():
        members = [c for c in cols if c is not None]
        if not set(members) & used_cols or set(members) & set(immutable):
            continue
        opts = [{c: int(c == m) for c in members} for m in members]
        if None in cols:
            opts.append({c: 0 for c in members})
        choices.append(opts)
    grouped = {c for cols in (groups or {}).values() for c in cols if c is not None}
    for v in pricing.single:
        if v in grouped or v in immutable:
            continue
        if v in cuts:
            x = train[v].to_numpy(float)
            d, lo_all, hi_all = decimals(x), x.min(), x.max()
            step = 10.0 ** -d
            edges = [-np.inf] + sorted(cuts[v]) + [np.inf]
            opts = [{v: float(person[v])}]
            for a, b in zip(edges, edges[1:]):
                lo = lo_all if a == -np.inf else max(lo_all, (np.floor(a / step + 1e-9) + 1) * step)
                hi = hi_all if b == np.inf else min(hi_all, np.floor(b / step + 1e-9) * step)
                if lo <= hi:
                    opts.append({v: round(float(min(max(person[v], lo), hi)), d)})
            choices.append(opts)
        elif v in used_cols:
            choices.append([{v: 0}, {v: 1}])
    rows = []
    for combo in itertools.product(*choices):
        r = person.to_dict()
        for part in combo:
            r.update(part)
        rows.append(r)
    frame = pd.DataFrame(rows, columns=person.index)
    risk = model.predict(frame).to_numpy()
    ok = risk <= target if goal == "below" else risk >= target
    if not ok.any():
        return np.inf
    base = pd.DataFrame([person.to_dict()] * len(frame), columns=person.index)
    return float(pricing.cost(frame[ok].reset_index(drop=True), base[ok].reset_index(drop=True)).min())


# --------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------

def fit(name: str, case: dict, data: pd.DataFrame):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score(case["formula"], data, progress=False, **case["fit"])
    return m, time.perf_counter() - t0


def pick_people(m, data, case, n, seed=0) -> pd.DataFrame:
    risk = m.predict(data)
    out = data[(risk > case["target"]) if case["goal"] == "below" else (risk < case["target"])]
    rng = np.random.default_rng(seed)
    take = rng.choice(len(out), size=n, replace=len(out) < n)
    return out.iloc[take].reset_index(drop=True)


def summarize(label, cf, model, case, wall) -> dict:
    sec = cf.seconds.to_numpy() * 1000
    rows = cf.apply()
    valid = 1.0
    if len(rows):
        risk = model.predict(rows)
        valid = float(((risk <= case["target"]) if case["goal"] == "below" else (risk >= case["target"])).mean())
    n_cf = [len(p.counterfactuals) for p in cf]
    changes = [len(c.changes) for p in cf for c in p.counterfactuals]
    costs = [c.cost for p in cf for c in p.counterfactuals]
    st = cf.status.value_counts().to_dict()
    return {"method": label, "people": len(cf), "median ms": np.median(sec), "max ms": sec.max(),
            "setup ms": max(0.0, wall * 1000 - sec.sum()), "found": f"{sum(1 for k in n_cf if k)}",
            "cf/person": np.mean(n_cf), "valid": f"{100 * valid:.1f}%" if changes else "-",
            "changes": np.mean(changes) if changes else np.nan, "cost": np.mean(costs) if costs else np.nan,
            "status": ", ".join(f"{v} {k}" for k, v in st.items())}


def run_ours(m, people, case, label, **kw):
    t0 = time.perf_counter()
    cf = m.counterfactuals(people, target_risk=case["target"], goal=case["goal"], immutable=case["immutable"],
                           groups=case["groups"], **kw)
    return cf, time.perf_counter() - t0


def decode(frame: pd.DataFrame, groups: dict) -> pd.DataFrame:
    """One categorical column per one-hot group (member name or "none"), for DiCE."""
    out = frame.copy()
    for g, cols in (groups or {}).items():
        members = [c for c in cols if c is not None]
        on = out[members].to_numpy() > 0
        out[g] = np.where(on.any(axis=1), np.array(members)[on.argmax(axis=1)], "none")
        out = out.drop(columns=members)
    return out


def encode(frame: pd.DataFrame, groups: dict) -> pd.DataFrame:
    out = frame.copy()
    for g, cols in (groups or {}).items():
        for c in (c for c in cols if c is not None):
            out[c] = (out[g].astype(str) == c).astype(int)
        out = out.drop(columns=[g])
    return out


def run_dice(python, m, data, people, case, name, outcome, total_cfs, tmp: Path, cache=None):
    groups = case["groups"] or {}
    features = [c for c in data.columns if c != outcome]
    train = decode(data[features], groups)
    train["y"] = m.observed(data).to_numpy()
    ppl = decode(people[features], groups)
    numeric = [c for c in train.columns if c != "y" and c not in groups and train[c].nunique() > 2]
    categorical = [c for c in train.columns if c != "y" and c not in numeric]
    imm = set(case["immutable"])
    fixed_groups = {g for g, cols in groups.items() if imm & set(c for c in cols if c is not None)}
    vary = [c for c in numeric + categorical if c not in imm and c not in fixed_groups]
    (tmp / f"{name}.json").write_text(m.to_json())
    train.to_csv(tmp / f"{name}_train.csv", index=False)
    ppl.to_csv(tmp / f"{name}_people.csv")
    job = {"model": str(tmp / f"{name}.json"), "train": str(tmp / f"{name}_train.csv"),
           "people": str(tmp / f"{name}_people.csv"), "continuous": numeric, "categorical": categorical,
           "groups": {g: [c for c in cols if c is not None] for g, cols in groups.items()}, "outcome": "y",
           "desired_class": 0 if case["goal"] == "below" else 1, "threshold": case["target"],
           "features_to_vary": vary, "total_cfs": total_cfs, "seed": 0, "out": str(tmp / f"{name}_dice.csv")}
    (tmp / f"{name}_job.json").write_text(json.dumps(job))
    key = hashlib.sha256((m.to_json() + ppl.to_csv() + json.dumps({k: v for k, v in job.items() if k not in
                          ("model", "train", "people", "out")}, sort_keys=True)).encode()).hexdigest()[:16]
    cached = Path(cache) / f"dice_{name}_{key}.csv" if cache else None
    t0 = time.perf_counter()
    if cached is not None and cached.exists():
        res = pd.read_csv(cached)  # DiCE's answers for exactly this model, these people and settings
        return res, float(res.groupby("person")["seconds"].first().sum()), numeric, categorical
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    proc = subprocess.run([python, str(HERE / "_dice_runner.py"), str(tmp / f"{name}_job.json")], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    res = pd.read_csv(tmp / f"{name}_dice.csv")
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        res.to_csv(cached, index=False)
    return res, time.perf_counter() - t0, numeric, categorical


def dice_python(arg: str | None) -> tuple[str | None, str]:
    """A Python that imports dice_ml, or (None, why not)."""
    cands = [arg] if arg else [os.environ.get("DICE_PYTHON"), sys.executable, "/tmp/dice-venv/bin/python"]
    tried = []
    for p in cands:
        if not p:
            continue
        ok = subprocess.run([p, "-c", "import dice_ml"], capture_output=True).returncode == 0 if Path(p).exists() else False
        if ok:
            return p, ""
        tried.append(p)
    return None, ("DiCE (dice-ml) is not installed in " + ", ".join(tried) + "; install it in a separate "
                  "environment (python -m venv --system-site-packages /tmp/dice-venv && /tmp/dice-venv/bin/pip "
                  "install dice-ml) and pass --dice-python /tmp/dice-venv/bin/python")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(CASES))
    ap.add_argument("--people", type=int, default=1000)
    ap.add_argument("--brute", type=int, default=100, help="people checked against brute force")
    ap.add_argument("--milp-people", type=int, default=200, help="people also solved by the MILP")
    ap.add_argument("--dice-python", help="a Python with dice-ml installed")
    ap.add_argument("--dice-people", type=int, help="people given to DiCE (default: all)")
    ap.add_argument("--no-dice", action="store_true")
    ap.add_argument("--dice-cache", help="folder keeping DiCE's answers (reused for the same model and people)")
    ap.add_argument("--format", default="simple")
    args = ap.parse_args()
    dpy, why = (None, "skipped (--no-dice)") if args.no_dice else dice_python(args.dice_python)
    for name in args.names:
        case = CASES[name]
        data = rf.load_dataset(name)
        outcome = {"adult": "Over50K", "wdbc": "diagnosis"}[name]
        m, fit_s = fit(name, case, data)
        people = pick_people(m, data, case, args.people)
        op = "≤" if case["goal"] == "below" else "≥"
        print(f"\n=== {name}: {m.formula} ({m.size} terms, {m.status}, fitted in {fit_s:.0f} s); "
              f"{len(people)} people, target risk {op} {case['target']:.0%}"
              + (f"; immutable: {', '.join(case['immutable'])}" if case["immutable"] else ""))
        print(m.card())
        rows = []
        cf1, w1 = run_ours(m, people, case, "dp")
        rows.append(summarize("riskformula n=1 (auto: DP)", cf1, m, case, w1))
        cf3, w3 = run_ours(m, people, case, "dp", n=3, diverse=True)
        rows.append(summarize("riskformula n=3 diverse (DP, Lawler)", cf3, m, case, w3))
        sub = people.iloc[:args.milp_people]
        cfm, wm = run_ours(m, sub, case, "milp", method="milp")
        rows.append(summarize("riskformula n=1 (MILP)", cfm, m, case, wm))
        cfm3, wm3 = run_ours(m, sub, case, "milp", n=3, diverse=True, method="milp")
        rows.append(summarize("riskformula n=3 diverse (joint MILP)", cfm3, m, case, wm3))
        same1 = sum(abs(sum(c.cost for c in p.counterfactuals) - sum(c.cost for c in q.counterfactuals)) < 1e-7
                    for p, q in zip(cfm, cf1))
        same3 = sum(abs(sum(c.cost for c in p.counterfactuals) - sum(c.cost for c in q.counterfactuals)) < 1e-7
                    for p, q in zip(cfm3, cf3))
        # brute force
        variables = [v for v in m.design.variables if v != outcome]
        pricing = Pricing(data, variables, case["groups"])
        bsub = people.iloc[:args.brute]
        equal = 0
        for (label, person), p in zip(bsub.iterrows(), cf1):
            best = brute_force(m, data, person, pricing, case["groups"], case["immutable"], case["target"], case["goal"])
            ours = p.counterfactuals[0].cost if p.counterfactuals else np.inf
            equal += (np.isinf(best) and np.isinf(ours)) or abs(best - ours) < 1e-9
        dice_line = why
        if dpy:
            with tempfile.TemporaryDirectory() as tmp:
                dpeople = people.iloc[:args.dice_people] if args.dice_people else people
                res, wall, numeric, categorical = run_dice(dpy, m, data, dpeople, case, name, outcome, 1, Path(tmp),
                                                           args.dice_cache)
            found = res[res["k"] > 0].drop_duplicates("person").set_index("person")
            secs = res.groupby("person")["seconds"].first().to_numpy() * 1000
            cf_rows = encode(found[[c for c in found.columns if c not in ("k", "seconds", "error")]],
                             case["groups"])
            cf_rows = cf_rows.astype({c: float for c in cf_rows.columns})
            base = dpeople.loc[found.index, cf_rows.columns].astype(float)
            risk = m.predict(cf_rows)
            ok = ((risk <= case["target"]) if case["goal"] == "below" else (risk >= case["target"])).to_numpy()
            dcost = pricing.cost(cf_rows, base)
            dchg = pricing.changed(cf_rows, base).sum(axis=1).to_numpy()
            ours = np.array([cf1[i].counterfactuals[0].cost if cf1[i].counterfactuals else np.inf
                             for i in found.index])
            le = int(np.sum(ours[ok] <= dcost[ok] + 1e-9))
            rows.append({"method": "DiCE random n=1", "people": len(dpeople), "median ms": np.median(secs),
                         "max ms": secs.max(), "setup ms": max(0.0, wall * 1000 - secs.sum()),
                         "found": f"{len(found)}", "cf/person": len(found) / len(dpeople),
                         "valid": f"{100 * ok.mean():.1f}%" if len(ok) else "-",
                         "changes": dchg[ok].mean() if ok.any() else np.nan,
                         "cost": dcost[ok].mean() if ok.any() else np.nan, "status": ""})
            mean_ours = np.mean(ours[ok]) if ok.any() else np.nan
            dice_line = (f"cost vs DiCE: ours ≤ DiCE's on {le}/{int(ok.sum())} people where DiCE returned a valid "
                         f"counterfactual (mean {mean_ours:.3g} vs {dcost[ok].mean() if ok.any() else np.nan:.3g}); "
                         f"DiCE found one for {len(found)}/{len(dpeople)}, {int(ok.sum())} of them valid")
        print(tabulate(pd.DataFrame(rows), headers="keys", showindex=False, tablefmt=args.format, floatfmt=".3g"))
        print(f"cost vs brute force over every combination of regions: equal on {equal}/{len(bsub)} people")
        print(f"DP vs MILP: same cost on {same1}/{len(sub)} people (n=1), same total on {same3}/{len(sub)} (n=3 diverse)")
        print(dice_line)


if __name__ == "__main__":
    main()
