"""Missing values in every use of a fitted score: counterfactuals and reasons, fairness audits,
evaluate, dask scoring and the summary each handle rows missing a variable fitted with
``missing="item"`` (or ``"as <value>"``), and each agrees with ``predict``.

The counterfactual rule: a missing value is not a value to move to — no counterfactual makes a
measured variable missing; a person missing ``x`` may have it measured at any value ("x measured
at ...") or keep it missing."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import riskformula as rf
from riskformula.errors import DataError


def _frame(n=240, seed=7):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"lactate": rng.gamma(2.0, 1.0, n).round(1), "age": rng.integers(20, 90, n).astype(float),
                      "sex": rng.choice(["f", "m"], n), "ward": rng.choice(["icu", "med", "surg"], n),
                      "sofa": rng.integers(0, 7, n).astype(float)})
    lp = -1.5 + 0.6 * (d.lactate - 2) + 0.03 * (d.age - 55) + 0.4 * (d.ward == "icu") + 0.9 * (d.sofa - 3)
    d["y"] = (rng.random(n) < expit(lp)).astype(int)
    # the lab is not ordered for patients who look well: missing is informative
    d.loc[(d.y == 0) & (rng.random(n) < 0.35), "lactate"] = np.nan
    d.loc[rng.random(n) < 0.05, "lactate"] = np.nan
    d.loc[rng.random(n) < 0.08, "age"] = np.nan
    d.loc[rng.random(n) < 0.1, "ward"] = None
    d.loc[rng.random(n) < 0.12, "sofa"] = np.nan
    return d


DATA = _frame()
MISSING = DATA[DATA.lactate.isna()]
MEASURED = DATA[DATA.lactate.notna()]


def _fit(formula, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a time limit stops some fits: not what these tests are about
        return rf.risk_score(formula, DATA, time_limit=kw.pop("time_limit", 3), **kw)


@pytest.fixture(scope="module")
def thresholded():
    """lactate by its cuts with a missing item, sex a level."""
    return _fit("y ~ threshold(lactate, k=2, missing='item') + C(sex)", max_size=3)


@pytest.fixture(scope="module")
def linear():
    """sofa and lactate as plain values (each with a missing item), ward as levels with its own."""
    return _fit("y ~ sofa + lactate + C(ward)", missing="item", coef_range=(-3, 3), max_size=4)


@pytest.fixture(scope="module")
def mixed():
    """an item, a value counted as 50 and rows dropped for a missing ward."""
    return _fit("y ~ threshold(lactate, k=2) + threshold(age) + C(sex) + C(ward)", max_size=3,
                missing={"lactate": "item", "age": "as 50", "ward": "drop"})


def _people(rows, k=8):
    return rows.head(k)


def _check_counterfactuals(m, people, cf, var="lactate"):
    """Every counterfactual is re-scored by predict on the changed row; a measured value is never
    made missing; a missing one is measured (inside the observed range) or stays missing."""
    changed = cf.apply()
    if len(changed):
        np.testing.assert_allclose(m.predict(changed).to_numpy(),
                                   [c.risk for p in cf.people for c in p.counterfactuals], rtol=0, atol=1e-12)
        np.testing.assert_allclose(m.score(changed).to_numpy(),
                                   [c.score for p in cf.people for c in p.counterfactuals], rtol=0, atol=1e-9)
    for p in cf.people:
        before = people.loc[p.person]
        assert p.risk == pytest.approx(float(m.predict(people.loc[[p.person]]).iloc[0]), abs=1e-12)
        for k, c in enumerate(p.counterfactuals, 1):
            after = changed.loc[(p.person, k)]
            for v in people.columns:
                if pd.notna(before[v]):
                    assert pd.notna(after[v]), f"counterfactual {c.values} makes a measured {v} missing"
            for ch in c.changes:
                if ch.feature == var and pd.isna(before[var]):
                    assert ch.current == "missing" and ch.required.startswith("measured at "), ch
                    lo, hi = m.profile.variables[var].min, m.profile.variables[var].max
                    assert lo <= float(after[var]) <= hi
    return changed


@pytest.mark.parametrize("method", ["dp", "milp"])
def test_counterfactuals_measure_a_missing_value_and_agree_with_predict(thresholded, method):
    m = thresholded
    card = m.score_card().set_index("term")
    assert "lactate missing" in card.index, card
    people = pd.concat([_people(MISSING), _people(MEASURED)])
    seen_measured = 0
    for goal in ("below", "above"):
        for risk in (0.05, 0.2, 0.5):
            cf = m.counterfactuals(people, target_risk=risk, goal=goal, method=method, time_limit=5)
            assert set(cf.status) <= {"already met", "optimal", "infeasible"}
            # a person with a solved status has an answer (no empty "optimal")
            assert all(p.counterfactuals for p in cf.people if p.status == "optimal")
            _check_counterfactuals(m, people, cf)
            seen_measured += sum("measured at" in str(ch.required) for p in cf.people for c in p.counterfactuals
                                 for ch in c.changes)
    assert seen_measured > 0  # some missing person is moved by measuring lactate


def test_a_missing_person_measured_reaches_each_region_the_card_tells_apart(thresholded):
    """From missing, every region of lactate whose points meet the target is offered (as measured
    values), so the reachable scores are the card's measured ones; nobody reaches the missing item."""
    m = thresholded
    person = _people(MISSING, 1)
    card = m.score_card()
    items = card[card["variable"] == "lactate"]
    miss_points = float(items.loc[items["kind"] == "missing", "points"].sum())
    base = float(m.score(person).iloc[0]) - miss_points  # the score without lactate's points
    # the lowest score a measured lactate gives this person
    grid = np.array(m.profile.variables["lactate"].values, float)
    probe = pd.concat([person] * len(grid)).assign(lactate=grid)
    lowest = float(m.score(probe).min())
    cf = m.counterfactuals(person, target_score=lowest, goal="below")
    p = cf.people[0]
    if base + miss_points <= lowest:
        assert p.status == "already met"
    else:
        assert p.status == "optimal" and p.counterfactuals[0].score == pytest.approx(lowest)
        _check_counterfactuals(m, person, cf)
    # a measured person never moves to missing, even where the missing item scores less
    low = float(m.score(MEASURED).min())
    cf = m.counterfactuals(_people(MEASURED), target_score=low - 1, goal="below")
    _check_counterfactuals(m, _people(MEASURED), cf)
    assert (cf.status == "infeasible").all()


