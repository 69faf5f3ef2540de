"""AvroStateFormat is the protocol's StateFormat and is found through its entry point."""

from __future__ import annotations

from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

from indextables.avrostate import AvroStateFormat, FileEntries, StateOptions
from indextables.protocol.predicates import parse_predicate
from indextables.protocol.stateformat import StateFormat


def test_registered_under_the_entry_point() -> None:
    found = {ep.name: ep for ep in entry_points(group="indextables.state_formats")}
    assert found["avro-state"].load() is AvroStateFormat
    fmt = AvroStateFormat()
    assert isinstance(fmt, StateFormat)
    assert fmt.name == "avro-state"


def test_write_then_read_through_the_format(store: Any, entries: Any, decoder: ModuleType) -> None:
    fmt = AvroStateFormat(options=StateOptions(parallelism=2, entries_per_manifest=40))
    assert fmt.state_versions(store) == []
    assert fmt.latest_version(store) is None
    first = fmt.write_state(
        store,
        version=3,
        base=None,
        adds=entries(100),
        removes=[],
        schema_registry={"r": "[]"},
        metadata='{"metaData":{}}',
    )
    second = fmt.write_state(
        store,
        version=4,
        base=first,
        adds=entries(5, start=100),
        removes=[],
        schema_registry={},
        metadata=None,
    )
    assert fmt.state_versions(store) == [3, 4]
    assert fmt.latest_version(store) == 4
    assert fmt.read_manifest(store, 4) == second
    loaded = fmt.read_state(store, 4)
    assert isinstance(loaded.files, FileEntries)
    assert sorted(e.path for e in loaded.files) == sorted(e.path for e in entries(105))
    assert loaded.manifest.schema_registry == {"r": "[]"}
    assert list(loaded.files.paths) == [e.path for e in loaded.files]
    assert list(loaded.files.sizes) == [e.size for e in loaded.files]
    assert list(loaded.files.num_records) == [e.num_records for e in loaded.files]
    assert list(loaded.files.footer_start_offsets) == [e.footer_start_offset for e in loaded.files]
    assert list(loaded.files.footer_end_offsets) == [e.footer_end_offset for e in loaded.files]
    assert list(loaded.files.partition_values) == [e.partition_values for e in loaded.files]
    assert loaded.files[-1] is loaded.files[len(loaded.files) - 1]
    assert [e.path for e in loaded.files[2:5]] == list(loaded.files.paths[2:5])
    pruned = fmt.read_state(store, 4, partition_filter=parse_predicate("date = '2024-01-01'"))
    assert pruned.manifests_read < pruned.manifests_total
    assert {e.partition_values["date"] for e in pruned.files} == {"2024-01-01"}
