"""indextables.protocol: the IndexTables transaction log, in pure Python.

Wire records (actions, checkpoints, state model), their codecs, the
object-store and state-format interfaces, and the commit/snapshot engine.
"""

from indextables.protocol.actions import (
    Action,
    AddAction,
    FileFormat,
    MetadataAction,
    ProtocolAction,
    RemoveAction,
    SkipAction,
    action_from_json,
    action_to_json,
)
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
from indextables.protocol.lastcheckpoint import LastCheckpoint
from indextables.protocol.predicates import Predicate, parse_predicate
from indextables.protocol.protocolcheck import check_readable, check_writable
from indextables.protocol.schemadedup import doc_mapping_hash
from indextables.protocol.splitbundle import SplitFooter
from indextables.protocol.state import FileEntry, ManifestInfo, PartitionBounds, StateManifest
from indextables.protocol.stateformat import LoadedState, StateFormat
from indextables.protocol.store import ObjectInfo, ObjectStore
from indextables.protocol.version import __version__
from indextables.protocol.versionfile import decode_version_file, encode_version_file

__all__ = [
    "Action",
    "AddAction",
    "CommitConflictError",
    "CorruptFileError",
    "FileEntry",
    "FileFormat",
    "InvalidPredicateError",
    "LastCheckpoint",
    "LoadedState",
    "ManifestInfo",
    "MetadataAction",
    "MissingFieldError",
    "ObjectExistsError",
    "ObjectInfo",
    "ObjectNotFoundError",
    "ObjectStore",
    "ObjectStoreError",
    "PartitionBounds",
    "PreconditionFailedError",
    "Predicate",
    "ProtocolAction",
    "ProtocolError",
    "RemoveAction",
    "SkipAction",
    "SplitFooter",
    "StateFormat",
    "StateManifest",
    "TableNotFoundError",
    "UnknownActionError",
    "UnsafePathError",
    "UnsupportedProtocolError",
    "VersionNotFoundError",
    "__version__",
    "action_from_json",
    "action_to_json",
    "check_readable",
    "check_writable",
    "decode_version_file",
    "doc_mapping_hash",
    "encode_version_file",
    "parse_predicate",
]
