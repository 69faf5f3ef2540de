"""JSON fields (list columns) written by the segment writer against tantivy-py.

Seeded hostile list columns (int64 extremes, floats that Tantivy normalizes to i64 or
u64 terms, ``-0.0``, subnormals, bools, nulls, empty lists, null elements, several
segments' worth of rows) are written by tantivy-py (the oracle, each row's
``to_json_field`` object) and by :func:`write_segment`; the six files must be the same
bytes, and tantivy-py's answers on JSON paths (terms, ranges, stored objects) must
equal a plain Python model of the rows. Through ``write_table`` with the segments
feed, a table with list columns is written without tantivy-py and reads back as
written; the columns the writer does not write fall back to tantivy-py.
"""

from __future__ import annotations

import glob
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy
from writedata import row_multiset

from indextables.search import open_table, write_table
from indextables.search.options import IndexingOptions
from indextables.search.read.jsoncodec import to_json_field
from indextables.search.schema.mapping import create_index, field_specs
from indextables.search.write import segfeed, splitwriter
from indextables.search.write.segwriter.metajson import SegmentEntry, list_segments, read_meta
from indextables.search.write.segwriter.segment import (
    SEGMENT_EXTENSIONS,
    segment_fields,
    write_segment,
)

INTS = [0, 1, -1, 5, -3, 2**63 - 1, -(2**63), 2**40, -(2**31)]
FLOATS = [
    0.0, -0.0, 1.5, -2.5, 5.0, -3.0, 2.0**63, -(2.0**63), 2.0**64, 2.0**65, 1e300, -1e300,
    5e-324, 9007199254740993.0, 0.1, 12345678.0,
]  # fmt: skip


def _lists(rng: random.Random, n: int, make: Any) -> list[Any]:
    out: list[Any] = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.1:
            out.append(None)
        elif roll < 0.2:
            out.append([])
        else:
            out.append([None if rng.random() < 0.1 else make() for _ in range(rng.randint(1, 6))])
    return out


def _table(seed: int, n: int) -> pa.Table:
    rng = random.Random(seed)
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "nums": pa.array(
                _lists(rng, n, lambda: rng.choice([rng.choice(INTS), rng.randint(-9, 9)])),
                pa.list_(pa.int64()),
            ),
            "small": pa.array(_lists(rng, n, lambda: rng.randint(-5, 5)), pa.list_(pa.int32())),
            "reals": pa.array(
                _lists(rng, n, lambda: rng.choice([rng.choice(FLOATS), rng.uniform(-9, 9)])),
                pa.list_(pa.float64()),
            ),
            "flags": pa.array(_lists(rng, n, lambda: rng.random() < 0.5), pa.list_(pa.bool_())),
            "name": pa.array([rng.choice(["a", "ü b", None]) for _ in range(n)]),
        }
    )


def _tantivy_index(directory: Path, data: pa.Table) -> tantivy.Index:
    directory.mkdir()
    index = create_index(field_specs(data.schema, IndexingOptions()), str(directory))
    writer = index.writer(200_000_000, 1)
    schema = index.schema
    for row in data.to_pylist():
        doc = tantivy.Document()
        for field in data.schema:
            value = row[field.name]
            if value is None:
                continue
            if pa.types.is_list(field.type):
                value = to_json_field(field.type, value, column=field.name)
            doc.extend({field.name: value}, schema)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def _our_index(directory: Path, data: pa.Table) -> tantivy.Index:
    directory.mkdir()
    create_index(field_specs(data.schema, IndexingOptions()), str(directory))
    meta = read_meta(str(directory))
    fields = segment_fields(meta["schema"])
    columns = {name: data.column(name).combine_chunks() for name in data.column_names}
    block = int(meta["index_settings"]["docstore_blocksize"])
    segment = write_segment(str(directory), fields, columns, data.num_rows, block_size=block)
    list_segments(str(directory), [SegmentEntry(segment, data.num_rows)])
    index = tantivy.Index.open(str(directory))
    index.reload()
    return index


def _files(directory: Path) -> dict[str, bytes]:
    out = {}
    for ext in SEGMENT_EXTENSIONS:
        (path,) = glob.glob(str(directory / f"*.{ext}"))
        out[ext] = Path(path).read_bytes()
    return out


def _hits(index: tantivy.Index, query: str) -> list[int]:
    searcher = index.searcher()
    parsed = index.parse_query(query)
    found = searcher.search(parsed, limit=100_000).hits
    return sorted(searcher.doc(address)["id"][0] for _, address in found)


def _model(data: pa.Table, column: str, keep: Any) -> list[int]:
    ids = data.column("id").to_pylist()
    lists = data.column(column).to_pylist()
    return sorted(i for i, v in zip(ids, lists, strict=True) if v and any(keep(x) for x in v))


