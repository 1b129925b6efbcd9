"""The Rashomon set of risk scores: every score within (1 + ε) of the best objective, proven complete.

:func:`rashomon_set` lists them (:mod:`.search`, :mod:`.listing`) and returns a :class:`RashomonSet`
(:mod:`.result`): its members, each variable's use across the set, and a member chosen by a
user's costs as an ordinary fitted :class:`~riskformula.RiskScore`; :mod:`.plots` draws them.
"""

from .fit import rashomon_set
from .result import RashomonMember, RashomonSet

__all__ = ["rashomon_set", "RashomonSet", "RashomonMember"]
