"""indextables.pyspark: the IndexTables data source and maintenance commands for PySpark."""

from indextables.pyspark.errors import IndexTablesSparkError
from indextables.pyspark.version import __version__

__all__ = ["IndexTablesSparkError", "__version__"]
