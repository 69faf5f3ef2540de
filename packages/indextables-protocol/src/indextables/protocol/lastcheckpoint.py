"""``_transaction_log/_last_checkpoint``: a hint to the newest checkpoint.

Keys are written in the reference's order: ``version, size, sizeInBytes,
numFiles, createdTime, parts, checkpointId, format, stateDir`` (absent values
as ``null``). Older writers left keys out: no ``format`` means a JSON
checkpoint, a ``checkpointId`` a multi-part one. The file is only a hint:
readers still look for newer states.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from indextables.protocol.actions import decode_record, encode_record, register_record
from indextables.protocol.errors import CorruptFileError
from indextables.protocol.jsonwire import dumps, loads_object

__all__ = [
    "FORMAT_AVRO_STATE",
    "FORMAT_JSON",
    "FORMAT_JSON_MULTIPART",
    "LAST_CHECKPOINT_NAME",
    "LastCheckpoint",
    "decode_last_checkpoint",
    "encode_last_checkpoint",
    "state_dir_name",
]

LAST_CHECKPOINT_NAME: Final = "_last_checkpoint"
FORMAT_JSON: Final = "json"
FORMAT_JSON_MULTIPART: Final = "json-multipart"
FORMAT_AVRO_STATE: Final = "avro-state"


def state_dir_name(version: int) -> str:
    """Return the state directory name of ``version`` (``state-v%020d``)."""
    return f"state-v{version:020d}"


@dataclass(frozen=True, slots=True)
class LastCheckpoint:
    """The decoded ``_last_checkpoint`` file.

    Attributes:
        version: the table version the checkpoint (or state) captures.
        size: number of actions (JSON) or live files (Avro state).
        size_in_bytes: total bytes (of live files for an Avro state).
        num_files: live files.
        created_time: epoch milliseconds.
    """

    version: int
    # Positional like the reference's case class, but defaulted: the oldest
    # writers wrote only {"version": N} and Jackson read the rest as 0.
    size: int = 0
    size_in_bytes: int = 0
    num_files: int = 0
    created_time: int = 0
    parts: int | None = field(default=None, kw_only=True)
    checkpoint_id: str | None = field(default=None, kw_only=True)
    format: str | None = field(default=None, kw_only=True)
    state_dir: str | None = field(default=None, kw_only=True)
    extra: Mapping[str, Any] = field(default_factory=dict, kw_only=True)
    key_order: tuple[str, ...] | None = field(default=None, kw_only=True, compare=False, repr=False)

    @property
    def checkpoint_format(self) -> str:
        """The effective format, resolving the legacy forms."""
        if self.format is not None:
            return self.format
        return FORMAT_JSON_MULTIPART if self.checkpoint_id is not None else FORMAT_JSON


register_record(
    LastCheckpoint,
    (
        ("version", "version", "int", True),
        ("size", "size", "int", False),
        ("sizeInBytes", "size_in_bytes", "int", False),
        ("numFiles", "num_files", "int", False),
        ("createdTime", "created_time", "int", False),
        ("parts", "parts", "?int", False),
        ("checkpointId", "checkpoint_id", "?str", False),
        ("format", "format", "?str", False),
        ("stateDir", "state_dir", "?str", False),
    ),
)


def encode_last_checkpoint(info: LastCheckpoint) -> bytes:
    """Return the bytes of ``_last_checkpoint`` (compact JSON, no newline)."""
    return dumps(encode_record(info)).encode("utf-8")


def decode_last_checkpoint(data: bytes, *, path: str = LAST_CHECKPOINT_NAME) -> LastCheckpoint:
    """Decode ``_last_checkpoint``.

    Raises:
        CorruptFileError: not UTF-8 JSON, or a field of the wrong type.
        MissingFieldError: no ``version``.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFileError(path, f"not UTF-8: {exc}") from None
    obj = loads_object(text, path=path)
    info: LastCheckpoint = decode_record(LastCheckpoint, obj, path=path, where="_last_checkpoint")
    return info
