"""Deprecated: renamed :mod:`riskformula._checks` (argument checks)."""

import warnings

from ._checks import check_coef_bounds, check_int, check_positive, check_range, check_weights  # noqa: F401

warnings.warn("riskformula._validate is deprecated; it is now riskformula._checks.", DeprecationWarning,
              stacklevel=2)
