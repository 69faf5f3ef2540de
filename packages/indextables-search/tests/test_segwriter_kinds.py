"""The segment writer's stored lists, stored and fast IP addresses and long fast values
against tantivy-py's segment of the same rows.

tantivy-py indexes seeded hostile rows (null, empty and null-holding lists of every value
kind, IPv4, IPv6 and IPv4-mapped addresses, fast text and bytes values around and past
65,535 bytes, long values sharing their first 65,535 bytes) into one segment; the writer
writes its segment of the same rows into an index of the same schema. Every file must be
tantivy-py's byte for byte, and tantivy-py opening our index must answer queries with the
same documents and stored values. Both kernel twins. Then whole tables: ``write_table``
with the segments feed writes IP columns and long exact strings through the writer (not
through tantivy-py), reads back the input rows and answers as the JSON feed.
"""

from __future__ import annotations

import datetime
import ipaddress
import itertools
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy
from segoracle import our_segment, segment_files, tantivy_segment
from writedata import row_multiset

from indextables.search import open_table, write_table
from indextables.search.schema.tokenizers import open_index
from indextables.search.write import segfeed, splitwriter
from indextables.search.write.segwriter import impl
from indextables.search.write.segwriter.segment import SEGMENT_EXTENSIONS

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
FEED_KEY = "spark.indextables.indexWriter.feed"


