"""Tantivy's parse of query text, kept per (index schema, text, default fields, regexes).

A read builds its search once for validation and once per split, and the splits of one
table almost always share one schema: their rewritten query text is then parsed once,
not once per split (a regex or wildcard parse costs ~1 ms; its ``repr``, read by the
checks after parsing, ~0.3 ms). What the parse depends on is the key:

- the index's schema as Tantivy holds it (field names, ordinals, kinds and every
  option, the tokenizer names included), from ``index.schema``'s pickled form;
- the analyzers registered under those tokenizer names. Only indexes this package
  opened are cached (a split opened by the split reader, or a validation index),
  and they register the analyzers :func:`~indextables.search.schema.tokenizers.open_index`
  derives from the schema's own tokenizer names, so the schema decides them. Any other
  index (one whose analyzers could have been registered otherwise) is parsed every time;
- the text as it is handed to Tantivy (after every rewrite, split-dependent ones
  included), the default field names in order, and whether regexes are allowed.

A parse Tantivy refuses is not kept (the caller reports it). The entries are the
query (immutable, shared by the reads that hit it) and its Debug text (``repr``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import tantivy

from indextables.search.boundedcache import BoundedCache

__all__ = ["KEPT", "ParsedText", "clear", "parse_text", "tantivy_parse"]

#: Parsed queries kept per process (the least recently used is dropped past this).
KEPT = 256


@dataclass(frozen=True, slots=True)
class ParsedText:
    """One parse: the Tantivy query and its Debug text (``repr(query)``)."""

    query: tantivy.Query
    shape: str


def tantivy_parse(
    index: tantivy.Index, text: str, defaults: Sequence[str], regexes: bool
) -> tantivy.Query:
    """``index.parse_query`` (every parse of the search options goes through here).

    Raises:
        ValueError: Tantivy's refusal.
    """
    return index.parse_query(text, list(defaults), allow_regexes=regexes)


_PARSED: BoundedCache[tuple[str, str, tuple[str, ...], bool], ParsedText] = BoundedCache(
    max_entries=KEPT
)


def parse_text(
    index: tantivy.Index,
    text: str,
    defaults: Sequence[str],
    *,
    regexes: bool = False,
) -> ParsedText:
    """Tantivy's parse of ``text`` on ``index`` with its Debug text, kept for the next
    parse of the same text on an index of the same schema (module doc).

    Raises:
        ValueError: Tantivy's refusal (never kept).
    """
    schema = _schema_key(index) if opened_here(index) else None
    if schema is None:
        query = tantivy_parse(index, text, defaults, regexes)
        return ParsedText(query, repr(query))
    key = (schema, text, tuple(defaults), regexes)
    found = _PARSED.get(key)
    if found is None:
        query = tantivy_parse(index, text, defaults, regexes)
        found = ParsedText(query, repr(query))
        _PARSED.put(key, found)
    return found


def opened_here(index: tantivy.Index) -> bool:
    """Whether ``index`` is a split the split reader opened or a validation index."""
    from indextables.search.query.validationindex import is_validation_index
    from indextables.search.splits.nearterms import directory_of

    return directory_of(index) is not None or is_validation_index(index)


def _schema_key(index: tantivy.Index) -> str | None:
    """The schema of ``index`` as text (every field's name, kind and options, in ordinal
    order), or None when tantivy-py does not show it in the expected form."""
    try:
        reduced = index.schema.__reduce__()
    except Exception:
        return None
    if not isinstance(reduced, tuple) or len(reduced) != 2 or not isinstance(reduced[1], tuple):
        return None
    state = reduced[1][0] if reduced[1] else None
    if not isinstance(state, dict) or not isinstance(state.get("inner"), list):
        return None
    return repr(state["inner"])


def clear() -> None:
    """Forget every kept parse."""
    _PARSED.clear()
