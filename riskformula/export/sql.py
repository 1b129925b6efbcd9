"""The score card as SQL: one ``SELECT`` whose ``CASE`` expressions compute score and risk.

The statement reads the raw columns of a table: a threshold's interval is ``lower < x <= upper``,
a level ``x = level``, a value the column as a number (booleans as 0/1), an interaction the
product of its parts.  Identifiers are double-quoted (quotes doubled) and strings are literals
with single quotes doubled, so names and levels are data, never SQL.  Numbers are written so
that they read back as the same doubles.

Missing values are scored as ``predict`` scores them.  A variable fitted with ``missing="item"``
is missing where it is NULL (or a NaN number): there its missing item (``x IS NULL``) gives its
points and every other item on it gives 0 (a comparison with NULL is not met, a value counts 0).
A variable fitted with ``missing="as <value>"`` reads ``COALESCE(x, value)``.  A row with NULL in
any other variable the card reads — or a value ``predict`` refuses: NaN or an infinite number, a
non-number where a number is read, a level not seen in training — gets NULL score and NULL risk,
never a number.

The risk is the model's own score → risk map:

* ``"formula"``: the logistic curve with ``EXP`` (clamped so that no engine overflows), a
  net-benefit score's bands as a ``CASE`` on the number of cut-offs the score reaches, or a
  time-to-event score's risk within a horizon ``t``, ``1 − exp(−H₀(t) · exp((intercept + score) /
  scale))`` with ``EXP`` and the baseline cumulative hazard ``H₀(t)`` written as a constant;
* ``"table"``: a ``CASE`` over every score the card can give, with the risks ``predict`` gives
  (only for a card of conditions, whose scores are whole numbers of a known finite set).

A time-to-event score (``Surv(time, event) ~ ...``) gets one risk column per horizon, named
``risk_<horizon>`` (``risk_365``): the card's horizons, or those ``horizon=`` lists; a single
``horizon=365`` gives one column named ``risk``.

``"auto"`` (the default) takes the table for a logistic or time-to-event score in SQLite when it
exists — SQLite has ``exp()`` only from 3.35 and when built with its math functions — and the
formula otherwise; a SQLite
statement with ``EXP`` needs those functions (Python's ``sqlite3`` has them in current builds;
else ``con.create_function("exp", 1, math.exp)``).
"""

from __future__ import annotations

import math

import numpy as np

from .._text import visible
from ..errors import DataError, SettingsError
from .plan import card_plan, provenance

__all__ = ["to_sql"]

DIALECTS = ("sqlite", "duckdb", "postgres")
_DOUBLE = {"sqlite": "REAL", "duckdb": "DOUBLE", "postgres": "DOUBLE PRECISION"}
#: |z| beyond which the logistic risk is 0 or 1 to well under 1e-300 (no engine overflows exp)
_Z_LIMIT = 700


