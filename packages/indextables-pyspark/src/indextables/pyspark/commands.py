"""SQL-style maintenance commands (the reference grammar) on top of the engine's operations.

:func:`run_sql` recognises the IndexTables statements, runs them on the
driver through the protocol engine and returns a small DataFrame of results;
any other statement goes to ``spark.sql``. The table is named by a quoted
path (``'s3://bucket/t'``) or a bare path.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from indextables.pyspark.errors import SqlCommandError
from indextables.pyspark.planguard import sweep_claims
from indextables.pyspark.tableaccess import table_handle

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_PATH = r"(?:'(?P<path>[^']+)'|\"(?P<dpath>[^\"]+)\"|(?P<bare>\S+))"
_FLAGS = re.IGNORECASE | re.DOTALL


def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(r"^\s*" + text.replace(" ", r"\s+") + r"\s*;?\s*$", _FLAGS)


_COMMANDS: list[tuple[str, re.Pattern[str]]] = [
    (
        "merge",
        _pattern(
            r"MERGE SPLITS " + _PATH + r"(?: WHERE (?P<where>.+?))?"
            r"(?: TARGET SIZE (?P<size>\d+)(?P<sunit>[KMG]B?)?)?(?: MAX GROUPS (?P<groups>\d+))?"
        ),
    ),
    ("describe_state", _pattern(r"DESCRIBE INDEXTABLES STATE " + _PATH)),
    ("describe_log", _pattern(r"DESCRIBE INDEXTABLES TRANSACTION LOG " + _PATH)),
    ("checkpoint", _pattern(r"CHECKPOINT INDEXTABLES " + _PATH)),
    ("compact", _pattern(r"COMPACT INDEXTABLES " + _PATH)),
    (
        "purge",
        _pattern(
            r"PURGE INDEXTABLE " + _PATH + r"(?: OLDER THAN (?P<n>\d+) (?P<unit>DAYS?|HOURS?))?"
            r"(?P<dry> DRY RUN)?"
        ),
    ),
    ("truncate", _pattern(r"TRUNCATE INDEXTABLES TIME TRAVEL " + _PATH + r"(?P<dry> DRY RUN)?")),
    (
        "drop_partitions",
        _pattern(r"DROP INDEXTABLES PARTITIONS FROM " + _PATH + r" WHERE (?P<where>.+?)"),
    ),
    (
        "repair",
        _pattern(
            r"REPAIR INDEXFILES TRANSACTION LOG " + _PATH + r" AT LOCATION '(?P<target>[^']+)'"
        ),
    ),
]


def parse(text: str) -> tuple[str, dict[str, str]] | None:
    """The command name and its arguments, or None for a statement that is not ours."""
    for name, pattern in _COMMANDS:
        match = pattern.match(text)
        if match:
            groups = {k: v for k, v in match.groupdict().items() if v is not None}
            groups["path"] = groups.pop("dpath", None) or groups.pop("bare", None) or groups["path"]
            return name, groups
    if re.match(
        r"^\s*(DESCRIBE|CHECKPOINT|COMPACT|PURGE|TRUNCATE|DROP|REPAIR|MERGE)\s+INDEX", text, _FLAGS
    ):
        raise SqlCommandError(f"cannot parse IndexTables command: {text.strip()!r}")
    return None


def run_sql(
    spark: SparkSession, text: str, *, options: Mapping[str, str] | None = None
) -> DataFrame:
    """Run one statement: an IndexTables maintenance command or anything ``spark.sql`` takes.

    Raises:
        SqlCommandError: an IndexTables statement that does not parse or is not supported.
    """
    parsed = parse(text)
    if parsed is None:
        return spark.sql(text)
    name, args = parsed
    if name == "merge":
        return _frame(spark, [_merge(spark, args, dict(options or {}))])
    table = table_handle(args["path"], dict(options or {}))
    rows = _HANDLERS[name](table, args)
    return _frame(spark, rows)


def _frame(spark: SparkSession, rows: list[dict[str, Any]]) -> DataFrame:
    if not rows:
        return spark.createDataFrame([], "result string")
    columns = list(rows[0])
    data = [tuple(_cell(r.get(c)) for c in columns) for r in rows]
    schema = ", ".join(f"`{c}` string" for c in columns)
    return spark.createDataFrame(data, schema)


def _cell(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, default=str)


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


def _merge(spark: SparkSession, args: dict[str, str], options: dict[str, str]) -> dict[str, Any]:
    from indextables.pyspark.merge import DEFAULT_TARGET_SIZE, merge_splits
    from indextables.pyspark.options import parse_size

    size = DEFAULT_TARGET_SIZE
    if "size" in args:
        size = parse_size("TARGET SIZE", args["size"] + args.get("sunit", ""))
    groups = int(args["groups"]) if "groups" in args else None
    return merge_splits(
        spark,
        args["path"],
        options=options,
        target_size=size,
        where=args.get("where"),
        max_groups=groups,
    )


def _describe_state(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.describe_state(), table_path=args["path"])


def _describe_log(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.history())


def _checkpoint(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.checkpoint(), table_path=args["path"])


def _compact(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.compact(), table_path=args["path"])


def _purge(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    older = None
    if "n" in args:
        hours = 24 if args["unit"].upper().startswith("DAY") else 1
        older = timedelta(hours=int(args["n"]) * hours)
    dry_run = "dry" in args
    result = table.purge(older_than=older, dry_run=dry_run)
    claims = 0 if dry_run else sweep_claims(table.store)
    return _as_rows(result, table_path=args["path"], plan_claims_deleted=claims)


def _truncate(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.truncate_time_travel(dry_run="dry" in args), table_path=args["path"])


def _drop_partitions(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.drop_partitions(args["where"]), table_path=args["path"])


def _repair(table: Any, args: dict[str, str]) -> list[dict[str, Any]]:
    return _as_rows(table.repair(args["target"]), table_path=args["path"])


_HANDLERS: dict[str, Callable[[Any, dict[str, str]], list[dict[str, Any]]]] = {
    "describe_state": _describe_state,
    "describe_log": _describe_log,
    "checkpoint": _checkpoint,
    "compact": _compact,
    "purge": _purge,
    "truncate": _truncate,
    "drop_partitions": _drop_partitions,
    "repair": _repair,
}
