"""One BLAS thread while a fit runs.

The solver's linear algebra is many small products (the scores of the distinct rows, a table of
moves per polish step).  OpenBLAS's threads gain nothing on them (spambase: 8 000 nodes in 54 s
with two threads, 55 s with one), and when two fits share a 2-core machine their threads spin
against each other: two mushroom fits side by side took 71–114 s each with two threads per process,
21 s each with one (``benchmarks/README.md``).  Work spread over processes (joblib's loky) is
limited the same way by joblib itself.
"""

from __future__ import annotations

import functools

from threadpoolctl import threadpool_limits

from ._checks import check_int
from .errors import SettingsError


def one_blas_thread(func):
    """Run ``func`` with the BLAS libraries numpy and scipy loaded limited to one thread (restored after)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
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
