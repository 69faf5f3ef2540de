"""The companion build's Parquet read: batches decoded ahead by a reader thread, only the
indexed columns read, a failure inside a file named (docs/companion.md, "How a sync works")."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_companion import canonical, hostile

from indextables.search import build_companion, open_table
from indextables.search.companion.parallel import PARALLELISM_OPTION
from indextables.search.companion.readahead import read_ahead
from indextables.search.errors import CompanionSourceError

CACHE = "spark.indextables.cache.directoryPath"


def _batches(count: int, *, fail_at: int | None = None) -> Iterator[pa.RecordBatch]:
    for number in range(count):
        if number == fail_at:
            raise pa.ArrowInvalid(f"broken batch {number}")
        yield pa.record_batch({"n": [number]})


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "indextables-companion-read"]


def test_batches_come_out_in_order_and_the_reader_ends() -> None:
    got = [b.column(0)[0].as_py() for b in read_ahead(_batches(50), depth=3)]
    assert got == list(range(50))
    assert _readers() == []


def test_a_read_error_is_raised_at_its_batch() -> None:
    seen: list[int] = []

    def drain() -> None:
        for batch in read_ahead(_batches(20, fail_at=7)):
            seen.append(batch.column(0)[0].as_py())

    with pytest.raises(pa.ArrowInvalid, match="broken batch 7"):
        drain()
    assert seen == list(range(7))
    assert _readers() == []


def test_closing_early_stops_the_reader() -> None:
    pulled = []

    def endless() -> Iterator[pa.RecordBatch]:
        number = 0
        while True:
            pulled.append(number)
            yield pa.record_batch({"n": [number]})
            number += 1

    reader = read_ahead(endless(), depth=2)
    assert next(reader).column(0)[0].as_py() == 0
    reader.close()
    assert _readers() == []
    assert len(pulled) <= 4  # the batch taken, two queued and one waiting to be queued


def _source(root: Path) -> pa.Table:
    rng = random.Random(5)
    root.mkdir()
    tables = [hostile(rng, 10_000 * n, 3000) for n in range(2)]
    for number, table in enumerate(tables):
        # small row groups and pages: many batches per file
        pq.write_table(table, root / f"part-{number}.parquet", row_group_size=700)
    return pa.concat_tables(tables)


def test_only_the_indexed_columns_are_read_and_reads_are_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _source(tmp_path / "src")
    asked: list[tuple[str, ...]] = []
    iter_batches = pq.ParquetFile.iter_batches

    def spy(self: pq.ParquetFile, *args: Any, **kwargs: Any) -> Any:
        asked.append(tuple(kwargs.get("columns") or ()))
        return iter_batches(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    index = tmp_path / "idx"
    result = build_companion(
        str(tmp_path / "src"), str(index), source_format="parquet", exclude_columns=["x"],
        options={PARALLELISM_OPTION: "1"},
    )  # fmt: skip
    assert result.parquet_files_indexed == 2
    assert asked
    assert all("x" not in columns and "s" in columns for columns in asked)
    table = open_table(str(index), options={CACHE: str(tmp_path / "cache")})
    # Every column still reads back from the Parquet files, the excluded one included.
    assert canonical(table.to_arrow()) == canonical(expected)
    assert table.search(where="id = 11500").column("id").to_pylist() == [11500]


def test_a_file_broken_inside_is_the_source_error_naming_it(tmp_path: Path) -> None:
    _source(tmp_path / "src")
    path = tmp_path / "src" / "part-1.parquet"
    metadata = pq.read_metadata(path)
    data = bytearray(path.read_bytes())
    # The footer is intact (the file opens); a later row group's page header is garbage.
    start = metadata.row_group(2).column(0).data_page_offset
    data[start : start + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    with pytest.raises(CompanionSourceError, match=r"part-1\.parquet.*cannot be read"):
        build_companion(
            str(tmp_path / "src"), str(tmp_path / "idx"), source_format="parquet",
            options={PARALLELISM_OPTION: "1"},
        )  # fmt: skip
