"""A size-capped LRU cache of fetched splits on the executor's local disk, in tantivy-py's form.

Tantivy opens an index from a directory, so each split is unbundled into its
own directory, named by a hash of (table URI, split path, size).

- Streaming: :mod:`indextables.search.splits.splitfetch` writes the split's files
  as its bytes arrive, rewriting only ``.term`` files to the FST form.
- Atomic: a split is unbundled into a staging directory (``.tmp-<id>``) that
  its process holds an advisory lock on, then renamed into place.
- Verified: the last file written is a record naming the split and holding
  the size and SHA-256 of every file. An entry is used only when its record
  names the split asked for, lists exactly the files present, and every file
  has its size; the digests are checked the first time a process uses the
  entry (and again whenever a file's inode, size, mtime or ctime changed;
  on Linux an inotify watch reports such a change without a stat per file,
  see :mod:`.entrywatch`).
  An entry failing a check is removed and fetched again.
- Self-healing reads: :meth:`SplitCache.use` and :meth:`SplitCache.batches`
  run a read of an entry; any failure inside it (a Tantivy error or panic, a
  missing file) checks the entry again: a damaged or vanished entry is
  removed, fetched again and read again (rows already returned are skipped);
  an intact entry means the split itself is damaged, raised as
  :class:`~indextables.search.errors.SplitReadError` naming the split and
  the entry.
- Leased: a read holds a shared lock on its entry; eviction skips entries
  that are locked, so another process never evicts an entry between its fetch
  and its open.
- Crash safe: a staging directory whose lock nobody holds any more (its
  process died) and that is older than :data:`STALE_AFTER_SECONDS` is removed
  by the next eviction. Staging directories count against the cache size.
- Private: the default directory (:func:`default_cache_dir`) is per user and
  mode 0700; a new directory is always created 0700. A configured directory
  that other users can write is tightened to 0700 and its entries are dropped
  (they may have been planted); one owned by another user, or a shared sticky
  directory such as ``/tmp`` itself, is refused. A cache path that is not a
  directory, read-only or full raises
  :class:`~indextables.search.errors.CacheDirectoryError` naming the setting.

Recency is the entry directory's mtime; eviction removes least recently used
entries until the cache is at or under its low-water mark,
:data:`LOW_WATER` (90 %) of its cap. A walk of the cache costs one listing of
the cache directory and one ``stat`` per entry: an entry's record starts with
its total size in bytes (the record included), read once per process and
entry; an entry without it (written by an older version) is sized once per
process the old way, a listing and a ``stat`` of each of its files. A process
keeps a running total of the cache per directory and walks only when:

- it has no total yet (its first addition);
- its additions would pass the cap (after a walk that left the cache over
  its cap, entries being leased, only once it grew a further tenth of the
  cap), so a cache near its cap is walked once per tenth of its cap added,
  not once per addition;
- its last walk is older than :data:`REWALK_SECONDS` and than
  :data:`WALK_SHARE` times that walk's duration (other processes add entries
  too: the cap holds to within what they add in that time), so a huge cache
  cannot take more than about 2 % of a process's time in time-driven walks.

Leased entries stay whatever the cap.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import random
import re
import shutil
import stat
import struct
import tempfile
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, NoReturn, TypeVar

from indextables.protocol.errors import CorruptFileError
from indextables.protocol.store import ObjectStore
from indextables.search import oplog
from indextables.search.aggregate.aggmerge import NotExact
from indextables.search.errors import (
    CacheDirectoryError,
    CorruptSplitError,
    IndexTablesSearchError,
    SplitReadError,
)
from indextables.search.splits import entrywatch
from indextables.search.splits.entryid import CHECKSUMS_FILE, ENTRY_RECORD, forget
from indextables.search.splits.splitfetch import LocalWriteError, SplitRef, download
from indextables.search.splits.termdict.errors import TermDictError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_DIR_SETTING",
    "ENTRY_RECORD",
    "SplitCache",
    "SplitRef",
    "default_cache_dir",
    "is_panic",
    "prepare_directory",
]

T = TypeVar("T")

# The setting naming the cache directory (quoted in errors about it).
CACHE_DIR_SETTING: Final = "spark.indextables.cache.directoryPath"
# The environment variable naming the default cache directory (when the setting is absent).
CACHE_DIR_ENV: Final = "INDEXTABLES_CACHE_DIR"
# A staging directory nobody holds the lock of is removed once this old.
STALE_AFTER_SECONDS: Final = 60.0
_RECORD_VERSION: Final = 2
_STAGING: Final = ".tmp-"
# Empty lock files Tantivy creates in an index directory it opens.
_TANTIVY_LOCKS: Final = frozenset({".tantivy-meta.lock", ".tantivy-writer.lock"})
_ENTRY_NAME: Final = re.compile(r"[0-9a-f]{32}")
# A Tantivy segment file (``<segment id>.<kind>``): it ends with a footer holding its body's CRC32.
_SEGMENT_FILE: Final = re.compile(r"[0-9a-f]{32}\.[a-z]+")
_FOOTER_TAIL: Final = struct.Struct("<II")  # footer JSON length, magic
_FOOTER_MAGIC: Final = 1337
# Threads downloading the splits of one driver-side search, count or aggregation.
FETCH_THREADS: Final = 4
# A process walks the cache again after this long even when its own total is under the cap.
REWALK_SECONDS: Final = 30.0
# ... and no sooner than this many times the duration of its last walk (a walk's time share
# of the process stays under about 1 / WALK_SHARE).
WALK_SHARE: Final = 50.0
# Eviction stops at this share of the cap, so the next walk waits for a tenth of it to be added.
LOW_WATER: Final = 0.9
# Rounds placing a downloaded entry whose path other processes keep filling and evicting,
# and the pause (at random, up to this many seconds times the round) between them.
_PLACE_TRIES: Final = 64
_PLACE_PAUSE: Final = 0.002
# What rename(2) reports when the entry's path is taken (a directory, a file or a link).
_OCCUPIED: Final = frozenset({errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR})
_totals: dict[str, _Total] = {}
_totals_lock = threading.RLock()
# Cache directory -> entry name -> (inode, bytes) of the entries its last walk in this process
# sized (an entry is never written after it is placed; a replaced one has another inode).
_sizes_known: dict[str, dict[str, tuple[int, int]]] = {}
# The start of an entry record holding the entry's size: ``{"bytes": <n>, ...``.
_RECORD_HEAD: Final = re.compile(rb'\{"bytes": (\d{1,20}),')
_RECORD_HEAD_BYTES: Final = 40
# (name, mode, inode, size, mtime_ns, ctime_ns) of every file of an entry, by name.
_Signature = tuple[tuple[str, int, int, int, int, int], ...]
# Entry directory -> the stat signature of its files when this process last checked their digests.
_verified: dict[str, _Signature] = {}
_verified_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class _Total:
    """What a process knows of a cache directory's size.

    Attributes:
        bytes: the total after the last walk plus this process's additions since.
        after_walk: the total the last walk left.
        walked_at: monotonic time the last walk ended.
        walk_seconds: how long the last walk took.
    """

    bytes: int
    after_walk: int
    walked_at: float
    walk_seconds: float


def default_cache_dir() -> str:
    """The split cache directory used when none is configured (one per user, mode 0700).

    :data:`CACHE_DIR_ENV` names it when set (e.g. a test session's private
    directory; Spark's Python workers inherit it), else
    ``<tmp>/indextables-split-cache-<uid>``.
    """
    chosen = os.environ.get(CACHE_DIR_ENV, "")
    if chosen:
        return os.path.abspath(os.path.expanduser(chosen))
    return os.path.join(tempfile.gettempdir(), f"indextables-split-cache-{os.getuid()}")


def is_panic(error: BaseException) -> bool:
    """True for pyo3's ``PanicException`` (a Rust panic in tantivy-py; a BaseException)."""
    kind = type(error)
    return kind.__name__ == "PanicException" and kind.__module__ == "pyo3_runtime"


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
        """The local directory holding ``split`` if a verified entry exists (marked as used).

        Raises:
            CacheDirectoryError: the cache directory is not a directory or others can write it.
        """
        found = self._leased_hit(table_uri, split)
        if found is None:
            return None
        entry, lease = found
        os.close(lease)
        return entry

    def _leased_hit(self, table_uri: str, split: SplitRef) -> tuple[str, int] | None:
        """The split's verified entry and a descriptor leasing it; None on a miss."""
        if not _check_directory(self.directory, create=False):
            return None
        return _adopt(os.path.join(self.directory, _cache_key(table_uri, split)), table_uri, split)

    def fetch(self, store: ObjectStore, table_uri: str, split: SplitRef) -> str:
        """The local directory holding ``split`` unbundled, fetching it on a miss.

        Raises:
            CorruptSplitError: the split's footer, length or term dictionaries are damaged.
            UnreadableSplitError: tantivy-py cannot read the split's documents.
            CacheDirectoryError: the cache directory is not a directory, read-only or full.
        """
        hit = self.cached(table_uri, split)
        if hit is not None:
            return hit
        entry, lease = self._fetch_leased(store, table_uri, split)
        os.close(lease)
        return entry

    def _fetch_leased(self, store: ObjectStore, table_uri: str, split: SplitRef) -> tuple[str, int]:
        """Download ``split`` into the cache; the entry and a descriptor holding its lease.

        The download's staging directory is share-locked from its creation and
        the rename keeps the lock, so no eviction can remove the entry before
        the caller reads it, however small and busy the cache.
        """
        prepare_directory(self.directory)
        try:
            return self._download(store, table_uri, split)
        except CacheDirectoryError as error:
            # A disk filled (by this cache among others): evict unleased entries to make
            # room for about twice the split, then try once more.
            if error.errno not in (errno.ENOSPC, errno.EDQUOT) or not self._make_room(split.size):
                raise
        return self._download(store, table_uri, split)

    def _make_room(self, needed: int) -> bool:
        """Evict least recently used entries to free ``2 * needed`` bytes; True if any went.

        One walk: it also removes abandoned downloads.
        """
        used, after = self._walk(keep=None, goal=lambda total: max(0, total - 2 * needed))
        return after < used

    def _download(self, store: ObjectStore, table_uri: str, split: SplitRef) -> tuple[str, int]:
        target = os.path.join(self.directory, _cache_key(table_uri, split))
        try:
            with _staging(self.directory) as (staging, handle):
                sizes = download(store, split, staging, reserved=frozenset({ENTRY_RECORD}))
                added = _write_record(staging, table_uri, split, sizes)
                lease = self._place(staging, handle, target, table_uri, split)
        except LocalWriteError as error:
            _cache_failure(self.directory, f"cannot be written ({error.path})", error.error)
        except CorruptSplitError:
            raise
        except CorruptFileError as error:
            raise CorruptSplitError(error.path, error.problem) from error
        except TermDictError as error:
            raise CorruptSplitError(split.path, f"damaged term dictionary: {error}") from error
        except OSError as error:
            if isinstance(error, IndexTablesSearchError) or not _local_failure(error):
                raise
            _cache_failure(self.directory, "cannot be written", error)
        try:
            _remember(target)
            self._account(target, added)
        except BaseException:
            os.close(lease)
            raise
        return target, lease

    def _place(
        self, staging: str, handle: int, target: str, table_uri: str, split: SplitRef
    ) -> int:
        """Rename the complete download into place, clearing what occupies the entry's path.

        Returns a descriptor holding a lease on the placed entry: a duplicate of
        the staging directory's (the rename keeps its inode and lock), or, when
        another task placed an identical entry first, a lease on that one. In a
        small cache shared by busy processes the entry can be placed and evicted
        by others many times while this runs: each round either places ours,
        adopts theirs, or finds the path cleared meanwhile and tries again,
        waiting a little longer (at random) each time.
        """
        for attempt in range(_PLACE_TRIES):
            try:
                os.rename(staging, target)
                return os.dup(handle)
            except OSError as error:
                if error.errno not in _OCCUPIED:
                    raise
            found = _adopt(target, table_uri, split)
            if found is not None:
                return found[1]  # another task won the race: an identical, verified copy
            with contextlib.suppress(OSError):
                if not stat.S_ISDIR(os.lstat(target).st_mode):
                    os.unlink(target)  # a file (or link) where the entry belongs
            time.sleep(random.uniform(0.0, _PLACE_PAUSE * attempt))
        raise _cache_error(
            self.directory,
            f"cannot be written: entry {target} was replaced by other processes "
            f"{_PLACE_TRIES} times while this one placed it",
        )

    def use(
        self,
        table_uri: str,
        split: SplitRef,
        open_store: Callable[[], ObjectStore],
        read: Callable[[str], T],
        *,
        directory: str | None = None,
    ) -> T:
        """``read(entry)`` on the split's cache entry, leased against eviction.

        ``directory`` is the entry if the caller fetched it already. A failure
        inside ``read`` (other than this package's own errors) checks the
        entry: a damaged or vanished one is removed, fetched again and read
        again; an intact one means the split itself cannot be read.

        Raises:
            SplitReadError: reading the split failed, naming the split and the entry.
        """
        for attempt in range(2):
            with self._lease(table_uri, split, open_store, directory) as entry:
                try:
                    return read(entry)
                except BaseException as error:
                    self._failed(error, table_uri, split, entry, attempt)
            directory = None
        raise AssertionError("unreachable")  # pragma: no cover

    def batches(
        self,
        table_uri: str,
        split: SplitRef,
        open_store: Callable[[], ObjectStore],
        read: Callable[[str], Iterator[pa.RecordBatch]],
        *,
        directory: str | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """The batches of ``read(entry)``, with :meth:`use`'s lease and recovery.

        A read again after a failure skips the rows already yielded (a
        split's read is deterministic), so no row is returned twice.
        """
        done = 0
        for attempt in range(2):
            with self._lease(table_uri, split, open_store, directory) as entry:
                skip = done
                try:
                    for batch in read(entry):
                        if skip >= batch.num_rows:
                            skip -= batch.num_rows
                            continue
                        if skip:
                            batch, skip = batch.slice(skip), 0
                        done += batch.num_rows
                        yield batch
                    return
                except GeneratorExit:
                    raise
                except BaseException as error:
                    self._failed(error, table_uri, split, entry, attempt)
            directory = None

    def _failed(
        self, error: BaseException, table_uri: str, split: SplitRef, entry: str, attempt: int
    ) -> None:
        """Decide after a failed read: return to read again, else raise."""
        if not (isinstance(error, Exception) or is_panic(error)):
            raise error  # KeyboardInterrupt, SystemExit
        if isinstance(error, (IndexTablesSearchError, NotExact, MemoryError)):
            raise error  # this package's verdicts (bad query, not exact) are not damage
        # What this process keeps for the entry (open index, stores, blocks) may hold data
        # read from damaged files; a re-fetched entry has the same content identity.
        forget(entry)
        intact = _trusted(entry, table_uri, split, recheck=True)
        if not intact:
            _discard(entry, self.directory)
            if attempt == 0:
                return
        kind = type(error).__name__
        found = "intact" if intact else "damaged again after a fresh fetch"
        failure = SplitReadError(
            f"split {split.path} of {table_uri} cannot be read (cache entry {entry}, "
            f"{found}): {kind}: {_first_line(error)}"
        )
        failure.split, failure.entry = split.path, entry
        raise failure from error

    @contextlib.contextmanager
    def _lease(
        self,
        table_uri: str,
        split: SplitRef,
        open_store: Callable[[], ObjectStore],
        directory: str | None,
    ) -> Iterator[str]:
        """The split's entry, share-locked for the block so that no eviction removes it.

        A cached entry is leased before it is checked; a fetched one is
        leased from its download on. ``directory`` (fetched by the caller) is
        leased if it is still in place, else fetched again.
        """
        if directory is not None:
            held = _take_lease(directory)
            found = None if held is None else (directory, held)
        else:
            found = self._leased_hit(table_uri, split)
        if found is None:  # a miss, or evicted since the caller fetched it: leased from the start
            found = self._fetch_leased(open_store(), table_uri, split)
        entry, lease = found
        try:
            yield entry
        finally:
            os.close(lease)

    def _account(self, target: str, added: int) -> None:
        """Add a new entry of ``added`` bytes to the running total; walk and evict when the
        module docstring's rule says so."""
        # One walk at a time: threads fetching meanwhile wait for it, then just add.
        with _totals_lock:
            known = _totals.get(self.directory)
            if known is not None and not self._walk_due(known, added):
                _totals[self.directory] = replace(known, bytes=known.bytes + added)
                return
            self._walk(keep=target, goal=lambda _: self._low_water())

    def _low_water(self) -> int:
        return int(self.max_bytes * LOW_WATER)

    def _walk_due(self, known: _Total, added: int) -> bool:
        """True when adding ``added`` bytes must walk the cache (see the module docstring)."""
        since = time.monotonic() - known.walked_at
        if since >= max(REWALK_SECONDS, WALK_SHARE * known.walk_seconds):
            return True
        # After a walk left the cache over its cap (leased entries), the next waits for as
        # much to be added as a walk reaching the low-water mark would have.
        limit = max(self.max_bytes, known.after_walk + self.max_bytes - self._low_water())
        return known.bytes + added > limit

    @contextlib.contextmanager
    def directories(
        self, table_uri: str, splits: Sequence[SplitRef], open_store: Callable[[], ObjectStore]
    ) -> Iterator[Callable[[int], str]]:
        """``directory(i)``: the local directory of ``splits[i]``, for a driver-side read.

        Splits already cached are answered at once and start no thread (a warm
        search starts none); the others are fetched in the background by
        :data:`FETCH_THREADS` threads, and those not started when the block
        ends (a search that stopped early) are never downloaded. Read them
        through :meth:`use` or :meth:`batches` with ``directory=``.
        """
        local = [self.cached(table_uri, split) for split in splits]
        missed = [split for split, hit in zip(splits, local, strict=True) if hit is None]
        oplog.note(
            cache_hits=len(splits) - len(missed),
            cache_misses=len(missed),
            bytes_fetched=sum(split.size for split in missed),
        )
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
        """Remove abandoned downloads, then least recently used splits until the cache is at
        or under its low-water mark (:data:`LOW_WATER` of the cap).

        Downloads in progress and entries being read (leased) count against the
        cap but are never removed; nor is ``keep``. Returns the bytes the cache
        holds afterwards.
        """
        return self._walk(keep=keep, goal=lambda _: self._low_water())[1]

    def _walk(self, *, keep: str | None, goal: Callable[[int], int]) -> tuple[int, int]:
        """One walk: evict down to ``goal(total)`` bytes; (total before, total after).

        Records the result (and the walk's duration) as this process's running total.
        """
        with _totals_lock:
            started = time.monotonic()
            before, after = _sweep(self.directory, keep=keep, goal=goal)
            ended = time.monotonic()
            _totals[self.directory] = _Total(after, after, ended, ended - started)
        return before, after


def _sweep(directory: str, *, keep: str | None, goal: Callable[[int], int]) -> tuple[int, int]:
    """Size the cache (one listing, one ``stat`` per entry), remove abandoned downloads, then
    unleased least recently used entries until at most ``goal(total)`` bytes remain.

    Returns (total before eviction, total after).
    """
    known = _sizes_known.get(directory, {})
    seen: dict[str, tuple[int, int]] = {}
    entries = []
    total = 0
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        try:
            info = os.stat(path)
        except OSError:
            continue  # removed meanwhile
        if not stat.S_ISDIR(info.st_mode):
            continue
        if name.startswith(_STAGING):
            if _abandoned(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                total += _size(path)  # a download in progress: its files grow
            continue
        if name.startswith("."):
            continue
        size = _entry_bytes(path, info.st_ino, known.get(name))
        seen[name] = (info.st_ino, size)
        total += size
        entries.append((info.st_mtime, size, name))
    before = total
    floor = goal(total)
    for _, size, name in sorted(entries):
        if total <= floor:
            break
        path = os.path.join(directory, name)
        if path != keep and _discard(path, directory, unless_leased=True):
            total -= size
            seen.pop(name, None)
    _sizes_known[directory] = seen
    return before, total


def _entry_bytes(path: str, inode: int, known: tuple[int, int] | None) -> int:
    """An entry's size: known to this process, else from its record's head, else (an entry
    written by an older version) the sum of its files' sizes."""
    if known is not None and known[0] == inode:
        return known[1]
    recorded = _recorded_bytes(path)
    return recorded if recorded is not None else _size(path)


def _recorded_bytes(path: str) -> int | None:
    """The total size an entry's record starts with; None without one (or no record)."""
    try:
        handle = os.open(
            os.path.join(path, ENTRY_RECORD), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
        )
    except OSError:
        return None
    try:
        head = os.read(handle, _RECORD_HEAD_BYTES)
    except OSError:
        return None
    finally:
        os.close(handle)
    found = _RECORD_HEAD.match(head)
    return int(found.group(1)) if found else None


def _record_text(record: dict[str, object], files: int) -> str:
    """``record`` as JSON starting with ``"bytes"``: ``files`` plus the text's own length."""
    total = files
    while True:
        text = json.dumps({"bytes": total, **record})
        size = files + len(text.encode())
        if size == total:
            return text
        total = size  # grows to a fixed point within a few rounds (only its digits change)


def fetch_pool() -> ThreadPoolExecutor:
    """The threads downloading splits not on local disk (a test may forbid them)."""
    return ThreadPoolExecutor(max_workers=FETCH_THREADS)


def prepare_directory(directory: str) -> None:
    """Create ``directory`` (mode 0700) or check an existing one.

    The default directory must be the user's own and private. A configured
    one that other users can write is tightened to 0700 and its entries are
    dropped.

    Raises:
        CacheDirectoryError: not a directory, cannot be created, belongs to another user, or
            is a shared sticky directory.
    """
    _check_directory(directory, create=True)


def _check_directory(directory: str, *, create: bool) -> bool:
    """Check (and create when ``create``) the cache directory; False when it does not exist."""
    default = os.path.abspath(directory) == os.path.abspath(default_cache_dir())
    try:
        info = os.lstat(directory) if default else os.stat(directory)
    except FileNotFoundError:
        if not create:
            return False
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            info = os.lstat(directory) if default else os.stat(directory)
        except OSError as error:
            _cache_failure(directory, "cannot be created", error)
    except OSError as error:
        _cache_failure(directory, "cannot be used", error)
    if not stat.S_ISDIR(info.st_mode):
        _cache_failure(directory, "is not a directory")
    if info.st_uid != os.getuid():
        _cache_failure(
            directory,
            f"belongs to another user (uid {info.st_uid}), who could plant entries in it",
        )
    mode = stat.S_IMODE(info.st_mode)
    others_write = bool(mode & (stat.S_IWGRP | stat.S_IWOTH))
    if others_write and mode & stat.S_ISVTX:
        _cache_failure(directory, "is a shared directory: use a private subdirectory of it")
    if others_write or (default and mode != 0o700):
        try:
            os.chmod(directory, 0o700)
        except OSError as error:
            _cache_failure(
                directory, "is writable by other users and cannot be made private", error
            )
        if others_write:
            _drop_entries(directory)  # others could have planted them
    return True


def _drop_entries(directory: str) -> None:
    for name in os.listdir(directory):
        if _ENTRY_NAME.fullmatch(name):
            _discard(os.path.join(directory, name), directory)


def _cache_error(directory: str, problem: str) -> CacheDirectoryError:
    return CacheDirectoryError(f"split cache directory {directory} ({CACHE_DIR_SETTING}) {problem}")


def _cache_failure(directory: str, problem: str, error: OSError | None = None) -> NoReturn:
    detail = f": {error.strerror or error}" if error is not None else ""
    failure = _cache_error(directory, f"{problem}{detail}")
    if error is not None:
        failure.errno = error.errno
        raise failure from error
    raise failure


_LOCAL_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
        errno.ENOTDIR,
        errno.EISDIR,
        errno.EEXIST,
        errno.ENOTEMPTY,
        errno.EFBIG,
        errno.EIO,
    }
)


def _local_failure(error: OSError) -> bool:
    """True for an OSError from the cache's own directory operations (not the store's)."""
    return error.errno in _LOCAL_ERRNOS


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:500] if text else "(no message)"


