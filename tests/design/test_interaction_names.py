"""An interaction's column name holds its factors' names joined by ``:``, and a level or a
backtick-quoted column name may hold a ``:`` (or ``[``, ``]``, ``T.``) of its own: the column is
read factor by factor (each share one of that factor's own column names), never split on every
``:``, so it is still a product of a level and a value — a declarative rule that loads without
trust and exports to SQL."""

import sqlite3

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.design import build_design

FIT = dict(max_size=1, time_limit=5, coef_range=(-3, 3))


def shifts(levels=("08:00", "20:00"), n=300, seed=1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"shift": rng.choice(list(levels), n), "flag": rng.random(n) < 0.5})
    lin = (d["shift"] == levels[1]) * d.flag * 2.5 - 1
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-lin))).astype(int)
    return d


def sql_risk(model, data: pd.DataFrame) -> np.ndarray:
    con = sqlite3.connect(":memory:")
    data.assign(flag=data.flag.astype(int), row=np.arange(len(data))).to_sql("t", con, index=False)
    out = pd.read_sql(model.to_sql("t"), con).sort_values("row")
    con.close()
    return out["risk"].to_numpy(dtype=float)


def assert_declarative_round_trip(model, data: pd.DataFrame) -> None:
    loaded = rf.from_json(model.to_json())  # no trusted=True: nothing to evaluate
    assert all(r.declarative for r in loaded.design.rules)
    np.testing.assert_array_equal(loaded.predict(data).to_numpy(), model.predict(data).to_numpy())
    np.testing.assert_allclose(sql_risk(model, data), model.predict(data).to_numpy(), rtol=1e-12, atol=1e-12)


def test_a_level_with_a_colon_in_an_interaction_is_a_product():
    d = shifts()
    m = rf.risk_score("y ~ C(shift):flag", d, **FIT)
    j = list(m.design.columns).index("C(shift)[20:00]:flag")
    rule = m.design.rules[j]
    assert rule.kind == "product"
    assert [p.to_dict() for p in rule.parts] == [{"kind": "level", "variable": "shift", "value": "20:00"},
                                                 {"kind": "linear", "variable": "flag"}]
    assert m.coef["C(shift)[20:00]:flag"] != 0
    # labelled as the same fit with levels without a colon
    plain = rf.risk_score("y ~ C(shift):flag", d.replace({"shift": {"08:00": "08h", "20:00": "20h"}}), **FIT)
    assert m.labels["C(shift)[20:00]:flag"] == "shift = 20:00:flag"
    assert plain.labels["C(shift)[20h]:flag"] == "shift = 20h:flag"
    assert "shift = 20:00:flag" in m.card() and "C(shift)[20:00]" not in m.card()
    assert_declarative_round_trip(m, d)


def test_a_backticked_name_with_a_colon_in_an_interaction_is_a_product():
    rng = np.random.default_rng(2)
    n = 300
    d = pd.DataFrame({"dose:mg": rng.integers(0, 4, n).astype(float), "flag": rng.random(n) < 0.5})
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-(d["dose:mg"] * d.flag - 1)))).astype(int)
    m = rf.risk_score("y ~ `dose:mg`:flag", d, **FIT)
    assert list(m.design.columns) == ["dose:mg:flag"]
    rule = m.design.rules[0]
    assert rule.kind == "product" and [p.to_dict() for p in rule.parts] == [
        {"kind": "linear", "variable": "dose:mg"}, {"kind": "linear", "variable": "flag"}]
    assert m.coef["dose:mg:flag"] != 0 and m.labels["dose:mg:flag"] == "dose:mg:flag"
    assert_declarative_round_trip(m, d)


@pytest.mark.parametrize("levels", [("a", "b:c"), ("[a]", "b]"), ("c[x", "p]:q"), ("T.x", "x"), ("s:1", "T.s:2")])
def test_odd_levels_in_an_interaction_are_read_exactly(levels):
    d = shifts(levels)
    for formula in ("y ~ C(shift):flag", "y ~ flag:C(shift)"):
        dm = build_design(formula, d)
        assert all(r.kind == "product" for r in dm.spec.rules)
        got = {p.value for r in dm.spec.rules for p in r.parts if p.kind == "level"}
        assert got == set(levels)
        for j, r in enumerate(dm.spec.rules):  # each rule is the column formulaic computes
            np.testing.assert_array_equal(r.values(d), dm.X[:, j])
    m = rf.risk_score("y ~ C(shift):flag", d, **FIT)
    assert_declarative_round_trip(m, d)


def test_two_factors_whose_levels_hold_colons():
    rng = np.random.default_rng(4)
    n = 200
    d = pd.DataFrame({"a": rng.choice(["u", "v"], n), "b": rng.choice(["s:1", "s:2", "s:3"], n),
                      "flag": rng.random(n) < 0.5, "y": rng.integers(0, 2, n)})
    dm = build_design("y ~ C(a):C(b):flag", d)
    assert all(r.kind == "product" and len(r.parts) == 3 for r in dm.spec.rules)
    for j, r in enumerate(dm.spec.rules):
        np.testing.assert_array_equal(r.values(d), dm.X[:, j])
    assert "a = u:b = s:1:flag" in dm.spec.labels


def test_a_name_that_reads_two_ways_stays_an_expression():
    # `C(a)[A]:C(b)[B1]:C(b)[B2]:flag` is both a = "A", b = "B1]:C(b)[B2" and a = "A]:C(b)[B1",
    # b = "B2" (formulaic gives the two columns one name): no rule is guessed
    rng = np.random.default_rng(0)
    n = 60
    d = pd.DataFrame({"a": rng.choice(["A", "A]:C(b)[B1"], n), "b": rng.choice(["B1]:C(b)[B2", "B2"], n),
                      "flag": rng.random(n) < 0.5, "y": rng.integers(0, 2, n)})
    spec = build_design("y ~ C(a):C(b):flag", d).spec
    rules = dict(zip(spec.columns, spec.rules))
    assert rules["C(a)[A]:C(b)[B1]:C(b)[B2]:flag"].kind == "expression"
    assert rules["C(a)[A]:C(b)[B2]:flag"].kind == "product"
