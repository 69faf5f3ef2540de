"""The doc-store bulk decoder against tantivy-py's ``searcher.doc``, both kernel twins.

Goldens (reference splits), indexes written by tantivy-py with every field kind,
and hypothesis documents; the twins must agree exactly.
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import math
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from indextables.protocol.splitbundle import unbundle_split
from indextables.search.read.docstore import (
    BlockCache,
    DocStoreError,
    FieldSpec,
    StorePart,
    _kernels_py,
    decode_docs,
    decode_parts,
    impl,
    read_store,
)
from indextables.search.read.docstore import decode as decode_module
from indextables.search.splits.termdict import dictionary_kind, to_fst

KINDS = {
    "text": "text",
    "u64": "u64",
    "i64": "i64",
    "f64": "f64",
    "bool": "bool",
    "date": "date",
    "bytes": "bytes",
    "ip_addr": "ip",
    "json_object": "json",
}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def open_golden(split: Path, dest: Path) -> Path:
    """Unbundle a reference split; FST term dictionaries so tantivy-py opens it."""
    unbundle_split(split.read_bytes(), dest, path=str(split))
    for term in dest.glob("*.term"):
        data = term.read_bytes()
        if dictionary_kind(data) == "sstable":
            term.write_bytes(to_fst(data))
    return dest


def field_specs(directory: Path) -> dict[int, FieldSpec]:
    """Every stored field of the index, as a multi-valued spec keyed by field id."""
    meta = json.loads((directory / "meta.json").read_text())
    specs: dict[int, FieldSpec] = {}
    for field_id, entry in enumerate(meta["schema"]):
        if not entry["options"].get("stored"):
            continue
        kind = KINDS[entry["type"]]  # a KeyError names a kind this test does not know yet
        specs[field_id] = FieldSpec(entry["name"], kind, multi=True)  # type: ignore[arg-type]
    return specs


def _same(kind: str, got: Any, want: Any) -> bool:
    if kind == "f64":
        return bool(
            struct.pack("<d", got) == struct.pack("<d", float(want))
            or (math.isnan(got) and math.isnan(want))
        )
    if kind == "date":
        # tantivy-py returns microseconds; the store keeps nanoseconds.
        want_us = (want - _EPOCH) // dt.timedelta(microseconds=1)
        return bool(got // 1000 == want_us)
    if kind == "json":
        return bool(json.loads(got) == want)
    if kind in ("u64", "i64", "bool"):
        return type(got) is type(want) and got == want
    return bool(got == want)


def compare_index(directory: Path) -> int:
    """Decode every document of every segment and compare with ``searcher.doc``; rows checked."""
    meta = json.loads((directory / "meta.json").read_text())
    specs = field_specs(directory)
    index = tantivy.Index.open(str(directory))
    searcher = index.searcher()
    checked = 0
    for ordinal, segment in enumerate(meta["segments"]):
        store_path = directory / (segment["segment_id"].replace("-", "") + ".store")
        store = read_store(store_path.read_bytes())
        assert store.num_docs == segment["max_doc"]
        doc_ids = list(range(store.num_docs))
        batch = decode_docs(store, doc_ids, specs)
        columns = {spec.name: batch.column(spec.name) for spec in specs.values()}
        for doc in doc_ids:
            want = searcher.doc(tantivy.DocAddress(ordinal, doc)).to_dict()
            for spec in specs.values():
                cell = columns[spec.name][doc]
                if spec.kind == "date":
                    got = None if not cell.is_valid else cell.values.cast("int64").to_pylist()
                else:
                    got = cell.as_py()
                expected = want.get(spec.name)
                if expected is None:
                    assert got is None, (spec.name, doc, got)
                    continue
                assert got is not None, (spec.name, doc)
                assert len(got) == len(expected), (
                    spec.name,
                    doc,
                    got,
                    expected,
                )
                for g, w in zip(got, expected, strict=True):
                    assert _same(spec.kind, g, w), (spec.name, doc, g, w)
            checked += 1
    return checked


GOLDEN = Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4"
GOLDEN_SPLITS = sorted(GOLDEN.rglob("*.split"))


@pytest.fixture(params=["python", "cython"])
def twin(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test under each kernel; a missing Cython build fails (never skips)."""
    monkeypatch.setenv(impl.IMPL_ENV, request.param)
    assert impl.kernels().__name__.endswith("_kernels" if request.param == "cython" else "_py")
    return str(request.param)


def test_there_are_golden_splits() -> None:
    assert len(GOLDEN_SPLITS) >= 100


