"""The command line with a time-to-event score: ``riskformula fit 'Surv(t, d) ~ ...' --horizon``
picks the Cox objective, saves the card; ``predict``, ``evaluate`` and ``export`` on the saved
model give the risk within the horizon(s) that ``predict(newdata, horizon=h)`` gives; a bad
horizon is one line on stderr with exit status 2."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.cli import DATA_ERROR, USAGE_ERROR, main
from test_export_survival import surv_frame

FORMULA = "Surv(t, d) ~ threshold(age, grid=4) + C(a) + C(c)"
FIT = ["--max-size", "3", "--coef-range", "-3", "3", "--scale", "2", "--time-limit", "30", "--no-progress"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The data as a CSV and the model the command line fitted and saved (and its output)."""
    folder = tmp_path_factory.mktemp("cli_surv")
    df = surv_frame()
    data, path = folder / "d.csv", folder / "m.json"
    df.to_csv(data, index=False)
    assert main(["fit", FORMULA, "--data", str(data), "--horizon", "3", "--horizon", "6", "--ties", "breslow",
                 "--json", str(path), *FIT]) == 0
    return df, data, path, rf.from_json(path.read_text())


def _fails(capsys, argv, *fragments, code=USAGE_ERROR):
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("riskformula: error: ") and err.count("\n") == 1, err
    for f in fragments:
        assert f in err, err


def test_fit_picks_cox_and_reads_horizons_and_ties(saved, capsys):
    df, data, _, m = saved
    assert isinstance(m, rf.SurvivalScore) and m.horizons == (3.0, 6.0) and m.ties == "breslow"
    assert m.status == "optimal"
    api = rf.risk_score(FORMULA, df, horizon=[3, 6], objective=rf.cox(ties="breslow"), max_size=3, coef_range=(-3, 3), scale=2,
                        time_limit=30)
    assert m.score_card().equals(api.score_card()) and m.objective == pytest.approx(api.objective, rel=1e-12)
    # a comma list is the same as the repeated option; the summary names both horizons
    capsys.readouterr()
    assert main(["fit", FORMULA, "--data", str(data), "--horizon", "6,3", "--ties", "breslow",
                 "--objective", "cox", *FIT]) == 0
    out = capsys.readouterr().out
    assert "Time-to-event risk score" in out and "risk within 3" in out and "risk within 6" in out


def test_predict_writes_the_risk_within_each_horizon(saved, tmp_path):
    df, data, path, m = saved
    out = tmp_path / "scored.csv"
    assert main(["predict", str(path), "--data", str(data), "--out", str(out)]) == 0
    got = pd.read_csv(out)
    assert list(got.columns) == [*df.columns, "score", "risk_3", "risk_6"]
    np.testing.assert_allclose(got["score"], m.score(df), rtol=0, atol=0)
    np.testing.assert_allclose(got[["risk_3", "risk_6"]], m.predict(df, horizon=[3, 6]), rtol=1e-15)
    assert main(["predict", str(path), "--data", str(data), "--out", str(out), "--horizon", "4.5"]) == 0
    got = pd.read_csv(out)
    assert list(got.columns) == [*df.columns, "score", "risk_4.5"]
    np.testing.assert_allclose(got["risk_4.5"], m.predict(df, horizon=4.5), rtol=1e-15)


