"""The support search's subtrees on a dask.distributed cluster, against brute force and against
the search in one process (an in-process ``LocalCluster`` of two single-thread workers)."""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import riskformula as rf  # noqa: E402
from riskformula.errors import SettingsError  # noqa: E402
from riskformula.solver import support_search  # noqa: E402
from riskformula.solver.support_search import SupportSearch  # noqa: E402
from test_support_points import _problem, oracle_fit  # noqa: E402
from test_support_search import oracle_values, random_problem  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c:
        yield c


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster, set_as_default=False) as c:
        yield c


@pytest.fixture
def rounds(client, monkeypatch):
    """Counts the shares submitted to the cluster's workers (the calling process does not search
    alone first, so that these small trees reach the rounds)."""
    monkeypatch.setattr(SupportSearch, "alone_cap", 0.0)
    monkeypatch.setattr(SupportSearch, "alone_small", 0.0)
    calls = []
    inner = client.submit

    def counted(fn, *args, **kwargs):
        if fn is support_search._subtrees:
            calls.append(len(args[4]))
        return inner(fn, *args, **kwargs)
    monkeypatch.setattr(client, "submit", counted)
    return calls


@pytest.mark.parametrize("seed", [0, pytest.param(6, marks=pytest.mark.slow)])  # 6: 9 s
def test_search_on_a_cluster_is_the_brute_force_optimum(seed, client, rounds, monkeypatch):
    # five columns: the stack reaches 4 subtrees per worker before the search ends, so rounds run
    # (without B8, the family's regression, which rules out most of these small trees at the root)
    monkeypatch.setattr(SupportSearch, "_family_pays", lambda self, units: False)
    p, X, y, c0 = _problem(seed, 5, 1)
    kw = dict(time_limit=120, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12, beam=False)
    one = SupportSearch(p, True, **kw).solve()
    two = SupportSearch(p, True, client=client, **kw).solve()
    models = np.array(list(itertools.product(range(-1, 2), repeat=5)), float)
    truth = float((oracle_fit(X, y, models) + c0 * np.count_nonzero(models, axis=1)).min())
    assert rounds, "no subtree went to the cluster"
    assert two.status == one.status == "optimal"
    assert two.settings["n_jobs"] == 2 and two.settings["cluster"] == "dask"
    assert two.lower_bound <= truth + 1e-12 and two.objective <= truth + 1e-7
    assert two.objective == pytest.approx(one.objective, abs=1e-9)
    # the model's objective from its own points, scale and intercept on the raw rows
    lam = np.asarray(two.solution)
    z = (lam[0] + X @ lam[1:]) / two.scale
    own = float(np.mean(np.where(y == 1, np.logaddexp(0, -z), np.logaddexp(0, z)))) + c0 * np.count_nonzero(lam[1:])
    assert own == pytest.approx(two.objective, abs=1e-10)


@pytest.mark.parametrize("seed,mode", [(0, "real"), (1, "fit"), (2, "int"), (4, "fit")])
def test_formulations_on_a_cluster_are_the_brute_force_optimum(seed, mode, client):
    # small problems: most end before the first round (the cluster then only takes the setting)
    p, X, y, models, c0, scale = random_problem(seed, mode)
    kw = dict(time_limit=60, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12, beam=False)
    one = SupportSearch(p, mode == "fit", **kw).solve()
    rep = SupportSearch(p, mode == "fit", client=client, **kw).solve()
    truth = float((oracle_values(X, y, models, mode, scale, p.intercept_bounds)
                   + c0 * np.count_nonzero(models, axis=1)).min())
    assert rep.status == "optimal"
    assert rep.lower_bound <= truth + 1e-12 and rep.objective <= truth + 1e-7
    assert rep.objective == pytest.approx(one.objective, abs=1e-9)


