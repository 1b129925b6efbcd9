"""The SQL export, run in SQLite (standard library) and DuckDB: score and risk equal predict.

Every item kind is covered: 0/1 and numeric value terms, factors with string, integer and boolean
levels, one- and two-sided intervals of threshold(), threshold(k=2) and cut(), an interaction, a
fitted scale with a real intercept, and a net-benefit score; rows with NULL (or an unseen level)
get NULL; names and levels that look like SQL stay data; an expression term is refused.
"""

from __future__ import annotations

import functools
import math
import sqlite3
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.export import card_plan, to_sql

INJECTION = "x'); DROP TABLE t; --"


def frame(n: int = 240, seed: int = 0) -> pd.DataFrame:
    """Rows with every kind of column a card reads, and a column name and a level that look like SQL."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "id": np.arange(n),
        "x": rng.normal(0, 1, n).round(2),
        "x1": (rng.random(n) * 10).round(1),
        "count": rng.integers(0, 6, n),
        "flag": rng.integers(0, 2, n),
        "smoker": rng.random(n) < 0.4,
        "diabetic": rng.random(n) < 0.3,
        "sex": rng.choice(["f", "m"], n),
        "grade": rng.choice([1, 2, 3], n),
        "odd name": rng.choice(["a b", INJECTION, 'q"z'], n),
    })
    z = (-1 + 0.8 * df.x + 0.3 * (df.x1 > 6) - 0.4 * (df.x1 <= 2) + 2.0 * (df["count"] >= 4)
         - 2.0 * (df["count"] <= 1) + df.flag + df.smoker - (df.sex == "m") + (df.grade == 3) + df.diabetic
         + 0.7 * (df["odd name"] == "a b") + 0.1 * (df.sex == "m") * df.x1)
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    return df


FITS = {
    # value terms (numeric and 0/1), factors of strings, integers and booleans, an interaction
    "kinds": dict(formula="y ~ x + flag + smoker + sex + C(grade) + C(diabetic) + `odd name` + sex:x1",
                  coef_range={"default": (-3, 3), "x": (1, 2), "flag": (1, 2), "smoker": (1, 2), "sex": (-2, -1),
                              "C(grade)": (1, 2), "C(diabetic)": (1, 2), "odd name": (1, 2), "sex:x1": (-1, 1)},
                  max_size=11, min_size=11),
    # items x ≤ c and x > c: threshold(), threshold(k=2), cut()
    "thresholds": dict(formula="y ~ threshold(x1, grid=4) + threshold(count, k=2) + cut(x, [-0.5, 0.5])",
                       coef_range={"default": (-5, 5), "threshold(x1, grid=4)": (-5, 0)}, max_size=4),
    # a fitted score scale and a real intercept
    "scale": dict(formula="y ~ threshold(x1, grid=4) + flag + sex", scale="fit", max_size=3),
}


@functools.cache
def model(name: str):
    """A small fitted model (cached for the session: the PMML tests use the same ones)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "net_benefit":
            df = rf.load_dataset("breastcancer")
            return rf.risk_score("Benign ~ ClumpThickness + BareNuclei + UniformityOfCellShape", df,
                                 objective="net_benefit", max_size=3, coef_range=(0, 5), time_limit=10)
        kw = dict(FITS[name])
        return rf.risk_score(kw.pop("formula"), frame(), time_limit=10, **kw)


def rows(name: str, which: str) -> pd.DataFrame:
    """Training rows, or new rows from another draw."""
    if name == "net_benefit":
        df = rf.load_dataset("breastcancer").reset_index(drop=True)
        df.insert(0, "id", np.arange(len(df)))
        if which == "new":
            rng = np.random.default_rng(5)
            df = df.sample(150, random_state=1).reset_index(drop=True)
            for c in ("ClumpThickness", "BareNuclei", "UniformityOfCellShape"):
                df[c] = rng.integers(1, 11, len(df))
            df["id"] = np.arange(len(df))
        return df
    return frame() if which == "train" else frame(150, seed=1)


def run_sqlite(sql: str, df: pd.DataFrame, table: str = "t") -> pd.DataFrame:
    con = sqlite3.connect(":memory:")
    df.to_sql(table, con, index=False)
    cur = con.execute(sql)
    out = pd.DataFrame(cur.fetchall(), columns=[d[0] for d in cur.description])
    con.close()
    return out.sort_values("id").reset_index(drop=True)


