"""The JSON-line feed (``indexWriter.feed=json``) against tantivy-py's typed documents.

The oracle is tantivy-py itself: the same random hostile batches indexed once as
JSON lines (``IndexWriter.add_json``; refused batches as documents) and once as
typed documents only must give byte-identical index files. The float model is
checked against what tantivy-py's JSON parser actually stores.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import random
import struct
from collections.abc import Sequence

import pyarrow as pa
import pytest
import tantivy

from indextables.search import open_table, write_table
from indextables.search.errors import OptionError
from indextables.search.options import check_option_keys, parse_indexing, parse_write
from indextables.search.schema.mapping import (
    ROW_KEY_FIELD,
    FieldKind,
    FieldSpec,
    field_specs,
    tantivy_schema,
)
from indextables.search.write.jsonfeed import (
    MAX_DOCUMENT_ROWS,
    decimal_text,
    exact_text,
    json_lines,
    parsed_like_tantivy,
)
from indextables.search.write.merge import merge_settings
from indextables.search.write.splitwriter import PartitionIndex

UTC = dt.UTC
OPTIONS = {
    "spark.indextables.indexing.typemap.t": "text",
    "spark.indextables.indexing.typemap.ip": "ip",
}
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
# Arrow's microsecond timestamps span years 1..9999; Tantivy's dates 1677..2262 (clamped).
MICROS_MIN = (dt.datetime(1, 1, 1, tzinfo=UTC) - EPOCH) // dt.timedelta(microseconds=1)
MICROS_MAX = (dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC) - EPOCH) // dt.timedelta(
    microseconds=1
)
STRINGS = [
    "",
    " ",
    "a",
    "ü",
    "日本語",
    "emoji 😀",
    'quote " and \\ backslash \\"',
    "tab\tnew\nline\rcr",
    "".join(chr(c) for c in range(0x20)) + "\x7f",
    "nul\x00inside",
    "\u2028\u2029 line separators",
    "e\u0301 combining",
    "x" * 70_000,
    "word " * 2_000,
    "{}[],:",
    "\\u0041 not an escape",
]
# Doubles JSON carries (or that the model must refuse, for the fallback) and those it cannot.
DOUBLES = [
    0.0,
    -0.0,
    0.1,
    1.5,
    -2.25,
    100.0,
    1e22,
    1e23,
    1e-5,
    1e-7,
    5e-324,
    1.7976931348623157e308,
]
NON_FINITE = [math.nan, math.inf, -math.inf]
# Doubles with no decimal form Tantivy's JSON parser reads back exactly (found by search).
NO_EXACT_FORM = [1.9515202680931906e-140, -1.8952328269605714e-87, 2.5073284358880874e89]


def _double(rng: random.Random) -> float:
    pick = rng.random()
    if pick < 0.3:
        return rng.choice(DOUBLES)
    if pick < 0.6:
        return round(rng.uniform(-1e6, 1e6), rng.randrange(0, 8))
    return rng.uniform(-1, 1) * 10.0 ** rng.randrange(-30, 30)


def _random_bits_double(rng: random.Random) -> float:
    value = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
    return value if math.isfinite(value) else 0.5


def _some(rng: random.Random, n: int, make, null_rate: float) -> list:
    return [None if rng.random() < null_rate else make() for _ in range(n)]


def _batch(rng: random.Random, n: int) -> pa.RecordBatch:
    """One random batch; each batch draws whether its kinds JSON cannot carry are present."""
    null_rate = rng.choice([0.0, 0.2, 0.9])
    # Short decimals (JSON carries them), any doubles (some misread by Tantivy's JSON
    # parser), or some not finite: the batch goes as documents when any is not carried.
    floats = rng.choice(["short", "any", "rare", "rare", "hostile"])
    ints = [-(2**63), 2**63 - 1, 0, -1, 1]

    def i64() -> int:
        return rng.choice([*ints, rng.randint(-(2**63), 2**63 - 1)])

    def double() -> float:
        if floats == "short":
            return rng.choice([*DOUBLES, round(rng.uniform(-1e6, 1e6), rng.randrange(0, 4))])
        if floats == "hostile" and rng.random() < 0.1:
            return rng.choice([*NON_FINITE, _random_bits_double(rng)])
        return _double(rng) if rng.random() < 0.9 else _random_bits_double(rng)

    def single() -> float:
        if floats == "hostile" and rng.random() < 0.1:
            return rng.choice([*NON_FINITE, 3.4028234663852886e38])  # float32's largest
        return rng.choice([*DOUBLES[:-2], 1.401298464324817e-45, rng.uniform(-1e6, 1e6)])

    def micros() -> int:
        return rng.choice([MICROS_MIN, MICROS_MAX, 0, -1, 1, rng.randint(MICROS_MIN, MICROS_MAX)])

    def days() -> int:
        return rng.choice([-719_162, 2_932_896, 0, -1, rng.randint(-719_162, 2_932_896)])

    def text() -> str:
        return rng.choice(STRINGS) + str(rng.randint(0, 9))

    def maybe_absent(make) -> list:
        # All null (nothing to add: JSON still carries the batch) or values that need documents.
        return [None] * n if rng.random() < 0.8 else _some(rng, n, make, null_rate)

    ip = maybe_absent(lambda: rng.choice(["10.0.0.1", "::1", "2001:db8::ff", "255.255.255.255"]))
    columns = {
        "t": pa.array(_some(rng, n, text, null_rate), pa.string()),
        "s": pa.array(_some(rng, n, text, null_rate), pa.string()),
        "i64": pa.array(_some(rng, n, i64, null_rate), pa.int64()),
        "i32": pa.array(
            _some(rng, n, lambda: rng.randint(-(2**31), 2**31 - 1), null_rate), pa.int32()
        ),
        "i8": pa.array(_some(rng, n, lambda: rng.randint(-128, 127), null_rate), pa.int8()),
        "f": pa.array(_some(rng, n, double, null_rate), pa.float64()),
        "f32": pa.array(_some(rng, n, single, null_rate), pa.float32()),
        "b": pa.array(_some(rng, n, lambda: rng.random() < 0.5, null_rate), pa.bool_()),
        "ts": pa.array(_some(rng, n, micros, null_rate), pa.int64()).cast(
            pa.timestamp("us", "UTC")
        ),
        "ntz": pa.array(_some(rng, n, micros, null_rate), pa.int64()).cast(pa.timestamp("us")),
        "d": pa.array(_some(rng, n, days, null_rate), pa.int32()).cast(pa.date32()),
        "ip": pa.array(ip, pa.string()),
        "bin": pa.array(maybe_absent(lambda: rng.randbytes(rng.randint(0, 40))), pa.binary()),
        "lst": pa.array(
            maybe_absent(lambda: [text() for _ in range(rng.randint(0, 3))]), pa.list_(pa.string())
        ),
    }
    if floats == "rare" and n >= 200:  # two rows as typed documents, in place
        values = columns["f"].to_pylist()
        for row in rng.sample(range(n), 2):
            values[row] = rng.choice([*NON_FINITE, *NO_EXACT_FORM])
        columns["f"] = pa.array(values, pa.float64())
    return pa.record_batch(columns)


def _files(directory: str) -> dict[str, bytes]:
    """The index's files, segment ids replaced by their position in meta.json."""
    with open(os.path.join(directory, "meta.json"), encoding="utf-8") as handle:
        meta_text = handle.read()
    ids = [s["segment_id"].replace("-", "") for s in json.loads(meta_text)["segments"]]
    files = {}
    for name in os.listdir(directory):
        if name.startswith(".") or "." not in name or name.endswith((".lock", ".arrow")):
            continue
        stem, ext = name.split(".", 1)
        key = f"segment{ids.index(stem)}.{ext}" if stem in ids else name
        with open(os.path.join(directory, name), "rb") as handle:
            files[key] = handle.read()
    meta = json.loads(meta_text)
    for number, segment in enumerate(meta["segments"]):
        segment["segment_id"] = f"segment{number}"
    files["meta.json"] = json.dumps(meta, sort_keys=True).encode()
    return files


