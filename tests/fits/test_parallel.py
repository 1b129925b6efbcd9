"""Parallel folds from real scripts: no ``__main__`` guard, ``python -``, ``python -c``.

Worker processes must not re-run the calling script (how spawn-based pools break an R-style
script), must import this checkout of the package, and must give the table a one-process
run gives.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import riskformula as rf
from conftest import binary_frame

ROOT = Path(__file__).resolve().parents[2]
FORMULA = "y ~ flip(x1) + x2 + x3 + C(grp)"
FIT = dict(max_size=2, coef_range=(-3, 3), time_limit=10)

# an R user's script: top-level code only; it prints its result as one JSON line
SCRIPT = """\
import json
import sys

import pandas as pd
from joblib import Parallel, delayed

import riskformula as rf

print("script body ran", file=sys.stderr)  # a worker that re-ran the script would print it again
df = pd.read_csv({csv!r})
# a function defined in the script: loky sends it by value (cloudpickle), so the folds still run
# in workers instead of falling back to one process
cv = rf.cross_validate({formula!r}, df, folds=3, seed=2, n_jobs=2, context={{"flip": lambda x: 1 - x}},
                       **{fit!r})


def where():
    import riskformula
    return riskformula.__file__


# the same (reused) loky workers: which riskformula did they import?
workers = Parallel(n_jobs=2)(delayed(where)() for _ in range(2))
print(json.dumps({{"folds": cv.to_frame().drop(columns="time").to_dict("list"),
                  "notes": list(cv.notes), "parent": rf.__file__, "workers": workers}}))
"""


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "train.csv"
    binary_frame(150, seed=8, levels=("a", "b")).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def serial(csv):
    return rf.cross_validate(FORMULA, pd.read_csv(csv), folds=3, seed=2, n_jobs=1,
                             context={"flip": lambda x: 1 - x}, **FIT)


# each runs a script that starts worker processes (~15 s)
@pytest.mark.parametrize("how", [pytest.param(how, marks=pytest.mark.slow) for how in ("file", "stdin", "-c")])
def test_unguarded_script_runs_parallel_folds(how, csv, serial, tmp_path):
    code = SCRIPT.format(csv=str(csv), formula=FORMULA, fit=FIT)
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # the child imports this checkout, not the installed one
    if how == "file":
        script = tmp_path / "analysis.py"
        script.write_text(code)
        args, stdin = [sys.executable, str(script)], None
    elif how == "stdin":
        args, stdin = [sys.executable, "-"], code
    else:
        args, stdin = [sys.executable, "-c", code], None
    run = subprocess.run(args, input=stdin, capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "BrokenProcessPool" not in run.stderr
    assert run.stderr.count("script body ran") == 1, run.stderr  # the workers did not re-run it
    assert "cross-validation" not in run.stderr  # no bar: stderr is not a terminal
    out = json.loads(run.stdout)  # stdout holds only the script's own output
    expected = Path(rf.__file__).resolve()
    assert Path(out["parent"]).resolve() == expected
    assert [Path(w).resolve() for w in out["workers"]] == [expected, expected]
    got = pd.DataFrame(out["folds"])
    want = serial.to_frame().drop(columns="time")
    assert list(got["fold"]) == [1, 2, 3]
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert out["notes"] == list(serial.notes)  # in particular, no "fitted one after another"
    assert any(m.coef.get("flip(x1)", 0) != 0 for m in serial.models)  # the lambda is used



def test_unsendable_fit_arguments_fall_back_to_one_process(csv, serial):
    import threading

    context = {"flip": lambda x: 1 - x, "lock": threading.Lock()}  # a lock cannot be pickled
    cv = rf.cross_validate(FORMULA, pd.read_csv(csv), folds=3, seed=2, n_jobs=2, context=context, **FIT)
    assert any("fitted one after another" in n for n in cv.notes)
    pd.testing.assert_frame_equal(cv.folds.drop(columns="time"), serial.folds.drop(columns="time"))
