"""A heap that keeps its memory while a fit runs.

glibc's malloc adapts on its own: large blocks come from ``mmap`` until one is freed, after which
blocks of that size stay on the heap, and the top of the heap is given back only past a threshold
that grows alike.  Setting any of its thresholds in the environment (``MALLOC_TRIM_THRESHOLD_``,
``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TOP_PAD_``, ``MALLOC_MMAP_MAX_``) turns that adaptation off
(``man mallopt``), and dask.distributed sets ``MALLOC_TRIM_THRESHOLD_=65536`` in every worker its
nanny starts (``distributed.nanny.pre-spawn-environ``), so that freed memory goes back to the
system.  A search allocates and frees arrays of a few hundred kB to a few MB thousands of times a
second (a batch of regressions' designs, their cells' counts); with fixed thresholds each of them
is a fresh ``mmap`` whose pages are faulted in and zeroed, or a heap top trimmed and grown again.
Measured (2026-12-03, spambase at size 4, one process, the same certificate): 31.1 s as started
from a shell, 48.5 s with ``MALLOC_TRIM_THRESHOLD_=65536``, 33.4 s with it and the thresholds
below; on a dask ``LocalCluster`` the workers' rounds were slowed alike.

So while a fit or a worker's share of a search runs, and only in a process whose environment
fixed a threshold (elsewhere glibc's adaptation is left alone), the mmap threshold is raised to
32 MiB and the trim threshold to 1 GiB; when the last such block in the process ends, both are set
back to the environment's values (glibc's defaults, 128 kiB, where it set only the other) and
``malloc_trim(0)`` gives the freed memory back, which is what the setting asked for.  Like
:class:`riskformula._threads.OneBlasThread` the guard is counted: blocks entered on several
threads of one process share one setting, made by the first and undone by the last.  Nothing
changes on other C libraries or systems.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
import threading

#: mallopt's parameter numbers (glibc's malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: the environment variables that fix glibc's thresholds (and so turn off their adaptation)
FIXING = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")
#: glibc's default thresholds, in force when the environment fixed only others
DEFAULT_THRESHOLD = 128 * 1024
#: while a fit runs: blocks below 32 MiB (glibc's largest mmap threshold on 64-bit systems) come
#: from the heap, and the heap's top is kept up to 1 GiB
SEARCH_MMAP, SEARCH_TRIM = 32 << 20, 1 << 30


def _glibc():
    """glibc's functions in this process (a ``ctypes`` library), or None on other systems."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return None
    import ctypes
    try:
        return ctypes.CDLL(None)
    except OSError:  # pragma: no cover - a Linux process without its C library loaded by name
        return None


def _environ_threshold(name: str) -> int:
    """The threshold the environment variable ``name`` set (as glibc reads it: a whole number of
    bytes), else glibc's default."""
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() else DEFAULT_THRESHOLD


class KeptHeap:
    """The counted guard of the module docstring; the process has one, :data:`KEPT_HEAP`.
    ``libc`` (tests): an object with ``mallopt`` and ``malloc_trim`` in place of glibc's."""

    def __init__(self, libc=None):
        self._lock = threading.Lock()
        self._count = 0
        self._set = False  # whether the first block changed the thresholds (the last undoes it)
        self._libc = libc

    def _target(self):
        if not any(name in os.environ for name in FIXING):
            return None  # glibc adapts its thresholds itself: nothing to do
        if self._libc is None:
            self._libc = _glibc() or False
        return self._libc or None

    def __enter__(self):
        with self._lock:
            if self._count == 0:
                libc = self._target()
                if libc is not None:
                    libc.mallopt(M_MMAP_THRESHOLD, SEARCH_MMAP)
                    libc.mallopt(M_TRIM_THRESHOLD, SEARCH_TRIM)
                    self._set = True
            self._count += 1
        return self

    def __exit__(self, *exc):
        with self._lock:
            self._count -= 1
            if self._count == 0 and self._set:
                self._set = False
                libc = self._libc
                libc.mallopt(M_TRIM_THRESHOLD, _environ_threshold("MALLOC_TRIM_THRESHOLD_"))
                libc.mallopt(M_MMAP_THRESHOLD, _environ_threshold("MALLOC_MMAP_THRESHOLD_"))
                libc.malloc_trim(0)
        return False


#: the process's guard (one, since malloc's thresholds belong to the process)
KEPT_HEAP = KeptHeap()


def kept_heap(func):
    """Run ``func`` inside :data:`KEPT_HEAP` (the module docstring)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with KEPT_HEAP:
            return func(*args, **kwargs)
    return wrapper
