"""SQL-style maintenance commands (the reference grammar) on top of the engine's operations.

:func:`run_sql` recognises the IndexTables statements, runs them on the
driver through the protocol engine and returns a small DataFrame of results
whose columns carry the reference's names and Spark types (MERGE SPLITS and
PURGE INDEXTABLE put their figures in a ``metrics`` struct, as the reference
does); columns the reference lacks come after its own. Any other statement
goes to ``spark.sql``. The table is named by a quoted path (``'s3://bucket/t'``)
or a bare path; ``TANTIVY4SPARK`` is accepted wherever ``INDEXTABLES`` is.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from indextables.protocol import errors as protocol_errors
from indextables.pyspark.errors import RetentionTooShortError, SqlCommandError
from indextables.pyspark.read.planguard import sweep_claims
from indextables.pyspark.tablepath import absolute_table_path
from indextables.search import oplog
from indextables.search.refkeys import warn_ignored
from indextables.search.table.tableaccess import table_handle
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_KEYWORDS = r"(?:WHERE|TARGET|MAX|PURGE|PRECOMMIT|OLDER|TRANSACTION|DRY|INCLUDE|AT)\b"
_PATH = r"(?:'(?P<path>[^']+)'|\"(?P<dpath>[^\"]+)\"|(?!" + _KEYWORDS + r")(?P<bare>\S+))"
_VALUE = r"(?:'[^']*'|\"[^\"]*\"|\S+)"
_KW = r"(?:INDEXTABLES|TANTIVY4SPARK)"
_FLAGS = re.IGNORECASE | re.DOTALL
_LOG = logging.getLogger(__name__)
_LOG_SUFFIX = "_transaction_log"
PRECOMMIT_MESSAGE = (
    "PRECOMMIT merge is not implemented (nor in the reference, which answers 'pending'): "
    "nothing was merged; run MERGE SPLITS without PRECOMMIT"
)


def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(r"^\s*" + text.replace(" ", r"\s+") + r"\s*;?\s*$", _FLAGS)


_COMMANDS: list[tuple[str, re.Pattern[str]]] = [
    (
        "merge",
        _pattern(
            r"MERGE SPLITS(?: " + _PATH + r")?(?: WHERE (?P<where>.+?))?"
            r"(?: TARGET SIZE (?P<size>" + _VALUE + r"))?"
            r"(?: MAX (?:DEST SPLITS|GROUPS) (?P<dest>" + _VALUE + r"))?"
            r"(?: MAX SOURCE SPLITS PER MERGE (?P<sources>" + _VALUE + r"))?"
            r"(?P<purge> PURGE DELETES(?: MIN DELETED FRACTION (?P<fraction>" + _VALUE + r"))?)?"
            r"(?P<precommit> PRECOMMIT)?"
        ),
    ),
    ("describe_state", _pattern(r"DESCRIBE " + _KW + r" STATE " + _PATH)),
    (
        "describe_log",
        _pattern(r"DESCRIBE " + _KW + r" TRANSACTION LOG " + _PATH + r"(?P<all> INCLUDE ALL)?"),
    ),
    (
        "component_sizes",
        _pattern(r"DESCRIBE " + _KW + r" COMPONENT SIZES " + _PATH + r"(?: WHERE (?P<where>.+?))?"),
    ),
    ("environment", _pattern(r"DESCRIBE " + _KW + r" ENVIRONMENT")),
    ("checkpoint", _pattern(r"CHECKPOINT " + _KW + r" " + _PATH)),
    ("compact", _pattern(r"COMPACT " + _KW + r" " + _PATH)),
    (
        "purge",
        _pattern(
            r"PURGE INDEXTABLE " + _PATH + r"(?: OLDER THAN (?P<n>\d+) (?P<unit>DAYS?|HOURS?))?"
            r"(?: TRANSACTION LOG RETENTION (?P<logn>\d+) (?P<logunit>DAYS?|HOURS?))?"
            r"(?P<dry> DRY RUN)?"
        ),
    ),
    ("truncate", _pattern(r"TRUNCATE " + _KW + r" TIME TRAVEL " + _PATH + r"(?P<dry> DRY RUN)?")),
    (
        "drop_partitions",
        _pattern(r"DROP " + _KW + r" PARTITIONS FROM " + _PATH + r" WHERE (?P<where>.+?)"),
    ),
    (
        "repair",
        _pattern(
            r"REPAIR INDEXFILES TRANSACTION LOG " + _PATH + r" AT LOCATION '(?P<target>[^']+)'"
        ),
    ),
    (
        # Only a quoted path: DELETE FROM <catalog table> stays Spark's.
        "delete",
        _pattern(
            r"DELETE FROM (?:'(?P<path>[^']+)'|\"(?P<dpath>[^\"]+)\")"
            r"(?: QUERY '(?P<query>(?:[^']|'')*)')?(?: WHERE (?P<where>.+?))?"
        ),
    ),
]


def parse(text: str) -> tuple[str, dict[str, str]] | None:
    """The command name and its arguments, or None for a statement that is not ours.

    Raises:
        SqlCommandError: an IndexTables statement that does not parse, or a
            clause with a bad value (named in the message).
    """
    for name, pattern in _COMMANDS:
        match = pattern.match(text)
        if match:
            groups = {k: v for k, v in match.groupdict().items() if v is not None}
            path = groups.pop("dpath", None) or groups.pop("bare", None) or groups.get("path")
            if path is not None:
                groups["path"] = path
            elif name != "environment":
                raise SqlCommandError(
                    f"{text.strip()!r}: name the table by its path "
                    "(the reference also refuses a MERGE SPLITS without a path or table)"
                )
            _check_values(groups)
            return name, groups
    if re.match(
        r"^\s*(DESCRIBE|CHECKPOINT|COMPACT|PURGE|TRUNCATE|DROP|REPAIR)\s+(INDEX|TANTIVY4SPARK)",
        text,
        _FLAGS,
    ) or re.match(r"^\s*(MERGE\s+SPLITS\b|DELETE\s+FROM\s+['\"])", text, _FLAGS):
        raise SqlCommandError(f"cannot parse IndexTables command: {text.strip()!r}")
    return None


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _positive(clause: str, value: str, minimum: int) -> int:
    try:
        number = int(_unquote(value))
    except ValueError:
        raise SqlCommandError(f"{clause} {value!r} is not an integer") from None
    if number < minimum:
        raise SqlCommandError(f"{clause} must be at least {minimum}, got {number}")
    return number


def _check_values(args: Mapping[str, str]) -> None:
    if "dest" in args:
        _positive("MAX DEST SPLITS", args["dest"], 1)
    if "sources" in args:
        _positive("MAX SOURCE SPLITS PER MERGE", args["sources"], 2)
    if "size" in args:
        _target_size(args["size"])
    if "fraction" in args:
        _fraction(args["fraction"])


def _fraction(value: str) -> float:
    """MIN DELETED FRACTION's share, above 0 and at most 1."""
    try:
        number = float(_unquote(value))
    except ValueError:
        raise SqlCommandError(f"MIN DELETED FRACTION {value!r} is not a number") from None
    if not 0 < number <= 1:
        raise SqlCommandError(f"MIN DELETED FRACTION must be above 0 and at most 1, got {value}")
    return number


