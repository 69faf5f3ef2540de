"""An in-memory store, shared per name within a process, for tests of other packages.

``memory://name`` opens the same objects from anywhere in the process; the
store is thread-safe and its put-if-absent is atomic (one lock per name).
Nothing crosses processes.
"""

from __future__ import annotations

import functools
import hashlib
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from indextables.protocol.store import ObjectInfo
from indextables.storage.errors import StorageExistsError, StorageNotFoundError
from indextables.storage.keys import check_key, check_prefix, join_root, normalize_root
from indextables.storage.ranges import check_range

__all__ = ["MemoryStore", "clear_memory_stores"]


@dataclass(frozen=True, slots=True)
class _Object:
    data: bytes
    last_modified_ms: int
    etag: str


@dataclass(slots=True)
class _Space:
    lock: threading.Lock = field(default_factory=threading.Lock)
    objects: dict[str, _Object] = field(default_factory=dict)


_SPACES: dict[str, _Space] = {}
_SPACES_LOCK = threading.Lock()


def _space(name: str) -> _Space:
    with _SPACES_LOCK:
        return _SPACES.setdefault(name, _Space())


def clear_memory_stores(name: str | None = None) -> None:
    """Forget the objects of one named memory space, or of all of them.

    Args:
        name: the space (the host part of ``memory://name``); ``None`` clears all.
    """
    with _SPACES_LOCK:
        if name is None:
            _SPACES.clear()
        else:
            _SPACES.pop(name, None)


def _make_object(data: bytes) -> _Object:
    etag = hashlib.md5(data, usedforsecurity=False).hexdigest()
    return _Object(bytes(data), time.time_ns() // 1_000_000, etag)


class MemoryStore:
    """An :class:`~indextables.protocol.store.ObjectStore` held in this process's memory.

    Args:
        name: the shared space; every store of the same name sees the same objects.
        root: a key prefix inside the space (``memory://name/root``).

    Example:
        >>> store = MemoryStore("doc-example")
        >>> store.put_if_absent("a/b.json", b"{}")
        >>> store.get("a/b.json")
        b'{}'
    """

    def __init__(self, name: str, *, root: str = "") -> None:
        self._name = name
        self._root = normalize_root(root)
        _space(name)

    def __repr__(self) -> str:
        return f"MemoryStore(uri={self.uri!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickles by name: in the same process the copy sees the same objects.
        return (functools.partial(MemoryStore, root=self._root), (self._name,))

    @property
    def _space(self) -> _Space:
        # Looked up on each call, so clear_memory_stores() is seen by live stores too.
        return _space(self._name)

    @property
    def uri(self) -> str:
        """``memory://name[/root]``."""
        return f"memory://{self._name}/{self._root}".rstrip("/")

    def _full(self, key: str) -> str:
        return join_root(self._root, check_key(key, store=self.uri))

    def _lookup(self, key: str) -> _Object:
        found = self._space.objects.get(self._full(key))
        if found is None:
            raise StorageNotFoundError(f"{self.uri}: no object at key {key!r}")
        return found

    def get(self, key: str) -> bytes:
        """Return the whole object."""
        return self._lookup(key).data

    def get_range(self, key: str, start: int, end: int) -> bytes:
        """Return bytes ``[start, end)`` of the object (shorter at its end)."""
        check_range(key, start, end, store=self.uri)
        return self._lookup(key).data[start:end]

    def head(self, key: str) -> ObjectInfo:
        """Return the object's size, modification time and etag."""
        found = self._lookup(key)
        return ObjectInfo(key, len(found.data), found.last_modified_ms, found.etag)

    def put(self, key: str, data: bytes) -> None:
        """Create or replace the object."""
        full = self._full(key)
        with self._space.lock:
            self._space.objects[full] = _make_object(data)

    def put_if_absent(self, key: str, data: bytes) -> None:
        """Create the object only if the key does not exist yet.

        Raises:
            StorageExistsError: the key exists (another writer won).
        """
        full = self._full(key)
        with self._space.lock:
            if full in self._space.objects:
                raise StorageExistsError(f"{self.uri}: key {key!r} already exists")
            self._space.objects[full] = _make_object(data)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Yield every object whose key starts with ``prefix``, in key order."""
        full_prefix = join_root(self._root, check_prefix(prefix, store=self.uri))
        skip = len(self._root) + 1 if self._root else 0
        with self._space.lock:
            snapshot = sorted(
                (name, obj)
                for name, obj in self._space.objects.items()
                if name.startswith(full_prefix)
            )
        for name, obj in snapshot:
            yield ObjectInfo(name[skip:], len(obj.data), obj.last_modified_ms, obj.etag)

    def delete(self, key: str) -> None:
        """Delete the object; a missing key is not an error."""
        full = self._full(key)
        with self._space.lock:
            self._space.objects.pop(full, None)

    def delete_many(self, keys: Iterable[str]) -> None:
        """Delete several objects under one lock."""
        fulls = [self._full(key) for key in keys]
        with self._space.lock:
            for full in fulls:
                self._space.objects.pop(full, None)
