"""Deprecated location of :mod:`riskformula.design`: ``build_design`` and ``split_formula`` are in
:mod:`riskformula.design.formula`; the frozen :class:`~riskformula.design.DesignSpec` (what a
fitted model keeps) and the training :class:`~riskformula.design.DesignMatrix` replace the former
mutable ``Design``."""

from ._moved import forward

__getattr__ = forward(__name__, "riskformula.design", "riskformula.design.formula",
                      hint="use riskformula.design (build_design, DesignSpec, DesignMatrix).")
