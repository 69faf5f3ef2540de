"""The exception hierarchy of ``indextables.pyspark``: all derive from IndexTablesSparkError."""

from __future__ import annotations


class IndexTablesSparkError(Exception):
    """Root of every error raised by indextables.pyspark."""


class OptionError(IndexTablesSparkError, ValueError):
    """An option of the data source is missing, unknown or has a bad value."""


class UnsupportedTypeError(IndexTablesSparkError, TypeError):
    """A Spark column type that no IndexTables field type can hold."""


class QuerySyntaxError(IndexTablesSparkError, ValueError):
    """A search query string (``query``, ``textsearch``, ``fieldmatch``) does not parse."""


class FieldKindError(IndexTablesSparkError, ValueError):
    """A search helper was used on a field of the wrong kind (e.g. textsearch on a string field)."""


class NotATableError(IndexTablesSparkError, FileNotFoundError):
    """The path given to a read holds no IndexTables transaction log."""


class SqlCommandError(IndexTablesSparkError, ValueError):
    """A maintenance SQL command that does not parse or cannot run."""


class UnreadableSplitError(IndexTablesSparkError):
    """A split this package cannot read (e.g. documents stored with zstd); the message names it."""
