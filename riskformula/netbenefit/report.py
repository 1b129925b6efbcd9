"""The printed report of a net-benefit risk score (``print(m)`` and ``m.summary()``)."""

from __future__ import annotations

import pandas as pd

from ..reports import render as r
from ..reports.summary import Summary, _card_display, band_risk_line, grid_and_constraint_notes


def _decisions_display(model) -> pd.DataFrame:
    t = model.decisions
    return pd.DataFrame({"risk threshold": [r.fmt_percent(p) for p in t["threshold"]],
                         "act when": t["rule"],
                         "net benefit": [f"{x:.4f}" for x in t["net_benefit"]],
                         "treat all": [f"{x:.4f}" for x in t["treat_all"]]})


def _count(x) -> str:
    if x != x:
        return "NA"
    return f"{x:,.0f}" if x == int(x) else f"{x:,.2f}"


def _bands_display(model) -> pd.DataFrame:
    t = model.risk_table()
    out = pd.DataFrame({"score": t["score"], "risk": [r.fmt_percent(x) for x in t["risk_from"]],
                        "training rows": [_count(x) for x in t["rows"]],
                        "events": [_count(x) for x in t["row_events"]]})
    if model.settings.weighted:
        # the band risk is weighted events / weighted rows: show both, labelled as weights
        out["weighted rows"] = [_count(x) for x in t["n"]]
        out["weighted events"] = [_count(x) for x in t["events"]]
    return out


def _objective_name(model) -> str:
    return "AUNBC" if model.nb.grid.aunbc else "weighted net benefit"


def short_report(model) -> str:
    """What ``print(model)`` shows: score card, decisions, score bands and the certificate."""
    return r.document([
        f"Net-benefit risk score: {model.formula}",
        r.table(_card_display(model)),
        r.table(_decisions_display(model)),
        r.table(_bands_display(model)),
        band_risk_line(model),
        "Certificate: " + model.certificate_line(),
    ])


def card(model, kind: str = "text") -> str:
    """Score card, decision rules and score bands → risk of ``model`` in one of render.FORMATS."""
    r.check_kind(kind)
    return r.document([r.heading(r.escape(f"Net-benefit risk score: {model.formula}", kind), kind, 2),
                       r.table(_card_display(model), kind), r.table(_decisions_display(model), kind),
                       r.table(_bands_display(model), kind),
                       r.paragraph(band_risk_line(model), kind)], kind)


