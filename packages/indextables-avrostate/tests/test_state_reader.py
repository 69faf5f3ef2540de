"""Reading states: the golden tables' expected.json, current-state choice, pruning, bad input."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from indextables.avrostate import (
    CorruptAvroFileError,
    MissingManifestError,
    StateNotFoundError,
    StateOptions,
    UnsupportedStateVersionError,
    read_state,
    state_versions,
    write_state,
)
from indextables.avrostate.container import parse_container
from indextables.avrostate.layout import state_json_key, state_key
from indextables.avrostate.state_file import decode_state, state_to_record
from indextables.protocol.errors import CorruptFileError, UnsupportedProtocolError
from indextables.protocol.predicates import parse_predicate
from indextables.protocol.state import FileEntry

_WIRE = {
    "path": "path",
    "partitionValues": "partition_values",
    "size": "size",
    "dataChange": "data_change",
    "minValues": "min_values",
    "maxValues": "max_values",
    "numRecords": "num_records",
    "footerStartOffset": "footer_start_offset",
    "footerEndOffset": "footer_end_offset",
    "numMergeOps": "num_merge_ops",
}


def _as_expected(entry: FileEntry, registry: dict[str, str], keys: set[str]) -> dict[str, Any]:
    out = {wire: getattr(entry, attr) for wire, attr in _WIRE.items()}
    ref = entry.doc_mapping_ref
    out["docMappingJson"] = entry.doc_mapping_json or (registry.get(ref) if ref else None)
    unknown = keys - set(out)
    assert not unknown, f"expected.json lists fields the test does not map: {unknown}"
    return {k: out[k] for k in keys}


def test_golden_state_matches_expected(
    golden_name: str, golden: Path, copy_golden: Any, decoder: ModuleType
) -> None:
    golden_table = copy_golden(golden_name)
    expected = json.loads((golden / f"{golden_name}.expected.json").read_text())
    version = state_versions(golden_table)[-1]
    loaded = read_state(golden_table, version)
    assert version == expected["version"]
    assert f"state-v{version:020d}" == expected["stateDir"]
    assert loaded.manifest.num_files == expected["numFiles"] == len(loaded.files)
    registry = dict(loaded.manifest.schema_registry)
    keys = set(expected["liveFiles"][0])
    got = sorted((_as_expected(e, registry, keys) for e in loaded.files), key=lambda d: d["path"])
    assert got == sorted(expected["liveFiles"], key=lambda d: d["path"])


@pytest.mark.parametrize("golden_table", ["13_after_purge"], indirect=True)
def test_current_state_is_highest_version_not_newest_file(golden_table: Any) -> None:
    versions = state_versions(golden_table)
    assert versions == [0, 1, 2, 3, 4, 5]
    assert read_state(golden_table, versions[-1]).manifest.state_version == 5


@pytest.mark.parametrize("golden_table", ["04_partitioned"], indirect=True)
def test_partition_filter_drops_entries_while_decoding(
    golden_table: Any, decoder: ModuleType
) -> None:
    loaded = read_state(golden_table, 1, partition_filter=parse_predicate("date = '2024-01-02'"))
    assert [e.partition_values for e in loaded.files] == [{"date": "2024-01-02"}]
    assert loaded.manifests_read == loaded.manifests_total == 1


@pytest.mark.parametrize("golden_table", ["02_five_appends"], indirect=True)
def test_older_json_state_form_is_read(golden_table: Any) -> None:
    version = state_versions(golden_table)[-1]
    avro = decode_state(golden_table.get(state_key(version)), path="x")
    golden_table.put(state_json_key(version), json.dumps(state_to_record(avro)).encode())
    golden_table.delete(state_key(version))
    loaded = read_state(golden_table, version)
    assert loaded.manifest == avro
    assert len(loaded.files) == avro.num_files


@pytest.mark.parametrize("golden_table", ["02_five_appends"], indirect=True)
def test_missing_manifest_is_a_typed_error_naming_it(golden_table: Any) -> None:
    version = state_versions(golden_table)[-1]
    info = read_state(golden_table, version).manifest.manifests[0]
    golden_table.delete(f"_transaction_log/{info.path}")
    with pytest.raises(MissingManifestError, match=info.path) as caught:
        read_state(golden_table, version)
    assert isinstance(caught.value, FileNotFoundError)


@pytest.mark.parametrize("golden_table", ["01_single_write"], indirect=True)
def test_unsupported_format_version_is_a_typed_error(golden_table: Any) -> None:
    version = state_versions(golden_table)[-1]
    record = state_to_record(decode_state(golden_table.get(state_key(version)), path="x"))
    record["formatVersion"] = 2
    golden_table.delete(state_key(version))
    golden_table.put(state_json_key(version), json.dumps(record).encode())
    with pytest.raises(UnsupportedStateVersionError, match=r"_manifest\.json") as caught:
        read_state(golden_table, version)
    assert isinstance(caught.value, UnsupportedProtocolError)


@pytest.mark.parametrize("golden_table", ["01_single_write"], indirect=True)
def test_corrupt_manifest_names_the_file(golden_table: Any, decoder: ModuleType) -> None:
    version = state_versions(golden_table)[-1]
    info = read_state(golden_table, version).manifest.manifests[0]
    key = f"_transaction_log/{info.path}"
    golden_table.put(key, b"Obj\x02" + golden_table.get(key)[4:])
    with pytest.raises(CorruptAvroFileError, match=Path(info.path).name) as caught:
        read_state(golden_table, version)
    assert isinstance(caught.value, CorruptFileError)


def test_missing_state_is_a_typed_error(store: Any) -> None:
    assert state_versions(store) == []
    with pytest.raises(StateNotFoundError, match="state-v00000000000000000007"):
        read_state(store, 7)


def _compacted(store: Any, entries: list[FileEntry], per_manifest: int, block_bytes: int) -> Any:
    options = StateOptions(entries_per_manifest=per_manifest, block_bytes=block_bytes)
    return write_state(
        store,
        version=1,
        base=None,
        adds=entries,
        removes=[],
        schema_registry={},
        metadata=None,
        force_compaction=True,
        options=options,
    )


@pytest.mark.parametrize(
    ("count", "per_manifest", "block_bytes", "manifests"),
    [
        (5, 50, 65536, 1),  # one small manifest: decompressed by the reading thread
        (120, 500, 1024, 1),  # one manifest of many blocks: decompressed in runs
        (120, 40, 1024, 3),
        (120, 40, 65536, 3),
    ],
)
def test_parallel_reads_equal_a_sequential_read(
    store: Any,
    entries: Any,
    decoder: ModuleType,
    count: int,
    per_manifest: int,
    block_bytes: int,
    manifests: int,
) -> None:
    originals = entries(count)
    state = _compacted(store, originals, per_manifest, block_bytes)
    assert len(state.manifests) == manifests
    sequential = read_state(store, 1, parallelism=1).files
    assert sorted(sequential, key=lambda e: e.path) == sorted(originals, key=lambda e: e.path)
    for parallelism in (2, 8):
        files = read_state(store, 1, parallelism=parallelism).files
        assert list(files.paths) == list(sequential.paths)
        assert list(files.sizes) == list(sequential.sizes)
        assert list(files) == list(sequential)


def test_corrupt_block_of_a_parallel_read_names_the_file(store: Any, entries: Any) -> None:
    state = _compacted(store, entries(120), 500, 1024)
    key = f"_transaction_log/{state.manifests[0].path}"
    data = store.get(key)
    blocks = parse_container(data, path=key).blocks
    assert len(blocks) > 16
    at = data.index(blocks[len(blocks) // 2].data)
    store.put(key, data[:at] + b"\x00\x00\x00\x00" + data[at + 4 :])
    with pytest.raises(CorruptAvroFileError, match=Path(key).name):
        read_state(store, 1, parallelism=4)


def test_resolve_doc_mappings_restores_json_as_entries_are_built(
    store: Any, entries: Any, decoder: ModuleType
) -> None:
    written = entries(300)
    assert all(e.doc_mapping_ref and e.doc_mapping_json is None for e in written)
    registry = {written[0].doc_mapping_ref: '[{"name":"id","type":"i64"}]'}
    write_state(
        store,
        version=1,
        base=None,
        adds=written,
        removes=[],
        schema_registry=registry,
        metadata=None,
    )
    # Without it, entries are what the manifest holds.
    assert {e.path: e for e in read_state(store, 1).files} == {e.path: e for e in written}
    files = read_state(store, 1).files
    assert files.resolve_doc_mappings(registry) is files
    resolved = {e.path: e for e in files}
    for entry in written:
        got = resolved[entry.path]
        assert got.doc_mapping_json == registry[entry.doc_mapping_ref]
        assert got.doc_mapping_ref == entry.doc_mapping_ref
        assert replace(got, doc_mapping_json=None) == entry
    files = read_state(store, 1).files.resolve_doc_mappings({})
    assert all(e.doc_mapping_json is None for e in files)  # unknown refs stay refs


@pytest.mark.parametrize("bad", ["../../etc/passwd", "/abs.split", "s3://other/x.split"])
def test_a_state_whose_manifest_names_an_unsafe_path_is_refused(
    store: Any, entries: Any, decoder: ModuleType, bad: str
) -> None:
    from indextables.avrostate import UnsafeManifestPathError
    from indextables.protocol.errors import UnsafePathError

    listed = entries(5)
    good = listed[3].path
    crafted = (bad + good)[: len(good)]  # same length: the record's framing stays valid
    options = StateOptions(codec="null", entries_per_manifest=100)
    write_state(
        store,
        version=1,
        base=None,
        adds=listed,
        removes=[],
        schema_registry={},
        metadata=None,
        force_compaction=True,
        options=options,
    )
    (manifest,) = store.root.glob("_transaction_log/manifests/*.avro")
    data = manifest.read_bytes()
    assert data.count(good.encode()) == 1
    manifest.write_bytes(data.replace(good.encode(), crafted.encode()))
    with pytest.raises(UnsafeManifestPathError) as caught:
        read_state(store, 1)
    assert caught.value.path.endswith(manifest.name)  # the manifest, named
    assert repr(crafted) in str(caught.value)  # and the path
    assert isinstance(caught.value, CorruptFileError)
    assert isinstance(caught.value, UnsafePathError)


def test_a_state_write_of_an_unsafe_path_is_refused(store: Any, entries: Any) -> None:
    from indextables.avrostate import UnsafeManifestPathError

    listed = entries(2)
    listed[1] = replace(listed[1], path="../escape.split")
    with pytest.raises(UnsafeManifestPathError, match="escape"):
        _compacted(store, listed, 100, 1 << 20)


@pytest.mark.parametrize("golden_table", ["13_after_purge"], indirect=True)
def test_a_state_root_read_cut_short_is_read_again(
    golden_table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state root never changes: bytes that do not decode (here: its first read comes
    back empty) are read again, as version files are (indextables.protocol.reread)."""
    pauses: list[float] = []
    monkeypatch.setattr("indextables.protocol.reread.time.sleep", pauses.append)
    real_get, reads = golden_table.get, []

    def first_read_empty(key: str) -> bytes:
        reads.append(key)
        data: bytes = real_get(key)
        return b"" if key == state_key(5) and reads.count(key) == 1 else data

    monkeypatch.setattr(golden_table, "get", first_read_empty)
    assert read_state(golden_table, 5).manifest.state_version == 5
    assert reads.count(state_key(5)) == 2
    assert len(pauses) == 1
