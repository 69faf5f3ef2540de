"""Dry runs that list exactly what an operation would delete.

The engine's own dry runs report counts; to show the keys, the real
operation runs against a :class:`RecordingStore`: a store that reads through
to the table's store but keeps every write and delete to itself. The deletes
it records are the ones the operation would make, decided by the engine's own
logic (with the real objects' sizes and modification times), and nothing in
the table changes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator

from indextables.protocol.errors import ObjectExistsError, ObjectNotFoundError
from indextables.protocol.store import ObjectInfo, ObjectStore

__all__ = ["RecordingStore"]


class RecordingStore:
    """An :class:`ObjectStore` overlay: reads fall through, changes stay in memory.

    Args:
        base: the real store; only ``get``, ``get_range``, ``head`` and
            ``list`` are ever called on it.
    """

    def __init__(self, base: ObjectStore) -> None:
        """Overlay ``base``; nothing is written to it."""
        self._base = base
        self._lock = threading.Lock()
        self._written: dict[str, tuple[bytes, int]] = {}
        self._deleted: dict[str, None] = {}

    @property
    def uri(self) -> str:
        """The base store's URI."""
        return self._base.uri

    @property
    def deleted_keys(self) -> tuple[str, ...]:
        """Keys of the base store the operation deleted, sorted."""
        with self._lock:
            return tuple(sorted(self._deleted))

    def get(self, key: str) -> bytes:
        """The overlay's object, or the base's unless deleted."""
        written = self._visible(key)
        return written[0] if written is not None else self._base.get(key)

    def get_range(self, key: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of the object."""
        written = self._visible(key)
        if written is not None:
            return written[0][start:end]
        return self._base.get_range(key, start, end)

    def head(self, key: str) -> ObjectInfo:
        """Size and modification time of the object."""
        written = self._visible(key)
        if written is not None:
            return ObjectInfo(key, len(written[0]), written[1])
        return self._base.head(key)

    def put(self, key: str, data: bytes) -> None:
        """Keep the object in the overlay."""
        with self._lock:
            self._written[key] = (bytes(data), int(time.time() * 1000))

    def put_if_absent(self, key: str, data: bytes) -> None:
        """Keep the object unless the key exists (in the overlay or the base)."""
        if self._exists(key):
            raise ObjectExistsError(f"{self.uri}: {key} exists")
        self.put(key, data)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """The base's objects minus deletions, plus the overlay's, in key order."""
        with self._lock:
            written = {k: v for k, v in self._written.items() if k.startswith(prefix)}
            deleted = set(self._deleted)
        merged = {
            info.key: info
            for info in self._base.list(prefix)
            if info.key not in deleted and info.key not in written
        }
        merged.update({k: ObjectInfo(k, len(d), t) for k, (d, t) in written.items()})
        for key in sorted(merged):
            yield merged[key]

    def delete(self, key: str) -> None:
        """Record the deletion (an overlay-only object just disappears)."""
        with self._lock:
            if self._written.pop(key, None) is None:
                self._deleted[key] = None

    def delete_many(self, keys: Iterable[str]) -> None:
        """Record each deletion."""
        for key in keys:
            self.delete(key)

    def _visible(self, key: str) -> tuple[bytes, int] | None:
        with self._lock:
            if key in self._written:
                return self._written[key]
            if key in self._deleted:
                raise ObjectNotFoundError(f"{self.uri}: {key} not found")
        return None

    def _exists(self, key: str) -> bool:
        try:
            self.head(key)
        except ObjectNotFoundError:
            return False
        return True
