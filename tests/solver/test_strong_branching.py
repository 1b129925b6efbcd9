"""Reliability branching: children's LP bounds solved before branching, used as their bounds and
to prune them at once.  Brute force says the optimum and the bounds stay right, also when the
search is stopped early; counters say the mechanism fired."""

import numpy as np
import pytest

from riskformula.solver.options import SearchOptions
from riskformula.solver import BranchAndCut
from test_bruteforce import Instance, _problem, _slack, brute_force
from conftest import slow_params

# these tests are about the search tree: small problems keep theirs (see conftest.py)
pytestmark = pytest.mark.usefixtures("no_enumeration")


def weak_instance(seed: int) -> Instance:
    rng = np.random.default_rng(900 + seed)
    n, d = int(rng.integers(150, 400)), 5
    X = rng.integers(0, 2, (n, d)).astype(float)
    y = (rng.random(n) < 1 / (1 + np.exp(-(-0.4 + X @ rng.normal(0, 0.7, d))))).astype(int)
    return Instance(X, y, None, 1.0, (-3,) * d, (3,) * d, 1e-6, int(rng.integers(2, 4)))


@pytest.fixture
def fired(monkeypatch):
    """Count strong-branching calls that solved children and children pruned by their bound."""
    count = {"strong": 0, "pruned": 0}
    branch, children = BranchAndCut._branch_column, BranchAndCut._children

    def counted_branch(self, xi, frac, lower, upper, bound):
        before = self.lp_solves
        out = branch(self, xi, frac, lower, upper, bound)
        count["strong"] += self.lp_solves > before
        return out

    def counted_children(self, kids):
        out = children(self, kids)
        count["pruned"] += len(kids) - len(out or [])
        return out

    monkeypatch.setattr(BranchAndCut, "_branch_column", counted_branch)
    monkeypatch.setattr(BranchAndCut, "_children", counted_children)
    return count


@pytest.mark.parametrize("seed", slow_params(range(8), slow=range(4, 8)))
def test_the_optimum_is_brute_force_with_and_without(seed, fired):
    inst = weak_instance(seed)
    true_min, _, _ = brute_force(inst)
    on = BranchAndCut(_problem(inst), SearchOptions(time_limit=120)).solve()
    assert on.status == "optimal"
    assert on.lower_bound <= true_min + _slack(true_min)
    assert on.objective == pytest.approx(true_min, rel=1e-7, abs=0)
    off = BranchAndCut(_problem(inst), SearchOptions(time_limit=120))
    off.strong_candidates = 0
    assert off.solve().objective == pytest.approx(true_min, rel=1e-7, abs=0)


def test_it_fires_and_prunes(fired):
    for seed in range(8):
        BranchAndCut(_problem(weak_instance(seed)), SearchOptions(time_limit=120)).solve()
    assert fired["strong"] >= 8
    assert fired["pruned"] >= 1


@pytest.mark.parametrize("node_limit", [1, 2, 4, 9, 25])
@pytest.mark.parametrize("seed", [0, 3, 6])
def test_children_bounds_stay_below_the_optimum(seed, node_limit):
    # stopped early, the open nodes carry the children's strong-branching bounds: their least one
    # is the reported bound and must not pass the optimum
    inst = weak_instance(seed)
    true_min, _, _ = brute_force(inst)
    rep = BranchAndCut(_problem(inst), SearchOptions(time_limit=60, gap_tolerance=1e-9, node_limit=node_limit)).solve()
    assert rep.lower_bound <= true_min + _slack(true_min)
    assert rep.objective >= true_min - _slack(true_min)
