"""The engine on a local table: create, commit, read, time travel, conflicts, cache."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import (
    AddAction,
    CommitConflictError,
    InvalidPredicateError,
    PluginNotFoundError,
    RetryPolicy,
    TableConfig,
    TableExistsError,
    TableNotFoundError,
    UnsupportedProtocolError,
    VersionNotFoundError,
    add_metrics_hook,
    create_table,
    open_table,
    remove_metrics_hook,
)
from indextables.protocol.actions import FileFormat, MetadataAction, ProtocolAction
from indextables.protocol.logreplay import read_version, version_key
from indextables.protocol.versionfile import decode_version_file, encode_version_file

MAPPING = '[{"fast":true,"indexed":true,"name":"id","stored":true,"type":"i64"}]'


def split(root: Path, name: str, *, date: str | None = None, size: int = 100) -> AddAction:
    """Write a fake split file of ``size`` bytes and return its add action."""
    path = f"date={date}/{name}" if date else name
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_bytes(b"x" * size)
    values = {"date": date} if date else {}
    return AddAction(path, values, size, 1, True, num_records=1)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "table"


@pytest.fixture
def table(root: Path, schema: dict[str, Any]) -> Any:
    return create_table(str(root), schema=schema, partition_columns=("date",))


def test_create_writes_version_zero_with_v4_protocol(table: Any, root: Path) -> None:
    actions = read_version(table.store, 0)
    assert actions[0] == ProtocolAction(4, 4)
    assert isinstance(actions[1], MetadataAction)
    assert actions[1].partition_columns == ("date",)
    assert (root / "_transaction_log/00000000000000000000.json").read_bytes()[:2] == b"\x01\x01"
    snap = table.snapshot()
    assert (snap.version, snap.num_files, snap.total_bytes) == (0, 0, 0)


def test_create_twice_is_refused(table: Any, root: Path, schema: dict[str, Any]) -> None:
    with pytest.raises(TableExistsError):
        create_table(str(root), schema=schema)


def test_open_missing_table(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError):
        open_table(str(tmp_path / "nothing"))


def test_unknown_scheme_names_the_package_to_install() -> None:
    with pytest.raises(PluginNotFoundError, match="indextables-storage"):
        open_table("hdfs://cluster/table")


def test_commits_get_consecutive_versions_and_real_added_at(table: Any, root: Path) -> None:
    versions = [
        table.commit(adds=[split(root, f"p{i}.split", date="2024-01-01")]) for i in range(3)
    ]
    assert versions == [1, 2, 3]
    snap = table.snapshot()
    assert snap.num_files == 3
    assert sorted(f.added_at_version for f in snap.files) == [1, 2, 3]
    assert all(f.added_at_timestamp > 0 for f in snap.files)


def test_state_written_every_interval_and_pointer_moves(table: Any, root: Path) -> None:
    for i in range(12):
        table.commit(adds=[split(root, f"p{i}.split")])
    assert (root / "_transaction_log/state-v00000000000000000010/_manifest.avro").exists()
    reopened = open_table(str(root))
    snap = reopened.snapshot()
    assert (snap.version, snap.state_version, snap.num_files) == (12, 10, 12)
    assert reopened.describe_state().version == 10


def test_removes_and_tombstones(table: Any, root: Path) -> None:
    adds = [split(root, f"p{i}.split") for i in range(3)]
    table.commit(adds=adds)
    version = table.commit(removes=[adds[0].path])
    assert {f.path for f in table.snapshot().files} == {adds[1].path, adds[2].path}
    removes = read_version(table.store, version)
    assert removes[0].path == adds[0].path
    assert removes[0].size == adds[0].size


def test_removing_a_file_that_is_not_live_conflicts(table: Any, root: Path) -> None:
    add = split(root, "a.split")
    table.commit(adds=[add])
    table.commit(removes=[add.path])
    with pytest.raises(CommitConflictError, match=r"a\.split"):
        table.commit(removes=[add.path])


def test_overwrite_removes_exactly_what_it_read(table: Any, root: Path) -> None:
    old = split(root, "old.split")
    table.commit(adds=[old])
    read = table.snapshot().version
    other = open_table(str(root))
    concurrent = split(root, "concurrent.split")
    other.commit(adds=[concurrent])
    new = split(root, "new.split")
    table.commit(adds=[new], mode="overwrite", read_version=read)
    assert {f.path for f in table.snapshot().files} == {concurrent.path, new.path}


def test_overwrite_conflicts_when_its_files_were_removed_concurrently(
    table: Any, root: Path
) -> None:
    old = split(root, "old.split")
    table.commit(adds=[old])
    read = table.snapshot().version
    open_table(str(root)).commit(removes=[old.path])
    with pytest.raises(CommitConflictError):
        table.commit(adds=[split(root, "new.split")], mode="overwrite", read_version=read)
    assert table.snapshot().num_files == 0


def test_time_travel_by_version_and_timestamp(table: Any, root: Path) -> None:
    for i in range(4):
        table.commit(adds=[split(root, f"p{i}.split")])
    assert table.snapshot(2).num_files == 2
    history = table.history()
    assert [h.version for h in history] == [0, 1, 2, 3, 4]
    assert [h.operation for h in history][:2] == ["CREATE", "WRITE"]
    assert table.snapshot(timestamp=history[3].timestamp).version >= 3
    with pytest.raises(VersionNotFoundError):
        table.snapshot(9)
    with pytest.raises(VersionNotFoundError):
        table.snapshot(timestamp=history[0].timestamp - 10_000)


def test_unreachable_version_is_a_clear_error(table: Any, root: Path) -> None:
    for i in range(3):
        table.commit(adds=[split(root, f"p{i}.split")])
    (root / "_transaction_log" / "00000000000000000002.json").unlink()
    with pytest.raises(VersionNotFoundError, match="not reachable"):
        open_table(str(root)).snapshot(3)


def test_changes_since(table: Any, root: Path) -> None:
    a, b = split(root, "a.split"), split(root, "b.split")
    table.commit(adds=[a])
    start = table.version
    table.commit(adds=[b])
    table.commit(removes=[a.path])
    changes = table.changes_since(start)
    assert [f.path for f in changes.adds] == [b.path]
    assert changes.removes == (a.path,)
    assert changes.end_version == start + 2


def test_partition_filter(table: Any, root: Path) -> None:
    table.commit(
        adds=[split(root, "a.split", date="2024-01-01"), split(root, "b.split", date="2024-01-02")]
    )
    snap = table.snapshot(partition_filter="date >= '2024-01-02'")
    assert [f.path for f in snap.files] == ["date=2024-01-02/b.split"]
    with pytest.raises(InvalidPredicateError, match="not partition columns"):
        table.snapshot(partition_filter="id = 1")


def test_doc_mappings_are_deduplicated_into_the_log(table: Any, root: Path) -> None:
    add = split(root, "a.split")
    from dataclasses import replace

    version = table.commit(adds=[replace(add, doc_mapping_json=MAPPING)])
    written = read_version(table.store, version)
    meta = next(a for a in written if isinstance(a, MetadataAction))
    stored = next(a for a in written if isinstance(a, AddAction))
    assert stored.doc_mapping_json is None
    assert meta.configuration[f"docMappingSchema.{stored.doc_mapping_ref}"] == MAPPING
    assert table.snapshot().files[0].doc_mapping_json == MAPPING


def _write_version(root: Path, version: int, actions: list[Any]) -> None:
    (root / "_transaction_log" / f"{version:020d}.json").write_bytes(encode_version_file(actions))


def test_protocol_is_checked_before_reads_and_writes(table: Any, root: Path) -> None:
    _write_version(root, 1, [ProtocolAction(4, 5)])
    reopened = open_table(str(root))
    assert reopened.snapshot().version == 1
    with pytest.raises(UnsupportedProtocolError, match="writer version 5"):
        reopened.commit(adds=[split(root, "a.split")])
    _write_version(root, 2, [ProtocolAction(5, 5)])
    with pytest.raises(UnsupportedProtocolError, match="reader version 5"):
        open_table(str(root))
    unchecked = open_table(str(root), check=False)
    for read in (unchecked.snapshot, unchecked.metadata_snapshot):
        with pytest.raises(UnsupportedProtocolError, match="reader version 5"):
            read()


def test_threads_racing_get_distinct_versions(table: Any, root: Path) -> None:
    adds = [[split(root, f"t{t}-{i}.split") for i in range(5)] for t in range(4)]
    versions: list[int] = []
    lock = threading.Lock()

    def writer(batch: list[AddAction]) -> None:
        handle = open_table(str(root))
        for add in batch:
            v = handle.commit(adds=[add])
            with lock:
                versions.append(v)

    threads = [threading.Thread(target=writer, args=(b,)) for b in adds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(versions) == list(range(1, 21))
    assert {f.path for f in table.snapshot().files} == {a.path for b in adds for a in b}
    assert table.validate().ok


class _AlwaysLosingStore:
    """Wraps a store so that every version file appears just before we create it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def put_if_absent(self, key: str, data: bytes) -> None:
        if key.endswith(".json") and "/0" in key:
            self.inner.put_if_absent(key, encode_version_file([]))
        self.inner.put_if_absent(key, data)


