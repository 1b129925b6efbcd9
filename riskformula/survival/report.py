"""The printed report of a time-to-event risk score (``print(m)``, ``m.card()``, ``m.summary()``)."""

from __future__ import annotations

import pandas as pd

from ..reports import render as r
from ..reports.summary import Summary, _card_display, certified_by, scale_table, _scale_table_display


def horizon_label(h: float) -> str:
    """A horizon as the card prints it: ``365``, ``2.5``."""
    return f"{h:g}"


def risk_formula(model) -> str:
    """How a total score becomes a risk, in words and symbols."""
    z = "score" if model.intercept == 0 else f"({r.fmt_points(model.intercept)} + score)"
    eta = z if model.scale == 1.0 else f"{z} / {model.scale:.6g}"
    return (f"risk within t = 1 - exp(-H0(t) * exp({eta})), H0 = the Breslow baseline cumulative hazard of "
            f"the training rows ({model.ties} ties)")


def _risk_table_display(model) -> pd.DataFrame:
    t = model.risk_table()
    out = pd.DataFrame({"score": t["score"]})
    for h in model.horizons:
        col = f"risk within {horizon_label(h)}"
        out[col] = [r.fmt_percent(x) for x in t[col]]
    return out


def short_report(model) -> str:
    """What ``print(model)`` shows: score card, score → risk within each horizon, certificate."""
    return r.document([
        f"Time-to-event risk score: {model.formula}",
        r.table(_card_display(model)),
        risk_formula(model),
        r.table(_risk_table_display(model)),
        "Certificate: " + model.certificate_line(),
    ])


def card(model, kind: str = "text") -> str:
    """Score card, risk formula and score → risk-within-horizon table in one of render.FORMATS."""
    r.check_kind(kind)
    return r.document([r.heading(r.escape(f"Time-to-event risk score: {model.formula}", kind), kind, 2),
                       r.table(_card_display(model), kind), r.paragraph(r.escape(risk_formula(model), kind), kind),
                       r.table(_risk_table_display(model), kind)], kind)


class SurvivalSummary(Summary):
    """Full report of a :class:`~riskformula.survival.SurvivalScore`.

    Sections: data and follow-up, score card, score → risk within each horizon, fit on the training
    data (partial likelihood, concordance), certificate, notes.
    """

    _title = "Time-to-event risk score"

    def header(self) -> list[tuple[str, str]]:
        m = self.model
        rows = [("Formula", m.formula),
                ("Outcome", f"{m.outcome}: follow-up time `{m.time_column}`, event `{m.event_column}`"
                 + ("" if m.event is True or m.event == 1 else f" = {m.event!r}")),
                ("Rows used", f"{m.nobs:,d}"),
                ("Events", f"{m.events:,d} ({r.fmt_percent(m.events / m.nobs)})"),
                ("Longest follow-up", f"{m.surv.max_time:g}"),
                ("Horizons", ", ".join(horizon_label(h) for h in m.horizons))]
        if m.rows_dropped:
            rows.append(("Rows dropped (missing values)", f"{m.rows_dropped:,d}"))
        s = m.settings
        rows += [("Max items", f"{s.max_size}" + (f" (min {s.min_size})" if s.min_size else "")),
                 ("Points range", f"{min(s.coef_lower)} to {max(s.coef_upper)}"),
                 ("Score scale", f"{m.scale:.6g} points per log hazard ratio"
                  + (" (fitted)" if len(s.scales) > 1 else "")),
                 ("Objective", "negative log partial likelihood per row (Cox, 1972; "
                  + ("Efron, 1977" if m.ties == "efron" else "Breslow, 1974") + ", ties) + c0 x size"),
                 ("c0", f"{s.c0:g}")]
        return rows

    def fit_table(self) -> pd.DataFrame:
        m = self.model
        rows = [("Mean negative log partial likelihood", f"{m.loss:.6f}"),
                ("Log partial likelihood (empty score)", f"{m.llf:.2f} ({m.llnull:.2f})"),
                ("Likelihood-ratio statistic vs the empty score", f"{2 * (m.llf - m.llnull):.2f} "
                 f"on {m.df_model} df"),
                ("AIC / BIC", f"{m.aic:.1f} / {m.bic:.1f} ({m.df_model} parameters)")]
        t = m.training_metrics
        if "harrell_c" in t:
            rows.append(("Harrell's C (training rows)", f"{t['harrell_c']:.3f}"))
        return pd.DataFrame(rows, columns=["statistic", "value"])

    def reliability(self) -> pd.DataFrame | None:
        return None

    def notes(self) -> list[str]:
        out = super().notes()
        out = [n.replace(f"Risks are (intercept + score) / {self.model.scale:g} logits.",
                         f"The log hazard ratio of a score is (intercept + score) / {self.model.scale:g}.")
               for n in out if not n.startswith("The base points sit at the edge")]
        out.append("Risks within a horizon come from the Breslow (1974) estimate of the baseline hazard on the "
                   "training rows at the fitted score; a horizon beyond the longest follow-up is refused.")
        return out

    def _tables(self) -> dict[str, pd.DataFrame | None]:
        m = self.model
        return {"header": pd.DataFrame(self.header(), columns=["item", "value"]),
                "score_card": m.score_card(), "risk_table": m.risk_table(), "fit": self.fit_table(),
                "certificate": self.certificate(), "scales": scale_table(m), "constraints": self.constraints_table()}

    def to_frame(self) -> pd.DataFrame:
        """One row per item of the card: ``term``, ``points``, ``coef`` (points / scale: the Cox
        coefficient, a log hazard ratio) and ``hazard_ratio`` (exp(coef))."""
        import numpy as np
        m = self.model
        card = m.score_card()
        coef = card["points"].to_numpy(float) / m.scale
        return pd.DataFrame({"term": card["term"], "points": card["points"], "coef": coef,
                             "hazard_ratio": np.exp(coef), "variable": card["variable"], "kind": card["kind"]})

    def to_dict(self) -> dict:
        m = self.model
        d = m.to_dict()
        d["risk_table"] = m.risk_table().to_dict(orient="list")
        d["likelihood"] = {k: float(getattr(m, k)) for k in ("llf", "llnull", "deviance", "null_deviance", "aic",
                                                              "bic", "df_model", "df_resid")}
        d["solver"] = {k: v for k, v in m.solver.to_dict().items() if k not in ("log", "solution")}
        d["solver"]["scales"] = [dict(row) for row in m.solver.scales]
        return d

    def _sections(self) -> list:
        m = self.model
        out: list = []
        con = self.constraints_table()
        if con is not None:
            out.append(("Constraints and thresholds", con))
        out += [("Score card", _card_display(m)), (None, risk_formula(m)),
                ("Score to risk within each horizon", _risk_table_display(m)),
                ("Fit on the training data", self.fit_table()), ("Certificate", self.certificate())]
        scales = _scale_table_display(m)
        if scales is not None:
            out.append(("Certificate by score scale", scales))
        return out


__all__ = ["SurvivalSummary", "short_report", "card", "risk_formula", "certified_by", "horizon_label"]
