"""The search settings as a user gives them: gap tolerances checked, a warm start that cannot be used
says why, the docstring examples are true, ``--verbose`` logs to stderr, and a gap warning points at
the caller's line."""

from __future__ import annotations

import warnings


import pytest

import riskformula as rf

from riskformula.cli import main

from riskformula.errors import OptimalityGapWarning, SettingsError

def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rf.risk_score(*args, progress=False, **kwargs)

@pytest.fixture(scope="module")
def breastcancer():
    return rf.load_dataset("breastcancer")


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
    assert "--gap-tolerance must" in capsys.readouterr().err


def test_unusable_start_warns_with_the_reason():
    d = rf.load_dataset("mammo")
    with pytest.warns(UserWarning, match=r"not used: points outside their bounds: IrregularShape = 40"):
        rf.risk_score("Malignant ~ .", d, max_size=3, time_limit=10, progress=False,
                      initial={"IrregularShape": 40})
    with pytest.warns(UserWarning, match="uses 2 terms, outside min_size 0 to max_size 1"):
        rf.risk_score("Malignant ~ .", d, max_size=1, time_limit=10, progress=False,
                      initial={"IrregularShape": 2, "CircumscribedMargin": -1})
    with warnings.catch_warnings(record=True) as caught:   # a usable start: no warning about it
        warnings.simplefilter("always")
        rf.risk_score("Malignant ~ .", d, max_size=3, time_limit=60, progress=False,
                      initial={"IrregularShape": 2, "CircumscribedMargin": -1})
    assert not [str(w.message) for w in caught if "not used" in str(w.message) or "outside" in str(w.message)]


def test_initial_docstring_no_longer_promises_a_speed_up():
    doc = " ".join(rf.risk_score.__doc__.split())
    assert "can only speed the search up" not in doc
    assert "may take more or less time" in doc


@pytest.mark.slow  # 5-8 s: the default run stays within about 6 minutes
def test_scale_docstring_example():
    doc = rf.risk_score.__doc__
    assert "threshold(radius_worst, k=1) + threshold(concave_points_worst, k=1)',\n    ...               df, " \
           "max_size=2, scale=[1, 2, 4], time_limit=30).scale  # doctest: +SKIP\n    1.0" in doc
    df = rf.load_dataset("wdbc")
    m = _quiet('diagnosis == "M" ~ threshold(radius_worst, k=1) + threshold(concave_points_worst, k=1)', df,
               max_size=2, scale=[1, 2, 4], time_limit=600)   # the limit is a safety net, not the verdict
    assert m.status == "optimal" and m.scale == 1.0


def test_cli_verbose_log_goes_to_stderr(capsys):
    assert main(["fit", "Malignant ~ .", "--data", "mammo", "--max-size", "2", "--time-limit", "10",
                 "--verbose", "--format", "markdown", "--no-progress", "--engine", "tree"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# Risk score")
    assert "nodes" not in out.split("\n", 1)[0] and "[optimal]" in err


def test_gap_warning_is_attributed_to_the_callers_line():
    d = rf.load_dataset("mammo")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rf.risk_score("Malignant ~ .", d, max_size=4, node_limit=1, engine="tree", progress=False)
    gap = [w for w in caught if issubclass(w.category, OptimalityGapWarning)]
    assert gap and all(w.filename == __file__ for w in gap), [(w.filename, w.lineno) for w in caught]
