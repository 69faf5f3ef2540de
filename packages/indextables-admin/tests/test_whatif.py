"""The recording overlay: reads fall through, writes and deletes never reach the base."""

from pathlib import Path

import pytest

from indextables.admin.whatif import RecordingStore
from indextables.protocol.errors import ObjectExistsError, ObjectNotFoundError
from indextables.storage import open_store


@pytest.fixture
def base(tmp_path: Path) -> object:
    store = open_store(str(tmp_path))
    store.put("a/1", b"one")
    store.put("a/2", b"two")
    store.put("b/3", b"three")
    return store


def test_reads_fall_through(base: object) -> None:
    overlay = RecordingStore(base)  # type: ignore[arg-type]
    assert overlay.get("a/1") == b"one"
    assert overlay.get_range("b/3", 1, 3) == b"hr"
    assert overlay.head("a/2").size == 3
    assert [i.key for i in overlay.list("a/")] == ["a/1", "a/2"]
    assert overlay.uri == base.uri  # type: ignore[attr-defined]


def test_deletes_are_recorded_not_applied(base: object) -> None:
    overlay = RecordingStore(base)  # type: ignore[arg-type]
    overlay.delete_many(["a/2", "b/3"])
    assert overlay.deleted_keys == ("a/2", "b/3")
    assert [i.key for i in overlay.list()] == ["a/1"]
    with pytest.raises(ObjectNotFoundError):
        overlay.get("a/2")
    assert base.get("a/2") == b"two"  # type: ignore[attr-defined]


def test_writes_stay_in_the_overlay(base: object) -> None:
    overlay = RecordingStore(base)  # type: ignore[arg-type]
    overlay.put_if_absent("c/4", b"four")
    with pytest.raises(ObjectExistsError):
        overlay.put_if_absent("a/1", b"again")
    with pytest.raises(ObjectExistsError):
        overlay.put_if_absent("c/4", b"again")
    assert overlay.get("c/4") == b"four"
    assert [i.key for i in overlay.list()] == ["a/1", "a/2", "b/3", "c/4"]
    with pytest.raises(ObjectNotFoundError):
        base.head("c/4")  # type: ignore[attr-defined]
    overlay.delete("c/4")  # an overlay-only object is not a deletion of the base
    assert overlay.deleted_keys == ()


def test_put_after_delete_is_visible(base: object) -> None:
    overlay = RecordingStore(base)  # type: ignore[arg-type]
    overlay.delete("a/1")
    overlay.put_if_absent("a/1", b"new")
    assert overlay.get("a/1") == b"new"
    assert [i.key for i in overlay.list("a/")] == ["a/1", "a/2"]
