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


def one_blas_thread(func):
    """Run ``func`` with the BLAS libraries numpy and scipy loaded limited to one thread (restored after)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return func(*args, **kwargs)
    return wrapper
