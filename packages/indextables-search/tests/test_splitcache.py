"""The local split cache: streamed fetches, trusted entries, crash cleanup, privacy, LRU."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import tantivy

from indextables.protocol.errors import CorruptFileError
from indextables.search.options import parse_read
from indextables.search.splits import splitcache, splitfetch
from indextables.search.splits.splitcache import SplitCache, SplitRef, default_cache_dir
from indextables.storage import LocalStore

GOLDEN = (
    Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4/04_partitioned"
)


def _store(tmp_path: Path) -> tuple[LocalStore, list[SplitRef]]:
    root = tmp_path / "table"
    shutil.copytree(GOLDEN, root)
    refs = [
        SplitRef(str(p.relative_to(root)), p.stat().st_size)
        for p in sorted(root.glob("date=*/*.split"))
    ]
    return LocalStore(str(root)), refs


def test_fetch_unbundles_and_reuses(tmp_path: Path) -> None:
    store, refs = _store(tmp_path)
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    first = cache.fetch(store, store.uri, refs[0])
    assert tantivy.Index.open(first).searcher().num_docs == 2
    os.remove(os.path.join(str(tmp_path / "table"), refs[0].path))
    assert cache.fetch(store, store.uri, refs[0]) == first  # served from disk, no refetch


def test_least_recently_used_split_is_evicted(tmp_path: Path) -> None:
    store, refs = _store(tmp_path)
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    one = cache.fetch(store, store.uri, refs[0])
    time.sleep(0.05)
    two = cache.fetch(store, store.uri, refs[1])
    size = sum(os.path.getsize(os.path.join(two, n)) for n in os.listdir(two))
    tight = SplitCache(cache.directory, size + 10)
    time.sleep(0.05)
    three = tight.fetch(store, store.uri, refs[2])
    assert not os.path.exists(one)
    assert not os.path.exists(two)  # still over the cap with it: evicted too
    assert os.path.isdir(three)


def test_cached_answers_without_fetching(tmp_path: Path) -> None:
    store, refs = _store(tmp_path)
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    assert cache.cached(store.uri, refs[0]) is None
    assert not (tmp_path / "cache").exists()  # asking does not fetch or create anything
    fetched = cache.fetch(store, store.uri, refs[0])
    os.utime(fetched, (1, 1))
    assert cache.cached(store.uri, refs[0]) == fetched
    assert os.stat(fetched).st_mtime > 1  # a hit counts as a use for eviction
    assert cache.cached(store.uri, refs[1]) is None


class _Recording:
    """A LocalStore that records every read it serves."""

    def __init__(self, store: LocalStore) -> None:
        self.store = store
        self.ranges: list[tuple[int, int]] = []
        self.whole = 0

    @property
    def uri(self) -> str:
        return self.store.uri

    def get(self, key: str) -> bytes:
        self.whole += 1
        return self.store.get(key)

    def get_range(self, key: str, start: int, end: int) -> bytes:
        self.ranges.append((start, end))
        return self.store.get_range(key, start, end)

    def head(self, key: str) -> Any:
        return self.store.head(key)


def _big_split(tmp_path: Path) -> tuple[LocalStore, SplitRef]:
    root = tmp_path / "big"
    shutil.copytree(GOLDEN.parent / "10_large_batch", root)
    live = json.loads((GOLDEN.parent / "10_large_batch.expected.json").read_text())["liveFiles"]
    first = max(live, key=lambda f: f["size"])
    ref = SplitRef(
        first["path"], first["size"], first["footerStartOffset"], first["footerEndOffset"]
    )
    return LocalStore(str(root)), ref


def test_fetch_streams_in_bounded_ranged_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(splitfetch, "CHUNK_BYTES", 1024)
    store, ref = _big_split(tmp_path)
    assert ref.footer_start_offset is not None
    assert ref.footer_start_offset > 8 * 1024  # enough file data for several chunks
    recording = _Recording(store)
    directory = SplitCache(str(tmp_path / "cache"), 1 << 30).fetch(recording, store.uri, ref)
    assert recording.whole == 0  # never the whole split
    data_reads = [r for r in recording.ranges if r[0] < ref.footer_start_offset]
    assert data_reads
    assert all(end - start <= 1024 for start, end in data_reads)
    covered = sum(end - start for start, end in data_reads)
    assert covered == ref.footer_start_offset  # each byte of file data read once
    assert tantivy.Index.open(directory).searcher().num_docs > 0


_CRASH = """
import os, sys
from indextables.search.splits import splitfetch
from indextables.search.splits.splitcache import SplitCache, SplitRef
from indextables.storage import LocalStore

