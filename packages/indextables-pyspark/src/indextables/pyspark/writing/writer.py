"""The batch writer: tasks build and upload splits, the driver side commits them in one version.

``write()`` runs in a task's worker process and returns its AddActions in a
:class:`SplitsMessage`; ``commit()`` (another process) receives every task's
message and commits all adds (and, for overwrite, the removes) in one
version. A failed job commits nothing: its uploaded splits are orphans that
``PURGE INDEXTABLE`` removes later.

With the ``mergeSchema`` option the write evolves the table's schema as
``write_table(..., schema_mode="merge")`` does (the same planning,
:func:`indextables.search.write.schemamerge.resolve_schema`): each task's batches
are put in the table's (merged) schema and the commit carries the new schema
with the adds, in one version.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from indextables.protocol.actions import AddAction
from indextables.search.errors import OptionError
from indextables.search.options import lower_keys, parse_bool
from indextables.search.schema.schemajson import spark_json
from indextables.search.table.tableaccess import commit_write
from indextables.search.write.arrowinput import align_batch
from indextables.search.write.parallelwrite import write_parallel
from indextables.search.write.replacewhere import RowGuard, commit_replace, row_guard
from indextables.search.write.writeplan import TableWritePlan, split_writer
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType


@dataclass(frozen=True, slots=True)
class SplitsMessage(WriterCommitMessage):
    """What one write task produced: the AddActions of its uploaded splits."""

    adds: tuple[AddAction, ...]


@dataclass(frozen=True, slots=True)
class WritePlan:
    """The engine's validated plan of a write plus what only Spark has.

    Attributes:
        table: the engine's plan (:class:`TableWritePlan`: URI, options, specs,
            writer options, configuration, read version, on-write settings),
            made by the same checks as ``write_table``'s.
        spark_schema: the DataFrame's Spark schema (its JSON is the table's
            schema string of a new table; the engine plan holds its Arrow form).
        merge_schema: the ``mergeSchema`` option: the plan's schema is the table's,
            with the columns the write adds (``table.added_columns``), and the rows
            are cast to it (safe upcasts, nulls for the columns the data lacks).
    """

    table: TableWritePlan
    spark_schema: StructType
    merge_schema: bool = False

    def schema_json(self) -> str:
        """The schema string the commit records (the merged one when columns are added)."""
        if self.table.added_columns:
            return spark_json(self.table.schema)
        return self.spark_schema.json()


class IndexTablesWriter(DataSourceArrowWriter):
    """Writes a DataFrame as splits and commits them."""

    def __init__(self, plan: WritePlan, *, overwrite: bool) -> None:
        self.plan = plan
        self.overwrite = overwrite
        self.replace_where = replace_condition(plan.table.options, overwrite=overwrite)
        if self.replace_where is not None:  # a bad condition fails here, before any task
            row_guard(self.replace_where, plan.table.schema)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SplitsMessage:
        """Index this task's rows into one split per partition value and writer; upload them.

        A failed task deletes the splits it uploaded (best effort) before raising.
        """
        plan = self.plan.table
        # ``indexWriter.threads`` writers per task (default 1: Spark runs a task per core).
        workers = plan.write_options.threads or 1
        make = functools.partial(split_writer, plan)
        if self.plan.merge_schema:
            iterator = (align_batch(batch, plan.schema) for batch in iterator)
        if self.replace_where is not None:
            iterator = _guarded(iterator, row_guard(self.replace_where, plan.schema))
        return SplitsMessage(tuple(write_parallel(iterator, make, workers=workers)))

    def commit(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        """Commit every task's adds in one version, then run the after-write maintenance."""
        adds = [a for m in messages if isinstance(m, SplitsMessage) for a in m.adds]
        plan = self.plan.table
        if self.replace_where is not None and plan.read_version is not None:
            version = commit_replace(
                plan.uri,
                plan.options,
                where=self.replace_where,
                adds=adds,
                read_version=plan.read_version,
                schema_json=self.plan.schema_json() if plan.added_columns else None,
            ).version
        else:
            version = self._commit(adds)
        if plan.on_write.enabled and not plan.on_write.deferred:
            from indextables.pyspark.writing.onwrite import after_write

            after_write(plan.uri, plan.options, plan.on_write, version=version)

    def _commit(self, adds: list[AddAction]) -> int:
        plan = self.plan.table
        return commit_write(
            plan.uri,
            plan.options,
            schema_json=self.plan.schema_json(),
            partition_columns=plan.write_options.partition_columns,
            adds=adds,
            overwrite=self.overwrite,
            read_version=plan.read_version,
            configuration=plan.configuration,
            evolve_schema=bool(plan.added_columns),
        )

    def abort(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        """Commit nothing; uploaded splits stay as orphans for PURGE to remove."""


REPLACE_WHERE_KEY = "replacewhere"
MERGE_SCHEMA_KEY = "mergeschema"
OVERWRITE_SCHEMA_KEY = "overwriteschema"


def merge_schema_option(options: Mapping[str, str]) -> bool:
    """The ``mergeSchema`` option (Delta's): ``true`` lets the write add columns to the
    table's schema and take safe upcasts of its types; default ``false``.

    Raises:
        OptionError: a value other than true/false, or the ``overwriteSchema`` option
            (not supported: an overwrite with ``mergeSchema`` adds columns, nothing
            replaces or narrows the table's schema).
    """
    opts = lower_keys(options)
    if OVERWRITE_SCHEMA_KEY in opts:
        raise OptionError(
            f"option overwriteSchema={opts[OVERWRITE_SCHEMA_KEY]!r} is not supported: a "
            "table's columns and types cannot be replaced (mode overwrite with option "
            "mergeSchema=true adds new columns and takes safe upcasts; for other changes "
            "write a new table)"
        )
    value = opts.get(MERGE_SCHEMA_KEY)
    return parse_bool("mergeSchema", value) if value is not None else False


def replace_condition(options: Mapping[str, str], *, overwrite: bool) -> str | None:
    """The ``replaceWhere`` option's condition (Delta's option: with overwrite, only the
    rows it matches are replaced; see ``indextables.search.write.replacewhere``).

    Raises:
        OptionError: ``replaceWhere`` without overwrite, or empty.
    """
    value = lower_keys(options).get(REPLACE_WHERE_KEY)
    if value is None:
        return None
    if not overwrite:
        raise OptionError(
            f"option replaceWhere={value!r} needs mode overwrite (it replaces the rows "
            "the condition matches)"
        )
    if not value.strip():
        raise OptionError("option replaceWhere must be a non-empty condition")
    return value


def _guarded(batches: Iterator[pa.RecordBatch], guard: RowGuard) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        guard.check(batch)
        yield batch
