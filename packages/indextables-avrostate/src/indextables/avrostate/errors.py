"""The exception hierarchy of ``indextables.avrostate``: all derive from :class:`AvroStateError`.

Leaves also derive from the matching protocol error, so engine code that only
knows ``indextables.protocol`` (``CorruptFileError``, ``UnsupportedProtocolError``)
handles them without importing this package.
"""

from __future__ import annotations

from indextables.protocol.errors import (
    CorruptFileError,
    ProtocolError,
    UnsafePathError,
    UnsupportedProtocolError,
)


class AvroStateError(ProtocolError):
    """Root of every error raised by indextables.avrostate."""


class CorruptAvroFileError(AvroStateError, CorruptFileError):
    """An Avro container (manifest or state) could not be decoded.

    Attributes:
        path: the file that failed to decode.
        problem: what was wrong with it.
    """

    def __init__(self, path: str, problem: str) -> None:
        CorruptFileError.__init__(self, path, problem)


class UnsafeManifestPathError(CorruptAvroFileError, UnsafePathError):
    """A manifest lists a path that is not a safe table-relative path.

    The same check as commit paths (``indextables.protocol.pathsafety``): a
    table whose state names such a path is refused on read, so no command
    acts on (fetches, removes, deletes) a file outside the table.
    """


class UnsupportedCodecError(CorruptAvroFileError):
    """The container names a compression codec this package cannot decode."""


class SchemaMismatchError(CorruptAvroFileError):
    """The writer schema gives a known field a type that cannot be resolved."""


class MissingManifestError(CorruptAvroFileError, FileNotFoundError):
    """A manifest listed in a state does not exist in the store."""


class UnsupportedStateVersionError(AvroStateError, UnsupportedProtocolError):
    """A state declares a ``formatVersion`` this package does not read.

    Attributes:
        path: the state file.
        format_version: the version it declares.
    """

    def __init__(self, path: str, format_version: int) -> None:
        super().__init__(f"{path}: unsupported state formatVersion {format_version}")
        self.path = path
        self.format_version = format_version


class StateNotFoundError(AvroStateError, FileNotFoundError):
    """No complete state exists for the requested version (or at all)."""


class DuplicateAddError(AvroStateError, ValueError):
    """One write lists the same path in more than one add."""
