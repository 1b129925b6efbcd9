"""How numbers read in the text views: risks near 0 and 1, NA for a missing number, whole counts,
levels without numpy's repr, and the notes that keep a right number from reading as an alarm."""

import dataclasses
import re
import warnings

import pandas as pd
import pytest

import riskformula as rf
from riskformula.reports import render


@pytest.fixture(scope="module")
def breast():
    return rf.load_dataset("breastcancer")


@pytest.fixture(scope="module")
def steep(breast):
    # points steep enough that many risks are within 0.1 % of 0 or 1
    return rf.risk_score("Benign ~ BareNuclei + ClumpThickness", breast, max_size=2, time_limit=20)


@pytest.mark.parametrize("p, text", [(0.2, "20.0%"), (0.99967, ">99.9%"), (0.0004, "<0.1%"), (1.0, "100.0%"),
                                     (0.0, "0.0%"), (float("nan"), "NA")])
def test_fmt_percent(p, text):
    assert render.fmt_percent(p) == text


@pytest.mark.parametrize("p, text", [(0.2, "20.0%"), (0.99967, "99.967%"), (0.0005, "0.050%"), (0.5, "50.0%")])
def test_fmt_percent_exact_for_a_chosen_target(p, text):
    assert render.fmt_percent_exact(p) == text


def test_counterfactual_text_near_one_is_readable(steep, breast):
    risk = steep.predict(breast)
    person = breast.loc[[risk.idxmax()]]
    assert risk.max() > 0.999
    cf = steep.counterfactuals(person, target_risk=0.5, n=1)
    text = str(cf)
    assert "e+" not in text and "e-" not in text
    assert ">99.9%" in text


def test_small_group_warning_shows_levels_as_written():
    d = rf.load_dataset("mammo")
    m = rf.risk_score("Malignant ~ Age_geq_60 + Density", d, max_size=2, time_limit=10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.evaluate(d, by="Density")
    text = " ".join(str(w.message) for w in caught if issubclass(w.category, rf.SmallGroupWarning))
    assert "1 has 18 among all rows" in text and "np.int64" not in text


def test_calibration_slope_nan_reads_na(steep):
    ev = steep.training_evaluation
    calib = dataclasses.replace(ev.calibration, slope=float("nan"))
    m = steep._replace(training_evaluation=dataclasses.replace(ev, calibration=calib))
    table = m.summary().fit_table().set_index("statistic")["value"]
    assert table["Calibration slope"] == "NA"
    assert "nan" not in str(m.summary())
    assert steep.training_evaluation is ev  # the fitted record is not changed


def test_evaluation_frame_keeps_counts_whole(steep, breast):
    frame = steep.evaluate(breast).to_frame()
    values = frame.set_index("metric")["value"]
    assert values["n"] == len(breast) and isinstance(values["n"], int)
    assert isinstance(values["events"], int) and isinstance(values["hl_df"], int)
    assert isinstance(values["auc"], float)
    shown = frame.to_string()
    assert "e+" not in shown and re.search(r"\bn\s+683\b", shown)


def test_hosmer_lemeshow_note_for_extreme_risks(steep, breast):
    ev = steep.evaluate(breast)
    assert ev.hosmer_lemeshow.p_value < 0.05
    note = [n for n in ev.notes if n.startswith("Hosmer–Lemeshow:")]
    assert len(note) == 1 and "above 99.9%" in note[0] and "reliability table" in note[0]
    assert note[0] in str(ev)
    # the summary's Hosmer–Lemeshow line (training rows) gets the same kind of note
    assert any(n.startswith("Hosmer–Lemeshow:") for n in steep.summary().notes())


def test_no_hosmer_lemeshow_note_for_moderate_risks():
    d = rf.load_dataset("mammo")
    m = rf.risk_score("Malignant ~ IrregularShape + Age_geq_60", d, max_size=2, time_limit=10)
    ev = m.evaluate(d)
    assert not any(n.startswith("Hosmer–Lemeshow:") for n in ev.notes)


def test_a_five_row_fit_warns_about_its_size():
    d = pd.DataFrame({"x1": [0, 1, 0, 1, 1], "x2": [1, 1, 0, 0, 1], "y": [0, 1, 0, 1, 1]})
    with pytest.warns(rf.SmallSampleWarning, match=r"5 training rows with 2 non-events.*Peduzzi"):
        m = rf.risk_score("y ~ x1 + x2", d, time_limit=5)
    assert any("Few rows for the model" in n for n in m.summary().notes())


def test_enough_rows_do_not_warn(breast):
    with warnings.catch_warnings():
        warnings.simplefilter("error", rf.SmallSampleWarning)
        rf.risk_score("Benign ~ BareNuclei", breast, max_size=1, time_limit=10)


def test_counterfactual_risks_use_the_report_format():
    from riskformula.counterfactuals.result import _pct
    assert _pct(0.99967) == ">99.9%" and _pct(0.00001) == "<0.1%" and _pct(0.5) == "50.0%"
