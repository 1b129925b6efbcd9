"""Deprecated location of :mod:`riskformula.reports.comparison`; ``rf.compare``, ``rf.anova`` and
``rf.ComparisonTable`` are the public names."""

from ._moved import forward

__getattr__ = forward(__name__, "riskformula.reports.comparison",
                      hint="use rf.compare / rf.anova / rf.ComparisonTable, or riskformula.reports.comparison.")
