"""Odd data frames from a seeded generator, and the classification of what a fit makes of one.

:func:`odd_frames` yields cases (a name, a formula, a frame and fit arguments) that mix dtypes
and values a careless user or an attacker might pass: integers of every width (uint64 beyond
2⁶³ included), floats with inf, NaN, -0.0 and subnormals, booleans, pandas' nullable integers and
booleans, text and mixed objects, categories, dates, durations, periods, complex numbers, lists
and dicts in cells; empty frames, one row, all-NaN columns, duplicated and non-string column
names, MultiIndex columns, and odd weights.

:func:`classify` fits one case through :func:`riskformula.risk_score` and says what came of it:

* ``"correct"``: a model, whose ``predict`` agrees with its ``to_sql`` run by SQLite on the same
  rows (NULL exactly where ``predict`` refuses a row), and the caller's frame is unchanged;
* ``"clear_error"``: a riskformula error (``rf.RiskFormulaError``) with a message;
* ``"raw_traceback"``: any other exception, from the fit or from the checks of a fitted model;
* ``"silent_wrong"``: a model whose ``predict`` and SQL disagree, or a fit that changed the
  caller's frame.

Shared by ``tests/design/test_odd_frames.py`` and any adversarial test module that wants the same
verdicts (``from fuzz_frames import classify, odd_frames``).
"""

from __future__ import annotations

import math
import sqlite3
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import riskformula as rf

KINDS = ("correct", "clear_error", "raw_traceback", "silent_wrong")


@dataclass
class Case:
    name: str
    formula: str
    data: object
    fit_args: dict = field(default_factory=dict)


@dataclass
class Outcome:
    kind: str            # one of KINDS
    detail: str = ""     # the error, or what disagreed


# --------------------------------------------------------------------------------------
# the generator
# --------------------------------------------------------------------------------------

def _column(kind: str, n: int, rng: np.random.Generator):
    """One predictor column of ``kind`` with ``n`` rows."""
    small = rng.integers(0, 4, n)
    if kind in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        return pd.Series(small, dtype=kind)
    if kind == "uint64_huge":
        return pd.Series([np.uint64(2 ** 63) + np.uint64(int(v)) for v in small], dtype="uint64")
    if kind == "int64_extreme":
        return pd.Series(rng.choice([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max], n), dtype="int64")
    if kind == "float":
        return pd.Series(rng.normal(size=n))
    if kind == "float_odd":
        pool = [np.inf, -np.inf, np.nan, -0.0, 0.0, 5e-324, 1e-310, 1e308, -1e308, 1.0]
        return pd.Series(rng.choice(pool, n))
    if kind == "float_subnormal":
        return pd.Series(rng.choice([5e-324, 1e-320, 0.0, -0.0, 2.2e-308], n))
    if kind == "float_nan":
        x = rng.normal(size=n)
        x[rng.random(n) < 0.3] = np.nan
        return pd.Series(x)
    if kind == "all_nan":
        return pd.Series(np.full(n, np.nan))
    if kind == "constant":
        return pd.Series(np.full(n, 7))
    if kind == "bool":
        return pd.Series(small % 2 == 0)
    if kind == "Int64":
        return pd.Series(pd.array([None if v == 3 else int(v) for v in small], dtype="Int64"))
    if kind == "boolean":
        return pd.Series(pd.array([None if v == 3 else bool(v % 2) for v in small], dtype="boolean"))
    if kind == "string":
        return pd.Series([f"s{v}" for v in small], dtype="string")
    if kind == "object_mixed":
        pool = [1, "1", 2.5, None, "a", True, -0.0]
        return pd.Series([pool[int(i)] for i in rng.integers(0, len(pool), n)], dtype=object)
    if kind == "category":
        return pd.Series(pd.Categorical([f"c{v}" for v in small]))
    if kind == "category_ordered":
        return pd.Series(pd.Categorical([f"c{v}" for v in small], categories=["c3", "c2", "c1", "c0"], ordered=True))
    if kind == "datetime":
        return pd.Series(pd.to_datetime("2020-01-01") + pd.to_timedelta(small, unit="D"))
    if kind == "timedelta":
        return pd.Series(pd.to_timedelta(small, unit="h"))
    if kind == "period":
        return pd.Series(pd.PeriodIndex([pd.Period("2020-01", "M") + int(v) for v in small]))
    if kind == "complex":
        return pd.Series(small + 1j * rng.integers(0, 2, n))
    if kind == "lists":
        return pd.Series([[int(v), 1] for v in small], dtype=object)
    if kind == "dicts":
        return pd.Series([{"k": int(v)} for v in small], dtype=object)
    if kind == "sets":
        return pd.Series([{int(v)} for v in small], dtype=object)
    if kind == "bytes":
        return pd.Series([bytes([65 + int(v)]) for v in small], dtype=object)
    raise ValueError(kind)


