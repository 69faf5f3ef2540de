"""The exception hierarchy of ``indextables.pyspark``: all derive from IndexTablesSparkError.

The split engine (``indextables.search``) defines the errors; this package raises the
same classes, so ``IndexTablesSparkError`` is the engine's root under the name this
package's users know. What only Spark needs lives here: SQL command errors and the
rebuilding of an error that reached the caller wrapped in a PySpark exception.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from indextables.search.errors import (
    ArgumentError,
    CacheDirectoryError,
    CorruptSplitError,
    DuplicateColumnError,
    FieldKindError,
    IndexTablesSearchError,
    InexactDateBoundError,
    NotATableError,
    OptionError,
    QuerySyntaxError,
    RetentionTooShortError,
    SplitReadError,
    UnreadableSplitError,
    UnsupportedTypeError,
    VersionNotFoundError,
    error_classes,
)

__all__ = [
    "ArgumentError",
    "CacheDirectoryError",
    "CorruptSplitError",
    "DuplicateColumnError",
    "FieldKindError",
    "InexactDateBoundError",
    "IndexTablesSparkError",
    "NotATableError",
    "OptionError",
    "QuerySyntaxError",
    "RetentionTooShortError",
    "SplitReadError",
    "SqlCommandError",
    "UnreadableSplitError",
    "UnsupportedTypeError",
    "VersionNotFoundError",
    "from_spark_error",
    "planning_errors",
]

#: Root of every error raised by indextables.pyspark (the engine's root, same class).
IndexTablesSparkError = IndexTablesSearchError


class SqlCommandError(IndexTablesSparkError, ValueError):
    """A maintenance SQL command that does not parse or cannot run."""


# A worker's traceback ends with the error's qualified class name and its message.
_CARRIED = re.compile(
    r"indextables\.(?:pyspark|search)\.errors\.(?P<name>[A-Za-z]+Error): (?P<message>[^\n]+)"
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
    kinds = error_classes()
    found = None
    for match in _CARRIED.finditer(str(error)):
        kind = kinds.get(match.group("name"))
        if kind is None:
            continue
        try:
            found = kind(match.group("message"))
        except TypeError:  # a class built from more than a message (CorruptSplitError)
            continue
    return found


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
