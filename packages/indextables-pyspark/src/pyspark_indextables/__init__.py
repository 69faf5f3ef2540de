"""Auto-registration shim: Spark registers ``pyspark_<x>.DefaultSource`` as format ``<x>``.

With this module importable on the driver and executors,
``spark.read.format("indextables")`` works without calling
:func:`indextables.pyspark.register`.
"""

from indextables.pyspark.read.datasource import IndexTablesDataSource as DefaultSource

__all__ = ["DefaultSource"]
