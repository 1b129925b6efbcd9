"""Declarative design columns: what each column of a fitted design computes from the data.

Every design column is described by a :class:`Rule` that reads data columns by name and compares
or multiplies their values; no text is ever evaluated:

* ``le``      — ``1[x ≤ c]``: one candidate cut of a ``threshold()``/``cut()`` term;
* ``level``   — ``1[x == v]``: one level of a categorical variable (``C(sex)[T.m]``, ``sex[T.m]``);
* ``linear``  — ``x``: a numeric variable as it is (booleans as 0/1);
* ``product`` — the product of the above (an interaction such as ``sex:age``);
* ``missing`` — ``1[x is missing]``: the missing item of a variable fitted with ``missing="item"``
  (:mod:`riskformula.design.missing`); where ``x`` is missing the other kinds give 0;
* ``expression`` — anything else (``np.log(x)``, ``I(age / 10)``, a user's function): computed by
  formulaic from the formula's text, which evaluates Python.  A saved model with such a column
  loads only when the caller trusts the file (``rf.from_json(text, trusted=True)``).

:func:`derive_rules` proposes a rule for each column of a training design from formulaic's
structure and keeps it only if it reproduces formulaic's own column on the training rows exactly;
otherwise the column is an ``expression``.  The outcome side is described the same way by an
:class:`OutcomeRule` (a bare column, or a column compared with a literal: ``diagnosis == "M"``).
"""

from __future__ import annotations

import ast
import math
import re
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, SearchLimitError
from .._json import plain as _plain

__all__ = ["Rule", "OutcomeRule", "derive_rules", "derive_outcome", "evaluate_rules", "rule_variables"]

KINDS = ("le", "level", "linear", "product", "missing", "expression")


@dataclass(frozen=True)
class Rule:
    """What one design column computes: see the module docstring for the kinds."""

    kind: str
    variable: str | None = None
    value: Any = None
    parts: tuple = ()

    @property
    def declarative(self) -> bool:
        """Computed from the data by comparisons and products alone (no evaluated text)."""
        return self.kind != "expression"

    def variables(self) -> list:
        if self.kind == "product":
            return [v for p in self.parts for v in p.variables()]
        return [] if self.variable is None else [self.variable]

    def to_dict(self) -> dict:
        if self.kind == "product":
            return {"kind": "product", "parts": [p.to_dict() for p in self.parts]}
        d: dict[str, Any] = {"kind": self.kind}
        if self.variable is not None:
            d["variable"] = self.variable
        if self.kind in ("le", "level"):
            d["value"] = self.value
        return d

    def values(self, frame: pd.DataFrame) -> np.ndarray:
        """The column's values on ``frame`` (which has the rule's variables, complete and checked)."""
        if self.kind == "product":
            out = np.ones(len(frame))
            for p in self.parts:
                out = out * p.values(frame)
            return out
        col = frame[self.variable]
        if self.kind == "missing":
            return col.isna().to_numpy(dtype=float)
        if self.kind == "level":
            return (col == self.value).to_numpy(dtype=bool).astype(float)
        x = _numbers(col, self.variable)
        if self.kind == "le":
            _refuse_infinite(x, self.variable)  # the SQL and PMML exports score no infinite value either
            return (x <= float(self.value)).astype(float)  # a missing value is below no cut
        return np.where(np.isnan(x), 0.0, x)  # a missing value adds nothing (its item scores it)


@dataclass(frozen=True)
class OutcomeRule:
    """The outcome's raw values: a data column (``op`` None) or the column compared with a literal."""

    variable: str
    op: str | None = None
    value: Any = None

    def to_dict(self) -> dict:
        return {"variable": self.variable, "op": self.op, "value": self.value}

    def values(self, frame: pd.DataFrame) -> pd.Series:
        col = frame[self.variable]
        if self.op is None:
            return col
        return pd.Series(_COMPARE[self.op](col, self.value), index=frame.index)


_COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
_AST_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def _numbers(col: pd.Series, name: str | None) -> np.ndarray:
    if pd.api.types.is_complex_dtype(col):
        raise DataError(f"the column `{name}` holds complex numbers; a risk score needs real numbers.")
    if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
        return col.to_numpy(dtype=float, na_value=np.nan)  # pd.NA (nullable columns) as NaN
    try:
        return pd.to_numeric(col, errors="raise").to_numpy(dtype=float)
    except (TypeError, ValueError):
        shown = list(pd.unique(col))[:3]
        raise DataError(f"the column `{name}` must be numeric for this score (it was numeric in training); "
                        f"got values like {shown!r}.") from None


