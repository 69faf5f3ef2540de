"""convert.documents: the typed per-value builder gives exactly the documents from_dict gave.

The oracle is the previous builder, kept here: one ``Document.from_dict`` per
row with the schema (tantivy-py's schema-typed conversion) and the row key
added as an unsigned value. Both run over random hostile rows of every kind
(nulls, NaN, -0.0, infinities, extreme integers and dates, empty and unicode
strings, nested values) and the typemap kinds (text, ip, json over strings).
"""

from __future__ import annotations

import math
import random
import struct
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy

from indextables.search.options import parse_indexing
from indextables.search.read.convert import _column_values, documents, row_key
from indextables.search.schema.mapping import ROW_KEY_FIELD, field_specs, tantivy_schema

sys.path.insert(0, str(Path(__file__).resolve().parent))
from writedata import KINDS, random_table

TYPEMAP = {
    "spark.indextables.indexing.typemap.c_text": "text",
    "spark.indextables.indexing.typemap.c_ip": "ip",
    "spark.indextables.indexing.typemap.c_jsonstr": "json",
}


def _hostile(seed: int, n: int) -> pa.Table:
    rng = random.Random(seed)
    table = random_table(seed, n, KINDS)
    words = ["", "a b", "ü日本語 😀", "x" * 300, "-0.0", "NaN"]
    ips = ["10.0.0.1", "::1", "255.255.255.255", "2001:db8::ff00:42:8329", "0.0.0.0"]
    objs = ['{"a": 1}', '{"b": {"c": "ü"}}', '{"n": null}', "{}"]
    extra = {
        "c_text": [None if rng.random() < 0.2 else rng.choice(words) for _ in range(n)],
        "c_ip": [None if rng.random() < 0.2 else rng.choice(ips) for _ in range(n)],
        "c_jsonstr": [None if rng.random() < 0.2 else rng.choice(objs) for _ in range(n)],
        "c_nulls": [None] * n,
        "c_dense": [rng.choice([-math.inf, math.nan, -0.0, 0.0, 1e308]) for _ in range(n)],
    }
    types = {"c_nulls": pa.int64(), "c_dense": pa.float64()}
    for name, values in extra.items():
        table = table.append_column(name, pa.array(values, types.get(name, pa.string())))
    return table


def _oracle(batch: pa.RecordBatch, specs: Any, schema: tantivy.Schema, number: int) -> list[Any]:
    names = [s.name for s in specs]
    columns = [_column_values(batch.column(s.name), s) for s in specs]
    docs = []
    for r, row in enumerate(zip(*columns, strict=True)):
        values = {n: v for n, v in zip(names, row, strict=True) if v is not None}
        values[ROW_KEY_FIELD] = row_key(number, r)
        docs.append(tantivy.Document.from_dict(values, schema))
    return docs


def _exact(value: Any) -> Any:
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else ("f", struct.pack(">d", value))
    if isinstance(value, dict):
        return tuple(sorted((k, _exact(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_exact(v) for v in value)
    return (type(value).__name__, value)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_documents_equal_from_dict_documents_on_hostile_rows(seed: int) -> None:
    table = _hostile(seed, 300)
    specs = field_specs(table.schema, parse_indexing(TYPEMAP))
    schema = tantivy_schema(specs, row_key=True)
    batch = table.combine_chunks().to_batches()[0]
    ours = list(documents(batch, specs, schema, batch_number=7))
    expected = _oracle(batch, specs, schema, 7)
    assert len(ours) == len(expected) == 300
    for r, (got, want) in enumerate(zip(ours, expected, strict=True)):
        assert _exact(got.to_dict()) == _exact(want.to_dict()), f"row {r}"


def test_documents_carry_the_row_key_only_with_a_batch_number() -> None:
    batch = pa.record_batch({"s": ["a", None, "c"], "i": [1, 2, None]})
    specs = field_specs(batch.schema, parse_indexing({}))
    schema = tantivy_schema(specs, row_key=True)
    keyed = [d.to_dict() for d in documents(batch, specs, schema, batch_number=3)]
    assert keyed == [
        {"s": ["a"], "i": [1], ROW_KEY_FIELD: [3 << 32]},
        {"i": [2], ROW_KEY_FIELD: [(3 << 32) | 1]},
        {"s": ["c"], ROW_KEY_FIELD: [(3 << 32) | 2]},
    ]
    plain = [d.to_dict() for d in documents(batch, specs, schema)]
    assert plain == [{"s": ["a"], "i": [1]}, {"i": [2]}, {"s": ["c"]}]
