"""Rendering and report notes: honest gaps under a loose tolerance, Markdown and LaTeX escaping,
comparison notes and labels, decision-curve labels, ``from_json`` given a file name, doctests."""

from __future__ import annotations

import doctest
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.cli import main
from riskformula.reports import render
from riskformula.reports.render import escape, fmt_absolute_gap, fmt_gap


# --------------------------------------------------------------------------------------
# 1. a gap certified by a loose tolerance is printed as it is
# --------------------------------------------------------------------------------------


def test_fmt_gap_prints_the_real_gap_within_a_loose_tolerance():
    assert fmt_gap(0.04567, 0.5) == "4.57%"
    assert fmt_gap(0.04567, 0.5, state_tolerance=True) == "4.57% within tolerance 50%"
    assert fmt_gap(0.05, 1.0, state_tolerance=True) == "5% within tolerance 100%"
    # the default tolerance keeps its look: a gap that is LP noise prints as 0
    assert fmt_gap(3e-7, 1e-6, state_tolerance=True) == "0% within tolerance 1e-06"
    assert fmt_gap(3e-7, 0.5, state_tolerance=True) == "0% within tolerance 50%"
    assert fmt_absolute_gap(0.480082, 0.458155, 0.05) == "0.0219"
    assert fmt_absolute_gap(0.480082, 0.458155, 0.05, state_tolerance=True) == "0.0219 within tolerance 0.05"
    assert fmt_absolute_gap(0.5, 0.5 - 5e-9, 1e-8, state_tolerance=True) == "0 within tolerance 1e-08"


def test_render_doctests():
    assert doctest.testmod(render).failed == 0


@pytest.fixture(scope="module")
def mammo():
    return rf.load_dataset("mammo")


@pytest.fixture(scope="module")
def loose(mammo):
    m = rf.risk_score("Malignant ~ .", mammo, max_size=3, time_limit=20, gap_tolerance=0.5)
    assert m.status == "optimal" and m.gap > 0.01  # stopped well before a proof
    return m


def test_loose_tolerance_model_reports_its_gap(loose, mammo):
    g = fmt_gap(loose.gap, 0.0)
    assert g != "0%"
    assert f"gap {g} within tolerance 50% (" in loose.certificate_line()
    assert f"gap {g}>" in repr(loose)
    summary = loose.summary()
    text = str(summary)
    assert f"{g} within tolerance 50%" in text
    assert "Proven optimal" not in text
    assert "Optimal within the tolerance" in text and "not proven optimal" in text
    shown = rf.compare(loose, data=mammo)
    assert shown._models_display()["gap"].iloc[0] == g
    assert any("optimal only within its tolerance" in n for n in shown.notes)


def test_loose_absolute_tolerance_model_reports_its_gap(mammo):
    m = rf.risk_score("Malignant ~ .", mammo, max_size=3, time_limit=20, absolute_gap_tolerance=0.05)
    assert m.status == "optimal" and m.objective - m.lower_bound > 1e-3
    cert = m.summary().certificate().set_index("")["value"]
    assert cert["Absolute gap"] == fmt_absolute_gap(m.objective, m.lower_bound) + " within tolerance 0.05"
    assert cert["Absolute gap"] != "0 within tolerance 0.05"
    assert "Proven optimal" not in str(m.summary())


def test_default_tolerance_model_is_still_proven_optimal(mammo):
    m = rf.risk_score("Malignant ~ .", mammo, max_size=2, time_limit=20)
    assert m.status == "optimal"
    assert "Proven optimal" in str(m.summary())
    assert "within tolerance 1e-06" in m.certificate_line() or "within tolerance" not in m.certificate_line()


