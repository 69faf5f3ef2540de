"""Rows of the DESCRIBE commands that read more than one engine result.

* :func:`log_action_rows`: DESCRIBE INDEXTABLES TRANSACTION LOG, one row per
  action of the log (from the latest state forward, or every retained version
  file with INCLUDE ALL).
* :func:`component_size_rows`: DESCRIBE INDEXTABLES COMPONENT SIZES, the
  byte size of each kind of index file in each live split, from split footers.
* :func:`environment_rows`: DESCRIBE INDEXTABLES ENVIRONMENT, versions and
  settings of the driver and of the Python workers.

Rows are plain dicts keyed by the reference's column names; ``commands``
types them.
"""

from __future__ import annotations

import json
import platform
import socket
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from importlib import metadata
from typing import TYPE_CHECKING, Any

from indextables.protocol.actions import (
    Action,
    AddAction,
    MetadataAction,
    ProtocolAction,
    RemoveAction,
    SkipAction,
)
from indextables.protocol.lastcheckpoint import state_dir_name
from indextables.protocol.splitbundle import read_split_footer
from indextables.protocol.state import FileEntry
from indextables.pyspark.sparkjobs import default_parallelism, is_connect, run_tasks
from indextables.storage import redaction

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOG_DIR = "_transaction_log"

# ------------------------------------------------------------ transaction log


def _ts(millis: int | None) -> datetime | None:
    return None if millis is None else datetime.fromtimestamp(millis / 1000, tz=UTC)


def _json(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        value = dict(value)
    elif isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, separators=(",", ":"))


def _add_row(add: AddAction | FileEntry) -> dict[str, Any]:
    hotcache = add if isinstance(add, AddAction) else None
    return {
        "action_type": "add",
        "path": add.path,
        "partition_values": _json(add.partition_values),
        "size": add.size,
        "data_change": add.data_change,
        "tags": _json(add.tags) if isinstance(add, AddAction) else None,
        "modification_time": _ts(add.modification_time),
        "stats": add.stats,
        "min_values": _json(add.min_values),
        "max_values": _json(add.max_values),
        "num_records": add.num_records,
        "footer_start_offset": add.footer_start_offset,
        "footer_end_offset": add.footer_end_offset,
        "hotcache_start_offset": hotcache.hotcache_start_offset if hotcache else None,
        "hotcache_length": hotcache.hotcache_length if hotcache else None,
        "has_footer_offsets": add.has_footer_offsets,
        "time_range_start": None if add.time_range_start is None else str(add.time_range_start),
        "time_range_end": None if add.time_range_end is None else str(add.time_range_end),
        "split_tags": _json(add.split_tags),
        "delete_opstamp": add.delete_opstamp,
        "num_merge_ops": add.num_merge_ops,
        "doc_mapping_json": add.doc_mapping_json,
        "doc_mapping_ref": add.doc_mapping_ref,
        "uncompressed_size_bytes": add.uncompressed_size_bytes,
    }


def _action_row(action: Action | FileEntry) -> dict[str, Any]:
    if isinstance(action, AddAction | FileEntry):
        return _add_row(action)
    if isinstance(action, RemoveAction):
        return {
            "action_type": "remove",
            "path": action.path,
            "partition_values": _json(action.partition_values),
            "size": action.size,
            "data_change": action.data_change,
            "tags": _json(action.tags),
            "deletion_timestamp": _ts(action.deletion_timestamp),
            "extended_file_metadata": action.extended_file_metadata,
        }
    if isinstance(action, SkipAction):
        return {
            "action_type": "skip",
            "path": action.path,
            "partition_values": _json(action.partition_values),
            "size": action.size,
            "skip_timestamp": _ts(action.skip_timestamp),
            "skip_reason": action.reason,
            "skip_operation": action.operation,
            "skip_retry_after": _ts(action.retry_after),
            "skip_count": action.skip_count,
        }
    if isinstance(action, ProtocolAction):
        return {
            "action_type": "protocol",
            "protocol_min_reader_version": action.min_reader_version,
            "protocol_min_writer_version": action.min_writer_version,
            "protocol_reader_features": _json(action.reader_features),
            "protocol_writer_features": _json(action.writer_features),
        }
    if isinstance(action, MetadataAction):
        return {
            "action_type": "metadata",
            "metadata_id": action.id,
            "metadata_name": action.name,
            "metadata_description": action.description,
            "metadata_format_provider": action.format.provider,
            "metadata_format_options": _json(action.format.options),
            "metadata_schema_string": action.schema_string,
            "metadata_partition_columns": _json(action.partition_columns),
            "metadata_configuration": _json(action.configuration),
            "metadata_created_time": _ts(action.created_time),
        }
    return {"action_type": "unknown"}


