"""A self-contained calculator page: the score card in one HTML file a browser runs offline.

The page is a rendering of the declarative card (:mod:`riskformula.card`): one input per variable
the card reads (a number for a measurement or a threshold's variable, a checkbox for a 0/1 value,
a list of the training levels for a factor; a "not measured" choice for a variable whose missing
values ``predict`` scores — a missing item's points, or the value a missing value counts as), the
card with the points each item gives, the total
score, the risk from the model's own score → risk map (the logistic curve, a net-benefit
score's band risks, or a time-to-event score's risk within each of its horizons ``t``,
``1 − exp(−H₀(t) · exp((intercept + score) / scale))`` from the baseline cumulative hazards
``H₀(t)`` the page holds as constants), the score → risk table, the certificate line and the
data's provenance.

The card travels as JSON in a ``<script type="application/json">`` block (``<``, ``>`` and ``&``
written as ``\\u`` escapes, so no text from the model can close the block); every text shown is
HTML-escaped; the page loads nothing (inline CSS and script, no links) and evaluates no code of
the model's.  Its result element carries the full-precision score and risk in ``data-score`` and
``data-risk`` (empty until every input is given); a time-to-event score's ``data-risk`` is the
risk within its first horizon and ``data-risks`` a JSON list of the risks within every horizon.  A card the page cannot compute faithfully — an
expression such as ``np.log(x)`` — is refused with a :class:`~riskformula.SettingsError`.
"""

from __future__ import annotations

import html
import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from .._text import visible
from .._version import __version__
from ..design.missing import scorable
from ..errors import SettingsError
from ..reports import render as r
from ..reports.summary import band_risk_line, risk_formula
from .._json import plain as _plain
from .plan import _risk_map as plan_risk_map

__all__ = ["calculator_spec", "to_html_calculator"]


def to_html_calculator(model, path=None, *, title: str | None = None) -> str:
    """The score card as a calculator page: one HTML file that needs no network.

    Parameters
    ----------
    model : RiskScore or NetBenefitScore or SurvivalScore
        A fitted (or loaded) risk score.
    path : str or path-like, optional
        Where to write the page (UTF-8); default None: only return it.
    title : str, optional
        The page's title and heading; default ``"Risk calculator"``.

    Returns
    -------
    str
        The page's HTML text.

    Raises
    ------
    SettingsError
        When the card has a term the page cannot compute from the inputs (an expression such as
        ``np.log(age)``, which only formulaic evaluates), or a score → risk map it does not know.

    Examples
    --------
    >>> import riskformula as rf
    >>> from riskformula.export.html import to_html_calculator
    >>> df = rf.load_dataset("breastcancer")
    >>> m = rf.risk_score("Benign ~ .", df, max_size=3, coef_range=(-5, 5), time_limit=10)  # doctest: +SKIP
    >>> text = to_html_calculator(m, "calculator.html", title="Breast mass: risk of benign")  # doctest: +SKIP
    """
    spec = calculator_spec(model)
    page = _page(model, spec, "Risk calculator" if title is None else str(title))
    if path is not None:
        Path(path).write_text(page, encoding="utf-8")
    return page


# --------------------------------------------------------------------------------------
# the card as data for the page's script
# --------------------------------------------------------------------------------------