def test_lost_races_retry_then_fail_with_a_conflict(table: Any, root: Path) -> None:
    from indextables.protocol.table import Table

    racing = Table(
        _AlwaysLosingStore(table.store),  # type: ignore[arg-type]
        table.state_format,
        config=TableConfig(retry=RetryPolicy(max_attempts=3, base_delay_ms=1, max_delay_ms=2)),
    )
    with pytest.raises(CommitConflictError) as caught:
        racing.commit(adds=[split(root, "a.split")])
    assert caught.value.attempts == 3
    assert table.version == 3  # three empty versions written by the "other writer"
    assert decode_version_file(table.store.get(version_key(3)), path="v3") == []


def test_metrics_hook_sees_commits_and_state_reads(table: Any, root: Path) -> None:
    seen: list[str] = []
    hook = add_metrics_hook(lambda name, value, tags: seen.append(name))
    try:
        for i in range(10):
            table.commit(adds=[split(root, f"p{i}.split")])
        open_table(str(root)).snapshot()
    finally:
        remove_metrics_hook(hook)
    assert "indextables.commit.attempts" in seen
    assert "indextables.state.write.duration_ms" in seen
    assert "indextables.state.read.duration_ms" in seen
    assert "indextables.state.tombstone_ratio" in seen


def test_snapshot_cache_and_invalidation_on_commit(table: Any, root: Path) -> None:
    table.commit(adds=[split(root, "a.split")])
    first = table.snapshot()
    assert table.snapshot() is first
    table.commit(adds=[split(root, "b.split")])
    assert table.snapshot().num_files == 2