def log_action_rows(table: Any, *, include_all: bool) -> list[dict[str, Any]]:
    """One row per action: the reference's DESCRIBE TRANSACTION LOG.

    Without ``include_all`` the latest state (our checkpoint) stands for the
    versions it covers: its protocol, metadata and live files come first
    (``is_checkpoint`` true, ``log_file_path`` the state directory), then the
    actions of each later version file. With ``include_all``, or when the
    table has no state, every retained version file is read from the oldest.
    """
    reader = table.reader
    layout = reader.layout()
    root = str(table.uri).rstrip("/")
    versions = sorted(layout.listing.versions)
    rows: list[dict[str, Any]] = []
    base = None if include_all else layout.base_state(layout.latest)
    if base is not None:
        snap = reader.load(base, layout=layout)
        where = f"{root}/{LOG_DIR}/{state_dir_name(base)}"
        covered: Iterable[Action | FileEntry] = [snap.protocol, snap.metadata, *snap.files]
        rows.extend(_located(_action_row(a), base, where, True) for a in covered)
        versions = [v for v in versions if v > base]
    for version in versions:
        where = f"{root}/{layout.listing.versions[version].key}"
        rows.extend(
            _located(_action_row(a), version, where, False) for a in reader.actions(version)
        )
    return rows


def _located(row: dict[str, Any], version: int, where: str, checkpoint: bool) -> dict[str, Any]:
    return {"version": version, "log_file_path": where, **row, "is_checkpoint": checkpoint}


# ------------------------------------------------------------ component sizes

#: Index file extension -> (component key, component type), after the
#: reference's segment-level keys (its per-field keys need the native reader).
_COMPONENTS: Mapping[str, tuple[str, str]] = {
    "term": ("_term_total", "term"),
    "idx": ("_postings_total", "postings"),
    "pos": ("_positions_total", "positions"),
    "store": ("_store", "store"),
    "fast": ("_fastfield_total", "fastfield"),
    "fieldnorm": ("_fieldnorm_total", "fieldnorm"),
    "del": ("_deletes_total", "deletes"),
}
_OTHER = ("_meta_total", "meta")
_HOTCACHE = ("_hotcache", "hotcache")


def component_sizes(files: Mapping[str, tuple[int, int]], hotcache: int) -> dict[str, int]:
    """Component key -> bytes, summed over the segments of one split's file table."""
    sizes: dict[str, int] = {}
    for name, (start, end) in sorted(files.items()):
        extension = name.rsplit(".", 1)[-1] if "." in name else ""
        key = _COMPONENTS.get(extension, _OTHER)[0]
        sizes[key] = sizes.get(key, 0) + (end - start)
    sizes[_HOTCACHE[0]] = hotcache
    return sizes


def component_type(key: str) -> str:
    """The component type the reference reports for ``key``."""
    for known, kind in (*_COMPONENTS.values(), _OTHER, _HOTCACHE):
        if known == key:
            return kind
    return key.lstrip("_").split("_", 1)[0]


