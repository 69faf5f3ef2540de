"""write_table with several writers: the same rows as one writer, one commit, all or nothing."""

from __future__ import annotations

import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import ArgumentError, OptionError
from indextables.search.table.tableaccess import load_view, table_exists
from indextables.search.write import parallelwrite
from indextables.search.write.splitwriter import PartitionIndex

sys.path.insert(0, str(Path(__file__).resolve().parent))
from writedata import partition_column, random_table, row_multiset

SMALL_BATCHES = {"spark.indextables.indexWriter.batchSize": "40"}
# Every 40-row slice closes and uploads a split at once (rolled splits, balanced mode).
ROLL_EACH_SLICE = {
    **SMALL_BATCHES,
    "spark.indextables.write.optimizeWrite.enabled": "true",
    "spark.indextables.write.optimizeWrite.distributionMode": "balanced",
    "spark.indextables.write.optimizeWrite.maxSplitSize": "1",
}


@pytest.fixture(autouse=True)
def _writers_start_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small tables here: every writer starts at the first slice (the default waits for
    50,000 rows per running writer)."""
    monkeypatch.setattr(parallelwrite, "MIN_ROWS_PER_WRITER", 0)


def _split_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.split"))


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("seed", [11, 12])
def test_every_row_once_on_hostile_data(tmp_path: Path, workers: int, seed: int) -> None:
    data = random_table(seed, 400)
    uri = str(tmp_path)
    result = write_table(uri, data, options=SMALL_BATCHES, workers=workers)
    assert result.rows == 400
    # 10 slices of 40 rows: every writer that got rows wrote one split.
    assert 1 <= result.files_added <= workers
    if workers > 1:
        assert result.files_added > 1  # the writers really shared the rows
    assert len(load_view(uri, {}).splits.paths) == result.files_added
    back = open_table(uri).to_arrow()
    assert back.schema == data.schema
    assert row_multiset(back.to_pylist()) == row_multiset(data.to_pylist())
    assert len(_split_files(tmp_path)) == result.files_added  # no stray files


def test_partitioned_rows_with_two_writers(tmp_path: Path) -> None:
    data = random_table(13, 300)
    data = data.append_column("p", partition_column(random.Random(3), "string", 300))
    uri = str(tmp_path)
    write_table(uri, data, partition_by="p", options=SMALL_BATCHES, workers=2)
    back = open_table(uri).to_arrow().select(data.schema.names)
    assert row_multiset(back.to_pylist()) == row_multiset(data.to_pylist())


def test_one_slice_is_one_split_whatever_the_workers(tmp_path: Path) -> None:
    result = write_table(str(tmp_path), random_table(14, 30), workers=4)
    assert (result.files_added, result.rows) == (1, 30)


def test_writers_start_as_the_rows_come(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from indextables.search.write import tablewrite

    started: list[str] = []
    make = tablewrite.split_writer

    def counted(plan: Any) -> Any:
        started.append(plan.uri)
        return make(plan)

    monkeypatch.setattr(tablewrite, "split_writer", counted)
    # One more writer once every running one has had 100 rows: 250 rows, 40 at a time.
    monkeypatch.setattr(parallelwrite, "MIN_ROWS_PER_WRITER", 100)
    data = random_table(18, 250)
    result = write_table(str(tmp_path / "a"), data, options=SMALL_BATCHES, workers=8)
    assert len(started) == 3  # at the first slice, after 120 rows and after 240
    assert 1 <= result.files_added <= 3
    assert row_multiset(open_table(str(tmp_path / "a")).to_arrow().to_pylist()) == row_multiset(
        data.to_pylist()
    )
    started.clear()
    small = write_table(str(tmp_path / "b"), data.slice(0, 100), options=SMALL_BATCHES, workers=8)
    assert (len(started), small.files_added) == (1, 1)


def test_a_failing_writer_commits_nothing_and_leaves_no_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {"n": 0}
    original = PartitionIndex.add

    def add(self: PartitionIndex, *args: Any, **kwargs: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 6:
            raise RuntimeError("disk full in writer")
        original(self, *args, **kwargs)

    uri = str(tmp_path / "t")
    version = write_table(uri, random_table(15, 20)).version  # one split
    before = _split_files(tmp_path / "t")
    monkeypatch.setattr(PartitionIndex, "add", add)
    with pytest.raises(RuntimeError, match="disk full"):
        write_table(uri, random_table(16, 400), options=ROLL_EACH_SLICE, workers=2)
    assert load_view(uri, {}).version == version
    assert _split_files(tmp_path / "t") == before  # splits uploaded before the failure: gone


def test_a_failure_while_uploading_deletes_the_other_writers_splits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.search.write.splitwriter import SplitWriter

    original = SplitWriter._upload
    calls = {"n": 0}

    def upload(self: SplitWriter, *args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("upload refused")
        return original(self, *args)

    monkeypatch.setattr(SplitWriter, "_upload", upload)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where index directories go
    uri = str(tmp_path / "t")
    with pytest.raises(OSError, match="upload refused"):
        write_table(uri, random_table(17, 400), options=SMALL_BATCHES, workers=2)
    assert not table_exists(uri, {})
    assert _split_files(tmp_path) == []
    assert os.listdir(scratch) == []  # every writer's index directory removed


def test_discarding_an_uncommitted_index_stops_its_tantivy_writer_first() -> None:
    """A writer left running keeps an indexing thread that may create segment files while
    (or after) the directory is removed: discard() stops it, then removes the directory."""
    import tantivy

    from indextables.search.options import parse_indexing
    from indextables.search.schema.mapping import field_specs, tantivy_schema

    table = random_table(18, 60)
    specs = tuple(field_specs(table.schema, parse_indexing({})))
    schema = tantivy_schema(specs, row_key=True)
    part = PartitionIndex.create(specs, schema, heap_size=15_000_000)
    for batch in table.to_batches(max_chunksize=20):
        part.add(batch, specs, schema)
    part.discard()
    assert not os.path.exists(part.directory)
    with pytest.raises(RuntimeError, match="consumed"):  # stopped: no thread writes any more
        part.writer.add_document(tantivy.Document())
    part.discard()  # twice is harmless


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_workers_must_be_a_positive_int(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ArgumentError, match="workers="):
        write_table(str(tmp_path), pa.table({"a": [1]}), workers=bad)  # type: ignore[arg-type]


def test_default_is_the_cores_this_process_may_use() -> None:
    assert parallelwrite.check_workers(None) == len(os.sched_getaffinity(0))


THREADS = "spark.indextables.indexWriter.threads"


def test_the_threads_option_sets_the_writers_and_the_keyword_wins(tmp_path: Path) -> None:
    data = random_table(19, 400)
    two = write_table(str(tmp_path / "a"), data, options={**SMALL_BATCHES, THREADS: "2"})
    assert two.files_added == 2
    one = write_table(str(tmp_path / "b"), data, options={**SMALL_BATCHES, THREADS: "2"}, workers=1)
    assert one.files_added == 1
    for uri in ("a", "b"):
        back = open_table(str(tmp_path / uri)).to_arrow().to_pylist()
        assert row_multiset(back) == row_multiset(data.to_pylist())


@pytest.mark.parametrize("bad", ["0", "-2", "two", ""])
def test_a_bad_threads_option_names_the_key(tmp_path: Path, bad: str) -> None:
    with pytest.raises(OptionError, match=r"indexWriter\.threads"):
        write_table(str(tmp_path), pa.table({"a": [1]}), options={THREADS: bad})
    assert not table_exists(str(tmp_path), {})
