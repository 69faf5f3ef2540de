"""Splits in the reference's own form: SSTable dictionaries written, FST rewritten on fetch."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy
from pyspark.sql.types import LongType, StringType, StructField, StructType

from indextables.protocol.hotcache import parse_hotcache
from indextables.protocol.splitbundle import (
    SPLIT_FIELDS,
    parse_split_footer,
    unbundle_split,
    write_split_bundle,
)
from indextables.pyspark.errors import UnreadableSplitError
from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.pyspark.writing.mergetasks import merge_splits
from indextables.search.options import parse_indexing
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.splitreader import SplitEntry, read_split
from indextables.search.schema.mapping import field_specs
from indextables.search.splits.splitcache import SplitCache, SplitRef
from indextables.search.splits.termdict import dictionary_kind
from indextables.search.splits.termdict.check import check_sstable_term_file
from indextables.search.splits.termdict.composite import split_composite, split_footer
from indextables.search.splits.termdict.sstform import sstable_layout
from indextables.search.splits.termdict.transcode import decode_field
from indextables.search.table.tableaccess import load_view
from indextables.search.write import splitwriter
from indextables.search.write.splitwriter import SplitWriter
from indextables.storage import LocalStore

GOLDEN = Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4"


def _check_split(data: bytes, *, size: int, start: int | None, end: int | None) -> list[int]:
    """Check one of our splits against the log and the reference's form.

    Returns the number of SSTable blocks of each field dictionary.
    """
    assert size == len(data)
    assert end == len(data)
    footer = parse_split_footer(data[start:], footer_start_offset=start or 0)
    assert footer.footer_end_offset == len(data)
    assert footer.files[SPLIT_FIELDS] == (start, start)
    lengths = dict(parse_hotcache(footer.hotcache).file_lengths)
    blocks = []
    for name, (begin, stop) in footer.files.items():
        if name in lengths:
            assert lengths[name] == stop - begin, name
        if name.endswith(".term"):
            term = data[begin:stop]
            assert dictionary_kind(term) == "sstable"
            check_sstable_term_file(term, name=name)
            body, _ = split_footer(term)
            for blob in split_composite(body):
                layout = sstable_layout(blob.data)
                blocks.append(1 if not layout.fst else 2)  # a v3 index only with 2+ blocks
    assert blocks
    return blocks


def test_spark_write_splits_carry_valid_sstables(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "words")
    # ~30,000 distinct 9-byte terms per task: several SSTable blocks per dictionary.
    df = spark.range(60_000, numPartitions=2).selectExpr(
        "id", "concat('w', lpad(cast(id as string), 8, '0')) as word", "id % 5 as bucket"
    )
    df.write.format("indextables").mode("append").save(path)
    view = load_view(path, {})
    assert len(view.splits) >= 2
    store = LocalStore(path)
    multi_block = 0
    for split in view.splits:
        ref = split.entry.ref
        data = store.get(ref.path)
        blocks = _check_split(
            data, size=ref.size, start=ref.footer_start_offset, end=ref.footer_end_offset
        )
        multi_block += sum(b > 1 for b in blocks)
    assert multi_block >= len(view.splits)  # every split has a dictionary with a v3 index
    found = (
        spark.read.format("indextables").option("fieldmatch.word", "w00012345").load(path).collect()
    )
    assert [(r["id"], r["bucket"]) for r in found] == [(12345, 0)]
    # MERGE SPLITS bundles the sources' segments unchanged: the merged split is in the same form.
    result = merge_splits(spark, path, target_size=1 << 30)
    assert (result["status"], result["new_files"]) == ("SUCCESS", 1)
    (merged,) = load_view(path, {}).splits
    assert merged.num_merge_ops == 1
    ref = merged.entry.ref
    blocks = _check_split(
        store.get(ref.path), size=ref.size, start=ref.footer_start_offset, end=ref.footer_end_offset
    )
    assert max(blocks) > 1
    query = spark.read.format("indextables").option("query", "word:w00059999").load(path)
    assert query.count() == 1


SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("level", StringType()),
        StructField("message", StringType()),
        StructField("secret", StringType()),
    ]
)


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "level": ("ERROR", "WARN", "INFO")[i % 3],
            "message": f"request {i} from host{i % 17} took {i % 250} ms",
            "secret": f"token-{i % 40}",
        }
        for i in range(n)
    ]


def _write(tmp_path: Path, options: dict[str, str], n: int) -> tuple[LocalStore, Any]:
    store = LocalStore(str(tmp_path / "table"))
    indexing = {"spark.indextables.indexing.typemap.message": "text", **options}
    specs = field_specs(arrow_schema(SCHEMA), parse_indexing(indexing))
    writer = SplitWriter(store, specs, (), heap_size=20 << 20, batch_size=1000)
    writer.write([pa.RecordBatch.from_pylist(_rows(n), schema=arrow_schema(SCHEMA))])
    (add,) = writer.finish()
    return store, add


def test_split_rewritten_to_fst_answers_like_its_source_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources: list[Path] = []
    original = splitwriter.to_reference_form

    def keep_source(directory: str) -> None:
        copy = tmp_path / f"source-{len(sources)}"
        shutil.copytree(directory, copy)
        sources.append(copy)
        original(directory)

    monkeypatch.setattr(splitwriter, "to_reference_form", keep_source)
    store, add = _write(tmp_path, {}, 3000)
    (source,) = sources
    data = store.get(add.path)
    _check_split(data, size=add.size, start=add.footer_start_offset, end=add.footer_end_offset)
    ref = SplitRef(add.path, add.size, add.footer_start_offset, add.footer_end_offset)
    fetched = SplitCache(str(tmp_path / "cache"), 1 << 30).fetch(store, store.uri, ref)
    before = tantivy.Index.open(str(source))
    after = tantivy.Index.open(fetched)
    terms = _text_terms(source)
    assert sum(len(t) for t in terms.values()) > 3000
    numeric = [("id", i) for i in range(3000)]  # i64 terms: one per row
    for field, term in [*_flatten(terms), *numeric]:
        query = tantivy.Query.term_query(before.schema, field, term)
        hits = _hits(before, query)
        assert hits, (field, term)
        assert _hits(after, query) == hits, (field, term)


def _text_terms(directory: Path) -> dict[str, list[str]]:
    """Every term of the text fields, decoded from the index's own FST dictionaries."""
    meta = json.loads((directory / "meta.json").read_text())
    names = [f["name"] for f in meta["schema"]]  # a field's id is its position
    kinds = {f["name"]: f["type"] for f in meta["schema"]}
    found: dict[str, list[str]] = {}
    for term_file in directory.glob("*.term"):
        body, _ = split_footer(term_file.read_bytes())
        for blob in split_composite(body):
            name = names[blob.field]
            if kinds[name] == "text":
                found.setdefault(name, []).extend(k.decode() for k in decode_field(blob.data).keys)
    return found


