"""What a fitted model shows: print(m), m.summary() in every format, tables, to_dict and the
attribute names and types."""

import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest

import riskformula as rf


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    n = 300
    d = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 2, n), "c": rng.integers(0, 2, n),
                      "noise": rng.integers(0, 2, n)})
    lin = -1.0 + 1.0 * d.a + 2.0 * d.b - 1.0 * d.c
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-lin))).astype(int)
    return d


@pytest.fixture(scope="module")
def m(data):
    return rf.risk_score("y ~ a + b + c + noise", data, max_size=3, coef_range=(-3, 3), c0=0.01, time_limit=30)


def pct(x):
    return f"{100 * x:.1f}%"


def test_model_is_nontrivial(m):
    assert m.size >= 2  # the tests below need a score card with several terms


def test_attribute_names_and_types(m, data):
    assert isinstance(m.coef, pd.Series)
    assert list(m.coef.index) == ["a", "b", "c", "noise"]
    assert all(isinstance(v, (int, np.integer)) for v in m.coef)
    assert np.issubdtype(m.coef.dtype, np.integer)
    assert type(m.intercept) is int
    for name in ("objective", "loss", "lower_bound", "gap"):
        assert type(getattr(m, name)) is float, name
    assert isinstance(m.status, str) and m.status == "optimal"
    assert m.formula == "y ~ a + b + c + noise"
    assert type(m.nobs) is int and m.nobs == len(data)
    assert m.events == int(data.y.sum())
    assert m.size == int((m.coef != 0).sum())


def test_gap_definition(m):
    expected = 0.0 if m.lower_bound >= m.objective else (m.objective - m.lower_bound) / m.objective
    assert m.gap == pytest.approx(expected, abs=1e-12)
    assert m.gap <= m.settings.gap_tolerance
    assert m.lower_bound <= m.objective


def test_objective_is_loss_plus_penalty(m, data):
    s = m.intercept + data[["a", "b", "c", "noise"]].to_numpy() @ m.coef.to_numpy()
    loss = np.mean(np.where(data.y == 1, np.logaddexp(0, -s), np.logaddexp(0, s)))
    assert m.loss == pytest.approx(loss, rel=1e-12)
    assert m.objective == pytest.approx(loss + 0.01 * m.size, rel=1e-12)


def attainable(m):
    pts = [p for p in m.coef if p != 0]
    return sorted({sum(c) for k in range(len(pts) + 1) for c in itertools.combinations(pts, k)})


def test_risk_table_has_every_attainable_score(m):
    t = m.risk_table()
    scores = attainable(m)
    assert t["score_from"].tolist() == [float(s) for s in scores]
    assert t["score_to"].tolist() == [float(s) for s in scores]
    expected = [1 / (1 + math.exp(-(m.intercept + s))) for s in scores]
    np.testing.assert_allclose(t["risk_from"], expected, rtol=1e-12)
    np.testing.assert_allclose(t["risk_to"], expected, rtol=1e-12)


def test_print_shows_card_table_and_one_certificate_line(m, capsys):
    print(m)
    out = capsys.readouterr().out
    for term, p in m.coef[m.coef != 0].items():
        assert re.search(rf"^{re.escape(term)}\s+{re.escape(f'{p:+d}')}\s*$", out, re.M), (term, p, out)
    for s in attainable(m):
        risk = 1 / (1 + math.exp(-(m.intercept + s)))
        assert re.search(rf"^{s:d}\s+{re.escape(pct(risk))}\s*$", out, re.M), (s, out)
    assert ("exp(-score))" if m.intercept == 0 else f"exp(-({m.intercept:+d} + score))") in out
    cert = [line for line in out.splitlines() if "lower bound" in line.lower()]
    assert len(cert) == 1 and cert[0].startswith("Certificate: optimal")
    assert f"{m.objective:.6g}" in cert[0] and f"{m.lower_bound:.6g}" in cert[0]


def test_summary_text(m, data):
    text = str(m.summary())
    assert "y ~ a + b + c + noise" in text
    assert re.search(rf"Rows used\s+{len(data)}\b", text)
    ev = int(data.y.sum())
    assert re.search(rf"Events\s+{ev} \({re.escape(pct(ev / len(data)))}\)", text)
    for term, p in m.coef[m.coef != 0].items():
        assert re.search(rf"^{re.escape(term)}\s+{re.escape(f'{p:+d}')}\s*$", text, re.M)
    for s in attainable(m):
        risk = 1 / (1 + math.exp(-(m.intercept + s)))
        assert re.search(rf"^{s:d}\s+{re.escape(pct(risk))}\s*$", text, re.M), s
    assert re.search(rf"Mean logistic loss\s+{m.loss:.6f}", text)
    ev_ = m.training_evaluation
    assert re.search(rf"AUC \(95% CI, DeLong\)\s+{ev_.auc.auc:.3f}", text)
    assert re.search(rf"CAL \(by score\)\s+{re.escape(pct(ev_.cal))}", text)
    assert re.search(rf"Objective \(loss \+ c0 x size\)\s+{m.objective:.8g}", text)
    assert re.search(rf"Lower bound\s+{m.lower_bound:.8g}", text)
    assert m.gap <= m.settings.gap_tolerance  # optimal: the gap prints as 0, with the tolerance
    assert re.search(rf"Optimality gap\s+0% within tolerance {m.settings.gap_tolerance:g}\s*$", text, re.M)
    assert re.search(r"Status\s+optimal", text)
    assert re.search(rf"Nodes\s+{m.solver.nodes:,d}", text)


