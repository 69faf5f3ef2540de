"""indextables.pyspark: the IndexTables data source and maintenance commands for PySpark.

Example:
    >>> import indextables.pyspark as itp  # doctest: +SKIP
    >>> itp.register(spark)  # doctest: +SKIP
    >>> df.write.format("indextables").option("partitionBy", "day").save("/tmp/logs")  # doctest: +SKIP
    >>> spark.read.format("indextables").option("query", "message:timeout").load("/tmp/logs")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from indextables.pyspark.errors import (
    FieldKindError,
    IndexTablesSparkError,
    NotATableError,
    OptionError,
    QuerySyntaxError,
    SqlCommandError,
    UnsupportedTypeError,
)
from indextables.pyspark.version import __version__

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

FORMAT = "indextables"


def register(spark: SparkSession) -> None:
    """Register the ``indextables`` format with ``spark`` (needed only without auto-registration)."""
    from indextables.pyspark.datasource import IndexTablesDataSource

    spark.dataSource.register(IndexTablesDataSource)


def sql(spark: SparkSession, text: str) -> DataFrame:
    """Run an IndexTables maintenance command, or any other statement through ``spark.sql``."""
    from indextables.pyspark.commands import run_sql

    return run_sql(spark, text)


def textsearch(spark: SparkSession, path: str, column: str, query: str, **options: Any) -> DataFrame:
    """Rows whose tokenized ``column`` matches the Tantivy ``query`` (see :mod:`.search`)."""
    from indextables.pyspark.search import textsearch as _textsearch

    return _textsearch(spark, path, column, query, **options)


def fieldmatch(spark: SparkSession, path: str, column: str, value: str, **options: Any) -> DataFrame:
    """Rows whose exact (string) ``column`` equals ``value`` (see :mod:`.search`)."""
    from indextables.pyspark.search import fieldmatch as _fieldmatch

    return _fieldmatch(spark, path, column, value, **options)


__all__ = [
    "FORMAT",
    "FieldKindError",
    "IndexTablesSparkError",
    "NotATableError",
    "OptionError",
    "QuerySyntaxError",
    "SqlCommandError",
    "UnsupportedTypeError",
    "__version__",
    "fieldmatch",
    "register",
    "sql",
    "textsearch",
]
