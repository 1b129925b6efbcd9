"""Support first: on designs whose columns are all 0/1, the search branches on the "used"
indicators before any column's points.  Brute force says the optimum and the bounds stay right
with it on and off (also stopped early); a counter says it fired; a count column turns it off."""

import numpy as np
import pytest

from riskformula.solver.options import SearchOptions
from riskformula.solver import BranchAndCut
from test_bruteforce import _problem, _slack, brute_force
from test_strong_branching import weak_instance as binary_instance  # 0/1 columns
from conftest import slow_params

# these tests are about the search tree: small problems keep theirs (see conftest.py)
pytestmark = pytest.mark.usefixtures("no_enumeration")


def _solve(inst, on: bool, **kw):
    bc = BranchAndCut(_problem(inst), SearchOptions(**kw))
    bc.support_first = on
    return bc.solve()


def test_it_is_on_for_0_1_columns_only():
    inst = binary_instance(0)
    assert BranchAndCut(_problem(inst)).support_first
    inst.X[:, 2] = np.arange(len(inst.y)) % 4  # a count column: points are branched on as before
    assert not BranchAndCut(_problem(inst)).support_first


@pytest.mark.parametrize("seed", slow_params(range(8), slow=range(4, 8)))
def test_the_optimum_is_brute_force_with_and_without(seed):
    inst = binary_instance(seed)
    true_min, _, _ = brute_force(inst)
    for on in (True, False):
        rep = _solve(inst, on, time_limit=120)
        assert rep.status == "optimal"
        assert rep.lower_bound <= true_min + _slack(true_min)
        assert rep.objective == pytest.approx(true_min, rel=1e-7, abs=0)


@pytest.mark.parametrize("node_limit", [1, 3, 8, 20])
@pytest.mark.parametrize("seed", [1, 4, 7])
def test_early_stops_keep_the_bound_below_the_optimum(seed, node_limit):
    inst = binary_instance(seed)
    true_min, _, _ = brute_force(inst)
    rep = _solve(inst, True, time_limit=60, gap_tolerance=1e-9, node_limit=node_limit)
    assert rep.lower_bound <= true_min + _slack(true_min)
    assert rep.objective >= true_min - _slack(true_min)


def test_it_fires(monkeypatch):
    """With it on, some branchings are offered only indicators; with it off, fewer (only where every
    point is already integral)."""
    seen = {True: 0, False: 0}
    branch = BranchAndCut._branch_column

    def counted(self, xi, frac, lower, upper, bound):
        offered = np.flatnonzero(frac > 1e-6)
        a = self.alpha_slice
        seen[self.support_first] += bool(len(offered)) and bool(np.all((offered >= a.start) & (offered < a.stop)))
        return branch(self, xi, frac, lower, upper, bound)

    monkeypatch.setattr(BranchAndCut, "_branch_column", counted)
    for seed in range(4):
        for on in (True, False):
            _solve(binary_instance(seed), on, time_limit=60)
    assert seen[True] >= 4
    assert seen[False] < seen[True]
