"""Bad input never bricks a table: refused before anything is written, or read as corrupt."""

from __future__ import annotations

import gzip
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import AddAction, create_table, open_table
from indextables.protocol.compression import MAX_LOG_RATIO, decompress_log_bytes, log_limit
from indextables.protocol.errors import CorruptFileError, UnsafePathError
from indextables.protocol.logreplay import read_version, version_key
from indextables.protocol.reread import REREAD_PAUSES
from indextables.protocol.versionfile import decode_version_file, encode_version_file

BAD_PATHS = ["", "/abs/part.split", "../x.split", "a/../../x.split", "s3://other/x.split", "C:x"]


@pytest.fixture
def table(tmp_path: Path, schema: dict[str, Any]) -> Any:
    return create_table(str(tmp_path / "t"), schema=schema)


@pytest.mark.parametrize("path", BAD_PATHS)
def test_commit_refuses_a_path_its_reader_refuses(table: Any, tmp_path: Path, path: str) -> None:
    good = AddAction("ok.split", {}, 10, 1, True, num_records=1)
    with pytest.raises(UnsafePathError):
        table.commit([good, AddAction(path, {}, 10, 1, True, num_records=1)])
    assert not (tmp_path / "t" / version_key(1)).exists()
    # The table stays readable and writable.
    assert table.commit([good]) == 1
    assert [f.path for f in open_table(str(tmp_path / "t")).snapshot().files] == ["ok.split"]


# Safe for readers, but no store can hold them (indextables-storage's key rules):
# committing one would make a split nobody can fetch and a table validate fails.
STORE_REFUSED = [
    "a/./b.split",
    "./b.split",
    "a/.",
    "a//b.split",
    "dir/",
    "a/b.split/",
    "a\x00b.split",
    "a/.indextables-tmp-x.split",
]


@pytest.mark.parametrize("path", STORE_REFUSED)
def test_commit_refuses_a_key_the_stores_refuse(table: Any, tmp_path: Path, path: str) -> None:
    good = AddAction("ok.split", {}, 10, 1, True, num_records=1)
    with pytest.raises(UnsafePathError) as info:
        table.commit([good, AddAction(path, {}, 10, 1, True, num_records=1)])
    assert repr(path) in str(info.value)
    assert not (tmp_path / "t" / version_key(1)).exists()
    assert table.commit([good]) == 1


@pytest.mark.parametrize("path", BAD_PATHS)
def test_remove_of_an_unsafe_path_is_refused(table: Any, path: str) -> None:
    with pytest.raises((UnsafePathError, Exception)) as info:
        table.commit(removes=[path])
    assert not isinstance(info.value, AssertionError)
    assert table.snapshot().version == 0


def test_zero_byte_version_file_is_corrupt(table: Any, tmp_path: Path) -> None:
    (tmp_path / "t" / version_key(1)).write_bytes(b"")
    with pytest.raises(CorruptFileError, match="empty"):
        open_table(str(tmp_path / "t")).snapshot()
    with pytest.raises(CorruptFileError, match="empty"):
        decode_version_file(b"", path="v")


@pytest.mark.parametrize("compress", [True, False])
def test_an_empty_commit_is_never_zero_bytes(tmp_path: Path, schema: Any, compress: bool) -> None:
    from indextables.protocol import TableConfig

    table = create_table(str(tmp_path / "t"), schema=schema, config=TableConfig(compress=compress))
    assert table.commit_actions([]) == 1
    assert (tmp_path / "t" / version_key(1)).stat().st_size > 0
    assert open_table(str(tmp_path / "t")).snapshot().version == 1


def test_a_gzip_bomb_is_corrupt_not_a_memory_spike() -> None:
    bomb = gzip.compress(b" " * (64 << 20), compresslevel=9)
    assert len(bomb) * MAX_LOG_RATIO < 64 << 20  # the cap must bite for this test to mean much
    with pytest.raises(CorruptFileError, match="expands past"):
        decompress_log_bytes(b"\x01\x01" + bomb, path="v")
    with pytest.raises(CorruptFileError, match="expands past"):
        decompress_log_bytes(bomb, path="v")


