"""The local split cache: fetch once, unbundle atomically, evict least recently used."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import tantivy

from indextables.pyspark.splitcache import SplitCache, SplitRef
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
