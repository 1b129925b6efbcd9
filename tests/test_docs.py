"""The README and every vignette are executed: their Python blocks run in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md"] + sorted((ROOT / "vignettes").glob("*.md"))
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def python_blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text())


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_document_runs(path, monkeypatch):
    blocks = python_blocks(path)
    assert blocks, f"{path.name} has no ```python blocks"
    matplotlib.use("Agg")
    monkeypatch.chdir(ROOT)  # documents run from the repository root, as a reader of a clone would run them
    namespace: dict = {"__name__": "__doc_test__"}
    for i, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"{path.name} block {i}", "exec"), namespace)
        except Exception as e:  # re-raise with the block number so failures are easy to find
            raise AssertionError(f"{path.name}, python block {i} failed: {type(e).__name__}: {e}") from e
