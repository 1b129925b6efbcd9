"""Every export scores missing values as ``predict`` does, row by row, checked by the real consumer:
SQLite, DuckDB and PostgreSQL (pgserver) for SQL, JPMML for PMML, Chromium for the calculator page
(and its script mirrored in Python in the default run).

One small card has every way a missing value is scored: a threshold with a missing item
(``lactate``), a factor with a missing item (``ward``), a variable read only by its missing item
(``dose``), and ``"as <value>"`` for a threshold (``age`` as 50) and a factor (``sex`` as m).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from test_export_html import _binary, browser, parse  # noqa: F401  (browser: a fixture)
from pmml_evaluator import evaluate, jpmml_module
from test_export_sql import postgres, run_duckdb, run_postgres, run_sqlite  # noqa: F401  (postgres: a fixture)

import riskformula as rf
from riskformula.export import card_plan, to_pmml, to_sql
from riskformula.export.html import calculator_spec, to_html_calculator

FORMULA = "y ~ threshold(lactate, grid=3) + C(ward) + dose + threshold(age, grid=3) + C(sex)"
MISSING = {"lactate": "item", "ward": "item", "dose": "item", "age": "as 50", "sex": "as m"}


def frame(n: int = 300, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"id": np.arange(n), "lactate": rng.gamma(2.0, 1.0, n).round(1),
                      "age": rng.integers(20, 90, n).astype(float), "sex": rng.choice(["f", "m"], n),
                      "ward": rng.choice(["icu", "med", "surg"], n), "dose": rng.integers(0, 4, n).astype(float)})
    lp = (-2 + 0.6 * (d.lactate - 2) + 0.04 * (d.age - 55) + 1.5 * (d.ward == "icu") + 1.0 * (d.sex == "m")
          + 0.5 * d.dose)
    d["y"] = (rng.random(n) < expit(lp)).astype(int)
    # informative missingness: the lab and the ward go unrecorded more for events, the dose for non-events
    d.loc[(d.y == 1) & (rng.random(n) < 0.4), "lactate"] = np.nan
    d.loc[rng.random(n) < 0.1, "age"] = np.nan
    d.loc[(d.y == 1) & (rng.random(n) < 0.3), "ward"] = None
    d.loc[rng.random(n) < 0.1, "sex"] = None
    d.loc[(d.y == 0) & (rng.random(n) < 0.3), "dose"] = np.nan
    return d


DATA = frame()


@functools.cache
def model():
    return rf.risk_score(FORMULA, DATA, missing=MISSING, max_size=9, coef_range=(-4, 4), time_limit=600)  # proven in about 3 s: no verdict on the clock


def new_rows() -> pd.DataFrame:
    """Rows from another draw, with every combination of missing values among the first ones."""
    d = frame(120, seed=11).drop(columns="y")
    variables = ["lactate", "ward", "dose", "age", "sex"]
    for r in range(32):
        for k, v in enumerate(variables):
            d[v] = d[v].astype(object) if v in ("ward", "sex") else d[v]
            if r >> k & 1:
                d.loc[r, v] = None if v in ("ward", "sex") else np.nan
            elif pd.isna(d.loc[r, v]):
                d.loc[r, v] = DATA[v].dropna().iloc[r]
    return d


ROWS = {"train": lambda: DATA, "new": new_rows}


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_the_card_has_every_kind_of_missing_value():
    m = model()
    kinds = {(it.kind, it.variable) for it in m.scorecard.items}
    assert {("missing", "lactate"), ("missing", "ward"), ("missing", "dose")} <= kinds
    assert ("level", "ward") in kinds and ("level", "sex") in kinds
    assert any(it.kind == "interval" and it.variable == "lactate" for it in m.scorecard.items)
    assert any(it.kind == "interval" and it.variable == "age" for it in m.scorecard.items)
    assert not any(it.variable == "dose" and it.kind != "missing" for it in m.scorecard.items)
    plan = card_plan(m)
    assert plan.missing == {"lactate": {"action": "item"}, "ward": {"action": "item"}, "dose": {"action": "item"},
                            "age": {"action": "as", "value": 50.0}, "sex": {"action": "as", "value": "m"}}
    for which in ROWS:
        rows = ROWS[which]()
        assert rows[["lactate", "ward", "dose", "age", "sex"]].isna().any().all()
        assert np.isfinite(m.predict(rows).to_numpy()).all()
        # every score predict gives is one the SQL table of risks holds
        assert set(m.score(rows).round(9)) <= set(plan.scores)


def check_equal(out: pd.DataFrame, m, df: pd.DataFrame):
    df = df.sort_values("id").reset_index(drop=True)
    assert out["id"].tolist() == df["id"].tolist()
    np.testing.assert_allclose(out["score"].astype(float), m.score(df).to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(out["risk"].astype(float), m.predict(df).to_numpy(), rtol=0, atol=1e-9)


# --------------------------------------------------------------------------------------
# SQL
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("risk_map", ["auto", "formula"])
@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
@pytest.mark.parametrize("which", ["train", "new"])
def test_sql_scores_missing_values_as_predict(which, dialect, risk_map):
    m, df = model(), ROWS[which]()
    sql = to_sql(m, "t", dialect=dialect, keep=["id"], risk_map=risk_map)
    assert '"lactate" IS NULL' in sql
    check_equal({"sqlite": run_sqlite, "duckdb": run_duckdb}[dialect](sql, df), m, df)


def test_sql_text_says_how_missing_values_count():
    sql = to_sql(model(), "t")
    assert 'COALESCE("age", 50.0e0)' in sql and "COALESCE(\"sex\", 'm')" in sql
    assert "-- Missing (NULL) lactate, ward, dose: only the variable's missing item counts" in sql
    assert "-- Missing (NULL) values count as: age as 50.0, sex as 'm'." in sql


def test_duckdb_nan_is_missing_as_in_pandas():
    """pandas calls NaN missing: a DOUBLE NaN in DuckDB scores as the missing item (or the "as"
    value), never as a number above every cut."""
    duckdb = pytest.importorskip("duckdb")
    m, df = model(), new_rows().head(40)
    con = duckdb.connect()
    con.register("frame_in", df)
    con.execute('CREATE TABLE t AS SELECT * FROM frame_in')
    con.execute("UPDATE t SET lactate = 'NaN'::DOUBLE, age = 'NaN'::DOUBLE WHERE id % 3 = 0")
    assert con.execute("SELECT count(*) FROM t WHERE isnan(lactate)").fetchone()[0] > 0
    out = con.execute(to_sql(m, "t", dialect="duckdb", keep=["id"])).df().sort_values("id").reset_index(drop=True)
    con.close()
    df = df.copy()
    df.loc[df.id % 3 == 0, ["lactate", "age"]] = np.nan
    check_equal(out, m, df)


def invalid_rows() -> pd.DataFrame:
    """Rows 0-3 with a value predict refuses in a variable scored when missing, then 8 good rows."""
    df = new_rows().head(12).astype(object)
    df.loc[0, "ward"] = "never seen"
    df.loc[1, "sex"] = "x"
    df.loc[2, "lactate"] = "high"
    df.loc[3, "age"] = "old"
    return df


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
def test_sql_values_predict_refuses_still_give_null(dialect):
    """An unseen level or a non-number of a variable scored when missing is still refused."""
    m, df = model(), invalid_rows()
    for r in range(4):
        with pytest.raises(rf.DataError):
            m.predict(df.iloc[[r]])
    sql = to_sql(m, "t", dialect=dialect, keep=["id"])
    if dialect == "sqlite":     # numeric columns (REAL affinity) that hold a word or two
        import sqlite3
        con = sqlite3.connect(":memory:")
        df.to_sql("t", con, index=False, dtype={"lactate": "REAL", "age": "REAL", "dose": "REAL", "id": "INTEGER"})
        out = pd.read_sql(sql, con).sort_values("id").reset_index(drop=True)
        con.close()
    else:
        out = run_duckdb(sql, df)
    assert out["score"].isna().tolist() == [True] * 4 + [False] * 8
    assert out["risk"].isna().tolist() == [True] * 4 + [False] * 8
    check_equal(out.iloc[4:].reset_index(drop=True), m, new_rows().head(12).iloc[4:].reset_index(drop=True))


@pytest.mark.parametrize("which", ["train", "new"])
def test_postgres_scores_missing_values_as_predict(postgres, which):  # noqa: F811
    m, df = model(), ROWS[which]()
    check_equal(run_postgres(postgres, to_sql(m, "t", dialect="postgres", keep=["id"]), df), m, df)


@pytest.fixture(scope="module")
def jpmml():
    return jpmml_module()


# --------------------------------------------------------------------------------------
# PMML
# --------------------------------------------------------------------------------------

@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("which", ["train", "new"])
def test_pmml_scores_missing_values_as_predict(jpmml, which):
    m, df = model(), ROWS[which]()
    out = evaluate(jpmml, to_pmml(m), df)
    assert "errors" not in out.columns or out["errors"].isna().all()
    np.testing.assert_allclose(out["score"].astype(float), m.score(df).to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(out["risk"].astype(float), m.predict(df).to_numpy(), rtol=0, atol=1e-9)


def test_pmml_uses_the_evaluators_missing_value_handling():
    import xml.etree.ElementTree as ET
    ns = {"p": "http://www.dmg.org/PMML-4_4"}
    root = ET.fromstring(to_pmml(model()))
    fields = {f.get("name"): f.attrib for f in root.findall("p:Scorecard/p:MiningSchema/p:MiningField", ns)}
    assert fields["age"]["missingValueReplacement"] == "50.0" and fields["sex"]["missingValueReplacement"] == "m"
    assert {fields[v]["invalidValueTreatment"] for v in fields} == {"returnInvalid"}
    chars = {c.get("name"): c for c in root.findall("p:Scorecard/p:Characteristics/p:Characteristic", ns)}
    assert "missing(lactate)" not in chars and "missing(ward)" not in chars   # with their variable's term
    assert chars["missing(dose)"].get("baselineScore") == "0"
    first = chars["C(ward)"].find("p:Attribute", ns)
    ward_missing = next(it.points for it in model().scorecard.items if it.label == "ward missing")
    assert first.find("p:SimplePredicate", ns).get("operator") == "isMissing"
    assert first.get("partialScore") == str(ward_missing)


@pytest.mark.slow  # 5-8 s: the default run stays within about 6 minutes
def test_pmml_values_predict_refuses_get_no_score(jpmml):
    m, df = model(), invalid_rows()
    out = evaluate(jpmml, to_pmml(m), df)
    assert out["score"].isna().tolist() == [True] * 4 + [False] * 8
    assert out["errors"].notna().tolist() == [True] * 4 + [False] * 8     # the evaluator says why
    good = new_rows().head(12).iloc[4:]
    np.testing.assert_allclose(out["risk"].iloc[4:].astype(float), m.predict(good).to_numpy(), atol=1e-9)


def test_pmml_reason_codes_on_rows_with_missing_values(jpmml):
    m, df = model(), new_rows().head(60)
    n = len(card_plan(m).variables)
    out = evaluate(jpmml, to_pmml(m, reasons=n), df)
    reasons = m.reasons(df, n=n).to_frame()
    for k, (person, g) in enumerate(reasons.groupby("person", sort=False)):
        g = g[g["reason_points"] > 1e-9]
        codes = [c for c in (out.loc[k, f"reason_{j}"] for j in range(1, n + 1)) if isinstance(c, str)]
        pos = 0
        for pts, gg in sorted(g.groupby("reason_points"), key=lambda t: -t[0]):
            assert set(codes[pos:pos + len(gg)]) == set(gg["feature"]), (person, codes, g)
            pos += len(gg)


def test_pmml_document_is_valid(jpmml):
    import jpype
    text = to_pmml(model())
    jpmml.make_evaluator(text)
    url = jpype.JClass("org.dmg.pmml.PMML").class_.getClassLoader().getResource("pmml.xsd")
    schema = jpype.JClass("javax.xml.validation.SchemaFactory").newInstance(
        "http://www.w3.org/2001/XMLSchema").newSchema(url)
    source, reader = jpype.JClass("javax.xml.transform.stream.StreamSource"), jpype.JClass("java.io.StringReader")
    schema.newValidator().validate(source(reader(text)))


# --------------------------------------------------------------------------------------
# the calculator page
# --------------------------------------------------------------------------------------

def page_values(m, spec: dict, rows: pd.DataFrame) -> list:
    """Each row as the page's inputs take it: "na" for "not measured"."""
    cats = m.design.categories
    out = []
    for _, row in rows.iterrows():
        values = []
        for inp in spec["inputs"]:
            v = row[inp["variable"]]
            if pd.isna(v):
                values.append("na" if inp["control"] != "presence" else True)
            elif inp["control"] == "presence":
                values.append(False)
            elif inp["control"] == "select":
                values.append(str(list(cats[inp["variable"]]).index(v)))
            else:
                values.append(repr(float(v)))
        out.append(values)
    return out