def test_evaluate_at_the_horizons(saved, capsys):
    _, data, path, _ = saved
    capsys.readouterr()
    assert main(["evaluate", str(path), "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert "Harrell's C" in out and "Calibration within t = 6" in out
    assert main(["evaluate", str(path), "--data", str(data), "--horizon", "4"]) == 0
    out = capsys.readouterr().out
    assert "Calibration within t = 4" in out and "t = 6" not in out


def test_exports_from_the_shell(saved, tmp_path, capsys):
    df, _, path, m = saved
    con = sqlite3.connect(":memory:")
    df.to_sql("patients", con, index=False)
    sql = tmp_path / "s.sql"
    for extra, names, hs in [([], ["risk_3", "risk_6"], [3, 6]),
                             (["--risk-map", "formula", "--horizon", "5"], ["risk_5"], [5])]:
        assert main(["export", str(path), "--to", "sql", "--table", "patients", "--out", str(sql), *extra]) == 0
        assert ("EXP(" in sql.read_text()) == ("formula" in extra)
        got = pd.read_sql(sql.read_text(), con)
        np.testing.assert_allclose(got[names].to_numpy(), m.predict(df, horizon=hs).to_numpy(), rtol=0, atol=1e-9)
    pmml = tmp_path / "m.pmml"
    assert main(["export", str(path), "--to", "pmml", "--out", str(pmml)]) == 0
    assert pmml.read_text() == m.to_pmml()
    assert main(["export", str(path), "--to", "pmml", "--out", str(pmml), "--horizon", "4"]) == 0
    assert pmml.read_text() == m.to_pmml(horizon=4)
    assert main(["export", str(path), "--to", "pmml", "--out", str(pmml), "--horizon", "3,6"]) == 0
    assert pmml.read_text() == m.to_pmml(horizon=[3, 6])
    page = tmp_path / "m.html"
    assert main(["export", str(path), "--to", "html", "--out", str(page)]) == 0
    assert "Risk within 3" in page.read_text() and "Risk within 6" in page.read_text()


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "", "3,", "1e999"])
def test_a_horizon_that_is_not_a_time_is_one_clear_message(saved, capsys, value):
    _, data, path, _ = saved
    _fails(capsys, ["predict", str(path), "--data", str(data), "--horizon", value], "--horizon expects times")
    _fails(capsys, ["export", str(path), "--to", "sql", "--horizon", value], "--horizon expects times")
    _fails(capsys, ["fit", FORMULA, "--data", str(data), "--horizon", value], "--horizon expects times")


def test_horizons_out_of_range_or_out_of_place(saved, capsys, tmp_path):
    df, data, path, _ = saved
    _fails(capsys, ["predict", str(path), "--data", str(data), "--horizon", "1e6"], "longest follow-up")
    _fails(capsys, ["export", str(path), "--to", "pmml", "--horizon", "-2"], "horizon")
    _fails(capsys, ["export", str(path), "--to", "html", "--horizon", "3"], "--horizon applies to --to sql")
    _fails(capsys, ["fit", FORMULA, "--data", str(data), "--horizon", "0", *FIT], "--horizon must be a time > 0")
    _fails(capsys, ["fit", FORMULA, "--data", str(data), "--horizon", "1e6", *FIT], "longest follow-up")
    # a binary outcome has no horizons: fit and a saved logistic score say so
    _fails(capsys, ["fit", "d ~ a + C(c)", "--data", str(data), "--horizon", "3"], "--horizon does not apply")
    logistic = tmp_path / "logistic.json"
    logistic.write_text(rf.risk_score("d ~ a + C(c)", df, max_size=2, time_limit=10).to_json())
    _fails(capsys, ["predict", str(logistic), "--data", str(data), "--horizon", "3"], "time-to-event model")
    _fails(capsys, ["export", str(logistic), "--to", "sql", "--horizon", "3"], "time-to-event score")
    # a Cox objective needs a Surv outcome
    _fails(capsys, ["fit", "d ~ a", "--data", str(data), "--objective", "cox"], "Surv(time, event)",
           code=DATA_ERROR)


def test_help_documents_the_options(capsys):
    for cmd in (["fit"], ["predict"], ["evaluate"], ["export"]):
        with pytest.raises(SystemExit):
            main([*cmd, "--help"])
        out = capsys.readouterr().out
        assert "--horizon" in out and "comma-separated" in out
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--ties {efron,breslow}" in out and "Surv(time, event)" in out and "cox" in out
