"""The segment writer's ``.store`` file byte for byte against tantivy-py's.

tantivy-py stores the same rows (one segment, the block size and compressor set in its
``meta.json``); its ``.store`` file is the oracle for ours, and the repository's doc-store
reader decodes ours back to the rows (compared with the Python values given). The LZ4
kernel runs as both twins.
"""

from __future__ import annotations

import datetime
import glob
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy

from indextables.search.read.docstore import FieldSpec, read_store
from indextables.search.read.docstore._kernels_py import lz4_decompress
from indextables.search.read.docstore.decode import decode_docs
from indextables.search.write.segwriter import SegmentWriteError, impl
from indextables.search.write.segwriter import _kernels_py as pure
from indextables.search.write.segwriter.docstore import StoredColumn, store_file
from indextables.search.write.segwriter.lz4block import lz4_block

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


@pytest.fixture(params=["python", "cython"])
def twin(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(impl.IMPL_ENV, request.param)
    assert impl.kernels().__name__.endswith("_kernels" if request.param == "cython" else "_py")
    return str(request.param)


# (name, kind, Arrow type), in schema order (field id = index); the names are not in
# schema order, so a document's values follow the names (tantivy-py's order).
FIELDS: list[tuple[str, str, pa.DataType]] = [
    ("title", "text", pa.string()),
    ("count", "u64", pa.uint64()),
    ("delta", "i64", pa.int64()),
    ("score", "f64", pa.float64()),
    ("flag", "bool", pa.bool_()),
    ("at", "date", pa.timestamp("us", tz="UTC")),
    ("blob", "bytes", pa.binary()),
]


def _tantivy_store(directory: Path, rows: list[tuple[Any, ...]], block: int, comp: str) -> bytes:
    builder = tantivy.SchemaBuilder()
    adders = {
        "text": (builder.add_text_field, "add_text"),
        "u64": (builder.add_unsigned_field, "add_unsigned"),
        "i64": (builder.add_integer_field, "add_integer"),
        "f64": (builder.add_float_field, "add_float"),
        "bool": (builder.add_boolean_field, "add_boolean"),
        "date": (builder.add_date_field, "add_date"),
        "bytes": (builder.add_bytes_field, "add_bytes"),
    }
    for name, kind, _ in FIELDS:
        adders[kind][0](name, stored=True)
    tantivy.Index(builder.build(), path=str(directory))
    meta_path = directory / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["index_settings"]["docstore_blocksize"] = block
    meta["index_settings"]["docstore_compression"] = comp
    meta_path.write_text(json.dumps(meta))
    index = tantivy.Index.open(str(directory))
    writer = index.writer(200_000_000, 1)
    for row in rows:
        doc = tantivy.Document()
        for (name, kind, _), value in zip(FIELDS, row, strict=True):
            if value is not None:
                getattr(doc, adders[kind][1])(name, value)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    (path,) = glob.glob(str(directory / "*.store"))
    return Path(path).read_bytes()


def _text(rng: random.Random) -> str | None:
    k = rng.random()
    if k < 0.1:
        return None
    if k < 0.2:
        return ""
    if k < 0.23:
        return "x" * rng.randint(1, 40_000)  # long matches
    if k < 0.25:
        # Past 65,535 bytes in one block: LZ4's 32-bit table and 8-byte hash.
        return "".join(rng.choice("abcdefgh") for _ in range(rng.randint(60_000, 90_000)))
    alphabet = "ab cé日\U0001f600\x00\n\u2028"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))


def _rows(seed: int, n: int) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        micros = rng.randrange(-(2**50), 2**50)
        rows.append(
            (
                _text(rng),
                rng.choice([None, 0, 2**64 - 1, rng.randrange(2**64)]),
                rng.choice([None, -(2**63), 2**63 - 1, 0, rng.randrange(-(2**63), 2**63)]),
                rng.choice(
                    [None, 0.0, -0.0, 1.5, -1e300, float("inf"), -float("inf"), rng.random()]
                ),
                rng.choice([None, True, False]),
                rng.choice([None, _EPOCH + datetime.timedelta(microseconds=micros)]),
                rng.choice(
                    [None, b"", bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))]
                ),
            )
        )
    return rows


def _columns(rows: list[tuple[Any, ...]]) -> list[StoredColumn]:
    by_field = list(zip(*rows, strict=True)) if rows else [()] * len(FIELDS)
    return [
        StoredColumn(name, field_id, kind, pa.array(list(values), type=arrow_type))  # type: ignore[arg-type]
        for field_id, ((name, kind, arrow_type), values) in enumerate(
            zip(FIELDS, by_field, strict=True)
        )
    ]


