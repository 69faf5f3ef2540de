"""Build or sync a companion index: an anti-join of the source's files against the live splits.

* a source file in no live split is indexed;
* a live split naming a file that is gone, or whose identity changed (size,
  Delta deletion vector), is removed, and its files that are still current and
  in no other valid split are indexed again;
* everything else is left alone.

Files are grouped per partition value up to ``target_input_size`` bytes, one
split per group. Groups commit in batches of ``batch_groups``, each one atomic
commit (the first also removes the invalidated splits), so an interrupted sync
leaves a consistent table and the next one indexes only what is still missing.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from indextables.protocol.actions import AddAction
from indextables.protocol.errors import TableNotFoundError
from indextables.search import oplog
from indextables.search.companion.build import IDENTITY_TAG, CompanionGroup, identity_tag
from indextables.search.companion.decimals import index_schema
from indextables.search.companion.layout import (
    CompanionLayout,
    apply_layout,
    layout_from_config,
    layout_from_options,
)
from indextables.search.companion.parallel import SplitJob, build_parallelism, build_splits
from indextables.search.companion.sources import SourceFile, SourceListing, list_source
from indextables.search.companion.spread import spread_groups
from indextables.search.companion.stringmodes import field_type, strip_modes
from indextables.search.errors import CompanionError, CompanionSourceError
from indextables.search.options import DEFAULT_HEAP_SIZE as WRITE_HEAP_SIZE
from indextables.search.options import parse_size
from indextables.search.schema.mapping import FieldKind, field_specs
from indextables.search.schema.partitionvalues import partition_column
from indextables.search.schema.schemajson import spark_json
from indextables.search.table.tableaccess import (
    _engine,
    engine_config,
    storage_options,
)
from indextables.search.write.arrowinput import spark_arrow_schema

__all__ = [
    "CompanionResult",
    "CompanionSettings",
    "build_companion_index",
    "companion_config",
    "companion_root",
]

_LOG = logging.getLogger(__name__)

PREFIX = "indextables.companion."
FAST_FIELD_MODES = ("HYBRID", "DISABLED", "PARQUET_ONLY")
INDEXING_MODES = ("string", "text", "ip", "ipaddress", "json")
DEFAULT_TARGET_INPUT_SIZE = 2 * 1024**3
# The same as write_table's (64M): measured cheaper per row than 256M (docs/performance.md).
DEFAULT_HEAP_SIZE = WRITE_HEAP_SIZE
DEFAULT_BATCH_GROUPS = 8
#: Rows of a source file decoded and indexed per step of a companion build.
BUILD_BATCH_ROWS = 8192


@dataclass(frozen=True, slots=True)
class CompanionSettings:
    """How a companion is built (the BUILD INDEXTABLES COMPANION clauses)."""

    source: str
    source_format: str
    include_columns: tuple[str, ...] = ()
    exclude_columns: tuple[str, ...] = ()
    indexing_modes: Mapping[str, str] = field(default_factory=dict)
    fast_field_mode: str = "HYBRID"
    target_input_size: int = DEFAULT_TARGET_INPUT_SIZE
    writer_heap_size: int = DEFAULT_HEAP_SIZE
    from_version: int | None = None
    where: str | None = None
    batch_groups: int = DEFAULT_BATCH_GROUPS
    layout: CompanionLayout = field(default_factory=CompanionLayout)


@dataclass(frozen=True, slots=True)
class CompanionResult:
    """The one result row of BUILD INDEXTABLES COMPANION (the reference's columns)."""

    table_path: str
    source_path: str
    status: str
    source_version: int | None
    splits_created: int
    splits_invalidated: int
    parquet_files_indexed: int
    parquet_bytes_downloaded: int
    split_bytes_uploaded: int
    duration_ms: int
    message: str

    def as_dict(self) -> dict[str, Any]:
        """The row as a dict in the reference's column order."""
        return {name: getattr(self, name) for name in self.__slots__}


def companion_config(configuration: Mapping[str, str]) -> dict[str, str] | None:
    """The ``indextables.companion.*`` keys of a table configuration (None if not a companion)."""
    if str(configuration.get(PREFIX + "enabled", "")).lower() != "true":
        return None
    return {k[len(PREFIX) :]: v for k, v in configuration.items() if k.startswith(PREFIX)}


ROOT_OPTION = "spark.indextables.companion.parquetTableRoot"


def companion_root(configuration: Mapping[str, str], options: Mapping[str, str]) -> str | None:
    """Where a companion table's Parquet files are read from (None: not a companion).

    The ``spark.indextables.companion.parquetTableRoot`` read option wins over
    the source path recorded at build time (a replica of the source elsewhere).
    """
    config = companion_config(configuration)
    if config is None:
        return None
    for key, value in options.items():
        if key.lower() == ROOT_OPTION.lower():
            return str(value)
    return config.get("parquetStorageRoot") or config.get("sourceTablePath") or ""


def _build_fields(result: CompanionResult) -> dict[str, object]:
    """The log line's fields of a companion build (see :mod:`indextables.search.oplog`)."""
    return {
        "source_version": result.source_version,
        "splits_written": result.splits_created,
        "bytes_written": result.split_bytes_uploaded,
        "bytes_fetched": result.parquet_bytes_downloaded,
        "status": result.status,
        "source": result.source_path,
        "splits_invalidated": result.splits_invalidated,
        "parquet_files_indexed": result.parquet_files_indexed,
    }


@oplog.logged(_LOG, "companion build", uri="index_uri", fields=_build_fields)
def build_companion_index(
    index_uri: str,
    settings: CompanionSettings,
    *,
    options: Mapping[str, str] | None = None,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> CompanionResult:
    """Create or sync the companion index at ``index_uri`` over ``settings.source``.

    ``progress(splits committed, splits planned)`` is called after each committed batch.

    Raises:
        CompanionError: bad settings, or an index at ``index_uri`` that is not this
            source's companion.
        CompanionSourceError: the source cannot be listed or read.
    """
    started = time.monotonic()
    opts = dict(options or {})
    parallelism = build_parallelism(opts)
    table = _open(index_uri, opts)
    stored = companion_config(table.snapshot().metadata.configuration) if table else None
    if table is not None and stored is None:
        raise CompanionError(f"{index_uri!r} is an IndexTables table, not a companion index")
    if settings.layout.is_empty:
        settings = replace(settings, layout=layout_from_options(opts))
    settings = _effective(settings, stored)
    listing = list_source(
        settings.source, settings.source_format, version=settings.from_version, options=opts
    )
    schema = spark_arrow_schema(listing.schema)
    if table is not None:
        existing = tuple(table.snapshot().metadata.partition_columns)
        if existing != listing.partition_columns:
            raise CompanionError(
                f"the source is now partitioned by {list(listing.partition_columns)}, the "
                f"companion index by {existing}: build a new companion at another location"
            )
    specs = _specs(schema, listing.partition_columns, settings)
    wanted = _selected(listing, schema, settings.where)
    live = list(table.snapshot().files) if table is not None else []
    to_index, invalid = _anti_join(listing.files, wanted, live)
    # Delta deletion vectors and Iceberg position deletes are applied at indexing (their
    # rows are left out); a file whose deletes a listing could not decode is not indexed.
    with_dv = sorted(
        f.path for f in to_index if f.deletion_vector is not None and f.deleted is None
    )
    to_index = [f for f in to_index if f.deletion_vector is None or f.deleted is not None]
    groups = spread_groups(
        _groups(to_index, listing.partition_columns, settings.target_input_size),
        workers=parallelism,
    )

    def result(
        status: str, created: int, uploaded: int, read: int, message: str
    ) -> CompanionResult:
        return CompanionResult(
            table_path=index_uri,
            source_path=settings.source,
            status=status,
            source_version=listing.version,
            splits_created=created,
            splits_invalidated=len(invalid),
            parquet_files_indexed=sum(len(g.files) for g in groups) if status != "error" else 0,
            parquet_bytes_downloaded=read,
            split_bytes_uploaded=uploaded,
            duration_ms=int((time.monotonic() - started) * 1000),
            message=message,
        )

    if dry_run:
        return result(
            "dry_run", len(groups), 0, 0,
            f"would index {sum(len(g.files) for g in groups)} file(s) into {len(groups)} "
            f"split(s) and invalidate {len(invalid)}",
        )  # fmt: skip
    if table is not None and not groups and not invalid and not with_dv:
        return result("no_action", 0, 0, 0, "the companion is up to date")
    config = _configuration(settings, listing)
    data_schema = pa.schema([f for f in schema if f.name not in listing.partition_columns])
    if table is None:
        table = _create(index_uri, opts, schema, listing.partition_columns, config)
    created = uploaded = read = 0
    removes = [f.path for f in invalid]
    job = SplitJob(
        index_uri=index_uri,
        options=opts,
        root=listing.root,
        specs=specs,
        data_schema=data_schema,
        partition_columns=listing.partition_columns,
        fast_field_mode=settings.fast_field_mode.lower(),
        source_version=listing.version,
        heap_size=settings.writer_heap_size,
        batch_size=BUILD_BATCH_ROWS,
        string_modes=strip_modes(settings.indexing_modes),
    )
    # Splits are built ahead (in parallel) and committed in group order, a batch at a time.
    with closing(build_splits(job, groups, workers=parallelism)) as built:
        for start in range(0, max(len(groups), 1), settings.batch_groups):
            batch = groups[start : start + settings.batch_groups]
            adds: list[AddAction] = []
            for group in batch:
                adds.append(next(built))
                read += group.input_bytes
            last = start + settings.batch_groups >= len(groups)
            metadata = _new_metadata(table, config, spark_json(schema)) if last else None
            if adds or removes or metadata is not None:
                table.commit(adds=adds, removes=removes, metadata=metadata)
            removes = []
            created += len(adds)
            uploaded += sum(a.size for a in adds)
            if progress is not None:
                progress(created, len(groups))
    if with_dv:
        # Deleted rows must never be returned: files whose deletes were not decoded are
        # left out (their old splits are removed above).
        raise CompanionSourceError(
            f"{len(with_dv)} source file(s) carry deletes that were not decoded; they "
            "were not indexed: "
            f"{', '.join(with_dv[:5])}"
        )
    return result(
        "success", created, uploaded, read,
        f"indexed {sum(len(g.files) for g in groups)} file(s) into {created} split(s), "
        f"invalidated {len(invalid)}",
    )  # fmt: skip


def _open(uri: str, options: Mapping[str, str]) -> Any:
    engine = _engine()
    try:
        return engine.open_table(
            uri, storage_options=storage_options(options), config=engine_config(options)
        )
    except TableNotFoundError:
        return None


def _create(
    uri: str,
    options: Mapping[str, str],
    schema: pa.Schema,
    partition_columns: Sequence[str],
    config: Mapping[str, str],
) -> Any:
    return _engine().create_table(
        uri,
        schema=spark_json(schema),
        partition_columns=tuple(partition_columns),
        configuration=dict(config),
        storage_options=storage_options(options),
        config=engine_config(options),
    )


def _new_metadata(table: Any, config: Mapping[str, str], schema_json: str) -> Any:
    """The table's metadata with the sync's configuration and the source's current schema
    (columns added to the source since), or None when neither changed."""
    metadata = table.snapshot().metadata
    merged = {**metadata.configuration, **config}
    if merged == dict(metadata.configuration) and schema_json == metadata.schema_string:
        return None
    return replace(metadata, configuration=merged, schema_string=schema_json)


def _effective(settings: CompanionSettings, stored: Mapping[str, str] | None) -> CompanionSettings:
    """Check the settings; a sync reuses the stored ones it is not given (SQL > stored)."""
    fmt = settings.source_format.lower()
    mode = settings.fast_field_mode.upper()
    if mode not in FAST_FIELD_MODES:
        raise CompanionError(
            f"FASTFIELDS MODE {settings.fast_field_mode!r} is not one of "
            f"{', '.join(FAST_FIELD_MODES)}"
        )
    if settings.include_columns and settings.exclude_columns:
        raise CompanionError("INCLUDE COLUMNS and EXCLUDE COLUMNS cannot both be given")
    if settings.target_input_size <= 0:
        raise CompanionError(f"TARGET INPUT SIZE {settings.target_input_size} must be positive")
    for column, kind in settings.indexing_modes.items():
        if field_type(column, kind) is None and kind.lower() not in INDEXING_MODES:
            raise CompanionError(
                f"INDEXING MODES {column!r}:{kind!r}: mode {kind!r} is not supported here "
                f"(supported: {', '.join(INDEXING_MODES)})"
            )
    updates: dict[str, Any] = {"source_format": fmt, "fast_field_mode": mode}
    if stored is not None:
        if stored.get("sourceTablePath") != settings.source or stored.get("sourceFormat") != fmt:
            raise CompanionError(
                f"this index is the companion of {stored.get('sourceFormat')} table "
                f"{stored.get('sourceTablePath')!r}, not of {fmt} table {settings.source!r}"
            )
        if not settings.include_columns and not settings.exclude_columns:
            updates["include_columns"] = tuple(json.loads(stored.get("includeColumns", "[]")))
            updates["exclude_columns"] = tuple(json.loads(stored.get("excludeColumns", "[]")))
        if not settings.indexing_modes:
            updates["indexing_modes"] = json.loads(stored.get("indexingModes", "{}"))
        if settings.where is None and stored.get("whereClause"):
            updates["where"] = stored["whereClause"]
        if settings.layout.is_empty:
            updates["layout"] = layout_from_config(stored)
    return replace(settings, **updates)


def _configuration(settings: CompanionSettings, listing: SourceListing) -> dict[str, str]:
    config = {
        PREFIX + "enabled": "true",
        PREFIX + "sourceTablePath": settings.source,
        PREFIX + "sourceFormat": settings.source_format,
        PREFIX + "fastFieldMode": settings.fast_field_mode,
    }
    if listing.version is not None:
        config[PREFIX + "lastSyncedVersion"] = str(listing.version)
    if listing.root != settings.source:
        # A catalog-named source (Iceberg): its files live under the table's location.
        config[PREFIX + "parquetStorageRoot"] = listing.root
    if settings.indexing_modes:
        config[PREFIX + "indexingModes"] = json.dumps(dict(settings.indexing_modes))
    if settings.include_columns:
        config[PREFIX + "includeColumns"] = json.dumps(list(settings.include_columns))
    if settings.exclude_columns:
        config[PREFIX + "excludeColumns"] = json.dumps(list(settings.exclude_columns))
    if settings.where:
        config[PREFIX + "whereClause"] = settings.where
    if settings.from_version is not None:
        config[PREFIX + "fromVersion"] = str(settings.from_version)
    config.update(settings.layout.configuration(PREFIX))
    return config


def _specs(
    schema: pa.Schema, partition_columns: Sequence[str], settings: CompanionSettings
) -> tuple[Any, ...]:
    """Field specs of the indexed columns: indexed, never stored; fast per FASTFIELDS MODE."""
    from indextables.search.options import IndexingOptions

    parts = {c.lower() for c in partition_columns}
    names = {f.name.lower(): f.name for f in schema if f.name.lower() not in parts}
    chosen = set(names)
    for label, given in (
        ("INCLUDE", settings.include_columns),
        ("EXCLUDE", settings.exclude_columns),
    ):
        unknown = sorted(c for c in given if c.lower() not in names and c.lower() not in parts)
        if unknown:
            raise CompanionError(
                f"{label} COLUMNS names {', '.join(unknown)}, which the source does not have "
                f"(columns: {', '.join(list(names.values())[:20])})"
            )
    if settings.include_columns:
        chosen = {c.lower() for c in settings.include_columns} & set(names)
    chosen -= {c.lower() for c in settings.exclude_columns}
    if not chosen:
        raise CompanionError("no column is left to index (INCLUDE/EXCLUDE COLUMNS)")
    for column in settings.indexing_modes:
        if column.lower() not in chosen:
            raise CompanionError(f"INDEXING MODES names {column!r}, which is not indexed")
    typemap = {
        c.lower(): field_type(c, m) or ("ip" if m.lower() == "ipaddress" else m.lower())
        for c, m in settings.indexing_modes.items()
    }
    indexed = index_schema(pa.schema([f for f in schema if f.name.lower() in chosen]))
    specs = field_specs(indexed, IndexingOptions(typemap=typemap))
    mode = settings.fast_field_mode
    fixed = []
    for spec in specs:
        fast = spec.fast
        if mode == "PARQUET_ONLY" and spec.kind is not FieldKind.IP:
            fast = False
        elif mode == "HYBRID" and spec.kind in (FieldKind.STRING, FieldKind.TEXT):
            fast = False  # strings come from Parquet in HYBRID mode
        fixed.append(replace(spec, stored=False, fast=fast))
    return apply_layout(fixed, settings.layout, fast_field_mode=mode)


def _selected(listing: SourceListing, schema: pa.Schema, where: str | None) -> set[str]:
    """The files a partition ``where`` keeps (all without one), evaluated as Spark would."""
    if not where:
        return {f.path for f in listing.files}
    from indextables.search.query.whereeval import compile_where

    types = {f.name: f.type for f in schema if f.name in listing.partition_columns}
    filt = compile_where(where, pa.schema([pa.field(c, t) for c, t in types.items()]))
    arrays = [
        pa.concat_arrays([partition_column(f.partition_values.get(c), t, 1) for f in listing.files])
        if listing.files
        else pa.array([], t)
        for c, t in types.items()
    ]
    batch = pa.RecordBatch.from_arrays(arrays, names=list(types))
    mask = filt.mask(batch).to_pylist()
    return {f.path for f, keep in zip(listing.files, mask, strict=True) if keep}


def _anti_join(
    files: Sequence[SourceFile], wanted: set[str], live: Sequence[Any]
) -> tuple[list[SourceFile], list[Any]]:
    """(files to index, splits to remove)."""
    current = {f.path: f for f in files}
    valid_files: set[str] = set()
    invalid = []
    for split in live:
        names = tuple(split.companion_source_files or ())
        tag = next((t for t in split.split_tags or () if t.startswith(IDENTITY_TAG)), None)
        present = [current[n] for n in names if n in current]
        if len(present) == len(names) and tag == identity_tag(present):
            valid_files.update(names)
        else:
            invalid.append(split)
    to_index = [f for f in files if f.path in wanted and f.path not in valid_files]
    return to_index, invalid


def _groups(
    files: Sequence[SourceFile], partition_columns: Sequence[str], target: int
) -> list[CompanionGroup]:
    by_partition: dict[tuple[tuple[str, str | None], ...], list[SourceFile]] = {}
    for source in files:
        key = tuple((c, source.partition_values.get(c)) for c in partition_columns)
        by_partition.setdefault(key, []).append(source)
    groups = []
    for key, members in by_partition.items():
        current: list[SourceFile] = []
        size = 0
        for source in members:
            if current and size + source.size > target:
                groups.append(CompanionGroup(key, tuple(current)))
                current, size = [], 0
            current.append(source)
            size += source.size
        if current:
            groups.append(CompanionGroup(key, tuple(current)))
    return groups


def parse_target_size(text: str) -> int:
    """``2G``, ``512M``, ``1048576`` -> bytes (TARGET INPUT SIZE)."""
    return parse_size("TARGET INPUT SIZE", text)
