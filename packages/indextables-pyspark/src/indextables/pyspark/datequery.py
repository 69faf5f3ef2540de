"""Exact date terms in Tantivy query text.

Tantivy indexes date terms at second precision whatever the field's
precision, while range queries on a fast date field compare its fast values
(microseconds in splits this package writes). A term such as
``ts:"2024-01-01T00:00:00.5Z"`` would therefore match every row of that
second. :func:`exact_date_terms` rewrites each such term on a date field into
the one-instant range ``ts:[v TO v]``, which matches exactly.
"""

from __future__ import annotations

import re
from collections.abc import Collection

_TERM = re.compile(r'([A-Za-z_][\w.\-]*):"([^"\\]*)"')
_WORD = re.compile(r"[\w.\-]")
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)")


def exact_date_terms(text: str, date_fields: Collection[str]) -> str:
    """``text`` with every quoted RFC 3339 term on a field of ``date_fields`` made a range."""
    if not date_fields or '"' not in text:
        return text
    out: list[str] = []
    position, quoted = 0, False
    while position < len(text):
        char = text[position]
        if char == "\\":
            out.append(text[position : position + 2])
            position += 2
            continue
        match = None if quoted else _TERM.match(text, position)
        if match and _starts_word(text, position) and _is_date_term(match, date_fields):
            field, value = match.group(1), match.group(2)
            out.append(f"{field}:[{value} TO {value}]")
            position = match.end()
            continue
        if char == '"':
            quoted = not quoted
        out.append(char)
        position += 1
    return "".join(out)


def _starts_word(text: str, position: int) -> bool:
    return position == 0 or not _WORD.match(text[position - 1])


def _is_date_term(match: re.Match[str], date_fields: Collection[str]) -> bool:
    return match.group(1) in date_fields and _RFC3339.fullmatch(match.group(2)) is not None
