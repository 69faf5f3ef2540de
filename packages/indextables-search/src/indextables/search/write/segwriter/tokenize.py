"""Tokens of Arrow string columns, exactly as the index's Tantivy analyzers make them.

The analyzers are the ones :mod:`indextables.search.schema.tokenizers` registers on
every index (the reference's):

* ``default`` and ``simple``: Tantivy's ``SimpleTokenizer`` (maximal runs of
  ``char::is_alphanumeric`` characters), then ``LowerCaser`` (``char::to_lowercase``
  of each character), then ``RemoveLongFilter``: a token of ``limit`` UTF-8 bytes or
  more *after lowercasing* is dropped (255 unless the name says
  ``default_limit_<n>``);
* ``whitespace``: the same on runs between ASCII whitespace (tab, line feed, form
  feed, carriage return, space; not vertical tab, not Unicode spaces);
* ``raw``: the whole value as one token, empty values included, case kept.

Whatever the analyzer, a token of more than :data:`MAX_TOKEN_BYTES` (65,530) bytes is
dropped as Tantivy's indexer drops it (not indexed, not counted in the fieldnorm).

Each token's position is its index among the tokenizer's tokens of its value: a
dropped token leaves its position unused, as in Tantivy. Null values have no tokens.
The Unicode tables come from tantivy-py itself (:mod:`.unicodeprobe`); the kernels
are Cython without the GIL or the pure twin (:mod:`.impl`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.schema.tokenizers import split_limit
from indextables.search.write.segwriter import impl
from indextables.search.write.segwriter.errors import SegmentWriteError

__all__ = ["MAX_TOKEN_BYTES", "Analyzer", "Tokens", "analyzer_for", "tokenize"]

#: Tantivy indexes no token longer than this (``MAX_TOKEN_LEN``): it skips it, uncounted.
MAX_TOKEN_BYTES = 65530

AnalyzerKind = Literal["simple", "whitespace", "raw"]
_MODES: dict[str, int] = {"simple": 0, "whitespace": 1, "raw": 2}


@dataclass(frozen=True, slots=True)
class Analyzer:
    """One of the analyzers the writer implements.

    Attributes:
        kind: the tokenizer: ``simple`` (lowercased), ``whitespace`` (lowercased), ``raw``.
        limit: tokens of this many UTF-8 bytes or more are dropped (not for ``raw``).
    """

    kind: AnalyzerKind
    limit: int = 255

    def __post_init__(self) -> None:
        if self.kind not in _MODES:
            raise SegmentWriteError(f"unknown analyzer kind {self.kind!r}")
        if self.limit < 1:
            raise SegmentWriteError(f"analyzer token limit {self.limit} is not positive")


def analyzer_for(tokenizer: str) -> Analyzer | None:
    """The writer's analyzer for a field's tokenizer name, None when it has none
    (stemming and other analyzers stay with tantivy-py)."""
    base, limit = split_limit(tokenizer)
    if base in ("default", "simple"):
        return Analyzer("simple", limit)
    if base == "whitespace":
        return Analyzer("whitespace", limit)
    if base == "raw" and tokenizer == "raw":
        return Analyzer("raw")
    return None


@dataclass(frozen=True, slots=True)
class Tokens:
    """The tokens of a column, in row order then position order.

    Attributes:
        terms: each token's UTF-8 bytes.
        positions: each token's position within its value.
        rows: the row (of the whole column) each token came from.
    """

    terms: pa.LargeBinaryArray
    positions: pa.UInt32Array
    rows: pa.Int64Array


def _bytes_view(buffer: pa.Buffer | None, start: int, end: int) -> memoryview:
    """Unsigned bytes ``start:end`` of ``buffer`` (the kernels' input form), no copy."""
    if buffer is None:
        return memoryview(b"")
    return memoryview(buffer).cast("B")[start:end]


def _chunk_tokens(chunk: pa.Array, analyzer: Analyzer, first_row: int) -> Tokens:
    chunk = chunk.cast(pa.large_binary())
    rows = len(chunk)
    _, offset_buffer, data_buffer = chunk.buffers()
    if rows and offset_buffer is not None:
        raw = pa.Array.from_buffers(
            pa.int64(), rows + 1, [None, offset_buffer], offset=chunk.offset
        )
        start = raw[0].as_py()
        offsets = pc.subtract(raw, pa.scalar(start, pa.int64()))
        end = start + offsets[-1].as_py()
    else:
        offsets, start, end = pa.array([0] * (rows + 1), pa.int64()), 0, 0
    data = _bytes_view(data_buffer, start, end)
    valid = chunk.is_valid().cast(pa.uint8())
    valid_bytes = _bytes_view(valid.buffers()[1], valid.offset, valid.offset + rows)
    offset_bytes = _bytes_view(
        offsets.buffers()[1], offsets.offset * 8, (offsets.offset + rows + 1) * 8
    )
    limit = MAX_TOKEN_BYTES + 1
    if analyzer.kind != "raw":
        limit = min(limit, analyzer.limit)
    out, ends, positions, rows = impl.kernels().tokenize(
        data,
        offset_bytes,
        valid_bytes,
        _MODES[analyzer.kind],
        limit,
    )
    count = len(positions) // 4
    terms = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), count, [None, pa.py_buffer(ends), pa.py_buffer(out)]
    )
    row_ids = pa.Array.from_buffers(pa.int64(), count, [None, pa.py_buffer(rows)])
    if first_row:
        row_ids = pc.add(row_ids, first_row)
    return Tokens(
        terms=terms,
        positions=pa.Array.from_buffers(pa.uint32(), count, [None, pa.py_buffer(positions)]),
        rows=row_ids,
    )


def tokenize(column: pa.Array | pa.ChunkedArray, analyzer: Analyzer, *, name: str) -> Tokens:
    """The tokens ``analyzer`` makes of every value of ``column`` (see the module docstring).

    Args:
        column: string (or binary holding UTF-8) values; nulls have no tokens.
        analyzer: the field's analyzer.
        name: the column's name, for errors.

    Raises:
        SegmentWriteError: a value is not UTF-8 (naming the column and row), or the
            column is not of a string type.
    """
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts: list[Tokens] = []
    first = 0
    for chunk in chunks:
        if not (
            pa.types.is_string(chunk.type)
            or pa.types.is_large_string(chunk.type)
            or pa.types.is_binary(chunk.type)
            or pa.types.is_large_binary(chunk.type)
            or pa.types.is_string_view(chunk.type)
        ):
            raise SegmentWriteError(f"column {name!r}: {chunk.type} values cannot be tokenized")
        try:
            parts.append(_chunk_tokens(chunk, analyzer, first))
        except SegmentWriteError as exc:
            raise SegmentWriteError(f"column {name!r}: {exc}") from None
        first += len(chunk)
    if len(parts) == 1:
        return parts[0]
    return Tokens(
        terms=pa.concat_arrays([p.terms for p in parts])
        if parts
        else pa.array([], pa.large_binary()),
        positions=pa.concat_arrays([p.positions for p in parts])
        if parts
        else pa.array([], pa.uint32()),
        rows=pa.concat_arrays([p.rows for p in parts]) if parts else pa.array([], pa.int64()),
    )
