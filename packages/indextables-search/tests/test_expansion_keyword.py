"""``max_term_expansions=`` per call on ``search``/``scan``/``count``/``aggregate`` and
``scan_indextables``: it overrides the ``spark.indextables.query.maxTermExpansions``
option both ways, bad values are refused naming it; and a fuzzy term the analyzer cuts
into several tokens is refused naming the term. Expected rows come from pyarrow.compute
and a textbook edit-distance table, not from the engine."""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import ArgumentError, QuerySyntaxError

LIMIT_KEY = "spark.indextables.query.maxTermExpansions"
# 20 words starting w0 (the wildcard w0* stands for 20 terms) and 10 others.
WORDS = [f"w{i:03d}" for i in range(20)] + [f"x{i:03d}" for i in range(10)]


def osa(first: str, second: str) -> int:
    """Optimal string alignment distance, the textbook table."""
    rows, cols = len(first) + 1, len(second) + 1
    grid = [[max(i, j) if i == 0 or j == 0 else 0 for j in range(cols)] for i in range(rows)]
    for i in range(1, rows):
        for j in range(1, cols):
            cost = 0 if first[i - 1] == second[j - 1] else 1
            grid[i][j] = min(grid[i - 1][j] + 1, grid[i][j - 1] + 1, grid[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and first[i - 1] == second[j - 2] and first[i - 2] == second[j - 1]:
                grid[i][j] = min(grid[i][j], grid[i - 2][j - 2] + 1)
    return grid[-1][-1]


@pytest.fixture(scope="module")
def words(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, pa.Table]:
    uri = str(tmp_path_factory.mktemp("expansions") / "t")
    data = pa.table({"id": list(range(len(WORDS))), "t": WORDS, "n": [1] * len(WORDS)})
    write_table(
        uri,
        data,
        options={
            "spark.indextables.indexing.typemap.t": "text",
            "spark.indextables.indexing.fastfields": "n",
        },
    )
    return uri, data


def _prefix_ids(data: pa.Table, prefix: str) -> list[int]:
    kept = data.filter(pc.starts_with(data.column("t"), prefix))
    return sorted(kept.column("id").to_pylist())


def _near_ids(data: pa.Table, term: str, distance: int) -> list[int]:
    return [
        i
        for i, w in zip(data["id"].to_pylist(), data["t"].to_pylist(), strict=True)
        if osa(term, w) <= distance
    ]


def _ids(table: pa.Table) -> list[int]:
    return sorted(table.column("id").to_pylist())


def _refused(count: int) -> Any:
    return pytest.raises(QuerySyntaxError, match=rf"stands for more than {count} terms")


def test_the_keyword_lowers_the_option_for_every_call(words: tuple[str, pa.Table]) -> None:
    uri, data = words
    table = open_table(uri, options={LIMIT_KEY: "100"})
    expected = _prefix_ids(data, "w0")
    assert len(expected) == 20
    assert _ids(table.search("t:w0*", columns=["id"])) == expected  # the option allows it
    with _refused(19):
        table.search("t:w0*", max_term_expansions=19)
    with _refused(19):
        table.scan("t:w0*", max_term_expansions=19).read_all()
    with _refused(19):
        table.count("t:w0*", max_term_expansions=19)
    with _refused(19):
        table.aggregate(metrics={"c": "count"}, query="t:w0*", max_term_expansions=19)
    near = _near_ids(data, "w001", 1)
    with _refused(len(near) - 1):
        table.search("t:w001~1", max_term_expansions=len(near) - 1)
    with _refused(3):
        table.search('t:"w0"*', max_term_expansions=3)  # a phrase prefix of one word
    # The call's limit lasts for that call only.
    assert table.count("t:w0*") == 20


def test_the_keyword_raises_the_option_for_every_call(words: tuple[str, pa.Table]) -> None:
    uri, data = words
    table = open_table(uri, options={LIMIT_KEY: "5"})
    with _refused(5):
        table.search("t:w0*")  # the option refuses it
    with _refused(5):
        table.count("t:w0*")
    expected = _prefix_ids(data, "w0")
    assert _ids(table.search("t:w0*", columns=["id"], max_term_expansions=20)) == expected
    assert _ids(table.scan("t:w0*", max_term_expansions=20).read_all()) == expected
    assert table.count("t:w0*", max_term_expansions=20) == len(expected)
    summed = table.aggregate(
        metrics={"c": "count", "s": ("sum", "n")}, query="t:w0*", max_term_expansions=20
    )
    assert summed.to_pylist() == [{"c": len(expected), "s": len(expected)}]
    near = _near_ids(data, "w001", 1)
    assert len(near) > 5
    found = table.search("t:w001~1", columns=["id"], max_term_expansions=len(near))
    assert _ids(found) == near


def test_a_kept_count_plan_is_not_reused_under_another_limit(
    words: tuple[str, pa.Table],
) -> None:
    uri, _ = words
    table = open_table(uri)
    assert table.count("t:w0*", max_term_expansions=20) == 20
    with _refused(19):
        table.count("t:w0*", max_term_expansions=19)
    assert table.aggregate(metrics={"c": "count"}, query="t:w0*", max_term_expansions=20)[
        "c"
    ].to_pylist() == [20]
    with _refused(19):
        table.aggregate(metrics={"c": "count"}, query="t:w0*", max_term_expansions=19)


def test_a_kept_split_count_query_is_not_reused_under_another_limit(
    words: tuple[str, pa.Table],
) -> None:
    uri, _ = words
    # Two snapshots (no plan in common) count the same splits in one process.
    assert open_table(uri, options={LIMIT_KEY: "100"}).count("t:w0*") == 20
    with _refused(5):
        open_table(uri, options={LIMIT_KEY: "5"}).count("t:w0*")
    assert open_table(uri).count("t:w0*", max_term_expansions=20) == 20
    with _refused(19):
        open_table(uri).count("t:w0*", max_term_expansions=19)


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "10"])
def test_bad_values_are_refused_at_call_time_naming_the_keyword(
    words: tuple[str, pa.Table], bad: Any
) -> None:
    table = open_table(words[0])
    match = re.escape(f"max_term_expansions={bad!r}")
    with pytest.raises(ArgumentError, match=match):
        table.search("t:w000", max_term_expansions=bad)
    with pytest.raises(ArgumentError, match=match):
        table.scan(max_term_expansions=bad)  # refused before any row is read
    with pytest.raises(ArgumentError, match=match):
        table.count(max_term_expansions=bad)
    with pytest.raises(ArgumentError, match=match):
        table.aggregate(metrics={"c": "count"}, max_term_expansions=bad)