def test_an_address_makes_a_client_and_closes_it(cluster, monkeypatch):
    made = []
    real = distributed.Client

    class Recorded(real):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)
    monkeypatch.setattr(distributed, "Client", Recorded)
    p, X, y, c0 = _problem(0, 5, 1)
    kw = dict(time_limit=120, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12, beam=False)
    rep = SupportSearch(p, True, client=cluster.scheduler_address, **kw).solve()
    one = SupportSearch(p, True, **kw).solve()
    assert rep.status == "optimal" and rep.settings["cluster"] == "dask"
    assert rep.objective == pytest.approx(one.objective, abs=1e-9)
    assert len(made) == 1 and made[0].status == "closed"


def test_a_fit_with_a_client(client, cluster):
    rng = np.random.default_rng(4)
    n = 200
    import pandas as pd
    df = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 2, n), "c": rng.integers(0, 2, n)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(df.a + df.b - df.c - 0.5)))).astype(int)
    base = dict(coef_range=(-3, 3), max_size=3, scale="fit", time_limit=60, progress=False, engine="supports")
    here = rf.risk_score("y ~ a + b + c", df, **base)
    there = rf.risk_score("y ~ a + b + c", df, client=client, **base)
    by_address = rf.risk_score("y ~ a + b + c", df, client=cluster.scheduler_address, **base)
    assert there.status == here.status == by_address.status == "optimal"
    assert there.objective == pytest.approx(here.objective, abs=1e-9)
    assert by_address.objective == pytest.approx(here.objective, abs=1e-9)
    # the client is never recorded in the fitted model's documents
    text = there.to_json()
    assert "tcp://" not in text and "Client" not in text
    assert rf.from_json(text).objective == pytest.approx(there.objective, abs=1e-12)


def test_the_client_setting_is_checked(client):
    with pytest.raises(SettingsError, match="`client` must be a dask.distributed Client"):
        rf.SearchControl(client=4)
    with pytest.raises(SettingsError, match="`client` must be"):
        rf.SearchControl(client="  ")
    with pytest.raises(SettingsError, match="engine='tree' does not use it"):
        rf.SearchControl(client=client, engine="tree")
    control = rf.SearchControl(client=client, time_limit=5)
    assert "client=<Client" in repr(control)
    back = pickle.loads(pickle.dumps(control))
    assert back.client == client.scheduler.address and back.time_limit == 5
    rng = np.random.default_rng(0)
    import pandas as pd
    df = pd.DataFrame({"a": rng.integers(0, 2, 60), "y": rng.integers(0, 2, 60)})
    with pytest.raises(SettingsError, match="`client` does not apply with objective='net_benefit'"):
        rf.risk_score("y ~ a", df, objective="net_benefit", client=client)
    with pytest.raises(SettingsError, match="`client` does not apply to rashomon_set"):
        rf.rashomon_set("y ~ a", df, client=client, scale=1.0)


def test_the_calling_process_searches_alone_first(client, rounds, monkeypatch):
    # a tree the calling process finishes within its time alone sends nothing to the workers
    # (one process certified 10⁶ rows in 2.6 s, two starting rounds at once ran out of 4.9 s);
    # with no time alone (the ``rounds`` fixture's class setting), the same tree goes to the
    # rounds (the test above), with the same optimum
    monkeypatch.setattr(SupportSearch, "_family_pays", lambda self, units: False)
    p, X, y, c0 = _problem(0, 5, 1)
    kw = dict(time_limit=120, gap_tolerance=1e-9, absolute_gap_tolerance=1e-12, beam=False)
    search = SupportSearch(p, True, client=client, **kw)
    # alone for the whole time: no clock in the test
    search.alone_share, search.alone_cap, search.alone_small = 1.0, math.inf, math.inf
    alone = search.solve()
    assert not rounds and alone.status == "optimal" and alone.settings["cluster"] == "dask"
    two = SupportSearch(p, True, client=client, **kw).solve()
    assert rounds and two.objective == pytest.approx(alone.objective, abs=1e-9)
