"""A split footer is read only within sane, bounded ranges, whatever the log or the tail says.

The offsets come from the log and the lengths from the file's last bytes; a
damaged value must give a CorruptFileError naming the split, never a read of
gigabytes (a MemoryError, or a process killed by its memory limit).
"""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Any

import pytest
import tantivy

from indextables.protocol.errors import CorruptFileError
from indextables.protocol.splitbundle import (
    MAX_FOOTER_BYTES,
    read_split_footer,
    write_split_bundle,
)
from indextables.storage import LocalStore

KEY = "part/a.split"


class _CountingStore:
    """A real local store that records every ranged read it is asked for."""

    def __init__(self, root: Path) -> None:
        self.inner = LocalStore(root)
        self.ranges: list[tuple[int, int]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get_range(self, key: str, start: int, end: int) -> bytes:
        self.ranges.append((start, end))
        data: bytes = self.inner.get_range(key, start, end)
        return data


def _split_bytes(tmp_path: Path) -> tuple[bytes, int]:
    schema = tantivy.SchemaBuilder().add_text_field("body", stored=True).build()
    source = tmp_path / "index"
    source.mkdir()
    index = tantivy.Index(schema, path=str(source))
    writer = index.writer(15_000_000, 1)
    for i in range(30):
        writer.add_document(tantivy.Document(body=f"doc {i}"))
    writer.commit()
    writer.wait_merging_threads()
    buffer = io.BytesIO()
    footer = write_split_bundle(source, buffer)
    return buffer.getvalue(), footer.footer_start_offset


def _store(tmp_path: Path, data: bytes) -> _CountingStore:
    store = _CountingStore(tmp_path / "table")
    store.inner.put(KEY, data)
    return store


def test_the_true_range_reads_the_footer(tmp_path: Path) -> None:
    data, start = _split_bytes(tmp_path)
    store = _store(tmp_path, data)
    footer = read_split_footer(store, KEY, footer_start_offset=start, footer_end_offset=len(data))
    assert (footer.footer_start_offset, footer.footer_end_offset) == (start, len(data))
    assert store.ranges == [(start, len(data))]


@pytest.mark.parametrize(
    "declared",
    [
        lambda start, size: (start, start + (2 << 30)),  # a 2 GiB footer
        lambda start, size: (0, MAX_FOOTER_BYTES + 1),
        lambda start, size: (size, size),  # empty
        lambda start, size: (size + 10, size),  # reversed
        lambda start, size: (-5, size),
    ],
    ids=["2GiB", "over-the-maximum", "empty", "reversed", "negative"],
)
def test_a_hostile_declared_range_is_refused_before_any_read(tmp_path: Path, declared: Any) -> None:
    data, start = _split_bytes(tmp_path)
    store = _store(tmp_path, data)
    first, end = declared(start, len(data))
    with pytest.raises(CorruptFileError, match=KEY):
        read_split_footer(store, KEY, footer_start_offset=first, footer_end_offset=end)
    assert store.ranges == []


def test_a_declared_end_beyond_the_file_is_corrupt(tmp_path: Path) -> None:
    data, start = _split_bytes(tmp_path)
    store = _store(tmp_path, data)
    with pytest.raises(CorruptFileError, match=f"{KEY}.*before the footer end"):
        read_split_footer(store, KEY, footer_start_offset=start, footer_end_offset=len(data) + 999)


@pytest.mark.parametrize("length", [0xFFFFFFFF, 1 << 30, MAX_FOOTER_BYTES])
def test_hostile_tail_lengths_read_nothing_beyond_the_file(tmp_path: Path, length: int) -> None:
    data, _ = _split_bytes(tmp_path)
    hotcache = bytearray(data)
    struct.pack_into("<I", hotcache, len(hotcache) - 4, length)
    store = _store(tmp_path, bytes(hotcache))
    with pytest.raises(CorruptFileError, match=KEY):
        read_split_footer(store, KEY)
    assert all(0 <= a <= b <= len(data) for a, b in store.ranges), store.ranges


def test_a_hostile_meta_length_reads_nothing_beyond_the_file(tmp_path: Path) -> None:
    data, _ = _split_bytes(tmp_path)
    (hotcache_length,) = struct.unpack_from("<I", data, len(data) - 4)
    broken = bytearray(data)
    struct.pack_into("<I", broken, len(data) - 8 - hotcache_length, 0xFFFFFFF0)
    store = _store(tmp_path, bytes(broken))
    with pytest.raises(CorruptFileError, match=KEY):
        read_split_footer(store, KEY)
    assert all(0 <= a <= b <= len(data) for a, b in store.ranges), store.ranges


def _add(path: str, size: int, start: int, end: int) -> Any:
    from indextables.protocol.actions import AddAction

    return AddAction(
        path,
        {},
        size,
        1,
        True,
        footer_start_offset=start,
        footer_end_offset=end,
        has_footer_offsets=True,
    )


def test_validate_checks_each_footer_range_and_parse(tmp_path: Path, schema: Any) -> None:
    from indextables.protocol import create_table

    data, start = _split_bytes(tmp_path)
    root = tmp_path / "table"
    table = create_table(str(root), schema=schema)
    store = LocalStore(root)
    for name in ("good", "huge", "beyond", "garbage"):
        store.put(f"{name}.split", data if name != "garbage" else b"g" * len(data))
    size = len(data)
    table.commit(adds=[_add("good.split", size, start, size)])
    assert table.validate().ok, table.validate().problems
    table.commit(
        adds=[
            _add("huge.split", size, start, start + (2 << 30)),
            _add("beyond.split", size, size - 3, size + 100),
            _add("garbage.split", size, start, size),
        ]
    )
    problems = table.validate().problems
    assert not table.validate().ok
    for name in ("huge", "beyond", "garbage"):
        assert any(p.startswith(f"{name}.split: footer") for p in problems), (name, problems)
    assert not any(p.startswith("good.split") for p in problems), problems
