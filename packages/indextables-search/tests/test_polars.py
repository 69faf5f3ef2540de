"""The Polars IO source: the same answers as Polars over the same rows, with pushdown."""

from __future__ import annotations

import operator
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pytest

import indextables.search.read.splitbatches as splitbatches
import indextables.search.searchtable as searchtable
from indextables.search import open_table
from indextables.search.errors import ArgumentError
from indextables.search.options import parse_indexing, parse_write
from indextables.search.polars import predicate_where, scan_indextables
from indextables.search.schema.mapping import field_specs
from indextables.search.schema.schemajson import spark_json
from indextables.search.table.tableaccess import commit_write, open_table_store
from indextables.search.write.splitwriter import SplitWriter

OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}


def append(uri: str, data: pa.Table) -> None:
    write = parse_write(OPTIONS)
    writer = SplitWriter(
        open_table_store(uri, OPTIONS),
        field_specs(data.schema, parse_indexing(OPTIONS)),
        (),
        heap_size=write.heap_size,
        batch_size=write.batch_size,
    )
    writer.write(data.to_batches())
    commit_write(
        uri,
        OPTIONS,
        schema_json=spark_json(data.schema),
        partition_columns=(),
        adds=writer.finish(),
        overwrite=False,
        configuration=OPTIONS,
    )


def rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": pa.array([None if i % 17 == 0 else i for i in ids], pa.int64()),
            "host": [None if i % 13 == 0 else f"host-{i % 5}" for i in ids],
            "score": pa.array([float("nan") if i % 11 == 0 else i / 3 for i in ids]),
            "message": [f"req {i} {'needlezz' if i % 10 == 0 else 'ok'}" for i in ids],
        }
    )


STARTS = (0, 50, 100)


