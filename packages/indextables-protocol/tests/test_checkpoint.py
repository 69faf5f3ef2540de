"""Legacy JSON checkpoints, single and multi-part: write then read."""

from __future__ import annotations

import pytest

from indextables.protocol.actions import AddAction, FileFormat, MetadataAction, ProtocolAction
from indextables.protocol.checkpoint import (
    checkpoint_file_name,
    checkpoint_part_name,
    read_json_checkpoint,
    write_json_checkpoint,
)
from indextables.protocol.errors import ObjectExistsError
from indextables.protocol.lastcheckpoint import decode_last_checkpoint, encode_last_checkpoint

HEAD = [
    ProtocolAction(3, 3),
    MetadataAction("t", FileFormat(), "{}", (), {}),
]
ADDS = [AddAction(f"part-{i}.split", {}, i + 1, 1, True) for i in range(7)]


def test_single_file_checkpoint_round_trips(store: object) -> None:
    info = write_json_checkpoint(store, version=10, actions=[*ADDS, *HEAD])  # type: ignore[arg-type]
    assert (info.version, info.size, info.num_files) == (10, 9, 7)
    assert info.checkpoint_format == "json"
    pointer = decode_last_checkpoint(encode_last_checkpoint(info))
    assert read_json_checkpoint(store, pointer) == [*HEAD, *ADDS]  # type: ignore[arg-type]


def test_multi_part_checkpoint_round_trips(store: object) -> None:
    info = write_json_checkpoint(
        store,
        version=20,
        actions=[*HEAD, *ADDS],
        actions_per_part=4,
        checkpoint_id="abc123",  # type: ignore[arg-type]
    )
    assert info.checkpoint_format == "json-multipart"
    assert info.parts == 3
    keys = {o.key for o in store.list("_transaction_log/")}  # type: ignore[attr-defined]
    assert "_transaction_log/" + checkpoint_part_name(20, "abc123", 3) in keys
    assert read_json_checkpoint(store, info) == [*HEAD, *ADDS]  # type: ignore[arg-type]


def test_multi_part_manifest_is_put_if_absent(store: object) -> None:
    write_json_checkpoint(store, version=3, actions=[*HEAD, *ADDS], actions_per_part=4)  # type: ignore[arg-type]
    with pytest.raises(ObjectExistsError):
        write_json_checkpoint(store, version=3, actions=[*HEAD, *ADDS], actions_per_part=4)  # type: ignore[arg-type]


def test_manifest_is_plain_json_in_reference_key_order(store: object) -> None:
    write_json_checkpoint(
        store,
        version=1,
        actions=[*HEAD, *ADDS],
        actions_per_part=5,
        checkpoint_id="x",
        now_ms=7,  # type: ignore[arg-type]
    )
    raw = store.get("_transaction_log/" + checkpoint_file_name(1))  # type: ignore[attr-defined]
    assert raw == (
        b'{"version":1,"checkpointId":"x","parts":["00000000000000000001.checkpoint.x.00001.json",'
        b'"00000000000000000001.checkpoint.x.00002.json"],"createdTime":7,"format":"json"}'
    )
