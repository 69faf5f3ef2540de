"""``itp.write``: a DataFrame write whose after-write maintenance runs as Spark jobs.

``df.write.format("indextables")`` commits in a Python worker without a
SparkSession, so merge-on-write there runs in that one process. This function
writes the same way, tells the commit to leave the maintenance alone, and runs
it from the caller's process instead: each merge group is a Spark task, as in
``MERGE SPLITS``. As in the reference, that happens in the background unless
``spark.indextables.mergeOnWrite.async.enabled`` is false; the returned
:class:`WriteResult` holds a future to wait on. Background maintenance runs
one write at a time, in order.

With ``spark.indextables.write.optimizeWrite.enabled=true`` the rows are first
spread over the executors' cores (:mod:`.optimizewrite`), so every core indexes.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from indextables.pyspark.errors import ArgumentError, OptionError, planning_errors
from indextables.pyspark.read.datasource import FORMAT
from indextables.pyspark.writing.mergetasks import run_as_tasks
from indextables.pyspark.writing.onwrite import OnWriteResult, after_write
from indextables.pyspark.writing.optimizewrite import distribute
from indextables.search import oplog
from indextables.search.errors import TableExistsError
from indextables.search.options import ON_WRITE_DEFERRED, parse_on_write, parse_optimize_write
from indextables.search.table.tableaccess import (
    load_head,
    load_view,
    table_exists,
    table_handle,
)
from indextables.search.table.tablehistory import table_history

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_LOG = logging.getLogger(__name__)
MODES = ("error", "ignore", "append", "overwrite")
JOB_GROUP = "indextables-merge-on-write"

_lock = threading.Lock()
_background: ThreadPoolExecutor | None = None


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What :func:`write` did.

    Attributes:
        path: the table URI.
        version: the table version current right after the write's commit.
        maintenance: the merge-on-write / purge-on-write run, or None when
            neither is enabled; ``maintenance.result()`` waits for it.
    """

    path: str
    version: int
    maintenance: Future[OnWriteResult] | None = None


@oplog.logged(_LOG, "write", uri="path", fields=lambda result: {"version": result.version})
def write(
    df: DataFrame,
    path: str,
    *,
    mode: str = "append",
    partition_by: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
    replace_where: str | None = None,
    merge_schema: bool = False,
) -> WriteResult:
    """Write ``df`` to the table at ``path``, then run the enabled after-write maintenance.

    Args:
        df: the rows to write.
        path: the table URI (created on first write).
        mode: ``append`` (the default) or ``overwrite``, or as ``write_table``
            takes them: ``error`` (Spark's ``errorifexists``) raises
            ``TableExistsError`` when ``path`` holds a table, ``ignore`` then writes
            nothing (the table's version is returned); on a new table both write.
            Spark's Python data sources take only append and overwrite, so these two
            are decided here before Spark writes.
        partition_by: partition columns (the ``partitionBy`` option).
        options: any other write options (indexing, mergeOnWrite, purgeOnWrite, store).
        replace_where: with ``mode="overwrite"``, replace only the rows this SQL
            condition matches (the ``replaceWhere`` option: every row of ``df`` must
            match it).
        merge_schema: the ``mergeSchema`` option: columns the table lacks are added
            to its schema (nullable) in the write's commit, and safe upcasts of the
            table's types are taken (as ``write_table(schema_mode="merge")``).

    Returns:
        The committed version and, when maintenance is enabled, its future.

    Raises:
        OptionError: an unknown mode or a bad maintenance or optimized-write option,
            before anything is written.
    """
    if mode not in MODES:
        raise OptionError(f"mode={mode!r} must be one of {', '.join(MODES)}")
    if not isinstance(merge_schema, bool):
        raise ArgumentError(f"merge_schema={merge_schema!r} must be True or False")
    opts = {str(k): str(v) for k, v in (options or {}).items()}
    if mode in ("error", "ignore"):
        if table_exists(path, opts):
            version = load_head(path, opts).version
            if mode == "error":
                raise TableExistsError(
                    f"{path!r} is already a table (version {version}); write with "
                    'mode="append" or "overwrite", or "ignore" to leave it as it is'
                )
            return WriteResult(path, version)
        mode = "append"
    if partition_by:
        opts["partitionBy"] = ",".join(partition_by)
    if replace_where is not None:
        opts["replaceWhere"] = str(replace_where)
    if merge_schema:
        opts["mergeSchema"] = "true"
    settings = parse_on_write(opts)
    optimize = parse_optimize_write(opts)
    save_options = {**opts, ON_WRITE_DEFERRED: "true"} if settings.enabled else opts
    with planning_errors():
        df = distribute(df, settings=optimize, partition_columns=partition_by or ())
        df.write.format(FORMAT).mode(mode).options(**save_options).save(path)
    version = load_view(path, opts).version
    _note_commit(path, opts, version)
    if not settings.enabled:
        return WriteResult(path, version)
    job = functools.partial(
        after_write,
        path,
        opts,
        settings,
        version=version,
        run_groups=functools.partial(run_as_tasks, df.sparkSession, job_group=JOB_GROUP),
    )
    if settings.merge_async:
        return WriteResult(path, version, _executor().submit(job))
    done: Future[OnWriteResult] = Future()
    done.set_result(job())
    return WriteResult(path, version, done)


def _note_commit(path: str, options: Mapping[str, str], version: int) -> None:
    """The rows and splits the write's version added, on the operation's log line (read
    from the log: the Spark tasks that wrote them report nothing to this process)."""
    try:
        newest = table_history(table_handle(path, options), limit=1)
    except Exception as error:  # the figures are for the log line only
        _LOG.debug("no commit figures for %s v%d: %s", path, version, error)
        return
    for record in newest:
        if record.version == version:
            oplog.note(splits_written=record.files_added or 0, rows=record.rows_added or 0)


def _executor() -> ThreadPoolExecutor:
    global _background
    with _lock:
        if _background is None:
            _background = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="indextables-onwrite"
            )
        return _background