def mirror(spec: dict, values: list) -> tuple[float, float]:
    """The page script's arithmetic in Python, "not measured" included."""
    read = []
    for inp, v in zip(spec["inputs"], values):
        na = v is True if inp["control"] == "presence" else v == "na"
        miss = inp["missing"]
        if na and miss["action"] == "item":
            read.append((math.nan, None, True))
        elif na:
            read.append((math.nan if miss["x"] is None else miss["x"], miss["idx"], False))
        elif inp["control"] == "select":
            read.append((math.nan, int(v), False))
        elif inp["control"] == "presence":
            read.append((math.nan, None, False))
        else:
            read.append((float(v), None, False))
    score = 0.0
    for it in spec["items"]:
        val = 1.0
        for f in it["factors"]:
            x, i, na = read[f["in"]]
            if f["t"] == "na":
                val *= float(na)
            elif na:
                val = 0.0
            elif f["t"] == "iv":
                val *= float((f["lo"] is None or x > f["lo"]) and (f["hi"] is None or x <= f["hi"]))
            elif f["t"] == "eq":
                val *= float(i in f["idx"])
            else:
                raise AssertionError(f["t"])
        score += it["points"] * val
    z = spec["map"]["intercept"] + score
    return score, float(expit(z / spec["map"]["scale"]))