def test_skips_record_count_filter_and_expire(table: Any, root: Path) -> None:
    add = split(root, "a.split")
    table.commit(adds=[add, split(root, "b.split")])
    table.record_skip(add.path, reason="bad footer", cooldown_hours=1)
    table.record_skip(add.path, reason="bad footer again", cooldown_hours=1)
    assert table.skips.count(add.path) == 2
    cooling = table.skips.in_cooldown()
    assert set(cooling) == {add.path}
    live = table.snapshot().files
    assert len(live) == 2  # skipped files stay live
    assert [c.path for c in table.skips.filter_candidates(live)] == ["b.split"]
    later = cooling[add.path] + 1
    assert table.skips.in_cooldown(now_ms=later) == {}
    assert len(table.skips.filter_candidates(live, now_ms=later)) == 2
    assert table.history()[-1].operation == "SKIP"


def test_metadata_change_is_committed(table: Any) -> None:
    meta = table.snapshot().metadata
    from dataclasses import replace

    table.commit(metadata=replace(meta, configuration={"k": "v"}))
    assert table.snapshot().metadata.configuration == {"k": "v"}
    assert isinstance(meta.format, FileFormat)


def test_legacy_json_checkpoint_tables_are_read(table: Any, root: Path) -> None:
    from indextables.protocol.checkpoint import write_json_checkpoint
    from indextables.protocol.lastcheckpoint import encode_last_checkpoint

    adds = [split(root, f"p{i}.split") for i in range(4)]
    for add in adds[:3]:
        table.commit(adds=[add])
    snap = table.snapshot()
    actions = [snap.protocol, snap.metadata, *(AddAction.from_file_entry(f) for f in snap.files)]
    pointer = write_json_checkpoint(table.store, version=3, actions=actions, actions_per_part=2)
    table.store.put("_transaction_log/_last_checkpoint", encode_last_checkpoint(pointer))
    for version in range(3):
        (root / "_transaction_log" / f"{version:020d}.json").unlink()
    table.commit(adds=[adds[3]])
    reopened = open_table(str(root))
    assert {f.path for f in reopened.snapshot().files} == {a.path for a in adds}
    assert reopened.snapshot().state_version == 3
    with pytest.raises(VersionNotFoundError):
        reopened.snapshot(2)


def test_checkpointing_a_legacy_json_table_keeps_every_file(table: Any, root: Path) -> None:
    from indextables.protocol.checkpoint import write_json_checkpoint
    from indextables.protocol.lastcheckpoint import encode_last_checkpoint

    adds = [split(root, f"p{i}.split") for i in range(3)]
    table.commit(adds=adds[:2])
    snap = table.snapshot()
    actions = [snap.protocol, snap.metadata, *(AddAction.from_file_entry(f) for f in snap.files)]
    pointer = write_json_checkpoint(table.store, version=1, actions=actions)
    table.store.put("_transaction_log/_last_checkpoint", encode_last_checkpoint(pointer))
    (root / "_transaction_log" / f"{1:020d}.json").unlink()
    table.commit(adds=[adds[2]])
    table.checkpoint()
    reopened = open_table(str(root))
    assert reopened.snapshot().state_version == 2
    assert {f.path for f in reopened.snapshot().files} == {a.path for a in adds}
    assert reopened.describe_state().num_files == 3


def test_adding_a_live_path_again_conflicts(table: Any, root: Path) -> None:
    add = split(root, "a.split")
    table.commit(adds=[add])
    with pytest.raises(CommitConflictError, match="already live"):
        table.commit(adds=[add])
    assert table.commit(adds=[add], removes=[add.path]) == 2  # replace in one commit
    assert table.snapshot().num_files == 1


