"""Exception hierarchy: everything here derives from :class:`StorageError`."""

from __future__ import annotations

from indextables.protocol.errors import ObjectStoreError


class StorageError(ObjectStoreError):
    """Root of every error raised by indextables.storage."""
