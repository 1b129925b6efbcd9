"""``threshold(.)``: a threshold of every numeric predictor, written out before the formula is read.

``y ~ threshold(.) + C(sex)`` becomes ``y ~ threshold(age) + threshold(bmi) + male + C(sex)`` for
data with numeric ``age`` and ``bmi`` and a 0/1 ``male``: the columns ``.`` covers, numeric ones
with more than two distinct values thresholded, the others as plain terms.
"""

from __future__ import annotations

import keyword
import re

import pandas as pd
from formulaic import Formula
from formulaic.errors import FormulaicError

from ..errors import FormulaError, unreadable_formula

_DOT = re.compile(r"(?<![\w.])threshold\(\s*\.\s*(?=[,)])")
#: ``threshold(Q("age years")`` or ``cut(Q('age years')``: a quoted name as the first argument
_QUOTED_ARG = re.compile(r"""(?<![\w.])(threshold|cut)\(\s*Q\(\s*(['"])([^`'"]*?)\2\s*\)""")


def _quoted(name: str, inside_call: bool = False) -> str:
    """A column name as formula text: as it is when it is a Python name, else in backticks.

    A name that formulaic cannot read back as that one name is refused, never written: a backtick
    would end the quoted name (and let the rest of it be read as formula text or code), and inside
    a function call such as ``threshold()`` (``inside_call``), which formulaic evaluates as Python,
    a quote starts a string and a Python keyword is a syntax error."""
    if "`" in name:
        raise FormulaError(f"the column {name!r} has a backtick (`) in its name, which a formula cannot quote. "
                           f"Rename it, e.g. data.rename(columns={{{name!r}: {name.replace('`', '')!r}}}), or "
                           "name the columns you want instead of `.`.")
    if inside_call and (keyword.iskeyword(name) or "'" in name or '"' in name):
        clean = name.replace("'", "").replace('"', "").replace(" ", "_")
        clean = clean + "_" if keyword.iskeyword(clean) else clean
        what = "is a Python keyword" if keyword.iskeyword(name) else "has a quote in its name"
        raise FormulaError(f"the column {name!r} {what}, which formulaic cannot read inside threshold(). "
                           f"Rename it, e.g. data.rename(columns={{{name!r}: {clean!r}}}), or leave it out of "
                           f"`threshold(.)` with `- `{name}``.")
    return name if name.isidentifier() and not keyword.iskeyword(name) else f"`{name}`"


def _thresholdable(s: pd.Series) -> bool:
    """Numeric with more than two distinct values: binary (0/1, two-valued, boolean) and
    categorical columns are items as they are."""
    return (pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
            and s.nunique(dropna=True) > 2)


def _closing(text: str, start: int) -> int:
    """Index of the parenthesis closing the one opened just before ``start``."""
    depth, quoted = 0, False
    for i in range(start, len(text)):
        if text[i] == "`":  # a backtick-quoted name may hold parentheses: `dose (mg)`
            quoted = not quoted
        elif quoted:
            continue
        elif text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            if depth == 0:
                return i
            depth -= 1
    raise FormulaError(f"`threshold(.` is not closed in {text!r}.")


def formula_variables(formula: str, columns: list, shown: str | None = None) -> tuple[list, set]:
    """(variables the rhs's ``.`` brings in as plain terms, variables the rhs requires), by formulaic.
    ``shown``: the formula as the user wrote it, for the error when it cannot be read."""
    try:
        f = Formula.from_spec(formula, context={"__formulaic_variables_available__": columns})
    except (FormulaicError, SyntaxError) as e:  # SyntaxError: Python code in a term, e.g. an unclosed quote
        raise unreadable_formula(shown or formula, e) from None
    lone = [t.factors[0].expr for t in f.rhs if len(t.factors) == 1
            and t.factors[0].eval_method.value == "lookup"]
    return lone, set(f.rhs.required_variables)


def expand_threshold_dot(lhs: str, rhs: str, data: pd.DataFrame, formula: str | None = None) -> str:
    """``rhs`` with ``threshold(.)`` written out for ``data``, and ``Q("name")`` as the variable of
    ``threshold()`` or ``cut()`` written ```name```; other formulas unchanged.  ``formula``: the
    formula as the user wrote it, named in errors.

    ``threshold(.)`` covers the columns ``.`` would (every column except the outcome and the
    variables the formula names elsewhere; ``- x`` removes ``x``): each numeric column with more
    than two distinct values becomes ``threshold(column, <arguments>)``, and binary and
    categorical columns stay plain terms.  ``threshold(., k=2, grid=10)`` passes the arguments
    on to every threshold.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": [0, 1, 0, 1], "age": [30, 41, 52, 63], "male": [0, 1, 1, 0],
    ...                    "bmi": [21.0, 25.5, 30.2, 27.9]})
    >>> expand_threshold_dot("y", "threshold(., grid=10) - bmi", df)
    'threshold(age, grid=10) + male - bmi'
    """
    # formulaic evaluates Q() without its data when Q() is the argument of a stateful transform
    # such as threshold(), so the quoted name is written in backticks, which it reads everywhere
    rhs = _QUOTED_ARG.sub(lambda m: f"{m[1]}(`{m[3]}`", rhs)
    hits = list(_DOT.finditer(rhs))
    if not hits:
        return rhs
    if len(hits) > 1:
        raise FormulaError(f"`threshold(.)` appears {len(hits)} times in {rhs!r}; write it once "
                           "(its arguments apply to every column it covers).")
    start, dot_end = hits[0].start(), hits[0].end()
    end = _closing(rhs, dot_end) + 1
    args = rhs[dot_end:end - 1].strip()  # "" or ", k=2"
    before, after = rhs[:start].rstrip(), rhs[end:].lstrip()
    depth = sum(rhs[:start].count(c) for c in "([{") - sum(rhs[:start].count(c) for c in ")]}")
    if depth or (before and before[-1] != "+") or (after and after[0] not in "+-"):
        raise FormulaError(f"`threshold(.)` must be a term of its own, joined to the others with + or -, "
                           f"e.g. 'y ~ threshold(.) + C(sex)'; got {rhs!r}. It cannot be part of an "
                           "interaction or a function call.")
    columns = [c for c in data.columns if isinstance(c, str)]
    dot_terms, _ = formula_variables(f"{lhs} ~ {rhs[:start]}.{rhs[end:]}", columns, formula)
    _, named = formula_variables(f"{lhs} ~ {rhs[:start]}1{rhs[end:]}", columns, formula)
    dot = set(dot_terms) - named
    covered = [c for c in columns if c in dot]
    if not covered:
        raise FormulaError(f"`threshold(.)` covers no columns: every column of `data` is the outcome or "
                           f"is already named in the formula {rhs!r}.")
    numeric = [c for c in covered if _thresholdable(data[c])]
    if not numeric:
        raise FormulaError(f"`threshold(.)` has nothing to threshold: none of the columns it covers "
                           f"({covered[:10]}{'...' if len(covered) > 10 else ''}) is numeric with more than "
                           "two distinct values (binary and categorical columns enter as they are). "
                           "Write '.' instead, or threshold a numeric column by name.")
    terms = [f"threshold({_quoted(c, inside_call=True)}{args})" if c in numeric else _quoted(c) for c in covered]
    return f"{rhs[:start]}{' + '.join(terms)}{rhs[end:]}"