def _refuse_infinite(x: np.ndarray, name: str | None) -> None:
    bad = np.isinf(x)
    if bad.any():
        raise DataError(f"the column `{name}` has {int(bad.sum()):,d} infinite value(s), which a risk score cannot "
                        "score (a cut compares finite numbers); fix or drop those rows.")


# --------------------------------------------------------------------------------------
# rules of a training design
# --------------------------------------------------------------------------------------

_C_CALL = re.compile(r"^C\(\s*(?:`([^`]+)`|([^`,()]+?))\s*(?:,.*)?\)$", re.S)


def _lookup_variable(factor, data_columns) -> str | None:
    """The data column a formulaic factor reads as it is, or None."""
    expr = str(factor.expr)
    if factor.eval_method.value == "lookup":
        name = expr.strip("`")
        return name if name in data_columns else None
    m = _C_CALL.match(expr)
    if m:
        # a backtick-quoted name as it is (it may hold commas, parentheses, spaces), a bare one stripped
        name = m.group(1) if m.group(1) is not None else m.group(2).strip()
        if name in data_columns:
            return name
    return None


def _single_rule(factor, name_part: str, spec, data_columns, categories: dict, levels: dict) -> Rule | None:
    """The rule of one factor's share of a column name (``C(sex)[T.m]``, ``age``), or None.
    ``levels`` caches, per factor, its column names → levels (one pass over a factor's levels, not
    one per column: a 10 000-level factor has 10 000 columns)."""
    var = _lookup_variable(factor, data_columns)
    if var is None:
        return None
    prefix = str(factor.expr)
    kind, state = spec.encoder_state.get(prefix, (None, {}))
    if kind is not None and kind.value == "categorical":
        if prefix not in levels:
            cats = list(state.get("categories", []))
            names: dict = {}
            for c in reversed(cats):  # the first level of a name wins, as a scan in order finds it
                names[f"{prefix}[{c}]"] = c
                names[f"{prefix}[T.{c}]"] = c
            levels[prefix] = (names, cats)
        names, cats = levels[prefix]
        if name_part not in names:
            return None
        if var not in categories:
            categories[var] = tuple(_plain(x) for x in cats)
        return Rule("level", var, _plain(names[name_part]))
    if name_part == prefix:
        return Rule("linear", var)
    return None


def _factor_rules(name: str, factors: list, spec, data_columns, categories: dict, levels: dict) -> list | None:
    """The rules of ``factors``' shares of the column ``name``, in order, or None.

    formulaic names an interaction's column by its factors' own column names joined by ``:``
    (``C(shift)[T.20:00]:flag``), and a level or a backtick-quoted name may itself hold a ``:``:
    so the name is not split on every ``:``, but read factor by factor, each share one of the
    names that factor's columns can have (:func:`_single_rule`) and ending at a ``:`` (the last
    one at the end of the name).  A name that reads so in more than one way is ambiguous: no
    rule (the column stays an expression) rather than a guess."""
    if not factors:
        return None
    last = len(factors) - 1
    found: list = []

    def read(i: int, start: int, acc: list) -> None:
        if len(found) > 1:
            return  # ambiguous already: no need to read on
        if i == last:
            r = _single_rule(factors[i], name[start:], spec, data_columns, categories, levels)
            if r is not None:
                found.append(acc + [r])
            return
        at = name.find(":", start)
        while at != -1 and len(found) <= 1:
            r = _single_rule(factors[i], name[start:at], spec, data_columns, categories, levels)
            if r is not None:
                read(i + 1, at + 1, acc + [r])
            at = name.find(":", at + 1)

    read(0, 0, [])
    return found[0] if len(found) == 1 else None