def _index(
    batches: Sequence[pa.RecordBatch], specs: tuple[FieldSpec, ...], feed: str
) -> dict[str, bytes]:
    schema = tantivy_schema(specs, row_key=True)
    part = PartitionIndex.create(specs, schema, heap_size=64 << 20)
    try:
        for batch in batches:
            part.add(batch, specs, schema, feed=feed)
        part.commit()
        return _files(part.directory)
    finally:
        part.discard()


@pytest.mark.parametrize("seed", range(3))
def test_json_feed_writes_the_same_index_bytes_as_typed_documents(seed: int) -> None:
    rng = random.Random(seed)
    batches = [_batch(rng, rng.choice([1, 50, 400, 400])) for _ in range(16)]
    specs = field_specs(batches[0].schema, parse_indexing(OPTIONS))
    lines = [json_lines(b, specs, batch_number=0).lines for b in batches]
    # Every path runs in the same index: JSON lines, rows as documents in place, batches
    # as documents.
    assert any(line is None for batch in lines if batch is not None for line in batch)
    assert any(batch is not None and None not in batch for batch in lines)
    assert any(batch is None for batch in lines)
    typed = _index(batches, specs, "documents")
    fed = _index(batches, specs, "json")
    assert sorted(typed) == sorted(fed)
    assert any(name.endswith(".store") for name in typed)
    for name, data in typed.items():
        assert fed[name] == data, name


