"""A saved net-benefit score's section is checked on load against what every fit satisfies: band
counts, band risks (events / rows, inside their threshold intervals), cut-offs, net benefits and
their weighted sum recomputed from the counts, and the training rows, loss, c0 and certificate of
the record. A hand-edited file (its digest written again) that contradicts itself is refused with
one message naming the field; genuine files load."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from conftest import refused_as_edited as _refused, resealed as _text

FIT = dict(time_limit=10, progress=False)
FORMULA = "Benign ~ UniformityOfCellSize + BareNuclei + ClumpThickness"


@pytest.fixture(scope="module")
def train():
    bc = rf.load_dataset("breastcancer").iloc[::2].copy()
    bc["w"] = np.where(bc.Benign == 1, 2.0, 1.0)
    return bc


@pytest.fixture(scope="module")
def model(train):
    return rf.risk_score(FORMULA, train, objective="net_benefit", max_size=3, coef_range=(0, 3), c0=1e-3, **FIT)


@pytest.fixture(scope="module")
def doc(model):
    d = json.loads(model.to_json())
    nb = d["net_benefit"]
    # the bands the edits below rely on: rows at the bottom, the middle and the top, empty ones between
    assert nb["band_n"] == [210.0, 0.0, 0.0, 0.0, 17.0, 0.0, 0.0, 0.0, 0.0, 115.0]
    assert nb["band_events"] == [0.0, 0.0, 0.0, 0.0, 8.0, 0.0, 0.0, 0.0, 0.0, 113.0]
    assert nb["cutoffs"][1:] == [17.0] * 4 + [28.0] * 5
    return d


@pytest.fixture(scope="module")
def weighted_doc(train):
    m = rf.risk_score(FORMULA, train, objective="net_benefit", weights="w", max_size=3, coef_range=(0, 3),
                      c0=1e-3, **FIT)
    return json.loads(m.to_json())


@pytest.fixture(scope="module")
def user_grid_doc(train):
    m = rf.risk_score(FORMULA, train, objective=rf.net_benefit([0.2, 0.5], weights=[0.25, 0.5]), max_size=2,
                      coef_range=(0, 3), **FIT)
    return json.loads(m.to_json())


def _edited(d, edit):
    d = copy.deepcopy(d)
    edit(d)
    return d


def _without_rows(d):
    """A document saved without the bands' row counts (they are optional)."""
    d = copy.deepcopy(d)
    del d["net_benefit"]["band_rows"], d["net_benefit"]["band_row_events"]
    return d


def _set(key, i, v):
    def edit(d):
        d["net_benefit"][key][i] = v
    return edit


def _recount(d):
    """Net benefits and their weighted sum recomputed from the (edited) band counts, as the fit does:
    an edit that keeps them consistent reaches the later checks."""
    nb = d["net_benefit"]
    p = np.asarray(nb["grid"]["thresholds"], float)
    n, e = np.asarray(nb["band_n"], float), np.asarray(nb["band_events"], float)
    out, k = [], 0
    for x in p:
        k += x > 0
        first = k if x > 0 else 0
        tp, fp = e[first:].sum(), (n[first:] - e[first:]).sum()
        out.append(float((tp - x / (1 - x) * fp) / n.sum()))
    nb["net_benefit"] = out
    nb["value"] = float(np.asarray(nb["grid"]["weights"]) @ np.asarray(out))


# --- genuine files load ------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["model", "weighted_doc", "user_grid_doc", "no_rows"])
def test_genuine_files_load(which, model, doc, weighted_doc, user_grid_doc):
    d = {"model": doc, "weighted_doc": weighted_doc, "user_grid_doc": user_grid_doc,
         "no_rows": _without_rows(doc)}[which]
    m2 = rf.from_json(_text(d))
    assert json.loads(m2.to_json())["net_benefit"]["band_risk"] == d["net_benefit"]["band_risk"]
    if which == "model":
        pd.testing.assert_frame_equal(m2.decisions, model.decisions)
        pd.testing.assert_frame_equal(m2.risk_table(), model.risk_table())
        assert m2.card() == model.card()


# --- the section on its own ----------------------------------------------------------------------

