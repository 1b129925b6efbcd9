"""The fairness audit of a risk score on data (:meth:`riskformula.RiskScore.fairness`).

Per group of a protected attribute: rows, events, the rates of a decision cut-off (selection
rate, true and false positive rates, positive predictive value), mean predicted risk, observed
risk and calibration (observed / expected events), each with a confidence interval; then the
differences and ratios between groups that the group fairness notions bound (Aghaei, 2024,
§2.4.3; the numbers are those of fairlearn's ``MetricFrame`` on the same predictions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm

from .. import _checks as v
from ..errors import DataError, SettingsError
from ..fairness.groups import SMALL_GROUP, check_group_count, data_groups, sorted_groups, warn_small_groups
from . import render
from .evaluation import _collect
from .metrics.calibration import _wilson
from ..fairness.rows import FairnessConstraint, by_columns, check_cutoff
from ..errors import did_you_mean, name_list

__all__ = ["FairnessAudit", "fairness_audit", "AUDIT_METRICS"]

#: the compared rates: column -> (what it is, the notion that bounds its differences)
AUDIT_METRICS = {
    "selection_rate": ("selection rate", "statistical parity"),
    "tpr": ("true positive rate", "equal opportunity"),
    "fpr": ("false positive rate", "predictive equality"),
    "ppv": ("positive predictive value", "predictive parity"),
    "mean_risk": ("mean predicted risk", "parity of mean risk"),
    "oe": ("observed / expected events", "calibration within groups"),
}

_SHORT = {"selection_rate": "selection rate", "tpr": "TPR", "fpr": "FPR", "ppv": "PPV", "mean_risk": "mean risk",
          "oe": "observed / expected"}


@dataclass(frozen=True, repr=False, eq=False)
class FairnessAudit(render.Rendered):
    """Group rates, their intervals and the gaps between groups; built by :func:`fairness_audit`.

    Attributes
    ----------
    formula : the model's formula.
    by : the protected attribute's column(s).
    rule : the decision cut-off in words (``risk ≥ 50%``).
    n, rows_dropped : rows audited, and rows the model could not score.
    by_group : DataFrame
        One row per group: ``group, n, events, selected, selection_rate, tpr, fpr, ppv,
        mean_risk, observed_risk, oe``, each rate with ``<rate>_lower``/``<rate>_upper``.
    differences : DataFrame
        Per compared rate: ``metric, notion, lowest, lowest_group, highest, highest_group,
        difference`` (max − min) and ``ratio`` (min / max), plus ``equalized odds`` (the larger
        difference and the smaller ratio of TPR and FPR, of those defined: with a group that has
        no events the TPR difference is NA and equalized odds is the FPR's, as in a fit).
    vs_reference : DataFrame or None
        With ``reference=``: each group's difference from the reference group per rate.
    constraints : DataFrame or None
        The model's fairness constraints: their value on the training rows (where they hold
        exactly) and on these rows.
    """

    formula: str
    by: tuple
    rule: str
    n: float
    rows_dropped: int
    by_group: pd.DataFrame
    differences: pd.DataFrame
    level: float = 0.95
    reference: object = None
    vs_reference: pd.DataFrame | None = None
    constraints: pd.DataFrame | None = None
    notes: tuple = field(default=())

    _title = "Fairness audit"

    def to_frame(self) -> pd.DataFrame:
        """The by-group table (a copy)."""
        return self.by_group.copy()

    def to_dict(self) -> dict:
        """Every table as plain Python values."""
        out = {"formula": self.formula, "by": list(self.by), "rule": self.rule, "n": self.n,
               "rows_dropped": self.rows_dropped, "by_group": render.records(self.by_group),
               "differences": render.records(self.differences), "notes": list(self.notes)}
        if self.vs_reference is not None:
            out["vs_reference"] = render.records(self.vs_reference)
        if self.constraints is not None:
            out["constraints"] = render.records(self.constraints)
        return out

    def _tables(self) -> dict:
        return {"by_group": self.by_group, "differences": self.differences, "vs_reference": self.vs_reference,
                "constraints": self.constraints}

    def _header(self) -> list:
        by = self.by[0] if len(self.by) == 1 else " × ".join(self.by)
        rows = [("Formula", self.formula), ("Groups", by), ("Predicted positive", self.rule),
                ("Rows", render.fmt_number(_count(self.n)))]
        if self.rows_dropped:
            rows.append(("Rows dropped (no prediction)", f"{self.rows_dropped:,d}"))
        return rows

    def _sections(self) -> list:
        t = self.by_group
        pct = int(round(100 * self.level))

        def ci(col, fmt=render.fmt_percent):
            return [_ci(r[col], r[f"{col}_lower"], r[f"{col}_upper"], fmt) for _, r in t.iterrows()]

        rates = pd.DataFrame({"group": t["group"].map(_label), "n": t["n"].map(_number),
                              "events": t["events"].map(_number), "selected": t["selected"].map(_number),
                              "selection rate": ci("selection_rate"), "TPR": ci("tpr"), "FPR": ci("fpr"),
                              "PPV": ci("ppv")})
        risk = pd.DataFrame({"group": t["group"].map(_label), "mean predicted risk": ci("mean_risk"),
                             "observed risk": ci("observed_risk"),
                             "observed / expected": ci("oe", lambda x: render.fmt_fixed(x, 2))})
        d = self.differences
        diffs = pd.DataFrame({
            "rate": d["metric"], "bounded by": d["notion"],
            "lowest": [f"{render.fmt_percent(a) if m != 'observed / expected events' else render.fmt_fixed(a, 2)} "
                       f"({_label(g)})"
                       if a == a else "NA" for a, g, m in zip(d["lowest"], d["lowest_group"], d["metric"])],
            "highest": [f"{render.fmt_percent(a) if m != 'observed / expected events' else render.fmt_fixed(a, 2)} "
                        f"({_label(g)})"
                        if a == a else "NA" for a, g, m in zip(d["highest"], d["highest_group"], d["metric"])],
            "difference": [render.fmt_fixed(x, 3) for x in d["difference"]],
            "ratio": [render.fmt_fixed(x, 3) for x in d["ratio"]]})
        out = [(f"Decision rates by group ({pct}% CI)", rates), (f"Risk and calibration by group ({pct}% CI)", risk),
               ("Differences between groups (max − min) and ratios (min / max)", diffs)]
        if self.vs_reference is not None:
            r = self.vs_reference
            shown = pd.DataFrame({"group": r["group"].map(_label),
                                  **{_SHORT[k]: [render.fmt_fixed(x, 3) for x in r[k]] for k in AUDIT_METRICS}})
            out.append((f"Difference from the reference group {_label(self.reference)}", shown))
        if self.constraints is not None:
            c = self.constraints
            shown = pd.DataFrame({"constraint": c["constraint"], "quantity": c["quantity"],
                                  "bound": [render.fmt_fixed(x, 3) for x in c["bound"]],
                                  "training rows": [render.fmt_fixed(x, 3) for x in c["training_value"]],
                                  "these rows": [render.fmt_fixed(x, 3) for x in c["value"]]})
            out.append(("Fairness constraints of the fit", shown))
        return out

    def __repr__(self) -> str:
        d = self.differences.set_index("metric")["difference"]
        return (f"<FairnessAudit by {', '.join(self.by)} ({self.rule}): selection rate difference "
                f"{render.fmt_fixed(d.get('selection rate'), 3)}, TPR difference "
                f"{render.fmt_fixed(d.get('true positive rate'), 3)}>")


def _count(n):
    return int(n) if float(n).is_integer() else float(n)


def _number(n) -> str:
    return render.fmt_number(_count(n))


def _label(g) -> str:
    return ", ".join(map(str, g)) if isinstance(g, tuple) else str(g)


def _ci(est, lo, hi, fmt) -> str:
    if est != est:
        return "NA"
    if lo == lo and hi == hi:
        return f"{fmt(est)} ({fmt(lo)}, {fmt(hi)})"
    return fmt(est)


def _rate(num: float, den: float, level: float) -> tuple[float, float, float]:
    if den <= 0:
        return math.nan, math.nan, math.nan
    lo, hi = _wilson(np.array([num]), np.array([den]), level)
    return num / den, float(lo[0]), float(hi[0])


def _group_row(g, y, risk, pred, w, level) -> dict:
    n = float(w.sum())
    events = float(w @ y)
    sel = float(w @ pred)
    tp = float(w @ (pred * y))
    fp = float(w @ (pred * (1 - y)))
    out = {"group": g, "n": n, "events": events, "selected": sel}
    for key, num, den in (("selection_rate", sel, n), ("tpr", tp, events), ("fpr", fp, n - events),
                          ("ppv", tp, sel), ("observed_risk", events, n)):
        out[key], out[f"{key}_lower"], out[f"{key}_upper"] = _rate(num, den, level)
    mean = float(w @ risk) / n
    # a weighted mean's standard error with frequency weights (n rows in all)
    var = float(w @ (risk - mean) ** 2) / max(n - 1, 1)
    half = norm.ppf(0.5 + level / 2) * math.sqrt(var / n) if n > 1 else math.nan
    out.update(mean_risk=mean, mean_risk_lower=max(mean - half, 0.0), mean_risk_upper=min(mean + half, 1.0))
    if mean > 0:
        out.update(oe=out["observed_risk"] / mean, oe_lower=out["observed_risk_lower"] / mean,
                   oe_upper=out["observed_risk_upper"] / mean)
    else:
        out.update(oe=math.nan, oe_lower=math.nan, oe_upper=math.nan)
    return out


def _differences(t: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for key, (name, notion) in AUDIT_METRICS.items():
        r = t.set_index("group")[key].dropna()
        if len(r) < 2:
            rows.append((name, notion, math.nan, None, math.nan, None, math.nan, math.nan))
        else:
            lo_g, hi_g = r.idxmin(), r.idxmax()
            lo, hi = float(r.min()), float(r.max())
            rows.append((name, notion, lo, lo_g, hi, hi_g, hi - lo, (lo / hi) if hi > 0 else math.nan))
        if key == "fpr":
            # equalized odds bounds TPR and FPR together: its gap is the larger of the two that are
            # defined (as the fit's equalized_odds constraint skips a stratum with fewer than two
            # groups); NaN only when neither is
            tpr, fpr = rows[-2], rows[-1]
            diff = [x for x in (tpr[6], fpr[6]) if x == x]
            ratio = [x for x in (tpr[7], fpr[7]) if x == x]
            rows.append(("true and false positive rates", "equalized odds", math.nan, None, math.nan, None,
                         max(diff) if diff else math.nan, min(ratio) if ratio else math.nan))
    # one frame from the rows (concatenating frames with all-NA columns warns in pandas ≥ 2.1)
    return pd.DataFrame(rows, columns=["metric", "notion", "lowest", "lowest_group", "highest", "highest_group",
                                       "difference", "ratio"])


def fairness_audit(model, data: pd.DataFrame, by, *, at_risk=None, at_score=None, reference=None, weights=None,
                   level: float = 0.95) -> FairnessAudit:
    """Audit ``model`` on ``data`` by the groups of ``by`` (see :meth:`RiskScore.fairness`)."""
    cols, risk_cut, score_cut = _check_settings(data, by, at_risk, at_score, level)
    w_all = v.check_weights(weights, data)
    sub, y, risk, pred, w, dropped = _scored_rows(model, data, w_all, risk_cut, score_cut)
    what = f"fairness audit by {cols[0]!r}" if len(cols) == 1 else f"fairness audit by {list(cols)}"
    groups, levels = _audited_groups(sub, cols, what)
    reference = _check_reference(reference, levels, cols)
    t = _group_table(groups, levels, y, risk, pred, w, level)
    diffs = _differences(t)
    _warn_small_strata(what, t)
    vs_ref = None if reference is None else _vs_reference(t, reference)
    rule = f"risk ≥ {100 * risk_cut:g}%" if score_cut is None else f"score ≥ {score_cut:g}"
    constraints = _constraint_table(model, sub, None if w_all is None else w)
    notes = _notes(rule, level, t, diffs, dropped, weighted=w_all is not None)
    return FairnessAudit(formula=str(getattr(model, "formula", "<no formula>")), by=cols, rule=rule,
                         n=float(w.sum()), rows_dropped=dropped, by_group=t, differences=diffs, level=level,
                         reference=reference, vs_reference=vs_ref, constraints=constraints, notes=tuple(notes))


def _check_settings(data, by, at_risk, at_score, level) -> tuple:
    """Check ``data``, ``by``, the cut-off and ``level``; return the columns and the risk and score cut-offs."""
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    cols = by_columns("fairness", by)
    missing = [c for c in cols if c not in data.columns]
    if missing:
        hint = did_you_mean(missing[0], [str(c) for c in data.columns])
        raise SettingsError(f"`by` names {missing}, which {'is' if len(missing) == 1 else 'are'} not a column of "
                            f"`data`.{hint} Columns: {name_list(data.columns, 20)}.")
    risk_cut, score_cut = check_cutoff("fairness", at_risk, at_score)
    if not isinstance(level, float) or not 0 < level < 1:
        raise SettingsError(f"`level` must be a confidence level between 0 and 1 (e.g. 0.95); got {level!r}.")
    return cols, risk_cut, score_cut


def _scored_rows(model, data, w_all, risk_cut, score_cut) -> tuple:
    """The rows the model scores: those rows of ``data``, outcome, risk, decision, weight, and the count dropped."""
    frame, dropped = _collect(model, data, None)
    if frame.empty:
        raise DataError("no rows left to audit: the model returned no prediction for any row of `data`.")
    sub = data if len(frame) == len(data) else data.loc[frame.index]
    y = frame["y"].to_numpy()
    risk = frame["risk"].to_numpy()
    score = frame["score"].to_numpy()
    pred = ((risk >= risk_cut) if score_cut is None else (score >= score_cut)).astype(float)
    w = np.ones(len(frame)) if w_all is None else (w_all.to_numpy() if len(frame) == len(data)
                                                  else w_all.loc[frame.index].to_numpy())
    return sub, y, risk, pred, w, dropped


def _audited_groups(sub, cols, what) -> tuple:
    """Each row's group and the sorted groups, refusing what a fit's constraints refuse, or a single group."""
    # the same group checks as a fit's fairness constraints (groups.py owns them): missing
    # values are an error, a continuous column is refused, a single group has nothing to compare
    groups = data_groups(sub, cols, what)
    check_group_count(groups, cols, what)
    levels = sorted_groups(groups)
    if len(levels) < 2:
        raise SettingsError(f"{what}: these rows hold only one group of {list(cols)} ({levels}); there is nothing "
                            "to compare. Audit rows with at least two groups, or see every row's rates with "
                            "m.evaluate(data).")
    return groups, levels


def _check_reference(reference, levels, cols):
    """``reference`` as a group (a list becomes a tuple); an error when it is not one of ``levels``."""
    if reference is not None:
        reference = tuple(reference) if isinstance(reference, list) else reference
        if not any(_eq(reference, g) for g in levels):
            raise SettingsError(f"`reference={reference!r}` is not a group of {list(cols)}; "
                                f"the groups are {levels[:20]}.")
    return reference


def _group_table(groups, levels, y, risk, pred, w, level) -> pd.DataFrame:
    """One row of counts and rates (with intervals) per group, in the order of ``levels``."""
    rows = []
    for g in levels:
        m = _mask(groups, g)
        rows.append(_group_row(g, y[m], risk[m], pred[m], w[m], level))
    return pd.DataFrame(rows)


def _warn_small_strata(what, t: pd.DataFrame) -> None:
    """One warning naming the small groups, and those absent from the strata a rate needs, as a fit gives."""
    # rows per group, and groups absent from the strata a rate needs (no events: no TPR; no
    # non-events: no FPR; no one selected: no PPV), in one warning as a fit gives
    table = []
    for _, r in t.iterrows():
        table.append(("all rows", r["group"], r["n"]))
        for where, count in (("events (y = 1)", r["events"]), ("non-events (y = 0)", r["n"] - r["events"]),
                             ("predicted positive", r["selected"])):
            if count <= 0:
                table.append((where, r["group"], 0.0))
    # stacklevel 4: the line that called RiskScore.fairness (this helper is one frame deeper than the audit)
    warn_small_groups(what, table, "the differences between groups are mostly noise (read the rates with their "
                      "intervals)", stacklevel=4)


def _vs_reference(t: pd.DataFrame, reference) -> pd.DataFrame:
    """Each other group's difference from the reference group, per compared rate."""
    ref = t[[_eq(reference, g) for g in t["group"]]].iloc[0]
    return pd.DataFrame([{"group": r["group"], **{k: r[k] - ref[k] for k in AUDIT_METRICS}}
                         for _, r in t.iterrows() if not _eq(reference, r["group"])])