def test_cli_prints_the_real_gap(capsys):
    assert main(["fit", "Malignant ~ .", "--data", "mammo", "--max-size", "3", "--time-limit", "20",
                 "--gap-tolerance", "0.5"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\d\.\d+% within tolerance 50%", out)
    assert "0% within tolerance 0.5" not in out and "Proven optimal" not in out


# --------------------------------------------------------------------------------------
# 2. Markdown escaping; 3. LaTeX symbols
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def odd():
    rng = np.random.default_rng(0)
    n = 400
    d = pd.DataFrame({"i|j": rng.integers(0, 2, n), "g<h>": rng.integers(0, 2, n), "a*b": rng.integers(0, 2, n),
                      "grp": rng.choice(["e", "ü|x"], n)})
    lin = -0.5 + 2 * d["i|j"] - 2 * d["g<h>"] + 1.5 * d["a*b"]
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-lin))).astype(int)
    m = rf.risk_score("y ~ `i|j` + `g<h>` + `a*b`", d, max_size=3, coef_range=(-3, 3), time_limit=20)
    assert set(m.coef[m.coef != 0].index) == {"i|j", "g<h>", "a*b"}
    return m, d


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row, split where GitHub splits them (unescaped pipes)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def _check_markdown(md: str):
    rows = [line for line in md.splitlines() if line.startswith("|")]
    outside_code = re.sub(r"`[^`]*`", "", "".join(rows))  # code spans show text as typed, HTML included
    assert not any(bad in outside_code for bad in ("<h>", "i|j", "ü|x"))
    assert rows
    widths = []
    for line in md.splitlines() + [""]:  # every table keeps one cell count on every row
        if line.startswith("|"):
            widths.append(len(_cells(line)))
        elif widths:
            assert len(set(widths)) == 1, md
            widths = []


def test_markdown_escapes_pipes_and_html(odd):
    m, d = odd
    card = m.card("markdown")
    _check_markdown(card)
    row = next(line for line in card.splitlines() if line.startswith("| i\\|j"))
    assert _cells(row) == ["i\\|j", render.fmt_points(m.coef["i|j"])]  # the points stay in their cell
    assert "| g&lt;h&gt; " in card and "| a\\*b " in card
    # the heading quotes the names in code spans, which Markdown shows as typed: no escapes there
    assert card.splitlines()[0] == "## Risk score: y ~ `i|j` + `g<h>` + `a*b`"
    _check_markdown(m.summary().to_markdown())
    other = rf.risk_score("y ~ `i|j` + `g<h>`", d, max_size=2, coef_range=(-3, 3), time_limit=20)
    _check_markdown(rf.compare(other, m, names=["a|b", "c<d>"]).to_markdown())
    ev = rf.evaluate(m, d, by="grp").to_markdown()
    _check_markdown(ev)
    assert "ü\\|x" in ev
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check_markdown(m.fairness(d, by="grp", at_risk=0.5).to_markdown())


def test_html_and_plain_text_are_unchanged(odd):
    m, _ = odd
    assert "g&lt;h&gt;" in m.card("html") and "i|j" in m.card("html")
    assert "i|j" in str(m) and "g<h>" in str(m)


def test_markdown_escape_rules():
    assert escape("i|j", "markdown") == "i\\|j"
    assert escape("g<h>", "markdown") == "g&lt;h&gt;"
    assert escape("a\\b", "markdown") == "a\\\\b"
    assert escape("Chi & Birbil", "markdown") == "Chi & Birbil"  # no entity: left readable
    assert escape("a&lt;b", "markdown") == "a&amp;lt;b"  # would read as "a<b"
    assert escape("use `newdata=`", "markdown") == "use `newdata=`"
    assert escape("y ~ `i|j` + x|z", "markdown") == "y ~ `i|j` + x\\|z"
    assert escape("y ~ `i|j` + x|z", "markdown", cell=True) == "y ~ `i\\|j` + x\\|z"  # GitHub splits cells first


def test_latex_maps_the_symbols_riskformula_prints():
    assert escape("risk ≥ 50%", "latex") == r"risk \ensuremath{\geq} 50\%"
    assert escape("i|j", "latex") == r"i\textbar{}j"
    assert escape("p from χ²(df)", "latex") == r"p from \ensuremath{\chi^{2}}(df)"
    assert escape("2 × n · k − 1 ± 0.5 ≤ 3 – 4 — 5 …", "latex") == (
        r"2 \ensuremath{\times} n \ensuremath{\cdot} k - 1 \ensuremath{\pm} 0.5 \ensuremath{\leq} 3 -- 4 --- 5 \ldots{}")


