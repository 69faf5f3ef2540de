"""The skeleton shared by the cloud stores: key mapping, retried calls, ranges, put-if-absent.

:class:`~indextables.storage.s3.S3Store` and
:class:`~indextables.storage.azureblob.AzureBlobStore` differ only in the SDK
calls they make and in how they classify an SDK error; everything around those
calls (checking keys, naming the failing object, retrying, settling an
ambiguous put-if-absent) lives here once.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TypeVar

from indextables.protocol.store import ObjectInfo
from indextables.storage.keys import check_key, join_root
from indextables.storage.options import CommonOptions
from indextables.storage.ranges import check_range
from indextables.storage.retry import Failure, put_if_absent_resolved, with_retries

__all__ = ["RemoteStore"]

T = TypeVar("T")


class RemoteStore(ABC):
    """Base of the stores that talk to a cloud service through an SDK.

    A subclass sets ``_root`` (the normalized root prefix), and provides
    :attr:`uri`, :meth:`get`, :meth:`head`, the SDK error classifier and the
    two SDK calls :meth:`_read_range` and :meth:`_create`.
    """

    _root: str

    @property
    @abstractmethod
    def uri(self) -> str:
        """The store's URI (no credentials, no endpoint)."""

    @property
    @abstractmethod
    def _common(self) -> CommonOptions:
        """Timeouts and retry settings."""

    @abstractmethod
    def _classify(self, error: Exception, *, where: str) -> Failure:
        """Sort an SDK error into not found / exists / auth / transient / other."""

    @abstractmethod
    def get(self, key: str) -> bytes:
        """Return the whole object."""

    @abstractmethod
    def head(self, key: str) -> ObjectInfo:
        """Return the object's size, modification time and etag."""

    @abstractmethod
    def _read_range(self, name: str, start: int, end: int) -> bytes:
        """One SDK read of bytes ``[start, end)``; empty when ``start`` is past the end."""

    @abstractmethod
    def _create(self, name: str, data: bytes) -> None:
        """One SDK conditional create that fails when the object exists."""

    def _name(self, key: str) -> str:
        return join_root(self._root, check_key(key, store=self.uri))

    def _where(self, key: str) -> str:
        return f"{self.uri} key {key!r}"

    def _call(self, key: str, what: str, call: Callable[[], T]) -> T:
        classify = functools.partial(self._classify, where=self._where(key))
        return with_retries(call, classify, self._common, what=f"{what} {key!r}")

    def get_range(self, key: str, start: int, end: int) -> bytes:
        """Return bytes ``[start, end)`` of the object (shorter at its end)."""
        check_range(key, start, end, store=self.uri)
        name = self._name(key)
        if start == end:
            self.head(key)  # still raise for a missing key
            return b""
        return self._call(key, "get_range", lambda: self._read_range(name, start, end))

    def put_if_absent(self, key: str, data: bytes) -> None:
        """Create the object only if the key does not exist (``If-None-Match: *``).

        Raises:
            StorageExistsError: the key exists (another writer won).
        """
        name = self._name(key)
        where = self._where(key)

        def classify(error: Exception) -> Failure:
            return self._classify(error, where=where)

        put_if_absent_resolved(
            lambda: self._create(name, data),
            lambda: self.get(key),
            data,
            classify,
            self._common,
            what=where,
        )
