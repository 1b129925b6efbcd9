"""The PMML export, evaluated by JPMML (``jpmml-evaluator`` on a Java runtime): scores, risks and
reason codes equal the model's; the document is valid against the PMML 4.4 schema JPMML ships.

The evaluator tests skip when ``jpmml_evaluator`` is not installed or no ``java`` is on PATH; the
checks of the document itself and of the refusals run everywhere.
"""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import riskformula as rf
from riskformula.export import card_plan, to_pmml
from pmml_evaluator import evaluate, jpmml_module
from test_export_sql import INJECTION, NAMES, frame, model, rows

NS = {"p": "http://www.dmg.org/PMML-4_4"}


@pytest.fixture(scope="module")
def jpmml():
    return jpmml_module()


@pytest.mark.parametrize("which", ["train", "new"])
@pytest.mark.parametrize("name", NAMES)
def test_pmml_equals_predict(jpmml, name, which):
    m, df = model(name), rows(name, which)
    out = evaluate(jpmml, to_pmml(m), df)
    assert "errors" not in out.columns or out["errors"].isna().all()
    np.testing.assert_allclose(out["score"].astype(float), m.score(df).to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(out["risk"].astype(float), m.predict(df).to_numpy(), rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", ["kinds", "thresholds", "net_benefit"])
def test_missing_and_invalid_values_give_no_score(jpmml, name):
    """Where predict refuses a row (a missing value, an unseen level, an infinite number), the
    evaluator gives no score and no risk, and the other rows are unchanged."""
    m, df = model(name), rows(name, "new").head(30).copy()
    plan = card_plan(m)
    bad = set()
    for k, var in enumerate(plan.variables):
        df[var] = df[var].astype(object)
        df.loc[2 * k, var] = None
        bad.add(2 * k)
        if var in plan.levels and isinstance(plan.levels[var][0], str):
            df.loc[2 * k + 1, var] = "never seen"
            bad.add(2 * k + 1)
        elif var in plan.numeric:
            df.loc[2 * k + 1, var] = math.inf
            bad.add(2 * k + 1)
    out = evaluate(jpmml, to_pmml(m), df)
    miss = out["score"].isna().to_numpy()
    assert sorted(np.flatnonzero(miss)) == sorted(bad)
    assert out["risk"].isna().to_numpy().tolist() == miss.tolist()
    good = df.drop(index=sorted(bad)).reset_index(drop=True)
    for var in plan.variables:
        good[var] = good[var].infer_objects()
    np.testing.assert_allclose(out.loc[~miss, "risk"].astype(float), m.predict(good).to_numpy(), atol=1e-9)


@pytest.mark.parametrize("name", ["thresholds", "scale", "kinds"])
def test_reason_codes_are_the_principal_reasons(jpmml, name):
    """pointsAbove with each term's fewest points as its baseline: the ranked codes are the
    features m.reasons names (those with excess points), best first."""
    m, df = model(name), rows(name, "new").head(60)
    n = len(set(card_plan(m).variables))
    out = evaluate(jpmml, to_pmml(m, reasons=n), df)
    reasons = m.reasons(df, n=n).to_frame()
    for k, (person, g) in enumerate(reasons.groupby("person", sort=False)):
        g = g[g["reason_points"] > 1e-9]
        codes = [out.loc[k, c] for c in out.columns if c.startswith("reason_")]
        codes = [c for c in codes if isinstance(c, str)]
        # ties may come in either order: compare the features rank group by rank group
        want = [set(gg["feature"]) for _, gg in g.groupby("reason_points", sort=False)]
        got = codes[:len(g)]
        pos = 0
        for features in sorted(want, key=lambda s: -float(g[g["feature"].isin(s)]["reason_points"].iloc[0])):
            assert set(got[pos:pos + len(features)]) == features, (person, codes, g)
            pos += len(features)


@pytest.mark.parametrize("name", NAMES)
def test_document_is_valid_pmml_4_4(jpmml, name):
    """Validated against the PMML 4.4 schema in JPMML's pmml-model jar (the JDK's validator)."""
    import jpype
    text = to_pmml(model(name))
    jpmml.make_evaluator(text)          # starts the JVM with JPMML's jars
    url = jpype.JClass("org.dmg.pmml.PMML").class_.getClassLoader().getResource("pmml.xsd")
    schema = jpype.JClass("javax.xml.validation.SchemaFactory").newInstance(
        "http://www.w3.org/2001/XMLSchema").newSchema(url)
    source = jpype.JClass("javax.xml.transform.stream.StreamSource")
    reader = jpype.JClass("java.io.StringReader")
    schema.newValidator().validate(source(reader(text)))
    with pytest.raises(Exception, match="Bogus"):
        schema.newValidator().validate(source(reader(text.replace("<Characteristics>", "<Characteristics><Bogus/>"))))


def test_document_structure_and_escaping(tmp_path):
    m = model("kinds")
    text = to_pmml(m, tmp_path / "card.pmml")
    assert (tmp_path / "card.pmml").read_text(encoding="utf-8") == text
    root = ET.fromstring(text)
    assert root.get("version") == "4.4"
    sc = root.find("p:Scorecard", NS)
    assert sc.get("useReasonCodes") == "true" and sc.get("reasonCodeAlgorithm") == "pointsAbove"
    values = {f.get("name"): [v.get("value") for v in f.findall("p:Value", NS)]
              for f in root.findall("p:DataDictionary/p:DataField", NS)}
    assert values["odd name"] == sorted(["a b", INJECTION, 'q"z'])      # quotes and all, as data
    assert values["diabetic"] == ["false", "true"] and values["grade"] == ["1", "2", "3"]
    header = root.find("p:Header", NS)
    assert m.formula in header.get("description")
    assert any(m.certificate_line() in (a.text or "") for a in header.findall("p:Annotation", NS))
    outputs = [o.get("name") for o in sc.findall("p:Output/p:OutputField", NS)]
    assert outputs == ["score", "risk", "reason_1", "reason_2", "reason_3"]


def test_refusals():
    df = frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score("y ~ np.log(x1 + 1) + flag", df, coef_range={"default": (-3, 3), "np.log(x1 + 1)": (1, 3)},
                          max_size=2, min_size=2, time_limit=5)
        both = rf.risk_score("y ~ C(grade) + grade", df, coef_range={"default": (-3, 3), "grade": (1, 2),
                                                                       "C(grade)": (1, 2)},
                             max_size=3, min_size=3, time_limit=5)
        ctrl = df.assign(sex=df["sex"].map({"f": "f", "m": "m\x01"}))
        bad = rf.risk_score("y ~ sex", ctrl, coef_range=(1, 2), max_size=1, min_size=1, time_limit=5)
    with pytest.raises(rf.SettingsError, match=r"np\.log\(x1 \+ 1\)"):
        to_pmml(m)
    assert {it.kind for it in both.scorecard.items} == {"level", "value"}
    with pytest.raises(rf.SettingsError, match="both as a factor and as a number"):
        to_pmml(both)
    with pytest.raises(rf.DataError, match="XML"):
        to_pmml(bad)
    with pytest.raises(rf.SettingsError, match="reasons"):
        to_pmml(model("thresholds"), reasons=-1)