@contextlib.contextmanager
def _staging(directory: str) -> Iterator[tuple[str, int]]:
    """A new staging directory and a descriptor share-locking it for as long as the block
    runs (a lock held means not abandoned, and not evictable once renamed into place);
    removed afterwards unless renamed."""
    path = os.path.join(directory, f"{_STAGING}{uuid.uuid4().hex}")
    os.mkdir(path, 0o700)
    handle = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(handle, fcntl.LOCK_SH)
        yield path, handle
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(handle)


def _take_lease(entry: str) -> int | None:
    """A descriptor share-locking ``entry``; None when it was removed or replaced meanwhile
    (or is not a directory: a link is never followed)."""
    try:
        handle = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_SH)
        if os.lstat(entry).st_ino == os.fstat(handle).st_ino:
            return handle
    except OSError:
        pass
    os.close(handle)  # evicted (renamed away) before the lock was taken
    return None


def _adopt(target: str, table_uri: str, split: SplitRef) -> tuple[str, int] | None:
    """``target`` and a descriptor leasing it when it is a verified entry of ``split``
    (marked as used); None when absent, and a damaged entry is removed.

    The lease is taken before the check: an eviction cannot remove the entry
    while it is checked, so a live entry is never mistaken for a damaged one
    (and the path, by then another process's fresh entry, discarded).
    """
    lease = _take_lease(target)
    if lease is None:
        return None
    if _trusted(target, table_uri, split):
        _touch(target)
        return target, lease
    os.close(lease)
    _discard(target, os.path.dirname(target))
    return None


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