@pytest.fixture(params=["python", "cython"])
def twin(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(impl.IMPL_ENV, request.param)
    assert impl.kernels().__name__.endswith("_kernels" if request.param == "cython" else "_py")
    return str(request.param)


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_ip_addr_field("ip", stored=True, indexed=True, fast=True)
    b.add_ip_addr_field("ips", stored=True, indexed=True, fast=True)
    b.add_integer_field("li", stored=True, indexed=True, fast=True)
    b.add_unsigned_field("lu", stored=True, indexed=True, fast=True)
    b.add_float_field("lf", stored=True, indexed=True, fast=True)
    b.add_boolean_field("lbo", stored=True, indexed=True, fast=True)
    b.add_date_field("ld", stored=True, indexed=True, fast=True)
    b.add_bytes_field("lby", stored=True, indexed=True, fast=True)
    b.add_text_field("long", stored=True, fast=True, tokenizer_name="raw")
    b.add_bytes_field("blob", stored=True, indexed=True, fast=True)
    return b.build()


_ADD = {
    "ip": "add_ip_addr", "ips": "add_ip_addr", "li": "add_integer", "lu": "add_unsigned",
    "lf": "add_float", "lbo": "add_boolean", "ld": "add_date", "lby": "add_bytes",
    "long": "add_text", "blob": "add_bytes",
}  # fmt: skip
_ARROW = {
    "ip": pa.string(), "ips": pa.list_(pa.string()), "li": pa.list_(pa.int64()),
    "lu": pa.large_list(pa.uint64()), "lf": pa.list_(pa.float64()),
    "lbo": pa.list_(pa.bool_()), "ld": pa.list_(pa.timestamp("us", tz="UTC")),
    "lby": pa.list_(pa.binary()), "long": pa.string(), "blob": pa.binary(),
}  # fmt: skip

_IPS = [
    "0.0.0.0", "1.2.3.4", "255.255.255.255", "::", "::1", "::ffff:1.2.3.4", "::ffff:0.0.0.0",
    "fe80::1", "2001:db8::ff00:42:8329", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    "::fffe:1.2.3.4", "64:ff9b::1.2.3.4",
]  # fmt: skip
_LONG = 65_535


def _ip(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.5:
        return rng.choice(_IPS)
    if roll < 0.75:
        return str(ipaddress.IPv4Address(rng.getrandbits(32)))
    return str(ipaddress.IPv6Address(rng.getrandbits(128)))


def _long_text(rng: random.Random) -> str | None:
    return rng.choice(
        [
            None, "", "a", "k1", "z" * (_LONG - 1), "z" * _LONG, "z" * (_LONG + 1),
            "z" * _LONG + "1", "z" * _LONG + "2", "y" * 70_000, "\u00e9" * 40_000,
            "x" * (_LONG - 1) + "\u00e9", "w" * 200_000,
        ]
    )  # fmt: skip


def _long_bytes(rng: random.Random) -> bytes | None:
    return rng.choice(
        [
            None, b"", b"\x00", b"\xff" * (_LONG - 1), b"\xff" * _LONG, b"\xff" * (_LONG + 1),
            b"\x01" * _LONG + b"\x02", b"\x01" * _LONG + b"\x03", b"\x00" * 100_000,
        ]
    )  # fmt: skip


def _rows(rng: random.Random, count: int) -> dict[str, list[Any]]:
    def lists(make: Callable[[], Any]) -> list[Any]:
        out: list[Any] = []
        for _ in range(count):
            roll = rng.random()
            if roll < 0.1:
                out.append(None)
            elif roll < 0.2:
                out.append([])
            else:
                size = rng.choice([1, 1, 2, 3, 7])
                out.append([None if rng.random() < 0.15 else make() for _ in range(size)])
        return out

    micros = [0, -1, 1, 1_000_000, -(10**15), 10**15]
    return {
        "ip": [None if rng.random() < 0.15 else _ip(rng) for _ in range(count)],
        "ips": lists(lambda: _ip(rng)),
        "li": lists(lambda: rng.choice([-(2**63), 2**63 - 1, 0, -1, rng.randrange(-9, 9)])),
        "lu": lists(lambda: rng.choice([0, 1, 2**64 - 1, 2**63, rng.randrange(9)])),
        "lf": lists(lambda: rng.choice([0.0, -0.0, 1.5, -2.25, 1e308, float("inf")])),
        "lbo": lists(lambda: rng.random() < 0.5),
        "ld": lists(lambda: _EPOCH + datetime.timedelta(microseconds=rng.choice(micros))),
        "lby": lists(lambda: rng.choice([b"", b"\x00", b"ab", bytes(range(40))])),
        "long": [_long_text(rng) for _ in range(count)],
        "blob": [_long_bytes(rng) for _ in range(count)],
    }


def _empty_index(directory: Path) -> None:
    tantivy.Index(_schema(), path=str(directory))
    meta_path = directory / "meta.json"
    meta = json.loads(meta_path.read_text())
    for entry in meta["schema"]:
        if entry["type"] == "date":
            entry["options"]["precision"] = "microseconds"
    meta["index_settings"]["docstore_blocksize"] = 4096
    meta_path.write_text(json.dumps(meta))


def _answers(index: tantivy.Index, query: tantivy.Query) -> list[tuple[int, str]]:
    searcher = index.searcher()
    hits = searcher.search(query, 10_000).hits
    out = []
    for _score, address in hits:
        doc = searcher.doc(address).to_dict()
        out.append((address.doc, repr(sorted(doc.items()))))
    return sorted(out)


def _queries(schema: tantivy.Schema, rows: dict[str, list[Any]]) -> list[tantivy.Query]:
    Q = tantivy.Query
    queries = [Q.all_query()]
    for ip in ["1.2.3.4", "::ffff:1.2.3.4", "::", "0.0.0.0", "::1", "fe80::1"]:
        queries += [Q.term_query(schema, "ip", ip), Q.term_query(schema, "ips", ip)]
    for name, values in (("li", [0, -1, 2**63 - 1]), ("lu", [0, 2**64 - 1]), ("lbo", [True])):
        queries += [Q.term_query(schema, name, v) for v in values]
    queries += [Q.term_query(schema, "long", w) for w in ("k1", "z" * (_LONG - 5), "a")]
    queries += [Q.term_query(schema, "lby", b"ab"), Q.term_query(schema, "blob", b"\x00")]
    for name in _ADD:
        queries.append(Q.exists_query(name))
    return queries


@pytest.mark.parametrize(("seed", "count"), [(0, 1), (1, 60), (2, 400)])
def test_lists_ips_and_long_fast_values_are_tantivys_byte_for_byte(
    tmp_path: Path, twin: str, seed: int, count: int
) -> None:
    rng = random.Random(seed)
    rows = _rows(rng, count)
    want_dir, got_dir = tmp_path / "tantivy", tmp_path / "ours"
    want_dir.mkdir()
    got_dir.mkdir()
    want = tantivy_segment(want_dir, _empty_index, rows, count, _ADD)
    our_segment(got_dir, _empty_index, rows, count, _ARROW)
    ours, theirs = segment_files(got_dir), segment_files(want_dir)
    for ext in SEGMENT_EXTENSIONS:
        assert ours[ext] == theirs[ext], ext
    got = open_index(str(got_dir))
    assert got.searcher().num_docs == count
    for query in _queries(want.schema, rows):
        assert _answers(got, query) == _answers(want, query), query


def test_stored_values_read_back_as_the_rows(tmp_path: Path) -> None:
    # Independent of tantivy-py's writer: the rows' own values (null elements, null and
    # empty lists dropped, IPv4 as its mapped IPv6 form) from tantivy-py's reader.
    rng = random.Random(9)
    count = 120
    rows = _rows(rng, count)
    our_segment(tmp_path, _empty_index, rows, count, _ARROW)
    searcher = open_index(str(tmp_path)).searcher()

    def mapped(text: str) -> str:
        address = ipaddress.ip_address(text)
        if isinstance(address, ipaddress.IPv4Address):
            address = ipaddress.IPv6Address(b"\x00" * 10 + b"\xff\xff" + address.packed)
        return str(address)

    for row in range(count):
        doc = searcher.doc(tantivy.DocAddress(0, row)).to_dict()
        for name in ("ips", "li", "lu", "lbo", "lby"):
            values = [v for v in rows[name][row] or [] if v is not None]
            if name == "ips":
                values = [mapped(v) for v in values]
            got = doc.get(name, [])
            if name == "ips":
                got = [str(ipaddress.ip_address(v)) for v in got]
            assert got == values, (row, name)
        if rows["long"][row] is not None:
            assert doc["long"] == [rows["long"][row]]  # the stored value is not cut


class _Calls:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tantivy = 0
        self.segments = 0
        for name in ("json_lines", "documents"):
            monkeypatch.setattr(splitwriter, name, self._counted(getattr(splitwriter, name), 0))
        monkeypatch.setattr(segfeed, "write_segment", self._counted(segfeed.write_segment, 1))

    def _counted(self, function: Callable[..., Any], which: int) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if which:
                self.segments += 1
            else:
                self.tantivy += 1
            return function(*args, **kwargs)

        return call


def _table(seed: int, n: int) -> pa.Table:
    rng = random.Random(seed)
    ips = [None if rng.random() < 0.2 else _ip(rng) for _ in range(n)]
    strings = [_long_text(rng) for _ in range(n)]
    blobs = [_long_bytes(rng) for _ in range(n)]
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "addr": pa.array(ips, pa.string()),
            "s": pa.array(strings, pa.string()),
            "blob": pa.array(blobs, pa.binary()),
            "n": pa.array([rng.randrange(-5, 5) for _ in range(n)], pa.int64()),
        }
    )


