"""Formula + data → design.

``formula`` parses the formula and builds the training :class:`DesignMatrix`; ``spec`` holds the
frozen :class:`DesignSpec` a fitted model keeps to encode new data; ``rules`` describes what each
design column computes from the data (a cut, a level, a value, a product: no evaluated text);
``terms`` resolves the names users give to terms (``coef_range``, ``initial``, constraints) to
design columns; ``serialize`` writes and checks the design part of a saved model.
"""

from .spec import DesignSpec, check_frame
from .matrix import DesignMatrix
from .rules import OutcomeRule, Rule
from .terms import TermResolver
from .formula import build_design, split_formula

__all__ = ["DesignSpec", "DesignMatrix", "Rule", "OutcomeRule", "TermResolver", "build_design", "split_formula",
           "check_frame"]
