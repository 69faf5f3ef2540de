"""The exception hierarchy of ``indextables.protocol``.

Every error this package raises derives from :class:`ProtocolError`. Leaves
also inherit the matching builtin where one fits, so callers can catch either.
Messages name the offending value and, where there is one, the file.
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Root of every error raised by indextables.protocol."""


class CorruptFileError(ProtocolError, ValueError):
    """A log, checkpoint, state or split file could not be decoded.

    Attributes:
        path: the file that failed to decode (as given to the decoder).
    """

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class MissingFieldError(CorruptFileError):
    """A required field is absent from a record."""


class UnknownActionError(CorruptFileError):
    """A version file holds an action type this implementation does not know."""


class UnsafePathError(ProtocolError, ValueError):
    """A file path in the log escapes the table root (``..``, absolute, other scheme)."""


class RetentionTooShortError(ProtocolError, ValueError):
    """A purge retention below the safety minimum (splits of commits in flight could go)."""


class UnsupportedProtocolError(ProtocolError):
    """The table needs a newer reader/writer, or names a feature we do not know."""


class InvalidPredicateError(ProtocolError, ValueError):
    """A partition predicate could not be parsed or does not fit the table."""


class ObjectStoreError(ProtocolError, OSError):
    """Root of the errors an :class:`~indextables.protocol.store.ObjectStore` raises.

    Store implementations (indextables-storage) derive their own root from this
    one, so protocol code can handle store failures without importing them.
    """


class ObjectNotFoundError(ObjectStoreError, FileNotFoundError):
    """The object (key) does not exist."""


class ObjectExistsError(ObjectStoreError, FileExistsError):
    """A put-if-absent found the key already present: another writer won."""


class PreconditionFailedError(ObjectStoreError):
    """A conditional write's precondition (other than absence) did not hold."""


class CommitConflictError(ProtocolError):
    """A commit lost the race for its version on every attempt.

    Attributes:
        version: the last version this writer tried to create.
        attempts: how many attempts were made.
    """

    def __init__(self, message: str, *, version: int | None = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.version = version
        self.attempts = attempts


class TableNotFoundError(ProtocolError, FileNotFoundError):
    """The location holds no IndexTables transaction log."""


class VersionNotFoundError(ProtocolError, LookupError):
    """A requested version or timestamp is not (or no longer) reachable."""


class TableExistsError(ProtocolError, FileExistsError):
    """``create_table`` found a transaction log already at the location."""


class PluginNotFoundError(ProtocolError, LookupError):
    """No installed package provides a needed store or state format.

    The message names the package to install.
    """
