"""How the score card names a design column (``sex = m``, ``age ≤ 60``, ``bmi missing``).

A declarative column's label is built from its rule (:mod:`riskformula.design.rules`) alone — the
variable, the level, the cut — so that a label always says what the column computes: a fitted
design and a loaded document label their columns with the same function, and a saved document's
labels are rebuilt, never read.  A column only formulaic computes (an expression) is labelled from
its name as formulaic wrote it (``C(x, ...)[T.a]`` reads ``x = a``); a cut of an expression reads
``np.log(x) ≤ 1.5``.
"""

from __future__ import annotations

import re

from .missing import missing_label

__all__ = ["rule_label", "design_labels", "readable"]


def readable(column: str) -> str:
    """``C(sex)[T.male]`` -> ``sex = male``; ``smoker[T.True]`` -> ``smoker``."""
    m = re.match(r"^(?:C\()?([^\[\(\),]+?)(?:,[^\[]*)?\)?\[T\.(.*)\]$", column)
    if not m:
        return column
    var, level = m.group(1).strip(), m.group(2)
    return var if level == "True" else f"{var} = {level}"


def rule_label(rule) -> str:
    """The label of a declarative rule: ``x ≤ 1.5``, ``x = a`` (``x`` for the level True), ``x``,
    ``x missing``, and a product's parts joined by ``:`` (``sex = f:age``)."""
    if rule.kind == "le":
        return f"{rule.variable} ≤ {float(rule.value):.6g}"
    if rule.kind == "level":
        text = str(rule.value)  # as formulaic writes a level in a column name ([T.2.5], [T.True])
        return rule.variable if text == "True" else f"{rule.variable} = {text}"
    if rule.kind == "linear":
        return rule.variable
    if rule.kind == "missing":
        return missing_label(rule.variable)
    if rule.kind == "product":
        return ":".join(rule_label(p) for p in rule.parts)
    raise ValueError(f"a {rule.kind} column has no label of its own")


def design_labels(columns, rules, thresholds) -> list:
    """The card's label of each design column: from its rule when it has one, else from its cut
    (a threshold of an expression) or its name."""
    cut_of = {j: (t.variable, c) for t in thresholds for j, c in zip(t.columns, t.cuts)}
    out = []
    for j, (name, rule) in enumerate(zip(columns, rules)):
        if rule.declarative:
            out.append(rule_label(rule))
        elif j in cut_of:
            out.append(f"{cut_of[j][0]} ≤ {float(cut_of[j][1]):.6g}")
        else:
            out.append(readable(name))
    return out
