"""The reference's indexing keys: record options, fast fields, token lengths, list forms, JSON.

Each test builds a real Tantivy index from the options and checks what the
index does (postings, fast columns, dropped tokens), not only the parsed values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tantivy
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from indextables.pyspark.errors import OptionError
from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.search.options import parse_indexing
from indextables.search.schema.mapping import (
    FieldKind,
    FieldSpec,
    create_index,
    doc_mapping_json,
    field_specs,
    specs_from_doc_mapping,
)
from indextables.search.schema.tokenizers import open_index

P = "spark.indextables.indexing."
SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("n", IntegerType()),
        StructField("title", StringType()),
        StructField("body", StringType()),
        StructField("status", StringType()),
        StructField("tags", ArrayType(StringType())),
    ]
)


def specs_for(options: dict[str, str]) -> dict[str, FieldSpec]:
    return {s.name: s for s in field_specs(arrow_schema(SCHEMA), parse_indexing(options))}


def build(tmp_path: Path, options: dict[str, str], rows: list[dict[str, Any]]) -> tantivy.Index:
    specs = tuple(specs_for(options).values())
    directory = str(tmp_path / "index")
    Path(directory).mkdir()
    index = create_index(specs, directory)
    writer = index.writer(15_000_000, 1)
    for row in rows:
        writer.add_document(tantivy.Document.from_dict(row, index.schema))
    writer.commit()
    writer.wait_merging_threads()
    return open_index(directory)


def hits(index: tantivy.Index, query: str, field: str) -> int:
    index.reload()
    return int(index.searcher().search(index.parse_query(query, [field]), 10).count)


def meta(index_dir: Path) -> dict[str, Any]:
    entries = json.loads((index_dir / "index" / "meta.json").read_text())["schema"]
    return {e["name"]: e["options"] for e in entries}


def test_tokenizer_list_form_sets_every_named_column() -> None:
    specs = specs_for({P + "typemap.text": "title,body", P + "tokenizer.en_stem": "title,Body"})
    assert (specs["title"].tokenizer, specs["body"].tokenizer) == ("en_stem", "en_stem")
    per_field = specs_for({P + "typemap.text": "title", P + "tokenizer.title": "whitespace"})
    assert per_field["title"].tokenizer == "whitespace"


def test_record_options_reach_the_index(tmp_path: Path) -> None:
    options = {
        P + "typemap.text": "title,body",
        P + "text.indexRecordOption": "freq",
        P + "indexrecordoption.basic": "body",
    }
    specs = specs_for(options)
    assert (specs["title"].record_option, specs["body"].record_option) == ("freq", "basic")
    per_field = specs_for({P + "typemap.text": "title", P + "indexrecordoption.title": "basic"})
    assert per_field["title"].record_option == "basic"
    index = build(tmp_path, options, [{"title": "a b", "body": "a b"}])
    options_by_field = meta(tmp_path)
    assert options_by_field["title"]["indexing"]["record"] == "freq"
    assert options_by_field["body"]["indexing"]["record"] == "basic"
    assert hits(index, "a", "body") == 1
    # Without positions Tantivy refuses a phrase query on the field.
    with pytest.raises(ValueError, match="positions"):
        hits(index, '"a b"', "title")


def test_default_record_option_is_position_as_the_reference(tmp_path: Path) -> None:
    index = build(tmp_path, {P + "typemap.text": "title"}, [{"title": "a b c"}])
    assert meta(tmp_path)["title"]["indexing"]["record"] == "position"
    assert hits(index, '"a b"', "title") == 1


def test_nonfastfields_take_a_column_out_of_the_default_fast_fields(tmp_path: Path) -> None:
    specs = specs_for({P + "nonfastfields": "n,status"})
    assert (specs["id"].fast, specs["n"].fast, specs["status"].fast) == (True, False, False)
    build(tmp_path, {P + "nonfastfields": "n,status"}, [{"id": 1, "n": 2, "status": "x"}])
    fields = meta(tmp_path)
    assert (fields["id"]["fast"], fields["n"]["fast"], fields["status"]["fast"]) == (
        True,
        False,
        False,
    )
    with pytest.raises(OptionError, match="both fast and non-fast"):
        parse_indexing({P + "fastfields": "n", P + "nonfastfields": "n"})
    with pytest.raises(OptionError, match="nonfastfields names column"):
        specs_for({P + "nonfastfields": "missing"})


def test_json_mode_full_makes_json_fields_fast_and_minimal_does_not(tmp_path: Path) -> None:
    assert specs_for({})["tags"].fast
    assert not specs_for({P + "json.mode": "minimal"})["tags"].fast
    build(tmp_path, {}, [{"tags": {"_values": ["x"]}}])
    assert meta(tmp_path)["tags"]["fast"] is True
    with pytest.raises(OptionError, match=r"json\.mode"):
        parse_indexing({P + "json.mode": "everything"})


def test_token_length_default_is_the_reference_255_bytes(tmp_path: Path) -> None:
    token = "x" * 100  # Tantivy's own default analyzer drops tokens from 40 bytes
    index = build(tmp_path, {P + "typemap.text": "title"}, [{"title": f"short {token}"}])
    assert meta(tmp_path)["title"]["indexing"]["tokenizer"] == "default"
    assert hits(index, token, "title") == 1


@pytest.mark.parametrize(
    "options",
    [
        {P + "text.maxTokenLength": "legacy"},
        {P + "text.maxTokenLength": "40"},
        {P + "tokenLength.title": "40"},
        {P + "tokenLength.legacy": "title,body"},
        {P + "tokenLength.40": "title"},
    ],
)
def test_token_length_options_drop_longer_tokens(tmp_path: Path, options: dict[str, str]) -> None:
    options = {P + "typemap.text": "title,body", **options}
    long_token, short_token = "y" * 45, "z" * 39
    index = build(tmp_path, options, [{"title": f"{long_token} {short_token}"}])
    assert meta(tmp_path)["title"]["indexing"]["tokenizer"] == "default_limit_40"
    assert hits(index, short_token, "title") == 1
    assert hits(index, long_token, "title") == 0


def test_token_length_names_and_range() -> None:
    specs = specs_for({P + "typemap.text": "title", P + "tokenLength.title": "tantivy_max"})
    assert specs["title"].token_length == 65530
    for bad in ("0", "65531", "long"):
        with pytest.raises(OptionError, match="maxtokenlength"):
            parse_indexing({P + "text.maxTokenLength": bad})


def test_token_length_does_not_apply_to_raw_or_en_stem_fields() -> None:
    specs = specs_for(
        {
            P + "typemap.text": "title",
            P + "tokenizer.title": "en_stem",
            P + "text.maxTokenLength": "40",
        }
    )
    assert specs["title"].tokenizer_name == "en_stem"
    assert specs["status"].tokenizer_name == "raw"


def test_limited_tokenizer_names_round_trip_through_the_doc_mapping() -> None:
    specs = field_specs(
        arrow_schema(SCHEMA),
        parse_indexing({P + "typemap.text": "title", P + "tokenLength.title": "100"}),
    )
    text = doc_mapping_json(specs)
    assert '"tokenizer":"default_limit_100"' in text
    parsed = specs_from_doc_mapping(text)["title"]
    assert (parsed.kind, parsed.tokenizer, parsed.token_length) == (FieldKind.TEXT, "default", 100)


def test_whitespace_lowercases_as_the_reference(tmp_path: Path) -> None:
    options = {P + "typemap.text": "title", P + "tokenizer.title": "whitespace"}
    index = build(tmp_path, options, [{"title": "Error-Code X"}])
    assert hits(index, "error-code", "title") == 1


def test_fastfields_names_exactly_the_fast_fields_as_the_reference() -> None:
    specs = specs_for({P + "typemap.text": "title", P + "fastfields": "n,title"})
    fast = {name for name, spec in specs.items() if spec.fast}
    assert fast == {"n", "title", "tags"}  # tags: JSON fields follow json.mode (full)
    default = {name for name, spec in specs_for({}).items() if spec.fast}
    assert default == {"id", "n", "title", "body", "status", "tags"}
