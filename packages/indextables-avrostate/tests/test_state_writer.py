"""Writing states: incremental reuse, compaction and its triggers, tombstones, conflicts."""

from __future__ import annotations

import io
from types import ModuleType
from typing import Any

import fastavro
import pytest

from indextables.avrostate import DuplicateAddError, StateOptions, read_state, write_state
from indextables.avrostate.compaction import partition_sort_key
from indextables.avrostate.container import parse_container
from indextables.avrostate.layout import manifest_key, state_key
from indextables.avrostate.manifest_writer import file_entry_to_record, manifest_info
from indextables.avrostate.schemas import FILE_ENTRY_SCHEMA_V1, FILE_ENTRY_SCHEMA_V2
from indextables.avrostate.state_file import encode_state
from indextables.avrostate.state_writer import CompactionReason, compaction_reason
from indextables.protocol.errors import ObjectExistsError
from indextables.protocol.predicates import compare_values, parse_predicate
from indextables.protocol.state import FileEntry, StateManifest

REGISTRY = {"z7TwwZ-tDWGD-uX5": "[]"}


def _write(
    store: Any,
    version: int,
    base: StateManifest | None,
    adds: Any = (),
    removes: Any = (),
    **kw: Any,
) -> StateManifest:
    return write_state(
        store,
        version=version,
        base=base,
        adds=list(adds),
        removes=list(removes),
        schema_registry=REGISTRY,
        metadata=None,
        **kw,
    )


def _live(store: Any, version: int) -> dict[str, FileEntry]:
    files = read_state(store, version).files
    paths = [e.path for e in files]
    assert len(paths) == len(set(paths)), "a path is live twice"
    return {e.path: e for e in files}


def _manifest_bytes(store: Any, state: StateManifest) -> int:
    return sum(len(store.get(manifest_key(m.path, state.state_version))) for m in state.manifests)


def test_first_state_then_incremental_reuses_manifests(
    store: Any, entries: Any, decoder: ModuleType
) -> None:
    first = _write(store, 1, None, entries(1000))
    second = _write(store, 2, first, entries(10, start=1000, version=2))
    assert second.manifests[: len(first.manifests)] == first.manifests
    assert len(second.manifests) == len(first.manifests) + 1
    new = second.manifests[-1]
    assert (new.num_entries, new.min_added_at_version, new.max_added_at_version) == (10, 2, 2)
    assert second.num_files == 1010
    assert second.tombstones == ()
    assert second.total_bytes == sum(e.size for e in entries(1010))
    assert _live(store, 2) == {
        e.path: e for e in entries(1000) + entries(10, start=1000, version=2)
    }
    # O(delta): the write added one small manifest and the root, nothing the size of the base
    written = len(store.get(manifest_key(new.path, 2))) + len(store.get(state_key(2)))
    assert written * 4 < _manifest_bytes(store, first)


def test_removes_become_tombstones_with_exact_counts(
    store: Any, entries: Any, decoder: ModuleType
) -> None:
    base = _write(store, 1, None, entries(100))
    gone = [e.path for e in entries(3)] + ["not/live.split"]
    state = _write(store, 2, base, removes=gone)
    assert state.tombstones == tuple(gone[:3])
    assert state.num_files == 97
    assert state.total_bytes == base.total_bytes - sum(e.size for e in entries(3))
    assert sum(m.tombstone_count for m in state.manifests) == 3
    assert sum(m.live_entry_count for m in state.manifests) == 97
    assert set(_live(store, 2)) == {e.path for e in entries(100)} - set(gone)


def test_first_state_is_compacted_sorted_with_bounds(store: Any, entries: Any) -> None:
    opts = StateOptions(entries_per_manifest=30)
    state = _write(store, 1, None, entries(100, partitions=7), options=opts)
    assert [m.num_entries for m in state.manifests] == [30, 30, 30, 10]
    keys = [partition_sort_key(e.partition_values) for e in read_state(store, 1).files]
    assert keys == sorted(keys)
    for info in state.manifests:
        files = [e for e in read_state(store, 1).files if e.path in _paths(store, info, 1)]
        dates = [e.partition_values["date"] for e in files]
        bounds = info.partition_bounds
        assert bounds is not None
        assert bounds["date"].min == min(dates)
        assert bounds["date"].max == max(dates)