def calculator_spec(model) -> dict:
    """What the page's script computes, as plain JSON values (embedded in the page).

    Parameters
    ----------
    model : RiskScore or NetBenefitScore or SurvivalScore
        A fitted (or loaded) risk score.

    Returns
    -------
    dict
        ``formula``; ``inputs``, one per variable the card reads, ``{"id", "variable", "control",
        "levels", "numbers", "missing"}`` with ``control`` ``"number"``, ``"checkbox"`` (a value that
        was 0/1 in training), ``"select"`` (``levels``: the training levels' texts; ``numbers``:
        their numeric values where a rule also reads the factor as a number, else None) or
        ``"presence"`` (a variable read only by its missing item: a "not measured" box), and
        ``missing`` what the input's "not measured" choice gives: None (no such choice),
        ``{"action": "item"}`` or ``{"action": "as", "x", "idx"}`` (see :func:`_missing_choice`); ``items``, the
        card in order, ``{"label", "term", "points", "factors"}``, an item's value being the
        product of its factors: ``{"t": "iv", "in", "lo", "hi"}`` (``lo < x ≤ hi``, None open),
        ``{"t": "le", "in", "c"}`` (``x ≤ c``), ``{"t": "eq", "in", "idx"}`` (the selected level is
        one of ``idx``), ``{"t": "x", "in"}`` (the value) or ``{"t": "na", "in"}`` (the input is
        "not measured", which makes every other factor on it 0), ``in`` indexing ``inputs``; ``map``,
        ``{"kind": "logistic", "intercept", "scale"}`` or ``{"kind": "bands", "cutoffs", "risks"}``
        (the band is the number of cut-offs the score, rounded to 9 decimals, reaches; infinite
        cut-offs as the strings ``"Infinity"``/``"-Infinity"``) or ``{"kind": "cox", "intercept",
        "scale", "horizons", "labels", "hazards"}`` (a time-to-event score: the risk within
        ``horizons[k]`` is ``1 − exp(−hazards[k] · exp((intercept + score) / scale))``); ``table``,
        the risk table's ``[score_from, score_to]`` rows.

    Raises
    ------
    SettingsError
        As :func:`to_html_calculator`.

    Examples
    --------
    >>> spec = calculator_spec(m)  # doctest: +SKIP
    >>> [i["control"] for i in spec["inputs"]]  # doctest: +SKIP
    ['number', 'checkbox']
    """
    card, design = model.scorecard, model.design
    categories = dict(getattr(design, "categories", None) or {})
    uses: dict = {}          # variable -> set of uses, in first-use order

    def use(var, how):
        uses.setdefault(var, set()).add(how)

    def refuse(it):
        return SettingsError(
            f"the calculator page cannot compute the term `{it.term}` (item `{it.label}`): it is an expression "
            "only the formula's Python code computes, and the page evaluates no code. Put the computed value "
            "in a data column and refit with that column in the formula.")

    def parts_of(it):
        if not design.rules:
            raise SettingsError("the calculator page reads the design's declarative rules, and this model has none "
                                "(saved by an older version of riskformula): refit it.")
        if it.kind == "missing":    # "x is missing": the input's "not measured" choice
            use(it.variable, "missing")
            return [("na", it.variable, it)]
        if it.kind == "interval":   # its cut columns must compare a data column, not an expression
            if any(design.rules[j].kind != "le" or design.rules[j].variable != it.variable
                   for j in it.columns if j is not None) or it.variable is None:
                raise refuse(it)
            use(it.variable, "interval")
            return [("iv", it.variable, it)]
        rule = design.rules[it.columns[0]]
        parts = list(rule.parts) if rule.kind == "product" else [rule]
        if rule.kind == "expression" or not parts or any(
                p.kind not in ("le", "level", "linear") or p.variable is None for p in parts):
            raise refuse(it)
        if any(p.kind == "level" and p.variable not in categories for p in parts):
            raise SettingsError(f"the calculator page needs the training levels of the factor in `{it.term}`, "
                                "and the model does not hold them.")
        out = []
        for p in parts:
            use(p.variable, {"le": "interval", "level": "level", "linear": "linear"}[p.kind])
            out.append(({"le": "le", "level": "eq", "linear": "x"}[p.kind], p.variable, p))
        return out

    item_parts = [parts_of(it) for it in card.items]
    fitted = dict(getattr(design, "missing", None) or {})
    inputs, index = [], {}
    for k, (var, how) in enumerate(uses.items()):
        index[var] = k
        entry: dict[str, Any] = {"id": f"rf-in-{k}", "variable": str(var), "control": "number", "levels": None,
                                 "numbers": None, "missing": _missing_choice(var, fitted.get(var), categories)}
        if how == {"missing"}:    # read only by its missing item: measured or not is all that counts
            entry["control"] = "presence"
        elif var in categories and "level" in how:
            levels = list(categories[var])
            entry.update(control="select", levels=[str(v) for v in levels])
            if how - {"level", "missing"}:   # a level also read as a number
                if not all(_is_number(v) for v in levels):
                    raise SettingsError(f"the calculator page cannot read the variable `{var}` both as a factor and "
                                        f"as a number: its levels are not all numbers ({levels[:5]!r}).")
                entry["numbers"] = [float(v) for v in levels]
        elif how - {"missing"} == {"linear"} and _zero_one(model, var):
            entry["control"] = "checkbox"
        inputs.append(entry)

    items = []
    for it, parts in zip(card.items, item_parts):
        factors = []
        for t, var, p in parts:
            f = {"t": t, "in": index[var]}
            if t == "iv":
                f.update(lo=_float(p.lower), hi=_float(p.upper))
            elif t == "le":
                f["c"] = float(p.value)
            elif t == "eq":
                f["idx"] = [i for i, v in enumerate(categories[var]) if _same(v, p.value)]
            factors.append(f)
        items.append({"label": it.label, "term": it.term, "points": _plain(it.points), "factors": factors})

    table = model.risk_table()
    rows = [[_json_number(a), _json_number(b)] for a, b in zip(table["score_from"], table["score_to"])]
    return {"formula": model.formula, "inputs": inputs, "items": items, "map": _risk_map(model), "table": rows}


