"""Progress from the engine's store traffic.

The engine's operations take no progress callback, but their work is store
calls: ``validate`` and ``repair`` look up every split, ``purge`` and ``gc``
delete objects, compaction writes manifests. :class:`ObservedStore` forwards
every call to the real store and tells a watcher about each one, which is
enough to draw honest progress bars.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from indextables.protocol.store import ObjectInfo, ObjectStore

__all__ = ["CallCounter", "ObservedStore", "StoreWatcher"]

StoreWatcher = Callable[[str, str], None]
"""``watcher(method, key)``: called after each successful ``head``, ``put``,
``put_if_absent`` and ``delete`` (once per key of ``delete_many``)."""


class ObservedStore:
    """Forwards every call to ``base`` and reports the writes and lookups."""

    def __init__(self, base: ObjectStore, watcher: StoreWatcher) -> None:
        """Observe ``base`` on behalf of ``watcher``."""
        self._base = base
        self._watch = watcher

    @property
    def uri(self) -> str:
        """The base store's URI."""
        return self._base.uri

    def get(self, key: str) -> bytes:
        """Forwarded."""
        return self._base.get(key)

    def get_range(self, key: str, start: int, end: int) -> bytes:
        """Forwarded."""
        return self._base.get_range(key, start, end)

    def head(self, key: str) -> ObjectInfo:
        """Forwarded, then reported (a missing object is reported too: it was checked)."""
        try:
            return self._base.head(key)
        finally:
            self._watch("head", key)

    def put(self, key: str, data: bytes) -> None:
        """Forwarded, then reported."""
        self._base.put(key, data)
        self._watch("put", key)

    def put_if_absent(self, key: str, data: bytes) -> None:
        """Forwarded, then reported."""
        self._base.put_if_absent(key, data)
        self._watch("put", key)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Forwarded."""
        return self._base.list(prefix)

    def delete(self, key: str) -> None:
        """Forwarded, then reported."""
        self._base.delete(key)
        self._watch("delete", key)

    def delete_many(self, keys: Iterable[str]) -> None:
        """Forwarded as one batch, then each key reported."""
        batch = list(keys)
        self._base.delete_many(batch)
        for key in batch:
            self._watch("delete", key)


class CallCounter:
    """A :data:`StoreWatcher` that counts one kind of call and reports the count.

    Args:
        progress: ``progress(phase, done, total)``.
        phase: the name shown for the count.
        method: the store method counted (``head``, ``put`` or ``delete``).
        keys: which keys count (all by default).
        total: the expected count, when known (may be set later).
    """

    def __init__(
        self,
        progress: Callable[[str, int, int | None], None],
        phase: str,
        method: str,
        *,
        keys: Callable[[str], bool] = lambda key: True,
        total: int | None = None,
    ) -> None:
        """Count ``method`` calls on matching keys."""
        self._progress = progress
        self._phase = phase
        self._method = method
        self._keys = keys
        self.total = total
        self.count = 0

    def __call__(self, method: str, key: str) -> None:
        """Count the call if it is of the watched kind, and report."""
        if method == self._method and self._keys(key):
            self.count += 1
            self._progress(self._phase, self.count, self.total)
