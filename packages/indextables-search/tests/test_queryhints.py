"""Query clauses on fields the index answers in part: a field the index lacks (a partition
column, a misspelling) is named with what to do; "has a value" (``f:*``, ``f:[* TO *]``) is
answered on fast fields and refused at planning on others."""

from __future__ import annotations

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import FieldLayoutError, QuerySyntaxError


@pytest.fixture(scope="module")
def table_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("hints") / "t")
    data = pa.table({"id": [1, 2], "message": ["a", "b"], "day": ["d1", "d2"]})
    write_table(path, data, partition_by=["day"])
    return path


def test_a_partition_column_in_a_query_is_named(table_path: str) -> None:
    table = open_table(table_path)
    with pytest.raises(QuerySyntaxError, match=r"'day' is a partition column.*where condition"):
        table.search("message:a AND day:d1")
    # What the hint suggests answers the question.
    assert table.search("message:a", where="day = 'd1'", columns=["id"]).num_rows == 1


def test_a_misspelt_column_gets_the_closest_one(table_path: str) -> None:
    with pytest.raises(QuerySyntaxError, match=r"did you mean 'message'\?"):
        open_table(table_path).count("mesage:a")


def test_an_unlike_name_gets_no_guess(table_path: str) -> None:
    with pytest.raises(QuerySyntaxError) as raised:
        open_table(table_path).count("zzzz:a")
    assert "did you mean" not in str(raised.value)
    assert "Field does not exist: 'zzzz'" in str(raised.value)


@pytest.fixture(scope="module")
def valued(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("valued") / "t")
    data = pa.table(
        {
            "id": pa.array([1, 2, 3, 4], pa.int64()),
            "s": ["a", None, "", "b"],
            "n": pa.array([5, None, -1, 0], pa.int64()),
            "ts": pa.array([0, None, 10**15, -(10**15)], pa.timestamp("us", tz="UTC")),
            "d": [1.0, None, float("nan"), -0.0],
            "slow": ["x", None, "y", "z"],
            "msg": ["hello", "x", None, "y"],
        }
    )
    options = {
        "spark.indextables.indexing.fastfields": "id,s,n,ts,d",
        "spark.indextables.indexing.typemap.msg": "text",
    }
    write_table(path, data, options=options)
    return path


@pytest.mark.parametrize("column", ["s", "n", "ts", "d", "id"])
@pytest.mark.parametrize("form", ["{c}:*", "{c}:[* TO *]", "{c}:{{* TO *}}", "{c}:[* TO *}}"])
def test_has_a_value_forms_keep_the_rows_with_one(valued: str, column: str, form: str) -> None:
    # Tantivy alone parsed a range open at both ends as a query matching nothing.
    table = open_table(valued)
    rows = table.search(columns=["id", column]).to_pylist()
    expected = sorted(r["id"] for r in rows if r[column] is not None)
    query = form.format(c=column)
    assert sorted(table.search(query, columns=["id"]).column("id").to_pylist()) == expected
    assert table.count(query) == len(expected)
    excluded = f"id:[0 TO 9] AND NOT {query}"
    assert table.count(excluded) == 4 - len(expected)


@pytest.mark.parametrize("query", ["slow:*", "slow:[* TO *]", "msg:*", "id:1 OR msg:*"])
def test_has_a_value_on_a_field_that_is_not_fast_is_refused_at_planning(
    valued: str, query: str
) -> None:
    # Tantivy answers `f:*` from the fast column: every split failed to read before.
    with pytest.raises(FieldLayoutError, match=r"is not fast: filter with a where condition"):
        open_table(valued).search(query)