def _constraint_table(model, sub, w) -> pd.DataFrame | None:
    """The model's fairness constraints on its training rows and on ``sub`` (weights ``w``); None without any."""
    fair = [c for c in getattr(model, "constraints", ()) if isinstance(c, FairnessConstraint)]
    if not fair:
        return None
    trained = {(r["constraint"], r["quantity"]): r["value"] for r in model.training.constraint_values}
    crow = []
    for c in fair:
        try:
            here = c.assess(model, sub, w)
        except (KeyError, SettingsError, DataError):
            here = [dict(constraint=c.describe(), quantity="(columns missing from these rows)", value=math.nan,
                         bound=math.nan)]
        for r in here:
            crow.append(dict(constraint=r["constraint"], quantity=r["quantity"], bound=r["bound"],
                             training_value=trained.get((r["constraint"], r["quantity"]), math.nan),
                             value=r["value"]))
    return pd.DataFrame(crow, columns=["constraint", "quantity", "bound", "training_value", "value"])


def _notes(rule: str, level: float, t: pd.DataFrame, diffs: pd.DataFrame, dropped: int, weighted: bool) -> list:
    """The audit's notes: what the rates and intervals are, small groups, equalized odds, dropped rows, weights."""
    pct = int(round(100 * level))
    notes = [
        f"Predicted positive: {rule}. TPR = selected among events, FPR = selected among non-events, PPV = events "
        "among the selected; these are the rates statistical parity, equal opportunity, predictive equality and "
        "predictive parity compare.",
        f"{pct}% intervals: Wilson score intervals for rates; mean predicted risk ± z·SE; observed / expected = "
        "observed risk / mean predicted risk (1 = calibrated in the group), its interval from the observed risk's.",
        "Fairness constraints of a fit hold exactly on its training rows; on other rows they hold only "
        "approximately: the group rates here are estimates with the uncertainty shown.",
    ]
    small = [f"{_label(r['group'])} ({_number(r['n'])})" for _, r in t.iterrows() if r["n"] < SMALL_GROUP]
    if small:
        notes.append(f"Groups with fewer than {SMALL_GROUP} rows have wide intervals: {', '.join(small)}.")
    eo = diffs[diffs["notion"] == "equalized odds"].iloc[0]
    parts = diffs[diffs["notion"].isin(["equal opportunity", "predictive equality"])]
    undefined = parts.loc[parts["difference"].isna(), "metric"].tolist()
    if undefined and eo["difference"] == eo["difference"]:
        notes.append(f"Equalized odds: the larger of the TPR and FPR differences that are defined; the "
                     f"{undefined[0]} is undefined here (fewer than two groups have the rows it needs).")
    if dropped:
        notes.append(f"{dropped:,d} row(s) dropped: the model returned no risk, score or outcome for them.")
    if weighted:
        notes.append("Counts and rates use the sample weights (frequency weights).")
    return notes


def _eq(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _mask(groups: np.ndarray, g) -> np.ndarray:
    return np.fromiter((_eq(x, g) for x in groups), bool, len(groups)) if isinstance(g, tuple) else groups == g