def test_decompression_within_the_cap_and_multi_member_gzip() -> None:
    text = b'{"commitInfo":{}}\n' * 1000
    assert decompress_log_bytes(b"\x01\x01" + gzip.compress(text), path="v") == text
    two = gzip.compress(text[:500]) + gzip.compress(text[500:])
    assert decompress_log_bytes(two, path="v") == text
    assert log_limit(10) >= 4 << 20


@pytest.mark.parametrize(
    "data",
    [
        gzip.compress(b"x" * 100)[:-5],  # truncated
        gzip.compress(b"x" * 100) + b"garbage",  # trailing garbage
        b"\x1f\x8b" + zlib.compress(b"x"),  # damaged header
    ],
)
def test_damaged_gzip_is_corrupt(data: bytes) -> None:
    with pytest.raises(CorruptFileError):
        decompress_log_bytes(data, path="v")


def _split(root: Path, name: str) -> AddAction:
    (root / name).write_bytes(b"x" * 10)
    return AddAction(name, {}, 10, 1, True, num_records=1)


@pytest.mark.parametrize("damage", ["wrong id", "missing part", "garbage"])
def test_a_stale_legacy_last_checkpoint_does_not_brick_intact_version_files(
    table: Any, tmp_path: Path, damage: str
) -> None:
    from dataclasses import replace

    from indextables.protocol.checkpoint import write_json_checkpoint
    from indextables.protocol.lastcheckpoint import encode_last_checkpoint

    root = tmp_path / "t"
    adds = [_split(root, f"p{i}.split") for i in range(3)]
    for add in adds:
        table.commit(adds=[add])
    snap = table.snapshot(2)
    actions = [snap.protocol, snap.metadata, *(AddAction.from_file_entry(f) for f in snap.files)]
    pointer = write_json_checkpoint(table.store, version=2, actions=actions, actions_per_part=2)
    log = root / "_transaction_log"
    if damage == "wrong id":
        pointer = replace(pointer, checkpoint_id="not-the-one-written")
    elif damage == "missing part":
        parts = [p for p in log.iterdir() if p.name.startswith(f"{2:020d}.checkpoint.")]
        next(p for p in parts if p.name.count(".") > 2).unlink()
    else:
        (log / f"{2:020d}.checkpoint.json").write_bytes(b"\x01\x01not gzip")
    table.store.put("_transaction_log/_last_checkpoint", encode_last_checkpoint(pointer))
    reopened = open_table(str(root))
    assert {f.path for f in reopened.snapshot().files} == {a.path for a in adds}


@pytest.mark.parametrize(
    "deleted", [(), (0,), (0, 1), (1,), (0, 1, 2), (2,), (0, 1, 2, 3), (4,)], ids=str
)
def test_history_lists_exactly_the_versions_that_load(
    table: Any, tmp_path: Path, deleted: tuple[int, ...]
) -> None:
    from indextables.protocol.errors import VersionNotFoundError

    root = tmp_path / "t"
    for i in range(3):
        table.commit(adds=[_split(root, f"p{i}.split")])
    table.checkpoint()  # a state at version 3
    for i in range(3, 5):
        table.commit(adds=[_split(root, f"p{i}.split")])
    for version in deleted:  # what an interrupted purge or truncate leaves behind
        (root / version_key(version)).unlink()
    reopened = open_table(str(root), check=False)
    listed = [entry.version for entry in reopened.history()]
    assert listed == sorted(listed)
    for version in range(6):
        if version in listed:
            assert reopened.snapshot(version).version == version
        else:
            with pytest.raises(VersionNotFoundError):
                reopened.snapshot(version)
    assert (5 in listed) == (4 not in deleted)


