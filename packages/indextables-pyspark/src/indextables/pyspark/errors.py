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
from typing import TYPE_CHECKING, Any

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
from indextables.storage import errors as _storage_errors
from indextables.storage.errors import StorageError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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
    "StorageError",
    "UnreadableSplitError",
    "UnsupportedTypeError",
    "VersionNotFoundError",
    "from_spark_error",
    "planning_errors",
    "short_errors",
]

#: Root of every error raised by indextables.pyspark (the engine's root, same class).
IndexTablesSparkError = IndexTablesSearchError


class SqlCommandError(IndexTablesSparkError, ValueError):
    """A maintenance SQL command that does not parse or cannot run."""


# A worker's traceback ends with the error's qualified class name and its message.
_CARRIED = re.compile(
    r"indextables\.(?P<package>pyspark|search|storage)\.errors\."
    r"(?P<name>[A-Za-z]+Error): (?P<message>[^\n]+)"
)

# Python worker errors as their last line only (class and message), no frames.
_HIDE_TRACEBACK = "spark.sql.execution.pyspark.udf.hideTraceback.enabled"
# Spark Connect: the server's JVM stack trace appended to every error's message.
_SERVER_STACKTRACE = "spark.sql.connect.serverStacktrace.enabled"


def _storage_classes() -> dict[str, type[StorageError]]:
    found: dict[str, type[StorageError]] = {"StorageError": StorageError}
    for name in dir(_storage_errors):
        kind = getattr(_storage_errors, name)
        if isinstance(kind, type) and issubclass(kind, StorageError):
            found[name] = kind
    return found


def short_errors(spark: SparkSession) -> None:
    """Errors of the session without Python or JVM frames (``itp.register`` calls this).

    A Python worker's error reaches the caller as Spark's one-line prefix and
    the error's own line (``spark.sql.execution.pyspark.udf.hideTraceback.enabled``),
    and over Spark Connect without the server's JVM stack trace
    (``spark.sql.connect.serverStacktrace.enabled``; a classic session leaves
    JVM frames out by default, ``spark.sql.pyspark.jvmStacktrace.enabled``).
    Both are session settings, so this also shortens the errors of other
    Python UDFs and data sources of the session. To see the frames, set the
    first to ``false`` (and the second to ``true``) after ``itp.register``.
    """
    spark.conf.set(_HIDE_TRACEBACK, "true")
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        spark.conf.set(_SERVER_STACKTRACE, "false")


def from_spark_error(error: BaseException) -> IndexTablesSparkError | StorageError | None:
    """The error of this package that a PySpark exception carries, or None.

    An error raised where Spark plans a read or write (in a Python worker)
    reaches the caller as a PySpark ``AnalysisException`` whose message holds
    the worker's error (its traceback, unless hidden), with this package's
    one-line message at its end. This rebuilds that error (same class, same
    message) from the text: an error of ``indextables.pyspark`` or
    ``indextables.search``, or a store's error of ``indextables.storage``
    (``StorageError`` and its subclasses: a missing bucket, a refused
    permission). The last such error in the text wins (the one raised).

    Example:
        >>> try:  # doctest: +SKIP
        ...     df.write.format("indextables").option("partitionBy", "nope").save(p)
        ... except Exception as error:
        ...     raise from_spark_error(error) or error
    """
    if isinstance(error, (IndexTablesSparkError, StorageError)):
        return error
    kinds: dict[str, dict[str, type[Any]]] = {"search": dict(error_classes())}
    kinds["pyspark"] = kinds["search"]
    kinds["storage"] = dict(_storage_classes())
    found = None
    for match in _CARRIED.finditer(str(error)):
        kind = kinds[match.group("package")].get(match.group("name"))
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
    except (IndexTablesSparkError, StorageError):
        raise
    except Exception as error:
        ours = from_spark_error(error)
        if ours is None:
            raise
        ours.spark_error = error  # type: ignore[union-attr]  # a store error gets one too
        raise ours from None
