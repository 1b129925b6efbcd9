"""Formula + data → design: the outcome as 0/1 events and the predictors as a numeric matrix.

All formula work is formulaic's; this module adds what a risk score needs on top: an outcome
with an unambiguous event level, comparisons on the left-hand side (``y == "yes" ~ ...``),
missing values reported by column, non-finite values refused, readable term labels, and the
frozen :class:`~riskformula.design.spec.DesignSpec` that re-encodes new data at predict time.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from formulaic import model_matrix
from formulaic.errors import FormulaicError, FormulaParsingError
from formulaic.transforms import TRANSFORMS

from .._checks import check_weights
from ..errors import (DataError, FormulaError, RiskFormulaError, close_match, did_you_mean, name_list,
                      strip_ansi, unreadable_formula)
from ..thresholds import (CUT_DEPTH, FORMULA_FUNCTIONS, OUTCOME, PROBE, expand_threshold_dot, first_argument,
                          threshold_terms, top_level_parts)
from ..thresholds.expansion import formula_variables  # reads a formula's variables
from .guard import check_formula_code, refuse_empty_name
from .labels import design_labels
from .matrix import DesignMatrix
from .missing import (fill_value, missing_rows, missing_term, parse_choice, refused_in_fit,
                      resolve_policies, zero_missing)
from .rules import Deadline, OutcomeRule, Rule, derive_outcome, derive_rules, outcome_column
from .spec import DesignSpec, check_finite, check_frame, design_values, plain_strings
from .survival_response import SurvivalResponse, as_level, parse_surv, survival_arrays
from .._json import plain as _plain

_COMPARISON = re.compile(r"(==|!=|<=|>=|<|>)")


def split_formula(formula: str) -> tuple[str, str]:
    """``"y ~ a + b"`` -> ``("y", "a + b")``, checking there is exactly one outcome side."""
    if not isinstance(formula, str):
        raise FormulaError(f"`formula` must be a string like 'y ~ x1 + x2'; got {type(formula).__name__}.")
    depth, pos = 0, None
    for i, ch in enumerate(formula):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "~" and depth == 0:
            if pos is not None:
                raise FormulaError(f"`formula` has more than one '~': {formula!r}. Write one 'outcome ~ terms'.")
            pos = i
    if pos is None or not formula[:pos].strip():
        raise FormulaError(f"`formula` needs an outcome on the left of '~', like 'y ~ x1 + x2'; got {formula!r}.")
    lhs, rhs = formula[:pos].strip(), formula[pos + 1:].strip()
    if not rhs:
        raise FormulaError(f"`formula` has no terms on the right of '~': {formula!r}. "
                           "Use 'y ~ 1' for an intercept-only score.")
    return lhs, rhs


def _q(v) -> str:
    return f'"{v}"' if isinstance(v, str) else repr(v)



def _event_of(raw: pd.Series, name: str, event) -> object:
    levels = [_plain(v) for v in pd.unique(raw)]
    if len(levels) > 2:
        shown = ", ".join(repr(v) for v in levels[:6])
        raise DataError(f"the outcome `{name}` must have two levels; it has {len(levels)} ({shown}...). "
                        f"Write a two-level outcome in the formula, e.g. {name} == {_q(levels[0])} ~ ...")
    if isinstance(event, str) and event not in set(levels):
        # the command line (and a config file) can only give text: "2" means the level 2
        same = [v for v in levels if str(v) == event]
        event = same[0] if len(same) == 1 else event
    if event is not None and event not in set(levels):
        raise DataError(f"`event={event!r}` is not a level of the outcome `{name}`; its levels are "
                        f"{', '.join(sorted(map(repr, levels)))}.")
    if len(levels) < 2:
        raise DataError(f"the outcome `{name}` has a single level ({levels[0]!r}) in the rows used; a risk "
                        "score needs both events and non-events.")
    if event is not None:
        return as_level(levels, event)
    s = set(levels)
    for pair, ev in (({0, 1}, 1), ({False, True}, True), ({-1, 1}, 1)):
        if s == pair:
            return as_level(levels, ev)
    raise DataError(f"the outcome `{name}` has levels {', '.join(sorted(map(repr, levels)))}; say which is the "
                    f"event with `event=...` or in the formula, e.g. {name} == {_q(sorted(levels, key=str)[-1])} ~ ...")


def _names(text: str) -> set:
    """The Python names in a piece of formula (``diagnosis`` of ``diagnosis == "M"``); none if it is
    not Python code."""
    try:
        return {n.id for n in ast.walk(ast.parse(text.strip(), mode="eval")) if isinstance(n, ast.Name)}
    except SyntaxError:
        return set()


def _unknown_name(error: BaseException | None) -> str | None:
    """The name a NameError in ``error``'s chain could not find: formulaic's "`x` is not present in
    the dataset" or Python's "name 'x' is not defined"."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, NameError):
            if getattr(error, "name", None):
                return error.name
            m = re.search(r"^`(.+)` is not present|name '(.+)' is not defined", str(error))
            return (m.group(1) or m.group(2)) if m else None
        error = error.__cause__ or error.__context__
    return None


