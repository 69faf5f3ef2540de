"""Companion indexes over Delta tables with deletion vectors: deleted rows are never
returned, counted or aggregated, and a changed vector on an unchanged path is re-indexed.

Fixtures: two tables written by Databricks Runtime, vendored from delta-rs
(tests/fixtures/NOTICE), and deletion vectors committed by hand (inline, Z85) over
tables deltalake writes (delta-rs 1.6 writes none itself).
"""

from __future__ import annotations

import json
import random
import shutil
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from indextables.search import build_companion, open_table
from indextables.search.companion import parallel
from indextables.search.companion.deletions import DeletedRows
from indextables.search.companion.read import split_manifest
from indextables.search.splits.splitcache import SplitCache
from indextables.search.table.tableaccess import open_table_store

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SMALL = FIXTURES / "delta-table-with-dv-small"
LOGS = FIXTURES / "delta-table_with_deletion_logs"


@pytest.fixture
def cache(tmp_path: Path) -> dict[str, str]:
    return {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}


def canonical(table: pa.Table) -> list[tuple[Any, ...]]:
    names = sorted(table.column_names)
    rows = table.select(names).to_pylist()
    return sorted(tuple(repr(r[n]) for n in names) for r in rows)


def copy_fixture(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / source.name
    shutil.copytree(source, target)
    return target


def rows_honouring_dvs(root: Path, version: int | None = None) -> pa.Table:
    """The table's rows as a reader honouring deletion vectors sees them: each data file
    read with pyarrow, less the rows deltalake's decoded selection vectors delete."""
    table = DeltaTable(str(root), version=version)
    keep: dict[str, list[bool]] = {}
    for row in pa.table(table.deletion_vectors().read_all()).to_pylist():
        keep[row["filepath"].rsplit("/", 1)[-1]] = row["selection_vector"]
    parts = []
    for path in pa.table(table.get_add_actions(flatten=True))["path"].to_pylist():
        data = pq.read_table(root / unquote(path), partitioning=None)
        mask = keep.get(path.rsplit("/", 1)[-1])
        if mask is not None:
            full = [*mask, *([True] * (data.num_rows - len(mask)))]
            data = data.filter(pa.array(full))
        parts.append(data)
    return pa.concat_tables(parts, promote_options="default")


# -- the fixtures written by Databricks ---------------------------------------------------


def test_rows_a_deletion_vector_deletes_are_never_returned_counted_or_aggregated(
    tmp_path: Path, cache: dict[str, str]
) -> None:
    index = str(tmp_path / "idx")
    result = build_companion(str(SMALL), index, source_format="delta")
    assert (result.status, result.parquet_files_indexed, result.source_version) == ("success", 1, 1)
    found = open_table(index, options=cache)
    # The commit deleted `value IN (0, 9)` from the one file of values 0..9.
    assert sorted(found.to_arrow()["value"].to_pylist()) == list(range(1, 9))
    assert canonical(found.to_arrow()) == canonical(rows_honouring_dvs(SMALL))
    assert found.count() == 8
    assert found.count(where="value >= 0") == 8
    assert found.count(query="value:0") == 0
    assert found.search(query="value:9").num_rows == 0
    assert found.search(query="value:[0 TO 2]")["value"].to_pylist() == [1, 2]
    agg = found.aggregate(
        metrics={
            "n": "count",
            "s": ("sum", "value"),
            "lo": ("min", "value"),
            "hi": ("max", "value"),
        }
    ).to_pylist()
    assert agg == [{"n": 8, "s": 36, "lo": 1, "hi": 8}]
    assert found.search(where="value = 0").num_rows == 0


def test_a_changed_deletion_vector_on_an_unchanged_path_is_reindexed(
    tmp_path: Path, cache: dict[str, str]
) -> None:
    """Versions 2 (no vector), 3 (deletes id 12), 4 (also id 89): one file throughout."""
    index = str(tmp_path / "idx")

    def sync(version: int | None) -> Any:
        return build_companion(str(LOGS), index, source_format="delta", from_version=version)

    def ids() -> list[int]:
        return sorted(open_table(index, options=cache).to_arrow()["id"].to_pylist())

    first = sync(2)
    assert (first.parquet_files_indexed, first.source_version) == (1, 2)
    every = ids()
    assert len(every) == 100
    assert 12 in every
    assert 89 in every
    third = sync(3)  # the same path and size, a deletion vector added
    assert (third.splits_invalidated, third.parquet_files_indexed) == (1, 1)
    assert ids() == [i for i in every if i != 12]
    fourth = sync(4)  # the vector replaced by one deleting two rows
    assert (fourth.splits_invalidated, fourth.parquet_files_indexed) == (1, 1)
    assert ids() == [i for i in every if i not in (12, 89)]
    assert sync(4).status == "no_action"
    found = open_table(index, options=cache)
    assert found.count() == 98 == found.count(where="id IS NOT NULL OR id IS NULL")
    assert found.count(where="id = 89") == 0
    latest = sync(None)  # deletes, updates (rewrites plus vectors), two checkpoints later
    assert latest.source_version == 20
    assert canonical(open_table(index, options=cache).to_arrow()) == canonical(
        rows_honouring_dvs(LOGS)
    )
    assert open_table(index, options=cache).count() == rows_honouring_dvs(LOGS).num_rows


def test_a_split_missing_deleted_rows_maps_hits_by_row_key_only(
    tmp_path: Path, cache: dict[str, str]
) -> None:
    index = str(tmp_path / "idx")
    build_companion(str(SMALL), index, source_format="delta")
    (split,) = open_table(index, options=cache)._view.splits
    assert split._file.num_records == 8  # the live rows
    directory = SplitCache(str(tmp_path / "cache2"), 10**9).fetch(
        open_table_store(index, {}), index, split.entry.ref
    )
    manifest = split_manifest(directory)
    assert manifest.total_rows == 10  # the file's rows, the deleted ones included
    assert manifest.segment_row_ranges == ()  # no segment is a run of the file's rows


# -- deletion vectors committed by hand -----------------------------------------------------

_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def _z85(data: bytes) -> str:
    text = []
    for start in range(0, len(data), 4):
        value, chars = int.from_bytes(data[start : start + 4], "big"), []
        for _ in range(5):
            value, digit = divmod(value, 85)
            chars.append(_Z85[digit])
        text.extend(reversed(chars))
    return "".join(text)


def inline_vector(rows: Iterable[int]) -> dict[str, Any]:
    """An inline ('i') deletion vector (Delta protocol): a RoaringBitmapArray behind its
    magic number, one 32-bit portable roaring bitmap of array containers, Z85-encoded."""
    by_high: dict[int, list[int]] = {}
    for row in sorted(set(rows)):
        by_high.setdefault(row >> 16, []).append(row & 0xFFFF)
    keys = sorted(by_high)
    header = struct.pack("<II", 12346, len(keys))
    header += b"".join(struct.pack("<HH", k, len(by_high[k]) - 1) for k in keys)
    offset = len(header) + 4 * len(keys)
    offsets = b""
    bodies = b""
    for key in keys:
        offsets += struct.pack("<I", offset)
        body = struct.pack(f"<{len(by_high[key])}H", *by_high[key])
        bodies += body
        offset += len(body)
    data = struct.pack("<iqi", 1681511377, 1, 0) + header + offsets + bodies
    return {
        "storageType": "i",
        "pathOrInlineDv": _z85(data + b"\0" * (-len(data) % 4)),
        "sizeInBytes": len(data),
        "cardinality": len(set(rows)),
    }


def commit_vector(table: Path, path: str, rows: Iterable[int]) -> None:
    """Commit, by hand, a new deletion vector (deleting ``rows``) for data file ``path``."""
    delta = DeltaTable(str(table))
    log = table / "_delta_log"
    version = delta.version() + 1
    previous = None
    for number in range(version):
        for line in (log / f"{number:020d}.json").read_text().splitlines():
            action = json.loads(line)
            if "add" in action and action["add"]["path"] == path:
                previous = action["add"]
    assert previous is not None
    remove = {"path": path}
    if previous.get("deletionVector"):
        remove["deletionVector"] = previous["deletionVector"]
    actions = [
        {
            "protocol": {
                "minReaderVersion": 3,
                "minWriterVersion": 7,
                "readerFeatures": ["deletionVectors"],
                "writerFeatures": ["deletionVectors"],
            }
        },
        # A file's identity is its path and its vector: the remove names the old vector.
        {"remove": {**remove, "deletionTimestamp": 1, "dataChange": True}},
        {"add": {**previous, "deletionVector": inline_vector(rows), "dataChange": True}},
    ]
    (log / f"{version:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))


@pytest.mark.parametrize("in_workers", [False, True])
def test_hand_written_vectors_across_syncs_equal_a_reader_honouring_them(
    tmp_path: Path, cache: dict[str, str], monkeypatch: pytest.MonkeyPatch, in_workers: bool
) -> None:
    """``in_workers``: one split per file, every one built by a worker process (the
    deleted rows travel to it pickled)."""
    spread: dict[str, Any] = {}
    workers: list[int] = []
    if in_workers:
        monkeypatch.setattr(parallel, "LOCAL_BUILDS", 0)
        in_worker = parallel._in_worker

        def counted(job: Any, group: Any) -> Any:
            workers.append(sum(f.deleted is not None for f in group.files))
            return in_worker(job, group)

        monkeypatch.setattr(parallel, "_in_worker", counted)
        spread = {"target_input_size": 1, "options": {parallel.PARALLELISM_OPTION: "2"}}
    rng = random.Random(25)
    source, index = tmp_path / "delta", str(tmp_path / "idx")
    words = ["disk full", "", "ünïcode", "timeout", None, "disk ok"]
    for first in (0, 1000, 2000):
        rows = 70_000 if first == 2000 else 40
        data = pa.table(
            {
                "id": pa.array(range(first, first + rows), pa.int64()),
                "msg": [words[rng.randrange(len(words))] for _ in range(rows)],
                "x": [rng.choice([None, -0.0, 1.5, float("inf"), -1e300]) for _ in range(rows)],
            }
        )
        write_deltalake(str(source), data, mode="append")
    files = sorted(pa.table(DeltaTable(str(source)).get_add_actions())["path"].to_pylist())

    def sync() -> Any:
        return build_companion(
            str(source), index, source_format="delta", indexing_modes={"msg": "text"}, **spread
        )

    def check() -> None:
        expected = rows_honouring_dvs(source)
        found = open_table(index, options=cache)
        assert canonical(found.to_arrow()) == canonical(expected)
        assert found.count() == expected.num_rows
        disk = [m is not None and "disk" in m.split() for m in expected["msg"].to_pylist()]
        assert found.count(query="msg:disk") == sum(disk)
        got = found.aggregate(metrics={"s": ("sum", "id"), "n": "count"}).to_pylist()
        assert got == [{"s": sum(expected["id"].to_pylist()), "n": expected.num_rows}]

    assert sync().parquet_files_indexed == 3
    check()
    big = next(f for f in files if pq.read_metadata(source / f).num_rows == 70_000)
    small = next(f for f in files if f != big)
    # Rows in two 65536-row containers, the first and the last rows too.
    commit_vector(source, big, [0, 1, 2, 500, 65535, 65536, 69_999])
    commit_vector(source, small, range(40))  # every row of a file
    result = sync()
    assert (result.splits_invalidated, result.parquet_files_indexed) >= (1, 2)
    check()
    before = open_table(index, options=cache).count()
    commit_vector(source, big, [3])  # the vector changes; path and size do not
    result = sync()
    assert result.parquet_files_indexed >= 1
    assert result.splits_invalidated >= 1
    check()
    assert open_table(index, options=cache).count() == before + 6
    if in_workers:  # files with deleted rows were built by worker processes
        assert sum(workers) >= 2


def test_deleted_rows_live_runs() -> None:
    deleted = DeletedRows.from_rows([0, 3, 4, 9])
    assert deleted.live_runs(0, 10) == [(1, 2), (5, 4)]
    assert deleted.live_runs(4, 3) == [(1, 2)]
    assert deleted.live_runs(10, 5) == [(0, 5)]
    assert DeletedRows.from_rows([2, 1]).identity != DeletedRows.from_rows([1]).identity
    assert DeletedRows.from_rows([2, 1]).identity == DeletedRows.from_rows([1, 2, 2]).identity
    mask = DeletedRows.from_selection(pa.array([True, False, True, False]))
    assert list(mask.rows) == [1, 3]


def test_vectors_of_partitioned_files_with_escaped_paths(
    tmp_path: Path, cache: dict[str, str]
) -> None:
    source, index = tmp_path / "delta", str(tmp_path / "idx")
    data = pa.table({"id": list(range(12)), "p": ["a b/ü%"] * 6 + ["x"] * 6})
    write_deltalake(str(source), data, partition_by=["p"])
    build_companion(str(source), index, source_format="delta")
    paths = pa.table(DeltaTable(str(source)).get_add_actions())["path"].to_pylist()
    escaped = next(p for p in paths if "x" not in p.split("/")[0])
    commit_vector(source, escaped, [0, 5])
    result = build_companion(str(source), index, source_format="delta")
    assert (result.splits_invalidated, result.parquet_files_indexed) == (1, 1)
    found = open_table(index, options=cache)
    got = sorted(found.to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["p"]) for r in got] == [
        *((i, "a b/ü%") for i in range(1, 5)),
        *((i, "x") for i in range(6, 12)),
    ]
    assert found.count(where="p = 'a b/ü%'") == 4
