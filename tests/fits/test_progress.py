"""Progress output: a fit's status line, the bars of cross_validate and size_path, the CLI flag.

Status lines appear once per ``STATUS_INTERVAL`` seconds; the tests set it to 0 so every check
prints, and nothing depends on how fast the machine is.
"""

import sys
import types

import pytest

import riskformula as rf
from conftest import binary_frame
from riskformula import _progress, cli
from riskformula.errors import SettingsError
from riskformula.solver import search_log

FORMULA = "y ~ x1 + x2 + x3 + C(grp)"
FIT = dict(max_size=2, coef_range=(-3, 3), time_limit=10, engine="tree")  # the tree reports as it goes


@pytest.fixture(scope="module")
def data():
    return binary_frame(160, seed=5, levels=("a", "b"), intercept=-1.2, effect_c=0.0)


@pytest.fixture
def every_check(monkeypatch):
    """A status line at every check of the search instead of every 10 s."""
    monkeypatch.setattr(search_log, "STATUS_INTERVAL", 0.0)


def status_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if " nodes " in line and " gap " in line]


def test_fit_status_line_on_stderr(data, every_check, capsys):
    m = rf.risk_score(FORMULA, data, progress=True, **FIT)
    out, err = capsys.readouterr()
    assert out == ""  # a script's stdout stays clean
    lines = status_lines(err)
    assert len(lines) >= 2
    for line in lines:
        assert "s  nodes" in line and "best" in line and "bound" in line and "%" in line
    # the last line says how the run ended, with the final counts
    assert lines[-1].endswith("[optimal]") and f"nodes {m.solver.nodes:>8d}" in lines[-1]
    assert m.solver.log == ()  # status lines are not the solver log


def test_fit_quiet_when_progress_off_or_by_default(data, every_check, capsys):
    off = rf.risk_score(FORMULA, data, progress=False, **FIT)
    assert capsys.readouterr() == ("", "")
    auto = rf.risk_score(FORMULA, data, **FIT)  # pytest's captured stderr is no terminal
    assert capsys.readouterr() == ("", "")
    assert off.coef.equals(auto.coef)


def test_verbose_log_replaces_status_line(data, every_check, capsys):
    rf.risk_score(FORMULA, data, progress=True, verbose=True, **FIT)
    out, err = capsys.readouterr()
    assert status_lines(out) and out.rstrip().endswith("[optimal]")
    assert err == ""


def test_progress_is_checked(data):
    with pytest.raises(SettingsError, match="`progress` must be True, False or None"):
        rf.risk_score(FORMULA, data, progress="yes", **FIT)
    with pytest.raises(SettingsError, match="`progress`"):
        rf.cross_validate(FORMULA, data, folds=3, progress=1, **FIT)


def test_auto_means_terminal_or_ipython(monkeypatch):
    class Stream:
        def __init__(self, tty):
            self.tty = tty

        def isatty(self):
            return self.tty

    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    monkeypatch.setattr(sys, "stderr", Stream(True))
    assert _progress.resolve(None) is True
    monkeypatch.setattr(sys, "stderr", Stream(False))
    assert _progress.resolve(None) is False
    assert _progress.resolve(True) is True and _progress.resolve(False) is False
    # an IPython/Jupyter session counts as interactive even though its stderr is no terminal
    shell = types.ModuleType("IPython")
    shell.get_ipython = lambda: object()
    monkeypatch.setitem(sys.modules, "IPython", shell)
    assert _progress.resolve(None) is True
    shell.get_ipython = lambda: None  # IPython imported, but no shell running (e.g. a plain script)
    assert _progress.resolve(None) is False


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_cross_validate_bar(data, every_check, capsys, n_jobs):
    cv = rf.cross_validate(FORMULA, data, folds=3, seed=1, n_jobs=n_jobs, progress=True, **FIT)
    out, err = capsys.readouterr()
    assert out == ""
    assert "cross-validation" in err and "3/3" in err
    if n_jobs == 1:  # (workers do not see this process's STATUS_INTERVAL, nor write to capsys)
        assert not status_lines(err)  # the fold fits print no lines of their own under the bar
        rf.cross_validate(FORMULA, data, folds=3, seed=1, n_jobs=n_jobs, **FIT)
        assert capsys.readouterr() == ("", "")  # auto: off under pytest
    quiet = rf.cross_validate(FORMULA, data, folds=3, seed=1, n_jobs=n_jobs, progress=False, **FIT)
    assert capsys.readouterr() == ("", "")
    assert cv.folds.drop(columns="time").equals(quiet.folds.drop(columns="time"))


def test_size_path_bar(data, every_check, capsys):
    path = rf.size_path(FORMULA, data, sizes=[1, 2], progress=True, coef_range=(-3, 3), time_limit=10)
    out, err = capsys.readouterr()
    assert out == "" and "size path" in err and "2/2" in err and "size 2" in err
    assert not status_lines(err)
    rf.size_path(FORMULA, data, sizes=[1, 2], coef_range=(-3, 3), time_limit=10)
    assert capsys.readouterr() == ("", "")
    assert list(path.table["size"]) == [1, 2]


def test_cli_progress_flag(data, every_check, capsys, tmp_path):
    csv = tmp_path / "d.csv"
    data.to_csv(csv, index=False)
    args = ["fit", FORMULA, "--data", str(csv), "--max-size", "2", "--coef-range", "-3", "3", "--engine", "tree"]
    assert cli.main(args + ["--progress"]) == 0
    out, err = capsys.readouterr()
    assert FORMULA in out  # the summary goes to stdout
    assert not status_lines(out) and status_lines(err)[-1].endswith("[optimal]")
    assert cli.main(args + ["--no-progress"]) == 0
    assert capsys.readouterr().err == ""
    assert cli.main(args) == 0  # auto: stderr is no terminal here
    assert capsys.readouterr().err == ""
