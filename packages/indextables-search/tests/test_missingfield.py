"""A query on a column a schema change added answers on the splits written before it.

``write_table(..., schema_mode="merge")`` adds columns; the splits written before hold no
such field, and a query clause on it raised ``QuerySyntaxError`` ("Field does not
exist") there. Such a clause now matches nothing on those splits, as on a null value: a
conjunction with it matches nothing, a disjunction is left to its other side, under
``NOT``/``-`` it matches every row. Random queries over old and new columns are checked
against a Python model of the rows (old rows null in the new columns) through search,
count and aggregate.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import QuerySyntaxError
from indextables.search.query.tokenless import NOTHING, nothing_for_missing_fields

Row = dict[str, Any]
Keeps = Callable[[Row], bool]

WORDS = ["alpha", "bravo", "charlie", "delta"]
TAGS = ["ab", "ac", "ba", "bb"]
MSGS = ["m1", "m2", "m3"]
OLD_TEXT = {"spark.indextables.indexing.typemap.words": "text"}
TEXT = {**OLD_TEXT, "spark.indextables.indexing.typemap.body": "text"}
START = dt.date(2020, 1, 1)


def _maybe(rng: random.Random, value: Any) -> Any:
    return None if rng.random() < 0.2 else value


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))


def _old_rows(rng: random.Random, start: int, n: int) -> list[Row]:
    return [{"id": start + i, "msg": rng.choice(MSGS), "words": _text(rng)} for i in range(n)]


def _new_rows(rng: random.Random, start: int, n: int) -> list[Row]:
    rows = _old_rows(rng, start, n)
    for row in rows:
        row["tag"] = _maybe(rng, rng.choice(TAGS))
        row["body"] = _maybe(rng, _text(rng))
        row["n"] = _maybe(rng, rng.randint(-5, 5))
        row["f"] = _maybe(rng, rng.choice([-1.5, 0.25, 2.0, 3.75]))
        row["flag"] = _maybe(rng, rng.random() < 0.5)
        row["day"] = _maybe(rng, START + dt.timedelta(days=rng.randint(0, 300)))
    return rows


NEW_TYPES = {
    "tag": pa.string(),
    "body": pa.string(),
    "n": pa.int64(),
    "f": pa.float64(),
    "flag": pa.bool_(),
    "day": pa.date32(),
}
NEW = tuple(NEW_TYPES)


def _arrow(rows: list[Row], names: list[str]) -> pa.Table:
    types = {"id": pa.int64(), "msg": pa.string(), "words": pa.string(), **NEW_TYPES}
    return pa.table({n: pa.array([r[n] for r in rows], types[n]) for n in names})


def _two_generations(uri: str, seed: int) -> list[Row]:
    """A table written in two generations (the second adds NEW): its rows, old ones null
    in the added columns."""
    rng = random.Random(seed)
    old = _old_rows(rng, 0, 40)
    write_table(uri, _arrow(old, ["id", "msg", "words"]), options=OLD_TEXT)
    # a second old split, so the old generation is more than one split
    more = _old_rows(rng, 40, 20)
    write_table(uri, _arrow(more, ["id", "msg", "words"]), options=OLD_TEXT)
    new = _new_rows(rng, 60, 50)
    names = ["id", "msg", "words", *NEW]
    write_table(uri, _arrow(new, names), schema_mode="merge", options=TEXT)
    return [{**dict.fromkeys(NEW), **r} for r in old + more] + new


def _tokens(text: str | None) -> list[str]:
    return [] if text is None else text.split()


def _has(column: str, test: Callable[[Any], bool]) -> Keeps:
    return lambda r: r[column] is not None and test(r[column])


def _phrase(words: tuple[str, str]) -> Keeps:
    def keeps(r: Row) -> bool:
        tokens = _tokens(r["body"])
        return any(tuple(tokens[i : i + 2]) == words for i in range(len(tokens) - 1))

    return keeps


def _clause(rng: random.Random) -> tuple[str, Keeps]:
    """One random clause and the rows it keeps (a null value holds no term)."""
    kind = rng.randrange(16)
    word, tag, msg = rng.choice(WORDS), rng.choice(TAGS), rng.choice(MSGS)
    low, high = sorted(rng.sample(range(-6, 7), 2))
    if kind == 0:
        return f"tag:{tag}", _has("tag", lambda v: v == tag)
    if kind == 1:
        return f"tag:{tag[0]}*", _has("tag", lambda v: v.startswith(tag[0]))
    if kind == 2:
        return f"tag:/{tag[0]}./", _has("tag", lambda v: v[0] == tag[0])
    if kind == 3:
        return "tag:*", _has("tag", lambda v: True)
    if kind == 4:
        return f"body:{word}", _has("body", lambda v: word in _tokens(v))
    if kind == 5:
        pair = (rng.choice(WORDS), rng.choice(WORDS))
        return f'body:"{pair[0]} {pair[1]}"', _phrase(pair)
    if kind == 6:  # one edit away from the word, two or more from every other word
        return f"body:{word[:-1]}x~1", _has("body", lambda v: word in _tokens(v))
    if kind == 7:
        return f"n:[{low} TO {high}]", _has("n", lambda v: low <= v <= high)
    if kind == 8:
        return f"n:{low}", _has("n", lambda v: v == low)
    if kind == 9:
        return f"f:[{low / 2} TO {high / 2}]", _has("f", lambda v: low / 2 <= v <= high / 2)
    if kind == 10:
        flag = rng.random() < 0.5
        return f"flag:{str(flag).lower()}", _has("flag", lambda v: v is flag)
    if kind == 11:
        a, b = sorted(START + dt.timedelta(days=d) for d in rng.sample(range(300), 2))
        text = f"day:[{a.isoformat()}T00:00:00Z TO {b.isoformat()}T00:00:00Z]"
        return text, _has("day", lambda v: a <= v <= b)
    if kind == 12:
        pair = (tag, rng.choice(TAGS))
        return f"tag: IN [{pair[0]} {pair[1]}]", _has("tag", lambda v: v in pair)
    if kind == 13:
        return f"msg:{msg}", lambda r: r["msg"] == msg
    if kind == 14:
        return f"words:{word}", lambda r: word in _tokens(r["words"])
    return f"id:[{low * 10} TO {high * 10}]", lambda r: low * 10 <= r["id"] <= high * 10


def _group_clause(rng: random.Random) -> tuple[str, Keeps]:
    """A field group ``tag:(a OR b)`` or a plain clause."""
    if rng.random() < 0.1:
        a, b = rng.choice(TAGS), rng.choice(TAGS)
        return f"tag:({a} OR {b})", _has("tag", lambda v: v in (a, b))
    return _clause(rng)


def _atom(rng: random.Random, depth: int) -> tuple[str, Keeps]:
    if depth > 0 and rng.random() < 0.3:
        text, keeps = _expression(rng, depth - 1)
        return f"({text})", keeps
    return _group_clause(rng)


def _conjunction(rng: random.Random, depth: int) -> tuple[str, Keeps]:
    text, keeps = _atom(rng, depth)
    parts: list[tuple[bool, Keeps]] = [(True, keeps)]
    for _ in range(rng.randrange(3)):
        other, other_keeps = _atom(rng, depth)
        negate = rng.random() < 0.5
        text += f" AND {rng.choice(['NOT ', '-']) if negate else ''}{other}"
        parts.append((not negate, other_keeps))
    return text, lambda r: all(keeps(r) == want for want, keeps in parts)


def _expression(rng: random.Random, depth: int) -> tuple[str, Keeps]:
    pieces = [_conjunction(rng, depth) for _ in range(rng.randint(1, 3))]
    text = " OR ".join(f"({t})" for t, _ in pieces)
    return text, lambda r: any(keeps(r) for _, keeps in pieces)


def _query(rng: random.Random) -> tuple[str, Keeps]:
    if rng.random() < 0.15:  # a negation alone: every row it does not match
        text, keeps = _atom(rng, 1)
        return f"{rng.choice(['NOT ', '-'])}{text}", lambda r: not keeps(r)
    return _expression(rng, 1)


@pytest.fixture(scope="module", params=[5, 6])
def table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    uri = str(Path(tmp_path_factory.mktemp("missingfield")) / "t")
    return uri, _two_generations(uri, request.param), request.param


def test_random_queries_over_old_and_added_columns_equal_the_model(table: Any) -> None:
    uri, rows, seed = table
    searched = open_table(uri)
    rng = random.Random(seed * 31)
    for _ in range(60):
        query, keeps = _query(rng)
        want = sorted(r["id"] for r in rows if keeps(r))
        got = searched.search(query, columns=["id"]).column("id").to_pylist()
        assert sorted(got) == want, query
        assert searched.count(query) == len(want), query


def test_aggregates_under_a_query_on_added_columns_equal_the_model(table: Any) -> None:
    uri, rows, seed = table
    searched = open_table(uri)
    rng = random.Random(seed * 37)
    for _ in range(15):
        query, keeps = _query(rng)
        kept = [r for r in rows if keeps(r)]
        got = searched.aggregate(
            group_by="msg", metrics={"rows": "count", "top": ("max", "id")}, query=query
        ).to_pylist()
        want = [
            {
                "msg": m,
                "rows": sum(r["msg"] == m for r in kept),
                "top": max(r["id"] for r in kept if r["msg"] == m),
            }
            for m in sorted({r["msg"] for r in kept})
        ]
        assert got == want, query


@pytest.mark.parametrize(
    ("query", "keeps"),
    [
        ("tag:ab", lambda r: r["tag"] == "ab"),
        ("-tag:ab", lambda r: r["tag"] != "ab"),
        ("NOT tag:*", lambda r: r["tag"] is None),
        ("tag:ab OR msg:m1", lambda r: r["tag"] == "ab" or r["msg"] == "m1"),
        (
            "msg:m1 AND NOT body:alpha",
            lambda r: r["msg"] == "m1" and "alpha" not in _tokens(r["body"]),
        ),
        (
            "+msg:m2 -n:[0 TO 9]",
            lambda r: r["msg"] == "m2" and not (r["n"] is not None and r["n"] >= 0),
        ),
        ("tag: IN [ab ba]", lambda r: r["tag"] in ("ab", "ba")),
        ("-tag:(ab OR ac)", lambda r: r["tag"] not in ("ab", "ac")),
        ("tag:ab^2 OR words:alpha", lambda r: r["tag"] == "ab" or "alpha" in _tokens(r["words"])),
    ],
)
def test_each_form_of_a_clause_on_an_added_column(table: Any, query: str, keeps: Keeps) -> None:
    uri, rows, _ = table
    want = sorted(r["id"] for r in rows if keeps(r))
    got = open_table(uri).search(query, columns=["id"]).column("id").to_pylist()
    assert sorted(got) == want
    assert want  # the old rows at least answer every one of these forms


def test_a_column_the_table_does_not_have_is_still_refused_by_name(table: Any) -> None:
    uri, _, _ = table
    searched = open_table(uri)
    for call in (searched.search, searched.count):
        with pytest.raises(QuerySyntaxError, match="nosuch"):
            call("nosuch:x OR msg:m1")


def test_nothing_for_missing_fields_replaces_clauses_and_field_groups_in_place() -> None:
    missing = {"new", "new.k"}.__contains__
    cases = {
        "new:x": NOTHING,
        "-new:x AND a:y": f"-{NOTHING} AND a:y",
        "+new:(x OR (y z)) b": f"+{NOTHING} b",
        "new: (x) OR a:y": f"{NOTHING} OR a:y",
        'a:"new:x" new.k:[1 TO 2]^2': f'a:"new:x" {NOTHING}',
        "(new:/a(b|c)/ OR a:x*)": f"({NOTHING} OR a:x*)",
        "plain words": "plain words",
    }
    for text, want in cases.items():
        assert nothing_for_missing_fields(text, missing) == want, text


def test_a_companion_index_of_a_delta_table_whose_schema_grew(tmp_path: Path) -> None:
    """A companion's splits built before the source gained a column answer a query on it."""
    from deltalake import write_deltalake

    from indextables.search import build_companion

    source, index = str(tmp_path / "delta"), str(tmp_path / "idx")
    rng = random.Random(9)
    first = [{"id": i, "msg": rng.choice(MSGS)} for i in range(20)]
    write_deltalake(source, pa.Table.from_pylist(first))
    build_companion(source, index, source_format="delta")
    second = [
        {"id": 20 + i, "msg": rng.choice(MSGS), "tag": _maybe(rng, rng.choice(TAGS))}
        for i in range(20)
    ]
    write_deltalake(source, pa.Table.from_pylist(second), mode="append", schema_mode="merge")
    build_companion(source, index, source_format="delta")
    rows = [{"tag": None, **r} for r in first] + second
    searched = open_table(index)
    cases: list[tuple[str, Keeps]] = [
        ("tag:ab", lambda r: r["tag"] == "ab"),
        ("-tag:ab", lambda r: r["tag"] != "ab"),
        ("tag:ab OR msg:m1", lambda r: r["tag"] == "ab" or r["msg"] == "m1"),
        (
            "msg:m2 AND NOT tag:a*",
            lambda r: r["msg"] == "m2" and not (r["tag"] or "").startswith("a"),
        ),
    ]
    for query, keeps in cases:
        want = sorted(r["id"] for r in rows if keeps(r))
        assert sorted(searched.search(query, columns=["id"]).column("id").to_pylist()) == want
        assert searched.count(query) == len(want), query


