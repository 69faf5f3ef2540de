"""``indexWriter.arrowCopy``: which columns a split's Arrow copy holds, and reads of any subset."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy

from indextables.protocol.splitbundle import parse_split_footer
from indextables.search import open_table, write_table
from indextables.search.errors import OptionError
from indextables.search.options import parse_write
from indextables.search.table.tableaccess import load_view
from indextables.search.write.splitwriter import ROWS_FILE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from writedata import random_table, row_multiset

KEY = "spark.indextables.indexWriter.arrowCopy"
MODES = ("required", "numeric", "all")


def _options(mode: str | None, **extra: str) -> dict[str, str]:
    # Small batches: several record batches in the copy, row keys across them.
    options = {"spark.indextables.indexWriter.batchSize": "37", **extra}
    if mode is not None:
        options[KEY] = mode
    return options


def _copied_columns(uri: str) -> list[list[str] | None]:
    """Per live split, the columns of its Arrow copy (None: no copy file)."""
    found: list[list[str] | None] = []
    live = load_view(uri, {}).splits
    for split in live.select(range(len(live.paths))):
        data = (Path(uri) / split.path).read_bytes()
        start = split.entry.ref.footer_start_offset or 0
        files = parse_split_footer(data, footer_start_offset=start, path=split.path).files
        if ROWS_FILE not in files:
            found.append(None)
            continue
        begin, end = files[ROWS_FILE]
        found.append(pa.ipc.open_file(pa.py_buffer(data[begin:end])).schema.names)
    return found


def _split_bytes(uri: str) -> int:
    live = load_view(uri, {}).splits
    return sum((Path(uri) / p).stat().st_size for p in live.paths)


@pytest.mark.parametrize("mode", MODES)
def test_scans_and_searches_read_back_exactly_in_every_mode(tmp_path: Path, mode: str) -> None:
    data = random_table(11, 400)
    write_table(str(tmp_path), data, options=_options(mode))
    table = open_table(str(tmp_path))
    assert row_multiset(table.to_arrow().to_pylist()) == row_multiset(data.to_pylist())
    # Column subsets, in another order: the copy may hold some of them, or none.
    names = list(reversed(data.column_names))
    for picked in (names, names[:3], [n for n in names if "string" in n or n == "id"]):
        back = table.to_arrow(columns=picked)
        assert row_multiset(back.to_pylist()) == row_multiset(data.select(picked).to_pylist())
    searched = table.search(where="id >= 100 AND id < 163")
    expected = data.filter(
        pa.compute.and_(pa.compute.greater_equal(data["id"], 100), pa.compute.less(data["id"], 163))
    )
    assert row_multiset(searched.to_pylist()) == row_multiset(expected.to_pylist())


def test_the_default_copies_only_what_stored_documents_cannot_hold(tmp_path: Path) -> None:
    data = random_table(5, 200)
    write_table(str(tmp_path / "default"), data, options=_options(None), workers=1)
    write_table(str(tmp_path / "all"), data, options=_options("all"), workers=1)
    write_table(str(tmp_path / "numeric"), data, options=_options("numeric"), workers=1)
    (default,) = _copied_columns(str(tmp_path / "default"))
    (full,) = _copied_columns(str(tmp_path / "all"))
    (numeric,) = _copied_columns(str(tmp_path / "numeric"))
    assert full == data.column_names
    assert default is not None
    assert numeric is not None
    # Exact in stored documents: integers, floats, booleans, strings, binary.
    for exact in ("id", "c_int8", "c_int64", "c_double", "c_float", "c_bool", "c_string"):
        assert exact not in default
    assert "c_binary" not in default
    assert {"id", "c_int32", "c_double", "c_bool"} <= set(numeric)
    assert "c_string" not in numeric
    assert "c_binary" not in numeric
    # Never exact there: nested values; dates and timestamps may be stored clamped.
    for inexact in ("c_array", "c_map", "c_struct", "c_date", "c_timestamp", "c_timestamp_ntz"):
        assert inexact in default
    assert set(default) < set(numeric) < set(full)
    assert _split_bytes(str(tmp_path / "default")) < _split_bytes(str(tmp_path / "all"))


def test_no_copy_file_when_no_column_needs_one(tmp_path: Path) -> None:
    data = pa.table(
        {
            "d": pa.array([-0.0, 0.0, math.nan, math.inf, -math.inf, None], pa.float64()),
            "s": pa.array(["", "x" * 200_000, "😀\u0301", "a\x00b", " ", None]),
            "n": pa.array([-(2**63), 2**63 - 1, 0, -1, None, 7], pa.int64()),
        }
    )
    write_table(str(tmp_path), data, options=_options(None))
    assert _copied_columns(str(tmp_path)) == [None]
    back = open_table(str(tmp_path)).to_arrow()
    assert row_multiset(back.to_pylist()) == row_multiset(data.to_pylist())
    signs = {math.copysign(1, v) for v in back.column("d").to_pylist() if v == 0}
    assert signs == {1.0, -1.0}


def test_splits_with_a_full_copy_and_without_read_together(tmp_path: Path) -> None:
    # Splits written before the option carry every stored column: mode ``all``.
    old, new = random_table(21, 150), random_table(22, 170)
    new = new.set_column(0, "id", pa.array(range(150, 320), pa.int64()))
    write_table(str(tmp_path), old, options=_options("all"))
    write_table(str(tmp_path), new, options=_options("required"))
    copies = _copied_columns(str(tmp_path))
    assert sorted(len(c or []) for c in copies)[-1] == len(old.column_names)
    table = open_table(str(tmp_path))
    expected = pa.concat_tables([old, new])
    assert row_multiset(table.to_arrow().to_pylist()) == row_multiset(expected.to_pylist())
    searched: Any = table.search(where="id >= 140 AND id < 160")
    assert sorted(searched.column("id").to_pylist()) == list(range(140, 160))


def test_a_bad_mode_is_refused_naming_the_option() -> None:
    with pytest.raises(OptionError, match=r"indexWriter\.arrowCopy"):
        parse_write({KEY: "some"})
    assert parse_write({KEY.lower(): " ALL "}).arrow_copy == "all"
    assert parse_write({}).arrow_copy == "required"


def _index_with_deletes(directory: Path, *, delete: bool) -> tantivy.Searcher:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("n", stored=True, indexed=True)
    index = tantivy.Index(builder.build(), path=str(directory))
    writer = index.writer(15_000_000, 1)
    for n in range(5):
        doc = tantivy.Document()
        doc.add_integer("n", n)
        writer.add_document(doc)
    writer.commit()
    if delete:
        writer.delete_documents_by_term("n", 3)
        writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index.searcher()


@pytest.mark.parametrize("delete", [False, True])
def test_a_scan_lists_documents_only_without_deletes(tmp_path: Path, delete: bool) -> None:
    from indextables.search.read.splitreader import _every_address

    searcher = _index_with_deletes(tmp_path, delete=delete)
    found = _every_address(str(tmp_path), searcher.num_docs)
    if delete:
        assert searcher.num_docs == 4
        assert found is None  # the scan searches instead: a listing would return row 3
    else:
        assert found is not None
        assert [(a.segment_ord, a.doc) for a in found] == [(0, d) for d in range(5)]
