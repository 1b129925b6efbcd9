"""How missing values enter a score: one policy per variable, from ``missing=`` and the formula.

A variable's missing values are handled by one of four policies:

* ``"raise"`` (the default) — missing values are an error;
* ``"drop"`` — rows missing the variable are left out of the fit (complete cases);
* ``"item"`` — "the variable is missing" is a design column of its own (an item of the card whose
  points the search chooses like any other); on a row where the variable is missing, the
  variable's other columns are 0 (below no cut, at the reference level, a value of 0), so the row's
  points from the variable are the missing item's alone;
* ``"as <value>"`` — a missing value counts as that value or level (``"as 1.0"``, ``"as normal"``:
  the clinical rule that "not measured" is normal).

The policy of a variable comes, in this order, from its ``threshold()``/``cut()`` term
(``threshold(lactate, missing="item")``), from the ``missing=`` argument's entry for it (a dict
``{"lactate": "item", "sex": "as f"}``), from that dict's ``"."`` entry or ``missing=`` given as one
string (every variable), and else ``"raise"``.  The outcome and the weights are never items: their
missing values are dropped under a fit-wide ``"drop"`` and an error otherwise.

A fitted design keeps the policies it needs to score new data (:attr:`DesignSpec.missing`): a
variable fitted with ``"item"`` (that had missing values in training) or ``"as"`` is scored when
missing; any other variable missing in new data is an error that says how it was fitted.
"""

from __future__ import annotations

import ast
import math
import re

import numpy as np
import pandas as pd

from ..errors import DataError, FormulaError, SettingsError

__all__ = ["ACTIONS", "parse_choice", "formula_choices", "resolve_policies", "fill_value", "missing_label",
           "missing_term", "scorable", "refused", "refused_in_fit", "missing_rows", "zero_missing"]

#: the policies a variable's missing values can have
ACTIONS = ("raise", "drop", "item", "as")

_CALL = re.compile(r"(?<![\w.])(threshold|cut)\(")


def parse_choice(choice, where: str = "`missing`") -> tuple:
    """``"item"`` -> ``("item",)``, ``"as normal"`` -> ``("as", "normal")``; an error otherwise."""
    if isinstance(choice, str):
        text = choice.strip()
        if text in ("raise", "drop", "item"):
            return (text,)
        if text.startswith("as ") and text[3:].strip():
            return ("as", text[3:].strip())
    raise SettingsError(f"{where} must be \"raise\", \"drop\", \"item\" or \"as <value>\" (e.g. \"as 1.0\", "
                        f"\"as normal\": missing counts as that value); got {choice!r}.")


def formula_choices(rhs: str) -> dict:
    """variable -> policy of every ``threshold()``/``cut()`` call in ``rhs`` with ``missing=``."""
    from ..thresholds import first_argument
    from ..thresholds.expansion import _closing
    out: dict = {}
    for m in _CALL.finditer(rhs):
        call = rhs[m.start():_closing(rhs, m.end()) + 1]
        if "missing" not in call:
            continue
        first = first_argument(call)
        variable = first.strip("`")
        inner = call[len(m.group(1)) + 1:]
        rest = "f(_" + inner[inner.index(first) + len(first):]  # the call with its variable as `_`
        try:
            node = ast.parse(rest, mode="eval").body
        except SyntaxError:
            continue  # formulaic reports the unreadable term
        for kw in getattr(node, "keywords", []):
            if kw.arg == "missing":
                try:
                    value = ast.literal_eval(kw.value)
                except (ValueError, SyntaxError):
                    raise FormulaError(f"`missing=` in {call!r} must be a quoted choice such as \"item\"; "
                                       f"got {ast.unparse(kw.value)}.") from None
                choice = parse_choice(value, f"`missing=` in {call!r}")
                if variable in out and out[variable] != choice:
                    raise FormulaError(f"the formula gives `{variable}` two different `missing=` choices; "
                                       "a variable's missing values are handled one way.")
                out[variable] = choice
    return out


def resolve_policies(missing, rhs: str, variables, outcome=()) -> dict:
    """variable -> policy tuple for every predictor in ``variables`` and every outcome variable in
    ``outcome`` (never an item: ``"drop"`` under a fit-wide ``"drop"``, else ``"raise"``).

    ``missing`` is one choice string (every variable) or a dict of them (``"."``: the rest)."""
    if isinstance(missing, dict):
        bad = [k for k in missing if not isinstance(k, str)]
        if bad:
            raise SettingsError(f"`missing` as a dict maps variable names to choices; got the key {bad[0]!r}.")
        entries = {k: parse_choice(v, f"`missing[{k!r}]`") for k, v in missing.items()}
        default = entries.pop(".", ("raise",))
    elif isinstance(missing, str):
        entries, default = {}, parse_choice(missing)
    else:
        raise SettingsError(f"`missing` must be a choice (\"raise\", \"drop\", \"item\", \"as <value>\") or a dict "
                            f"{{variable: choice}}; got {type(missing).__name__}.")
    unknown = [k for k in entries if k not in set(variables)]
    if unknown:
        from ..errors import did_you_mean
        raise SettingsError(f"`missing` names {unknown[0]!r}, which is not a variable of the formula."
                            f"{did_you_mean(unknown[0], list(variables))} Its variables: {list(variables)}.")
    policies = {v: entries.get(v, default) for v in variables}
    policies.update({v: c for v, c in formula_choices(rhs).items() if v in policies})
    policies.update({v: ("drop",) if default[0] == "drop" else ("raise",) for v in outcome})
    return policies


