"""Conditions -> Tantivy queries: every query returns a superset of Spark's rows.

Spark's comparison of doubles is modelled by :func:`spark_order` (NaN above
every number and equal to itself, ``-0.0`` equal to ``0.0``); each query is
run on a real Tantivy index holding the awkward values.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import pytest
import tantivy

from indextables.pyspark.conditions import Condition
from indextables.pyspark.mapping import FieldKind, FieldSpec
from indextables.pyspark.tantivyquery import (
    MAX_TERM_BYTES,
    fully_indexed_columns,
    fully_indexed_tag,
    prefix_pattern,
    to_query,
)

NEGATIVE_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8_0000_0000_0001))[0]
DOUBLES = [
    0.0,
    -0.0,
    1.5,
    -1.5,
    math.nan,
    NEGATIVE_NAN,
    math.inf,
    -math.inf,
    5e-324,
    -5e-324,
    2.0**60,
]
DOUBLE = FieldSpec("d", FieldKind.F64, None, True, True, True)
LONG = FieldSpec("n", FieldKind.I64, None, True, True, True)
TEXT = FieldSpec("s", FieldKind.STRING, "raw", True, True, False)


def spark_order(a: float, b: float) -> int:
    """Spark's order of two doubles: NaN (any sign) above every number, -0.0 == 0.0."""
    if math.isnan(a) or math.isnan(b):
        return (math.isnan(a) and not math.isnan(b)) - (math.isnan(b) and not math.isnan(a))
    return (a > b) - (a < b)


def spark_keeps(op: str, value: Any, operands: tuple[Any, ...]) -> bool:
    if op == "in":
        return any(spark_order(value, o) == 0 for o in operands)
    order = spark_order(value, operands[0])
    return {
        "=": order == 0,
        "!=": order != 0,
        "<": order < 0,
        "<=": order <= 0,
        ">": order > 0,
        ">=": order >= 0,
    }[op]


def _index(spec: FieldSpec, values: list[Any]) -> tuple[tantivy.Schema, tantivy.Searcher]:
    builder = tantivy.SchemaBuilder()
    if spec.kind is FieldKind.F64:
        builder.add_float_field(spec.name, stored=True, indexed=True, fast=True)
    elif spec.kind is FieldKind.I64:
        builder.add_integer_field(spec.name, stored=True, indexed=True, fast=True)
    else:
        builder.add_text_field(spec.name, stored=True, tokenizer_name="raw")
    builder.add_integer_field("row", stored=True, indexed=True, fast=True)
    schema = builder.build()
    index = tantivy.Index(schema)
    writer = index.writer(15_000_000, 1)
    for row, value in enumerate(values):
        writer.add_document(tantivy.Document.from_dict({spec.name: value, "row": row}, schema))
    writer.commit()
    index.reload()
    return schema, index.searcher()


def _rows(searcher: tantivy.Searcher, query: tantivy.Query) -> set[int]:
    hits = searcher.search(query, limit=1000).hits
    return {searcher.doc(address).get_first("row") for _, address in hits}


@pytest.fixture(scope="module")
def doubles() -> tuple[tantivy.Schema, tantivy.Searcher]:
    return _index(DOUBLE, DOUBLES)


@pytest.mark.parametrize("op", ["=", "!=", "<", "<=", ">", ">="])
@pytest.mark.parametrize("operand", [0.0, -0.0, 1.5, -1.5, math.inf, -math.inf, 2.0**60, 5e-324])
def test_double_comparisons_keep_every_spark_row(
    doubles: tuple[tantivy.Schema, tantivy.Searcher], op: str, operand: float
) -> None:
    schema, searcher = doubles
    query = to_query(Condition(op, "d", (operand,)), DOUBLE, schema)
    assert query is not None
    wanted = {i for i, v in enumerate(DOUBLES) if spark_keeps(op, v, (operand,))}
    got = _rows(searcher, query)
    assert wanted <= got, f"{op} {operand!r} lost {[DOUBLES[i] for i in wanted - got]}"
    if op == "=":
        assert got == wanted
    if op in ("<", "<="):  # exact but for NaN with the sign bit, which Tantivy puts lowest
        assert got - wanted <= {DOUBLES.index(NEGATIVE_NAN)}


def test_double_in_keeps_both_zeros(doubles: tuple[tantivy.Schema, tantivy.Searcher]) -> None:
    schema, searcher = doubles
    for operands in ((0.0,), (-0.0, 1.5), (2.0, -0.0)):
        query = to_query(Condition("in", "d", operands), DOUBLE, schema)
        assert query is not None
        wanted = {i for i, v in enumerate(DOUBLES) if spark_keeps("in", v, operands)}
        assert _rows(searcher, query) == wanted


