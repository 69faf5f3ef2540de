"""The doc-store block size of written splits: the default (issue 24) and mixed sizes.

A scattered hit decompresses its block up to the hit, so the default block size
bounds the cost of one row (docs/performance.md, "Doc-store block size").
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.protocol.splitbundle import unbundle_split
from indextables.search import open_table, write_table
from indextables.search.options import DEFAULT_DOCSTORE_BLOCK_SIZE, parse_write
from indextables.search.read.docstore import StoreIndex, read_store
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
