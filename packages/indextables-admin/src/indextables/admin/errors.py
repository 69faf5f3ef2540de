"""The exception hierarchy of ``indextables.admin``: everything derives from :class:`AdminError`."""

from __future__ import annotations


class AdminError(Exception):
    """Root of every error raised by indextables.admin."""
