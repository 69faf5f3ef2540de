"""The exception hierarchy of ``indextables.admin``: everything derives from :class:`AdminError`."""

from __future__ import annotations


class AdminError(Exception):
    """Root of every error raised by indextables.admin."""


class UsageError(AdminError, ValueError):
    """An option or argument is malformed (a bad duration, ``key=value`` pair, ...)."""


class ValidationFailedError(AdminError):
    """``validate`` found at least one broken invariant.

    Attributes:
        findings: how many findings were reported.
    """

    def __init__(self, message: str, *, findings: int) -> None:
        super().__init__(message)
        self.findings = findings
