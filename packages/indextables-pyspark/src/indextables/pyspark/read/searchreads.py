"""``itp.textsearch`` and ``itp.fieldmatch``: reads of a table with one search option set."""

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
    with planning_errors():
        return (
            spark.read.format("indextables")
            .options(**{k: str(v) for k, v in options.items()})
            .option(f"textsearch.{column}", query)
            .load(path)
        )


def fieldmatch(
    spark: SparkSession, path: str, column: str, value: str, **options: Any
) -> DataFrame:
    """Rows of the table at ``path`` whose exact (string) ``column`` equals ``value``.

    Example:
        >>> fieldmatch(spark, "/tmp/logs", "level", "ERROR")  # doctest: +SKIP
    """
    with planning_errors():
        return (
            spark.read.format("indextables")
            .options(**{k: str(v) for k, v in options.items()})
            .option(f"fieldmatch.{column}", value)
            .load(path)
        )
