"""Deprecated location of :mod:`riskformula.reports.metrics`."""

from ._moved import forward

__getattr__ = forward(__name__, "riskformula.reports.metrics", hint="import riskformula.reports.metrics instead.")
