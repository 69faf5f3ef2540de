"""A size-capped LRU cache of unbundled split files on the executor's local disk.

Tantivy opens an index from a directory, so each split is unbundled into its
own directory, named by a hash of (table URI, split path, size). A directory
appears atomically (unbundled under a temporary name, then renamed), so
concurrent tasks and processes never open a half-written split. Recency is
the directory's mtime; eviction removes the least recently used directories
until the cache is under its cap again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import time
import uuid
from dataclasses import dataclass

from indextables.protocol.splitbundle import read_split_footer, unbundle_split
from indextables.protocol.store import ObjectStore


@dataclass(frozen=True, slots=True)
class SplitRef:
    """What a read task needs to fetch one split.

    Attributes:
        path: split path relative to the table root.
        size: file size in bytes.
        footer_start_offset: footer offset from the log, when recorded.
        footer_end_offset: footer end (the file size), when recorded.
    """

    path: str
    size: int
    footer_start_offset: int | None = None
    footer_end_offset: int | None = None


@dataclass(frozen=True, slots=True)
class SplitCache:
    """The local split cache.

    Attributes:
        directory: where unbundled splits live.
        max_bytes: size cap; least recently used splits are evicted beyond it.
    """

    directory: str
    max_bytes: int

    def cached(self, table_uri: str, split: SplitRef) -> str | None:
        """The local directory holding ``split`` if it is cached (marked as used), else None."""
        target = os.path.join(self.directory, _cache_key(table_uri, split))
        if not os.path.isdir(target):
            return None
        _touch(target)
        return target

    def fetch(self, store: ObjectStore, table_uri: str, split: SplitRef) -> str:
        """The local directory holding ``split`` unbundled, fetching it on a miss."""
        hit = self.cached(table_uri, split)
        if hit is not None:
            return hit
        os.makedirs(self.directory, exist_ok=True)
        target = os.path.join(self.directory, _cache_key(table_uri, split))
        staging = os.path.join(self.directory, f".tmp-{uuid.uuid4().hex}")
        try:
            _download(store, split, staging)
            try:
                os.rename(staging, target)
            except OSError:
                # Another task won the race: its copy is identical.
                if not os.path.isdir(target):
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        self.evict(keep=target)
        return target

    def evict(self, *, keep: str | None = None) -> None:
        """Remove least recently used splits until the cache fits its cap."""
        entries = []
        for name in os.listdir(self.directory):
            path = os.path.join(self.directory, name)
            if name.startswith(".") or not os.path.isdir(path):
                continue
            entries.append((_mtime(path), _size(path), path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            if path != keep:
                shutil.rmtree(path, ignore_errors=True)
                total -= size


def _download(store: ObjectStore, split: SplitRef, staging: str) -> None:
    os.makedirs(staging)
    start, end = split.footer_start_offset, split.footer_end_offset
    if start is None or end is None:
        unbundle_split(store.get(split.path), staging, path=split.path)
        return
    # One ranged read for the footer, one for the file data before it.
    footer = read_split_footer(store, split.path, footer_start_offset=start, footer_end_offset=end)
    data = store.get_range(split.path, 0, start) if start > 0 else b""
    for name, (begin, finish) in footer.files.items():
        if "/" in name or name.startswith(".."):
            continue
        with open(os.path.join(staging, name), "wb") as handle:
            handle.write(data[begin:finish])


def _cache_key(table_uri: str, split: SplitRef) -> str:
    text = f"{table_uri.rstrip('/')}\0{split.path}\0{split.size}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _touch(path: str) -> None:
    now = time.time()
    # Evicted meanwhile: the caller still holds open files, which stay valid.
    with contextlib.suppress(OSError):
        os.utime(path, (now, now))


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _size(path: str) -> int:
    total = 0
    for name in os.listdir(path):
        try:
            total += os.path.getsize(os.path.join(path, name))
        except OSError:
            continue
    return total
