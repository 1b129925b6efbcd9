"""``synthetic_thresholds`` checks its arguments and says when no draw meets the class share."""

from __future__ import annotations


import pytest

import riskformula as rf


from riskformula.errors import SettingsError


@pytest.fixture(scope="module")
def breastcancer():
    return rf.load_dataset("breastcancer")


@pytest.mark.parametrize("kwargs, match", [
    ({"n": -5, "p": 3}, "`n`"),
    ({"n": 1, "p": 3}, "`n`"),
    ({"n": 10, "p": 0}, "`p`"),
    ({"n": 10.5, "p": 1}, "`n`"),
    ({"n": 50, "p": 2, "min_class_share": 0.6}, "min_class_share"),
    ({"n": 50, "p": 2, "min_class_share": -0.1}, "min_class_share"),
])
def test_synthetic_thresholds_refuses_bad_arguments(kwargs, match):
    with pytest.raises(SettingsError, match=match):
        rf.synthetic_thresholds(**kwargs)


def test_synthetic_thresholds_says_when_no_draw_meets_the_share():
    from riskformula.datasets import synthetic
    with pytest.raises(SettingsError, match="none of 1,000 generating models"):
        # 0.5 of 7 rows cannot be met (the classes split 3/4 at best)
        synthetic.synthetic_thresholds(7, 1, min_class_share=0.5)
    d = rf.synthetic_thresholds(50, 2, min_class_share=0.3)
    assert d["y"].value_counts(normalize=True).min() >= 0.3
