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
from indextables.pyspark.read.reader import IndexTablesReader
from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.pyspark.tablepath import planning_table_path
from indextables.pyspark.writing.writer import (
    IndexTablesWriter,
    WritePlan,
    merge_schema_option,
)
from indextables.search.options import (
    check_option_keys,
    lower_keys,
    parse_read,
)
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.refkeys import warn_ignored
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
        # Resolved here, in the driver's planning worker: the tasks get the absolute path.
        return planning_table_path(path)

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

        if merge_schema_option(self.options):
            raise OptionError(
                "option mergeSchema applies to batch writes (df.write); a streaming write "
                "keeps the table's schema: add the columns with one batch write first"
            )
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
    search = SearchSpec(
        read.query, dict(read.text_search), dict(read.field_match), read.max_term_expansions
    )
    return IndexTablesReader(view, schema, options=options, read_options=read, search=search)


def plan_write(path: str, options: Mapping[str, str], schema: StructType) -> WritePlan:
    """Validate a write against the DataFrame's schema and the existing table, if any.

    The checks are the engine's (:func:`indextables.search.write.writeplan.plan_table_write`,
    shared with ``write_table``), made on the Arrow form of Spark's schema. Without
    the ``mergeSchema`` option the DataFrame's columns must be the table's, of the
    same types; with it the schema is merged as ``write_table(schema_mode="merge")``
    merges it.

    Raises:
        OptionError: bad option values, or partitioning that contradicts the table.
        SchemaMismatchError: (an ``OptionError``) with ``mergeSchema``, a type that
            is no safe upcast of the table column's, naming the column and both types.
        DuplicateColumnError: column (or struct field) names equal but for case.
        UnsupportedTypeError: a column type that cannot be indexed.
    """
    from indextables.search.write.writeplan import plan_table_write

    merge = merge_schema_option(options)  # overwriteSchema: refused by name, not as unknown
    check_option_keys(options)  # an unknown key fails before any type problem
    plan = plan_table_write(path, options, arrow_schema(schema), upcast=merge, merge_schema=merge)
    return WritePlan(plan, schema, merge_schema=merge)
