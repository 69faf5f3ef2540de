"""Split hotcaches: the reference's format read and re-encoded exactly; ours from the index."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
import tantivy

from indextables.protocol.errors import CorruptFileError
from indextables.protocol.hotcache import (
    EDGE_BYTES,
    WHOLE_FILE_LIMIT,
    CachedFile,
    CachedSlice,
    Hotcache,
    encode_hotcache,
    parse_hotcache,
)
from indextables.protocol.splitbundle import parse_split_footer, write_split_bundle


def _footer(data: bytes) -> tuple[dict[str, tuple[int, int]], bytes]:
    (hot_len,) = struct.unpack_from("<I", data, len(data) - 4)
    meta_at = len(data) - 8 - hot_len
    (meta_len,) = struct.unpack_from("<I", data, meta_at)
    footer = parse_split_footer(data, footer_start_offset=meta_at - meta_len)
    return dict(footer.files), footer.hotcache


def _check_against_bundle(cache: Hotcache, files: dict[str, tuple[int, int]], data: bytes) -> None:
    for name, length in cache.file_lengths:
        start, end = files[name]
        assert length == end - start, name
    for name, cached in cache.files:
        start, _ = files[name]
        for piece in cached.slices:
            copy = cached.data[piece.address : piece.address + piece.stop - piece.start]
            assert copy == data[start + piece.start : start + piece.stop], name


def test_every_golden_hotcache_reads_and_re_encodes_exactly(golden_root: Path) -> None:
    splits = sorted(golden_root.rglob("*.split"))
    assert len(splits) >= 100
    for split in splits:
        data = split.read_bytes()
        files, raw = _footer(data)
        cache = parse_hotcache(raw, path=str(split))
        assert encode_hotcache(cache) == raw, split
        # Every index file has its length; Quickwit's split_fields is not an index file.
        assert {n for n, _ in cache.file_lengths} == set(files) - {"split_fields"}
        assert cache.cached("meta.json") is not None
        _check_against_bundle(cache, files, data)


def _index(path: Path, docs: int, body: str) -> None:
    schema = (
        tantivy.SchemaBuilder()
        .add_integer_field("id", stored=True, indexed=True, fast=True)
        .add_text_field("body", stored=True)
        .build()
    )
    path.mkdir()
    index = tantivy.Index(schema, path=str(path))
    writer = index.writer(15_000_000, 1)
    for i in range(docs):
        writer.add_document(tantivy.Document(id=i, body=f"{body} {i}"))
    writer.commit()
    writer.wait_merging_threads()


@pytest.mark.parametrize(("docs", "body"), [(5, "small"), (3000, "large " * 40)])
def test_our_bundles_carry_a_hotcache_of_the_index_files(
    tmp_path: Path, docs: int, body: str
) -> None:
    source = tmp_path / "index"
    _index(source, docs, body)
    (source / "extra-rows.arrow").write_bytes(b"not an index file" * 2000)
    buffer = io.BytesIO()
    footer = write_split_bundle(source, buffer)
    data = buffer.getvalue()
    files, raw = _footer(data)
    assert raw == footer.hotcache
    cache = parse_hotcache(raw)
    names = {n for n, _ in cache.file_lengths}
    assert names == set(files) - {"extra-rows.arrow", "split_fields"}
    assert {"meta.json", ".managed.json"} < names
    assert any(n.endswith(".store") for n in names)
    _check_against_bundle(cache, files, data)
    for name, cached in cache.files:
        if cached.length <= WHOLE_FILE_LIMIT:
            assert cached.read(0, cached.length) == data[slice(*files[name])]
        else:
            assert [(s.start, s.stop) for s in cached.slices] == [
                (0, EDGE_BYTES),
                (cached.length - EDGE_BYTES, cached.length),
            ]
            assert cached.read(EDGE_BYTES - 1, EDGE_BYTES + 1) is None
    big = [c for _, c in cache.files if c.length > WHOLE_FILE_LIMIT]
    assert bool(big) == (docs > 5)  # the large index exercises the edge-only path


def test_cached_file_reads_only_within_one_slice() -> None:
    cached = CachedFile(100, (CachedSlice(0, 4, 0), CachedSlice(90, 100, 4)), b"abcd0123456789")
    assert cached.read(1, 3) == b"bc"
    assert cached.read(92, 95) == b"234"
    assert cached.read(3, 5) is None
    assert cached.read(50, 60) is None


def _sample() -> bytes:
    cache = Hotcache(
        (("meta.json", 3), ("a.idx", 10)),
        (("meta.json", CachedFile(3, (CachedSlice(0, 3, 0),), b"{ }")),),
    )
    return encode_hotcache(cache)


@pytest.mark.parametrize(
    ("damage", "fragment"),
    [
        (lambda d: b"\x00" + d[1:], "magic"),
        (lambda d: d[:8], "too short"),
        (lambda d: d[:10], "too short"),
        (lambda d: d[:12] + b"\xff" + d[13:], "ends inside"),
        (lambda d: d[:8] + struct.pack("<I", 5000) + d[12:], "header exceeds"),
        (lambda d: d[:-8] + struct.pack("<Q", 999), "claims"),
        (lambda d: d[:-3], "too short|claims|header|range|trailing|ends"),
    ],
)
def test_damaged_hotcaches_are_corrupt_files(damage: object, fragment: str) -> None:
    data = _sample()
    assert parse_hotcache(data).cached("meta.json") is not None
    with pytest.raises(CorruptFileError, match=fragment):
        parse_hotcache(damage(data))  # type: ignore[operator]