def _discard(path: str, directory: str, *, unless_leased: bool = False) -> bool:
    """Take an entry out of use at once (rename), then delete it; True when it was removed.

    With ``unless_leased`` an entry that a read holds a lease on is kept.
    """
    with _verified_lock:
        _verified.pop(path, None)
    entrywatch.forget(path)
    doomed = os.path.join(directory, f"{_STAGING}{uuid.uuid4().hex}")
    handle = None
    try:
        if unless_leased:
            handle = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False  # being read
        os.rename(path, doomed)
    except OSError:
        return False  # removed or replaced meanwhile
    finally:
        if handle is not None:
            os.close(handle)
    shutil.rmtree(doomed, ignore_errors=True)
    return True


def _digest(path: str) -> str:
    with open(path, "rb") as source:
        return hashlib.file_digest(source, "sha256").hexdigest()


def _checked_digest(path: str, name: str, split: SplitRef) -> str:
    """The SHA-256 of a fetched file; a Tantivy segment file's footer CRC is checked on the way.

    Raises:
        CorruptSplitError: a segment file without its footer or whose body fails its CRC.
    """
    size = os.path.getsize(path)
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        body = None
        if _SEGMENT_FILE.fullmatch(name):
            tail = b""
            if size >= 8:
                source.seek(size - 8)
                tail = source.read(8)
                source.seek(0)
            footer_len, magic = _FOOTER_TAIL.unpack(tail) if len(tail) == 8 else (0, 0)
            if magic != _FOOTER_MAGIC or footer_len + 8 > size:
                raise CorruptSplitError(split.path, f"{name} has no Tantivy file footer")
            body = size - 8 - footer_len
        crc, position, footer = 0, 0, bytearray()
        while chunk := source.read(1 << 20):
            digest.update(chunk)
            if body is not None:
                inside = chunk[: max(0, body - position)]
                crc = zlib.crc32(inside, crc)
                footer += chunk[len(inside) :]
            position += len(chunk)
    if body is not None:
        try:
            expected = json.loads(bytes(footer[:-8]))["crc"]
        except (ValueError, KeyError, TypeError):
            raise CorruptSplitError(split.path, f"{name} has an unreadable file footer") from None
        if expected != crc:
            raise CorruptSplitError(
                split.path, f"{name} is damaged: its footer CRC {expected} does not match {crc}"
            )
    return digest.hexdigest()