@pytest.mark.parametrize("method", ["auto", "milp"])
def test_a_plain_value_with_a_missing_item_moves_continuously(linear, method):
    """sofa enters as its value: its missing item does not turn it into a grid of values, and a
    missing sofa is measured at the value nearest the training median that meets the target."""
    from riskformula.counterfactuals.regions import build_space
    m = linear
    assert m.coef["sofa"] != 0 and "sofa missing" in list(m.score_card()["term"]), m
    space = build_space(m, m.profile, None, list(DATA.columns))
    assert space.feature("sofa").continuous
    median = float(DATA.sofa.median())
    people = pd.concat([_people(DATA[DATA.sofa.isna()], 6), _people(DATA[DATA.ward.isna()], 3),
                        _people(MEASURED, 4)])
    people = people[~people.index.duplicated()]
    measured = 0
    for goal, risk in (("below", 0.1), ("above", 0.6)):
        cf = m.counterfactuals(people, target_risk=risk, goal=goal, method=method, n=1, time_limit=5)
        assert set(cf.status) <= {"already met", "optimal", "infeasible"}
        changed = _check_counterfactuals(m, people, cf, var="sofa")
        for p in cf.people:
            if pd.isna(people.loc[p.person, "sofa"]) and p.counterfactuals:
                c = p.counterfactuals[0]
                if [ch.feature for ch in c.changes] == ["sofa"]:
                    measured += 1
                    v = float(changed.loc[(p.person, 1), "sofa"])
                    # measured at the value nearest the median that reaches the target: one step
                    # nearer the median would not
                    assert c.cost == pytest.approx(1 + abs(v - median) / m.profile.variables["sofa"].scale)
                    if v != median:
                        nearer = people.loc[[p.person]].assign(sofa=v - np.sign(v - median))
                        s = float(m.score(nearer).iloc[0])
                        assert (s > cf.target_score) if goal == "below" else (s < cf.target_score)
    assert measured > 0