def test_page_offers_not_measured_and_its_arithmetic_equals_predict():
    m = model()
    spec = calculator_spec(m)
    controls = {i["variable"]: (i["control"], i["missing"]) for i in spec["inputs"]}
    assert controls == {"lactate": ("number", {"action": "item"}), "ward": ("select", {"action": "item"}),
                        "age": ("number", {"action": "as", "x": 50.0, "idx": None}),
                        "sex": ("select", {"action": "as", "x": None, "idx": 1}),
                        "dose": ("presence", {"action": "item"})}
    page = to_html_calculator(m)
    p = parse(page)
    ids = {a["id"] for t, a in p.tags if t in ("input", "select")}
    assert ids <= {a.get("for") for t, a in p.tags if t == "label"}      # every control labelled
    assert {"rf-in-0-na"} <= ids and "(not measured)" in page and "not measured counts as 50" in page
    for which in ROWS:
        rows = ROWS[which]()
        got = np.array([mirror(spec, v) for v in page_values(m, spec, rows)])
        np.testing.assert_allclose(got[:, 0], m.score(rows).to_numpy(), rtol=0, atol=1e-9)
        np.testing.assert_allclose(got[:, 1], m.predict(rows).to_numpy(), rtol=0, atol=1e-9)


_DRIVE = """
var people = arguments[0], out = document.getElementById("rf-result");
var spec = JSON.parse(document.getElementById("rf-model").textContent);
return people.map(function (values) {
  values.forEach(function (v, k) {
    var inp = spec.inputs[k], el = document.getElementById(inp.id), na = document.getElementById(inp.id + "-na");
    if (inp.control === "presence") { el.checked = v; }
    else if (inp.control === "select") { el.value = v; }
    else {
      if (na) { na.checked = v === "na"; na.dispatchEvent(new Event("change", {bubbles: true})); }
      if (v !== "na") { el.value = v; }
    }
    el.dispatchEvent(new Event(el.tagName === "SELECT" || el.type === "checkbox" ? "change" : "input",
                               {bubbles: true}));
  });
  return [out.getAttribute("data-complete"), out.getAttribute("data-score"), out.getAttribute("data-risk")];
});
"""


