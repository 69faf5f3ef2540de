"""The doc store's block kernel: both twins byte for byte on hostile rows, read back by
tantivy-py.

Seeded random rows of every stored kind (nulls, empty and huge strings, unicode, the
edges of u64/i64, NaN bit patterns, -0.0, infinities, subnormals, bools, dates, bytes)
go through ``store_file`` once per twin; the two ``.store`` files must be equal, and
the segment the writer makes of the rows, opened by tantivy-py, must give back each
document's stored values (the rows themselves are the oracle).
"""

from __future__ import annotations

import datetime
import json
import math
import random
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy

from indextables.search.read.docstore import read_store
from indextables.search.write.segwriter import impl
from indextables.search.write.segwriter.docstore import StoredColumn, store_file

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)

FIELDS: list[tuple[str, str, pa.DataType]] = [
    ("title", "text", pa.string()),
    ("count", "u64", pa.uint64()),
    ("delta", "i64", pa.int64()),
    ("score", "f64", pa.float64()),
    ("flag", "bool", pa.bool_()),
    ("at", "date", pa.timestamp("us", tz="UTC")),
    ("blob", "bytes", pa.binary()),
    ("Émoji", "text", pa.large_string()),
]

_NAN_BITS = [
    0x7FF8000000000000,  # the quiet NaN
    0xFFF8000000000000,  # negative quiet NaN
    0x7FF0000000000001,  # signalling payload
    0x7FFFFFFFFFFFFFFF,
    0xFFF0000000DEADBF,
]


def _bits(value: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", value))[0])


def _float(rng: random.Random) -> float | None:
    return rng.choice(
        [
            None,
            0.0,
            -0.0,
            math.inf,
            -math.inf,
            5e-324,
            -5e-324,
            2.2250738585072014e-308,
            1.7976931348623157e308,
            -1.7976931348623157e308,
            _bits(rng.choice(_NAN_BITS)),
            rng.uniform(-1e6, 1e6),
        ]
    )


def _text(rng: random.Random) -> str | None:
    k = rng.random()
    if k < 0.15:
        return None
    if k < 0.25:
        return ""
    if k < 0.27:
        return "".join(rng.choice("ab日") for _ in range(rng.randint(20_000, 80_000)))
    alphabet = "aZ 9é日\U0001f600\x00\n\t\u2028\ufeff\U0010ffff"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))


def _rows(seed: int, n: int) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        micros = rng.choice([0, -1, 1, rng.randrange(-(2**50), 2**50)])
        blob = rng.choice(
            [None, b"", b"\x00" * rng.randint(1, 5000), rng.randbytes(rng.randint(0, 200))]
        )
        rows.append(
            (
                _text(rng),
                rng.choice([None, 0, 1, 2**63, 2**64 - 1, rng.randrange(2**64)]),
                rng.choice([None, -(2**63), -1, 0, 2**63 - 1, rng.randrange(-(2**63), 2**63)]),
                _float(rng),
                rng.choice([None, True, False]),
                rng.choice([None, _EPOCH + datetime.timedelta(microseconds=micros)]),
                blob,
                _text(rng),
            )
        )
    return rows


def _columns(rows: list[tuple[Any, ...]], *, chunked: bool) -> list[StoredColumn]:
    out = []
    for field_id, (name, kind, arrow_type) in enumerate(FIELDS):
        values = [row[field_id] for row in rows]
        array: pa.Array | pa.ChunkedArray = pa.array(values, type=arrow_type)
        if chunked and len(values) > 2:
            cut = len(values) // 3
            array = pa.chunked_array([array[:cut], array[cut:]], type=arrow_type)
        elif len(values) > 4:
            # A sliced array (non-zero offset) of the same values.
            padded = pa.array([values[-1], *values, values[0]], type=arrow_type)
            array = padded[1 : len(values) + 1]
        out.append(StoredColumn(name, field_id, kind, array))  # type: ignore[arg-type]
    return out


