"""JSON and pickle round trips of a fitted RiskScore, and the score-card export."""

import base64
import json
import pickle

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula import io
from riskformula.errors import DataError, SettingsError


def make_data(n=240, seed=3):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"age": rng.integers(20, 80, n).astype(float),
                      "sex": rng.choice(["female", "male"], n),
                      "stage": rng.choice(["I", "II", "III"], n), "smoker": rng.integers(0, 2, n)})
    lp = -2 + 0.04 * (d.age - 50) + 1.2 * (d.stage == "III") + 0.8 * d.smoker
    d["outcome"] = np.where(rng.random(n) < 1 / (1 + np.exp(-lp)), "yes", "no")
    return d


FORMULA = 'outcome == "yes" ~ center(age) + C(stage, contr.treatment("II")) + sex + smoker'


@pytest.fixture(scope="module")
def data():
    return make_data()


@pytest.fixture(scope="module")
def model(data):
    return rf.risk_score(FORMULA, data, max_size=3, coef_range=(-3, 3), time_limit=10)


def _strict(text):
    """Parse refusing NaN/Infinity literals: the document must be plain JSON."""
    def bad(c):
        raise ValueError(f"non-standard JSON constant {c}")
    return json.loads(text, parse_constant=bad)


def test_json_round_trip_predicts_the_same(model, data):
    text = model.to_json()
    doc = _strict(text)
    # center(age) is computed by formulaic: stored, and loaded only from a trusted file
    assert doc["expressions"]["rhs_spec"]["encoding"] == "json"
    with pytest.raises(DataError, match="trusted=True"):
        rf.from_json(text)
    loaded = rf.from_json(text, trusted=True)
    new = make_data(60, seed=11)
    for frame in (data, new, new.iloc[:3]):  # .iloc[:3] may miss levels: encoding must be kept
        pd.testing.assert_series_equal(loaded.predict(frame), model.predict(frame))
        pd.testing.assert_series_equal(loaded.observed(frame), model.observed(frame))
    pd.testing.assert_series_equal(loaded.coef, model.coef)
    pd.testing.assert_frame_equal(loaded.risk_table(), model.risk_table())
    for a in ("intercept", "objective", "lower_bound", "gap", "status", "formula", "nobs", "events",
              "outcome", "event", "loss", "size", "rows_digest", "settings"):
        assert getattr(loaded, a) == getattr(model, a), a
    assert loaded.solver.nodes == model.solver.nodes and loaded.solver.solver == model.solver.solver
    assert loaded.training_metrics == pytest.approx(model.training_metrics)


def test_json_document_is_readable(model):
    doc = json.loads(model.to_json())
    assert doc["riskformula_version"] == rf.__version__ and doc["format_version"] == 1
    assert doc["outcome"]["name"] == 'outcome == "yes"'
    card = model.score_card()
    assert [(it["label"], it["points"]) for it in doc["card"]["items"]] == list(zip(card["term"], card["points"]))
    assert doc["certificate"]["status"] == model.status
    assert [c["label"] for c in doc["design"]["columns"]] == list(model.labels)
    rules = {c["name"]: c["rule"] for c in doc["design"]["columns"]}
    assert rules["C(stage, contr.treatment('II'))[T.III]"] == {"kind": "level", "variable": "stage", "value": "III"}
    assert rules["center(age)"] == {"kind": "expression"}
    assert doc["design"]["categories"]["stage"] == ["I", "II", "III"]
    assert "center(age)" in doc["expressions"]["rhs_spec"]["transform_state"]
    assert doc["settings"]["max_size"] == 3 and doc["settings"]["coef_lower"][0] == -3


def test_loaded_model_reports_and_refuses_unseen_levels(model, data):
    loaded = rf.from_json(model.to_json(), trusted=True)
    assert "Score card" in str(loaded.summary()) and "AUC" in str(loaded.summary())
    assert loaded.card() == model.card()
    bad = data.head(3).assign(stage="IV")
    with pytest.raises(DataError, match="never saw"):
        loaded.predict(bad)
    # the loaded model keeps the training-row fingerprint, so compare() accepts it
    rf.compare(model, loaded)


def test_pickle_round_trip(model, data):
    back = pickle.loads(pickle.dumps(model))
    pd.testing.assert_series_equal(back.predict(data), model.predict(data))
    assert str(back.summary()) == str(model.summary())


def test_pickled_spec_needs_trust(model, data):
    doc = io.to_dict(model)
    spec = model.design.model_spec
    doc["expressions"]["rhs_spec"] = {"encoding": "pickle-base64", "formula": str(spec.formula),
                                      "data": base64.b64encode(pickle.dumps(spec)).decode()}
    doc["digest"] = io._digest(doc)
    text = json.dumps(doc)
    with pytest.raises(DataError, match="trusted=True"):
        rf.from_json(text)
    loaded = rf.from_json(text, trusted=True)
    pd.testing.assert_series_equal(loaded.predict(data), model.predict(data))


