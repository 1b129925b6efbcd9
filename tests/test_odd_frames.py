"""A fuzz of odd data frames (tests/fuzz_frames.py): every one gets a correct fit (whose predict
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
    if name == "data as a dataset name":
        assert "rf.load_dataset" in out.detail and "pd.read_csv" in out.detail


def test_the_classifier_sees_a_silent_wrong_model(monkeypatch):
    """The classifier is no rubber stamp: a predict that disagrees with the SQL is "silent_wrong"."""
    import riskformula as rf
    case = next(c for c in odd_frames(30, seed=2) if c.name == "weights 1e308")
    import pandas as pd
    monkeypatch.setattr(rf.RiskScore, "predict", lambda self, data: pd.Series(0.123, index=data.index))
    assert classify(case).kind == "silent_wrong"
