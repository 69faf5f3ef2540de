"""Temporary directories named by their owner process, reclaimed once the owner is gone.

A write, a merge or a query validation works in a directory under the temp
root (``tempfile.gettempdir()``, i.e. ``$TMPDIR``) and removes it when done;
a process killed meanwhile (SIGKILL, OOM killer, a lost executor) leaves it
behind. :func:`scratch_directory` names each directory after its owner::

    indextables-<kind>-<pid>.<start>.<boot>-<random>

``start`` is the owner's start time in clock ticks since boot (field 22 of
``/proc/<pid>/stat``) and ``boot`` the first 8 characters of the kernel's boot
id, each ``x`` where the platform does not give it. The first directory a
process makes under a temp root sweeps that root: a directory of one of these
kinds, owned by this user, whose owner is gone is removed. An owner is gone
when its boot id differs from this boot's, when no process has its pid, or
when the process with its pid started at another time (the pid was reused).
Where start times are unknown, a live pid counts as the owner: nothing of a
live process is ever removed. Names without an owner (made by older versions)
are left alone.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from typing import Final

__all__ = ["KINDS", "Owner", "owner_of", "remove_directory", "scratch_directory", "sweep"]

#: The kinds of scratch directory; a sweep looks at these names only.
KINDS: Final = ("write", "validate", "merge", "companion")
_UNKNOWN: Final = "x"
_NAME: Final = re.compile(
    r"indextables-(" + "|".join(KINDS) + r")-(\d{1,10})\.(\d{1,20}|x)\.([0-9a-f]{8}|x)-[^/]+"
)
_swept: set[str] = set()
_swept_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Owner:
    """The process a scratch directory belongs to.

    Attributes:
        pid: its process id.
        start: its start time (clock ticks since boot), or None where unknown.
        boot: the first 8 characters of the boot id it ran under, or None where unknown.
    """

    pid: int
    start: int | None
    boot: str | None

    def token(self) -> str:
        """The owner as written in a directory name: ``<pid>.<start>.<boot>``."""
        start = _UNKNOWN if self.start is None else str(self.start)
        return f"{self.pid}.{start}.{self.boot or _UNKNOWN}"


def scratch_directory(kind: str) -> str:
    """A new private (0700) directory of ``kind`` under the temp root, named by this process.

    The first call of a process for a temp root removes first the directories
    of that root's owners that are gone (:func:`sweep`).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown scratch directory kind {kind!r}; one of {KINDS}")
    root = tempfile.gettempdir()
    with _swept_lock:
        first = root not in _swept
        _swept.add(root)
    if first:
        sweep(root)
    return tempfile.mkdtemp(prefix=f"indextables-{kind}-{_this_process().token()}-", dir=root)


def remove_directory(path: str, *, attempts: int = 3) -> bool:
    """Remove the scratch directory ``path`` and all it holds; True once it is gone.

    A file that appears while the tree is being removed (a native thread
    finishing a write) leaves the directory non-empty: removal is tried again,
    up to ``attempts`` times. Errors are not raised: a directory left behind is
    reclaimed by a later :func:`sweep` once this process is gone.
    """
    for _ in range(attempts):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            return True
    return False


def sweep(root: str) -> list[str]:
    """Remove the scratch directories under ``root`` whose owners are gone; their paths.

    Only this user's directories (not symbolic links) are looked at; one that
    cannot be removed is skipped.
    """
    try:
        names = os.listdir(root)
    except OSError:
        return []
    removed = []
    uid = os.getuid()
    for name in names:
        owner = owner_of(name)
        if owner is None or _is_alive(owner):
            continue
        path = os.path.join(root, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if info.st_uid != uid or not os.path.isdir(path) or os.path.islink(path):
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            removed.append(path)
    return removed


def owner_of(name: str) -> Owner | None:
    """The owner recorded in a scratch directory's name; None for any other name."""
    found = _NAME.fullmatch(name)
    if found is None:
        return None
    _, pid, start, boot = found.groups()
    return Owner(int(pid), None if start == _UNKNOWN else int(start), _nothing(boot))


def _nothing(text: str) -> str | None:
    return None if text == _UNKNOWN else text


def _this_process() -> Owner:
    # By pid: a forked child (Spark's daemon forks its Python workers) is another owner.
    return _owner(os.getpid())


@functools.lru_cache(maxsize=4)
def _owner(pid: int) -> Owner:
    return Owner(pid, _start_time(pid), _boot_id())


def _is_alive(owner: Owner) -> bool:
    """False only when ``owner`` is surely gone (another boot, no such pid, or a reused pid)."""
    boot = _boot_id()
    if owner.boot is not None and boot is not None and owner.boot != boot:
        return False
    if owner.pid <= 0:
        return False
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # a process of another user, or a pid this platform cannot check
    if owner.start is None:
        return True
    start = _start_time(owner.pid)
    return start is None or start == owner.start


def _start_time(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot; None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces and ")": the
    # fields after the last ")" start at field 3, so the start time (22) is the 20th.
    fields = text[text.rfind(b")") + 1 :].split()
    with contextlib.suppress(IndexError, ValueError):
        return int(fields[19])
    return None


@functools.cache
def _boot_id() -> str | None:
    """This boot's id (its first 8 hex digits); None where the platform does not give it."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as boot:
            text = boot.read().strip().replace("-", "")[:8]
    except (OSError, ValueError):
        return None
    return text if re.fullmatch(r"[0-9a-f]{8}", text) else None
