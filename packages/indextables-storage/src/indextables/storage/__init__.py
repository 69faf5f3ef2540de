"""indextables.storage: object stores (local, memory, S3, Azure) implementing the protocol's ObjectStore."""

from indextables.storage.errors import StorageError
from indextables.storage.version import __version__

__all__ = ["StorageError", "__version__"]
