"""Whole-split reads (every row of a split, each column from its fastest exact source)
give exactly the rows and the order of the per-hit path, on random hostile tables;
splits with deleted documents, failed decodes and merged splits stay correct; several
splits read at once come back in order."""

from __future__ import annotations

import dataclasses
import logging
import os
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
import tantivy
from diffcases import OPTIONS, PARTITION_BY, rows

from indextables.search import open_table, write_table
from indextables.search.errors import OptionError
from indextables.search.options import parse_read
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read import bulkrows, splitorder, splitreader, wholesplit
from indextables.search.read.docstore import DocStoreError
from indextables.search.read.plan import plan_splits
from indextables.search.read.rowcopy import RowCopy
from indextables.search.read.splitreader import (
    SplitEntry,
    open_split,
    read_split,
    split_traits,
)
from indextables.search.splits.entryid import content_identity
from indextables.search.splits.splitcache import SplitCache
from indextables.search.splits.splitfetch import SplitRef
from indextables.search.table.tableaccess import load_view, open_table_store
from indextables.search.write.merge import merge_table
from indextables.search.write.splitwriter import ROWS_FILE

COPY_KEY = "spark.indextables.indexWriter.arrowCopy"


def _bits(table: pa.Table, *, one_nan: bool = False) -> pa.Table:
    """``table`` with float columns as their bit patterns (NaN payloads and -0.0 compared;
    with ``one_nan``, every NaN as one: a float32 NaN stored as a double comes back quiet)."""
    columns = []
    for column in table.columns:
        data = column.combine_chunks()
        if pa.types.is_floating(data.type) and one_nan:
            nan = pa.scalar(float("nan"), data.type)
            data = pc.if_else(pc.fill_null(pc.is_nan(data), False), nan, data)
        if pa.types.is_float32(data.type):
            data = data.view(pa.uint32())
        elif pa.types.is_float64(data.type):
            data = data.view(pa.uint64())
        columns.append(data)
    return pa.table(columns, names=table.column_names)


