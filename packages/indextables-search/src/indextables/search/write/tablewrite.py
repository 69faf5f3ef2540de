"""``write_table``: write Arrow data as an IndexTables table, without Spark.

The table is the one Spark's data source writes for the same rows: the same
splits (:class:`~indextables.search.write.splitwriter.SplitWriter`, as one Spark
write task), the same schema JSON, partition value strings, configuration and
commit, and the same checks before any row is indexed (:mod:`.writeplan`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from indextables.search import oplog
from indextables.search.errors import ArgumentError, OptionError
from indextables.search.options import lower_keys
from indextables.search.schema.schemajson import spark_json
from indextables.search.table.tableaccess import commit_write
from indextables.search.write.arrowinput import as_reader, conform_batch, spark_arrow_schema
from indextables.search.write.parallelwrite import (
    check_workers,
    default_workers,
    write_parallel,
)
from indextables.search.write.writeplan import plan_table_write, split_writer

__all__ = ["WriteResult", "write_table"]

_LOG = logging.getLogger(__name__)
_MODES = ("append", "overwrite")


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
    partition_by: Sequence[str] | str = (),
    options: Mapping[str, Any] | None = None,
    workers: int | None = None,
) -> WriteResult:
    """Write ``data`` to the table at ``uri`` in one commit (creating the table if needed).

    Args:
        uri: the table's location (``s3://``, ``abfss://``, ``file:``, a local path...).
        data: anything Arrow-streamable: a pyarrow ``Table``, ``RecordBatch`` or
            ``RecordBatchReader``, a pandas or Polars DataFrame, or any object with
            ``__arrow_c_stream__``. Types are taken as Spark's ``createDataFrame``
            takes Arrow data (see docs/search.md, "Writing tables").
        mode: ``"append"`` adds the rows; ``"overwrite"`` replaces the table's rows.
        partition_by: partition columns (as ``partitionBy``); an existing table's
            partitioning is kept and may not be contradicted.
        options: write options, as for ``df.write.format("indextables")``
            (``spark.indextables.indexing.*``, ``indexWriter.*``, store options).
        workers: how many writers index the rows at once, each into its own
            splits (threads of this process, each with its own Tantivy writer:
            see :mod:`.parallelwrite`); None (the default) takes option
            ``spark.indextables.indexWriter.threads``, or without it the
            number of cores this process may use. All of them commit in one version, or,
            when any fails, nothing is committed.

    Raises:
        ArgumentError: an argument of the wrong type or value.
        OptionError: an unknown or bad option, partitioning or schema that does not fit.
        DuplicateColumnError: names equal but for case.
        UnsupportedTypeError: a column of a type Spark or the index cannot hold.
    """
    opts = _options(uri, mode, partition_by, options)
    if workers is not None:
        check_workers(workers)
    reader = as_reader(data)
    target = spark_arrow_schema(reader.schema)
    plan = plan_table_write(uri, opts, target)
    if plan.on_write.enabled and not plan.on_write.deferred:
        raise OptionError(
            "mergeOnWrite/purgeOnWrite run only after Spark writes; write_table does not "
            "run them (run MERGE SPLITS / PURGE INDEXTABLE afterwards, or set "
            "spark.indextables.onWrite.deferred=true)"
        )
    counted = _Counted(reader, target)
    threads = workers or plan.write_options.threads or default_workers()
    adds = write_parallel(counted, functools.partial(split_writer, plan), workers=threads)
    version = commit_write(
        uri,
        opts,
        schema_json=spark_json(target),
        partition_columns=plan.write_options.partition_columns,
        adds=adds,
        overwrite=mode == "overwrite",
        read_version=plan.read_version,
        configuration=plan.configuration,
    )
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

    def __init__(self, reader: pa.RecordBatchReader, target: pa.Schema) -> None:
        self.reader = reader
        self.target = target
        self.rows = 0

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        for batch in self.reader:
            self.rows += batch.num_rows
            yield conform_batch(batch, self.target)
