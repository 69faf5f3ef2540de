"""The ``indextables`` Python data source: schema, readers and writers for Spark.

Every method runs in a Spark Python worker process, never in the user's
driver process; the instance is pickled between them, so it holds options
only. Option validation happens here, while Spark plans the query, so a bad
value fails before any task runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from indextables.pyspark.errors import OptionError
from indextables.pyspark.reader import IndexTablesReader
from indextables.pyspark.sparktypes import arrow_schema
from indextables.pyspark.writer import IndexTablesWriter, WritePlan
from indextables.search.options import (
    INDEXING,
    check_option_keys,
    lower_keys,
    parse_indexing,
    parse_on_write,
    parse_read,
    parse_write,
)
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.refkeys import warn_ignored
from indextables.search.schema.mapping import field_specs
from indextables.search.schema.partitionvalues import check_partition_types
from indextables.search.table.tableaccess import TableView, load_head, load_planning_view, load_view
from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

FORMAT = "indextables"


class IndexTablesDataSource(DataSource):
    """``spark.read.format("indextables")`` / ``df.write.format("indextables")``."""

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return FORMAT

    def _path(self) -> str:
        path = lower_keys(self.options).get("path")
        if not path:
            raise OptionError('no table path: use .load("<uri>") / .save("<uri>") or option path')
        return path

    def view(self) -> TableView:
        """The requested snapshot of the table (time-travel options applied)."""
        read = parse_read(self.options)
        return load_view(
            self._path(), self.options, version=read.version_as_of, timestamp=read.timestamp_as_of
        )

    def planning_view(self) -> TableView:
        """The requested snapshot without its splits, when the table allows (see
        ``load_planning_view``): a reader loads them pruned by its pushed filters."""
        read = parse_read(self.options)
        return load_planning_view(
            self._path(), self.options, version=read.version_as_of, timestamp=read.timestamp_as_of
        )

    def schema(self) -> StructType:
        """The table's logical schema from its metadata (partition columns included).

        Reads the metadata only: no file list, however many splits the table has.
        """
        read = parse_read(self.options)
        head = load_head(
            self._path(), self.options, version=read.version_as_of, timestamp=read.timestamp_as_of
        )
        return StructType.fromJson(json.loads(head.schema_json))

    def reader(self, schema: StructType) -> IndexTablesReader:
        """A reader of the requested snapshot.

        Its splits are read when Spark asks for partitions, after the filters
        are pushed, so the engine prunes them before building entries.
        """
        return make_reader(self.options, self.planning_view(), schema)

    def writer(self, schema: StructType, overwrite: bool) -> IndexTablesWriter:
        """A writer; validates every option against the DataFrame's schema first."""
        return IndexTablesWriter(
            plan_write(self._path(), self.options, schema), overwrite=overwrite
        )

    def streamReader(self, schema: StructType) -> Any:
        """A micro-batch reader of the rows of files added after the checkpointed version."""
        from indextables.pyspark.streaming import IndexTablesStreamReader

        return IndexTablesStreamReader(self._path(), self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        """A streaming sink that appends each micro-batch exactly once."""
        from indextables.pyspark.streaming import IndexTablesStreamWriter

        return IndexTablesStreamWriter(plan_write(self._path(), self.options, schema))


def table_schema(view: TableView) -> StructType:
    """The logical schema of a table snapshot (partition columns included)."""
    return StructType.fromJson(json.loads(view.schema_json))


def make_reader(
    options: Mapping[str, str], view: TableView, schema: StructType
) -> IndexTablesReader:
    """A reader of ``view`` for the read ``options`` (search options validated here)."""
    warn_ignored(options)
    read = parse_read(options)
    search = SearchSpec(read.query, dict(read.text_search), dict(read.field_match))
    return IndexTablesReader(view, schema, options=options, read_options=read, search=search)


def plan_write(path: str, options: Mapping[str, str], schema: StructType) -> WritePlan:
    """Validate a write against the DataFrame's schema and the existing table, if any.

    Raises:
        OptionError: bad option values, or partitioning that contradicts the table.
        UnsupportedTypeError: a column type that cannot be indexed.
    """
    from indextables.search.table.tableaccess import engine_config, table_exists
    from indextables.search.write.merge import merge_settings

    check_option_keys(options)
    warn_ignored(options)
    check_case_unique(schema)
    engine_config(options)  # engine settings fail here, at planning, not at commit
    merge_settings(options)  # so do merge-on-write's
    existing = load_view(path, options) if table_exists(path, options) else None
    merged = dict(existing.configuration) if existing else {}
    merged = {k: v for k, v in lower_keys(merged).items() if k.startswith(INDEXING)}
    merged.update(lower_keys(options))
    write = parse_write(merged)
    on_write = parse_on_write(options)
    if existing is not None:
        write = _check_against_table(write, existing, schema)
    _check_partitions(write.partition_columns, schema)
    specs = field_specs(
        arrow_schema(schema), parse_indexing(merged), partition_columns=write.partition_columns
    )
    configuration = {k: v for k, v in merged.items() if k.startswith(INDEXING)}
    read_version = existing.version if existing is not None else None
    return WritePlan(
        path, dict(options), schema, specs, write, configuration, read_version, on_write
    )


def check_case_unique(schema: StructType, where: str = "") -> None:
    """Refuse names that differ only in case, as Spark's Parquet writer does.

    Spark resolves names case-insensitively and the index keys its fields by
    lowercase name: ``a`` and ``A`` would share one field. Struct fields (also
    inside arrays and maps) are checked the same way.

    Raises:
        DuplicateColumnError: names both columns (``COLUMN_ALREADY_EXISTS`` in Spark).
    """
    from indextables.pyspark.errors import DuplicateColumnError

    seen: dict[str, str] = {}
    for field in schema.fields:
        other = seen.setdefault(field.name.lower(), field.name)
        if other != field.name or sum(f.name == field.name for f in schema.fields) > 1:
            raise DuplicateColumnError(
                f"columns {where + other!r} and {where + field.name!r} have the same name "
                "ignoring case (Spark: COLUMN_ALREADY_EXISTS); Spark and the index "
                "resolve names case-insensitively, so rename one"
            )
        for nested in _structs(field.dataType):
            check_case_unique(nested, f"{where}{field.name}.")


def _structs(data_type: Any) -> list[StructType]:
    from pyspark.sql.types import ArrayType, MapType

    if isinstance(data_type, StructType):
        return [data_type]
    if isinstance(data_type, ArrayType):
        return _structs(data_type.elementType)
    if isinstance(data_type, MapType):
        return _structs(data_type.keyType) + _structs(data_type.valueType)
    return []


def _check_partitions(columns: tuple[str, ...], schema: StructType) -> None:
    names = {f.name for f in schema.fields}
    missing = [c for c in columns if c not in names]
    if missing:
        raise OptionError(
            f"partitionBy names column(s) {', '.join(missing)} that the DataFrame does not "
            f"have (columns: {', '.join(sorted(names))})"
        )
    if columns and len(columns) >= len(names):
        raise OptionError("partitionBy cannot name every column: nothing would be indexed")
    check_partition_types(columns, arrow_schema(schema))


def _check_against_table(write: Any, table: TableView, schema: StructType) -> Any:
    from dataclasses import replace

    asked = write.partition_columns
    if asked and tuple(asked) != table.partition_columns:
        raise OptionError(
            f"partitionBy={','.join(asked)} differs from the table's partition columns "
            f"({','.join(table.partition_columns) or 'none'}) at {table.uri}"
        )
    existing = StructType.fromJson(json.loads(table.schema_json))
    have = {f.name.lower(): f.dataType.simpleString() for f in existing.fields}
    given = {f.name.lower(): f.dataType.simpleString() for f in schema.fields}
    if have != given:
        raise OptionError(
            f"the DataFrame's columns {sorted(given.items())} do not match the table's "
            f"{sorted(have.items())} at {table.uri}"
        )
    return replace(write, partition_columns=table.partition_columns)