def _target_size(value: str) -> int:
    from indextables.search.options import parse_size

    try:
        size = parse_size("TARGET SIZE", _unquote(value))
    except ValueError as error:
        raise SqlCommandError(f"TARGET SIZE {value!r} is not a size (4G, 512M, 1000000)") from error
    if size <= 0:
        raise SqlCommandError(f"TARGET SIZE must be positive, got {value!r}")
    return size


def run_sql(
    spark: SparkSession, text: str, *, options: Mapping[str, str] | None = None
) -> DataFrame:
    """Run one statement: an IndexTables maintenance command or anything ``spark.sql`` takes.

    ``options`` (credentials, engine settings) reach every command. Each
    IndexTables command logs its one INFO line (:mod:`indextables.search.oplog`).

    Raises:
        SqlCommandError: an IndexTables statement that does not parse or is not supported.
    """
    from indextables.pyspark.sqlcommands.companioncmd import is_companion_statement

    if is_companion_statement(text):
        name, path = "companion", _first_quoted(text)
    else:
        parsed = parse(text)
        if parsed is None:
            return _run_sql(spark, text, options=options)
        name, path = parsed[0], parsed[1].get("path", "-")
    with oplog.operation(_LOG, f"sql {name}", uri=path):
        return _run_sql(spark, text, options=options)