def _ids(table: Any) -> list[int]:
    return sorted(table.column("id").to_pylist())


def test_tables_with_ips_and_long_values_go_through_the_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _table(4, 300)
    options = {
        "spark.indextables.indexing.typemap.addr": "ip",
        "spark.indextables.indexing.fastfields": "addr,s,blob,n",
        "spark.indextables.indexWriter.batchSize": "53",
    }
    got = {}
    for feed in ("json", "segments"):
        calls = _Calls(monkeypatch)
        uri = str(tmp_path / feed)
        write_table(uri, data, options={**options, FEED_KEY: feed}, workers=1)
        if feed == "segments":
            assert calls.segments > 0
            assert calls.tantivy == 0  # no split went through tantivy-py
        table = open_table(uri)
        rows = table.to_arrow()
        got[feed] = {
            "rows": row_multiset(rows.to_pylist()),
            "k1": _ids(table.search("s:k1", columns=["id"])),
            "long": _ids(table.search(where=f"s = '{'z' * (_LONG + 1)}'", columns=["id"])),
            "ip": _ids(table.search('addr:"1.2.3.4"', columns=["id"])),
            "mapped": _ids(table.search('addr:"::ffff:1.2.3.4"', columns=["id"])),
            "ip range": _ids(table.search("addr:[0.0.0.0 TO 1.255.255.255]", columns=["id"])),
            "n": table.count("n:>=0"),
        }
    assert got["segments"] == got["json"]
    assert got["segments"]["rows"] == row_multiset(data.to_pylist())
    addresses = data.column("addr").to_pylist()
    same = {"1.2.3.4", "::ffff:1.2.3.4"}
    assert got["segments"]["ip"] == [i for i, a in enumerate(addresses) if a in same]
    longs = data.column("s").to_pylist()
    assert got["segments"]["long"] == [i for i, s in enumerate(longs) if s == "z" * (_LONG + 1)]


