"""The exception hierarchy of ``indextables.search``: all derive from IndexTablesSearchError.

``indextables.pyspark`` raises the same classes (its root, ``IndexTablesSparkError``, is
this root under the name its users know), so one ``except`` serves both packages.
"""

from __future__ import annotations

from indextables.protocol import errors as _protocol_errors
from indextables.protocol.errors import CorruptFileError


class IndexTablesSearchError(Exception):
    """Root of every error raised by indextables.search (and indextables.pyspark).

    Attributes:
        spark_error: when raised through Spark, the PySpark exception this error was
            rebuilt from (``indextables.pyspark.errors.from_spark_error``), else None.
    """

    spark_error: BaseException | None = None


class OptionError(IndexTablesSearchError, ValueError):
    """An option of the data source is missing, unknown or has a bad value."""


class UnsupportedTypeError(IndexTablesSearchError, TypeError):
    """A Spark column type that no IndexTables field type can hold."""


class QuerySyntaxError(IndexTablesSearchError, ValueError):
    """A search query string (``query``, ``textsearch``, ``fieldmatch``) does not parse."""


class InexactDateBoundError(QuerySyntaxError):
    """A ``query``/``textsearch`` date bound the index cannot decide exactly on some split
    (a date field that is not fast at microsecond precision compares whole seconds)."""


class FieldLayoutError(QuerySyntaxError):
    """A query needs what a field's index was built without: positions for a phrase
    (``indexrecordoption``), or an inverted index for a term (a fast-only column)."""


class FieldKindError(IndexTablesSearchError, ValueError):
    """A search helper was used on a field of the wrong kind (e.g. textsearch on a string field)."""


class NotATableError(IndexTablesSearchError, FileNotFoundError):
    """The path given to a read holds no IndexTables transaction log."""


class UnreadableSplitError(IndexTablesSearchError):
    """A split this package cannot read (e.g. documents stored with zstd); the message names it."""


class SplitReadError(IndexTablesSearchError, ValueError):
    """A split that cannot be read: damaged bytes, a Tantivy error or panic while opening or
    searching it. The message names the split and the local split cache entry read.

    Attributes:
        split: the split's path relative to the table root, when known.
        entry: the split cache entry (a local directory) that was read, when known.
    """

    split: str | None = None
    entry: str | None = None


class CorruptSplitError(SplitReadError, CorruptFileError):
    """A split whose bundle (footer, file table, length or term dictionaries) is damaged."""

    def __init__(self, path: str, problem: str) -> None:
        CorruptFileError.__init__(self, path, problem)
        self.split = path


class CacheDirectoryError(IndexTablesSearchError, OSError):
    """The local split cache directory (``spark.indextables.cache.directoryPath``) cannot be
    used: not a directory, read-only, full, or writable by other users. The message names the
    setting and the path."""


class VersionNotFoundError(IndexTablesSearchError, _protocol_errors.VersionNotFoundError):
    """A ``versionAsOf``/``timestampAsOf`` (or ``version=``/``timestamp=``) the table
    cannot reach: never written, or its log purged. Also the protocol's
    ``VersionNotFoundError`` (and a ``LookupError``)."""


class RetentionTooShortError(IndexTablesSearchError, _protocol_errors.RetentionTooShortError):
    """A PURGE retention below the 24 h safety minimum (the message names the key that
    lifts it). Also the protocol's ``RetentionTooShortError`` (and a ``ValueError``)."""


class TableExistsError(IndexTablesSearchError, _protocol_errors.TableExistsError):
    """A write with ``mode="error"`` to a table that already has a committed version;
    the message names the table. Also the protocol's ``TableExistsError`` (and a
    ``FileExistsError``)."""


class SchemaMismatchError(OptionError):
    """Data whose columns do not fit the table's schema: a new column without
    ``schema_mode="merge"``, a missing column the table does not allow to be null, or a
    type that is no safe upcast of the column's; the message names the column (and both
    types). Also an ``OptionError``, as such writes were refused before."""


class DuplicateColumnError(IndexTablesSearchError, ValueError):
    """Columns (or fields of one struct) whose names differ only in case: Spark's
    ``COLUMN_ALREADY_EXISTS``; the index keys its fields case-insensitively."""


class ArgumentError(IndexTablesSearchError, TypeError, ValueError):
    """A public function's argument has the wrong type or an out-of-range value;
    the message names the argument."""


class ReplaceWhereMismatchError(IndexTablesSearchError, ValueError):
    """A ``replace_where`` write whose data holds a row the condition does not match
    (Delta's ``DELTA_REPLACE_WHERE_MISMATCH``); the message names the condition and a
    sample row, and nothing is committed."""


class ArithmeticOverflowError(IndexTablesSearchError, ArithmeticError):
    """An integral sum outside the range of a long, refused as Spark's ANSI mode refuses
    it (``ARITHMETIC_OVERFLOW``); the message names the metric."""


class CompanionError(IndexTablesSearchError, ValueError):
    """A companion index (a search index over a Delta, Iceberg or Parquet table) that
    cannot be built, synced or read: a bad source, option or manifest; the message
    names it."""


class CompanionSourceError(CompanionError):
    """The source table of a companion index cannot be listed or read (missing path,
    an unsupported source format or feature, a Parquet file whose schema does not fit)."""


class StaleCompanionError(CompanionError):
    """A source Parquet file no longer matches the companion split that indexes it (its
    size changed or it is gone): sync the companion (BUILD INDEXTABLES COMPANION again).

    Attributes:
        file: the file's path relative to the source table root.
    """

    def __init__(self, file: str, problem: str) -> None:
        super().__init__(
            f"companion source file {file!r} is stale: {problem}; re-run BUILD INDEXTABLES "
            "COMPANION (or indextables.search.build_companion) to sync the index"
        )
        self.file = file


def error_classes() -> dict[str, type[IndexTablesSearchError]]:
    """Every concrete error class of this package by name (rebuilding errors carried as text)."""
    found: dict[str, type[IndexTablesSearchError]] = {}
    pending: list[type[IndexTablesSearchError]] = [IndexTablesSearchError]
    while pending:
        kind = pending.pop()
        for sub in kind.__subclasses__():
            if sub.__module__.startswith("indextables."):
                found.setdefault(sub.__name__, sub)
                pending.append(sub)
    return found
