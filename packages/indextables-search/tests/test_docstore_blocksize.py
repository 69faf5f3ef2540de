"""The doc-store block size of written splits: the default and mixed sizes.

A scattered hit decompresses its block up to the hit, so the default block size
bounds the cost of one row (docs/performance.md, "What each operation costs").
"""

from __future__ import annotations

import json
import struct
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.protocol.splitbundle import unbundle_split
from indextables.search import open_table, write_table
from indextables.search.options import DEFAULT_DOCSTORE_BLOCK_SIZE, parse_write
from indextables.search.read.docstore import (
    BlockCache,
    FieldSpec,
    StoreIndex,
    StorePart,
    decode_parts,
    impl,
    read_store,
)
from indextables.search.read.docstore.decode import checkpoints
from indextables.search.table.tableaccess import load_view
from indextables.search.write import merge as merge_module
from indextables.search.write.merge import merge_settings, merge_table
from indextables.search.write.segmentmerge import SegmentMergeRefused

# The chosen default, written out: the test fails if the default goes back to 16K.
CHOSEN = 4096
# Tantivy closes a block once it exceeds the size, so a block holds at most one
# document (and its 4-byte offset) beyond it; these rows are well under this.
_ROW_SLACK = 512
_KEY = "spark.indextables.indexWriter.docStoreBlockSize"


def _rows(count: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(count), pa.int64()),
            "s": [f"row {k} " + "ü" * (k % 60) for k in range(count)],
            "f": [None if k % 7 == 0 else k / 3 for k in range(count)],
        }
    )


def _stores(uri: Path, out: Path) -> tuple[list[StoreIndex], list[dict[str, object]]]:
    stores, metas = [], []
    for number, live in enumerate(load_view(str(uri), {}).splits):
        split = uri / live.path  # the live splits only (a merge leaves its sources' files)
        files = out / f"split-{number}"
        unbundle_split(split.read_bytes(), files, path=str(split))
        metas.append(json.loads((files / "meta.json").read_text()))
        stores += [read_store(p.read_bytes()) for p in sorted(files.glob("*.store"))]
    return stores, metas


def _block_sizes(store: StoreIndex) -> list[int]:
    """Each block's uncompressed size (an LZ4 block starts with it as a u32)."""
    assert store.compressor == "lz4"
    return [struct.unpack_from("<I", store.data, start)[0] for start in store.byte_starts]


def test_the_default_block_size_is_the_chosen_one() -> None:
    assert DEFAULT_DOCSTORE_BLOCK_SIZE == CHOSEN
    assert parse_write({}).docstore_block_size == CHOSEN


def test_a_split_written_with_default_options_has_blocks_of_the_default(tmp_path: Path) -> None:
    rows = _rows(6000)
    uri = tmp_path / "t"
    write_table(str(uri), rows)
    stores, metas = _stores(uri, tmp_path / "files")
    assert [m["index_settings"]["docstore_blocksize"] for m in metas] == [CHOSEN]  # type: ignore[index]
    full = []
    for store in stores:
        sizes = _block_sizes(store)
        assert max(sizes) <= CHOSEN + _ROW_SLACK, sizes
        full += sizes[:-1]  # every block but a store's last was closed by the size
    assert len(full) >= 20
    assert min(full) > CHOSEN // 2
    got = open_table(str(uri)).search(where="id >= 5990").sort_by("id")
    assert got.to_pylist() == rows.slice(5990).to_pylist()


def test_a_re_indexed_merge_writes_the_default_or_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MERGE SPLITS that re-indexes (a refused segment merge) writes blocks of
    ``indexWriter.docStoreBlockSize``, else the default, not its sources' size."""

    def refuse(sources: object, target: object) -> int:
        raise SegmentMergeRefused("refused for the test")

    monkeypatch.setattr(merge_module, "merge_segments", refuse)
    rows = _rows(3000)
    for option, want in ((None, CHOSEN), ("8K", 8192)):
        uri = tmp_path / f"t-{want}"
        for part in (rows.slice(0, 1500), rows.slice(1500)):
            write_table(str(uri), part, options={_KEY: "16K"})
        options = {_KEY: option} if option else {}
        assert merge_settings(options).docstore_block_size == want
        assert merge_table(str(uri), options=options)["new_files"] == 1
        _, metas = _stores(uri, tmp_path / f"files-{want}")
        assert [m["index_settings"]["docstore_blocksize"] for m in metas] == [want]  # type: ignore[index]
        got = open_table(str(uri)).search(where="id >= 2990").sort_by("id")
        assert got.to_pylist() == rows.slice(2990).to_pylist()


def _id_field(metas: list[dict[str, object]]) -> int:
    schema = metas[0]["schema"]
    assert isinstance(schema, list)
    return next(k for k, entry in enumerate(schema) if entry["name"] == "id")