def test_a_band_risk_that_is_not_its_event_rate_is_refused(doc):
    msg = _refused(_edited(doc, _set("band_risk", 4, 0.45)), "$.net_benefit.band_risk[4]")   # 8 / 17 = 0.4706
    assert "8 / 17" in msg
    _refused(_edited(doc, _set("band_risk", 9, 0.9)), "$.net_benefit.band_risk[9]")


def test_an_empty_band_takes_the_middle_of_its_interval(doc):
    msg = _refused(_edited(doc, _set("band_risk", 2, 0.9)), "$.net_benefit.band_risk[2]")
    assert "no training rows" in msg and "0.25" in msg


def test_a_band_risk_outside_its_threshold_interval_is_refused(doc):
    # band 4 (acted on from 40%) with 5 events in 17 rows: 29.4%, which predict and decide would disagree on
    def edit(d):
        nb = d["net_benefit"]
        nb["band_events"][4] = 5.0
        nb["band_row_events"][4] = 5
        nb["band_risk"][4] = 5 / 17
        _recount(d)
    msg = _refused(_edited(doc, edit), "$.net_benefit.band_risk[4]")
    assert "[0.4, 0.5)" in msg


@pytest.mark.parametrize("key, i, v, field", [
    ("band_events", 4, 18.0, "$.net_benefit.band_events[4]"),    # more events than rows
    ("band_events", 0, -1.0, "$.net_benefit.band_events[0]"),
    ("band_n", 4, -17.0, "$.net_benefit.band_n[4]"),
])
def test_impossible_band_counts_are_refused(doc, key, i, v, field):
    _refused(_edited(doc, _set(key, i, v)), field)


def test_band_row_counts_must_hold_the_band_weights(doc):
    def edit(d):
        d["net_benefit"]["band_rows"][4] = 0
        d["net_benefit"]["band_row_events"][4] = 0
    _refused(_edited(doc, edit), "$.net_benefit.band_n[4]")
    _refused(_edited(doc, _set("band_row_events", 4, 18)), "$.net_benefit.band_row_events[4]")


def test_decreasing_cutoffs_are_refused(doc):
    msg = _refused(_edited(doc, _set("cutoffs", 4, 30.0)), "$.net_benefit.cutoffs[5]")
    assert "rise with the threshold" in msg


def test_a_cutoff_at_threshold_zero_treats_everyone(doc):
    _refused(_edited(doc, _set("cutoffs", 0, 0.0)), "$.net_benefit.cutoffs[0]")


def test_a_cutoff_that_leaves_its_band_without_rows_is_refused(doc):
    # non-decreasing, but no training row scores 7 to 16: a fitted cut-off is a training row's score
    def edit(d):
        d["net_benefit"]["cutoffs"][1] = 7.0
    _refused(_edited(doc, edit), "$.net_benefit.band_rows[1]")
    _refused(_edited(_without_rows(doc), edit), "$.net_benefit.band_n[1]")


@pytest.mark.parametrize("j, v", [(3, 5.0), (1, 0.3502)])
def test_net_benefits_are_recomputed_from_the_band_counts(doc, j, v):
    msg = _refused(_edited(doc, _set("net_benefit", j, v)), f"$.net_benefit.net_benefit[{j}]")
    assert "(events − non-events × p/(1 − p)) / rows" in msg


def test_the_weighted_net_benefit_is_the_weighted_sum(doc):
    _refused(_edited(doc, lambda d: d["net_benefit"].update(value=0.5)), "$.net_benefit.value")


def test_aunbc_weights_are_the_threshold_widths(doc):
    def edit(d):
        w = d["net_benefit"]["grid"]["weights"]
        w[0], w[9] = 0.05, 0.15
    _refused(_edited(doc, edit), "$.net_benefit.grid.weights")


def test_changed_user_weights_are_refused(user_grid_doc):
    def weights(d):
        d["net_benefit"]["grid"]["weights"] = [0.25, 1.0]
    _refused(_edited(user_grid_doc, weights), "$.net_benefit.value")

    def weights_and_value(d):   # the sum and metric made consistent: the certificate's objective still disagrees
        weights(d)
        _recount(d)
        d["training"]["metrics"]["net_benefit"] = d["net_benefit"]["value"]
    _refused(_edited(user_grid_doc, weights_and_value), "$.certificate.objective")


