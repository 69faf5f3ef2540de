"""MERGE SPLITS by segments: the merged split holds its sources' segments unchanged and
reads back every row, search and statistic exactly as the sources did."""

from __future__ import annotations

import json
import math
import os
import random
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy

from indextables.protocol.splitbundle import unbundle_split
from indextables.search import open_table, write_table
from indextables.search.read.rowcopy import ROW_KEYS_SEGMENTED, RowCopy, segment_batches
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.splits.termdict.check import check_sstable_term_file
from indextables.search.splits.termdict.transcode import to_fst
from indextables.search.table.tableaccess import load_view
from indextables.search.write import merge as merge_module
from indextables.search.write.merge import merge_table
from indextables.search.write.mergestats import merged_bounds, merged_tags
from indextables.search.write.segmentmerge import SegmentMergeRefused, merge_segments
from indextables.search.write.splitwriter import ROWS_FILE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from writedata import random_table, row_multiset

# Every column kind, with a partition column; small batches: several record batches a split.
_OPTIONS = {"spark.indextables.indexWriter.batchSize": "7"}
_QUERIES = ("id:[10 TO 60]", "id:[0 TO 5] OR id:[140 TO 150]", "*")


def _write(uri: str, seed: int, rows: int, start: int) -> pa.Table:
    data = random_table(seed, rows)
    data = data.set_column(0, "id", pa.array(range(start, start + rows), pa.int64()))
    data = data.append_column("p", pa.array([f"p{i % 2}" for i in range(rows)]))
    write_table(uri, data, partition_by=["p"], options=_OPTIONS)
    return data


def _answers(uri: str) -> dict[str, Any]:
    table = open_table(uri)
    found: dict[str, Any] = {"all": row_multiset(table.to_arrow().to_pylist())}
    for query in _QUERIES:
        found[query] = row_multiset(table.search(query).to_pylist())
        found["count " + query] = table.count(query)
    found["where"] = row_multiset(table.search(where="c_double > 0 OR c_string = ''").to_pylist())
    metrics = {"n": "count", "s": ("sum", "c_int32"), "m": ("max", "c_double")}
    found["aggregate"] = row_multiset(table.aggregate(group_by=["p"], metrics=metrics).to_pylist())
    return found


def _unbundled(uri: str, tmp: Path) -> list[Path]:
    out = []
    for number, split in enumerate(load_view(uri, {}).splits):
        target = tmp / f"split-{number}"
        unbundle_split((Path(uri) / split.path).read_bytes(), target)
        out.append(target)
    return out


