"""Counts of one string condition from summed document frequencies, and the term buffer.

A random differential over several splits, some with deleted rows, a list column,
nulls, ``""``, unicode and line breaks: every ``LIKE`` (``%``, ``_``, escapes,
``ESCAPE``), ``startswith``/``endswith``/``contains``, ``=``/IN and ``RLIKE`` count and
search equals DuckDB's answer (``LIKE``, functions, ``=``) or a Python ``re`` model of
Java's ``find`` (``RLIKE``, the model of ``test_rlikeindex``) over the rows left in
memory; the counts of splits without deletes come from the term buffer's
frequencies, those with deletes from Tantivy. Then the buffer itself: its
frequencies against a Python model, a field holding two terms in one document
(never summed but for one ``=`` term), its byte budget, and a split whose terms
cannot be read (a typed error naming it, nothing cached).
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
import tantivy

from indextables.search import delete_rows, open_table, write_table
from indextables.search.aggregate import tablecount, termcount
from indextables.search.errors import SplitReadError
from indextables.search.query.conditions import Condition
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.splitreader import SplitEntry, split_traits
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.splits import termbuffer
from indextables.search.splits.termbuffer import TermBuffer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_rlikeindex as rlike

ALPHABET = ["a", "b", "-", ".", "%", "_", "\\", "\n", "é", "İ", "日", "\U0001f600", "("]
ALPHABET += ["[", "$", "^", "|", "?", "'", " ", "\u0301", "1", "\r", "\u2028"]


def _value(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.16:
        return ""
    return "".join(rng.choices(ALPHABET, k=rng.randrange(1, 6)))


def _part(seed: int, count: int) -> pa.Table:
    rng = random.Random(seed)
    hosts = [_value(rng) for _ in range(count)]
    tags = [
        None if rng.random() < 0.1 else [_value(rng) or "" for _ in range(rng.randrange(0, 3))]
        for _ in range(count)
    ]
    return pa.table(
        {
            "id": pa.array(range(seed * 10_000, seed * 10_000 + count), pa.int64()),
            "host": pa.array(hosts, pa.string()),
            "tags": pa.array(tags, pa.list_(pa.string())),
        }
    )


def _like(rng: random.Random) -> str:
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


def _sql(text: str) -> str:
    """``text`` as a Spark SQL string literal (whose value it is)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


FIXED_LIKES = ["", "%", "%%", "_", "__", "%_%", "a%", "%a", "%a%", "a_", "_a%", "\\%%", "%\\_"]
FIXED_LIKES += ["%\\\\%", "zzz%", "%zzz", "%zzz%", "é%", "%İ", "%日_%", "%\u0301", "\n%", "%\r"]


class _Table:
    """A table of four splits, two with deleted rows, and the rows left in DuckDB."""

    def __init__(self, root: Path, seed: int) -> None:
        self.uri = str(root / f"t{seed}")
        parts = [_part(seed * 10 + k, 90) for k in range(4)]
        for part in parts:
            write_table(self.uri, part)
        data = pa.concat_tables(parts)
        first, second = (p.column("id")[0].as_py() for p in parts[:2])
        rng = random.Random(seed)
        doomed = rng.sample(range(first, first + 90), 25)
        doomed += rng.sample(range(second, second + 90), 9)
        listed = ", ".join(map(str, doomed))
        assert delete_rows(self.uri, where=f"id IN ({listed})").rows_deleted == 34
        deleted = delete_rows(self.uri, where=f"id >= {second} AND id < {second + 30}")
        assert deleted.rows_deleted > 0  # a second delete of a split: its deletes OR-ed
        alive = set(open_table(self.uri).search(columns=["id"]).column("id").to_pylist())
        self.rows = data.filter(pa.array([i in alive for i in data.column("id").to_pylist()]))
        self.table = open_table(self.uri)
        self.db = duckdb.connect()
        self.db.register("rows", self.rows)

    def ids(self, sql: str, params: list[Any]) -> set[int]:
        found = self.db.execute(f"SELECT id FROM rows WHERE {sql}", params).fetchall()
        return {r[0] for r in found}

    def model(self, python: str) -> set[int]:
        compiled = re.compile(python, re.ASCII)
        pairs = zip(self.rows["id"].to_pylist(), self.rows["host"].to_pylist(), strict=True)
        return {i for i, v in pairs if v is not None and compiled.search(v)}

    def check(self, where: str, expected: set[int]) -> None:
        got = self.table.search(where=where, columns=["id"]).column("id").to_pylist()
        assert sorted(got) == sorted(expected), (where, sorted(set(got) ^ expected)[:5])
        assert self.table.count(where=where) == len(expected), where