def test_latex_reports_hold_no_raw_math_symbols(odd):
    m, d = odd
    other = rf.risk_score("y ~ `i|j` + `g<h>`", d, max_size=2, coef_range=(-3, 3), time_limit=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        texts = [rf.compare(other, m).to_latex(), m.fairness(d, by="grp", at_risk=0.5).to_latex(),
                 m.summary().to_latex(), rf.evaluate(m, d, by="grp").to_latex()]
    for tex in texts:
        assert not re.search("[≥≤χ²−×·±–—…]", tex), tex
    assert r"\ensuremath{\chi^{2}}" in texts[0]
    assert r"g\textless{}h\textgreater{}" in texts[2]  # table cells escaped as before


# --------------------------------------------------------------------------------------
# 4. comparison notes and labels
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def three(mammo):
    tr = mammo.iloc[::2]
    m1 = rf.risk_score("Malignant ~ .", tr, max_size=1, time_limit=20)
    m4 = rf.risk_score("Malignant ~ .", tr, max_size=4, time_limit=20)
    mx = rf.risk_score("Malignant ~ OvalShape + Density", tr, max_size=2, time_limit=20)
    return m1, m4, mx, tr, mammo.iloc[1::2]


def test_compare_notes_use_the_names(three):
    m1, m4, _, tr, _ = three
    t = rf.compare(m4, m1, data=tr, names=["big", "small"])
    assert t.lr_tests["test"].tolist() == ["big vs small"]
    assert not any(n.startswith("Test 1 vs 2") for n in t.notes)
    assert any(n.startswith("Test big vs small: 'small'") for n in t.notes)
    numbered = rf.compare(m4, m1, data=tr)
    assert any(n.startswith("Test 1 vs 2: model 2") for n in numbered.notes)


def test_compare_on_newdata_has_no_hosmer_lemeshow_notes(three):
    m1, m4, mx, tr, te = three
    t = rf.compare(m1, m4, mx, data=tr, newdata=te)
    assert not any("Hosmer" in n for n in t.notes)
    assert "Hosmer" not in str(t)


def test_compare_adds_the_size_limit_only_to_repeated_formulas(three):
    m1, m4, mx, tr, te = three
    labels = list(rf.compare(m1, m4, mx, data=tr, newdata=te).frame["model"][:3])
    assert labels == ["Malignant ~ . [max_size=1]", "Malignant ~ . [max_size=4]", "Malignant ~ OvalShape + Density"]
    assert list(rf.compare(m1, mx).frame["model"]) == ["Malignant ~ .", "Malignant ~ OvalShape + Density"]


# --------------------------------------------------------------------------------------
# 5. decision-curve labels
# --------------------------------------------------------------------------------------


def test_decision_curve_labels_say_which_model(three):
    m1, m4, _, tr, te = three
    better = rf.improve_aunbc(m4, tr)
    dc = rf.decision_curve(m4, better, data=te)
    assert dc.names == ["Malignant ~ .", "Malignant ~ . (AUNBC improved)"]
    assert rf.decision_curve(m1, m4, data=te).names == ["1: Malignant ~ .", "2: Malignant ~ ."]
    assert rf.decision_curve(m4, data=te, names=["mine"]).names == ["mine"]


# --------------------------------------------------------------------------------------
# 6. from_json given a file name; 7. list_datasets doctest
# --------------------------------------------------------------------------------------


def test_from_json_given_a_file_name_says_what_to_do(tmp_path, three):
    path = tmp_path / "m1.json"
    path.write_text(three[0].to_json())
    for text in (str(path), "m1.json"):
        with pytest.raises(rf.errors.DataError, match=r"takes the JSON text.*read_text\(\)"):
            rf.from_json(text)
    with pytest.raises(rf.errors.DataError, match="not valid JSON"):
        rf.from_json("{not json")
    assert rf.from_json(path.read_text()).formula == three[0].formula


def test_list_datasets_doctest():
    from riskformula.datasets import bundled

    assert doctest.testmod(bundled).failed == 0


def test_counterfactuals_and_reasons_render_in_every_format():
    import json

    import riskformula as rf
    df = rf.load_dataset("wdbc")
    worst = df[["diagnosis", "radius_worst", "concave_points_worst"]]
    m = rf.risk_score('diagnosis == "M" ~ threshold(., grid=5)', worst, max_size=2, coef_range=(0, 3),
                      time_limit=30, progress=False)
    people = worst.loc[[0, 5]]
    for result in (m.counterfactuals(people, target_risk=0.5), m.reasons(people)):
        assert result.render("text") == str(result)  # print is unchanged
        md, html, tex = result.to_markdown(), result.to_html(), result.to_latex()
        for person in ("person 0", "person 5"):
            assert person in md and person in html and person in tex
        assert "| radius_worst" in md or "| concave_points_worst" in md  # a table row
        assert "<table>" in html and "\\begin{tabular}" in tex and "≤" not in tex
        assert result._repr_html_() == html
    d = m.reasons(people).to_dict()
    assert d["goal"] == "below" and {r["person"] for r in d["reasons"]} == {0, 5}
    json.dumps(d, allow_nan=False)  # plain JSON: missing values are None
