"""A new constraint kind, objective or model kind is one registered class: fitted, saved and loaded
without touching the fit, the document code or the front door."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.errors import SettingsError
from riskformula.logistic import fit_logistic
from riskformula.arguments import ModelArguments
from riskformula.objectives import Objective, objective_entry, register_objective
from riskformula.problem.constraints import Constraint, constraint_class


@dataclass(frozen=True, repr=False)
class AtMostPoints(Constraint):
    """A user's own constraint: the term gets at most ``points`` points."""

    term: str
    points: int

    def describe(self) -> str:
        return f"AtMostPoints({self.term!r}, {self.points})"

    def apply(self, b) -> None:
        b.tighten(b.columns(self.term), upper=float(self.points))


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ [2.0, -1.0, 0.2] - 0.5)))).astype(int)
    return pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y)


def test_a_new_constraint_class_is_fitted_saved_and_loaded():
    df = _data()
    assert constraint_class("AtMostPoints") is AtMostPoints
    free = rf.risk_score("y ~ a + b + c", df, max_size=3, coef_range=(-3, 3), time_limit=30)
    assert free.coef["a"] > 1  # the constraint changes the fit
    m = rf.risk_score("y ~ a + b + c", df, max_size=3, coef_range=(-3, 3), time_limit=30,
                      constraints=[AtMostPoints("a", 1)])
    assert m.coef["a"] <= 1 and m.status == "optimal"
    back = rf.from_json(m.to_json())
    assert back.constraints == m.constraints and isinstance(back.constraints[0], AtMostPoints)
    pd.testing.assert_series_equal(back.predict(df), m.predict(df))
    # the certificate is the brute-force optimum under the constraint, over every score of the box
    loss = _brute_force(df, lambda pts: pts[0] <= 1)
    assert m.loss == pytest.approx(loss, abs=1e-9)


def _brute_force(df, allowed) -> float:
    import itertools

    X, y = df[["a", "b", "c"]].to_numpy(float), df["y"].to_numpy()
    best = np.inf
    for pts in itertools.product(range(-3, 4), repeat=3):
        if not allowed(pts):
            continue
        s = X @ np.array(pts, float)
        # the intercept: an integer within the fit's range, the best one
        losses = [np.mean(np.logaddexp(0, -(2 * y - 1) * (b0 + s))) for b0 in range(-20, 21)]
        best = min(best, min(losses))
    return best


@pytest.fixture
def objectives_restored():
    from riskformula import objectives
    before = dict(objectives._OBJECTIVES)
    yield
    objectives._OBJECTIVES.clear()
    objectives._OBJECTIVES.update(before)


def test_a_new_objective_is_one_registered_entry(objectives_restored):
    def one_item(formula, data, arguments, control):
        return fit_logistic(formula, data, arguments.replace(max_size=1), control)

    register_objective(Objective("one_item", one_item, arguments=frozenset(ModelArguments.names()) - {
        "max_size"}, search=objective_entry("logistic").search,
        why_not={"max_size": "this objective fits one item"}))
    df = _data()
    m = rf.risk_score("y ~ a + b + c", df, objective="one_item", coef_range=(-3, 3), time_limit=30)
    assert m.size == 1 and m.status == "optimal"
    with pytest.raises(SettingsError, match="`max_size` does not apply with objective='one_item': this objective"):
        rf.risk_score("y ~ a + b + c", df, objective="one_item", max_size=3)
    with pytest.raises(SettingsError, match="`solver` does not apply with objective='one_item'"):
        rf.risk_score("y ~ a + b + c", df, objective="one_item", solver="cbc")
    with pytest.raises(SettingsError, match="must be 'logistic', 'net_benefit', 'cox' or 'one_item'; got 'one_itme'. Did you mean `one_item`"):
        rf.risk_score("y ~ a + b + c", df, objective="one_itme")


def test_search_settings_one_object_or_keywords():
    df = _data()
    control = rf.SearchControl(time_limit=30, node_limit=50)
    a = rf.risk_score("y ~ a + b + c", df, max_size=2, control=control)
    b = rf.risk_score("y ~ a + b + c", df, max_size=2, time_limit=30, node_limit=50)
    assert a.coef.equals(b.coef) and a.settings.time_limit == 30
    # keywords override the object's fields
    c = rf.risk_score("y ~ a + b + c", df, max_size=2, control=control, time_limit=20)
    assert c.settings.time_limit == 20
    with pytest.raises(SettingsError, match="unexpected argument `time_limt`. Did you mean `time_limit`"):
        rf.risk_score("y ~ a", df, time_limt=3)
    with pytest.raises(SettingsError, match="`control` must be an rf.SearchControl"):
        rf.risk_score("y ~ a", df, control={"time_limit": 3})
    with pytest.raises(SettingsError, match="time_limit"):
        rf.SearchControl(time_limit=-1)
    assert repr(rf.SearchControl(n_jobs=2)) == "SearchControl(n_jobs=2)"
