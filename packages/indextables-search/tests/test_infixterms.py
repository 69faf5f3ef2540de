"""Infix and suffix wildcard tokens (``f:*mid*``, ``f:*suf``) answered from the split's
term buffer as term sets, against a Python model of the terms."""

from __future__ import annotations

import random

import pytest

from indextables.search.errors import QuerySyntaxError
from indextables.search.query.termexpand import rewrite_prefix_terms
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.splits.termbuffer import TermBuffer

HOSTILE = ["", "a", "İ", "i\u0307", "e\u0301", "\u00ff", "x" * 255, "日本語", "a\x00b", "zz"]
HOSTILE += ["\u07ff\u0800", "\U0001f600", "ab\u00ffab", "é", "E\u0301"]


def _terms(rng: random.Random) -> list[str]:
    alphabet = ["a", "b", "İ", "\u0307", "é", "\x00", "\U0001f600", "日", "\u00ff"]
    made = {"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(400)}
    return sorted(made | set(HOSTILE), key=lambda t: t.encode())


@pytest.mark.parametrize("seed", range(5))
def test_buffer_matches_python_in(seed: int) -> None:
    rng = random.Random(seed)
    terms = _terms(rng)
    buffer = TermBuffer.of(terms)
    literals = HOSTILE[1:] + [t for t in rng.sample(terms, 20) if t]
    for literal in literals:
        assert buffer.holding(literal, suffix=False, most=10**6) == [
            t for t in terms if literal in t
        ], literal
        assert buffer.holding(literal, suffix=True, most=10**6) == [
            t for t in terms if t.endswith(literal)
        ], literal
        assert len(buffer.holding(literal, suffix=False, most=2)) == min(
            2, sum(literal in t for t in terms)
        )


@pytest.mark.parametrize("seed", range(3))
def test_remembered_answers_equal_fresh_ones(seed: int) -> None:
    """A buffer answers a literal it remembers as when searching it: interleaved,
    repeated, cut short (``most``) and counted queries in random order, against
    Python's ``in``; it remembers a bounded number of literals, never one held by more
    than MAX_REMEMBERED_HITS terms."""
    from indextables.search.splits import termbuffer

    rng = random.Random(seed)
    terms = _terms(rng) + [f"common-{i}" for i in range(termbuffer.MAX_REMEMBERED_HITS + 5)]
    terms = sorted(set(terms), key=lambda t: t.encode())
    frequencies = {t: rng.randint(1, 9) for t in terms}
    buffer = TermBuffer.with_frequencies(frequencies.items())
    literals = HOSTILE[1:] + [t for t in rng.sample(terms, 40) if t] + ["common-", "mmon"]
    for _ in range(600):
        literal = rng.choice(literals)
        suffix = rng.random() < 0.3
        expected = [t for t in terms if (t.endswith(literal) if suffix else literal in t)]
        most = rng.choice([1, 3, 10**6])
        assert buffer.holding(literal, suffix=suffix, most=most) == expected[:most], literal
        assert buffer.frequency_holding(literal, suffix=suffix) == sum(
            frequencies[t] for t in expected
        ), literal
        assert len(buffer._remembered) <= termbuffer.MAX_REMEMBERED
        for (held, _), positions in buffer._remembered.items():
            assert len(positions) <= termbuffer.MAX_REMEMBERED_HITS, held
    assert ("common-", False) not in buffer._remembered
    assert buffer._remembered  # small answers were remembered


_FIELDS = {
    "host": FieldSpec(
        name="host", kind=FieldKind.STRING, tokenizer=None, stored=True, indexed=True, fast=False
    )
}


def _rewrite(text: str, terms: list[str], limit: int = 100) -> str:
    buffer = TermBuffer.of(terms)

    def infix(field: str, literal: str, suffix: bool, most: int) -> list[str]:
        assert field == "host"
        return buffer.holding(literal, suffix=suffix, most=most)

    return rewrite_prefix_terms(text, _FIELDS, None, "query", (), limit, infix)[0]


def test_infix_token_becomes_term_set() -> None:
    terms = ["web-1", "web-2", "db-1", "xweb-10"]
    assert _rewrite("host:*b-1*", terms) == 'host: IN ["db-1" "web-1" "xweb-10"]'
    assert _rewrite("host:*-1", terms) == 'host: IN ["db-1" "web-1"]'
    assert _rewrite("host:*nothing*", terms) == "(* AND -*)"


def test_infix_limit_refuses_naming_term_and_limit() -> None:
    with pytest.raises(QuerySyntaxError, match=r"'host:\*e\*'.*more than 2 terms"):
        _rewrite("host:*e*", ["web-1", "web-2", "web-3"], limit=2)


def _value(rng: random.Random) -> str:
    if rng.random() < 0.05:
        return rng.choice(HOSTILE[1:])
    alphabet = ["a", "b", "-", "1", "é", "\U0001f600", "日", "\u00ff", "x"]
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7)))


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[int, str]]:
    import pyarrow as pa

    from indextables.search import delete_rows, write_table

    rng = random.Random(5)
    uri = str(tmp_path_factory.mktemp("infix") / "t")
    rows: dict[int, str] = {}
    for split in range(3):  # one split a commit
        ids = list(range(split * 200, split * 200 + 200))
        values = [_value(rng) for _ in ids]
        rows.update(zip(ids, values, strict=True))
        write_table(uri, pa.table({"id": ids, "host": values}))
    gone = [i for i in rows if i % 7 == 3]
    delete_rows(uri, where=f"id IN ({', '.join(map(str, gone))})")
    return uri, {i: v for i, v in rows.items() if i % 7 != 3}