class Odd:
    """Transform state that JSON cannot hold (but pickle can)."""


def test_spec_with_unsupported_state_falls_back_to_labelled_pickle(model):
    from dataclasses import replace
    from riskformula.design.serialize import model_spec_to_json
    spec = replace(model.design.model_spec, transform_state={"f(x)": {"obj": Odd()}})
    d = model_spec_to_json(spec)
    assert d["encoding"] == "pickle-base64" and "trust" in d["note"]


def test_from_json_errors(model):
    with pytest.raises(DataError, match="not valid JSON"):
        rf.from_json("{not json")
    with pytest.raises(DataError, match="not a riskformula"):
        rf.from_json('{"a": 1}')
    doc = json.loads(model.to_json())
    doc["format_version"] = 99
    with pytest.raises(DataError, match="upgrade"):
        rf.from_json(json.dumps(doc))
    del doc["card"]
    doc["format_version"] = 1
    doc["digest"] = io._digest(doc)
    with pytest.raises(DataError, match="lacks the field"):
        rf.from_json(json.dumps(doc), trusted=True)
    with pytest.raises(SettingsError, match="string"):
        rf.from_json(model)


@pytest.mark.parametrize("kind, marker", [("text", "score = sum of points"), ("markdown", "| term"),
                                          ("html", "<table>"), ("latex", "\\begin{tabular}")])
def test_card_formats(model, kind, marker):
    card = model.card(kind)
    assert marker in card and "risk = 1 / (1 + exp(" in card
    for label in model.score_card()["term"]:
        assert rf.reports.render.escape(label, kind) in card or label in card


def test_card_rejects_unknown_kind(model):
    with pytest.raises(ValueError, match="`kind`"):
        model.card("pdf")


def test_initial_warm_start(data, model):
    again = rf.risk_score(FORMULA, data, max_size=3, coef_range=(-3, 3), time_limit=10, initial=model)
    assert again.objective == pytest.approx(model.objective, rel=1e-9)
    pts = {c: int(p) for c, p in model.coef.items() if p != 0}
    d = rf.risk_score(FORMULA, data, max_size=3, coef_range=(-3, 3), time_limit=10,
                      initial={**pts, "intercept": model.intercept})
    assert d.objective == pytest.approx(model.objective, rel=1e-9)
    with pytest.raises(SettingsError, match="not a column"):
        rf.risk_score(FORMULA, data, max_size=3, initial={"height": 1})
    with pytest.raises(SettingsError, match="whole numbers"):
        rf.risk_score(FORMULA, data, max_size=3, initial={"smoker": 0.5})
    with pytest.raises(SettingsError, match="RiskScore or a dict"):
        rf.risk_score(FORMULA, data, max_size=3, initial=[1, 2])


@pytest.mark.parametrize("rhs", ["poly(a, 2) + g", "bs(a, df=3) + g", "scale(a) + g:a", "."])
def test_stateful_transforms_survive_json(rhs):
    rng = np.random.default_rng(0)
    d = pd.DataFrame({"a": rng.normal(size=150), "g": rng.choice(["x", "y"], 150)})
    d["y"] = (rng.random(150) < 1 / (1 + np.exp(-d.a))).astype(int)
    m = rf.risk_score(f"y ~ {rhs}", d, max_size=2, time_limit=5)
    text = m.to_json()
    doc = _strict(text)
    trusted = "expressions" in doc  # "." is declarative; poly, bs and scale are formulaic's
    assert not trusted or doc["expressions"]["rhs_spec"]["encoding"] == "json"
    new = d.iloc[:10] * 1  # a copy; predictions must use the training state, not these rows'
    np.testing.assert_allclose(rf.from_json(text, trusted=trusted).predict(new), m.predict(new), rtol=0, atol=1e-12)


@pytest.mark.parametrize("lhs", ["`my y`", "`my y` == 1", "I(`my y` == 1)", "`my y` != 0", "ÿ_out"])
def test_an_outcome_named_in_backticks_loads_without_trust(lhs):
    # a column of any name, quoted as formulaic quotes it, is the outcome's rule, not an expression
    rng = np.random.default_rng(5)
    d = pd.DataFrame({"x": rng.integers(0, 2, 200), "w w": rng.integers(0, 2, 200)})
    d["my y"] = ((rng.random(200) < 0.2 + 0.5 * d.x) & (rng.random(200) < 0.9)).astype(int)
    d["ÿ_out"] = d["my y"]
    m = rf.risk_score(f"{lhs} ~ x + `w w`", d, max_size=2, time_limit=5)
    doc = _strict(m.to_json())
    assert "expressions" not in doc and doc["outcome"]["rule"]["variable"] == lhs.split("`")[1 if "`" in lhs else 0]
    loaded = rf.from_json(m.to_json())
    np.testing.assert_array_equal(loaded.predict(d), m.predict(d))
    np.testing.assert_array_equal(loaded.observed(d).to_numpy(), d["my y"].to_numpy())
