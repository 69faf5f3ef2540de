"""The one contract every store keeps: local, memory, moto, SeaweedFS and Azurite.

Each test runs on every backend (see conftest.BACKENDS) against a fresh,
empty location; the servers are real processes started by the harness.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from indextables.protocol.errors import ObjectExistsError, ObjectNotFoundError, ObjectStoreError
from indextables.protocol.store import ObjectStore
from indextables.storage import InvalidKeyError, StorageError
from indextables.storage.testing import StoreLocation, race_put_if_absent


def test_store_satisfies_the_protocol(store: ObjectStore) -> None:
    assert isinstance(store, ObjectStore)
    assert "://" in store.uri


def test_put_then_get_returns_the_bytes_and_put_replaces(store: ObjectStore) -> None:
    store.put("dir/object.bin", b"first")
    assert store.get("dir/object.bin") == b"first"
    store.put("dir/object.bin", b"second, longer")
    assert store.get("dir/object.bin") == b"second, longer"


def test_empty_object_round_trips(store: ObjectStore) -> None:
    store.put_if_absent("empty", b"")
    assert store.get("empty") == b""
    assert store.head("empty").size == 0


@pytest.mark.parametrize("operation", ["get", "get_range", "head"])
def test_missing_key_raises_not_found(store: ObjectStore, operation: str) -> None:
    calls = {
        "get": lambda: store.get("missing/key.json"),
        "get_range": lambda: store.get_range("missing/key.json", 0, 4),
        "head": lambda: store.head("missing/key.json"),
    }
    with pytest.raises(ObjectNotFoundError, match=r"missing/key\.json") as caught:
        calls[operation]()
    assert isinstance(caught.value, FileNotFoundError)
    assert isinstance(caught.value, StorageError)


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (0, 4, b"0123"),
        (3, 7, b"3456"),
        (8, 100, b"89"),
        (10, 20, b""),
        (5, 5, b""),
        (0, 10, b"0123456789"),
    ],
)
def test_get_range_returns_the_half_open_slice(
    store: ObjectStore, start: int, end: int, expected: bytes
) -> None:
    store.put("range.bin", b"0123456789")
    assert store.get_range("range.bin", start, end) == expected


def test_get_range_rejects_inverted_ranges(store: ObjectStore) -> None:
    store.put("range.bin", b"0123456789")
    with pytest.raises(ValueError, match=r"\[5, 2\)"):
        store.get_range("range.bin", 5, 2)


def test_head_reports_size_and_a_recent_time(store: ObjectStore) -> None:
    import time

    store.put("sized.bin", b"x" * 1234)
    info = store.head("sized.bin")
    assert (info.key, info.size) == ("sized.bin", 1234)
    assert abs(info.last_modified_ms - time.time() * 1000) < 120_000


def test_put_if_absent_creates_once_and_keeps_the_first_content(store: ObjectStore) -> None:
    store.put_if_absent("_transaction_log/00000000000000000001.json", b"winner")
    with pytest.raises(ObjectExistsError, match=r"00000000000000000001\.json") as caught:
        store.put_if_absent("_transaction_log/00000000000000000001.json", b"loser")
    assert isinstance(caught.value, FileExistsError)
    assert store.get("_transaction_log/00000000000000000001.json") == b"winner"


def test_list_yields_keys_in_order_under_a_prefix(store: ObjectStore) -> None:
    keys = ["b/2", "a/1", "a/10", "a/2", "ab", "a/sub/x", "c"]
    for key in keys:
        store.put(key, key.encode())
    assert [info.key for info in store.list()] == sorted(keys)
    assert [info.key for info in store.list("a/")] == ["a/1", "a/10", "a/2", "a/sub/x"]
    assert [info.key for info in store.list("a/1")] == ["a/1", "a/10"]
    assert [info.key for info in store.list("a")] == ["a/1", "a/10", "a/2", "a/sub/x", "ab"]
    assert [info.size for info in store.list("b/")] == [3]
    assert list(store.list("nothing/")) == []


def test_list_pages_through_more_than_a_thousand_keys(store: ObjectStore) -> None:
    keys = [f"many/{index:05d}" for index in range(1003)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda key: store.put(key, b"."), keys))
    assert [info.key for info in store.list("many/")] == keys
    store.delete_many(keys)
    assert list(store.list("many/")) == []


def test_delete_removes_and_tolerates_missing_keys(store: ObjectStore) -> None:
    store.put("gone", b"1")
    store.put("kept", b"2")
    store.delete("gone")
    store.delete("gone")
    store.delete("never/existed")
    store.delete_many(["never", "kept/not-a-key", "kept"])
    store.delete_many([])
    assert list(store.list()) == []
    with pytest.raises(ObjectNotFoundError):
        store.get("gone")


@pytest.mark.parametrize(
    "key",
    ["données/été.json", "日本語/キー", "emoji 🙂/with spaces & symbols +=,;.txt", "ключ"],
)
def test_unicode_keys_round_trip_and_list(store: ObjectStore, key: str) -> None:
    store.put_if_absent(key, key.encode())
    assert store.get(key) == key.encode()
    assert [info.key for info in store.list()] == [key]
    with pytest.raises(ObjectExistsError):
        store.put_if_absent(key, b"again")


def test_unicode_keys_list_in_code_point_order(store: ObjectStore) -> None:
    keys = ["z", "é", "日", "🙂", "A", "a b"]
    for key in keys:
        store.put(key, b"k")
    assert [info.key for info in store.list()] == sorted(keys)


@pytest.mark.parametrize("key", ["", "/abs", "a//b", "a/../b", "./a", "a/", "a/.indextables-tmp-x"])
def test_invalid_keys_are_refused(store: ObjectStore, key: str) -> None:
    with pytest.raises(InvalidKeyError):
        store.put(key, b"x")


def test_large_object_round_trips_with_ranged_reads(backend: StoreLocation) -> None:
    # 5 MiB parts from 5 MiB on: 11 MiB is a 3-part multipart upload on S3.
    store = backend.open(multipart_threshold=5 << 20, multipart_part_size=5 << 20)
    data = os.urandom(11 << 20)
    store.put("large/split.bin", data)
    assert store.get("large/split.bin") == data
    assert (
        store.get_range("large/split.bin", (5 << 20) - 10, (5 << 20) + 10)
        == data[(5 << 20) - 10 : (5 << 20) + 10]
    )
    info = store.head("large/split.bin")
    assert info.size == len(data)
    if backend.name in ("moto", "seaweedfs"):
        assert info.etag is not None
        assert info.etag.endswith("-3"), f"expected a 3-part multipart etag, got {info.etag}"
    store.put_if_absent("large/unique.bin", data[: 6 << 20])
    assert store.get("large/unique.bin") == data[: 6 << 20]


def _check_race(store: ObjectStore, key: str, outcomes: dict[bytes, str]) -> None:
    assert not [o for o in outcomes.values() if o not in ("won", "exists")], outcomes
    winners = [data for data, outcome in outcomes.items() if outcome == "won"]
    assert len(winners) == 1, outcomes
    assert store.get(key) == winners[0]


# Race tests run only where the conditional put is atomic (conftest.ATOMIC): moto's
# existence check is not, and a race there once let two processes win (CI on b29d147).


def test_put_if_absent_race_between_threads_has_one_winner(atomic_backend: StoreLocation) -> None:
    backend, store = atomic_backend, atomic_backend.open()
    payloads = [f"thread-{index}".encode() for index in range(4)]
    for round_ in range(2):
        key = f"_transaction_log/race-{round_}.json"
        outcomes = race_put_if_absent(backend.uri, backend.options, key, payloads)
        _check_race(store, key, outcomes)


def test_put_if_absent_race_between_processes_has_one_winner(
    atomic_shared_backend: StoreLocation,
) -> None:
    backend, store = atomic_shared_backend, atomic_shared_backend.open()
    payloads = [f"process-{index}".encode() for index in range(3)]
    key = "_transaction_log/process-race.json"
    outcomes = race_put_if_absent(backend.uri, backend.options, key, payloads, mode="processes")
    _check_race(store, key, outcomes)


def test_errors_derive_from_the_protocol_root(store: ObjectStore) -> None:
    with pytest.raises(ObjectStoreError):
        store.get("nope")


def test_a_pickled_store_reaches_the_same_objects(store: ObjectStore) -> None:
    import pickle

    store.put("shipped", b"to an executor")
    copy = pickle.loads(pickle.dumps(store))
    assert copy.uri == store.uri
    assert copy.get("shipped") == b"to an executor"
    copy.put_if_absent("from-copy", b"back")
    assert store.get("from-copy") == b"back"


@pytest.mark.slow
def test_many_put_if_absent_races_between_threads(atomic_backend: StoreLocation) -> None:
    backend = atomic_backend
    store = backend.open()
    payloads = [f"racer-{index}".encode() for index in range(8)]
    for round_ in range(10):
        key = f"_transaction_log/{round_:020d}.json"
        _check_race(store, key, race_put_if_absent(backend.uri, backend.options, key, payloads))


@pytest.mark.slow
def test_many_put_if_absent_races_between_processes(
    atomic_shared_backend: StoreLocation,
) -> None:
    shared_backend = atomic_shared_backend
    store = shared_backend.open()
    payloads = [f"process-{index}".encode() for index in range(4)]
    for round_ in range(3):
        key = f"_transaction_log/process-{round_}.json"
        outcomes = race_put_if_absent(
            shared_backend.uri, shared_backend.options, key, payloads, mode="processes"
        )
        _check_race(store, key, outcomes)