def to_sql(model, table="data", *, dialect: str = "sqlite", keep="*", score: str = "score",
           risk: str = "risk", risk_map: str = "auto", horizon=None) -> str:
    """A ``SELECT`` that scores every row of ``table`` with the score card.

    Parameters
    ----------
    model : RiskScore or NetBenefitScore or SurvivalScore
        A fitted or loaded risk score.
    table : str or tuple of str, default "data"
        The table (or view) to score; a tuple names a schema-qualified table, such as
        ``("clinic", "patients")``.  Quoted as identifiers: any name is safe.
    dialect : {"sqlite", "duckdb", "postgres"}, default "sqlite"
        The SQL engine.
    keep : str or sequence of str or None, default "*"
        The table's columns to return beside the score and risk: ``"*"`` all of them, a column
        name or a list of names only those (an id column, say; none named as ``score`` or
        ``risk``), None none.  The risk is computed from the score's own expression, never from
        a column by name, so a table column named ``score`` (or ``risk``) under ``"*"`` changes
        no number; the result then holds that name twice (DuckDB renames the second
        ``score_1``), so pass other ``score=``/``risk=`` names to tell them apart.
    score : str, default "score"
        Name of the computed column with the total points.
    risk : str, default "risk"
        Name of the computed column with the risk (not the same as ``score``); for a
        time-to-event score with several horizons, the prefix of its columns ``risk_<horizon>``.
    risk_map : {"auto", "formula", "table"}, default "auto"
        How the risk is computed from the score (see the module docstring): ``"formula"`` the
        model's map as an expression, ``"table"`` a lookup over every attainable score (a card of
        conditions only), ``"auto"`` the table for SQLite when there is one, else the formula.
    horizon : float or list of float, optional
        A time-to-event score only: the time(s) within which the risk is computed, in the unit of
        the follow-up times (each at most the longest follow-up of the training rows).  None (the
        default): one column ``risk_<horizon>`` per horizon of the card; a list: one such column
        per time listed; one number: a single column named ``risk``.

    Returns
    -------
    str
        The statement, with comments saying what it computes, ending in ``;``.

    Raises
    ------
    SettingsError
        An unknown dialect or option, or a card term only Python computes (such as ``np.log(x)``).
    DataError
        A name or level SQL cannot hold (a NUL character).

    Examples
    --------
    >>> import sqlite3
    >>> import riskformula as rf
    >>> df = rf.load_dataset("breastcancer")
    >>> m = rf.risk_score("Benign ~ ClumpThickness + BareNuclei", df, max_size=2,
    ...                   time_limit=10)  # doctest: +SKIP
    >>> con = sqlite3.connect(":memory:")
    >>> df.to_sql("patients", con)  # doctest: +SKIP
    >>> sql = rf.export.to_sql(m, table="patients", keep=["index"])  # doctest: +SKIP
    >>> con.execute(sql).fetchmany(2)  # doctest: +SKIP
    """
    if dialect not in DIALECTS:
        raise SettingsError(f"`dialect` must be one of {list(DIALECTS)}; got {dialect!r}.")
    if risk_map not in ("auto", "formula", "table"):
        raise SettingsError(f"`risk_map` must be 'auto', 'formula' or 'table'; got {risk_map!r}.")
    plan = card_plan(model, "SQL", horizon=horizon)
    q = _Writer(dialect, plan)
    _check_name(score, "score")
    risk_names = _risk_names(_check_name(risk, "risk"), plan.risk, horizon)
    out_names = [score, *risk_names]
    if score in risk_names:
        raise SettingsError(f"`score` and `risk` must be different column names; both are {score!r}.")
    kept = _keep(keep, out_names)
    source = _table(table)

    lines = [f"-- {line}" for text in provenance(model) + _explain(plan) for line in _comment(text)]
    # one SELECT, no subquery: each risk reads the score's own expression, never a column by its
    # name, which a table column of that name (under keep="*") would shadow in the engine's lookup
    score_sql = q.score()
    risks = q.risks(score_sql if score_sql.startswith("(") else f"({score_sql})", risk_map, model)
    head = ("*" if kept == "*" else ", ".join(q.ident(c) for c in kept)) if kept else ""
    lines.append("SELECT" + (f" {head}," if head else ""))
    lines.append(f"  {score_sql} AS {q.ident(score)},")
    lines.append(",\n".join(f"  {expr} AS {q.ident(name)}" for expr, name in zip(risks, risk_names)))
    lines.append(f"FROM {source};")
    return "\n".join(lines) + "\n"


