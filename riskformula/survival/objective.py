"""``rf.cox(ties=...)``: the Cox objective with its own setting, as R's ``glm`` takes
``family=binomial(link=...)`` and riskformula's net-benefit objective ``rf.net_benefit(...)``."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SettingsError

__all__ = ["CoxObjective", "cox", "TIES"]

#: ways to handle tied event times in the partial likelihood and the baseline hazard
TIES = ("efron", "breslow")


@dataclass(frozen=True)
class CoxObjective:
    """The time-to-event objective (``objective="cox"``) with how tied event times count."""

    ties: str = "efron"
    #: the registered objective this object names (see :mod:`riskformula.objectives`)
    objective = "cox"

    def __post_init__(self):
        if self.ties not in TIES:
            raise SettingsError(f"`ties` must be 'efron' (Efron, 1977; the default, as R's coxph) or 'breslow' "
                                f"(Breslow, 1974); got {self.ties!r}.")


def cox(ties: str = "efron") -> CoxObjective:
    """The Cox (1972) partial-likelihood objective of a time-to-event score, for
    ``risk_score(..., objective=rf.cox(ties="breslow"))`` (``objective=None`` picks it, with Efron's
    ties, for a ``Surv(time, event)`` formula).

    Parameters
    ----------
    ties : {"efron", "breslow"}, default "efron"
        How tied event times enter the partial likelihood and the baseline hazard: Efron's (1977)
        approximation (R's ``coxph`` default) or Breslow's (1974).

    Returns
    -------
    CoxObjective

    Examples
    --------
    >>> import riskformula as rf
    >>> rf.cox(ties="breslow").ties
    'breslow'
    """
    return CoxObjective(ties)


def ties_of(objective) -> str:
    """The ties of an objective argument: a :class:`CoxObjective`'s, else Efron's."""
    return objective.ties if isinstance(objective, CoxObjective) else "efron"