def test_dp_and_milp_agree_on_the_cost_of_measuring(thresholded):
    m = thresholded
    people = _people(MISSING, 6)
    for goal, risk in (("below", 0.05), ("above", 0.5)):
        a = m.counterfactuals(people, target_risk=risk, goal=goal, method="dp")
        b = m.counterfactuals(people, target_risk=risk, goal=goal, method="milp", time_limit=5)
        assert list(a.status) == list(b.status)
        for p, q in zip(a.people, b.people):
            assert [c.cost for c in p.counterfactuals] == pytest.approx([c.cost for c in q.counterfactuals],
                                                                        abs=1e-6)


def test_counted_as_a_value_missing_is_still_measured_not_moved_to(mixed):
    m = mixed
    people = pd.concat([_people(DATA[DATA.age.isna() & DATA.ward.notna()], 4),
                        _people(MISSING[MISSING.ward.notna()], 4)])
    people = people[~people.index.duplicated()]
    for goal, risk in (("below", 0.05), ("above", 0.5)):
        cf = m.counterfactuals(people, target_risk=risk, goal=goal)
        _check_counterfactuals(m, people, cf, var="age")
        _check_counterfactuals(m, people, cf, var="lactate")


def test_reasons_name_the_missing_item(thresholded):
    m = thresholded
    card = m.score_card()
    miss = int(card.loc[(card["variable"] == "lactate") & (card["kind"] == "missing"), "points"].sum())
    people = pd.concat([_people(MISSING, 3), _people(MEASURED, 3)])
    r = m.reasons(people).to_frame()
    lact = r[r["feature"] == "lactate"]
    for person in _people(MISSING, 3).index:
        row = lact[lact["person"] == person]
        grid = np.array(m.profile.variables["lactate"].values, float)
        probe = pd.concat([people.loc[[person]]] * len(grid)).assign(lactate=grid)
        best = float(m.score(probe).min()) - float(m.score(probe.assign(lactate=np.nan)).iloc[0]) + miss
        if miss > best:  # a measured lactate would give fewer points: "lactate missing" is a reason
            assert len(row) == 1, r
            assert row["value"].iloc[0] == "missing" and row["region"].iloc[0] == "lactate missing"
            assert row["points"].iloc[0] == miss and row["best_points"].iloc[0] == pytest.approx(best)
        else:
            assert row.empty
    # with goal="above" (points wanted) a missing person loses what a measured lactate would give
    person = _people(MISSING, 1)
    grid = np.array(m.profile.variables["lactate"].values, float)
    probe = pd.concat([person] * len(grid)).assign(lactate=grid)
    most = float(m.score(probe).max()) - float(m.score(person).iloc[0]) + miss
    up = m.reasons(person, goal="above")
    row = up.to_frame().query("feature == 'lactate'")
    if most > miss:
        assert list(row["region"]) == ["lactate missing"] and row["points"].iloc[0] == miss
        assert row["reason_points"].iloc[0] == pytest.approx(most - miss)
        assert "lactate missing" in str(up)
    else:
        assert row.empty
    # a measured person's reasons never name the missing item
    assert not lact[lact["person"].isin(_people(MEASURED, 3).index)]["region"].str.contains("missing").any()


# --------------------------------------------------------------------------------------
# evaluate and fairness audits
# --------------------------------------------------------------------------------------

def test_evaluate_scores_rows_missing_an_item_variable_as_predict(linear, mixed):
    for m, rows in ((linear, DATA), (mixed, DATA.dropna(subset=["ward"]))):
        assert rows.lactate.isna().any()
        ev = m.evaluate(rows)
        p = m.predict(rows).to_numpy()
        y = rows["y"].to_numpy()
        assert ev.n == len(rows) and ev.rows_dropped == 0
        assert ev.predicted_risk == pytest.approx(p.mean(), abs=1e-12)
        assert ev.brier == pytest.approx(np.mean((p - y) ** 2), abs=1e-12)
        pos, neg = p[y == 1], p[y == 0]
        auc = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (len(pos) * len(neg))
        assert ev.auc.auc == pytest.approx(auc, abs=1e-12)
        assert rf.evaluate(m, rows).brier == ev.brier


