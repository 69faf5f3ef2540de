"""LiveFiles: a base sequence with an overlay, read as entries or as columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indextables.protocol import AddAction, create_table, open_table
from indextables.protocol.livefiles import LiveFiles
from indextables.protocol.predicates import parse_predicate
from indextables.protocol.state import FileEntry
from indextables.protocol.statsfilter import entry_may_match, keep_by_stats


def _entry(path: str, size: int = 1, part: str = "a") -> FileEntry:
    return FileEntry(path, {"p": part}, size, 0, True, 0, 0, num_records=size * 10)


@given(
    base=st.lists(st.integers(0, 30), unique=True, max_size=20),
    dropped=st.sets(st.integers(0, 40), max_size=10),
    added=st.lists(st.integers(100, 130), unique=True, max_size=5),
)
def test_overlay_equals_the_dict_replay(
    base: list[int], dropped: set[int], added: list[int]
) -> None:
    entries = [_entry(f"f{i}", i) for i in base]
    adds = [_entry(f"f{i}", i) for i in added]
    live = LiveFiles.overlay(entries, dropped={f"f{i}" for i in dropped}, added=adds)
    expected = [e for e in entries if int(e.path[1:]) not in dropped] + adds
    assert list(live) == expected
    assert live == expected
    assert len(live) == len(expected)
    assert [live[i] for i in range(len(live))] == expected
    assert list(live[1:4]) == expected[1:4]
    if expected:
        assert live[-1] == expected[-1]
    assert list(live.paths) == [e.path for e in expected]
    assert list(live.sizes) == [e.size for e in expected]
    assert list(live.num_records) == [e.num_records for e in expected]
    assert list(live.partition_values) == [e.partition_values for e in expected]
    with pytest.raises(IndexError):
        live[len(expected)]


def _split(root: Path, name: str, part: str) -> AddAction:
    (root / f"p={part}").mkdir(parents=True, exist_ok=True)
    (root / f"p={part}" / name).write_bytes(b"x" * 3)
    return AddAction(f"p={part}/{name}", {"p": part}, 3, 1, True, num_records=7)


def test_snapshot_files_on_a_state_stay_lazy_with_columns(tmp_path: Path) -> None:
    schema: dict[str, Any] = {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "p", "type": "string", "nullable": True, "metadata": {}},
        ],
    }
    root = tmp_path / "t"
    table = create_table(str(root), schema=schema, partition_columns=("p",))
    for i in range(6):
        table.commit([_split(root, f"s{i}.split", "a" if i % 2 else "b")])
    table.checkpoint()
    table.commit([_split(root, "late.split", "a")], removes=["p=b/s0.split"])
    snap = open_table(str(root)).snapshot()
    files = snap.files
    assert isinstance(files, LiveFiles)
    expected = {f"p={'a' if i % 2 else 'b'}/s{i}.split" for i in range(1, 6)} | {"p=a/late.split"}
    assert set(files.paths) == expected
    assert list(files.num_records) == [7] * 6
    assert snap.total_bytes == 18
    # Reading columns built no entry of the state's (columnar, avrostate) base.
    base = files._base
    assert type(base).__name__ == "FileEntries"
    assert base._built is None
    assert {f.path for f in files} == expected
    narrowed = open_table(str(root)).snapshot(partition_filter="p = 'a'")
    assert set(narrowed.files.paths) == {p for p in expected if p.startswith("p=a/")}


class _Prunable(list[FileEntry]):
    """A base that prunes by statistics and selects itself (as avro-state's entries do)."""

    def __init__(self, entries: list[FileEntry]) -> None:
        super().__init__(entries)
        self.selected: list[list[int]] = []

    def stats_may_match(self, predicate: Any) -> list[int]:
        return [i for i, e in enumerate(self) if entry_may_match(predicate, e)]

    def select(self, indices: list[int]) -> list[FileEntry]:
        self.selected.append(list(indices))
        return [self[i] for i in indices]


def _stat_entry(i: int) -> FileEntry:
    return FileEntry(
        f"f{i}", {}, i, 0, True, 0, 0, min_values={"n": str(i)}, max_values={"n": str(i + 5)}
    )


@given(
    base=st.lists(st.integers(0, 30), unique=True, max_size=20),
    dropped=st.sets(st.integers(0, 40), max_size=10),
    added=st.lists(st.integers(100, 130), unique=True, max_size=5),
    bound=st.integers(0, 140),
    prunable=st.booleans(),
    picks=st.sets(st.integers(0, 40), max_size=10),
)
def test_stats_pruning_and_select_equal_the_entries(
    base: list[int],
    dropped: set[int],
    added: list[int],
    bound: int,
    prunable: bool,
    picks: set[int],
) -> None:
    entries = [_stat_entry(i) for i in base]
    first: list[FileEntry] = _Prunable(entries) if prunable else entries
    live = LiveFiles.overlay(
        first, dropped={f"f{i}" for i in dropped}, added=[_stat_entry(i) for i in added]
    )
    predicate = parse_predicate(f"n >= '{bound}'")
    expected = [i for i, e in enumerate(live) if entry_may_match(predicate, e)]
    assert live.stats_may_match(predicate) == expected
    indices = sorted(i for i in picks if i < len(live))
    assert live.select(indices) == [list(live)[i] for i in indices]
    assert keep_by_stats(live, predicate) == [list(live)[i] for i in expected]
