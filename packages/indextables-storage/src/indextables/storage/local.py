"""The local filesystem store: atomic put-if-absent that never exposes a partial file.

Every write goes to a temporary file in the destination directory, is
fsynced, then published in one step: ``os.link`` for put-if-absent (fails if
the name exists, so exactly one racer wins), ``os.replace`` for put. The
directory is fsynced afterwards so the new name survives a crash. A crash
mid-write leaves at most a temporary file (``.indextables-tmp-*``), which
listings ignore; readers never see a partial object under its key.

A key never reaches outside the root: a symbolic link inside the root (to a
file or a directory) is followed only when its target lies under the root too;
any other key is refused (:class:`KeyOutsideRootError`) and left out of
listings, so a table cannot read, overwrite or delete files beside it.
"""

from __future__ import annotations

import errno
import os
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from stat import S_ISREG as stat_is_file

from indextables.protocol.store import ObjectInfo
from indextables.storage.errors import (
    ConfigurationError,
    KeyOutsideRootError,
    StorageError,
    StorageExistsError,
    StorageNotFoundError,
    StoragePermissionError,
)
from indextables.storage.keys import TEMP_MARKER, check_key, check_prefix
from indextables.storage.ranges import check_range

__all__ = ["LocalStore"]


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _make_parents(directory: Path) -> None:
    """Create ``directory`` and its missing ancestors, each new name fsynced into its parent."""
    missing: list[Path] = []
    current = directory
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    if not missing:
        return
    directory.mkdir(parents=True, exist_ok=True)
    for created in reversed(missing):
        _fsync_dir(created.parent)


def _write_temp(directory: Path, data: bytes) -> Path:
    temp = directory / f"{TEMP_MARKER}{uuid.uuid4().hex}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return temp