def _first_quoted(text: str) -> str:
    found = re.search(r"['`]([^'`]+)['`]", text)
    return found.group(1) if found else "-"


def _run_sql(
    spark: SparkSession, text: str, *, options: Mapping[str, str] | None = None
) -> DataFrame:
    """Run one statement: an IndexTables maintenance command or anything ``spark.sql`` takes.

    ``options`` (credentials, engine settings) reach every command.

    Raises:
        SqlCommandError: an IndexTables statement that does not parse or is not supported.
    """
    from indextables.pyspark.sqlcommands.companioncmd import is_companion_statement, run_companion

    if is_companion_statement(text):
        opts = dict(options or {})
        warn_ignored(opts)
        return run_companion(spark, text, options=opts)
    parsed = parse(text)
    if parsed is None:
        if _DELTA_VERB.match(text):
            return _delta_verb(spark, text)
        return spark.sql(text)
    name, args = parsed
    if "path" in args:  # resolved here: MERGE SPLITS hands the path to Spark tasks
        args = {**args, "path": absolute_table_path(args["path"], spark)}
    opts = dict(options or {})
    warn_ignored(opts)
    if name == "merge":
        return frame(spark, MERGE_SCHEMA, [_merge(spark, args, opts)])
    if name == "delete":
        return frame(spark, DELETE_SCHEMA, [_delete(args, opts)])
    if name == "environment":
        from indextables.pyspark.sqlcommands.describecmds import environment_rows

        return frame(spark, ENVIRONMENT_SCHEMA, environment_rows(spark, opts))
    if name == "repair":
        args = {
            **args,
            "path": strip_log_dir(args["path"]),
            "target": strip_log_dir(args["target"]),
        }
    table = table_handle(args["path"], opts)
    schema, handler = _HANDLERS[name]
    return frame(spark, schema, handler(table, args))


_DELTA_VERB = re.compile(r"^\s*(OPTIMIZE|VACUUM)\b", _FLAGS)
_INSTEAD = {
    "OPTIMIZE": "MERGE SPLITS '<path>' [TARGET SIZE 4G] (IndexTables' OPTIMIZE)",
    "VACUUM": "PURGE INDEXTABLE '<path>' [OLDER THAN 7 DAYS] [DRY RUN] (IndexTables' VACUUM)",
}


def _delta_verb(spark: SparkSession, text: str) -> DataFrame:
    """Delta's OPTIMIZE/VACUUM through Spark; when Spark cannot parse it, say what to use."""
    try:
        return spark.sql(text)
    except Exception as error:
        if "PARSE_SYNTAX_ERROR" not in str(error) and type(error).__name__ != "ParseException":
            raise
        verb = text.split()[0].upper()
        raise SqlCommandError(
            f"{text.strip()!r}: Spark has no {verb} without Delta Lake; for an IndexTables "
            f"table use {_INSTEAD[verb]}"
        ) from error


def strip_log_dir(path: str) -> str:
    """The table root of ``<table>/_transaction_log`` (the reference's REPAIR form)."""
    trimmed = path.rstrip("/")
    if trimmed.endswith("/" + _LOG_SUFFIX):
        return trimmed[: -len(_LOG_SUFFIX) - 1] or "/"
    return path


# ------------------------------------------------------------------ result frames


def _struct(*fields: tuple[str, DataType]) -> StructType:
    return StructType([StructField(name, kind, True) for name, kind in fields])


_S, _L, _I, _D, _B, _T = (
    StringType(),
    LongType(),
    IntegerType(),
    DoubleType(),
    BooleanType(),
    TimestampType(),
)

