"""tantivy4java's compact string indexing modes of ``INDEXING MODES``: which are built here.

Its grammar (``string_indexing.rs``, ``parse_tokenizer_override``): ``exact_only``,
``text_uuid_exactonly``, ``text_uuid_strip``, ``text_custom_exactonly:<regex>``,
``text_custom_strip:<regex>``. The two *strip* modes are built here: the column
is a ``default``-tokenized text field indexed from its value with every match
of the pattern (a dashed UUID, or the regex) replaced by a space, so a search
never finds a stripped token; rows are still read back whole from Parquet. The
manifest records the mode in ``string_indexing_modes`` as tantivy4java does
(``{"mode": "text_uuid_strip"}``, ``{"mode": "text_custom_strip", "regex": ...}``).
``exact_only`` and the ``*_exactonly`` modes index xxHash64 values in u64
fields, which only a query rewriter that hashes terms can search: they are
refused by name (and a split using them is refused at read time).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

from indextables.search.errors import CompanionError

__all__ = ["UUID_PATTERN", "StripMode", "field_type", "strip_column", "strip_modes"]

# tantivy4java's UUID_REGEX (dashed form only).
UUID_PATTERN = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_HASHED = {
    "exact_only": "it indexes the xxHash64 of each value in a u64 field",
    "text_uuid_exactonly": "it indexes the xxHash64 of each UUID in a '<column>__uuids' field",
    "text_custom_exactonly": "it indexes the xxHash64 of each match in a '<column>__uuids' field",
}


@dataclass(frozen=True, slots=True)
class StripMode:
    """A strip mode of one column.

    Attributes:
        mode: ``text_uuid_strip`` or ``text_custom_strip``.
        pattern: the regex whose matches are removed before indexing.
    """

    mode: str
    pattern: str

    def manifest_json(self) -> dict[str, str]:
        """The mode as tantivy4java's manifest records it."""
        if self.mode == "text_custom_strip":
            return {"mode": self.mode, "regex": self.pattern}
        return {"mode": self.mode}


def _parse(column: str, value: str) -> StripMode | None:
    """The strip mode ``value`` names (None for a plain field type).

    Raises:
        CompanionError: a hashed mode, or a custom regex that does not compile.
    """
    head, _, regex = value.partition(":")
    head = head.strip().lower()
    if head in _HASHED:
        raise CompanionError(
            f"INDEXING MODES {column!r}:{value!r}: {head} is not supported here: "
            f"{_HASHED[head]}, which only a query rewriter hashing search terms can "
            "search (not built); use 'string' or 'text_uuid_strip'/'text_custom_strip:<regex>'"
        )
    if head == "text_uuid_strip" and not regex:
        return StripMode(head, UUID_PATTERN)
    if head == "text_custom_strip":
        if not regex:
            raise CompanionError(
                f"INDEXING MODES {column!r}:{value!r}: text_custom_strip needs a regex "
                "(text_custom_strip:<regex>)"
            )
        try:
            re.compile(regex)
        except re.error as exc:
            raise CompanionError(
                f"INDEXING MODES {column!r}: the regex {regex!r} does not compile: {exc}"
            ) from None
        return StripMode(head, regex)
    return None


def field_type(column: str, value: str) -> str | None:
    """The field type an ``INDEXING MODES`` value gives ``column``: ``text`` for a strip
    mode, None for anything else (checked as a plain type by the caller).

    Raises:
        CompanionError: a hashed mode (named, with the reason) or a bad custom regex.
    """
    return "text" if _parse(column, value) is not None else None


def strip_modes(indexing_modes: Mapping[str, str]) -> dict[str, StripMode]:
    """The strip modes among ``INDEXING MODES``, by column."""
    found = {}
    for column, value in indexing_modes.items():
        mode = _parse(column, value)
        if mode is not None:
            found[column] = mode
    return found


def strip_column(column: pa.Array | pa.ChunkedArray, mode: StripMode) -> pa.Array:
    """``column`` (strings) with every match of the mode's pattern replaced by a space."""
    pattern = re.compile(mode.pattern)
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    values = [None if v is None else pattern.sub(" ", v) for v in column.to_pylist()]
    return pa.array(values, column.type)