def _unquoted_level(lhs: str, name: str, data: pd.DataFrame) -> str | None:
    """The column of ``lhs`` compared with the bare word ``name`` when ``name`` is one of its values
    (``out == yes`` for ``out == "yes"``), or None."""
    try:
        nodes = ast.walk(ast.parse(lhs.strip(), mode="eval"))
    except SyntaxError:
        return None
    for n in nodes:
        if isinstance(n, ast.Compare) and isinstance(n.left, ast.Name) and n.left.id in data.columns:
            if any(isinstance(c, ast.Name) and c.id == name for c in n.comparators):
                if name in set(map(str, pd.unique(data[n.left.id].dropna()))):
                    return n.left.id
    return None


def _design_error(error: BaseException, formula: str, user_lhs: str, data: pd.DataFrame,
                  context: dict) -> RiskFormulaError:
    """The error for a formula formulaic could not turn into a design, in the user's terms: a name
    that is neither a column nor a function (with the closest column or function), a formula that
    cannot be read, riskformula's own error from threshold() or cut(), or formulaic's message."""
    columns = list(data.columns)
    if isinstance(error, (FormulaParsingError, SyntaxError)):
        return unreadable_formula(formula, error)
    cause = error.__cause__
    if isinstance(cause, RiskFormulaError):  # threshold() or cut() refused its arguments: say which term
        term = re.search(r"Unable to evaluate factor `(.*)`\. \[", str(error))
        return type(cause)(f"{str(cause).rstrip('.')} (in the term `{term.group(1)}`)." if term else str(cause))
    name = _unknown_name(error)
    shown = f"Columns available: {name_list(columns)}."
    in_formula = name is not None and (re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", formula) is not None
                                       if name.isidentifier() else name in formula)
    if in_formula and name not in columns:
        assert name is not None  # in_formula says so
        if re.search(rf"(?<![\w.`]){re.escape(name)}\s*\(", formula):
            known = [*FORMULA_FUNCTIONS, *TRANSFORMS, *context]
            return FormulaError(f"the formula {formula!r} calls `{name}()`, which is not a function it knows."
                                f"{did_you_mean(name, known)} A formula can use threshold(), cut(), C(), I(), log(), "
                                f"numpy as np (np.sqrt(x)) and functions passed with context={{{name!r}: ...}}.")
        hint = did_you_mean(name, columns)
        if name in _names(user_lhs) or name == user_lhs.strip("` "):
            column = _unquoted_level(user_lhs, name, data)
            if column is not None:
                quoted = re.sub(rf"(?<![\w.'\"]){re.escape(name)}(?![\w'\"])", _q(name), user_lhs, count=1)
                return FormulaError(f"the outcome `{user_lhs}` compares `{column}` with `{name}`, which is not a "
                                    f"column of `data`; to compare with the value {name}, quote it: {quoted} ~ ...")
            if name == user_lhs.strip("` "):
                return FormulaError(f"the outcome `{name}` is not a column of `data`.{hint} {shown}")
            return FormulaError(f"the outcome `{user_lhs}` names `{name}`, which is not a column of `data`.{hint} "
                                f"{shown}")
        return FormulaError(f"the formula {formula!r} names `{name}`, which is not a column of `data`.{hint} {shown}")
    text = strip_ansi(error).strip()
    failed = re.match(r"Unable to evaluate factor `(.*)`\. \[(.*)\]$", text, re.S)
    if failed:  # formulaic's wording for an error raised while computing a term
        inner = failed.group(2).strip()
        return FormulaError(f"could not compute the term `{failed.group(1)}` of {formula!r}: {inner}"
                            f"{'' if inner.endswith(('.', '?', '!')) else '.'}")
    return FormulaError(f"could not build the design of {formula!r}: {text}")


