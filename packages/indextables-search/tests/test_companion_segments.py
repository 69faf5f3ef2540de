"""A companion split's segments stay within 2**21 documents (companion/segments.py).

Tantivy writes a document number below 2**21 in three VInt bytes and above it in
four, so a term of one document costs a byte more in a bigger segment. The cap
is checked here with small numbers (the module's constants shrunk): every
segment within it, every document kept once and in order, and a companion built
that way answering as its source on the differential's hostile rows; and the byte
a smaller document number saves, at the two-to-three-byte boundary.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
import tantivy

from indextables.protocol.splitbundle import unbundle_split
from indextables.search.companion import segments
from indextables.search.companion.build import companion_schema
from indextables.search.companion.pathhash import FILE_HASH_FIELD, ROW_IN_FILE_FIELD
from indextables.search.companion.segments import CappedIndex
from indextables.search.options import IndexingOptions
from indextables.search.schema.mapping import field_specs
from indextables.search.table.tableaccess import load_view

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_companion_differential import ROWS, _run

SPECS = tuple(
    replace(s, stored=False)
    for s in field_specs(pa.schema([("s", pa.string())]), IndexingOptions())
)
HIDDEN = (FILE_HASH_FIELD, ROW_IN_FILE_FIELD)


def _document(row: int) -> tantivy.Document:
    doc = tantivy.Document()
    doc.add_text("s", f"v{row}")
    doc.add_unsigned(FILE_HASH_FIELD, 7)
    doc.add_unsigned(ROW_IN_FILE_FIELD, row)
    return doc


def _fill(index: CappedIndex, total: int, seed: int) -> None:
    """Add rows 0 .. total-1 in random pieces, each at most what fits before a commit."""
    rng = random.Random(seed)
    row = 0
    while row < total:
        take = min(total - row, rng.randint(1, index.room()))
        index.add((_document(r) for r in range(row, row + take)), take)
        row += take
        # a full index merges in the background while the next fills; never more than one
        assert len(index._merging) <= 1


def _segment_sizes(directory: str) -> list[int]:
    with open(Path(directory) / "meta.json", encoding="utf-8") as handle:
        return [int(s["max_doc"]) for s in json.load(handle)["segments"]]


def _rows_in_order(index: tantivy.Index, sizes: list[int]) -> list[list[int]]:
    """Each segment's ``__pq_row_in_file`` values in document order."""
    index.reload()
    searcher = index.searcher()
    return [
        [
            int(v)  # type: ignore[arg-type]
            for v in searcher.fast_field_values(
                ROW_IN_FILE_FIELD, [tantivy.DocAddress(ordinal, d) for d in range(size)]
            )
        ]
        for ordinal, size in enumerate(sizes)
    ]


