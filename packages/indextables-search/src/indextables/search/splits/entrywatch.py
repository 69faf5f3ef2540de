"""Kernel watches on verified split cache entries (Linux inotify): a warm use skips the stat walk.

The split cache trusts an entry it verified as long as none of its files
changed (:func:`~indextables.search.splits.splitcache._trusted`). Proving
that with one ``lstat`` per file costs ~50 system calls per split, which
was most of a warm ``count`` (~2-6 ms of it for 10 splits). An inotify watch
on the entry directory proves the same with one non-blocking ``read`` of the
process's event queue per use: the kernel queues an event for any write,
truncation, attribute change, creation, removal or rename inside the watched
directory, and for the directory's own move or removal, synchronously with
the system call that made the change.

The protocol (all under one lock):

- :func:`arm` before the entry's files are checked: the watch is added
  first, so any change after it is seen; a change before it is what the full
  check (signature and digests) is for.
- :func:`confirm` after the check passed: the entry is trusted unless an
  event arrived since :func:`arm`.
- :func:`unchanged`: drains the queue (every event on an entry takes it out
  of trust) and answers whether the entry is still trusted.
- :func:`forget`: the cache removed the entry.

Events that the stat signature ignores are ignored here too: the entry
directory's own attribute changes (the cache marks recency with ``utime``)
and Tantivy's empty lock files (only a write to one counts). A queue
overflow distrusts every entry. Not covered (as with the signature, a full
check runs whenever a read fails): writes through a shared memory mapping
(no inotify event) and changes made by another host to a network file
system. Anywhere inotify is missing (not Linux, no instance left, the
watch limit reached) every call answers "not watched" and the cache falls
back to its stat signature. A forked child starts with no watches (the
parent's queue is not shared).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import threading
from typing import Final

__all__ = ["arm", "confirm", "forget", "trust_token", "unchanged"]

# <sys/inotify.h>
_IN_MODIFY: Final = 0x00000002
_IN_ATTRIB: Final = 0x00000004
_IN_MOVED_FROM: Final = 0x00000040
_IN_MOVED_TO: Final = 0x00000080
_IN_CREATE: Final = 0x00000100
_IN_DELETE: Final = 0x00000200
_IN_DELETE_SELF: Final = 0x00000400
_IN_MOVE_SELF: Final = 0x00000800
_IN_Q_OVERFLOW: Final = 0x00004000
_IN_IGNORED: Final = 0x00008000
_IN_ONLYDIR: Final = 0x01000000
_IN_NONBLOCK: Final = 0o4000
_IN_CLOEXEC: Final = 0o2000000
_MASK: Final = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
)
_HEADER: Final = struct.Struct("iIII")  # wd, mask, cookie, name length
# Tantivy's lock files in an index directory: only a write to one changes the signature.
_LOCKS: Final = frozenset({b".tantivy-meta.lock", b".tantivy-writer.lock"})
# Watches one process keeps at most (each costs ~1 KiB of kernel memory).
MAX_WATCHES: Final = 8192

_ARMED, _TRUSTED = 1, 2


class _Watches:
    """The process's inotify instance and what it knows about each watched entry."""

    def __init__(self) -> None:
        self.fd = -1
        self.pid = -1
        self.broken = False
        self.by_wd: dict[int, str] = {}
        self.state: dict[str, int] = {}
        # The number of each entry's current trust (set by confirm): a change ends a trust,
        # and trusting it again takes a new number.
        self.epochs: dict[str, int] = {}
        self.confirmed = 0


_lock = threading.Lock()
_watches = _Watches()
_libc: ctypes.CDLL | None = None


def _library() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc


def _instance() -> int:
    """The inotify descriptor of this process (-1 when unavailable); call with the lock held."""
    w = _watches
    if w.pid != os.getpid():
        # A forked child: the inherited descriptor shares the parent's queue; never use it.
        if w.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(w.fd)
        w.fd, w.pid, w.broken = -1, os.getpid(), False
        w.by_wd.clear()
        w.state.clear()
    if w.fd >= 0 or w.broken:
        return w.fd
    libc = _library()
    fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC) if libc is not None else -1
    if fd < 0:
        w.broken = True
        return -1
    w.fd = fd
    return fd


def _drain(fd: int) -> None:
    """Apply every queued event; call with the lock held."""
    w = _watches
    while True:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError as error:
            if error.errno == errno.EINTR:
                continue
            w.state.clear()  # cannot tell what changed: trust nothing
            return
        if not data:
            return
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, _, length = _HEADER.unpack_from(data, offset)
            name = data[offset + _HEADER.size : offset + _HEADER.size + length].rstrip(b"\0")
            offset += _HEADER.size + length
            _event(wd, mask, name)


def _event(wd: int, mask: int, name: bytes) -> None:
    w = _watches
    if mask & _IN_Q_OVERFLOW:
        w.state.clear()
        return
    target = w.by_wd.get(wd)
    if target is None:
        return
    if mask & _IN_IGNORED:
        del w.by_wd[wd]  # the watch is gone (the directory was removed)
        w.state.pop(target, None)
        return
    if not name:
        if mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
            w.state.pop(target, None)
        return  # the directory's own attributes (the cache's recency mark)
    if name in _LOCKS and not mask & _IN_MODIFY:
        return
    w.state.pop(target, None)


def arm(target: str) -> None:
    """Start watching ``target`` (call before checking its files); a no-op without inotify."""
    with _lock:
        fd = _instance()
        if fd < 0:
            return
        _drain(fd)
        w = _watches
        if len(w.by_wd) >= MAX_WATCHES and target not in w.by_wd.values():
            return
        libc = _library()
        assert libc is not None
        wd = libc.inotify_add_watch(fd, os.fsencode(target), _MASK)
        if wd < 0:
            w.state.pop(target, None)
            return
        w.by_wd[wd] = target
        w.state[target] = _ARMED


def confirm(target: str) -> None:
    """``target`` passed its check: trusted unless it changed since :func:`arm`."""
    with _lock:
        fd = _instance()
        if fd < 0:
            return
        _drain(fd)
        if _watches.state.get(target) == _ARMED:
            _watches.state[target] = _TRUSTED
            _watches.confirmed += 1
            _watches.epochs[target] = _watches.confirmed


def unchanged(target: str) -> bool:
    """True when ``target`` was confirmed and no change to it was seen since it was armed."""
    with _lock:
        fd = _instance()
        if fd < 0:
            return False
        _drain(fd)
        return _watches.state.get(target) == _TRUSTED


def trust_token(target: str) -> int | None:
    """A number naming ``target``'s current trust (as :func:`unchanged`), or None.

    Equal numbers from two calls prove that nothing in ``target`` changed
    between them: what was read from it in between is still what it holds.
    """
    with _lock:
        fd = _instance()
        if fd < 0:
            return None
        _drain(fd)
        if _watches.state.get(target) != _TRUSTED:
            return None
        return _watches.epochs.get(target)


def forget(target: str) -> None:
    """Stop trusting ``target`` (the cache is removing it)."""
    with _lock:
        _watches.state.pop(target, None)
