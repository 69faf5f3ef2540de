"""Listing the log and replaying version files onto a set of live files.

Keys are relative to the table root. Version files and legacy checkpoints all
start with a digit, so listing ``_transaction_log/0`` finds them without
walking ``manifests/``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from indextables.protocol.actions import (
    Action,
    AddAction,
    MetadataAction,
    ProtocolAction,
    RemoveAction,
    SkipAction,
)
from indextables.protocol.compression import decompress_log_bytes
from indextables.protocol.errors import (
    CorruptFileError,
    ObjectNotFoundError,
    VersionNotFoundError,
)
from indextables.protocol.lastcheckpoint import (
    LAST_CHECKPOINT_NAME,
    LastCheckpoint,
    decode_last_checkpoint,
)
from indextables.protocol.reread import read_decoded
from indextables.protocol.state import FileEntry
from indextables.protocol.store import ObjectInfo, ObjectStore
from indextables.protocol.versionfile import decode_version_file, version_file_name

__all__ = [
    "LOG_DIR",
    "LAST_CHECKPOINT_KEY",
    "LogListing",
    "Replay",
    "list_log",
    "read_last_checkpoint",
    "read_version",
    "version_key",
]

_log = logging.getLogger(__name__)

LOG_DIR: Final = "_transaction_log/"
LAST_CHECKPOINT_KEY: Final = LOG_DIR + LAST_CHECKPOINT_NAME
_VERSION: Final = re.compile(r"^_transaction_log/(\d{20})\.json$")
_CHECKPOINT: Final = re.compile(
    r"^_transaction_log/(\d{20})\.checkpoint(\.[0-9a-f]+\.\d{5})?\.json$"
)


def version_key(version: int) -> str:
    """The store key of version file ``version``."""
    return LOG_DIR + version_file_name(version)


@dataclass(frozen=True, slots=True)
class LogListing:
    """The version files and legacy checkpoint files present in the log."""

    versions: Mapping[int, ObjectInfo]
    checkpoint_files: Mapping[int, tuple[str, ...]]

    @property
    def latest(self) -> int | None:
        """The highest version file, or ``None``."""
        return max(self.versions) if self.versions else None


def list_log(store: ObjectStore) -> LogListing:
    """List version files and legacy checkpoint files (one LIST request)."""
    versions: dict[int, ObjectInfo] = {}
    checkpoints: dict[int, list[str]] = {}
    for info in store.list(LOG_DIR + "0"):
        match = _VERSION.match(info.key)
        if match:
            versions[int(match.group(1))] = info
            continue
        match = _CHECKPOINT.match(info.key)
        if match:
            checkpoints.setdefault(int(match.group(1)), []).append(info.key)
    return LogListing(versions, {v: tuple(k) for v, k in checkpoints.items()})


def read_version(store: ObjectStore, version: int) -> list[Action]:
    """Read and decode one version file (read again while it does not decode:
    :func:`~indextables.protocol.reread.read_decoded`).

    Raises:
        VersionNotFoundError: the file does not exist (never written or purged).
        CorruptFileError: it does not decode, the same on two reads.
    """
    key = version_key(version)
    path = f"{store.uri}/{key}"
    try:
        return read_decoded(store, key, lambda data: decode_version_file(data, path=path))
    except ObjectNotFoundError:
        raise VersionNotFoundError(f"{store.uri}: version file {key} does not exist") from None


def version_has_action(store: ObjectStore, version: int, wire_key: str) -> bool:
    """Whether version file ``version`` may hold a ``wire_key`` action.

    Searches the decompressed text for the key (``"protocol":``) without
    decoding JSON, so scanning old versions for the newest protocol does not
    decode every large batch of adds. ``True`` may be a false positive (the
    same key nested elsewhere) and needs confirming by decoding; ``False`` is
    certain, since a key inside a JSON string has its quotes escaped.

    Raises:
        VersionNotFoundError: the file does not exist.
    """
    key = version_key(version)
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        raise VersionNotFoundError(f"{store.uri}: version file {key} does not exist") from None
    text = decompress_log_bytes(data, path=f"{store.uri}/{key}")
    return re.search(b'"' + re.escape(wire_key.encode()) + rb'"\s*:', text) is not None


def read_last_checkpoint(store: ObjectStore) -> LastCheckpoint | None:
    """The ``_last_checkpoint`` hint, or ``None`` when absent or damaged.

    The file is only a hint (readers look for the states themselves): one that
    does not decode (not UTF-8 or JSON, not an object, a field of the wrong type
    or out of range, no ``version``, a negative version) counts as absent, with
    a warning, and the next state written replaces it.
    """
    try:
        data = store.get(LAST_CHECKPOINT_KEY)
    except ObjectNotFoundError:
        return None
    path = f"{store.uri}/{LAST_CHECKPOINT_KEY}"
    try:
        pointer = decode_last_checkpoint(data, path=path)
    except CorruptFileError as error:
        _log.warning("ignoring a damaged hint: %s", error)
        return None
    if pointer.version < 0:
        _log.warning("ignoring a damaged hint: %s names version %d", path, pointer.version)
        return None
    return pointer


@dataclass(slots=True)
class Replay:
    """Live files being rebuilt by applying version files in order.

    Attributes:
        files: path -> live entry.
        protocol: newest protocol action applied.
        metadata: newest metaData action applied.
        skips: skip actions applied, oldest first.
        added: entries added by the applied versions (net of later removes).
        removed: paths removed by the applied versions.
    """

    files: dict[str, FileEntry]
    protocol: ProtocolAction | None = None
    metadata: MetadataAction | None = None
    skips: list[SkipAction] = field(default_factory=list)
    added: dict[str, FileEntry] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)

    def apply(self, version: int, timestamp: int, actions: Iterable[Action]) -> None:
        """Apply the actions of ``version`` committed at ``timestamp`` (epoch ms)."""
        for action in actions:
            if isinstance(action, AddAction):
                entry = action.to_file_entry(added_at_version=version, added_at_timestamp=timestamp)
                self.files[entry.path] = entry
                self.added[entry.path] = entry
            elif isinstance(action, RemoveAction):
                self.files.pop(action.path, None)
                if self.added.pop(action.path, None) is None:
                    self.removed.add(action.path)
            elif isinstance(action, ProtocolAction):
                self.protocol = action
            elif isinstance(action, MetadataAction):
                self.metadata = action
            else:
                self.skips.append(action)


def require_versions(listing: LogListing, first: int, last: int, *, uri: str) -> None:
    """Check that every version file in ``[first, last]`` exists.

    Raises:
        VersionNotFoundError: one is missing (purged or never written).
    """
    missing = [v for v in range(first, last + 1) if v not in listing.versions]
    if missing:
        raise VersionNotFoundError(
            f"{uri}: version {last} is not reachable: version file(s) {missing[:5]} "
            "are missing and no state covers them"
        )
