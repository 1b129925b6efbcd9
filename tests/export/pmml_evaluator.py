"""JPMML as the PMML tests' reference evaluator (``jpmml-evaluator`` on a Java runtime)."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest


def jpmml_module():
    """The ``jpmml_evaluator`` module; skips the test when it or a ``java`` on PATH is missing."""
    mod = pytest.importorskip("jpmml_evaluator")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime (java) on PATH")
    return mod


def evaluate(jpmml, text: str, df: pd.DataFrame) -> pd.DataFrame:
    """JPMML's output for the rows ``df`` of the PMML document ``text`` (verified first)."""
    ev = jpmml.make_evaluator(text)
    ev.verify()
    names = [f.getName() for f in ev.getInputFields()]
    out = ev.evaluateAll(df[names].astype(object).where(df[names].notna(), None))
    return out.drop(columns=[c for c in out.columns if not isinstance(c, str)])
