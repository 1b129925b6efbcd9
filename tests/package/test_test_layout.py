"""The tests follow the package: every test module sits in the folder of the part of the package it
checks, and test text names the behaviour checked, not a review or an issue number."""

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: the folders, one per part of the package (``package`` holds checks of the whole: docs, layers, data)
FOLDERS = {"design", "thresholds", "problem", "solver", "card", "reports", "fairness", "counterfactuals",
           "export", "io", "netbenefit", "rashomon", "backends", "fits", "survival", "package"}


def test_every_test_module_is_in_a_package_folder():
    stray = [p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py")
             if p.relative_to(TESTS).parts[0] not in FOLDERS or len(p.relative_to(TESTS).parts) != 2]
    assert not stray, f"move these into a folder named after what they test: {stray}"


def test_module_names_are_unique():
    names = [p.name for p in TESTS.rglob("test_*.py")]
    assert len(names) == len(set(names))


def test_no_test_is_named_after_a_review_or_an_issue():
    pattern = re.compile(r"issue\s*#?\s*\d+|new user's audit|audit\s+\d|fixes from", re.IGNORECASE)
    hits = [f"{p.relative_to(TESTS)}:{i}" for p in TESTS.rglob("*.py") if p.name != Path(__file__).name
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    names = [p.name for p in TESTS.rglob("test_*.py") if re.search(r"audit_?\d|fixes|issue", p.stem)]
    assert not hits and not names, (hits, names)