def test_a_split_listed_without_its_doc_mapping_asks_its_own_parser() -> None:
    """Without the split's fields (no doc mapping in the log), whether a field is missing
    is the split's parser's answer: its own fields are searched, others match nothing."""
    import tantivy

    from indextables.search.query.searchoptions import SearchSpec, build_query

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("msg", stored=True, tokenizer_name="raw")
    builder.add_json_field("attrs", stored=True)
    index = tantivy.Index(builder.build())
    writer = index.writer(15_000_000, 1)
    for i, msg in enumerate(["m1", "m2", "m1", "m3"]):
        writer.add_document(tantivy.Document(msg=msg, attrs={"k": f"v{i}"}))
    writer.commit()
    index.reload()
    searcher = index.searcher()

    def hits(text: str) -> int:
        query = build_query(index, SearchSpec(query=text), {}, missing_match_nothing=True)
        assert query is not None
        return len(searcher.search(query, limit=10).hits)

    assert hits("tag:x OR msg:m1") == hits("msg:m1") == 2
    assert hits("-tag:x") == 4
    assert hits("msg:m1 AND tag:x") == 0
    assert hits("attrs.k:v1 OR new.k:v2") == 1
    with pytest.raises(QuerySyntaxError, match="tag"):
        build_query(index, SearchSpec(query="tag:x OR msg:m1"), {})
