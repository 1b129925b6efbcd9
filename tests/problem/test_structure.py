"""The pipeline's seams: a new constraint needs only the builder's primitives; one variable layout;
a frozen design spec without training data; the old module paths still import."""

import dataclasses
import importlib
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.problem import VariableLayout
from riskformula.problem.constraints import Constraint

FORMULA = 'diagnosis == "M" ~ radius_worst + texture_worst + concavity_worst + smoothness_worst'
FIT = dict(max_size=3, coef_range=(-4, 4), time_limit=30)


@pytest.fixture(scope="module")
def data():
    return rf.load_dataset("wdbc")


@dataclass(frozen=True, repr=False)
class PointsAtMost(Constraint):
    """A new kind of constraint written with the builder's primitives only: Σ |points| ≤ m over
    some terms, through one auxiliary variable per column (t_j ≥ ±λ_j, Σ t_j ≤ m)."""

    m: int
    terms: tuple

    def describe(self) -> str:
        return f"points_at_most({self.m}, {', '.join(map(repr, self.terms))})"

    def apply(self, b) -> None:
        cols = sorted({j for t in self.terms for j in b.columns(t)})
        lo, hi = b.bounds(cols)
        total = {}
        for j, top in zip(cols, np.maximum(np.abs(lo), np.abs(hi))):
            t = b.add_aux(0.0, float(top), integer=True, name=f"|points| of column {j}",
                          fill=lambda lam, alpha, j=j: abs(lam[1 + j]))
            b.add_row({t: 1.0, b.layout.lam(j): -1.0}, 0.0, math.inf, self.describe())
            b.add_row({t: 1.0, b.layout.lam(j): 1.0}, 0.0, math.inf, self.describe())
            total[t] = 1.0
        b.add_row(total, -math.inf, self.m, self.describe())


@dataclass(frozen=True, repr=False)
class MyAtMost(Constraint):
    """``rf.at_most`` again, from the "used" quantity of each term and one row."""

    m: int
    terms: tuple

    def describe(self) -> str:
        return f"my_at_most({self.m}, ...)"

    def apply(self, b) -> None:
        coefs = {}
        for t in self.terms:
            for k, v in b.used(t).items():
                coefs[k] = coefs.get(k, 0.0) + v
        b.add_row(coefs, -math.inf, self.m, self.describe())


def test_a_new_constraint_is_one_subclass(data):
    free = rf.risk_score(FORMULA, data, **FIT)
    assert int(free.coef.abs().sum()) > 3
    m = rf.risk_score(FORMULA, data, **FIT, constraints=[PointsAtMost(3, ("radius_worst", "concavity_worst",
                                                                            "texture_worst", "smoothness_worst"))])
    assert m.status == "optimal" and int(m.coef.abs().sum()) <= 3
    assert m.objective >= free.objective - 1e-12
    assert "points_at_most(3" in str(m.summary())
    loose = rf.risk_score(FORMULA, data, **FIT, constraints=[PointsAtMost(100, tuple(free.coef.index))])
    assert loose.objective == pytest.approx(free.objective, rel=1e-9)


def test_a_constraint_from_the_used_primitive_equals_the_builtin(data):
    terms = ("radius_worst", "concavity_worst")
    builtin = rf.risk_score(FORMULA, data, **FIT, constraints=[rf.at_most(1, *terms)])
    mine = rf.risk_score(FORMULA, data, **FIT, constraints=[MyAtMost(1, terms)])
    assert mine.coef.to_dict() == builtin.coef.to_dict() and mine.intercept == builtin.intercept
    assert mine.objective == pytest.approx(builtin.objective, rel=1e-12)


def test_one_variable_layout():
    lay = VariableLayout(d=3, n_aux=2)
    x = np.arange(lay.n_cols)
    assert lay.intercept == 0 and lay.n_cols == 9
    assert x[lay.lam_slice].tolist() == [0, 1, 2, 3] and x[lay.alpha_slice].tolist() == [4, 5, 6]
    assert x[lay.aux_slice].tolist() == [7, 8]
    assert [lay.lam(j) for j in range(3)] == [1, 2, 3] and lay.alpha(np.arange(3)).tolist() == [4, 5, 6]
    assert lay.aux(0) == 7 and lay.with_aux(5).n_cols == 12


def test_problem_and_builder_share_the_layout(data):
    from riskformula.design import build_design
    from riskformula.problem import LogisticLoss, build_problem

    design = build_design('diagnosis == "M" ~ C(pd.cut(radius_worst, 4)) + texture_worst', data, context={"pd": pd})
    loss = LogisticLoss(design.X, design.y)
    d = design.X.shape[1]
    problem = build_problem(design.spec, loss, np.full(d, -3.0), np.full(d, 3.0), max_size=2,
                            constraints=[rf.at_most(1, "C(pd.cut(radius_worst, 4))", "texture_worst")])
    lay = problem.layout
    assert lay.d == d and lay.n_cols == problem.n_cols
    # the builder's "used" binary of the factor sits right after the points and indicators
    assert problem.aux_names[0].startswith("used[") and lay.aux(0) == 2 * d + 1
    x = problem.complete(np.array([-1.0, 2.0] + [0.0] * (d - 1)))
    assert x is not None and x[lay.alpha(0)] == 1 and x[lay.aux(0)] == 1


def test_design_spec_is_frozen_and_holds_no_training_data(data):
    m = rf.risk_score(FORMULA, data, max_size=2, time_limit=10)
    spec = m.design
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.columns = ()
    assert isinstance(spec.columns, tuple) and isinstance(spec.labels, tuple)
    assert not any(isinstance(v, np.ndarray) and v.ndim == 2 for v in vars(m).values())
    assert not hasattr(spec, "X") and not hasattr(spec, "y")
    np.testing.assert_array_equal(spec.transform(data.head(5))[:, 0], data["radius_worst"].head(5))
    assert m.training.nobs == len(data) and m.training.rows_digest == m.rows_digest


@pytest.mark.parametrize("module", ["riskformula.compile", "riskformula.formula", "riskformula._validate",
                                    "riskformula.validation", "riskformula.metrics", "riskformula._moved"])
def test_pre_release_module_paths_are_gone(module):
    """Nothing was released, so moved modules leave no forwarding shims behind."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(module)


def test_rf_compare_is_the_function():
    import riskformula.reports.comparison  # noqa: F401
    assert callable(rf.compare) and rf.compare is rf.reports.comparison.compare


def test_public_old_paths_need_no_warning():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from riskformula.constraints import Constraint as C, at_most, sign  # noqa: F401
        from riskformula.thresholds import candidate_cuts, cut, levels, threshold  # noqa: F401
    assert C is Constraint and at_most is rf.at_most and threshold is rf.threshold
