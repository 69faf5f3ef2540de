"""A size-capped LRU cache of fetched splits on the executor's local disk, in tantivy-py's form.

Tantivy opens an index from a directory, so each split is unbundled into its
own directory, named by a hash of (table URI, split path, size).

- Streaming: :mod:`indextables.pyspark.splitfetch` writes the split's files
  as its bytes arrive, rewriting only ``.term`` files to the FST form.
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
entries until the cache is under its cap again. Eviction walks the whole
cache (a listing and a stat of every file), which costs ~1 s at 10,000
entries, so a process keeps a running total of the cache per directory and
walks only when its additions would pass the cap or its last walk is older
than :data:`REWALK_SECONDS` (other processes add entries too: the cap holds
to within what they add in that time).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final

from indextables.protocol.store import ObjectStore
from indextables.pyspark.errors import IndexTablesSparkError
from indextables.pyspark.splitfetch import SplitRef, download

__all__ = ["ENTRY_RECORD", "SplitCache", "SplitRef", "default_cache_dir", "prepare_directory"]

# A staging directory nobody holds the lock of is removed once this old.
STALE_AFTER_SECONDS: Final = 60.0
# The record of an entry's file sizes, written last into the staging directory.
ENTRY_RECORD: Final = ".indextables-entry.json"
_STAGING: Final = ".tmp-"
# Threads downloading the splits of one driver-side search, count or aggregation.
FETCH_THREADS: Final = 4
# A process walks the cache again after this long even when its own total is under the cap.
REWALK_SECONDS: Final = 30.0
# Cache directory -> (bytes after the last walk plus this process's additions, monotonic time
# of that walk).
_totals: dict[str, tuple[int, float]] = {}
_totals_lock = threading.RLock()


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
            sizes = download(store, split, staging, reserved=frozenset({ENTRY_RECORD}))
            _write_record(staging, split, sizes)
            try:
                os.rename(staging, target)
            except OSError:
                # Another task won the race: its copy is identical once trusted.
                if not (os.path.isdir(target) and _trusted(target)):
                    raise
        self._account(target, sum(sizes.values()))
        return target

    def _account(self, target: str, added: int) -> None:
        """Add a new entry of ``added`` bytes to the running total; walk and evict when it
        may pass the cap."""
        # One walk at a time: threads fetching meanwhile wait for it, then just add.
        with _totals_lock:
            known = _totals.get(self.directory)
            fresh = known is not None and time.monotonic() - known[1] < REWALK_SECONDS
            if known is not None and fresh and known[0] + added <= self.max_bytes:
                _totals[self.directory] = (known[0] + added, known[1])
                return
            remaining = self.evict(keep=target)
            _totals[self.directory] = (remaining, time.monotonic())

    @contextlib.contextmanager
    def directories(
        self, table_uri: str, splits: Sequence[SplitRef], open_store: Callable[[], ObjectStore]
    ) -> Iterator[Callable[[int], str]]:
        """``directory(i)``: the local directory of ``splits[i]``, for a driver-side read.

        Splits already cached are answered at once and start no thread (a warm
        search starts none); the others are fetched in the background by
        :data:`FETCH_THREADS` threads, and those not started when the block
        ends (a search that stopped early) are never downloaded.
        """
        local = [self.cached(table_uri, split) for split in splits]
        pending: dict[int, Future[str]] = {}
        pool = None
        if None in local:
            store = open_store()
            pool = fetch_pool()
            pending = {
                i: pool.submit(self.fetch, store, table_uri, split)
                for i, (split, hit) in enumerate(zip(splits, local, strict=True))
                if hit is None
            }
        try:
            yield lambda i: local[i] or pending[i].result()
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    def evict(self, *, keep: str | None = None) -> int:
        """Remove abandoned downloads, then least recently used splits until under the cap.

        Downloads in progress count against the cap but are never removed.
        Returns the bytes the cache holds afterwards.
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
        return total


def fetch_pool() -> ThreadPoolExecutor:
    """The threads downloading splits not on local disk (a test may forbid them)."""
    return ThreadPoolExecutor(max_workers=FETCH_THREADS)


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


def _write_record(staging: str, split: SplitRef, sizes: dict[str, int]) -> None:
    """Write the entry's size record: the last file of a complete download."""
    record = {"split": split.path, "size": split.size, "files": sizes}
    with open(os.path.join(staging, ENTRY_RECORD), "w", encoding="utf-8") as handle:
        json.dump(record, handle)


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