def test_a_repeated_read_of_small_blocks_that_fit_is_cached(tmp_path: Path) -> None:
    # The block cache remembers misses by the bytes of their blocks: a repeated read
    # whose 4K blocks fit in the cache is admitted on its second run and served from
    # the cache on its third. Remembering a fixed number of misses sized for 16K
    # blocks (2 * max_bytes / 16 KiB) refused it: it touches more 4K blocks than that.
    uri = tmp_path / "t"
    write_table(str(uri), _rows(6000))
    stores, metas = _stores(uri, tmp_path / "files")
    blocks = sum(len(s.doc_starts) for s in stores)
    assert blocks > 40
    assert all(s.block_bytes == _block_sizes(s)[0] for s in stores)  # the store's own size
    assert all(CHOSEN // 2 < s.block_bytes <= CHOSEN + _ROW_SLACK for s in stores)
    total = sum(sum(_block_sizes(s)) for s in stores)
    cache = BlockCache(max_bytes=total + 2 * CHOSEN)  # every block fits
    assert blocks > 2 * cache._max // (16 << 10)  # more than the 16K rule remembered
    parts = [
        StorePart(store, list(store.doc_starts), cache, ("t", k)) for k, store in enumerate(stores)
    ]
    fields = {_id_field(metas): FieldSpec("id", "i64")}
    want = decode_parts([StorePart(p.store, p.doc_ids) for p in parts], fields)
    for _ in range(3):
        assert decode_parts(parts, fields).equals(want)
    assert len(cache) == blocks
    assert cache.hits == blocks  # the third run: every block from the cache
    assert cache.nbytes == total


def test_a_read_of_more_small_blocks_than_fit_is_not_remembered(tmp_path: Path) -> None:
    # The other side of the bound: blocks that would not fit are never remembered, so
    # a repeat never decompresses them whole only to churn the cache.
    uri = tmp_path / "t"
    write_table(str(uri), _rows(6000))
    stores, metas = _stores(uri, tmp_path / "files")
    blocks = sum(len(s.doc_starts) for s in stores)
    cache = BlockCache(max_bytes=(blocks - 4) * CHOSEN)
    parts = [
        StorePart(store, list(store.doc_starts), cache, ("t", k)) for k, store in enumerate(stores)
    ]
    fields = {_id_field(metas): FieldSpec("id", "i64")}
    for _ in range(3):
        decode_parts(parts, fields)
        assert cache.remembered == 0
    assert (len(cache), cache.hits) == (0, 0)
    few = [StorePart(p.store, p.doc_ids[:3], cache, p.cache_key) for p in parts[:1]]
    decode_parts(few, fields)
    assert cache.remembered == 3
    assert cache.remembered_bytes == 3 * stores[0].block_bytes


def test_checkpoints_are_kept_once_in_int64_arrays(tmp_path: Path) -> None:
    # A store's checkpoints are views of C int64 arrays (starts and ends of back-to-back
    # ranges one array of n + 1), and the kernels' Checkpoints read them in place: no
    # tuple of Python ints (~40 bytes a checkpoint each), no copy. At 20M rows the
    # tuples were ~86 MB of the process, the C copies another ~18 MB.
    uri = tmp_path / "t"
    write_table(str(uri), _rows(20_000))
    out = tmp_path / "files"
    split = uri / load_view(str(uri), {}).splits[0].path
    unbundle_split(split.read_bytes(), out, path=str(split))
    raw = max((p.read_bytes() for p in out.glob("*.store")), key=len)
    for name in ("python", "cython"):  # the kernels' first use (module state) apart
        impl.load(name).Checkpoints(b"\0" * 8, [0], [1], [0], [8])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        store = read_store(raw)
        parsed = tracemalloc.get_traced_memory()[0] - before
        blocks = len(store.doc_starts)
        views = {}
        for name in ("python", "cython"):
            ahead = tracemalloc.get_traced_memory()[0]
            views[name] = checkpoints(store, impl.load(name))
            views[name + " bytes"] = tracemalloc.get_traced_memory()[0] - ahead
    finally:
        tracemalloc.stop()
    assert blocks > 200
    for name in ("doc_starts", "doc_ends", "byte_starts", "byte_ends"):
        view = getattr(store, name)
        assert isinstance(view, memoryview), name
        assert (view.format, view.readonly) == ("q", True), name
    assert store.doc_starts.obj is store.doc_ends.obj  # one array of bounds
    assert store.byte_starts.obj is store.byte_ends.obj
    assert list(store.doc_ends[:-1]) == list(store.doc_starts[1:])
    assert parsed < 20 * blocks + 4096  # 16 bytes a checkpoint and the objects
    # Views of the store's arrays, not copies (those were 32 bytes a checkpoint).
    assert views["cython bytes"] < 4 * blocks + 2048
    assert views["python bytes"] < 4 * blocks + 2048
    assert store == read_store(raw)
    assert hash(store) == hash(read_store(raw))
    assert views["cython"].block_of(store.doc_starts[7] + 1) == 7


def test_reads_cycling_through_more_blocks_than_fit_never_churn_the_cache(
    tmp_path: Path,
) -> None:
    # The 20M-row exact match is one decode per split, each fitting the cache, all of
    # them together not (~32,000 4K blocks, ~131 MB against 64 MB): its misses must be
    # forgotten before its repeat reaches them, so no block is admitted only to push
    # the others out. (Remembering misses up to twice the cache's bytes admitted them.)
    uri = tmp_path / "t"
    write_table(str(uri), _rows(6000))
    stores, metas = _stores(uri, tmp_path / "files")
    store = max(stores, key=lambda s: len(s.doc_starts))
    firsts = list(store.doc_starts)
    quarter = len(firsts) // 4
    assert quarter > 8
    cache = BlockCache(max_bytes=2 * quarter * store.block_bytes)  # half of the blocks
    fields = {_id_field(metas): FieldSpec("id", "i64")}
    for _ in range(3):
        for k in range(4):
            ids = firsts[k * quarter : (k + 1) * quarter]
            got = decode_parts([StorePart(store, ids, cache, "s")], fields)
            assert got.column("id").to_pylist() == ids
    assert (len(cache), cache.hits) == (0, 0)
    assert cache.remembered_bytes <= cache._max + cache._max // 4
