"""Runs of consecutive documents (a whole-store read) decoded from a ``range``, both twins.

The kernels take a run's doc ids as a ``range`` (no Python int per document) and
``decode_parts`` hands a run over as one; the rows are those of the same doc ids
as a list, and those written (hostile documents: absent fields, unicode, empty and
70,000-character strings, NaN payloads, several values a field). Text columns
whose bytes are all ASCII skip Arrow's full UTF-8 check; a stored string that is
not UTF-8 is still refused.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import pyarrow as pa
import pytest
import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st
from test_docstore import _every_kind_schema, _ipc, _scratch, _write

from indextables.search.read.docstore import (
    BlockCache,
    DocStoreError,
    FieldSpec,
    StorePart,
    decode_parts,
    impl,
    read_store,
)
from indextables.search.read.docstore import decode as decode_module

TWINS: tuple[Literal["python"], Literal["cython"]] = ("python", "cython")
# NaN bit patterns besides the quiet one: a payload, a signalling NaN, a negative NaN.
_NAN_BITS = (0x7FF8000000000001, 0x7FF0000000000001, 0xFFF8000000000000)
_NANS = [struct.unpack("<d", struct.pack("<Q", bits))[0] for bits in _NAN_BITS]
_TEXT = st.text(st.characters(codec="utf-8"), max_size=30) | st.sampled_from(
    ["", "x" * 70_000, "é" * 5_000, "\U0001f600\x00\u2028"]
)
_F64 = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([-0.0, *_NANS])
_ROW = st.fixed_dictionaries(
    {},
    optional={
        "t": st.lists(_TEXT, min_size=1, max_size=3),
        "i": st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=3),
        "f": st.lists(_F64, min_size=1, max_size=3),
        "b": st.lists(st.booleans(), min_size=1, max_size=2),
        "by": st.lists(st.binary(max_size=200), min_size=1, max_size=2),
    },
)
_SPECS = {
    0: FieldSpec("t", "text", multi=True),
    1: FieldSpec("i", "i64", multi=True),
    3: FieldSpec("f", "f64", multi=True),
    4: FieldSpec("b", "bool", multi=True),
    6: FieldSpec("by", "bytes", multi=True),
}


def _check_ids(directory: Path) -> None:
    meta = json.loads((directory / "meta.json").read_text())
    names = [entry["name"] for entry in meta["schema"]]
    for field_id, spec in _SPECS.items():
        assert names[field_id] == spec.name


def _store(directory: Path) -> Any:
    stores = sorted(directory.glob("*.store"))
    assert len(stores) == 1  # one writer thread, one commit: one segment in doc order
    return read_store(stores[0].read_bytes())


def _f64_bits(value: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", value))[0])


def _written_column(rows: list[dict[str, list[Any]]], name: str) -> list[Any]:
    """A column as the rows were written: None where the field is absent."""
    column: list[Any] = []
    for row in rows:
        values = row.get(name)
        if values is None:
            column.append(None)
        elif name == "f":
            column.append([_f64_bits(v) for v in values])
        else:
            column.append(list(values))
    return column


def _decoded_column(batch: pa.RecordBatch, name: str) -> list[Any]:
    column = batch.column(name)
    if name != "f":
        return list(column.to_pylist())
    bits = column.flatten().view(pa.uint64()).to_pylist()
    out: list[Any] = []
    at = 0
    for cell in column.to_pylist():
        if cell is None:
            out.append(None)
            continue
        out.append(bits[at : at + len(cell)])
        at += len(cell)
    return out


@settings(max_examples=25, deadline=None)
@given(
    rows=st.lists(_ROW, min_size=1, max_size=60),
    cut=st.tuples(st.integers(0, 100), st.integers(0, 100)),
)
def test_a_run_decodes_as_its_list_and_as_written(
    rows: list[dict[str, list[Any]]],
    cut: tuple[int, int],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    directory = _write(_scratch(tmp_path_factory), rows)
    _check_ids(directory)
    store = _store(directory)
    assert store.num_docs == len(rows)
    lo = min(cut) % len(rows)
    hi = lo + max(cut) % (len(rows) - lo + 1)
    for name in TWINS:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(impl.IMPL_ENV, name)
            as_run = decode_parts([StorePart(store, range(lo, hi))], _SPECS)
            as_list = decode_parts([StorePart(store, list(range(lo, hi)))], _SPECS)
            whole = decode_parts([StorePart(store, range(store.num_docs))], _SPECS)
        assert _ipc(as_run) == _ipc(as_list)  # byte for byte: NaN payloads included
        assert as_run.num_rows == hi - lo
        for spec in _SPECS.values():
            want = _written_column(rows, spec.name)
            assert _decoded_column(whole, spec.name) == want, (name, spec.name)
            assert _decoded_column(as_run, spec.name) == want[lo:hi], (name, spec.name)


def _long_rows(count: int) -> list[dict[str, list[Any]]]:
    return [
        {
            "t": [f"row {k} " + "y" * (k % 300) + ("é" if k % 7 == 0 else "")],
            "i": [k],
            **({"f": [_NANS[k % 3]]} if k % 5 else {}),
        }
        for k in range(count)
    ]


def _builder(mod: Any, store: Any) -> Any:
    return mod.ColumnBuilder(
        [decode_module._SLOT_KIND[s.kind] for s in _SPECS.values()],
        [s.multi for s in _SPECS.values()],
        list(_SPECS),
        [s.name for s in _SPECS.values()],
        store.version,
    )


@pytest.mark.parametrize("name", TWINS)
def test_the_kernels_take_ranges_as_their_lists_in_cached_admitted_and_partial_blocks(
    tmp_path: Path, name: Literal["python", "cython"]
) -> None:
    rows = _long_rows(6000)
    directory = _write(tmp_path, rows)
    store = _store(directory)
    assert len(store.doc_starts) > 12
    mod = impl.load(name)
    cp = decode_module.checkpoints(store, mod)
    starts = store.doc_starts
    # A run across blocks 1-5, one of every other document, one inside block 7, an empty one.
    parts_ids: list[range] = [
        range(starts[1] + 3, starts[6] - 2),
        range(starts[8], starts[11], 2),
        range(starts[7] + 1, starts[7] + 2),
        range(0),
    ]
    out = []
    for ids in (parts_ids, [list(r) for r in parts_ids]):
        cache = BlockCache(max_bytes=1 << 30)
        cache.lookup_many("k", [2, 9])  # first misses: asked again, decoded whole and kept
        cache.put(("k", 4), decode_module._decompress(store, 4, mod))  # served from the cache
        builder = _builder(mod, store)
        builder.add_lz4_parts([(cp, part, "k") for part in ids], cache)
        out.append(builder.finish())
        assert len(cache) == 3
    assert out[0] == out[1]
    want = [k for r in parts_ids for k in r]
    i_rows = out[0][1]
    assert i_rows[0] == len(want)  # rows of the i64 column
    assert list(struct.unpack_from(f"<{len(want)}q", i_rows[5])) == want


@pytest.mark.parametrize("name", TWINS)
def test_a_run_outside_the_store_is_our_error(
    tmp_path: Path, name: Literal["python", "cython"]
) -> None:
    store = _store(_write(tmp_path, _long_rows(50)))
    mod = impl.load(name)
    builder = _builder(mod, store)
    with pytest.raises(DocStoreError, match="outside"):
        builder.add_lz4_parts([(decode_module.checkpoints(store, mod), range(45, 55), None)])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(impl.IMPL_ENV, name)
        with pytest.raises(DocStoreError, match="55"):
            decode_parts([StorePart(store, range(45, 56))], _SPECS)


def test_decode_parts_hands_a_run_to_the_kernels_as_a_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(_write(tmp_path, _long_rows(3000)))
    real = impl.load("cython")
    seen: list[type] = []

    class Recording:
        def __init__(self, *args: Any) -> None:
            self._builder = real.ColumnBuilder(*args)

        def add_lz4_parts(self, parts: list[tuple[Any, Any, Any]], cache: Any = None) -> None:
            seen.extend(type(ids) for _, ids, _ in parts)
            self._builder.add_lz4_parts(parts, cache)

        def finish(self, **options: Any) -> Any:
            return self._builder.finish(**options)

    proxy = SimpleNamespace(
        __name__=real.__name__,
        ColumnBuilder=Recording,
        Checkpoints=real.Checkpoints,
        NOGIL=False,  # one chunk: the recording sees the whole run
    )
    monkeypatch.setattr(decode_module, "kernels", lambda: proxy)
    got = decode_parts([StorePart(store, range(100, 2900)), StorePart(store, [5, 3, 3])], _SPECS)
    assert seen == [range, list]
    assert got.column("i").to_pylist() == [[k] for k in (*range(100, 2900), 5, 3, 3)]
    monkeypatch.setattr(decode_module, "kernels", lambda: real)
    want = decode_parts([StorePart(store, [*range(100, 2900), 5, 3, 3])], _SPECS)
    assert _ipc(got) == _ipc(want)


def test_a_run_in_threaded_chunks_equals_the_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(_write(tmp_path, _long_rows(5000)))
    parts = [StorePart(store, range(7, 4990)), StorePart(store, range(3))]
    monkeypatch.setenv(impl.IMPL_ENV, "python")
    want = decode_parts(parts, _SPECS)
    monkeypatch.setattr(decode_module, "workers", lambda threads="auto": 3)
    monkeypatch.setattr(decode_module, "THREAD_MIN_HITS", 100)
    monkeypatch.setenv(impl.IMPL_ENV, "cython")
    got = decode_parts(parts, _SPECS)
    assert _ipc(got) == _ipc(want)
    assert got.column("i").to_pylist()[:2] == [[7], [8]]


def _corrupted_text_store(tmp_path: Path, texts: list[str], marker: str) -> Any:
    """A one-segment LZ4 store of ``texts`` whose ``marker`` (stored as an LZ4 literal)
    has its first byte replaced by 0xFF: that value is no longer UTF-8."""
    index = tantivy.Index(_every_kind_schema(), path=str(tmp_path))
    writer = index.writer(50_000_000, 1)
    for text in texts:
        doc = tantivy.Document()
        doc.add_text("t", text)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    path = sorted(tmp_path.glob("*.store"))[0]
    raw = bytearray(path.read_bytes())
    at = raw.find(marker.encode())
    assert at >= 0
    assert raw.find(marker.encode(), at + 1) < 0
    raw[at] = 0xFF
    return read_store(bytes(raw))


@pytest.mark.parametrize("name", TWINS)
def test_a_string_that_is_not_utf8_is_refused_beside_ascii_ones(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = "Qzjxkvwmbp"
    texts = [f"plain ascii row {k}" for k in range(200)]
    texts[150] = marker
    store = _corrupted_text_store(tmp_path, texts, marker)
    monkeypatch.setenv(impl.IMPL_ENV, name)
    fields = {0: FieldSpec("t", "text")}
    assert decode_parts([StorePart(store, range(150))], fields).num_rows == 150
    with pytest.raises(DocStoreError, match=r"invalid UTF-8.*'t'"):
        decode_parts([StorePart(store, range(200))], fields)
    with pytest.raises(DocStoreError, match=r"invalid UTF-8.*'t'"):
        decode_parts([StorePart(store, [150])], fields)
    if name == "cython":  # threaded chunks: the ASCII chunks do not vouch for the other
        monkeypatch.setattr(decode_module, "workers", lambda threads="auto": 3)
        monkeypatch.setattr(decode_module, "THREAD_MIN_HITS", 10)
        with pytest.raises(DocStoreError, match=r"invalid UTF-8.*'t'"):
            decode_parts([StorePart(store, range(200))], fields)


def test_only_all_ascii_text_buffers_skip_the_full_check() -> None:
    text, ints = FieldSpec("t", "text"), FieldSpec("i", "i64")
    buffers = (1, 0, None, None, b"\x00\x00\x00\x00\x03\x00\x00\x00", b"abc", 1)
    assert decode_module._ascii(text, buffers)
    assert not decode_module._ascii(text, (*buffers[:5], "é".encode(), 1))
    assert not decode_module._ascii(text, (*buffers[:5], b"\xff", 1))
    assert not decode_module._ascii(ints, buffers)


@pytest.mark.parametrize("name", TWINS)
def test_strings_of_every_short_length_come_back_whole(tmp_path: Path, name: str) -> None:
    # The kernels copy short values in 8-byte words: every length 0..80, each ending a
    # document (the last one of each block is followed only by the block's doc offsets).
    texts = ["".join(chr(0x41 + (k + j) % 26) for j in range(k % 81)) for k in range(4000)]
    texts = [t if k % 9 else t[:-1] + "é" if t else t for k, t in enumerate(texts)]
    rows: list[dict[str, list[Any]]] = [{"t": [t], "by": [t.encode()[::-1]]} for t in texts]
    store = _store(_write(tmp_path, rows))
    assert len(store.doc_starts) > 4
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(impl.IMPL_ENV, name)
        cache = BlockCache(max_bytes=1 << 30)
        for _ in range(3):  # partly decoded, then admitted whole, then served from the cache
            batch = decode_parts([StorePart(store, range(store.num_docs), cache, "k")], _SPECS)
            assert batch.column("t").to_pylist() == [[t] for t in texts]
            assert batch.column("by").to_pylist() == [[t.encode()[::-1]] for t in texts]
