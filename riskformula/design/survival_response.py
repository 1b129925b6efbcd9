"""The time-to-event outcome ``Surv(time, event) ~ ...``: follow-up times and event indicators.

As in R's ``survival::coxph`` (Therneau & Grambsch, 2000), the left side ``Surv(time, event)``
names two columns of the data: ``time``, the follow-up time of each row (a number ≥ 0, in any
unit), and ``event``, whether the event was seen at that time (1) or the row was censored then
(0).  The event column may hold 0/1, booleans, or two levels of which ``event=`` names the
event (``event="dead"``).  Right censoring only: left truncation (``Surv(start, stop, event)``)
and competing risks (an event column with several kinds of event) are refused with a message
saying so.

The two names are plain column names (or backtick-quoted ones); nothing in ``Surv(...)`` is
evaluated as code, and the formula's other side is checked by :mod:`~riskformula.design.guard`
as for any formula.  Bad times (negative, missing, infinite, not numbers), an event column with
other values, or data without a single event are one :class:`~riskformula.errors.DataError`
each, saying what is wrong and how to fix it.

>>> resp = parse_surv("Surv(days, status)", ["days", "status", "age"])
>>> resp.time, resp.event, resp.label
('days', 'status', 'Surv(days, status)')
>>> import pandas as pd
>>> df = pd.DataFrame({"days": [5.0, 8.0, 2.0], "status": ["dead", "alive", "dead"]})
>>> t, d, level = survival_arrays(df, resp, event="dead")
>>> t.tolist(), d.tolist(), level
([5.0, 8.0, 2.0], [1, 0, 1], 'dead')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataError, FormulaError, did_you_mean
from .._json import plain as _plain

__all__ = ["SurvivalResponse", "parse_surv", "survival_arrays", "is_surv"]

_NAME = r"`[^`]+`|[A-Za-z_][A-Za-z0-9_.]*"
_SURV = re.compile(rf"^\s*Surv\s*\(\s*(?P<time>{_NAME})\s*,\s*(?P<event>{_NAME})\s*\)\s*$", re.S)
_SURV_CALL = re.compile(r"^\s*Surv\s*\(")


@dataclass(frozen=True)
class SurvivalResponse:
    """The columns of ``Surv(time, event)``."""

    time: str
    event: str

    @property
    def label(self) -> str:
        """The outcome as written back: ``Surv(time, event)``."""
        return f"Surv({_show(self.time)}, {_show(self.event)})"

    @property
    def formulaic_lhs(self) -> str:
        """The left side formulaic reads: both columns, so they count as the outcome's variables
        (never predictors, never filled in; dropped or refused when missing)."""
        return f"`{self.time}` + `{self.event}`"


def _show(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name) else f"`{name}`"


def is_surv(lhs: str) -> bool:
    """Whether the left side of a formula is a ``Surv(...)`` call."""
    return bool(_SURV_CALL.match(lhs))


def parse_surv(lhs: str, columns) -> SurvivalResponse | None:
    """The :class:`SurvivalResponse` of a left side ``Surv(time, event)`` whose names are columns of
    the data (``columns``); None when ``lhs`` is not a ``Surv(...)`` call."""
    if not is_surv(lhs):
        return None
    m = _SURV.match(lhs)
    if m is None:
        n_args = lhs.count(",") + 1
        extra = (" Left truncation (Surv(start, stop, event)) is not supported: only right-censored follow-up."
                 if n_args == 3 else "")
        raise FormulaError(f"the outcome {lhs.strip()!r} must be Surv(time, event) with two column names: the "
                           "follow-up time and the event indicator (0/1, True/False, or two levels with "
                           f"`event=` naming the event), e.g. 'Surv(days, status) ~ age + C(stage)'.{extra}")
    time, event = (m.group(k).strip("`") for k in ("time", "event"))
    names = [str(c) for c in columns]
    for role, name in (("time", time), ("event", event)):
        if name not in names:
            raise FormulaError(f"the {role} column `{name}` of {lhs.strip()!r} is not a column of `data`."
                               f"{did_you_mean(name, names)}")
    if time == event:
        raise FormulaError(f"{lhs.strip()!r} names the same column for the time and the event; Surv(time, event) "
                           "takes the follow-up time first and the event indicator second.")
    return SurvivalResponse(time, event)



def as_level(levels: list, value) -> object:
    """The level among ``levels`` equal to ``value`` (``1`` of levels ``[False, True]`` is ``True``,
    of ``[0.0, 1.0]`` ``1.0``), so that the event is stored and shown as the data hold it; ``value``
    itself when no level equals it."""
    same = [v for v in levels if v == value]
    return next((v for v in same if type(v) is type(value)), same[0] if same else value)


def _event_level(raw: pd.Series, name: str, event) -> object:
    """The level of the event column that counts as the event."""
    levels = [_plain(v) for v in pd.unique(raw)]
    shown = ", ".join(sorted(map(repr, levels))[:6])
    if event is not None:
        if isinstance(event, str) and event not in set(levels):
            # the command line gives text: "1" means the level 1
            same = [v for v in levels if str(v) == event]
            event = same[0] if len(same) == 1 else event
        if event not in set(levels):
            raise DataError(f"`event={event!r}` is not a level of the event column `{name}`; its levels are {shown}.")
        if len(levels) > 2:
            raise DataError(f"the event column `{name}` has {len(levels)} levels ({shown}); Surv(time, event) needs "
                            "two: the event and censored. Competing risks are not supported: make one event "
                            f"column, e.g. data[{name!r}] == {event!r}.")
        return as_level(levels, event)
    if len(levels) <= 2 and all(isinstance(v, (bool, int, float)) for v in levels) and set(levels) <= {0, 1}:
        # True == 1 in Python: a column of booleans keeps True as its event level, one of 0.0/1.0 1.0
        return as_level(levels, True if all(isinstance(v, bool) for v in levels) else 1)
    if len(levels) > 2:
        raise DataError(f"the event column `{name}` has {len(levels)} levels ({shown}); Surv(time, event) needs 0/1 "
                        "(censored/event), True/False, or two levels with `event=` naming the event. Competing "
                        "risks are not supported.")
    raise DataError(f"the event column `{name}` has levels {shown}; say which is the event with `event=...`, "
                    f"or code it 0/1 (1 = event, 0 = censored).")


def survival_arrays(frame: pd.DataFrame, response: SurvivalResponse,
                    event=None) -> tuple[np.ndarray, np.ndarray, object]:
    """(times, 0/1 events, the event level) of the rows of ``frame``, checked: every time a finite
    number ≥ 0, every event value one of two levels, and at least one event.  ``frame`` is not
    modified."""
    tcol, ecol = frame[response.time], frame[response.event]
    if tcol.isna().any() or ecol.isna().any():
        bad = [c for c, col in ((response.time, tcol), (response.event, ecol)) if col.isna().any()]
        raise DataError(f"missing values in the outcome column(s) {bad}; a row without its follow-up time or event "
                        "cannot be fitted. Drop those rows, or pass missing=\"drop\".")
    if pd.api.types.is_bool_dtype(tcol) or not (pd.api.types.is_numeric_dtype(tcol)
                                                 or isinstance(tcol.dtype, pd.CategoricalDtype)):
        kind = "true/false values" if pd.api.types.is_bool_dtype(tcol) else f"values of type {tcol.dtype}"
        raise DataError(f"the time column `{response.time}` holds {kind}; Surv(time, event) needs follow-up times "
                        "as numbers (e.g. days). Convert dates to durations first, e.g. (end - start).dt.days.")
    try:
        time = tcol.to_numpy(dtype=float)
    except (TypeError, ValueError):
        shown = list(pd.unique(tcol))[:3]
        raise DataError(f"the time column `{response.time}` holds values that are not numbers ({shown}...); "
                        "Surv(time, event) needs follow-up times as numbers.") from None
    if not np.all(np.isfinite(time)):
        raise DataError(f"the time column `{response.time}` holds {int((~np.isfinite(time)).sum())} infinite or "
                        "missing value(s); every follow-up time must be a finite number.")
    if np.any(time < 0):
        first = float(time[time < 0][0])
        raise DataError(f"the time column `{response.time}` holds {int((time < 0).sum())} negative time(s) (e.g. "
                        f"{first:g}); follow-up times are durations ≥ 0 from the start of follow-up.")
    level = _event_level(ecol, response.event, event)
    y = (ecol.to_numpy() == level).astype(int)
    if not y.any():
        raise DataError(f"every row is censored (the event column `{response.event}` never equals {level!r} in the "
                        "rows used); a time-to-event score needs some events.")
    return time, y, level
