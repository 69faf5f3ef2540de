"""``=`` / IN on struct fields -> queries on the JSON field's path, on a real index.

Rows are written the way the writer writes them (``convert.documents``, the
JSON form of ``jsoncodec``); every query must find each row whose field
equals an operand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy
from pyspark.sql import datasource as ds

from indextables.pyspark.read.sparkfilters import translate
from indextables.search.query.conditions import Condition
from indextables.search.query.jsonquery import json_path_query
from indextables.search.read.convert import documents
from indextables.search.read.splitreader import split_traits
from indextables.search.schema.mapping import FieldKind, FieldSpec, create_index

ROW = FieldSpec("row", FieldKind.I64, None, True, True, True)
INNER = pa.struct([("a", pa.string()), ("n", pa.int64()), ("d", pa.float64())])
STRUCT = pa.struct([("a", pa.string()), ("n", pa.int64()), ("inner", INNER)])
ROWS: list[dict[str, Any] | None] = [
    {"a": "Hello World", "n": 5, "inner": {"a": "deep", "n": -3, "d": 0.0}},
    {"a": "hello world", "n": -3, "inner": None},
    {"a": 'say "hi" \\ x', "n": None, "inner": {"a": "Hello World", "n": 5, "d": -0.0}},
    {"a": "", "n": 0, "inner": None},
    {"a": "2024-01-01T00:00:00.5Z", "n": 7, "inner": None},
    None,
    {"a": "hello", "n": 2**62, "inner": {"a": None, "n": None, "d": None}},
    {"a": "world hello", "n": 1, "inner": None},
]


@pytest.fixture(scope="module", params=["default", "raw", "en_stem"])
def split(request: Any, tmp_path_factory: Any) -> tuple[tantivy.Index, FieldSpec]:
    spec = FieldSpec("st", FieldKind.JSON, request.param, True, True, False)
    directory = tmp_path_factory.mktemp(f"json-{request.param}")
    index = create_index((spec, ROW), str(directory))
    batch = pa.RecordBatch.from_pydict(
        {"st": ROWS, "row": list(range(len(ROWS)))},
        schema=pa.schema([("st", STRUCT), ("row", pa.int64())]),
    )
    writer = index.writer(15_000_000, 1)
    for document in documents(batch, (spec, ROW), index.schema):
        writer.add_document(document)
    writer.commit()
    index.reload()
    return index, spec


def _value(row: dict[str, Any] | None, path: tuple[str, ...]) -> Any:
    for name in path:
        if row is None:
            return None
        row = row[name]
    return row


def _rows(index: tantivy.Index, query: tantivy.Query) -> set[int]:
    searcher = index.searcher()
    hits = searcher.search(query, limit=100).hits
    return {searcher.doc(a).get_first("row") for _, a in hits}


OPERANDS = [
    "Hello World",
    "hello world",
    'say "hi" \\ x',
    "hello",
    "deep",
    "nothing here",
    5,
    -3,
    0,
    2**62,
]


@pytest.mark.parametrize("path", [("a",), ("n",), ("inner", "a"), ("inner", "n")])
def test_equality_finds_every_equal_row(
    split: tuple[tantivy.Index, FieldSpec], path: tuple[str, ...]
) -> None:
    index, spec = split
    pushed = 0
    for operand in OPERANDS:
        if isinstance(operand, int) != (path[-1] == "n"):
            continue  # Spark pushes only operands of the field's type
        query = json_path_query(index, spec, Condition("=", "st", (operand,), path))
        if query is None:
            continue
        pushed += 1
        wanted = {i for i, row in enumerate(ROWS) if _value(row, path) == operand}
        got = _rows(index, query)
        assert wanted <= got, (path, operand, wanted - got)
        assert len(got) < len(ROWS), (path, operand)  # it narrows the search
    assert pushed >= 2


def test_in_finds_every_equal_row(split: tuple[tantivy.Index, FieldSpec]) -> None:
    index, spec = split
    query = json_path_query(
        index, spec, Condition("in", "st", ("deep", "Hello World"), ("inner", "a"))
    )
    assert query is not None
    assert {0, 2} <= _rows(index, query)


@pytest.mark.parametrize(
    "condition",
    [
        Condition("=", "st", ("",), ("a",)),  # no token
        Condition("=", "st", ("2024-01-01T00:00:00.5Z",), ("a",)),  # indexed as a date
        Condition("=", "st", (0.0,), ("inner", "d")),  # doubles: signed zero, NaN
        Condition("=", "st", (True,), ("a",)),
        Condition("=", "st", ("x" * 70_000,), ("a",)),
        Condition("=", "st", ("x",), ("a b",)),  # a name the query syntax cannot hold
        Condition("=", "st", ("x",), ()),
        Condition(">", "st", ("x",), ("a",)),
        Condition("in", "st", ("hello", ""), ("a",)),
    ],
)
def test_what_is_left_to_spark(
    split: tuple[tantivy.Index, FieldSpec], condition: Condition
) -> None:
    index, spec = split
    assert json_path_query(index, spec, condition) is None


def test_punctuation_only_is_pushed_where_it_is_a_token(
    split: tuple[tantivy.Index, FieldSpec],
) -> None:
    index, spec = split
    query = json_path_query(index, spec, Condition("=", "st", ("!!!",), ("a",)))
    assert (query is not None) == (spec.tokenizer == "raw")


def test_spark_hands_struct_fields_as_paths() -> None:
    assert translate(ds.EqualTo(("st", "a"), "x")) == Condition("=", "st", ("x",), ("a",))
    assert translate(ds.In(("st", "in", "a"), ["x", None])) == Condition(
        "in", "st", ("x",), ("in", "a")
    )
    assert translate(ds.EqualNullSafe(("st", "a"), "x")) == Condition("=", "st", ("x",), ("a",))
    assert translate(ds.GreaterThan(("st", "a"), "x")) is None
    assert translate(ds.IsNull(("st", "a"))) is None


def test_a_non_json_field_is_not_searched(tmp_path: Path) -> None:
    spec = FieldSpec("st", FieldKind.STRING, "raw", True, True, True)
    index = create_index((spec,), str(tmp_path))
    assert json_path_query(index, spec, Condition("=", "st", ("x",), ("a",))) is None


def test_phrases_need_positions(split: tuple[tantivy.Index, FieldSpec]) -> None:
    """A field indexed without positions (a reference split may be) takes one-token operands."""
    index, spec = split
    several = Condition("=", "st", ("Hello World",), ("a",))
    one = Condition("=", "st", ("deep",), ("inner", "a"))
    assert json_path_query(index, spec, one, positions=False) is not None
    phrase = json_path_query(index, spec, several, positions=False)
    assert (phrase is None) == (spec.tokenizer != "raw")  # raw: one token, a term query


def test_split_traits_name_the_fields_with_positions(tmp_path: Path) -> None:
    spec = FieldSpec("st", FieldKind.JSON, "default", True, True, False)
    create_index((spec, ROW), str(tmp_path))
    assert split_traits(str(tmp_path)).positions == frozenset({"st"})
    meta_path = tmp_path / "meta.json"
    meta = json.loads(meta_path.read_text())
    for entry in meta["schema"]:
        if entry["name"] == "st":
            entry["options"]["indexing"]["record"] = "basic"
    meta_path.write_text(json.dumps(meta))
    assert split_traits(str(tmp_path)).positions == frozenset()