splitfetch.CHUNK_BYTES = 1024
root, cache_dir, path, size, start, end = sys.argv[1:]
store = LocalStore(root)
reads = []

class Dying:
    uri = store.uri
    def get_range(self, key, a, b):
        reads.append(a)
        if len(reads) == 8:
            os._exit(3)  # the process dies mid-download
        return store.get_range(key, a, b)
    def head(self, key):
        return store.head(key)

ref = SplitRef(path, int(size), int(start), int(end))
SplitCache(cache_dir, 1 << 30).fetch(Dying(), store.uri, ref)
"""


def test_crash_mid_download_leaves_no_trusted_entry_and_is_cleaned_up(tmp_path: Path) -> None:
    store, ref = _big_split(tmp_path)
    cache_dir = str(tmp_path / "cache")
    args = [str(store.root), cache_dir, ref.path, str(ref.size)]
    args += [str(ref.footer_start_offset), str(ref.footer_end_offset)]
    done = subprocess.run([sys.executable, "-c", _CRASH, *args], check=False)
    assert done.returncode == 3
    cache = SplitCache(cache_dir, 1 << 30)
    assert cache.cached(store.uri, ref) is None
    (partial,) = [p for p in os.listdir(cache_dir) if p.startswith(".tmp-")]
    partial_size = sum(
        os.path.getsize(os.path.join(cache_dir, partial, n))
        for n in os.listdir(os.path.join(cache_dir, partial))
    )
    assert partial_size > 0
    # A young partial download might still be running: kept, but counted against the cap.
    other = SplitRef(ref.path, ref.size)  # another cache key: a separate entry
    entry = cache.fetch(store, "elsewhere", other)
    entry_size = sum(os.path.getsize(os.path.join(entry, n)) for n in os.listdir(entry))
    SplitCache(cache_dir, entry_size + partial_size - 1).evict()
    assert not os.path.exists(entry)
    assert os.path.isdir(os.path.join(cache_dir, partial))
    # Once old, an unlocked partial download is abandoned: the next eviction removes it.
    old = time.time() - splitcache.STALE_AFTER_SECONDS - 1
    os.utime(os.path.join(cache_dir, partial), (old, old))
    cache.evict()
    assert os.listdir(cache_dir) == []
    fetched = cache.fetch(store, store.uri, ref)
    assert tantivy.Index.open(fetched).searcher().num_docs > 0


def test_a_running_download_is_never_removed(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    with splitcache._staging(str(cache_dir)) as (staging, _):
        Path(staging, "x").write_bytes(b"0" * 100)
        os.utime(staging, (1, 1))  # old, but its lock is held
        SplitCache(str(cache_dir), 0).evict()
        assert os.path.isdir(staging)


def test_a_fetched_entry_is_leased_from_its_download_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another process evicting everything it can right after the entry is renamed into
    # place (before this read could lock it) must not remove it: a tiny, busy shared cache
    # makes this happen all the time.
    store, refs = _store(tmp_path)
    cache_dir = str(tmp_path / "cache")
    cache = SplitCache(cache_dir, 1 << 30)
    remember = splitcache._remember
    evicted: list[int] = []

    def remember_then_evict(target: str) -> None:
        remember(target)
        evicted.append(SplitCache(cache_dir, 0).evict())

    monkeypatch.setattr(splitcache, "_remember", remember_then_evict)
    docs = cache.use(
        store.uri,
        refs[0],
        lambda: store,
        lambda entry: tantivy.Index.open(entry).searcher().num_docs,
    )
    assert docs == 2
    assert len(evicted) == 1
    assert evicted[0] > 0  # the eviction ran and had to keep the leased entry
    monkeypatch.setattr(splitcache, "_remember", remember)
    SplitCache(cache_dir, 0).evict()  # the lease ended with the read
    assert cache.cached(store.uri, refs[0]) is None


def test_an_entry_is_leased_before_it_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another process evicting everything it can while this one checks an entry's digests
    # (its first use here) must not remove it: the entry would look damaged, and the path,
    # by then another process's fresh copy, be discarded under that process's read.
    store, refs = _store(tmp_path)
    cache_dir = str(tmp_path / "cache")
    cache = SplitCache(cache_dir, 1 << 30)
    entry = cache.fetch(store, store.uri, refs[0])
    splitcache._verified.clear()  # as in a process that has not used the entry yet
    splitcache.entrywatch.forget(entry)
    digest = splitcache._digest
    evicted: list[int] = []

    def evict_then_digest(path: str) -> str:
        if not evicted:
            evicted.append(SplitCache(cache_dir, 0).evict())
        return digest(path)

    monkeypatch.setattr(splitcache, "_digest", evict_then_digest)
    assert cache.cached(store.uri, refs[0]) == entry
    assert len(evicted) == 1
    assert evicted[0] > 0  # the eviction ran and had to keep the checked entry
    assert tantivy.Index.open(entry).searcher().num_docs == 2


def test_placing_outlasts_a_path_other_processes_keep_filling_and_emptying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A tiny cache shared by busy processes: each time this download finds the entry's path
    # taken, the copy there is evicted before it can be leased, and another process places
    # a new one. The download keeps going until it adopts a copy (or places its own).
    store, refs = _store(tmp_path)
    cache_dir = str(tmp_path / "cache")
    cache = SplitCache(cache_dir, 1 << 30)
    entry = cache.fetch(store, store.uri, refs[0])  # another process's copy, in place
    take_lease = splitcache._take_lease
    rounds: list[str] = []

    def evicted_first(path: str) -> int | None:
        if len(rounds) < 12:
            rounds.append(path)
            return None  # gone before the lock (and replaced: the path stays taken)
        return take_lease(path)

    monkeypatch.setattr(splitcache, "_take_lease", evicted_first)
    got, lease = cache._download(store, store.uri, refs[0])
    try:
        assert got == entry
        assert rounds == [entry] * 12
        assert os.fstat(lease).st_ino == os.stat(entry).st_ino  # the lease is on the entry
    finally:
        os.close(lease)
    assert [n for n in os.listdir(cache_dir) if n.startswith(".tmp-")] == []
    assert tantivy.Index.open(entry).searcher().num_docs == 2


@pytest.mark.parametrize("damage", ["truncate", "drop_record", "drop_file"])
def test_a_damaged_entry_is_fetched_again(tmp_path: Path, damage: str) -> None:
    store, refs = _store(tmp_path)
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    entry = cache.fetch(store, store.uri, refs[0])
    store_file = next(n for n in os.listdir(entry) if n.endswith(".store"))
    good = Path(entry, store_file).read_bytes()
    if damage == "truncate":
        Path(entry, store_file).write_bytes(good[:-3])
    elif damage == "drop_record":
        os.remove(os.path.join(entry, splitcache.ENTRY_RECORD))
    else:
        os.remove(os.path.join(entry, store_file))
    assert cache.cached(store.uri, refs[0]) is None  # not trusted
    again = cache.fetch(store, store.uri, refs[0])
    assert again == entry
    assert Path(again, store_file).read_bytes() == good
    assert tantivy.Index.open(again).searcher().num_docs == 2


def test_a_split_whose_size_disagrees_with_the_log_is_refused(tmp_path: Path) -> None:
    store, refs = _store(tmp_path)
    wrong = SplitRef(refs[0].path, refs[0].size + 1)
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    with pytest.raises(CorruptFileError, match=refs[0].path):
        cache.fetch(store, store.uri, wrong)
    assert os.listdir(cache.directory) == []


def test_default_cache_directory_is_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv(splitcache.CACHE_DIR_ENV, raising=False)
    directory = default_cache_dir()
    assert directory.startswith(str(tmp_path))
    assert str(os.getuid()) in os.path.basename(directory)  # one per user
    store, refs = _store(tmp_path)
    SplitCache(directory, 1 << 30).fetch(store, store.uri, refs[0])
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    os.chmod(directory, 0o755)  # e.g. created by an older version
    SplitCache(directory, 1 << 30).fetch(store, store.uri, refs[1])
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert parse_read({}).cache_directory == directory


def test_a_new_configured_cache_directory_is_private(tmp_path: Path) -> None:
    store, refs = _store(tmp_path)
    directory = tmp_path / "configured" / "cache"
    SplitCache(str(directory), 1 << 30).fetch(store, store.uri, refs[0])
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700


def test_the_cache_is_walked_once_while_its_total_stays_under_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, refs = _store(tmp_path)
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    walks = []
    listdir = os.listdir

    def counted(path: Any = ".") -> list[str]:
        if os.path.abspath(os.fspath(path)) == os.path.abspath(cache.directory):
            walks.append(path)  # every walk lists the cache directory once
        return listdir(path)

    monkeypatch.setattr(os, "listdir", counted)
    for ref in refs:
        cache.fetch(store, store.uri, ref)
    assert len(walks) == 1  # the first fetch walked; the others added to the running total
    monkeypatch.setattr(splitcache, "REWALK_SECONDS", 0.0)
    monkeypatch.setattr(splitcache, "WALK_SHARE", 0.0)  # not 50 times the last walk either
    cache.fetch(store, "file:///elsewhere", refs[0])  # the total is stale now: walked again
    assert len(walks) == 2


def test_the_environment_names_the_default_cache_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = tmp_path / "mine"
    monkeypatch.setenv(splitcache.CACHE_DIR_ENV, str(chosen))
    assert default_cache_dir() == str(chosen)
    assert parse_read({}).cache_directory == str(chosen)
    store, refs = _store(tmp_path)
    SplitCache(default_cache_dir(), 1 << 30).fetch(store, store.uri, refs[0])
    assert stat.S_IMODE(os.stat(chosen).st_mode) == 0o700
    assert len(os.listdir(chosen)) == 1


_READ_ELSEWHERE = """
import pickle, sys
from indextables.search.splits.splitcache import SplitCache, SplitRef
from indextables.storage import LocalStore

