"""dask and scikit-learn stay optional: `import riskformula` loads neither, and a frame is
recognised as a dask frame without importing dask."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

from riskformula.backends import is_dask_frame, is_dask_series

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(ROOT)}, cwd=ROOT)


def test_importing_and_using_riskformula_imports_neither_dask_nor_sklearn():
    _run("import sys, pandas as pd, riskformula as rf\n"
         "df = rf.load_dataset('breastcancer')\n"
         "m = rf.risk_score('Benign ~ BareNuclei', df, max_size=1, time_limit=5, progress=False)\n"
         "m.predict(df); rf.evaluate(m, df)\n"
         "loaded = sorted(n for n in sys.modules if n.split('.')[0] in ('dask', 'distributed', 'sklearn'))\n"
         "assert not loaded, loaded\n")


def test_matplotlib_stays_optional():
    """A plain install (no `plot` extra) imports and fits; a plot says which extra it needs."""
    _run("import sys\n"
         "for n in ('matplotlib', 'matplotlib.pyplot', 'matplotlib.artist', 'matplotlib.text', 'matplotlib.figure'):\n"
         "    sys.modules[n] = None\n"
         "import riskformula as rf\n"
         "df = rf.load_dataset('breastcancer')\n"
         "m = rf.risk_score('Benign ~ BareNuclei', df, max_size=1, time_limit=5, progress=False)\n"
         "m.predict(df); print(m.summary())\n"
         "try:\n"
         "    rf.plots.plot_reliability(m, df)\n"
         "except ImportError as e:\n"
         "    assert 'riskformula[plot]' in str(e), e\n"
         "else:\n"
         "    raise AssertionError('a plot without matplotlib')\n")


def test_the_classifier_is_loaded_on_first_use():
    _run("import sys, riskformula as rf\n"
         "assert 'riskformula.sklearn' not in sys.modules\n"
         "try:\n"
         "    import sklearn\n"
         "except ImportError:\n"
         "    raise SystemExit(0)\n"
         "assert rf.RiskScoreClassifier.__module__ == 'riskformula.sklearn'\n")


def test_pandas_objects_are_not_dask_collections():
    df = pd.DataFrame({"a": [1, 2]})
    assert not is_dask_frame(df) and not is_dask_series(df["a"])
