"""A query naming a field the index lacks says why: a partition column (splits do not
index them) or the closest indexed column."""

from __future__ import annotations

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import QuerySyntaxError


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
