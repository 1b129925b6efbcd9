"""Scoring reads only the variables a score's points are on: a 3-item card needs 3 measurements."""
import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.errors import DataError


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    n = 300
    d = pd.DataFrame({"age": rng.integers(20, 80, n), "bmi": rng.normal(26, 4, n).round(1),
                      "smoker": rng.integers(0, 2, n), "sex": rng.choice(["f", "m"], n),
                      "region": rng.choice(["n", "s", "e"], n)})
    lp = -2 + 0.05 * (d.age - 50) + 1.5 * d.smoker
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    return d


@pytest.fixture(scope="module")
def model(data):
    m = rf.risk_score("y ~ threshold(age, grid=5) + smoker + bmi + C(sex) + region", data,
                      max_size=2, coef_range=(-3, 3), time_limit=30)
    assert m.scored_terms == ["threshold(age, grid=5)", "smoker"]  # the signal is on these two
    return m


@pytest.mark.parametrize("loaded", [False, True])
def test_only_the_scored_variables_are_needed(model, data, loaded):
    m = rf.from_json(model.to_json()) if loaded else model
    want = model.predict(data)
    card = data[["age", "smoker"]]
    pd.testing.assert_series_equal(m.predict(card), want)
    gaps = data.assign(bmi=np.nan, sex=None, region="never seen")  # unread, so neither missing nor unseen
    pd.testing.assert_series_equal(m.predict(gaps), want)
    pd.testing.assert_series_equal(m.score(card), model.score(data))
    with pytest.raises(DataError, match=r"lacks the column\(s\) \['smoker'\] that the score's points are on"):
        m.predict(data[["age"]])
    with pytest.raises(DataError, match="missing values"):
        m.predict(card.assign(age=np.where(card.index == 3, np.nan, card.age)))


def test_evaluate_counterfactuals_and_reasons_on_the_card_variables(model, data):
    rows = data.head(40).assign(bmi=np.nan, region=None)
    assert rf.evaluate(model, rows).auc.auc == pytest.approx(rf.evaluate(model, data.head(40)).auc.auc)
    person = rows[model.predict(rows) > 0.3].head(1)
    cf = model.counterfactuals(person, target_risk=0.3)
    assert len(person) == 1 and (cf.to_frame()["new_risk"].dropna() <= 0.3).all()
    full = model.counterfactuals(data.loc[person.index], target_risk=0.3)
    pd.testing.assert_frame_equal(cf.to_frame(), full.to_frame())
    pd.testing.assert_frame_equal(model.reasons(person).to_frame(), model.reasons(data.loc[person.index]).to_frame())


def test_a_loaded_interaction_without_its_main_effect_is_encoded_as_in_training(data):
    # an interaction is a product of level rules: encoded alone (its main effect left out), a
    # loaded design gives the columns of the whole formula (formulaic alone would encode the
    # interaction differently)
    m = rf.risk_score("y ~ C(sex) + C(sex):C(region) + bmi", data, max_size=1, time_limit=10)
    design = rf.from_json(m.to_json()).design
    term = "C(sex):C(region)"
    cols = [j for j, t in enumerate(design.column_terms) if t == term]
    assert cols and all(design.rules[j].kind == "product" for j in cols)
    assert np.array_equal(design.transform(data, terms=[term])[:, cols], m.design.transform(data)[:, cols])


def test_no_points_reads_nothing(data):
    m = rf.risk_score("y ~ bmi", data, max_size=0, time_limit=10)
    assert m.scored_terms == []
    pd.testing.assert_series_equal(m.predict(data[[]]), m.predict(data))


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_a_model_unpickled_in_another_process_scores(tmp_path):
    # formulaic's terms keep the hash of the process that made them: matching them by hash in a
    # process with another string-hash seed would miss every term
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    save = f"""
import pickle, riskformula as rf
df = rf.load_dataset("wdbc")
m = rf.risk_score('diagnosis == "M" ~ threshold(radius_worst, grid=5, k=1) + texture_worst + C(I(area_worst > 700))',
                  df, max_size=2, time_limit=10, progress=False)
assert len(m.scored_terms) == 2
pickle.dump(m, open({str(tmp_path / 'm.pkl')!r}, "wb"))
print(m.predict(df).round(12).tolist())
"""
    load = f"""
import pickle, riskformula as rf
df = rf.load_dataset("wdbc")
m = pickle.load(open({str(tmp_path / 'm.pkl')!r}, "rb"))
print(m.predict(df[["radius_worst", "area_worst"]]).round(12).tolist())
"""
    out = []
    for seed, code in (("1", save), ("2", load)):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": root}
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root)
        assert run.returncode == 0, run.stderr[-2000:]
        out.append(run.stdout)
    assert out[0] == out[1]