COLUMN_KINDS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "uint64_huge",
                "int64_extreme", "float", "float_odd", "float_subnormal", "float_nan", "all_nan", "constant",
                "bool", "Int64", "boolean", "string", "object_mixed", "category", "category_ordered", "datetime",
                "timedelta", "period", "complex", "lists", "dicts", "sets", "bytes")


def _outcome(n: int, rng: np.random.Generator, kind: str):
    y = rng.integers(0, 2, n)
    if n >= 2:
        y[0], y[1] = 0, 1  # both classes, unless the kind says otherwise
    if kind == "int":
        return pd.Series(y)
    if kind == "bool":
        return pd.Series(y == 1)
    if kind == "text":
        return pd.Series(np.where(y == 1, "yes", "no"))
    if kind == "Int64_na":
        return pd.Series(pd.array([None if i == n - 1 else int(v) for i, v in enumerate(y)], dtype="Int64"))
    if kind == "one_class":
        return pd.Series(np.zeros(n, dtype=int))
    if kind == "float":
        return pd.Series(y.astype(float))
    raise ValueError(kind)


FORMULAS = ("y ~ .", "y ~ x0", "y ~ x0 + x1", "y ~ threshold(x0)", "y ~ C(x0)", "y ~ threshold(.)",
            "y ~ x0:x1", "y ~ cut(x0, [1, 2])")


def _weights(n: int, rng: np.random.Generator):
    kind = rng.choice(["none"] * 6 + ["1e308", "1e-320", "zeros", "negative", "nan", "wide", "inf", "text"])
    values = {"1e308": np.full(n, 1e308), "1e-320": np.full(n, 1e-320), "zeros": np.zeros(n),
              "negative": -np.ones(n), "nan": np.where(np.arange(n) % 2, np.nan, 1.0),
              "wide": np.where(np.arange(n) % 2, 1e300, 1e-300), "inf": np.full(n, np.inf),
              "text": np.array(["a"] * n, dtype=object)}
    return str(kind), values.get(str(kind))


def odd_frames(count: int = 150, seed: int = 0):
    """``count`` :class:`Case` s from ``numpy.random.default_rng(seed)`` (the same cases for the
    same seed): random frames of odd columns, then frames odd as a whole (empty, one row,
    duplicated / non-string / MultiIndex column names, data that are not a frame)."""
    rng = np.random.default_rng(seed)
    special = list(_special_cases(rng))
    for i in range(count - len(special)):
        n = int(rng.choice([1, 2, 3, 8, 30, 60]))
        y_kind = str(rng.choice(["int"] * 5 + ["bool", "text", "Int64_na", "one_class", "float"]))
        k = int(rng.integers(1, 4))
        kinds = [str(rng.choice(COLUMN_KINDS)) for _ in range(k)]
        frame = pd.DataFrame({"y": _outcome(n, rng, y_kind)})
        for j, kind in enumerate(kinds):
            frame[f"x{j}"] = _column(kind, n, rng).array
        formula = str(rng.choice(FORMULAS))
        if "x1" in formula and k < 2:
            formula = "y ~ x0"
        args: dict = {}
        w_kind, w = _weights(n, rng)
        if w is not None:
            args["weights"] = w
        choice = rng.random()
        if choice < 0.15:
            args["missing"] = "item"
        elif choice < 0.25:
            args["missing"] = "drop"
        yield Case(f"{i}: y {y_kind}, {'/'.join(kinds)}, n={n}, w={w_kind}, {formula}", formula, frame, args)
    yield from special