class LocalStore:
    """An :class:`~indextables.protocol.store.ObjectStore` over a local directory.

    Args:
        root: the directory holding the objects (created on first write).

    Raises:
        ConfigurationError: the root holds a NUL byte or a character the file
            system cannot encode (a lone surrogate).

    Example:
        >>> import tempfile
        >>> store = LocalStore(tempfile.mkdtemp())
        >>> store.put_if_absent("_transaction_log/00000000000000000000.json", b"{}")
        >>> [info.key for info in store.list("_transaction_log/")]
        ['_transaction_log/00000000000000000000.json']
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        path = os.fspath(root)
        if "\x00" in path:
            raise ConfigurationError(f"local store root {path!r} holds a NUL byte")
        self._root = Path(os.path.abspath(path))
        try:
            # Computed once: every key check names the store, and planning opens thousands.
            self._uri = self._root.as_uri()
        except UnicodeEncodeError:
            raise ConfigurationError(
                f"local store root {path!r} holds a lone surrogate the file system cannot encode"
            ) from None

    def __repr__(self) -> str:
        return f"LocalStore(uri={self.uri!r})"

    @property
    def uri(self) -> str:
        """``file://`` URI of the root directory."""
        return self._uri

    @property
    def root(self) -> Path:
        """The root directory."""
        return self._root

    def _path(self, key: str) -> Path:
        path = self._root.joinpath(*check_key(key, store=self.uri).split("/"))
        if not self._inside(os.fspath(path)):
            raise KeyOutsideRootError(
                f"{self.uri}: key {key!r} resolves outside the store's root "
                "(through a symbolic link): refused"
            )
        return path

    def _inside(self, path: str) -> bool:
        """Whether ``path`` (under the root) resolves, following every link, under the root."""
        real = os.path.realpath(path)
        if real == path:
            return True  # no link on the way (the common case: one lstat per component)
        root = os.path.realpath(self._root)
        return real == root or real.startswith(root.rstrip(os.sep) + os.sep)

    def _fail(self, key: str, error: OSError) -> StorageError:
        if isinstance(error, FileNotFoundError | NotADirectoryError):
            return StorageNotFoundError(f"{self.uri}: no object at key {key!r}")
        if isinstance(error, IsADirectoryError):
            return StorageNotFoundError(f"{self.uri}: key {key!r} is a directory, not an object")
        if error.errno == errno.ELOOP:
            return StorageNotFoundError(f"{self.uri}: key {key!r} is a symlink loop, not an object")
        if isinstance(error, PermissionError):
            return StoragePermissionError(f"{self.uri}: key {key!r}: permission denied")
        return StorageError(f"{self.uri}: key {key!r}: {error.strerror or error}")

    def get(self, key: str) -> bytes:
        """Return the whole object."""
        path = self._path(key)
        try:
            return path.read_bytes()
        except OSError as error:
            raise self._fail(key, error) from error

    def get_range(self, key: str, start: int, end: int) -> bytes:
        """Return bytes ``[start, end)`` of the object (shorter at its end; never more is read)."""
        check_range(key, start, end, store=self.uri)
        path = self._path(key)
        try:
            with path.open("rb") as handle:
                # Never ask for more than the file holds: read(n) allocates n bytes first,
                # and a damaged log may declare a range of gigabytes on a small file.
                stop = min(end, os.fstat(handle.fileno()).st_size)
                if stop <= start:
                    return b""
                handle.seek(start)
                return handle.read(stop - start)
        except OSError as error:
            raise self._fail(key, error) from error

    def head(self, key: str) -> ObjectInfo:
        """Return the object's size and modification time (no etag)."""
        path = self._path(key)
        try:
            stat = path.stat()
        except OSError as error:
            raise self._fail(key, error) from error
        if not os.path.isfile(path):
            raise StorageNotFoundError(f"{self.uri}: key {key!r} is a directory, not an object")
        return ObjectInfo(key, stat.st_size, stat.st_mtime_ns // 1_000_000)

    def _prepare(self, key: str, data: bytes) -> tuple[Path, Path]:
        path = self._path(key)
        try:
            _make_parents(path.parent)
            return path, _write_temp(path.parent, data)
        except OSError as error:
            raise self._fail(key, error) from error

    def _publish_dir(self, key: str, directory: Path) -> None:
        """Make a new name in ``directory`` durable (the name is already visible)."""
        try:
            _fsync_dir(directory)
        except OSError as error:
            raise self._fail(key, error) from error

    def put(self, key: str, data: bytes) -> None:
        """Create or replace the object atomically (readers see the old or the new bytes)."""
        path, temp = self._prepare(key, data)
        try:
            os.replace(temp, path)
        except OSError as error:
            temp.unlink(missing_ok=True)
            raise self._fail(key, error) from error
        self._publish_dir(key, path.parent)

    def put_if_absent(self, key: str, data: bytes) -> None:
        """Create the object only if the key does not exist yet.

        Raises:
            StorageExistsError: the key exists (another writer won).
        """
        path, temp = self._prepare(key, data)
        try:
            os.link(temp, path)
        except FileExistsError:
            raise StorageExistsError(f"{self.uri}: key {key!r} already exists") from None
        except OSError as error:
            raise self._fail(key, error) from error
        finally:
            temp.unlink(missing_ok=True)
        self._publish_dir(key, path.parent)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Yield every object whose key starts with ``prefix``, in key order."""
        check_prefix(prefix, store=self.uri)
        directory, _, _ = prefix.rpartition("/")
        start = self._root.joinpath(*directory.split("/")) if directory else self._root
        base = f"{directory}/" if directory else ""
        yield from sorted(self._walk(start, base, prefix), key=lambda info: info.key)

    def _walk(self, directory: Path, base: str, prefix: str) -> Iterator[ObjectInfo]:
        try:
            with os.scandir(directory) as found:
                entries = list(found)
        except (FileNotFoundError, NotADirectoryError):
            return  # absent, or deleted while listing: nothing under it
        except OSError as error:
            raise self._fail(base.rstrip("/") or ".", error) from error
        for entry in entries:
            key = base + entry.name
            if entry.name.startswith(TEMP_MARKER):
                continue
            if entry.is_dir(follow_symlinks=False):
                if key.startswith(prefix) or prefix.startswith(key + "/"):
                    yield from self._walk(Path(entry.path), key + "/", prefix)
            elif key.startswith(prefix):
                info = self._info(entry, key)
                if info is not None:
                    yield info

    def _info(self, entry: os.DirEntry[str], key: str) -> ObjectInfo | None:
        """The entry as an object; None when it is gone or is no file (dangling or looping link)."""
        try:
            stat = entry.stat()
        except FileNotFoundError:
            return None  # deleted since the directory was read, or a dangling symlink
        except OSError as error:
            if error.errno == errno.ELOOP:
                return None  # a symlink loop names no object
            raise self._fail(key, error) from error
        if not stat_is_file(stat.st_mode):
            return None
        if entry.is_symlink() and not self._inside(entry.path):
            return None  # a link out of the root names no object of this store
        return ObjectInfo(key, stat.st_size, stat.st_mtime_ns // 1_000_000)

    def delete(self, key: str) -> None:
        """Delete the object; a missing key is not an error."""
        path = self._path(key)
        try:
            path.unlink()
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as error:
            if error.errno == errno.EISDIR:
                return
            raise self._fail(key, error) from error

    def delete_many(self, keys: Iterable[str]) -> None:
        """Delete several objects, one after the other."""
        for key in keys:
            self.delete(key)
