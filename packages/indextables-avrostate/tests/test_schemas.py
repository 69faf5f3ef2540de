"""The schema constants equal the reference's headers and DECISIONS.md, field by field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from indextables.avrostate.container import parse_container
from indextables.avrostate.schemas import (
    FILE_ENTRY_NATIVE_FIELDS,
    FILE_ENTRY_SCHEMA_V1,
    FILE_ENTRY_SCHEMA_V2,
    NAMESPACE,
    STATE_MANIFEST_SCHEMA_V1,
)

# The wire-format facts (field ids, StateManifest field types), kept in the repository.
SPEC_FACTS = Path(__file__).resolve().parents[3] / "testdata/spec-facts.json"


def _facts() -> dict[str, Any]:
    if not SPEC_FACTS.is_file():
        raise AssertionError(f"spec facts not found at {SPEC_FACTS}")
    loaded: dict[str, Any] = json.loads(SPEC_FACTS.read_text())
    return loaded


def _render(type_: Any) -> str:
    """A schema type in DECISIONS.md's notation (``map<string>``, ``["null","string"]``)."""
    if isinstance(type_, str):
        return type_
    if isinstance(type_, list):
        return json.dumps([_render(t) for t in type_], separators=(",", ":"))
    if type_["type"] == "map":
        return f"map<{_render(type_['values'])}>"
    if type_["type"] == "array":
        return f"array<{_render(type_['items'])}>"
    return str(type_["name"])


def test_file_entry_v1_equals_every_golden_manifest_header(golden: Path) -> None:
    manifests = sorted(golden.glob("*/_transaction_log/manifests/*.avro"))
    assert manifests
    for path in manifests:
        assert parse_container(path.read_bytes(), path=str(path)).schema == FILE_ENTRY_SCHEMA_V1


def test_state_manifest_equals_every_golden_state_header(golden: Path) -> None:
    states = sorted(golden.glob("*/_transaction_log/state-v*/_manifest.avro"))
    assert states
    for path in states:
        schema = parse_container(path.read_bytes(), path=str(path)).schema
        assert schema == STATE_MANIFEST_SCHEMA_V1


def test_file_entry_field_ids_match_decisions() -> None:
    ids = _facts()["file_entry_field_ids"]
    assert len(ids) == 25
    schema_ids = {f["name"]: f["field-id"] for f in FILE_ENTRY_SCHEMA_V2["fields"]}
    assert schema_ids == ids
    native = {f["name"] for f in FILE_ENTRY_NATIVE_FIELDS}
    assert native == {"deleteOpstamp", "docMappingJson", "timeRangeStart", "timeRangeEnd"}
    assert (
        FILE_ENTRY_SCHEMA_V2["fields"][: len(FILE_ENTRY_SCHEMA_V1["fields"])]
        == (FILE_ENTRY_SCHEMA_V1["fields"])
    )
    for field in FILE_ENTRY_NATIVE_FIELDS:
        assert field["type"][0] == "null"
        assert field["default"] is None


def test_state_manifest_fields_match_decisions() -> None:
    documented = _facts()["state_manifest_field_types"]
    ours: dict[str, str] = {}
    for field in STATE_MANIFEST_SCHEMA_V1["fields"]:
        ours[field["name"]] = _render(field["type"])
    item = STATE_MANIFEST_SCHEMA_V1["fields"][5]["type"]["items"]
    for field in item["fields"]:
        ours[field["name"]] = _render(field["type"])
    bounds = item["fields"][4]["type"][1]["values"]
    ours["partitionBounds"] = (
        '["null",map<PartitionBoundsItem{min["null","string"],max["null","string"]}>]'
    )
    assert [f["name"] for f in bounds["fields"]] == ["min", "max"]
    for name, type_ in documented.items():
        assert ours[name] == type_, name
    defaults = {f["name"]: f.get("default", "-") for f in item["fields"]}
    assert defaults["tombstoneCount"] == 0
    assert defaults["liveEntryCount"] == -1
    assert STATE_MANIFEST_SCHEMA_V1["namespace"] == FILE_ENTRY_SCHEMA_V1["namespace"] == NAMESPACE
    assert NAMESPACE == "io.indextables.state"


@pytest.mark.parametrize("schema", [FILE_ENTRY_SCHEMA_V1, FILE_ENTRY_SCHEMA_V2])
def test_optional_fields_default_to_null_and_required_have_no_default(schema: Any) -> None:
    for field in schema["fields"]:
        if isinstance(field["type"], list):
            assert field["type"][0] == "null"
            assert field["default"] is None
        elif field["name"] == "hasFooterOffsets":
            assert field["default"] is False
        else:
            assert "default" not in field
