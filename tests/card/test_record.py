"""The fitted card is a frozen record built by one constructor; what is computed from it (the
report on the training rows, the fairness values, the counterfactual profile) is computed by the
layers above it, and the public methods the counterfactuals and exports read agree with the card."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import riskformula as rf
from riskformula.model import RiskScore
from riskformula.record import ScoreRecord
from riskformula.reports.decision_curve import _label


def _frame(n=300, seed=11):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"age": rng.integers(20, 80, n), "male": rng.integers(0, 2, n),
                      "grp": rng.choice(["a", "b", "c"], n)})
    lp = -1.5 + 0.05 * (d.age - 50) + 0.9 * d.male + 0.6 * (d.grp == "c")
    d["y"] = (rng.random(n) < expit(lp)).astype(int)
    return d


DATA = _frame()


@pytest.fixture(scope="module")
def model():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rf.risk_score("y ~ threshold(age) + male + C(grp)", DATA, max_size=3, coef_range=(-4, 4),
                             time_limit=30)


def test_the_model_is_a_record(model):
    assert isinstance(model, RiskScore) and isinstance(model, ScoreRecord)
    assert model.status == "optimal"


@pytest.mark.parametrize("name", ["training", "profile", "intercept", "formula", "scale", "new_attribute"])
def test_a_fitted_model_cannot_be_changed(model, name):
    before = getattr(model, name, None)
    with pytest.raises(AttributeError, match="frozen record"):
        setattr(model, name, None)
    with pytest.raises(AttributeError, match="frozen"):
        delattr(model, name)
    assert getattr(model, name, None) is before


def test_the_points_cannot_be_changed_in_place(model):
    with pytest.raises(ValueError):
        model.column_points[0] = 99
    # the public view is the design_points without the intercept
    assert model.column_points.tolist() == model.design_points.iloc[1:].astype(int).tolist()


def test_replace_makes_a_changed_copy(model):
    other = model._replace(profile=None, training_evaluation=None)
    assert other is not model and other.profile is None and other.training_evaluation is None
    assert model.profile is not None and model.training_evaluation is not None
    with pytest.raises(TypeError):
        model._replace(intercept=0)
    # a copy is frozen too
    with pytest.raises(AttributeError):
        copy.copy(model).formula = "x"


def test_the_constructor_computes_nothing_from_the_training_rows(model):
    """The one constructor builds the record from the fit's results; the report, the fairness values
    and the profile come from the layers above (``from_fit``), not from the constructor."""
    rec = RiskScore(model.design, model.design_points.to_numpy(float), model.solver, model.settings, model.loss,
                    model.training, model.scorecard.support)
    assert rec.training_evaluation is None and rec.profile is None
    with pytest.raises(rf.DataError, match="does not keep"):
        rec.predict()
    # the same card, so the same risks on new rows
    pd.testing.assert_series_equal(rec.predict(DATA), model.predict(DATA))
    assert rec.llf == model.llf and rec.aic == model.aic


def test_the_training_report_is_the_evaluation_of_the_record(model):
    ev = model.evaluate(DATA)
    assert model.training_evaluation.n == ev.n == len(DATA)
    assert math.isclose(model.training_evaluation.auc.auc, ev.auc.auc, rel_tol=1e-12)
    assert math.isclose(model.training_metrics["brier"], float(ev.brier), rel_tol=1e-12)
    pd.testing.assert_series_equal(model.predict(), model.predict(DATA), check_names=False)


def test_encode_design_is_the_design_on_the_scored_terms(model):
    X = model.encode_design(DATA.head(20))
    full = model.design.transform(DATA.head(20), "predict")
    used = model.column_points != 0
    np.testing.assert_array_equal(X[:, used], full[:, used])
    # a row's score is its encoded design times the column points, plus the points the card moved
    # from the fitted intercept onto threshold items
    shift = model.design_points.iloc[0] - model.intercept
    np.testing.assert_allclose(X @ model.column_points + shift, model.score(DATA.head(20)).to_numpy())


@pytest.mark.parametrize("target", [0.05, 0.2, 0.5, 0.8])
def test_score_for_risk_is_the_boundary_predict_draws(model, target):
    below, real = model.score_for_risk(target, -1)
    assert model.risk_of(below) <= target < model.risk_of(below + 1)
    above, _ = model.score_for_risk(target, +1)
    assert model.risk_of(above) >= target > model.risk_of(above - 1)
    assert below <= real + 1e-9  # the whole-number target does not pass the real one


def test_a_loaded_model_is_frozen_and_the_same_card(model):
    back = rf.from_json(model.to_json())
    assert isinstance(back, RiskScore)
    with pytest.raises(AttributeError):
        back.training = model.training
    pd.testing.assert_series_equal(back.predict(DATA), model.predict(DATA))


def test_decision_curve_labels_read_the_kind_names(model):
    assert RiskScore.kind_names == () and _label(model) == model.formula
    assert rf.NetBenefitScore.kind_names == ("net benefit",)
    improved = rf.improve_aunbc(model, DATA)
    assert improved.base_model is model and improved.kind_names == ("AUNBC improved",)
    assert _label(improved) == f"{model.formula} (AUNBC improved)"
