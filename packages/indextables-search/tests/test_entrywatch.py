"""Watched split cache entries: trusted without a stat walk until the kernel reports a change."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from indextables.search.splits import entrywatch, splitcache
from indextables.search.splits.splitcache import SplitCache, SplitRef
from indextables.storage import LocalStore

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

GOLDEN = (
    Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4/04_partitioned"
)


def _cached(tmp_path: Path) -> tuple[SplitCache, str, SplitRef, str]:
    root = tmp_path / "table"
    shutil.copytree(GOLDEN, root)
    path = sorted(root.glob("date=*/*.split"))[0]
    ref = SplitRef(str(path.relative_to(root)), path.stat().st_size)
    store = LocalStore(str(root))
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    entry = cache.fetch(store, store.uri, ref)
    return cache, store.uri, ref, entry


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The entries whose files the cache listed and stat-ed (its signature walk)."""
    seen: list[str] = []
    original = splitcache._signature

    def counted(target: str) -> object:
        seen.append(target)
        return original(target)

    monkeypatch.setattr(splitcache, "_signature", counted)
    return seen


def test_a_watched_entry_is_trusted_without_a_stat_walk(tmp_path: Path, walks: list[str]) -> None:
    cache, uri, ref, entry = _cached(tmp_path)
    assert cache.cached(uri, ref) == entry
    walks.clear()
    for _ in range(3):
        assert cache.cached(uri, ref) == entry
    assert walks == []


@pytest.mark.parametrize("change", ["same_size_write", "truncate", "new_file", "remove", "chmod"])
def test_any_change_to_a_watched_entry_is_checked_again(
    tmp_path: Path, walks: list[str], change: str
) -> None:
    cache, uri, ref, entry = _cached(tmp_path)
    assert cache.cached(uri, ref) == entry
    store_file = Path(entry, next(n for n in os.listdir(entry) if n.endswith(".store")))
    info = store_file.stat()
    if change == "same_size_write":
        with open(store_file, "r+b") as handle:
            first = handle.read(1)
            handle.seek(0)
            handle.write(bytes([first[0] ^ 0xFF]))
        os.utime(store_file, ns=(info.st_atime_ns, info.st_mtime_ns))
    elif change == "truncate":
        os.truncate(store_file, info.st_size - 1)
    elif change == "new_file":
        Path(entry, "planted").write_bytes(b"x")
    elif change == "remove":
        store_file.unlink()
    else:
        store_file.chmod(0o600 if info.st_mode & 0o077 else 0o644)
    walks.clear()
    found = cache.cached(uri, ref)
    assert walks == [entry]  # checked in full again
    if change == "chmod":
        assert found == entry  # the mode is in the signature, the digests still match
    else:
        assert found is None  # damaged: not trusted (and removed)


def test_tantivy_lock_files_are_ignored_unless_written(tmp_path: Path, walks: list[str]) -> None:
    cache, uri, ref, entry = _cached(tmp_path)
    assert cache.cached(uri, ref) == entry
    lock = Path(entry, ".tantivy-meta.lock")
    lock.unlink(missing_ok=True)
    lock.touch()
    walks.clear()
    assert cache.cached(uri, ref) == entry
    assert walks == []
    lock.write_bytes(b"written")
    assert cache.cached(uri, ref) is None  # someone wrote into the entry
    assert walks == [entry]


def test_a_recheck_always_walks(tmp_path: Path, walks: list[str]) -> None:
    cache, uri, ref, entry = _cached(tmp_path)
    assert cache.cached(uri, ref) == entry
    walks.clear()
    assert splitcache._trusted(entry, uri, ref, recheck=True)
    assert walks == [entry]


def test_a_forked_process_starts_without_watches(
    tmp_path: Path, walks: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, uri, ref, entry = _cached(tmp_path)
    assert cache.cached(uri, ref) == entry
    assert entrywatch.unchanged(entry)
    parent = os.getpid()
    monkeypatch.setattr(entrywatch.os, "getpid", lambda: parent + 1)
    assert not entrywatch.unchanged(entry)  # the parent's trust is not inherited
    walks.clear()
    assert cache.cached(uri, ref) == entry
    assert walks == [entry]
    assert entrywatch.unchanged(entry)  # watched by the "child" from now on


def test_an_evicted_entry_is_not_trusted(tmp_path: Path) -> None:
    cache, uri, ref, entry = _cached(tmp_path)
    assert cache.cached(uri, ref) == entry
    assert entrywatch.unchanged(entry)
    SplitCache(cache.directory, 0).evict()
    assert not os.path.exists(entry)
    assert not entrywatch.unchanged(entry)
    assert cache.cached(uri, ref) is None