def test_auc_matches_a_direct_computation(m, data):
    risk = m.predict(data).to_numpy()
    y = data.y.to_numpy()
    pos, neg = risk[y == 1], risk[y == 0]
    auc = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (len(pos) * len(neg))
    assert m.training_evaluation.auc.auc == pytest.approx(auc, rel=1e-12)


@pytest.mark.parametrize("fmt, marker", [("to_markdown", "|"), ("to_html", "<table"), ("to_latex", "\\begin{")])
def test_other_formats(m, fmt, marker):
    out = getattr(m.summary(), fmt)()
    assert isinstance(out, str) and marker in out
    assert "y ~ a + b + c + noise" in out or "y \\textasciitilde" in out or "y ~" in out
    assert f"{m.objective:.8g}" in out
    for term in m.coef[m.coef != 0].index:
        assert term in out


def test_tables_and_dict_hold_the_attributes(m):
    summ = m.summary()
    t = summ.tables
    assert {"header", "score_card", "risk_table", "fit", "certificate"} <= set(t)
    card = t["score_card"]
    used = m.coef[m.coef != 0]
    assert card["column"].tolist() == used.index.tolist()
    assert card["points"].tolist() == used.tolist()
    pd.testing.assert_frame_equal(t["risk_table"], m.risk_table())
    cert = dict(zip(t["certificate"].iloc[:, 0], t["certificate"]["value"]))
    assert float(cert["Objective (loss + c0 x size)"]) == pytest.approx(m.objective, rel=1e-7)
    assert float(cert["Lower bound"]) == pytest.approx(m.lower_bound, rel=1e-7)
    assert cert["Status"] == m.status

    d = m.to_dict()
    assert d["intercept"] == m.intercept and type(d["intercept"]) is int
    assert d["points"] == {k: int(v) for k, v in used.items()}
    assert all(type(v) is int for v in d["points"].values())
    for k in ("objective", "loss", "lower_bound", "gap", "status", "nobs", "events", "size", "formula"):
        assert d[k] == getattr(m, k), k
    sd = summ.to_dict()
    assert sd["objective"] == m.objective and sd["lower_bound"] == m.lower_bound
    assert sd["risk_table"]["risk_from"] == pytest.approx(m.risk_table()["risk_from"].tolist())
    assert sd["solver"]["nodes"] == m.solver.nodes


def test_to_dict_is_json_serialisable(m):
    import json
    json.dumps(m.to_dict())
    json.dumps(m.summary().to_dict(), default=float)


def test_gap_zero_when_bound_reaches_objective():
    """The definition of gap on a case the solver closes exactly: an intercept-only model."""
    d = pd.DataFrame({"x": [0, 1, 0, 1], "y": [0, 0, 1, 1]})
    m = rf.risk_score("y ~ x", d, coef_range=(-2, 2), time_limit=10)
    assert m.size == 0 and m.objective == pytest.approx(math.log(2))
    expected = 0.0 if m.lower_bound >= m.objective else (m.objective - m.lower_bound) / m.objective
    assert m.gap == pytest.approx(expected, abs=1e-12)


def test_string_event_in_header():
    rng = np.random.default_rng(3)
    d = pd.DataFrame({"x": rng.integers(0, 2, 80), "out": rng.choice(["yes", "no"], 80)})
    m = rf.risk_score("out ~ x", d, event="yes", coef_range=(-2, 2), time_limit=10)
    header = dict(m.summary().header())
    assert header["Outcome"] == "out (event: out = 'yes')"
    assert m.to_dict()["event"] == "yes"


def test_risk_range_printed_once_when_both_ends_read_the_same():
    from types import SimpleNamespace

    from riskformula.reports.summary import _risk_table_display
    table = pd.DataFrame({"score": ["-3", "2 to 4"], "risk_from": [0.881, 0.99991], "risk_to": [0.881, 0.99999]})
    shown = _risk_table_display(SimpleNamespace(risk_table=lambda: table))
    assert shown["risk"].tolist() == ["88.1%", ">99.9%"]


def test_latex_summary_escapes_its_notes(data, no_enumeration):
    """Notes hold '%' (gaps), '_' and backticks (argument names): LaTeX needs them escaped, or '%'
    comments out the rest of the line."""
    with pytest.warns(rf.OptimalityGapWarning):
        m = rf.risk_score("y ~ a + b + c + noise", data, max_size=3, intercept_range=(-1, 1),
                          weights=np.ones(len(data)), node_limit=1, time_limit=30)
    notes = m.summary().notes()
    assert any("%" in s for s in notes) and any("_" in s for s in notes)
    latex = m.summary().render("latex")
    for s in notes:
        assert rf.reports.render.escape(s, "latex") in latex
    assert not re.search(r"(?<!\\)[%_]", latex.replace(r"\_", "").replace(r"\%", "")), "unescaped % or _"
    html = m.summary().render("html")
    assert all(rf.reports.render.escape(s, "html") in html for s in notes)