class _Writer:
    """SQL text for one dialect and card."""

    def __init__(self, dialect: str, plan):
        self.dialect = dialect
        self.plan = plan

    # --- literals ---------------------------------------------------------------------
    @staticmethod
    def ident(name: str) -> str:
        return '"' + _no_nul(name, "a column name").replace('"', '""') + '"'

    def number(self, v) -> str:
        if isinstance(v, bool):
            raise TypeError("a boolean is not a number here")
        if isinstance(v, int):
            text = str(v)
        else:
            v = float(v)
            if not math.isfinite(v):
                raise DataError(f"cannot write the non-finite number {v!r} in SQL.")
            text = repr(v)
            if "e" not in text:
                text += "e0"          # a double (not a decimal) in DuckDB and SQLite
            if self.dialect == "postgres":
                text = f"CAST({text} AS DOUBLE PRECISION)"
        return f"({text})" if text.startswith("-") else text

    def literal(self, v) -> str:
        if isinstance(v, bool):
            return "TRUE" if v else "FALSE"
        if isinstance(v, (int, float)):
            return self.number(v)
        return "'" + _no_nul(str(v), "a level").replace("'", "''") + "'"

    # --- reading the data ---------------------------------------------------------------
    def _policy(self, var: str) -> dict:
        return self.plan.missing.get(var) or {}

    def missing(self, var: str) -> str:
        """True where the variable is missing as pandas sees it: NULL, or a NaN number."""
        x = self.ident(var)
        if self.dialect == "sqlite":        # SQLite stores a NaN as NULL
            return f"{x} IS NULL"
        if self.dialect == "duckdb":
            return f"({x} IS NULL OR (typeof({x}) IN ('DOUBLE', 'FLOAT') AND isnan(TRY_CAST({x} AS DOUBLE))))"
        return (f"({x} IS NULL OR (pg_typeof({x}) IN ('double precision'::regtype, 'real'::regtype, "
                f"'numeric'::regtype) AND CAST({x} AS TEXT) = 'NaN'))")

    def _fill(self, expr: str, var: str, value: str) -> str:
        """``expr`` with ``value`` where the variable is missing (a ``missing="as <value>"``)."""
        if self.dialect == "sqlite":
            return f"COALESCE({expr}, {value})"
        return f"CASE WHEN {self.missing(var)} THEN {value} ELSE {expr} END"

    def _cast(self, var: str) -> str:
        """The column as a number (NULL when it is not one, in DuckDB)."""
        x = self.ident(var)
        if self.dialect == "duckdb":
            return f"TRY_CAST({x} AS DOUBLE)"
        if self.dialect == "postgres":
            if var in self.plan.zero_one:   # perhaps a boolean column: true/false as 1/0
                return (f"CAST(CASE CAST({x} AS TEXT) WHEN 'true' THEN '1' WHEN 'false' THEN '0' "
                        f"ELSE CAST({x} AS TEXT) END AS DOUBLE PRECISION)")
            return f"CAST({x} AS DOUBLE PRECISION)"
        return x

    def num(self, var: str) -> str:
        """The variable as a number as ``predict`` reads it: an ``"as"`` value where it is missing;
        NULL where it is missing and scored by a missing item (so no condition on it holds)."""
        x, policy = self._cast(var), self._policy(var)
        if policy.get("action") == "as":
            return self._fill(x, var, self.number(float(policy["value"])))
        if policy.get("action") == "item" and self.dialect != "sqlite":
            return f"CASE WHEN {self.missing(var)} THEN NULL ELSE {x} END"   # a NaN, too
        return x

    def level(self, var: str) -> str:
        """The variable as a level: an ``"as"`` level filled in where it is missing."""
        policy = self._policy(var)
        if policy.get("action") == "as":
            return self._fill(self.ident(var), var, self.literal(policy["value"]))
        return self.ident(var)

    def guard(self) -> list:
        """Conditions that hold exactly when ``predict`` would score the row."""
        out = []
        for var in self.plan.numeric:
            # an "as" value is checked as filled in; a missing item's variable where it is not missing
            filled = self._policy(var).get("action") == "as"
            if self.dialect == "sqlite":
                x = self.num(var) if filled else self.ident(var)
                check = f"typeof({x}) IN ('integer', 'real') AND {x} NOT IN (9e999, -9e999)"
            elif self.dialect == "duckdb":
                check = f"isfinite({self.num(var) if filled else self._cast(var)})"
            else:
                special = ", ".join(f"CAST('{s}' AS DOUBLE PRECISION)" for s in ("NaN", "Infinity", "-Infinity"))
                x = self.num(var) if filled else self.ident(var)
                check = f"{x} IS NOT NULL AND {self.num(var) if filled else self._cast(var)} NOT IN ({special})"
            out.append(self._or_missing(var, check))
        for var, levels in self.plan.levels.items():
            out.append(self._or_missing(var, f"{self.level(var)} IN ({', '.join(self.literal(v) for v in levels)})"))
        return out

    def _or_missing(self, var: str, check: str) -> str:
        """``check``, or the variable missing when a missing item scores it."""
        if self._policy(var).get("action") == "item":
            return f"{self.missing(var)} OR ({check})"
        return check

    def condition(self, f) -> str:
        if f.kind == "missing":
            return self.missing(f.variable)
        if f.kind == "level":
            return f"{self.level(f.variable)} = {self.literal(f.value)}"
        x = self.num(f.variable)
        if f.kind == "le":
            return f"{x} <= {self.number(f.value)}"
        parts = ([] if f.lower is None else [f"{x} > {self.number(f.lower)}"]) + \
                ([] if f.upper is None else [f"{x} <= {self.number(f.upper)}"])
        return " AND ".join(parts) if parts else "TRUE"

    def linear(self, var: str) -> str:
        """A value factor: 0 where the variable is missing and scored by a missing item."""
        if self._policy(var).get("action") == "item":
            return f"COALESCE({self.num(var)}, 0)"
        return self.num(var)

    def term(self, e) -> str:
        """One item's points on a row (a condition on a NULL is not met: ``CASE`` gives 0)."""
        p = self.number(int(e.item.points))
        if all(f.kind != "linear" for f in e.factors):
            cond = " AND ".join(self.condition(f) for f in e.factors)
            return f"CASE WHEN {cond} THEN {p} ELSE 0 END"
        parts = [self.linear(f.variable) if f.kind == "linear"
                 else f"CASE WHEN {self.condition(f)} THEN 1 ELSE 0 END" for f in e.factors]
        return f"{p} * " + " * ".join(parts)

    def score(self) -> str:
        terms = [(self.term(e), e.item.label) for e in self.plan.entries]
        body = "0" if not terms else "\n".join(
            ("          " if k == 0 else "        + ") + t + "  -- " + _one_line(label)
            for k, (t, label) in enumerate(terms))
        guard = self.guard()
        if not guard:
            return body if not terms else "(\n" + body + "\n    )"
        cond = "\n      AND ".join(f"({g})" for g in guard)
        return f"CASE WHEN {cond}\n      THEN (\n{body}\n      ) END"

    # --- score -> risk -------------------------------------------------------------------
    def risks(self, s: str, how: str, model) -> list:
        """The risk expression(s) of score ``s``: one, or one per horizon of a time-to-event map."""
        plan = self.plan
        exp_map = plan.risk.kind in ("logistic", "cox")
        if how == "table" or (how == "auto" and self.dialect == "sqlite" and exp_map and plan.scores is not None):
            if plan.scores is None:
                raise SettingsError("`risk_map='table'` needs a card of conditions (intervals and levels) with at "
                                    "most 5000 attainable scores; this card has value terms, so use 'formula'.")
            if plan.risk.kind == "cox":
                return [self._table(s, model.risk_of(list(plan.scores), h)) for h in plan.risk.horizons]
            return [self._table(s, model.risk_of(list(plan.scores)))]
        rm = plan.risk
        if rm.kind == "bands":
            return [self._bands(s, rm)]
        dbl = _DOUBLE[self.dialect]
        z = f"CAST({self.number(rm.intercept)} + {s} AS {dbl})"
        if rm.scale != 1.0:
            z = f"({z} / {self.number(float(rm.scale))})"
        one = "1.0e0" if self.dialect != "postgres" else "CAST(1 AS DOUBLE PRECISION)"
        zero = "0.0e0" if self.dialect != "postgres" else "CAST(0 AS DOUBLE PRECISION)"
        if rm.kind == "cox":
            return [self._cox(s, z, H, one, zero) for H in rm.hazards]
        # 1 / (1 + exp(−z)) with z clamped to ±700 (no engine overflows exp; beyond it the risk is 0
        # or 1 to well under 1e-300), the score read twice: the clamp of DuckDB and PostgreSQL
        # (LEAST/GREATEST) skips a NULL, so a NULL score is caught first
        clamped = self._clamp(z, -_Z_LIMIT, _Z_LIMIT)
        return [f"CASE WHEN {s} IS NULL THEN NULL ELSE {one} / ({one} + EXP(-{clamped})) END"]

    def _clamp(self, x: str, lo: float | None, hi: float | None) -> str:
        """``x`` limited to [lo, hi] (None: no limit on that side)."""
        least, greatest = ("MIN", "MAX") if self.dialect == "sqlite" else ("LEAST", "GREATEST")
        if hi is not None:
            x = f"{least}({x}, {hi})"
        if lo is not None:
            x = f"{greatest}({x}, {lo})"
        return x

    def _table(self, s: str, risks) -> str:
        whens = " ".join(f"WHEN {self.number(sc)} THEN {self.number(float(r))}"
                         for sc, r in zip(self.plan.scores, risks))
        return f"CASE {s} {whens} END"

    def _cox(self, s: str, z: str, H: float, one: str, zero: str) -> str:
        """1 − exp(−H · exp(z)), written 1 − EXP(−EXP(z + log H)) so that no engine overflows:
        beyond z + log H = 700 the risk is 1 to well under 1e-300."""
        if H <= 0:                      # a horizon before the first event: no risk yet
            return f"CASE WHEN {s} IS NULL THEN NULL ELSE {zero} END"
        x = f"({z} + {self.number(math.log(H))})"
        return f"CASE WHEN {s} IS NULL THEN NULL ELSE {one} - EXP(-EXP({self._clamp(x, None, _Z_LIMIT)})) END"

    def _bands(self, s: str, rm) -> str:
        if self.plan.integral:
            rounded = s
        elif self.dialect == "postgres":
            rounded = f"CAST(ROUND(CAST({s} AS NUMERIC), 9) AS DOUBLE PRECISION)"
        else:
            rounded = f"ROUND(CAST({s} AS {_DOUBLE[self.dialect]}), 9)"
        always = sum(1 for c in rm.cutoffs if c == -math.inf)
        reach = [f"CASE WHEN {rounded} >= {self.number(c)} THEN 1 ELSE 0 END"
                 for c in rm.cutoffs if math.isfinite(c)]
        if not reach:
            r = self.number(rm.risks[always])
            return f"CASE WHEN {s} IS NULL THEN NULL ELSE {r} END"
        count = " + ".join(([str(always)] if always else []) + reach)
        whens = " ".join(f"WHEN {b} THEN {self.number(r)}" for b, r in enumerate(rm.risks))
        # a NULL score reaches no cut-off: without the first WHEN it would get band 0's risk
        return f"CASE WHEN {s} IS NULL THEN NULL ELSE CASE ({count}) {whens} END END"