def test_merged_rows_searches_and_counts_equal_the_sources(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    data = [_write(uri, seed, 80, seed * 100) for seed in (1, 2, 3)]
    before = _answers(uri)
    assert before["all"] == row_multiset(pa.concat_tables(data).to_pylist())
    result = merge_table(uri)
    assert (result["status"], result["merged_files"], result["new_files"]) == ("SUCCESS", 6, 2)
    assert _answers(uri) == before
    # Merged again with new splits: a merged source's own offsets are carried over.
    data.append(_write(uri, 4, 80, 400))
    again = _answers(uri)
    assert merge_table(uri)["new_files"] == 2
    assert _answers(uri) == again
    assert again["all"] == row_multiset(pa.concat_tables(data).to_pylist())
    splits = load_view(uri, {}).splits
    assert {s.num_merge_ops for s in splits} == {2}
    for directory in _unbundled(uri, tmp_path / "merged"):
        meta = json.loads((directory / "meta.json").read_text())
        assert len(meta["segments"]) == 4  # no row was re-indexed
        with pa.memory_map(str(directory / ROWS_FILE)) as source:
            schema = pa.ipc.open_file(source).schema
        offsets = segment_batches(schema.metadata)
        assert offsets is not None
        assert sorted(offsets) == sorted(s["segment_id"].replace("-", "") for s in meta["segments"])
        assert len(set(offsets.values())) == 4
        for name in os.listdir(directory):
            if name.endswith(".term"):  # the reference's SSTable form, structurally valid
                check_sstable_term_file((directory / name).read_bytes(), name=name)


def test_merged_split_opens_in_tantivy_py_and_finds_every_document(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    for seed in (1, 2):
        write_table(uri, random_table(seed, 50), options=_OPTIONS)
    merge_table(uri)
    (directory,) = _unbundled(uri, tmp_path / "merged")
    for term in directory.glob("*.term"):
        term.write_bytes(to_fst(term.read_bytes()))
    index = tantivy.Index.open(str(directory))
    searcher = index.searcher()
    assert (searcher.num_docs, searcher.num_segments) == (100, 2)
    query = index.parse_query("id:[0 TO 49]", ["id"])
    assert searcher.search(query, limit=200).count == 100  # both sources number ids 0..49


def test_merged_statistics_equal_a_write_of_the_same_rows(tmp_path: Path) -> None:
    uri, whole = str(tmp_path / "t"), str(tmp_path / "whole")
    parts = [random_table(seed, 60) for seed in (5, 6, 7)]
    for part in parts:
        write_table(uri, part)
    write_table(whole, pa.concat_tables(parts))
    merge_table(uri)
    (merged,) = load_view(uri, {}).splits
    (written,) = load_view(whole, {}).splits
    assert (merged.min_values, merged.max_values) == (written.min_values, written.max_values)
    assert merged.entry.split_tags == written.entry.split_tags
    assert merged.num_records == 180


def _spec(name: str, kind: FieldKind) -> FieldSpec:
    return FieldSpec(name=name, kind=kind, tokenizer=None, stored=True, indexed=True, fast=True)


def test_merged_bounds_follow_each_kinds_order() -> None:
    specs = [
        _spec("i", FieldKind.I64),
        _spec("f", FieldKind.F64),
        _spec("s", FieldKind.STRING),
        _spec("d", FieldKind.DATE),
        _spec("t", FieldKind.DATE),
        _spec("gone", FieldKind.I64),
    ]
    long = "y" * 32
    mins = [
        {"i": "-9", "f": "NaN", "s": "b", "d": "0999-01-01", "t": "-5", "gone": "1"},
        {"i": "10", "f": "-0", "s": long, "d": "2000-01-01", "t": "7"},
    ]
    maxs = [
        {"i": "100", "f": "NaN", "s": "c", "d": "9999-12-31", "t": "12", "gone": "2"},
        {"i": "9", "f": "1e+308", "s": long, "d": "2000-01-02", "t": "100"},
    ]
    low, high = merged_bounds(specs, mins, maxs)
    assert low == {"i": "-9", "f": "-0", "s": "b", "d": "0999-01-01", "t": "-5"}
    assert high == {"i": "100", "f": "NaN", "s": long, "d": "9999-12-31", "t": "100"}
    assert math.isnan(float(high["f"]))
    # A source without a bound (all null, or dates beyond 1-9999): no bound at all.
    assert merged_bounds(specs, [mins[0], None], maxs) == ({}, {})


def test_merged_tags_keep_the_columns_fully_indexed_everywhere() -> None:
    specs = [_spec("A", FieldKind.STRING), _spec("b", FieldKind.STRING)]
    tags = [
        ('indextables.python.fullyIndexed=["A","b"]',),
        ('indextables.python.fullyIndexed=["A"]',),
    ]
    assert merged_tags(specs, tags) == ('indextables.python.fullyIndexed=["A"]',)
    assert merged_tags(specs, [*tags, None]) is None


def test_sources_with_and_without_a_copy_are_refused(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    for seed in (1, 2):
        write_table(uri, random_table(seed, 20))
    sources = _unbundled(uri, tmp_path / "sources")
    (sources[1] / ROWS_FILE).unlink()
    target = tmp_path / "merged"
    target.mkdir()
    with pytest.raises(SegmentMergeRefused, match="others none"):
        merge_segments([str(s) for s in sources], str(target))


def test_sources_without_any_copy_merge_by_segments(tmp_path: Path) -> None:
    """indexWriter.arrowCopy's default writes no copy for these columns: every row is
    in the doc stores, and the merge still moves segments instead of re-indexing."""
    uri = str(tmp_path / "t")
    rng = random.Random(9)
    expected = []
    for part in range(3):
        rows = [
            {
                "id": part * 100 + k,
                "s": rng.choice(["", "a b", "ü", None, "x" * 300]),
                "f": rng.choice([0.0, -0.0, math.nan, math.inf, -1.5, None]),
                "n": rng.choice([None, -(2**63), 2**63 - 1, 0]),
            }
            for k in range(25)
        ]
        write_table(uri, pa.Table.from_pylist(rows), options=_OPTIONS)
        expected += rows
    assert not any((d / ROWS_FILE).exists() for d in _unbundled(uri, tmp_path / "before"))
    table = open_table(uri)
    before = {q: row_multiset(table.search(q).to_pylist()) for q in _QUERIES}
    assert before["*"] == row_multiset(expected)
    assert merge_table(uri)["new_files"] == 1
    (directory,) = _unbundled(uri, tmp_path / "merged")
    assert not (directory / ROWS_FILE).exists()
    assert len(json.loads((directory / "meta.json").read_text())["segments"]) >= 3
    table = open_table(uri)
    assert {q: row_multiset(table.search(q).to_pylist()) for q in _QUERIES} == before
    assert row_multiset(table.to_arrow().to_pylist()) == row_multiset(expected)
    assert table.count(where="f > 0") == sum(
        1 for r in expected if r["f"] is not None and (r["f"] > 0 or math.isnan(r["f"]))
    )


def test_a_refused_group_is_re_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uri = str(tmp_path / "t")
    for seed in (1, 2):
        write_table(uri, random_table(seed, 30), options=_OPTIONS)
    before = row_multiset(open_table(uri).to_arrow().to_pylist())

    def refuse(sources: Any, target: Any) -> int:
        raise SegmentMergeRefused("refused for the test")

    monkeypatch.setattr(merge_module, "merge_segments", refuse)
    assert merge_table(uri)["new_files"] == 1
    assert row_multiset(open_table(uri).to_arrow().to_pylist()) == before
    (directory,) = _unbundled(uri, tmp_path / "merged")
    with pa.memory_map(str(directory / ROWS_FILE)) as source:
        schema = pa.ipc.open_file(source).schema
    assert segment_batches(schema.metadata) is None  # written by the writer: plain row keys


def test_a_merged_copy_names_a_layout_older_readers_do_not_key(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    for seed in (1, 2):
        write_table(uri, random_table(seed, 10))
    merge_table(uri)
    (directory,) = _unbundled(uri, tmp_path / "merged")
    copy = RowCopy.open(str(directory / ROWS_FILE))
    assert copy is not None
    assert copy.keyed
    assert copy.segment_batches is not None
    with pa.memory_map(str(directory / ROWS_FILE)) as source:
        metadata = pa.ipc.open_file(source).schema.metadata
    assert metadata[b"indextables.rowkeys"] == ROW_KEYS_SEGMENTED
    assert copy.resolved(["0" * 32]).keyed is False  # a segment it has no offset for


def test_index_only_columns_stay_searchable(tmp_path: Path) -> None:
    """An index-only column has no values to re-index from: its terms survive only
    because the merge keeps the segments."""
    uri = str(tmp_path / "t")
    options = {"spark.indextables.indexing.indexonlyfields": "secret"}
    for start in (0, 10):
        ids = list(range(start, start + 10))
        data = pa.table({"id": ids, "secret": [f"s{i % 3}" for i in ids]})
        write_table(uri, data, options=options)
    table = open_table(uri)
    before = sorted(table.search(fieldmatch={"secret": "s1"}).column("id").to_pylist())
    assert len(before) == 7
    merge_table(uri)
    table = open_table(uri)
    assert len(table.files) == 1
    assert sorted(table.search(fieldmatch={"secret": "s1"}).column("id").to_pylist()) == before


def test_sources_of_different_block_sizes_merge_by_segments(tmp_path: Path) -> None:
    """Splits written before and after the default block size changed (16K, 8K, the
    default) merge segment by segment, and every row reads back from each store."""
    from indextables.search.read.docstore import read_store

    uri = str(tmp_path / "t")
    key = "spark.indextables.indexWriter.docStoreBlockSize"
    data = []
    for number, size in enumerate(("16384", "8192", None)):
        part = random_table(number + 11, 400)
        part = part.set_column(0, "id", pa.array(range(number * 1000, number * 1000 + 400)))
        part = part.append_column("p", pa.array([f"p{i % 2}" for i in range(400)]))
        write_table(uri, part, options={**_OPTIONS, **({key: size} if size else {})})
        data.append(part)
    before = _answers(uri)
    assert before["all"] == row_multiset(pa.concat_tables(data).to_pylist())
    sizes = {
        json.loads((d / "meta.json").read_text())["index_settings"]["docstore_blocksize"]
        for d in _unbundled(uri, tmp_path / "sources")
    }
    assert len(sizes) == 3
    result = merge_table(uri)
    assert (result["merged_files"], result["new_files"]) == (3, 1)
    (directory,) = _unbundled(uri, tmp_path / "merged")
    meta = json.loads((directory / "meta.json").read_text())
    assert len(meta["segments"]) >= 3  # merged by segments, not re-indexed into one
    stores = [read_store(p.read_bytes()) for p in directory.glob("*.store")]
    assert sum(s.num_docs for s in stores) == 1200
    assert _answers(uri) == before
