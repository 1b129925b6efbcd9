"""The cut archive: loss cuts dropped from the node LP are kept, and a node takes back the ones its
LP point violates most.  Every archived cut must stay a valid lower bound on the loss (a wrong
column would put the bound above the optimum), and searches with a pool small enough to drop
cuts at every node must still reach the brute-force optimum, on one process and on two.
"""

import numpy as np
import pytest

from riskformula.solver.options import SearchOptions
from riskformula.solver import BranchAndCut
from riskformula.solver.lp import CutArchive, NodeLP
from test_bruteforce import _problem, _slack, brute_force
from test_parallel_search import rounds, tree_instance  # noqa: F401  (a fixture)
from conftest import slow_params

# these tests are about the search tree: small problems keep theirs (see conftest.py)
pytestmark = pytest.mark.usefixtures("no_enumeration")


def _row(values, rhs, key=None, serial=0, n_coef=3):
    """A cut row as the LP books it: columns 0..n_coef−1 are the points, n_cols − 1 the loss."""
    idx = np.array([0, 1, 2, 9], dtype=np.int32)
    return (rhs, idx, np.asarray(values, dtype=float), key, serial)


def test_the_most_violated_rows_come_back_and_leave_the_archive():
    a = CutArchive(n_coef=3, capacity=10)
    a.add([_row([1, 0, 0, 1], 1.0, serial=0), _row([0, 1, 0, 1], 5.0, serial=1),
           _row([0, 0, 1, 1], 3.0, serial=2)], n_cols=10)
    # at x = 0 with loss 0 the violations are the right-hand sides: 5, 3, 1
    rhs, rows, keys, serials = a.take_violated(np.zeros(4), limit=2, tol=0.0)
    assert serials.tolist() == [1, 2] and rhs.tolist() == [5.0, 3.0]
    assert rows[0].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert len(a) == 1
    # a row satisfied at the point stays: x_0 = 1 meets 1·x_0 + L ≥ 1
    assert len(a.take_violated(np.array([1.0, 0, 0, 0]), limit=5, tol=1e-9)[0]) == 0
    assert a.state()[3].tolist() == [0]
    assert a.take_violated(np.zeros(4), limit=5, tol=0.0)[3].tolist() == [0]
    assert len(a) == 0


def test_the_archive_keeps_its_newest_rows_and_drops_a_cut_back_in_the_pool():
    a = CutArchive(n_coef=3, capacity=2)
    a.add([_row([1, 0, 0, 1], 1.0, key=k, serial=s) for s, k in enumerate([b"a", b"b", b"c"])], n_cols=10)
    assert a.serials.tolist() == [1, 2]
    a.discard_key(b"b")
    assert a.state()[3].tolist() == [2]
    none = CutArchive(n_coef=3, capacity=0)  # more columns than the archive's memory allows
    none.add([_row([1, 0, 0, 1], 1.0)], n_cols=10)
    none.extend(*a.state())
    assert len(none) == 0
    b = CutArchive(n_coef=3, capacity=5)
    b.extend(*a.state())
    assert b.serials.tolist() == [2] and b.A.tolist() == a.A.tolist()


def _archived_cuts_hold_at(lp: NodeLP, lam: np.ndarray, loss: float) -> bool:
    point = np.concatenate([lam, [loss]])
    return bool(np.all(lp.archive.A @ point >= lp.archive.rhs - 1e-9 * (1 + np.abs(lp.archive.rhs))))


@pytest.mark.parametrize("seed", slow_params(range(6), slow=range(3, 6)))
def test_a_tiny_pool_still_finds_the_brute_force_optimum(seed, monkeypatch):
    restored = []
    original = NodeLP.restore_archived

    def counted(self, *args):
        n = original(self, *args)
        restored.append(n)
        return n

    monkeypatch.setattr(NodeLP, "restore_archived", counted)
    inst = tree_instance(seed)
    true_min, _, _ = brute_force(inst)
    bc = BranchAndCut(_problem(inst), SearchOptions(time_limit=120, max_cuts=4))
    report = bc.solve()
    assert report.status == "optimal"
    assert report.lower_bound <= true_min + _slack(true_min)
    assert report.objective == pytest.approx(true_min, rel=1e-7, abs=0)
    assert sum(restored) > 0  # the archive fired
    lam = np.asarray(report.solution, dtype=float)
    assert _archived_cuts_hold_at(bc.lp, lam, bc.p.loss.value(lam))


@pytest.mark.parametrize("seed", [0, 3])
def test_a_tiny_pool_on_two_processes_gives_the_same_model(seed, rounds):  # noqa: F811
    inst = tree_instance(seed)
    true_min, _, _ = brute_force(inst)
    one = BranchAndCut(_problem(inst), SearchOptions(time_limit=120, max_cuts=4)).solve()
    two = BranchAndCut(_problem(inst), SearchOptions(time_limit=120, max_cuts=4, n_jobs=2)).solve()
    assert two.status == "optimal"
    assert two.lower_bound <= true_min + _slack(true_min)
    assert two.objective == pytest.approx(true_min, rel=1e-7, abs=0)
    assert two.solution == one.solution
    assert rounds["rounds"] >= 3
