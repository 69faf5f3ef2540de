"""A DataFrame over Arrow batches that are already in Spark's layout, built in one round trip.

``SparkSession.createDataFrame(pyarrow_table)`` accepts any Arrow table, so
before the data moves it reads eight session settings over Py4J (a list sent
element by element and a list read back element by element: ~26 Py4J round
trips, ~7 ms here) and re-casts every column. The batches the search collects
are already in the layout Spark's Python data sources hand over (timestamps
as UTC microseconds, ``convert.arrow_schema``), so none of that is needed: the
batches go to the JVM the way PySpark ships Arrow data (a temporary file, or
its authenticated socket when I/O encryption is on) and become a local
relation with PySpark's own ``PythonSQLUtils.toDataFrame``.

That JVM entry point is PySpark's, not a public API. A session without it
(Spark Connect), or whose PySpark moved it or changed its signature, falls
back to ``createDataFrame`` and stays there; the result never depends on
which path ran (``tests/test_arrowframe.py`` compares both on every type).

On the direct path the JVM frame is built lazily: the DataFrame returned is an
:class:`~indextables.pyspark.read.lazyframe.ArrowFrame`, which answers
``collect()``, ``take()``, ``count()`` and the like from the batches in the
driver and ships them only when another method needs the JVM.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from indextables.pyspark.read.sparktypes import arrow_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

_UTILS = "org.apache.spark.sql.api.python.PythonSQLUtils"
# SparkContext -> its PythonSQLUtils class handle, or None when the fast path is unavailable.
_handles: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def arrow_dataframe(
    spark: SparkSession, batches: Sequence[pa.RecordBatch], schema: StructType
) -> DataFrame:
    """A DataFrame over ``batches`` (each in ``arrow_schema(schema)``) with schema ``schema``.

    Where the direct path is available the frame is an
    :class:`~indextables.pyspark.read.lazyframe.ArrowFrame`: it answers ``collect()``
    and the like from ``batches`` and hands them to the JVM on first other use.
    """
    batches = _joined(batches)
    utils = _utils(spark)
    if utils is None:
        return _public(spark, batches, schema)
    from indextables.pyspark.read.lazyframe import ArrowFrame

    return ArrowFrame(
        spark, batches, schema, functools.partial(_jvm_frame, spark, utils, batches, schema)
    )


def _jvm_frame(
    spark: SparkSession, utils: Any, batches: Sequence[pa.RecordBatch], schema: StructType
) -> Any:
    """The JVM ``Dataset`` over ``batches``: the direct path, else ``createDataFrame``'s."""
    from py4j.protocol import Py4JError, Py4JJavaError  # type: ignore[import-untyped]

    try:
        return _direct(spark, utils, batches, schema)
    except Py4JJavaError:
        raise  # the JVM refused the data itself: createDataFrame would too
    except Py4JError:
        # The entry point is there but answers differently (another PySpark's
        # signature): use the public path from now on.
        _handles[spark._sc] = None
    return _public(spark, batches, schema)._jdf


def _public(
    spark: SparkSession, batches: Sequence[pa.RecordBatch], schema: StructType
) -> DataFrame:
    table = pa.Table.from_batches(batches, schema=arrow_schema(schema))
    return spark.createDataFrame(table, schema=schema)


# Small results are handed over as one batch: Spark builds and collects a local
# relation of one batch ~15-20% faster than of one batch per split.
_JOIN_MAX_BYTES = 64 << 20


def _joined(batches: Sequence[pa.RecordBatch]) -> Sequence[pa.RecordBatch]:
    if len(batches) < 2 or sum(b.nbytes for b in batches) > _JOIN_MAX_BYTES:
        return batches
    joined: list[pa.RecordBatch] = pa.Table.from_batches(batches).combine_chunks().to_batches()
    return joined


def _utils(spark: SparkSession) -> Any:
    """The session's PythonSQLUtils handle, looked up once per SparkContext (None: fall back)."""
    context = getattr(spark, "_sc", None)
    if context is None or getattr(spark, "_jvm", None) is None:
        return None
    try:
        return _handles[context]
    except KeyError:
        pass
    handle = _lookup(spark)
    _handles[context] = handle
    return handle


def _lookup(spark: SparkSession) -> Any:
    from py4j.java_gateway import JavaClass  # type: ignore[import-untyped]
    from py4j.protocol import Py4JError

    try:
        utils = functools.reduce(getattr, _UTILS.split("."), spark._jvm)
    except (Py4JError, AttributeError):
        return None
    # Py4J answers a class it cannot find with a package: only a class will do.
    return utils if isinstance(utils, JavaClass) else None


def _direct(
    spark: SparkSession, utils: Any, batches: Sequence[pa.RecordBatch], schema: StructType
) -> Any:
    from pyspark.sql.pandas.serializers import ArrowStreamSerializer

    jvm: Any = spark._jvm
    # PySpark's own transfer: a temporary file, or an authenticated socket under I/O encryption.
    jiter = spark._sc._serialize_to_jvm(
        batches,
        ArrowStreamSerializer(),
        utils.readArrowStreamFromFile,
        lambda: jvm.ArrowIteratorServer(),
    )
    return utils.toDataFrame(jiter, schema.json(), spark._jsparkSession)