def test_fairness_audit_with_rows_missing_an_item_variable(thresholded, mixed):
    for m, rows in ((thresholded, DATA), (mixed, DATA.dropna(subset=["ward"]))):
        a = m.fairness(rows, by="sex", at_risk=0.3)
        assert a.n == len(rows) and a.rows_dropped == 0
        p = m.predict(rows).to_numpy()
        sel = p >= 0.3
        for g, t in a.by_group.set_index("group").iterrows():
            inside = (rows["sex"] == g).to_numpy()
            assert t["n"] == inside.sum()
            assert t["selection_rate"] == pytest.approx(sel[inside].mean(), abs=1e-12)
            assert t["mean_risk"] == pytest.approx(p[inside].mean(), abs=1e-12)
    # a missing value in the audit's groups stays an error, even for a variable scored when missing
    ward_item = _fit("y ~ threshold(lactate, missing='item') + C(ward)", missing={"ward": "item"}, max_size=2,
                     time_limit=2)
    with pytest.raises(DataError, match="'ward' has .* missing value"):
        ward_item.fairness(DATA, by="ward")


# --------------------------------------------------------------------------------------
# dask
# --------------------------------------------------------------------------------------

def test_dask_scores_missing_values_as_pandas(linear, mixed):
    dd = pytest.importorskip("dask.dataframe")
    for m, rows in ((linear, DATA), (mixed, DATA)):
        ddf = dd.from_pandas(rows, npartitions=3)
        for method in ("predict", "score"):
            want = getattr(m, method)(rows)
            got = getattr(m, method)(ddf).compute()
            pd.testing.assert_series_equal(got.sort_index(), want.sort_index())
    ev_p, ev_d = linear.evaluate(DATA), linear.evaluate(dd.from_pandas(DATA, npartitions=3))
    assert ev_d.n == ev_p.n and ev_d.brier == pytest.approx(ev_p.brier, abs=1e-12)
    assert ev_d.auc.auc == pytest.approx(ev_p.auc.auc, abs=1e-12)
    # a missing value the score cannot score is the pandas error, with the counts of every partition
    new = DATA.assign(sex=DATA.sex.where(DATA.index % 20 != 0))
    m = _fit("y ~ threshold(lactate, missing='item') + C(sex)", max_size=2, coef_range=(1, 3), time_limit=2)
    if "sex" in m.design.required_variables(columns=m.scorecard.read_columns):
        with pytest.raises(DataError) as want:
            m.evaluate(new)
        with pytest.raises(DataError) as got:
            m.evaluate(dd.from_pandas(new, npartitions=3))
        assert str(got.value) == str(want.value) and "sex: 12" in str(want.value)


# --------------------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------------------

def test_summary_says_how_missing_values_were_handled(mixed, thresholded):
    line = dict(mixed.summary().header())["Missing values"]
    kept = DATA.dropna(subset=["ward"])
    assert line == (f"age — counted as 50 ({int(kept.age.isna().sum())} rows); "
                    f"lactate — own item ({int(kept.lactate.isna().sum())} rows); "
                    f"ward — rows dropped ({int(DATA.ward.isna().sum())})")
    assert "Missing values" in str(mixed.summary())
    assert dict(thresholded.summary().header())["Missing values"] == \
        f"lactate — own item ({int(DATA.lactate.isna().sum())} rows)"
    # a saved model keeps the counts with its profile; without them the line says the policies only
    loaded = rf.from_json(mixed.to_json())
    assert dict(loaded.summary().header())["Missing values"] == line
    loaded = loaded._replace(profile=None)
    assert dict(loaded.summary().header())["Missing values"] == \
        "age — counted as 50; lactate — own item; ward — rows dropped"
    complete = _fit("y ~ threshold(age) + C(sex)", max_size=1, time_limit=2,
                    missing={"age": "drop"}).summary().header()
    assert dict(complete).get("Missing values") == f"age — rows dropped ({int(DATA.age.isna().sum())})"
    plain = rf.risk_score("y ~ C(sex)", DATA, max_size=1, time_limit=2)
    assert "Missing values" not in dict(plain.summary().header())
