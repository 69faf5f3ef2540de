"""The command line's exit codes and how exceptions map onto them."""

from __future__ import annotations

from enum import IntEnum

from indextables.admin.errors import UsageError, ValidationFailedError
from indextables.protocol.errors import (
    CommitConflictError,
    ObjectExistsError,
    ObjectNotFoundError,
    PreconditionFailedError,
    TableExistsError,
    TableNotFoundError,
    VersionNotFoundError,
)

__all__ = ["ExitCode", "exit_code_for"]


class ExitCode(IntEnum):
    """What the ``indextables`` process returns.

    ``CONFLICT`` covers a lost commit race and a destination that is already
    taken (``repair --to`` an existing table). Anything that is neither "not
    found", "conflict" nor "validation failed"
    (bad options, an unreadable file, a store failure) is ``USER_ERROR``.
    """

    OK = 0
    USER_ERROR = 1
    NOT_FOUND = 2
    CONFLICT = 3
    VALIDATION_FAILED = 4


# Order matters: the first matching class wins, so leaves come before roots.
_MAPPING: tuple[tuple[type[BaseException], ExitCode], ...] = (
    (ValidationFailedError, ExitCode.VALIDATION_FAILED),
    (CommitConflictError, ExitCode.CONFLICT),
    (ObjectExistsError, ExitCode.CONFLICT),
    (PreconditionFailedError, ExitCode.CONFLICT),
    (TableExistsError, ExitCode.CONFLICT),
    (TableNotFoundError, ExitCode.NOT_FOUND),
    (VersionNotFoundError, ExitCode.NOT_FOUND),
    (ObjectNotFoundError, ExitCode.NOT_FOUND),
    # A state or a manifest it lists that is gone (the state formats' kinds).
    (FileNotFoundError, ExitCode.NOT_FOUND),
    (UsageError, ExitCode.USER_ERROR),
)


def exit_code_for(error: BaseException) -> ExitCode:
    """Return the exit code for an exception that ended a command.

    Example:
        >>> exit_code_for(TableNotFoundError("s3://b/t: no _transaction_log"))
        <ExitCode.NOT_FOUND: 2>
    """
    for kind, code in _MAPPING:
        if isinstance(error, kind):
            return code
    return ExitCode.USER_ERROR