def _write_record(staging: str, table_uri: str, split: SplitRef, sizes: dict[str, int]) -> int:
    """Write the entry's record (size, split, file sizes, digests): the last file of a
    complete download. Returns the entry's size in bytes, the record included.

    Raises:
        CorruptSplitError: a segment file of the split fails its footer CRC.
    """
    record: dict[str, object] = {
        "version": _RECORD_VERSION,
        "table": table_uri.rstrip("/"),
        "split": split.path,
        "size": split.size,
        "files": sizes,
        "sha256": {n: _checked_digest(os.path.join(staging, n), n, split) for n in sizes},
    }
    _check_checksums(staging, split, sizes)
    text = _record_text(record, sum(sizes.values()))
    with open(os.path.join(staging, ENTRY_RECORD), "w", encoding="utf-8") as handle:
        handle.write(text)
    return sum(sizes.values()) + len(text.encode())


def write_checksums(directory: str, names: Sequence[str]) -> None:
    """Write :data:`CHECKSUMS_FILE` into an index directory about to be bundled."""
    crcs = {name: _crc32(os.path.join(directory, name)) for name in names}
    with open(os.path.join(directory, CHECKSUMS_FILE), "w", encoding="utf-8") as handle:
        json.dump({"crc32": crcs}, handle, sort_keys=True)