def run_duckdb(sql: str, df: pd.DataFrame, table: str = "t") -> pd.DataFrame:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("frame_in", df)
    con.execute(f'CREATE TABLE "{table.replace(chr(34), chr(34) * 2)}" AS SELECT * FROM frame_in')
    out = con.execute(sql).df()
    con.close()
    return out.sort_values("id").reset_index(drop=True)


RUN = {"sqlite": run_sqlite, "duckdb": run_duckdb}
NAMES = ["kinds", "thresholds", "scale", "net_benefit"]


def check_equal(out: pd.DataFrame, m, df: pd.DataFrame):
    df = df.sort_values("id").reset_index(drop=True)
    assert out["id"].tolist() == df["id"].tolist()
    np.testing.assert_allclose(out["score"].astype(float), m.score(df).to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(out["risk"].astype(float), m.predict(df).to_numpy(), rtol=0, atol=1e-9)


def test_the_models_cover_every_item_kind():
    kinds = model("kinds").scorecard.items
    rules = [model("kinds").design.rules[it.columns[0]] for it in kinds]
    assert {r.kind for r in rules} == {"linear", "level", "product"}
    assert {type(it.level) for it in kinds if it.kind == "level"} == {str, int, bool}
    assert any(it.level == INJECTION for it in kinds)
    thr = model("thresholds").scorecard.items
    assert any(it.lower is None for it in thr) and any(it.upper is None for it in thr)  # x ≤ c and x > c
    assert 1 <= len([it for it in thr if it.term == "threshold(count, k=2)"]) <= 2
    assert any(it.upper is None for it in model("scale").scorecard.items)
    sc = model("scale")
    assert sc.scale != 1.0 and not float(sc.intercept).is_integer()
    assert isinstance(model("net_benefit"), rf.NetBenefitScore)


@pytest.mark.parametrize("which", ["train", "new"])
@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
@pytest.mark.parametrize("name", NAMES)
def test_sql_equals_predict(name, dialect, which):
    m, df = model(name), rows(name, which)
    out = RUN[dialect](to_sql(m, "t", dialect=dialect, keep=["id"]), df)
    assert list(out.columns) == ["id", "score", "risk"]
    check_equal(out, m, df)


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
@pytest.mark.parametrize("name, risk_map", [("thresholds", "formula"), ("thresholds", "table"),
                                            ("net_benefit", "formula")])
def test_both_risk_maps_equal_predict(name, dialect, risk_map):
    m, df = model(name), rows(name, "train")
    sql = to_sql(m, "t", dialect=dialect, keep=["id"], risk_map=risk_map)
    assert ("EXP(" in sql) == (risk_map == "formula" and name != "net_benefit")
    check_equal(RUN[dialect](sql, df), m, df)


def test_sqlite_auto_needs_no_exp_for_a_card_of_conditions():
    """SQLite builds without math functions have no exp(): a card of conditions gets a table."""
    assert "EXP(" not in to_sql(model("thresholds"), dialect="sqlite")
    assert "EXP(" in to_sql(model("thresholds"), dialect="duckdb")
    assert "EXP(" in to_sql(model("kinds"), dialect="sqlite")      # value terms: real scores
    with pytest.raises(rf.SettingsError, match="risk_map='table'"):
        to_sql(model("kinds"), risk_map="table")


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
@pytest.mark.parametrize("name", ["kinds", "thresholds", "net_benefit"])
def test_missing_values_and_unseen_levels_give_null(name, dialect):
    m, df = model(name), rows(name, "new").head(40).copy()
    plan = card_plan(m)
    bad = {}
    for k, var in enumerate(plan.variables):
        r = 2 * k
        df[var] = df[var].astype(object)
        df.loc[r, var] = None
        bad[r] = var
        boolean = df[var].map(lambda v: isinstance(v, (bool, np.bool_))).any()
        if var in plan.levels and not (boolean and dialect == "duckdb"):   # a level never seen in training
            df.loc[r + 1, var] = "never seen" if isinstance(plan.levels[var][0], str) else 99
            bad[r + 1] = var
        elif var in plan.numeric and dialect == "duckdb" and df[var].dtype != bool:
            df.loc[r + 1, var] = float("nan")
            bad[r + 1] = var
    for var in plan.variables:  # object columns of numbers back to numbers, NULLs kept
        vals = [v for v in df[var] if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if all(isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)) for v in vals):
            df[var] = pd.to_numeric(df[var])
    out = RUN[dialect](to_sql(m, "t", dialect=dialect, keep=["id"]), df)
    nulls = out["score"].isna().to_numpy()
    assert sorted(np.flatnonzero(nulls)) == sorted(bad)
    assert out["risk"].isna().to_numpy().tolist() == nulls.tolist()
    good = df.drop(index=list(bad))
    for var in plan.variables:
        good[var] = good[var].infer_objects()
    check_equal(out[~nulls].reset_index(drop=True), m, good.reset_index(drop=True))


