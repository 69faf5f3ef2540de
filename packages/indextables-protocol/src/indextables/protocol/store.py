"""The object-store interface the log is written against.

indextables-storage implements it for the local filesystem, memory, S3 and
Azure Blob; the protocol never imports those implementations. Keys are
``/``-separated and relative to the store's root (normally the table root).

Every guarantee of the commit protocol rests on :meth:`ObjectStore.put_if_absent`
being atomic: at most one of several racing callers succeeds, the others get
:class:`~indextables.protocol.errors.ObjectExistsError`, and no reader ever
sees a partially written object.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["ObjectInfo", "ObjectStore"]


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """What a listing or ``head`` says about one object."""

    key: str
    size: int
    last_modified_ms: int
    etag: str | None = None


@runtime_checkable
class ObjectStore(Protocol):
    """A flat key/value store with ranged reads and conditional creation.

    Errors: a missing key raises ``ObjectNotFoundError``; a lost
    put-if-absent raises ``ObjectExistsError``; anything else raises a
    subclass of ``ObjectStoreError``.
    """

    @property
    def uri(self) -> str:
        """The URI of the store's root, without credentials."""
        ...

    def get(self, key: str) -> bytes:
        """Return the whole object."""
        ...

    def get_range(self, key: str, start: int, end: int) -> bytes:
        """Return bytes ``[start, end)`` of the object (shorter at its end)."""
        ...

    def head(self, key: str) -> ObjectInfo:
        """Return the object's size and modification time."""
        ...

    def put(self, key: str, data: bytes) -> None:
        """Create or replace the object atomically (readers see old or new)."""
        ...

    def put_if_absent(self, key: str, data: bytes) -> None:
        """Create the object only if the key does not exist yet."""
        ...

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Yield every object whose key starts with ``prefix``, in key order."""
        ...

    def delete(self, key: str) -> None:
        """Delete the object; a missing key is not an error."""
        ...

    def delete_many(self, keys: Iterable[str]) -> None:
        """Delete several objects (batched where the store allows)."""
        ...
