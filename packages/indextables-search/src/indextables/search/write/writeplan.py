"""Planning a write: every check a write makes before any row is indexed.

Shared by ``write_table`` and the Spark data source (which converts Spark's
``StructType`` to Arrow first), so both refuse the same writes with the same
errors: unknown option keys, names equal but for case, partition columns that
do not exist or cannot partition, a schema that differs from the table's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import pyarrow as pa

from indextables.search.errors import CompanionError, DuplicateColumnError, OptionError
from indextables.search.options import (
    INDEXING,
    OnWriteOptions,
    WriteOptions,
    check_option_keys,
    lower_keys,
    parse_indexing,
    parse_on_write,
    parse_write,
)
from indextables.search.schema import columntypes as ct
from indextables.search.schema.mapping import FieldSpec, field_specs
from indextables.search.schema.partitionvalues import check_partition_types
from indextables.search.schema.schemajson import arrow_schema
from indextables.search.table.tableaccess import TableView
from indextables.search.write.schemamerge import resolve_schema
from indextables.search.write.splitwriter import SplitWriter

__all__ = ["TableWritePlan", "check_case_unique", "plan_table_write", "split_writer"]


@dataclass(frozen=True, slots=True)
class TableWritePlan:
    """Everything a write needs, validated before any row is indexed.

    Attributes:
        uri: the table URI.
        options: the write options (for the store).
        schema: the data's Arrow schema (Spark's Arrow form of its columns).
        specs: the field specs of the non-partition columns.
        write_options: heap/batch sizes and partition columns.
        configuration: table configuration recorded when the table is created.
        read_version: the table version the write was planned against (None for
            a new table); an overwrite removes exactly that version's files.
        on_write: merge-on-write / purge-on-write settings.
        added_columns: columns the write adds to an existing table's schema
            (``schema_mode="merge"``); ``schema`` then is the new table schema.
    """

    uri: str
    options: Mapping[str, str]
    schema: pa.Schema
    specs: tuple[FieldSpec, ...]
    write_options: WriteOptions
    configuration: Mapping[str, str]
    read_version: int | None = None
    on_write: OnWriteOptions = field(default_factory=OnWriteOptions)
    added_columns: tuple[str, ...] = ()


def split_writer(plan: TableWritePlan) -> SplitWriter:
    """A fresh split writer for one writer of ``plan`` (a Spark task, a ``write_table`` thread)."""
    from indextables.search.table.tableaccess import open_table_store

    options = plan.write_options
    return SplitWriter(
        store=open_table_store(plan.uri, plan.options),
        specs=plan.specs,
        partition_columns=options.partition_columns,
        heap_size=options.heap_size,
        batch_size=options.batch_size,
        max_split_bytes=options.max_split_bytes,
        arrow_copy=options.arrow_copy,
        docstore_block_size=options.docstore_block_size,
        feed=options.feed,
    )


def plan_table_write(
    uri: str,
    options: Mapping[str, str],
    schema: pa.Schema,
    *,
    upcast: bool = False,
    merge_schema: bool = False,
) -> TableWritePlan:
    """Validate a write of ``schema`` against the options and the existing table, if any.

    By default an existing table's columns must be exactly the data's. With
    ``upcast`` (``write_table``) the data may hold safe upcasts of the table's
    types and the plan's schema is the table's (:mod:`.schemamerge`); with
    ``merge_schema`` too, new columns are added and missing nullable ones written
    as nulls.

    Raises:
        OptionError: bad option keys or values, partitioning that contradicts the
            table or the data, a schema that differs from the table's.
        DuplicateColumnError: two names (columns, or fields of one struct) equal but for case.
        UnsupportedTypeError: a column type that cannot be indexed.
        CompanionError: the table is a companion index (read-only).
    """
    from indextables.search.refkeys import warn_ignored
    from indextables.search.table.tableaccess import engine_config, load_view, table_exists
    from indextables.search.write.merge import merge_settings

    check_option_keys(options)
    warn_ignored(options)
    check_case_unique(schema)
    engine_config(options)  # engine settings fail here, at planning, not at commit
    merge_settings(options)  # so do merge-on-write's
    existing = load_view(uri, options) if table_exists(uri, options) else None
    if (
        existing is not None
        and existing.configuration.get("indextables.companion.enabled") == "true"
    ):
        source = existing.configuration.get("indextables.companion.sourceTablePath")
        raise CompanionError(
            f"{uri!r} is a companion index of {source!r} and is read-only: write to the "
            "source table, then sync with BUILD INDEXTABLES COMPANION"
        )
    merged = dict(existing.configuration) if existing else {}
    merged = {k: v for k, v in lower_keys(merged).items() if k.startswith(INDEXING)}
    merged.update(lower_keys(options))
    write = parse_write(merged)
    on_write = parse_on_write(options)
    added: tuple[str, ...] = ()
    if existing is not None and (upcast or merge_schema):
        write = _check_partitioning(write, existing)
        resolution = resolve_schema(
            arrow_schema(existing.schema_json),
            schema,
            merge=merge_schema,
            partition_columns=existing.partition_columns,
            uri=uri,
        )
        schema, added = resolution.schema, resolution.added
    elif existing is not None:
        write = _check_against_table(write, existing, schema)
    _check_partitions(write.partition_columns, schema)
    specs = field_specs(schema, parse_indexing(merged), partition_columns=write.partition_columns)
    configuration = {k: v for k, v in merged.items() if k.startswith(INDEXING)}
    read_version = existing.version if existing is not None else None
    return TableWritePlan(
        uri, dict(options), schema, specs, write, configuration, read_version, on_write, added
    )


def check_case_unique(schema: pa.Schema | pa.StructType, where: str = "") -> None:
    """Refuse names that differ only in case, as Spark's Parquet writer does.

    Spark resolves names case-insensitively and the index keys its fields by
    lowercase name: ``a`` and ``A`` would share one field. Struct fields (also
    inside lists and maps) are checked the same way.

    Raises:
        DuplicateColumnError: names both columns (``COLUMN_ALREADY_EXISTS`` in Spark).
    """
    fields = list(schema) if isinstance(schema, pa.Schema) else ct.fields_of(schema)
    names = [f.name for f in fields]
    seen: dict[str, str] = {}
    for f in fields:
        other = seen.setdefault(f.name.lower(), f.name)
        if other != f.name or names.count(f.name) > 1:
            raise DuplicateColumnError(
                f"columns {where + other!r} and {where + f.name!r} have the same name "
                "ignoring case (Spark: COLUMN_ALREADY_EXISTS); Spark and the index "
                "resolve names case-insensitively, so rename one"
            )
        for nested in _structs(f.type):
            check_case_unique(nested, f"{where}{f.name}.")


def _structs(t: pa.DataType) -> list[pa.StructType]:
    if ct.is_struct(t):
        return [t]
    if ct.is_list(t):
        return _structs(t.value_type)
    if ct.is_map(t):
        return _structs(t.key_type) + _structs(t.item_type)
    return []


def _check_partitions(columns: tuple[str, ...], schema: pa.Schema) -> None:
    names = set(schema.names)
    missing = [c for c in columns if c not in names]
    if missing:
        raise OptionError(
            f"partitionBy names column(s) {', '.join(missing)} that the DataFrame does not "
            f"have (columns: {', '.join(sorted(names))})"
        )
    if columns and len(columns) >= len(names):
        raise OptionError("partitionBy cannot name every column: nothing would be indexed")
    check_partition_types(columns, schema)


def _check_partitioning(write: WriteOptions, table: TableView) -> WriteOptions:
    asked = write.partition_columns
    if asked and tuple(asked) != table.partition_columns:
        raise OptionError(
            f"partitionBy={','.join(asked)} differs from the table's partition columns "
            f"({','.join(table.partition_columns) or 'none'}) at {table.uri}"
        )
    return replace(write, partition_columns=table.partition_columns)


def _check_against_table(write: WriteOptions, table: TableView, schema: pa.Schema) -> WriteOptions:
    write = _check_partitioning(write, table)
    existing = arrow_schema(table.schema_json)
    have = {f.name.lower(): ct.type_name(f.type) for f in existing}
    given = {f.name.lower(): ct.type_name(f.type) for f in schema}
    if have != given:
        raise OptionError(
            f"the DataFrame's columns {sorted(given.items())} do not match the table's "
            f"{sorted(have.items())} at {table.uri} (option mergeSchema=true adds new "
            "columns and takes safe upcasts)"
        )
    return write
