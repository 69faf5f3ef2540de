"""Wildcard and fuzzy terms are refused instead of silently matching other rows."""

from __future__ import annotations

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import QuerySyntaxError
from indextables.search.query.termforms import check_term_forms


@pytest.fixture(scope="module")
def table_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("termforms") / "t")
    data = pa.table(
        {
            "id": [1, 2, 3, 4],
            "msg": ["hello world", "help me", "hel", "what?"],
            "s": ["hello", "a*b", "hel", "x"],
            "n": [1, 2, 3, 4],
        }
    )
    write_table(path, data, options={"spark.indextables.indexing.typemap.msg": "text"})
    return path


@pytest.mark.parametrize(
    ("query", "mark"),
    [
        ("msg:hello~3", r"fuzzy term \(~\)"),  # distances 1 and 2 only
        ("hello~3", r"fuzzy term \(~\)"),  # on the default fields too
    ],
)
def test_wildcards_and_fuzzy_terms_are_refused(table_path: str, query: str, mark: str) -> None:
    table = open_table(table_path)
    with pytest.raises(QuerySyntaxError, match=rf"option query=.*{mark}.*Quote"):
        table.search(query)
    with pytest.raises(QuerySyntaxError, match=mark):
        table.count(query)


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ('s:"a*b"', [2]),  # quoted: the characters themselves
        ('msg:"what?"', [4]),
        ("*", [1, 2, 3, 4]),
        ("s:*", [1, 2, 3, 4]),
        ("n:[* TO 2]", [1, 2]),
        ('msg:"hello world"~2', [1]),
        ("s: IN [hel x]", [3, 4]),
        ("n:>3 OR s:hel^2", [3, 4]),
        # Wildcard terms are answered (query/termexpand.py, tests/test_termexpand.py).
        ("s:hel*", [1, 3]),
        ("msg:*llo", [1]),
        ("s:*llo", [1]),
        ("msg:hel?", [2]),
        ("msg:h*o AND n:1", [1]),
        ("n:[1 TO 4] AND NOT s:a*b", [1, 3, 4]),
        ("msg:hello~1", [1]),  # fuzzy terms: query/fuzzyterms.py
        # Multi-token, boosted, escaped and bare patterns (tests/test_patternterms.py).
        ("msg:he-l*", []),  # a token "he" and a token starting "l"
        ("msg:hel*^2", [1, 2, 3]),
        (r"s:a\*b", [2]),  # the literal *
        ("hel*", [1, 2, 3]),  # on the default fields
    ],
)
def test_forms_tantivy_answers_are_left_alone(table_path: str, query: str, ids: list[int]) -> None:
    got = open_table(table_path).search(query, columns=["id"]).column("id").to_pylist()
    assert sorted(got) == ids


def test_the_message_quotes_the_users_text() -> None:
    with pytest.raises(QuerySyntaxError, match=r"option textsearch\.msg='hel\*': 'hel\*'"):
        check_term_forms("hel*", "textsearch.msg")