def _missing_choice(var, policy, categories) -> dict | None:
    """What the input's "not measured" choice does, as ``predict`` scores a missing value: None (no
    such choice: ``predict`` refuses a missing value), ``{"action": "item"}`` (the variable's items
    give 0 and its missing item its points) or ``{"action": "as", "x": number, "idx": level index}``
    (the value or level a missing value counts as)."""
    if not scorable(policy):
        return None
    if policy["action"] == "item":
        return {"action": "item"}
    value = _plain(policy["value"])
    levels = list(categories.get(var, ()))
    idx = next((i for i, v in enumerate(levels) if _same(v, value)), None)
    if levels and idx is None:
        raise SettingsError(f"the calculator page cannot offer \"not measured\" for `{var}`: a missing value "
                            f"counts as {value!r}, which is not one of its training levels.")
    return {"action": "as", "x": float(value) if _is_number(value) else None, "idx": idx}


def _risk_map(model) -> dict:
    kind = getattr(model, "risk_map", None)
    if kind == "cox":
        rm = plan_risk_map(model, None, "the calculator page")
        return {"kind": "cox", "intercept": _plain(model.intercept), "scale": float(model.scale),
                "horizons": list(rm.horizons), "labels": [rm.label(k) for k in range(len(rm.horizons))],
                "hazards": list(rm.hazards)}
    if kind == "bands":
        return {"kind": "bands", "cutoffs": [_json_number(c) for c in model.decision_cutoffs()],
                "risks": [float(x) for x in model.nb.band_risk]}
    if kind != "logistic":
        raise SettingsError(f"the calculator page knows the logistic, the net-benefit and the Cox score → risk maps; "
                            f"{type(model).__name__} has another one.")
    return {"kind": "logistic", "intercept": _plain(model.intercept), "scale": float(model.scale)}


def _zero_one(model, var) -> bool:
    """Whether a value term reading ``var`` as it is took only the values 0 and 1 in training."""
    for it in model.scorecard.items:
        rule = model.design.rules[it.columns[0]] if it.kind == "value" and model.design.rules else None
        if rule is not None and rule.kind == "linear" and rule.variable == var:
            how, rows = model.scorecard.support.get(it.term, (None, None))
            if how == "rows" and np.isin(np.asarray(rows, float), (0.0, 1.0)).all():
                return True
    return False


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating)) and math.isfinite(float(v))


