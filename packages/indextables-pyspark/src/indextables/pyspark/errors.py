"""The exception hierarchy of ``indextables.pyspark``: all derive from IndexTablesSparkError."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from indextables.protocol import errors as _protocol_errors
from indextables.protocol.errors import CorruptFileError


class IndexTablesSparkError(Exception):
    """Root of every error raised by indextables.pyspark.

    Attributes:
        spark_error: the PySpark exception this error was rebuilt from (see
            :func:`from_spark_error`), else None.
    """

    spark_error: BaseException | None = None


class OptionError(IndexTablesSparkError, ValueError):
    """An option of the data source is missing, unknown or has a bad value."""


class UnsupportedTypeError(IndexTablesSparkError, TypeError):
    """A Spark column type that no IndexTables field type can hold."""


class QuerySyntaxError(IndexTablesSparkError, ValueError):
    """A search query string (``query``, ``textsearch``, ``fieldmatch``) does not parse."""


class InexactDateBoundError(QuerySyntaxError):
    """A ``query``/``textsearch`` date bound the index cannot decide exactly on some split
    (a date field that is not fast at microsecond precision compares whole seconds)."""


class FieldKindError(IndexTablesSparkError, ValueError):
    """A search helper was used on a field of the wrong kind (e.g. textsearch on a string field)."""


class NotATableError(IndexTablesSparkError, FileNotFoundError):
    """The path given to a read holds no IndexTables transaction log."""


class SqlCommandError(IndexTablesSparkError, ValueError):
    """A maintenance SQL command that does not parse or cannot run."""


class UnreadableSplitError(IndexTablesSparkError):
    """A split this package cannot read (e.g. documents stored with zstd); the message names it."""


_CARRIED = re.compile(
    r"indextables\.pyspark\.errors\.(?P<name>[A-Za-z]+Error): (?P<message>[^\n]+)"
)


def from_spark_error(error: BaseException) -> IndexTablesSparkError | None:
    """The error of this package that a PySpark exception carries, or None.

    An error raised where Spark plans a read or write (in a Python worker)
    reaches the caller as a PySpark ``AnalysisException`` whose message holds
    the worker's traceback, with this package's one-line message at its end.
    This rebuilds that error (same class, same message) from the text.

    Example:
        >>> try:  # doctest: +SKIP
        ...     df.write.format("indextables").option("partitionBy", "nope").save(p)
        ... except Exception as error:
        ...     raise from_spark_error(error) or error
    """
    if isinstance(error, IndexTablesSparkError):
        return error
    found = None
    for match in _CARRIED.finditer(str(error)):
        kind = _BY_NAME.get(match.group("name"))
        if kind is not None:
            found = kind(match.group("message"))
    return found


_BY_NAME: dict[str, type[IndexTablesSparkError]] = {
    kind.__name__: kind
    for kind in (
        OptionError,
        UnsupportedTypeError,
        QuerySyntaxError,
        InexactDateBoundError,
        FieldKindError,
        NotATableError,
        SqlCommandError,
        UnreadableSplitError,
    )
}


@contextlib.contextmanager
def planning_errors() -> Iterator[None]:
    """Raise this package's error, not PySpark's wrapper of it, from the block.

    The PySpark exception stays reachable as ``spark_error`` of the raised error.
    """
    try:
        yield
    except IndexTablesSparkError:
        raise
    except Exception as error:
        ours = from_spark_error(error)
        if ours is None:
            raise
        ours.spark_error = error
        raise ours from None


class SplitReadError(IndexTablesSparkError, ValueError):
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


class CacheDirectoryError(IndexTablesSparkError, OSError):
    """The local split cache directory (``spark.indextables.cache.directoryPath``) cannot be
    used: not a directory, read-only, full, or writable by other users. The message names the
    setting and the path."""


_BY_NAME.update({kind.__name__: kind for kind in (SplitReadError, CacheDirectoryError)})


class VersionNotFoundError(IndexTablesSparkError, _protocol_errors.VersionNotFoundError):
    """A ``versionAsOf``/``timestampAsOf`` (or ``version=``/``timestamp=``) the table
    cannot reach: never written, or its log purged. Also the protocol's
    ``VersionNotFoundError`` (and a ``LookupError``)."""


class RetentionTooShortError(IndexTablesSparkError, _protocol_errors.RetentionTooShortError):
    """A PURGE retention below the 24 h safety minimum (the message names the key that
    lifts it). Also the protocol's ``RetentionTooShortError`` (and a ``ValueError``)."""


_BY_NAME.update({kind.__name__: kind for kind in (VersionNotFoundError, RetentionTooShortError)})


class DuplicateColumnError(IndexTablesSparkError, ValueError):
    """Columns (or fields of one struct) whose names differ only in case: Spark's
    ``COLUMN_ALREADY_EXISTS``; the index keys its fields case-insensitively."""


class ArgumentError(IndexTablesSparkError, TypeError, ValueError):
    """A public function's argument has the wrong type or an out-of-range value;
    the message names the argument."""


_BY_NAME.update({kind.__name__: kind for kind in (DuplicateColumnError, ArgumentError)})
