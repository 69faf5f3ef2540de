"""``BUILD INDEXTABLES COMPANION``: the reference's grammar over ``indextables.search``'s builder.

    BUILD INDEXTABLES COMPANION FOR DELTA|PARQUET|ICEBERG '<source>'
      [INDEXING MODES ('col':'text', ...)] [FASTFIELDS MODE HYBRID|DISABLED|PARQUET_ONLY]
      [TARGET INPUT SIZE 1G] [WRITER HEAP SIZE 512M] [FROM VERSION n | FROM SNAPSHOT n]
      [INCLUDE COLUMNS ('a', ...) | EXCLUDE COLUMNS ('a', ...)]
      [WITH STREAMING POLL INTERVAL n SECONDS] [WHERE <partition predicate>]
      AT LOCATION '<index>' [DRY RUN]

Clauses come in any order, ``WHERE`` last (it runs to ``AT LOCATION``; a
streaming clause right after its predicate is taken as the clause). The
reference's other clauses are refused by name. The result is the reference's
one row (status, source_version, splits_created, ...), built on the driver.

``WITH STREAMING POLL INTERVAL n SECONDS`` keeps syncing on the driver
(:func:`indextables.search.sync_companion_forever`): a cycle every ``n``
seconds, skipped cheaply when the source did not change, until the statement is
interrupted or ``spark.indextables.companion.streaming.maxCycles`` cycles ran;
the result has one row per cycle that synced.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from indextables.pyspark.errors import SqlCommandError
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["COMPANION_SCHEMA", "is_companion_statement", "parse_companion", "run_companion"]

_FLAGS = re.IGNORECASE | re.DOTALL
_QUOTED = r"(?:'(?P<{0}>[^']*)'|\"(?P<{0}d>[^\"]*)\")"
_HEAD = re.compile(
    r"^\s*BUILD\s+(?:INDEXTABLES|TANTIVY4SPARK)\s+COMPANION\s+FOR\s+(?P<format>\w+)\s+"
    + _QUOTED.format("source"),
    _FLAGS,
)
_TAIL = re.compile(
    r"\s+AT\s+LOCATION\s+" + _QUOTED.format("location") + r"(?P<dry>\s+DRY\s+RUN)?\s*;?\s*$",
    _FLAGS,
)
_SIZE = r"(?P<size>'[^']*'|\S+)"
_CLAUSES: list[tuple[str, re.Pattern[str]]] = [
    ("modes", re.compile(r"^\s*INDEXING\s+MODES\s*\((?P<body>[^)]*)\)", _FLAGS)),
    ("fastfields", re.compile(r"^\s*FASTFIELDS\s+MODE\s+(?P<mode>\w+)", _FLAGS)),
    ("target", re.compile(r"^\s*TARGET\s+INPUT\s+SIZE\s+" + _SIZE, _FLAGS)),
    ("heap", re.compile(r"^\s*WRITER\s+HEAP\s+SIZE\s+" + _SIZE, _FLAGS)),
    ("version", re.compile(r"^\s*FROM\s+VERSION\s+(?P<n>\d+)", _FLAGS)),
    ("snapshot", re.compile(r"^\s*FROM\s+SNAPSHOT\s+(?P<n>\d+)", _FLAGS)),
    ("include", re.compile(r"^\s*INCLUDE\s+COLUMNS\s*\((?P<body>[^)]*)\)", _FLAGS)),
    ("exclude", re.compile(r"^\s*EXCLUDE\s+COLUMNS\s*\((?P<body>[^)]*)\)", _FLAGS)),
    (
        "streaming",
        re.compile(r"^\s*WITH\s+STREAMING\s+POLL\s+INTERVAL\s+(?P<n>\d+)\s+SECONDS?\b", _FLAGS),
    ),
    ("where", re.compile(r"^\s*WHERE\s+(?P<predicate>.+)$", _FLAGS)),
]
_TRAILING_STREAMING = re.compile(
    r"\s+WITH\s+STREAMING\s+POLL\s+INTERVAL\s+(?P<n>\d+)\s+SECONDS?\s*$", _FLAGS
)
MAX_CYCLES_KEY = "spark.indextables.companion.streaming.maxCycles"
_REFUSED = {
    "SCHEMA SOURCE": "the schema is read from the source's files",
    "CATALOG": "catalog-named sources (Unity Catalog, Iceberg REST) are not supported; give a path",
    "TYPE": "catalog-named sources are not supported; give a path",
    "WAREHOUSE": "configure the Iceberg catalog as pyiceberg reads it (.pyiceberg.yaml)",
    "HASHED FASTFIELDS": "hashed fast fields are not supported",
    "INVALIDATE ALL PARTITIONS": "re-create the index at a new location instead",
    "TABLE ROOTS": "set spark.indextables.companion.parquetTableRoot when reading instead",
    "WITH STREAMING": "expected WITH STREAMING POLL INTERVAL <whole seconds> SECONDS",
}

COMPANION_SCHEMA = StructType(
    [
        StructField("table_path", StringType(), True),
        StructField("source_path", StringType(), True),
        StructField("status", StringType(), True),
        StructField("source_version", LongType(), True),
        StructField("splits_created", IntegerType(), True),
        StructField("splits_invalidated", IntegerType(), True),
        StructField("parquet_files_indexed", IntegerType(), True),
        StructField("parquet_bytes_downloaded", LongType(), True),
        StructField("split_bytes_uploaded", LongType(), True),
        StructField("duration_ms", LongType(), True),
        StructField("message", StringType(), True),
    ]
)


def is_companion_statement(text: str) -> bool:
    """Whether ``text`` is a BUILD ... COMPANION statement (well-formed or not)."""
    return bool(re.match(r"^\s*BUILD\s+(?:INDEXTABLES|TANTIVY4SPARK)\s+COMPANION\b", text, _FLAGS))


def parse_companion(text: str) -> dict[str, Any]:
    """The statement's arguments as keyword arguments of ``build_companion``.

    Raises:
        SqlCommandError: a statement that does not parse, or a clause not supported
            (named in the message).
    """
    shown = text.strip()
    head = _HEAD.match(text)
    tail = _TAIL.search(text)
    if head is None or tail is None or tail.start() < head.end():
        raise SqlCommandError(
            f"cannot parse {shown!r}: expected BUILD INDEXTABLES COMPANION FOR DELTA|PARQUET "
            "'<source>' [clauses] AT LOCATION '<index>' [DRY RUN]"
        )
    source_format = head.group("format").lower()
    if source_format not in ("delta", "parquet", "iceberg"):
        raise SqlCommandError(f"{shown!r}: FOR {head.group('format')} is not DELTA|PARQUET|ICEBERG")
    args: dict[str, Any] = {
        "source": _text(head, "source"),
        "location": _text(tail, "location"),
        "source_format": source_format,
        "dry_run": tail.group("dry") is not None,
    }
    rest = text[head.end() : tail.start()]
    seen: set[str] = set()
    while rest.strip():
        for name, pattern in _CLAUSES:
            match = pattern.match(rest)
            if match:
                if name in seen:
                    raise SqlCommandError(f"{shown!r}: a clause is given twice ({name})")
                seen.add(name)
                _apply(name, match, args)
                rest = rest[match.end() :]
                break
        else:
            raise SqlCommandError(f"{shown!r}: {_unknown_clause(rest.strip())}")
    if args["dry_run"] and "poll_seconds" in args:
        raise SqlCommandError(f"{shown!r}: DRY RUN and WITH STREAMING cannot both be given")
    return args


def _text(match: re.Match[str], name: str) -> str:
    value = match.group(name)
    return value if value is not None else match.group(name + "d")


def _unknown_clause(rest: str) -> str:
    upper = " ".join(rest.upper().split())
    for clause, reason in _REFUSED.items():
        if upper.startswith(clause):
            return f"{clause} is not supported: {reason}"
    return f"unknown clause at {rest[:40]!r}"


def _apply(name: str, match: re.Match[str], args: dict[str, Any]) -> None:
    from indextables.search.options import parse_size

    if name == "modes":
        args["indexing_modes"] = _pairs(match.group("body"))
    elif name == "fastfields":
        args["fast_field_mode"] = match.group("mode").upper()
    elif name in ("target", "heap"):
        clause = "TARGET INPUT SIZE" if name == "target" else "WRITER HEAP SIZE"
        value = match.group("size").strip("'")
        try:
            size = parse_size(clause, value)
        except ValueError as error:
            raise SqlCommandError(f"{clause} {value!r} is not a size (2G, 512M)") from error
        if size <= 0:
            raise SqlCommandError(f"{clause} must be positive, got {value!r}")
        args["target_input_size" if name == "target" else "writer_heap_size"] = size
    elif name in ("version", "snapshot"):
        if "from_version" in args:
            raise SqlCommandError("FROM VERSION and FROM SNAPSHOT cannot both be given")
        if (name == "snapshot") != (args["source_format"] == "iceberg"):
            raise SqlCommandError(
                "FROM SNAPSHOT applies to Iceberg sources, FROM VERSION to Delta sources"
            )
        args["from_version"] = int(match.group("n"))
    elif name in ("include", "exclude"):
        args[f"{name}_columns"] = _names(match.group("body"), name.upper() + " COLUMNS")
    elif name == "streaming":
        seconds = int(match.group("n"))
        if seconds <= 0:
            raise SqlCommandError("WITH STREAMING POLL INTERVAL must be at least 1 SECONDS")
        args["poll_seconds"] = seconds
    else:
        predicate = match.group("predicate").strip()
        trailing = _TRAILING_STREAMING.search(predicate)
        if trailing is not None:
            if "poll_seconds" in args:
                raise SqlCommandError("a clause is given twice (streaming)")
            _apply("streaming", trailing, args)
            predicate = predicate[: trailing.start()].strip()
        args["where"] = predicate


_ITEM = re.compile(r"\s*'(?P<key>[^']*)'\s*:\s*'(?P<value>[^']*)'\s*(?:,|$)")


def _pairs(body: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    rest = body.strip()
    while rest:
        match = _ITEM.match(rest)
        if match is None:
            raise SqlCommandError(f"INDEXING MODES ({body}): expected 'column':'mode', ...")
        pairs[match.group("key")] = match.group("value")
        rest = rest[match.end() :].strip()
    return pairs


def _names(body: str, clause: str) -> list[str]:
    names = [item.strip() for item in body.split(",")]
    found = []
    for item in names:
        if len(item) < 2 or item[0] != item[-1] or item[0] not in "'\"`":
            raise SqlCommandError(f"{clause} ({body}): quote each column name ('a', 'b')")
        found.append(item[1:-1])
    lowered = [n.lower() for n in found]
    if len(set(lowered)) != len(lowered):
        raise SqlCommandError(f"{clause} ({body}) names a column twice")
    return found


def run_companion(
    spark: SparkSession, text: str, *, options: Mapping[str, str] | None = None
) -> DataFrame:
    """Run a BUILD INDEXTABLES COMPANION statement on the driver; one result row (with
    WITH STREAMING: one per cycle that synced, once the loop ends)."""
    from indextables.search import build_companion

    args = parse_companion(text)
    opts = dict(options or {})
    poll = args.pop("poll_seconds", None)
    if poll is None:
        rows = [build_companion(**args, options=opts).as_dict()]
    else:
        rows = _stream(args, poll, opts)
    return spark.createDataFrame(
        [tuple(row[f.name] for f in COMPANION_SCHEMA.fields) for row in rows], COMPANION_SCHEMA
    )


def _stream(args: dict[str, Any], poll: int, options: dict[str, str]) -> list[dict[str, Any]]:
    """Sync every ``poll`` seconds until interrupted (Ctrl-C) or the cycle limit."""
    import threading

    from indextables.search import sync_companion_forever

    limit = None
    for key in [k for k in options if k.lower() == MAX_CYCLES_KEY.lower()]:
        value = str(options.pop(key)).strip()
        if not value.isdigit() or int(value) < 1:
            raise SqlCommandError(f"{MAX_CYCLES_KEY}={value!r} must be a positive whole number")
        limit = int(value)
    rows: list[dict[str, Any]] = []
    stop = threading.Event()
    dry_run = args.pop("dry_run")
    del dry_run  # parse_companion refuses DRY RUN with WITH STREAMING

    def keep(cycle: Any) -> None:
        if cycle.result is not None:
            rows.append(cycle.result.as_dict())

    try:
        sync_companion_forever(
            **args, poll_seconds=poll, max_cycles=limit, stop=stop, on_cycle=keep, options=options
        )
    except KeyboardInterrupt:
        stop.set()  # an interrupted streaming sync ends: what it committed stays
    return rows