def fill_value(column: pd.Series, variable: str, value: str):
    """The value ``"as <value>"`` stands for in ``column``: a number for a numeric variable, one of
    its levels otherwise."""
    observed = column.dropna()
    if pd.api.types.is_numeric_dtype(observed) or pd.api.types.is_bool_dtype(observed):
        try:
            number = float(value)
        except ValueError:
            raise SettingsError(f"`missing=\"as {value}\"` for `{variable}`: `{variable}` is numeric, so a missing "
                                "value counts as a number, e.g. \"as 1.0\".") from None
        if not math.isfinite(number):
            raise SettingsError(f"`missing=\"as {value}\"` for `{variable}` must be a finite number.")
        return number
    levels = list(pd.unique(observed))
    for lv in levels:
        if str(lv) == value:
            return lv.item() if isinstance(lv, np.generic) else lv
    shown = ", ".join(repr(str(v)) for v in levels[:10])
    raise SettingsError(f"`missing=\"as {value}\"` for `{variable}`: {value!r} is not one of its levels ({shown}); "
                        "a missing value counts as a level the variable has.")


def missing_term(variable: str) -> str:
    """The design column (and formula term) name of a variable's missing item."""
    return f"missing({variable})"


def missing_label(variable: str) -> str:
    """How the card prints a variable's missing item."""
    return f"{variable} missing"


def scorable(policy: dict | None) -> bool:
    """Whether a variable fitted with ``policy`` (an entry of :attr:`DesignSpec.missing`) is scored
    when missing."""
    return policy is not None and (policy["action"] == "as" or
                                   (policy["action"] == "item" and policy.get("seen", True)))


def refused_in_fit(counts: dict) -> DataError:
    """The error for missing values in variables fitted with ``"raise"``."""
    return DataError(f"missing values in the column(s) the formula uses: {counts} (column: count). "
                     "Pass missing=\"drop\" to fit on complete rows (reported in the summary), "
                     "missing=\"item\" to give \"x is missing\" its own points, missing={\"x\": \"as <value>\"} "
                     "to count it as a value, or impute them first.")


def refused(name: str, counts: dict, policies: dict) -> DataError:
    """The error for missing values in variables whose fitted policy (``policies``, as
    :attr:`DesignSpec.missing`) does not score them."""
    said = []
    for v in counts:
        p = policies.get(v) or {"action": "raise"}
        said.append(f"`{v}` had no missing values in training, so the score has no points for them"
                    if p["action"] == "item" else f"`{v}` was fitted with missing=\"{p['action']}\"")
    return DataError(f"`{name}` has missing values in {counts} (column: count), which this score cannot score "
                     f"({'; '.join(said)}). Fill them in, drop those rows, or refit with missing=\"item\" or "
                     "\"as <value>\" for those variables.")


def fit_wide(missing) -> str:
    """The fit-wide choice of a ``missing=`` setting (a dict's ``"."`` entry; ``"raise"`` if none)."""
    choice = missing.get(".", "raise") if isinstance(missing, dict) else missing
    return parse_choice(choice)[0]


def dropped_variables(spec, missing, reads) -> list:
    """Of the data columns ``reads``, those whose missing values left a row out of the fit of a
    design ``spec`` fitted with the ``missing=`` setting ``missing`` (the outcome's under a fit-wide
    ``"drop"``)."""
    outcome = set(spec.lhs_variables()) if fit_wide(missing) == "drop" else set()
    return [v for v in reads if v in outcome or (spec.missing.get(v) or {}).get("action") == "drop"]


def missing_rows(frame: pd.DataFrame, items) -> np.ndarray | None:
    """Rows where any of the ``items`` variables is missing (None when there are none)."""
    if not items:
        return None
    rows = frame[list(items)].isna().any(axis=1).to_numpy()
    return rows if rows.any() else None


def zero_missing(X: np.ndarray, rows: np.ndarray) -> None:
    """Set the undefined values of ``X`` on ``rows`` (where an item variable is missing) to 0: a missing
    value adds nothing through the columns that read it (its missing item scores it)."""
    sub = X[rows]
    bad = np.isnan(sub)
    if bad.any():
        sub[bad] = 0.0
        X[rows] = sub
