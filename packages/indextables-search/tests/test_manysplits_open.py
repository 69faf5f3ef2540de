"""A table of more splits than a handful keeps them all open between searches.

A search opens each split's Tantivy index and parses its doc stores' skip
indexes; both are kept per process so a repeated search reuses them. With 40
splits (a 20M-row table's count) every split must stay open: a cap below the
table's split count turns each repeated search into a full reopen (least
recently used eviction under a sequential walk misses every time).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search import open_table, write_table
from indextables.search.read import bulkrows, splitreader

SPLITS = 40


def _write(uri: str) -> pa.Table:
    parts = []
    for number in range(SPLITS):
        ids = pa.array(range(number * 10, number * 10 + 10), pa.int64())
        words = pa.array([f"row{i} {'needle' if i % 3 == 0 else 'hay'}" for i in ids.to_pylist()])
        part = pa.table({"id": ids, "message": words})
        write_table(uri, part, options={"spark.indextables.indexing.typemap.message": "text"})
        parts.append(part)
    return pa.concat_tables(parts)


def test_repeated_search_reopens_no_split(tmp_path, monkeypatch):
    uri = str(tmp_path / "many")
    rows = _write(uri)
    table = open_table(uri)
    assert len(table.files) == SPLITS
    expected = sorted(rows.filter(pc.match_substring(rows["message"], "needle"))["id"].to_pylist())

    first = table.search(query="message:needle", columns=["id", "message"])
    assert sorted(first["id"].to_pylist()) == expected

    opened: list[str] = []
    parsed: list[str] = []
    open_index, open_stores = splitreader.open_index, bulkrows._open_stores

    def counting_index(directory, *args, **kwargs):
        opened.append(directory)
        return open_index(directory, *args, **kwargs)

    def counting_stores(directory, *args, **kwargs):
        parsed.append(directory)
        return open_stores(directory, *args, **kwargs)

    monkeypatch.setattr(splitreader, "open_index", counting_index)
    monkeypatch.setattr(bulkrows, "_open_stores", counting_stores)
    again = table.search(query="message:needle", columns=["id", "message"])
    assert sorted(again["id"].to_pylist()) == expected
    assert opened == []
    assert parsed == []
