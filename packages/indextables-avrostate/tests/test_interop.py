"""What we write is readable by the official Apache avro library and by fastavro."""

from __future__ import annotations

import io
import json
from typing import Any

import avro.datafile
import avro.io
import fastavro

from indextables.avrostate.container import parse_container
from indextables.avrostate.manifest_writer import encode_manifest, file_entry_to_record
from indextables.avrostate.schemas import (
    FILE_ENTRY_SCHEMA_V1,
    FILE_ENTRY_SCHEMA_V2,
    STATE_MANIFEST_SCHEMA_V1,
)
from indextables.avrostate.state_file import encode_state, state_to_record
from indextables.protocol.state import ManifestInfo, PartitionBounds, StateManifest


def _official(data: bytes) -> tuple[list[Any], Any]:
    with avro.datafile.DataFileReader(io.BytesIO(data), avro.io.DatumReader()) as reader:
        records = list(reader)
        schema = json.loads(reader.get_meta("avro.schema"))
        return records, schema


def _state() -> StateManifest:
    bounds = {"date": PartitionBounds("2024-01-01", "2024-01-09"), "x": PartitionBounds()}
    return StateManifest(
        1,
        12,
        1_700_000_000_000,
        3,
        300,
        (
            ManifestInfo(
                "manifests/manifest-0123456789abcdef.avro", 3, 1, 12, partition_bounds=bounds
            ),
            ManifestInfo(
                "manifests/manifest-00000000ffffffff.avro",
                1,
                2,
                2,
                tombstone_count=1,
                live_entry_count=0,
            ),
        ),
        tombstones=("a.split",),
        schema_registry={"z7TwwZ-tDWGD-uX5": "[]"},
        metadata='{"metaData":{}}',
    )


def _normalize(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if v is not None}


def test_official_avro_reads_our_manifest(entries: Any) -> None:
    originals = entries(120)
    data = encode_manifest(originals, block_bytes=2048)
    records, schema = _official(data)
    assert schema == FILE_ENTRY_SCHEMA_V1
    expected = [file_entry_to_record(e) for e in originals]
    assert [_normalize(r) for r in records] == [_normalize(r) for r in expected]


def test_official_avro_reads_native_fields(entries: Any) -> None:
    originals = entries(5, delete_opstamp=3, time_range_end=9)
    records, schema = _official(encode_manifest(originals))
    assert schema == FILE_ENTRY_SCHEMA_V2
    assert [r["deleteOpstamp"] for r in records] == [3] * 5
    assert [r["timeRangeEnd"] for r in records] == [9] * 5


def test_fastavro_reads_our_manifest_with_the_same_schema(entries: Any) -> None:
    originals = entries(50)
    data = encode_manifest(originals)
    reader = fastavro.reader(io.BytesIO(data))
    assert [_normalize(r) for r in reader] == [
        _normalize(file_entry_to_record(e)) for e in originals
    ]
    assert parse_container(data, path="m").schema == FILE_ENTRY_SCHEMA_V1


def test_official_and_fastavro_read_our_state() -> None:
    state = _state()
    data = encode_state(state)
    records, schema = _official(data)
    assert schema == STATE_MANIFEST_SCHEMA_V1
    assert records == [state_to_record(state)]
    assert list(fastavro.reader(io.BytesIO(data))) == [state_to_record(state)]
    assert fastavro.reader(io.BytesIO(data)).writer_schema["name"].endswith("StateManifest")
