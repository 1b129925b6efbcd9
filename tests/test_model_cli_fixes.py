"""Net-benefit risk_of, counterfactual slack changes, gap_tolerance,
warm-start warnings, the `scale=[1, 2, 4]` docstring example, the CLI's --verbose log on stderr,
warnings attributed to the caller's line, and synthetic_thresholds' argument checks."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.cli import main
from riskformula.errors import OptimalityGapWarning, SettingsError


def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rf.risk_score(*args, progress=False, **kwargs)


# --- 1. risk_of agrees with predict for both model kinds -------------------------------------

@pytest.fixture(scope="module")
def breastcancer():
    return rf.load_dataset("breastcancer")


@pytest.fixture(scope="module")
def net_benefit_model(breastcancer):
    return _quiet("Benign ~ .", breastcancer, objective="net_benefit", max_size=3, coef_range=(0, 5),
                  time_limit=20)


def test_net_benefit_risk_of_is_the_band_risk_predict_uses(net_benefit_model, breastcancer):
    m = net_benefit_model
    s = m.score(breastcancer).to_numpy()
    np.testing.assert_array_equal(m.risk_of(s), m.predict(breastcancer).to_numpy())
    # a single score gives a single number, as the logistic model's risk_of does
    assert np.ndim(m.risk_of(s[0])) == 0 and float(m.risk_of(s[0])) == m.predict(breastcancer).iloc[0]
    # the risk table's band risks are what risk_of gives inside each band
    t = m.risk_table()
    np.testing.assert_array_equal(m.risk_of(t["score_from"].to_numpy()), t["risk_from"].to_numpy())


def test_net_benefit_dask_evaluation_uses_the_band_risks(net_benefit_model, breastcancer):
    dd = pytest.importorskip("dask.dataframe")
    m = net_benefit_model
    plain = m.evaluate(breastcancer).to_frame().set_index("metric")["value"]
    lazy = m.evaluate(dd.from_pandas(breastcancer, npartitions=2)).to_frame().set_index("metric")["value"]
    pd.testing.assert_series_equal(plain, lazy, check_exact=False, rtol=1e-9)
    np.testing.assert_array_equal(m.predict(dd.from_pandas(breastcancer, npartitions=2)).compute().to_numpy(),
                                  m.predict(breastcancer).to_numpy())


def test_logistic_risk_of_is_what_predict_uses(breastcancer):
    m = _quiet("Benign ~ .", breastcancer, max_size=3, time_limit=20)
    s = m.score(breastcancer).to_numpy()
    np.testing.assert_array_equal(m.risk_of(s), m.predict(breastcancer).to_numpy())


# --- 2. counterfactuals report no slack change -----------------------------------------------

def _linear_frame():
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"a": rng.normal(size=n), "i": rng.integers(0, 2, n), "g": rng.integers(0, 2, n),
                       "age": rng.normal(size=n), "grp": rng.choice(["e", "u"], n)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(df["a"] + df["i"] - df["g"] + df["age"])))).astype(int)
    return df


def test_counterfactual_has_no_change_that_only_fills_a_step():
    df = _linear_frame()
    m = _quiet("y ~ .", df, max_size=3, coef_range=(-3, 3), time_limit=10)
    cf = m.counterfactuals(df.head(2), target_risk=0.3)
    one = m.counterfactuals(df.head(2), target_risk=0.3, max_changes=1)
    frame = cf.to_frame()
    assert (frame["changes"] == 1).all(), frame
    assert frame["feature"].tolist() == ["a", "a"]
    for p, q in zip(cf.people, one.people):
        assert p.counterfactuals[0].values == q.counterfactuals[0].values
    assert (m.predict(cf.apply()) <= 0.3).all()


def test_counterfactual_never_moves_a_value_to_its_own_rounding():
    from riskformula.counterfactuals.instance import _step_away
    # 0.6462424 prints as 0.646242 at 6 decimals: moving there is no change
    assert _step_away(0.6462424, 1e-6) == (0.646241, 0.646243)
    assert _step_away(0.6462427, 1e-6) == (0.646242, 0.646244)
    assert _step_away(3.0, 1.0) == (2.0, 4.0)


# --- 3. gap_tolerance ------------------------------------------------------------------------

@pytest.mark.parametrize("tol", [1, 1.5, -0.1, float("nan")])
def test_gap_tolerance_outside_0_1_is_refused(breastcancer, tol):
    with pytest.raises(SettingsError, match="gap_tolerance"):
        rf.risk_score("Benign ~ .", breastcancer, max_size=2, gap_tolerance=tol, time_limit=5)
    with pytest.raises(SettingsError, match="gap_tolerance"):
        rf.risk_score("Benign ~ .", breastcancer, objective="net_benefit", max_size=2, coef_range=(0, 5),
                      gap_tolerance=tol, time_limit=5)


def test_negative_absolute_gap_tolerance_is_refused(breastcancer):
    with pytest.raises(SettingsError, match="absolute_gap_tolerance"):
        rf.risk_score("Benign ~ .", breastcancer, max_size=2, absolute_gap_tolerance=-1e-9, time_limit=5)


def test_cli_refuses_gap_tolerance_of_one(capsys):
    assert main(["fit", "Malignant ~ .", "--data", "mammo", "--max-size", "2", "--gap-tolerance", "1",
                 "--no-progress"]) == 2
    assert "gap_tolerance" in capsys.readouterr().err


# --- 4. a warm start that cannot be used says so ---------------------------------------------

def test_unusable_start_warns_with_the_reason():
    d = rf.load_dataset("mammo")
    with pytest.warns(UserWarning, match=r"not used: points outside their bounds: IrregularShape = 40"):
        rf.risk_score("Malignant ~ .", d, max_size=3, time_limit=10, progress=False,
                      initial={"IrregularShape": 40})
    with pytest.warns(UserWarning, match="uses 2 terms, outside min_size 0 to max_size 1"):
        rf.risk_score("Malignant ~ .", d, max_size=1, time_limit=10, progress=False,
                      initial={"IrregularShape": 2, "CircumscribedMargin": -1})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rf.risk_score("Malignant ~ .", d, max_size=3, time_limit=10, progress=False,
                      initial={"IrregularShape": 2, "CircumscribedMargin": -1})


def test_initial_docstring_no_longer_promises_a_speed_up():
    doc = " ".join(rf.risk_score.__doc__.split())
    assert "can only speed the search up" not in doc
    assert "may take more or less time" in doc


# --- 5. the scale docstring example is true --------------------------------------------------

def test_scale_docstring_example():
    doc = rf.risk_score.__doc__
    assert "threshold(radius_worst, k=1) + threshold(concave_points_worst, k=1)',\n    ...               df, " \
           "max_size=2, scale=[1, 2, 4], time_limit=30).scale  # doctest: +SKIP\n    1.0" in doc
    df = rf.load_dataset("wdbc")
    m = _quiet('diagnosis == "M" ~ threshold(radius_worst, k=1) + threshold(concave_points_worst, k=1)', df,
               max_size=2, scale=[1, 2, 4], time_limit=30)
    assert m.status == "optimal" and m.scale == 1.0


# --- 6. --verbose writes its log to stderr ---------------------------------------------------

def test_cli_verbose_log_goes_to_stderr(capsys):
    assert main(["fit", "Malignant ~ .", "--data", "mammo", "--max-size", "2", "--time-limit", "10",
                 "--verbose", "--format", "markdown", "--no-progress", "--engine", "tree"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# Risk score")
    assert "nodes" not in out.split("\n", 1)[0] and "[optimal]" in err


# --- 7. warnings point at the caller's line --------------------------------------------------

def test_gap_warning_is_attributed_to_the_callers_line():
    d = rf.load_dataset("mammo")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rf.risk_score("Malignant ~ .", d, max_size=4, time_limit=0.05, progress=False)
    gap = [w for w in caught if issubclass(w.category, OptimalityGapWarning)]
    assert gap and all(w.filename == __file__ for w in gap), [(w.filename, w.lineno) for w in caught]


def test_net_benefit_gap_warning_is_attributed_to_the_callers_line(breastcancer):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rf.risk_score("Benign ~ .", breastcancer, objective="net_benefit", max_size=3, coef_range=(0, 5),
                      solver=None, time_limit=5, progress=False)
    gap = [w for w in caught if issubclass(w.category, OptimalityGapWarning)]
    assert gap and all(w.filename == __file__ for w in gap), [(w.filename, w.lineno) for w in caught]


# --- 8. synthetic_thresholds checks its arguments --------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    ({"n": -5, "p": 3}, "`n`"),
    ({"n": 1, "p": 3}, "`n`"),
    ({"n": 10, "p": 0}, "`p`"),
    ({"n": 10.5, "p": 1}, "`n`"),
    ({"n": 50, "p": 2, "min_class_share": 0.6}, "min_class_share"),
    ({"n": 50, "p": 2, "min_class_share": -0.1}, "min_class_share"),
])
def test_synthetic_thresholds_refuses_bad_arguments(kwargs, match):
    with pytest.raises(SettingsError, match=match):
        rf.synthetic_thresholds(**kwargs)


def test_synthetic_thresholds_says_when_no_draw_meets_the_share():
    from riskformula.datasets import synthetic
    with pytest.raises(SettingsError, match="none of 1,000 generating models"):
        # 0.5 of 7 rows cannot be met (the classes split 3/4 at best)
        synthetic.synthetic_thresholds(7, 1, min_class_share=0.5)
    d = rf.synthetic_thresholds(50, 2, min_class_share=0.3)
    assert d["y"].value_counts(normalize=True).min() >= 0.3
