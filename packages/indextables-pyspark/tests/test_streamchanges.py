"""The streaming source over commits that remove rows (Delta's rules: stop by default,
``ignoreDeletes`` skips commits that only remove splits, ``skipChangeCommits`` skips every
commit that removes rows).

The source reader is driven directly (its offsets are versions), over tables the engine
writes, deletes from, replaces, overwrites and merges; the oracle is a model of the rows
each commit appended.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StructField, StructType

from indextables.pyspark.streamchanges import StreamChangeError
from indextables.pyspark.streaming import IndexTablesStreamReader
from indextables.search import delete_rows, merge_splits, open_table, write_table
from indextables.search.errors import OptionError

SCHEMA = StructType([StructField("id", LongType()), StructField("day", LongType())])


def _rows(ids: range) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "day": pa.array([i % 2 for i in ids])})


def _stream(path: str, start: int, **options: str) -> list[int]:
    """Every id the source emits for versions after ``start`` up to the latest."""
    reader = IndexTablesStreamReader(path, options, SCHEMA)
    end = reader.latestOffset()
    ids: list[int] = []
    for task in reader.partitions({"version": start}, end):
        for batch in reader.read(task):
            ids.extend(pa.record_batch(batch).column(0).to_pylist())
    return sorted(ids)


def _table(tmp_path: Path) -> tuple[str, int]:
    path = str(tmp_path / "t")
    write_table(path, _rows(range(10)), partition_by="day")
    return path, open_table(path).version


def test_a_delete_stops_the_stream_naming_its_version(tmp_path: Path) -> None:
    path, start = _table(tmp_path)
    write_table(path, _rows(range(10, 14)))
    version = delete_rows(path, where="id = 3").version  # rewrites a split: remove + add
    with pytest.raises(StreamChangeError, match=rf"version {version}\b.*skipChangeCommits"):
        _stream(path, start)
    with pytest.raises(StreamChangeError):  # ignoreDeletes does not cover a rewrite
        _stream(path, start, ignoreDeletes="true")
    # skipChangeCommits: the delete's commit is skipped whole, no row emitted twice
    assert _stream(path, start, skipChangeCommits="true") == list(range(10, 14))


def test_ignore_deletes_skips_commits_that_only_remove_splits(tmp_path: Path) -> None:
    path, start = _table(tmp_path)
    delete_rows(path, where="day = 1")  # every row of day=1's split: only removed
    write_table(path, _rows(range(20, 23)))
    with pytest.raises(StreamChangeError, match="ignoreDeletes"):
        _stream(path, start)
    assert _stream(path, start, ignoreDeletes="TRUE") == [20, 21, 22]
    assert _stream(path, start, skipChangeCommits="true") == [20, 21, 22]


def test_replace_and_overwrite_are_change_commits(tmp_path: Path) -> None:
    path, start = _table(tmp_path)
    write_table(path, _rows(range(30, 32)), mode="overwrite", replace_where="id >= 30 OR day = 0")
    write_table(path, _rows(range(40, 43)))
    write_table(path, _rows(range(50, 51)), mode="overwrite")
    write_table(path, _rows(range(60, 62)))
    with pytest.raises(StreamChangeError, match=f"version {start + 1}"):
        _stream(path, start)
    assert _stream(path, start, skipChangeCommits="true") == [40, 41, 42, 60, 61]


def test_merges_emit_nothing_and_do_not_stop_the_stream(tmp_path: Path) -> None:
    path, start = _table(tmp_path)
    write_table(path, _rows(range(10, 20)), partition_by="day")
    merge_splits(path)
    write_table(path, _rows(range(70, 72)))
    assert _stream(path, start) == [*range(10, 20), 70, 71]
    assert _stream(path, -1) == [*range(20), 70, 71]  # the snapshot when starting at -1


def test_the_options_are_checked() -> None:
    with pytest.raises(OptionError, match="skipChangeCommits"):
        IndexTablesStreamReader("/nowhere", {"skipChangeCommits": "yes"}, SCHEMA)
