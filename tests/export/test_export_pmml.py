"""The PMML export, evaluated by JPMML (``jpmml-evaluator`` on a Java runtime): scores, risks and
reason codes equal the model's; the document is valid against the PMML 4.4 schema JPMML ships.

The evaluator tests skip when ``jpmml_evaluator`` is not installed or no ``java`` is on PATH; the
checks of the document itself and of the refusals run everywhere.
"""

from __future__ import annotations

import functools
import math
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
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


# --- output names never a data field's name ---------------------------------------------------
def _outputs(text: str) -> list:
    return [o.get("name") for o in ET.fromstring(text).findall("p:Scorecard/p:Output/p:OutputField", NS)]


def _data_fields(text: str) -> dict:
    """DataField name -> its dataType."""
    return {f.get("name"): f.get("dataType") for f in ET.fromstring(text).findall("p:DataDictionary/p:DataField", NS)}


def _named_frame(n: int = 300, seed: int = 1) -> pd.DataFrame:
    """Predictors named as the default output fields: reason_1, score, risk."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"reason_1": rng.integers(20, 80, n).astype(float), "score": rng.choice(["a", "b"], n),
                       "risk": rng.integers(0, 2, n)})
    z = (df["reason_1"] - 50) / 8 + (df["score"] == "b") - df["risk"]
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    return df


@functools.cache
def _named_model():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rf.risk_score("y ~ threshold(reason_1, grid=4) + C(score) + risk", _named_frame(), max_size=4,
                             coef_range={"default": (-3, 3), "C(score)": (1, 3), "risk": (-3, -1)}, time_limit=5)


@functools.cache
def _band_model():
    """A net-benefit score (its output fields include the band, `risk_band`) reading `risk_band`."""
    df = rf.load_dataset("breastcancer").rename(columns={"BareNuclei": "risk_band"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rf.risk_score("Benign ~ ClumpThickness + risk_band", df, objective="net_benefit", max_size=2,
                             coef_range=(0, 5), time_limit=5), df


def test_default_output_names_are_never_a_data_field_name():
    """A model reading columns named reason_1, score and risk (the default output names): the
    outputs take a leading _ (an evaluator holds one value per name, and failed on every row)."""
    m = _named_model()
    text = to_pmml(m)
    fields = _data_fields(text)
    assert set(fields) == {"reason_1", "score", "risk"}
    assert _outputs(text) == ["_score", "_risk", "_reason_1", "reason_2", "reason_3"]
    # explicit names that no variable has are kept, and the reasons still avoid the fields
    assert _outputs(to_pmml(m, score="points", risk="p", reasons=2)) == ["points", "p", "_reason_1", "reason_2"]
    # a default avoids the other output's explicit name too
    assert _outputs(to_pmml(m, score="_risk", reasons=0)) == ["_risk", "__risk"]
    text = to_pmml(_band_model()[0], reasons=1)
    assert "risk_band" in _data_fields(text)
    assert _outputs(text) == ["score", "_risk_band", "risk", "reason_1"]


def test_output_names_that_are_data_field_names_equal_predict(jpmml):
    m, df = _named_model(), _named_frame(150, seed=2)
    out = evaluate(jpmml, to_pmml(m), df)
    assert "errors" not in out.columns or out["errors"].isna().all()
    np.testing.assert_allclose(out["_score"].astype(float), m.score(df).to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(out["_risk"].astype(float), m.predict(df).to_numpy(), rtol=0, atol=1e-9)
    assert set(out["_reason_1"].dropna()) <= {"reason_1", "score", "risk"}
    nb, bdf = _band_model()
    out = evaluate(jpmml, to_pmml(nb), bdf)
    assert "errors" not in out.columns or out["errors"].isna().all()
    np.testing.assert_allclose(out["risk"].astype(float), nb.predict(bdf).to_numpy(), rtol=0, atol=1e-9)


def test_explicit_output_names_of_data_fields_are_refused():
    m = _named_model()
    with pytest.raises(rf.SettingsError, match=r"`score='reason_1'` is the name of the model's input variable "
                                               r"`reason_1`.*Pass another `score=` name"):
        to_pmml(m, score="reason_1")
    with pytest.raises(rf.SettingsError, match=r"`risk='score'` is the name of the model's input variable `score`"):
        to_pmml(m, score="points", risk="score")
    with pytest.raises(rf.SettingsError, match="different field names"):
        to_pmml(m, score="points", risk="points")


def test_a_horizon_risk_name_of_a_data_field():
    """A time-to-event score with several horizons: its risk fields risk_<t> avoid a variable of
    that name (the prefix takes a leading _), and an explicit prefix that gives one is refused."""
    rng = np.random.default_rng(0)
    n = 120
    df = pd.DataFrame({"risk_3": rng.integers(0, 2, n), "x": rng.normal(0, 1, n).round(2)})
    T = np.ceil(rng.exponential(5 / np.exp(0.8 * df["risk_3"] + 0.7 * df["x"])))
    C = np.ceil(rng.exponential(8, n))
    df["t"], df["d"] = np.minimum(T, C), (T <= C).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score("Surv(t, d) ~ C(risk_3) + threshold(x, grid=3)", df, horizon=[3, 6], max_size=2,
                          min_size=2, coef_range=(-3, 3), time_limit=5)
    assert "risk_3" in card_plan(m).variables
    assert _outputs(to_pmml(m, horizon=[3, 6], reasons=0)) == ["score", "_risk_3", "_risk_6"]
    assert _outputs(to_pmml(m, horizon=[3, 6], risk="p", reasons=0)) == ["score", "p_3", "p_6"]
    with pytest.raises(rf.SettingsError, match=r"`risk='risk'` gives the output field 'risk_3', the name of the "
                                               r"model's input variable `risk_3`"):
        to_pmml(m, horizon=[3, 6], risk="risk")


# --- integer levels beyond PMML's 32-bit integer ------------------------------------------------
BIG = {3000000001: "double", -3000000001: "double", 2 ** 53 - 1: "double", 2 ** 60 + 1: "string"}


@functools.cache
def _big_model(big: int):
    """A factor with the level ``big`` (and 17, 5), read alone and in an interaction with x."""
    rng = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame({"site": rng.choice([big, 17, 5], n), "x": rng.normal(0, 1, n).round(2)})
    z = 2 * (df["site"] == big) - 1 + 1.5 * df["x"] * (df["site"] == 17)
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score("y ~ C(site) + C(site):x", df, max_size=3, coef_range=(-3, 3), time_limit=5)
    return m, df


@pytest.mark.parametrize("big", list(BIG))
def test_integer_levels_beyond_32_bits_are_doubles_or_strings(big):
    """PMML's integer is 32-bit: such a field is double (its levels below 2**53 are doubles
    exactly), or string beyond 2**53; a level constant has the field's type."""
    m, _ = _big_model(big)
    assert big in card_plan(m).levels["site"]
    text = to_pmml(m)
    assert _data_fields(text)["site"] == BIG[big]
    consts = [c for c in ET.fromstring(text).iter(f"{{{NS['p']}}}Constant") if c.text in (str(big), "17", "5")]
    assert consts and {c.get("dataType") for c in consts} == {BIG[big]}


