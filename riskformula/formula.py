"""Deprecated: moved to :mod:`riskformula.design`.

``build_design`` and ``split_formula`` are in :mod:`riskformula.design.formula`; the frozen
:class:`~riskformula.design.DesignSpec` (what a fitted model keeps) and the training
:class:`~riskformula.design.DesignMatrix` replace the former mutable ``Design``.
"""

import warnings

from .design import DesignMatrix, DesignSpec, build_design, check_frame, split_formula

warnings.warn("riskformula.formula is deprecated; import from riskformula.design instead.",
              DeprecationWarning, stacklevel=2)

__all__ = ["build_design", "split_formula", "check_frame", "DesignSpec", "DesignMatrix"]
