"""The companion build pipeline: segment row ranges read back column-wise, groups built
in parallel worker processes (docs/companion.md, "How a sync works")."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace

import pyarrow as pa
import tantivy

from indextables.search.companion import build
from indextables.search.companion.build import companion_schema
from indextables.search.companion.manifest import ParquetFileEntry, SegmentRowRange
from indextables.search.companion.pathhash import FILE_HASH_FIELD, ROW_IN_FILE_FIELD, path_hash
from indextables.search.options import IndexingOptions
from indextables.search.schema.mapping import field_specs
from indextables.search.write.splitwriter import PartitionIndex

SPECS = tuple(replace(s, stored=False) for s in field_specs(pa.schema([("s", pa.string())]), IndexingOptions()))


def _entry(path: str, offset: int, rows: int) -> ParquetFileEntry:
    return ParquetFileEntry(
        relative_path=path, file_size_bytes=1, row_offset=offset, num_rows=rows,
        has_offset_index=False, row_groups=(),
    )  # fmt: skip


def _index(commits: Sequence[Sequence[tuple[str, int]]]) -> PartitionIndex:
    """An index with one segment per commit, its documents the given (file, row) in order."""
    part = PartitionIndex.create(
        SPECS, companion_schema(SPECS), heap_size=15_000_000,
        hidden_fast=(FILE_HASH_FIELD, ROW_IN_FILE_FIELD),
    )  # fmt: skip
    for documents in commits:
        for path, row in documents:
            doc = tantivy.Document()
            doc.add_text("s", "x")
            doc.add_unsigned(FILE_HASH_FIELD, path_hash(path))
            doc.add_unsigned(ROW_IN_FILE_FIELD, row)
            part.writer.add_document(doc)
        part.writer.commit()
    part.commit()
    return part


def _by_search(
    part: PartitionIndex, entries: Sequence[ParquetFileEntry]
) -> tuple[SegmentRowRange, ...]:
    """The ranges from every document's address and coordinates, one Python object each
    (the builder's former way): what the column-wise read must equal."""
    part.index.reload()
    searcher = part.index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), limit=searcher.num_docs, count=False).hits
    addresses = sorted((a for _, a in hits), key=lambda a: (a.segment_ord, a.doc))
    hashes = searcher.fast_field_values(FILE_HASH_FIELD, addresses)
    in_file = searcher.fast_field_values(ROW_IN_FILE_FIELD, addresses)
    starts = {path_hash(e.relative_path): e.row_offset for e in entries}
    rows: dict[int, list[tuple[int, int]]] = {}
    for address, file_hash, row in zip(addresses, hashes, in_file, strict=True):
        rows.setdefault(address.segment_ord, []).append(
            (address.doc, starts[int(file_hash)] + int(row))  # type: ignore[arg-type]
        )
    exact, offset, sizes = [], 0, []
    contiguous = True
    for ordinal in sorted(rows):
        docs = sorted(rows[ordinal])
        first = docs[0][1] - docs[0][0]
        exact.append(SegmentRowRange(ordinal, first, len(docs)))
        contiguous = contiguous and all(g == first + d for d, g in docs)
        sizes.append(SegmentRowRange(ordinal, offset, len(docs)))
        offset += len(docs)
    return tuple(exact) if contiguous else tuple(sizes)


ENTRIES = (_entry("a.parquet", 0, 30), _entry("b.parquet", 30, 12))


def test_segment_ranges_of_runs_are_exact_in_any_segment_order() -> None:
    rows = [("a.parquet", r) for r in range(30)] + [("b.parquet", r) for r in range(12)]
    part = _index([rows[:10], rows[10:25], rows[25:]])  # the third segment spans both files
    try:
        meta_path = os.path.join(part.directory, "meta.json")
        with open(meta_path, encoding="utf-8") as handle:
            meta = json.load(handle)
        assert len(meta["segments"]) == 3
        # segment ordinals follow meta.json, whatever order the segments were written in
        meta["segments"].reverse()
        with open(meta_path, "w", encoding="utf-8") as handle:
            json.dump(meta, handle)
        found = build._segment_ranges(part, ENTRIES)
        assert found == _by_search(part, ENTRIES)
        assert sorted((r.row_offset, r.num_rows) for r in found) == [(0, 10), (10, 15), (25, 17)]
        assert [r.segment_ord for r in found] == [0, 1, 2]
    finally:
        part.discard()


def test_segment_ranges_fall_back_to_sizes_when_a_segment_is_not_one_run() -> None:
    rows = [("a.parquet", r) for r in range(30)] + [("b.parquet", r) for r in range(12)]
    shuffled = rows[10:25]
    shuffled[3], shuffled[7] = shuffled[7], shuffled[3]
    part = _index([rows[:10], shuffled, rows[25:]])
    try:
        found = build._segment_ranges(part, ENTRIES)
        assert found == _by_search(part, ENTRIES)
        # the segments' sizes in segment order, numbered from 0
        sizes = [r.num_rows for r in found]
        assert sorted(sizes) == [10, 15, 17]
        assert [r.row_offset for r in found] == [sum(sizes[:i]) for i in range(3)]
    finally:
        part.discard()


def test_segment_ranges_of_an_empty_index() -> None:
    part = _index([])
    try:
        assert build._segment_ranges(part, ENTRIES) == ()
    finally:
        part.discard()