def test_sql_text_is_data_not_code():
    """A table, kept columns and levels that look like SQL are quoted identifiers and literals."""
    m = model("kinds")
    df = frame().rename(columns={"id": 'id"; DROP TABLE t; --'})
    table = "t\"; DROP TABLE t; --'"
    sql = to_sql(m, table, keep=['id"; DROP TABLE t; --'])
    con = sqlite3.connect(":memory:")
    df.to_sql(table, con, index=False)
    con.execute("CREATE TABLE t (a)")
    got = con.execute(sql).fetchall()
    assert len(got) == len(df)
    assert con.execute("SELECT count(*) FROM t").fetchone() == (0,)          # still there
    assert {r[0] for r in con.execute("SELECT name FROM sqlite_master")} == {table, "t"}
    order = np.argsort([r[0] for r in got])
    np.testing.assert_allclose(np.array([r[1] for r in got])[order], m.score(df).to_numpy(), atol=1e-9)
    # the injection level is matched as a value: its rows get its point
    hit = df["odd name"] == INJECTION
    assert hit.any() and sql.count("'x''); DROP TABLE t; --'") >= 2


def test_sql_comments_cannot_be_closed_by_the_formula():
    """The formula and labels go into ``--`` comments: a line break in them cannot end one."""
    import copy
    m = copy.copy(model("thresholds"))
    # a forged formula (the record is frozen: set past its guard)
    object.__setattr__(m, "formula", "y ~ x1\nDROP TABLE t; --\r\nSELECT 1;\u2028DELETE FROM t")
    sql = to_sql(m, "t", keep=["id"])
    assert "\nDROP" not in sql and "\nDELETE" not in sql
    out = run_sqlite(sql, frame())
    check_equal(out, m, frame())


def test_keep_star_and_none():
    m, df = model("thresholds"), frame()
    con = sqlite3.connect(":memory:")
    df.to_sql("t", con, index=False)
    cur = con.execute(to_sql(m, "t", keep="*"))
    assert [d[0] for d in cur.description] == [*df.columns, "score", "risk"]
    cur = con.execute(to_sql(m, "t", keep=None, score="points", risk="p"))
    assert [d[0] for d in cur.description] == ["points", "p"]