@pytest.mark.slow
def test_page_in_a_browser_scores_not_measured_as_predict(browser, tmp_path):  # noqa: F811
    m = model()
    path = tmp_path / "calc.html"
    to_html_calculator(m, path)
    browser.get(path.as_uri())
    spec = calculator_spec(m)
    for which in ROWS:
        rows = ROWS[which]()
        got = browser.execute_script(_DRIVE, page_values(m, spec, rows))
        assert all(g[0] == "true" for g in got)
        np.testing.assert_allclose([float(g[1]) for g in got], m.score(rows).to_numpy(), rtol=0, atol=1e-9)
        np.testing.assert_allclose([float(g[2]) for g in got], m.predict(rows).to_numpy(), rtol=0, atol=1e-9)


# --------------------------------------------------------------------------------------
# a saved model and the command line
# --------------------------------------------------------------------------------------

def test_a_loaded_model_exports_the_same(tmp_path):
    from riskformula.cli import main
    m = model()
    loaded = rf.from_json(m.to_json())
    for dialect in ("sqlite", "duckdb", "postgres"):
        assert to_sql(loaded, dialect=dialect) == to_sql(m, dialect=dialect)
    assert to_pmml(loaded) == to_pmml(m)
    assert calculator_spec(loaded) == calculator_spec(m)
    path = tmp_path / "m.json"
    path.write_text(m.to_json())
    assert main(["export", str(path), "--to", "sql", "--table", "t", "--out", str(tmp_path / "s.sql")]) == 0
    df = new_rows()
    out = run_sqlite((tmp_path / "s.sql").read_text(), df)
    np.testing.assert_allclose(out["risk"].astype(float), m.predict(df.sort_values("id")).to_numpy(), atol=1e-9)


