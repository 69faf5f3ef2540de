"""A classic DataFrame over Arrow batches the driver holds, handed to the JVM only when needed.

``itp.search`` and ``itp.aggregate`` run their search in the driver and hold the
answer as Arrow batches. Most callers only ``collect()`` it; building Spark's
local relation for that (ship the batches, analyse and plan the relation, run
``collectToPython``, unpickle every row) costs more than a needle's search.
:class:`ArrowFrame` answers ``collect()``, ``take()`` / ``head()`` / ``first()``,
``count()``, ``isEmpty()`` and ``toLocalIterator()`` from the batches (rows
built by :mod:`.arrowrows` with PySpark's own conversions) and builds the JVM
frame the first time anything else needs it (``where``, ``show``, ``join``,
``toPandas``, ``cache``, ...): every DataFrame method works, and a frame derived
from it is an ordinary DataFrame over the same local relation.

A schema :mod:`.arrowrows` does not convert (:func:`.arrowrows.convertible`)
collects through the JVM as before. These answers run no Spark job and record
no SQL execution (nothing in the Spark UI or a query listener), as reading
the rows of a local relation in the driver would not start one either.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from indextables.pyspark.read.arrowrows import convertible, has_binary, rows
from pyspark.sql import Row, SparkSession
from pyspark.sql.classic.dataframe import DataFrame
from pyspark.sql.types import StructType

__all__ = ["ArrowFrame"]

# Classic collect() returns binary values as bytes unless the session sets this to false.
_BINARY_AS_BYTES = "spark.sql.execution.pyspark.binaryAsBytes"


class ArrowFrame(DataFrame):
    """A DataFrame over ``batches`` (Spark's Arrow layout of ``schema``); ``build()``
    returns the JVM ``Dataset`` over the same rows and is called at most once."""

    def __init__(
        self,
        spark: SparkSession,
        batches: Sequence[pa.RecordBatch],
        schema: StructType,
        build: Callable[[], Any],
    ) -> None:
        self._arrow = tuple(batches)
        self._local = convertible(schema)
        self._binary = has_binary(schema)
        self._build = build
        self._built: Any = None
        self._building = threading.Lock()
        super().__init__(None, spark)
        self._arrow_schema = schema

    @property
    def schema(self) -> StructType:
        """The frame's schema, known without asking the JVM."""
        return self._arrow_schema

    @property
    def _jdf(self) -> Any:
        """The JVM frame, built on first use."""
        if self._built is None:
            with self._building:
                if self._built is None:
                    self._built = self._build()
        return self._built

    @_jdf.setter
    def _jdf(self, value: Any) -> None:
        # DataFrame.__init__ assigns the frame it was given (None here: not built yet).
        self._built = value

    def collect(self) -> list[Row]:
        binary = self._binary_type()
        if not self._local or binary is None:
            return super().collect()
        return rows(self._arrow, self._arrow_schema, binary=binary)

    def take(self, num: int) -> list[Row]:
        binary = self._binary_type()
        if not self._local or binary is None or num < 0:
            return super().take(num)  # a negative limit: Spark's own error
        return rows(self._arrow, self._arrow_schema, limit=num, binary=binary)

    def toLocalIterator(self, prefetchPartitions: bool = False) -> Iterator[Row]:
        if not self._local:
            return super().toLocalIterator(prefetchPartitions)
        return iter(self.collect())

    def _binary_type(self) -> type[bytes] | type[bytearray] | None:
        """What binary values collect as in this session now (read only if there are
        any); None for a setting Spark would refuse: the JVM's collect() says so."""
        if not self._binary:
            return bytes
        setting = str(self.sparkSession.conf.get(_BINARY_AS_BYTES, "true")).strip().lower()
        if setting == "true":
            return bytes
        return bytearray if setting == "false" else None

    def count(self) -> int:
        return sum(batch.num_rows for batch in self._arrow)

    def isEmpty(self) -> bool:
        return self.count() == 0
