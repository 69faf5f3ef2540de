"""Version files: golden decode/re-encode, the three framings, bad input."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from indextables.protocol.actions import MetadataAction, ProtocolAction, RemoveAction
from indextables.protocol.compression import decompress_log_bytes
from indextables.protocol.errors import CorruptFileError, UnknownActionError
from indextables.protocol.versionfile import (
    decode_version_file,
    encode_json_lines,
    encode_version_file,
    parse_version_file_name,
    version_file_name,
)

ACTIONS = [ProtocolAction(4, 4), RemoveAction("a.split", True, deletion_timestamp=3)]


def test_golden_version_zero_decodes_and_reencodes_identically(golden_table: Path) -> None:
    path = golden_table / "_transaction_log" / version_file_name(0)
    raw = path.read_bytes()
    actions = decode_version_file(raw, path=str(path))
    assert [type(a) for a in actions] == [ProtocolAction, MetadataAction]
    text = decompress_log_bytes(raw, path=str(path))
    assert encode_json_lines(actions) == text
    assert decompress_log_bytes(encode_version_file(actions), path="new") == text


def test_default_write_is_prefixed_gzip_level_six() -> None:
    data = encode_version_file(ACTIONS)
    assert data[:4] == b"\x01\x01\x1f\x8b"
    assert gzip.decompress(data[2:]) == encode_json_lines(ACTIONS)


@pytest.mark.parametrize(
    "framing",
    [
        lambda body: b"\x01\x01" + gzip.compress(body),
        gzip.compress,
        lambda body: body,
    ],
    ids=["prefixed-gzip", "raw-gzip", "plain"],
)
def test_all_three_framings_read(framing: object) -> None:
    data = framing(encode_json_lines(ACTIONS))  # type: ignore[operator]
    assert decode_version_file(data, path="v") == ACTIONS


def test_plain_write_option() -> None:
    data = encode_version_file(ACTIONS, compress=False)
    assert data.startswith(b'{"protocol"')
    assert decode_version_file(data, path="v") == ACTIONS


def test_blank_lines_and_crlf_free_endings_are_tolerated() -> None:
    body = b"\n" + encode_json_lines(ACTIONS) + b"\n\n"
    assert decode_version_file(body, path="v") == ACTIONS


def test_truncated_gzip_is_a_corrupt_file_naming_it() -> None:
    data = encode_version_file(ACTIONS)[:-10]
    with pytest.raises(CorruptFileError, match=r"00000000000000000004\.json: truncated gzip"):
        decode_version_file(data, path="00000000000000000004.json")


def test_damaged_gzip_is_a_corrupt_file() -> None:
    data = bytearray(encode_version_file(ACTIONS))
    data[12] ^= 0xFF
    with pytest.raises(CorruptFileError, match=r"v\.json"):
        decode_version_file(bytes(data), path="v.json")


def test_invalid_json_line_names_file_and_line() -> None:
    body = encode_json_lines(ACTIONS) + b'{"add": {\n'
    with pytest.raises(CorruptFileError, match=r"v\.json: invalid JSON on line 3"):
        decode_version_file(body, path="v.json")


def test_unknown_action_names_line() -> None:
    with pytest.raises(UnknownActionError, match="line 1"):
        decode_version_file(b'{"txn":{}}\n', path="v.json")


def test_unknown_codec_byte() -> None:
    with pytest.raises(CorruptFileError, match="codec"):
        decode_version_file(b"\x01\x07xxxx", path="v.json")


def test_not_utf8() -> None:
    with pytest.raises(CorruptFileError, match="UTF-8"):
        decode_version_file(b"\xff\xfe{}", path="v.json")


@pytest.mark.parametrize("version", [0, 7, 10**19])
def test_version_file_names(version: int) -> None:
    name = version_file_name(version)
    assert len(name) == 25
    assert parse_version_file_name("_transaction_log/" + name) == version


@pytest.mark.parametrize(
    "name", ["_last_checkpoint", "00000000000000000010.checkpoint.json", "1.json", "x.json.crc"]
)
def test_other_names_are_not_versions(name: str) -> None:
    assert parse_version_file_name(name) is None
