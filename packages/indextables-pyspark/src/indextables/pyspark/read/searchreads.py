"""``itp.textsearch`` and ``itp.fieldmatch``: reads of a table with one search option set.

The search option is checked in the driver at the call (the column exists and is of the
right kind, the query parses), so a mistake raises this package's error there, naming
the column, instead of PySpark's wrapper of it at the first action.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from indextables.pyspark.errors import planning_errors

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def textsearch(
    spark: SparkSession, path: str, column: str, query: str, **options: Any
) -> DataFrame:
    """Rows of the table at ``path`` whose tokenized ``column`` matches ``query``.

    Example:
        >>> textsearch(spark, "/tmp/logs", "message", "timeout AND db")  # doctest: +SKIP
    """
    return _search_read(spark, path, f"textsearch.{column}", query, options)


def fieldmatch(
    spark: SparkSession, path: str, column: str, value: str, **options: Any
) -> DataFrame:
    """Rows of the table at ``path`` whose exact (string) ``column`` equals ``value``, or
    whose ip ``column`` holds the address or falls in the CIDR/``a.b.*.*`` form ``value``.

    Example:
        >>> fieldmatch(spark, "/tmp/logs", "level", "ERROR")  # doctest: +SKIP
    """
    return _search_read(spark, path, f"fieldmatch.{column}", value, options)


def _search_read(
    spark: SparkSession, path: str, key: str, value: str, options: dict[str, Any]
) -> DataFrame:
    read_options = {k: str(v) for k, v in options.items()}
    read_options[key] = value
    with planning_errors():
        frame = spark.read.format("indextables").options(**read_options).load(path)
    _check_search(path, read_options, frame)
    return frame


def _check_search(path: str, read_options: dict[str, str], frame: DataFrame) -> None:
    """Validate the read's search option against the table, as its reader will."""
    from indextables.pyspark.read.datasource import IndexTablesDataSource, make_reader

    planned = {**read_options, "path": path}
    make_reader(planned, IndexTablesDataSource(planned).planning_view(), frame.schema)