def _check_checksums(staging: str, split: SplitRef, sizes: dict[str, int]) -> None:
    """Check the files :data:`CHECKSUMS_FILE` covers (splits written before it: nothing)."""
    if CHECKSUMS_FILE not in sizes:
        return
    try:
        with open(os.path.join(staging, CHECKSUMS_FILE), encoding="utf-8") as handle:
            crcs = json.load(handle)["crc32"]
        covered = {str(name): int(crc) for name, crc in crcs.items()}
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        raise CorruptSplitError(split.path, f"{CHECKSUMS_FILE} is damaged") from None
    for name, crc in covered.items():
        if name not in sizes:
            raise CorruptSplitError(split.path, f"{CHECKSUMS_FILE} names a missing file {name!r}")
        found = _crc32(os.path.join(staging, name))
        if found != crc:
            raise CorruptSplitError(
                split.path, f"{name} is damaged: its CRC32 {found} is not the recorded {crc}"
            )


def _crc32(path: str) -> int:
    crc = 0
    with open(path, "rb") as source:
        while chunk := source.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def _signature(target: str) -> _Signature | None:
    """What changes when any file of the entry is added, removed, replaced or written.

    One ``lstat`` per file. None when a Tantivy lock file is not empty (an
    entry is never written to, so a non-empty lock means someone did).
    """
    out: list[tuple[str, int, int, int, int, int]] = []
    for name in sorted(os.listdir(target)):
        info = os.lstat(os.path.join(target, name))
        if name in _TANTIVY_LOCKS:
            if info.st_size:
                return None
            continue
        out.append(
            (name, info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        )
    return tuple(out)


def _remember(target: str) -> None:
    """Mark a just-written entry as verified by this process (its digests were just taken)."""
    entrywatch.arm(target)
    try:
        signature = _signature(target)
    except OSError:
        return
    if signature is not None:
        with _verified_lock:
            _verified[target] = signature
        entrywatch.confirm(target)


def _trusted(target: str, table_uri: str, split: SplitRef, *, recheck: bool = False) -> bool:
    """True when the entry's record is this split's and every file matches it.

    An entry this process verified and whose files' stat signature (inode,
    size, mode, times of every file, the record included) has not changed
    since is trusted after one listing and one ``lstat`` per file: the entry
    directory's name is a digest of (table, split, size), and any write to a
    file or the record changes the signature. Otherwise (first use in this
    process, a changed file, or ``recheck``) the record is read and the file
    list, sizes and SHA-256 digests are checked against it. On Linux a
    trusted entry is watched (:mod:`.entrywatch`): while the kernel reports
    no change to it, it is trusted without even the listing and the stats.
    """
    if not recheck and entrywatch.unchanged(target):
        return True  # verified, and the kernel reported no change since (:mod:`.entrywatch`)
    try:
        entrywatch.arm(target)  # before the check: a change after it is seen
        signature = _signature(target)
        if signature is None:
            return False
        with _verified_lock:
            known = _verified.get(target)
        if known == signature and not recheck:
            entrywatch.confirm(target)
            return True
        with open(os.path.join(target, ENTRY_RECORD), encoding="utf-8") as handle:
            record = json.load(handle)
        sizes, digests = record["files"], record["sha256"]
        if (
            record.get("version") != _RECORD_VERSION
            or record.get("table") != table_uri.rstrip("/")
            or record.get("split") != split.path
            or record.get("size") != split.size
            or not isinstance(sizes, dict)
            or not isinstance(digests, dict)
            or set(sizes) != set(digests)
            or {entry[0] for entry in signature} != {*sizes, ENTRY_RECORD}
        ):
            return False
        for name, mode, _, size, *_ in signature:
            if not stat.S_ISREG(mode) or (name != ENTRY_RECORD and size != int(sizes[name])):
                return False
        recorded = record.get("bytes")  # absent from entries of older versions
        if recorded is not None:
            own = next(entry[3] for entry in signature if entry[0] == ENTRY_RECORD)
            if recorded != sum(int(size) for size in sizes.values()) + own:
                return False
        if any(_digest(os.path.join(target, n)) != digests[n] for n in sizes):
            return False
        with _verified_lock:
            _verified[target] = signature
        entrywatch.confirm(target)
        return True
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
