"""Principal reasons: the features that cost a person the most points.

Adverse-action notices (and scorecard practice) name the items on which a person lost the most
points compared with the best value the item allows.  For a risk score where points add risk
(``goal="below"``, the default), a feature's reason points are its current points minus the
fewest points it can give inside the observed range; with ``goal="above"`` (a score to raise)
it is the most points it can give minus the current ones.

A person missing a variable fitted with ``missing="item"`` meets the card's item "x missing": its
region reads so, its points are that item's, and its best points are the fewest (most) any
measured value gives; a missing value is never the best value of a measured variable (no
counterfactual makes a measured variable missing, see :mod:`.search`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from tabulate import tabulate

from ..errors import SettingsError
from ..reports import render as r
from .instance import build_instances
from .profile import TrainingProfile
from ..design.missing import missing_label
from .regions import build_space, is_missing, probe_points
from .search import _as_frame, _check_groups, _check_int


class Reasons(r.Formats):
    """Principal reasons per person: ``print(r)`` or ``r.to_frame()`` (one row per person and reason)."""

    def __init__(self, frame: pd.DataFrame, goal: str):
        self._frame = frame
        self.goal = goal

    def to_frame(self) -> pd.DataFrame:
        return self._frame.copy()

    _COLUMNS = ["#", "feature", "value", "region", "points", "best", "excess"]

    def _title(self) -> str:
        word = "adds the most risk" if self.goal == "below" else "loses the most points"
        return f"Principal reasons (the features whose current value {word})"

    def _people(self):
        """(person, rows of their table, or None when no feature costs them points), in order."""
        for person, g in self._frame.groupby("person", sort=False):
            if g["feature"].isna().all():
                yield person, None
                continue
            yield person, [[int(x.rank), x.feature, x.value, x.region, _num(x.points), _num(x.best_points),
                            _num(x.reason_points)] for x in g.itertuples()]

    def __str__(self) -> str:
        out = [self._title()]
        for person, rows in self._people():
            if rows is None:
                out.append(f"\nperson {person}: no feature costs any points")
                continue
            out.append(f"\nperson {person}:\n" + "\n".join(
                "  " + line for line in tabulate(rows, headers=self._COLUMNS, disable_numparse=True).splitlines()))
        return "\n".join(out)

    def render(self, kind: str = "text") -> str:
        """The reasons as ``"text"`` (what ``print`` shows), ``"markdown"``, ``"html"`` or ``"latex"``."""
        r.check_kind(kind)
        if kind == "text":
            return str(self)
        blocks = [r.heading(r.escape(self._title(), kind), kind, 1)]
        for person, rows in self._people():
            if rows is None:
                blocks.append(r.paragraph(f"person {person}: no feature costs any points", kind))
                continue
            blocks.append(r.heading(r.escape(f"person {person}", kind), kind))
            blocks.append(r.table(pd.DataFrame(rows, columns=self._COLUMNS).astype(str), kind))
        return r.document(blocks, kind)

    def to_dict(self) -> dict:
        """``goal`` and one record per person and reason (missing values as None), for JSON."""
        frame = self._frame.astype(object).where(self._frame.notna(), None)
        return {"goal": self.goal, "reasons": r.records(frame)}

    def __repr__(self) -> str:
        return f"<Reasons: {self._frame['person'].nunique()} people>"


def reasons(model, people, n: int = 3, goal: str = "below", groups: dict | None = None,
            data: pd.DataFrame | None = None) -> Reasons:
    """The ``n`` features that cost each person the most points (see :meth:`RiskScore.reasons`)."""
    people = _as_frame(people)
    n = _check_int("n", n, 1)
    if goal not in ("below", "above"):
        raise SettingsError(f"`goal` must be 'below' (points add risk) or 'above' (points are wanted); got {goal!r}.")
    profile = TrainingProfile.from_data(model, _as_frame(data, "data")) if data is not None else model.profile
    if profile is None:
        raise SettingsError("this model carries no training profile; pass the training rows as `data=`.")
    sign = 1 if goal == "above" else -1
    space = build_space(model, profile, _check_groups(groups, people), list(people.columns))
    X = model.encode_design(people, "explain", name="people")
    probe_points(space, people.iloc[0].to_dict(), list(people.columns))
    insts = build_instances(space, people, X, np.zeros(len(people)), sign)
    rows = []
    coef = space.coef
    for inst, xi in zip(insts, X):
        found = []
        for bl in inst.blocks:
            b = bl.block
            best = 0.0
            for o in np.flatnonzero(bl.allowed):
                if o == 0:
                    continue
                g = max(bl.alpha * bl.lo[o], bl.alpha * bl.hi[o]) + bl.beta[o] if b.continuous else bl.gain[o]
                best = max(best, float(g))
            if best <= 0:
                continue
            pts = float(xi[b.columns] @ coef[b.columns]) + b.card_shift
            # features linked by an interaction share their points: one reason
            shown, regions = [], []
            for k, f in enumerate(b.features):
                x = bl.current[k]
                c = f.candidate_of(x)
                shown.append(f.show(x))
                if c is None and f.kind != "group" and is_missing(x):
                    c_label = missing_label(f.name)  # the card's item "x missing": the person meets it
                else:
                    c_label = f.candidates[c].label if c is not None else ""
                regions.append(c_label)
            found.append((best, " & ".join(f.name for f in b.features), ", ".join(shown),
                          ", ".join(r for r in regions if r), pts, pts + sign * best))
        found.sort(key=lambda r: -r[0])
        if not found:
            rows.append({"person": inst.label, "rank": np.nan, "feature": None, "value": None, "region": None,
                         "points": np.nan, "best_points": np.nan, "reason_points": np.nan})
        for rank, (best, name, val, region, pts, bestp) in enumerate(found[:n], 1):
            rows.append({"person": inst.label, "rank": rank, "feature": name, "value": val, "region": region,
                         "points": pts, "best_points": bestp, "reason_points": best})
    return Reasons(pd.DataFrame(rows), goal)


def _num(x) -> str:
    x = float(x)
    return f"{int(round(x))}" if abs(x - round(x)) < 1e-9 else f"{x:.4g}"