def test_a_failed_state_write_after_a_commit_is_logged_and_counted(
    tmp_path: Path, schema: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from indextables.protocol import TableConfig, add_metrics_hook, remove_metrics_hook
    from indextables.protocol import table as table_module
    from indextables.protocol.errors import ObjectStoreError

    table = create_table(
        str(tmp_path / "t"), schema=schema, config=TableConfig(checkpoint_interval=1)
    )

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise ObjectStoreError("the store refused the state")

    monkeypatch.setattr(table_module, "write_state_for", failing)
    seen: list[tuple[str, float]] = []

    def hook(name: str, value: float, tags: Any) -> None:
        seen.append((name, value))

    add_metrics_hook(hook)
    try:
        with caplog.at_level("WARNING", logger="indextables.protocol.table"):
            version = table.commit([_split(tmp_path / "t", "a.split")])
    finally:
        remove_metrics_hook(hook)
    assert version == 1
    assert ("indextables.state.write.failures", 1) in seen
    assert "version 1 is committed but its state was not written" in caplog.text
    assert [f.path for f in open_table(str(tmp_path / "t")).snapshot().files] == ["a.split"]


def test_the_snapshot_cache_is_bounded_and_drops_expired_entries(
    tmp_path: Path, schema: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from indextables.protocol.predicates import EqualTo
    from indextables.protocol.snapshot import MAX_CACHED_SNAPSHOTS

    table = create_table(str(tmp_path / "t"), schema=schema, partition_columns=("date",))
    (tmp_path / "t" / "date=x").mkdir()
    table.commit([AddAction("date=x/a.split", {"date": "x"}, 10, 1, True, num_records=1)])
    reader = table.reader
    for i in range(3 * MAX_CACHED_SNAPSHOTS):
        table.snapshot(partition_filter=EqualTo("date", f"2024-01-{i:02d}"))
    assert len(reader._snapshots) <= MAX_CACHED_SNAPSHOTS
    first = table.snapshot()
    assert table.snapshot() is first  # a hit stays cached
    later = time.monotonic() + reader.ttl_seconds + 1
    monkeypatch.setattr(time, "monotonic", lambda: later)
    table.snapshot(version=0)
    assert len(reader._snapshots) == 1  # every expired entry went on the next insert


def test_readers_never_fail_while_truncate_and_purge_run(tmp_path: Path, schema: Any) -> None:
    import threading
    import time

    from indextables.protocol import TableConfig
    from indextables.protocol.maintenance.purge import purge

    root = tmp_path / "t"
    config = TableConfig(
        checkpoint_interval=2,
        state_retention_versions=0,
        state_retention_hours=0.0,
        manifest_min_age_hours=0.0,
    )
    writer = create_table(str(root), schema=schema, config=config)
    stop = threading.Event()
    failures: list[str] = []
    reads = 0

    def read_loop() -> None:
        nonlocal reads
        reader = open_table(str(root))
        while not stop.is_set():
            try:
                reader.snapshot()
                open_table(str(root)).snapshot()
                open_table(str(root)).history()
                reads += 3
            except Exception as error:  # every failure counts: none is expected
                failures.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=read_loop) for _ in range(2)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 4.0
    i = 0
    try:
        while time.monotonic() < deadline:
            writer.commit([_split(root, f"p{i}.split")])
            i += 1
            if i % 3 == 0:
                writer.truncate_time_travel()
            if i % 5 == 0:
                purge(writer, log_retention=0.0, now_ms=int(time.time() * 1000) + 10 * 86_400_000)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert reads > 20
    assert failures == [], failures[:5]


@pytest.mark.parametrize("damage", ["every log file", "the newest version file"])
def test_repair_works_when_the_log_is_unreadable(
    golden_root: Path, tmp_path: Path, damage: str
) -> None:
    import json
    import shutil

    source = tmp_path / "source"
    shutil.copytree(golden_root / "04_partitioned", source, copy_function=shutil.copyfile)
    before = open_table(str(source)).snapshot()
    log = source / "_transaction_log"
    if damage == "every log file":
        for path in log.rglob("*"):
            if path.is_file():
                path.write_bytes(b"\x01\x01damaged")
    else:
        shutil.rmtree(log / "state-v00000000000000000001")
        (log / "00000000000000000001.json").write_bytes(b"\x01\x01damaged")
    table = open_table(str(source), check=False)
    result = table.repair(str(tmp_path / "repaired"))
    assert (result.total_splits, result.valid_splits, result.missing_splits) == (3, 3, 0)
    repaired = open_table(str(tmp_path / "repaired")).snapshot()
    assert {(f.path, f.size) for f in repaired.files} == {(f.path, f.size) for f in before.files}
    assert {f.partition_values["date"] for f in repaired.files} == {
        "2024-01-01",
        "2024-01-02",
        "2024-01-03",
    }
    assert repaired.partition_columns == ("date",)
    names = {f["name"] for f in json.loads(repaired.metadata.schema_string)["fields"]}
    assert {"id", "text", "score", "date"} <= names


def test_the_purge_retention_floor_is_a_typed_error_that_says_how_to_override_it(
    tmp_path: Path, schema: Any
) -> None:
    from indextables.protocol import RetentionTooShortError, TableConfig

    table = create_table(str(tmp_path / "t"), schema=schema)
    with pytest.raises(RetentionTooShortError, match="retentionCheckEnabled=false"):
        table.purge(older_than=1.0)
    dry = table.purge(older_than=1.0, dry_run=True)  # deletes nothing: reported, not refused
    assert dry.status == "DRY_RUN"
    assert "a real run would be refused" in (dry.message or "")
    config = TableConfig.from_options({"spark.indextables.purge.retentionCheckEnabled": "false"})
    unchecked = open_table(str(tmp_path / "t"), config=config)
    assert unchecked.purge(older_than=1.0, dry_run=True).status == "DRY_RUN"


@pytest.mark.parametrize("bad", ["../../outside.split", "/abs.split", "s3://other/x.split"])
def test_a_manifest_path_that_escapes_the_table_is_refused_before_any_action(
    tmp_path: Path, schema: dict[str, Any], bad: str
) -> None:
    from indextables.avrostate import UnsafeManifestPathError, read_manifest
    from indextables.avrostate.manifest_writer import encode_manifest

    root = tmp_path / "t"
    table = create_table(str(root), schema=schema, partition_columns=["date"])
    table.commit([AddAction(f"date=d/{i}.split", {"date": "d"}, 10, 1, True) for i in range(3)])
    table.checkpoint()
    (manifest,) = (root / "_transaction_log" / "manifests").glob("*.avro")
    entries = read_manifest(manifest.read_bytes(), path=manifest.name)
    entries[1] = replace(entries[1], path=bad)  # what a foreign writer could leave
    manifest.write_bytes(encode_manifest(entries))
    reader = open_table(str(root), check=False)
    for action in (
        lambda: reader.snapshot().files.paths,  # what `files` and `describe` list
        lambda: reader.drop_partitions("date = 'd'"),
    ):
        with pytest.raises(UnsafeManifestPathError) as caught:
            action()
        assert manifest.name in str(caught.value)
        assert repr(bad) in str(caught.value)
        assert isinstance(caught.value, UnsafePathError)
    assert not (root / version_key(2)).exists()  # drop_partitions wrote no remove
    (problem,) = reader.validate().problems  # validate reports it as damage
    assert repr(bad) in problem


class _DeleteAfterListing:
    """Hook for a real LocalStore: once armed, the next log listing is followed by
    ``deleter`` (a truncate and a purge run in another thread) before it is returned,
    so the caller reads with a listing that names what was just deleted."""

    def __init__(self) -> None:
        self.deleter: Any = None
        self.prefix = "_transaction_log"
        self.fired = 0


def _hooked_store(root: Path, hook: _DeleteAfterListing) -> Any:
    import threading

    from indextables.storage.local import LocalStore

    class HookedStore(LocalStore):
        def list(self, prefix: str = "") -> Any:
            infos = builtins_list(super().list(prefix))
            deleter = hook.deleter
            if deleter is not None and prefix.startswith(hook.prefix):
                hook.deleter = None
                thread = threading.Thread(target=deleter)
                thread.start()
                thread.join()
                hook.fired += 1
            return iter(infos)

    return HookedStore(root)


builtins_list = list


@pytest.mark.parametrize("listing", ["version files", "states"])
@pytest.mark.parametrize("call", ["history", "version_at", "changes_since"])
def test_history_survives_a_truncate_and_purge_between_listing_and_reading(
    tmp_path: Path, schema: Any, call: str, listing: str
) -> None:
    import time

    from indextables.protocol import TableConfig
    from indextables.protocol.maintenance.purge import purge

    root = tmp_path / "t"
    config = TableConfig(
        checkpoint_interval=2,
        state_retention_versions=0,
        state_retention_hours=0.0,
        manifest_min_age_hours=0.0,
    )
    writer = create_table(str(root), schema=schema, config=config)
    hook = _DeleteAfterListing()
    if listing == "states":
        hook.prefix = "_transaction_log/state-"
    failures: list[str] = []
    for i in range(12):
        writer.commit([_split(root, f"p{i}.split")])
        # A new handle each time: nothing read before the deletion is cached.
        reader = open_table(str(root), store=_hooked_store(root, hook), config=config)

        def delete() -> None:
            writer.truncate_time_travel()
            purge(writer, log_retention=0.0, now_ms=int(time.time() * 1000) + 10 * 86_400_000)

        hook.deleter = delete
        try:
            if call == "history":
                entries = reader.history()
                assert entries
                assert entries[-1].version == i + 1
            elif call == "version_at":
                assert reader.version_at(int(time.time() * 1000) + 60_000) == i + 1
            else:
                reader.changes_since(-1)
        except Exception as error:  # every failure counts: none is expected
            failures.append(f"{i}: {type(error).__name__}: {error}")
    assert hook.fired >= 12
    assert failures == [], failures


def test_changes_since_a_version_beyond_the_latest_is_version_not_found(table: Any) -> None:
    from indextables.protocol import VersionNotFoundError

    assert table.changes_since(0).adds == ()
    with pytest.raises(VersionNotFoundError, match="latest version is 0"):
        table.changes_since(5)


class _CutFirst:
    """A store that serves one key cut to ``keep`` bytes ``times`` times before all of it
    (a server that listed an object before its body was readable, or cut a response)."""

    def __init__(self, inner: Any, key: str, times: int, keep: int = 0) -> None:
        self.inner, self.key, self.times, self.keep, self.reads = inner, key, times, keep, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get(self, key: str) -> bytes:
        data: bytes = self.inner.get(key)
        if key == self.key:
            self.reads += 1
            if self.reads <= self.times:
                return data[: self.keep]
        return data


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses a re-read of a version file waited (recorded, not slept)."""
    waited: list[float] = []
    monkeypatch.setattr("indextables.protocol.reread.time.sleep", waited.append)
    return waited


@pytest.mark.parametrize(("times", "keep"), [(1, 0), (len(REREAD_PAUSES), 0), (1, 12)])
def test_a_version_file_read_cut_short_is_read_again(
    store: Any, pauses: list[float], times: int, keep: int
) -> None:
    """No writer writes an empty or cut version file, so such a read is read again (an
    empty one was seen on SeaweedFS right after a writer was killed) and the version
    replays with its actions."""
    store.put_if_absent(version_key(0), encode_version_file([AddAction("a.split", {}, 1, 1, True)]))
    flaky = _CutFirst(store, version_key(0), times, keep)
    assert [a.path for a in read_version(flaky, 0)] == ["a.split"]  # type: ignore[attr-defined]
    assert flaky.reads == times + 1
    assert pauses == list(REREAD_PAUSES[:times])


def test_a_version_file_that_stays_empty_is_corrupt(store: Any, pauses: list[float]) -> None:
    store.put(version_key(0), b"")
    with pytest.raises(CorruptFileError, match="empty"):
        read_version(store, 0)
    assert pauses == list(REREAD_PAUSES)


def test_the_same_damaged_bytes_twice_are_corrupt_at_once(store: Any, pauses: list[float]) -> None:
    store.put(version_key(0), b'{"add": {"path"\n')
    with pytest.raises(CorruptFileError):
        read_version(store, 0)
    assert pauses == [REREAD_PAUSES[0]]
