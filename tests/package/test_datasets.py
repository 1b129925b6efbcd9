"""The data sets shipped with riskformula: what data/README.md says about them is true."""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path

import pandas as pd
import pytest

import riskformula as rf
from riskformula.cli import main as cli_main
from riskformula.datasets import _AVAILABLE

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
# | `name` | `file` | rows | predictors | `outcome` (event) | events | `sha256` |
ROW = re.compile(r"^\| `(\w+)` \| `([\w.]+)` \| (\d+) \| (\d+) \| `(\w+)` \(([^)]+)\) \| (\d+) \| `([0-9a-f]{64})` \|$")


def readme_table() -> dict[str, dict]:
    rows = {}
    for line in (DATA / "README.md").read_text().splitlines():
        m = ROW.match(line)
        if m:
            name, file, n, p, outcome, event, events, sha = m.groups()
            rows[name] = dict(file=file, rows=int(n), predictors=int(p), outcome=outcome,
                              event=event.strip('`"'), events=int(events), sha=sha)
    return rows


TABLE = readme_table()


def shared_data_dir() -> Path | None:
    """The project's reference copies (``shared/data`` beside the checkout, or beside the folder
    holding a git worktree), if present."""
    for parent in ROOT.parents[:2]:
        if (parent / "shared" / "data").is_dir():
            return parent / "shared" / "data"
    return None


def test_readme_table_lists_every_data_set_and_every_file():
    assert set(TABLE) == set(_AVAILABLE) == set(rf.list_datasets()["name"])
    shipped = {p.name for p in DATA.iterdir() if p.name != "README.md"}
    assert shipped == {row["file"] for row in TABLE.values()}


def test_each_data_file_is_stored_once():
    # the package reads data/ (or its installed copy); a second copy inside the package would drift
    copies = [p for p in (ROOT / "riskformula").rglob("*") if p.suffix in (".csv", ".gz", ".parquet")]
    assert copies == []


@pytest.mark.parametrize("name", list(TABLE))
def test_data_set_matches_readme(name):
    row = TABLE[name]
    raw = gzip.decompress((DATA / row["file"]).read_bytes())
    assert hashlib.sha256(raw).hexdigest() == row["sha"]
    df = rf.load_dataset(name)
    assert df.shape == (row["rows"], row["predictors"] + 1)
    assert df.columns[0] == row["outcome"]
    assert not df.isna().any().any()
    y = df[row["outcome"]]
    if row["event"] == "1":
        assert pd.api.types.is_integer_dtype(y) and set(y.unique()) == {0, 1}
        assert int(y.sum()) == row["events"]
    else:
        assert set(y.unique()) == {"M", "B"}
        assert int((y == row["event"]).sum()) == row["events"]
    listed = rf.list_datasets().set_index("name").loc[name]
    assert (listed.rows, listed.predictors, listed.outcome, listed.events) == (
        row["rows"], row["predictors"], row["outcome"], row["events"])


@pytest.mark.parametrize("name", [n for n in TABLE if n != "wdbc"])
def test_benchmark_data_equal_the_reference_copies(name):
    shared = shared_data_dir()
    if shared is None:
        pytest.skip("no shared/data folder beside this checkout to compare with")
    path = shared / f"{name}.csv"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == TABLE[name]["sha"]
    pd.testing.assert_frame_equal(rf.load_dataset(name), pd.read_csv(path), check_exact=True)


def test_each_call_returns_a_fresh_frame():
    a = rf.load_dataset("mammo")
    a.loc[0, "Malignant"] = 99
    a["extra"] = 1
    b = rf.load_dataset("mammo")
    assert "extra" not in b and b.loc[0, "Malignant"] in (0, 1)
    assert b is not rf.load_dataset("mammo")


def test_unknown_name_lists_the_available_ones():
    with pytest.raises(rf.SettingsError, match=r"unknown data set 'Adult'\. Did you mean 'adult'\?.*"
                       r"wdbc, breastcancer, mammo, adult, mushroom, spambase"):
        rf.load_dataset("Adult")
    with pytest.raises(rf.SettingsError, match="got int"):
        rf.load_dataset(3)


def test_wheel_packages_cover_the_source_tree():
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "riskformula").rglob("__init__.py")}
    assert set(config["packages"]) == found | {"riskformula.datasets.files"}
    assert config["package-dir"] == {"riskformula.datasets.files": "data"}
    assert {"*.csv.gz", "README.md"} <= set(config["package-data"]["riskformula.datasets.files"])


def test_cli_fits_a_shipped_data_set(capsys):
    assert cli_main(["fit", "Benign ~ .", "--data", "breastcancer", "--max-size", "2", "--time-limit", "30"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"Rows used\s+683\b", out) and re.search(r"Events\s+239\b", out)
