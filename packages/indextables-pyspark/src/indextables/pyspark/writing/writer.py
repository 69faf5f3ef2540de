"""The batch writer: tasks build and upload splits, the driver side commits them in one version.

``write()`` runs in a task's worker process and returns its AddActions in a
:class:`SplitsMessage`; ``commit()`` (another process) receives every task's
message and commits all adds (and, for overwrite, the removes) in one
version. A failed job commits nothing: its uploaded splits are orphans that
``PURGE INDEXTABLE`` removes later.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from indextables.protocol.actions import AddAction
from indextables.search.options import OnWriteOptions, WriteOptions
from indextables.search.schema.mapping import FieldSpec
from indextables.search.table.tableaccess import commit_write, open_table_store
from indextables.search.write.splitwriter import SplitWriter
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType


@dataclass(frozen=True, slots=True)
class SplitsMessage(WriterCommitMessage):
    """What one write task produced: the AddActions of its uploaded splits."""

    adds: tuple[AddAction, ...]


@dataclass(frozen=True, slots=True)
class WritePlan:
    """Everything a write needs, validated on the driver side before tasks run.

    Attributes:
        uri: the table URI.
        options: the data source options (for the store).
        schema: the DataFrame's schema.
        specs: the field specs of the non-partition columns.
        write_options: heap/batch sizes and partition columns.
        configuration: table configuration recorded when the table is created.
        read_version: the table version the write was planned against (None for
            a new table); an overwrite removes exactly that version's files.
        on_write: merge-on-write / purge-on-write settings.
    """

    uri: str
    options: Mapping[str, str]
    schema: StructType
    specs: tuple[FieldSpec, ...]
    write_options: WriteOptions
    configuration: Mapping[str, str]
    read_version: int | None = None
    on_write: OnWriteOptions = field(default_factory=OnWriteOptions)


class IndexTablesWriter(DataSourceArrowWriter):
    """Writes a DataFrame as splits and commits them."""

    def __init__(self, plan: WritePlan, *, overwrite: bool) -> None:
        self.plan = plan
        self.overwrite = overwrite

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SplitsMessage:
        """Index this task's rows into one split per partition value; upload them."""
        plan = self.plan
        writer = SplitWriter(
            store=open_table_store(plan.uri, plan.options),
            specs=plan.specs,
            partition_columns=plan.write_options.partition_columns,
            heap_size=plan.write_options.heap_size,
            batch_size=plan.write_options.batch_size,
            max_split_bytes=plan.write_options.max_split_bytes,
            arrow_copy=plan.write_options.arrow_copy,
            docstore_block_size=plan.write_options.docstore_block_size,
        )
        try:
            writer.write(iterator)
            return SplitsMessage(tuple(writer.finish()))
        finally:
            writer.abort()

    def commit(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        """Commit every task's adds in one version, then run the after-write maintenance."""
        adds = [a for m in messages if isinstance(m, SplitsMessage) for a in m.adds]
        version = commit_write(
            self.plan.uri,
            self.plan.options,
            schema_json=self.plan.schema.json(),
            partition_columns=self.plan.write_options.partition_columns,
            adds=adds,
            overwrite=self.overwrite,
            read_version=self.plan.read_version,
            configuration=self.plan.configuration,
        )
        if self.plan.on_write.enabled and not self.plan.on_write.deferred:
            from indextables.pyspark.writing.onwrite import after_write

            after_write(self.plan.uri, self.plan.options, self.plan.on_write, version=version)

    def abort(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        """Commit nothing; uploaded splits stay as orphans for PURGE to remove."""