@pytest.mark.parametrize(
    ("seed", "n", "block", "comp"),
    [
        (0, 1, 16384, "lz4"),
        (1, 120, 16384, "lz4"),  # tantivy-py's defaults
        (2, 120, 4096, "lz4"),  # this project's splits
        (3, 120, 4096, "none"),
        (4, 700, 64, "lz4"),  # a block per document or two: 3 skip-index layers
        (5, 600, 0, "none"),  # every document its own block
        (6, 40, 16384, "lz4"),
    ],
)
def test_store_file_is_tantivy_pys(
    twin: str, tmp_path: Path, seed: int, n: int, block: int, comp: str
) -> None:
    rows = _rows(seed, n)
    theirs = _tantivy_store(tmp_path, rows, block, comp)
    ours = store_file(_columns(rows), n, block_size=block, compressor=comp)  # type: ignore[arg-type]
    assert ours == theirs

    store = read_store(ours)
    assert store.compressor == comp
    assert store.num_docs == n
    if block <= 64:
        assert len(store.doc_starts) > 8**2  # the skip index has three layers
    specs = {i: FieldSpec(name, kind) for i, (name, kind, _) in enumerate(FIELDS)}  # type: ignore[arg-type]
    batch = decode_docs(store, list(range(n)), specs)
    for i, (name, kind, _) in enumerate(FIELDS):
        got = batch.column(i).to_pylist()
        want = [row[i] for row in rows]
        if kind == "date":
            want = [
                None if v is None else (v - _EPOCH) // datetime.timedelta(microseconds=1)
                for v in want
            ]
            got = [
                None if v is None else v // 1000
                for v in batch.column(i).cast(pa.int64()).to_pylist()
            ]
        if kind == "f64":
            # -0.0 == 0.0: compare the signs too.
            want = [None if v is None else (v, str(v)) for v in want]
            got = [None if v is None else (v, str(v)) for v in got]
        assert got == want, name


def test_lz4_block_round_trips_and_matches_tantivy_on_edge_lengths(
    twin: str, tmp_path: Path
) -> None:
    # Lengths around the literal-only limit (13 bytes) and the end margins, over a
    # repetitive input (matches everywhere), through tantivy-py's own store of one text
    # value each: the block bytes after the 4-byte size are the LZ4 block.
    rows = [
        ("ab" * (k // 2) + "a" * (k % 2), None, None, None, None, None, None) for k in range(80)
    ]
    for k, row in enumerate(rows):
        sub = tmp_path / str(k)
        sub.mkdir()
        theirs = read_store(_tantivy_store(sub, [row], 16384, "lz4"))
        block = bytes(theirs.data)
        ours = store_file(_columns([row]), 1, compressor="lz4")
        assert read_store(ours).data == theirs.data
        raw = lz4_decompress(block[4:], int.from_bytes(block[:4], "little"))
        assert lz4_block(raw) == block[4:]


def test_lz4_twins_agree_on_random_hostile_input() -> None:
    # Both twins, byte for byte, over seeded inputs: literal-only lengths, runs (long
    # matches, overlapping copies), few-symbol text, random bytes, inputs on both sides
    # of the 65,535-byte table switch; each block decompresses back to its input.
    from indextables.search.write.segwriter import _kernels as compiled

    rng = random.Random(7)
    lengths = [0, 1, 12, 13, 14, 18, 19, 20, 255, 270, 4096, 65534, 65535, 65536, 100_000]
    for length in lengths + [rng.randint(0, 20_000) for _ in range(60)]:
        shape = rng.random()
        if shape < 0.25:
            src = bytes(rng.randrange(256) for _ in range(length))
        elif shape < 0.5:
            src = bytes([rng.randrange(256)]) * length
        elif shape < 0.75:
            src = bytes(rng.choice(b"ab\x00\xff") for _ in range(length))
        else:
            chunk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 70)))
            src = (chunk * (length // len(chunk) + 1))[:length]
        ours = compiled.lz4_block(src)
        assert ours == pure.lz4_block(src), length
        assert lz4_decompress(ours, len(src)) == src


def test_store_file_refuses_bad_input() -> None:
    with pytest.raises(SegmentWriteError, match="compressor"):
        store_file([], 0, compressor="zstd")  # type: ignore[arg-type]
    with pytest.raises(SegmentWriteError, match="title: 1 values"):
        store_file([StoredColumn("title", 0, "text", pa.array(["a"]))], 2)
    with pytest.raises(SegmentWriteError, match="flag"):
        store_file([StoredColumn("flag", 0, "ip", pa.array(["a"]))], 1)  # type: ignore[arg-type]
    with pytest.raises(SegmentWriteError, match="count: row 0"):
        store_file([StoredColumn("count", 0, "u64", pa.array([-1]))], 1)
    with pytest.raises(SegmentWriteError, match="flag: row 0: not a bool"):
        store_file([StoredColumn("flag", 0, "bool", pa.array([1]))], 1)
    with pytest.raises(SegmentWriteError, match="at: a date column must be timestamps"):
        store_file([StoredColumn("at", 0, "date", pa.array(["2020-01-01"]))], 1)
    year_3000 = pa.array([datetime.datetime(3000, 1, 1)], pa.timestamp("us"))
    with pytest.raises(SegmentWriteError, match="at: a date outside the i64 nanoseconds"):
        store_file([StoredColumn("at", 0, "date", year_3000)], 1)
    # Invalid UTF-8 behind an Arrow string column (Arrow does not check it here).
    offsets = pa.py_buffer(bytes([0, 0, 0, 0, 2, 0, 0, 0]))
    broken = pa.Array.from_buffers(pa.string(), 1, [None, offsets, pa.py_buffer(b"\xc3(")])
    with pytest.raises(SegmentWriteError, match="title: values Arrow cannot read"):
        store_file([StoredColumn("title", 0, "text", broken)], 1)