@pytest.fixture
def table_uri(tmp_path: Path) -> str:
    uri = str(tmp_path / "t")
    for start in STARTS:
        append(uri, rows(start, 50))
    return uri


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The columns of every split read."""
    seen: list[list[str]] = []
    original = splitbatches.read_any_split

    def counted(*args: Any, **kwargs: Any) -> Any:
        seen.append(list(kwargs["schema"].names))
        return original(*args, **kwargs)

    monkeypatch.setattr(splitbatches, "read_any_split", counted)
    return seen


def oracle() -> pl.LazyFrame:
    """The rows ``table_uri`` wrote, in memory (not read back from the table)."""
    written = pa.concat_tables([rows(start, 50) for start in STARTS])
    frame = pl.from_arrow(written)
    assert isinstance(frame, pl.DataFrame)
    return frame.lazy()


def same(left: pl.DataFrame, right: pl.DataFrame) -> None:
    key = [c for c in ("id", "host", "message") if c in left.columns] or left.columns
    assert left.sort(key, nulls_last=True).equals(right.sort(key, nulls_last=True))


@pytest.mark.parametrize(
    "predicate",
    [
        pl.col("host") == "host-3",
        (pl.col("id") > 40) & (pl.col("host") != "host-1"),
        (pl.col("id") <= 10) | (pl.col("host").is_in(["host-2", "host-4"])),
        pl.col("id").is_null(),
        pl.col("host").is_not_null() & (pl.col("score") > 20),  # a float part stays in Polars
        pl.col("message").str.contains("needlezz"),
        pl.col("score").is_nan(),
        (pl.lit(30) < pl.col("id")) & (pl.col("id") < 60),
    ],
)
def test_filters_give_polars_answer(table_uri: str, predicate: pl.Expr) -> None:
    ours = scan_indextables(table_uri).filter(predicate).select("id", "host", "message")
    theirs = oracle().filter(predicate).select("id", "host", "message")
    same(ours.collect(), theirs.collect())


# Each comparison operator, and the one that says the same with its sides swapped.
COMPARISONS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]] = {
    "==": (operator.eq, operator.eq),
    "!=": (operator.ne, operator.ne),
    "<": (operator.lt, operator.gt),
    "<=": (operator.le, operator.ge),
    ">": (operator.gt, operator.lt),
    ">=": (operator.ge, operator.le),
}
# A value each column holds, so that every operator keeps some rows and drops others.
OPERANDS: dict[str, Any] = {"id": 40, "host": "host-2"}


def comparison_forms(column: str, op: str) -> list[tuple[str, pl.Expr]]:
    """``column op value`` three ways: ``col <= 3``, ``3 >= col`` (Python swaps the sides
    and calls the column's method) and ``lit(3) >= col`` (a literal on the left)."""
    straight, swapped = COMPARISONS[op]
    value = OPERANDS[column]
    return [
        ("col op value", straight(pl.col(column), value)),
        ("value op' col", swapped(value, pl.col(column))),
        ("lit op' col", swapped(pl.lit(value), pl.col(column))),
    ]


@pytest.fixture(scope="module")
def written_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = str(tmp_path_factory.mktemp("operators") / "t")
    for start in STARTS:
        append(uri, rows(start, 50))
    return uri


@pytest.mark.parametrize("column", sorted(OPERANDS))
@pytest.mark.parametrize("op", sorted(COMPARISONS))
def test_each_comparison_from_either_side_becomes_the_same_where(
    written_uri: str, column: str, op: str
) -> None:
    """The ``where`` a comparison becomes keeps, in DuckDB over the rows written, the rows
    Polars keeps over them: in each of the three spellings (a flipped operator, or one
    side's operator used for the other, keeps other rows)."""
    written = pa.concat_tables([rows(start, 50) for start in STARTS])
    frame = pl.from_arrow(written)
    assert isinstance(frame, pl.DataFrame)
    schema = open_table(written_uri).schema
    for form, predicate in comparison_forms(column, op):
        want = sorted(frame.filter(predicate)["message"].to_list())
        assert 0 < len(want) < written.num_rows, (form, len(want))
        found = predicate_where(predicate, schema)
        assert found is not None, form
        where, exact = found
        assert exact, (form, where)
        connection = duckdb.connect()
        connection.register("written", written)
        sql = f"SELECT message FROM written WHERE {where.replace('`', chr(34))}"
        got = sorted(r[0] for r in connection.execute(sql).fetchall())
        connection.close()
        assert got == want, (form, where)


@pytest.mark.parametrize("column", sorted(OPERANDS))
@pytest.mark.parametrize("op", sorted(COMPARISONS))
def test_each_comparison_from_either_side_is_answered_by_the_scan(
    written_uri: str, column: str, op: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scanned with each spelling of each comparison, the table gives the rows Polars keeps
    over the rows written, and the scan itself (given the comparison as ``where``) returns
    exactly those rows: a ``where`` keeping more, which Polars' own filter would hide,
    fails too."""
    scanned: list[int] = []
    original = searchtable.SearchTable.scan

    def scan(self: Any, query: Any = None, **kwargs: Any) -> Any:
        assert kwargs.get("where") is not None, kwargs
        reader = original(self, query, **kwargs)
        batches = list(reader)
        scanned.append(sum(b.num_rows for b in batches))
        return pa.RecordBatchReader.from_batches(reader.schema, batches)

    monkeypatch.setattr(searchtable.SearchTable, "scan", scan)
    written = oracle()
    for form, predicate in comparison_forms(column, op):
        scanned.clear()
        want = written.filter(predicate).select("id", "host", "message").collect()
        got = scan_indextables(written_uri).filter(predicate).select("id", "host", "message")
        same(got.collect(), want)
        assert scanned == [want.height], (form, scanned, want.height)


def test_projection_and_limit_are_pushed(table_uri: str, reads: list[list[str]]) -> None:
    got = scan_indextables(table_uri).select("host").head(7).collect()
    assert got.columns == ["host"]
    assert got.height == 7
    assert reads == [["host"]]  # one split, one column


def test_limit_after_a_filter_polars_alone_applies(table_uri: str) -> None:
    # Polars gives no row limit with a filter (it takes the head itself).
    predicate = pl.col("message").str.contains("needlezz")
    got = scan_indextables(table_uri).filter(predicate).head(8).collect()
    assert got.height == 8
    assert all("needlezz" in m for m in got["message"])


def test_query_narrows_the_rows(table_uri: str) -> None:
    got = scan_indextables(table_uri, query="message:needlezz").select("message").collect()
    assert got.height == 15
    assert all("needlezz" in m for m in got["message"])


def test_count_reads_one_column(table_uri: str, reads: list[list[str]]) -> None:
    assert scan_indextables(table_uri).select(pl.len()).collect().item() == 150
    assert all(len(names) == 1 for names in reads)


def test_an_opened_table_is_scanned_without_opening_it_again(
    table_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = open_table(table_uri)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the table was opened again")

    monkeypatch.setattr(searchtable, "open_table", refuse)
    lazy = scan_indextables(opened, query="message:needlezz")
    for _ in range(2):
        got = lazy.select("id", "message").collect()
        same(
            got,
            oracle()
            .filter(pl.col("message").str.contains("needlezz"))
            .select("id", "message")
            .collect(),
        )
    head = scan_indextables(opened).select("id", "host").head(5).collect()
    assert head.columns == ["id", "host"]
    assert head.height == 5


def test_an_opened_table_takes_no_version_or_options(table_uri: str) -> None:
    opened = open_table(table_uri)
    with pytest.raises(ArgumentError, match="version= or options="):
        scan_indextables(opened, version=0)
    with pytest.raises(ArgumentError, match="version= or options="):
        scan_indextables(opened, options={})


def test_version_travels_in_time(table_uri: str) -> None:
    first = open_table(table_uri).version - 2
    assert scan_indextables(table_uri, version=first).collect().height == 50


@pytest.mark.parametrize(
    ("predicate", "where", "exact"),
    [
        (pl.col("host") == "it's", "`host` = 'it''s'", True),
        (pl.col("host") == "a\\b", "`host` = 'a\\\\b'", True),
        (pl.lit(5) >= pl.col("id"), "`id` <= 5", True),
        (pl.col("id").is_in([1, 2]), "`id` IN (1, 2)", True),
        ((pl.col("id") > 1) & pl.col("score").is_nan(), "`id` > 1", False),
        ((pl.col("id") > 1) | pl.col("score").is_nan(), None, None),
        (~((pl.col("id") > 1) & pl.col("score").is_nan()), None, None),  # NOT of a superset
        (pl.col("score") == 2.0, "`score` = 2.0", True),  # NaN and -0.0 alike in both
        (pl.col("host").str.contains("a.b"), None, None),  # a regular expression
        (pl.col("host").str.contains("a.b", literal=True), "`host` LIKE '%a.b%'", True),
        (pl.col("host").str.starts_with("5%_\\"), "`host` LIKE '5\\\\%\\\\_\\\\\\\\%'", True),
        (pl.col("host") == 5, None, None),  # a literal of another kind
    ],
)
def test_predicates_become_where_only_when_exact(
    table_uri: str, predicate: pl.Expr, where: str | None, exact: bool | None
) -> None:
    found = predicate_where(predicate, open_table(table_uri).schema)
    assert found == (None if where is None else (where, exact))


def test_the_package_imports_without_polars() -> None:
    code = (
        "import sys; sys.modules['polars'] = None\n"
        "import indextables.search, indextables.search.polars as p\n"
        "try:\n    p.scan_indextables('x')\nexcept indextables.search.errors.ArgumentError as e:\n"
        "    print('needs polars' if 'needs polars' in str(e) else e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "needs polars"


def test_an_exact_predicate_is_offered_to_the_scan_as_where(
    table_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []
    original = searchtable.SearchTable.scan

    def scan(self: Any, query: Any = None, **kwargs: Any) -> Any:
        calls.append({"query": query, **kwargs})
        return original(self, query, **kwargs)

    monkeypatch.setattr(searchtable.SearchTable, "scan", scan)
    predicate = (pl.col("host") == "host-3") & (pl.col("id") > 40)
    got = scan_indextables(table_uri, query="message:ok").filter(predicate).select("id").collect()
    theirs = oracle().filter(predicate & pl.col("message").str.contains(" ok"))
    assert sorted(got["id"]) == sorted(theirs.collect()["id"])
    assert calls[0]["where"] == "(`host` = 'host-3') AND (`id` > 40)"
    assert calls[0]["query"] == "message:ok"
    assert set(calls[0]["columns"]) == {"id", "host"}


def test_the_docs_polars_example_runs(tmp_path: Path) -> None:
    import os
    import re

    root = Path(__file__).resolve().parents[3]
    section = (root / "docs/search.md").read_text().split("## Command line and Polars", 1)[1]
    block = re.findall(r"```python\n(.*?)```", section, flags=re.S)[0]
    done = subprocess.run(
        [sys.executable, "-c", block],
        cwd=root,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[(3, 'doc3')]"
