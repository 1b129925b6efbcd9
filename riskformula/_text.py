"""Names shown as text: :func:`visible` writes the characters that would change how text reads
(line breaks and other control characters, bidirectional overrides and isolates, lone surrogates)
as visible escapes (``\\n``, ``\\u202e``), so that a variable name or level taken from data or a
saved model prints on one line, in the order its characters are stored.  The reports, the SQL and
PMML comments and the command line show names through it."""

from __future__ import annotations

import re

__all__ = ["visible"]

#: C0 and C1 controls, DEL, the Arabic letter mark, the left-to-right and right-to-left marks,
#: line and paragraph separators, bidirectional embeddings, overrides and isolates
#: (U+202A–U+202E, U+2066–U+2069) and lone surrogates (not text: they cannot be encoded)
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match) -> str:
    c = m.group(0)
    short = _SHORT.get(c)
    if short is not None:
        return short
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def visible(text) -> str:
    """``text`` with control, bidirectional-control and surrogate characters written as escapes.

    Examples
    --------
    >>> visible("sex\\n= f"), visible("abc\\u202edef"), visible("age")
    ('sex\\\\n= f', 'abc\\\\u202edef', 'age')
    """
    text = str(text)
    return _HIDDEN.sub(_escape, text) if _HIDDEN.search(text) else text