@pytest.mark.parametrize("big", list(BIG))
def test_integer_levels_beyond_32_bits_equal_predict(jpmml, big):
    """Row by row the model's scores and risks; a value next to the level (big ± 1, which predict
    refuses as unseen) gets no score rather than the level's points."""
    m, df = _big_model(big)
    assert any(it.kind == "value" for it in m.scorecard.items)      # the interaction's equal test is read
    out = evaluate(jpmml, to_pmml(m), df)
    assert "errors" not in out.columns or out["errors"].isna().all()
    np.testing.assert_allclose(out["score"].astype(float), m.score(df).to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(out["risk"].astype(float), m.predict(df).to_numpy(), rtol=0, atol=1e-9)
    near = pd.DataFrame({"site": [big - 1, big + 1, big], "x": [0.5, 0.5, 0.5]})
    out = evaluate(jpmml, to_pmml(m), near)
    assert out["score"].isna().tolist() == [True, True, False]
    np.testing.assert_allclose(float(out["risk"][2]), m.predict(near.tail(1)).iloc[0], rtol=0, atol=1e-9)


def test_level_types_at_the_bounds():
    """integer up to 2**31 - 1, double below 2**53 (and for integers with decimals), string for
    integers beyond; decimals with an integer beyond 2**53 have no type that holds both exactly."""
    from riskformula.export.pmml import _level_type
    assert _level_type("v", (2 ** 31 - 1, -2 ** 31)) == "integer"
    assert _level_type("v", (2 ** 31, 1)) == _level_type("v", (-2 ** 31 - 1,)) == "double"
    assert _level_type("v", (2 ** 53 - 1, 1.5)) == _level_type("v", (1, 1.5)) == "double"
    assert _level_type("v", (2 ** 53, 1)) == "string"
    assert _level_type("v", (True, False)) == "boolean" and _level_type("v", ("a",)) == "string"
    with pytest.raises(rf.SettingsError, match=r"levels of `v`.*1152921504606846977 is beyond 2\*\*53"):
        _level_type("v", (1.5, 2 ** 60 + 1))
