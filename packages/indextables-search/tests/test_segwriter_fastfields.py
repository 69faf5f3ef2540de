"""The segment writer's ``.fast`` file byte for byte against tantivy-py's one-segment index.

tantivy-py indexes the same rows (one writer thread, one commit); its ``.fast`` file is
the oracle. Our file is then put in place of its own and read back through tantivy-py's
fast-field access, compared with the Python values given.
"""

from __future__ import annotations

import datetime
import glob
import ipaddress
import math
import random
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy

from indextables.search.write.segwriter import SegmentWriteError
from indextables.search.write.segwriter.fastfields import FastField, fast_file

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_ADD = {
    "u64": ("add_unsigned_field", "add_unsigned", pa.uint64()),
    "i64": ("add_integer_field", "add_integer", pa.int64()),
    "f64": ("add_float_field", "add_float", pa.float64()),
    "bool": ("add_boolean_field", "add_boolean", pa.bool_()),
    "date": ("add_date_field", "add_date", pa.timestamp("us", tz="UTC")),
    "str": ("add_text_field", "add_text", pa.string()),
    "bytes": ("add_bytes_field", "add_bytes", pa.binary()),
    "ip": ("add_ip_addr_field", "add_ip_addr", pa.string()),
}


def _tantivy(directory: Path, fields: list[tuple[str, str]], rows: list[tuple[Any, ...]]) -> Path:
    builder = tantivy.SchemaBuilder()
    for name, kind in fields:
        extra = {"tokenizer_name": "raw"} if kind == "str" else {}
        getattr(builder, _ADD[kind][0])(name, fast=True, **extra)
    index = tantivy.Index(builder.build(), path=str(directory))
    writer = index.writer(100_000_000, 1)
    for row in rows:
        doc = tantivy.Document()
        for (name, kind), value in zip(fields, row, strict=True):
            for v in value if isinstance(value, list) else [value]:
                if v is not None:
                    getattr(doc, _ADD[kind][1])(name, v)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    (path,) = glob.glob(str(directory / "*.fast"))
    return Path(path)


def _ours(fields: list[tuple[str, str]], rows: list[tuple[Any, ...]], lists: bool) -> bytes:
    columns = {}
    for i, (name, kind) in enumerate(fields):
        typ = _ADD[kind][2]
        columns[name] = pa.array([r[i] for r in rows], pa.list_(typ) if lists else typ)
    return fast_file([FastField(n, k) for n, k in fields], columns, len(rows))  # type: ignore[arg-type]


def _nan(bits: int) -> float:
    value: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return value


def _value(kind: str, rng: random.Random) -> Any:
    k = rng.random()
    if k < 0.15:
        return None
    if kind == "u64":
        return rng.choice([0, 2**64 - 1, 7, rng.randrange(2**64), rng.randrange(1000) * 1000])
    if kind == "i64":
        return rng.choice([-(2**63), 2**63 - 1, 0, -5, rng.randrange(-(2**63), 2**63)])
    if kind == "f64":
        nans = [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFFFFFFFFFFFFFFF]
        return rng.choice(
            [0.0, -0.0, math.inf, -math.inf, 1.5, -1e300, rng.random(), _nan(rng.choice(nans))]
        )
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "date":
        return _EPOCH + datetime.timedelta(microseconds=rng.randrange(-(2**50), 2**50))
    if kind == "str":
        return rng.choice(["", "a", "zz", "日本", "\x00", "é" * rng.randint(1, 30)])
    if kind == "bytes":
        return rng.choice([b"", b"\x00\xff", bytes(rng.randrange(256) for _ in range(5))])
    return rng.choice(
        [
            "::",
            "10.0.0.1",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            str(ipaddress.IPv4Address(rng.randrange(2**32))),
            str(ipaddress.IPv6Address(rng.randrange(2**128))),
        ]
    )


KINDS = ["u64", "i64", "f64", "bool", "date", "str", "bytes", "ip"]


