"""What identifies the content of an unbundled split directory, for per-process caches.

A process keeps opened indexes, doc stores (and their decompressed blocks),
Arrow copies and split traits by directory. Keying them by the inode and
modification time of a file there is not enough: inode numbers are reused as
soon as a file is deleted (an evicted, discarded or re-fetched cache entry; a
deleted temporary table), and some file systems keep times to the second or
coarser, so a replaced directory could be served from the cache of what was
there before. The identity here is the content:

- a split cache entry (:mod:`.splitcache`) is identified by its record, the
  last file the cache writes: it names the table, the split and its size, and
  holds every file's size and SHA-256 (checked before a read uses the entry),
  so any other content has another record;
- any other directory (a test's, one being merged) by its ``meta.json``, which
  names every segment by its random id, together with the split's checksums
  file (the CRC32 of its Arrow copy) when it has one.

Costs one read of a small file (~1-3 KB) per call, except for a split cache
entry the cache verified and the kernel has reported no change to since
(:func:`.entrywatch.trust_token`): its identity is kept for as long as that
trust lasts (~90 us a split read saved, the cost of reading and hashing the
record, against one non-blocking read of the watch queue).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Final

from indextables.search.splits import entrywatch

__all__ = ["CHECKSUMS_FILE", "ENTRY_RECORD", "content_identity", "forget", "on_forget"]

# The record of a split cache entry (its split, file sizes and digests), written last.
ENTRY_RECORD: Final = ".indextables-entry.json"
# Written into a split by this package: the CRC32 of its files that carry no checksum of their
# own (the Arrow copy of the rows), ``{"crc32": {name: crc}}``; checked when fetched.
CHECKSUMS_FILE: Final = "indextables-checksums.json"


def content_identity(directory: str) -> str:
    """A digest naming the content of the unbundled split at ``directory`` (module doc).

    Raises:
        OSError: the directory has neither a cache record nor a ``meta.json``.
    """
    token = entrywatch.trust_token(directory)
    if token is not None:
        kept = _kept.get(directory)
        if kept is not None and kept[0] == token:
            return kept[1]
    digest = hashlib.sha256()
    try:
        with open(os.path.join(directory, ENTRY_RECORD), "rb") as record:
            digest.update(b"record\0" + record.read())
        identity = digest.hexdigest()
        # Kept only when the trust lasted over the read: the record read is the one held.
        if token is not None and entrywatch.trust_token(directory) == token:
            if len(_kept) >= _KEPT:
                _kept.clear()
            _kept[directory] = (token, identity)
        return identity
    except FileNotFoundError:
        pass
    with open(os.path.join(directory, "meta.json"), "rb") as meta:
        digest.update(b"meta\0" + meta.read())
    try:
        with open(os.path.join(directory, CHECKSUMS_FILE), "rb") as checksums:
            digest.update(b"\0checksums\0" + checksums.read())
    except FileNotFoundError:
        pass
    return digest.hexdigest()


# Identities of trusted cache entries: directory -> (trust token, identity).
_kept: dict[str, tuple[int, str]] = {}
_KEPT = 4096

# What each reading module keeps per directory, dropped by :func:`forget`.
_forgetters: list[Callable[[str], None]] = []


def on_forget(dropper: Callable[[str], None]) -> Callable[[str], None]:
    """Register ``dropper(directory)``: drops what its module keeps for that directory."""
    _forgetters.append(dropper)
    return dropper


def forget(directory: str) -> None:
    """Drop every per-process object kept for ``directory`` (open indexes, stores, blocks).

    Called when a read of a split cache entry failed: the objects kept by content
    identity may hold data read from files damaged after the entry was verified,
    and a re-fetched entry has the same identity.
    """
    _kept.pop(directory, None)
    for dropper in _forgetters:
        dropper(directory)
