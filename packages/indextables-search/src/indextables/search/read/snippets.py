"""Snippets: the best fragment of a text column's value for the query, matches marked.

``highlight=["message"]`` adds a string column ``_snippet_message`` to a search:
Tantivy's :class:`tantivy.SnippetGenerator` for the query and the field, the
fragment of at most ``snippet_chars`` characters with the most matched terms,
as ``to_html()`` renders it (matched terms in ``<b>...</b>``, the rest
HTML-escaped). A row whose value is null has a null snippet; a row the query's
terms do not reach in that field (it matched through another field) has ``""``.
The generator is built per split, from that split's term statistics.

A companion split stores no text: its values are read from the source's Parquet
and handed to the same generator (:meth:`Snippets.columns_from_text`), which
tokenizes them with the field's analyzer, so a companion's snippets are those a
split holding the same rows would give.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import tantivy

from indextables.search.errors import ArgumentError
from indextables.search.schema.mapping import FieldKind

__all__ = [
    "DEFAULT_SNIPPET_CHARS",
    "MAX_SNIPPET_CHARS",
    "Highlight",
    "Snippets",
    "parse_highlight",
    "snippet_name",
]

SNIPPET_PREFIX = "_snippet_"
# Tantivy's own default fragment length.
DEFAULT_SNIPPET_CHARS = 150
MAX_SNIPPET_CHARS = 1 << 20


@dataclass(frozen=True, slots=True)
class Highlight:
    """What a read highlights: text columns (as the schema names them) and the
    fragment length in characters."""

    columns: tuple[str, ...]
    max_chars: int = DEFAULT_SNIPPET_CHARS

    def fields(self) -> list[pa.Field]:
        """The snippet columns a highlighted read adds, in order."""
        return [pa.field(snippet_name(column), pa.string()) for column in self.columns]


def snippet_name(column: str) -> str:
    """The name of ``column``'s snippet column."""
    return f"{SNIPPET_PREFIX}{column}"


def parse_highlight(
    highlight: Any,
    snippet_chars: Any,
    *,
    schema: pa.Schema,
    fields: Mapping[str, Any],
    text_from_source: bool = False,
) -> Highlight | None:
    """The :class:`Highlight` of a search's ``highlight``/``snippet_chars`` arguments.

    ``text_from_source``: a companion index, whose text columns are read from the
    source's Parquet (an indexed text field need not be stored).

    Raises:
        ArgumentError: not a list of column names, an unknown column, one that is
            not a stored tokenized (``text``) column, a column named twice, a
            snippet column name the table already has, or a ``snippet_chars`` that
            is not an int from 1 to 1,048,576.
    """
    if snippet_chars is not None and (
        isinstance(snippet_chars, bool)
        or not isinstance(snippet_chars, int)
        or not 1 <= snippet_chars <= MAX_SNIPPET_CHARS
    ):
        raise ArgumentError(
            f"snippet_chars={snippet_chars!r} must be an int from 1 to {MAX_SNIPPET_CHARS}"
        )
    if highlight is None:
        return None
    if isinstance(highlight, str) or not isinstance(highlight, Sequence):
        raise ArgumentError(f"highlight={highlight!r} must be a list of text column names")
    by_name = {f.name.lower(): f for f in schema}
    columns: list[str] = []
    for name in highlight:
        arrow_field = by_name.get(name.lower()) if isinstance(name, str) else None
        if arrow_field is None:
            raise ArgumentError(
                f"highlight names {name!r}, which the table does not have "
                f"(columns: {', '.join(schema.names)})"
            )
        spec = fields.get(arrow_field.name.lower())
        if (
            spec is None
            or spec.kind is not FieldKind.TEXT
            or not (spec.stored or (text_from_source and spec.indexed))
        ):
            raise ArgumentError(
                f"highlight names {arrow_field.name!r}, which is not a stored text "
                "(tokenized) column: snippets come from a text field's stored value "
                "(spark.indextables.indexing.typemap.<column>=text)"
            )
        if arrow_field.name in columns:
            raise ArgumentError(f"highlight names {arrow_field.name!r} twice")
        if snippet_name(arrow_field.name).lower() in by_name:
            raise ArgumentError(
                f"highlight names {arrow_field.name!r}, whose snippet column "
                f"{snippet_name(arrow_field.name)!r} would shadow the table's own column"
            )
        columns.append(arrow_field.name)
    if not columns:
        return None
    return Highlight(tuple(columns), snippet_chars or DEFAULT_SNIPPET_CHARS)


class Snippets:
    """The snippet columns of one split's hits (one generator per column and split)."""

    def __init__(
        self,
        searcher: tantivy.Searcher,
        index: tantivy.Index,
        query: tantivy.Query,
        highlight: Highlight,
        names: Mapping[str, str],
    ) -> None:
        self._searcher = searcher
        self._highlight = highlight
        self._names = [names.get(c.lower(), c) for c in highlight.columns]
        self._generators = []
        for name in self._names:
            generator = tantivy.SnippetGenerator.create(searcher, query, index.schema, name)
            generator.set_max_num_chars(highlight.max_chars)
            self._generators.append(generator)

    @property
    def fields(self) -> list[pa.Field]:
        """The snippet columns' fields, in order."""
        return self._highlight.fields()

    def columns(self, addresses: Sequence[Any]) -> list[pa.Array]:
        """The snippet columns at ``addresses``, in the highlight's column order."""
        docs = [self._searcher.doc(address) for address in addresses]
        out = []
        for name, generator in zip(self._names, self._generators, strict=True):
            values = [
                None if doc.get_first(name) is None else generator.snippet_from_doc(doc).to_html()
                for doc in docs
            ]
            out.append(pa.array(values, pa.string()))
        return out

    def columns_from_text(self, texts: Sequence[pa.Array]) -> list[pa.Array]:
        """The snippet columns of rows whose text is given (one array per highlighted
        column, in order: a companion's values, read from the source's Parquet)."""
        out = []
        for name, generator, values in zip(self._names, self._generators, texts, strict=True):
            snippets: list[str | None] = []
            for value in values.to_pylist():
                if value is None:
                    snippets.append(None)
                    continue
                doc = tantivy.Document()
                doc.add_text(name, value)
                snippets.append(generator.snippet_from_doc(doc).to_html())
            out.append(pa.array(snippets, pa.string()))
        return out
