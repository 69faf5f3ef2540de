"""Values longer than Tantivy indexes (65,530 UTF-8 bytes): a search that names one is
refused, naming the option and column, instead of silently finding nothing; the same row is
found through ``where`` (Spark differential seed 636 found the silent empty answer)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import OptionError
from indextables.search.query.parsedform import debug_text, string_terms
from indextables.search.query.tantivyquery import MAX_TERM_BYTES

# Over the limit in bytes though not in characters: 'é' is two UTF-8 bytes.
LONG = "ab" + "é" * (MAX_TERM_BYTES // 2)
# At the limit exactly: indexed, so found.
EDGE = "c" * MAX_TERM_BYTES


@pytest.fixture(scope="module")
def table_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("longterms") / "t")
    data = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "c_str": [LONG, EDGE, "other"],
            "body": ["some words", "more words", "x"],
        }
    )
    write_table(path, data, options={"spark.indextables.indexing.typemap.body": "text"})
    return path


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.mark.parametrize(
    "query",
    [
        f"c_str:{_quoted(LONG)}",
        f"id:1 AND c_str:{_quoted(LONG)}",
        f"body:words AND NOT c_str:{_quoted(LONG)}",
        f"c_str: IN [other {_quoted(LONG)}]",
    ],
    ids=["term", "conjunct", "negated", "term-set"],
)
def test_a_query_term_longer_than_tantivy_indexes_is_refused(table_path: str, query: str) -> None:
    table = open_table(table_path)
    message = rf"option query: a term on column 'c_str' is {len(LONG.encode()):,} UTF-8 bytes"
    with pytest.raises(OptionError, match=message):
        table.search(query, columns=["id"])
    with pytest.raises(OptionError, match=message):
        table.count(query)
    # The row is there: a where condition compares the stored values.
    where = table.search(where=f"c_str = '{LONG}'", columns=["id"])
    assert where.column("id").to_pylist() == [1]


def test_string_terms_are_read_from_a_parsed_querys_debug_form() -> None:
    # As tantivy-py prints them: exact fields, JSON fields (a raw-tokenized JSON path keeps
    # a long value whole), term sets.
    shape = (
        'Query(BooleanQuery { subqueries: [(Must, TermQuery(Term(field=0, type=Str, "a\\"b"))), '
        '(Must, TermQuery(Term(field=2, type=Json, path=k.x, type=Str, "zz"))), '
        '(Must, TermSetQuery { terms_map: {Field(0): [Term(field=0, type=Str, "x")]} }), '
        "(Must, TermQuery(Term(field=3, type=I64, 5)))] })"
    )
    found = list(string_terms(shape))
    assert found == [(0, 'a"b'), (2, "zz"), (0, "x")]


def test_a_term_at_the_limit_is_still_searched(table_path: str) -> None:
    table = open_table(table_path)
    got = table.search(f"c_str:{_quoted(EDGE)}", columns=["id"])
    assert got.column("id").to_pylist() == [2]
    # Long text whose terms are all short (a long disjunction) is not refused.
    many = " OR ".join(["c_str:other"] * (MAX_TERM_BYTES // 10))
    assert table.count(many) == 1


def test_a_long_token_in_a_text_field_is_not_refused(table_path: str) -> None:
    # Tokenized fields drop tokens over their token length on both sides: nothing to refuse.
    table = open_table(table_path)
    assert table.count(textsearch={"body": "words " + "w" * (MAX_TERM_BYTES + 10)}) >= 0


@pytest.mark.parametrize(
    ("escaped", "text"),
    [
        (r"a\"b", 'a"b'),
        (r"a\\b", "a\\b"),
        (r"x\ny\tz\r\0", "x\ny\tz\r\0"),
        (r"\u{301}e\u{200b}", "\u0301e\u200b"),
        ("plain é", "plain é"),
    ],
)
def test_debug_text_reverses_rusts_string_escapes(escaped: str, text: str) -> None:
    assert debug_text(escaped) == text
