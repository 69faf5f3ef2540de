"""The segments feed is the default of every write path; ``indexWriter.feed=json`` switches back.

Which writer made a split is read from the split itself: its ``.managed.json`` (a
member of the bundle) is written by the segment writer as ``json.dumps`` of the sorted
file names (``", "`` between them), by Tantivy as compact JSON and a newline (``","``, no space).
The rows and searches of each written table are checked against pyarrow.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from indextables.protocol.splitbundle import parse_split_footer
from indextables.search import delete_rows, merge_splits, open_table, write_table
from indextables.search.options import DEFAULT_FEED, WriteOptions, parse_write
from indextables.search.table.tableaccess import load_view
from indextables.search.write.merge import MergeSettings, merge_settings

FEED_KEY = "spark.indextables.indexWriter.feed"
JSON = {FEED_KEY: "json"}


def split_writers(uri: str) -> list[str]:
    """Per live split, ``"segments"`` (the segment writer) or ``"tantivy"`` (tantivy-py)."""
    found: list[str] = []
    live = load_view(uri, {}).splits
    for split in live.select(range(len(live.paths))):
        data = (Path(uri) / split.path).read_bytes()
        start = split.entry.ref.footer_start_offset or 0
        files = parse_split_footer(data, footer_start_offset=start, path=split.path).files
        begin, end = files[".managed.json"]
        raw = data[begin:end].decode()
        names = json.loads(raw)
        if raw == json.dumps(sorted(names)):
            found.append("segments")
        elif raw == json.dumps(names, separators=(",", ":")) + "\n":
            found.append("tantivy")
        else:
            raise AssertionError(f"{split.path}: .managed.json of neither writer: {raw!r}")
    return found


def _data(n: int = 300) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "s": pa.array([f"k{i % 7}" if i % 11 else None for i in range(n)]),
            "p": pa.array(["a" if i % 3 else "b" for i in range(n)]),
            "f": pa.array([i / 8 for i in range(n)]),
        }
    )


def _check_rows(uri: str, data: pa.Table) -> None:
    table = open_table(uri)
    got = table.to_arrow().sort_by("id").select(data.column_names)
    assert got.to_pylist() == data.sort_by("id").to_pylist()
    model = pc.filter(data.column("id"), pc.equal(data.column("s"), "k3")).to_pylist()
    assert sorted(table.search("s:k3", columns=["id"]).column("id").to_pylist()) == model


def test_the_default_feed_is_segments() -> None:
    assert DEFAULT_FEED == "segments"
    assert parse_write({}).feed == "segments"
    assert WriteOptions().feed == "segments"
    assert merge_settings({}).feed == "segments"
    assert MergeSettings(1 << 26, 1000, None).feed == "segments"
    assert parse_write(JSON).feed == "json"
    assert merge_settings(JSON).feed == "json"


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize(("options", "writer"), [({}, "segments"), (JSON, "tantivy")])
def test_write_table_writes_through_the_default_feed(
    tmp_path: Path, workers: int, options: dict[str, str], writer: str
) -> None:
    # workers=2: two split writers in threads (parallelwrite), one split each and value.
    data = _data()
    uri = str(tmp_path / "t")
    write_table(uri, data, partition_by="p", options=options, workers=workers)
    writers = split_writers(uri)
    assert len(writers) >= 2
    assert set(writers) == {writer}
    _check_rows(uri, data)


@pytest.mark.parametrize(("options", "writer"), [({}, "segments"), (JSON, "tantivy")])
def test_a_re_indexing_merge_writes_through_the_default_feed(
    tmp_path: Path, options: dict[str, str], writer: str
) -> None:
    # Written by tantivy-py, merged with the purge of deleted rows (a re-indexing merge).
    data = _data()
    uri = str(tmp_path / "t")
    for offset in range(0, 300, 100):
        write_table(uri, data.slice(offset, 100), options=JSON, workers=1)
    assert set(split_writers(uri)) == {"tantivy"}
    delete_rows(uri, where="id < 50")
    result = merge_splits(uri, purge_deletes=True, options=options)
    assert result.splits_written > 0
    assert set(split_writers(uri)) == {writer}
    _check_rows(uri, data.filter(pc.greater_equal(data.column("id"), 50)))