def _no_contrast(outcome: str, lhs: str, frame: pd.DataFrame, raw) -> None:
    """Refuse an outcome comparison (``diagnosis == "m"``) that is the same on every row used, naming
    the values of the column it compares: usually a misspelt or miscased level."""
    values = pd.unique(pd.Series(raw))
    if len(values) != 1 or _plain(values[0]) not in (0, 1):
        return
    text = re.sub(r"^I\((.*)\)$", r"\1", lhs.strip(), flags=re.S)
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return
    if not isinstance(node, ast.Compare):
        return
    which = ("no row used, so there are no events" if not _plain(values[0]) else
             "every row used, so there are no non-events")
    parts = [f"the outcome `{outcome}` matches {which}; a risk score needs both events and non-events."]
    hint = "Check the value it compares with."
    for col in [c for c in dict.fromkeys(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
                if c in frame.columns]:
        x = frame[col].dropna()
        levels = sorted((_plain(v) for v in pd.unique(x)), key=lambda v: (str(type(v)), v))
        if pd.api.types.is_numeric_dtype(x) and len(levels) > 10:
            parts.append(f"`{col}` ranges from {_plain(x.min()):g} to {_plain(x.max()):g}.")
            continue
        more = f" and {len(levels) - 10} more" if len(levels) > 10 else ""
        parts.append(f"`{col}` has the levels {', '.join(_q(v) for v in levels[:10])}{more}.")
        if (isinstance(node.left, ast.Name) and node.left.id == col and len(node.ops) == 1
                and isinstance(node.ops[0], (ast.Eq, ast.NotEq)) and isinstance(node.comparators[0], ast.Constant)
                and isinstance(node.comparators[0].value, str)):
            close = close_match(node.comparators[0].value, [v for v in levels if isinstance(v, str)])
            if close is not None:
                op = "==" if isinstance(node.ops[0], ast.Eq) else "!="
                hint = f"Did you mean {col} {op} {_q(close)}?"
    parts.append(hint)
    raise DataError(" ".join(parts))


def _check_columns(lhs: str, rhs: str, data: pd.DataFrame, dot: bool) -> None:
    """Refuse the columns of ``data`` the formula uses (by name or through ``.``) that formulaic
    cannot use, before it fails on them deep inside: names that are not strings, and dates or
    durations as plain terms or thresholds (their raw numbers are nanoseconds).  The formula is
    only parsed here; unused columns are ignored.  ``dot``: the user's formula has a ``.``
    (``threshold(.)`` is written out in ``rhs`` by now)."""
    try:
        lone, used = formula_variables(f"{lhs} ~ {rhs}", [str(c) for c in data.columns])
    except FormulaError:  # building the design reports it, as the user wrote the formula
        return
    # `.` lists every column: formulaic fails on a name that is not a string even if removed, and
    # threshold(.) would leave it out without a word
    odd = [c for c in data.columns if not isinstance(c, str) and (dot or str(c) in used)]
    if odd:
        raise DataError(f"`data` has column names that are not strings, which a formula cannot use: {odd}. "
                        "Name the columns with strings first, e.g. df.columns = df.columns.astype(str).")
    direct = set(lone) | {first_argument(rhs[m.start():]).strip("`")
                          for m in re.finditer(r"(?<![\w.])(?:threshold|cut)\(", rhs)}
    read = [c for c in data.columns if dot or c in used or c in direct]
    _check_cells(data, read)
    _check_numbers(data, [c for c in data.columns if c in direct or (dot and c in read)])
    dates = [c for c in data.columns if c in direct and (pd.api.types.is_datetime64_any_dtype(data[c])
                                                         or pd.api.types.is_timedelta64_dtype(data[c])
                                                         or isinstance(data[c].dtype, pd.PeriodDtype))]
    if dates:
        raise DataError(f"the column(s) {dates} hold dates or durations, which a risk score cannot use as they are. "
                        "Convert them to numbers first (a date to a year with df[col].dt.year or to days since a start "
                        "with (df[col] - start).dt.days; a duration to days with df[col].dt.days), or leave them out "
                        f"of the formula (with `.`, write `. - {dates[0]}`).")


#: the largest integer magnitude float64 holds exactly (2⁵³): the design computes in float64
EXACT_INTEGERS = 2 ** 53


def _check_cells(data: pd.DataFrame, columns) -> None:
    """Refuse object columns (of ``columns``) holding containers (lists, dicts, sets, arrays) in
    their cells: a risk score needs one value per cell, and they are not even categories (they
    cannot be hashed; a tuple can, and is a category like any other value)."""
    for c in columns:
        col = data[c]
        if col.dtype != object or pd.api.types.infer_dtype(col, skipna=True) not in ("mixed", "mixed-integer"):
            continue
        odd = col.map(lambda v: isinstance(v, (list, dict, set, np.ndarray, pd.Series, pd.DataFrame)))
        if odd.any():
            first = col[odd].iloc[0]
            shown = repr(first) if len(repr(first)) <= 40 else repr(first)[:37] + "..."
            raise DataError(f"the column `{c}` holds {type(first).__name__}s in {int(odd.sum()):,d} of its cells "
                            f"(e.g. {shown}); a risk score needs one number or one category per cell. Spread them "
                            f"into columns first (pd.DataFrame(df[{c!r}].tolist(), index=df.index)), or turn them "
                            f"into text (df[{c!r}].astype(str)) to use them as categories.")


def _check_numbers(data: pd.DataFrame, columns) -> None:
    """Refuse numeric columns (of ``columns``, those used as numbers) that float64 arithmetic would
    change: complex numbers (their imaginary part would be dropped) and integers beyond 2⁵³ (distinct
    values would become equal)."""
    for c in columns:
        col = data[c]
        if pd.api.types.is_complex_dtype(col.dtype):
            raise DataError(f"the column `{c}` holds complex numbers; a risk score needs real numbers. Use the part "
                            f"that matters, e.g. df[{c!r}].real, df[{c!r}].imag or abs(df[{c!r}]).")
        if not (pd.api.types.is_integer_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype)):
            continue
        values = col.dropna()
        if not len(values):
            continue
        top = max(abs(int(values.min())), abs(int(values.max())))
        if top > EXACT_INTEGERS:
            raise DataError(f"the column `{c}` holds whole numbers up to {top:.3g}, beyond 2^53 "
                            f"({EXACT_INTEGERS:.3g}), the largest that float64 arithmetic keeps exact: distinct "
                            "values would become equal. "
                            f"Rescale it (e.g. df[{c!r}] / 1e6), or, if it is an identifier or a code, use it as a "
                            f"category: C({c}) or df[{c!r}].astype(str).")


