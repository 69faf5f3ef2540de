"""Whole segments from the segment writer against tantivy-py's own segment of the same rows.

tantivy-py indexes seeded hostile rows into one segment of an index whose ``meta.json``
was adjusted as this package adjusts it (fieldnorms off or on, microsecond dates, an
unindexed text field); the writer writes its segment into a fresh index of the same
schema. Every segment file must be byte for byte tantivy-py's, and tantivy-py opening
our index must answer term, phrase, range, regex, fuzzy and prefix queries with the same
documents, the same BM25 scores to the last bit and the same stored documents. Both
kernel twins.
"""

from __future__ import annotations

import datetime
import glob
import ipaddress
import json
import math
import random
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy
from segoracle import our_segment, segment_files, tantivy_segment

from indextables.search.schema.tokenizers import open_index
from indextables.search.write.segwriter import SegmentWriteError, impl
from indextables.search.write.segwriter.metajson import SegmentEntry, list_segments, read_meta
from indextables.search.write.segwriter.segment import (
    SEGMENT_EXTENSIONS,
    empty_fast_file,
    fast_fields_supported,
    segment_fields,
    write_segment,
)

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_NANOS_SPAN = (-(2**63) // 1000 + 1, (2**63 - 1) // 1000)  # microseconds Tantivy holds


@pytest.fixture(params=["python", "cython"])
def twin(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(impl.IMPL_ENV, request.param)
    assert impl.kernels().__name__.endswith("_kernels" if request.param == "cython" else "_py")
    return str(request.param)


def _build_schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_text_field("body", stored=True, tokenizer_name="default", index_option="position")
    b.add_text_field("ws", stored=False, tokenizer_name="whitespace", index_option="freq")
    b.add_text_field("s", stored=True, fast=True, tokenizer_name="raw", index_option="position")
    b.add_text_field("note", stored=True, tokenizer_name="raw", index_option="basic")
    b.add_integer_field("i", stored=True, indexed=True, fast=True)
    b.add_unsigned_field("u", stored=True, indexed=True, fast=True)
    b.add_float_field("f", stored=True, indexed=True, fast=True)
    b.add_boolean_field("b", stored=True, indexed=True, fast=True)
    b.add_date_field("d", stored=True, indexed=True, fast=True)
    b.add_bytes_field("by", stored=True, indexed=True, fast=True)
    b.add_ip_addr_field("ip", stored=False, indexed=True)
    b.add_integer_field("tags", stored=False, indexed=True, fast=True)
    b.add_integer_field("only", stored=True, indexed=False)
    b.add_float_field("normed", stored=False, indexed=True)
    return b.build()


def _adjust(meta: dict[str, Any]) -> None:
    """The meta.json changes this package makes, and fieldnorms on one numeric field."""
    for entry in meta["schema"]:
        options = entry["options"]
        if entry["type"] == "date":
            options["precision"] = "microseconds"
        if entry["name"] == "s":
            options["indexing"]["fieldnorms"] = False
        if entry["name"] == "note":
            options["indexing"] = None
        if entry["name"] == "normed":
            options["fieldnorms"] = True
    meta["index_settings"]["docstore_blocksize"] = 4096


def _empty_index(directory: Path) -> None:
    tantivy.Index(_build_schema(), path=str(directory))
    meta_path = directory / "meta.json"
    meta = json.loads(meta_path.read_text())
    _adjust(meta)
    meta_path.write_text(json.dumps(meta))


_WORDS = [
    "the", "The", "a", "b", "\u00e9t\u00e9", "\u0130", "\u4e2d\u6587", "x" * 300, "-", "A-B",
    "x\x00y", "\u3000", "\t", "\U0001f600",
] + [f"w{k}" for k in range(60)]  # fmt: skip


def _text(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.13:
        return ""
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(0, rng.choice([3, 12, 40]))))


def _float(rng: random.Random) -> float | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.3:
        return rng.choice(
            [0.0, -0.0, math.inf, -math.inf, 1.5, -1.5, 5e-324, 1.7976931348623157e308]
        )
    return struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]