def _paths(store: Any, info: Any, version: int) -> set[str]:
    from indextables.avrostate import read_manifest

    return {e.path for e in read_manifest(store.get(manifest_key(info.path, version)), path="m")}


def test_numeric_partition_bounds_compare_as_numbers(store: Any) -> None:
    adds = [FileEntry(f"p{i}.split", {"n": str(i)}, 1, 0, True, 1, 0) for i in (9, 10, 100, 2)]
    state = _write(store, 1, None, adds)
    bounds = state.manifests[0].partition_bounds
    assert bounds is not None
    assert (bounds["n"].min, bounds["n"].max) == ("2", "100")
    assert compare_values("9", "10") < 0


def test_unpartitioned_tables_have_null_bounds(store: Any) -> None:
    state = _write(store, 1, None, [FileEntry("a.split", {}, 1, 0, True, 1, 0)])
    assert state.manifests[0].partition_bounds is None


def test_tombstone_ratio_triggers_compaction(store: Any, entries: Any, decoder: ModuleType) -> None:
    base = _write(store, 1, None, entries(100))
    state = _write(store, 2, base, removes=[e.path for e in entries(11)])
    assert state.tombstones == ()  # 11 / 89 > 10 %: compacted
    assert state.num_files == 89
    assert set(_live(store, 2)) == {e.path for e in entries(100)[11:]}


def test_too_many_manifests_triggers_compaction(store: Any, entries: Any) -> None:
    state = _write(store, 1, None, entries(1))
    for v in range(2, 22):
        state = _write(store, v, state, entries(1, start=v))
    assert len(state.manifests) == 1  # the 21st manifest would exceed 20
    assert state.num_files == 21
    assert len(_live(store, 21)) == 21


def test_forced_compaction_drops_tombstones(store: Any, entries: Any, decoder: ModuleType) -> None:
    base = _write(store, 1, None, entries(100))
    mid = _write(store, 2, base, removes=[entries(1)[0].path])
    assert mid.tombstones
    state = _write(store, 3, mid, force_compaction=True)
    assert state.tombstones == ()
    assert state.num_files == 99
    assert set(_live(store, 3)) == {e.path for e in entries(100)[1:]}


def test_readded_tombstoned_path_is_live_once_and_never_resurrected(
    store: Any, entries: Any, decoder: ModuleType
) -> None:
    base = _write(store, 1, None, entries(100))
    target = entries(1)[0]
    removed = _write(store, 2, base, removes=[target.path])
    assert target.path not in _live(store, 2)
    replacement = FileEntry(target.path, target.partition_values, 5, 0, True, 3, 0)
    state = _write(store, 3, removed, adds=[replacement])
    live = _live(store, 3)
    assert live[target.path] == replacement
    assert len(live) == 100
    # compaction removed the old entry from every manifest: it cannot come back
    assert state.tombstones == ()
    again = _write(store, 4, state, removes=[target.path])
    assert target.path not in _live(store, 4)
    assert again.num_files == 99


def test_replace_in_one_commit(store: Any, entries: Any) -> None:
    base = _write(store, 1, None, entries(20))
    old = entries(1)[0]
    new = FileEntry(old.path, old.partition_values, 1, 0, True, 2, 0)
    state = _write(store, 2, base, adds=[new], removes=[old.path])
    assert _live(store, 2)[old.path] == new
    assert state.num_files == 20


def test_existing_state_is_a_conflict(store: Any, entries: Any) -> None:
    base = _write(store, 1, None, entries(3))
    _write(store, 2, base, entries(1, start=3))
    with pytest.raises(ObjectExistsError):
        _write(store, 2, base, entries(1, start=4))
    assert len(_live(store, 2)) == 4