def _spec(name: str, kind: FieldKind) -> FieldSpec:
    tokenizer = "default" if kind in (FieldKind.TEXT, FieldKind.JSON) else None
    return FieldSpec(
        name, kind, tokenizer or ("raw" if kind is FieldKind.STRING else None), True, True, False
    )


@pytest.mark.parametrize(
    ("kind", "array", "carried"),
    [
        (FieldKind.TEXT, pa.array(['a \x00"\\', None]), True),
        (FieldKind.STRING, pa.array(["", "日本"]), True),
        (FieldKind.I64, pa.array([-(2**63), 2**63 - 1]), True),
        (FieldKind.I64, pa.array([1, 2], pa.int16()), True),
        (FieldKind.I64, pa.array([1, 2**63], pa.uint64()), False),
        (FieldKind.F64, pa.array([0.1, -0.0, None]), True),
        (FieldKind.F64, pa.array([0.1], pa.float32()), True),
        (FieldKind.F64, pa.array([1.0, math.nan]), False),
        (FieldKind.F64, pa.array([math.inf]), False),
        (FieldKind.F64, pa.array([-math.inf]), False),
        (FieldKind.F64, pa.array([2.7715077941825975e-163]), True),  # another form read exactly
        (FieldKind.F64, pa.array([NO_EXACT_FORM[0]]), False),
        (FieldKind.BOOL, pa.array([True, False, None]), True),
        (FieldKind.DATE, pa.array([0, None], pa.timestamp("us", "UTC")), True),
        (FieldKind.DATE, pa.array([0], pa.timestamp("us")), True),
        (FieldKind.DATE, pa.array([0], pa.date32()), True),
        (FieldKind.IP, pa.array(["::1"]), False),
        (FieldKind.BYTES, pa.array([b"x"]), False),
        (FieldKind.JSON, pa.array([[1]]), False),
        (FieldKind.JSON, pa.array([None], pa.list_(pa.int64())), True),  # all null: nothing to add
    ],
)
def test_the_fallback_is_decided_per_kind(kind: FieldKind, array: pa.Array, carried: bool) -> None:
    got = json_lines(pa.record_batch({"c": array}), [_spec("c", kind)])
    assert (got.lines is not None) is carried
    if not carried:
        assert got.refusal is not None
        assert "'c'" in got.refusal


