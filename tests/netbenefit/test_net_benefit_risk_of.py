"""``risk_of`` is the risk ``predict`` uses, for both model kinds, and a net-benefit gap warning points
at the caller's line."""

from __future__ import annotations

import warnings

import numpy as np

import pandas as pd

import pytest

import riskformula as rf


from riskformula.errors import OptimalityGapWarning

def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rf.risk_score(*args, progress=False, **kwargs)

@pytest.fixture(scope="module")
def breastcancer():
    return rf.load_dataset("breastcancer")

@pytest.fixture(scope="module")
def net_benefit_model(breastcancer):
    return _quiet("Benign ~ .", breastcancer, objective="net_benefit", max_size=3, coef_range=(0, 5),
                  time_limit=20)


def test_net_benefit_risk_of_is_the_band_risk_predict_uses(net_benefit_model, breastcancer):
    m = net_benefit_model
    s = m.score(breastcancer).to_numpy()
    np.testing.assert_array_equal(m.risk_of(s), m.predict(breastcancer).to_numpy())
    # a single score gives a single number, as the logistic model's risk_of does
    assert np.ndim(m.risk_of(s[0])) == 0 and float(m.risk_of(s[0])) == m.predict(breastcancer).iloc[0]
    # the risk table's band risks are what risk_of gives inside each band
    t = m.risk_table()
    np.testing.assert_array_equal(m.risk_of(t["score_from"].to_numpy()), t["risk_from"].to_numpy())


def test_net_benefit_dask_evaluation_uses_the_band_risks(net_benefit_model, breastcancer):
    dd = pytest.importorskip("dask.dataframe")
    m = net_benefit_model
    plain = m.evaluate(breastcancer).to_frame().set_index("metric")["value"]
    lazy = m.evaluate(dd.from_pandas(breastcancer, npartitions=2)).to_frame().set_index("metric")["value"]
    pd.testing.assert_series_equal(plain, lazy, check_exact=False, rtol=1e-9)
    np.testing.assert_array_equal(m.predict(dd.from_pandas(breastcancer, npartitions=2)).compute().to_numpy(),
                                  m.predict(breastcancer).to_numpy())


def test_logistic_risk_of_is_what_predict_uses(breastcancer):
    m = _quiet("Benign ~ .", breastcancer, max_size=3, time_limit=20)
    s = m.score(breastcancer).to_numpy()
    np.testing.assert_array_equal(m.risk_of(s), m.predict(breastcancer).to_numpy())


def test_net_benefit_gap_warning_is_attributed_to_the_callers_line(breastcancer):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rf.risk_score("Benign ~ .", breastcancer, objective="net_benefit", max_size=3, coef_range=(0, 5),
                      solver=None, time_limit=5, progress=False)
    gap = [w for w in caught if issubclass(w.category, OptimalityGapWarning)]
    assert gap and all(w.filename == __file__ for w in gap), [(w.filename, w.lineno) for w in caught]
