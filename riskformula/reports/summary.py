"""The printed report of a fitted risk score (``print(m)`` and ``m.summary()``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import DataError
from . import render as r
from ..solver.support_search import SCOPES
from ..thresholds.candidates import AUTO_ABOVE, AUTO_GRID
from ..thresholds.terms import COARSE_GRID
from .evaluation import hosmer_lemeshow_tail_note


def _risk_table_display(model) -> pd.DataFrame:
    t = model.risk_table()
    # compared as printed: scores 2 and 4 may both read ">99.9%"
    risk = [a if a == b else f"{a} to {b}"
            for a, b in zip(map(r.fmt_percent, t["risk_from"]), map(r.fmt_percent, t["risk_to"]))]
    return pd.DataFrame({"score": t["score"], "risk": risk})


def _card_display(model) -> pd.DataFrame:
    card = model.score_card()
    rows = [(t, r.fmt_points(p)) for t, p in zip(card["term"], card["points"])]
    rows.append(("score = sum of points", ""))
    return pd.DataFrame(rows, columns=["term", "points"])


def risk_formula(model) -> str:
    if model.intercept == 0:  # no "+0 + score"
        z = "-score"
    else:
        b = r.fmt_points(model.intercept) if float(model.intercept).is_integer() else f"{model.intercept:+.4f}"
        z = f"-({b} + score)"
    if model.scale == 1.0:
        return f"risk = 1 / (1 + exp({z}))"
    return f"risk = 1 / (1 + exp({z} / {model.scale:g}))"


def band_risk_line(model) -> str:
    """How a score's risk follows from the card when the risk map is score bands (a net-benefit
    score's): the training rows' event rate in the band."""
    if model.settings.weighted:
        return "risk = observed event rate of the training rows in the score band (weighted events / weighted rows)"
    return "risk = observed event rate of the training rows in the score band"


def _scales_text(scales) -> str:
    return ", ".join(f"{m:g}" for m in scales)


def scale_table(model) -> pd.DataFrame | None:
    """Per-scale rows of a fit over several score scales (``scale``, ``objective``,
    ``lower_bound``, ``root_bound``, ``nodes``, ``status``, ``added``: whether the search added the
    scale around its best risk score), or None for a fixed scale."""
    rows = model.solver.scales
    if not rows:
        return None
    t = pd.DataFrame(list(rows), columns=["scale", "objective", "lower_bound", "root_bound", "nodes", "status",
                                          "added"])
    t["added"] = t["added"].fillna(False).astype(bool)  # documents saved before scales were added
    return t


def _scale_table_display(model) -> pd.DataFrame | None:
    t = scale_table(model)
    if t is None:
        return None
    best = model.objective

    def num(v, settled):
        # a bound at the best objective means "cannot beat it": shown as such
        if v == float("inf"):
            return "-"
        return f"≥ {best:.6g}" if settled and v >= best else f"{v:.6g}"

    return pd.DataFrame({
        "scale": [f"{m:g}" + (" (added)" if a else "") for m, a in zip(t["scale"], t["added"])],
        "best objective": [num(v, False) for v in t["objective"]],
        "lower bound": [num(v, st not in ("best", "stopped", "not started"))
                        for v, st in zip(t["lower_bound"], t["status"])],
        "nodes": [f"{n:,d}" for n in t["nodes"]],
        "status": t["status"]})


def short_report(model, title: str = "Risk score", formula=risk_formula, table=_risk_table_display) -> str:
    """What ``print(model)`` shows: score card, the risk formula (``formula(model)``), the
    score-to-risk table (``table(model)``) and one certificate line."""
    return r.document([
        f"{title}: {model.formula}",
        r.table(_card_display(model)),
        formula(model),
        r.table(table(model)),
        "Certificate: " + model.certificate_line(),
    ])


def card(model, kind: str = "text", title: str = "Risk score", formula=risk_formula,
         table=_risk_table_display) -> str:
    """Score card, risk formula and score-to-risk table of ``model`` in one of render.FORMATS (the
    title, formula and table as :func:`short_report` takes them)."""
    r.check_kind(kind)
    return r.document([r.heading(r.escape(f"{title}: {model.formula}", kind), kind, 2),
                       r.table(_card_display(model), kind), r.paragraph(formula(model), kind),
                       r.table(table(model), kind)], kind)


class Summary(r.Rendered):
    """Full report of a fitted :class:`RiskScore`; prints, renders and converts to pandas.

    Sections: data, score card, score-to-risk table, fit on the training data, certificate, notes.
    """

    _title = "Risk score"
    _notes_heading = None  # the notes follow the certificate they qualify

    def __init__(self, model):
        self.model = model

    # --- content ----------------------------------------------------------------------
    def header(self) -> list[tuple[str, str]]:
        m = self.model
        s = m.settings
        ev = m.event
        rows = [
            ("Formula", m.formula),
            ("Outcome", f"{m.outcome} (event: {m.outcome} = {ev!r})" if not (ev is True or ev == 1) else m.outcome),
            ("Rows used", f"{m.nobs:,d}"),
            ("Events", f"{m.events:,d} ({r.fmt_percent(m.events / m.nobs)})"),
        ]
        if m.rows_dropped:
            rows.append(("Rows dropped (missing values)", f"{m.rows_dropped:,d}"))
        handled = missing_text(m)
        if handled:
            rows.append(("Missing values", handled))
        every = bool((m.solver.settings or {}).get("continuous_scale", False))
        found_at = (m.solver.settings or {}).get("refined_from")
        if s.scales != (1.0,) or every:
            rows.append(("Score scale", f"{m.scale:g} points per logit" + (
                " (chosen among every scale > 0)" if every else
                f" (its points' own scale; the search's best score was found at {found_at:g}, among "
                f"{_scales_text(s.scales)})"
                if found_at is not None else
                f" (chosen among {_scales_text(s.scales)})" if len(s.scales) > 1 else "")))
        rows += [
            ("Points per term", f"{min(s.coef_lower)} to {max(s.coef_upper)}"),
            ("Model size", f"{m.size} (limit {s.min_size}..{s.max_size})"),
            ("c0 (penalty per term)", f"{s.c0:g}"),
            ("Intercept range searched", f"{s.intercept_range[0]} to {s.intercept_range[1]}"
             + (" (a real number)" if s.real_intercept else "")),
        ]
        if s.weighted:
            rows.append(("Sample weights", "yes"))
        if s.positive_weight != 1:
            rows.append(("Event weight", f"{s.positive_weight:g}"))
        return rows

    def constraints_table(self) -> pd.DataFrame | None:
        """The operational constraints and threshold searches the model was fitted under."""
        m = self.model
        s = m.settings
        rows = [("constraint", c.describe()) for c in s.constraints]
        if s.factors_as_one:
            rows.append(("setting", "factors_as_one=True: each factor counts as one term toward max_size"))
        for t in m.design.thresholds:
            kept, total = s.threshold_candidates.get(t.term, (len(t.cuts), len(t.cuts)))
            cols = list(t.columns)
            lb, ub = min(s.coef_lower[j] for j in cols), max(s.coef_upper[j] for j in cols)
            limit = f"up to {t.k} cut(s)" if t.k < len(t.cuts) else "any number of cuts"
            if t.kind == "cut":
                what = f"fixed cuts at {', '.join(f'{c:.6g}' for c in t.cuts)}"
            elif t.on_grid:
                what = (f"{limit} among a {total}-cut quantile grid ({t.n_distinct:,d} distinct values); "
                        f"{kept:,d} can hold an optimal cut")
            else:
                what = (f"{limit} among all {t.n_distinct - 1:,d} gaps between distinct values; "
                        f"{kept:,d} can hold an optimal cut")
            rows.append((t.term, f"{what}; points per cut {lb} to {ub}"))
        if not rows:
            return None
        return pd.DataFrame(rows, columns=["kind", "constraint"])

    def fairness_table(self) -> pd.DataFrame | None:
        """The fairness constraints' values on the training rows: ``constraint``, ``quantity``,
        ``value``, ``bound`` and ``slack`` (bound − value for a difference, value − bound for a
        ratio; never negative on the training rows)."""
        rows = self.model.training.constraint_values
        if not rows:
            return None
        return pd.DataFrame([{k: r[k] for k in ("constraint", "quantity", "value", "bound", "slack")} for r in rows])

    def fit_table(self) -> pd.DataFrame:
        m = self.model
        ev = m.training_evaluation
        rows = [("Mean logistic loss", f"{m.loss:.6f}")]
        try:
            rows += [("Log-likelihood (null model)", f"{m.llf:.2f} ({m.llnull:.2f})"),
                     ("AIC / BIC", f"{m.aic:.1f} / {m.bic:.1f} ({m.df_model + 1} parameters)")]
        except DataError:  # a loaded weighted fit saved without its weight total
            pass
        if ev is None:
            # a model loaded from JSON keeps its training headline metrics only
            t = m.training_metrics
            rows += [(label, fmt(t[k])) for label, k, fmt in
                     (("AUC", "auc", lambda v: f"{v:.3f}"), ("CAL (by score)", "cal", r.fmt_percent),
                      ("Brier score", "brier", lambda v: f"{v:.4f}")) if t[k] == t[k]]
        else:
            rows += [
                ("AUC (95% CI, DeLong)", "NA" if ev.auc is None else
                 f"{ev.auc.auc:.3f} ({ev.auc.lower:.3f} to {ev.auc.upper:.3f})"
                 if ev.auc.lower == ev.auc.lower else f"{ev.auc.auc:.3f}"),
                ("CAL (by score)", r.fmt_percent(ev.cal)),
                ("Brier score", f"{ev.brier:.4f}"),
                ("Hosmer–Lemeshow", ev.hosmer_lemeshow.describe()),
                ("Calibration slope", "NA (risks of 0 or 1)" if ev.calibration is None
                 else r.fmt_fixed(ev.calibration.slope, 3)),
            ]
        return pd.DataFrame(rows, columns=["statistic", "value"])

    def reliability(self) -> pd.DataFrame | None:
        ev = self.model.training_evaluation
        return None if ev is None else ev.reliability

    def certificate(self) -> pd.DataFrame:
        m = self.model
        rep = m.solver
        gap = r.fmt_gap(m.gap, m.settings.gap_tolerance, state_tolerance=True)
        rows = [("Status", m.status), ("Objective (loss + c0 x size)", f"{m.objective:.8g}"),
                ("Lower bound", f"{m.lower_bound:.8g}"), ("Optimality gap", gap),
                ("Absolute gap", r.fmt_absolute_gap(m.objective, m.lower_bound, m.settings.absolute_gap_tolerance,
                                                     state_tolerance=True)),
                ("Certified by", certified_by(m))]
        if (rep.settings or {}).get("engine") == "cells":
            # the support search: its own counts (supports, regressions, point vectors)
            rows += [("Root bound (saturated loss, all columns)", f"{rep.root_bound:.8g}"),
                     ("Nodes", f"{rep.nodes:,d} supports ({rep.lp_solves:,d} cell regressions solved, "
                               f"{rep.listed:,d} point vectors calibrated)"),
                     ("Certificate covers", rep.settings.get("scope")  # a loaded document may lack it
                      or SCOPES[bool(rep.settings.get("continuous_scale"))])]
        elif (rep.settings or {}).get("engine") == "cox_supports":
            # the time-to-event support search: supports, Cox regressions, point vectors
            rows += [("Root bound (Cox regression, all columns)", f"{rep.root_bound:.8g}"),
                     ("Nodes", f"{rep.nodes:,d} supports ({rep.lp_solves:,d} Cox regressions solved, "
                               f"{rep.listed:,d} point vectors listed)"),
                     ("Certificate covers", rep.settings.get("scope") or "every score scale > 0")]
        else:
            rows += [("Root LP bound", f"{rep.root_bound:.8g}"), ("Nodes", _nodes(rep)),
                     ("Loss cuts in pool", f"{rep.cuts:,d}")]
        rows += [("Time", f"{rep.time:.2f} s"), ("Solver", rep.solver)]
        return pd.DataFrame(rows, columns=["", "value"])

    def notes(self) -> list[str]:
        m = self.model
        out = []
        if m.status == "numerical_gap":
            out.append(f"The search finished, but some nodes were settled only up to the LP's numerical "
                       f"tolerances: the best possible objective lies between {m.lower_bound:.6g} and "
                       f"{m.objective:.6g} (gap {r.fmt_gap(m.gap, m.settings.gap_tolerance)}); the model is not "
                       "proven optimal.")
        elif m.status == "rashomon_member":  # chosen from rf.rashomon_set by a user's preference
            out.append(f"A member of a Rashomon set, chosen by preference rather than by its objective: no risk "
                       f"score within these limits has an objective below {m.lower_bound:.6g}, and this one's is "
                       f"{m.objective:.6g} ({r.fmt_gap(m.gap, m.settings.gap_tolerance)} above that).")
        elif m.status != "optimal":
            out.append(f"Stopped at the {m.status.replace('_', ' ')}: the model is not proven optimal; the "
                       f"best possible objective lies between {m.lower_bound:.6g} and {m.objective:.6g} "
                       f"(gap {r.fmt_gap(m.gap, m.settings.gap_tolerance)}).")
        elif within_tolerance(m) is None:
            out.append(f"Proven optimal: no risk score within these limits has an objective below "
                       f"{m.lower_bound:.8g}.")
        else:
            out.append(f"Optimal within the tolerance ({within_tolerance(m)}), not proven optimal: no risk score "
                       f"within these limits has an objective below {m.lower_bound:.8g} and this model's is "
                       f"{m.objective:.8g}, so a better one may exist (a smaller tolerance narrows the gap).")
        engine = (m.solver.settings or {}).get("engine")
        if engine == "cells":
            out.append("Certified by listing supports with bounds from the data's cells (the saturated loss of "
                       "Ustun & Rudin, 2019, per support and per score), each listed point vector calibrated "
                       "exactly; the certificate covers "
                       + ("every score scale > 0 (the continuous multiplier of Liu et al., 2022) and every real "
                          f"intercept. Risks are (intercept + score) / {m.scale:.6g} logits."
                          if m.solver.settings.get("continuous_scale") else "the score scale searched."))
            if m.solver.settings.get("separation_proof"):
                out.append("The rows are separable: every score that leaves an event row at or below a non-event "
                           "row has a loss of at least that of two such rows sharing one risk, above this model's "
                           "objective, and every support that could order all events above all non-events at a "
                           "lower penalty was listed and ruled out (no linear score orders its cells).")
        elif engine == "cox_supports":
            # the certificate's own words for its bounds (a loaded document may lack them)
            bound = (m.solver.settings.get("bound")
                     or "the gap bound of each support's Cox regression and of each listed point vector")
            out.append(f"Certified by listing supports with {bound}; the certificate covers every score scale > 0 "
                       f"(the continuous multiplier of Liu et al., 2022). Log hazard ratios are score / "
                       f"{m.scale:.6g}.")
        if len(m.settings.scales) > 1:
            added = [row["scale"] for row in m.solver.scales if row.get("added")]
            out.append(f"The certificate covers the score scales {_scales_text(m.settings.scales)} (a finite set"
                       + (f"; {_scales_text(added)} added by the search where the best points fit best"
                          if added else "") + "): "
                       "the lower bound holds for every risk score at any of them, not at scales in between. "
                       f"Risks are (intercept + score) / {m.scale:g} logits.")
        found_at = (m.solver.settings or {}).get("refined_from")
        if found_at is not None:
            before = m.solver.settings.get("unrefined_objective")
            out.append(f"The search found its best score at scale {found_at:g}. It was then moved to the scale "
                       "where its points fit best (with the points fixed the loss is convex in 1 / scale), and "
                       "better points found near them by a local search in the time left were taken (points "
                       "changed at that scale, at scales near it, or together with it); "
                       f"at scale {m.scale:g} the objective is lower"
                       + (f" by {before - m.objective:.2g} (from {before:.10g} to {m.objective:.10g})"
                          if before is not None else "")
                       + ". The card is at least as good as every risk score at the scales searched; scores at "
                       "other scales are not covered by the certificate.")
        lo, hi = m.settings.intercept_range
        if m.intercept_at_bound:
            out.append(f"The base points sit at the edge of the intercept range searched ({lo} to {hi}); the "
                       "constraints may be pushing it there — widen `intercept_range` to check.")
        out += grid_and_constraint_notes(m, "fit")
        coarser = coarser_grid_note(m)
        if coarser:
            out.append(coarser)
        if m.training.constraint_values:
            out.append("Fairness constraints hold exactly on the training rows (slack ≥ 0 above); on new rows they "
                       "hold only approximately: audit them there with `m.fairness(data, by=...)`.")
        if m.settings.weighted:
            out.append("Loss and certificate use the sample weights; the training diagnostics are unweighted.")
        few = few_rows_note(m)
        if few:
            out.append(few)
        if m.training_evaluation is not None:  # the Hosmer–Lemeshow line of the fit table, read in context
            tail = hosmer_lemeshow_tail_note(m.training_evaluation.hosmer_lemeshow)
            if tail:
                out.append(tail)
        return out

    def _tables(self) -> dict[str, pd.DataFrame | None]:
        return {"header": pd.DataFrame(self.header(), columns=["item", "value"]),
                "coefficients": coefficient_table(self.model),
                "score_card": self.model.score_card(), "risk_table": self.model.risk_table(),
                "fit": self.fit_table(), "certificate": self.certificate(), "scales": scale_table(self.model),
                "fairness": self.fairness_table(),
                "reliability": self.reliability(), "constraints": self.constraints_table()}

    def to_frame(self) -> pd.DataFrame:
        """The coefficient table, as statsmodels' ``summary2().tables[1]``: one row per parameter
        (``(intercept)`` first, then each item of the card), with ``term`` (the item as the card
        prints it), ``points``, ``coef`` (points / score scale: the logistic coefficient, a log
        odds ratio), ``odds_ratio`` (exp(coef)), ``variable`` and ``kind``. Whole-number points have
        no standard errors (see :class:`~riskformula.NotApplicableError`); the card itself is
        :meth:`score_card`."""
        return coefficient_table(self.model)

    def score_card(self) -> pd.DataFrame:
        """The score card, as ``m.score_card()``: ``term``, ``column``, ``points``, ``variable``, ``kind``."""
        return self.model.score_card()

    def to_dict(self) -> dict:
        d = self.model.to_dict()
        d["risk_table"] = self.model.risk_table().to_dict(orient="list")
        ev = self.model.training_evaluation
        if ev is not None:
            d["training"] = ev.to_dict()
        try:  # statsmodels' names, as the model's attributes give them
            d["likelihood"] = {k: float(getattr(self.model, k)) for k in
                               ("llf", "llnull", "deviance", "null_deviance", "aic", "bic", "df_model", "df_resid")}
        except DataError:  # a loaded weighted fit saved without its weight total
            pass
        d["solver"] = {k: v for k, v in self.model.solver.to_dict().items() if k not in ("log", "solution")}
        d["solver"]["scales"] = [dict(r) for r in self.model.solver.scales]
        return d

    # --- rendering --------------------------------------------------------------------
    def _header(self) -> list[tuple[str, str]]:
        return self.header()

    def _sections(self) -> list:
        m = self.model
        out: list[tuple[str | None, pd.DataFrame | str]] = []
        con = self.constraints_table()
        if con is not None:
            out.append(("Constraints and thresholds", con))
        fair = self.fairness_table()
        if fair is not None:
            shown = pd.DataFrame({"constraint": fair["constraint"], "quantity": fair["quantity"],
                                  "training value": [r.fmt_fixed(x, 4) for x in fair["value"]],
                                  "bound": [r.fmt_fixed(x, 4) for x in fair["bound"]],
                                  "slack": [r.fmt_fixed(x, 4) for x in fair["slack"]]})
            out.append(("Fairness on the training rows", shown))
        out += [("Score card", _card_display(m)), (None, risk_formula(m)),
                ("Score-to-risk table", _risk_table_display(m)), ("Fit on the training data", self.fit_table())]
        rel = self.reliability()
        if rel is not None and len(rel) <= 40:
            shown = rel.copy()
            for c in ("predicted_risk", "observed_risk", "ci_lower", "ci_upper"):
                shown[c] = [r.fmt_percent(x) for x in shown[c]]
            out.append(("Calibration by score (training data)", shown))
        out.append(("Certificate", self.certificate()))
        scales = _scale_table_display(m)
        if scales is not None:
            out.append(("Certificate by score scale", scales))
        return out

    def _note_lines(self) -> list[str]:
        return self.notes()

    def __repr__(self) -> str:
        return f"<Summary of {self.model!r}>"


def coefficient_table(m) -> pd.DataFrame:
    """The parameters of ``m`` as a coefficient table (see :meth:`Summary.to_frame`)."""
    card = m.score_card()
    points = np.r_[float(m.intercept), card["points"].to_numpy(float)]
    nb = m.risk_map != "logistic"  # another score → risk map: points are not logits
    coef = np.full(len(points), np.nan) if nb else points / m.scale
    return pd.DataFrame({"term": ["(intercept)", *card["term"]], "points": points, "coef": coef,
                         "odds_ratio": np.exp(coef), "variable": [None, *card["variable"]],
                         "kind": ["intercept", *card["kind"]]})


#: fewer rows of the rarer outcome per item than this get a note and, at fit time, a warning
#: (Peduzzi et al., 1996: 10 events per variable)
ROWS_PER_ITEM = 10


def few_rows_note(m) -> str | None:
    """The note on a fit with fewer than :data:`ROWS_PER_ITEM` rows of the rarer outcome per item
    (a 5-row fit can be "optimal" with every item at its bound), or None."""
    # a time-to-event score: events per item (censored rows are not the rarer "outcome")
    survival = m.design.survival is not None
    rarer = m.events if survival else min(m.events, m.nobs - m.events)
    items = max(int(m.size), 1)
    if rarer >= ROWS_PER_ITEM * items:
        return None
    kind = "events" if survival or m.events <= m.nobs - m.events else "non-events"
    return (f"Few rows for the model: {m.nobs:,d} training rows with {rarer:,d} {kind} for {m.size} item(s), "
            f"fewer than {ROWS_PER_ITEM} of the rarer outcome per item (Peduzzi et al., 1996). The certificate "
            "is exact on these rows, but points chosen from so few rarely hold on new data: check them with "
            "`rf.cross_validate`, or fit fewer items.")


def missing_text(m) -> str:
    """How the fit handled each variable's missing values, one entry per variable fitted with
    ``missing="item"``, ``"as <value>"`` or ``"drop"`` ("lactate — own item (57 rows); age — counted
    as 50; ward — rows dropped (12)"), with the training rows' counts when the model's profile
    keeps them (a variable dropped under ``"drop"`` that had no missing values is left out)."""
    profile = getattr(m, "profile", None)
    counts = {v: p.n_missing for v, p in profile.variables.items()} if profile is not None else {}
    parts = []
    for v, p in getattr(m.design, "missing", {}).items():
        n = counts.get(v)
        rows = "" if n is None else f" ({n:,d} row{'s' if n != 1 else ''})"
        if p["action"] == "item":
            parts.append(f"{v} — own item" + (" (none in training)" if not p.get("seen", True) else rows))
        elif p["action"] == "as":
            value = p["value"]
            shown = f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
            parts.append(f"{v} — counted as {shown}{rows}")
        elif p["action"] == "drop" and n != 0:
            parts.append(f"{v} — rows dropped" + ("" if n is None else f" ({n:,d})"))
    return "; ".join(parts)


def grid_and_constraint_notes(m, better: str) -> list[str]:
    """The notes on what the certificate is relative to: a quantile grid of cuts, and the
    constraints (a model without them may ``better`` better)."""
    out = []
    if any(t.on_grid for t in m.design.thresholds):
        out.append("Thresholds were chosen from a quantile grid: the certificate is optimal relative to that "
                   "grid, not over every cut position.")
    auto = [t for t in m.design.thresholds if t.on_grid and t.kind == "threshold" and "grid" not in t.term]
    if auto:
        which = ", ".join(f"{t.term} ({t.n_distinct:,d} distinct values)" for t in auto)
        out.append(f"A {AUTO_GRID}-cut quantile grid was chosen automatically for {which}: threshold() does so "
                   f"above {AUTO_ABOVE:,d} distinct values; `threshold(x, grid=None)` searches every cut.")
    if m.settings.constraints:
        out.append(f"Optimal under the listed constraints: a model without them may {better} better.")
    return out


#: at least this many candidate cuts of threshold() terms in a fit stopped at its time or node limit, and
#: the notes suggest a quantile grid of :data:`COARSE_GRID` cuts
MANY_CUTS = 40


def coarser_grid_note(m) -> str | None:
    """For a fit stopped at its time or node limit whose ``threshold()`` terms hold at least
    :data:`MANY_CUTS` candidate cuts in all (some term more than :data:`COARSE_GRID`): how many,
    and the smaller class a quantile grid makes, which the search can often certify; else None."""
    if m.status not in ("time_limit", "node_limit"):
        return None
    terms = [t for t in m.design.thresholds if t.kind == "threshold"]
    n = sum(len(t.cuts) for t in terms)
    wide = [t.term for t in terms if len(t.cuts) > COARSE_GRID]
    if n < MANY_CUTS or not wide:
        return None
    which = ", ".join(wide[:3]) + (f" and {len(wide) - 3} more" if len(wide) > 3 else "")
    return (f"The search stopped before its certificate over {n:,d} candidate cuts of threshold() terms "
            f"(more than {COARSE_GRID} in {which}): the cards it has to rule out grow with the cuts. A quantile "
            f"grid is a smaller class that it can often certify in seconds, e.g. `threshold(x, grid={COARSE_GRID})` "
            f"for about {COARSE_GRID} cuts of x, or `threshold(., grid={COARSE_GRID})` for every predictor (the "
            "certificate is then relative to the grid).")


def certified_by(m) -> str:
    """Which tolerance made the run optimal: the relative gap's, the absolute gap's, both, or the
    LP's precision (the whole tree searched, a gap below what the LP resolves); ``"not certified"``
    for a run that is not optimal."""
    if m.status != "optimal":
        return "not certified"
    rel = m.gap <= m.settings.gap_tolerance
    ab = m.objective - m.lower_bound <= m.settings.absolute_gap_tolerance
    if rel and ab:
        return "both gap tolerances"
    if rel or ab:
        return "relative gap tolerance" if rel else "absolute gap tolerance"
    return "the LP's precision (whole tree searched)"


def within_tolerance(m) -> str | None:
    """For an optimal model whose gap is not ~0 (a loose tolerance the user set stopped the search):
    the gap that certified it, e.g. ``"gap 4.57% within tolerance 50%"``; else ``None`` (proven
    optimal, or not optimal at all). A 4.57% gap is no proof of optimality, and reports must not
    call it one."""
    s = m.settings
    if (m.status != "optimal" or r.gap_is_zero(m.gap, s.gap_tolerance)
            or r.absolute_gap_is_zero(m.objective, m.lower_bound, s.absolute_gap_tolerance)):
        return None
    if m.gap <= s.gap_tolerance:
        return "gap " + r.fmt_gap(m.gap, s.gap_tolerance, state_tolerance=True)
    if m.objective - m.lower_bound <= s.absolute_gap_tolerance:
        return "absolute gap " + r.fmt_absolute_gap(m.objective, m.lower_bound, s.absolute_gap_tolerance,
                                                     state_tolerance=True)
    return None  # the whole tree was searched: proven up to the LP's precision


def _nodes(rep) -> str:
    """The node count, with how many of them were settled by listing their integer points."""
    return f"{rep.nodes:,d}" + (f" ({rep.listed:,d} settled by listing their points)" if rep.listed else "")
