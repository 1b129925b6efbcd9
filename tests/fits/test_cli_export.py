"""`riskformula export MODEL.json --to html|sql|pmml`: a saved score written where it is used."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.cli import main


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    df = rf.load_dataset("breastcancer")
    m = rf.risk_score("Benign ~ ClumpThickness + threshold(BareNuclei) + C(Mitoses)", df, max_size=3, time_limit=10)
    path = tmp_path_factory.mktemp("cli") / "model.json"
    path.write_text(m.to_json())
    return df, m, path


def test_sql_from_the_shell_scores_like_predict(saved, tmp_path, capsys):
    df, m, path = saved
    out = tmp_path / "score.sql"
    assert main(["export", str(path), "--to", "sql", "--table", "patients", "--out", str(out)]) == 0
    con = sqlite3.connect(":memory:")
    df.to_sql("patients", con, index=False)
    got = pd.read_sql(out.read_text(), con)
    np.testing.assert_allclose(got["risk"].to_numpy(), m.predict(df).to_numpy(), rtol=0, atol=1e-9)
    assert main(["export", str(path), "--to", "sql"]) == 0  # to standard output
    assert "SELECT" in capsys.readouterr().out


@pytest.mark.parametrize("to, marker", [("html", "<!DOCTYPE html>"), ("pmml", "<PMML")])
def test_html_and_pmml(saved, tmp_path, to, marker):
    _, m, path = saved
    out = tmp_path / f"model.{to}"
    assert main(["export", str(path), "--to", to, "--out", str(out)]) == 0
    text = out.read_text()
    assert marker in text[:400]
    if to == "pmml":  # the same document as the fitted model's own export
        assert text == m.to_pmml()


def test_bad_model_files_exit_1_with_one_line(tmp_path, capsys):
    assert main(["export", str(tmp_path / "none.json"), "--to", "sql"]) == 1
    assert capsys.readouterr().err.count("\n") == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "riskformula/risk-score", "format_version": 1, "digest": "x"}')
    assert main(["export", str(bad), "--to", "sql"]) == 1
    assert "digest" in capsys.readouterr().err
    df = rf.load_dataset("breastcancer")
    m = rf.risk_score("Benign ~ np.log(ClumpThickness)", df, max_size=1, time_limit=5)
    expr = tmp_path / "expr.json"
    expr.write_text(m.to_json())
    assert main(["export", str(expr), "--to", "sql"]) == 1
    assert "trusted=True" in capsys.readouterr().err
    json.loads(m.to_json())  # the document itself is fine; only loading it untrusted is refused


# --- the rest of the round trip: fit -> save -> card / predict / evaluate ---------------------

def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"riskformula {rf.__version__}"


def test_fit_save_card_predict_evaluate(tmp_path, capsys):
    df = rf.load_dataset("breastcancer")
    data, model = tmp_path / "bc.csv", tmp_path / "m.json"
    df.to_csv(data, index=False)
    assert main(["fit", "Benign ~ .", "--data", str(data), "--max-size", "2", "--min-size", "2", "--time-limit", "10",
                 "--no-progress", "--json", str(model)]) == 0
    m = rf.from_json(model.read_text())
    assert m.size == 2
    capsys.readouterr()
    assert main(["card", str(model), "--format", "markdown"]) == 0
    assert capsys.readouterr().out.strip() == m.card("markdown").strip()
    out = tmp_path / "scored.csv"
    assert main(["predict", str(model), "--data", str(data), "--out", str(out)]) == 0
    scored = pd.read_csv(out, float_precision="round_trip")
    assert list(scored.columns) == [*df.columns, "score", "risk"]
    np.testing.assert_allclose(scored["risk"], m.predict(df), rtol=1e-15)
    assert main(["evaluate", str(model), "--data", str(data)]) == 0
    assert "AUC" in capsys.readouterr().out
    # a data error is exit 1 with one line, nothing on stdout
    assert main(["predict", str(model), "--data", str(tmp_path / "none.csv")]) == 1
    got = capsys.readouterr()
    assert got.out == "" and got.err.count("\n") == 1


def test_strict_fit_flags_an_unproven_score_and_warnings_are_one_line(tmp_path, capsys):
    argv = ["fit", "Benign ~ .", "--data", "breastcancer", "--max-size", "5", "--node-limit", "2",
            "--time-limit", "10", "--no-progress"]
    assert main(argv) == 0  # the score and its gap are printed; the status is in the report
    err = capsys.readouterr().err
    assert err.startswith("riskformula: warning: stopped at the node limit") and err.count("\n") == 1
    assert main([*argv, "--strict"]) == 3
    assert main(["fit", "Benign ~ .", "--data", "breastcancer", "--n-jobs", "0"]) == 2  # a usage error


def test_a_reader_that_stops_early_gets_no_traceback(saved):
    # `riskformula export model.json --to sql | head -1`: the pipe closes under the writer
    import subprocess
    import sys
    _, _, path = saved
    proc = subprocess.Popen([sys.executable, "-m", "riskformula", "export", str(path), "--to", "sql"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # as `head` does once it has its lines: here before anything is written
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