def test_expression_terms_and_bad_arguments_are_refused():
    df = frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score("y ~ np.log(x1 + 1) + flag", df, coef_range={"default": (-3, 3), "np.log(x1 + 1)": (1, 3)},
                          max_size=2, min_size=2, time_limit=5)
    with pytest.raises(rf.SettingsError, match=r"np\.log\(x1 \+ 1\)"):
        to_sql(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = rf.risk_score("y ~ threshold(np.log(x1 + 1), grid=3) + flag", df, max_size=2, min_size=2, time_limit=5)
    assert any(it.kind == "interval" and it.variable is None for it in t.scorecard.items)
    with pytest.raises(rf.SettingsError, match=r"threshold\(np\.log"):
        to_sql(t)
    good = model("thresholds")
    with pytest.raises(rf.SettingsError, match="dialect"):
        to_sql(good, dialect="oracle")
    with pytest.raises(rf.SettingsError, match="keep"):
        to_sql(good, keep=["score"])
    with pytest.raises(rf.SettingsError, match="table"):
        to_sql(good, table="")
    with pytest.raises(rf.DataError, match="NUL"):
        to_sql(good, table="a\x00b")


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
def test_a_variable_read_as_factor_and_number(dialect):
    df = frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score("y ~ C(grade) + grade", df, coef_range={"default": (-3, 3), "grade": (1, 2),
                                                                    "C(grade)": (1, 2)},
                          max_size=3, min_size=3, time_limit=5)
    assert {it.kind for it in m.scorecard.items} == {"level", "value"}
    check_equal(RUN[dialect](to_sql(m, "t", dialect=dialect, keep=["id"]), df), m, df)


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    """A throw-away PostgreSQL server from the ``pgserver`` package (skipped without it)."""
    pgserver = pytest.importorskip("pgserver")
    srv = pgserver.get_server(str(tmp_path_factory.mktemp("pg")), cleanup_mode="stop")
    yield srv
    srv.cleanup()


def run_postgres(srv, sql: str, df: pd.DataFrame) -> pd.DataFrame:
    import io

    def lit(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "NULL"
        if isinstance(v, (bool, np.bool_)):
            return "TRUE" if v else "FALSE"
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        if isinstance(v, (float, np.floating)):
            return repr(float(v))
        return "'" + str(v).replace("'", "''") + "'"

    def sql_type(s):
        return ("BOOLEAN" if s.dtype == bool else "BIGINT" if pd.api.types.is_integer_dtype(s)
                else "DOUBLE PRECISION" if pd.api.types.is_float_dtype(s) else "TEXT")

    def q(n):
        return '"' + n.replace('"', '""') + '"'

    ddl = 'DROP TABLE IF EXISTS "t"; CREATE TABLE "t" (' + ", ".join(f"{q(c)} {sql_type(df[c])}" for c in df.columns) + ");"
    ins = 'INSERT INTO "t" VALUES ' + ", ".join("(" + ", ".join(lit(v) for v in r) + ")"
                                              for r in df.itertuples(index=False)) + ";"
    text = srv.psql(ddl + "\n" + ins + "\nCOPY (" + sql.strip().rstrip(";") + "\n) TO STDOUT WITH (FORMAT csv, HEADER);")
    out = pd.read_csv(io.StringIO(text[text.index("id,score,risk"):]))
    return out.sort_values("id").reset_index(drop=True)


@pytest.mark.parametrize("which", ["train", "new"])
@pytest.mark.parametrize("name", NAMES)
def test_postgres_equals_predict(postgres, name, which):
    """Run in a real PostgreSQL (pgserver): booleans, integers and doubles as Postgres types."""
    m, df = model(name), rows(name, which)
    check_equal(run_postgres(postgres, to_sql(m, "t", dialect="postgres", keep=["id"]), df), m, df)


def test_a_loaded_model_exports_the_same():
    for name in NAMES:
        m = model(name)
        loaded = rf.from_json(m.to_json())
        for dialect in ("sqlite", "duckdb", "postgres"):
            assert to_sql(loaded, dialect=dialect) == to_sql(m, dialect=dialect)


def test_postgres_text():
    """Postgres's statement casts to double precision and rounds as numeric."""
    sql = to_sql(model("kinds"), dialect="postgres")
    assert "DOUBLE PRECISION" in sql and "typeof(" not in sql and "TRY_CAST" not in sql
    assert "'true' THEN '1'" in sql          # a 0/1 value column may be a boolean
    nb = to_sql(model("net_benefit"), dialect="postgres")
    assert "EXP(" not in nb


def test_scoring_a_csv_in_sqlite(tmp_path):
    """The documentation's example: a CSV into SQLite, scored by the generated statement."""
    m = model("thresholds")
    frame().to_csv(tmp_path / "patients.csv", index=False)
    con = sqlite3.connect(tmp_path / "clinic.db")
    pd.read_csv(tmp_path / "patients.csv").to_sql("patients", con, index=False)
    scored = pd.read_sql(to_sql(m, table="patients", keep=["id"]), con)
    np.testing.assert_allclose(scored.sort_values("id")["risk"], m.predict(frame()), atol=1e-9)


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("risk_map", ["auto", "formula"])
def test_table_columns_named_score_and_risk_change_no_number(dialect, name, risk_map):
    # under keep="*" the table's own `score` and `risk` come first in the result; the computed ones
    # (the last two columns) must still be the card's, not read back from the table's by name
    m, df = model(name), rows(name, "new")
    df = df.assign(score=-1000, risk=2.5)
    out = RUN[dialect](to_sql(m, "t", dialect=dialect, risk_map=risk_map), df)
    want = df.sort_values("id")
    np.testing.assert_allclose(out.iloc[:, -2].astype(float), m.score(want).to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(out.iloc[:, -1].astype(float), m.predict(want).to_numpy(), rtol=0, atol=1e-9)