def test_nan_operands_are_not_pushed(doubles: tuple[tantivy.Schema, tantivy.Searcher]) -> None:
    schema, _ = doubles
    for op in ("=", ">", ">=", "<", "in"):
        assert to_query(Condition(op, "d", (math.nan,)), DOUBLE, schema) is None


def test_integer_ranges_are_exact() -> None:
    values = [-(2**63), -1, 0, 1, 2**63 - 1]
    schema, searcher = _index(LONG, values)
    for op in ("=", "<", "<=", ">", ">="):
        for operand in (-1, 0, 1, 2**63 - 1):
            query = to_query(Condition(op, "n", (operand,)), LONG, schema)
            assert query is not None
            wanted = {i for i, v in enumerate(values) if spark_keeps(op, v, (operand,))}
            assert _rows(searcher, query) == wanted
    assert to_query(Condition("=", "n", (1.5,)), LONG, schema) is None


STRINGS = [
    "ab",
    "ab\ncd",
    "ab\r\n",
    "ab\u2028x",
    "abc",
    "a",
    "b",
    "",
    "ab\x00",
    "ab😀",
    "x" * MAX_TERM_BYTES,
    "x" * (MAX_TERM_BYTES + 1),
    "ab" + "y" * MAX_TERM_BYTES,
]


@pytest.fixture(scope="module")
def strings() -> tuple[tantivy.Schema, tantivy.Searcher]:
    return _index(TEXT, STRINGS)


def _prefix(schema: tantivy.Schema, prefix: str, *, indexed: bool) -> tantivy.Query | None:
    full = frozenset({"s"}) if indexed else frozenset()
    return to_query(Condition("prefix", "s", (prefix,)), TEXT, schema, fully_indexed=full)


def test_the_term_length_limit_is_what_tantivy_indexes(
    strings: tuple[tantivy.Schema, tantivy.Searcher],
) -> None:
    """A value of MAX_TERM_BYTES bytes is found by its term, one byte more is not indexed."""
    schema, searcher = strings
    at_limit = STRINGS.index("x" * MAX_TERM_BYTES)
    over = "x" * (MAX_TERM_BYTES + 1)
    assert _rows(searcher, tantivy.Query.term_query(schema, "s", STRINGS[at_limit])) == {at_limit}
    assert _rows(searcher, tantivy.Query.term_query(schema, "s", over)) == set()


def test_prefix_takes_values_with_line_breaks(
    strings: tuple[tantivy.Schema, tantivy.Searcher],
) -> None:
    schema, searcher = strings
    for prefix in ("ab", "a", "ab\n", "", "ab\x00", "ab😀", "x"):
        query = _prefix(schema, prefix, indexed=True)
        assert query is not None
        indexed = {
            i
            for i, v in enumerate(STRINGS)
            if v.startswith(prefix) and len(v.encode()) <= MAX_TERM_BYTES
        }
        assert _rows(searcher, query) == indexed, prefix


def test_prefix_is_pushed_only_where_every_value_is_indexed(
    strings: tuple[tantivy.Schema, tantivy.Searcher],
) -> None:
    schema, _ = strings
    assert _prefix(schema, "ab", indexed=False) is None
    assert _prefix(schema, "ab", indexed=True) is not None


def test_long_string_operands_are_not_pushed(
    strings: tuple[tantivy.Schema, tantivy.Searcher],
) -> None:
    schema, searcher = strings
    over = "x" * (MAX_TERM_BYTES + 1)
    for condition in (
        Condition("=", "s", (over,)),
        Condition("in", "s", ("a", over)),
        Condition("!=", "s", (over,)),
    ):
        assert to_query(condition, TEXT, schema) is None
    # Within the limit: exact, and a longer value cannot be equal.
    query = to_query(Condition("in", "s", ("a", "x" * MAX_TERM_BYTES)), TEXT, schema)
    assert query is not None
    assert _rows(searcher, query) == {STRINGS.index("a"), STRINGS.index("x" * MAX_TERM_BYTES)}
    assert to_query(Condition("=", "s", ("\ud800",)), TEXT, schema) is None


def test_fully_indexed_tag_round_trip() -> None:
    tags = ("other", fully_indexed_tag(["Name", "level"]))
    assert fully_indexed_columns(tags) == {"name", "level"}
    assert fully_indexed_columns(None) == frozenset()
    assert fully_indexed_columns([fully_indexed_tag([])[:-1]]) == frozenset()  # unreadable


def test_prefix_pattern_escapes_every_symbol() -> None:
    assert prefix_pattern("a.b") == "(?s)a\\x{2e}b.*"
    assert prefix_pattern("") == "(?s).*"
