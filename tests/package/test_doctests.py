"""Every example in the package's docstrings prints what it shows (the API reference of the site
shows them): each module's doctests run here, with the options the docstrings are written for."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import pytest

import riskformula

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules() -> list[str]:
    # riskformula.__main__ runs the command line when imported
    return sorted(m.name for m in pkgutil.walk_packages(riskformula.__path__, "riskformula.")
                  if m.name != "riskformula.__main__")


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ImportError as e:  # a module of an optional extra that is not installed
        pytest.skip(f"{name} needs {e.name}")
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=OPTIONS, verbose=False)
    failed = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for test in finder.find(module, name):
            if not test.examples:
                continue
            result = runner.run(test, out=failed.append)
            if result.failed:
                failed.append(f"-- in {test.name}\n")
    assert not failed, "".join(failed)
