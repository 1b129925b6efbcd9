"""The fairness audit against hand-computed group rates and fairlearn's MetricFrame, and the
fairness API's errors, warnings, summary and JSON round trip."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.errors import DataError, InfeasibleProblemError, SettingsError, SmallGroupWarning

fairlearn_metrics = pytest.importorskip("fairlearn.metrics")


def frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2])
    sex = rng.choice(["f", "m"], n)
    x1 = rng.integers(0, 2, n)
    x2 = (rng.random(n) < np.where(race == "A", 0.7, 0.3)).astype(int)
    x3 = rng.integers(0, 3, n)
    lp = -1.5 + 1.4 * x1 + 1.1 * x2 + 0.6 * x3
    y = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "x3": x3, "race": race, "sex": sex,
                         "w": rng.integers(1, 4, n)})


@pytest.fixture(scope="module")
def data():
    return frame()


@pytest.fixture(scope="module")
def model(data):
    return rf.risk_score("y ~ x1 + x2 + x3", data, max_size=3, coef_range=(-3, 3), time_limit=30,
                         constraints=[rf.equal_opportunity("race", max_diff=0.1)])


def test_group_rates_by_hand(model, data):
    test = frame(300, seed=1)
    audit = model.fairness(test, by="race", at_risk=0.4)
    risk = model.predict(test)
    pred = risk >= 0.4
    y = test["y"] == 1
    t = audit.by_group.set_index("group")
    for g in ["A", "B", "C"]:
        m = test["race"] == g
        assert t.loc[g, "n"] == m.sum() and t.loc[g, "events"] == (m & y).sum()
        assert t.loc[g, "selection_rate"] == pytest.approx(pred[m].mean())
        assert t.loc[g, "tpr"] == pytest.approx(pred[m & y].mean())
        assert t.loc[g, "fpr"] == pytest.approx(pred[m & ~y].mean())
        assert t.loc[g, "ppv"] == pytest.approx(y[m & pred].mean())
        assert t.loc[g, "mean_risk"] == pytest.approx(risk[m].mean())
        assert t.loc[g, "oe"] == pytest.approx(y[m].mean() / risk[m].mean())
        assert t.loc[g, "selection_rate_lower"] < t.loc[g, "selection_rate"] < t.loc[g, "selection_rate_upper"]
    d = audit.differences.set_index("metric")
    sel = t["selection_rate"]
    assert d.loc["selection rate", "difference"] == pytest.approx(sel.max() - sel.min())
    assert d.loc["selection rate", "ratio"] == pytest.approx(sel.min() / sel.max())
    assert d.loc["selection rate", "highest_group"] == sel.idxmax()


def test_wilson_interval_by_hand(model, data):
    audit = model.fairness(data, by="sex")
    r = audit.by_group.iloc[0]
    k, n = r["selected"], r["n"]
    p, z = k / n, 1.959963984540054
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert r["selection_rate_lower"] == pytest.approx(centre - half)
    assert r["selection_rate_upper"] == pytest.approx(centre + half)


@pytest.mark.parametrize("weighted", [False, True])
def test_numbers_equal_fairlearn(model, weighted):
    from fairlearn.metrics import (MetricFrame, demographic_parity_difference, demographic_parity_ratio,
                                   equalized_odds_difference, equalized_odds_ratio, false_positive_rate,
                                   selection_rate, true_positive_rate)
    from sklearn.metrics import precision_score

    test = frame(500, seed=2)
    y = test["y"].to_numpy()
    pred = (model.predict(test) >= 0.5).astype(int).to_numpy()
    sw = test["w"].to_numpy() if weighted else None
    params = {k: {"sample_weight": sw} for k in ("sr", "tpr", "fpr", "ppv")} if weighted else None
    mf = MetricFrame(metrics={"sr": selection_rate, "tpr": true_positive_rate, "fpr": false_positive_rate,
                              "ppv": lambda a, b, **kw: precision_score(a, b, zero_division=np.nan, **kw)},
                     y_true=y, y_pred=pred, sensitive_features=test["race"], sample_params=params)
    audit = model.fairness(test, by="race", weights="w" if weighted else None)
    t = audit.by_group.set_index("group")
    for ours, theirs in (("selection_rate", "sr"), ("tpr", "tpr"), ("fpr", "fpr"), ("ppv", "ppv")):
        np.testing.assert_allclose(t[ours].to_numpy(), mf.by_group[theirs].loc[t.index].to_numpy(), rtol=1e-12)
    d = audit.differences.set_index("metric")
    for ours, theirs in (("selection rate", "sr"), ("true positive rate", "tpr"), ("false positive rate", "fpr")):
        assert d.loc[ours, "difference"] == pytest.approx(mf.difference()[theirs], rel=1e-12)
        assert d.loc[ours, "ratio"] == pytest.approx(mf.ratio()[theirs], rel=1e-12)
    kw = dict(sensitive_features=test["race"], sample_weight=sw)
    assert d.loc["selection rate", "difference"] == pytest.approx(demographic_parity_difference(y, pred, **kw))
    assert d.loc["selection rate", "ratio"] == pytest.approx(demographic_parity_ratio(y, pred, **kw))
    assert d.loc["true and false positive rates", "difference"] == pytest.approx(equalized_odds_difference(y, pred, **kw))
    assert d.loc["true and false positive rates", "ratio"] == pytest.approx(equalized_odds_ratio(y, pred, **kw))


def test_intersectional_groups_equal_fairlearn(model):
    from fairlearn.metrics import MetricFrame, selection_rate
    test = frame(500, seed=3)
    pred = (model.predict(test) >= 0.5).astype(int).to_numpy()
    mf = MetricFrame(metrics=selection_rate, y_true=test["y"], y_pred=pred, sensitive_features=test[["race", "sex"]])
    audit = model.fairness(test, by=["race", "sex"])
    got = {g: r for g, r in zip(audit.by_group["group"], audit.by_group["selection_rate"])}
    assert set(got) == set(mf.by_group.index)
    for g, r in mf.by_group.items():
        assert got[g] == pytest.approx(r)


def test_training_value_holds_and_the_audit_reports_it(model, data):
    (row,) = model.training.constraint_values
    assert row["value"] <= 0.1 and row["slack"] == pytest.approx(0.1 - row["value"])
    audit = model.fairness(data, by="race")
    d = audit.differences.set_index("metric")
    assert d.loc["true positive rate", "difference"] == pytest.approx(row["value"])
    c = audit.constraints.iloc[0]
    assert c["training_value"] == pytest.approx(row["value"]) and c["value"] == pytest.approx(row["value"])
    text = str(audit)
    assert "hold exactly on its training rows" in text and "only approximately" in text
    s = str(model.summary())
    assert "Fairness on the training rows" in s and "equal_opportunity('race', at_risk=0.5, max_diff=0.1)" in s


def test_reference_and_score_cut_off(model):
    test = frame(300, seed=4)
    audit = model.fairness(test, by="race", at_score=2, reference="B")
    pred = model.score(test) >= 2
    t = audit.by_group.set_index("group")
    assert t.loc["C", "selection_rate"] == pytest.approx(pred[test["race"] == "C"].mean())
    r = audit.vs_reference.set_index("group")
    assert r.loc["A", "tpr"] == pytest.approx(t.loc["A", "tpr"] - t.loc["B", "tpr"])
    assert "score ≥ 2" in str(audit)
    for kind in ("markdown", "html", "latex"):
        assert "Fairness audit" in audit.render(kind)
    assert json.dumps(audit.to_dict(), default=str)


def test_json_round_trip_keeps_fairness_constraints(model, data):
    m2 = rf.from_json(model.to_json())
    assert m2.constraints == model.constraints
    assert m2.training.constraint_values == model.training.constraint_values
    assert "Fairness on the training rows" in str(m2.summary())
    assert m2.fairness(data, by="race").constraints.iloc[0]["training_value"] == pytest.approx(
        model.training.constraint_values[0]["value"])


def test_protected_attribute_outside_the_formula_with_dropped_rows():
    df = frame(300, seed=5)
    df = df.astype({"x3": float})
    df.loc[df.index[:25], "x3"] = np.nan
    m = rf.risk_score("y ~ x1 + x2 + x3", df, max_size=3, coef_range=(-3, 3), missing="drop", time_limit=30,
                      constraints=[rf.statistical_parity("race", max_diff=0.05)])
    assert m.nobs == 275
    kept = df.dropna(subset=["x3"])
    audit = m.fairness(kept, by="race")
    value = audit.differences.set_index("metric").loc["selection rate", "difference"]
    assert m.training.constraint_values[0]["value"] == pytest.approx(value) and value <= 0.05


def test_protected_attribute_inside_the_formula():
    df = frame(300, seed=6)
    m = rf.risk_score("y ~ x1 + x2 + C(race)", df, max_size=3, coef_range=(-3, 3), time_limit=30,
                      constraints=[rf.statistical_parity("race", max_diff=0.05)])
    assert m.training.constraint_values[0]["value"] <= 0.05


def test_bad_arguments_say_what_to_do(data):
    with pytest.raises(SettingsError, match="not both"):
        rf.statistical_parity("race", at_risk=0.5, at_score=2)
    with pytest.raises(SettingsError, match="strictly between 0 and 1"):
        rf.equal_opportunity("race", at_risk=1.5)
    with pytest.raises(SettingsError, match="needs a bound"):
        rf.statistical_parity("race", max_diff=None)
    with pytest.raises(SettingsError, match="reference="):
        rf.statistical_parity("race", side="above")
    with pytest.raises(SettingsError, match="column name"):
        rf.statistical_parity(3)
    with pytest.raises(SettingsError, match="given"):
        rf.conditional_statistical_parity("race", given=None)
    with pytest.raises(SettingsError, match="not a column of `data`"):
        rf.risk_score("y ~ x1", data, constraints=[rf.statistical_parity("ethnicity")])
    with pytest.raises(SettingsError, match="not a group"):
        rf.risk_score("y ~ x1", data, constraints=[rf.statistical_parity("race", reference="Z")])
    with pytest.raises(SettingsError, match="threshold"):
        rf.risk_score("y ~ threshold(x3)", data, constraints=[rf.statistical_parity("race", at_score=1)])
    missing = data.assign(race=data["race"].where(data.index > 5))
    with pytest.raises(DataError, match="missing value"):
        rf.risk_score("y ~ x1", missing, constraints=[rf.statistical_parity("race")])
    with pytest.raises(SettingsError, match="not a column"):
        rf.risk_score("y ~ x1", data).fairness(data, by="ethnicity")


def test_small_groups_are_named_in_one_warning():
    df = frame(200, seed=7)
    df.loc[df.index[:8], "race"] = "D"
    with pytest.warns(SmallGroupWarning, match="'D' has 8 among all rows"):
        rf.risk_score("y ~ x1 + x2", df, max_size=2, time_limit=10,
                      constraints=[rf.statistical_parity("race", max_diff=0.2)])


def test_infeasible_bound_names_the_constraint():
    df = frame(200, seed=8)
    with pytest.raises(InfeasibleProblemError, match=r"statistical_parity\('race'.*needs max_diff ≥ about 0.125"):
        rf.risk_score("y ~ x1 + x2", df, max_size=2, min_size=2, coef_range=(1, 2), time_limit=10,
                      constraints=[rf.statistical_parity("race", at_score=2, max_diff=0.0)])
    # the hint is right: the bound it names is feasible, a little less is not
    m = rf.risk_score("y ~ x1 + x2", df, max_size=2, min_size=2, coef_range=(1, 2), time_limit=10,
                      constraints=[rf.statistical_parity("race", at_score=2, max_diff=0.125)])
    assert m.training.constraint_values[0]["value"] <= 0.125
    with pytest.raises(InfeasibleProblemError):
        rf.risk_score("y ~ x1 + x2", df, max_size=2, min_size=2, coef_range=(1, 2), time_limit=10,
                      constraints=[rf.statistical_parity("race", at_score=2, max_diff=0.12)])


def test_fairness_path_frontier():
    df = frame(500, seed=9)
    train, test = df.iloc[:350], df.iloc[350:]
    path = rf.fairness_path("y ~ x1 + x2 + x3", train, notion="statistical_parity", by="race",
                            max_diff=[0.2, 0.05], newdata=test, max_size=3, coef_range=(-3, 3), time_limit=20)
    t = path.table
    assert t["max_diff"].isna().iloc[0] and list(t["max_diff"].iloc[1:]) == [0.2, 0.05]
    assert (t["train_disparity"].iloc[1:].to_numpy() <= t["max_diff"].iloc[1:].to_numpy()).all()
    # tighter bounds never lower the certified optimum
    assert t["objective"].is_monotonic_increasing and (t["lower_bound"] <= t["objective"] + 1e-12).all()
    for b, m in path.models.items():
        if b == b:
            assert m.constraints[0].max_diff == b
            d = m.fairness(test, by="race").differences.set_index("metric").loc["selection rate", "difference"]
            assert t.loc[t["max_diff"] == b, "test_disparity"].item() == pytest.approx(d)
    assert "Fairness path" in str(path) and "training disparity" in str(path)
    # the plot's words, from the notion's constraint (not its repr)
    assert path.title == "Statistical parity by race, positive at risk ≥ 50%"
    assert path.quantity == "selection rate"
