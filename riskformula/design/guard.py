"""Formula text is data: the Python a formula's terms hold is checked before formulaic runs it.

formulaic evaluates a term such as ``np.log(x)``, ``I(x > 2)`` or ``threshold(age, k=2)`` as Python
code with ``eval``, where Python's builtins (``__import__``, ``open``, ``exec``) are in reach.  A
formula can come from a command line, a configuration file or a saved model document, and a
column name or level can end up inside formula text, so the package never lets formulaic evaluate
code it has not read first.  :func:`check_formula_code` parses every Python term of a formula as
formulaic will evaluate it (backtick-quoted names replaced as formulaic replaces them) and allows
only what a model formula needs:

* names of the data's columns, of the formula functions (``threshold``, ``cut``, formulaic's
  transforms such as ``C``, ``I``, ``log``, ``poly``) and of the caller's ``context=``, plus the
  pure builtins ``abs``, ``round``, ``min``, ``max``, ``int``, ``float``, ``bool`` and ``str``;
* pure methods and accessors of a column (``x.abs()``, ``x.dt.month``, ``x.str.len()``);
* ``np.<function>`` for numpy's ufuncs (``np.log``, ``np.sqrt``, ``np.minimum``, ...) and a few
  pure functions (``np.clip``, ``np.where``, ``np.round``, ...), and ``np.pi``/``np.e``/``np.nan``/
  ``np.inf``; attributes of a name in the caller's ``context=`` (never one starting with ``_``);
* literals (numbers, strings, lists, tuples, dicts) and operators (arithmetic, comparisons,
  ``and``/``or``/``not``, ``x if c else y``).

Anything else (a dunder name or attribute, a lambda, a comprehension, a subscript, an f-string,
an unknown name) is a :class:`~riskformula.errors.FormulaError` that names the term, before any
code runs.  A data column named like a function the formula calls (a column ``threshold`` in
``threshold(age)``) is refused too: formulaic would look the name up in the data first.

>>> check_formula_code("y ~ threshold(age, k=2) + np.log(bmi) + C(sex)", ["y", "age", "bmi", "sex"])
>>> check_formula_code("y ~ I(__import__('os').system('id'))", ["y"])
Traceback (most recent call last):
...
riskformula.errors.FormulaError: the term `I(__import__('os').system('id'))` uses the attribute `.system`, ...
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from collections.abc import Iterable, Mapping

import numpy as np
from formulaic import Formula
from formulaic.errors import FormulaicError
from formulaic.transforms import TRANSFORMS
from formulaic.utils.code import sanitize_variable_names

from ..errors import FormulaError

__all__ = ["check_formula_code", "check_term_code", "check_condition", "SAFE_BUILTINS"]

#: builtins a formula may call: pure functions of their arguments
SAFE_BUILTINS = frozenset({"abs", "round", "min", "max", "int", "float", "bool", "str"})
#: numpy functions a formula may call beside its ufuncs (pure, no files, no code)
_NUMPY_FUNCTIONS = frozenset({"clip", "where", "round", "around", "nan_to_num", "digitize", "floor_divide",
                              "abs", "absolute", "sign", "log", "exp", "sqrt", "isnan", "isfinite", "square"})
_NUMPY_CONSTANTS = frozenset({"pi", "e", "nan", "inf"})
#: pandas accessors of a column whose attributes a formula may read (``x.dt.month``)
_ACCESSORS = frozenset({"dt", "str", "cat"})
#: pure methods of a column a formula may call (none writes a file or takes code)
_SERIES_METHODS = frozenset({"abs", "clip", "round", "isna", "notna", "isnull", "notnull", "fillna", "astype",
                             "between", "isin", "rank", "eq", "ne", "lt", "le", "gt", "ge", "values"})
#: expression nodes a formula term may contain (Name, Attribute and Call are checked further)
_ALLOWED = (ast.Expression, ast.Name, ast.Load, ast.Attribute, ast.Call, ast.keyword, ast.Constant,
            ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Tuple, ast.List, ast.Dict,
            ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


def _numpy_attribute(name: str) -> bool:
    if name.startswith("_"):
        return False
    if name in _NUMPY_CONSTANTS or name in _NUMPY_FUNCTIONS:
        return True
    return isinstance(getattr(np, name, None), np.ufunc)


def _refuse(term: str, what: str, how: str = "") -> FormulaError:
    return FormulaError(f"the term `{term}` uses {what}, which a formula may not use: a formula's terms "
                        "name columns of the data and call formula functions (threshold, cut, C, I, log, "
                        f"np.sqrt, ...) on them, and run no other code.{how}")


def check_term_code(term: str, columns: Iterable, context: Mapping | None = None) -> None:
    """Refuse the Python term ``term`` (as formulaic evaluates it) unless it only names
    ``columns``, formula functions and the names of ``context`` (see the module's docstring)."""
    context = dict(context or {})
    columns = {str(c) for c in columns}
    aliases: dict[str, str] = {}
    _no_quoted_keyword(term)
    try:
        code = sanitize_variable_names(term, {}, aliases)
        tree = ast.parse(code, mode="eval")
    except (SyntaxError, ValueError):
        return  # formulaic fails on the same text as it parses it, before it runs any of it
    functions = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise _refuse(term, f"Python code ({type(node).__name__.lower()})")
        if isinstance(node, ast.Name):
            name = aliases.get(node.id, node.id)
            if name.startswith("__"):
                if name in columns:
                    raise FormulaError(f"the column `{name}` starts with two underscores, which Python reserves, so "
                                       f"the term `{term}` cannot name it inside a function call (bare, `{name}` "
                                       f"works). Rename the column, e.g. data.rename(columns={{{name!r}: "
                                       f"{name.lstrip('_') or 'x'!r}}}).")
                raise _refuse(term, f"`{name}`")
            if id(node) in functions:
                if name in columns:
                    raise FormulaError(f"`data` has a column named `{name}`, the name of a function the term "
                                       f"`{term}` calls, so the formula cannot tell them apart. Rename the column "
                                       f"(e.g. data.rename(columns={{{name!r}: {name + '_'!r}}})).")
                if (hasattr(builtins, name) and name not in context and name not in TRANSFORMS
                        and name not in SAFE_BUILTINS):
                    raise _refuse(term, f"the function `{name}`",
                                  " Pass your own functions with context={'name': function}.")
                # an unknown function: formulaic's NameError becomes "not a function it knows"
            elif name not in columns and name not in context and name not in TRANSFORMS:
                if hasattr(builtins, name):
                    raise _refuse(term, f"`{name}`")
                # an unknown name: formulaic says which column is missing, with our did-you-mean
        elif isinstance(node, ast.Attribute):
            _check_attribute(node, term, columns, context, aliases)


def _no_quoted_keyword(text: str) -> None:
    """Refuse a backtick-quoted Python keyword inside a call (formulaic cannot read `class` there)."""
    for call in re.finditer(r"\w+\([^()]*`([^`]*)`", text):
        if keyword.iskeyword(call.group(1)):
            name = call.group(1)
            raise FormulaError(f"the column `{name}` is a Python keyword, which formulaic cannot read inside a "
                               f"function call such as `{call.group(0)})`. Rename the column, e.g. "
                               f"data.rename(columns={{{name!r}: {name + '_'!r}}}).")


def _check_attribute(node: ast.Attribute, term: str, columns: set, context: dict, aliases: dict) -> None:
    """An attribute chain ``owner.a.b``: numpy's math, a column's pure pandas methods and accessors
    (``x.dt.month``, ``x.str.len()``, ``x.abs()``), or anything of a name in ``context=``."""
    chain: list[str] = []
    owner: ast.AST = node
    while isinstance(owner, ast.Attribute):
        chain.insert(0, owner.attr)
        owner = owner.value
    shown = ".".join(chain)
    bad = next((a for a in chain if a.startswith("_")), None)
    if bad is not None or not isinstance(owner, ast.Name):
        raise _refuse(term, f"the attribute `.{bad or node.attr}`")
    name = aliases.get(owner.id, owner.id)
    if name in context or (name == "contr" and name in TRANSFORMS):
        return  # the caller's own module or object (context=); formulaic's contrasts
    if name in columns:
        if (len(chain) == 1 and chain[0] in _SERIES_METHODS) or (
                chain[0] in _ACCESSORS and len(chain) <= 2 and not any(a.startswith("to_") for a in chain)):
            return
        raise _refuse(term, f"`{name}.{shown}`",
                      " A column's pure methods and accessors are allowed (x.abs(), x.dt.month, x.str.len()).")
    if name == "np" and name not in columns and len(chain) == 1 and _numpy_attribute(chain[0]):
        return
    raise _refuse(term, f"`{name}.{shown}`", " numpy's math functions are allowed (np.log, np.sqrt, np.clip, ...).")


def refuse_empty_name(formula: str) -> None:
    """Refuse a formula that quotes an empty column name (````: formulaic cannot read it, and would
    fail with an IndexError or drop the term)."""
    if isinstance(formula, str) and "``" in re.sub(r"'[^']*'|\"[^\"]*\"", "", formula):
        raise FormulaError("the formula names a column with an empty name (``), which formulaic cannot read. Give "
                           "the column a name, e.g. data.rename(columns={'': 'x'}).")


def check_formula_code(formula: str, columns: Iterable, context: Mapping | None = None) -> None:
    """Check every Python term of ``formula`` with :func:`check_term_code` before formulaic
    evaluates it (parsing a formula runs no code; evaluating its terms does)."""
    columns = list(columns)
    refuse_empty_name(formula)
    try:
        parsed = Formula.from_spec(formula, context={"__formulaic_variables_available__": [str(c) for c in columns]})
    except (FormulaicError, SyntaxError):
        _no_quoted_keyword(formula)  # the likely cause: formulaic cannot read `class` inside a call
        return  # formulaic fails on the same text (and says where) before it evaluates a term
    sides = [parsed.lhs, parsed.rhs] if hasattr(parsed, "lhs") else [parsed]
    for side in sides:
        for term in side:
            for factor in term.factors:
                if factor.eval_method.value == "python":
                    check_term_code(factor.expr, columns, context)


#: what a row condition (``subset="age >= 18 and ward != 'icu'"``) may hold: names of columns,
#: literals, comparisons, boolean and arithmetic operators — no call, attribute or subscript
_CONDITION_NODES = (ast.Expression, ast.Name, ast.Load, ast.Constant, ast.List, ast.Tuple, ast.BoolOp, ast.And,
                    ast.Or, ast.UnaryOp, ast.Not, ast.Invert, ast.USub, ast.UAdd, ast.BinOp, ast.Add, ast.Sub,
                    ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr, ast.BitXor,
                    ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn)


def check_condition(text: str, columns: Iterable) -> None:
    """Refuse a row condition for :meth:`pandas.DataFrame.query` (``subset=`` of
    :func:`~riskformula.risk_score`) unless it only compares and combines the data's ``columns``
    (bare, or quoted in backticks as pandas quotes them) and literals: no ``@`` (pandas' reach into
    the caller's variables), no call, attribute, subscript or other Python, so that pandas
    evaluates nothing but the columns' values.  One :class:`~riskformula.errors.FormulaError`
    that says what is not allowed."""
    columns = {str(c) for c in columns}
    how = (" A condition compares columns with values, e.g. subset=\"age >= 18 and ward != 'icu'\" "
           "(names with spaces in backticks); for anything else pass a boolean mask, e.g. "
           "subset=data['name'].str.startswith('A').")
    # backtick-quoted names (outside string literals) become plain identifiers mapped back to them; '@' is refused
    out: list[str] = []
    names: dict[str, str] = {}
    i, quote = 0, None
    while i < len(text):
        ch = text[i]
        if quote:
            out.append(ch)
            if ch == "\\" and i + 1 < len(text):
                out.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        elif ch == "`":
            end = text.find("`", i + 1)
            if end < 0:
                raise FormulaError(f"`subset={text!r}` has an opening backtick without its closing one.{how}")
            key = f"_rf_quoted_{len(names)}"
            names[key] = text[i + 1:end]
            out.append(f" {key} ")
            i = end
        elif ch == "@":
            raise FormulaError(f"`subset={text!r}` uses `@`, which reads the caller's variables; a condition may "
                               f"only name columns of the data.{how}")
        else:
            out.append(ch)
        i += 1
    try:
        tree = ast.parse("".join(out).strip(), mode="eval")
    except SyntaxError:
        raise FormulaError(f"`subset={text!r}` is not a condition pandas can read.{how}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _CONDITION_NODES):
            kind = {ast.Call: "a function call", ast.Attribute: "an attribute",
                    ast.Subscript: "a subscript"}.get(type(node), f"Python code ({type(node).__name__.lower()})")
            raise FormulaError(f"`subset={text!r}` uses {kind}, which a row condition may not use.{how}")
        if isinstance(node, ast.Name):
            name = names.get(node.id, node.id)
            if name not in columns:
                raise FormulaError(f"`subset={text!r}` names `{name}`, which is not a column of `data`.{how}")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str, bool, type(None))):
            raise FormulaError(f"`subset={text!r}` holds the literal {node.value!r}.{how}")