MERGE_METRICS = _struct(
    ("status", _S),
    ("merged_files", _L),
    ("merge_groups", _L),
    ("original_size_bytes", _L),
    ("merged_size_bytes", _L),
    ("message", _S),
)
MERGE_SCHEMA = _struct(
    ("table_path", _S),
    ("metrics", MERGE_METRICS),
    ("temp_directory_path", _S),
    ("heap_size_bytes", _L),
    ("new_files", _L),
    ("skipped_groups", _L),
)
PURGE_METRICS = _struct(
    ("status", _S),
    ("orphaned_files_found", _L),
    ("orphaned_files_deleted", _L),
    ("size_mb_deleted", _D),
    ("retention_hours", _L),
    ("tx_log_files_deleted", _L),
    ("expired_states_found", _L),
    ("expired_states_deleted", _L),
    ("dry_run", _B),
    ("duration_ms", _L),
    ("message", _S),
)
PURGE_SCHEMA = _struct(
    ("table_path", _S),
    ("metrics", PURGE_METRICS),
    ("tx_log_retention_hours", _D),
    ("manifests_deleted", _L),
    ("orphaned_files", ArrayType(_S)),
    ("tx_log_files", ArrayType(_S)),
    ("plan_claims_deleted", _L),
)
STATE_SCHEMA = _struct(
    ("table_path", _S),
    ("format", _S),
    ("version", _L),
    ("num_files", _L),
    ("num_manifests", _I),
    ("num_tombstones", _I),
    ("tombstone_ratio", _D),
    ("total_bytes", _L),
    ("needs_compaction", _B),
    ("status", _S),
)
CHECKPOINT_SCHEMA = _struct(
    ("table_path", _S),
    ("status", _S),
    ("checkpoint_version", _L),
    ("num_actions", _L),
    ("num_files", _L),
    ("protocol_version", _L),
    ("is_multi_part", _B),
    ("compacted", _B),
)
TRUNCATE_SCHEMA = _struct(
    ("table_path", _S),
    ("status", _S),
    ("checkpoint_version", _L),
    ("versions_deleted", _L),
    ("checkpoints_deleted", _L),
    ("files_preserved", _L),
    ("message", _S),
)
DROP_SCHEMA = _struct(
    ("table_path", _S),
    ("status", _S),
    ("partitions_dropped", _L),
    ("splits_removed", _L),
    ("total_size_bytes", _L),
    ("message", _S),
    ("version", _L),
)
REPAIR_SCHEMA = _struct(
    ("source_path", _S),
    ("target_path", _S),
    ("source_version", _L),
    ("total_splits", _I),
    ("valid_splits", _I),
    ("missing_splits", _I),
    ("status", _S),
)
LOG_SCHEMA = _struct(
    ("version", _L),
    ("log_file_path", _S),
    ("action_type", _S),
    ("path", _S),
    ("partition_values", _S),
    ("size", _L),
    ("data_change", _B),
    ("tags", _S),
    ("modification_time", _T),
    ("stats", _S),
    ("min_values", _S),
    ("max_values", _S),
    ("num_records", _L),
    ("footer_start_offset", _L),
    ("footer_end_offset", _L),
    ("hotcache_start_offset", _L),
    ("hotcache_length", _L),
    ("has_footer_offsets", _B),
    ("time_range_start", _S),
    ("time_range_end", _S),
    ("split_tags", _S),
    ("delete_opstamp", _L),
    ("num_merge_ops", _I),
    ("doc_mapping_json", _S),
    ("doc_mapping_ref", _S),
    ("uncompressed_size_bytes", _L),
    ("deletion_timestamp", _T),
    ("extended_file_metadata", _B),
    ("skip_timestamp", _T),
    ("skip_reason", _S),
    ("skip_operation", _S),
    ("skip_retry_after", _T),
    ("skip_count", _I),
    ("protocol_min_reader_version", _I),
    ("protocol_min_writer_version", _I),
    ("protocol_reader_features", _S),
    ("protocol_writer_features", _S),
    ("metadata_id", _S),
    ("metadata_name", _S),
    ("metadata_description", _S),
    ("metadata_format_provider", _S),
    ("metadata_format_options", _S),
    ("metadata_schema_string", _S),
    ("metadata_partition_columns", _S),
    ("metadata_configuration", _S),
    ("metadata_created_time", _T),
    ("is_checkpoint", _B),
)
COMPONENT_SCHEMA = _struct(
    ("split_path", _S),
    ("partition_values", _S),
    ("component_key", _S),
    ("size_bytes", _L),
    ("component_type", _S),
    ("field_name", _S),
)
DELETE_SCHEMA = _struct(
    ("table_path", _S),
    ("status", _S),
    ("num_deleted_rows", _L),
    ("splits_changed", _L),
    ("version", _L),
)
ENVIRONMENT_SCHEMA = _struct(
    ("host", _S),
    ("role", _S),
    ("property_type", _S),
    ("property_name", _S),
    ("property_value", _S),
)


