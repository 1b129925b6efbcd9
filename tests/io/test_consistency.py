"""A saved model never loads as a card that contradicts itself: a document edited by hand, its
digest written again (as anyone can), is refused with one DataError naming what is wrong when
its kind's section, its intercept, its outcome rule, its certificate or its settings disagree
with the rest of it; the documents riskformula writes, of each kind, still load."""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.errors import DataError
from conftest import resealed


def _binary(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, 3)).astype(float)
    x = rng.normal(size=n) + X[:, 0]
    lp = -1.2 + 0.9 * X[:, 0] - 0.6 * X[:, 1] + 0.4 * X[:, 2]
    y = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    return pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "x": x, "y": y,
                         "yy": np.where(y == 1, "sick", "well"), "z": rng.integers(0, 2, n)})


def _timed(n=120, seed=3):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    x = rng.normal(size=n) + a
    T = np.ceil(rng.exponential(5 / np.exp(0.8 * a - 0.5 * b)))
    C = np.ceil(rng.exponential(8, n))
    return pd.DataFrame({"t": np.minimum(T, C), "d": (T <= C).astype(int), "a": a, "b": b, "x": x})


@pytest.fixture(scope="module")
def models():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.OptimalityGapWarning)
        df, sd = _binary(), _timed()
        return {
            # an outcome compared with a literal, a threshold term, a nonzero intercept
            "logistic": (rf.risk_score('yy == "sick" ~ threshold(x, k=1) + b + c', df, max_size=3, time_limit=30),
                         df),
            # a bare outcome column
            "bare": (rf.risk_score("y ~ a + b + c", df, max_size=3, time_limit=30), df),
            # thresholds: the card's intercept is the negated shift, the fitted intercept 0
            "cox": (rf.risk_score("Surv(t, d) ~ threshold(x, k=1) + b", sd, max_size=2, coef_range=(-3, 3),
                                  horizon=[3, 6], time_limit=30), sd),
            # thresholds: the card's intercept 0, the fitted intercept the shift
            "net_benefit": (rf.risk_score("y ~ threshold(x, k=2) + b", df, objective="net_benefit",
                                          coef_range=(-2, 2), max_size=3, c0=1e-3, time_limit=30), df),
        }


@pytest.fixture(scope="module")
def docs(models):
    return {k: json.loads(m.to_json()) for k, (m, _) in models.items()}


def _load(doc: dict, edit) -> object:
    """``doc`` edited by ``edit`` and its digest written again, loaded."""
    d = copy.deepcopy(doc)
    edit(d)
    return rf.from_json(resealed(d))


def _refused(doc: dict, edit, *names: str) -> str:
    with pytest.raises(DataError) as e:
        _load(doc, edit)
    msg = str(e.value)
    for name in names:
        assert name in msg, msg
    assert "save the model again" in msg.lower(), msg
    return msg


def test_the_kinds_are_what_the_fixtures_say(models, docs):
    assert type(models["cox"][0]) is rf.SurvivalScore and type(models["net_benefit"][0]) is rf.NetBenefitScore
    assert type(models["logistic"][0]) is rf.RiskScore and docs["logistic"]["card"]["intercept"] != 0
    assert docs["logistic"]["outcome"]["rule"] == {"variable": "yy", "op": "==", "value": "sick"}
    assert docs["logistic"]["settings"]["threshold_candidates"]  # a threshold term's (kept, candidates)
    assert docs["cox"]["card"]["intercept"] != 0 and docs["net_benefit"]["card"]["intercept"] == 0
    assert any(it["kind"] == "interval" for it in docs["net_benefit"]["card"]["items"])


@pytest.mark.parametrize("name", ["logistic", "bare", "cox", "net_benefit"])
def test_genuine_documents_load_and_predict_the_same(models, docs, name):
    m, data = models[name]
    back = _load(docs[name], lambda d: None)
    assert type(back) is type(m)
    pd.testing.assert_series_equal(back.predict(data), m.predict(data))
    assert back.card() == m.card() and back.intercept == m.intercept
    assert json.loads(back.to_json())["training"] == docs[name]["training"]


# --- a. / b. the kind's section and the design ------------------------------------------------

def test_a_time_to_event_document_without_its_survival_section_is_refused(docs):
    msg = _refused(docs["cox"], lambda d: d.pop("survival"), "time-to-event", '"survival" section')
    assert "Surv(t, d)" in msg


def test_a_survival_section_on_a_binary_design_is_refused(docs):
    _refused(docs["bare"], lambda d: d.__setitem__("survival", docs["cox"]["survival"]), '"survival" section',
             "Surv(time, event)")


def test_a_net_benefit_section_pasted_into_a_logistic_document_is_refused(docs):
    # the logistic card has an intercept, which a net-benefit score does not use
    _refused(docs["logistic"], lambda d: d.__setitem__("net_benefit", docs["net_benefit"]["net_benefit"]),
             "$.card.intercept", "net-benefit score has no intercept")


def test_a_net_benefit_document_with_an_intercept_range_is_refused(docs):
    _refused(docs["net_benefit"], lambda d: d["settings"].__setitem__("intercept_range", [-5, 5]),
             "$.settings.intercept_range", "[0, 0]")


