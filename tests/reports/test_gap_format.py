"""Printed optimality gaps: 0% within the default gap tolerance, honest digits above it (also within
a looser tolerance the user set), NA when undefined;
the unrounded gap stays in the numbers (``.gap``, ``to_dict()``, JSON)."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.cli import main
from riskformula.reports.render import fmt_gap
from conftest import tree_only  # small nodes settled by listing would leave no gap to print

FORMULA = 'diagnosis == "M" ~ radius_worst + concave_points_worst'


@pytest.mark.parametrize("gap, tol, expected", [
    (0.0, 1e-6, "0%"),
    (6.768e-9, 1e-6, "0%"),           # was printed as 6.768e-07%
    (1e-6, 1e-6, "0%"),               # at the tolerance
    (-1e-12, 1e-6, "0%"),
    (1.2e-6, 1e-6, "0.00012%"),       # just above: shown, without exponent
    (2.5e-9, 0.0, "0.00000025%"),     # no tolerance: every gap is shown
    (0.0205678, 1e-6, "2.06%"),
    (0.283, 1e-6, "28.3%"),
    (0.9999, 1e-6, ">99.9%"),         # not rounded up to a zero lower bound
    (1.0, 1e-6, "100%"),
    (0.05, 0.1, "5%"),                # a user's looser tolerance: the real gap, not 0%
    (5e-7, 0.1, "0%"),                # within the default tolerance too: LP noise
    (math.nan, 1e-6, "NA"),
    (math.inf, 1e-6, "NA"),
    (None, 1e-6, "NA"),
    (np.float64(3e-7), 1e-6, "0%"),
])
def test_fmt_gap_rule(gap, tol, expected):
    assert fmt_gap(gap, tol) == expected


def test_fmt_gap_states_the_tolerance_only_when_the_gap_is_within_it():
    assert fmt_gap(5e-7, 1e-6, state_tolerance=True) == "0% within tolerance 1e-06"
    assert fmt_gap(0.05, 1e-6, state_tolerance=True) == "5%"
    assert fmt_gap(0.04567, 0.5, state_tolerance=True) == "4.57% within tolerance 50%"
    assert fmt_gap(math.inf, 1e-6, state_tolerance=True) == "NA"


@pytest.fixture(scope="module")
def df():
    return rf.load_dataset("wdbc")


@pytest.fixture(scope="module")
def optimal(df):
    with tree_only():
        m = rf.risk_score(FORMULA, df, max_size=2, time_limit=20)
    assert m.status == "optimal" and 0 < m.gap <= 1e-6  # a tiny positive gap, inside the tolerance
    return m


@pytest.fixture(scope="module")
def stopped(df):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.OptimalityGapWarning)
        with tree_only():
            m = rf.risk_score(FORMULA, df, max_size=2, node_limit=3, time_limit=20)
    assert m.status == "node_limit" and m.gap > 1e-3
    return m


def test_optimal_model_prints_zero_gap_and_keeps_the_number(optimal):
    assert "gap 0% within tolerance 1e-06 (" in optimal.certificate_line()
    assert repr(optimal).endswith("optimal, gap 0%>")
    text = str(optimal.summary())
    assert "Optimality gap                0% within tolerance 1e-06" in text
    certificate = text.split("Certificate\n")[1].replace("tolerance 1e-06", "").replace("tolerance 1e-08", "")
    assert "e-0" not in certificate and "e-1" not in certificate  # no noise such as 6.4e-07%
    assert optimal.to_dict()["gap"] == optimal.gap > 0
    doc = json.loads(optimal.to_json())
    assert doc["certificate"]["gap"] == optimal.gap
    assert rf.from_json(optimal.to_json()).gap == optimal.gap


def test_stopped_model_prints_its_gap(stopped):
    g = fmt_gap(stopped.gap)
    assert g != "0%" and "within tolerance" not in stopped.certificate_line()
    assert f"gap {g} (" in stopped.certificate_line()
    assert f"gap {g}>" in repr(stopped)
    assert f"(gap {g})" in str(stopped.summary())


def test_tables_print_gaps_by_the_same_rule(df, optimal, stopped):
    t = rf.compare(optimal, stopped, names=["done", "stopped"])
    shown = t._models_display().set_index("model")["gap"]
    assert shown["done"] == "0%" and shown["stopped"] == fmt_gap(stopped.gap)
    assert t.frame["gap"].tolist() == [optimal.gap, stopped.gap]  # numbers unrounded
    path = rf.size_path(FORMULA, df, sizes=[1, 2], time_limit=20)
    assert path.table["status"].eq("optimal").all()
    assert " 0%  " in str(path) and "e-0" not in str(path).split("Points by size")[0]
    cv = rf.cross_validate(FORMULA, df, folds=2, n_jobs=1, max_size=2, time_limit=20)
    assert cv._fold_display()["gap"].tolist() == ["0%", "0%"]
    assert "0% ± 0%" in str(cv)


def test_cli_prints_the_zero_gap_and_the_users_formula(tmp_path, capsys):
    rng = np.random.default_rng(5)
    n = 150
    d = pd.DataFrame({"age": rng.integers(20, 80, n), "smoker": rng.integers(0, 2, n)})
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-(-2 + 2.5 * (d.age > 55) + 1.5 * d.smoker)))).astype(int)
    path = tmp_path / "d.csv"
    d.to_csv(path, index=False)
    assert main(["fit", "y ~ threshold(., grid=4)", "--data", str(path), "--max-size", "2",
                 "--time-limit", "20"]) == 0
    out = capsys.readouterr().out
    assert "Formula                   y ~ threshold(., grid=4)" in out
    assert "age ≤ " in out or "age > " in out
    assert "0% within tolerance 1e-06" in out