def _special_cases(rng: np.random.Generator):
    n = 30
    y = _outcome(n, rng, "int")
    x = rng.integers(0, 3, n)
    yield Case("empty frame", "y ~ x", pd.DataFrame({"y": pd.Series([], dtype=int), "x": pd.Series([], dtype=float)}))
    yield Case("no columns", "y ~ 1", pd.DataFrame(index=range(5)))
    yield Case("one row", "y ~ x", pd.DataFrame({"y": [1], "x": [0.5]}))
    dup = pd.DataFrame(np.column_stack([y, x, x]), columns=["y", "x", "x"])
    yield Case("duplicate column names", "y ~ x", dup)
    yield Case("duplicate column names, dot", "y ~ .", dup)
    yield Case("int column names", "y ~ .", pd.DataFrame({"y": y, 0: x, 1: x + 1}))
    yield Case("tuple column names", "y ~ .", pd.DataFrame({"y": y, ("a", 1): x}))
    yield Case("int column name by name", "y ~ threshold(.)", pd.DataFrame({"y": y, 5: x}))
    mi = pd.DataFrame(np.column_stack([y, x]))
    mi.columns = pd.MultiIndex.from_tuples([("y", ""), ("x", "a")])
    yield Case("MultiIndex columns", "y ~ x", mi)
    yield Case("MultiIndex columns, dot", "y ~ .", mi)
    yield Case("data as a dataset name", "y ~ x", "wdbc")
    yield Case("data as a path", "y ~ x", "/tmp/data.csv")
    yield Case("data as a dict", "y ~ x", {"y": list(y), "x": list(x)})
    yield Case("data as an array", "y ~ x", np.column_stack([y, x]))
    yield Case("data as None", "y ~ x", None)
    yield Case("weights 1e308", "y ~ x", pd.DataFrame({"y": y, "x": x}), {"weights": np.full(n, 1e308)})
    yield Case("weights 1e-320", "y ~ x", pd.DataFrame({"y": y, "x": x}), {"weights": np.full(n, 1e-320)})
    yield Case("weights of one row", "y ~ x", pd.DataFrame({"y": y, "x": x}),
               {"weights": np.where(np.arange(n) == 0, 1.0, 0.0)})
    inf = rng.normal(size=n)
    inf[:2] = np.inf
    yield Case("inf in threshold", "y ~ threshold(x)", pd.DataFrame({"y": y, "x": inf}))
    yield Case("nullable boolean item", "y ~ x", pd.DataFrame({"y": y, "x": pd.array([True, False, None] * 10,
                                                                                       dtype="boolean")}),
               {"missing": "item"})
    rare = np.zeros(1000, dtype=int)
    xr = rng.normal(size=1000)
    rare[int(np.argmax(xr))] = 1
    yield Case("min_bin rule", "y ~ threshold(x)", pd.DataFrame({"y": rare, "x": xr}))
    yield Case("index with duplicates", "y ~ x", pd.DataFrame({"y": y, "x": x}, index=[0] * n))
    yield Case("object y of mixed types", "y ~ x", pd.DataFrame({"y": pd.Series([0, "1"] * 15, dtype=object),
                                                                  "x": x}))


# --------------------------------------------------------------------------------------
# the classification
# --------------------------------------------------------------------------------------

def _snapshot(data):
    if isinstance(data, pd.DataFrame):
        return data.copy(deep=True), list(data.columns), list(data.dtypes), data.index.copy()
    if isinstance(data, np.ndarray):
        return data.copy()
    return None


def _unchanged(data, snap) -> bool:
    if isinstance(data, pd.DataFrame):
        copy, cols, dtypes, index = snap
        if list(data.columns) != cols or list(data.dtypes) != dtypes or not data.index.equals(index):
            return False
        try:
            pd.testing.assert_frame_equal(data, copy, check_exact=True)
        except AssertionError:
            return False
        except Exception:  # cells that cannot be compared (e.g. arrays in cells): compared by their text
            return data.astype(str).equals(copy.astype(str))
        return True
    if isinstance(data, np.ndarray):
        return bool(np.array_equal(data, snap, equal_nan=data.dtype.kind == "f"))
    return True


def _predict_by_row(model, frame: pd.DataFrame) -> np.ndarray:
    """``model.predict`` of each row (NaN where it refuses the row with a riskformula error)."""
    try:
        return model.predict(frame).to_numpy(dtype=float)
    except rf.RiskFormulaError:
        pass
    out = np.full(len(frame), np.nan)
    for i in range(len(frame)):
        try:
            out[i] = float(model.predict(frame.iloc[[i]]).to_numpy(dtype=float)[0])
        except rf.RiskFormulaError:
            continue
    return out


