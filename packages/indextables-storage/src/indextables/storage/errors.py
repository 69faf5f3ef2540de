"""The exception hierarchy of ``indextables.storage``, rooted at :class:`StorageError`.

Each leaf also derives from the matching error of ``indextables.protocol`` (so the
protocol handles store failures without importing this package) and, through it,
from the matching builtin (``FileNotFoundError``, ``FileExistsError``, ...).
Messages name the store URI and the key; they never contain a credential.
"""

from __future__ import annotations

from indextables.protocol.errors import (
    ObjectExistsError,
    ObjectNotFoundError,
    ObjectStoreError,
    PreconditionFailedError,
)


class StorageError(ObjectStoreError):
    """Root of every error raised by indextables.storage."""


class StorageNotFoundError(StorageError, ObjectNotFoundError):
    """The object (key) does not exist in the store."""


class ContainerNotFoundError(StorageNotFoundError):
    """The bucket (S3) or container (Azure) the store points at does not exist."""


class StorageExistsError(StorageError, ObjectExistsError):
    """A put-if-absent found the key already present: another writer won."""


class StoragePreconditionError(StorageError, PreconditionFailedError):
    """A conditional request's precondition (other than absence) did not hold."""


class StoragePermissionError(StorageError, PermissionError):
    """The store's file system or service denied access to an object or directory."""


class AuthenticationError(StorageError, PermissionError):
    """The store refused the credentials (wrong key, bad signature, access denied)."""


class ConfigurationError(StorageError, ValueError):
    """A URI or an option passed to ``open_store`` is invalid or unsupported."""


class UnsupportedSchemeError(ConfigurationError):
    """No store is registered for the URI's scheme."""


class InvalidKeyError(StorageError, ValueError):
    """A key is empty, absolute, or has an empty, ``.`` or ``..`` segment."""


class KeyOutsideRootError(InvalidKeyError):
    """A key resolves (through a symbolic link) to a file outside the store's root directory."""


class TransientStorageError(StorageError):
    """A transient failure (throttling, 5xx, connection reset) outlasted every retry."""
