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
