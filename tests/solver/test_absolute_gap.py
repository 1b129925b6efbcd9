"""The absolute gap tolerance: settings, JSON, scikit-learn, command line, pass-through, summary."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.cli import main
from riskformula.errors import SettingsError

# these tests are about the search tree: small problems keep theirs (see conftest.py)
pytestmark = pytest.mark.usefixtures("no_enumeration")


def _data(n=150, seed=3):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 2, n)})
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-(-1 + 1.5 * d.a + d.b)))).astype(int)
    return d


def _near_separable(seed=7, n=120):
    r = np.random.default_rng(seed)
    y = r.integers(0, 2, n)
    d = pd.DataFrame({f"x{j}": np.where(r.random(n) < 0.02, 1 - y, y) for j in range(4)})
    d["y"] = y
    return d


@pytest.mark.parametrize("bad", [-1e-9, float("nan"), float("inf"), "1e-8", True])
def test_bad_absolute_tolerance_raises(bad):
    with pytest.raises(SettingsError, match="absolute_gap_tolerance"):
        rf.risk_score("y ~ a + b", _data(), absolute_gap_tolerance=bad)


def test_settings_and_json_round_trip():
    m = rf.risk_score("y ~ a + b", _data(), max_size=2, time_limit=20, absolute_gap_tolerance=1e-7)
    assert m.settings.absolute_gap_tolerance == 1e-7
    assert m.solver.settings["absolute_gap_tolerance"] == 1e-7
    m2 = rf.from_json(m.to_json())
    assert m2.settings.absolute_gap_tolerance == 1e-7
    assert "Certified by" in str(m2.summary())


def test_summary_names_the_tolerance_that_certified_the_run():
    d = _near_separable()
    # the branch-and-cut's LP margin leaves a relative gap that the absolute tolerance certifies
    m = rf.risk_score("y ~ .", d, max_size=4, time_limit=20, engine="tree")
    cert = m.summary().certificate().set_index("")["value"]
    assert m.status == "optimal" and m.gap > 1e-6
    assert cert["Certified by"] == "absolute gap tolerance"
    assert cert["Absolute gap"] == "0 within tolerance 1e-08"
    assert cert["Optimality gap"] == rf.reports.render.fmt_gap(m.gap)  # the relative gap, as it is
    easy = rf.risk_score("y ~ a + b", _data(), max_size=2, time_limit=20)
    cert = easy.summary().certificate().set_index("")["value"]
    assert cert["Certified by"] in ("relative gap tolerance", "both gap tolerances")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.OptimalityGapWarning)
        only_rel = rf.risk_score("y ~ a + b", _data(), max_size=2, time_limit=20, absolute_gap_tolerance=0.0)
    assert only_rel.summary().certificate().set_index("")["value"]["Certified by"] == "relative gap tolerance"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.OptimalityGapWarning)
        stopped = rf.risk_score("Malignant ~ .", rf.load_dataset("mammo"), max_size=5, node_limit=1, time_limit=20)
    assert stopped.status == "node_limit"
    cert = stopped.summary().certificate().set_index("")["value"]
    assert cert["Certified by"] == "not certified"
    assert cert["Absolute gap"] == rf.reports.render.fmt_absolute_gap(stopped.objective, stopped.lower_bound)
    assert float(cert["Absolute gap"]) == pytest.approx(stopped.objective - stopped.lower_bound, rel=1e-2)


def test_sklearn_estimator_passes_it_on():
    d = _near_separable()
    clf = rf.RiskScoreClassifier(max_size=4, control=rf.SearchControl(time_limit=20, absolute_gap_tolerance=0.0,
                                                                      engine="tree"))
    assert clf.get_params()["control"].absolute_gap_tolerance == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.OptimalityGapWarning)
        clf.fit(d.drop(columns="y"), d["y"])
    assert clf.model_.settings.absolute_gap_tolerance == 0.0
    assert clf.model_.status == "numerical_gap"
    clf.set_params(control=clf.control.replace(absolute_gap_tolerance=1e-8)).fit(d.drop(columns="y"), d["y"])
    assert clf.model_.status == "optimal"


def test_cli_option(tmp_path, capsys):
    path = tmp_path / "d.csv"
    _near_separable().to_csv(path, index=False)
    assert main(["fit", "y ~ .", "--data", str(path), "--max-size", "4", "--time-limit", "20",
                 "--absolute-gap-tolerance", "1e-8", "--engine", "tree"]) == 0
    out = capsys.readouterr().out
    assert "absolute gap tolerance" in out
    assert main(["fit", "y ~ .", "--data", str(path), "--max-size", "4", "--time-limit", "20",
                 "--absolute-gap-tolerance", "-1"]) == 2
    assert "--absolute-gap-tolerance" in capsys.readouterr().err


def test_cross_validate_and_size_path_pass_it_on():
    d = _data()
    cv = rf.cross_validate("y ~ a + b", d, folds=2, n_jobs=1, max_size=2, time_limit=20,
                           absolute_gap_tolerance=1e-7)
    assert all(m.settings.absolute_gap_tolerance == 1e-7 for m in cv.models)
    path = rf.size_path("y ~ a + b", d, sizes=[1, 2], time_limit=20, absolute_gap_tolerance=1e-10)
    assert all(m.settings.absolute_gap_tolerance == 1e-10 for m in path.models.values())
