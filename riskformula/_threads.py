"""One BLAS thread while a fit runs.

The solver's linear algebra is many small products (the scores of the distinct rows, a table of
moves per polish step).  OpenBLAS's threads gain nothing on them (spambase: 8 000 nodes in 54 s
with two threads, 55 s with one), and when two fits share a 2-core machine their threads spin
against each other: two mushroom fits side by side took 71–114 s each with two threads per process,
21 s each with one (``benchmarks/README.md``).  Work spread over processes (joblib's loky) is
limited the same way by joblib itself.

BLAS thread limits belong to the process, not to a Python thread, so fits running at the same
time on several threads of one process share one limit: the first to start saves the caller's
setting and sets one thread, the last to finish puts the saved setting back (a lock and a count;
see :class:`OneBlasThread`).  While any fit runs, other numpy work in the process also gets one
BLAS thread; once none runs, the caller's setting is exactly as it was.
"""

from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor

from threadpoolctl import threadpool_info, threadpool_limits

from ._checks import check_int
from .errors import SettingsError


class OneBlasThread:
    """A reference-counted limit of one BLAS thread, safe when entered from several threads.

    The first ``with`` block to enter (the count goes from 0 to 1) saves the BLAS libraries'
    thread counts and sets one; later ones, on any thread, only count; the last to leave (the
    count back to 0) restores exactly what the first saved.  threadpoolctl's own
    ``threadpool_limits`` saves and restores per block, so two overlapping blocks on two threads
    restore each other's saved value and can leave the process on one BLAS thread.

    The saving, setting and restoring all run on one long-lived thread of this guard's own,
    whichever Python thread enters first or leaves last: threadpoolctl 3.8 lets only one thread at
    a time change OpenBLAS's process-wide limit (the first to set it, until its ``with`` block
    ends), and ignores the others, so a restore from another thread than the one that set the
    limit would be lost.  When another live thread holds that control (the caller inside its own
    ``with threadpool_limits(...)``), the guard cannot change the limit; a block entered on that
    very thread then limits and restores on it, paired, and the other blocks run with the caller's
    setting.  Older threadpoolctl versions let any thread set the limit, and the guard's thread
    always does.  OpenBLAS built on OpenMP keeps a limit per thread: each block limits and
    restores it on its own thread.

    A process has one instance, :data:`ONE_BLAS_THREAD`; :func:`one_blas_thread` uses it.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._count = 0
        self._limiter = None  # the limit set by the guard's thread: holds what it saved
        self._worker = None  # the guard's thread (an executor of one thread, made when needed)
        self._local = threading.local()  # per Python thread: limits it set itself, to restore

    @property
    def active(self) -> int:
        """How many blocks are inside now."""
        return self._count

    def _on_worker(self, func):
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="riskformula-blas")
        return self._worker.submit(func).result()

    def __enter__(self):
        shared, local = _blas_libraries()
        with self._lock:
            if self._count == 0 and shared:
                self._limiter = self._on_worker(lambda: _limit_to_one(shared, check=True))
            self._count += 1
            held = self._limiter is None  # another thread controls the shared limit
        mine = local + (shared if held else [])
        own = _limit_to_one(mine) if mine else None  # set and restored on this thread, paired
        self._local.stack = getattr(self._local, "stack", []) + [own]
        return self

    def __exit__(self, *exc):
        own = self._local.stack.pop()
        if own is not None:
            own.__exit__(None, None, None)
        with self._lock:
            self._count -= 1
            if self._count == 0 and self._limiter is not None:
                limiter, self._limiter = self._limiter, None
                self._on_worker(lambda: limiter.__exit__(None, None, None))
        return False


def _blas_libraries() -> tuple[list, list]:
    """The files of the loaded BLAS libraries whose thread limit is the process's (shared) and of
    those whose limit is each thread's own (OpenBLAS built on OpenMP: ``omp_set_num_threads``)."""
    shared: list[str] = []
    local: list[str] = []
    for lib in threadpool_info():
        if lib["user_api"] == "blas":
            per_thread = lib["internal_api"] == "openblas" and lib.get("threading_layer") == "openmp"
            (local if per_thread else shared).append(lib["filepath"])
    return shared, local


def _limit_to_one(files: list, check: bool = False):
    """The BLAS libraries ``files`` limited to one thread from this thread, as an entered
    ``threadpool_limits`` (leave it on this thread to restore the saved counts); with ``check``,
    None when a limit did not change because another live thread controls it (threadpoolctl ≥ 3.8,
    OpenBLAS without OpenMP)."""
    limiter = threadpool_limits(limits={f: 1 for f in files})
    if check and any(lib["num_threads"] != 1 for lib in threadpool_info() if lib["filepath"] in files):
        return None  # nothing changed: nothing to restore
    return limiter.__enter__()


#: the process's guard (one, since the limits it guards belong to the process)
ONE_BLAS_THREAD = OneBlasThread()


def one_blas_thread(func):
    """Run ``func`` with the BLAS libraries numpy and scipy loaded limited to one thread, restored
    to the caller's setting when no other call so wrapped is still running (:class:`OneBlasThread`)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with ONE_BLAS_THREAD:
            return func(*args, **kwargs)
    return wrapper


def check_n_jobs(n_jobs, allow_none: bool = False):
    """``n_jobs`` as a number of processes, with joblib's convention for negative values (users
    of scikit-learn type ``n_jobs=-1``): -1 is every CPU, -2 all but one, and so on, at least 1."""
    n = check_int("n_jobs", n_jobs, allow_none=allow_none)
    if n is None or n > 0:
        return n
    if n == 0:
        raise SettingsError("`n_jobs` must be a number of processes (1, 2, ...), or negative to count back "
                            "from the number of CPUs (-1: all of them, -2: all but one); got 0.")
    from joblib import cpu_count  # the CPUs this process may use (affinity, container limits)
    return max(cpu_count() + 1 + n, 1)
