"""A store location for contract tests: URI, options, and whether processes share it."""

from __future__ import annotations

from dataclasses import dataclass, field

from indextables.protocol.store import ObjectStore
from indextables.storage.registry import open_store

__all__ = ["StoreLocation"]


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """One store location of a test: its backend name, URI and ``open_store`` options.

    Attributes:
        name: the backend (``local``, ``memory``, ``moto``, ``seaweedfs``, ``azurite``).
        uri: the store URI.
        options: ``open_store`` options (kept out of ``repr``: they hold credentials).
        shared_across_processes: other processes see the same objects (not memory://).
    """

    name: str
    uri: str
    options: dict[str, object] = field(default_factory=dict, repr=False)
    shared_across_processes: bool = True

    def open(self, **extra: object) -> ObjectStore:
        """Open the store, with ``extra`` options on top (other backends' are ignored)."""
        return open_store(self.uri, **{**self.options, **extra})
