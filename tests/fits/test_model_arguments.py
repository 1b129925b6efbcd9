"""The model's arguments are one checked object: the front door, every objective's fit and
rashomon_set read the same ModelArguments, so an argument is checked once and alike everywhere."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.arguments import ModelArguments
from riskformula.errors import SettingsError


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ [2.0, -1.0, 0.2] - 0.5)))).astype(int)
    return pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y)


def test_the_front_door_and_the_object_name_the_same_arguments():
    params = inspect.signature(rf.risk_score).parameters
    named = [p for p, v in params.items() if v.kind is not inspect.Parameter.VAR_KEYWORD]
    assert len(named) <= 21  # 20, plus the time-to-event card's horizon
    # every model argument of the object is one keyword of the front door, with the same default
    for name in ModelArguments.names():
        field = ModelArguments.__dataclass_fields__[name]
        default = params[name].default
        assert ModelArguments(**{name: default}).given() == (), name
        assert field.default == ModelArguments(**{name: default}).__getattribute__(name) or name == "constraints"
    assert set(named) - set(ModelArguments.names()) == {"formula", "data", "objective", "subset", "control"}


def test_checked_once_and_normalised():
    a = ModelArguments(max_size=np.int64(3), c0=0, constraints=rf.sign("a", "+"), intercept_range=(-3.0, 3.0))
    assert a.max_size == 3 and type(a.max_size) is int and a.c0 == 0.0
    assert len(a.constraints) == 1 and a.intercept_range == (-3, 3)
    assert a.given() == ("max_size", "intercept_range", "c0", "constraints")
    assert a.replace(max_size=1).max_size == 1 and a.max_size == 3  # frozen: a copy
    assert ModelArguments(scale="fit").intercept_is_real and not ModelArguments(scale=2).intercept_is_real
    fair = rf.statistical_parity("a", max_diff=0.1)
    assert not ModelArguments(scale="fit", constraints=[fair]).intercept_is_real  # whole scores for its rows
    with pytest.raises(SettingsError, match="`real_intercept=True` does not combine with GroupParity"):
        ModelArguments(real_intercept=True, constraints=[fair])
    with pytest.raises(SettingsError, match="larger than `max_size`"):
        ModelArguments(max_size=1, min_size=2)


@pytest.mark.parametrize("kwargs, match", [
    ({"max_size": -1}, "`max_size` must be at least 0"),
    ({"max_size": 2, "min_size": 3}, "larger than `max_size`"),
    ({"c0": -1.0}, "`c0` must be non-negative"),
    ({"positive_weight": 0.0}, "`positive_weight` must be positive"),
    ({"intercept_range": (3, -3)}, "low > high"),
    ({"real_intercept": "yes"}, "`real_intercept` must be True, False or None"),
    ({"constraints": ["a > 0"]}, "`constraints` must hold constraints"),
])
def test_one_message_for_the_front_door_and_rashomon_set(kwargs, match):
    df = _data()
    with pytest.raises(SettingsError, match=match):
        rf.risk_score("y ~ a + b + c", df, time_limit=5, **kwargs)
    with pytest.raises(SettingsError, match=match):
        rf.rashomon_set("y ~ a + b + c", df, time_limit=5, **kwargs)


def test_rashomon_set_takes_the_model_arguments_and_refuses_the_others():
    df = _data()
    with pytest.raises(SettingsError, match="`initial` does not apply to rashomon_set"):
        rf.rashomon_set("y ~ a + b + c", df, initial={"a": 1})
    with pytest.raises(SettingsError, match="unexpected argument `max_sise`. Did you mean `max_size`"):
        rf.rashomon_set("y ~ a + b + c", df, max_sise=2)
    with pytest.raises(SettingsError, match="`n_jobs` does not apply to rashomon_set"):
        rf.rashomon_set("y ~ a + b + c", df, n_jobs=2)
    with pytest.raises(SettingsError, match="one positive number for a Rashomon set"):
        rf.rashomon_set("y ~ a + b + c", df, scale="fit")
    rs = rf.rashomon_set("y ~ a + b + c", df, epsilon=0.05, max_size=2, coef_range=(-2, 2), time_limit=30)
    m = rf.risk_score("y ~ a + b + c", df, max_size=2, coef_range=(-2, 2), time_limit=30)
    assert rs.complete and rs.settings.max_size == 2
    assert min(rs.objectives) == pytest.approx(m.objective, abs=1e-9)


def test_the_net_benefit_objective_carries_its_thresholds():
    df = _data(120, 1)
    grid = rf.net_benefit([0.5, 0.2], weights=[3.0, 1.0])
    assert grid.thresholds == (0.2, 0.5) and grid.weights == (1.0, 3.0)
    m = rf.risk_score("y ~ a + b + c", df, objective=grid, max_size=2, coef_range=(-2, 2), c0=1e-3, time_limit=30)
    assert isinstance(m, rf.NetBenefitScore) and m.decision_grid == grid
    default = rf.risk_score("y ~ a + b + c", df, objective="net_benefit", max_size=2, coef_range=(-2, 2), c0=1e-3,
                            time_limit=30)
    assert default.decision_grid == rf.net_benefit()
    with pytest.raises(SettingsError, match="`scale` does not apply with objective='net_benefit'"):
        rf.risk_score("y ~ a + b + c", df, objective=grid, scale=2)
    with pytest.raises(SettingsError, match="`objective` must be"):
        rf.risk_score("y ~ a + b + c", df, objective=object())
