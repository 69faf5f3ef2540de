"""Streaming sync (sync_companion_forever): a cycle syncs when the source changed and
is skipped, without listing the source, when it did not."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import write_deltalake

from indextables.search import open_table, sync_companion_forever
from indextables.search.companion.sources import source_signature
from indextables.search.companion.streaming import SyncCycle
from indextables.search.errors import ArgumentError, CompanionSourceError


@pytest.fixture
def cache(tmp_path: Path) -> dict[str, str]:
    return {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}


def rows(first: int, count: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(first, first + count), pa.int64()),
            "msg": [f"event {i} disk" if i % 3 == 0 else "" for i in range(first, first + count)],
        }
    )


def test_delta_cycles_sync_an_appended_file_and_skip_unchanged_ones(
    tmp_path: Path, cache: dict[str, str]
) -> None:
    source, index = tmp_path / "delta", str(tmp_path / "idx")
    write_deltalake(str(source), rows(0, 20))
    seen: list[SyncCycle] = []
    versions: list[int] = []

    def on_cycle(cycle: SyncCycle) -> None:
        seen.append(cycle)
        versions.append(open_table(index, options=cache).version)
        if cycle.number == 2:
            write_deltalake(str(source), rows(100, 5), mode="append")  # one new file

    summary = sync_companion_forever(
        str(source),
        index,
        source_format="delta",
        poll_seconds=0.01,
        max_cycles=4,
        on_cycle=on_cycle,
        indexing_modes={"msg": "text"},
    )
    assert (summary.cycles, summary.syncs) == (4, 2)
    first, skipped, appended, unchanged = seen
    assert first.result is not None
    assert first.result.parquet_files_indexed == 1
    assert skipped.result is None
    assert skipped.signature == first.signature
    assert appended.result is not None
    assert (appended.result.parquet_files_indexed, appended.result.splits_invalidated) == (1, 0)
    assert unchanged.result is None
    # A skipped cycle commits nothing to the index.
    assert versions[0] == versions[1]
    assert versions[2] == versions[3] > versions[1]
    assert summary.last == appended.result
    found = open_table(index, options=cache)
    assert sorted(found.to_arrow()["id"].to_pylist()) == [*range(20), *range(100, 105)]
    assert found.count(query="msg:disk") == 7 + 1  # 0, 3, .., 18 and 102


def test_a_stop_event_ends_the_loop_and_parquet_listings_are_signatures(
    tmp_path: Path, cache: dict[str, str]
) -> None:
    source, index = tmp_path / "src", str(tmp_path / "idx")
    (source / "p=a").mkdir(parents=True)
    pq.write_table(rows(0, 10), source / "p=a" / "part-0.parquet")
    before = source_signature(str(source), "parquet")
    stop = threading.Event()
    numbers: list[int] = []

    def on_cycle(cycle: SyncCycle) -> None:
        numbers.append(cycle.number)
        if cycle.number == 1:
            pq.write_table(rows(10, 3), source / "p=a" / "part-1.parquet")
        if cycle.number == 3:
            stop.set()

    summary = sync_companion_forever(
        str(source), index, source_format="parquet", poll_seconds=0.01, stop=stop,
        on_cycle=on_cycle,
    )  # fmt: skip
    assert numbers == [1, 2, 3]
    assert (summary.cycles, summary.syncs) == (3, 2)
    assert summary.last is not None
    assert summary.last.parquet_files_indexed == 1
    assert source_signature(str(source), "parquet") != before
    assert open_table(index, options=cache).count() == 13
    # Set before the loop: nothing runs.
    assert (
        sync_companion_forever(
            str(source), index, source_format="parquet", poll_seconds=5, stop=stop
        ).cycles
        == 0
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"poll_seconds": 0}, "poll_seconds"),
        ({"poll_seconds": float("nan")}, "poll_seconds"),
        ({"poll_seconds": 1, "max_cycles": 0}, "max_cycles"),
        ({"poll_seconds": 1, "stop": True}, "stop"),
        ({"poll_seconds": 1, "pollseconds": 3}, "pollseconds"),
    ],
)
def test_bad_arguments_are_named(tmp_path: Path, kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ArgumentError, match=match):
        sync_companion_forever(str(tmp_path), str(tmp_path / "i"), source_format="delta", **kwargs)


def test_a_missing_source_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(CompanionSourceError, match="no Delta table"):
        sync_companion_forever(
            str(tmp_path / "nothing"), str(tmp_path / "i"), source_format="delta",
            poll_seconds=1, max_cycles=1,
        )  # fmt: skip