@pytest.mark.parametrize(
    "literal", ["b-1", "a", "1", "é", "\U0001f600", "日", "\u00ff", "zzz", "x" * 200]
)
def test_search_infix_and_suffix_against_python(
    table: tuple[str, dict[int, str]], literal: str
) -> None:
    from indextables.search import open_table

    uri, rows = table
    opened = open_table(uri)
    escaped = "".join(c if c.isalnum() else "\\" + c for c in literal)
    for query, keep in (
        (f"host:*{escaped}*", lambda v: literal in v),
        (f"host:*{escaped}", lambda v: v.endswith(literal)),
    ):
        found = sorted(opened.search(query, columns=["id"]).column("id").to_pylist())
        assert found == sorted(i for i, v in rows.items() if keep(v)), query
        assert opened.count(query=query) == len(found), query


def test_contains_regex_clause_becomes_term_set() -> None:
    terms = ["aé1", "xaé", "b"]
    assert _rewrite("host:/[\\s\\S]*a\\x{e9}[\\s\\S]*/", terms) == 'host: IN ["aé1" "xaé"]'
    assert _rewrite("host:/[\\s\\S]*a\\x{e9}/", terms) == 'host: IN ["xaé"]'
    # past the limit the regex stays (a regex clause has no expansion limit)
    kept = "host:/[\\s\\S]*a\\x{e9}[\\s\\S]*/"
    assert _rewrite(kept, terms, limit=1) == kept


@pytest.mark.parametrize("literal", ["b-1", "a", "é", "\U0001f600", "\u00ff", "zzz", "_", "%"])
def test_where_suffix_and_substring_against_python(
    table: tuple[str, dict[int, str]], literal: str
) -> None:
    from indextables.search import open_table

    uri, rows = table
    opened = open_table(uri)
    quoted = literal.replace("'", "''")
    like = quoted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    for where, keep in (
        (f"host LIKE '%{like}%'", lambda v: literal in v),
        (f"host LIKE '%{like}'", lambda v: v.endswith(literal)),
    ):
        found = sorted(opened.search(where=where, columns=["id"]).column("id").to_pylist())
        assert found == sorted(i for i, v in rows.items() if keep(v)), where
        assert opened.count(where=where) == len(found), where


def test_held_terms_query_is_the_terms() -> None:
    import tantivy

    from indextables.search.query.conditions import Condition
    from indextables.search.query.tantivyquery import to_query

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("host", stored=True, tokenizer_name="raw")
    schema = builder.build()
    spec = _FIELDS["host"]
    buffer = TermBuffer.of(["db-1", "web-1", "web-2"])

    def held(field: str, literal: str, suffix: bool, most: int) -> list[str]:
        return buffer.holding(literal, suffix=suffix, most=most)

    query = to_query(
        Condition("like", "host", ("%b-1%",)), spec, schema, fully_indexed={"host"}, held_terms=held
    )
    shown = repr(query)
    assert "Regex" not in shown
    assert "db-1" in shown
    assert "web-1" in shown
    assert "web-2" not in shown
