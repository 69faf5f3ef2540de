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
from indextables.protocol.config import ConfigError, TableConfig
from indextables.protocol.errors import (
    CommitConflictError,
    CorruptFileError,
    InvalidPredicateError,
    MissingFieldError,
    ObjectExistsError,
    ObjectNotFoundError,
    ObjectStoreError,
    PluginNotFoundError,
    PreconditionFailedError,
    ProtocolError,
    RetentionTooShortError,
    TableExistsError,
    TableNotFoundError,
    UnknownActionError,
    UnsafePathError,
    UnsupportedProtocolError,
    VersionNotFoundError,
)
from indextables.protocol.history import Changes, HistoryEntry
from indextables.protocol.lastcheckpoint import LastCheckpoint
from indextables.protocol.metrics import add_metrics_hook, remove_metrics_hook
from indextables.protocol.predicates import Predicate, parse_predicate
from indextables.protocol.protocolcheck import check_readable, check_writable
from indextables.protocol.retry import RetryPolicy
from indextables.protocol.schemadedup import doc_mapping_hash
from indextables.protocol.snapshot import Snapshot
from indextables.protocol.splitbundle import SplitFooter
from indextables.protocol.state import FileEntry, ManifestInfo, PartitionBounds, StateManifest
from indextables.protocol.stateformat import LoadedState, StateFormat
from indextables.protocol.store import ObjectInfo, ObjectStore
from indextables.protocol.table import Table, create_table, open_table
from indextables.protocol.version import __version__
from indextables.protocol.versionfile import decode_version_file, encode_version_file

__all__ = [
    "Action",
    "AddAction",
    "Changes",
    "CommitConflictError",
    "ConfigError",
    "CorruptFileError",
    "FileEntry",
    "FileFormat",
    "HistoryEntry",
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
    "PluginNotFoundError",
    "PreconditionFailedError",
    "Predicate",
    "ProtocolAction",
    "ProtocolError",
    "RemoveAction",
    "RetentionTooShortError",
    "RetryPolicy",
    "SkipAction",
    "Snapshot",
    "SplitFooter",
    "StateFormat",
    "StateManifest",
    "Table",
    "TableConfig",
    "TableExistsError",
    "TableNotFoundError",
    "UnknownActionError",
    "UnsafePathError",
    "UnsupportedProtocolError",
    "VersionNotFoundError",
    "__version__",
    "action_from_json",
    "action_to_json",
    "add_metrics_hook",
    "check_readable",
    "check_writable",
    "create_table",
    "decode_version_file",
    "doc_mapping_hash",
    "encode_version_file",
    "open_table",
    "parse_predicate",
    "remove_metrics_hook",
]
