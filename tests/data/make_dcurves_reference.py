"""Regenerate ``dcurves_reference.json``: the dcurves package's net benefit of two fitted scores.

The ``dcurves`` package (Vickers' decision curve analysis) depends on lifelines, which pins
pandas < 3, so it is not in the ``test`` extra: installing it would downgrade the pandas a plain
``pip install riskformula`` gets. Instead, ``tests/netbenefit/test_net_benefit.py`` checks riskformula's
decision curves against the numbers dcurves produced, stored here with the inputs they came from.

Run from the repository root with the ``peers`` extra (in its own virtual environment)::

    python -m venv /tmp/peers && /tmp/peers/bin/pip install ".[test,peers]"
    /tmp/peers/bin/python tests/data/make_dcurves_reference.py

The inputs: two scores fitted to the even rows of the bundled mammography data (a logistic one
and a net-benefit one), their predicted risks on the odd rows and those rows' outcomes. The
output: dcurves' net benefit of each score, of treat-all and of treat-none at the thresholds
0.01, 0.02, ..., 0.99. With the ``peers`` extra installed the test also runs dcurves live on the
stored inputs.
"""

from __future__ import annotations

import json
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

import riskformula as rf
from riskformula.errors import OptimalityGapWarning

OUT = Path(__file__).with_name("dcurves_reference.json")


def main() -> None:
    import dcurves

    df = rf.load_dataset("mammo")
    train, test = df.iloc[::2], df.iloc[1::2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimalityGapWarning)
        m1 = rf.risk_score("Malignant ~ .", train, max_size=3, time_limit=20)
        m2 = rf.risk_score("Malignant ~ .", train, objective="net_benefit", max_size=3, solver=None, time_limit=3)
    t = np.round(np.arange(1, 100) / 100, 2)
    frame = pd.DataFrame({"y": m1.observed(test).to_numpy(int), "logistic": m1.predict(test).to_numpy(float),
                          "nb": m2.predict(test).to_numpy(float)})
    ref = dcurves.dca(data=frame, outcome="y", modelnames=["logistic", "nb"], thresholds=t)
    out = {
        "about": "dcurves.dca net benefit of two riskformula scores on the odd rows of the mammo data; "
                 "regenerate with tests/data/make_dcurves_reference.py",
        "versions": {p: version(p) for p in ("dcurves", "pandas", "numpy", "riskformula")},
        "thresholds": t.tolist(),
        "y": frame["y"].tolist(),
        "risk": {name: frame[name].tolist() for name in ("logistic", "nb")},
        "net_benefit": {name: ref.loc[ref["model"] == name, "net_benefit"].astype(float).tolist()
                        for name in ("logistic", "nb", "all", "none")},
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT} ({len(frame)} rows, {len(t)} thresholds)")


if __name__ == "__main__":
    main()
