"""``=`` / IN on a field inside a struct column -> a Tantivy query on the JSON field's path.

Struct columns are indexed as JSON fields: each string leaf is tokenized by
the field's tokenizer, each integer leaf is a JSON number. A row whose
``s.a`` equals the operand holds exactly the operand's tokens, in order, at
path ``a``; the query parser tokenizes a quoted operand with the same
tokenizer into that phrase (and a number-like operand into the number terms
too), so the parsed query matches a superset of the rows. Left to Spark:

- operands other than strings and integers (doubles: signed zero and NaN;
  dates and timestamps: the JSON form keeps milliseconds; booleans);
- strings with no token (``""``, punctuation, only words the tokenizer
  drops): the parser gives the empty query;
- strings holding a date (Tantivy indexes an RFC 3339 string in a JSON
  field as a date at second precision, not as text);
- strings longer than Tantivy's term limit (a raw tokenizer's one term
  would not be indexed);
- field names other than letters, digits and ``_`` (the query syntax would
  read them as operators or path separators).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

import tantivy

from indextables.search.query.conditions import Condition
from indextables.search.query.tantivyquery import MAX_TERM_BYTES
from indextables.search.schema.mapping import FieldKind, FieldSpec

__all__ = ["json_path_query"]

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DATE_LIKE: Final = re.compile(r"\d{4}-\d\d-\d\d")


def json_path_query(
    index: tantivy.Index, spec: FieldSpec, condition: Condition, *, positions: bool = True
) -> tantivy.Query | None:
    """A query matching a superset of the rows where ``column.path`` equals an operand.

    ``positions``: the field's postings hold positions. Without them an
    operand of several tokens (a phrase query, which would fail) is not pushed.
    """
    if spec.kind is not FieldKind.JSON or not spec.indexed or condition.op not in ("=", "in"):
        return None
    names = (spec.name, *condition.path)
    if not condition.path or not all(_NAME.fullmatch(n) for n in names):
        return None
    texts = [_operand_text(v) for v in condition.values]
    if not texts or any(t is None for t in texts):
        return None
    field = ".".join(names)
    queries: list[tantivy.Query] = []
    for text in texts:
        assert text is not None
        try:
            query = index.parse_query(f'{field}:"{_escape(text)}"', [spec.name])
        except ValueError:
            return None
        shape = repr(query)
        if shape.startswith("Query(EmptyQuery"):
            return None  # no token: such a value would not be found either
        if not positions and "PhraseQuery" in shape:
            return None
        queries.append(query)
    return _any_of(queries)


def _operand_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str) or _DATE_LIKE.search(value):
        return None
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return None
    return value if 0 < size <= MAX_TERM_BYTES else None


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _any_of(queries: Sequence[tantivy.Query]) -> tantivy.Query:
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries])