def frame(spark: SparkSession, schema: StructType, rows: Sequence[Mapping[str, Any]]) -> DataFrame:
    """``rows`` (dicts by column name; a missing column is null) typed by ``schema``."""
    data = [_record(schema, row) for row in rows]
    return spark.createDataFrame(data, schema)


def _record(schema: StructType, row: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(_cell(f.dataType, row.get(f.name)) for f in schema.fields)


def _cell(kind: DataType, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(kind, StructType):
        return _record(kind, value)
    if isinstance(kind, ArrayType):
        return [_cell(kind.elementType, v) for v in value]
    if isinstance(kind, StringType):
        return value if isinstance(value, str) else json.dumps(value, default=str)
    if isinstance(kind, BooleanType):
        return bool(value)
    if isinstance(kind, LongType | IntegerType):
        return int(value)
    if isinstance(kind, DoubleType):
        return float(value)
    if isinstance(kind, TimestampType) and not isinstance(value, datetime):
        raise TypeError(f"timestamp column got {value!r}")
    return value


def _as_rows(result: Any, **extra: Any) -> list[dict[str, Any]]:
    """Rows from whatever the engine returned (a dataclass, a list of them, a dict)."""
    if isinstance(result, list):
        return [row for item in result for row in _as_rows(item, **extra)]
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        record = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    elif isinstance(result, Mapping):
        record = dict(result)
    else:
        record = {"result": result}
    return [{**extra, **record}]


# ------------------------------------------------------------------ commands


def _merge(spark: SparkSession, args: dict[str, str], options: dict[str, str]) -> dict[str, Any]:
    from indextables.pyspark.writing.mergetasks import merge_splits
    from indextables.search.write.merge import DEFAULT_TARGET_SIZE, merge_settings

    if "precommit" in args:
        metrics = {"status": "pending", "message": PRECOMMIT_MESSAGE}
        return {"table_path": args["path"], "metrics": metrics}
    size = _target_size(args["size"]) if "size" in args else DEFAULT_TARGET_SIZE
    dest = _positive("MAX DEST SPLITS", args["dest"], 1) if "dest" in args else None
    sources = _max_sources(args, options)
    result = merge_splits(
        spark,
        args["path"],
        options=options,
        target_size=size,
        where=args.get("where"),
        max_groups=dest,
        max_sources=sources,
        purge_deletes="purge" in args,
        min_deleted_fraction=_fraction(args["fraction"]) if "fraction" in args else None,
    )
    merged, groups = result.get("merged_files", 0), result.get("merge_groups", 0)
    new_files, skipped = result.get("new_files", 0), result.get("skipped_groups", 0)
    if not groups:
        status, message = (
            "no_action",
            "no group of two or more splits to merge"
            + (" and no split with deleted documents" if "purge" in args else ""),
        )
    elif not new_files:
        status, message = "failed", f"every group failed ({skipped}); recorded as merge skips"
    elif skipped:
        status, message = "partial_success", f"{skipped} failed groups recorded as merge skips"
    else:
        status, message = "success", f"merged {merged} splits into {new_files}"
    metrics = {
        "status": status,
        "merged_files": merged,
        "merge_groups": groups,
        "original_size_bytes": result.get("original_size", 0),
        "merged_size_bytes": result.get("new_size", 0),
        "message": message,
    }
    return {
        "table_path": args["path"],
        "metrics": metrics,
        "heap_size_bytes": merge_settings(options).heap_size,
        "new_files": new_files,
        "skipped_groups": skipped,
    }


def _max_sources(args: Mapping[str, str], options: Mapping[str, str]) -> int | None:
    if "sources" in args:
        return _positive("MAX SOURCE SPLITS PER MERGE", args["sources"], 2)
    key = "spark.indextables.merge.maxSourceSplitsPerMerge"
    value = next((v for k, v in options.items() if k.lower() == key.lower()), None)
    return None if value is None else _positive(key, value, 2)


def _describe_state(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.describe_state(), table_path=args["path"])


def _describe_log(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    from indextables.pyspark.sqlcommands.describecmds import log_action_rows

    return log_action_rows(table, include_all="all" in args)


def _component_sizes(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    from indextables.pyspark.sqlcommands.describecmds import component_size_rows

    return component_size_rows(table, where=args.get("where"))


def _checkpoint(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.checkpoint(), table_path=args["path"])


def _compact(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.compact(), table_path=args["path"])


def _hours(number: str, unit: str) -> timedelta:
    return timedelta(hours=int(number) * (24 if unit.upper().startswith("DAY") else 1))


def _purge(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    older = _hours(args["n"], args["unit"]) if "n" in args else None
    log_retention = _hours(args["logn"], args["logunit"]) if "logn" in args else None
    dry_run = "dry" in args
    try:
        result = table.purge(older_than=older, log_retention=log_retention, dry_run=dry_run)
    except protocol_errors.RetentionTooShortError as error:
        raise RetentionTooShortError(
            f"{error} (with itp.sql: options={{'spark.indextables.purge.retentionCheckEnabled': "
            "'false'}, or spark.conf.set of that key)"
        ) from None
    claims = 0 if dry_run else sweep_claims(table.store)
    (record,) = _as_rows(result)
    record["retention_hours"] = round(record["retention_hours"])
    log_hours = None if log_retention is None else log_retention.total_seconds() / 3600
    return [
        {
            "table_path": args["path"],
            "metrics": record,
            "tx_log_retention_hours": log_hours,
            "manifests_deleted": record.get("manifests_deleted"),
            "orphaned_files": record.get("orphaned_files"),
            "tx_log_files": record.get("tx_log_files"),
            "plan_claims_deleted": claims,
        }
    ]


def _truncate(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.truncate_time_travel(dry_run="dry" in args), table_path=args["path"])


def _drop_partitions(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.drop_partitions(args["where"]), table_path=args["path"])


def _delete(args: dict[str, str], options: dict[str, str]) -> dict[str, Any]:
    """DELETE FROM '<path>' [QUERY '<query>'] [WHERE <condition>]: the engine's delete_rows."""
    from indextables.search.write.deleterows import delete_rows

    if "query" not in args and "where" not in args:
        raise SqlCommandError(
            f"DELETE FROM {args['path']!r} needs a WHERE condition or a QUERY "
            "(to delete every row, overwrite the table)"
        )
    query = args["query"].replace("''", "'") if "query" in args else None
    result = delete_rows(args["path"], where=args.get("where"), query=query, options=options)
    return {
        "table_path": args["path"],
        "status": "SUCCESS" if result.version is not None else "NO_ACTION",
        "num_deleted_rows": result.rows_deleted,
        "splits_changed": result.splits_changed,
        "version": result.version,
    }


def _repair(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.repair(args["target"]))


_Handler = Callable[[Any, dict[str, str]], list[dict[str, Any]]]
_HANDLERS: dict[str, tuple[StructType, _Handler]] = {
    "describe_state": (STATE_SCHEMA, _describe_state),
    "describe_log": (LOG_SCHEMA, _describe_log),
    "component_sizes": (COMPONENT_SCHEMA, _component_sizes),
    "checkpoint": (CHECKPOINT_SCHEMA, _checkpoint),
    "compact": (CHECKPOINT_SCHEMA, _compact),
    "purge": (PURGE_SCHEMA, _purge),
    "truncate": (TRUNCATE_SCHEMA, _truncate),
    "drop_partitions": (DROP_SCHEMA, _drop_partitions),
    "repair": (REPAIR_SCHEMA, _repair),
}
