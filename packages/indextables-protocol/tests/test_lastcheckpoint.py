"""_last_checkpoint: exact key order, golden bytes, legacy forms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from indextables.protocol.errors import CorruptFileError, MissingFieldError
from indextables.protocol.lastcheckpoint import (
    LastCheckpoint,
    decode_last_checkpoint,
    encode_last_checkpoint,
    state_dir_name,
)


def test_golden_files_decode_and_reencode_byte_exactly(
    golden_table: Path, golden_expected: dict[str, Any]
) -> None:
    raw = (golden_table / "_transaction_log/_last_checkpoint").read_bytes()
    info = decode_last_checkpoint(raw)
    assert encode_last_checkpoint(info) == raw
    assert info.checkpoint_format == "avro-state"
    assert info.state_dir == golden_expected["stateDir"] == state_dir_name(info.version)


def test_new_pointer_has_the_reference_key_order() -> None:
    info = LastCheckpoint(
        5, 10, 58566, 10, 1775007205102, format="avro-state", state_dir=state_dir_name(5)
    )
    assert encode_last_checkpoint(info) == (
        b'{"version":5,"size":10,"sizeInBytes":58566,"numFiles":10,'
        b'"createdTime":1775007205102,"parts":null,"checkpointId":null,'
        b'"format":"avro-state","stateDir":"state-v00000000000000000005"}'
    )


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        (b'{"version":10,"size":3,"sizeInBytes":9,"numFiles":1,"createdTime":1}', "json"),
        (b'{"version":10}', "json"),
        (
            b'{"version":10,"size":3,"sizeInBytes":9,"numFiles":1,"createdTime":1,'
            b'"parts":2,"checkpointId":"abc"}',
            "json-multipart",
        ),
    ],
)
def test_legacy_forms_resolve_their_format_and_round_trip(text: bytes, fmt: str) -> None:
    info = decode_last_checkpoint(text)
    assert info.checkpoint_format == fmt
    assert info.version == 10
    assert encode_last_checkpoint(info) == text


def test_missing_version_is_a_missing_field() -> None:
    with pytest.raises(MissingFieldError, match=r"_last_checkpoint.*version"):
        decode_last_checkpoint(b'{"size":1}')


def test_garbage_is_a_corrupt_file() -> None:
    with pytest.raises(CorruptFileError, match="_last_checkpoint"):
        decode_last_checkpoint(b"{not json")
