"""Progress from store traffic: the observed store forwards and reports each call."""

from pathlib import Path

import pytest

from indextables.admin.observe import CallCounter, ObservedStore
from indextables.protocol.errors import ObjectNotFoundError
from indextables.storage import open_store


def test_observed_store_forwards_and_reports(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []
    store = ObservedStore(open_store(str(tmp_path)), lambda m, k: seen.append((m, k)))
    store.put("a.split", b"x")
    store.put_if_absent("b.split", b"yy")
    assert store.head("b.split").size == 2
    with pytest.raises(ObjectNotFoundError):
        store.head("missing.split")
    assert store.get("a.split") == b"x"
    assert [i.key for i in store.list()] == ["a.split", "b.split"]
    store.delete_many(["a.split", "b.split"])
    assert seen == [
        ("put", "a.split"),
        ("put", "b.split"),
        ("head", "b.split"),
        ("head", "missing.split"),
        ("delete", "a.split"),
        ("delete", "b.split"),
    ]
    assert list(store.list()) == []


def test_call_counter_counts_one_kind() -> None:
    reports: list[tuple[str, int, int | None]] = []
    counter = CallCounter(
        lambda p, d, t: reports.append((p, d, t)),
        "splits",
        "head",
        keys=lambda k: k.endswith(".split"),
    )
    counter.total = 2
    for method, key in [
        ("head", "a.split"),
        ("head", "x.json"),
        ("put", "b.split"),
        ("head", "b.split"),
    ]:
        counter(method, key)
    assert reports == [("splits", 1, 2), ("splits", 2, 2)]
