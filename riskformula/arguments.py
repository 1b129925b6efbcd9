"""What model a fit looks for: :class:`ModelArguments`, the one frozen object of the model's arguments.

:func:`riskformula.risk_score` takes the model's arguments as keywords (R-style) and gathers them
here once; the object checks them once, and every objective's fit (:mod:`riskformula.objectives`)
and :func:`riskformula.rashomon_set` take it whole. The search's settings are apart, in
:class:`~riskformula.SearchControl` (as R's ``glm`` keeps ``glm.control``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _checks as v
from .errors import SettingsError
from .problem.constraints import check_constraints

__all__ = ["ModelArguments"]


@dataclass(frozen=True)
class ModelArguments:
    """The model's arguments of :func:`riskformula.risk_score`, checked (see it for each one's meaning).

    Sizes, the size penalty, the event weight, the intercept's range, the score scale and the
    intercept's kind are checked and normalised when the object is made (whole numbers, floats,
    a tuple of constraints); ``coef_range``, ``weights``, ``missing`` and ``initial`` name design
    columns or rows, so the design checks them. ``objective`` is the registered objective's name
    (``"logistic"``, ``"net_benefit"``) or an object naming it with its own settings (the
    decision thresholds of ``rf.net_benefit(...)``).

    Examples
    --------
    >>> from riskformula.arguments import ModelArguments
    >>> a = ModelArguments(max_size=3, c0=0.01)
    >>> a.max_size, a.given()
    (3, ('max_size', 'c0'))
    >>> a.replace(max_size=1).max_size
    1
    """

    max_size: int = 5
    min_size: int = 0
    coef_range: Any = (-5, 5)
    intercept_range: tuple[int, int] | None = None
    c0: float = 1e-6
    weights: Any = None
    positive_weight: float = 1.0
    event: Any = None
    missing: str | dict = "raise"
    context: dict | None = None
    constraints: tuple = ()
    factors_as_one: bool = False
    initial: Any = None
    scale: Any = 1
    real_intercept: bool | None = None
    horizon: Any = None
    ties: str = "efron"
    objective: Any = field(default="logistic", compare=False)

    #: the arguments only a time-to-event fit (``Surv(time, event) ~ ...``) reads
    SURVIVAL_ONLY = ("horizon", "ties")

    def __post_init__(self):
        put = object.__setattr__
        max_size = v.check_int("max_size", self.max_size, minimum=0, maximum=v.MAX_SIZE)
        min_size = v.check_int("min_size", self.min_size, minimum=0, maximum=v.MAX_SIZE)
        if min_size > max_size:
            raise SettingsError(f"`min_size` ({min_size}) is larger than `max_size` ({max_size}).")
        put(self, "max_size", max_size)
        put(self, "min_size", min_size)
        put(self, "c0", v.check_positive("c0", self.c0, allow_zero=True, maximum=v.MAX_C0))
        put(self, "positive_weight", v.check_positive("positive_weight", self.positive_weight,
                                                      minimum=1 / v.MAX_CLASS_WEIGHT, maximum=v.MAX_CLASS_WEIGHT))
        v.check_scale(self.scale)
        if self.intercept_range is not None:
            put(self, "intercept_range", v.check_range("intercept_range", self.intercept_range,
                                                       limit=v.MAX_INTERCEPT))
        put(self, "constraints", check_constraints(self.constraints))
        choice = self.real_intercept
        if choice is not None and not isinstance(choice, (bool, np.bool_)):
            raise SettingsError(f"`real_intercept` must be True, False or None (real with a fitted scale); "
                                f"got {choice!r}.")
        whole = self._whole_score_constraints()
        if choice and whole:
            raise SettingsError(f"`real_intercept=True` does not combine with {type(whole[0]).__name__} "
                                "constraints: their rows on the risk are written for whole scores. Leave "
                                "`real_intercept` at None (or False) to fit them with an integer intercept.")
        put(self, "real_intercept", None if choice is None else bool(choice))
        put(self, "horizon", check_horizons(self.horizon))
        if self.ties not in ("efron", "breslow"):
            raise SettingsError(f"`ties` must be 'efron' (Efron, 1977; the default, as R's coxph) or 'breslow' "
                                f"(Breslow, 1974); got {self.ties!r}.")

    # --- what the fits read ------------------------------------------------------------------
    @property
    def scales(self) -> tuple[float, ...]:
        """The score scales to search (sorted): the one scale, :data:`~riskformula._checks.FIT_SCALES`
        for ``scale="fit"``, or the listed ones."""
        return v.check_scale(self.scale)

    @property
    def fitted_scale(self) -> bool:
        """Whether the scale is chosen by the fit among every scale > 0 (``scale="fit"``)."""
        return isinstance(self.scale, str)

    @property
    def intercept_is_real(self) -> bool:
        """Whether the intercept is a real number: ``real_intercept``, or by default with a fitted
        scale (several scales) unless a risk bound or fairness constraint is given (their rows are
        written for whole scores)."""
        if self.real_intercept is None:
            return len(self.scales) > 1 and not self._whole_score_constraints()
        return self.real_intercept

    def _whole_score_constraints(self) -> list:
        # not the scale-dependent on_the_risk: every fairness row (at_score too) needs whole scores
        return [c for c in self.constraints if c.whole_scores]

    # --- the object itself -------------------------------------------------------------------
    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The model arguments' names (``objective`` apart)."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "objective")

    def given(self) -> tuple[str, ...]:
        """The names of the arguments set away from their defaults (an objective refuses those it does
        not read)."""
        return tuple(f.name for f in dataclasses.fields(self)
                     if f.name != "objective" and not _is_default(getattr(self, f.name), f.default))

    def replace(self, **changes) -> ModelArguments:
        """A copy with ``changes`` (checked as the constructor's arguments)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def split(cls, keywords: dict) -> tuple[dict, dict]:
        """``keywords`` as (the model arguments among them, the others)."""
        names = set(cls.names())
        return ({k: x for k, x in keywords.items() if k in names},
                {k: x for k, x in keywords.items() if k not in names})


def check_horizons(horizon) -> tuple[float, ...] | None:
    """``horizon`` of a time-to-event fit as a sorted tuple of distinct times > 0 (None: none given)."""
    if horizon is None:
        return None
    values = list(horizon) if isinstance(horizon, (list, tuple, np.ndarray)) else [horizon]
    out = []
    for h in values:
        if isinstance(h, (bool, np.bool_)) or not isinstance(h, (int, float, np.integer, np.floating)) \
                or not np.isfinite(h) or h <= 0:
            raise SettingsError(f"`horizon` must be a time > 0 in the unit of the follow-up times (e.g. "
                                f"horizon=365), or a list of such times (horizon=[1, 3, 5]); got {h!r}.")
        out.append(float(h))
    if not out or len(out) > 20:
        raise SettingsError(f"`horizon` must name between 1 and 20 times; got {len(out)}.")
    return tuple(sorted(set(out)))


def _is_default(value, default) -> bool:
    """Whether an argument was left at (or set to) its default."""
    if default is None or isinstance(default, bool):
        return value is default
    try:
        return not isinstance(value, bool) and bool(value == default)
    except (TypeError, ValueError):  # arrays, frames
        return False