def build_design(formula: str, data: pd.DataFrame, missing="raise", event=None,
                 context: dict | None = None, prune_cuts: bool = True, cut_depth: int | None = None,
                 check_values: bool = True, weights=None, deadline=None, survival: bool = False) -> DesignMatrix:
    """Build the training :class:`DesignMatrix` (and its :class:`DesignSpec`) of ``formula`` on
    ``data`` (never modifying ``data``), with the sample ``weights`` of its rows (see
    :func:`~riskformula._checks.check_weights`; a fit-wide ``missing="drop"`` also drops rows
    without one).  ``missing`` says how missing values enter (:mod:`riskformula.design.missing`).

    With ``threshold()`` terms the formula is evaluated twice: a cheap first pass finds the
    variables, missing values and the outcome; the second builds the candidate cuts, knowing the
    outcome when ``prune_cuts`` (only cuts that can be optimal for a score with at most
    ``cut_depth`` cuts per variable, None: any number; not valid under side information).
    ``check_values=False`` skips the check for infinite design values (a dask fit learns the
    encoding on a prototype frame and counts them over the real rows instead).  ``deadline`` (a
    :class:`~riskformula.design.rules.Deadline`) is checked inside the loops over the columns of a
    large design (:data:`~riskformula.design.rules.LARGE_CELLS`): past it, a
    :class:`~riskformula.errors.SearchLimitError`.

    ``survival=True`` accepts a time-to-event outcome ``Surv(time, event)``
    (:mod:`~riskformula.design.survival_response`): ``y`` holds its 0/1 events and ``time`` its
    follow-up times.  Without it such an outcome is refused: a fit of a binary outcome would
    silently read the event column alone.
    """
    deadline = deadline or Deadline(None)
    check_frame(data)
    if not isinstance(missing, (str, dict)):
        parse_choice(missing)  # the error says what `missing` takes
    fit_wide = parse_choice(missing.get(".", "raise") if isinstance(missing, dict) else missing)[0]
    w = check_weights(weights, data, "drop" if fit_wide == "drop" else "raise")
    data = plain_strings(data)  # text is categorical whatever its dtype (a copy if converted)
    f = _read_formula(formula, data, survival)
    # threshold()/cut() are formula functions; the user's own names win if they clash
    context = {**FORMULA_FUNCTIONS, **(context or {})}
    has_thresholds = "threshold(" in f.rhs
    first_context = {**context, PROBE: True} if has_thresholds else context

    def materialize(frame, ctx=first_context):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return model_matrix(f.full, frame, na_action="ignore", context=ctx)
        except (FormulaicError, NameError, SyntaxError) as e:
            # SyntaxError: Python code in a term formulaic cannot parse (e.g. an unclosed quote)
            error = _design_error(e, formula, f.user_lhs, frame, ctx)
        except TypeError as e:
            # formulaic multiplying the columns of an interaction that are not numbers (dates, periods)
            kinds = sorted({str(t) for t in frame.dtypes if not (pd.api.types.is_numeric_dtype(t)
                                                                 or pd.api.types.is_bool_dtype(t))})
            error = DataError(f"could not compute the design of {formula!r}: {e}. A term multiplies or compares "
                              f"values that are not numbers (the data hold columns of type {', '.join(kinds)}); "
                              "convert them to numbers or to categories (C(x)) first.")
        raise error from None  # one message: formulaic's chained tracebacks say nothing more

    check_formula_code(f.full, data.columns, context)  # before formulaic evaluates any of it
    mm = materialize(data)
    variables = sorted(set(mm.rhs.model_spec.required_variables) | set(mm.lhs.model_spec.required_variables))
    used = [v for v in variables if v in data.columns]
    outcome_vars = [v for v in mm.lhs.model_spec.required_variables if v in data.columns]
    predictors = [v for v in used if v not in outcome_vars]
    # the outcome (and the weights) are never items: dropped under a fit-wide "drop", else an error
    policies = resolve_policies(missing, f.rhs, predictors, outcome_vars)
    frame, w, dropped_index, items = _apply_missing(data, w, used, outcome_vars, policies)
    if frame is not data:
        mm = materialize(frame)
    time = None
    if f.surv is None:
        outcome_name, raw, ev, y = _outcome(f, formula, frame, mm, event)
    else:
        both = sorted({f.surv.time, f.surv.event} & set(mm.rhs.model_spec.required_variables))
        if both:
            raise FormulaError(f"the term(s) of {formula!r} use {both}, the follow-up time or event of the outcome "
                               f"{f.surv.label}: a score cannot be computed from its own outcome. Remove them.")
        # the cut pruning reads a 0/1 outcome; with censored times it does not apply
        time, y, ev = survival_arrays(frame, f.surv, event)
        outcome_name, raw, prune_cuts = f.surv.label, frame[f.surv.event], False
    if has_thresholds:
        second = ({**context, OUTCOME: pd.Series(y, index=frame.index), CUT_DEPTH: cut_depth} if prune_cuts
                  else context)
        mm = materialize(frame, second)
    try:
        X, columns = design_values(mm.rhs, deadline)
    except (TypeError, ValueError) as e:
        raise DataError(f"the design of {formula!r} has non-numeric columns: {e}") from e
    absent = missing_rows(frame, items)
    if absent is not None:
        zero_missing(X, absent)
    if check_values:
        check_finite(X, columns, "`data`")
    spec = mm.rhs.model_spec
    column_terms = _column_terms(spec, columns)
    thresholds = threshold_terms(spec, columns, column_terms)
    rules, categories = derive_rules(spec, columns, column_terms, thresholds, frame, X, deadline)
    if items:  # one "x is missing" column per item variable, after the formula's columns
        thresholds = [dataclasses.replace(t, missing_item=True) if t.variable in items else t for t in thresholds]
        X = np.column_stack([X] + [frame[v].isna().to_numpy(dtype=float) for v in items])
        columns += [missing_term(v) for v in items]
        column_terms += [missing_term(v) for v in items]
        rules = tuple(rules) + tuple(Rule("missing", v) for v in items)
    labels = design_labels(columns, rules, thresholds)
    kept = {v: _kept(policies[v], v, data, items) for v in predictors if policies[v][0] != "raise"}
    outcome_rule = (OutcomeRule(f.surv.event) if f.surv is not None
                    else derive_outcome(f.lhs, f.bare_name if f.bare else None, frame, raw))
    spec = DesignSpec(formula=formula, model_spec=spec, lhs_model_spec=None if f.bare else mm.lhs.model_spec,
                      columns=tuple(columns), labels=tuple(labels), column_terms=tuple(column_terms),
                      variables=tuple(used), outcome=outcome_name, event=ev, levels=tuple(pd.unique(pd.Series(raw))),
                      thresholds=tuple(thresholds), context=context, rules=tuple(rules), categories=categories,
                      outcome_rule=outcome_rule, missing=kept,
                      survival=None if f.surv is None else (f.surv.time, f.surv.event))
    return DesignMatrix(spec=spec, X=X, y=y, index=frame.index, dropped_index=tuple(dropped_index),
                        weights=None if w is None else w.to_numpy(), time=time)


