"""The parse cache (query/parsecache.py): one Tantivy parse per (schema, text) within and
across reads, answers equal to a plain Python model and to uncached parses, and a key that
separates every schema difference the parse depends on."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy

from indextables.search import open_table, write_table
from indextables.search.polars import _coalesced
from indextables.search.query import parsecache
from indextables.search.query.parsecache import parse_text
from indextables.search.schema.mapping import FieldKind, FieldSpec, create_index
from indextables.search.splits.nearterms import remember_directory

OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}
WORDS = ("alpha", "alps", "beta", "bet", "gamma", "gam", "delta", "omega", "zeta", "helium")
HOSTS = ("web-1", "web-2", "db-1", "Cache-9")
SPLITS = 4


def _rows(rng: random.Random, start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    messages = [
        " ".join(
            rng.choice(WORDS).upper() if rng.random() < 0.2 else rng.choice(WORDS)
            for _ in range(rng.randint(1, 5))
        )
        for _ in ids
    ]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "host": [rng.choice(HOSTS) for _ in ids],
            "message": messages,
        }
    )


def _table(tmp_path: Path, seed: int) -> tuple[str, pa.Table]:
    rng = random.Random(seed)
    uri = str(tmp_path / f"t{seed}")
    parts = [_rows(rng, n * 40, 40) for n in range(SPLITS)]
    for n, part in enumerate(parts):
        write_table(uri, part, mode="append" if n else "overwrite", options=OPTIONS)
    assert len(open_table(uri).files) == SPLITS
    return uri, pa.concat_tables(parts)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str | None, str]]:
    """Every Tantivy parse of the search options: (schema key or None, text)."""
    parsecache.clear()
    seen: list[tuple[str | None, str]] = []
    real = parsecache.tantivy_parse

    def counted(index: Any, text: str, defaults: Any, regexes: bool) -> Any:
        seen.append((parsecache._schema_key(index), text))
        return real(index, text, defaults, regexes)

    monkeypatch.setattr(parsecache, "tantivy_parse", counted)
    return seen


def _ids(uri: str, query: str) -> list[int]:
    got = open_table(uri).scan(query, columns=["id"]).read_all()
    return sorted(got.column("id").to_pylist())


# --- a plain model of the queries used: the default analyzer on ASCII words lowercases
# and splits on non-alphanumerics; host is exact (the whole value, case kept).


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in re.findall(r"[A-Za-z0-9]+", text)]


def _model(data: pa.Table, clause: tuple[str, str, str]) -> set[int]:
    kind, column, value = clause
    out = set()
    for row in data.to_pylist():
        values = [row["host"]] if column == "host" else _tokens(row["message"])
        if (
            (kind == "term" and value in values)
            or (kind == "prefix" and any(v.startswith(value) for v in values))
            or (kind == "infix" and any(value in v for v in values))
        ):
            out.add(row["id"])
    return out


def _clause_text(clause: tuple[str, str, str]) -> str:
    kind, column, value = clause
    if kind == "term":
        return f'{column}:"{value}"' if column == "host" else f"{column}:{value}"
    if kind == "prefix":
        return f"{column}:{value}*"
    return f"{column}:*{value}*"


def _random_clause(rng: random.Random) -> tuple[str, str, str]:
    kind = rng.choice(("term", "prefix", "infix"))
    if rng.random() < 0.3:
        host = rng.choice(HOSTS)
        return (kind, "host", host if kind == "term" else host[: rng.randint(1, 3)])
    word = rng.choice((*WORDS, "nothing"))
    if kind == "term":
        return (kind, "message", word)
    if kind == "prefix":
        return (kind, "message", word[: rng.randint(1, 3)])
    start = rng.randint(0, len(word) - 2)
    return (kind, "message", word[start : start + 2])


def test_splits_of_one_schema_parse_each_text_once(
    tmp_path: Path, parses: list[tuple[str | None, str]]
) -> None:
    uri, _ = _table(tmp_path, 1)
    for query in ("message:alp*", "message:beta AND NOT message:gamma", "host:db-*"):
        parses.clear()
        _ids(uri, query)
        on_splits = [p for p in parses if p[0] is not None]
        assert len(on_splits) == len(parses)  # every index parsed on is one opened here
        assert len(set(on_splits)) == len(on_splits), "a (schema, text) parsed twice"
        # One schema for the validation index and one shared by the four splits.
        assert len({p[0] for p in parses}) == 2
        # The same read again parses nothing.
        parses.clear()
        _ids(uri, query)
        assert parses == []


def test_without_the_cache_every_split_parses(
    tmp_path: Path, parses: list[tuple[str | None, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counting test above can fail: with no index taken as opened here, each of the
    four splits parses the text again."""
    uri, _ = _table(tmp_path, 2)
    monkeypatch.setattr(parsecache, "opened_here", lambda index: False)
    _ids(uri, "message:alp*")
    texts = Counter(text for _, text in parses)
    assert max(texts.values()) >= SPLITS + 1  # validation + every split


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_answers_equal_the_model_and_the_uncached_parse(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri, data = _table(tmp_path, seed)
    rng = random.Random(seed * 101)
    cases = []
    for _ in range(25):
        first, second = _random_clause(rng), _random_clause(rng)
        op = rng.choice(("AND", "OR", "AND NOT", None))
        if op is None:
            cases.append((_clause_text(first), _model(data, first)))
            continue
        left, right = _model(data, first), _model(data, second)
        want = {"AND": left & right, "OR": left | right, "AND NOT": left - right}[op]
        cases.append((f"{_clause_text(first)} {op} {_clause_text(second)}", want))
    parsecache.clear()
    cached = [(_ids(uri, q), _ids(uri, q)) for q, _ in cases]
    for (query, want), (cold, warm) in zip(cases, cached, strict=True):
        assert cold == sorted(want), query
        assert warm == cold, query
    monkeypatch.setattr(parsecache, "opened_here", lambda index: False)
    for (query, _), (cold, _warm) in zip(cases, cached, strict=True):
        assert _ids(uri, query) == cold, query


def _opened(tmp_path: Path, name: str, specs: list[FieldSpec]) -> tantivy.Index:
    directory = tmp_path / name
    directory.mkdir()
    index = create_index(specs, str(directory))
    remember_directory(index, str(directory))
    return index


def _text(name: str, length: int = 255) -> FieldSpec:
    return FieldSpec(name, FieldKind.TEXT, "default", True, True, False, token_length=length)


def _exact(name: str) -> FieldSpec:
    return FieldSpec(name, FieldKind.STRING, "raw", True, True, False)


def test_field_order_is_part_of_the_key(tmp_path: Path) -> None:
    parsecache.clear()
    ab = _opened(tmp_path, "ab", [_text("a"), _text("b")])
    ba = _opened(tmp_path, "ba", [_text("b"), _text("a")])
    on_ab = parse_text(ab, "b:word", ["a"])
    on_ba = parse_text(ba, "b:word", ["a"])
    assert "field=1," in on_ab.shape
    assert "field=0," not in on_ab.shape
    assert "field=0," in on_ba.shape
    assert "field=1," not in on_ba.shape
    assert parse_text(ab, "b:word", ["a"]) is on_ab  # kept


def test_tokenizer_limits_and_kinds_are_part_of_the_key(tmp_path: Path) -> None:
    parsecache.clear()
    long_word = "abcdefghijkl"
    wide = _opened(tmp_path, "wide", [_text("m")])
    narrow = _opened(tmp_path, "narrow", [_text("m", 5)])
    exact = _opened(tmp_path, "exact", [_exact("m")])
    assert "abcdefghijkl" in parse_text(wide, f"m:{long_word.upper()}", ["m"]).shape
    assert parse_text(narrow, f"m:{long_word.upper()}", ["m"]).shape == "Query(EmptyQuery)"
    assert "ABCDEFGHIJKL" in parse_text(exact, f"m:{long_word.upper()}", ["m"]).shape


def test_defaults_and_regexes_are_part_of_the_key(tmp_path: Path) -> None:
    parsecache.clear()
    index = _opened(tmp_path, "two", [_text("a"), _text("b")])
    on_a = parse_text(index, "word", ["a"])
    on_b = parse_text(index, "word", ["b"])
    assert "field=0," in on_a.shape
    assert "field=1," in on_b.shape
    with pytest.raises(ValueError):
        parse_text(index, "a:/wo.d/", ["a"])
    assert "Regex" in parse_text(index, "a:/wo.d/", ["a"], regexes=True).shape
    with pytest.raises(ValueError):  # a refusal is never kept, nor an allowed parse reused
        parse_text(index, "a:/wo.d/", ["a"])


def test_indexes_not_opened_here_are_parsed_every_time(
    parses: list[tuple[str | None, str]],
) -> None:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("a", stored=True)
    index = tantivy.Index(builder.build())
    first = parse_text(index, "a:word", ["a"])
    second = parse_text(index, "a:word", ["a"])
    assert first is not second
    assert first.shape == second.shape
    assert len(parses) == 2


def test_the_cache_is_bounded(tmp_path: Path) -> None:
    parsecache.clear()
    index = _opened(tmp_path, "bound", [_text("a")])
    for n in range(parsecache.KEPT + 40):
        parse_text(index, f"a:w{n}", ["a"])
    assert len(parsecache._PARSED) == parsecache.KEPT


@pytest.mark.parametrize("seed", range(6))
def test_coalesced_batches_keep_rows_and_order(seed: int) -> None:
    rng = random.Random(seed)
    schema = pa.schema([("x", pa.int64())])
    sizes = [rng.choice((0, 1, 3, 50, 200, 1000)) for _ in range(rng.randint(0, 30))]
    batches, start = [], 0
    for size in sizes:
        batches.append(pa.record_batch([pa.array(range(start, start + size))], schema=schema))
        start += size
    limit = rng.choice((1, 64, 500, 5000))
    chunks = list(_coalesced(iter(batches), limit))
    got = [v for chunk in chunks for v in chunk.column("x").to_pylist()]
    assert got == list(range(start))
    assert all(chunk.num_rows for chunk in chunks)
    assert all(chunk.num_rows >= limit for chunk in chunks[:-1])
    for chunk in chunks:  # joined only while under the limit: its last batch made it reach
        lengths = [len(c) for c in chunk.column("x").chunks]
        assert sum(lengths[:-1]) < limit