def _date(rng: random.Random) -> datetime.datetime | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.3:
        micros = rng.choice([-1_500_000, -1, 0, 1, 999_999, 1_000_000, *_NANOS_SPAN])
    else:
        micros = rng.randrange(-(10**15), 10**15)
    return _EPOCH + datetime.timedelta(microseconds=micros)


def _ip(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.15:
        return None
    if roll < 0.55:
        return str(ipaddress.IPv4Address(rng.choice([0, 1, 2**32 - 1, rng.getrandbits(32)])))
    return str(ipaddress.IPv6Address(rng.choice([0, 1, 2**128 - 1, rng.getrandbits(128)])))


def _rows(rng: random.Random, count: int) -> dict[str, list[Any]]:
    def maybe(make: Callable[[], Any]) -> list[Any]:
        return [None if rng.random() < 0.1 else make() for _ in range(count)]

    strings = [None, "", "x", "X", "a b", "\u00e9", "z" * 65535, "k1", "k2"]
    u_pool = [0, 1, 2**63, 2**64 - 1, rng.getrandbits(64), rng.randrange(9)]
    tag_pool = [None, *range(-3, 4)]
    i_pool = [-(2**63), 2**63 - 1, -1, 0, 1] + [rng.randrange(-50, 50) for _ in range(20)]
    return {
        "body": [_text(rng) for _ in range(count)],
        "ws": [_text(rng) for _ in range(count)],
        "s": [rng.choice(strings) for _ in range(count)],
        "note": [_text(rng) for _ in range(count)],
        "i": maybe(lambda: rng.choice(i_pool)),
        "u": maybe(lambda: rng.choice(u_pool)),
        "f": [_float(rng) for _ in range(count)],
        "b": maybe(lambda: rng.random() < 0.5),
        "d": [_date(rng) for _ in range(count)],
        "by": maybe(lambda: bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 3, 40])))),
        "ip": [_ip(rng) for _ in range(count)],
        "tags": maybe(lambda: [rng.choice(tag_pool) for _ in range(rng.randrange(0, 5))]),
        "only": maybe(lambda: rng.randrange(-5, 5)),
        "normed": maybe(lambda: rng.choice([0.5, 1.0, 2.0])),
    }  # fmt: skip


_ADD = {
    "body": "add_text", "ws": "add_text", "s": "add_text", "note": "add_text",
    "i": "add_integer", "u": "add_unsigned", "f": "add_float", "b": "add_boolean",
    "d": "add_date", "by": "add_bytes", "ip": "add_ip_addr", "tags": "add_integer",
    "only": "add_integer", "normed": "add_float",
}  # fmt: skip

_ARROW = {
    "body": pa.string(), "ws": pa.string(), "s": pa.string(), "note": pa.string(),
    "i": pa.int64(), "u": pa.uint64(), "f": pa.float64(), "b": pa.bool_(),
    "d": pa.timestamp("us", tz="UTC"), "by": pa.binary(), "ip": pa.string(),
    "tags": pa.list_(pa.int64()), "only": pa.int64(), "normed": pa.float64(),
}  # fmt: skip


def _answers(index: tantivy.Index, query: tantivy.Query) -> list[tuple[float, int, Any]]:
    searcher = index.searcher()
    hits = searcher.search(query, 10_000).hits
    out = []
    for score, address in hits:
        doc = searcher.doc(address).to_dict()
        out.append((score, address.doc, repr(sorted(doc.items()))))  # repr: NaN equals NaN
    return sorted(out, key=lambda hit: (hit[1], hit[0]))


