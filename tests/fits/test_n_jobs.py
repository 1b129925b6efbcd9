"""``n_jobs`` as joblib reads it: a negative value counts back from the CPUs."""


import pytest

import riskformula as rf


from riskformula.errors import SettingsError


from conftest import binary_frame


K = dict(max_size=2, time_limit=10, progress=False)

@pytest.fixture(scope="module")
def data():
    return binary_frame(200, seed=3)


@pytest.fixture
def csv(data, tmp_path):
    path = tmp_path / "d.csv"
    data.to_csv(path, index=False)
    return str(path)


def test_negative_n_jobs_counts_back_from_the_cpus(data, monkeypatch):
    from riskformula._threads import check_n_jobs
    monkeypatch.setattr("joblib.cpu_count", lambda *a, **k: 8)
    assert [check_n_jobs(n) for n in (-1, -2, -8, -20, 3)] == [8, 7, 1, 1, 3]
    assert check_n_jobs(None, allow_none=True) is None
    with pytest.raises(SettingsError, match="-1: all of them"):
        check_n_jobs(0)
    with pytest.raises(SettingsError, match="n_jobs"):
        rf.cross_validate("y ~ x1", data, folds=2, n_jobs=0, **K)


def test_risk_score_accepts_n_jobs_minus_one(data):
    import joblib
    m = rf.risk_score("y ~ x1", data, n_jobs=-1, engine="tree", **K)
    assert m.solver.settings["n_jobs"] == joblib.cpu_count()
    # the support search deals its subtrees to as many processes, and says so
    assert rf.risk_score("y ~ x1", data, n_jobs=-1, **K).solver.settings["n_jobs"] == joblib.cpu_count()
