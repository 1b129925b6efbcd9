"""Tests of riskformula.reports.evaluation with a fake fitted model (no solver needed)."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from riskformula.reports import metrics as m
from riskformula.errors import CalibrationWarning, DataError, SettingsError
from riskformula.reports.evaluation import DEFAULT_THRESHOLDS, Evaluation, evaluate


class FakeScore:
    """Integer points on 0/1 columns, logistic risk: the duck type `evaluate` needs."""

    def __init__(self, points, intercept, outcome="y"):
        self.points, self.intercept, self.outcome = points, intercept, outcome
        self.formula = f"{outcome} ~ " + " + ".join(points)

    def score(self, data):
        start = pd.Series(0.0, index=data.index)  # a model with no points scores 0
        return sum((data[k] * v for k, v in self.points.items()), start).astype(float)

    def predict(self, data):
        return 1 / (1 + np.exp(-(self.intercept + self.score(data))))

    def observed(self, data):
        return data[self.outcome]


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    n = 300
    d = pd.DataFrame({"age60": rng.integers(0, 2, n), "smoker": rng.integers(0, 2, n),
                      "sex": rng.choice(["F", "M"], n)})
    lp = -2 + 1.2 * d["age60"] + 2 * d["smoker"]
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    return d


@pytest.fixture
def model():
    return FakeScore({"age60": 1, "smoker": 2}, -2)


def _arrays(model, d):
    return (d["y"].to_numpy(), model.predict(d).to_numpy(), model.score(d).to_numpy())


def test_headline_metrics_are_the_metric_functions(model, data):
    ev = evaluate(model, data)
    y, risk, score = _arrays(model, data)
    assert (ev.n, ev.events, ev.rows_dropped) == (300, int(y.sum()), 0)
    assert ev.auc == m.auc_ci(y, score)
    assert ev.cal == m.cal_by_score(y, risk, score)
    assert ev.ece == m.expected_calibration_error(y, risk)
    assert ev.brier == m.brier_score(y, risk)
    assert ev.log_loss == m.log_loss(y, risk)
    assert ev.calibration == m.calibration_intercept_slope(y, risk)
    assert ev.hosmer_lemeshow.statistic == m.hosmer_lemeshow(y, risk).statistic
    pd.testing.assert_frame_equal(ev.reliability, m.reliability_table(y, risk, score))
    pd.testing.assert_frame_equal(ev.net_benefit, m.net_benefit(y, risk, DEFAULT_THRESHOLDS))
    assert ev.aunbc == m.aunbc(y, risk)  # Chi and Birbil (2026) grid by default
    assert ev.reliability["score"].tolist() == [0, 1, 2, 3]
    counts = ev.score_counts
    assert (counts["events"] + counts["non_events"]).tolist() == ev.reliability["n"].tolist()


def test_thresholds_drive_both_the_table_and_aunbc(model, data):
    ev = evaluate(model, data, thresholds=[0.3, 0.1, 0.2])
    y, risk, _ = _arrays(model, data)
    assert ev.net_benefit["threshold"].tolist() == [0.1, 0.2, 0.3]
    assert ev.aunbc == m.aunbc(y, risk, [0.1, 0.2, 0.3])
    assert ev.aunbc_thresholds.tolist() == [0.1, 0.2, 0.3]


def test_by_group_rows_match_subset_metrics(model, data):
    ev = evaluate(model, data, by="sex")
    tbl = ev.to_frame()
    assert tbl["sex"].tolist() == ["F", "M", "overall"]
    for sex in ("F", "M"):
        sub = data[data["sex"] == sex]
        y, risk, score = _arrays(model, sub)
        row = tbl.set_index("sex").loc[sex]
        assert row["n"] == len(sub) and row["events"] == y.sum()
        assert row["auc"] == pytest.approx(m.auc(y, score))
        assert row["cal"] == pytest.approx(m.cal_by_score(y, risk, score))
        assert row["calibration_slope"] == pytest.approx(
            m.calibration_intercept_slope(y, risk).slope)
        assert row["aunbc"] == pytest.approx(m.aunbc(y, risk))
    overall = tbl.set_index("sex").loc["overall"]
    assert overall["auc"] == pytest.approx(ev.auc.auc)
    assert "By sex" in str(ev)


def test_missing_by_column_is_a_clear_error(model, data):
    with pytest.raises(SettingsError, match=r"`by` = 'gender' is not a column.*sex"):
        evaluate(model, data, by="gender")


def test_single_class_group_warns_and_reports_na(model, data):
    d = data.copy()
    d["site"] = np.where(np.arange(len(d)) < 250, "A", "B")
    d.loc[d["site"] == "B", "y"] = 0  # site B has no events
    with pytest.warns(CalibrationWarning, match="site = B: only non-events"):
        ev = evaluate(model, d, by="site")
    row = ev.to_frame().set_index("site").loc["B"]
    assert math.isnan(row["auc"]) and math.isnan(row["calibration_slope"])
    y, risk, score = (a[250:] for a in _arrays(model, d))
    assert row["cal"] == pytest.approx(m.cal_by_score(y, risk, score))  # still computed
    assert any("site = B" in s for s in ev.notes)
    assert "NA" in str(ev)


def test_all_one_class_does_not_crash(model, data):
    d = data.assign(y=0)
    with pytest.warns(CalibrationWarning, match="overall: only non-events"):
        ev = evaluate(model, d)
    assert ev.auc is None and ev.calibration is None and ev.roc is None
    assert "AUC NA" in repr(ev)
    assert "NA" in ev.to_markdown()


def test_constant_model_gets_na_slope_and_hl(data):
    with pytest.warns(CalibrationWarning) as rec:
        ev = evaluate(FakeScore({}, -0.3), data)  # size-0 model: every score 0
    msgs = " ".join(str(w.message) for w in rec)
    assert "slope is undefined" in msgs and "at least 3 groups" in msgs
    assert ev.auc.auc == 0.5
    assert math.isnan(ev.calibration.slope) and math.isnan(ev.hosmer_lemeshow.p_value)
    assert "Hosmer–Lemeshow                 NA" in str(ev)


def test_rows_the_model_cannot_score_are_dropped_and_counted(model, data):
    class Dropping(FakeScore):
        def predict(self, d):  # e.g. formulaic dropped rows with missing values
            return super().predict(d).iloc[5:]

    ev = evaluate(Dropping(model.points, model.intercept), data)
    assert (ev.n, ev.rows_dropped) == (295, 5)
    assert any("5 row(s) dropped" in s for s in ev.notes)


def test_data_is_not_modified(model, data):
    before = data.copy()
    evaluate(model, data, by="sex")
    pd.testing.assert_frame_equal(data, before)


def test_bad_models_and_outcomes_raise(model, data):
    with pytest.raises(SettingsError, match="`observed\\(data\\)` method"):
        evaluate(object(), data)
    with pytest.raises(DataError, match="0/1 event indicators"):
        evaluate(model, data.assign(y=data["y"] * 2))
    with pytest.raises(DataError, match="must be a pandas DataFrame"):
        evaluate(model, data.to_numpy())


def test_renders_in_every_format(model, data):
    ev = evaluate(model, data.rename(columns={"sex": "sex<&>"}), by="sex<&>")
    text = str(ev)
    for label in ("Formula", "AUC (95% CI)", "CAL (by score)", "Reliability by score",
                  "Net benefit", "Notes", "[1] AUC counts tied scores as 1/2"):
        assert label in text
    # header before tables before notes (STYLE 7)
    assert text.index("AUNBC") < text.index("Reliability by score") < text.index("Notes")
    md = ev.to_markdown()
    assert "# Risk score evaluation" in md and "| score " in md
    html = ev.to_html()
    assert ev._repr_html_() == html and "<table>" in html and "<h2>Notes</h2>" in html
    assert "<h2>By sex&lt;&amp;&gt;</h2>" in html  # free text is escaped
    latex = ev.to_latex()
    assert r"\begin{tabular}" in latex and r"95\% CI" in latex
    assert r"By sex\textless{}\&\textgreater{}" in latex
    assert "95% CI" not in latex.replace(r"95\% CI", "")  # every percent sign escaped
    assert " \\\\\n[2]" in latex  # notes on separate lines
    assert "\n" not in repr(ev) and repr(ev).startswith("<Evaluation: y ~ age60 + smoker; 300 obs")


def test_to_frame_to_dict_and_tables(model, data):
    ev = evaluate(model, data)
    frame = ev.to_frame()
    assert frame.columns.tolist() == ["metric", "value", "lower", "upper"]
    assert frame.set_index("metric").loc["auc", "lower"] == ev.auc.lower
    d = ev.to_dict()
    json.dumps(d)  # plain Python values only
    assert d["auc"] == ev.auc.auc and d["n"] == 300 and "by_group" not in d
    assert set(ev.tables) == {"metrics", "reliability", "hosmer_lemeshow", "net_benefit",
                              "score_counts", "roc"}
    rel = ev.tables["reliability"]
    rel.loc[0, "n"] = -1  # copies: the object stays intact
    assert ev.reliability.loc[0, "n"] != -1
    by = evaluate(model, data, by="sex")
    assert set(by.to_dict()["by_group"]) == {"F", "M", "overall"}
    assert "by_group" in by.tables


def test_missing_by_values_form_their_own_group(model, data):
    d = data.copy()
    d["sex"] = d["sex"].where(np.arange(len(d)) % 10 != 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = evaluate(model, d, by="sex")
    assert ev.to_frame()["sex"].tolist() == ["F", "M", "NA", "overall"]
    assert ev.to_frame().set_index("sex").loc["NA", "n"] == 30


def test_evaluation_is_immutable(model, data):
    ev = evaluate(model, data)
    assert isinstance(ev, Evaluation)
    with pytest.raises(AttributeError):
        ev.n = 3