@pytest.mark.parametrize("key, other", [("band_row_events", "band_rows"), ("band_rows", "band_row_events")])
def test_band_rows_and_events_go_together_even_as_null(model, doc, key, other):
    d = _edited(doc, lambda d: d["net_benefit"].update({key: None}))
    _refused(d, f"$.net_benefit.{key}")
    d = _edited(doc, lambda d: d["net_benefit"].pop(key))
    _refused(d, f"$.net_benefit.{key}")


@pytest.mark.parametrize("search", [[1, 2], "fast", None, {"search_time": {"a": 1}}, {"nodes": [1, 2]}])
def test_search_effort_must_be_an_object_of_plain_values(doc, search):
    _refused(_edited(doc, lambda d: d["net_benefit"].update(search=search)), "$.net_benefit.search")


# --- the section against the record --------------------------------------------------------------

def test_band_rows_must_add_up_to_the_training_rows(doc):
    def edit(d):
        d["net_benefit"]["band_rows"][0] = 209
    msg = _refused(_edited(doc, edit), "$.net_benefit.band_rows")
    assert "342 rows" in msg


def test_without_weights_band_counts_are_the_row_counts(doc):
    def edit(d):   # one non-event row moved from the bottom band to the top in the row counts only
        d["net_benefit"]["band_rows"][0] -= 1
        d["net_benefit"]["band_rows"][9] += 1
    _refused(_edited(doc, edit), "$.net_benefit.band_n")


def test_without_weights_and_rows_the_counts_are_whole_and_add_up(doc):
    def fractional(d):
        nb = d["net_benefit"]
        nb["band_n"][0], nb["band_n"][9] = 209.5, 115.5
        nb["band_risk"][9] = 113 / 115.5
        _recount(d)
    _refused(_edited(_without_rows(doc), fractional), "$.net_benefit.band_n")

    def fewer(d):   # a consistent section with one bottom row less than the training data has
        d["net_benefit"]["band_n"][0] = 209.0
        _recount(d)
    msg = _refused(_edited(_without_rows(doc), fewer), "$.net_benefit.band_n")
    assert "342 rows" in msg


def test_weighted_bands_must_add_up_to_the_training_weight(weighted_doc):
    def doubled(d):   # every band's weights doubled: the same risks and net benefits, twice the total weight
        nb = d["net_benefit"]
        nb["band_n"] = [2 * x for x in nb["band_n"]]
        nb["band_events"] = [2 * x for x in nb["band_events"]]
    msg = _refused(_edited(weighted_doc, doubled), "$.net_benefit.band_n")
    assert "weight total" in msg


def test_c0_must_be_the_fits(doc):
    _refused(_edited(doc, lambda d: d["net_benefit"].update(c0=0.5)), "$.net_benefit.c0")


def test_the_training_loss_is_the_bands_log_loss(doc):
    def edit(d):
        d["training"]["loss"] = 0.01
    _refused(_edited(doc, edit), "$.training.loss")


def test_the_training_net_benefit_is_the_sections(doc):
    def edit(d):
        d["training"]["metrics"]["net_benefit"] = 0.2
    _refused(_edited(doc, edit), "$.training.metrics.net_benefit")


def test_the_certificate_objective_is_the_net_benefit_less_the_size_penalty(doc):
    def edit(d):
        c = d["certificate"]
        assert c["objective"] == pytest.approx(-(d["net_benefit"]["value"] - 3e-3))
        c["objective"] = c["lower_bound"] = -0.5
    _refused(_edited(doc, edit), "$.certificate.objective")


def test_a_refused_edit_leaves_genuine_files_loading(doc):
    """The checks are pure: after a refusal the genuine document still loads, with finite figures."""
    _refused(_edited(doc, _set("band_risk", 4, 0.45)), "band_risk")
    m = rf.from_json(_text(doc))
    assert all(math.isfinite(x) for x in m.decisions["treat_all"])
