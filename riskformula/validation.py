"""Deprecated location of cross-validation and the size path: the fitting functions are in
:mod:`riskformula.tuning` (``rf.cross_validate``, ``rf.size_path``), their reports in
:mod:`riskformula.reports.cross_validation` and :mod:`riskformula.reports.size_path`."""

from ._moved import forward

__getattr__ = forward(__name__, "riskformula.tuning", "riskformula.reports.cross_validation",
                      "riskformula.reports.size_path",
                      hint="use rf.cross_validate / rf.size_path, or riskformula.tuning and "
                           "riskformula.reports.cross_validation / riskformula.reports.size_path.")
