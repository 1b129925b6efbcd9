"""From a Surv() formula with threshold() terms to a certified Cox score, below the front door: the
design, the Cox loss on it, the problem with the threshold's formulation (its candidate cuts, one
of which may be used), and the branch-and-cut, checked against every integer point (brute force)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from riskformula.design import build_design
from riskformula.pipeline import design_bounds
from riskformula.problem import build_problem
from riskformula.problem.cox import CoxLoss
from riskformula.solver.branch_and_cut import BranchAndCut
from riskformula.solver.options import SearchOptions
from riskformula.solver.relaxation import first_order_cut
from conftest import slow_params


def _frame(seed, n=70):
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 5, n) * 10 + 40
    male = rng.integers(0, 2, n)
    eta = 0.04 * (age - 60) + 0.7 * male
    t = np.ceil(rng.exponential(np.exp(-eta) * 5))
    c = np.ceil(rng.exponential(8, n))
    return pd.DataFrame({"t": np.minimum(t, c), "d": (t <= c).astype(int), "age": age, "male": male})


def _setup(seed, ties, bound=2, max_size=2):
    df = _frame(seed)
    # one cut of age (a group of which one column may be used), or a step function of its cuts
    design = build_design(f"Surv(t, d) ~ threshold(age{', k=1' if seed % 2 == 0 else ''}) + male", df, survival=True)
    # the cut pruning of binary outcomes does not hold for the partial likelihood: every cut stays
    design, _, lower, upper = design_bounds(design, (-bound, bound), 0, drop_dominated=False)
    loss = CoxLoss(design.X, design.time, design.y, design.weights, ties=ties, scale=(1.0, 2.0)[seed % 2])
    p = build_problem(design.spec, loss, lower, upper, c0=0.002, max_size=max_size, intercept_range=(0, 0))
    return design, loss, p


def _brute_force(p, bound):
    best, arg = np.inf, None
    for lam in itertools.product(range(-bound, bound + 1), repeat=p.d):
        lam = np.r_[0.0, lam]
        x = p.complete(lam)  # None: the point breaks the threshold's rows or the size limit
        if x is None:
            continue
        v = p.objective(lam, x)
        if v < best:
            best, arg = v, lam
    return best, arg


@pytest.mark.parametrize("seed", slow_params(range(6), slow=range(2, 6)))
def test_threshold_design_certified(seed):
    design, loss, p = _setup(seed, ("efron", "breslow")[seed % 2])
    assert p.cut_families and loss.n_unique < design.nobs  # the cuts of age; rows merged
    assert bool(p.groups) == (seed % 2 == 0)
    report = BranchAndCut(p, SearchOptions(time_limit=60, gap_tolerance=1e-9, absolute_gap_tolerance=1e-10)).solve()
    best, _ = _brute_force(p, 2)
    assert report.status == "optimal"
    assert report.lower_bound <= best + 1e-12
    assert report.objective == pytest.approx(best, abs=1e-9)


def test_first_order_cut_bounds_the_relaxation():
    """The first-order cut (used when Kelley's cuts stall on threshold terms) is valid for the Cox
    loss: its bound is below the best integer objective, and its step size uses the Cox loss's
    own Lipschitz bound."""
    _, loss, p = _setup(1, "efron", bound=3, max_size=2)
    cut = first_order_cut(p, max_iterations=2000)
    assert cut is not None
    best, _ = _brute_force(p, 3)
    assert cut.bound <= best
    assert cut.bound <= cut.value + 1e-12