def derive_rules(model_spec, columns, column_terms, thresholds, frame: pd.DataFrame, X: np.ndarray,
                 deadline: Deadline | None = None):
    """(rules, categories): a :class:`Rule` per design column, each checked against formulaic's own
    column ``X[:, j]`` on the training ``frame``, and the levels of every categorical variable a
    ``level`` rule reads (the training categories, for "unseen level" checks on new data).

    The work is linear in rows × columns (the size of ``X``); ``deadline`` (a
    :class:`~riskformula.design.rules.Deadline`) is checked between columns of a large design."""
    deadline = (deadline or Deadline(None)).for_cells(X.size)
    data_columns = set(frame.columns)
    index = {c: j for j, c in enumerate(columns)}
    rules: list = [Rule("expression")] * len(columns)
    categories: dict = {}
    levels: dict = {}
    for t in thresholds:
        if t.variable in data_columns:
            for j, c in zip(t.columns, t.cuts):
                if j is not None:
                    rules[j] = Rule("le", t.variable, float(c))
    threshold_cols = {j for t in thresholds for j in t.columns}
    for st in (model_spec.structure or []):
        factors = list(st.term.factors)
        for k, name in enumerate(st.columns):
            if k % 1000 == 999:
                deadline.check("deriving the design's columns")
            j = index.get(name)
            if j is None or j in threshold_cols:
                continue
            found = _factor_rules(name, factors, model_spec, data_columns, categories, levels)
            if found is not None:
                rules[j] = found[0] if len(found) == 1 else Rule("product", parts=tuple(found))
    # keep a rule only where it reproduces formulaic's column exactly on the training rows (a
    # threshold's cuts all at once: thousands of them on continuous measurements; a factor's
    # levels all at once: thousands of them on identifiers)
    checked = (_check_cuts(rules, frame, X, deadline) | _check_integer_columns(rules, frame, X)
               | _check_levels(rules, frame, X, deadline))
    for j, r in enumerate(rules):
        if j % 1000 == 999:
            deadline.check("checking the design's columns")
        if r.declarative and j not in checked:
            try:
                ok = np.array_equal(r.values(frame), X[:, j])
            except (DataError, TypeError, ValueError):
                ok = False
            if not ok:
                rules[j] = Rule("expression")
    used = {v for r in rules if r.kind in ("level", "product") for v in r.variables()}
    return tuple(rules), {v: c for v, c in categories.items() if v in used}