def _flatten(terms: dict[str, list[str]]) -> list[tuple[str, Any]]:
    return [(field, term) for field, values in terms.items() for term in values]


def _hits(index: tantivy.Index, query: tantivy.Query) -> list[tuple[int, int]]:
    searcher = index.searcher()
    found = searcher.search(query, limit=max(1, searcher.num_docs), count=False).hits
    return sorted((a.segment_ord, a.doc) for _, a in found)


def test_index_only_fields_are_searchable_in_reference_form_splits(tmp_path: Path) -> None:
    options = {"spark.indextables.indexing.indexonlyfields": "secret"}
    store, add = _write(tmp_path, options, 400)
    ref = SplitRef(add.path, add.size, add.footer_start_offset, add.footer_end_offset)
    entry = SplitEntry(ref, {}, add.doc_mapping_json)
    assert '"stored":false' in (add.doc_mapping_json or "").replace(" ", "")
    directory = SplitCache(str(tmp_path / "cache"), 1 << 30).fetch(store, store.uri, ref)
    schema = StructType(SCHEMA.fields[:2])
    rows = [
        r
        for b in read_split(
            directory,
            entry,
            arrow_schema(schema),
            search=SearchSpec(field_match={"secret": "token-7"}),
            conditions=(),
        )
        for r in b.to_pylist()
    ]
    assert sorted(r["id"] for r in rows) == [i for i in range(400) if i % 40 == 7]


def test_split_with_a_zstd_doc_store_fails_naming_the_split(tmp_path: Path) -> None:
    golden = next((GOLDEN / "01_single_write").glob("*.split"))
    unpacked = tmp_path / "unpacked"
    unbundle_split(golden.read_bytes(), unpacked)
    os.remove(unpacked / SPLIT_FIELDS)
    meta = json.loads((unpacked / "meta.json").read_text())
    meta["index_settings"]["docstore_compression"] = "zstd(compression_level=3)"
    (unpacked / "meta.json").write_text(json.dumps(meta))
    buffer = io.BytesIO()
    footer = write_split_bundle(unpacked, buffer)
    table = tmp_path / "table"
    table.mkdir()
    (table / "part-zstd.split").write_bytes(buffer.getvalue())
    store = LocalStore(str(table))
    ref = SplitRef(
        "part-zstd.split",
        footer.footer_end_offset,
        footer.footer_start_offset,
        footer.footer_end_offset,
    )
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    with pytest.raises(UnreadableSplitError, match=r"split part-zstd\.split .*zstd"):
        cache.fetch(store, store.uri, ref)
    assert os.listdir(cache.directory) == []  # nothing cached, nothing left behind