@dataclass(frozen=True)
class _Formula:
    """A formula as formulaic reads it: the outcome side (a bare column, or a comparison wrapped in
    ``I()``), the terms with ``threshold(.)`` written out, and the outcome side as the user wrote it."""

    lhs: str
    rhs: str
    user_lhs: str
    bare: bool  # the outcome is a column of the data as it is
    bare_name: str  # that column
    surv: SurvivalResponse | None = None  # the columns of a ``Surv(time, event)`` outcome

    @property
    def full(self) -> str:
        return f"{self.lhs} ~ {self.rhs}"


def _removes_intercept(rhs: str) -> bool:
    """Whether the terms ``rhs`` remove the intercept: a term ``0`` (``0 + x``, ``x + 0``, ``0+x``) or
    ``- 1`` at the top level (not inside a call, brackets, quotes or backticks: ``I(x - 1)`` keeps it)."""
    return any(t == "0" and s != "-" or t == "1" and s == "-" for s, t in top_level_parts(rhs, "+-"))


def _read_formula(formula: str, data: pd.DataFrame, survival: bool = False) -> _Formula:
    """The formula checked (one outcome, an intercept) and rewritten for formulaic, and the data's
    columns it uses checked (see :func:`_check_columns`); a ``Surv(time, event)`` outcome only
    with ``survival``."""
    refuse_empty_name(formula)
    lhs, rhs = split_formula(formula)
    user_lhs = lhs
    surv = parse_surv(lhs, data.columns)
    if surv is not None and not survival:
        raise FormulaError(f"the outcome {lhs.strip()!r} is a time-to-event outcome, which this fit does not take: "
                           "it fits a binary outcome (an event or not). Make one first, e.g. a column saying whether "
                           f"the event (`{surv.event}`) came within a fixed time (`{surv.time}`), leaving out the rows "
                           "censored before that time.")
    if surv is not None:
        lhs = surv.formulaic_lhs  # both columns are the outcome's: never predictors, nor in `.`
    if _removes_intercept(rhs):
        raise FormulaError(f"`formula` removes the intercept ({rhs!r}); a risk score always has one "
                           "(its base risk). Remove the '- 1' / '0 +'.")
    named = outcome_column(lhs)
    bare = surv is None and named is not None and named in data.columns
    bare_name = named or ""  # the outcome column when `bare`
    if surv is None and not bare and _COMPARISON.search(lhs) and not lhs.startswith("I("):
        lhs = f"I({lhs})"
    if bare:
        lhs = bare_name if bare_name.isidentifier() else f"`{bare_name}`"
    dot = re.search(r"(?<![\w.])\.(?![\w.])", rhs) is not None
    rhs = expand_threshold_dot(lhs, rhs, data, formula)
    _check_columns(lhs, rhs, data, dot)
    return _Formula(lhs=lhs, rhs=rhs, user_lhs=user_lhs, bare=bare, bare_name=bare_name, surv=surv)