@pytest.mark.parametrize(("total", "seed"), [(0, 1), (5, 2), (64, 3), (65, 4), (300, 5)])
def test_every_segment_is_within_the_cap_and_every_row_is_kept_in_order(
    total: int, seed: int
) -> None:
    index = CappedIndex(
        SPECS, companion_schema(SPECS), heap_size=15_000_000, hidden_fast=HIDDEN,
        segment_docs=64, commit_docs=8,
    )  # fmt: skip
    try:
        _fill(index, total, seed)
        assert index.indexes == -(-total // 64)
        index.finish()
        sizes = _segment_sizes(index.directory)
        assert sum(sizes) == total
        assert all(0 < size <= 64 for size in sizes), sizes
        rows = _rows_in_order(index.index, sizes)
        # Tantivy may merge an index's segments in any order, never across indexes
        # (each holds the next 64 rows): within each run of 64 rows, every row once.
        flat = [r for segment in rows for r in segment]
        assert sorted(flat) == list(range(total))
        for start in range(0, total, 64):
            run = flat[start : start + 64]
            assert sorted(run) == list(range(start, min(total, start + 64))), run
    finally:
        index.discard()


def test_more_documents_than_fit_before_the_commit_are_refused() -> None:
    index = CappedIndex(
        SPECS, companion_schema(SPECS), heap_size=15_000_000, hidden_fast=HIDDEN,
        segment_docs=64, commit_docs=8,
    )  # fmt: skip
    try:
        index.add((_document(r) for r in range(3)), 3)
        assert index.room() == 5
        with pytest.raises(ValueError, match="do not fit"):
            index.add((_document(r) for r in range(6)), 6)
    finally:
        index.discard()
    with pytest.raises(ValueError, match="divide"):
        CappedIndex(SPECS, companion_schema(SPECS), heap_size=15_000_000, hidden_fast=HIDDEN,
                    segment_docs=64, commit_docs=10)  # fmt: skip


def _postings_bytes(segment_docs: int, commit_docs: int, total: int) -> tuple[int, list[int]]:
    """``.idx`` bytes and segment sizes of ``total`` documents with a term of their own."""
    specs = tuple(
        replace(s, stored=False)
        for s in field_specs(pa.schema([("n", pa.int64())]), IndexingOptions())
    )
    index = CappedIndex(
        specs, companion_schema(specs), heap_size=50_000_000, hidden_fast=HIDDEN,
        segment_docs=segment_docs, commit_docs=commit_docs,
    )  # fmt: skip
    try:
        row = 0
        while row < total:
            take = min(total - row, index.room())
            docs = []
            for r in range(row, row + take):
                doc = tantivy.Document()
                doc.add_integer("n", r)
                doc.add_unsigned(FILE_HASH_FIELD, 1)
                doc.add_unsigned(ROW_IN_FILE_FIELD, r)
                docs.append(doc)
            index.add(docs, take)
            row += take
        index.finish()
        sizes = _segment_sizes(index.directory)
        return sum(p.stat().st_size for p in Path(index.directory).glob("*.idx")), sizes
    finally:
        index.discard()


def test_a_capped_segment_writes_smaller_document_numbers() -> None:
    """The VInt boundary the cap is for, at 2**14 (two bytes to three) instead of 2**21
    (three to four): 16,384 + 600 documents, each with a term of its own, in one segment
    take three bytes for each of the last 600 numbers; capped at 2**14 those 600 are a
    second index's 0 .. 599 (one or two bytes). Tantivy merged each index's eight
    commits into one segment."""
    total = (1 << 14) + 600
    whole, whole_sizes = _postings_bytes(1 << 15, 1 << 15, total)
    capped, capped_sizes = _postings_bytes(1 << 14, 1 << 11, total)
    assert whole_sizes == [total]
    assert sorted(capped_sizes) == [600, 1 << 14], capped_sizes
    assert capped <= whole - 600, (capped, whole)


def test_a_companion_of_capped_segments_answers_as_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The companion differential (hostile rows, random queries against DuckDB) with
    segments of at most 16 documents: each split is several indexes gathered."""
    monkeypatch.setattr(segments, "SEGMENT_DOCS", 16)
    _run(tmp_path, 11, 24)
    sizes = []
    for number, split in enumerate(load_view(str(tmp_path / "idx"), {}).splits):
        target = tmp_path / f"split-{number}"
        unbundle_split((tmp_path / "idx" / split.path).read_bytes(), target)
        sizes.append(_segment_sizes(str(target)))
    assert sum(sum(s) for s in sizes) == ROWS
    assert all(0 < size <= 16 for split in sizes for size in split), sizes
    assert any(sum(split) > 16 for split in sizes), sizes  # some split was really cut


def test_the_plan_takes_the_fewest_equal_indexes_each_merged_from_eight_commits() -> None:
    cap = segments.SEGMENT_DOCS
    assert segments.plan(0) == segments.plan(cap) == (cap, cap)  # one index, one commit
    assert segments.plan(10_000_000) == (2_000_000, 250_000)  # five indexes of 2M
    rng = random.Random(7)
    for rows in [cap + 1, 8 * cap, 8 * cap + 1, *(rng.randint(cap, 50 * cap) for _ in range(200))]:
        per_index, per_commit = segments.plan(rows)
        assert per_index <= cap, rows
        assert per_index == per_commit * segments.MERGE_FAN_IN, rows
        assert -(-rows // per_index) == -(-rows // cap), rows  # no more indexes than needed
