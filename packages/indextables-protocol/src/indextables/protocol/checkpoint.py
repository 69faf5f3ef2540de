"""Legacy JSON checkpoints (protocol V2/V3), read and written.

Single-file form: ``%020d.checkpoint.json`` holds the table's protocol,
metadata and live ``add`` actions in the version-file format (JSON lines,
gzip-framed). Multi-part form: parts ``%020d.checkpoint.<id>.%05d.json`` in
the same format (part 1 carries protocol and metadata first), committed by
the manifest ``%020d.checkpoint.json``, a plain JSON object
``{"version", "checkpointId", "parts", "createdTime", "format"}`` created with
put-if-absent. ``_last_checkpoint`` tells the two apart by its
``checkpointId``. New tables use Avro states instead; these remain readable
and writable for old tables and tools.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from indextables.protocol.actions import (
    Action,
    AddAction,
    MetadataAction,
    ProtocolAction,
    decode_record,
    encode_record,
    register_record,
)
from indextables.protocol.compression import compress_log_bytes, decompress_log_bytes
from indextables.protocol.errors import CorruptFileError
from indextables.protocol.jsonwire import dumps, loads_object
from indextables.protocol.lastcheckpoint import LastCheckpoint
from indextables.protocol.store import ObjectStore
from indextables.protocol.versionfile import decode_json_lines, encode_json_lines

__all__ = [
    "LOG_DIR",
    "MultiPartCheckpointManifest",
    "checkpoint_file_name",
    "checkpoint_part_name",
    "read_json_checkpoint",
    "write_json_checkpoint",
]

LOG_DIR: Final = "_transaction_log/"
ACTIONS_PER_PART: Final = 100_000


def checkpoint_file_name(version: int) -> str:
    """``%020d.checkpoint.json``: a single-file checkpoint or a multi-part manifest."""
    return f"{version:020d}.checkpoint.json"


def checkpoint_part_name(version: int, checkpoint_id: str, part: int) -> str:
    """``%020d.checkpoint.<id>.%05d.json``: one part of a multi-part checkpoint."""
    return f"{version:020d}.checkpoint.{checkpoint_id}.{part:05d}.json"


@dataclass(frozen=True, slots=True)
class MultiPartCheckpointManifest:
    """The manifest that commits a multi-part checkpoint."""

    version: int
    checkpoint_id: str
    parts: tuple[str, ...]
    created_time: int
    format: str = field(default="json", kw_only=True)
    extra: Mapping[str, Any] = field(default_factory=dict, kw_only=True)
    key_order: tuple[str, ...] | None = field(default=None, kw_only=True, compare=False, repr=False)


register_record(
    MultiPartCheckpointManifest,
    (
        ("version", "version", "int", True),
        ("checkpointId", "checkpoint_id", "str", True),
        ("parts", "parts", "str_list", True),
        ("createdTime", "created_time", "int", False),
        ("format", "format", "str", False),
    ),
)


def _ordered(actions: Sequence[Action]) -> list[Action]:
    """Protocol, then metadata, then the rest: the order part 1 needs."""
    head = [a for a in actions if isinstance(a, ProtocolAction | MetadataAction)]
    head.sort(key=lambda a: 0 if isinstance(a, ProtocolAction) else 1)
    return head + [a for a in actions if not isinstance(a, ProtocolAction | MetadataAction)]


def write_json_checkpoint(
    store: ObjectStore,
    *,
    version: int,
    actions: Sequence[Action],
    compress: bool = True,
    actions_per_part: int = ACTIONS_PER_PART,
    checkpoint_id: str | None = None,
    now_ms: int | None = None,
) -> LastCheckpoint:
    """Write a legacy JSON checkpoint of ``version`` and return its pointer.

    More than ``actions_per_part`` actions make a multi-part checkpoint. The
    caller writes ``_last_checkpoint``.

    Raises:
        ObjectExistsError: another writer committed this multi-part checkpoint.
    """
    ordered = _ordered(actions)
    created = now_ms if now_ms is not None else int(time.time() * 1000)
    num_files = sum(isinstance(a, AddAction) for a in ordered)
    if len(ordered) <= actions_per_part:
        body = encode_json_lines(ordered)
        store.put(
            LOG_DIR + checkpoint_file_name(version), compress_log_bytes(body, compress=compress)
        )
        return LastCheckpoint(version, len(ordered), len(body), num_files, created)
    cid = checkpoint_id or uuid.uuid4().hex[:12]
    names, total = [], 0
    for part, start in enumerate(range(0, len(ordered), actions_per_part), start=1):
        body = encode_json_lines(ordered[start : start + actions_per_part])
        names.append(checkpoint_part_name(version, cid, part))
        store.put(LOG_DIR + names[-1], compress_log_bytes(body, compress=compress))
        total += len(body)
    manifest = MultiPartCheckpointManifest(version, cid, tuple(names), created)
    store.put_if_absent(
        LOG_DIR + checkpoint_file_name(version), dumps(encode_record(manifest)).encode()
    )
    return LastCheckpoint(
        version, len(ordered), total, num_files, created, parts=len(names), checkpoint_id=cid
    )


def read_json_checkpoint(store: ObjectStore, info: LastCheckpoint) -> list[Action]:
    """Read the actions of the legacy JSON checkpoint ``info`` points to.

    Raises:
        ObjectNotFoundError: the checkpoint or one of its parts is missing.
        CorruptFileError: a file does not decode.
    """
    key = LOG_DIR + checkpoint_file_name(info.version)
    data = decompress_log_bytes(store.get(key), path=key)
    if info.checkpoint_id is None:
        return decode_json_lines(data, path=key)
    manifest = decode_multipart_manifest(data, path=key)
    if manifest.checkpoint_id != info.checkpoint_id:
        raise CorruptFileError(
            key, f"checkpoint id {manifest.checkpoint_id!r} != {info.checkpoint_id!r}"
        )
    actions: list[Action] = []
    for name in manifest.parts:
        part_key = LOG_DIR + name
        raw = decompress_log_bytes(store.get(part_key), path=part_key)
        actions.extend(decode_json_lines(raw, path=part_key))
    return actions


def decode_multipart_manifest(data: bytes, *, path: str) -> MultiPartCheckpointManifest:
    """Decode the manifest of a multi-part checkpoint."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFileError(path, f"not UTF-8: {exc}") from None
    obj = loads_object(text, path=path)
    manifest: MultiPartCheckpointManifest = decode_record(
        MultiPartCheckpointManifest, obj, path=path, where="checkpoint manifest"
    )
    for name in manifest.parts:
        if "/" in name or ".." in name:
            raise CorruptFileError(path, f"unsafe checkpoint part name {name!r}")
    return manifest
