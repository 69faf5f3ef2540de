"""``where`` LIKE patterns answered through the term dictionary of exact string fields.

Random patterns (seeded: ``%``, ``_``, escapes, regex metacharacters, unicode,
line breaks, the empty pattern, patterns matching nothing or every value) over
hostile string columns (nulls, ``""``, values beyond the term limit, unicode,
line breaks) are compared with DuckDB's ``LIKE ... ESCAPE '\\'`` over the same
rows. A second check counts the rows the ``where`` filter evaluates: on splits
whose every value is indexed it sees only the rows the pattern keeps.
"""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
import tantivy

from indextables.search import open_table, write_table
from indextables.search.query import tantivyquery
from indextables.search.query.conditions import Condition, translate_where
from indextables.search.query.indexexact import LIKE_OPS
from indextables.search.query.tantivyquery import MAX_TERM_BYTES, like_pattern, to_query
from indextables.search.query.whereeval import WhereFilter
from indextables.search.schema.mapping import FieldKind, FieldSpec

ALPHABET = ["a", "b", "-", ".", "*", "%", "_", "\\", "\n", "é", "İ", "日", "(", "[", "$", "^", "|"]
ALPHABET += ["?", "+", "{", "}", "'", " ", "\u0301"]
OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}


def _value(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.15:
        return ""
    return "".join(rng.choices(ALPHABET, k=rng.randrange(1, 7)))


def _rows(seed: int, count: int, *, huge: bool) -> pa.Table:
    rng = random.Random(seed)
    hosts = [_value(rng) for _ in range(count)]
    if huge:  # beyond the term limit: not indexed, so this split records no fullyIndexed tag
        hosts[0] = "a" * (MAX_TERM_BYTES + 1)
        hosts[1] = "b%" + "é" * MAX_TERM_BYTES + "a"
    return pa.table(
        {
            "id": pa.array(range(seed * 10_000, seed * 10_000 + count), pa.int64()),
            "host": pa.array(hosts, pa.string()),
            "message": pa.array([h or "x" for h in hosts], pa.string()),
        }
    )


def _pattern(rng: random.Random) -> str:
    pieces = []
    for _ in range(rng.randrange(0, 5)):
        roll = rng.random()
        if roll < 0.3:
            pieces.append("%")
        elif roll < 0.45:
            pieces.append("_")
        else:
            c = rng.choice(ALPHABET)
            pieces.append("\\" + c if c in "%_\\" else c)
    return "".join(pieces)


def _sql(pattern: str) -> str:
    """``pattern`` as a Spark SQL string literal (whose value it is)."""
    return "'" + pattern.replace("\\", "\\\\").replace("'", "''") + "'"


FIXED = ["", "%", "%%", "_", "%_%", "a%", "%a", "%a%", "a_b", "\\%%", "%\\_", "%\\\\%", "zzz%q"]
FIXED += ["%.*%", "%[%", "é%", "%İ", "_\n%", "%日_%", "%\u0301"]


def _write(uri: str, parts: list[pa.Table]) -> None:
    for part in parts:
        options = OPTIONS if "message" in part.column_names else {}
        write_table(uri, part, options=options)


@pytest.mark.parametrize("seed", [1, 2])
def test_like_equals_duckdb_on_hostile_strings(tmp_path: Path, seed: int) -> None:
    parts = [_rows(seed * 3 + k, 120, huge=k == 0) for k in range(3)]
    uri = str(tmp_path / "t")
    _write(uri, parts)
    table = open_table(uri)
    data = pa.concat_tables(parts)
    db = duckdb.connect()
    db.register("rows", data)
    rng = random.Random(seed)
    patterns = FIXED + [_pattern(rng) for _ in range(60)]
    for pattern in patterns:
        for negated in (False, True):
            keyword = "NOT LIKE" if negated else "LIKE"
            expected = {
                r[0]
                for r in db.execute(
                    f"SELECT id FROM rows WHERE host {keyword} ? ESCAPE '\\'", [pattern]
                ).fetchall()
            }
            where = f"host {keyword} {_sql(pattern)}"
            got = set(table.search(where=where, columns=["id"]).column("id").to_pylist())
            assert got == expected, (where, sorted(got ^ expected)[:5])
    # A pattern on a text column is evaluated on every row, as before (the index holds tokens).
    found = table.search(where="message LIKE '%a%'", columns=["id"]).column("id").to_pylist()
    text = {r[0] for r in db.execute("SELECT id FROM rows WHERE message LIKE '%a%'").fetchall()}
    assert set(found) == text


def _evaluated(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of rows each call of the ``where`` filter evaluates."""
    seen: list[int] = []
    original = WhereFilter.mask

    def counting(self: WhereFilter, batch: pa.RecordBatch) -> pa.BooleanArray:
        seen.append(batch.num_rows)
        return original(self, batch)

    monkeypatch.setattr(WhereFilter, "mask", counting)
    return seen


@pytest.mark.parametrize(
    "pattern",
    ["web-1%", "%-7", "%b-1%", "w_b-2_", "%-1_", "%\\_%", "we%-3"],
)
def test_the_index_answers_like_on_fully_indexed_splits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    rng = random.Random(7)
    hosts = [
        None if rng.random() < 0.1 else rng.choice(["web", "db", "w_b"]) + f"-{rng.randrange(40)}"
        for _ in range(400)
    ]
    data = pa.table({"id": pa.array(range(400), pa.int64()), "host": pa.array(hosts)})
    uri = str(tmp_path / "t")
    _write(uri, [data.slice(0, 200), data.slice(200)])
    db = duckdb.connect()
    db.register("rows", data)
    expected = {
        r[0]
        for r in db.execute(
            "SELECT id FROM rows WHERE host LIKE ? ESCAPE '\\'", [pattern]
        ).fetchall()
    }
    assert 0 < len(expected) < len(data) // 2
    seen = _evaluated(monkeypatch)
    got = open_table(uri).search(where=f"host LIKE {_sql(pattern)}", columns=["id"])
    assert set(got.column("id").to_pylist()) == expected
    assert sum(seen) == len(expected)  # every row read is one the pattern keeps


def test_like_translates_to_index_conditions() -> None:
    schema = pa.schema([("host", pa.string()), ("n", pa.int64())])
    cases = {
        "host LIKE 'ab%'": Condition("prefix", "host", ("ab",)),
        "host LIKE '%ab'": Condition("suffix", "host", ("ab",)),
        "host LIKE '%%ab%'": Condition("contains", "host", ("ab",)),
        "host LIKE '%a\\\\%b%'": Condition("contains", "host", ("a%b",)),
        "host LIKE 'a_b'": Condition("like", "host", ("a_b",)),
        "host LIKE '%'": Condition("prefix", "host", ("",)),
        "host LIKE '_%'": Condition("like", "host", ("_%",)),
    }
    for where, condition in cases.items():
        translation = translate_where(where, schema)
        assert translation.conditions == (condition,), where
        assert translation.complete
    for where in ["host NOT LIKE '%a%'", "host LIKE 'a\\\\b'", "n LIKE '%1%'"]:
        assert not translate_where(where, schema).complete, where


def test_like_pattern_regex_matches_as_spark_like() -> None:
    """Tantivy's regex over a raw field against a Python model of LIKE (fullmatch)."""
    import re

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("s", stored=True, tokenizer_name="raw")
    schema = builder.build()
    index = tantivy.Index(schema)
    writer = index.writer(15_000_000, 1)
    rng = random.Random(11)
    values = sorted({_value(rng) or "" for _ in range(300)})
    for v in values:
        writer.add_document(tantivy.Document(s=v))
    writer.commit()
    index.reload()
    searcher = index.searcher()
    spec = FieldSpec("s", FieldKind.STRING, "raw", True, True, False)

    def model(pattern: str) -> re.Pattern[str]:
        out, i = [], 0
        while i < len(pattern):
            c = pattern[i]
            if c == "\\":
                out.append(re.escape(pattern[i + 1]))
                i += 2
                continue
            out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
            i += 1
        return re.compile("".join(out), re.DOTALL)

    for pattern in FIXED + [_pattern(rng) for _ in range(80)]:
        query = to_query(Condition("like", "s", (pattern,)), spec, schema, fully_indexed={"s"})
        assert query is not None, pattern
        hits = searcher.search(query, len(values) + 1).hits
        got = {searcher.doc(a)["s"][0] for _, a in hits}
        assert got == {v for v in values if model(pattern).fullmatch(v)}, pattern
    assert like_pattern("a\\b") is None  # an escape Spark refuses
    assert to_query(Condition("like", "s", ("a_",)), spec, schema) is None  # not fully indexed


def test_a_search_tokenizes_its_where_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact filter and the index conditions share one parse of ``where``."""
    from indextables.protocol import predicateparser

    data = pa.table({"id": pa.array(range(50), pa.int64()), "host": [f"h{i}" for i in range(50)]})
    uri = str(tmp_path / "t")
    _write(uri, [data])
    table = open_table(uri)
    calls: list[str] = []
    original = predicateparser.tokenize

    def counting(text: str) -> list[predicateparser.Token]:
        calls.append(text)
        return original(text)

    monkeypatch.setattr(predicateparser, "tokenize", counting)
    where = "id IN (" + ", ".join(str(i) for i in range(0, 50, 7)) + ") AND host LIKE 'h%'"
    got = table.search(where=where, columns=["id"]).column("id").to_pylist()
    assert sorted(got) == list(range(0, 50, 7))
    assert calls.count(where) == 1


def test_a_pattern_too_large_for_the_automaton_is_evaluated_and_tried_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``'%a' + 20 * '_'`` needs a DFA beyond Tantivy's size limit: the where filter answers,
    and the later splits do not build the automaton again."""
    hosts = ["a" * 21, "b" + "a" * 21, "a" * 20, None, "xa" + "é" * 20]
    data = pa.table({"id": pa.array(range(5), pa.int64()), "host": hosts})
    uri = str(tmp_path / "t")
    _write(uri, [data.slice(0, 2), data.slice(2, 2), data.slice(4)])
    built: list[str] = []
    original = tantivy.Query.regex_query

    def counting(schema: tantivy.Schema, name: str, regex: str) -> tantivy.Query:
        built.append(regex)
        return original(schema, name, regex)

    monkeypatch.setattr(tantivy.Query, "regex_query", counting)
    monkeypatch.setattr(tantivyquery, "_REFUSED_REGEXES", {})  # none refused before
    pattern = "%a" + "_" * 20
    got = open_table(uri).search(where=f"host LIKE '{pattern}'", columns=["id"])
    assert sorted(got.column("id").to_pylist()) == [0, 1, 4]
    assert built == [like_pattern(pattern)]


_COUNT_LOG = "indextables.search.searchtable"


def _count_sources(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What answered each ``count`` call: ``"log"``, ``"index"`` or ``"rows"``."""
    return [
        r.getMessage().rsplit(" ", 1)[-1]
        for r in caplog.records
        if r.name == _COUNT_LOG and r.getMessage().startswith("count of ")
    ]


def _unrecorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Count as on splits whose writer recorded no fully-indexed columns (the reference's):
    the split checks the columns itself."""
    from indextables.search.aggregate import tablecount

    original = tablecount.split_fully_indexed

    def without_record(index, searcher, fields, split_tags, columns):  # type: ignore[no-untyped-def]
        return original(index, searcher, fields, (), columns)

    monkeypatch.setattr(tablecount, "split_fully_indexed", without_record)


def _patterned(where: str) -> bool:
    """Whether ``where`` has a condition the term dictionary answers only on fully indexed
    splits (a LIKE pattern with a wildcard)."""
    schema = pa.schema([("id", pa.int64()), ("host", pa.string())])
    return any(c.op in LIKE_OPS for c in translate_where(where, schema).conditions)


@pytest.mark.parametrize("recorded", [True, False], ids=["recorded", "checked"])
def test_like_counts_equal_duckdb_and_come_from_the_index(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    recorded: bool,
) -> None:
    """Counts with random LIKE patterns equal DuckDB's. On splits whose every value is
    indexed (recorded by the writer or checked on the split) the index answers them;
    a split holding a value beyond the term limit sends the count to the rows."""
    import logging

    if not recorded:
        _unrecorded(monkeypatch)
    caplog.set_level(logging.DEBUG, logger=_COUNT_LOG)
    rng = random.Random(5)
    patterns = FIXED + [_pattern(rng) for _ in range(60)]
    for huge in (False, True):
        parts = [_rows(40 + k, 120, huge=huge and k == 1) for k in range(3)]
        uri = str(tmp_path / f"t{huge}")
        _write(uri, parts)
        table = open_table(uri)
        db = duckdb.connect()
        db.register("rows", pa.concat_tables(parts))
        sources: list[str] = []
        for pattern in patterns:
            for keyword, extra in (("LIKE", ""), ("LIKE", " AND id >= 410050"), ("NOT LIKE", "")):
                (expected,) = db.execute(
                    f"SELECT count(*) FROM rows WHERE host {keyword} ? ESCAPE '\\'{extra}",
                    [pattern],
                ).fetchone()
                where = f"host {keyword} {_sql(pattern)}{extra}"
                caplog.clear()
                assert table.count(where=where) == expected, where
                (source,) = _count_sources(caplog)
                if keyword == "LIKE" and _patterned(where):
                    sources.append(source)
        if huge:
            assert set(sources) == {"rows"}  # one split cannot be counted exactly
        else:
            assert set(sources) == {"index"}, sources


def test_like_aggregates_equal_duckdb_from_the_index(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    caplog.set_level(logging.DEBUG, logger=_COUNT_LOG)
    parts = [_rows(60 + k, 120, huge=False) for k in range(2)]
    uri = str(tmp_path / "t")
    _write(uri, parts)
    table = open_table(uri)
    db = duckdb.connect()
    db.register("rows", pa.concat_tables(parts))
    rng = random.Random(8)
    for pattern in [p for p in FIXED + [_pattern(rng) for _ in range(30)] if "%" in p or "_" in p]:
        expected = db.execute(
            "SELECT count(*), sum(id), min(id) FROM rows WHERE host LIKE ? ESCAPE '\\'", [pattern]
        ).fetchone()
        caplog.clear()
        got = table.aggregate(
            metrics={"n": "count", "s": ("sum", "id"), "lo": ("min", "id")},
            where=f"host LIKE {_sql(pattern)}",
        )
        assert tuple(got.to_pylist()[0].values()) == expected, pattern
        answered = [
            r.getMessage()
            for r in caplog.records
            if r.name == _COUNT_LOG and " answered from the " in r.getMessage()
        ]
        assert answered[-1].endswith("from the index"), (pattern, answered)


def _escaped(pattern: str, escape: str) -> str:
    """``pattern`` (``\\`` escapes) written with the escape character ``escape``."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            c = pattern[i + 1]
            out.append(escape + c if c in "%_" or c == escape else c)
            i += 2
            continue
        out.append(escape + c if c == escape else c)
        i += 1
    return "".join(out)


@pytest.mark.parametrize("escape", ["!", "#", "\\", "a", "日"])
def test_like_escape_equals_duckdb(tmp_path: Path, escape: str) -> None:
    parts = [_rows(70 + k, 120, huge=k == 0) for k in range(2)]
    uri = str(tmp_path / "t")
    _write(uri, parts)
    table = open_table(uri)
    db = duckdb.connect()
    db.register("rows", pa.concat_tables(parts))
    rng = random.Random(ord(escape))
    for base in FIXED + [_pattern(rng) for _ in range(40)]:
        pattern = _escaped(base, escape)
        (expected, negated) = db.execute(
            "SELECT count(*) FILTER (host LIKE $1 ESCAPE '\\'),"
            " count(*) FILTER (NOT host LIKE $1 ESCAPE '\\') FROM rows",
            [base],
        ).fetchone()
        if escape.isascii():  # DuckDB takes a one-byte escape only
            assert db.execute(
                "SELECT count(*) FROM rows WHERE host LIKE ? ESCAPE ?", [pattern, escape]
            ).fetchone() == (expected,), (base, pattern)
        where = f"host LIKE {_sql(pattern)} ESCAPE {_sql(escape)}"
        assert table.count(where=where) == expected, where
        got = table.search(where=f"NOT ({where})", columns=["id"]).num_rows
        assert got == negated, where


def test_like_escape_refusals_are_typed() -> None:
    from indextables.search.errors import QuerySyntaxError
    from indextables.search.query.wheregrammar import Like, parse_where

    node = parse_where("host LIKE 'a!%b\\\\c!!' ESCAPE '!'")
    assert isinstance(node, Like)
    assert node.pattern.value == "a\\%b\\\\c!"
    for where, message in [
        ("host LIKE 'a!' ESCAPE '!'", "ends with the escape"),
        ("host LIKE 'a!b' ESCAPE '!'", "may not precede 'b'"),
        ("host LIKE 'a' ESCAPE '!!'", "one character"),
        ("host LIKE 'a' ESCAPE x", "one-character string after ESCAPE"),
    ]:
        with pytest.raises(QuerySyntaxError, match=message):
            parse_where(where)


@pytest.mark.parametrize("recorded", [True, False], ids=["recorded", "checked"])
def test_string_functions_equal_duckdb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recorded: bool
) -> None:
    """Spark's ``startswith``/``endswith``/``contains(col, 's')`` against DuckDB's
    ``starts_with``/``ends_with``/``contains``: rows, negations and counts."""
    if not recorded:
        _unrecorded(monkeypatch)
    parts = [_rows(80 + k, 120, huge=k == 0) for k in range(3)]
    uri = str(tmp_path / "t")
    _write(uri, parts)
    table = open_table(uri)
    db = duckdb.connect()
    db.register("rows", pa.concat_tables(parts))
    rng = random.Random(13)
    operands = ["", "a", "%", "_", "\\", "a%b", "\n"] + [_value(rng) or "" for _ in range(30)]
    functions = {"startswith": "starts_with", "endswith": "ends_with", "contains": "contains"}
    for spark, duck in functions.items():
        for operand in operands:
            for neg in ("", "NOT "):
                expected = {
                    r[0]
                    for r in db.execute(
                        f"SELECT id FROM rows WHERE {neg}{duck}(host, ?)", [operand]
                    ).fetchall()
                }
                where = f"{neg}{spark.upper() if neg else spark}(host, {_sql(operand)})"
                got = table.search(where=where, columns=["id"]).column("id").to_pylist()
                assert set(got) == expected, where
                assert table.count(where=where) == len(expected), where
                assert table.count(where=f"{where} AND id >= 810000") == len(
                    {i for i in expected if i >= 810000}
                ), where


def test_string_function_refusals_are_typed() -> None:
    from indextables.search.errors import QuerySyntaxError
    from indextables.search.query.wheregrammar import parse_where

    for where, message in [
        ("startswith('a', 'b')", "takes a column first"),
        ("endswith(host, 1)", "takes a string literal second"),
        ("contains(host 'a')", "expected ,"),
        ("contains(host, 'a'", "expected \\)"),
    ]:
        with pytest.raises(QuerySyntaxError, match=message):
            parse_where(where)


def test_string_functions_translate_to_index_conditions() -> None:
    schema = pa.schema([("host", pa.string())])
    cases = {
        "startswith(host, 'a%')": Condition("prefix", "host", ("a%",)),
        "ENDSWITH(host, '_b')": Condition("suffix", "host", ("_b",)),
        "contains(host, 'a\\\\b')": Condition("contains", "host", ("a\\b",)),
    }
    for where, condition in cases.items():
        translation = translate_where(where, schema)
        assert translation.conditions == (condition,), where
        assert translation.complete