def _queries(schema: tantivy.Schema, rows: dict[str, list[Any]]) -> list[tantivy.Query]:
    Q = tantivy.Query
    queries = [Q.all_query()]
    for name in ("body", "ws"):
        for word in ("the", "a", "b", "w1", "\u00e9t\u00e9", "\u4e2d\u6587", "missing"):
            queries.append(Q.term_query(schema, name, word))
    queries.append(Q.phrase_query(schema, "body", ["the", "a"]))
    queries.append(Q.phrase_query(schema, "body", ["w1", "w2"], slop=3))
    queries.append(Q.regex_query(schema, "body", "w[0-3].*"))
    queries.append(Q.fuzzy_term_query(schema, "body", "w11", distance=1))
    queries.append(Q.fuzzy_term_query(schema, "body", "w1", distance=1, prefix=True))
    queries.append(Q.phrase_prefix_query(schema, "body", ["the", "w"]))
    for word in ("", "x", "X", "a b", "k1", "z" * 65535, "z" * 65530, "\u00e9"):
        queries.append(Q.term_query(schema, "s", word))
    queries.append(Q.regex_query(schema, "s", "k.*"))
    for name in ("i", "u", "f", "b", "d", "by", "tags", "normed"):
        seen = [v for v in rows[name] if v is not None]
        flat = [x for v in seen for x in (v if isinstance(v, list) else [v]) if x is not None]
        for value in flat[:12]:
            if isinstance(value, float) and math.isnan(value):
                continue
            queries.append(Q.term_query(schema, name, value))
    for ip in [v for v in rows["ip"] if v is not None][:8]:
        queries.append(Q.term_query(schema, "ip", ip))
    second = datetime.timedelta(seconds=1)
    kinds = [
        ("i", tantivy.FieldType.Integer, -10, 10),
        ("u", tantivy.FieldType.Unsigned, 1, 2**63),
        ("f", tantivy.FieldType.Float, -2.0, 1e300),
        ("tags", tantivy.FieldType.Integer, -1, 2),
        ("d", tantivy.FieldType.Date, _EPOCH - second * 2, _EPOCH + second * 86400 * 9000),
    ]  # fmt: skip
    for name, field_type, low, high in kinds:
        for inverted in (True, False):
            try:
                query = Q.range_query(
                    schema, name, field_type, low, high, use_inverted_index=inverted
                )
            except ValueError:
                continue
            queries.append(query)
    for name in ("s", "i", "u", "f", "b", "d", "tags", "by"):
        queries.append(Q.exists_query(name))
    queries.append(
        Q.boolean_query(
            [(tantivy.Occur.Must, Q.term_query(schema, "body", "the")),
             (tantivy.Occur.Should, Q.term_query(schema, "ws", "a")),
             (tantivy.Occur.MustNot, Q.term_query(schema, "b", True))]
        )
    )  # fmt: skip
    return queries


@pytest.mark.parametrize(("seed", "count"), [(0, 1), (1, 40), (2, 700), (3, 300)])
def test_segment_is_tantivys_byte_for_byte_and_answers_alike(
    tmp_path: Path, twin: str, seed: int, count: int
) -> None:
    rng = random.Random(seed)
    rows = _rows(rng, count)
    if seed == 3:  # fields without any value: no postings, no terms, only fieldnorms
        rows["i"] = [None] * count
        rows["body"] = [rng.choice([None, "", "-"]) for _ in range(count)]
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


def test_two_segments_open_as_one_index(tmp_path: Path) -> None:
    _empty_index(tmp_path)
    fields = segment_fields(read_meta(str(tmp_path))["schema"])
    entries = []
    for values in (["a b", "b"], ["b c", None, "a"]):
        columns = {"body": pa.array(values), "i": pa.array(range(len(values)), pa.int64())}
        entries.append(
            SegmentEntry(write_segment(str(tmp_path), fields, columns, len(values)), len(values))
        )
    meta = list_segments(str(tmp_path), entries)
    assert [s["max_doc"] for s in meta["segments"]] == [2, 3]
    assert meta["opstamp"] == 6
    index = open_index(str(tmp_path))
    schema = index.schema
    searcher = index.searcher()
    assert searcher.num_docs == 5
    assert searcher.search(tantivy.Query.term_query(schema, "body", "b"), 10).count == 3
    assert searcher.search(tantivy.Query.term_query(schema, "i", 0), 10).count == 2
    managed = json.loads((tmp_path / ".managed.json").read_text())
    assert len(managed) == 1 + 2 * len(SEGMENT_EXTENSIONS)
    assert all((tmp_path / name).exists() for name in managed)