def _same(a, b) -> bool:
    """Equal as the level rule compares (``==``), a boolean level never matching a number."""
    return isinstance(a, (bool, np.bool_)) == isinstance(b, (bool, np.bool_)) and bool(a == b)



def _float(v):
    return None if v is None else float(v)


def _json_number(v):
    v = float(v)
    return v if math.isfinite(v) else ("Infinity" if v > 0 else "-Infinity")


def _script_json(data) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` appears in it."""
    text = json.dumps(data, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# --------------------------------------------------------------------------------------
# the page
# --------------------------------------------------------------------------------------

def _e(text) -> str:
    """Text shown on the page: HTML-escaped, control and bidirectional characters as escapes."""
    return html.escape(visible(text), quote=True)


def _field(entry: dict, notes: list) -> str:
    i, name = entry["id"], _e(entry["variable"])
    help_ = f'<p class="help" id="{i}-help">{_e("; ".join(notes))}</p>' if notes else ""
    described = f' aria-describedby="{i}-help"' if notes else ""
    # "not measured": a missing value, scored as predict scores it (a select's option, else a box)
    na = "" if entry["missing"] is None or entry["control"] in ("select", "presence") else (
        f'<span class="na"><input type="checkbox" id="{i}-na"> <label for="{i}-na">{name} not measured</label></span>')
    if entry["control"] == "presence":
        off = "" if entry["missing"] is not None else " disabled"
        return (f'<div class="field check"><input type="checkbox" id="{i}"{described}{off}>'
                f'<label for="{i}">{name} not measured</label>{help_}</div>')
    if entry["control"] == "checkbox":
        return (f'<div class="field check"><input type="checkbox" id="{i}"{described}>'
                f'<label for="{i}">{name} <span class="unit">(ticked = 1)</span></label>{na}{help_}</div>')
    if entry["control"] == "select":
        options = "".join(f'<option value="{k}">{_e(v)}</option>' for k, v in enumerate(entry["levels"]))
        if entry["missing"] is not None:
            options += '<option value="na">(not measured)</option>'
        return (f'<div class="field"><label for="{i}">{name}</label><select id="{i}"{described}>'
                f'<option value="">(choose)</option>{options}</select>{help_}</div>')
    return (f'<div class="field"><label for="{i}">{name}</label><input type="number" step="any" '
            f'inputmode="decimal" id="{i}" autocomplete="off"{described}>{na}{help_}</div>')


def _missing_note(entry: dict) -> list:
    """What "not measured" gives, for the input's help text."""
    m = entry["missing"]
    if m is None or m["action"] == "item":
        return []
    shown = entry["levels"][m["idx"]] if m["idx"] is not None else r.fmt_points(m["x"]).lstrip("+")
    return [f"not measured counts as {shown}"]


def _cox_line(mp: dict) -> str:
    """How the page turns a score into the risk within each horizon, with the constants it uses."""
    b = mp["intercept"]
    z = "score" if b == 0 else f"({r.fmt_points(b) if float(b).is_integer() else f'{b:+.6g}'} + score)"
    eta = z if mp["scale"] == 1 else f"{z} / {mp['scale']:.6g}"
    constants = ", ".join(f"H0({t}) = {H:.6g}" for t, H in zip(mp["labels"], mp["hazards"]))
    return (f"risk within t = 1 - exp(-H0(t) * exp({eta})), H0 the Breslow (1974) baseline cumulative hazard of "
            f"the training rows: {constants}")


def _risk_text(a: float, b: float) -> str:
    x, y = r.fmt_percent(a), r.fmt_percent(b)
    return x if x == y else f"{x} to {y}"


def _act_text(p: float) -> str:
    return "never" if not math.isfinite(p) else r.fmt_percent(p)


def _page(model, spec: dict, title: str) -> str:
    card = model.scorecard
    notes: dict = {k: [] for k in range(len(spec["inputs"]))}
    per = []                       # what an item's points multiply, shown next to them
    for it, s in zip(card.items, spec["items"]):
        pts, alone = r.fmt_points(it.points), len(s["factors"]) == 1 and s["factors"][0]["t"] == "x"
        ticked = alone and spec["inputs"][s["factors"][0]["in"]]["control"] == "checkbox"
        per.append("" if it.kind != "value" or ticked else " per unit" if alone else " \u00d7 value")
        for k in dict.fromkeys(f["in"] for f in s["factors"]):
            notes[k].append(f"{pts} when ticked" if ticked else f"{pts} per unit" if alone
                            else f"{it.label}: {pts}{per[-1]}")
    fields = "\n".join(_field(e, notes[k] + _missing_note(e)) for k, e in enumerate(spec["inputs"]))
    rows = "\n".join(f'<tr><th scope="row">{_e(it.label)}</th><td class="num">{_e(r.fmt_points(it.points))}'
                     f'<span class="unit">{_e(u)}</span></td>'
                     f'<td class="num counted" id="rf-item-{k}">&ndash;</td></tr>'
                     for k, (it, u) in enumerate(zip(card.items, per)))
    mp = spec["map"]
    risk_line = (band_risk_line(model) if mp["kind"] == "bands" else _cox_line(mp) if mp["kind"] == "cox"
                 else risk_formula(model))
    table = model.risk_table()
    act = table.get("act_from")   # a net-benefit score's decisions
    if mp["kind"] == "cox":       # one column per horizon
        cells = [[_risk_text(a, b) for a, b in zip(model.risk_of(table["score_from"].to_numpy(), h),
                                                   model.risk_of(table["score_to"].to_numpy(), h))]
                 for h in mp["horizons"]]
        risk_cells = ["".join(f'<td class="num">{_e(col[k])}</td>' for col in cells) for k in range(len(table))]
        risk_head = "".join(f'<th scope="col" class="num">Risk within {_e(t)}</th>' for t in mp["labels"])
        boxes = "\n".join(f'<span class="box"><span class="what">Risk within {_e(t)}</span> '
                          f'<span class="big" id="{"rf-risk" if k == 0 else f"rf-risk-{k}"}">&ndash;</span></span>'
                          for k, t in enumerate(mp["labels"]))
    else:
        risk_cells = [f'<td class="num">{_e(_risk_text(a, b))}</td>'
                      for a, b in zip(table["risk_from"], table["risk_to"])]
        risk_head = '<th scope="col" class="num">Risk</th>'
        boxes = '<span class="box"><span class="what">Risk</span> <span class="big" id="rf-risk">&ndash;</span></span>'
    risk_rows = "\n".join(
        f'<tr id="rf-row-{k}"><td>{_e(s)}</td>{cell}'
        + ("" if act is None else f'<td class="num">{_e(_act_text(act.iloc[k]))}</td>') + "</tr>"
        for k, (s, cell) in enumerate(zip(table["score"], risk_cells)))
    act_head = "" if act is None else '<th scope="col" class="num">Act at thresholds up to</th>'
    written = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    provenance = [("Formula", f"<code>{_e(model.formula)}</code>"),
                  ("Training rows", _e(f"{model.nobs:,d} ({model.events:,d} events)")),
                  ("Certificate", _e(model.certificate_line())),
                  ("Written by", _e(f"riskformula {__version__}, {written}"))]
    dl = "\n".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in provenance)
    return _TEMPLATE % {
        "title": _e(title), "formula": _e(model.formula), "fields": fields, "rows": rows, "risk_rows": risk_rows,
        "risk_line": _e(risk_line), "provenance": dl, "act_head": act_head, "risk_head": risk_head,
        "risk_boxes": boxes, "data": _script_json(spec),
        "css": _CSS, "js": _JS}


_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="riskformula">
<title>%(title)s</title>
<style>%(css)s</style>
</head>
<body>
<header><h1>%(title)s</h1><p class="sub">Risk score <code>%(formula)s</code></p></header>
<main>
<div class="col">
<section aria-labelledby="rf-h-in"><h2 id="rf-h-in">Values</h2>
<form id="rf-form" autocomplete="off" onsubmit="return false">
%(fields)s
<div class="buttons"><button type="reset">Clear</button></div>
</form></section>
<section aria-labelledby="rf-h-res"><h2 id="rf-h-res">Result</h2>
<output id="rf-result" for="rf-form" role="status" aria-live="polite" aria-atomic="true" data-complete="false" data-score="" data-risk="" data-risks="">
<span class="box"><span class="what">Score</span> <span class="big" id="rf-score">&ndash;</span></span>
%(risk_boxes)s
<span class="msg" id="rf-msg"></span>
</output>
<p class="help">%(risk_line)s</p>
</section>
</div>
<div class="col">
<section aria-labelledby="rf-h-card"><h2 id="rf-h-card">Score card</h2>
<table class="card"><thead><tr><th scope="col">Item</th><th scope="col" class="num">Points</th><th scope="col" class="num">Counted</th></tr></thead>
<tbody>
%(rows)s
</tbody>
<tfoot><tr><th scope="row">Score = sum of points</th><td></td><td class="num" id="rf-total">&ndash;</td></tr></tfoot></table>
</section>
<section aria-labelledby="rf-h-risk"><h2 id="rf-h-risk">Score &rarr; risk</h2>
<table class="risk"><thead><tr><th scope="col">Score</th>%(risk_head)s%(act_head)s</tr></thead>
<tbody>
%(risk_rows)s
</tbody></table>
</section>
</div>
<section class="wide" aria-labelledby="rf-h-prov"><h2 id="rf-h-prov">Provenance</h2>
<dl>
%(provenance)s
</dl>
<p class="help">The page computes in the browser and sends nothing anywhere.</p>
</section>
</main>
<script type="application/json" id="rf-model">%(data)s</script>
<script>%(js)s</script>
</body>
</html>
"""

_CSS = """
:root{--ink:#1b1f24;--muted:#555d66;--line:#c9ced4;--hi:#fff3bf;--accent:#0b5cad}
*{box-sizing:border-box}
body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:#fff}
header{padding:1rem 1.5rem .5rem;border-bottom:2px solid var(--line)}
h1{margin:0;font-size:1.6rem}
h2{font-size:1.15rem;margin:0 0 .6rem}
.sub{margin:.25rem 0 0;color:var(--muted)}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;overflow-wrap:anywhere}
main{display:grid;grid-template-columns:minmax(18rem,1fr) minmax(18rem,1.2fr);gap:1.5rem;padding:1rem 1.5rem;max-width:72rem}
section{margin-bottom:1.2rem}
.wide{grid-column:1/-1}
.field{margin:0 0 .8rem}
.field label{display:block;font-weight:600}
.field.check{display:grid;grid-template-columns:auto 1fr;column-gap:.5rem;align-items:center}
.field.check label{display:inline}
.field.check .help{grid-column:2}
.na{display:block;margin-top:.25rem}
.na label{display:inline;font-weight:400}
input[type=number],select{font:inherit;width:100%;max-width:16rem;padding:.35rem .5rem;border:1px solid #8a939c;border-radius:4px}
input[type=checkbox]{width:1.25rem;height:1.25rem;margin:0}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.help{margin:.2rem 0 0;color:var(--muted);font-size:.88rem}
.unit{font-weight:400;color:var(--muted)}
button{font:inherit;padding:.35rem 1rem;border:1px solid #8a939c;border-radius:4px;background:#f3f5f7;cursor:pointer}
#rf-result{display:flex;flex-wrap:wrap;gap:1rem;align-items:baseline}
.box{border:2px solid var(--line);border-radius:6px;padding:.4rem .9rem;min-width:8rem}
.what{display:block;color:var(--muted);font-size:.85rem}
.big{font-size:1.9rem;font-weight:700;font-variant-numeric:tabular-nums}
.msg{flex-basis:100%;color:var(--muted)}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th[scope=row]{font-weight:400}
thead th{border-bottom:2px solid var(--ink)}
tfoot th,tfoot td{font-weight:700;border-top:2px solid var(--ink)}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.current td,tr.current th{background:var(--hi);font-weight:700}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
@media (max-width:44rem){main{grid-template-columns:1fr}}
@page{margin:1.5cm}
@media print{
 body{font-size:10.5pt}
 header{padding:0 0 .3rem}
 main{display:block;padding:0;max-width:none}
 section{break-inside:avoid;margin-bottom:.7rem}
 .buttons{display:none}
 input[type=number],select{border:1px solid #000}
 tr.current td,tr.current th{background:none;border-top:2px solid #000;border-bottom:2px solid #000}
 :focus-visible{outline:none}
}
"""

_JS = r"""
(function () {
  "use strict";
  var spec = JSON.parse(document.getElementById("rf-model").textContent);
  var form = document.getElementById("rf-form"), out = document.getElementById("rf-result");
  var els = spec.inputs.map(function (inp) { return document.getElementById(inp.id); });
  var nas = spec.inputs.map(function (inp) { return document.getElementById(inp.id + "-na"); });
  function num(v) { return typeof v === "string" ? Number(v) : v; }
  function notMeasured(k) {
    var inp = spec.inputs[k], el = els[k];
    if (inp.missing === null) return false;
    if (inp.control === "select") return el.value === "na";
    if (inp.control === "presence") return el.checked;
    return nas[k] !== null && nas[k].checked;
  }
  function read(k) {
    var inp = spec.inputs[k], el = els[k], na = notMeasured(k);
    if (nas[k] !== null) el.disabled = na;
    if (na && inp.missing.action === "item") return {x: NaN, idx: null, na: true};
    if (na) return {x: inp.missing.x === null ? NaN : inp.missing.x, idx: inp.missing.idx, na: false};
    if (inp.control === "presence") return {x: NaN, idx: null, na: false};
    if (inp.control === "checkbox") return {x: el.checked ? 1 : 0, idx: null, na: false};
    if (inp.control === "select") {
      if (el.value === "") return null;
      var i = parseInt(el.value, 10);
      return {x: inp.numbers ? inp.numbers[i] : NaN, idx: i, na: false};
    }
    var s = el.value.trim();
    if (s === "" || (el.validity && el.validity.badInput)) return null;
    var x = Number(s);
    return isFinite(x) ? {x: x, idx: null, na: false} : null;
  }
  function factor(f, v) {
    var a = v[f["in"]];
    if (f.t === "na") return a.na ? 1 : 0;
    if (a.na) return 0;    // a missing value meets none of its variable's other items
    if (f.t === "iv") return ((f.lo === null || a.x > f.lo) && (f.hi === null || a.x <= f.hi)) ? 1 : 0;
    if (f.t === "le") return a.x <= f.c ? 1 : 0;
    if (f.t === "eq") return f.idx.indexOf(a.idx) >= 0 ? 1 : 0;
    return a.x;
  }
  var horizons = spec.map.kind === "cox" ? spec.map.hazards.length : 1;
  function riskOf(s, k) {
    var m = spec.map;
    if (m.kind === "cox") {    // 1 - exp(-H0(t) exp(z)), as predict computes it
      var zc = m.intercept + s;
      if (m.scale !== 1) zc = zc / m.scale;
      return -Math.expm1(-m.hazards[k || 0] * Math.exp(zc));
    }
    if (m.kind === "bands") {
      var r = Math.round(s * 1e9) / 1e9, b = 0;
      m.cutoffs.forEach(function (c) { if (r >= num(c)) b += 1; });
      return m.risks[b];
    }
    var z = m.intercept + s;
    if (m.scale !== 1) z = z / m.scale;
    if (z >= 0) return 1 / (1 + Math.exp(-z));
    var e = Math.exp(z);
    return e / (1 + e);
  }
  function compute() {
    var v = [], missing = [];
    for (var k = 0; k < els.length; k++) {
      var a = read(k);
      if (a === null) missing.push(spec.inputs[k].variable);
      v.push(a);
    }
    if (missing.length) return {complete: false, missing: missing};
    var score = 0, counted = spec.items.map(function (it) {
      var val = 1;
      it.factors.forEach(function (f) { val *= factor(f, v); });
      return it.points * val;
    });
    counted.forEach(function (c) { score += c; });
    var risks = [];
    for (var h = 0; h < horizons; h++) risks.push(riskOf(score, h));
    return {complete: true, score: score, counted: counted, risk: risks[0], risks: risks};
  }
  function fmtScore(s) {
    var t = Number(s.toPrecision(6));
    return (t === 0 ? 0 : t).toString();
  }
  function riskId(h) { return h === 0 ? "rf-risk" : "rf-risk-" + h; }
  function fmtPoints(s) { var t = fmtScore(s); return s > 0 ? "+" + t : t; }
  function fmtRisk(p) {
    var x = 100 * p;
    if (x > 0 && x < 0.1) return "<0.1%";
    if (x > 99.9 && x < 100) return ">99.9%";
    return x.toFixed(1) + "%";
  }
  function update() {
    var res = compute(), text = function (id, t) { document.getElementById(id).textContent = t; };
    spec.table.forEach(function (row, k) { document.getElementById("rf-row-" + k).className = ""; });
    if (!res.complete) {
      out.setAttribute("data-complete", "false");
      out.setAttribute("data-score", "");
      out.setAttribute("data-risk", "");
      out.setAttribute("data-risks", "");
      text("rf-score", "\u2013"); text("rf-total", "\u2013");
      for (var h = 0; h < horizons; h++) text(riskId(h), "\u2013");
      spec.items.forEach(function (it, k) { text("rf-item-" + k, "\u2013"); });
      text("rf-msg", "Enter " + res.missing.join(", ") + " to see the score and risk.");
      return res;
    }
    out.setAttribute("data-complete", "true");
    out.setAttribute("data-score", String(res.score));
    out.setAttribute("data-risk", String(res.risk));
    out.setAttribute("data-risks", JSON.stringify(res.risks));
    text("rf-score", fmtScore(res.score)); text("rf-total", fmtScore(res.score));
    res.risks.forEach(function (p, h) { text(riskId(h), fmtRisk(p)); });
    res.counted.forEach(function (c, k) { text("rf-item-" + k, c === 0 ? "0" : fmtPoints(c)); });
    text("rf-msg", "Score " + fmtScore(res.score) + ", " + (spec.map.kind === "cox"
      ? res.risks.map(function (p, h) { return "risk within " + spec.map.labels[h] + " " + fmtRisk(p); }).join(", ")
      : "risk " + fmtRisk(res.risk)) + ".");
    for (var k = 0; k < spec.table.length; k++) {
      var row = spec.table[k];
      if (num(row[0]) - 1e-9 <= res.score && res.score <= num(row[1]) + 1e-9) {
        document.getElementById("rf-row-" + k).className = "current";
        break;
      }
    }
    return res;
  }
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  form.addEventListener("reset", function () { window.setTimeout(update, 0); });
  update();
  window.riskCalculator = {compute: compute, riskOf: riskOf, update: update};
})();
"""
