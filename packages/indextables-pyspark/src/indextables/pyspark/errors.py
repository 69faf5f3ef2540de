"""The exception hierarchy of ``indextables.pyspark``: everything derives from :class:`IndexTablesSparkError`."""

from __future__ import annotations


class IndexTablesSparkError(Exception):
    """Root of every error raised by indextables.pyspark."""