def _summed_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int | None]]:
    """(split directory, what :func:`termcount.summed_count` answered) of each count."""
    calls: list[tuple[str, int | None]] = []
    original = termcount.summed_count

    def recording(directory: str, *args: Any) -> int | None:
        found = original(directory, *args)
        calls.append((directory, found))
        return found

    monkeypatch.setattr(tablecount, "summed_count", recording)
    return calls


def _check_sources(calls: list[tuple[str, int | None]]) -> None:
    """Splits with deletes never summed; splits without summed every condition asked."""
    assert calls
    for directory, found in calls:
        assert (found is None) == split_traits(directory).deletes, directory
    assert {found is None for _, found in calls} == {True, False}


@pytest.mark.parametrize("seed", [1, 2])
def test_like_and_functions_equal_duckdb_over_splits_with_deletes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    made = _Table(tmp_path, seed)
    calls = _summed_calls(monkeypatch)
    rng = random.Random(seed)
    for pattern in FIXED_LIKES + [_like(rng) for _ in range(50)]:
        made.check(f"host LIKE {_sql(pattern)}", made.ids("host LIKE ? ESCAPE '\\'", [pattern]))
        # The same pattern with another escape character.
        other = pattern.replace("\\", "!") if "!" not in pattern else None
        if other is not None:
            where = f"host LIKE {_sql(other)} ESCAPE '!'"
            made.check(where, made.ids("host LIKE ? ESCAPE '!'", [other]))
    values = sorted({v for v in made.rows["host"].to_pylist() if v is not None})
    operands = ["", "a", "%", "_", "\\", "\n", "zzz", *rng.sample(values, 12)]
    functions = {"startswith": "starts_with", "endswith": "ends_with", "contains": "contains"}
    for spark, duck in functions.items():
        for operand in operands:
            made.check(f"{spark}(host, {_sql(operand)})", made.ids(f"{duck}(host, ?)", [operand]))
    for operand in operands:
        made.check(f"host = {_sql(operand)}", made.ids("host = ?", [operand]))
    for _ in range(10):
        chosen = rng.sample(operands, rng.randrange(1, 5))
        listed = ", ".join(_sql(v) for v in chosen + chosen[:1])  # one twice
        made.check(f"host IN ({listed})", made.ids("list_contains(?, host)", [chosen]))
    _check_sources(calls)


@pytest.mark.parametrize("seed", [3])
def test_rlike_equals_a_java_model_over_splits_with_deletes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    made = _Table(tmp_path, seed)
    calls = _summed_calls(monkeypatch)
    rng = random.Random(seed)
    for java, python in rlike.FIXED + [rlike._pattern(rng) for _ in range(60)]:
        made.check(f"host RLIKE {_sql(java)}", made.model(python))
    _check_sources(calls)