def test_the_lines_are_json_of_the_values() -> None:
    # Python's json module reads the lines back as the batch's values (nulls left out).
    rng = random.Random(7)
    values = [rng.choice([*STRINGS, None]) for _ in range(200)]
    numbers = [rng.choice([None, -(2**63), 2**63 - 1, rng.randint(-99, 99)]) for _ in values]
    batch = pa.record_batch({'we"ird\\name': pa.array(values), "n": pa.array(numbers)})
    specs = [_spec('we"ird\\name', FieldKind.TEXT), _spec("n", FieldKind.I64)]
    got = json_lines(batch, specs, batch_number=3, first_row=5)
    assert got.lines is not None
    for row, line in enumerate(got.lines):
        want = {'we"ird\\name': values[row], "n": numbers[row]}
        want = {k: v for k, v in want.items() if v is not None}
        want["__indextables_row"] = (3 << 32) + 5 + row
        assert json.loads(line) == want


def test_the_float_model_agrees_with_what_tantivy_stores() -> None:
    rng = random.Random(11)
    values = [_random_bits_double(rng) for _ in range(1500)]
    values += [_double(rng) for _ in range(1500)]
    values += [rng.random() * 10.0 ** rng.randrange(-323, 300) for _ in range(1000)]
    values += DOUBLES
    column = pa.array(values, pa.float64())
    text = decimal_text(column)
    builder = tantivy.SchemaBuilder()
    builder.add_float_field("f", stored=True)
    index = tantivy.Index(builder.build())
    writer = index.writer(15_000_000, 1)
    for value in text.to_pylist():
        writer.add_json(f'{{"f":{value}}}')
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    stored = [searcher.doc(tantivy.DocAddress(0, n)).get_first("f") for n in range(len(values))]
    exact = [
        struct.pack("<d", a) == struct.pack("<d", b) for a, b in zip(stored, values, strict=True)
    ]
    assert not all(exact)  # both outcomes occur
    assert any(exact)
    for row in range(len(values)):
        got = parsed_like_tantivy(text.slice(row, 1), column.slice(row, 1))
        assert got is exact[row], (values[row], text[row])


FEED_KEY = "spark.indextables.indexWriter.feed"


def test_feed_option() -> None:
    key = FEED_KEY
    assert parse_write({}).feed == "segments"  # the default
    assert parse_write({key: "json"}).feed == "json"
    assert parse_write({key: "documents"}).feed == "documents"
    assert parse_write({key.lower(): " JSON "}).feed == "json"
    check_option_keys({key: "documents"})
    assert merge_settings({key: "documents"}).feed == "documents"  # re-indexing merges
    assert merge_settings({}).feed == "segments"
    with pytest.raises(OptionError, match=r"indexWriter\.feed"):
        parse_write({key: "arrow"})


def test_feed_documents_adds_no_json(monkeypatch: pytest.MonkeyPatch) -> None:
    specs = (_spec("s", FieldKind.STRING),)
    schema = tantivy_schema(specs, row_key=True)
    batch = pa.record_batch({"s": pa.array(["a", "b"])})
    calls: list[int] = []

    def counted(*args, **kwargs):
        calls.append(1)
        return json_lines(*args, **kwargs)

    monkeypatch.setattr("indextables.search.write.splitwriter.json_lines", counted)
    for feed, expected in (("documents", 0), ("json", 1)):
        part = PartitionIndex.create(specs, schema, heap_size=15_000_000)
        try:
            part.add(batch, specs, schema, feed=feed)
            part.commit()
            part.index.reload()
            assert part.index.searcher().num_docs == 2
        finally:
            part.discard()
        assert len(calls) == expected


