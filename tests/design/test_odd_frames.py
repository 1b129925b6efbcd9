"""A fuzz of odd data frames (tests/design/fuzz_frames.py): every one gets a correct fit (whose predict
agrees with its SQL, the caller's frame unchanged) or one clear riskformula error, never a raw
traceback or a silently wrong model."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_frames import KINDS, classify, odd_frames, run  # noqa: E402


def _report(counts, outcomes, bad_kinds=("raw_traceback", "silent_wrong")) -> str:
    lines = [f"tried {counts['tried']}: " + ", ".join(f"{k} {counts[k]}" for k in KINDS)]
    for name, out in outcomes.items():
        if out.kind in bad_kinds:
            lines.append(f"--- {out.kind}: {name}\n{out.detail}")
    return "\n".join(lines)


@pytest.mark.slow
def test_odd_frames_get_a_clear_error_or_a_correct_fit():
    counts, outcomes = run(odd_frames(150, seed=0))
    print(_report(counts, outcomes))
    assert counts["tried"] >= 100
    assert counts["raw_traceback"] == 0 and counts["silent_wrong"] == 0, _report(counts, outcomes)
    # the generator reaches both ends: fits and refusals
    assert counts["correct"] >= 10 and counts["clear_error"] >= 10


def test_a_few_odd_frames():
    """The same check on the fixed cases and a few random frames (the full fuzz is marked slow)."""
    cases = list(odd_frames(40, seed=1))
    counts, outcomes = run(cases)
    print(_report(counts, outcomes))
    assert counts["raw_traceback"] == 0 and counts["silent_wrong"] == 0, _report(counts, outcomes)


@pytest.mark.parametrize("name, kind", [
    ("MultiIndex columns", "clear_error"), ("data as a dataset name", "clear_error"),
    ("inf in threshold", "clear_error"), ("nullable boolean item", "correct"), ("weights 1e308", "correct"),
    ("weights 1e-320", "correct"), ("min_bin rule", "clear_error"), ("empty frame", "clear_error"),
])
def test_the_fixed_cases(name, kind):
    case = next(c for c in odd_frames(30, seed=2) if c.name == name)
    out = classify(case)
    assert out.kind == kind, out.detail
    if name == "min_bin rule":
        assert "min_bin" in out.detail and "constant" not in out.detail
    if name == "data as a dataset name":  # a bundled data set's name: load it
        assert "rf.load_dataset('wdbc')" in out.detail


def test_the_classifier_sees_a_silent_wrong_model(monkeypatch):
    """The classifier is no rubber stamp: a predict that disagrees with the SQL is "silent_wrong"."""
    import riskformula as rf
    case = next(c for c in odd_frames(30, seed=2) if c.name == "weights 1e308")
    import pandas as pd
    monkeypatch.setattr(rf.RiskScore, "predict", lambda self, data: pd.Series(0.123, index=data.index))
    assert classify(case).kind == "silent_wrong"


def _frame(x, n=None):
    import numpy as np
    import pandas as pd
    n = len(x) if n is None else n
    return pd.DataFrame({"y": np.arange(n) % 2, "x": x})


@pytest.mark.parametrize("what, x, formula, words", [
    ("lists", [[1, 2]] * 20, "y ~ x", "holds lists"),
    ("dicts", [{"a": 1}] * 20, "y ~ .", "holds dicts"),
    ("sets", [{1}] * 20, "y ~ C(x)", "holds sets"),
    ("complex", [1 + 1j, 2 + 0j] * 10, "y ~ x", "complex numbers"),
    ("complex threshold", [1 + 1j, 2 + 0j] * 10, "y ~ threshold(x)", "complex numbers"),
    ("uint64 beyond 2^63", [2 ** 63 + k % 3 for k in range(20)], "y ~ x", r"beyond 2\^53"),
    ("uint64 beyond 2^63 threshold", [2 ** 63 + k % 3 for k in range(20)], "y ~ threshold(x)", r"beyond 2\^53"),
    ("period", "period", "y ~ x", "dates or durations"),
])
def test_odd_columns_get_one_clear_error(what, x, formula, words):
    import numpy as np
    import pandas as pd

    import riskformula as rf
    if x == "period":
        x = pd.period_range("2020-01", periods=20, freq="M")
    elif what.startswith("uint64"):
        x = np.array(x, dtype=np.uint64)
    data = _frame(x)
    before = data.copy(deep=True)
    with pytest.raises(rf.RiskFormulaError, match=words):
        rf.risk_score(formula, data, node_limit=5, progress=False)
    assert data.astype(str).equals(before.astype(str))


def test_big_integers_fit_as_categories():
    import numpy as np

    import riskformula as rf
    x = np.array([2 ** 63 + k % 3 for k in range(30)], dtype=np.uint64)
    m = rf.risk_score("y ~ C(x)", _frame(x), node_limit=5, progress=False)
    assert len(m.design.categories["x"]) == 3  # three levels, not one "constant"


def test_an_infinite_value_is_refused_at_predict_as_the_sql_refuses_it():
    import numpy as np
    import pandas as pd

    import riskformula as rf
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    data = pd.DataFrame({"x": x, "y": (x + rng.normal(size=200) > 0).astype(int)})
    m = rf.risk_score("y ~ threshold(x)", data, node_limit=10, max_size=2, progress=False)
    new = pd.DataFrame({"x": [0.5, np.inf, -np.inf]})
    with pytest.raises(rf.DataError, match="infinite"):
        m.predict(new)
    from fuzz_frames import check_model
    assert check_model(m, new) == ""  # predict refuses rows 2 and 3 one by one, the SQL gives NULL


def test_data_as_a_path_says_how_to_read_it():
    import riskformula as rf
    with pytest.raises(rf.DataError, match=r"pd\.read_csv\('data/patients\.csv'\)"):
        rf.risk_score("y ~ x", "data/patients.csv")
