"""A saved time-to-event score's partial likelihoods and events' weight are checked on load against
the record: ``llf`` is −(training loss) × (rows' weight), the empty score's ``llnull`` lies between
−(events' weight) × log(rows' weight) and ``llf`` (when the search started from the empty score),
and the events' weight is the training events'. A hand-edited file (its digest written again)
that contradicts itself is refused with one message naming the field; genuine files load."""

from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from conftest import refused_as_edited as _refused, resealed as _text

sys.path.insert(0, str(Path(__file__).parent))
from test_survival_card import _data  # noqa: E402


@pytest.fixture(scope="module")
def df():
    # the card tests' data, with whole sample weights for the weighted fit
    return _data(0, n=120).assign(w=np.random.default_rng(1).integers(1, 4, 120).astype(float))


@pytest.fixture(scope="module")
def model(df):
    return rf.risk_score("Surv(t, d) ~ a + b + C(c)", df, max_size=3, horizon=[3, 6], time_limit=30)


@pytest.fixture(scope="module")
def doc(model):
    d = json.loads(model.to_json())
    assert d["survival"]["llf"] > d["survival"]["llnull"]
    return d


@pytest.fixture(scope="module")
def weighted_doc(df):
    m = rf.risk_score("Surv(t, d) ~ a + b", df, weights="w", max_size=3, horizon=[3, 6], time_limit=30)
    return json.loads(m.to_json())


def _edited(d, **section):
    d = copy.deepcopy(d)
    d["survival"].update(section)
    return d


def _old(d):
    """A document saved before the training weights were (no weight_total, weight_events)."""
    d = copy.deepcopy(d)
    del d["training"]["weight_total"], d["training"]["weight_events"]
    return d


# --- genuine files load ----------------------------------------------------------------------------

def test_genuine_files_load(model, doc, weighted_doc):
    m2 = rf.from_json(_text(doc))
    assert m2.llf == model.llf and m2.llnull == model.llnull
    assert m2.llf == pytest.approx(-m2.loss * m2.nobs, rel=1e-12)
    w = rf.from_json(_text(weighted_doc))
    assert w.llf == pytest.approx(-w.loss * weighted_doc["training"]["weight_total"], rel=1e-12)
    rf.from_json(_text(_old(doc)))
    rf.from_json(_text(_old(weighted_doc)))


def test_a_card_that_need_not_beat_the_empty_score_loads(df):
    """With min_size the empty score was not a card the search could return: its llnull may be higher."""
    m = rf.risk_score("Surv(t, d) ~ b", df, min_size=1, coef_range=(1, 1), max_size=1, scale=1.0, time_limit=30)
    assert m.llf < m.llnull   # b is protective: one point for it is worse than no card
    m2 = rf.from_json(_text(json.loads(m.to_json())))
    assert (m2.llf, m2.llnull) == (m.llf, m.llnull)


# --- the log partial likelihoods ---------------------------------------------------------------------

@pytest.mark.parametrize("which", ["doc", "weighted", "old"])
def test_llf_must_be_the_training_loss_times_the_weight(doc, weighted_doc, which):
    d = {"doc": doc, "weighted": weighted_doc, "old": _old(doc)}[which]
    msg = _refused(_edited(d, llf=-1.0), "$.survival.llf")
    assert "$.training.loss" in msg
    _refused(_edited(d, llf=d["survival"]["llf"] * 1.001), "$.survival.llf")


def test_llf_of_a_weighted_fit_counts_the_weights(weighted_doc):
    # the rows' number instead of their weight: the loss per row times the wrong total
    d = weighted_doc
    _refused(_edited(d, llf=-d["training"]["loss"] * d["training"]["nobs"]), "$.survival.llf")


def test_llnull_above_llf_is_refused(doc):
    msg = _refused(_edited(doc, llnull=0.0), "$.survival.llnull")
    assert "empty score" in msg
    _refused(_edited(doc, llnull=doc["survival"]["llf"] + 1.0), "$.survival.llnull")


def test_llnull_below_its_least_value_is_refused(doc):
    # every risk set weighs at most the rows' weight W: llnull ≥ −(events' weight) × log W
    floor = -doc["survival"]["events_weight"] * math.log(doc["training"]["nobs"])
    msg = _refused(_edited(doc, llnull=floor - 1.0), "$.survival.llnull")
    assert "log(" in msg


def test_without_weights_a_log_partial_likelihood_is_at_most_zero(doc):
    _refused(_edited(doc, llnull=1.0), "$.survival.llnull")


# --- the events' weight -------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [1e6, 10.5, 0.0])
def test_events_weight_must_be_the_training_events(doc, value):
    _refused(_edited(doc, events_weight=value), "$.survival.events_weight")


def test_weighted_events_weight_must_be_the_training_events_weight(weighted_doc):
    d = weighted_doc
    _refused(_edited(d, events_weight=d["survival"]["events_weight"] + 1.0), "$.survival.events_weight")


def test_an_edited_training_weight_is_caught_by_llf(weighted_doc):
    d = copy.deepcopy(weighted_doc)
    d["training"]["weight_total"] *= 2
    _refused(d, "$.survival.llf")


def test_the_section_accepts_positive_log_likelihoods_of_sample_weights_below_one(weighted_doc):
    """Risk sets weighing less than 1 give log partial likelihoods above 0: the section reader leaves
    their sign to the record's check, which bounds them only without sample weights."""
    from riskformula.survival.model import _read_document
    section = dict(weighted_doc["survival"], llf=0.69, llnull=0.57)
    surv = _read_document(section)["surv"]
    assert (surv.llf, surv.llnull) == (0.69, 0.57)


def test_a_weighted_fit_with_weights_below_one_saves_and_loads():
    # its mean negative log partial likelihood is below 0 (every risk set weighs less than 1)
    rng = np.random.default_rng(3)
    n = 120
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    T, C = np.ceil(rng.exponential(5 / np.exp(0.8 * a - 0.5 * b))), np.ceil(rng.exponential(8, n))
    df = pd.DataFrame({"t": np.minimum(T, C), "d": (T <= C).astype(int), "a": a, "b": b, "w": 0.005})
    m = rf.risk_score("Surv(t, d) ~ a + b", df, weights="w", max_size=2, horizon=[3, 6], time_limit=60)
    assert m.loss < 0 < m.llf
    again = rf.from_json(m.to_json())
    assert again.loss == pytest.approx(m.loss) and again.llf == pytest.approx(m.llf)
    pd.testing.assert_frame_equal(again.predict(df, horizon=[3, 6]), m.predict(df, horizon=[3, 6]))