class NetBenefitSummary(Summary):
    """Full report of a :class:`~riskformula.netbenefit.NetBenefitScore`.

    Sections: data, score card, decision rules, score bands → risk, fit on the training data,
    certificate, notes.
    """

    _title = "Net-benefit risk score"

    def header(self) -> list[tuple[str, str]]:
        m = self.model
        rows = [row for row in super().header() if row[0] != "Intercept range searched"]
        if m.settings.weighted:
            # the prevalence the net benefit and treat-all use (the "Events" row counts rows)
            at = next((k + 1 for k, row in enumerate(rows) if row[0] == "Events"), len(rows))
            rows.insert(at, ("Weighted events", f"{_count(sum(m.nb.band_events))} of {_count(m.nb.total_weight)} "
                                                f"({r.fmt_percent(m.nb.prevalence)})"))
        rows += [("Objective", m.nb.grid.describe() + " - c0 x size"),
                 ("Score to risk", "observed event rate per score band (training data)")]
        return rows

    def fit_table(self) -> pd.DataFrame:
        m = self.model
        ev = m.training_evaluation
        rows = [(_objective_name(m), f"{m.net_benefit:.6f}")]
        if ev is None:
            t = m.training_metrics
            rows += [(label, f"{t[k]:.3f}") for label, k in (("AUC", "auc"),) if t[k] == t[k]]
        else:
            rows += [
                ("AUC (95% CI, DeLong)", "NA" if ev.auc is None else
                 f"{ev.auc.auc:.3f} ({ev.auc.lower:.3f} to {ev.auc.upper:.3f})"
                 if ev.auc.lower == ev.auc.lower else f"{ev.auc.auc:.3f}"),
                ("ECE (10 equal-width bins)", f"{ev.ece:.4f}"),
                ("Brier score", f"{ev.brier:.4f}"),
            ]
        rows.append(("Mean logistic loss of the band risks", f"{m.loss:.6f}"))
        return pd.DataFrame(rows, columns=["statistic", "value"])

    def certificate(self) -> pd.DataFrame:
        m = self.model
        rep = m.solver
        info = rep.settings or {}
        gap = r.fmt_gap(m.gap, m.settings.gap_tolerance, state_tolerance=True)
        rows = [("Status", m.status), ("Objective (net benefit - c0 x size)", f"{m.objective:.8g}"),
                ("Upper bound", f"{m.upper_bound:.8g}"), ("Optimality gap", gap)]
        if "search_objective" in info:
            rows.append(("Local search objective", f"{info['search_objective']:.8g} "
                         f"({info.get('search_time', 0):.1f} s)"))
        if "milp_time" in info:
            rows.append(("Exact model", f"{info['milp_status']} after {info.get('milp_time', 0):.1f} s, "
                         f"{info.get('indicators', 0):,d} indicators, {rep.nodes:,d} nodes"))
        elif "milp_status" in info:
            rows.append(("Exact model", info["milp_status"]))
        rows += [("Time", f"{rep.time:.2f} s"), ("Solver", rep.solver)]
        return pd.DataFrame(rows, columns=["", "value"])

    def notes(self) -> list[str]:
        m = self.model
        out = []
        if m.status == "optimal" and not r.gap_is_zero(m.gap, m.settings.gap_tolerance):
            # a loose gap_tolerance stopped the search: that is no proof of optimality
            out.append(f"Optimal within the tolerance (gap {r.fmt_gap(m.gap, m.settings.gap_tolerance)}), not proven "
                       f"optimal: no score within these limits has an objective above {m.upper_bound:.8g} and this "
                       f"model's is {m.objective:.8g}, so a better one may exist.")
        elif m.status == "optimal":
            out.append(f"Proven optimal: no score within these limits has an objective above {m.upper_bound:.8g}.")
        elif m.solver.settings and "milp_time" in m.solver.settings:
            out.append(f"Stopped at the time limit: the model is not proven optimal; the best possible objective "
                       f"lies between {m.objective:.6g} and {m.upper_bound:.6g}.")
        else:
            out.append(f"Local search only: the model is not proven optimal; the best possible objective lies "
                       f"between {m.objective:.6g} and {m.upper_bound:.6g} (every row decided on its own).")
        if m.nb.grid.aunbc:
            out.append("AUNBC as Chi & Birbil (2026) define it: a left Riemann sum of the net-benefit curve over "
                       "the thresholds, p_0 = 0 included (at most the prevalence).")
        empty = m.risk_table()
        if len(empty) and (empty["n"] == 0).any():
            out.append("A band no training row fell in takes the middle of its threshold interval as its risk.")
        out += grid_and_constraint_notes(m, "do")
        if m.settings.weighted:
            out.append("Net benefit, treat-all, band risks and certificate use the sample weights; the training "
                       "diagnostics are unweighted.")
        return out

    def _tables(self) -> dict[str, pd.DataFrame | None]:
        t = super()._tables()
        t["decisions"] = self.model.decisions
        return t

    def _sections(self) -> list:
        m = self.model
        out = []
        con = self.constraints_table()
        if con is not None:
            out.append(("Constraints and thresholds", con))
        return out + [("Score card", _card_display(m)), ("Decisions", _decisions_display(m)),
                      ("Score bands to risk", _bands_display(m)), ("Fit on the training data", self.fit_table()),
                      ("Certificate", self.certificate())]
