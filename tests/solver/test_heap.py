"""Where the environment fixed malloc's thresholds (a dask worker: ``MALLOC_TRIM_THRESHOLD_``), a
fit raises them while it runs and sets back the environment's when the last one ends
(riskformula._heap); elsewhere it leaves malloc alone."""

import os
import subprocess
import sys
import threading

import numpy as np
import pandas as pd

import riskformula as rf
from riskformula import _heap
from riskformula._heap import (DEFAULT_THRESHOLD, M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, SEARCH_MMAP, SEARCH_TRIM,
                               KeptHeap)


class FakeLibc:
    def __init__(self):
        self.calls = []

    def mallopt(self, param, value):
        self.calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(self, pad):
        self.calls.append(("malloc_trim", pad))
        return 1


def _clean(monkeypatch):
    for name in _heap.FIXING:
        monkeypatch.delenv(name, raising=False)


def test_without_fixed_thresholds_malloc_is_left_alone(monkeypatch):
    _clean(monkeypatch)
    libc = FakeLibc()
    with KeptHeap(libc):
        pass
    assert libc.calls == []


def test_fixed_thresholds_are_raised_during_the_block_and_the_environments_set_back(monkeypatch):
    _clean(monkeypatch)
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    libc = FakeLibc()
    guard = KeptHeap(libc)
    with guard:
        assert libc.calls == [("mallopt", M_MMAP_THRESHOLD, SEARCH_MMAP), ("mallopt", M_TRIM_THRESHOLD, SEARCH_TRIM)]
        with guard:  # a second block (another fit's thread) changes nothing
            pass
        assert len(libc.calls) == 2
    # the environment's trim threshold, glibc's default mmap threshold, and the memory given back
    assert libc.calls[2:] == [("mallopt", M_TRIM_THRESHOLD, 65536), ("mallopt", M_MMAP_THRESHOLD, DEFAULT_THRESHOLD),
                              ("malloc_trim", 0)]


def test_the_last_of_overlapping_blocks_on_threads_restores(monkeypatch):
    _clean(monkeypatch)
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "200000")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "not a number")  # glibc reads no value: its default
    libc = FakeLibc()
    guard = KeptHeap(libc)
    inside, leave = threading.Event(), threading.Event()

    def other():
        with guard:
            inside.set()
            leave.wait(10)

    t = threading.Thread(target=other)
    guard.__enter__()
    t.start()
    inside.wait(10)
    guard.__exit__(None, None, None)  # the first to enter leaves first: the other still runs
    assert len(libc.calls) == 2
    leave.set()
    t.join(10)
    assert libc.calls[2:] == [("mallopt", M_TRIM_THRESHOLD, DEFAULT_THRESHOLD), ("mallopt", M_MMAP_THRESHOLD, 200000),
                              ("malloc_trim", 0)]
    with guard:  # a later block sets them again
        pass
    assert len(libc.calls) == 10 and libc.calls[5:7] == libc.calls[:2]


def test_a_fit_enters_the_processs_guard(monkeypatch):
    _clean(monkeypatch)
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    libc = FakeLibc()
    monkeypatch.setattr(_heap.KEPT_HEAP, "_libc", libc)
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 2, 200), "b": rng.integers(0, 2, 200)})
    df["y"] = (rng.random(200) < 0.2 + 0.5 * df["a"]).astype(int)
    m = rf.risk_score("y ~ a + b", df, max_size=2, time_limit=10, progress=False)
    assert m.status == "optimal"
    assert [c[0] for c in libc.calls] == ["mallopt", "mallopt", "mallopt", "mallopt", "malloc_trim"]
    assert libc.calls[1] == ("mallopt", M_TRIM_THRESHOLD, SEARCH_TRIM)


def test_glibcs_own_functions_take_the_settings():
    """In a process started with a dask worker's setting, a fit runs on the real C library and
    gives the same card as without it (the thresholds change speed, never results)."""
    code = ("import numpy as np, pandas as pd, riskformula as rf\n"
            "rng = np.random.default_rng(1)\n"
            "df = pd.DataFrame({c: rng.integers(0, 2, 300) for c in 'abcd'})\n"
            "df['y'] = (rng.random(300) < 0.15 + 0.4 * df['a'] + 0.3 * df['c']).astype(int)\n"
            "m = rf.risk_score('y ~ a + b + c + d', df, max_size=2, time_limit=20, progress=False)\n"
            "print(m.status, repr(m.loss), list(np.asarray(m.score(df))[:20]))\n")
    env = {k: v for k, v in os.environ.items() if k not in _heap.FIXING}
    plain = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    fixed = subprocess.run([sys.executable, "-c", code], env={**env, "MALLOC_TRIM_THRESHOLD_": "65536"},
                           capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0 and fixed.returncode == 0, plain.stderr + fixed.stderr
    assert plain.stdout.startswith("optimal") and plain.stdout == fixed.stdout