def test_other_counts_go_the_current_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two conditions, a search, a list column: counted by Tantivy, equal to DuckDB."""
    made = _Table(tmp_path, 4)
    calls = _summed_calls(monkeypatch)
    where = "host LIKE 'a%' AND id >= 40020"
    assert made.table.count(where=where) == len(made.ids(where, []))
    assert made.table.count("host:a*") == len(made.ids("starts_with(host, 'a')", []))
    assert {found for _, found in calls} == {None}


# --- the buffer ----------------------------------------------------------------------


def _pairs(rng: random.Random) -> dict[str, int]:
    alphabet = ["a", "b", "İ", "\u0307", "é", "\x00", "\U0001f600", "日", "\U0010ffff"]
    made = {"".join(rng.choices(alphabet, k=rng.randint(0, 5))) for _ in range(300)}
    return {t: rng.randint(1, 9) for t in made}


@pytest.mark.parametrize("seed", range(4))
def test_buffer_frequencies_equal_a_python_model(seed: int) -> None:
    rng = random.Random(seed)
    pairs = _pairs(rng)
    # Given unordered, a term twice: frequencies summed, terms in code point order.
    given = list(pairs.items())
    rng.shuffle(given)
    first = given[0]
    buffer = TermBuffer.with_frequencies([*given, (first[0], 2)])
    model = dict(pairs)
    model[first[0]] += 2
    assert list(buffer.terms) == sorted(model, key=lambda t: t.encode())
    assert buffer.total == sum(model.values())
    probes = ["", "a", "\U0010ffff", "a\U0010ffff", "zz", *rng.sample(sorted(model), 30)]
    probes += [t[: rng.randint(0, len(t))] for t in rng.sample(sorted(model), 30)]
    for probe in probes:
        assert buffer.frequency_of(probe) == model.get(probe, 0), probe
        assert buffer.frequency_with_prefix(probe) == sum(
            f for t, f in model.items() if t.startswith(probe)
        ), probe
        assert buffer.frequency_holding(probe, suffix=False) == sum(
            f for t, f in model.items() if probe in t
        ), probe
        assert buffer.frequency_holding(probe, suffix=True) == sum(
            f for t, f in model.items() if t.endswith(probe)
        ), probe
        pattern = re.compile(re.escape(probe) + ".", re.DOTALL)
        low, high = buffer.prefix_range(probe)
        assert buffer.frequency_matching(pattern, low, high) == sum(
            f for t, f in model.items() if pattern.fullmatch(t)
        ), probe


def _raw_split(directory: Path, docs: list[list[str]]) -> tantivy.Index:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("host", stored=True, tokenizer_name="raw", fast=True)
    builder.add_integer_field("id", stored=True, indexed=True)
    index = tantivy.Index(builder.build(), path=str(directory))
    writer = index.writer(15_000_000, 1)
    for number, values in enumerate(docs):
        doc = tantivy.Document()
        doc.add_integer("id", number)
        for value in values:
            doc.add_text("host", value)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def _summed(directory: Path, index: tantivy.Index, condition: Condition) -> int | None:
    spec = FieldSpec("host", FieldKind.STRING, "raw", stored=True, indexed=True, fast=True)
    searcher = index.searcher()
    return termcount.summed_count(
        str(directory),
        f"identity-{directory.name}",
        index,
        searcher,
        {"host": spec},
        SplitEntry(ref=None),  # type: ignore[arg-type]
        SearchSpec(),
        [condition],
        lambda columns: frozenset(columns),
    )


def test_a_field_holding_two_terms_in_a_document_is_not_summed(tmp_path: Path) -> None:
    many = tmp_path / "many"
    many.mkdir()
    index = _raw_split(many, [["ab", "ac"], ["ab"], [], ["b"]])
    assert _summed(many, index, Condition("prefix", "host", ("a",))) is None
    assert _summed(many, index, Condition("like", "host", ("%",))) is None
    assert _summed(many, index, Condition("in", "host", ("ab", "ac"))) is None
    assert _summed(many, index, Condition("=", "host", ("ab",))) == 2
    assert _summed(many, index, Condition("in", "host", ("ab", "ab"))) == 2
    one = tmp_path / "one"
    one.mkdir()
    index = _raw_split(one, [["ab"], ["ac"], [], ["b"], [""]])
    assert _summed(one, index, Condition("prefix", "host", ("a",))) == 2
    assert _summed(one, index, Condition("like", "host", ("%",))) == 4
    assert _summed(one, index, Condition("like", "host", ("",))) == 1
    assert _summed(one, index, Condition("in", "host", ("ab", "b", "zz"))) == 2
    assert _summed(one, index, Condition("rlike", "host", ("c$",))) == 1
    assert _summed(one, index, Condition("rlike", "host", ("(?i)a",))) is None  # unsupported


def test_buffers_stay_within_the_byte_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    termbuffer.clear_buffers()
    (tmp_path / "meta.json").write_text("{}")
    size = TermBuffer.with_frequencies([("x" * 100, 1)]).size
    monkeypatch.setattr(termbuffer, "BUFFER_BUDGET_BYTES", size * 3)
    for number in range(5):
        termbuffer.cached_buffer(str(tmp_path), f"f{number}", [("x" * 100, number)])
        assert termbuffer.held_bytes() <= size * 3
    assert termbuffer.cached_buffer(str(tmp_path), "f4").total == 4  # the newest is kept
    with pytest.raises(KeyError):
        termbuffer.cached_buffer(str(tmp_path), "f0")
    big = [(f"{n:0100d}", 1) for n in range(10)]  # larger than the budget: not kept
    assert termbuffer.cached_buffer(str(tmp_path), "big", big).total == 10
    with pytest.raises(KeyError):
        termbuffer.cached_buffer(str(tmp_path), "big")
    termbuffer.clear_buffers()
    assert termbuffer.held_bytes() == 0


class _FailingSearcher:
    def terms_with_prefix(self, field: str, prefix: str) -> Iterator[tuple[str, int]]:
        yield ("a", 1)
        raise OSError(5, "Input/output error")


class _FailingIndex:
    def searcher(self) -> _FailingSearcher:
        return _FailingSearcher()


def test_a_split_whose_terms_cannot_be_read_is_a_typed_error_and_caches_nothing(
    tmp_path: Path,
) -> None:
    termbuffer.clear_buffers()
    (tmp_path / "meta.json").write_text("{}")
    with pytest.raises(SplitReadError, match=re.escape(str(tmp_path))) as raised:
        termbuffer.split_buffer(_FailingIndex(), str(tmp_path), "host")
    assert raised.value.entry == str(tmp_path)
    assert termbuffer.held_bytes() == 0
    with pytest.raises(KeyError):
        termbuffer.cached_buffer(str(tmp_path), "host")
    gone = tmp_path / "gone"  # no meta.json: the split directory vanished
    with pytest.raises(SplitReadError, match="gone"):
        termbuffer.split_buffer(_FailingIndex(), str(gone), "host")
