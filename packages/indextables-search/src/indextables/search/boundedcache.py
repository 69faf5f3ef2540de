"""A small thread-safe cache that keeps its most recently used entries (LRU by count).

The engine keeps open splits, doc stores, Parquet footers, plans and parsed queries in
such caches. Each call takes the cache's lock only for the dictionary work: the value
is made outside it by the caller (two threads may then both make one; the later
``put`` wins, as a cache of equivalent values allows). Evicted values are simply
dropped: a cache whose entries need cleanup or a byte budget keeps its own.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["BoundedCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """At most ``max_entries`` values by key; reading or writing one makes it the newest.

    Not picklable (it holds a lock): an object that pickles makes a fresh one instead.
    """

    __slots__ = ("_entries", "_lock", "_max")

    def __init__(self, *, max_entries: int) -> None:
        if not isinstance(max_entries, int) or isinstance(max_entries, bool) or max_entries < 1:
            raise ValueError(f"max_entries must be a positive int, got {max_entries!r}")
        self._max = max_entries
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def max_entries(self) -> int:
        return self._max

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the newest), or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key`` as the newest entry, dropping the oldest beyond the cap."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)

    def pop(self, key: K) -> V | None:
        """Forget ``key``; returns its value, or None when none was kept."""
        with self._lock:
            return self._entries.pop(key, None)

    def evict_if(self, predicate: Callable[[K], bool]) -> int:
        """Forget every key for which ``predicate(key)`` is true; returns how many."""
        with self._lock:
            doomed = [key for key in self._entries if predicate(key)]
            for key in doomed:
                del self._entries[key]
            return len(doomed)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