def _outcome(f: _Formula, formula: str, frame: pd.DataFrame, mm, event):
    """(the outcome's name, its raw values, the event level, the 0/1 events) of the rows ``frame``."""
    outcome_name = f.bare_name if f.bare else re.sub(r"^I\((.*)\)$", r"\1", f.lhs)
    raw = frame[f.bare_name] if f.bare else pd.DataFrame(mm.lhs).iloc[:, 0]
    if not f.bare and pd.DataFrame(mm.lhs).shape[1] != 1:
        raise FormulaError(f"the left side of {formula!r} must give one column; "
                           f"it gives {list(pd.DataFrame(mm.lhs).columns)}.")
    if not f.bare:
        _no_contrast(outcome_name, f.lhs, frame, raw)
    ev = _event_of(pd.Series(raw), outcome_name, event)
    y = (pd.Series(raw).to_numpy() == ev).astype(int)
    return outcome_name, raw, ev, y


def _column_terms(spec, columns) -> list:
    """The formula term of each design column (None when formulaic names none)."""
    column_terms: list[str | None] = [None] * len(columns)
    position: dict = {}
    for j, name in enumerate(columns):
        position.setdefault(name, j)  # the first column of a name, as list.index finds it
    for term, idx in spec.term_indices.items():
        for i in idx:
            at = position.get(spec.column_names[i])
            if at is not None:
                column_terms[at] = str(term)
    return column_terms