with open(sys.argv[1], "rb") as planned:
    read = pickle.load(planned)
store = LocalStore(sys.argv[2])
ref = SplitRef(sys.argv[3], int(sys.argv[4]))
print(SplitCache(read.cache_directory, read.cache_max_bytes).fetch(store, store.uri, ref))
"""


@pytest.mark.parametrize("chosen_by", ["environment", "tmpdir"])
def test_a_read_planned_in_one_process_caches_where_the_reading_process_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chosen_by: str
) -> None:
    # A Spark driver plans the read (its cache default: A) and pickles the options to an
    # executor whose environment names another default (B): the executor caches in B.
    store, refs = _store(tmp_path)
    planner, reader = tmp_path / "driver", tmp_path / "executor"
    for directory in (planner, reader):
        directory.mkdir()
    monkeypatch.setenv(splitcache.CACHE_DIR_ENV, str(planner / "cache"))
    planned = tmp_path / "planned.pickle"
    planned.write_bytes(pickle.dumps(parse_read({})))
    env = {**os.environ, "TMPDIR": str(reader)}
    if chosen_by == "environment":
        env[splitcache.CACHE_DIR_ENV] = str(reader / "cache")
        expected = reader / "cache"
    else:
        del env[splitcache.CACHE_DIR_ENV]
        expected = reader / f"indextables-split-cache-{os.getuid()}"
    args = [str(planned), str(store.root), refs[0].path, str(refs[0].size)]
    done = subprocess.run(
        [sys.executable, "-c", _READ_ELSEWHERE, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    entry = Path(done.stdout.strip())
    assert entry.parent == expected
    assert (entry / "meta.json").is_file()
    assert sorted(os.listdir(planner)) == []  # nothing under the planner's default
    # A configured directory is used as given in every process.
    configured = str(tmp_path / "configured")
    chosen = parse_read({"spark.indextables.cache.directoryPath": configured})
    assert pickle.loads(pickle.dumps(chosen)).cache_directory == configured


def test_this_test_session_has_a_private_cache_directory() -> None:
    # conftest.py (tests/privatecache.py) gives each session its own directory, so no test
    # reads or fills the user's default cache.
    users = os.path.join(tempfile.gettempdir(), f"indextables-split-cache-{os.getuid()}")
    assert os.environ.get(splitcache.CACHE_DIR_ENV)
    assert default_cache_dir() != users
    assert parse_read({}).cache_directory == default_cache_dir()
