"""Griffe extension for the API reference: two habits of riskformula's docstrings that read well
in ``help()`` but not on a Markdown page are rewritten on the page (the docstrings stay as they are).

1. Cross-references are reST roles (``:func:`risk_score```, ``:class:`~riskformula.card.ScoreCard```),
   which Markdown would print literally: each becomes inline code naming the object as Sphinx would
   (``~`` keeps the last component).
2. Many parameters are written ``name : what it is`` — a description where numpydoc puts a type —
   which the numpy parser would show in the Type column, cut off at the line's end. In the
   Parameters, Other Parameters and Attributes sections, text after `` : `` that does not look like
   a type (``int``, ``str or None``, ``RiskScore``, ``pd.DataFrame, optional``, ``int, default 3``)
   moves to the description.
3. Names documented together (``max_size, min_size : ...``) get one entry each, so that each shows
   its own default from the signature (griffe gives them all the first one's).
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|obj|exc):`(~?)([^`]+)`")
SECTIONS = {"parameters", "other parameters", "attributes"}
BUILTIN = {"int", "str", "float", "bool", "dict", "list", "tuple", "set", "callable", "object", "None",
           "bytes", "iterable", "sequence", "mapping", "array-like", "path-like", "self"}
NAME = r"(?:[A-Za-z_][\w.\-]*(?:\[[^\]]*\])?)"
TYPE = re.compile(rf"^{NAME}(?:\s+(?:or|of)\s+{NAME})*(?:\s*,\s*(?:optional|default\b.*))?$")


def _role(match: re.Match) -> str:
    tilde, target = match.groups()
    name = target.rsplit(".", 1)[-1] if tilde else target
    return f"`{name}`"


def looks_like_type(text: str) -> bool:
    """Whether the text after ``name :`` is a numpydoc type rather than a description."""
    text = text.strip()
    if re.fullmatch(r"\{[^}]*\}(?:\s*,\s*(?:optional|default\b.*))?", text):   # {"a", "b"}, default "a"
        return True
    if "`" in text or not TYPE.match(text):
        return False
    first = re.split(r"[\s,\[]", text, maxsplit=1)[0]
    return first in BUILTIN or first[0].isupper() or "." in first


def _items(lines: list[str]) -> list[tuple[list[str], str, list[str]]]:
    """A section's items: (names, text after the colon, description lines)."""
    items, i = [], 0
    while i < len(lines):
        header = lines[i]
        while header.rstrip().endswith(",") and i + 1 < len(lines) and lines[i + 1][:1].strip():
            i += 1                                   # names continued on the next line
            header = header.rstrip() + " " + lines[i].strip()
        names, _, text = header.partition(" :")
        if not _ and header.rstrip().endswith(":"):
            names, text = header.rstrip()[:-1], ""
        desc = []
        while i + 1 < len(lines) and (not lines[i + 1].strip() or lines[i + 1].startswith(" ")):
            i += 1
            desc.append(lines[i])
        items.append(([n.strip() for n in names.split(",") if n.strip()], text.strip(), desc))
        i += 1
    return items


def _render(names: list[str], text: str, desc: list[str]) -> list[str]:
    trailing = []
    while desc and not desc[-1].strip():
        trailing.insert(0, desc.pop())
    out = []
    for k, name in enumerate(names):                 # one entry per name: each gets its own default
        if k and len(names) > 2:                     # a long list: the description once, on the first
            out += [f"{name} : {text}" if text and looks_like_type(text) else name, f"    See ``{names[0]}``."]
        elif not text or looks_like_type(text):
            out.append(f"{name} : {text}" if text else name)
            out += desc
        else:
            out += [name, "    " + text] + desc
    return out + trailing


def move_descriptions(doc: str) -> str:
    lines = doc.split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if (line.strip().lower() in SECTIONS and not line.startswith(" ") and i < len(lines)
                and re.fullmatch(r"-{3,}", lines[i].strip())):
            out.append(lines[i])
            i += 1
            body = []
            # the section runs to the next header (a line followed by dashes) or the end
            while i < len(lines) and not (i + 1 < len(lines) and lines[i].strip() and not lines[i].startswith(" ")
                                          and re.fullmatch(r"-{3,}", lines[i + 1].strip())):
                body.append(lines[i])
                i += 1
            lead = []
            while body and not body[0].strip():
                lead.append(body.pop(0))
            out += lead
            for names, text, desc in _items(body):
                out += _render(names, text, desc)
    return "\n".join(out)


class RiskformulaDocstrings(griffe.Extension):
    """Rewrite reST roles as inline code, and parameter entries as numpydoc expects them."""

    def on_instance(self, *, node, obj: griffe.Object, agent, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = move_descriptions(ROLE.sub(_role, obj.docstring.value))
