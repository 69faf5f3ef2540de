"""``AND NOT`` in query text matches what it says (Tantivy alone matched nothing)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import QuerySyntaxError
from indextables.search.query.negation import rewrite_negations

WORDS = ["alpha", "beta", "gamma"]
TEXTS = [" ".join(c) for n in range(1, 4) for c in itertools.combinations(WORDS, n)]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    import pyarrow as pa

    uri = str(Path(tmp_path_factory.mktemp("neg")) / "t")
    data = pa.table({"id": list(range(len(TEXTS))), "msg": TEXTS, "n": list(range(len(TEXTS)))})
    write_table(uri, data, options={"spark.indextables.indexing.typemap.msg": "text"})
    return uri


def _ids(uri: str, query: str) -> set[int]:
    return set(open_table(uri).search(query, columns=["id"]).column("id").to_pylist())


@pytest.mark.parametrize(("a", "b"), list(itertools.permutations(WORDS, 2)))
def test_and_not_keeps_the_rows_without_the_excluded_term(table: str, a: str, b: str) -> None:
    want = {i for i, t in enumerate(TEXTS) if a in t.split() and b not in t.split()}
    assert want  # the oracle has something to find
    assert _ids(table, f"msg:{a} AND NOT msg:{b}") == want
    assert _ids(table, f"msg:{a} && NOT msg:{b}") == want
    assert _ids(table, f"msg:{a} AND -msg:{b}") == want


def test_and_not_with_a_group_and_a_range(table: str) -> None:
    want = {i for i, t in enumerate(TEXTS) if "alpha" in t and "beta" not in t and "gamma" not in t}
    assert _ids(table, "msg:alpha AND NOT (msg:beta OR msg:gamma)") == want
    assert _ids(table, "n:[0 TO 99] AND NOT n:[2 TO 4]") == set(range(len(TEXTS))) - {2, 3, 4}


def test_or_not_is_refused_naming_the_option(table: str) -> None:
    with pytest.raises(QuerySyntaxError, match="OR NOT"):
        open_table(table).search("msg:alpha OR NOT msg:beta")


def test_quoted_text_is_left_alone() -> None:
    assert rewrite_negations('msg:"x AND NOT y" AND NOT z', "query") == 'msg:"x AND NOT y" AND -z'
    assert rewrite_negations('msg:"x OR NOT y"', "query") == 'msg:"x OR NOT y"'
    assert rewrite_negations("BRAND NOT x", "query") == "BRAND NOT x"