def _check_cuts(rules: list, frame: pd.DataFrame, X: np.ndarray, deadline: Deadline) -> set:
    """The positions of the ``le`` rules, each replaced by ``Rule("expression")`` where it does not
    reproduce ``X[:, j]`` (as :meth:`Rule.values` computes it, one comparison per variable)."""
    by_variable: dict = {}
    for j, r in enumerate(rules):
        if r.kind == "le":
            by_variable.setdefault(r.variable, []).append(j)
    for var, js in by_variable.items():
        try:
            x = _numbers(frame[var], var)
        except (DataError, TypeError, ValueError):
            ok = np.zeros(len(js), dtype=bool)
        else:
            cuts = np.array([float(rules[j].value) for j in js])
            step = max(1, (1 << 22) // max(len(x), 1))  # at most 4 M comparisons at once
            ok = np.concatenate([deadline.checked(
                np.all((x[:, None] <= cuts[None, a:a + step]).astype(float) == X[:, js[a:a + step]], axis=0),
                "checking the design's cuts", a + step < len(js)) for a in range(0, len(js), step)])
        for j, good in zip(js, ok):
            if not good:
                rules[j] = Rule("expression")
    return {j for js in by_variable.values() for j in js}


def _check_levels(rules: list, frame: pd.DataFrame, X: np.ndarray, deadline: Deadline) -> set:
    """The positions of the ``level`` rules, each replaced by ``Rule("expression")`` where it does
    not reproduce ``X[:, j]``: each row's level is looked up once (by hash, as ``==`` compares a
    level), so a factor's columns are checked in time linear in rows × levels."""
    by_variable: dict = {}
    for j, r in enumerate(rules):
        if r.kind == "level":
            by_variable.setdefault(r.variable, []).append(j)
    done: set = set()
    for var, js in by_variable.items():
        col = frame[var]
        values = [rules[j].value for j in js]
        try:
            lookup = pd.Index(pd.unique(pd.Series(values, dtype=object)), dtype=object)
            if len(lookup) != len(values):
                continue  # two columns of one level: checked one by one
            where = lookup.get_indexer(col.astype(object))
        except (TypeError, ValueError):
            continue  # unhashable or odd values: checked one by one (and refused there)
        where[col.isna().to_numpy()] = -1  # a missing value is no level (`==` is False)
        step = max(1, (1 << 22) // max(len(col), 1))
        for a in range(0, len(js), step):
            if a:
                deadline.check("checking the design's levels")
            block = js[a:a + step]
            expected = (where[:, None] == np.arange(a, a + len(block))[None, :]).astype(float)
            ok = np.all(expected == X[:, block], axis=0)
            for j, good in zip(block, ok):
                if not good:
                    rules[j] = Rule("expression")
        done.update(js)
    return done


def _check_integer_columns(rules: list, frame: pd.DataFrame, X: np.ndarray) -> set:
    """The positions of the ``linear`` rules of integer (or boolean) columns, each replaced by
    ``Rule("expression")`` where the column's values are not ``X[:, j]``: compared as they are
    (an integer column has no missing value), not through a float copy of the column."""
    done = set()
    for j, r in enumerate(rules):
        if r.kind != "linear" or r.variable not in frame.columns:
            continue
        col = frame[r.variable]
        if not (isinstance(col.dtype, np.dtype) and col.dtype.kind in "biu"):
            continue
        if not np.array_equal(col.to_numpy(), X[:, j]):
            rules[j] = Rule("expression")
        done.add(j)
    return done


#: a design of at least this many cells (rows × columns; 128 MiB of float64) is large: its stages
#: take seconds, and stop at the time limit (a smaller one always reaches the search, which returns
#: the best model it finds in the time left)
LARGE_CELLS = 2 ** 24


class Deadline:
    """A ``time.perf_counter()`` value by which a stage must end (None: no limit); :meth:`check`
    raises a :class:`~riskformula.errors.SearchLimitError` once it has passed."""

    def __init__(self, at: float | None, limit: float | None = None):
        self.at = at
        self.limit = limit

    @classmethod
    def after(cls, seconds: float | None, started: float | None = None) -> "Deadline":
        """The deadline ``seconds`` after ``started`` (now when None)."""
        if seconds is None:
            return cls(None)
        return cls((time.perf_counter() if started is None else started) + float(seconds), float(seconds))

    def for_cells(self, cells: int) -> "Deadline":
        """This deadline for the work on a design of ``cells`` cells: none unless it is large
        (:data:`LARGE_CELLS`)."""
        return self if cells >= LARGE_CELLS else Deadline(None)

    def passed(self) -> bool:
        return self.at is not None and time.perf_counter() > self.at

    def check(self, doing: str) -> None:
        if self.passed():
            shown = f" ({self.limit:g} s)" if self.limit is not None else ""
            raise SearchLimitError(f"stopped at the time limit{shown} while {doing}, before the search began; "
                                   "raise `time_limit`, or make the design smaller (merge the rare levels of a "
                                   "factor with many levels, or leave an identifier out of the formula).")

    def checked(self, value, doing: str, check: bool = True):
        """``value`` after :meth:`check` when ``check`` (for use inside comprehensions)."""
        if check:
            self.check(doing)
        return value


#: an outcome column as a formula names it: a name, or any name in backticks
_COLUMN = re.compile(r"^\s*(?:([^\W\d][\w.]*)|`([^`]+)`)\s*$")


def outcome_column(lhs: str) -> str | None:
    """The column a formula's left-hand side ``lhs`` names when it is a bare column (``y``, or any
    name in backticks, such as a name with a space); None for any other text."""
    m = _COLUMN.match(lhs)
    return None if m is None else (m.group(1) or m.group(2))


def comparison_outcome(lhs: str) -> OutcomeRule | None:
    """The :class:`OutcomeRule` of a left-hand side ``column <op> literal`` (in ``I()`` or not; the
    column bare or in backticks), as written; None for any other text."""
    text = re.sub(r"^I\((.*)\)$", r"\1", lhs.strip(), flags=re.S).strip()
    quoted = re.match(r"`([^`]+)`", text)
    name = None
    if quoted is not None:
        name, text = quoted.group(1), "_rf_outcome" + text[quoted.end():]
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _AST_OPS
            and isinstance(node.left, ast.Name)) or (name is not None and node.left.id != "_rf_outcome"):
        return None
    try:
        value = ast.literal_eval(node.comparators[0])
    except (ValueError, SyntaxError, TypeError):
        return None
    if not isinstance(value, (str, int, float, bool)) or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return OutcomeRule(name or node.left.id, _AST_OPS[type(node.ops[0])], value)


def derive_outcome(lhs: str, bare_name: str | None, frame: pd.DataFrame, raw) -> OutcomeRule | None:
    """The outcome's :class:`OutcomeRule` (checked against the training values ``raw``), or None
    when the outcome is an expression only formulaic can compute."""
    if bare_name is not None:
        return OutcomeRule(bare_name)
    rule = comparison_outcome(lhs)
    if rule is None or rule.variable not in frame.columns:
        return None
    try:
        same = np.array_equal(rule.values(frame).to_numpy(), pd.Series(raw).to_numpy())
    except (TypeError, ValueError):
        same = False
    return rule if same else None


def rule_variables(rules) -> list:
    """The data columns the declarative rules read, in first-use order."""
    return list(dict.fromkeys(v for r in rules for v in r.variables()))


def evaluate_rules(rules, frame: pd.DataFrame, categories: dict, name: str) -> np.ndarray:
    """Columns of the declarative ``rules`` on ``frame`` (checked complete by the caller); a level
    never seen in training is an error, as a score has no points for it."""
    unseen = {}
    for v in dict.fromkeys(x for r in rules if r.kind in ("level", "product") for x in r.variables()):
        if v in categories:
            bad = ~frame[v].isin(list(categories[v])) & frame[v].notna()
            if bad.any():
                unseen[v] = sorted(repr(_plain(x)) for x in pd.unique(frame[v][bad]))[:10]
    if unseen:
        shown = "; ".join(f"{v}: {', '.join(vals)}" for v, vals in unseen.items())
        raise DataError(f"`{name}` has categories the model never saw in training ({shown}). A risk score has "
                        "no points for an unseen level; recode it to a known level.")
    out = np.empty((len(frame), len(rules)))
    for k, r in enumerate(rules):
        out[:, k] = r.values(frame)
    return out


def rule_from_dict(d, where: str) -> Rule:
    """A :class:`Rule` from its document form, checked (a :class:`DataError` names ``where``)."""
    if not isinstance(d, dict) or d.get("kind") not in KINDS:
        raise DataError(f"{where}: a design column's rule must be an object whose \"kind\" is one of {list(KINDS)}; "
                        f"got {_short(d)}.")
    kind = d["kind"]
    allowed = {"expression": ("kind",), "product": ("kind", "parts"), "linear": ("kind", "variable"),
               "missing": ("kind", "variable")}.get(
        kind, ("kind", "variable", "value"))
    if set(d) - set(allowed):
        raise DataError(f"{where}: unknown field(s) {sorted(set(d) - set(allowed))[:3]} in a {kind} rule.")
    if kind == "expression":
        return Rule("expression")
    if kind == "product":
        parts = d.get("parts")
        if not isinstance(parts, list) or not 2 <= len(parts) <= 8:
            raise DataError(f"{where}: a product rule needs 2 to 8 parts; got {_short(parts)}.")
        sub = tuple(rule_from_dict(p, where) for p in parts)
        if any(p.kind in ("product", "expression", "missing") for p in sub):
            raise DataError(f"{where}: a product rule's parts must be le, level or linear rules.")
        return Rule("product", parts=sub)
    var = d.get("variable")
    if not isinstance(var, str) or not var or len(var) > 1000:
        raise DataError(f"{where}: a {kind} rule needs the name of a data column as \"variable\"; got {_short(var)}.")
    if kind == "le":
        v = d.get("value")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
            raise DataError(f"{where}: a cut (le rule) needs a finite number as \"value\"; got {_short(v)}.")
        return Rule("le", var, float(v))
    if kind == "level":
        v = d.get("value")
        if not _is_level(v):
            raise DataError(f"{where}: a level rule's \"value\" must be a string, number or boolean; got {_short(v)}.")
        return Rule("level", var, v)
    return Rule(kind, var)


def outcome_from_dict(d, where: str) -> OutcomeRule:
    if isinstance(d, dict) and set(d) - {"variable", "op", "value"}:
        raise DataError(f"{where}: unknown field(s) {sorted(set(d) - {'variable', 'op', 'value'})[:3]} "
                        "in the outcome rule.")
    if not isinstance(d, dict) or not isinstance(d.get("variable"), str) or not d["variable"]:
        raise DataError(f"{where}: the outcome rule needs the outcome's data column as \"variable\"; got {_short(d)}.")
    op = d.get("op")
    if op is not None and op not in _COMPARE:
        raise DataError(f"{where}: the outcome comparison must be one of {list(_COMPARE)}; got {_short(op)}.")
    if op is not None and not _is_level(d.get("value")):
        raise DataError(f"{where}: the outcome is compared with a string, number or boolean; "
                        f"got {_short(d.get('value'))}.")
    return OutcomeRule(d["variable"], op, d.get("value") if op is not None else None)


def _is_level(v) -> bool:
    if isinstance(v, (str, bool, int)):
        return not isinstance(v, str) or len(v) <= 10_000
    return isinstance(v, float) and math.isfinite(v)



def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."
