"""One rule for naming terms: ``coef_range``, ``initial``, constraints and side-information profiles.

A name may be, in this order of precedence:

1. a design column (``"C(sex)[T.male]"``), its label as the card prints it (``"sex = male"``) or a
   formula term (``"C(sex)"``: all its columns);
2. the variable of a ``threshold()``/``cut()`` term (``"age"`` for ``threshold(age)``);
3. the variable inside another function-call term (``"sex"`` for ``C(sex)``).

A name covering several columns (a factor's levels, a threshold's cuts) means all of them.

Examples
--------
>>> import pandas as pd, riskformula as rf
>>> from riskformula.design import build_design
>>> df = pd.DataFrame({"y": [0, 1, 0, 1], "sex": ["f", "m", "m", "f"], "age": [30, 41, 52, 63]})
>>> terms = build_design("y ~ C(sex) + age", df).spec.terms
>>> terms.columns("sex"), terms.columns("sex = m"), terms.columns("C(sex)"), terms.columns("age")
([0], [0], [0], [1])
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import SettingsError
from ..thresholds import first_argument

#: how many valid names an error message lists
_SHOWN = 20


class TermResolver:
    """Names → design columns (0-based) of one :class:`~riskformula.design.spec.DesignSpec`."""

    def __init__(self, spec):
        self._spec = spec
        self.n_columns = len(spec.columns)

    # --- names ----------------------------------------------------------------------------
    def columns(self, name: str, where: str = "a constraint") -> list[int]:
        """Design columns named by ``name`` (see the module docstring); ``where`` names the
        argument in the error raised for an unknown name."""
        s = self._spec
        hits = [j for j in range(self.n_columns) if name in (s.columns[j], s.labels[j], s.column_terms[j])]
        if not hits:
            hits = [j for t in s.thresholds if name == t.variable for j in t.columns]
        if not hits:
            hits = [j for j, t in enumerate(s.column_terms) if t and "(" in t and first_argument(t) == name]
        if not hits:
            raise SettingsError(self._unknown(name, where))
        return hits

    def column(self, name: str, where: str) -> int:
        """The one design column named by ``name``; an error if it names several."""
        cols = self.columns(name, where)
        if len(cols) > 1:
            shown = [self._spec.columns[j] for j in cols[:5]]
            raise SettingsError(f"{where} names {name!r}, which covers {len(cols)} design columns {shown}"
                                f"{'...' if len(cols) > 5 else ''}; name one column, e.g. {shown[0]!r}.")
        return cols[0]

    def names(self) -> list[str]:
        """Valid names: formula terms, design columns, then the variables inside terms."""
        s = self._spec
        terms = [t for t in s.column_terms if t]
        variables = [t.variable for t in s.thresholds] + [first_argument(t) for t in terms if "(" in t]
        return list(dict.fromkeys(terms + list(s.columns) + variables))

    def _unknown(self, name: str, where: str) -> str:
        valid = self.names()
        more = f" and {len(valid) - _SHOWN} more" if len(valid) > _SHOWN else ""
        return (f"{where} names {name!r}, which is not a term of the formula, not a column or label of its "
                f"design and not a variable in it; valid names are {valid[:_SHOWN]}{more} "
                "(or a column's label as the score card prints it).")

    def multi_column_terms(self) -> list[str]:
        """Formula terms that span several design columns (a factor's levels, a threshold's cuts)."""
        by_term: dict = {}
        for j, t in enumerate(self._spec.column_terms):
            by_term.setdefault(t if t is not None else self._spec.columns[j], []).append(j)
        return [t for t, cols in by_term.items() if len(cols) > 1]

    def variable_columns(self) -> dict:
        """Data variable -> the design columns that read it (a column of an expression the formula
        computes reads its term, named as such)."""
        s = self._spec
        out: dict = {}
        for j in range(self.n_columns):
            rule = s.rules[j] if s.rules else None
            names = rule.variables() if rule is not None and rule.kind != "expression" else []
            for v in names or [s.column_terms[j] or s.columns[j]]:
                out.setdefault(v, []).append(j)
        return out

    # --- column facts ---------------------------------------------------------------------
    def direction(self, j: int) -> int:
        """+1 if design column ``j`` rises with its variable, −1 if it falls (a threshold's
        ``1[x ≤ c]``): what "risk rises with the variable" means for its points."""
        return -1 if any(j in t.columns for t in self._spec.thresholds) else 1

    def profile(self, when: dict, where: str = "a constraint", owner: str = "the profile") -> np.ndarray:
        """Design row of a side-information profile (``when`` of ``risk_at_least``/``risk_at_most``).

        A key takes, by what it names:

        * a ``threshold()``/``cut()`` term or its variable: the variable's value (a number);
        * a factor term or its variable (``"C(sex)"``, ``"sex"``): a level (the reference needs
          no entry);
        * a design column or its label (``"C(sex)[T.m]"``, ``"sex = m"``, ``"age"``): the
          column's value;
        * the variable of any other function-call term (``"x"`` for ``np.log(x)``) is refused:
          its column is not the variable's value, so the term's name must be given instead.

        Left out: a plain column is 0 (a numeric variable at 0, an indicator off) and a factor is at
        its reference level.  A threshold term has no such neutral value (all its indicators off
        means "above every cut", not 0), so a profile that leaves one out is refused.  Errors
        name ``owner`` (the constraint); an unknown name is reported with ``where`` like every
        other argument that names terms."""
        s = self._spec
        x = np.zeros(self.n_columns)
        covered: set = set()
        for key, value in when.items():
            ths = [t for t in s.thresholds if key in (t.variable, t.term)]
            for t in ths:
                v = self._number(owner, key, value, f"a value of {t.variable!r} (the variable of {t.term!r})")
                x[list(t.columns)] = (v <= np.asarray(t.cuts)).astype(float)
                covered.update(t.columns)
            direct = [j for j in range(self.n_columns) if key in (s.columns[j], s.labels[j])]
            if ths and not direct:
                continue
            cols = direct or self.columns(key, where)
            term = s.column_terms[cols[0]]
            covered.update(cols)
            if direct:  # a column (or its label) takes the column's value
                x[cols[0]] = self._number(owner, key, value, f"a value of {key!r}")
                continue
            levels = self._factor_levels(term)
            if not levels:
                if key != term:  # the variable inside another function-call term (np.log(x), I(x/10), ...)
                    raise SettingsError(
                        f"{owner}: `when` names {key!r}, the variable of the term {term!r}, whose column is "
                        f"not {key!r} itself; give the term's own value instead, e.g. {{{term!r}: <value of "
                        f"{term}>}}.")
                if len(cols) > 1:
                    raise SettingsError(f"{owner}: `when` names {key!r}, which covers {len(cols)} design columns; "
                                        f"give each column's value by its name, e.g. {s.columns[cols[0]]!r}.")
                x[cols[0]] = self._number(owner, key, value, f"the value of {key!r}")
                continue
            # a factor (one column per non-reference level) takes a level
            level = self._level(levels, value)
            if level is None and len(cols) == 1 and value in (0, 1) and not isinstance(value, str) \
                    and not any(_is_number(lv) for lv in levels):
                x[cols[0]] = float(value)  # a two-level factor's one indicator, on (1) or off (0)
                continue
            hit = [j for j in cols if level is not None and
                   (s.labels[j].endswith(f"= {level}") or f"[T.{level}]" in s.columns[j])]
            if hit:
                x[hit[0]] = 1.0
            elif level is None:
                shown = [s.labels[j].split("= ", 1)[-1] for j in cols]
                raise SettingsError(f"{owner}: `when={{{key!r}: {value!r}}}`: {value!r} is not a level of {key!r} "
                                    f"with its own points; its levels (besides the reference) are {shown}. The "
                                    f"reference level needs no entry.")
        missing = [t for t in s.thresholds if not set(t.columns) <= covered]
        if missing:
            t = missing[0]
            raise SettingsError(
                f"{owner}: the profile gives no value for {t.variable!r} ({t.term}). A threshold term has no "
                f"neutral value (left out, its indicators would all be off, i.e. {t.variable} above every cut, "
                f"not {t.variable} = 0), so name one, e.g. when={{..., {t.variable!r}: "
                f"{float(np.median(t.cuts)):.6g}}}.")
        return x

    @staticmethod
    def _number(owner: str, key: str, value, what: str) -> float:
        """``value`` as a finite float, or a SettingsError that names the constraint, key and value."""
        if isinstance(value, (str, bytes)) or not isinstance(value, (numbers.Real, np.number, np.bool_)) \
                or not math.isfinite(float(value)):
            raise SettingsError(f"{owner}: `when={{{key!r}: {value!r}}}` needs {what} as a finite number; "
                                f"got {value!r}.")
        return float(value)

    @staticmethod
    def _level(levels: set, value):
        """The level (as its string) that ``value`` names, or None: an exact string match, else a
        number equal to a numeric level (5 or 5.0 for level "5")."""
        if str(value) in levels:
            return str(value)
        if isinstance(value, (numbers.Real, np.number)) and not isinstance(value, bool):
            for lv in levels:
                if _is_number(lv) and float(lv) == float(value):
                    return lv
        return None

    def _factor_levels(self, term) -> set:
        """All levels of a factor term (including its reference level), as strings; empty for
        other terms."""
        if term is None:
            return set()
        s = self._spec
        variables = {s.rules[j].variable for j, t in enumerate(s.column_terms)
                     if t == term and s.rules and s.rules[j].kind == "level"}
        if len(variables) == 1 and next(iter(variables)) in s.categories:
            return {str(c) for c in s.categories[next(iter(variables))]}
        if s.model_spec is None:
            return set()
        state = s.model_spec.encoder_state.get(term)
        cats = state[1].get("categories", []) if state and len(state) > 1 and isinstance(state[1], dict) else []
        return {str(c) for c in cats}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
