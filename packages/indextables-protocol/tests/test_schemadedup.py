"""Schema dedup: the canonical hash reproduces every golden docMappingRef."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol.actions import AddAction
from indextables.protocol.errors import CorruptFileError
from indextables.protocol.schemadedup import (
    canonical_doc_mapping,
    configuration_with_registry,
    deduplicate_adds,
    doc_mapping_hash,
    registry_from_configuration,
    resolve_doc_mapping,
)
from indextables.protocol.state import FileEntry, with_doc_mapping_json

MAPPING = (
    '[{"fast":true,"indexed":true,"name":"id","stored":true,"type":"i64"},'
    '{"fast":true,"indexed":true,"name":"text","stored":true,"tokenizer":"raw","type":"text"}]'
)


def test_golden_registries_hash_to_their_refs(
    golden_table: Path, read_avro: Callable[[Path], list[dict[str, Any]]]
) -> None:
    states = sorted((golden_table / "_transaction_log").glob("state-v*/_manifest.avro"))
    registry: dict[str, str] = {}
    for state in states:
        for record in read_avro(state):
            registry.update(record["schemaRegistry"])
    assert registry
    for ref, doc_mapping in registry.items():
        assert doc_mapping_hash(doc_mapping) == ref


def test_the_two_refs_named_by_the_decisions_are_reproduced(
    read_avro: Callable[[Path], list[dict[str, Any]]], golden_root: Path
) -> None:
    found = set()
    for state in golden_root.glob("*/_transaction_log/state-v*/_manifest.avro"):
        for record in read_avro(state):
            found |= {doc_mapping_hash(j) for j in record["schemaRegistry"].values()}
    assert {"z7TwwZ-tDWGD-uX5", "gC45RGOqJ_Grt0xH"} <= found


def test_hash_ignores_key_and_field_order() -> None:
    reordered = (
        '[{"type":"text","tokenizer":"raw","stored":true,"name":"text","indexed":true,"fast":true},'
        '{"type":"i64","stored":true,"name":"id","indexed":true,"fast":true}]'
    )
    assert doc_mapping_hash(reordered) == doc_mapping_hash(MAPPING)
    assert len(doc_mapping_hash(MAPPING)) == 16


def test_canonical_form_keeps_non_ascii_and_unnamed_array_order() -> None:
    assert canonical_doc_mapping('{"b":[3,1],"a":"é"}') == '{"a":"é","b":[3,1]}'


def test_dedup_then_resolve_restores_the_mapping() -> None:
    add = AddAction("p.split", {}, 1, 1, True, doc_mapping_json=MAPPING)
    (deduped,), new = deduplicate_adds([add], {})
    ref = doc_mapping_hash(MAPPING)
    assert deduped.doc_mapping_ref == ref
    assert deduped.doc_mapping_json is None
    assert new == {ref: MAPPING}
    config = configuration_with_registry({"other": "x"}, new)
    assert config["docMappingSchema." + ref] == MAPPING
    registry = registry_from_configuration(config)
    assert registry == new
    assert resolve_doc_mapping(deduped, registry).doc_mapping_json == MAPPING
    (_,), again = deduplicate_adds([add], registry)
    assert again == {}


def test_unknown_ref_is_an_error_naming_the_file() -> None:
    add = AddAction("p.split", {}, 1, 1, True, doc_mapping_ref="nope")
    with pytest.raises(CorruptFileError, match=r"v\.json.*nope"):
        resolve_doc_mapping(add, {}, path="v.json")


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"min_values": {"id": "1"}, "max_values": {"id": "9"}, "num_records": 3},
        {"split_tags": ("a",), "footer_start_offset": 5, "has_footer_offsets": True},
    ],
)
def test_file_entries_get_their_mapping_like_dataclasses_replace(extra: dict[str, Any]) -> None:
    entry = FileEntry("p.split", {"d": "1"}, 10, 2, True, 4, 5, doc_mapping_ref="r1", **extra)
    restored = resolve_doc_mapping(entry, {"r1": "[]"})
    assert restored == replace(entry, doc_mapping_json="[]")
    assert type(restored) is FileEntry
    assert entry.doc_mapping_json is None  # the original is untouched
    assert with_doc_mapping_json(entry, "[1]") == replace(entry, doc_mapping_json="[1]")


class _ListStateFormat:
    """The avro-state format with its files handed over as a plain list.

    A state format without ``resolve_doc_mappings`` (a JSON checkpoint, a
    third-party format): the engine restores the doc mappings itself.
    """

    name = "list-state"

    def __init__(self) -> None:
        from indextables.avrostate import AvroStateFormat

        self._inner = AvroStateFormat()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def read_state(self, store: Any, version: int, **kw: Any) -> Any:
        loaded = self._inner.read_state(store, version, **kw)
        return replace(loaded, files=list(loaded.files))


def test_a_state_of_a_format_without_the_hook_is_resolved_once_not_per_snapshot(
    monkeypatch: pytest.MonkeyPatch, store: Any
) -> None:
    from indextables.protocol import create_table, open_table
    from indextables.protocol import snapshot as snapshot_module

    fmt = _ListStateFormat()
    schema = {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True}]}
    table = create_table("memory://t", schema=schema, store=store, state_format=fmt)
    adds = [AddAction(f"p{i}.split", {}, 1, 1, True, doc_mapping_json=MAPPING) for i in range(20)]
    table.commit(adds=adds)
    table.checkpoint()
    table.commit(adds=[AddAction("late.split", {}, 1, 1, True, doc_mapping_json=MAPPING)])
    table.commit(adds=[AddAction("later.split", {}, 1, 1, True, doc_mapping_json=MAPPING)])
    calls: list[str] = []
    resolve = snapshot_module.resolve_doc_mapping

    def counted(record: Any, registry: Any, **kw: Any) -> Any:
        calls.append(record.path)
        return resolve(record, registry, **kw)

    monkeypatch.setattr(snapshot_module, "resolve_doc_mapping", counted)
    reader = open_table("memory://t", store=store, state_format=fmt)
    state = reader.snapshot(2)
    latest = reader.snapshot()
    assert state.state_version == latest.state_version == 1
    assert len(latest.files) == 22
    assert {f.doc_mapping_json for f in latest.files} == {MAPPING}
    # Only the adds replayed after the state pass through the engine's resolution.
    assert set(calls) == {"late.split", "later.split"}