def test_rows_with_floats_json_cannot_carry_go_as_documents_in_place() -> None:
    rng = random.Random(5)
    n = 400
    values = [_double(rng) for _ in range(n)]
    odd = {17: math.nan, 99: -math.inf, 250: NO_EXACT_FORM[0], 399: NO_EXACT_FORM[2]}
    for row, value in odd.items():
        values[row] = value
    batch = pa.record_batch(
        {"f": pa.array(values), "s": pa.array([rng.choice(STRINGS) for _ in range(n)])}
    )
    specs = field_specs(batch.schema, parse_indexing({}))
    lines = json_lines(batch, specs, batch_number=1).lines
    assert lines is not None
    assert [row for row, line in enumerate(lines) if line is None] == sorted(odd)
    assert _index([batch], specs, "json") == _index([batch], specs, "documents")
    # Beyond MAX_DOCUMENT_ROWS of the rows the whole batch goes as documents.
    many = int(MAX_DOCUMENT_ROWS * n) + 1
    crowded = pa.record_batch({"f": pa.array([math.nan] * many + values[many:]), "s": batch["s"]})
    refused = json_lines(crowded, specs, batch_number=1)
    assert refused.lines is None
    assert refused.refusal is not None
    assert "'f'" in refused.refusal


def test_every_float_form_is_read_back_exactly_by_tantivy() -> None:
    rng = random.Random(13)
    values = [_random_bits_double(rng) for _ in range(3000)]
    values += [rng.uniform(-1, 1) * 10.0 ** rng.randrange(-30, 30) for _ in range(3000)]
    values += [rng.random() * 10.0 ** rng.randrange(-323, 300) for _ in range(1000)]
    values += [*DOUBLES, 2.2250738585072014e-308, 4.9406564584124654e-324, -1e-320]
    text = exact_text(pa.array(values, pa.float64())).to_pylist()
    kept = [(value, form) for value, form in zip(values, text, strict=True) if form is not None]
    assert len(kept) >= 0.99 * len(values)
    builder = tantivy.SchemaBuilder()
    builder.add_float_field("f", stored=True)
    index = tantivy.Index(builder.build())
    writer = index.writer(15_000_000, 1)
    for _, form in kept:
        writer.add_json(f'{{"f":{form}}}')
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    for number, (value, form) in enumerate(kept):
        got = searcher.doc(tantivy.DocAddress(0, number)).get_first("f")
        assert struct.pack("<d", got) == struct.pack("<d", value), (value, form)


def test_slices_escape_what_their_own_values_hold() -> None:
    # The escape check reads the bytes a slice's values span: every slice of a column
    # whose quotes, backslashes and control characters sit at a few rows reads back.
    values = ["plain", 'a"b', "plain", "c\\d", "plain", "e\x01f", "plain", None, "日本"]
    batch = pa.record_batch({"s": pa.array(values)})
    specs = [_spec("s", FieldKind.STRING)]
    for start in range(len(values)):
        for length in range(1, len(values) - start + 1):
            lines = json_lines(batch.slice(start, length), specs).lines
            assert lines is not None
            got = [json.loads(line).get("s") for line in lines]
            assert got == values[start : start + length]


@pytest.mark.parametrize(
    ("options", "fed"), [({FEED_KEY: "json"}, True), ({FEED_KEY: "documents"}, False), ({}, False)]
)
def test_write_table_takes_the_feed_option(
    tmp_path, monkeypatch: pytest.MonkeyPatch, options: dict[str, str], fed: bool
) -> None:
    calls: list[int] = []

    def counted(*args, **kwargs):
        calls.append(1)
        return json_lines(*args, **kwargs)

    monkeypatch.setattr("indextables.search.write.splitwriter.json_lines", counted)
    data = pa.table({"s": ["a", "b", None], "n": [1, None, 3]})
    write_table(str(tmp_path / "t"), data, options=options, workers=1)
    assert bool(calls) is fed
    assert open_table(str(tmp_path / "t")).search("s:a").num_rows == 1


def _keys(searcher: tantivy.Searcher, query: tantivy.Query, limit: int) -> dict:
    """Row key -> DocAddress of the documents ``query`` matches."""
    hits = searcher.search(query, limit, order_by_field=ROW_KEY_FIELD, order=tantivy.Order.Asc)
    return dict(hits.hits)