@pytest.mark.parametrize("split", GOLDEN_SPLITS, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_golden_split_decodes_like_tantivy(split: Path, tmp_path: Path, twin: str) -> None:
    directory = open_golden(split, tmp_path / "split")
    assert compare_index(directory) > 0


def _every_kind_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("t", stored=True)
    sb.add_integer_field("i", stored=True)
    sb.add_unsigned_field("u", stored=True)
    sb.add_float_field("f", stored=True)
    sb.add_boolean_field("b", stored=True)
    sb.add_date_field("d", stored=True)
    sb.add_bytes_field("by", stored=True)
    sb.add_ip_addr_field("ip", stored=True)
    sb.add_json_field("j", stored=True)
    sb.add_text_field("unstored", stored=False)
    return sb.build()


_TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(["", "x" * 70_000])
_I64 = st.integers(-(2**63), 2**63 - 1)
_U64 = st.integers(0, 2**64 - 1)
_F64 = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([-0.0, 0.0])
_DATE = st.datetimes(min_value=dt.datetime(1678, 1, 1), max_value=dt.datetime(2262, 1, 1)).map(
    lambda d: d.replace(tzinfo=dt.UTC)
)
_IP = st.ip_addresses().map(str)
_JSON = st.dictionaries(
    st.text(max_size=5).filter(lambda k: "." not in k and k != ""),
    st.integers(-(2**31), 2**31) | st.text(max_size=8) | st.booleans(),
    max_size=3,
)
_DOC = st.fixed_dictionaries(
    {},
    optional={
        "t": st.lists(_TEXT, min_size=1, max_size=3),
        "i": st.lists(_I64, min_size=1, max_size=3),
        "u": st.lists(_U64, min_size=1, max_size=2),
        "f": st.lists(_F64, min_size=1, max_size=3),
        "b": st.lists(st.booleans(), min_size=1, max_size=2),
        "d": st.lists(_DATE, min_size=1, max_size=2),
        "by": st.lists(st.binary(max_size=300), min_size=1, max_size=2),
        "ip": st.lists(_IP, min_size=1, max_size=2),
        "j": st.lists(_JSON, min_size=1, max_size=1),
        "unstored": st.just(["never stored"]),
    },
)
_ADDERS = {
    "t": "add_text",
    "i": "add_integer",
    "u": "add_unsigned",
    "f": "add_float",
    "b": "add_boolean",
    "d": "add_date",
    "by": "add_bytes",
    "ip": "add_ip_addr",
    "j": "add_json",
    "unstored": "add_text",
}


def _scratch(factory: pytest.TempPathFactory) -> Path:
    """A directory for one example, left to pytest's clean-up of its temporary directories.

    Not removed at the example's end: after a commit, Tantivy's reader may take the index's
    meta lock (creating ``.tantivy-meta.lock``) on a thread of its own a moment after the
    Python objects are gone, and removing the directory then failed under load ("Directory
    not empty").
    """
    return factory.mktemp("docs")


def _write(directory: Path, docs: list[dict[str, list[Any]]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    index = tantivy.Index(_every_kind_schema(), path=str(directory))
    writer = index.writer(50_000_000, 1)
    for values in docs:
        doc = tantivy.Document()
        for name, items in values.items():
            for item in items:
                getattr(doc, _ADDERS[name])(name, item)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    return directory


def _decode_all(directory: Path, twin: str) -> list[pa.RecordBatch]:
    meta = json.loads((directory / "meta.json").read_text())
    specs = field_specs(directory)
    out = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(impl.IMPL_ENV, twin)
        for segment in meta["segments"]:
            raw = (directory / (segment["segment_id"].replace("-", "") + ".store")).read_bytes()
            store = read_store(raw)
            out.append(decode_docs(store, list(range(store.num_docs)), specs))
    return out


def _ipc(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return bytes(sink.getvalue().to_pybytes())


@settings(max_examples=30)
@given(docs=st.lists(_DOC, min_size=1, max_size=30))
def test_random_documents_of_every_kind(
    docs: list[dict[str, list[Any]]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    directory = _write(_scratch(tmp_path_factory), docs)
    for name in ("python", "cython"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(impl.IMPL_ENV, name)
            assert compare_index(directory) == len(docs)
    python, cython = _decode_all(directory, "python"), _decode_all(directory, "cython")
    assert len(python) == len(cython)
    for a, b in zip(python, cython, strict=True):
        assert _ipc(a) == _ipc(b)  # byte for byte: NaN payloads and -0.0 included


def test_many_blocks_scattered_hits_in_any_order(tmp_path: Path, twin: str) -> None:
    docs = [{"t": [f"row {k} " + "y" * (k % 300)], "i": [k]} for k in range(6000)]
    directory = _write(tmp_path, docs)
    store = read_store(next(tmp_path.glob("*.store")).read_bytes())
    assert len(store.doc_starts) > 10  # several blocks, several checkpoint blocks
    hits = [5999, 0, 3001, 3001, 17, 4500]
    batch = decode_docs(store, hits, {1: FieldSpec("i", "i64"), 0: FieldSpec("t", "text")})
    assert batch.column("i").to_pylist() == hits
    assert batch.schema.names == ["i", "t"]
    assert compare_index(directory) == 6000


def _one_doc_store(tmp_path: Path) -> bytes:
    _write(tmp_path, [{"i": [7], "t": ["abc"]}])
    return next(tmp_path.glob("*.store")).read_bytes()


def test_single_valued_spec_with_two_values_is_our_error(tmp_path: Path, twin: str) -> None:
    _write(tmp_path, [{"i": [1, 2]}])
    store = read_store(next(tmp_path.glob("*.store")).read_bytes())
    with pytest.raises(DocStoreError, match=r"'i'.*2 values"):
        decode_docs(store, [0], {1: FieldSpec("i", "i64")})


def test_kind_mismatch_is_our_error(tmp_path: Path, twin: str) -> None:
    store = read_store(_one_doc_store(tmp_path))
    with pytest.raises(DocStoreError, match=r"'i'.*type code 2, not f64"):
        decode_docs(store, [0], {1: FieldSpec("i", "f64")})


def test_doc_id_out_of_range_is_our_error(tmp_path: Path, twin: str) -> None:
    store = read_store(_one_doc_store(tmp_path))
    with pytest.raises(DocStoreError, match="doc_ids: 1 outside"):
        decode_docs(store, [1], {1: FieldSpec("i", "i64")})


def test_unknown_value_code_is_our_error(tmp_path: Path, twin: str) -> None:
    raw = _one_doc_store(tmp_path)
    store = read_store(raw)
    block = _kernels_py.lz4_decompress(
        store.data[4 : store.byte_ends[0]], struct.unpack_from("<I", store.data)[0]
    )
    # Rewrite the first value's type code (after VInt count and u32 field id) to 99, stored raw.
    bad = bytearray(block)
    assert bad[5] == _kernels_py.TEXT or bad[5] == _kernels_py.I64
    bad[5] = 99
    patched = replace(
        store, data=bytes(bad), compressor="none", byte_starts=(0,), byte_ends=(len(bad),)
    )
    with pytest.raises(DocStoreError, match="unknown value type code 99"):
        decode_docs(patched, [0], {0: FieldSpec("t", "text"), 1: FieldSpec("i", "i64")})


def test_corrupt_lz4_block_is_our_error(tmp_path: Path, twin: str) -> None:
    raw = _one_doc_store(tmp_path)
    store = read_store(raw)
    corrupt = replace(store, data=bytes(store.data[:4]) + b"\xff" * (len(store.data) - 4))
    with pytest.raises(DocStoreError, match="LZ4"):
        decode_docs(corrupt, [0], {1: FieldSpec("i", "i64")})


def test_footer_errors_are_ours() -> None:
    with pytest.raises(DocStoreError, match="store_bytes"):
        read_store(b"short")
    footer = struct.pack("<IQB", 2, 0, 9) + bytes(15)
    with pytest.raises(DocStoreError, match="compressor id 9"):
        read_store(footer)
    footer = struct.pack("<IQB", 3, 0, 1) + bytes(15)
    with pytest.raises(DocStoreError, match="version 3"):
        read_store(footer)


def test_unknown_impl_name_is_our_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(impl.IMPL_ENV, "rust")
    with pytest.raises(DocStoreError, match="INDEXTABLES_DOCSTORE_IMPL='rust'"):
        impl.kernels()


@settings(max_examples=30)
@given(payload=st.binary(max_size=3000) | st.text(max_size=400).map(lambda s: (s * 7).encode()))
# Match offsets below 8, 8..15 and 16+ (the Cython kernel copies each class differently).
@example(payload=b"ab" * 300)
@example(payload=b"abcdefghij" * 50 + bytes(range(256)))
@example(payload=b"0123456789abcdefXYZ" * 40)
def test_lz4_twins_roundtrip_tantivy_compressed_blocks(
    payload: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Stored as one text value, the payload goes through Tantivy's own LZ4 compressor.
    directory = _write(_scratch(tmp_path_factory), [{"by": [payload]}])
    raw = next(directory.glob("*.store")).read_bytes()
    store = read_store(raw)
    body = store.data[4 : store.byte_ends[0]]
    size = struct.unpack_from("<I", store.data)[0]
    a = _kernels_py.lz4_decompress(body, size)
    b = impl.load("cython").lz4_decompress(body, size)
    assert a == b
    assert payload in a


def test_parts_of_several_stores_come_out_in_part_then_hit_order(tmp_path: Path, twin: str) -> None:
    stores = []
    for n, base in ((3000, 0), (500, 10_000)):
        directory = _write(tmp_path / str(base), [{"i": [base + k]} for k in range(n)])
        stores.append(read_store(next(directory.glob("*.store")).read_bytes()))
    fields = {1: FieldSpec("i", "i64")}
    parts = [
        StorePart(stores[0], [2999, 5, 5, 1700]),
        StorePart(stores[1], [0, 499]),
        StorePart(stores[0], []),
        StorePart(stores[1], [250, 3]),
    ]
    batch = decode_parts(parts, fields)
    assert batch.column("i").to_pylist() == [2999, 5, 5, 1700, 10_000, 10_499, 10_250, 10_003]
    single = [decode_docs(p.store, p.doc_ids, fields) for p in parts]
    assert pa.Table.from_batches([batch]).equals(pa.Table.from_batches(single))


def test_block_cache_admits_a_block_on_its_second_miss_and_keeps_its_bound(
    tmp_path: Path, twin: str
) -> None:
    directory = _write(tmp_path, [{"t": [f"row {k} " + "y" * (k % 300)]} for k in range(6000)])
    store = read_store(next(directory.glob("*.store")).read_bytes())
    fields = {0: FieldSpec("t", "text")}
    cache = BlockCache(max_bytes=1 << 30)
    hits = [0, 1, 2999, 5999]
    touched = len({store.block_of(h) for h in hits})
    first = decode_docs(store, hits, fields, cache=cache)
    assert (len(cache), cache.misses, cache.hits) == (0, touched, 0)  # first miss: not kept
    assert decode_docs(store, hits, fields, cache=cache).equals(first)
    assert len(cache) == touched  # missed again while remembered: admitted
    assert decode_docs(store, hits, fields, cache=cache).equals(first)
    assert cache.hits == touched  # every block came from the cache
    small = BlockCache(max_bytes=40_000)  # two of these 16K blocks
    for start in range(0, 1200, 100):  # reads of one block each: each one fits, not all
        for _ in range(2):
            decode_docs(store, [start, start + 3], fields, cache=small)
    assert 0 < len(small) < len(store.doc_starts)
    assert 0 < small.nbytes <= 40_000


def test_block_cache_is_not_churned_by_more_blocks_than_it_remembers(
    tmp_path: Path, twin: str
) -> None:
    directory = _write(tmp_path, [{"t": [f"row {k} " + "y" * (k % 300)]} for k in range(6000)])
    store = read_store(next(directory.glob("*.store")).read_bytes())
    assert len(store.doc_starts) > 40
    fields = {0: FieldSpec("t", "text")}
    cache = BlockCache(max_bytes=64 << 10)  # four of these 16K blocks
    every_block = list(store.doc_starts) * 2  # > 40 blocks: they would not fit
    want = decode_docs(store, every_block, fields)
    for _ in range(3):
        assert decode_docs(store, every_block, fields, cache=cache).equals(want)
    assert len(cache) == 0
    assert cache.hits == 0


def test_a_negative_field_id_is_our_error(tmp_path: Path, twin: str) -> None:
    store = read_store(_one_doc_store(tmp_path))
    with pytest.raises(DocStoreError, match="field id -1"):
        decode_docs(store, [0], {-1: FieldSpec("i", "i64")})


_PARTIAL_FIELDS = {
    0: FieldSpec("t", "text", multi=True),
    1: FieldSpec("i", "i64", multi=True),
    2: FieldSpec("u", "u64", multi=True),
    3: FieldSpec("f", "f64", multi=True),
    4: FieldSpec("b", "bool", multi=True),
    5: FieldSpec("d", "date", multi=True),
    6: FieldSpec("by", "bytes", multi=True),
    7: FieldSpec("ip", "ip", multi=True),
}
_LONG_DOC = _DOC | st.fixed_dictionaries(
    {
        "t": st.lists(
            st.tuples(st.characters(codec="utf-8"), st.integers(300, 2500)).map(
                lambda pair: pair[0] * pair[1]
            ),
            min_size=1,
            max_size=2,
        )
    },
    optional={"j": st.lists(_JSON, min_size=1, max_size=1), "i": st.lists(_I64, max_size=2)},
)


@settings(max_examples=30, deadline=None)
@given(
    docs=st.lists(_LONG_DOC, min_size=1, max_size=40),
    picks=st.lists(st.integers(0, 10_000), max_size=12),
    fields=st.sets(st.sampled_from(sorted(_PARTIAL_FIELDS)), min_size=1),
)
def test_partly_decoded_blocks_give_the_twins_rows(
    docs: list[dict[str, list[Any]]],
    picks: list[int],
    fields: set[int],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # Hits anywhere in blocks of every size (texts up to 10,000 UTF-8 bytes, so documents
    # span the kernel's decode steps and blocks pass 16 KiB); the fields not asked for
    # (JSON objects among them) are skipped while searching a wanted document's start.
    specs = {fid: _PARTIAL_FIELDS[fid] for fid in sorted(fields)}
    directory = _write(_scratch(tmp_path_factory), docs)
    raw = next(directory.glob("*.store")).read_bytes()
    store = read_store(raw)
    assert store.compressor == "lz4"
    hits = [p % store.num_docs for p in picks] or [store.num_docs - 1]
    out = {}
    for name in ("python", "cython"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(impl.IMPL_ENV, name)
            out[name] = _ipc(decode_docs(store, hits, specs))
    assert out["python"] == out["cython"]
    # Every block was decoded partly: none fell back to whole-block decoding.
    builder = impl.load("cython").ColumnBuilder(
        [decode_module._SLOT_KIND[s.kind] for s in specs.values()],
        [s.multi for s in specs.values()],
        list(specs),
        [s.name for s in specs.values()],
        store.version,
    )
    _add_hits(builder, store, sorted(hits))
    assert builder.whole_blocks == 0


def _add_hits(builder: Any, store: Any, hits: list[int]) -> None:
    """Feed ``hits`` of an LZ4 ``store`` to a kernel's column builder."""
    builder.add_lz4(
        store.data, store.doc_starts, store.doc_ends, store.byte_starts, store.byte_ends, hits
    )


def test_a_hit_early_in_a_block_decompresses_only_that_far(tmp_path: Path) -> None:
    directory = _write(
        tmp_path, [{"t": [f"row {k} " + "y" * (k % 300)], "i": [k]} for k in range(6000)]
    )
    store = read_store(next(directory.glob("*.store")).read_bytes())
    block_size = struct.unpack_from("<I", store.data, store.byte_starts[1])[0]
    first_of_block = store.doc_starts[1]
    decoded = {}
    for name in ("python", "cython"):
        builder = impl.load(name).ColumnBuilder([_kernels_py.K_I64], [False], [1], ["i"], 2)
        _add_hits(builder, store, [first_of_block, first_of_block + 1])
        rows = builder.finish()[0]
        assert struct.unpack_from("<2q", rows[5]) == (first_of_block, first_of_block + 1)
        decoded[name] = builder.decompressed
    assert decoded["python"] == block_size
    assert 0 < decoded["cython"] < block_size // 4  # two documents of ~40: a few hundred bytes


def test_a_large_decode_in_threaded_chunks_equals_the_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stores = []
    for n, base in ((4000, 0), (1500, 10_000)):
        directory = _write(
            tmp_path / str(base),
            [{"t": [f"r{base + k} " + "é" * (k % 90)], "i": [base + k]} for k in range(n)],
        )
        stores.append(read_store(next(directory.glob("*.store")).read_bytes()))
    parts = [
        StorePart(stores[0], [3999, 5, 5, *range(7, 4000, 13), 1700]),
        StorePart(stores[1], []),
        StorePart(stores[1], [*range(0, 1500, 3), 1499, 0]),
    ]
    fields = {1: FieldSpec("i", "i64"), 0: FieldSpec("t", "text")}
    monkeypatch.setenv(impl.IMPL_ENV, "python")
    want = decode_parts(parts, fields)
    submitted: list[int] = []
    real = decode_module.executor

    class Recording:
        def submit(self, fn: Any, chunk: Any) -> Any:
            submitted.append(sum(len(ids) for _, ids in chunk))
            return real().submit(fn, chunk)

    monkeypatch.setattr(decode_module, "executor", Recording)
    monkeypatch.setattr(decode_module, "workers", lambda threads="auto": 3)
    monkeypatch.setattr(decode_module, "THREAD_MIN_HITS", 100)
    monkeypatch.setenv(impl.IMPL_ENV, "cython")
    got = decode_parts(parts, fields)
    assert len(submitted) == 2  # three chunks: two on the pool, one on the caller
    assert _ipc(got) == _ipc(want)
    assert got.column("i").to_pylist()[:4] == [3999, 5, 5, 7]


def test_the_kernels_ask_the_block_cache_once_per_part(tmp_path: Path, twin: str) -> None:
    directory = _write(tmp_path, [{"t": [f"row {k} " + "y" * (k % 300)]} for k in range(6000)])
    store = read_store(next(directory.glob("*.store")).read_bytes())
    fields = {0: FieldSpec("t", "text")}
    asked: list[int] = []

    class Counting(BlockCache):
        def lookup(self, block: Any) -> bytes | bool:
            raise AssertionError("asked block by block")

        def lookup_many(self, key: Any, blocks: Any, **kwargs: Any) -> list[bytes | bool]:
            asked.append(len(blocks))
            return super().lookup_many(key, blocks, **kwargs)

    cache = Counting(max_bytes=1 << 30)
    hits = [0, 1, 700, 2999, 5999]
    touched = len({store.block_of(h) for h in hits})
    want = decode_docs(store, hits, fields)
    for _ in range(3):  # miss, admitted on the second miss, served from the cache
        assert decode_docs(store, hits, fields, cache=cache).equals(want)
    assert asked == [touched] * 3
    assert cache.hits == touched


def test_the_decoder_threads_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from indextables.search.read.docstore import pool

    monkeypatch.setattr(pool.os, "getloadavg", lambda: (1000.0, 0.0, 0.0))
    monkeypatch.setattr(pool, "_cores", lambda: 2)
    assert (pool.workers("auto"), pool.workers("on"), pool.workers("off")) == (1, 2, 1)
    monkeypatch.setattr(pool.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert (pool.workers("auto"), pool.workers("on"), pool.workers("off")) == (2, 2, 1)
    with pytest.raises(DocStoreError, match="threads: expected one of auto, on, off"):
        pool.workers("yes")  # type: ignore[arg-type]
    directory = _write(tmp_path, [{"t": [f"r{k}"], "i": [k]} for k in range(3000)])
    store = read_store(next(directory.glob("*.store")).read_bytes())
    fields = {1: FieldSpec("i", "i64"), 0: FieldSpec("t", "text")}
    hits = list(range(0, 3000, 2))
    submitted: list[int] = []
    real = decode_module.executor

    class Recording:
        def submit(self, fn: Any, chunk: Any) -> Any:
            submitted.append(sum(len(ids) for _, ids in chunk))
            return real().submit(fn, chunk)

    monkeypatch.setattr(decode_module, "executor", Recording)
    monkeypatch.setattr(decode_module, "THREAD_MIN_HITS", 100)
    monkeypatch.setenv(impl.IMPL_ENV, "cython")
    monkeypatch.setattr(pool.os, "getloadavg", lambda: (1000.0, 0.0, 0.0))
    want = decode_docs(store, hits, fields)
    assert submitted == []  # auto on a busy machine: one thread
    assert decode_parts([StorePart(store, hits)], fields, threads="on").equals(want)
    assert submitted == [750]  # on: two chunks whatever the load
    assert decode_parts([StorePart(store, hits)], fields, threads="off").equals(want)
    monkeypatch.setattr(pool.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert decode_parts([StorePart(store, hits)], fields, threads="off").equals(want)
    assert submitted == [750]  # off: never
    with pytest.raises(DocStoreError, match="threads"):
        decode_parts([StorePart(store, hits)], fields, threads="maybe")  # type: ignore[arg-type]


def test_a_decode_touching_more_blocks_than_the_cache_remembers_records_no_miss(
    tmp_path: Path, twin: str
) -> None:
    # Recording each of its misses would only push the others out before a repeat
    # could admit one (the 20M-row exact match touches ~32,000 blocks): none is kept.
    directory = _write(tmp_path, [{"t": [f"row {k} " + "y" * (k % 300)]} for k in range(6000)])
    store = read_store(next(directory.glob("*.store")).read_bytes())
    fields = {0: FieldSpec("t", "text")}
    every_block = list(store.doc_starts)
    assert len(every_block) > 16
    cache = BlockCache(max_bytes=1)  # no block fits
    want = decode_docs(store, every_block, fields)
    for _ in range(2):
        assert decode_docs(store, every_block, fields, cache=cache).equals(want)
        assert cache.remembered == 0
        assert len(cache) == 0
    # A decode of few blocks is remembered, and its repeat admits them (the budget allowing).
    roomy = BlockCache(max_bytes=1 << 20)
    few = every_block[:5]
    assert decode_docs(store, few, fields, cache=roomy).equals(decode_docs(store, few, fields))
    assert roomy.remembered == 5
    assert len(roomy) == 0
    decode_docs(store, few, fields, cache=roomy)
    assert roomy.remembered == 0
    assert len(roomy) == 5


def test_the_block_cache_hashes_a_store_key_once_per_lookup(tmp_path: Path) -> None:
    # Blocks are held under ints: the (possibly nested, string-laden) store key is
    # hashed once per call, not twice per block.
    hashed: list[int] = []

    class Key:
        def __init__(self, name: str) -> None:
            self.name = name

        def __hash__(self) -> int:
            hashed.append(1)
            return hash(self.name)

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Key) and other.name == self.name

    cache = BlockCache(max_bytes=1 << 20)
    one, two = Key("a"), Key("b")
    assert cache.lookup_many(one, range(100)) == [False] * 100
    assert len(hashed) == 1
    assert cache.lookup_many(one, range(100)) == [True] * 100
    cache.put((one, 7), b"seven")
    assert cache.lookup_many(one, [7, 8]) == [b"seven", False]
    assert cache.lookup_many(two, [7]) == [False]  # the same block number of another store
    assert cache.get((two, 7)) is None
    assert cache.get((one, 7)) == b"seven"
    assert len(hashed) == 7
    with pytest.raises(DocStoreError, match="block number"):
        cache.put((one, 1 << 32), b"x")


def test_auto_threads_leave_out_this_process_s_own_load(monkeypatch: pytest.MonkeyPatch) -> None:
    # A read on two threads of an idle 2-core machine lifts the load average to ~2 by
    # itself: that must not count as a busy machine for the next read.
    from indextables.search.read.docstore import pool

    clock = {"wall": 1000.0, "cpu": 50.0}
    monkeypatch.setattr(pool.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(pool.time, "process_time", lambda: clock["cpu"])
    monkeypatch.setattr(pool, "_samples", [])
    monkeypatch.setattr(pool, "_cores", lambda: 2)
    monkeypatch.setattr(pool.os, "getloadavg", lambda: (2.1, 0.0, 0.0))
    assert pool.others_load() == 2.1  # no span yet: the whole load counts
    assert pool.workers("auto") == 1
    clock["wall"] += 30.0
    clock["cpu"] += 57.0  # 1.9 cores of this process over the last 30 s
    assert pool.others_load() == pytest.approx(0.2)
    assert pool.workers("auto") == 2
    monkeypatch.setattr(pool.os, "getloadavg", lambda: (4.0, 0.0, 0.0))
    assert pool.workers("auto") == 1  # others' 2.1 cores: busy
    for _ in range(200):  # the span stays about a minute, the samples few
        clock["wall"] += 0.5
        clock["cpu"] += 0.1
        pool.others_load()
    assert len(pool._samples) <= 62
    assert pool.others_load() == pytest.approx(4.0 - 0.2, abs=0.05)
    # A forked child (another pid) starts its own samples: its CPU time starts afresh.
    monkeypatch.setattr(pool, "_sampled_by", [-1])
    clock["cpu"] = 0.0
    assert pool.others_load() == 4.0
    assert len(pool._samples) == 1


def test_a_decode_session_answers_as_the_cache_does() -> None:
    # Cached bytes, True for a block missed recently (admit it), False for a first miss;
    # the session's first misses are remembered when it closes.
    for use_session in (True, False):
        cache = BlockCache(max_bytes=1 << 20)
        cache.put(("s", 1), b"one")
        cache.lookup_many("s", [2])  # a first miss, remembered
        asker = cache.session() if use_session else cache
        assert asker.lookup_many("s", [1, 2, 3]) == [b"one", True, False]
        assert asker.lookup_many("s", [1]) == [b"one"]
        assert asker.lookup_many("t", [1]) == [False]
        if isinstance(asker, decode_module.DecodeSession):
            assert cache.remembered == 0  # the session's misses wait for its end
            asker.close()
        assert cache.remembered == 2  # 3 of "s" and 1 of "t"
        assert cache.lookup_many("s", [3, 2]) == [True, False]
        assert (cache.hits, cache.misses) == (2, 6)


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=300),
    picks=st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=40),
    first=st.integers(min_value=0, max_value=50),
)
@example(sizes=[4000, *[1] * 200], picks=[4000, 4100, 4199, 3999, 0], first=0)
@example(sizes=[*[1] * 200, 4000], picks=[0, 199, 200, 4199, 100], first=0)
def test_checkpoints_find_the_block_as_bisect_does(
    sizes: list[int], picks: list[int], first: int
) -> None:
    # Blocks of very different document counts: the Cython kernel's guess from a doc's
    # share of the store is far off and its steps must still land on bisect's block.
    starts, ends, doc = [], [], first
    for size in sizes:
        starts.append(doc)
        doc += size
        ends.append(doc)
    docs = sorted(first + p % (doc - first + 2) - 1 for p in picks)  # one below, one past
    for name in ("python", "cython"):
        cp = impl.load(name).Checkpoints(
            b"\0" * 8, starts, ends, [0] * len(sizes), [8] * len(sizes)
        )
        lo = 0
        for d in docs:
            want = max(lo, bisect.bisect_right(starts, d, lo) - 1)
            assert cp.block_of(d, lo) == want, (name, d, lo)
            lo = want


def test_checkpoints_of_blocks_not_contiguous_are_searched_too() -> None:
    starts, ends = [0, 10, 30, 31], [10, 20, 31, 40]  # documents 20-29 in no block
    for name in ("python", "cython"):
        cp = impl.load(name).Checkpoints(b"\0" * 8, starts, ends, [0] * 4, [8] * 4)
        assert [cp.block_of(d) for d in (0, 9, 10, 25, 30, 31, 39, 45)] == [0, 0, 1, 1, 2, 3, 3, 3]
        with pytest.raises(ValueError, match="lo"):
            cp.block_of(3, 5)


def test_a_split_s_parts_are_one_kernel_call_and_one_cache_lookup(
    tmp_path: Path, twin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stores = []
    for n, base in ((3000, 0), (2500, 10_000)):
        directory = _write(
            tmp_path / str(base),
            [{"t": [f"r{base + k} " + "x" * (k % 200)], "i": [base + k]} for k in range(n)],
        )
        stores.append(read_store(next(directory.glob("*.store")).read_bytes()))
    fields = {1: FieldSpec("i", "i64"), 0: FieldSpec("t", "text")}
    asked: list[str] = []

    class Counting(BlockCache):
        def lookup_many(self, key: Any, blocks: Any, **kwargs: Any) -> list[bytes | bool]:
            asked.append("many")
            return super().lookup_many(key, blocks, **kwargs)

        def lookup_parts(self, asks: Any, **kwargs: Any) -> list[bytes | bool]:
            asked.append(f"parts of {len(asks)}")
            return super().lookup_parts(asks, **kwargs)

    cache = Counting(max_bytes=1 << 30)
    hits = [[2999, 5, 1700, 1701], [0, 2499, 40], [7, 8, 2000], [1, 1]]
    parts = [StorePart(stores[k % 2], ids, cache, ("split", k % 2)) for k, ids in enumerate(hits)]
    want = decode_parts([StorePart(p.store, p.doc_ids) for p in parts], fields)
    calls: list[int] = []
    builder_type = impl.kernels().ColumnBuilder

    class Recording(builder_type):  # type: ignore[misc, valid-type]
        def add_lz4_parts(self, parts: Any, cache: Any = None) -> None:
            calls.append(len(parts))
            super().add_lz4_parts(parts, cache)

    class Kernels:
        ColumnBuilder = Recording
        NOGIL = False

        def __getattr__(self, name: str) -> Any:
            return getattr(impl.kernels(), name)

    kernels = Kernels()
    kernels.__name__ = impl.kernels().__name__  # type: ignore[attr-defined]
    monkeypatch.setattr(decode_module, "kernels", lambda: kernels)
    for _ in range(3):  # miss, admitted on the second miss, served from the cache
        assert _ipc(decode_parts(parts, fields)) == _ipc(want)
    assert calls == [4, 4, 4]
    assert asked == ["parts of 4"] * 3
    touched = sum(len({p.store.block_of(d) for d in p.doc_ids}) for p in parts)
    assert cache.hits == touched
    assert decode_parts(parts, fields).column("i").to_pylist()[:5] == [2999, 5, 1700, 1701, 10_000]


def test_one_kernel_call_mixing_cached_admitted_and_partly_decoded_blocks_keeps_hit_order(
    tmp_path: Path,
) -> None:
    # The Cython kernel locates every partly decompressed block first (without the
    # GIL), then builds the rows block by block: the rows must still come out in hit
    # order, between rows of cached blocks and of blocks decoded whole for the cache.
    directory = _write(
        tmp_path, [{"t": [f"row {k} " + "y" * (k % 300)], "i": [k]} for k in range(6000)]
    )
    store = read_store(next(directory.glob("*.store")).read_bytes())
    fields = {1: FieldSpec("i", "i64"), 0: FieldSpec("t", "text")}
    blocks = len(store.doc_starts)
    assert blocks > 12
    hits = sorted(
        [store.doc_starts[b] + d for b in range(0, blocks, 2) for d in (0, 3)]
        + [store.doc_starts[5] + 1] * 2  # a duplicate hit
    )
    kinds = [impl.load(name) for name in ("python", "cython")]
    out = {}
    for mod in kinds:
        cache = BlockCache(max_bytes=1 << 30)
        cache.lookup_many("k", [2, 6])  # first misses: asked again, decoded whole and kept
        cache.put(("k", 4), decode_module._decompress(store, 4, mod))  # served from the cache
        builder = mod.ColumnBuilder(
            [_kernels_py.K_I64, _kernels_py.K_TEXT],
            [False, False],
            [1, 0],
            ["i", "t"],
            store.version,
        )
        builder.add_lz4_parts([(decode_module.checkpoints(store, mod), hits, "k")], cache)
        out[mod.__name__] = builder.finish()
        assert len(cache) == 3  # blocks 2 and 6 admitted beside block 4
        if mod.__name__.endswith("_kernels"):
            assert builder.whole_blocks == 2  # the others were decoded partly
    python, cython = out.values()
    assert python == cython
    want = decode_docs(store, hits, fields)
    assert want.column("i").to_pylist() == hits
    batch = decode_parts([StorePart(store, hits, BlockCache(max_bytes=1 << 30), "k")], fields)
    assert batch.equals(want)


def test_a_search_s_decodes_sharing_a_session_remember_their_misses_together(
    tmp_path: Path, twin: str
) -> None:
    # A search reads its splits one decode each: each decode's blocks fit the cache,
    # all of them together do not. Remembered per decode, each decode's misses were
    # forgotten before the repeat came back to them (a dict insert and a trim per
    # block for nothing: ~12 ms of the 20M-row exact match); remembered per search,
    # they are not remembered at all, and a search whose blocks all fit is admitted.
    directory = _write(tmp_path, [{"t": [f"row {k} " + "y" * (k % 300)]} for k in range(6000)])
    store = read_store(next(directory.glob("*.store")).read_bytes())
    fields = {0: FieldSpec("t", "text")}
    starts = list(store.doc_starts)
    assert len(starts) > 8
    cache = BlockCache(max_bytes=5 * store.block_bytes)  # four blocks, not six
    decodes = [starts[0:2], starts[2:4], starts[4:6]]  # two blocks each, six in all

    def search(plan: list[list[int]]) -> None:
        session = cache.session()
        remembered = cache.remembered
        try:
            for hits in plan:
                part = StorePart(store, hits, cache, "s")
                got = decode_parts([part], fields, session=session)
                assert got.equals(decode_docs(store, hits, fields))
                assert cache.remembered <= remembered  # none added before the search ends
        finally:
            session.close()

    for _ in range(3):
        search(decodes)
        assert cache.remembered == 0
        assert len(cache) == 0
    # Each decode alone (its own session) remembers its two misses.
    decode_parts([StorePart(store, decodes[0], cache, "s")], fields)
    assert cache.remembered == 2
    # A search whose blocks all fit: remembered at its end, admitted by its repeat.
    cache.clear()
    search(decodes[:2])
    assert cache.remembered == 4
    search(decodes[:2])
    assert len(cache) == 4
    hits = cache.hits
    search(decodes[:2])
    assert cache.hits == hits + 4