def _sql_value(v):
    """A cell as SQLite stores it (None for any missing value)."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, (float, np.floating)) and math.isnan(v):
        return None
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, (str, int, float, bytes)):
        return v
    return str(v)  # what a database would hold for a value SQLite has no type for


def _sql_risks(model, frame: pd.DataFrame) -> np.ndarray:
    """The risks ``model.to_sql`` computes in SQLite for the rows of ``frame`` (NaN for NULL)."""
    sql = model.to_sql("t", keep=["__row"])  # first: a model it cannot export is refused here
    variables = [v for v in model.design.required_variables() if v in frame.columns]
    con = sqlite3.connect(":memory:")
    try:
        cols = ['"__row"'] + ['"' + str(v).replace('"', '""') + '"' for v in variables]
        con.execute(f"CREATE TABLE t ({', '.join(cols)})")
        rows = [(i, *(_sql_value(frame[v].iloc[i]) for v in variables)) for i in range(len(frame))]
        con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(cols))})", rows)
        cur = con.execute(sql)
        got = {r[0]: r[2] for r in cur.fetchall()}
    finally:
        con.close()
    return np.array([np.nan if got.get(i) is None else float(got[i]) for i in range(len(frame))])


def check_model(model, frame: pd.DataFrame) -> str:
    """What disagrees between ``predict`` and ``to_sql`` on the rows of ``frame`` ("" if nothing)."""
    mine = _predict_by_row(model, frame)
    try:
        sql = _sql_risks(model, frame)
    except rf.RiskFormulaError:
        return ""  # a model the SQL export refuses, with a clear error (a term only formulaic computes)
    if not np.array_equal(np.isnan(mine), np.isnan(sql)):
        rows = np.flatnonzero(np.isnan(mine) != np.isnan(sql))[:5].tolist()
        return f"predict and to_sql disagree on which rows they score (rows {rows}: {mine[rows]} vs {sql[rows]})"
    ok = ~np.isnan(mine)
    if not np.allclose(mine[ok], sql[ok], rtol=0, atol=1e-9):
        rows = np.flatnonzero(ok & ~np.isclose(mine, sql, rtol=0, atol=1e-9, equal_nan=True))[:5].tolist()
        return f"predict and to_sql disagree (rows {rows}: {mine[rows]} vs {sql[rows]})"
    if ok.any() and not ((mine[ok] >= 0) & (mine[ok] <= 1)).all():
        return "predict gives risks outside [0, 1]"
    return ""


def classify(case: Case, **search) -> Outcome:
    """Fit ``case`` with :func:`riskformula.risk_score` (``search``: search settings; by default a
    small node limit) and classify the outcome (see the module text)."""
    search = {"node_limit": 5, "time_limit": 20, "max_size": 2, "progress": False, **search}
    snap = _snapshot(case.data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = rf.risk_score(case.formula, case.data, **case.fit_args, **search)
    except rf.RiskFormulaError as e:
        if not _unchanged(case.data, snap):
            return Outcome("silent_wrong", f"the caller's frame was changed (and then: {e})")
        text = str(e).strip()
        return Outcome("clear_error" if text else "raw_traceback", f"{type(e).__name__}: {text}")
    except Exception as e:
        return Outcome("raw_traceback", "".join(traceback.format_exception(e))[-1500:])
    if not _unchanged(case.data, snap):
        return Outcome("silent_wrong", "the caller's frame was changed by the fit")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problem = check_model(model, case.data)
    except Exception as e:
        return Outcome("raw_traceback", "checking the model: " + "".join(traceback.format_exception(e))[-1500:])
    if not _unchanged(case.data, snap):
        return Outcome("silent_wrong", "the caller's frame was changed by predict")
    return Outcome("silent_wrong", problem) if problem else Outcome("correct")


def run(cases, **search) -> tuple[Counter, dict]:
    """(counts by kind, with "tried"; the outcome of every case by name)."""
    counts: Counter = Counter({k: 0 for k in KINDS})
    outcomes = {}
    for case in cases:
        out = classify(case, **search)
        counts[out.kind] += 1
        counts["tried"] += 1
        outcomes[case.name] = out
    return counts, outcomes
