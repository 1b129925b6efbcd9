"""The report of a counterfactual search: per person, what would have to change to meet the target."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from tabulate import tabulate

from ..reports import render as r

#: people shown in full by ``print``; ``to_frame()`` has them all
MAX_PRINTED = 10
#: the columns of a person's table
_COLUMNS = ["#", "feature", "current", "required", "region", "points", "new score", "new risk", "cost"]


@dataclass
class Change:
    """One changed feature: its current and required value, the region the score sees, and the
    points it moves the score by."""

    feature: str
    current: object
    required: object
    region: str
    points: float


@dataclass
class Counterfactual:
    """One way to meet the target: the changes, the new score and risk (re-scored by the model),
    and the cost (weighted scaled L1 distance)."""

    changes: list
    score: float
    risk: float
    cost: float
    values: dict = field(default_factory=dict)   # data column -> new value

    @property
    def features(self) -> list:
        return [c.feature for c in self.changes]


@dataclass
class PersonResult:
    """A person's counterfactuals and how the search ended.

    ``status``: ``"already met"``, ``"optimal"`` (proven cheapest), ``"infeasible"`` (proven: no
    counterfactual within the limits; ``reason`` says why), ``"time limit"`` (best found, not
    proven, or none found).
    """

    person: object
    score: float
    risk: float
    status: str
    counterfactuals: list = field(default_factory=list)
    reason: str = ""
    method: str = ""
    seconds: float = 0.0


class Counterfactuals(r.Formats):
    """Counterfactual explanations of a fitted risk score for a set of people.

    ``print(cf)`` shows each person's counterfactuals; ``cf.to_frame()`` is a tidy table (one
    row per person, counterfactual and changed feature); ``cf.apply()`` gives the changed rows,
    ready for :meth:`~riskformula.RiskScore.predict`; ``cf[person]`` is one person's
    :class:`PersonResult`.
    """

    def __init__(self, people: list, rows: pd.DataFrame, *, goal: str, target_score: float,
                 target_risk: float | None, settings: dict, integral: bool = True):
        self.people = people
        self._rows = rows
        self.goal = goal
        self.target_score = target_score
        self.target_risk = target_risk
        self.settings = settings
        self._integral = integral

    # --- access ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.people)

    def __iter__(self):
        return iter(self.people)

    def __getitem__(self, person) -> PersonResult:
        for p in self.people:
            if p.person == person:
                return p
        raise KeyError(f"no person {person!r} in these counterfactuals; people are "
                       f"{[p.person for p in self.people][:10]}")

    @property
    def status(self) -> pd.Series:
        """Each person's status (``already met``, ``optimal``, ``infeasible``, ``time limit``)."""
        return pd.Series([p.status for p in self.people], index=[p.person for p in self.people], name="status")

    @property
    def seconds(self) -> pd.Series:
        """Time spent on each person (their options and the search; the shared setup excluded)."""
        return pd.Series([p.seconds for p in self.people], index=[p.person for p in self.people], name="seconds")

    # --- conversions ----------------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """One row per (person, counterfactual, changed feature); people without counterfactuals
        get one row with their status and reason."""
        rows = []
        for p in self.people:
            base = {"person": p.person, "status": p.status, "score": p.score, "risk": p.risk}
            if not p.counterfactuals:
                rows.append({**base, "counterfactual": pd.NA, "feature": None, "current": None, "required": None,
                             "region": None, "points": np.nan, "new_score": np.nan, "new_risk": np.nan,
                             "cost": np.nan, "changes": 0, "reason": p.reason})
                continue
            for k, c in enumerate(p.counterfactuals, 1):
                for ch in c.changes:
                    rows.append({**base, "counterfactual": k, "feature": ch.feature, "current": ch.current,
                                 "required": ch.required, "region": ch.region, "points": ch.points,
                                 "new_score": c.score, "new_risk": c.risk, "cost": c.cost,
                                 "changes": len(c.changes), "reason": p.reason})
        cols = ["person", "counterfactual", "status", "feature", "current", "required", "region", "points",
                "score", "new_score", "risk", "new_risk", "cost", "changes", "reason"]
        df = pd.DataFrame(rows, columns=cols)
        df["counterfactual"] = df["counterfactual"].astype("Int64")
        return df

    def apply(self) -> pd.DataFrame:
        """The people's rows with each counterfactual applied, indexed by (person, counterfactual)."""
        labels, idx, changes = [], [], []
        for p in self.people:
            for k, c in enumerate(p.counterfactuals, 1):
                labels.append(p.person)
                idx.append((p.person, k))
                changes.append(c.values)
        index = pd.MultiIndex.from_tuples(idx, names=["person", "counterfactual"])
        df = self._rows.loc[labels].copy() if labels else self._rows.iloc[:0].copy()
        df.index = index
        for col in dict.fromkeys(c for ch in changes for c in ch):
            dtype = df[col].dtype
            column = df[col].astype(object).to_numpy(copy=True)
            whole = True
            for i, ch in enumerate(changes):
                if col in ch:
                    column[i] = ch[col]
                    whole &= not isinstance(ch[col], float) or float(ch[col]).is_integer()
            new = pd.Series(column, index=df.index)
            if pd.api.types.is_integer_dtype(dtype) and not whole:
                new = new.astype(float)  # a move to 16.8 in an integer column
            else:
                try:
                    new = new.astype(dtype)
                except (TypeError, ValueError):
                    new = new.infer_objects()
            df[col] = new
        return df

    def to_dict(self) -> dict:
        return {"goal": self.goal, "target_score": self.target_score, "target_risk": self.target_risk,
                "settings": dict(self.settings),
                "people": [{"person": p.person, "score": p.score, "risk": p.risk, "status": p.status,
                            "reason": p.reason, "counterfactuals": [
                                {"score": c.score, "risk": c.risk, "cost": c.cost,
                                 "changes": [vars(ch) for ch in c.changes]} for c in p.counterfactuals]}
                           for p in self.people]}

    # --- printing -------------------------------------------------------------------------
    def _target_text(self) -> str:
        op = "≤" if self.goal == "below" else "≥"
        s = _num(self.target_score)
        if self.target_risk is None:
            return f"score {op} {s}"
        return f"risk {op} {r.fmt_percent_exact(float(self.target_risk))} (score {op} {s})"

    def header(self) -> str:
        st = self.settings
        parts = [f"Counterfactuals: {self._target_text()}"]
        if st.get("max_changes") is not None:
            parts.append(f"at most {st['max_changes']} change{'s' if st['max_changes'] != 1 else ''}")
        if st.get("immutable"):
            parts.append("immutable: " + ", ".join(st["immutable"]))
        if st.get("directions"):
            parts.append(", ".join(f"{k} may only {v}" for k, v in st["directions"].items()))
        if st.get("n", 1) > 1:
            how = {"features": " changing different sets of features",
                   "values": " changing different sets of features, no region shared",
                   "soft": " (soft diversity)", "distinct": ""}.get(st.get("diverse", ""), "")
            parts.append(f"{st['n']} per person{how}")
        counts = self.status.value_counts()
        tally = ", ".join(f"{int(counts[s])} {s}" for s in ("already met", "optimal", "infeasible", "time limit")
                          if s in counts)
        return "; ".join(parts) + f"\n{len(self)} {'person' if len(self) == 1 else 'people'}: {tally}"

    def _person_rows(self, p: PersonResult) -> tuple[str, list]:
        """A person's heading line and the rows of their table (none when there is nothing to show)."""
        head = f"person {p.person}: score {_num(p.score)}, risk {_pct(p.risk)}"
        if p.status == "already met":
            return f"{head} — already meets the target", []
        if not p.counterfactuals:
            return f"{head} — {p.status}: {p.reason}", []
        n = len(p.counterfactuals)
        head += f" — {n} counterfactual{'s' if n > 1 else ''} ({p.status})"
        if p.reason:
            head += f"; {p.reason}"
        rows = []
        for k, c in enumerate(p.counterfactuals, 1):
            for j, ch in enumerate(c.changes):
                first = j == 0
                rows.append([k if first else "", ch.feature, ch.current, ch.required, ch.region, _signed(ch.points),
                             _num(c.score) if first else "", _pct(c.risk) if first else "",
                             f"{c.cost:.3g}" if first else ""])
        return head, rows

    def _person_text(self, p: PersonResult) -> str:
        head, rows = self._person_rows(p)
        if not rows:
            return head
        table = tabulate(rows, headers=_COLUMNS, disable_numparse=True)
        return head + "\n" + "\n".join("  " + line for line in table.splitlines())

    def __str__(self) -> str:
        shown = self.people[:MAX_PRINTED]
        text = self.header() + "\n\n" + "\n\n".join(self._person_text(p) for p in shown)
        if len(self.people) > MAX_PRINTED:
            text += f"\n\n... and {len(self.people) - MAX_PRINTED} more people (cf.to_frame() has them all)"
        return text

    def render(self, kind: str = "text") -> str:
        """The result as ``"text"`` (what ``print`` shows), ``"markdown"``, ``"html"`` or ``"latex"``:
        the target and tally, then each person's heading and table (every person; ``print``
        shows the first :data:`MAX_PRINTED`)."""
        r.check_kind(kind)
        if kind == "text":
            return str(self)
        title, tally = self.header().split("\n", 1)
        blocks = [r.heading(r.escape(title, kind), kind, 1), r.paragraph(tally, kind)]
        for p in self.people:
            head, rows = self._person_rows(p)
            blocks.append(r.heading(r.escape(head, kind), kind))
            if rows:
                blocks.append(r.table(pd.DataFrame(rows, columns=_COLUMNS).astype(str), kind))
        return r.document(blocks, kind)

    def __repr__(self) -> str:
        counts = self.status.value_counts().to_dict()
        return f"<Counterfactuals: {self._target_text()}; {len(self)} people; {counts}>"


def _num(x) -> str:
    x = float(x)
    return f"{int(round(x))}" if abs(x - round(x)) < 1e-9 else f"{x:.4g}"


def _signed(x) -> str:
    s = _num(x)
    return s if s.startswith("-") else "+" + s


def _pct(risk) -> str:
    """A risk as the reports print it (``>99.9%``, ``<0.1%`` near the ends)."""
    return r.fmt_percent(float(risk))
