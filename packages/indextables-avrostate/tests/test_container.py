"""Container framing and codecs: round trips; each bad input is a typed error naming the file."""

from __future__ import annotations

import io
from types import ModuleType
from typing import Any

import fastavro
import pytest

from indextables.avrostate import (
    CorruptAvroFileError,
    UnsupportedCodecError,
    decode_state,
    read_manifest,
)
from indextables.avrostate.container import MAGIC, parse_container
from indextables.avrostate.manifest_writer import encode_manifest

CODECS = ["zstandard", "snappy", "deflate", "null"]


@pytest.mark.parametrize("codec", CODECS)
def test_every_codec_round_trips_and_fastavro_reads_it(
    codec: Any, decoder: ModuleType, entries: Any
) -> None:
    originals = entries(300)
    data = encode_manifest(originals, codec=codec, block_bytes=4096)
    container = parse_container(data, path="m")
    assert container.codec == codec
    assert len(container.blocks) > 1
    assert read_manifest(data, path="m") == originals
    assert [r["path"] for r in fastavro.reader(io.BytesIO(data))] == [e.path for e in originals]


def test_compression_level_is_configurable(entries: Any) -> None:
    originals = entries(500)
    fast = encode_manifest(originals, level=1)
    small = encode_manifest(originals, level=19)
    assert len(small) < len(fast)
    assert read_manifest(small, path="m") == read_manifest(fast, path="m") == originals


def _manifest(entries: Any) -> bytes:
    return encode_manifest(entries(20), block_bytes=512)


def _bad_magic(data: bytes) -> bytes:
    return b"Obj\x00" + data[4:]


def _truncated(data: bytes) -> bytes:
    return data[:-40]


def _bad_sync(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 0xFF])


def _wrong_codec(data: bytes) -> bytes:
    return data.replace(b"\x14avro.codec\x12zstandard", b"\x14avro.codec\x12zstandarX", 1)


@pytest.mark.parametrize(
    ("corrupt", "error", "message"),
    [
        (_bad_magic, CorruptAvroFileError, "magic"),
        (_truncated, CorruptAvroFileError, "truncated"),
        (_bad_sync, CorruptAvroFileError, "sync marker"),
        (_wrong_codec, UnsupportedCodecError, "codec"),
        (lambda d: b"", CorruptAvroFileError, "magic"),
        (lambda d: MAGIC, CorruptAvroFileError, "truncated"),
    ],
)
def test_bad_manifests_raise_typed_errors_naming_the_file(
    corrupt: Any, error: type[Exception], message: str, decoder: ModuleType, entries: Any
) -> None:
    data = corrupt(_manifest(entries))
    with pytest.raises(error, match=message) as caught:
        read_manifest(data, path="manifests/manifest-bad.avro")
    assert caught.value.path == "manifests/manifest-bad.avro"  # type: ignore[attr-defined]
    assert "manifests/manifest-bad.avro" in str(caught.value)


def test_corrupt_block_bytes_raise_typed_error(decoder: ModuleType, entries: Any) -> None:
    data = bytearray(encode_manifest(entries(20), codec="null"))
    header_end = parse_container(bytes(data), path="m").blocks[0]
    middle = bytes(data).index(header_end.data) + 40
    data[middle : middle + 8] = b"\xff" * 8
    with pytest.raises(CorruptAvroFileError, match=r"m\.avro"):
        read_manifest(bytes(data), path="m.avro")


def test_zstd_garbage_is_a_typed_error(entries: Any) -> None:
    data = bytearray(_manifest(entries))
    block = parse_container(bytes(data), path="m").blocks[0]
    at = bytes(data).index(block.data)
    data[at : at + 4] = b"\x00\x00\x00\x00"
    with pytest.raises(CorruptAvroFileError, match="decompress"):
        read_manifest(bytes(data), path="m.avro")


def test_state_root_must_hold_exactly_one_record(entries: Any) -> None:
    with pytest.raises(CorruptAvroFileError, match="exactly one"):
        decode_state(_manifest(entries), path="state-v1/_manifest.avro")


def test_state_root_with_wrong_record_is_typed_error(entries: Any) -> None:
    data = encode_manifest(entries(1))  # one record, but a FileEntry
    with pytest.raises(CorruptAvroFileError, match=r"state-v1/_manifest\.avro"):
        decode_state(data, path="state-v1/_manifest.avro")