def test_scan_indextables_takes_the_keyword(words: tuple[str, pa.Table]) -> None:
    pl = pytest.importorskip("polars")
    from indextables.search.polars import scan_indextables

    uri, data = words
    table = open_table(uri, options={LIMIT_KEY: "5"})
    frame = scan_indextables(table, query="t:w0*", max_term_expansions=20)
    assert sorted(frame.select("id").collect()["id"].to_list()) == _prefix_ids(data, "w0")
    with _refused(19):
        scan_indextables(table, query="t:w0*", max_term_expansions=19).collect()
    with _refused(5):
        scan_indextables(table, query="t:w0*").filter(pl.col("n") == 1).collect()
    with pytest.raises(ArgumentError, match=r"max_term_expansions=0"):
        scan_indextables(table, query="t:w0*", max_term_expansions=0)


@pytest.fixture(scope="module")
def phrases(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict[str, Any]]]:
    uri = str(tmp_path_factory.mktemp("fuzzy") / "t")
    rows = [
        {"id": 0, "message": "foo bar", "host": "foo-bar", "w": "foo-bar"},
        {"id": 1, "message": "foo-bar", "host": "fob-bar", "w": "foo bar"},
        {"id": 2, "message": "fob baz", "host": "foo", "w": "fooxbar"},
        {"id": 3, "message": "bar foo", "host": "x", "w": "foo-baz"},
    ]
    write_table(
        uri,
        pa.Table.from_pylist(rows),
        options={
            "spark.indextables.indexing.typemap.message": "text",
            "spark.indextables.indexing.typemap.w": "text",
            "spark.indextables.indexing.tokenizer.w": "whitespace",
        },
    )
    return uri, rows


@pytest.mark.parametrize(
    ("query", "column", "tokens"),
    [
        ("message:foo-bar~1", "message", "foo, bar"),
        ("message:Foo.Bar~2", "message", "foo, bar"),
        ("message:foo_bar~1^2", "message", "foo, bar"),
        ("+message:a:b~1", "message", "a, b"),
        ("message:foo\\-bar~1", "message", "foo, bar"),
        ("foo-bar~1", "message", "foo, bar"),  # a bare term searches message (and w)
        ("message:(foo-bar~1)", "message", "foo, bar"),
    ],
)
def test_a_fuzzy_term_of_several_tokens_is_refused_naming_it(
    phrases: tuple[str, list[dict[str, Any]]], query: str, column: str, tokens: str
) -> None:
    table = open_table(phrases[0])
    term = query.lstrip("+").removeprefix("message:(").rstrip(")")
    message = (
        rf"option query: the fuzzy term {re.escape(repr(term))} is 2 tokens to the analyzer "
        rf"of column {column!r} \({tokens}\), but a fuzzy term matches one token: write one "
        "token"
    )
    with pytest.raises(QuerySyntaxError, match=message):
        table.search(query)
    with pytest.raises(QuerySyntaxError, match=message):
        table.count(query)


def test_textsearch_refuses_a_fuzzy_term_of_several_tokens(
    phrases: tuple[str, list[dict[str, Any]]],
) -> None:
    table = open_table(phrases[0])
    with pytest.raises(
        QuerySyntaxError,
        match=r"option textsearch\.message: the fuzzy term 'foo-bar~1' is 2 tokens .*"
        r'a phrase \(message:"foo bar"\), or each token fuzzy '
        r"\(message:foo~1 AND message:bar~1\)",
    ):
        table.search(textsearch={"message": "foo-bar~1"})


def test_one_token_fuzzy_terms_and_phrase_slops_are_still_answered(
    phrases: tuple[str, list[dict[str, Any]]],
) -> None:
    uri, rows = phrases
    table = open_table(uri)

    def ids(query: str) -> list[int]:
        return _ids(table.search(query, columns=["id"]))

    # An exact field: the whole value is the one term.
    assert ids("host:foo-bar~1") == [r["id"] for r in rows if osa("foo-bar", r["host"]) <= 1]
    # A whitespace field: foo-bar is one token.
    assert ids("w:foo-bar~1") == [
        r["id"] for r in rows if any(osa("foo-bar", t) <= 1 for t in r["w"].split())
    ]
    # One token on the default analyzer.
    assert ids("message:fob~1") == [
        r["id"]
        for r in rows
        if any(osa("fob", t) <= 1 for t in re.findall(r"[a-z]+", r["message"]))
    ]
    # A phrase with a slop is no fuzzy term: "foo bar" within one move.
    assert ids('message:"foo bar"~1') == [0, 1]