def test_empty_fast_file_is_tantivys(tmp_path: Path) -> None:
    for count in (1, 5, 70_000):
        directory = tmp_path / str(count)
        b = tantivy.SchemaBuilder()
        b.add_integer_field("i", indexed=True)
        index = tantivy.Index(b.build(), path=str(directory.mkdir() or directory))
        writer = index.writer(50_000_000, 1)
        for k in range(count):
            writer.add_document(tantivy.Document(i=k))
        writer.commit()
        writer.wait_merging_threads()
        (path,) = glob.glob(str(directory / "*.fast"))
        assert Path(path).read_bytes() == empty_fast_file(count)


def _schema_entries(add: Callable[[tantivy.SchemaBuilder], None]) -> list[dict[str, Any]]:
    builder = tantivy.SchemaBuilder()
    add(builder)
    directory = Path(__import__("tempfile").mkdtemp())
    tantivy.Index(builder.build(), path=str(directory))
    return list(json.loads((directory / "meta.json").read_text())["schema"])


def test_fields_the_writer_cannot_write_are_refused_by_name() -> None:
    facet = _schema_entries(lambda b: b.add_facet_field("cat"))
    with pytest.raises(SegmentWriteError, match=r"'cat'.*'facet'"):
        segment_fields(facet)
    json_field = _schema_entries(lambda b: b.add_json_field("attrs"))
    json_field[0]["options"]["expand_dots_enabled"] = True
    with pytest.raises(SegmentWriteError, match=r"'attrs'.*expanded dots"):
        segment_fields(json_field)
    stem = _schema_entries(lambda b: b.add_text_field("t", tokenizer_name="en_stem"))
    with pytest.raises(SegmentWriteError, match=r"'t'.*'en_stem'"):
        segment_fields(stem)


def test_fast_fields_are_written_or_refused(tmp_path: Path) -> None:
    b = tantivy.SchemaBuilder()
    b.add_integer_field("i", indexed=True, fast=True)
    tantivy.Index(b.build(), path=str(tmp_path))
    fields = segment_fields(read_meta(str(tmp_path))["schema"])
    columns = {"i": pa.array([3, 1, 2], pa.int64())}
    if not fast_fields_supported():
        with pytest.raises(SegmentWriteError, match=r"fast fields are not written yet.*'i'"):
            write_segment(str(tmp_path), fields, columns, 3)
        return
    segment_id = write_segment(str(tmp_path), fields, columns, 3)
    list_segments(str(tmp_path), [SegmentEntry(segment_id, 3)])
    index = tantivy.Index.open(str(tmp_path))
    searcher = index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), 10, order_by_field="i").hits
    assert [searcher.doc(a).to_dict() for _, a in hits] == [{}, {}, {}]
    assert [a.doc for _, a in hits] == [0, 2, 1]


def test_bad_columns_are_named(tmp_path: Path) -> None:
    _empty_index(tmp_path)
    fields = segment_fields(read_meta(str(tmp_path))["schema"])
    with pytest.raises(SegmentWriteError, match="column 'i': 2 values for 3 documents"):
        write_segment(str(tmp_path), fields, {"i": pa.array([1, 2], pa.int64())}, 3)
    with pytest.raises(SegmentWriteError, match=r"column 'u'.*outside u64"):
        write_segment(str(tmp_path), fields, {"u": pa.array([-1], pa.int64())}, 1)
    with pytest.raises(SegmentWriteError, match="column 'ip': value 0"):
        write_segment(str(tmp_path), fields, {"ip": pa.array(["1.2.3"])}, 1)
    with pytest.raises(SegmentWriteError, match="column 'd': a date field takes timestamps"):
        write_segment(str(tmp_path), fields, {"d": pa.array(["2020-01-01"])}, 1)
    with pytest.raises(SegmentWriteError, match="column 'ip': value 1: a scoped address"):
        write_segment(str(tmp_path), fields, {"ip": pa.array([None, "::1", "fe80::1%eth0"])}, 3)
    with pytest.raises(SegmentWriteError, match="at least one document"):
        write_segment(str(tmp_path), fields, {}, 0)