def _spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of the whole-split reads taken and of their copy slices."""
    counts = {"whole": 0, "copy": 0, "covering": 0}
    real_whole, real_take = wholesplit._batches, wholesplit._CopyCursor.take
    real_scan = splitreader._scan_rows

    def scan(*args: object, **kwargs: object) -> Iterator[pa.RecordBatch]:
        counts["covering"] += 1
        return real_scan(*args, **kwargs)  # type: ignore[arg-type]

    def whole(*args: object, **kwargs: object) -> Iterator[pa.RecordBatch]:
        counts["whole"] += 1
        return real_whole(*args, **kwargs)  # type: ignore[arg-type]

    def take(self: object, rows: int) -> dict[str, pa.Array]:
        counts["copy"] += 1
        return real_take(self, rows)  # type: ignore[arg-type]

    monkeypatch.setattr(wholesplit, "_batches", whole)
    monkeypatch.setattr(splitreader, "_scan_rows", scan)
    monkeypatch.setattr(wholesplit._CopyCursor, "take", take)
    return counts


def _per_hit(monkeypatch: pytest.MonkeyPatch, read: object) -> pa.Table:
    """``read()`` with whole-split reads turned off (today's per-hit path)."""
    with monkeypatch.context() as patch:
        patch.setattr(wholesplit, "ENABLED", False)
        return read()  # type: ignore[operator]


def _written(tmp_path: Path, seed: int, mode: str, *, appends: int = 3) -> tuple[str, pa.Table]:
    data = rows(seed, 180 + seed % 50)
    uri = str(tmp_path / f"t-{seed}-{mode}")
    step = -(-data.num_rows // appends)
    for start in range(0, data.num_rows, step):
        write_table(
            uri,
            data.slice(start, step),
            partition_by=PARTITION_BY,
            options={**OPTIONS, COPY_KEY: mode},
            workers=1,
        )
    return uri, data


@pytest.mark.parametrize("mode", ["required", "numeric", "all"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_whole_split_reads_equal_the_per_hit_path_and_the_written_rows(
    tmp_path: Path, seed: int, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri, data = _written(tmp_path, seed, mode)
    table = open_table(uri)
    rng = random.Random(seed)
    names = table.schema.names
    reads: list[dict[str, object]] = [
        {},
        {"columns": rng.sample(names, rng.randint(1, len(names)))},
        {"where": "p = 'p1'"},
        {"columns": ["dec", "j", "id"], "where": "p IS NULL OR dec > 0"},
    ]
    monkeypatch.setattr(wholesplit, "WHOLE_ROWS", rng.choice([7, 64, 65_536]))
    for kwargs in reads:
        spied = _spy(monkeypatch)
        found = table.to_arrow(**kwargs)  # type: ignore[arg-type]
        # every split read whole: from the covering copy (as before) or column by column
        read_whole = spied["whole"] + spied["covering"]
        assert read_whole == len(table.files) or ("where" in kwargs and read_whole), kwargs
        before = _per_hit(monkeypatch, lambda kw=kwargs: table.to_arrow(**kw))
        # NaN payloads aside: the per-hit path reads float32 columns from the doc store
        # (stored as doubles: a signaling NaN comes back quiet), a whole read from the copy when it
        # holds them (the written bits, checked below)
        assert _bits(found, one_nan=True).equals(_bits(before, one_nan=True)), kwargs
        assert found.schema == before.schema
        # the rows themselves: those written, in any order, each column exactly
        ids = found.column("id") if "id" in found.column_names else None
        if ids is not None:
            order = pc.sort_indices(ids)
            expected = data.take(ids.combine_chunks()).select(found.column_names)
            typed = pa.table(
                [c.cast(f.type) for c, f in zip(expected.columns, found.schema, strict=True)],
                schema=found.schema,
            )
            written = _bits(typed.take(order), one_nan=True)
            assert _bits(found.take(order), one_nan=True).equals(written), kwargs
            if mode != "required":  # the copy holds the floats: their very bits
                floats = [n for n in found.column_names if n in ("f32", "f64")]
                exact = _bits(typed.take(order).select(floats))
                assert _bits(found.take(order).select(floats)).equals(exact), kwargs


def test_a_merged_split_reads_whole_in_its_documents_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = rows(7, 300)
    uri = str(tmp_path / "merged")
    for start in range(0, 300, 60):
        write_table(
            uri, data.slice(start, 60), partition_by=PARTITION_BY, options=OPTIONS, workers=1
        )
    before_merge = len(open_table(uri).files)
    assert merge_table(uri)["new_files"] >= 1
    table = open_table(uri)
    assert len(table.files) < before_merge
    spied = _spy(monkeypatch)
    found = table.to_arrow()
    assert spied["whole"] > 0
    assert spied["copy"] > 0  # the merged copy read whole
    before = _per_hit(monkeypatch, table.to_arrow)
    assert _bits(found, one_nan=True).equals(_bits(before, one_nan=True))
    assert sorted(found.column("id").to_pylist()) == list(range(300))


def _tantivy_split(directory: Path, *, delete: bool) -> tantivy.Searcher:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("n", stored=True, indexed=True, fast=True)
    builder.add_text_field("s", stored=True)
    index = tantivy.Index(builder.build(), path=str(directory))
    writer = index.writer(15_000_000, 1)
    for n in range(6):
        writer.add_document(tantivy.Document(n=n, s=f"row {n}"))
    writer.commit()
    if delete:
        writer.delete_documents_by_term("n", 3)
        writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index.searcher()


@pytest.mark.parametrize("delete", [False, True])
def test_a_split_with_deleted_documents_reads_only_its_live_rows(
    tmp_path: Path, delete: bool
) -> None:
    searcher = _tantivy_split(tmp_path, delete=delete)
    directory = str(tmp_path)
    schema = pa.schema([("n", pa.int64()), ("s", pa.string())])
    whole = wholesplit.whole_split_batches(
        directory,
        content_identity(directory),
        searcher,
        schema,
        partition_values={},
        fields={},
        copy=None,
    )
    live = [n for n in range(6) if not (delete and n == 3)]
    if delete:
        assert searcher.num_docs == 5
        assert whole is None  # the stores still hold row 3: only the searcher knows it is gone
    else:
        assert whole is not None
        assert pa.Table.from_batches(list(whole), schema=schema).column("n").to_pylist() == live
    entry = SplitEntry(SplitRef("t.split", 0))
    read = list(read_split(directory, entry, schema, search=SearchSpec(), conditions=()))
    table = pa.Table.from_batches(read, schema=schema)
    assert table.to_pylist() == [{"n": n, "s": f"row {n}"} for n in live]


def test_a_decode_failing_mid_split_reads_the_rest_hit_by_hit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    uri, _ = _written(tmp_path, 11, "required", appends=1)
    table = open_table(uri)
    before = _per_hit(monkeypatch, table.to_arrow)
    monkeypatch.setattr(wholesplit, "WHOLE_ROWS", 5)
    real = bulkrows.whole_columns
    calls = {"n": 0}

    def failing(*args: object, **kwargs: object) -> list[bulkrows.BulkColumns]:
        calls["n"] += 1
        if calls["n"] == 3:
            raise DocStoreError("a damaged block")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(bulkrows, "whole_columns", failing)
    with caplog.at_level(logging.WARNING):
        found = table.to_arrow()
    assert calls["n"] >= 3
    assert "whole-split read failed" in caplog.text
    assert _bits(found).equals(_bits(before))


def test_a_copy_out_of_document_order_is_not_read_whole(tmp_path: Path) -> None:
    uri, _ = _written(tmp_path, 5, "all", appends=2)
    view = load_view(uri, {})
    entries = plan_splits(view, {}, ())
    cache = SplitCache(str(tmp_path / "cache"), 2 << 30)
    refs = [entry.ref for entry in entries]
    with cache.directories(uri, refs, lambda: open_table_store(uri, {})) as directory:
        for number in range(len(refs)):
            found = directory(number)
            identity = content_identity(found)
            _, searcher = open_split(found, identity=identity)
            copy = RowCopy.open(os.path.join(found, ROWS_FILE), identity=identity)
            assert copy is not None
            copy = copy.resolved(split_traits(found, identity=identity).segments)
            stores = bulkrows.split_stores(found, identity=identity)
            assert wholesplit.copy_in_doc_order(found, identity, searcher, copy, stores)
            # the same copy said to hold the segment's rows one batch later
            shifted = dataclasses.replace(
                copy, segment_batches={"x": 1}, offsets=(1,) * len(stores.stores)
            )
            assert not wholesplit.copy_in_doc_order(found, identity, searcher, shifted, stores)


@pytest.mark.parametrize("threads", ["1", "2", "4"])
def test_split_threads_keep_the_rows_and_their_order(tmp_path: Path, threads: str) -> None:
    uri, _ = _written(tmp_path, 21, "required", appends=4)
    one = open_table(uri, options={"spark.indextables.read.splitThreads": "1"}).to_arrow()
    table = open_table(uri, options={"spark.indextables.read.splitThreads": threads})
    assert len(table.files) >= 4
    assert _bits(table.to_arrow()).equals(_bits(one))
    assert _bits(table.to_arrow(where="p = 'P1'")).equals(
        _bits(open_table(uri).to_arrow(where="p = 'P1'"))
    )


@pytest.mark.parametrize("value", ["0", "-1", "65", "two"])
def test_a_bad_split_threads_option_is_refused_by_name(value: str) -> None:
    with pytest.raises(OptionError, match=r"read\.splitThreads"):
        parse_read({"spark.indextables.read.splitThreads": value})


def test_at_most_the_asked_splits_are_read_ahead() -> None:
    started: list[int] = []
    lock = threading.Lock()

    def batches(i: int) -> Iterator[pa.RecordBatch]:
        with lock:
            started.append(i)
        yield pa.record_batch({"split": [i]})

    reader = splitorder.ordered_batches(batches, 8, parallel=True, threads=2)
    first = next(reader)
    time.sleep(0.2)  # room for any extra read to start (none may)
    assert first.column(0).to_pylist() == [0]
    assert len(started) <= 2
    rest = [b.column(0)[0].as_py() for b in reader]
    assert rest == list(range(1, 8))
    assert sorted(started) == list(range(8))


def test_to_polars_reads_the_rows_polars_keeps(tmp_path: Path) -> None:
    pl = pytest.importorskip("polars")
    uri, data = _written(tmp_path, 31, "required", appends=2)
    table = open_table(uri)
    got = table.to_polars(columns=["id", "s", "i32"], where="i32 > 0").sort("id")
    frame = pl.from_arrow(data.select(["id", "s", "i32"]))
    expected = frame.filter(pl.col("i32") > 0).sort("id")
    assert got.to_dicts() == expected.to_dicts()


@pytest.mark.parametrize("mode", ["required", "all"])
def test_a_projection_reads_the_same_rows_as_the_whole_table(tmp_path: Path, mode: str) -> None:
    """Only the asked columns are read from the copy: each projection equals those columns
    of the whole read, which equals the written rows."""
    uri, data = _written(tmp_path, 41, mode, appends=2)
    table = open_table(uri)
    whole = table.to_arrow()
    expected = data.take(whole.column("id").combine_chunks()).select(whole.column_names)
    typed = [c.cast(f.type) for c, f in zip(expected.columns, whole.schema, strict=True)]
    assert _bits(whole, one_nan=True).equals(
        _bits(pa.table(typed, schema=whole.schema), one_nan=True)
    )
    rng = random.Random(41)
    for _ in range(6):
        names = rng.sample(whole.column_names, rng.randint(1, 4))
        assert _bits(table.to_arrow(columns=names)).equals(_bits(whole.select(names))), names


def test_polars_full_reads_take_the_whole_split_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pl = pytest.importorskip("polars")
    from indextables.search.polars import scan_indextables

    uri, data = _written(tmp_path, 51, "required", appends=2)
    table = open_table(uri)
    spied = _spy(monkeypatch)
    frame = scan_indextables(table).select(["id", "s", "t"]).collect()
    assert spied["whole"] == len(table.files)
    expected = pl.from_arrow(data.select(["id", "s", "t"]))
    assert frame.sort("id").to_dicts() == expected.sort("id").to_dicts()
    found = scan_indextables(table).filter(pl.col("t").str.contains("alpha")).collect()
    kept = pl.from_arrow(data).filter(pl.col("t").str.contains("alpha"))
    assert sorted(found["id"].to_list()) == sorted(kept["id"].to_list())


def test_rows_deleted_by_delete_rows_stay_deleted_in_a_full_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.search import delete_rows

    uri, data = _written(tmp_path, 61, "required", appends=2)
    delete_rows(uri, where="i32 > 0")
    table = open_table(uri)
    spied = _spy(monkeypatch)
    found = table.to_arrow(columns=["id", "i32", "t"])
    kept = data.filter(pc.fill_null(pc.less_equal(data.column("i32"), 0), True))
    assert sorted(found.column("id").to_pylist()) == sorted(kept.column("id").to_pylist())
    assert spied["whole"] < len(table.files)  # the splits with deletes: live documents only
