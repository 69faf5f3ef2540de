"""``write_table``: write Arrow data as an IndexTables table, without Spark.

The table is the one Spark's data source writes for the same rows: the same
splits (:class:`~indextables.search.write.splitwriter.SplitWriter`, as one Spark
write task), the same schema JSON, partition value strings, configuration and
commit, and the same checks before any row is indexed (:mod:`.writeplan`).

Modes are delta-rs's and Spark's ``SaveMode``s: ``"error"`` (Spark's
``errorifexists``) refuses a table that exists, ``"ignore"`` then writes nothing,
``"append"`` (the default, see docs/search.md "Writing tables") adds rows,
``"overwrite"`` replaces them. Appends take safe upcasts of the table's types,
and ``schema_mode="merge"`` adds new columns (:mod:`.schemamerge`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from indextables.search import oplog
from indextables.search.errors import ArgumentError, OptionError, TableExistsError
from indextables.search.options import lower_keys
from indextables.search.schema.schemajson import spark_json
from indextables.search.storeoptions import with_storage_options
from indextables.search.table.tableaccess import commit_write, load_head, table_exists
from indextables.search.write.arrowinput import (
    align_batch,
    as_reader,
    conform_batch,
    spark_arrow_schema,
)
from indextables.search.write.parallelwrite import (
    check_workers,
    default_workers,
    write_parallel,
)
from indextables.search.write.replacewhere import RowGuard, commit_replace, row_guard
from indextables.search.write.writeplan import plan_table_write, split_writer

__all__ = ["WriteResult", "write_table"]

_LOG = logging.getLogger(__name__)
_MODES = ("error", "ignore", "append", "overwrite")
_SCHEMA_MODES = (None, "merge")


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a :func:`write_table` committed.

    Attributes:
        version: the table version the write committed.
        files_added: how many splits it added.
        rows: how many rows it wrote.
    """

    version: int
    files_added: int
    rows: int


