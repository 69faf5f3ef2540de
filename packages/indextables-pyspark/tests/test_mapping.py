"""Spark schema -> field specs -> doc mapping JSON and Tantivy schema."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    CalendarIntervalType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    IntegerType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from indextables.pyspark.errors import OptionError, UnsupportedTypeError
from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.search.options import parse_indexing
from indextables.search.schema.mapping import (
    ROW_KEY_FIELD,
    FieldKind,
    create_index,
    doc_mapping_json,
    field_specs,
    specs_from_doc_mapping,
    tantivy_schema,
)

GOLDEN_SCHEMA = StructType(
    [
        StructField("id", IntegerType(), False),
        StructField("text", StringType()),
        StructField("score", DoubleType(), False),
    ]
)


def test_default_mapping_is_the_reference_doc_mapping(expected: Any) -> None:
    specs = field_specs(arrow_schema(GOLDEN_SCHEMA), parse_indexing({}))
    golden = expected("01_single_write")["liveFiles"][0]["docMappingJson"]
    assert doc_mapping_json(specs) == golden


def test_typemap_text_and_tokenizer_options() -> None:
    options = {
        "spark.indextables.indexing.typemap.text": "text",
        "spark.indextables.indexing.tokenizer.text": "en_stem",
    }
    spec = {s.name: s for s in field_specs(arrow_schema(GOLDEN_SCHEMA), parse_indexing(options))}[
        "text"
    ]
    assert (spec.kind, spec.tokenizer, spec.fast, spec.is_tokenized) == (
        FieldKind.TEXT,
        "en_stem",
        False,
        True,
    )


def test_list_syntax_fast_store_and_index_only() -> None:
    options = {
        "spark.indextables.indexing.typemap.text": "TEXT,other",
        "spark.indextables.indexing.storeonlyfields": "score",
        "spark.indextables.indexing.fastfields": "Text",
    }
    schema = StructType([*GOLDEN_SCHEMA.fields, StructField("other", StringType())])
    specs = {s.name: s for s in field_specs(arrow_schema(schema), parse_indexing(options))}
    assert specs["text"].kind is specs["other"].kind is FieldKind.TEXT
    assert specs["text"].fast
    assert not specs["other"].fast
    assert not specs["score"].indexed
    assert specs["score"].stored


def test_doc_mapping_round_trips() -> None:
    specs = field_specs(arrow_schema(GOLDEN_SCHEMA), parse_indexing({}))
    parsed = specs_from_doc_mapping(doc_mapping_json(specs))
    assert tuple(parsed.values()) == specs
    assert tantivy_schema(specs) is not None


@pytest.mark.parametrize(
    ("data_type", "path"),
    [
        (DecimalType(10, 2), "'amount'"),
        (DayTimeIntervalType(), "'amount'"),
        (StructType([StructField("a", ArrayType(DayTimeIntervalType()))]), "'amount.a[]'"),
        (MapType(StringType(), CalendarIntervalType()), "'amount.<value>'"),
    ],
)
def test_unsupported_types_are_named(data_type: object, path: str) -> None:
    """At planning, naming the column path (decimals are refused only at the top level)."""
    schema = StructType([StructField("amount", data_type)])  # type: ignore[arg-type]
    with pytest.raises(UnsupportedTypeError, match=re.escape(path)):
        field_specs(arrow_schema(schema), parse_indexing({}))


def test_binary_and_nested_decimals_are_accepted() -> None:
    schema = StructType(
        [
            StructField("raw", BinaryType()),
            StructField("s", StructType([StructField("dec", DecimalType(5, 1))])),
        ]
    )
    specs = {s.name: s for s in field_specs(arrow_schema(schema), parse_indexing({}))}
    assert specs["raw"].kind is FieldKind.BYTES
    assert specs["s"].kind is FieldKind.JSON
    assert json.loads(doc_mapping_json(specs.values()))[0]["type"] == "bytes"


def test_the_row_key_name_is_reserved() -> None:
    schema = StructType([StructField(ROW_KEY_FIELD, StringType())])
    with pytest.raises(UnsupportedTypeError, match="reserved"):
        field_specs(arrow_schema(schema), parse_indexing({}))


def test_created_indexes_keep_microseconds_and_leave_store_only_text_unindexed(
    tmp_path: Any,
) -> None:
    schema = StructType([StructField("ts", TimestampType()), StructField("t", StringType())])
    options = {"spark.indextables.indexing.storeonlyfields": "t"}
    specs = field_specs(arrow_schema(schema), parse_indexing(options))
    create_index(specs, str(tmp_path), row_key=True)
    meta = json.loads((tmp_path / "meta.json").read_text())
    entries = {e["name"]: e for e in meta["schema"]}
    assert entries["ts"]["options"]["precision"] == "microseconds"
    assert entries["t"]["options"]["indexing"] is None
    assert entries[ROW_KEY_FIELD]["options"]["fast"] is True


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"spark.indextables.indexing.typemap.score": "fulltext"}, "not one of"),
        ({"spark.indextables.indexing.tokenizer.text": "klingon"}, "not one of"),
        ({"spark.indextables.indexing.typemap.score": "text"}, "does not fit"),
        ({"spark.indextables.indexing.fastfields": "nope"}, "nope"),
        ({"spark.indextables.indexing.bogus": "1"}, "unknown option"),
    ],
)
def test_bad_options_fail_with_the_key(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        field_specs(arrow_schema(GOLDEN_SCHEMA), parse_indexing(options))


def test_nested_and_timestamp_columns_map_to_json_and_date() -> None:
    schema = StructType(
        [StructField("tags", ArrayType(StringType())), StructField("ts", TimestampType())]
    )
    specs = {s.name: s for s in field_specs(arrow_schema(schema), parse_indexing({}))}
    assert specs["tags"].kind is FieldKind.JSON
    assert specs["ts"].kind is FieldKind.DATE
    assert json.loads(doc_mapping_json(specs.values()))[1]["type"] == "datetime"


def test_a_doc_mapping_is_parsed_once_and_each_caller_gets_its_own_dict() -> None:
    from indextables.search.schema import mapping

    text = doc_mapping_json(field_specs(arrow_schema(GOLDEN_SCHEMA), parse_indexing({})))
    first = specs_from_doc_mapping(text)
    before = mapping._parsed_doc_mapping.cache_info().hits
    first.clear()  # a caller changing its dict changes nobody else's
    second = specs_from_doc_mapping(text)
    assert mapping._parsed_doc_mapping.cache_info().hits == before + 1
    assert second
    assert second == specs_from_doc_mapping(text)
    with pytest.raises(json.JSONDecodeError):
        specs_from_doc_mapping("[")
