"""indextables.storage: the protocol's ObjectStore for local, memory, S3 and Azure Blob.

Open one by URI with :func:`open_store`; the protocol finds the same
factories through the ``indextables.stores`` entry point group. S3 needs the
``s3`` extra (boto3), Azure the ``azure`` extra (azure-storage-blob); their
classes are imported lazily so the base package has no third-party dependency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from indextables.storage.errors import (
    AuthenticationError,
    ConfigurationError,
    ContainerNotFoundError,
    InvalidKeyError,
    KeyOutsideRootError,
    StorageError,
    StorageExistsError,
    StorageNotFoundError,
    StoragePermissionError,
    StoragePreconditionError,
    TransientStorageError,
    UnsupportedSchemeError,
)
from indextables.storage.local import LocalStore
from indextables.storage.memory import MemoryStore, clear_memory_stores
from indextables.storage.registry import ENTRY_POINT_GROUP, open_store, registered_schemes
from indextables.storage.version import __version__

if TYPE_CHECKING:
    from indextables.storage.azureblob import AzureBlobStore
    from indextables.storage.s3 import S3Store

__all__ = [
    "AuthenticationError",
    "AzureBlobStore",
    "ConfigurationError",
    "ContainerNotFoundError",
    "ENTRY_POINT_GROUP",
    "InvalidKeyError",
    "KeyOutsideRootError",
    "LocalStore",
    "MemoryStore",
    "S3Store",
    "StorageError",
    "StorageExistsError",
    "StorageNotFoundError",
    "StoragePermissionError",
    "StoragePreconditionError",
    "TransientStorageError",
    "UnsupportedSchemeError",
    "__version__",
    "clear_memory_stores",
    "open_store",
    "registered_schemes",
]


def __getattr__(name: str) -> object:
    # S3Store and AzureBlobStore import their SDKs: load them only when asked for.
    if name == "S3Store":
        from indextables.storage.s3 import S3Store

        return S3Store
    if name == "AzureBlobStore":
        from indextables.storage.azureblob import AzureBlobStore

        return AzureBlobStore
    raise AttributeError(f"module 'indextables.storage' has no attribute {name!r}")