@oplog.logged(_LOG, "write")
def write_table(
    uri: str,
    data: Any,
    *,
    mode: str = "append",
    schema_mode: str | None = None,
    partition_by: Sequence[str] | str = (),
    options: Mapping[str, Any] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    workers: int | None = None,
    replace_where: str | None = None,
) -> WriteResult:
    """Write ``data`` to the table at ``uri`` in one commit (creating the table if needed).

    Args:
        uri: the table's location (``s3://``, ``abfss://``, ``file:``, a local path...).
        data: anything Arrow-streamable: a pyarrow ``Table``, ``RecordBatch`` or
            ``RecordBatchReader``, a pandas or Polars DataFrame, or any object with
            ``__arrow_c_stream__``. Types are taken as Spark's ``createDataFrame``
            takes Arrow data (see docs/search.md, "Writing tables").
        mode: ``"append"`` (the default) adds the rows; ``"overwrite"`` replaces the
            table's rows; ``"error"`` raises :class:`TableExistsError` when the table
            has a committed version; ``"ignore"`` then writes nothing (and returns the
            table's version, no files, no rows). The data is not read in those cases.
        schema_mode: None (the default): the data's columns must be the table's, each
            of its type or a safe upcast of it (wider integers, float to double, wider
            decimals); ``"merge"``: columns the table lacks are added to its schema
            (in the same commit; older versions keep the old schema, their splits
            read the new columns as null) and nullable table columns the data lacks
            are written as nulls.
        partition_by: partition columns (as ``partitionBy``); an existing table's
            partitioning is kept and may not be contradicted.
        options: write options, as for ``df.write.format("indextables")``
            (``spark.indextables.indexing.*``, ``indexWriter.*``, store options as
            ``storage.<name>``).
        storage_options: store options by their names (``region``,
            ``endpoint_url``...: docs/storage.md), as delta-rs and the admin API take
            them; the same as ``options`` with ``storage.<name>`` keys.
        workers: how many writers index the rows at once, each into its own
            splits (threads of this process, each with its own Tantivy writer:
            see :mod:`.parallelwrite`); None (the default) takes option
            ``spark.indextables.indexWriter.threads``, or without it the
            number of cores this process may use. All of them commit in one version, or,
            when any fails, nothing is committed.
        replace_where: with ``mode="overwrite"``, a SQL condition (as ``delete_rows``'s
            ``where``): only the rows it matches are replaced by ``data``, in one
            commit, and every row of ``data`` must match it (Delta's ``replaceWhere``;
            see :mod:`.replacewhere`).

    Raises:
        ArgumentError: an argument of the wrong type or value.
        TableExistsError: ``mode="error"`` and the table exists.
        OptionError: an unknown or bad option, partitioning that does not fit.
        SchemaMismatchError: (an ``OptionError``) columns that do not fit the table's.
        DuplicateColumnError: names equal but for case.
        UnsupportedTypeError: a column of a type Spark or the index cannot hold.
        ReplaceWhereMismatchError: a row of ``data`` outside ``replace_where``.
    """
    if replace_where is not None and mode != "overwrite":
        raise ArgumentError(f'replace_where needs mode="overwrite", not mode={mode!r}')
    opts = with_storage_options(_options(uri, mode, partition_by, options), storage_options)
    if schema_mode not in _SCHEMA_MODES:
        raise ArgumentError(f"schema_mode={schema_mode!r} must be None or 'merge'")
    if workers is not None:
        check_workers(workers)
    if mode in ("error", "ignore") and table_exists(uri, opts):
        version = load_head(uri, opts).version
        if mode == "error":
            raise TableExistsError(
                f"{uri!r} is already a table (version {version}); write with "
                'mode="append" or "overwrite", or "ignore" to leave it as it is'
            )
        return WriteResult(version=version, files_added=0, rows=0)
    reader = as_reader(data)
    given = spark_arrow_schema(reader.schema, unsigned=True)
    plan = plan_table_write(uri, opts, given, upcast=True, merge_schema=schema_mode == "merge")
    target = plan.schema
    if plan.on_write.enabled and not plan.on_write.deferred:
        raise OptionError(
            "mergeOnWrite/purgeOnWrite run only after Spark writes; write_table does not "
            "run them (run MERGE SPLITS / PURGE INDEXTABLE afterwards, or set "
            "spark.indextables.onWrite.deferred=true)"
        )
    guard = row_guard(replace_where, target) if replace_where is not None else None
    counted = _Counted(reader, given, target, guard)
    threads = workers or plan.write_options.threads or default_workers()
    adds = write_parallel(counted, functools.partial(split_writer, plan), workers=threads)
    if guard is not None and plan.read_version is not None:
        replaced = commit_replace(
            uri,
            opts,
            where=guard.where.text,
            adds=adds,
            read_version=plan.read_version,
            schema_json=spark_json(target) if plan.added_columns else None,
        )
        written = sum(a.size for a in adds)
        oplog.note(rows=counted.rows, splits_written=len(adds), bytes_written=written)
        oplog.note_version(replaced.version)
        return WriteResult(version=replaced.version, files_added=len(adds), rows=counted.rows)
    try:
        version = commit_write(
            uri,
            opts,
            schema_json=spark_json(target),
            partition_columns=plan.write_options.partition_columns,
            adds=adds,
            overwrite=mode == "overwrite",
            read_version=plan.read_version,
            configuration=plan.configuration,
            evolve_schema=bool(plan.added_columns),
            create_only=mode in ("error", "ignore"),
        )
    except TableExistsError:  # created by another writer meanwhile; its splits stay unused
        if mode == "error":
            raise
        return WriteResult(version=load_head(uri, opts).version, files_added=0, rows=0)
    oplog.note(rows=counted.rows, splits_written=len(adds), bytes_written=sum(a.size for a in adds))
    oplog.note_version(version)
    return WriteResult(version=version, files_added=len(adds), rows=counted.rows)


def _options(
    uri: Any, mode: Any, partition_by: Any, options: Mapping[str, Any] | None
) -> dict[str, str]:
    if not isinstance(uri, str) or not uri:
        raise ArgumentError(f"uri={uri!r} must be a non-empty string")
    if mode not in _MODES:
        raise ArgumentError(f"mode={mode!r} must be one of {', '.join(map(repr, _MODES))}")
    if options is not None and not isinstance(options, Mapping):
        raise ArgumentError(f"options={options!r} must be a mapping of option keys to values")
    opts = {str(k): str(v) for k, v in (options or {}).items()}
    columns = (partition_by,) if isinstance(partition_by, str) else partition_by
    if not isinstance(columns, Sequence) or not all(isinstance(c, str) for c in columns):
        raise ArgumentError(
            f"partition_by={partition_by!r} must be a column name or a list of them"
        )
    if columns:
        given = lower_keys(opts).get("partitionby")
        if given is not None and given.replace(" ", "") != ",".join(columns):
            raise ArgumentError(
                f"partition_by={list(columns)!r} contradicts option partitionBy={given!r}"
            )
        opts = {k: v for k, v in opts.items() if k.lower() != "partitionby"}
        opts["partitionBy"] = ",".join(columns)
    return opts


class _Counted:
    """The reader's batches in Spark's types, counting rows as they pass."""

    def __init__(
        self,
        reader: pa.RecordBatchReader,
        given: pa.Schema,
        target: pa.Schema,
        guard: RowGuard | None = None,
    ) -> None:
        self.reader = reader
        self.given = given
        self.target = target
        self.guard = guard
        self.rows = 0

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        for batch in self.reader:
            self.rows += batch.num_rows
            aligned = align_batch(conform_batch(batch, self.given), self.target)
            if self.guard is not None:
                self.guard.check(aligned)
            yield aligned
