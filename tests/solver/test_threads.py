"""A fit runs with one BLAS thread (many small products; threads only contend) and gives the
caller's setting back."""

import contextlib
import threading

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import riskformula as rf
import riskformula.logistic as fit_module
from riskformula._threads import ONE_BLAS_THREAD, one_blas_thread


def _blas_threads() -> set:
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def test_fit_uses_one_blas_thread_and_restores_the_callers(monkeypatch):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 2, 200), "b": rng.integers(0, 2, 200)})
    df["y"] = (rng.random(200) < 0.2 + 0.5 * df["a"]).astype(int)
    seen = []
    build = fit_module.build_design

    def spy(*args, **kwargs):
        seen.append(_blas_threads())
        return build(*args, **kwargs)

    monkeypatch.setattr(fit_module, "build_design", spy)
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        assert before == {2}  # a BLAS was found, so the check below can fail
        m = rf.risk_score("y ~ a + b", df, max_size=2, time_limit=10, progress=False)
        assert _blas_threads() == before
    assert m.status == "optimal"
    assert seen and all(s <= {1} for s in seen)


@contextlib.contextmanager
def _callers_setting(hold: bool = False):
    """The caller's BLAS setting is 2 threads (one can tell it from 1; the machine's default may be
    1). ``hold``: the caller sets it in its own ``with threadpool_limits`` block (with threadpoolctl
    3.8 its thread then controls OpenBLAS's limit); otherwise it is set and restored from threads
    that are gone when the fits run, as a default or a setting made earlier is."""
    if hold:
        with threadpool_limits(limits=2, user_api="blas"):
            yield
        return
    limiter = []

    def on_a_thread(func):
        t = threading.Thread(target=func)
        t.start()
        t.join()

    on_a_thread(lambda: limiter.append(threadpool_limits(limits=2, user_api="blas")))
    try:
        yield
    finally:
        on_a_thread(limiter[0].restore_original_limits)


def test_guard_interleaved_on_threads_keeps_one_thread_until_the_last_leaves():
    """A enters, B enters, A leaves (B still runs: still one thread), B leaves (the caller's 2
    again). threadpoolctl's per-block save/restore gave 2 to B after A left and left 1 behind."""
    events = {k: threading.Event() for k in ("a_in", "b_in", "a_go", "b_go")}
    seen = {}

    @one_blas_thread
    def body(name):
        seen[name + " inside"] = _blas_threads()
        events[name + "_in"].set()
        assert events[name + "_go"].wait(30)

    with _callers_setting():
        before = _blas_threads()
        assert before == {2}
        a = threading.Thread(target=body, args=("a",))
        b = threading.Thread(target=body, args=("b",))
        a.start()
        assert events["a_in"].wait(30)
        b.start()
        assert events["b_in"].wait(30)
        events["a_go"].set()
        a.join(30)
        seen["after a left"] = _blas_threads()
        assert ONE_BLAS_THREAD.active == 1
        events["b_go"].set()
        b.join(30)
        seen["after b left"] = _blas_threads()
        assert ONE_BLAS_THREAD.active == 0
    assert seen == {"a inside": {1}, "b inside": {1}, "after a left": {1}, "after b left": before}


@pytest.mark.parametrize("hold", [False, True])
def test_guard_nested_and_reentered_restores_the_setting_of_the_first_entry(hold):
    with _callers_setting(hold):
        with ONE_BLAS_THREAD:
            with ONE_BLAS_THREAD:
                assert _blas_threads() == {1}
            assert _blas_threads() == {1}
        assert _blas_threads() == {2}
        with ONE_BLAS_THREAD:  # entered again after the count went back to 0
            assert _blas_threads() == {1}
        assert _blas_threads() == {2}
        try:
            with ONE_BLAS_THREAD:
                raise KeyError("a fit that fails")
        except KeyError:
            pass
        assert _blas_threads() == {2} and ONE_BLAS_THREAD.active == 0


@pytest.mark.parametrize("hold", [False, True])
def test_concurrent_fits_on_threads_leave_the_callers_blas_setting(monkeypatch, hold):
    """Four fits on four Python threads of one process, all inside at once (a barrier in the
    design step); the first to start finishes first, the case where per-fit save/restore left the
    process on one BLAS thread. Every fit sees one thread, gets the model a fit alone gets, and
    the caller's setting is back afterwards. When the caller holds its own limit in a ``with``
    block on another thread, threadpoolctl 3.8 lets no other thread change it: the fits then run
    with the caller's setting, which is still never changed."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.integers(0, 2, 300), "b": rng.integers(0, 2, 300),
                       "c": rng.integers(0, 3, 300)})
    df["y"] = (rng.random(300) < 0.15 + 0.4 * df["a"] + 0.1 * df["c"]).astype(int)
    options = dict(max_size=2, time_limit=10, progress=False)
    alone = rf.risk_score("y ~ a + b + c", df, **options)
    k = 4
    all_inside = threading.Barrier(k, timeout=60)
    first_entered, first_done = threading.Event(), threading.Event()
    seen, models, errors = {}, {}, []
    build = fit_module.build_design

    def spy(*args, **kwargs):
        name = threading.current_thread().name
        seen[name] = _blas_threads()
        if name == "fit-0":
            first_entered.set()
        all_inside.wait()
        if name != "fit-0":
            assert first_done.wait(60)
        return build(*args, **kwargs)

    def run(name):
        try:
            models[name] = rf.risk_score("y ~ a + b + c", df, **options)
        except Exception as e:  # reported below
            errors.append(e)

    monkeypatch.setattr(fit_module, "build_design", spy)
    with _callers_setting(hold):
        before = _blas_threads()
        assert before == {2}
        threads = [threading.Thread(target=run, args=(f"fit-{i}",), name=f"fit-{i}") for i in range(k)]
        threads[0].start()
        assert first_entered.wait(60)
        for t in threads[1:]:
            t.start()
        threads[0].join(120)
        first_done.set()
        for t in threads[1:]:
            t.join(120)
        after = _blas_threads()
    assert not errors
    assert after == before
    assert ONE_BLAS_THREAD.active == 0
    assert set(seen) == {f"fit-{i}" for i in range(k)}
    if not hold:
        assert all(s == {1} for s in seen.values())
    for m in models.values():
        assert m.status == alone.status == "optimal"
        assert dict(m.coef) == dict(alone.coef) and m.intercept == alone.intercept
        assert m.objective == pytest.approx(alone.objective, rel=1e-12)
