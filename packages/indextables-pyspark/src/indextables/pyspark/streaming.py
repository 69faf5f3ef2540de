"""Structured Streaming: a source of newly added rows and an exactly-once appending sink.

Source offsets are table versions: ``{"version": v}`` means every file added
up to version ``v`` has been emitted. A micro-batch ``(start, end]`` reads the
files live at ``end`` that were not live at ``start`` and were added with
``dataChange`` (merges and compactions add no new rows); a commit that removes
rows stops the stream unless ``ignoreDeletes``/``skipChangeCommits`` skip it
(:mod:`.streamchanges`, Delta's rules). Option
``startingVersion``: unset (the default, Delta's convention: the table's rows
at the query's start first, then every later commit), ``latest`` (only rows
committed after the query starts), or a version ``n`` (rows added after ``n``;
``-1`` = everything, the same as unset).

The sink commits each micro-batch as one version and records the batch id in
the table configuration (``indextables.streaming.<writerId>.batchId``); a
replayed batch whose id is already recorded commits nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from indextables.protocol.errors import VersionNotFoundError
from indextables.pyspark.read.planguard import new_token
from indextables.pyspark.read.reader import ReadTask
from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.pyspark.streamchanges import emitted_paths, stream_policy
from indextables.pyspark.writing.writer import SplitsMessage, WritePlan
from indextables.search.options import lower_keys, parse_read
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.splitreader import read_split
from indextables.search.splits.splitcache import SplitCache
from indextables.search.table.livesplits import select_splits, split_paths
from indextables.search.table.tableaccess import load_view, open_table_store, table_handle
from pyspark.sql.datasource import (
    DataSourceStreamReader,
    DataSourceStreamWriter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType


class IndexTablesStreamReader(DataSourceStreamReader):
    """Emits the rows of splits added after the last processed version."""

    def __init__(self, path: str, options: Mapping[str, str], schema: StructType) -> None:
        self.path = path
        self.options = dict(options)
        self.schema = schema
        self.read_options = parse_read(options)
        self.policy = stream_policy(options)

    def initialOffset(self) -> dict[str, int]:
        """Where a new query starts (see ``startingVersion``)."""
        # Unset: offset -1, so the first micro-batch is the current snapshot (Delta's default).
        start = lower_keys(self.options).get("startingversion", "-1").strip().lower()
        if start == "latest":
            return {"version": load_view(self.path, self.options).version}
        return {"version": int(start)}

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: Any = None
    ) -> dict[str, int]:
        """The table's current version (every new version is admitted at once)."""
        return {"version": load_view(self.path, self.options).version}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        """Tasks over the splits added in versions ``(start, end]`` (the snapshot at
        ``end`` when ``start`` is -1)."""
        if start["version"] < 0:
            after = load_view(self.path, self.options, version=end["version"]).splits
            new = [s.entry for s in after]
        else:
            new = self._added(start["version"], end["version"])
        size = self.read_options.splits_per_task
        token = new_token()
        return [ReadTask(tuple(new[i : i + size]), token, 0.0) for i in range(0, len(new), size)]

    def _added(self, start: int, end: int) -> list[Any]:
        """The entries of the splits each version in ``(start, end]`` adds and the policy
        emits, from the snapshot of that version.

        Raises:
            StreamChangeError: a commit that removes rows, not skipped by the options.
        """
        reader = table_handle(self.path, self.options).reader
        new: list[Any] = []
        for version in range(start + 1, end + 1):
            try:
                actions = reader.actions(version)
            except VersionNotFoundError:  # purged: only the snapshots can tell
                return self._live_diff(start, end)
            paths = set(emitted_paths(self.path, actions, version, self.policy))
            if not paths:
                continue
            splits = load_view(self.path, self.options, version=version).splits
            wanted = [i for i, p in enumerate(split_paths(splits)) if p in paths]
            new.extend(s.entry for s in select_splits(splits, wanted))
        return new

    def _live_diff(self, start: int, end: int) -> list[Any]:
        """The splits live at ``end`` and not at ``start`` (for ranges whose version files
        are gone; commits that removed rows cannot be told apart there)."""
        earlier = load_view(self.path, self.options, version=start)
        before = set(split_paths(earlier.splits))
        after = load_view(self.path, self.options, version=end).splits
        added = [i for i, path in enumerate(split_paths(after)) if path not in before]
        return [s.entry for s in select_splits(after, added)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """The rows of one task's splits."""
        assert isinstance(partition, ReadTask)
        store = open_table_store(self.path, self.options)
        cache = SplitCache(self.read_options.cache_directory, self.read_options.cache_max_bytes)
        for entry in partition.splits:
            yield from cache.batches(
                self.path,
                entry.ref,
                lambda: store,
                functools.partial(
                    read_split,
                    entry=entry,
                    schema=arrow_schema(self.schema),
                    search=SearchSpec(),
                    conditions=(),
                ),
            )

    def commit(self, end: dict[str, int]) -> None:
        """Nothing to release: offsets are versions."""


class IndexTablesStreamWriter(DataSourceStreamWriter):
    """Appends each micro-batch as one version, at most once per batch id."""

    def __init__(self, plan: WritePlan) -> None:
        self.plan = plan
        self.writer_id = lower_keys(plan.table.options).get("writerid", "default")

    def write(self, iterator: Iterator[Any]) -> SplitsMessage:
        """Build and upload this task's splits (rows arrive as Arrow batches or Rows)."""
        from indextables.pyspark.writing.writer import IndexTablesWriter

        return IndexTablesWriter(self.plan, overwrite=False).write(_as_batches(iterator, self.plan))

    def commit(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:
        """Commit the adds and the batch id in one version, unless the id is recorded already."""
        import dataclasses

        from indextables.search.table.tableaccess import commit_write, table_exists

        key = f"indextables.streaming.{self.writer_id}.batchid"
        plan = self.plan.table
        if not table_exists(plan.uri, plan.options):
            # Create the table empty first: the batch id must land with the adds.
            commit_write(
                plan.uri,
                plan.options,
                schema_json=self.plan.spark_schema.json(),
                partition_columns=plan.write_options.partition_columns,
                adds=[],
                overwrite=False,
                configuration=plan.configuration,
            )
        table = table_handle(plan.uri, plan.options)
        metadata = table.snapshot().metadata
        done = metadata.configuration.get(key)
        if done is not None and int(done) >= batchId:
            return
        adds = [a for m in messages if isinstance(m, SplitsMessage) for a in m.adds]
        configuration = {**dict(metadata.configuration), key: str(batchId)}
        table.commit(adds=adds, metadata=dataclasses.replace(metadata, configuration=configuration))

    def abort(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:
        """Commit nothing."""


def _as_batches(iterator: Iterator[Any], plan: WritePlan) -> Iterator[pa.RecordBatch]:
    target = plan.table.schema
    rows: list[dict[str, Any]] = []
    for item in iterator:
        if isinstance(item, pa.RecordBatch):
            yield item
            continue
        rows.append(item.asDict(recursive=True))
        if len(rows) >= plan.table.write_options.batch_size:
            yield pa.RecordBatch.from_pylist(rows, schema=target)
            rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=target)