def test_ip_strings_parse_as_pythons_ipaddress() -> None:
    # Dotted quads are parsed column-wise, the rest one by one: both as ipaddress does.
    from indextables.search.write.segwriter import SegmentWriteError
    from indextables.search.write.segwriter.ipvalues import ip_bytes

    rng = random.Random(3)
    good = [*_IPS, "0.0.0.1", "9.99.199.255", "100.0.0.0", "::ffff:255.255.255.255"]
    good += [str(ipaddress.IPv4Address(rng.getrandbits(32))) for _ in range(200)]
    good += [str(ipaddress.IPv6Address(rng.getrandbits(128))) for _ in range(50)]
    good += [ipaddress.IPv6Address(rng.getrandbits(128)).exploded for _ in range(20)]
    good += ["::ffff:10.0.0.1", "0:0:0:0:0:ffff:1.2.3.4", "1::", "::2:3", "A:B::C", "1:0::0:2"]
    values = pa.array([None, *good, None])
    want = []
    for text in good:
        address = ipaddress.ip_address(text)
        if isinstance(address, ipaddress.IPv4Address):
            address = ipaddress.IPv6Address(b"\x00" * 10 + b"\xff\xff" + address.packed)
        want.append(address.packed)
    assert [row.tobytes() for row in ip_bytes(values, "a")] == want
    bad_v6 = ("::ffff:01.2.3.4", "1::2::3", "12345::", "fe80::1%eth0", ":1:2", "1:2:3:4:5:6:7:8:9")
    for bad in ("256.1.1.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "1..2.3", " 1.2.3.4", "x", *bad_v6):
        with pytest.raises(SegmentWriteError, match=r"column 'a': value 1: "):
            ip_bytes(pa.array(["1.2.3.4", bad]), "a")


def _heap_compact_space(unique: list[int], total: int) -> list[tuple[int, int]]:
    """The covered ranges as Tantivy's loop finds them, every gap popped from the heap."""
    from indextables.search.write.segwriter.columnar_u128 import _RustMaxHeap

    top = (1 << 128) - 1
    size = lambda b: b[1] - b[0] + 1  # noqa: E731
    blanks: list[tuple[int, int]] = []
    low, high = unique[0], unique[-1]
    heap = _RustMaxHeap()
    for first, second in itertools.pairwise(unique):
        if (second - 1) - (first + 1) >= 2:
            heap.push((first + 1, second - 1))
    amplitude = min(high - low + 1, top)
    if low != 0:
        blanks.append((0, low - 1))
    if high != top:
        blanks.append((high + 1, top))
    bits = amplitude.bit_length()
    staged: list[tuple[int, int]] = []
    staged_sum = 0
    while heap:
        blank = heap.pop()
        staged.append(blank)
        staged_sum += size(blank)
        new_bits = (amplitude - staged_sum).bit_length()
        if bits == new_bits:
            continue
        if bits <= 32 and len(staged) * 36 >= (bits - new_bits) * total:
            continue
        amplitude, bits = amplitude - staged_sum, new_bits
        blanks += staged
        staged, staged_sum = [], 0
    if not blanks:
        blanks += staged[:1]
    blanks.sort()
    covered = [(0, blanks[0][0] - 1)] if blanks and blanks[0][0] != 0 else []
    covered += [(a[1] + 1, b[0] - 1) for a, b in itertools.pairwise(blanks)]
    if blanks and blanks[-1][1] != top:
        covered.append((blanks[-1][1] + 1, top))
    return covered or [(0, 0)]


@pytest.mark.parametrize("seed", range(40))
def test_compact_space_equals_the_heap_replay_with_equal_gaps(seed: int) -> None:
    # Values on a coarse grid give many gaps of one size (ties in the heap).
    from indextables.search.write.segwriter.columnar_u128 import _compact_space

    rng = random.Random(seed)
    step = rng.choice([4, 5, 8, 1000, 2**40, 2**100])
    count = rng.choice([2, 3, 5, 17, 200])
    unique = sorted({rng.randrange(0, 64) * step + rng.choice([0, 0, 0, 1]) for _ in range(count)})
    if rng.random() < 0.3:
        unique = sorted({0, *unique, (1 << 128) - 1})
    total = rng.choice([len(unique), 10 * len(unique), 10_000])
    assert _compact_space(unique, total) == _heap_compact_space(unique, total)
