"""Protocol version and feature checks, run before every read and write.

This implementation reads and writes protocol versions 1 to 4. A table whose
``minReaderVersion`` (for readers) or ``minWriterVersion`` (for writers) is
higher, or that names a feature we do not know, is refused.
"""

from __future__ import annotations

from typing import Final

from indextables.protocol.actions import ProtocolAction
from indextables.protocol.errors import UnsupportedProtocolError

__all__ = [
    "MAX_READER_VERSION",
    "MAX_WRITER_VERSION",
    "READER_FEATURES",
    "WRITER_FEATURES",
    "check_readable",
    "check_writable",
    "new_table_protocol",
]

MAX_READER_VERSION: Final = 4
MAX_WRITER_VERSION: Final = 4
READER_FEATURES: Final = frozenset(
    {
        "skippedFiles",
        "extendedMetadata",
        "footerOffsets",
        "multiPartCheckpoint",
        "schemaDeduplication",
        "avroState",
    }
)
WRITER_FEATURES: Final = READER_FEATURES | {"checkpoint", "optimizeWrite"}


def new_table_protocol() -> ProtocolAction:
    """The protocol action a new table is created with (reader and writer 4)."""
    return ProtocolAction(MAX_READER_VERSION, MAX_WRITER_VERSION)


def check_readable(protocol: ProtocolAction, *, path: str = "<table>") -> None:
    """Refuse to read a table this implementation does not support.

    Raises:
        UnsupportedProtocolError: reader version too high or unknown feature.
    """
    _check(protocol.min_reader_version, MAX_READER_VERSION, "reader", path)
    _check_features(protocol.reader_features, READER_FEATURES, "reader", path)


def check_writable(protocol: ProtocolAction, *, path: str = "<table>") -> None:
    """Refuse to write a table this implementation does not support.

    Writing also needs reading, so the reader side is checked too.

    Raises:
        UnsupportedProtocolError: writer/reader version too high or unknown feature.
    """
    check_readable(protocol, path=path)
    _check(protocol.min_writer_version, MAX_WRITER_VERSION, "writer", path)
    _check_features(protocol.writer_features, WRITER_FEATURES, "writer", path)


def _check(required: int, supported: int, side: str, path: str) -> None:
    if required > supported:
        raise UnsupportedProtocolError(
            f"{path}: table requires {side} version {required}; this implementation "
            f"supports up to {supported}"
        )
    if required < 1:
        raise UnsupportedProtocolError(f"{path}: invalid min {side} version {required}")


def _check_features(
    named: tuple[str, ...] | None, known: frozenset[str], side: str, path: str
) -> None:
    unknown = sorted(set(named or ()) - known)
    if unknown:
        raise UnsupportedProtocolError(f"{path}: table needs unknown {side} features {unknown}")
