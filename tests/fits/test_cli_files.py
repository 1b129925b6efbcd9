"""The command line's files: a JSON output into a missing folder fails before the fit, malformed or
missing data files are clear errors, and ``python -m riskformula`` runs the command line."""


import os

import subprocess

import sys


from pathlib import Path


import pytest

import riskformula as rf

from riskformula.cli import main


from conftest import binary_frame

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data():
    return binary_frame(200, seed=3)


@pytest.fixture
def csv(data, tmp_path):
    path = tmp_path / "d.csv"
    data.to_csv(path, index=False)
    return str(path)

def _fails(capsys, argv, *fragments, code=1):
    """The command fails with one line on stderr and exit code ``code`` (1: data, 2: usage)."""
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert out == ""  # nothing fitted, nothing printed
    assert err.startswith("riskformula: error: ") and "Traceback" not in err
    for f in fragments:
        assert f in err, err


def test_json_into_a_missing_folder_fails_before_fitting(csv, tmp_path, capsys, monkeypatch):
    def no_fit(*a, **k):
        raise AssertionError("the fit ran before the output path was checked")
    monkeypatch.setattr("riskformula.fit.risk_score", no_fit)
    target = tmp_path / "missing" / "m.json"
    _fails(capsys, ["fit", "y ~ x1", "--data", csv, "--json", str(target)], "--json", "does not exist", code=2)
    _fails(capsys, ["fit", "y ~ x1", "--data", csv, "--json", str(tmp_path)], "is a folder", code=2)


def test_json_is_still_written(csv, tmp_path, capsys):
    target = tmp_path / "m.json"
    assert main(["fit", "y ~ x1", "--data", csv, "--json", str(target), "--time-limit", "10", "--no-progress"]) == 0
    assert rf.from_json(target.read_text()).formula == "y ~ x1"


@pytest.mark.parametrize("content, problem", [
    ('y,x\n1,2\n0,"unterminated\n', "ParserError"),
    (b"\xff\xfe\x00y,x\n", "UnicodeDecodeError"),
    ("", "EmptyDataError"),
])
def test_malformed_csv_is_a_clear_error(tmp_path, capsys, content, problem):
    path = tmp_path / "bad.csv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    _fails(capsys, ["fit", "y ~ x", "--data", str(path)], str(path), problem)


def test_data_folder_or_missing_file_is_a_clear_error(tmp_path, capsys):
    _fails(capsys, ["fit", "y ~ x", "--data", str(tmp_path)], str(tmp_path), "is a folder")
    _fails(capsys, ["fit", "y ~ x", "--data", str(tmp_path / "nope.csv")], "no file")


def test_python_m_runs_the_cli(csv):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ok = subprocess.run([sys.executable, "-m", "riskformula", "--help"], capture_output=True, text=True,
                        env=env, cwd=ROOT, timeout=120)
    assert ok.returncode == 0 and "usage: riskformula" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "riskformula", "fit", "y ~ x1", "--data", csv + ".missing"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert bad.returncode == 1 and bad.stderr.startswith("riskformula: error: no file")


def test_a_header_naming_a_column_twice_is_refused(data, tmp_path, capsys):
    # pandas would read the second `x1` as `x1.1`, and `y ~ .` would use both without a word
    path = tmp_path / "twice.csv"
    text = data.to_csv(index=False)
    header, rest = text.split("\n", 1)
    path.write_text(header.replace("x2", "x1", 1) + "\n" + rest)
    _fails(capsys, ["fit", "y ~ .", "--data", str(path), "--no-progress"], "'x1' twice", "its own name")


def test_predict_does_not_overwrite_a_column_of_the_data(csv, data, tmp_path, capsys):
    model = tmp_path / "m.json"
    assert main(["fit", "y ~ x1", "--data", csv, "--json", str(model), "--time-limit", "10", "--no-progress"]) == 0
    capsys.readouterr()
    for name in ("risk", "score"):
        path = tmp_path / f"with_{name}.csv"
        data.assign(**{name: 1.0}).to_csv(path, index=False)
        _fails(capsys, ["predict", str(model), "--data", str(path)], f"already has a column '{name}'",
               "rename that column")
    # a column the prediction does not write is kept as it is
    path = tmp_path / "with_other.csv"
    data.assign(risk_note="keep").to_csv(path, index=False)
    assert main(["predict", str(model), "--data", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("risk_note,score,risk")


def test_a_model_file_is_named_in_its_errors_and_may_start_with_a_bom(csv, tmp_path, capsys):
    model = tmp_path / "m.json"
    assert main(["fit", "y ~ x1", "--data", csv, "--json", str(model), "--time-limit", "10", "--no-progress"]) == 0
    capsys.readouterr()
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + model.read_bytes())  # as some editors save it
    assert main(["card", str(bom)]) == 0
    capsys.readouterr()
    cut = tmp_path / "cut.json"
    cut.write_text(model.read_text()[:100])
    _fails(capsys, ["card", str(cut)], f"the model file {str(cut)!r}")


def test_option_names_in_messages_are_the_command_lines(csv, capsys):
    _fails(capsys, ["fit", "y ~ x1", "--data", csv, "--max-size", "-1", "--no-progress"], "--max-size must", code=2)
    _fails(capsys, ["fit", "y ~ nope", "--data", csv, "--no-progress"], f"--data {csv!r}")