def _twin_store(twin: str, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> bytes:
    monkeypatch.setenv(impl.IMPL_ENV, twin)
    assert impl.kernels().__name__.endswith("_kernels" if twin == "cython" else "_py")
    return store_file(**kwargs)


_ADD = {
    "text": ("add_text_field", "add_text"),
    "u64": ("add_unsigned_field", "add_unsigned"),
    "i64": ("add_integer_field", "add_integer"),
    "f64": ("add_float_field", "add_float"),
    "bool": ("add_boolean_field", "add_boolean"),
    "date": ("add_date_field", "add_date"),
    "bytes": ("add_bytes_field", "add_bytes"),
}


def _tantivy_index(path: Path, rows: list[tuple[Any, ...]], block: int, comp: str) -> Path:
    # tantivy-py's own one-segment index of the rows; returns its ``.store`` file.
    builder = tantivy.SchemaBuilder()
    for name, kind, _ in FIELDS:
        getattr(builder, _ADD[kind][0])(name, stored=True)
    tantivy.Index(builder.build(), path=str(path))
    meta = json.loads((path / "meta.json").read_text())
    meta["index_settings"]["docstore_blocksize"] = block
    meta["index_settings"]["docstore_compression"] = comp
    (path / "meta.json").write_text(json.dumps(meta))
    writer = tantivy.Index.open(str(path)).writer(200_000_000, 1)
    for row in rows:
        doc = tantivy.Document()
        for (name, kind, _), value in zip(FIELDS, row, strict=True):
            if value is not None:
                getattr(doc, _ADD[kind][1])(name, value)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    (store,) = path.glob("*.store")
    return store


def _comparable(kind: str, value: Any) -> Any:
    # Floats by their bits (NaN payloads, -0.0), the rest as they are.
    if kind == "f64":
        return struct.pack("<d", value)
    return value


def _read_back(path: Path, n: int) -> list[tuple[Any, ...]]:
    searcher = tantivy.Index.open(str(path)).searcher()
    assert searcher.num_docs == n
    out = []
    for i in range(n):
        doc = searcher.doc(tantivy.DocAddress(0, i)).to_dict()
        values = []
        for name, kind, _ in FIELDS:
            found = doc.get(name, [])
            assert len(found) <= 1, name
            values.append(_comparable(kind, found[0]) if found else None)
        out.append(tuple(values))
    return out


@pytest.mark.parametrize(
    ("seed", "n", "block", "comp", "chunked"),
    [
        (11, 0, 4096, "lz4", False),
        (12, 1, 4096, "lz4", False),
        (13, 300, 4096, "lz4", True),
        (14, 300, 16384, "none", False),
        (15, 500, 64, "lz4", False),  # many blocks: a three-layer skip index
        (16, 200, 0, "none", True),  # one document per block
    ],
)
def test_twins_write_the_same_store(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    seed: int,
    n: int,
    block: int,
    comp: str,
    chunked: bool,
) -> None:
    rows = _rows(seed, n)
    kwargs = {
        "columns": _columns(rows, chunked=chunked),
        "num_docs": n,
        "block_size": block,
        "compressor": comp,
    }
    compiled = _twin_store("cython", monkeypatch, **kwargs)
    pure = _twin_store("python", monkeypatch, **kwargs)
    assert compiled == pure
    if n == 0:
        # No documents: no blocks, an empty skip index (tantivy-py writes no segment).
        assert read_store(compiled).num_docs == 0
        return
    store = _tantivy_index(tmp_path, rows, block, comp)
    assert store.read_bytes() == compiled
    # tantivy-py reads the documents back from our bytes in its segment.
    store.write_bytes(compiled)
    want = [
        tuple(
            None if v is None else _comparable(kind, v)
            for (_, kind, _), v in zip(FIELDS, row, strict=True)
        )
        for row in rows
    ]
    assert _read_back(tmp_path, n) == want
