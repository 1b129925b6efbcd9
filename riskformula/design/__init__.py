"""Formula + data → design.

``formula`` parses the formula and builds the training :class:`DesignMatrix`; ``spec`` holds the
frozen :class:`DesignSpec` a fitted model keeps to encode new data; ``terms`` resolves the
names users give to terms (``coef_range``, ``initial``, constraints) to design columns.
"""

from .spec import DesignSpec, check_frame
from .matrix import DesignMatrix
from .terms import TermResolver
from .formula import build_design, split_formula

__all__ = ["DesignSpec", "DesignMatrix", "TermResolver", "build_design", "split_formula", "check_frame"]
