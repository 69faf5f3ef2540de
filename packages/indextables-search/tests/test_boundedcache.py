"""``boundedcache.BoundedCache``: a locked LRU by entry count."""

from __future__ import annotations

import pickle
import threading

import pytest

from indextables.search.boundedcache import BoundedCache


def test_keeps_the_most_recently_used_entries() -> None:
    cache: BoundedCache[str, int] = BoundedCache(max_entries=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now newer than "b"
    cache.put("c", 3)
    assert "b" not in cache
    assert (cache.get("a"), cache.get("c"), len(cache)) == (1, 3, 2)


def test_put_of_a_kept_key_refreshes_it() -> None:
    cache: BoundedCache[str, int] = BoundedCache(max_entries=2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    cache.put("c", 3)
    assert "b" not in cache
    assert cache.get("a") == 10


def test_get_pop_clear() -> None:
    cache: BoundedCache[int, str] = BoundedCache(max_entries=4)
    assert cache.get(1) is None
    cache.put(1, "one")
    cache.put(2, "two")
    assert cache.pop(1) == "one"
    assert cache.pop(1) is None
    assert 1 not in cache
    cache.clear()
    assert len(cache) == 0
    assert cache.get(2) is None


def test_evict_if_drops_matching_keys_only() -> None:
    cache: BoundedCache[tuple[int, str], int] = BoundedCache(max_entries=8)
    for i, directory in enumerate(["x", "y", "x", "z"]):
        cache.put((i, directory), i)
    assert cache.evict_if(lambda key: key[1] == "x") == 2
    assert [k for k in [(0, "x"), (1, "y"), (2, "x"), (3, "z")] if k in cache] == [
        (1, "y"),
        (3, "z"),
    ]
    assert cache.evict_if(lambda key: False) == 0


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, None])
def test_rejects_a_bad_size(bad: object) -> None:
    with pytest.raises(ValueError, match="max_entries"):
        BoundedCache(max_entries=bad)  # type: ignore[arg-type]


def test_never_holds_more_than_its_cap_under_threads() -> None:
    cache: BoundedCache[int, int] = BoundedCache(max_entries=16)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(2000):
                cache.put(offset + i % 50, i)
                cache.get(offset + (i * 7) % 50)
                if i % 97 == 0:
                    cache.evict_if(lambda key: key % 3 == 0)
                assert len(cache) <= 16
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n * 100,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cache) <= 16


def test_does_not_pickle() -> None:
    with pytest.raises(TypeError):
        pickle.dumps(BoundedCache(max_entries=1))