@pytest.mark.parametrize(("seed", "rows"), [(1, 40), (2, 700), (3, 3000)])
def test_json_list_segment_is_tantivys(tmp_path: Path, seed: int, rows: int) -> None:
    data = _table(seed, rows)
    theirs = _tantivy_index(tmp_path / "tantivy", data)
    ours = _our_index(tmp_path / "ours", data)
    ours_files, their_files = _files(tmp_path / "ours"), _files(tmp_path / "tantivy")
    for ext in SEGMENT_EXTENSIONS:
        assert ours_files[ext] == their_files[ext], ext
    # The answers on JSON paths, from our files, against a Python model of the rows.
    cases = {
        "nums._values:5": _model(data, "nums", lambda x: x == 5),
        "nums._values:-3": _model(data, "nums", lambda x: x == -3),
        f"nums._values:{2**63 - 1}": _model(data, "nums", lambda x: x == 2**63 - 1),
        "nums._values:[-3 TO 3]": _model(data, "nums", lambda x: x is not None and -3 <= x <= 3),
        "small._values:[-5 TO 0}": _model(data, "small", lambda x: x is not None and -5 <= x < 0),
        "reals._values:1.5": _model(data, "reals", lambda x: x == 1.5),
        "reals._values:5": _model(data, "reals", lambda x: x == 5.0),
        "flags._values:true": _model(data, "flags", lambda x: x is True),
        "flags._values:false": _model(data, "flags", lambda x: x is False),
    }
    for query, model in cases.items():
        assert _hits(ours, query) == model, query
        assert _hits(theirs, query) == model, query
    searcher = ours.searcher()
    expected = data.to_pylist()
    for doc_id in range(0, rows, max(1, rows // 50)):
        stored = searcher.doc(tantivy.DocAddress(0, doc_id)).to_dict()
        row = expected[doc_id]
        for name in ("nums", "small", "flags"):
            want = None if row[name] is None else {"_values": row[name]}
            assert stored.get(name, [None])[0] == want, (doc_id, name)
        got = stored.get("reals", [None])[0]
        want_reals = row["reals"]
        if want_reals is None:
            assert got is None
        else:
            assert [None if v is None else float(v) for v in got["_values"]] == want_reals


def test_each_column_alone(tmp_path: Path) -> None:
    data = _table(9, 500)
    for name in ("nums", "small", "reals", "flags"):
        one = data.select(["id", name])
        _tantivy_index(tmp_path / f"t-{name}", one)
        _our_index(tmp_path / f"o-{name}", one)
        theirs, ours = _files(tmp_path / f"t-{name}"), _files(tmp_path / f"o-{name}")
        for ext in SEGMENT_EXTENSIONS:
            assert ours[ext] == theirs[ext], (name, ext)


def test_a_list_column_without_values_has_no_terms_or_fast_column(tmp_path: Path) -> None:
    data = pa.table(
        {
            "id": pa.array([0, 1, 2], pa.int64()),
            "nums": pa.array([None, [], [None]], pa.list_(pa.int64())),
        }
    )
    _tantivy_index(tmp_path / "t", data)
    _our_index(tmp_path / "o", data)
    theirs, ours = _files(tmp_path / "t"), _files(tmp_path / "o")
    for ext in SEGMENT_EXTENSIONS:
        assert ours[ext] == theirs[ext], ext


class _Calls:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tantivy = 0
        self.segments = 0
        for name in ("json_lines", "documents"):
            monkeypatch.setattr(
                splitwriter, name, self._counted(getattr(splitwriter, name), "tantivy")
            )
        monkeypatch.setattr(
            segfeed, "write_segment", self._counted(segfeed.write_segment, "segments")
        )

    def _counted(self, function: Any, attr: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            setattr(self, attr, getattr(self, attr) + 1)
            return function(*args, **kwargs)

        return call


def _search_ids(uri: str, query: str) -> list[int]:
    return sorted(open_table(uri).search(query, columns=["id"]).column("id").to_pylist())


FEED = "spark.indextables.indexWriter.feed"


def test_table_with_lists_writes_through_the_segment_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _table(11, 900)
    options = {FEED: "segments", "spark.indextables.indexWriter.batchSize": "97"}
    calls = _Calls(monkeypatch)
    uri = str(tmp_path / "segments")
    write_table(uri, data, options=options, workers=1)
    assert calls.tantivy == 0
    assert calls.segments > 0
    json_uri = str(tmp_path / "json")
    write_table(json_uri, data, options={**options, FEED: "json"}, workers=1)
    table = open_table(uri)
    assert row_multiset(table.to_arrow().to_pylist()) == row_multiset(data.to_pylist())
    for query, model in {
        "nums._values:5": _model(data, "nums", lambda x: x == 5),
        "nums._values:[0 TO 9]": _model(data, "nums", lambda x: x is not None and 0 <= x <= 9),
        "flags._values:true": _model(data, "flags", lambda x: x is True),
        "reals._values:1.5": _model(data, "reals", lambda x: x == 1.5),
    }.items():
        assert _search_ids(uri, query) == model, query
        assert _search_ids(json_uri, query) == model, query


def test_a_list_column_not_written_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = _table(12, 200)
    data = written.append_column(
        "words", pa.array([["x", "y"] if i % 3 else None for i in range(200)])
    )
    for table, through_segments in ((written, True), (data, False)):
        calls = _Calls(monkeypatch)
        uri = str(tmp_path / f"t{table.num_columns}")
        write_table(uri, table, options={FEED: "segments"}, workers=1)
        assert (calls.segments > 0, calls.tantivy == 0) == (through_segments,) * 2
        read = open_table(uri).to_arrow().to_pylist()
        assert row_multiset(read) == row_multiset(table.to_pylist())
