"""A size-capped LRU cache of fetched splits on the executor's local disk, in tantivy-py's form.

Tantivy opens an index from a directory, so each split is unbundled into its
own directory, named by a hash of (table URI, split path, size).

- Streaming: the split's bytes arrive in ranged reads of at most
  :data:`CHUNK_BYTES` and go straight to their files; a split is never held
  whole in memory. Only ``.term`` files (one term dictionary per field, sized
  by the number of terms) are held while they are rewritten to tantivy-py's
  FST form (:mod:`indextables.pyspark.termdict`); every other file is kept
  byte for byte.
- Atomic and trusted: a split is unbundled into a staging directory
  (``.tmp-<id>``) that its process holds an advisory lock on, then renamed
  into place. The last file written is a record of every file's size; an
  entry is used only when that record exists and every file has its size.
  An entry failing the check is removed and fetched again.
- Crash safe: a staging directory whose lock nobody holds any more (its
  process died) and that is older than :data:`STALE_AFTER_SECONDS` is removed
  by the next eviction. Staging directories count against the cache size.
- Private: the default directory (:func:`default_cache_dir`) is per user and
  mode 0700; a new directory is always created 0700.

Recency is the entry directory's mtime; eviction removes least recently used
entries until the cache is under its cap again.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import stat
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Final

from indextables.protocol.errors import CorruptFileError
from indextables.protocol.hotcache import parse_hotcache
from indextables.protocol.splitbundle import SPLIT_FIELDS, SplitFooter, read_split_footer
from indextables.protocol.store import ObjectStore
from indextables.pyspark.errors import IndexTablesSparkError, UnreadableSplitError

# Largest ranged read of a fetch: the memory a fetch needs besides one .term file.
CHUNK_BYTES: Final = 8 << 20
# A staging directory nobody holds the lock of is removed once this old.
STALE_AFTER_SECONDS: Final = 60.0
# The record of an entry's file sizes, written last into the staging directory.
ENTRY_RECORD: Final = ".indextables-entry.json"
_STAGING: Final = ".tmp-"


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


def default_cache_dir() -> str:
    """The split cache directory used when none is configured (one per user, mode 0700)."""
    return os.path.join(tempfile.gettempdir(), f"indextables-split-cache-{os.getuid()}")


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
        """The local directory holding ``split`` if a trusted entry exists (marked as used)."""
        target = os.path.join(self.directory, _cache_key(table_uri, split))
        if not os.path.isdir(target):
            return None
        if not _trusted(target):
            _discard(target, self.directory)
            return None
        _touch(target)
        return target

    def fetch(self, store: ObjectStore, table_uri: str, split: SplitRef) -> str:
        """The local directory holding ``split`` unbundled, fetching it on a miss.

        Raises:
            CorruptFileError: the split's footer or length does not match the log.
            UnreadableSplitError: tantivy-py cannot read the split's documents.
            TermDictError: a term dictionary of the split is malformed.
        """
        hit = self.cached(table_uri, split)
        if hit is not None:
            return hit
        prepare_directory(self.directory)
        target = os.path.join(self.directory, _cache_key(table_uri, split))
        with _staging(self.directory) as staging:
            download(store, split, staging)
            try:
                os.rename(staging, target)
            except OSError:
                # Another task won the race: its copy is identical once trusted.
                if not (os.path.isdir(target) and _trusted(target)):
                    raise
        self.evict(keep=target)
        return target

    def evict(self, *, keep: str | None = None) -> None:
        """Remove abandoned downloads, then least recently used splits until under the cap.

        Downloads in progress count against the cap but are never removed.
        """
        entries = []
        total = 0
        for name in os.listdir(self.directory):
            path = os.path.join(self.directory, name)
            if not os.path.isdir(path):
                continue
            if name.startswith(_STAGING):
                if _abandoned(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    total += _size(path)
                continue
            if name.startswith("."):
                continue
            size = _size(path)
            total += size
            entries.append((_mtime(path), size, path))
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            if path != keep:
                _discard(path, self.directory)
                total -= size


def prepare_directory(directory: str) -> None:
    """Create ``directory`` (mode 0700); the default one must be the user's own and private.

    Raises:
        IndexTablesSparkError: the default cache directory belongs to another user.
    """
    os.makedirs(directory, mode=0o700, exist_ok=True)
    if os.path.abspath(directory) != os.path.abspath(default_cache_dir()):
        return
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise IndexTablesSparkError(
            f"split cache directory {directory} is not a directory owned by this user; "
            "remove it or set spark.indextables.cache.directoryPath"
        )
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(directory, 0o700)


@contextlib.contextmanager
def _staging(directory: str) -> Iterator[str]:
    """A new staging directory, locked for as long as the block runs, removed afterwards."""
    path = os.path.join(directory, f"{_STAGING}{uuid.uuid4().hex}")
    os.mkdir(path, 0o700)
    handle = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(handle)


def _abandoned(path: str) -> bool:
    """True for a staging directory whose process is gone (nobody holds its lock)."""
    if time.time() - _mtime(path) < STALE_AFTER_SECONDS:
        return False
    try:
        handle = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(handle)  # closing releases a lock taken here
    return True


def _discard(path: str, directory: str) -> None:
    """Take an entry out of use at once (rename), then delete it."""
    doomed = os.path.join(directory, f"{_STAGING}{uuid.uuid4().hex}")
    try:
        os.rename(path, doomed)
    except OSError:
        return  # removed or replaced meanwhile
    shutil.rmtree(doomed, ignore_errors=True)


def download(store: ObjectStore, split: SplitRef, staging: str) -> None:
    """Stream ``split`` into ``staging`` in tantivy-py's form, its size record written last.

    Raises:
        CorruptFileError: the footer, the file table or the length disagree with the log.
        UnreadableSplitError: the split stores documents with zstd.
    """
    from indextables.pyspark.termdict import dictionary_kind, to_fst

    footer = _footer(store, split)
    names = {n: r for n, r in footer.files.items() if n != SPLIT_FIELDS}
    for name in names:
        if "/" in name or "\\" in name or name in ("", ".", "..") or name == ENTRY_RECORD:
            raise CorruptFileError(split.path, f"unsafe file name {name!r} in split")
    _check_doc_store(store, split, footer)
    stream = _RangeStream(store, split.path, footer.footer_start_offset)
    for name, (start, end) in sorted(names.items(), key=lambda item: item[1]):
        path = os.path.join(staging, name)
        if name.endswith(".term"):
            data = stream.read(start, end)
            if dictionary_kind(data) == "sstable":
                data = to_fst(data)
            with open(path, "wb") as handle:
                handle.write(data)
        else:
            # Unbuffered: each piece (at most one chunk) goes to the file as it arrives.
            with open(path, "wb", buffering=0) as raw:
                stream.copy(start, end, functools.partial(_write_all, raw))
    sizes = {name: os.path.getsize(os.path.join(staging, name)) for name in names}
    record = {"split": split.path, "size": split.size, "files": sizes}
    with open(os.path.join(staging, ENTRY_RECORD), "w", encoding="utf-8") as handle:
        json.dump(record, handle)


def _write_all(raw: BinaryIO, piece: memoryview) -> None:
    while piece:
        written = raw.write(piece) or 0
        piece = piece[written:]


def _footer(store: ObjectStore, split: SplitRef) -> SplitFooter:
    start, end = split.footer_start_offset, split.footer_end_offset
    if start is not None and end is not None and end != split.size:
        raise CorruptFileError(
            split.path, f"log records footer end {end} but a size of {split.size} bytes"
        )
    footer = read_split_footer(
        store, split.path, footer_start_offset=start, footer_end_offset=split.size
    )
    if footer.footer_end_offset != split.size:
        raise CorruptFileError(
            split.path,
            f"split footer says {footer.footer_end_offset} bytes, the log {split.size}",
        )
    return footer


def _check_doc_store(store: ObjectStore, split: SplitRef, footer: SplitFooter) -> None:
    """Refuse, before fetching the rest, a split whose documents tantivy-py cannot decompress."""
    if "meta.json" not in footer.files:
        raise CorruptFileError(split.path, "split has no meta.json")
    start, end = footer.files["meta.json"]
    raw = None
    if footer.hotcache:
        with contextlib.suppress(CorruptFileError):
            cached = parse_hotcache(footer.hotcache, path=split.path).cached("meta.json")
            raw = cached.read(0, end - start) if cached is not None else None
    if raw is None:
        raw = store.get_range(split.path, start, end)
    try:
        settings = json.loads(raw).get("index_settings") or {}
    except (ValueError, AttributeError):
        raise CorruptFileError(split.path, "meta.json is not a JSON object") from None
    compression = str(settings.get("docstore_compression", "lz4"))
    if compression.startswith("zstd"):
        raise UnreadableSplitError(
            f"split {split.path} stores its documents with docstore_compression "
            f"{compression!r}, which tantivy-py cannot read (it reads lz4 and none); "
            "rewrite the table with the reference using lz4 doc stores"
        )


class _RangeStream:
    """Reads ``[0, limit)`` of an object front to back in ranged reads of bounded size."""

    def __init__(self, store: ObjectStore, key: str, limit: int) -> None:
        self.store, self.key, self.limit = store, key, limit
        self.chunk = memoryview(b"")
        self.chunk_start = 0

    def _fill(self, position: int) -> None:
        """Make the current chunk start at ``position``."""
        stop = min(self.limit, position + CHUNK_BYTES)
        self.chunk = memoryview(b"")  # drop the previous chunk before reading the next
        data = self.store.get_range(self.key, position, stop) if stop > position else b""
        if len(data) != stop - position:
            raise CorruptFileError(
                self.key, f"split is shorter than its footer says ({position + len(data)} bytes)"
            )
        self.chunk, self.chunk_start = memoryview(data), position

    def copy(self, start: int, end: int, write: Callable[[memoryview], object]) -> None:
        """Pass bytes ``[start, end)`` to ``write`` piece by piece."""
        position = start
        while position < end:
            offset = position - self.chunk_start
            if not 0 <= offset < len(self.chunk):
                self._fill(position)
                offset = 0
            piece = self.chunk[offset : offset + end - position]
            write(piece)
            position += len(piece)

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` as one object."""
        out = bytearray()
        self.copy(start, end, out.extend)
        return bytes(out)


def _trusted(target: str) -> bool:
    """True when the entry's size record exists and every file has its recorded size."""
    try:
        with open(os.path.join(target, ENTRY_RECORD), encoding="utf-8") as handle:
            sizes = json.load(handle)["files"]
        return isinstance(sizes, dict) and all(
            os.path.getsize(os.path.join(target, str(name))) == int(size)
            for name, size in sizes.items()
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


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
    try:
        names = os.listdir(path)
    except OSError:
        return 0
    for name in names:
        try:
            total += os.path.getsize(os.path.join(path, name))
        except OSError:
            continue
    return total
