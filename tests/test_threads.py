"""A fit runs with one BLAS thread (many small products; threads only contend) and gives the
caller's setting back."""

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_info, threadpool_limits

import riskformula as rf
import riskformula.fit as fit_module


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
