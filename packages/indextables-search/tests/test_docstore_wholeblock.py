"""The doc-store kernels' whole-block reads, handed-over buffers and undivided pieces.

- A block whose last document is wanted is decompressed in one pass and its
  documents found by the doc offsets at its end: both twins read the same rows
  from sound blocks and raise the same typed error from damaged ones (offsets out
  of order, a doc count larger than the block, positions past the count, LZ4 that
  expands short or long, truncated LZ4).
- ``finish(owned=True)`` hands the kernel's C buffers over without a copy: the
  same bytes as ``finish()`` and as the twin's, and ``isascii`` as ``bytes.isascii``.
- ``decode_runs`` gives the decoder threads' pieces of a run as they are: laid end
  to end, :func:`decode_parts`' batch; a whole-table read hands them out as batches.

Blocks are built by hand (literal-only LZ4, the format's simplest valid form), so
each damage is exact.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from diffcases import OPTIONS, PARTITION_BY, rows

from indextables.search import open_table, write_table
from indextables.search.read.docstore import (
    DocStoreError,
    FieldSpec,
    StoreIndex,
    StorePart,
    decode_parts,
    decode_runs,
    impl,
    read_store,
)
from indextables.search.read.docstore import _kernels_py as codes
from indextables.search.read.docstore import decode as decode_module

TWINS = ("python", "cython")


def _vint(n: int) -> bytes:
    # Tantivy's doc-store VInt: 7 bits a byte, the last byte's high bit set.
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F)
        n >>= 7
    out.append(n | 0x80)
    return bytes(out)


def _doc(i: int, text: str | None) -> bytes:
    values = [struct.pack("<IB", 0, codes.I64) + struct.pack("<q", i)]
    if text is not None:
        raw = text.encode()
        values.append(struct.pack("<IB", 1, codes.TEXT) + _vint(len(raw)) + raw)
    return _vint(len(values)) + b"".join(values)


def _block(docs: list[bytes]) -> tuple[bytes, list[int]]:
    """A decompressed block (documents, their u32 offsets, their u32 count) and the offsets."""
    offsets, pos = [], 0
    for doc in docs:
        offsets.append(pos)
        pos += len(doc)
    index = b"".join(struct.pack("<I", o) for o in offsets) + struct.pack("<I", len(docs))
    return b"".join(docs) + index, offsets


def _literal_lz4(raw: bytes) -> bytes:
    """``raw`` as one LZ4 block of literals only (a valid block)."""
    n = len(raw)
    if n < 15:
        return bytes([n << 4]) + raw
    out = bytearray([0xF0])
    rest = n - 15
    while rest >= 255:
        out.append(255)
        rest -= 255
    out.append(rest)
    return bytes(out) + raw


def _store_of(blocks: list[tuple[bytes, int, int]]) -> tuple[Any, ...]:
    """Checkpoint arguments of blocks ``(lz4 body, declared size, documents)``."""
    data = bytearray()
    doc_starts, doc_ends, byte_starts, byte_ends, doc = [], [], [], [], 0
    for body, size, count in blocks:
        byte_starts.append(len(data))
        data += struct.pack("<I", size) + body
        byte_ends.append(len(data))
        doc_starts.append(doc)
        doc += count
        doc_ends.append(doc)
    return bytes(data), doc_starts, doc_ends, byte_starts, byte_ends


def _read(name: str, store: tuple[Any, ...], ids: Any) -> list[Any]:
    mod = impl.load(name)
    builder = mod.ColumnBuilder([codes.K_I64, codes.K_TEXT], [False, False], [0, 1], ["i", "t"], 2)
    builder.add_lz4_parts([(mod.Checkpoints(*store), ids, None)])
    return list(builder.finish())


def _texts(n: int, seed: int) -> list[str | None]:
    rng = random.Random(seed)
    pool = ["", "a", "é", "日本語", "x" * 70, "y" * 300, "z" * 17, "w" * 33]
    return [None if rng.random() < 0.2 else rng.choice(pool) + str(k) for k in range(n)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sound_blocks_read_to_their_last_document_equal_in_both_twins(seed: int) -> None:
    rng = random.Random(seed)
    blocks, expected_i, expected_t, first = [], [], [], 0
    for _ in range(4):
        n = rng.randint(1, 40)
        texts = _texts(n, rng.randint(0, 1 << 30))
        raw, _ = _block([_doc(first + k, t) for k, t in enumerate(texts)])
        blocks.append((_literal_lz4(raw), len(raw), n))
        expected_i += list(range(first, first + n))
        expected_t += texts
        first += n
    store = _store_of(blocks)
    wanted = sorted([*rng.sample(range(first), rng.randint(1, first)), first - 1])
    for ids in (range(first), wanted):
        python, cython = (_read(name, store, ids) for name in TWINS)
        assert python == cython
        i_col, t_col = cython
        assert list(struct.unpack_from(f"<{len(ids)}q", i_col[5])) == [expected_i[d] for d in ids]
        array = pa.Array.from_buffers(
            pa.string(),
            t_col[0],
            [
                pa.py_buffer(t_col[2]) if t_col[2] is not None else None,
                pa.py_buffer(t_col[4]),
                pa.py_buffer(t_col[5]),
            ],
            null_count=t_col[1],
        )
        assert array.to_pylist() == [expected_t[d] for d in ids]


def _damaged(kind: str) -> tuple[tuple[Any, ...], str]:
    """A one-block store whose every document is sound, damaged as ``kind``."""
    docs = [_doc(k, f"value {k}") for k in range(5)]
    raw, offsets = _block(docs)
    count = len(docs)
    body = bytearray(raw)
    index_start = len(raw) - 4 * (count + 1)
    if kind == "offsets out of order":
        struct.pack_into("<I", body, index_start, offsets[1] + 1)
        match = "offsets out of order"
    elif kind == "count past the block":
        struct.pack_into("<I", body, len(body) - 4, len(body))
        match = "doc count larger than the block"
    elif kind == "position past the count":
        struct.pack_into("<I", body, len(body) - 4, count - 2)
        match = "outside its block"
    else:
        match = "LZ4|expanded"
    lz4 = _literal_lz4(bytes(body))
    size = len(body)
    if kind == "expands short":
        size += 7
    elif kind == "expands long":
        size -= 7
    elif kind == "truncated":
        lz4 = lz4[:-3]
    return _store_of([(lz4, size, count)]), match


@pytest.mark.parametrize(
    "kind",
    [
        "offsets out of order",
        "count past the block",
        "position past the count",
        "expands short",
        "expands long",
        "truncated",
    ],
)
@pytest.mark.parametrize("name", TWINS)
def test_a_damaged_block_read_to_its_last_document_raises_our_error(kind: str, name: str) -> None:
    store, match = _damaged(kind)
    reads = {"offsets out of order": [range(5), [0, 4]], "position past the count": [[4], [1, 4]]}
    for ids in reads.get(kind, [range(5), [0, 4], [4]]):
        with pytest.raises(DocStoreError, match=match):
            _read(name, store, ids)


def _builder_rows(mod: Any, n: int, first_null: int, seed: int) -> Any:
    rng = random.Random(seed)
    texts = [
        None if k == first_null or (k > first_null and rng.random() < 0.3) else _texts(1, k)[0]
        for k in range(n)
    ]
    texts = [t if t is not None or k >= first_null else "v" for k, t in enumerate(texts)]
    raw, _ = _block([_doc(k, t) for k, t in enumerate(texts)])
    store = _store_of([(_literal_lz4(raw), len(raw), n)])
    builder = mod.ColumnBuilder([codes.K_I64, codes.K_TEXT], [False, False], [0, 1], ["i", "t"], 2)
    builder.add_lz4_parts([(mod.Checkpoints(*store), range(n), None)])
    return builder, texts


@pytest.mark.parametrize("first_null", [0, 1, 7, 8, 9, 15, 16, 17, 30, 10_000])
def test_owned_buffers_are_the_copied_bytes_and_the_twin_s(first_null: int) -> None:
    cython, python = impl.load("cython"), impl.load("python")
    n = 33
    copied = _builder_rows(cython, n, first_null, first_null)[0].finish()
    owned_builder, texts = _builder_rows(cython, n, first_null, first_null)
    owned = owned_builder.finish(owned=True)
    twin = _builder_rows(python, n, first_null, first_null)[0].finish(owned=True)
    assert any(isinstance(b, cython.OwnedBuffer) for col in owned for b in col[2:6])
    as_bytes = [
        tuple(bytes(memoryview(v)) if isinstance(v, cython.OwnedBuffer) else v for v in col)
        for col in owned
    ]
    assert as_bytes == [tuple(c) for c in copied] == [tuple(c) for c in twin]
    t_col = owned[1]
    array = pa.Array.from_buffers(
        pa.string(),
        n,
        [
            None if t_col[2] is None else pa.py_buffer(t_col[2]),
            pa.py_buffer(t_col[4]),
            pa.py_buffer(t_col[5]),
        ],
        null_count=t_col[1],
    )
    assert array.to_pylist() == texts
    assert memoryview(t_col[5]).readonly


def test_an_owned_buffer_s_isascii_is_bytes_isascii() -> None:
    cython = impl.load("cython")
    rng = random.Random(5)
    for n in range(40):
        for high in [None, *range(n)]:
            raw = bytearray(rng.randrange(0x80) for _ in range(n))
            if high is not None:
                raw[high] = 0x80 | rng.randrange(0x80)
            ids = range(1) if raw else range(0)
            doc = struct.pack("<IB", 1, codes.BYTES) + _vint(len(raw)) + bytes(raw)
            block, _ = _block([_vint(1) + doc])
            store = _store_of([(_literal_lz4(block), len(block), 1)])
            builder = cython.ColumnBuilder([codes.K_BYTES], [False], [1], ["b"], 2)
            builder.add_lz4_parts([(cython.Checkpoints(*store), ids, None)])
            data = builder.finish(owned=True)[0][5]
            assert len(data) == (n if ids else 0)
            assert data.isascii() == bytes(raw[: len(data)]).isascii(), (n, high)


def _written_store(tmp_path: Path, n: int) -> StoreIndex:
    import tantivy

    schema = (
        tantivy.SchemaBuilder()
        .add_integer_field("i", stored=True)
        .add_text_field("t", stored=True)
        .build()
    )
    index = tantivy.Index(schema, path=str(tmp_path))
    writer = index.writer(50_000_000, 1)
    for k, text in enumerate(_texts(n, 11)):
        doc = tantivy.Document()
        doc.add_integer("i", k)
        if text is not None:
            doc.add_text("t", text)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    return read_store(next(tmp_path.glob("*.store")).read_bytes())


@pytest.mark.parametrize("name", TWINS)
def test_decode_runs_gives_the_threads_pieces_whose_rows_are_decode_parts(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _written_store(tmp_path, 5000)
    fields = {0: FieldSpec("i", "i64"), 1: FieldSpec("t", "text")}
    monkeypatch.setenv(impl.IMPL_ENV, name)
    monkeypatch.setattr(decode_module, "workers", lambda threads: 3)
    runs = [StorePart(store, range(3, 4990))]
    pieces = decode_runs(runs, fields, threads="on")
    whole = decode_parts(runs, fields, threads="off")
    if name == "cython":  # the kernels run without the GIL: the decode is cut in three
        assert [p.num_rows for p in pieces] == [1663, 1663, 1661]
    assert pa.Table.from_batches(pieces).combine_chunks().to_batches()[0].equals(whole)
    assert whole.column("i").to_pylist() == list(range(3, 4990))
    texts = _texts(5000, 11)
    assert whole.column("t").to_pylist() == texts[3:4990]
    with pytest.raises(DocStoreError, match="not sorted"):
        decode_runs([StorePart(store, [5, 4])], fields)


def test_a_whole_table_read_hands_out_the_decoder_s_pieces_as_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = rows(4, 2600)
    uri = str(tmp_path / "t")
    for start in range(0, data.num_rows, 1300):
        write_table(
            uri, data.slice(start, 1300), partition_by=PARTITION_BY, options=OPTIONS, workers=1
        )
    monkeypatch.setattr(decode_module, "THREAD_MIN_HITS", 16)
    monkeypatch.setattr(decode_module, "workers", lambda threads: 2)
    options = {"spark.indextables.read.docStoreThreads": "on"}
    table = open_table(uri, options=options)
    found = table.to_arrow()
    with monkeypatch.context() as patch:
        patch.setattr(decode_module, "workers", lambda threads: 1)
        one_piece = open_table(uri, options=options).to_arrow()
    assert found.num_rows == data.num_rows
    assert found.column(0).num_chunks > one_piece.column(0).num_chunks
    assert _bits(found).equals(_bits(one_piece))
    ids = found.column("id").combine_chunks()
    expected = data.take(ids).select(found.column_names)
    typed = pa.table(
        [c.cast(f.type) for c, f in zip(expected.columns, found.schema, strict=True)],
        schema=found.schema,
    )
    # NaN payloads aside: a float32 NaN stored as a double comes back quiet
    assert _bits(found, one_nan=True).equals(_bits(typed, one_nan=True))


def _bits(table: pa.Table, *, one_nan: bool = False) -> pa.Table:
    """``table`` in one chunk, floats as their bit patterns (NaNs as one with ``one_nan``)."""
    columns = []
    for column in table.columns:
        data = column.combine_chunks()
        if pa.types.is_floating(data.type):
            if one_nan:
                nan = pa.scalar(float("nan"), data.type)
                data = pc.if_else(pc.fill_null(pc.is_nan(data), False), nan, data)
            data = data.view(pa.uint32() if pa.types.is_float32(data.type) else pa.uint64())
        columns.append(data)
    return pa.table(columns, names=table.column_names)


def _random_docs(n: int, seed: int) -> list[dict[str, list[Any]]]:
    # Every kind but JSON (which the GIL path reads), multi-valued ones, and columns whose
    # first null (an absent field) comes early, late or never.
    import datetime as dt

    rng = random.Random(seed)
    first_null = {"t": 5, "i": n - 7, "u": n + 1, "f": 0, "b": 4500, "d": 9, "by": 3, "ip": 11}
    makers: dict[str, Any] = {
        "t": lambda: rng.choice(["", "é", "日本", "x" * rng.randint(0, 200)]),
        "i": lambda: rng.randint(-(2**63), 2**63 - 1),
        "u": lambda: rng.randint(0, 2**64 - 1),
        "f": lambda: rng.choice([-0.0, 0.0, float("nan"), float("inf"), rng.random()]),
        "b": lambda: rng.random() < 0.5,
        "d": lambda: (
            dt.datetime(2000, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=rng.randint(0, 10**9))
        ),
        "by": lambda: rng.randbytes(rng.randint(0, 90)),
        "ip": lambda: f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}",
    }
    docs = []
    for k in range(n):
        doc: dict[str, list[Any]] = {}
        for name, make in makers.items():
            if k >= first_null[name] and rng.random() < 0.3:
                continue
            doc[name] = [make() for _ in range(rng.choice([1, 1, 1, 2]) if name != "i" else 1)]
        docs.append(doc)
    return docs


def test_a_large_one_call_decode_of_every_kind_equals_the_twin(tmp_path: Path) -> None:
    # Large enough that the kernel reserves its buffers' room ahead (4,096 rows or more).
    import json

    from test_docstore import _ipc, _write, field_specs

    docs = _random_docs(6000, 3)
    directory = _write(tmp_path / "docs", docs)
    meta = json.loads((directory / "meta.json").read_text())
    specs = {  # "i" single-valued (one value a document), the others multi-valued
        fid: FieldSpec(spec.name, spec.kind, multi=spec.name != "i")
        for fid, spec in field_specs(directory).items()
        if spec.kind != "json"
    }
    out = {}
    for name in TWINS:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(impl.IMPL_ENV, name)
            batches = []
            for segment in meta["segments"]:
                raw = (directory / (segment["segment_id"].replace("-", "") + ".store")).read_bytes()
                store = read_store(raw)
                batches.append(
                    decode_parts([StorePart(store, range(store.num_docs))], specs, threads="off")
                )
            out[name] = [_ipc(b) for b in batches]
    assert out["python"] == out["cython"]
    table = pa.concat_tables(pa.ipc.open_stream(b).read_all() for b in out["cython"])
    assert table.column("i").to_pylist() == [d["i"][0] if "i" in d else None for d in docs]
    assert table.column("t").to_pylist() == [d.get("t") for d in docs]