def test_newest_protocol_below_a_state_is_found(table: Any, root: Path) -> None:
    upgraded = ProtocolAction(4, 4, reader_features=("avroState",), writer_features=("avroState",))
    table.commit(adds=[split(root, "a.split")])
    table.commit_actions([upgraded])
    for i in range(9):
        table.commit(adds=[split(root, f"p{i}.split")])
    reopened = open_table(str(root))
    snap = reopened.snapshot()
    assert (snap.version, snap.state_version) == (11, 10)
    assert snap.protocol == upgraded
    assert reopened.snapshot(1).protocol == ProtocolAction(4, 4)


class _Reads:
    """A local store that records the keys it was asked to read."""

    def __init__(self, base: Any) -> None:
        self.base, self.keys = base, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def get(self, key: str) -> bytes:
        self.keys.append(key)
        return bytes(self.base.get(key))

    def get_range(self, key: str, start: int, end: int) -> bytes:
        self.keys.append(key)
        return bytes(self.base.get_range(key, start, end))


def test_metadata_snapshot_reads_no_manifest(table: Any, root: Path) -> None:
    for i in range(12):
        day = f"2024-01-{i % 3 + 1:02d}"
        table.commit(adds=[split(root, f"p{i}.split", date=day)])
    reads = _Reads(table.store)
    reopened = open_table(str(root), store=reads)
    for version in (None, 12, 5):
        reopened.invalidate_cache()
        reads.keys.clear()
        full = reopened.snapshot(version)
        state_read = version != 5  # version 5 predates the first state
        assert bool([k for k in reads.keys if "/manifests/" in k]) == state_read
        reads.keys.clear()
        light = reopened.metadata_snapshot(version)
        assert light.files == ()
        assert (light.version, light.metadata, light.protocol) == (
            full.version,
            full.metadata,
            full.protocol,
        )
        assert light.schema_registry == full.schema_registry
        assert not [k for k in reads.keys if "/manifests/" in k]
    stamp = reopened.history()[4].timestamp
    assert (
        reopened.metadata_snapshot(timestamp=stamp).version
        == reopened.snapshot(timestamp=stamp).version
    )
    with pytest.raises(VersionNotFoundError):
        reopened.metadata_snapshot(99)


def test_scanned_protocol_is_shared_but_never_stale(table: Any, root: Path) -> None:
    """Protocol actions found in old version files are shared across handles, keyed by
    each file's size and modification time, so a rewritten file is read again."""
    _write_version(root, 1, [ProtocolAction(4, 4), split(root, "a.split")])
    for i in range(2, 12):
        table.commit(adds=[split(root, f"p{i}.split")])
    assert open_table(str(root)).snapshot().version == 11  # state at 10: v1 scanned
    # The same version file rewritten (a table re-created at the same URI, say).
    _write_version(root, 1, [ProtocolAction(5, 5), split(root, "a.split")])
    rewritten = root / "_transaction_log" / f"{1:020d}.json"
    later = rewritten.stat().st_mtime + 5  # the same size: only the time tells them apart
    os.utime(rewritten, (later, later))
    with pytest.raises(UnsupportedProtocolError, match="reader version 5"):
        open_table(str(root))
    unchecked = open_table(str(root), check=False)
    for read in (unchecked.snapshot, unchecked.metadata_snapshot):
        with pytest.raises(UnsupportedProtocolError, match="reader version 5"):
            read()


class _Lists(_Reads):
    """Records the keys read and the prefixes listed."""

    def __init__(self, base: Any) -> None:
        super().__init__(base)
        self.listed: list[str] = []

    def list(self, prefix: str = "") -> Any:
        self.listed.append(prefix)
        return self.base.list(prefix)


def test_open_without_check_reads_nothing_until_the_snapshot(table: Any, root: Path) -> None:
    for i in range(12):
        table.commit(adds=[split(root, f"p{i}.split", date="2024-01-01")])
    checked, lazy = _Lists(table.store), _Lists(table.store)
    expected = open_table(str(root), store=checked).snapshot()
    handle = open_table(str(root), store=lazy, check=False)
    assert (lazy.keys, lazy.listed) == ([], [])
    assert handle.snapshot().files == expected.files
    # The up-front check costs one more read of the state and one more listing.
    assert len(lazy.keys) < len(checked.keys)
    assert len(lazy.listed) < len(checked.listed)


def test_open_without_check_reports_a_missing_table_on_first_use(tmp_path: Path) -> None:
    handle = open_table(str(tmp_path / "nothing"), check=False)
    with pytest.raises(TableNotFoundError):
        handle.snapshot()
    with pytest.raises(TableNotFoundError):
        handle.metadata_snapshot()