def test_the_training_metrics_are_those_of_the_documents_kind(docs):
    # a logistic document's metrics (no net benefit) with a net-benefit section
    _refused(docs["net_benefit"], lambda d: d["training"]["metrics"].pop("net_benefit"), "$.training.metrics",
             "'net_benefit'")
    # a net benefit among a plain score's metrics
    _refused(docs["bare"], lambda d: d["training"]["metrics"].__setitem__("net_benefit", 0.1), "$.training.metrics",
             "'net_benefit'")


def test_a_time_to_event_card_with_an_intercept_is_refused(docs):
    # the baseline hazard was fitted at λ0 = 0: another intercept would shift every risk
    _refused(docs["cox"], lambda d: d["card"].__setitem__("intercept", d["card"]["intercept"] + 3),
             "$.card.intercept", "time-to-event score has no intercept")


def test_two_kinds_sections_are_refused(docs):
    _refused(docs["cox"], lambda d: d.__setitem__("net_benefit", docs["net_benefit"]["net_benefit"]),
             "'net_benefit'", "'survival'", "one kind")


# --- e. the certificate's arithmetic does not pass by overflow -------------------------------

@pytest.mark.parametrize("name", ["logistic", "net_benefit", "cox"])
def test_a_lower_bound_that_overflows_the_gap_is_refused(docs, name):
    def edit(d):
        d["certificate"].update(lower_bound=-1e308, gap=0.0, status="optimal")
    _refused(docs[name], edit, "$.certificate")


def test_the_overflowing_gap_names_the_lower_bound(docs):
    # objective −0.128…: (objective + 1e308) / 0.128 overflows to inf, and inf > inf is False
    def edit(d):
        d["certificate"].update(lower_bound=-1e308, gap=0.0, status="optimal")
    _refused(docs["net_benefit"], edit, "$.certificate.lower_bound", "overflows")


def test_an_overflowing_objective_sum_is_refused(docs):
    def edit(d):
        d["training"]["loss"] = 1.5e308
        d["settings"]["c0"] = 1.5e308
    _refused(docs["bare"], edit, "$.training.loss", "overflows")


# --- f. the outcome is the formula's left-hand side -----------------------------------------

def test_the_compared_value_must_be_the_formulas(docs):
    msg = _refused(docs["logistic"], lambda d: d["outcome"]["rule"].__setitem__("value", "well"), "$.outcome.rule",
                   "'sick'")
    assert "'well'" in msg


@pytest.mark.parametrize("rule", [{"variable": "z"}, {"op": "!="}, {"op": None, "value": None}])
def test_the_compared_column_and_comparison_must_be_the_formulas(docs, rule):
    _refused(docs["logistic"], lambda d: d["outcome"]["rule"].update(rule), "$.outcome.rule", "left-hand side")


def test_a_bare_outcome_column_must_be_the_formulas(docs):
    _refused(docs["bare"], lambda d: d["outcome"]["rule"].__setitem__("variable", "z"), "$.outcome.rule",
             "'y'")


def test_the_survival_columns_must_be_the_formulas(docs):
    _refused(docs["cox"], lambda d: d["outcome"].__setitem__("survival", ["d", "t"]), "$.outcome.survival")
    _refused(docs["cox"], lambda d: d["outcome"]["rule"].__setitem__("variable", "t"), "$.outcome.rule")


@pytest.mark.parametrize("version", [True, 1.0, "1", None])
def test_the_format_version_is_the_whole_number_1(docs, version):
    _refused(docs["bare"], lambda d: d.__setitem__("format_version", version), "format_version")


# --- g. the settings have the shape the reports read -----------------------------------------

@pytest.mark.parametrize("value", [[], [1], [3, 2], [1, 2, 3], [1.0, 2], [True, 2], "12"])
def test_threshold_candidates_are_two_whole_numbers(docs, value):
    def edit(d):
        cands = d["settings"]["threshold_candidates"]
        cands[next(iter(cands))] = {"__tuple__": value} if isinstance(value, list) else value
    _refused(docs["logistic"], edit, "$.settings.threshold_candidates")


def test_threshold_candidates_name_a_threshold_term(docs):
    _refused(docs["logistic"], lambda d: d["settings"]["threshold_candidates"].__setitem__("b", [1, 1]),
             "$.settings.threshold_candidates", "threshold() or cut() term")


def test_the_summary_of_a_loaded_threshold_model_renders(models, docs):
    back = _load(docs["logistic"], lambda d: None)
    assert "can hold an optimal cut" in back.summary().render("text")


@pytest.mark.parametrize("event", [True, 1.0])
def test_an_event_of_another_type_than_its_level_is_refused(docs, event):
    # the bare outcome's levels are the whole numbers 0 and 1: True and 1.0 equal 1 in Python, but
    # are not the level the fit stored
    assert docs["bare"]["outcome"]["event"] == 1 and type(docs["bare"]["outcome"]["event"]) is int
    msg = _refused(docs["bare"], lambda d: d["outcome"].__setitem__("event", event), "$.outcome.event")
    assert "True is not 1" in msg