def _apply_missing(data: pd.DataFrame, w, used: list, outcome_vars: list, policies: dict):
    """(frame, weights, dropped row labels, item variables): ``data`` with the rows of ``"drop"``
    variables (and, under a fit-wide ``"drop"``, of the outcome and weights) left out and the
    ``"as"`` values filled in; a copy only when something changes.  Item variables keep their
    missing values (the design zeroes their columns there and adds a missing item); ``"raise"``
    variables with missing values are the error."""
    counts = {v: int(data[v].isna().sum()) for v in used if data[v].isna().any()}
    no_weight = w.isna() if w is not None else pd.Series(False, index=data.index)
    raising = {v: n for v, n in counts.items() if policies[v][0] == "raise"}
    if raising:
        outcome = [v for v in raising if v in outcome_vars]
        if outcome and len(outcome) == len(raising):
            raise DataError(f"missing values in the outcome: {raising} (column: count); a row without its outcome "
                            "cannot be fitted. Drop those rows, or pass missing=\"drop\" (or {..., \".\": \"drop\"}) "
                            "to leave them out (reported in the summary).")
        raise refused_in_fit(raising)
    drop_vars = [v for v in counts if policies[v][0] == "drop"]
    frame = data
    dropped_index: list = []
    if drop_vars or no_weight.any():
        keep = ~(data[drop_vars].isna().any(axis=1) | no_weight)
        dropped_index = list(data.index[~keep])
        frame = data.loc[keep]
        if w is not None:
            w = w[keep]
        if len(frame) == 0:
            raise DataError(f"no complete rows remain after dropping those with missing values in {drop_vars}.")
    fills = {v: fill_value(data[v], v, policies[v][1]) for v in counts if policies[v][0] == "as"}
    if fills:
        frame = frame.fillna(fills)
    items = [v for v in counts if policies[v][0] == "item" and frame[v].isna().any()]
    return frame, w, dropped_index, items


def _kept(policy: tuple, v: str, data: pd.DataFrame, items) -> dict:
    """What a fitted design keeps of a variable's policy (see :attr:`DesignSpec.missing`)."""
    if policy[0] == "as":
        return {"action": "as", "value": fill_value(data[v], v, policy[1])}
    if policy[0] == "item" and v not in items:
        return {"action": "item", "seen": False}
    return {"action": policy[0]}