@pytest.mark.parametrize("n", [1, 2, 700, 1500])
@pytest.mark.parametrize("lists", [False, True])
def test_fast_file_is_tantivy_pys(tmp_path: Path, n: int, lists: bool) -> None:
    rng = random.Random(n * 2 + lists)
    fields = [(f"f_{kind}", kind) for kind in KINDS]
    rows = []
    for _ in range(n):
        if lists:
            rows.append(
                tuple(
                    None
                    if rng.random() < 0.1
                    else [_value(kind, rng) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
                    for kind in KINDS
                )
            )
        else:
            rows.append(tuple(_value(kind, rng) for kind in KINDS))
    theirs = _tantivy(tmp_path, fields, rows)
    ours = _ours(fields, rows, lists)
    assert ours == theirs.read_bytes()

    # Read ours back through tantivy-py (first value per document).
    theirs.write_bytes(ours)
    index = tantivy.Index.open(str(tmp_path))
    searcher = index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), n).hits
    addresses = sorted((a for _s, a in hits), key=lambda a: a.doc)
    for i, kind in enumerate(KINDS):
        if kind not in ("u64", "i64", "f64", "bool"):
            continue
        got = searcher.fast_field_values(f"f_{kind}", addresses)
        want = []
        for row in rows:
            value = row[i]
            if isinstance(value, list) or value is None:
                present = [v for v in value or [] if v is not None]
                value = present[0] if present else None
            want.append(value)
        norm = [None if v is None else (struct.pack("<d", v) if kind == "f64" else v) for v in got]
        expected = [
            None if v is None else (struct.pack("<d", v) if kind == "f64" else v) for v in want
        ]
        if kind == "f64":  # tantivy-py may hand any NaN back canonicalised
            norm = [
                b if b is None or not math.isnan(struct.unpack("<d", b)[0]) else "nan" for b in norm
            ]
            expected = [
                b if b is None or not math.isnan(struct.unpack("<d", b)[0]) else "nan"
                for b in expected
            ]
        assert norm == expected, kind


@pytest.mark.parametrize(
    "values",
    [
        [5] * 1300,  # all equal
        list(range(0, 3000, 3)),  # monotonic, gcd 3
        [2**64 - 1 - i * 1_000_000 for i in range(1100)],  # descending, large
        [0, 2**64 - 1] * 300,  # full range
    ],
)
def test_u64_codec_edges_are_tantivy_pys(tmp_path: Path, values: list[int]) -> None:
    rows = [(v,) for v in values]
    theirs = _tantivy(tmp_path, [("v", "u64")], rows)
    assert _ours([("v", "u64")], rows, False) == theirs.read_bytes()


def test_dense_optional_blocks_are_tantivy_pys(tmp_path: Path) -> None:
    rng = random.Random(9)
    rows = [(None if rng.random() < 0.05 else rng.randrange(50),) for _ in range(70_000)]
    theirs = _tantivy(tmp_path, [("v", "u64")], rows)
    assert _ours([("v", "u64")], rows, False) == theirs.read_bytes()


def test_errors_name_the_field() -> None:
    with pytest.raises(SegmentWriteError, match="'a'"):
        fast_file([FastField("a", "u64")], {"a": pa.array([-1], pa.int64())}, 1)
    with pytest.raises(SegmentWriteError, match="'a'"):
        fast_file([FastField("a", "u64")], {"a": pa.array(["x"])}, 1)
    with pytest.raises(SegmentWriteError, match="'a'"):
        fast_file([FastField("a", "u64")], {"a": pa.array([1, 2], pa.uint64())}, 1)
    with pytest.raises(SegmentWriteError, match="'a'"):
        fast_file([FastField("a", "u64")], {}, 1)
    with pytest.raises(SegmentWriteError, match="'a'"):
        fast_file([FastField("a", "ip")], {"a": pa.array(["not an ip"])}, 1)