def test_compaction_keeps_native_fields_and_mixes_schemas(store: Any, entries: Any) -> None:
    base = _write(store, 1, None, entries(10))
    native = entries(2, start=10, delete_opstamp=5, time_range_start=1)
    state = _write(store, 2, base, native, force_compaction=True)
    schema = parse_container(store.get(manifest_key(state.manifests[0].path, 2)), path="m").schema
    assert schema == FILE_ENTRY_SCHEMA_V2
    assert _live(store, 2) == {e.path: e for e in entries(10) + native}
    plain = _write(store, 3, None, entries(3))
    schema = parse_container(store.get(manifest_key(plain.manifests[0].path, 3)), path="m").schema
    assert schema == FILE_ENTRY_SCHEMA_V1


def test_pruned_read_fetches_only_matching_manifests(
    store: Any, entries: Any, decoder: ModuleType
) -> None:
    opts = StateOptions(entries_per_manifest=10)
    _write(store, 1, None, entries(100, partitions=10), options=opts)
    store.gets.clear()
    loaded = read_state(store, 1, partition_filter=parse_predicate("date = '2024-01-03'"))
    assert loaded.manifests_total == 10
    assert loaded.manifests_read == 1
    assert {e.partition_values["date"] for e in loaded.files} == {"2024-01-03"}
    assert len(loaded.files) == 10
    assert sum(1 for k in store.gets if "/manifests/" in k) == 1


def test_compaction_reason_order() -> None:
    opts = StateOptions()
    base = StateManifest(1, 1, 0, 10, 0, (), tombstones=("x",))
    add = [FileEntry("x", {}, 1, 0, True, 1, 0)]
    kw: dict[str, Any] = {"new_tombstones": 0, "num_files": 10, "options": opts}
    assert compaction_reason(base, [], frozenset(), force=True, **kw) is CompactionReason.FORCED
    assert compaction_reason(None, [], frozenset(), force=False, **kw) is CompactionReason.NO_BASE
    assert (
        compaction_reason(base, add, frozenset(), force=False, **kw)
        is CompactionReason.READDED_PATH
    )
    assert compaction_reason(base, [], frozenset(), force=False, **kw) is None
    kw["num_files"] = 9
    assert (
        compaction_reason(base, [], frozenset(), force=False, **kw)
        is CompactionReason.TOMBSTONE_RATIO
    )


def test_compacting_a_reference_table_keeps_every_entry(
    copy_golden: Any, decoder: ModuleType
) -> None:
    table = copy_golden("13_after_purge")
    before = read_state(table, 5)
    state = _write(table, 6, before.manifest, force_compaction=True)
    assert state.tombstones == ()
    assert len(state.manifests) == 1
    assert state.num_files == before.manifest.num_files
    assert state.total_bytes == sum(e.size for e in before.files)
    assert _live(table, 6) == {e.path: e for e in before.files}


def test_compaction_re_encodes_foreign_writer_schemas(store: Any, entries: Any) -> None:
    originals = entries(30)
    fields = list(reversed(FILE_ENTRY_SCHEMA_V1["fields"]))
    schema = {**FILE_ENTRY_SCHEMA_V1, "fields": fields}
    out = io.BytesIO()
    fastavro.writer(
        out, fastavro.parse_schema(schema), [file_entry_to_record(e) for e in originals]
    )
    store.put("_transaction_log/manifests/manifest-foreign.avro", out.getvalue())
    info = manifest_info("manifests/manifest-foreign.avro", originals)
    base = StateManifest(1, 1, 0, 30, sum(e.size for e in originals), (info,))
    store.put_if_absent(state_key(1), encode_state(base))
    assert _live(store, 1) == {e.path: e for e in originals}
    state = _write(store, 2, base, force_compaction=True)
    new_schema = parse_container(store.get(manifest_key(state.manifests[0].path, 2)), path="m")
    assert new_schema.schema == FILE_ENTRY_SCHEMA_V1
    assert _live(store, 2) == {e.path: e for e in originals}


def test_the_same_path_added_twice_is_refused(store: Any, entries: Any) -> None:
    base = _write(store, 1, None, entries(3))
    before = sorted(o.key for o in store.list())
    twice = entries(1, start=3) * 2
    with pytest.raises(DuplicateAddError, match="added twice"):
        _write(store, 2, base, twice)
    assert sorted(o.key for o in store.list()) == before  # nothing was written
    assert len(_live(store, 1)) == 3
