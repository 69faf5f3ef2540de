"""Snapshots pruned by min/max statistics: JSON log (per entry) and avro state (column-wise)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import AddAction, create_table, open_table
from indextables.protocol.predicates import (
    And,
    EqualTo,
    GreaterThan,
    In,
    NumberCompare,
    Or,
    Predicate,
)
from indextables.protocol.state import FileEntry
from indextables.protocol.statsfilter import entry_may_match, keep_by_stats, stats_bounds

SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": n, "type": t, "nullable": True, "metadata": {}}
        for n, t in (("id", "long"), ("host", "string"), ("date", "string"))
    ],
}


def _add(k: int, **stats: Any) -> AddAction:
    date = f"2024-01-0{k % 3 + 1}"
    mins = {"id": str(k * 100), "host": f"host-{k:02d}"}
    maxs = {"id": str(k * 100 + 99), "host": f"host-{k:02d}z"}
    mins.update(stats.get("mins", {}))
    maxs.update(stats.get("maxs", {}))
    return AddAction(
        f"date={date}/part-{k:03d}.split",
        {"date": date},
        1000 + k,
        1,
        True,
        num_records=100,
        min_values=mins,
        max_values=maxs,
    )


PREDICATES: list[Predicate] = [
    NumberCompare("id", ">", (1_450,)),
    NumberCompare("id", "=", (250, 1_999)),
    NumberCompare("id", "<=", (99.5,)),
    GreaterThan("host", "host-17"),
    In("host", ("host-03z", "host-nope")),
    And(NumberCompare("id", ">=", (500,)), EqualTo("host", "host-07")),
    Or(NumberCompare("id", "<", (100,)), EqualTo("host", "host-19z")),
]


@pytest.fixture
def table(tmp_path: Path) -> Any:
    """20 files (ids k*100..k*100+99, hosts host-kk..host-kkz) over 3 dates."""
    created = create_table(str(tmp_path / "t"), schema=SCHEMA, partition_columns=("date",))
    created.commit(adds=[_add(k) for k in range(10)])
    created.commit(adds=[_add(k) for k in range(10, 20)])
    return created


def _expected(table: Any, predicate: Predicate) -> list[str]:
    return sorted(f.path for f in table.snapshot().files if entry_may_match(predicate, f))


def _paths(snapshot: Any) -> list[str]:
    return sorted(f.path for f in snapshot.files)


@pytest.mark.parametrize("predicate", PREDICATES, ids=repr)
@pytest.mark.parametrize("checkpointed", [False, True])
def test_stats_filter_keeps_exactly_the_files_that_may_match(
    table: Any, predicate: Predicate, checkpointed: bool
) -> None:
    if checkpointed:
        table.checkpoint()
    expected = _expected(table, predicate)
    assert 0 < len(expected) < 20  # every case prunes something and keeps something
    reopened = open_table(table.uri)
    snap = reopened.snapshot(stats_filter=predicate)
    assert _paths(snap) == expected
    assert snap.stats_filter == predicate
    assert snap.state_version == (2 if checkpointed else None)


def test_files_added_and_removed_after_the_state_are_pruned_alike(table: Any) -> None:
    table.checkpoint()
    predicate = NumberCompare("id", ">=", (1_800,))
    table.commit(adds=[_add(25), _add(30)])
    table.commit(removes=["date=2024-01-01/part-018.split"])
    late = table.snapshot()
    assert len(late.files) == 21
    snap = open_table(table.uri).snapshot(stats_filter=predicate)
    assert snap.state_version == 2
    assert _paths(snap) == sorted(f.path for f in late.files if entry_may_match(predicate, f))
    assert _paths(snap) == [
        "date=2024-01-01/part-030.split",
        "date=2024-01-02/part-019.split",
        "date=2024-01-02/part-025.split",
    ]


def test_partition_and_stats_filters_combine(table: Any) -> None:
    table.checkpoint()
    snap = table.snapshot(
        partition_filter="date = '2024-01-02'", stats_filter=NumberCompare("id", "<", (1_000,))
    )
    assert _paths(snap) == [f"date=2024-01-02/part-{k:03d}.split" for k in (1, 4, 7)]


def test_unparsable_and_missing_statistics_never_prune(tmp_path: Path) -> None:
    created = create_table(str(tmp_path / "t"), schema=SCHEMA, partition_columns=("date",))
    weird = [
        _add(1, mins={"id": "abc"}),
        _add(2, maxs={"id": "n/a"}),
        AddAction("date=2024-01-01/bare.split", {"date": "2024-01-01"}, 5, 1, True),
        _add(4),
    ]
    created.commit(adds=weird)
    for checkpoint in (False, True):
        if checkpoint:
            created.checkpoint()
        snap = open_table(created.uri).snapshot(stats_filter=NumberCompare("id", ">", (10**6,)))
        assert _paths(snap) == [
            "date=2024-01-01/bare.split",
            "date=2024-01-02/part-001.split",
            "date=2024-01-03/part-002.split",
        ]


def test_a_truncated_string_max_bounds_nothing() -> None:
    long_max = "m" * 32
    entry = FileEntry("f", {}, 1, 0, True, 0, 0, min_values={"s": "a"}, max_values={"s": long_max})
    assert stats_bounds(entry, ["s"])["s"].max is None
    assert entry_may_match(GreaterThan("s", "zzz"), entry)
    short = FileEntry("g", {}, 1, 0, True, 0, 0, min_values={"s": "a"}, max_values={"s": "m" * 31})
    assert not entry_may_match(GreaterThan("s", "zzz"), short)
    assert keep_by_stats([entry, short], GreaterThan("s", "zzz")) == [entry]
