"""Reading a parsed Tantivy query's Debug form (``repr`` of a ``tantivy.Query``).

tantivy-py shows a parsed query only as Rust's ``{:?}`` text. The checks made
after parsing read two kinds of clause from it:

- :func:`exists_fields`: the fields of ``f:*`` clauses (``ExistsQuery``), which
  Tantivy answers from the field's fast column only;
- :func:`string_terms`: string terms with their field ordinals, as exact fields
  print them (``Term(field=N, type=Str, "...")``) and JSON fields
  (``Term(field=N, type=Json, path=p, type=Str, "...")``), term sets included.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["debug_text", "exists_fields", "string_terms"]

_EXISTS = re.compile(r'ExistsQuery \{ field_name: "((?:[^"\\]|\\.)*)"')
_STR_TERM = re.compile(
    r'Term\(field=(\d+), type=(?:Str|Json, path=[^,]*, type=Str), "([^"\\]*(?:\\.[^"\\]*)*)"'
)
_DEBUG_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]+\}|.)", re.DOTALL)
_DEBUG_CHARS = {"n": "\n", "r": "\r", "t": "\t", "0": "\0"}


def exists_fields(shape: str) -> Iterator[str]:
    """The field names (JSON paths included, as printed) of the ``f:*`` clauses."""
    for found in _EXISTS.finditer(shape):
        yield found.group(1)


def string_terms(shape: str) -> Iterator[tuple[int, str]]:
    """Each string term's field ordinal and text, in the order printed."""
    for found in _STR_TERM.finditer(shape):
        yield int(found.group(1)), debug_text(found.group(2))


def debug_text(escaped: str) -> str:
    """The string a Rust ``{:?}`` rendering of a ``str`` spells (quotes removed)."""

    def one(found: re.Match[str]) -> str:
        code = found.group(1)
        if code.startswith("u{"):
            return chr(int(code[2:-1], 16))
        return _DEBUG_CHARS.get(code, code)

    return _DEBUG_ESCAPE.sub(one, escaped)
