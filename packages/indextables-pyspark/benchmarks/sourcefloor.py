"""The fixed cost of any Python data source read: a floor for ``spark.read`` figures.

``spark.read.format("indextables")...collect()`` pays Spark's own round trips to
Python workers (the data source's schema, its reader and partitions, one
Python task) before and after our search. :func:`source_floor` measures that
cost with a data source that does no work at all: one partition whose task
reads the given Arrow rows from a local IPC file and yields them. Parquet's
time over this floor is the best ratio *any* Python data source can reach for
that answer in this session, whatever its search costs.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

NAME = "indextables_bench_floor"


class FloorSource(DataSource):
    """A data source whose one task yields the Arrow rows of a local IPC file."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        return StructType.fromJson(json.loads(self.options["schema"]))

    def reader(self, schema: StructType) -> DataSourceReader:
        return FloorReader(self.options["path"])


class FloorReader(DataSourceReader):
    """Reads the whole IPC file in its one partition."""

    def __init__(self, path: str) -> None:
        self.path = path

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        with pa.OSFile(self.path, "rb") as source:
            table = pa.ipc.open_file(source).read_all()
        yield from table.to_batches()


def register(spark: Any) -> None:
    """Register :class:`FloorSource` (its module travels by value to the workers)."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark.dataSource.register(FloorSource)


def source_floor(
    spark: Any,
    result: Any,
    label: str,
    base: tuple[float, float, Any],
    measure: Callable[..., tuple[float, float, Any]],
    repeat: int,
) -> tuple[float, float, Any]:
    """Time ``spark.read`` of ``result``'s rows through the no-work data source.

    Prints the figure and Parquet's time over it, and returns the measurement.
    """
    register(spark)
    work = tempfile.mkdtemp(prefix="indextables-floor-")
    try:
        table = result.toArrow()
        path = os.path.join(work, "rows.arrow")
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        schema = json.dumps(result.schema.jsonValue())

        def read() -> int:
            frame = spark.read.format(NAME).option("path", path).option("schema", schema).load()
            return len(frame.collect())

        cost = measure(read, repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"{'  floor, ' + label:<28} a no-work Python data source's spark.read + collect of the "
        f"same {cost[2]} rows: {cost[0] * 1000:.1f} ms; parquet/floor = "
        f"{base[0] / cost[0]:.1f}x (the best any Python data source reaches)"
    )
    return cost