def _risk_names(risk: str, rm, horizon) -> list:
    """The risk column(s): ``risk``, or ``risk_<horizon>`` per horizon of a time-to-event map
    (unless one number chose the horizon)."""
    if rm.kind != "cox" or (horizon is not None and np.ndim(horizon) == 0):
        return [risk]
    return [f"{risk}_{rm.label(k)}" for k in range(len(rm.horizons))]


def _explain(plan) -> list:
    rm = plan.risk
    if rm.kind == "logistic":
        how = f"risk = 1 / (1 + exp(-({rm.intercept!r} + score) / {rm.scale!r}))"
    elif rm.kind == "cox":
        constants = ", ".join(f"H0({rm.label(k)}) = {H!r}" for k, H in enumerate(rm.hazards))
        how = (f"risk within t = 1 - exp(-H0(t) * exp(({rm.intercept!r} + score) / {rm.scale!r})), H0 the Breslow "
               f"(1974) baseline cumulative hazard of the training rows: {constants}")
    else:
        how = "risk = the training event rate of the score's band (a net-benefit score's cut-offs)"
    lines = ["score = the sum of the points of the items a row meets (a value item: points x value).", how]
    items = [v for v, p in plan.missing.items() if p["action"] == "item"]
    filled = [f"{v} as {p['value']!r}" for v, p in plan.missing.items() if p["action"] == "as"]
    if items:
        lines.append(f"Missing (NULL) {', '.join(items)}: only the variable's missing item counts (none of its "
                     "other items).")
    if filled:
        lines.append(f"Missing (NULL) values count as: {', '.join(filled)}.")
    others = "any other variable" if items or filled else "any variable"
    lines.append(f"A row with NULL in {others} the card reads (or NaN, an infinite number, a non-number where a "
                 "number is read, or a level not seen in training) gets NULL score and risk.")
    return lines


