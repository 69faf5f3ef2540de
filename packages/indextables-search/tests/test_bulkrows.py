"""Rows of a search decoded in bulk from the doc stores equal tantivy-py's per-document rows.

Every golden (reference) split and tables this package writes with hostile
values, read through the split reader with each decoder twin and with the
bulk path off (``INDEXTABLES_DOCSTORE_IMPL=off``): byte-for-byte equal
batches, and the bulk path really served the columns.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import re
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.query.filters import Condition
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read import bulkrows, splitreader
from indextables.search.read.docstore import DocStoreError, impl
from indextables.search.read.splitreader import read_split
from indextables.search.schema.schemajson import arrow_schema
from indextables.search.splits.splitcache import SplitCache

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_splitreader import NAMES, _entries
from writedata import random_table

MODES = ("off", "python", "cython")


def _ipc(batches: list[pa.RecordBatch], schema: pa.Schema) -> bytes:
    table = pa.Table.from_batches(batches, schema=schema).combine_chunks()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the columns the bulk path served, per call."""
    counts: list[int] = []
    original = bulkrows.bulk_columns

    def counting(*args: Any, **kwargs: Any) -> bulkrows.BulkColumns:
        found = original(*args, **kwargs)
        counts.append(len(found.arrays))
        return found

    monkeypatch.setattr(bulkrows, "bulk_columns", counting)
    return counts


@pytest.mark.parametrize("name", NAMES)
def test_golden_splits_read_alike_with_and_without_bulk_decoding(
    name: str,
    tmp_path: Path,
    expected: Any,
    served: list[int],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    oracle = expected(name)
    schema = arrow_schema(oracle["metadata"]["schemaString"])
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    searches: list[tuple[SearchSpec, tuple[Condition, ...]]] = [(SearchSpec(), ())]
    if "id" in schema.names:
        searches.append((SearchSpec(), (Condition("!=", "id", (1,)),)))
    for search, conditions in searches:
        out = {}
        for mode in MODES:
            monkeypatch.setenv(impl.IMPL_ENV, mode)
            batches = [
                batch
                for directory, entry in _entries(name, oracle, cache)
                for batch in read_split(
                    directory, entry, schema, search=search, conditions=conditions
                )
            ]
            out[mode] = _ipc(batches, schema)
        assert out["python"] == out["off"]
        assert out["cython"] == out["off"]
    assert sum(served) > 0  # the bulk path served columns
    assert "bulk row decoding failed" not in caplog.text


def _hostile_table() -> pa.Table:
    data = random_table(5, 400)
    extra = pa.table(
        {
            "d": pa.array([-0.0, 0.0, math.nan, math.inf, -math.inf, None, 5e-324, 1e308] * 50),
            "s": pa.array(["", "x" * 70_000, "😀\u0301", "a\x00b", " ", None, "日本語", "z"] * 50),
            "ts": pa.array(
                [
                    dt.datetime(1, 1, 1, tzinfo=dt.UTC),
                    dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC),
                    dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC),
                    None,
                    dt.datetime(2024, 2, 29, 12, 0, 0, 1, tzinfo=dt.UTC),
                    dt.datetime(1677, 9, 21, 0, 12, 44, tzinfo=dt.UTC),
                    dt.datetime(2262, 4, 11, 23, 47, 16, 854775, tzinfo=dt.UTC),
                    dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
                ]
                * 50,
                pa.timestamp("us", tz="UTC"),
            ),
        }
    )
    for column in extra.column_names:
        data = data.append_column(column, extra.column(column))
    return data


@pytest.mark.parametrize("where", ["id < 250", "id >= 0", "c_int32 > 0", "s = 'z'", "id = 399"])
def test_written_tables_search_alike_with_and_without_bulk_decoding(
    where: str, tmp_path: Path, served: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = str(tmp_path / "t")
    write_table(uri, _hostile_table())
    write_table(uri, _hostile_table().slice(0, 120), mode="append")
    out = {}
    for mode in MODES:
        monkeypatch.setenv(impl.IMPL_ENV, mode)
        table = open_table(uri).search(where=where)
        out[mode] = _ipc(table.to_batches(), table.schema)
        assert table.num_rows > 0
    assert out["python"] == out["off"]
    assert out["cython"] == out["off"]
    assert served
    assert max(served) >= 10  # every scalar column came from the doc stores


def test_a_decoder_failure_falls_back_to_tantivy_naming_the_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    uri = str(tmp_path / "t")
    write_table(uri, _hostile_table())
    monkeypatch.setenv(impl.IMPL_ENV, "off")
    want = open_table(uri).search(where="id < 300")
    monkeypatch.setenv(impl.IMPL_ENV, "cython")

    def broken(*args: Any, **kwargs: Any) -> bulkrows.BulkColumns:
        raise DocStoreError("doc store: corrupt block")

    monkeypatch.setattr(bulkrows, "bulk_columns", broken)
    with caplog.at_level(logging.WARNING, logger=splitreader.__name__):
        got = open_table(uri).search(where="id < 300")
    assert _ipc(got.to_batches(), got.schema) == _ipc(want.to_batches(), want.schema)
    assert re.search(r"split \S+\.split: bulk row decoding failed", caplog.text)


def test_the_docstore_threads_option_reaches_the_decoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.search.errors import OptionError

    uri = str(tmp_path / "t")
    write_table(uri, _hostile_table())
    monkeypatch.setenv(impl.IMPL_ENV, "cython")
    asked: list[str] = []
    original = bulkrows.decode_parts

    def recording(*args: Any, threads: Any = "auto", **kwargs: Any) -> pa.RecordBatch:
        asked.append(threads)
        return original(*args, threads=threads, **kwargs)

    monkeypatch.setattr(bulkrows, "decode_parts", recording)
    want = open_table(uri).search(where="id < 300")
    assert set(asked) == {"auto"}  # the default
    for value in ("on", "OFF"):
        asked.clear()
        key = "spark.indextables.read.docStoreThreads"
        got = open_table(uri, options={key: value}).search(where="id < 300")
        assert _ipc(got.to_batches(), got.schema) == _ipc(want.to_batches(), want.schema)
        assert asked
        assert set(asked) == {value.lower()}
    with pytest.raises(OptionError, match=r"spark\.indextables\.read\.docstorethreads"):
        open_table(uri, options={"spark.indextables.read.docStoreThreads": "sometimes"})


def test_segment_runs_cut_hits_where_the_segment_changes() -> None:
    import tantivy

    pairs = [(0, 5), (0, 9), (2, 1), (2, 1), (2, 7), (1, 3), (2, 0), (2, 4)]
    hits = [tantivy.DocAddress(s, d) for s, d in pairs]
    assert bulkrows.segment_runs(hits) == [(0, [5, 9]), (2, [1, 1, 7]), (1, [3]), (2, [0, 4])]
    assert bulkrows.segment_runs([tantivy.DocAddress(4, 2)]) == [(4, [2])]
    assert bulkrows.segment_runs([]) == []
