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

    # --- column facts ---------------------------------------------------------------------
    def direction(self, j: int) -> int:
        """+1 if design column ``j`` rises with its variable, −1 if it falls (a threshold's
        ``1[x ≤ c]``): what "risk rises with the variable" means for its points."""
        return -1 if any(j in t.columns for t in self._spec.thresholds) else 1

    def profile(self, when: dict, where: str = "a constraint") -> np.ndarray:
        """Design row of a side-information profile: a factor takes a level, a threshold term
        its variable's value, a column its value; columns not named are 0."""
        s = self._spec
        x = np.zeros(self.n_columns)
        for key, value in when.items():
            ths = [t for t in s.thresholds if key in (t.variable, t.term)]
            for t in ths:
                x[list(t.columns)] = (float(value) <= np.asarray(t.cuts)).astype(float)
            direct = [j for j in range(self.n_columns) if key in (s.columns[j], s.labels[j])]
            if ths and not direct:
                continue
            cols = direct or self.columns(key, where)
            levels = self._factor_levels(s.column_terms[cols[0]])
            if len(cols) == 1 and (direct or not levels or not isinstance(value, str)):
                x[cols[0]] = float(value)
                continue
            # a factor (one column per non-reference level) takes a level
            hit = [j for j in cols if s.labels[j].endswith(f"= {value}") or f"[T.{value}]" in s.columns[j]]
            if hit:
                x[hit[0]] = 1.0
            elif str(value) not in levels:
                levels = [s.labels[j].split("= ", 1)[-1] for j in cols]
                raise SettingsError(f"`when={{{key!r}: {value!r}}}`: {value!r} is not a level of {key!r} with its own "
                                    f"points; its levels (besides the reference) are {levels}. The reference level "
                                    f"needs no entry.")
        return x

    def _factor_levels(self, term) -> set:
        """All levels of a factor term (including its reference level), as strings; empty for
        other terms."""
        if term is None:
            return set()
        state = self._spec.model_spec.encoder_state.get(term)
        cats = state[1].get("categories", []) if state and len(state) > 1 and isinstance(state[1], dict) else []
        return {str(c) for c in cats}