def _contents(part: PartitionIndex, specs: tuple[FieldSpec, ...], rows: int) -> dict:
    """What tantivy-py reads from an index, keyed by row key: stored documents, every
    orderable fast field's values, and the rows of a set of queries."""
    part.index.reload()
    searcher = part.index.searcher()
    schema = part.index.schema
    every = _keys(searcher, tantivy.Query.all_query(), rows)
    key_of = {(a.segment_ord, a.doc): key for key, a in every.items()}
    out: dict = {
        "stored": {k: repr(sorted(searcher.doc(a).to_dict().items())) for k, a in every.items()}
    }
    # Not F64: ordering by a float fast field holding NaN panics inside Tantivy's sort.
    fast_kinds = (FieldKind.I64, FieldKind.BOOL, FieldKind.DATE, FieldKind.STRING)
    for spec in specs:
        if spec.fast and spec.kind in fast_kinds:
            hits = searcher.search(tantivy.Query.all_query(), rows, order_by_field=spec.name).hits
            values = {key_of[(a.segment_ord, a.doc)]: repr(v) for v, a in hits}
            out[f"fast {spec.name}"] = values
            exists = _keys(searcher, tantivy.Query.exists_query(spec.name), rows)
            out[f"exists {spec.name}"] = sorted(exists)
    queries = {
        "word": tantivy.Query.term_query(schema, "t", "word"),
        "a1": tantivy.Query.term_query(schema, "s", "a1"),
        "i64>=0": tantivy.Query.range_query(schema, "i64", tantivy.FieldType.Integer, 0, None),
        "f in [-1, 1]": tantivy.Query.range_query(schema, "f", tantivy.FieldType.Float, -1.0, 1.0),
        "b": tantivy.Query.term_query(schema, "b", True),
        "ts>=2000": tantivy.Query.range_query(
            schema, "ts", tantivy.FieldType.Date, dt.datetime(2000, 1, 1, tzinfo=UTC), None
        ),
    }
    for name, query in queries.items():
        out[f"query {name}"] = sorted(_keys(searcher, query, rows))
    float_ranges = [(0.0, None), (None, -1e-300), (1e300, None), (-1e-5, 1e-5), (-0.0, 0.0)]
    for spec in specs:
        if spec.kind is FieldKind.F64:  # the float fast values, through fast-field ranges
            for low, high in float_ranges:
                query = tantivy.Query.range_query(
                    schema, spec.name, tantivy.FieldType.Float, low, high
                )
                out[f"range {spec.name} {low} {high}"] = sorted(_keys(searcher, query, rows))
            exists = _keys(searcher, tantivy.Query.exists_query(spec.name), rows)
            out[f"exists {spec.name}"] = sorted(exists)
    out["segments"] = (
        len(searcher.segment_readers()) if hasattr(searcher, "segment_readers") else None
    )
    return out


@pytest.mark.slow
def test_json_feed_indexes_of_many_segments_read_the_same() -> None:
    # Tantivy's files are not deterministic once several segments merge in the
    # background (two typed-document writes differ too): what tantivy-py reads must agree.
    rng = random.Random(21)
    batches = [_batch(rng, 400) for _ in range(24)]
    specs = field_specs(batches[0].schema, parse_indexing(OPTIONS))
    rows = sum(b.num_rows for b in batches)
    schema = tantivy_schema(specs, row_key=True)
    got = []
    for feed in ("documents", "json"):
        part = PartitionIndex.create(specs, schema, heap_size=15_000_000)
        try:
            for batch in batches:
                part.add(batch, specs, schema, feed=feed)
            part.commit()
            with open(os.path.join(part.directory, "meta.json"), encoding="utf-8") as handle:
                segments = len(json.load(handle)["segments"])
            assert segments > 1
            got.append(_contents(part, specs, rows))
        finally:
            part.discard()
    typed, fed = got
    assert len(typed["stored"]) == rows
    assert sorted(typed) == sorted(fed)
    for name in typed:
        assert fed[name] == typed[name], name