# --------------------------------------------------------------------------------------
# a one-signed point range: a cut of a variable with a missing item shown as x > c
# --------------------------------------------------------------------------------------

@functools.cache
def one_signed():
    """Points 0…4 only: lactate's cuts must read ``lactate > c`` (their rows exclude a missing
    lactate through the missing column, ``Item.absent``)."""
    return rf.risk_score("y ~ threshold(lactate, grid=3) + C(ward)", DATA, missing={"lactate": "item", "ward": "item"},
                         max_size=4, coef_range=(0, 4), time_limit=600)


def test_one_signed_card_reads_the_missing_column_and_every_export_agrees(jpmml):
    m = one_signed()
    assert any(it.kind == "interval" and it.upper is None and it.absent is not None for it in m.scorecard.items)
    for which in ROWS:
        df = ROWS[which]()
        for run in (run_sqlite, run_duckdb):
            check_equal(run(to_sql(m, "t", dialect="sqlite" if run is run_sqlite else "duckdb", keep=["id"]), df),
                        m, df)
        out = evaluate(jpmml, to_pmml(m), df)
        np.testing.assert_allclose(out["risk"].astype(float), m.predict(df).to_numpy(), rtol=0, atol=1e-9)
        spec = calculator_spec(m)
        got = np.array([mirror(spec, v) for v in page_values(m, spec, df)])
        np.testing.assert_allclose(got[:, 1], m.predict(df).to_numpy(), rtol=0, atol=1e-9)
