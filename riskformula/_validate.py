"""Deprecated location of :mod:`riskformula._checks` (the argument checks)."""

from ._moved import forward

__getattr__ = forward(__name__, "riskformula._checks", hint="use riskformula._checks.")
