"""Local store specifics: crash safety of put-if-absent, temporary files, directory keys."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol.errors import ObjectNotFoundError
from indextables.storage import (
    KeyOutsideRootError,
    LocalStore,
    StorageError,
    StorageNotFoundError,
    StoragePermissionError,
)
from indextables.storage.keys import TEMP_MARKER

_WRITER = textwrap.dedent(
    """
    import hashlib, sys
    from indextables.storage import LocalStore
    store = LocalStore(sys.argv[1])
    for index in range(10_000):
        seed = hashlib.sha256(str(index).encode()).digest()
        print(index, flush=True)
        store.put_if_absent(f"log/{index:05d}.json", seed * (2 << 16))
    """
)


def _expected(index: int) -> bytes:
    return hashlib.sha256(str(index).encode()).digest() * (2 << 16)


_DELAYS = [0.3, 0.6, 0.9]
_SLOW_DELAYS = [pytest.param(0.1 + 0.13 * n, marks=pytest.mark.slow) for n in range(12)]


@pytest.mark.parametrize("delay", _DELAYS + _SLOW_DELAYS)
def test_a_killed_writer_never_leaves_a_partial_object(tmp_path: Path, delay: float) -> None:
    root = tmp_path / "store"
    command = [sys.executable, "-c", _WRITER, str(root)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as writer:
        assert writer.stdout is not None
        writer.stdout.readline()  # the writer is running
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    store = LocalStore(root)
    keys = [info.key for info in store.list("log/")]
    assert keys, "the writer was killed before it wrote anything"
    for key in keys:
        index = int(key.removeprefix("log/").removesuffix(".json"))
        assert store.get(key) == _expected(index), f"{key} is partial"
    leftovers = [name for name in os.listdir(root / "log") if name.startswith(TEMP_MARKER)]
    assert len(leftovers) <= 1  # at most the write in flight at the kill


def test_temporary_files_are_not_listed_and_do_not_block_a_key(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / f"{TEMP_MARKER}crashed").write_bytes(b"half")
    store.put_if_absent("dir/object", b"whole")
    assert [info.key for info in store.list()] == ["dir/object"]


def test_put_if_absent_leaves_no_temporary_file(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put_if_absent("a/b", b"1")
    store.put("a/b", b"2")
    with pytest.raises(FileExistsError):
        store.put_if_absent("a/b", b"3")
    assert os.listdir(tmp_path / "a") == ["b"]
    assert store.get("a/b") == b"2"


def test_a_directory_is_not_an_object(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put("dir/inner", b"x")
    with pytest.raises(ObjectNotFoundError):
        store.get("dir")
    with pytest.raises(ObjectNotFoundError):
        store.head("dir")
    store.delete("dir")
    assert store.get("dir/inner") == b"x"


def test_a_key_under_an_object_is_a_storage_error(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put("file", b"x")
    with pytest.raises(StorageError, match="'file/child'"):
        store.put("file/child", b"y")
    with pytest.raises(ObjectNotFoundError):
        store.get("file/child")


def test_missing_root_lists_nothing(tmp_path: Path) -> None:
    assert list(LocalStore(tmp_path / "absent").list()) == []


def test_dangling_symlinks_and_symlink_loops_are_not_objects(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put("d/real", b"x")
    os.symlink(tmp_path / "nowhere", tmp_path / "d" / "dangling")
    os.symlink(tmp_path / "d" / "loop", tmp_path / "d" / "loop")
    assert [info.key for info in store.list("d/")] == ["d/real"]
    for key in ("d/dangling", "d/loop"):
        with pytest.raises(StorageNotFoundError, match=key):
            store.get(key)
        with pytest.raises(StorageNotFoundError):
            store.head(key)


def test_links_out_of_the_root_are_refused_and_not_listed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret").write_bytes(b"outside file")
    (outside / "dir" / "part").write_bytes(b"outside dir")
    root = tmp_path / "root"
    store = LocalStore(root)
    store.put("d/real", b"inside")
    os.symlink(outside / "secret", root / "d" / "file-link")
    os.symlink(outside / "dir", root / "dir-link")
    os.symlink(root / "d" / "real", root / "d" / "inner-link")  # inside: still followed
    assert store.get("d/inner-link") == b"inside"
    assert [info.key for info in store.list()] == ["d/inner-link", "d/real"]
    for key in ("d/file-link", "dir-link/part", "dir-link/new"):
        for call in (store.get, store.head, store.delete):
            with pytest.raises(KeyOutsideRootError, match=key):
                call(key)
        with pytest.raises(KeyOutsideRootError, match=key):
            store.get_range(key, 0, 4)
        with pytest.raises(KeyOutsideRootError, match=key):
            store.put(key, b"overwrite")
        with pytest.raises(KeyOutsideRootError, match=key):
            store.put_if_absent(key, b"overwrite")
    assert (outside / "secret").read_bytes() == b"outside file"
    assert sorted(p.name for p in (outside / "dir").iterdir()) == ["part"]


def test_a_ranged_read_never_asks_for_more_than_the_file(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put("k", b"0123456789")
    # read(n) would allocate n bytes first: a 2 TiB range must not reach it.
    assert store.get_range("k", 4, 2 << 40) == b"456789"
    assert store.get_range("k", 50, 2 << 40) == b""


def test_a_root_reached_through_a_link_works(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "alias")
    store = LocalStore(tmp_path / "alias")
    store.put("a/b", b"x")
    assert store.get("a/b") == b"x"
    assert [info.key for info in store.list()] == ["a/b"]


def test_a_file_deleted_while_listing_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path)
    for name in ("a", "b", "c"):
        store.put(f"d/{name}", b"x")
    real = os.scandir

    def scandir_then_delete(path: Any) -> Any:
        entries = list(real(path))
        (tmp_path / "d" / "b").unlink(missing_ok=True)  # a concurrent delete after the read

        class Listing:
            def __enter__(self) -> list[Any]:
                return entries

            def __exit__(self, *exc: object) -> None:
                return None

        return Listing()

    monkeypatch.setattr(os, "scandir", scandir_then_delete)
    assert [info.key for info in store.list("d/")] == ["d/a", "d/c"]


def test_an_unreadable_directory_is_a_typed_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path)
    store.put("d/sub/a", b"x")

    def denied(path: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "scandir", denied)
    with pytest.raises(StoragePermissionError, match=r"'d/sub': permission denied") as caught:
        list(store.list("d/sub/"))
    assert isinstance(caught.value, StorageError)


def test_new_parent_directories_are_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.storage import local

    synced: list[Path] = []
    real = local._fsync_dir

    def record(directory: Path) -> None:
        synced.append(Path(directory))
        real(directory)

    monkeypatch.setattr(local, "_fsync_dir", record)
    store = LocalStore(tmp_path / "root")
    store.put_if_absent("x/y/_transaction_log/00000000000000000000.json", b"{}")
    root = tmp_path / "root"
    for directory in (tmp_path, root, root / "x", root / "x" / "y", root / "x/y/_transaction_log"):
        assert directory in synced, directory
    synced.clear()
    store.put_if_absent("x/y/_transaction_log/00000000000000000001.json", b"{}")
    assert synced == [root / "x/y/_transaction_log"]  # existing parents: just the new name
