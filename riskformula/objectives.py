"""The objectives a risk score can be fitted for, as registered entries.

Each objective's module registers one :class:`Objective` (:func:`register_objective`): its fit
function and the model arguments and search settings it reads. :func:`riskformula.risk_score`
looks the objective up here, refuses in one message any argument or setting the objective does
not read, and calls its fit with the model's arguments (one :class:`~riskformula.arguments.ModelArguments`)
and the search settings (one :class:`~riskformula.SearchControl`) — so a new objective is one
registered entry, not another branch of the front door. Registered: ``"logistic"`` (:mod:`riskformula.logistic`) and
``"net_benefit"`` (:mod:`riskformula.netbenefit.fit`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import SettingsError, did_you_mean

__all__ = ["Objective", "register_objective", "objective_entry", "registered_objectives"]


@dataclass(frozen=True)
class Objective:
    """One objective: ``fit(formula, data, arguments, control)`` returns the fitted model
    (``arguments``: a :class:`~riskformula.arguments.ModelArguments`, ``control``: a
    :class:`~riskformula.SearchControl`).

    ``arguments``: the names of the model arguments it reads (the others must keep their defaults);
    ``search``: the fields of :class:`~riskformula.SearchControl` it reads
    (the others must keep theirs); ``why_not``: for an argument or setting it does not read, why
    (shown in the error).
    """

    name: str
    fit: Callable
    arguments: frozenset
    search: frozenset
    description: str = ""
    why_not: dict = field(default_factory=dict)

    def check(self, given, control) -> None:
        """Refuse an argument named in ``given`` (those set away from their defaults) or a setting of
        ``control`` that this objective does not read."""
        for name in list(given) + list(control.changed()):
            if name not in self.arguments and name not in self.search:
                why = self.why_not.get(name, "")
                why = why if not why or why.endswith(".") else why + "."
                raise SettingsError(f"`{name}` does not apply with objective={self.name!r}"
                                    f"{': ' + why if why else '.'} Leave it out.")


_OBJECTIVES: dict[str, Objective] = {}


def register_objective(objective: Objective) -> None:
    """Make ``objective`` available as ``risk_score(..., objective=objective.name)``."""
    _OBJECTIVES[objective.name] = objective


def registered_objectives() -> tuple:
    """The names of the registered objectives."""
    return tuple(_OBJECTIVES)


def objective_entry(objective) -> Objective:
    """The registered objective ``objective`` names (its name, or an object whose ``objective``
    attribute is its name, such as the decision grid of ``rf.net_benefit(...)``); a
    :class:`SettingsError` naming the choices otherwise."""
    name = objective if isinstance(objective, str) else getattr(objective, "objective", objective)
    entry = _OBJECTIVES.get(name) if isinstance(name, str) else None
    if entry is None:
        names = [repr(k) for k in _OBJECTIVES]
        choices = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        raise SettingsError(f"`objective` must be {choices}; got {name!r}.{did_you_mean(name, list(_OBJECTIVES))}")
    return entry
