"""Exceptions map onto the documented exit codes."""

import pytest

from indextables.admin.errors import UsageError, ValidationFailedError
from indextables.admin.exitcodes import ExitCode, exit_code_for
from indextables.protocol.errors import (
    CommitConflictError,
    CorruptFileError,
    InvalidPredicateError,
    ObjectExistsError,
    ObjectNotFoundError,
    PreconditionFailedError,
    TableNotFoundError,
    VersionNotFoundError,
)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (UsageError("bad"), ExitCode.USER_ERROR),
        (InvalidPredicateError("x ="), ExitCode.USER_ERROR),
        (CorruptFileError("f.json", "bad gzip"), ExitCode.USER_ERROR),
        (ValueError("anything else"), ExitCode.USER_ERROR),
        (TableNotFoundError("/t"), ExitCode.NOT_FOUND),
        (VersionNotFoundError("v9"), ExitCode.NOT_FOUND),
        (ObjectNotFoundError("k"), ExitCode.NOT_FOUND),
        (CommitConflictError("lost", version=3, attempts=10), ExitCode.CONFLICT),
        (ObjectExistsError("k"), ExitCode.CONFLICT),
        (PreconditionFailedError("k"), ExitCode.CONFLICT),
        (ValidationFailedError("2 findings", findings=2), ExitCode.VALIDATION_FAILED),
    ],
)
def test_exit_code_for(error: Exception, code: ExitCode) -> None:
    assert exit_code_for(error) is code


def test_exit_code_values_are_the_documented_ones() -> None:
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4]
