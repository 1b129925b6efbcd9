"""Shared test data, and one BLAS thread for the test session."""

from __future__ import annotations

import contextlib
import os
import sys

# One BLAS thread for the session and the processes it starts (worker pools, the command line),
# unless the environment already says otherwise. The suite runs many tiny matrix products (a
# reference logistic regression on 240 rows, an SVD of a 10-column design), where OpenBLAS's
# threads only contend: on two busy cores one rf.compare took 0.93 s with two threads and 0.07 s
# with one. It must be set before numpy loads OpenBLAS; tests of the thread handling set their own
# limits (tests/solver/test_threads.py).
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
if "numpy" in sys.modules:  # loaded before this file (by a plugin): too late for the variables
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")

# tests in one folder use the oracles of another (the brute force of tests/solver/test_bruteforce.py,
# the thresholds' of tests/thresholds/test_thresholds.py): every test folder is importable by name
_TESTS = os.path.dirname(os.path.abspath(__file__))
for _folder in sorted(os.listdir(_TESTS)):
    _path = os.path.join(_TESTS, _folder)
    if os.path.isdir(_path) and _folder not in ("data", "__pycache__") and _path not in sys.path:
        sys.path.append(_path)

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    """With numba installed, ready the compiled loops once, in the controlling process, before any
    test starts (what ``riskformula compile`` does): a test that times a fit or guards it with an
    alarm must not find itself compiling them (about a minute on a slow machine, after a reinstall
    made numba's disk cache stale); the test processes then load them from the cache."""
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller has done it
        return
    from riskformula.solver import kernels
    seconds = kernels.warm_up()
    if seconds is not None and seconds > kernels.SLOW_WARM_UP:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"riskformula: compiled the certifying search's loops with numba ({seconds:.0f} s) "
                                "before the tests")


@contextlib.contextmanager
def tree_only():
    """Searches keep their trees: a small problem is otherwise settled at its root by scoring every
    point in it (:mod:`riskformula.solver.enumeration`); tests of the tree's own mechanisms (node
    limits, rounds on two processes, branching rules, tolerances) use this or the fixture below."""
    from riskformula.solver.branch_and_cut import BranchAndCut
    work, BranchAndCut.enumeration_work = BranchAndCut.enumeration_work, 0
    try:
        yield
    finally:
        BranchAndCut.enumeration_work = work


@pytest.fixture
def no_enumeration():
    with tree_only():
        yield


def binary_frame(n: int, seed: int, levels=("a", "b", "c"), intercept: float = -1.5,
                 effect_c: float = 0.5) -> pd.DataFrame:
    """Three binary predictors, a factor ``grp`` and a logistic outcome ``y`` (x1, x2 and grp=c matter)."""
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"x1": rng.integers(0, 2, n), "x2": rng.integers(0, 2, n),
                      "x3": rng.integers(0, 2, n), "grp": rng.choice(list(levels), n)})
    lp = intercept + 1.5 * d.x1 + 1.0 * d.x2 + effect_c * (d.grp == "c")
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-lp))).astype(int)
    return d


def oracle_real_intercepts(S, w_pos, w_neg, scale, lo, hi) -> np.ndarray:
    """Brute-force side of the real-intercept tests, sharing no code with the package: for every
    column s of ``S`` (rows × k), the b in [lo, hi] minimising Σ w+ ℓ(−(s + b)/m) + w− ℓ((s + b)/m).
    The loss is convex in b, so 200 bisections on the sign of its derivative reach machine
    precision."""
    S = np.asarray(S, float)
    left, right = np.full(S.shape[1], float(lo)), np.full(S.shape[1], float(hi))
    for _ in range(200):
        mid = 0.5 * (left + right)
        q = 1 / (1 + np.exp(-(S + mid) / scale))
        falling = w_neg @ q - w_pos @ (1 - q) < 0
        left, right = np.where(falling, mid, left), np.where(falling, right, mid)
    return 0.5 * (left + right)


def slow_params(values, slow) -> list:
    """``values`` for ``pytest.mark.parametrize``, the ones in ``slow`` marked slow: the default run
    keeps the rest of an audit within its time, ``pytest -m slow`` (run by CI) takes these."""
    slow = set(slow)
    return [pytest.param(v, marks=pytest.mark.slow) if v in slow else v for v in values]


def resealed(doc: dict) -> str:
    """A model document (a dict) as JSON with its digest written again: what an editor of the file
    does, so that only riskformula's own checks stand between the edit and a loaded model."""
    from riskformula.io import _digest
    import copy
    import json
    d = copy.deepcopy(doc)
    d["digest"] = _digest(d)
    return json.dumps(d)


def refused_as_edited(doc: dict, field: str) -> str:
    """``doc`` resealed is refused with a DataError naming ``field`` and saying that the file was
    edited or is damaged (the net-benefit and survival sections' own checks); returns the message."""
    import riskformula as rf
    from riskformula.errors import DataError
    with pytest.raises(DataError) as e:
        rf.from_json(resealed(doc))
    msg = str(e.value)
    assert field in msg, msg
    assert "edited or is damaged" in msg and "fit the model again" in msg, msg
    return msg