def component_size_rows(table: Any, *, where: str | None) -> list[dict[str, Any]]:
    """Per split and component, its size in bytes (split footers read on the driver)."""
    files: Sequence[FileEntry] = table.snapshot(partition_filter=where).files
    store = table.store

    def one(entry: FileEntry) -> list[dict[str, Any]]:
        footer = read_split_footer(
            store,
            entry.path,
            footer_start_offset=entry.footer_start_offset,
            footer_end_offset=entry.footer_end_offset,
        )
        values = _json(entry.partition_values) if entry.partition_values else None
        sizes = component_sizes(footer.files, len(footer.hotcache))
        return [
            {
                "split_path": entry.path,
                "partition_values": values,
                "component_key": key,
                "size_bytes": size,
                "component_type": component_type(key),
                "field_name": None,
            }
            for key, size in sorted(sizes.items())
        ]

    with ThreadPoolExecutor(max_workers=8) as pool:
        return [row for rows in pool.map(one, list(files)) for row in rows]


# ------------------------------------------------------------ environment

_SECRET_WORDS = ("secret", "password", "token", "key", "credential", "sas", "signature")
_DISTRIBUTIONS = (
    "pyspark",
    "pyarrow",
    "tantivy",
    "indextables-pyspark",
    "indextables-protocol",
    "indextables-avrostate",
    "indextables-storage",
)


def redact_setting(name: str, value: str | None) -> str | None:
    """``***`` for a setting whose name says it holds a credential.

    Other values are shown with URL passwords and inline credentials
    (``http://user:PW@host``, ``account_key:PW``) redacted.
    """
    last = name.rsplit(".", 1)[-1].lower()
    if value is not None and any(word in last for word in _SECRET_WORDS):
        return "***"
    return redaction.redact_setting(name, value)


def _versions() -> list[tuple[str, str, str | None]]:
    found: list[tuple[str, str, str | None]] = [
        ("python", "python.version", platform.python_version()),
        ("python", "python.implementation", platform.python_implementation()),
        ("python", "python.executable", sys.executable),
        ("python", "platform", platform.platform()),
    ]
    for name in _DISTRIBUTIONS:
        try:
            version: str | None = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = None
        found.append(("package", name, version))
    return found


def _worker_rows(_: int) -> list[tuple[str, str, str, str | None]]:
    host = socket.gethostname()
    return [(host, kind, name, value) for kind, name, value in _versions()]


def environment_rows(spark: SparkSession, options: Mapping[str, str]) -> list[dict[str, Any]]:
    """The driver's versions, Spark settings and command options, then the workers' versions.

    Credentials (settings named like a key, secret, token or password) show as
    ``***``. Worker rows come from one small Spark job, one row per distinct
    host and value.
    """
    host = socket.gethostname()
    rows: list[dict[str, Any]] = []

    def add(who: str, role: str, kind: str, name: str, value: str | None) -> None:
        rows.append(
            {
                "host": who,
                "role": role,
                "property_type": kind,
                "property_name": name,
                "property_value": value,
            }
        )

    for kind, name, value in _versions():
        add(host, "driver", kind, name, value)
    # A classic session adds its SparkContext's settings; over Spark Connect the
    # session's settings are what the server tells the client.
    settings = {} if is_connect(spark) else dict(spark.sparkContext.getConf().getAll())
    settings.update(spark.conf.getAll)
    for name in sorted(settings):
        shown = redaction.redact_name(name)
        add(host, "driver", "spark", shown, redact_setting(name, settings[name]))
    for name in sorted(options):
        shown = redaction.redact_name(name)
        add(host, "driver", "option", shown, redact_setting(name, options[name]))
    tasks = default_parallelism(spark)
    seen: set[tuple[str, str, str, str | None]] = set()
    found = run_tasks(
        spark,
        list(range(tasks)),
        _worker_rows,
        description="indextables describe environment",
        tag="indextables-describe-environment",
    )
    for worker in (row for rows_of_task in found for row in rows_of_task):
        if worker not in seen:
            seen.add(worker)
            add(worker[0], "worker", *worker[1:])
    return rows
