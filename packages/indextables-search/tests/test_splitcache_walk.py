"""The split cache's walks: bounded in number (low-water mark, time share) and in cost
(one listing and O(1) stats per entry), while eviction stays LRU and never takes a lease.

Walks are counted as listings of the cache directory (every walk lists it once), so
these tests say nothing about the machine's speed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from indextables.search.splits import splitcache
from indextables.search.splits.splitcache import ENTRY_RECORD, SplitCache, SplitRef
from indextables.storage import LocalStore

GOLDEN = (
    Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4/04_partitioned"
)


def _entry(directory: Path, number: int, *, files: int = 3, size: int = 100,
           recorded: bool = True, mtime: float | None = None) -> str:  # fmt: skip
    """A fake cache entry; ``recorded=False`` writes the record of an older version."""
    entry = directory / f"{number:032x}"
    entry.mkdir(mode=0o700)
    names = {f"f{i}.idx": size for i in range(files)}
    for name, length in names.items():
        (entry / name).write_bytes(b"x" * length)
    record: dict[str, object] = {
        "version": 2, "table": "file:///t", "split": f"s{number}.split", "size": 1,
        "files": names, "sha256": dict.fromkeys(names, "0" * 64),
    }  # fmt: skip
    text = json.dumps(record)
    if recorded:  # the entry's size, the record included, first
        total = sum(names.values())
        while total != sum(names.values()) + len(text):
            total = sum(names.values()) + len(text)
            text = json.dumps({"bytes": total, **record})
    (entry / ENTRY_RECORD).write_text(text)
    stamp = 1_000_000_000 + number if mtime is None else mtime
    os.utime(entry, (stamp, stamp))
    return str(entry)


def _du(path: str) -> int:
    """Bytes of every file under ``path`` (the truth the cache's accounting must match)."""
    return sum(
        os.path.getsize(os.path.join(root, name))
        for root, _, names in os.walk(path)
        for name in names
    )


def _cache_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "cache"
    directory.mkdir(mode=0o700)
    return directory


class _Calls:
    """Counts listings of the cache directory (walks), other listings and stats."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, directory: Path) -> None:
        self.walks = 0
        self.other_listings = 0
        self.stats = 0
        self.on_walk: list[Any] = []
        listdir, stat_, lstat = os.listdir, os.stat, os.lstat
        root = os.path.abspath(directory)

        def counted_listdir(path: Any = ".") -> list[str]:
            if os.path.abspath(os.fspath(path)) == root:
                self.walks += 1
                for hook in self.on_walk:
                    hook()
            else:
                self.other_listings += 1
            return listdir(path)

        def counted_stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            self.stats += 1
            return stat_(path, *args, **kwargs)

        def counted_lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            self.stats += 1
            return lstat(path, *args, **kwargs)

        monkeypatch.setattr(os, "listdir", counted_listdir)
        monkeypatch.setattr(os, "stat", counted_stat)
        monkeypatch.setattr(os, "lstat", counted_lstat)

    def reset(self) -> None:
        self.walks = self.other_listings = self.stats = 0


@pytest.fixture(autouse=True)
def _no_time_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the cap drives walks here, whatever the machine's speed (a test below sets its own).
    monkeypatch.setattr(splitcache, "REWALK_SECONDS", 1e9)


def test_a_cache_at_its_cap_is_walked_once_per_tenth_of_the_cap_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = _cache_dir(tmp_path)
    for number in range(2000):
        _entry(directory, number, files=1)
    cap = _du(str(directory))  # exactly full
    cache = SplitCache(str(directory), cap)
    calls = _Calls(monkeypatch, directory)
    for number in range(2000, 2200):
        added = _entry(directory, number, files=1, mtime=2_000_000_000 + number)
        cache._account(added, _du(added))
    # 200 additions of about a two-thousandth of the cap each: the first walks (no total
    # yet) and evicts to 90 %; the next tenth of the cap takes 200 more additions.
    assert 1 <= calls.walks <= 2
    assert _du(str(directory)) <= cap  # the cap holds
    assert splitcache._totals[str(directory)].bytes == _du(str(directory))
    newest = [f"{n:032x}" for n in range(2000, 2200)]
    assert set(newest) <= set(os.listdir(directory))  # the least recently used went


def test_a_walk_lists_the_cache_once_and_stats_each_entry_a_constant_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = _cache_dir(tmp_path)
    for number in range(300):
        _entry(directory, number, files=6)
    calls = _Calls(monkeypatch, directory)
    total = SplitCache(str(directory), 1 << 40).evict()
    walks, listings, stats = calls.walks, calls.other_listings, calls.stats
    assert total == _du(str(directory))
    assert walks == 1
    assert listings == 0  # no entry is listed: its record holds its size
    assert stats <= 300  # one per entry, not one per file (seven files each)


def test_eviction_takes_the_least_recently_used_down_to_the_low_water_mark_never_a_lease(
    tmp_path: Path,
) -> None:
    directory = _cache_dir(tmp_path)
    entries = [_entry(directory, number) for number in range(20)]
    sizes = {entry: _du(entry) for entry in entries}
    total = sum(sizes.values())
    cap = total - 2 * sizes[entries[0]]  # over the cap by two entries
    lease = splitcache._take_lease(entries[0])  # the oldest is being read
    assert lease is not None
    try:
        after = SplitCache(str(directory), cap).evict()
    finally:
        os.close(lease)
    low = int(cap * 0.9)  # the low-water mark: 90 % of the cap
    expected, remaining = [], total
    for entry in entries[1:]:  # oldest first, the leased one skipped
        if remaining <= low:
            break
        expected.append(entry)
        remaining -= sizes[entry]
    assert len(expected) > 2  # further than the cap alone would go
    assert os.path.isdir(entries[0])
    assert [e for e in entries if not os.path.exists(e)] == expected
    assert after == remaining == _du(str(directory))
    assert after <= low


def test_entries_of_an_older_version_are_sized_by_their_files_once_and_evicted_correctly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = _cache_dir(tmp_path)
    old = [_entry(directory, number, files=4, recorded=False) for number in range(10)]
    new = [_entry(directory, number, files=4) for number in range(10, 20)]
    calls = _Calls(monkeypatch, directory)
    everything = SplitCache(str(directory), 1 << 40)
    assert everything.evict() == _du(str(directory))
    assert calls.other_listings == 10  # each old entry listed to be sized
    calls.reset()
    assert everything.evict() == _du(str(directory))
    assert calls.walks == 1
    assert calls.other_listings == 0  # sized once in this process
    half = sum(_du(entry) for entry in old[5:] + new)
    after = SplitCache(str(directory), int(half / 0.9) + 1).evict()
    assert [e for e in old + new if not os.path.exists(e)] == old[:5]
    assert after == half == _du(str(directory))


def test_time_driven_walks_take_a_bounded_share_of_the_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(splitcache, "REWALK_SECONDS", 30.0)
    directory = _cache_dir(tmp_path)
    for number in range(5):
        _entry(directory, number)
    clock = [0.0]
    monkeypatch.setattr(splitcache.time, "monotonic", lambda: clock[0])
    calls = _Calls(monkeypatch, directory)

    def slow_walk() -> None:
        clock[0] += 10.0  # a walk of a huge cache: 10 s

    calls.on_walk.append(slow_walk)
    cache = SplitCache(str(directory), 1 << 40)
    extra = str(directory / "extra")
    cache._account(extra, 1)
    assert calls.walks == 1  # the first addition: ended at 10 s, after 10 s
    clock[0] = 100.0  # past REWALK_SECONDS, but not 50 times the walk's 10 s
    cache._account(extra, 1)
    clock[0] = 509.0
    cache._account(extra, 1)
    assert calls.walks == 1
    clock[0] = 511.0
    cache._account(extra, 1)
    assert calls.walks == 2


def test_making_room_on_a_full_disk_walks_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = _cache_dir(tmp_path)
    entries = [_entry(directory, number) for number in range(10)]
    size = _du(entries[0])
    total = _du(str(directory))
    calls = _Calls(monkeypatch, directory)
    assert SplitCache(str(directory), 1 << 40)._make_room(size)
    assert calls.walks == 1
    assert total - _du(str(directory)) >= 2 * size
    assert not os.path.exists(entries[0])
    assert not os.path.exists(entries[1])
    assert os.path.isdir(entries[2])


def test_a_fetched_entry_records_its_true_size(tmp_path: Path) -> None:
    root = tmp_path / "table"
    shutil.copytree(GOLDEN, root)
    split = sorted(root.glob("date=*/*.split"))[0]
    store = LocalStore(str(root))
    ref = SplitRef(str(split.relative_to(root)), split.stat().st_size)
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    entry = cache.fetch(store, store.uri, ref)
    record = Path(entry, ENTRY_RECORD)
    text = record.read_text()
    assert text.startswith('{"bytes": ')  # read from the record's head
    assert json.loads(text)["bytes"] == _du(entry) > ref.size // 2
    assert splitcache._totals[cache.directory].bytes == _du(cache.directory)
    # A record whose size disagrees with its files is not trusted (a planted or damaged one).
    wrong = text.replace(f'"bytes": {_du(entry)}', f'"bytes": {_du(entry) + 1}', 1)
    assert wrong != text
    record.write_text(wrong)
    assert cache.cached(store.uri, ref) is None
