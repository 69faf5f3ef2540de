"""indextables.protocol: the IndexTables transaction log, in pure Python.

Wire records (actions, checkpoints, state model), their codecs, the
object-store and state-format interfaces, and the commit/snapshot engine.
"""

from indextables.protocol.errors import (
    CommitConflictError,
    CorruptFileError,
    InvalidPredicateError,
    MissingFieldError,
    ObjectExistsError,
    ObjectNotFoundError,
    ObjectStoreError,
    PreconditionFailedError,
    ProtocolError,
    TableNotFoundError,
    UnknownActionError,
    UnsafePathError,
    UnsupportedProtocolError,
    VersionNotFoundError,
)
from indextables.protocol.state import FileEntry, ManifestInfo, PartitionBounds, StateManifest
from indextables.protocol.stateformat import LoadedState, StateFormat
from indextables.protocol.store import ObjectInfo, ObjectStore
from indextables.protocol.version import __version__

__all__ = [
    "CommitConflictError",
    "CorruptFileError",
    "FileEntry",
    "InvalidPredicateError",
    "LoadedState",
    "ManifestInfo",
    "MissingFieldError",
    "ObjectExistsError",
    "ObjectInfo",
    "ObjectNotFoundError",
    "ObjectStore",
    "ObjectStoreError",
    "PartitionBounds",
    "PreconditionFailedError",
    "ProtocolError",
    "StateFormat",
    "StateManifest",
    "TableNotFoundError",
    "UnknownActionError",
    "UnsafePathError",
    "UnsupportedProtocolError",
    "VersionNotFoundError",
    "__version__",
]