def _comment(text: str) -> list:
    return [_one_line(text)]


def _one_line(text: str) -> str:
    """``text`` safe inside a ``--`` comment: line breaks (one would end the comment), NUL, other
    control characters and bidirectional overrides written as visible escapes (``\\n``, ``\\u202e``)."""
    return visible(text)


def _no_nul(text: str, what: str) -> str:
    if "\x00" in text:
        raise DataError(f"{what} {text!r} holds a NUL character, which SQL text cannot hold.")
    return text


def _check_name(name, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise SettingsError(f"`{what}` must be a column name (a non-empty string); got {name!r}.")
    return _no_nul(name, f"the `{what}` column name")


def _keep(keep, out_names) -> list | str:
    if keep is None:
        return []
    if isinstance(keep, str):
        if keep == "*":
            return "*"
        keep = [keep]
    try:
        cols = list(keep)
    except TypeError:
        raise SettingsError(f"`keep` must be '*', a list of column names or None; got {keep!r}.") from None
    for c in cols:
        _check_name(c, "keep")
    clash = [c for c in cols if c in out_names]
    if clash:
        raise SettingsError(f"`keep` names the computed column(s) {clash}; choose other `score=`/`risk=` names.")
    return cols


def _table(table) -> str:
    parts = [table] if isinstance(table, str) else list(table) if isinstance(table, (tuple, list)) else None
    if not parts or not all(isinstance(p, str) and p for p in parts):
        raise SettingsError(f"`table` must be a table name or a tuple (schema, table); got {table!r}.")
    return ".".join(_Writer.ident(p) for p in parts)
