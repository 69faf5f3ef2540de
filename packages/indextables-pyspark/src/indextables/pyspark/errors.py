"""Exception hierarchy: everything here derives from :class:`IndexTablesSparkError`."""

from __future__ import annotations


class IndexTablesSparkError(Exception):
    """Root of every error raised by indextables.pyspark."""
