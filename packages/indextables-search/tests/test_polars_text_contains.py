"""Polars ``str.contains`` on a tokenized (``text``) column searched through the index.

The answer is always Polars' own over the same rows in memory; the search reads only
the rows the term dictionary finds when every split records that its analyzer
dropped no token of the column (the ``tokensKept`` split tag), and every row else.
The tag itself is checked against tantivy-py's analyzers.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest

import indextables.search.read.splitbatches as splitbatches
import indextables.search.searchtable as searchtable
import indextables.search.write.splitwriter as splitwriter
from indextables.search import open_table, write_table
from indextables.search.options import parse_indexing
from indextables.search.polars import scan_indextables
from indextables.search.polarswhere import predicate_text_search
from indextables.search.query.tokenskept import TOKENS_KEPT_TAG, tokens_kept
from indextables.search.read.anysplit import read_any_split
from indextables.search.schema.mapping import field_specs
from indextables.search.schema.tokenizers import analyzer
from indextables.search.write.merge import merge_table
from indextables.search.write.stats import StatsCollector

LIMIT = 40
OPTIONS = {
    "spark.indextables.indexing.typemap.message": "text",
    "spark.indextables.indexing.typemap.words": "text",
    "spark.indextables.indexing.tokenizer.words": "whitespace",
    "spark.indextables.indexing.tokenlength.message": str(LIMIT),
    "spark.indextables.indexing.tokenlength.words": str(LIMIT),
}
COLUMNS = ("message", "words")

# Pieces of hostile text: case-folding edges (dotted I, sigmas, sharp s, Kelvin sign,
# characters whose lowercase is longer in UTF-8), combining marks (one alphanumeric,
# one not), scripts, digits, punctuation, ASCII and other whitespace.
PIECES = (
    "dead", "Lock", "DEADLOCK", "deadlock", "İ", "i̇", "I", "\u0131", "Σ", "\u03c3", "ς", "ΣΑΣ",
    "ß", "ẞ", "SS", "Ⱥ", "ⱥ", "K", "k", "é", "e\u0301", "\u0345", "ᾼ", "日本", "😀",
    "42", "x_y", "a.b", "-", ",", ":", "/", "(", ")", "'", '"', "%", "_", "\\", "*",
    " ", "  ", "\t", "\n", "\x0b", "\r", "\x0c", "\u00a0", "\u3000",
)  # fmt: skip
# Tokens near and over the limit once lowercased (13 dotted I: 39 bytes, 14: 42).
LONG = ("İ" * 13, "z" * 39, "Σ" * 19, "İ" * 14, "z" * 45, "Ⱥ" * 27, "y" * 300)


def value(rng: random.Random, *, long: bool) -> str | None:
    roll = rng.random()
    if roll < 0.08:
        return None
    if roll < 0.14:
        return ""
    parts = [rng.choice(PIECES) for _ in range(rng.randint(1, 9))]
    if long and rng.random() < 0.3:
        parts.insert(rng.randint(0, len(parts)), rng.choice(LONG))
        return "".join(parts)
    if rng.random() < 0.2:  # a token just under the limit, whole
        parts.insert(rng.randint(0, len(parts)), f" {rng.choice(LONG[:3])} ")
    # A space after every third piece: no run between spaces reaches the limit.
    return "".join(f" {p}" if i and i % 3 == 0 else p for i, p in enumerate(parts))


def rows(rng: random.Random, start: int, count: int, *, long: bool) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + count), pa.int64()),
            "message": pa.array([value(rng, long=long) for _ in range(count)], pa.string()),
            "words": pa.array([value(rng, long=long) for _ in range(count)], pa.string()),
        }
    )


def needles(rng: random.Random, data: pa.Table, count: int) -> Iterator[str]:
    texts = [t for c in COLUMNS for t in data.column(c).to_pylist() if t]
    for _ in range(count):
        roll = rng.random()
        if roll < 0.55:
            text = rng.choice(texts)
            start = rng.randrange(len(text))
            needle = text[start : start + rng.randint(1, 14)]
        elif roll < 0.8:
            needle = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 3)))
        else:
            needle = "".join(rng.choice(string.ascii_letters + " -.") for _ in range(3))
        change = rng.random()
        if change < 0.15:
            needle = needle.upper()
        elif change < 0.3:
            needle = needle.lower()
        elif change < 0.4:
            needle = needle.swapcase()
        yield needle


def build(tmp_path: Path, name: str, parts: list[pa.Table]) -> str:
    uri = str(tmp_path / name)
    for part in parts:
        write_table(uri, part, options=OPTIONS)
    return uri


def searches(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The ``textsearch`` of every scan the Polars source makes."""
    seen: list[Any] = []
    original = searchtable.SearchTable.scan

    def scan(table: Any, query: Any = None, **kwargs: Any) -> Any:
        seen.append(kwargs.get("textsearch"))
        return original(table, query, **kwargs)

    monkeypatch.setattr(searchtable.SearchTable, "scan", scan)
    return seen


def rows_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows each split read yields (before the exact ``where`` filter)."""
    counts: list[int] = []
    original = read_any_split

    def counted(*args: Any, **kwargs: Any) -> Iterator[pa.RecordBatch]:
        for batch in original(*args, **kwargs):
            counts.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(splitbatches, "read_any_split", counted)
    return counts


def check_needles(
    uri: str, memory: pl.DataFrame, rng: random.Random, count: int, seen: list[Any]
) -> int:
    """Every needle answers as Polars does in memory; how many scans searched the index."""
    table = open_table(uri)
    pushed = 0
    for needle in needles(rng, memory.to_arrow(), count):
        column = rng.choice(COLUMNS)
        plain = not any(c in needle for c in "\\.^$|?*+()[]{}#&~-") and not any(
            c.isspace() for c in needle
        )
        literal = not plain or rng.random() < 0.5
        expr = pl.col(column).str.contains(needle, literal=literal)
        if rng.random() < 0.3:
            expr = expr & (pl.col("id") % 3 != 1)
        want = sorted(memory.filter(expr)["id"].to_list())
        seen.clear()
        got = scan_indextables(table).filter(expr).select("id").collect()
        assert sorted(got["id"].to_list()) == want, (needle, column, literal)
        pushed += any(seen)
    return pushed


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_contains_on_text_answers_as_polars_through_the_index(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    parts = [rows(rng, 0, 120, long=False), rows(rng, 120, 120, long=False)]
    uri = build(tmp_path, "kept", parts)
    memory = pl.from_arrow(pa.concat_tables(parts))
    assert isinstance(memory, pl.DataFrame)
    table = open_table(uri)
    for split in table._view.splits:
        assert tokens_kept(split.entry.split_tags) == {
            "message": f"default_limit_{LIMIT}",
            "words": f"whitespace_limit_{LIMIT}",
        }
    seen = searches(monkeypatch)
    pushed = check_needles(uri, memory, rng, 150, seen)
    assert pushed >= 100, pushed  # most needles hold a token character: searched
    merge_table(uri)
    (merged,) = open_table(uri)._view.splits
    assert tokens_kept(merged.entry.split_tags)  # the merged split keeps the fact
    assert check_needles(uri, memory, rng, 60, seen) >= 40


@pytest.mark.parametrize("seed", [4, 5])
def test_dropped_tokens_leave_the_column_unsearched_and_the_answer_exact(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    parts = [rows(rng, 0, 120, long=False), rows(rng, 120, 120, long=True)]
    uri = build(tmp_path, "dropped", parts)
    memory = pl.from_arrow(pa.concat_tables(parts))
    assert isinstance(memory, pl.DataFrame)
    first, second = open_table(uri)._view.splits
    assert set(tokens_kept(first.entry.split_tags)) == set(COLUMNS)
    assert not tokens_kept(second.entry.split_tags)  # a long token in each column
    seen = searches(monkeypatch)
    assert check_needles(uri, memory, rng, 150, seen) == 0


def needle_rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "message": [f"req {i} {'Needlezz' if i % 10 == 0 else 'ok'}-x" for i in ids],
            "words": [f"w{i}" for i in ids],
        }
    )


def test_the_search_reads_only_the_rows_the_index_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = build(tmp_path, "t", [needle_rows(0, 100), needle_rows(100, 100)])
    seen, counts = searches(monkeypatch), rows_read(monkeypatch)
    expr = pl.col("message").str.contains("edlez")
    got = scan_indextables(uri).filter(expr).select("id").collect()
    assert sorted(got["id"].to_list()) == list(range(0, 200, 10))
    assert seen == [{"message": "message:/[\\s\\S]*edlez[\\s\\S]*/"}]
    assert sum(counts) == 20
    seen.clear()
    counts.clear()
    spanning = pl.col("message").str.contains("0 Needlezz-", literal=True)
    got = scan_indextables(uri).filter(spanning & (pl.col("id") > 50)).collect()
    assert sorted(got["id"].to_list()) == list(range(60, 200, 10))
    (search,) = seen
    assert search == {"message": "message:/[\\s\\S]*0/ AND message:/needlezz/"}
    assert sum(counts) <= 20  # the rows with both terms (the id bound narrows further)


def test_splits_without_the_fact_are_read_whole_and_answer_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = build(tmp_path, "t", [needle_rows(0, 100)])
    original = splitwriter._split_tags

    def older(stats: StatsCollector) -> tuple[str, ...] | None:
        tags = tuple(t for t in original(stats) or () if not t.startswith(TOKENS_KEPT_TAG))
        return tags or None

    with monkeypatch.context() as patch:  # a split as older writers left it: no fact
        patch.setattr(splitwriter, "_split_tags", older)
        write_table(uri, needle_rows(100, 100), options=OPTIONS)
    splits = open_table(uri)._view.splits
    assert [bool(tokens_kept(s.entry.split_tags)) for s in splits] == [True, False]
    seen, counts = searches(monkeypatch), rows_read(monkeypatch)
    got = scan_indextables(uri).filter(pl.col("message").str.contains("Needle")).collect()
    assert sorted(got["id"].to_list()) == list(range(0, 200, 10))
    assert seen == [None]
    assert sum(counts) == 200


def test_only_contains_of_a_literal_on_kept_text_columns_is_searched() -> None:
    schema = pa.schema([("message", pa.string()), ("other", pa.string()), ("n", pa.int64())])
    kept = {"message": "default", "other": "raw"}

    def search(expr: pl.Expr) -> dict[str, str]:
        return predicate_text_search(expr, schema, kept)

    contains = pl.col("message").str.contains
    assert search(contains("a.b", literal=True)) == {
        "message": "message:/[\\s\\S]*a/ AND message:/b[\\s\\S]*/"
    }
    assert search(contains("ΣΑΣ")) == {
        "message": "message:/[\\s\\S]*\\x{3c3}\\x{3b1}\\x{3c3}[\\s\\S]*/"
    }
    assert search(contains("İx")) == {"message": "message:/[\\s\\S]*i\\x{307}x[\\s\\S]*/"}
    both = contains("ab") & (pl.col("n") > 1) & contains(" cd ", literal=True)
    assert search(both) == {"message": "message:/[\\s\\S]*ab[\\s\\S]*/ AND message:/cd/"}
    assert search(contains("a.b")) == {}  # a regex
    assert search(contains(" - ", literal=True)) == {}  # no token character
    assert search(contains("")) == {}
    assert search(~contains("ab")) == {}
    assert search(contains("ab") | (pl.col("n") > 1)) == {}
    assert search(pl.col("other").str.contains("ab")) == {}  # raw: LIKE searches it
    assert search(pl.col("message").str.starts_with("ab")) == {}
    long = "q" * 100
    assert search(contains(f"x {long}", literal=True)) == {
        "message": f"message:/[\\s\\S]*x/ AND message:/{'q' * 64}[\\s\\S]*/"
    }


@pytest.mark.parametrize("tokenizer", ["default", "whitespace"])
@pytest.mark.parametrize("seed", [6, 7])
def test_the_tag_says_exactly_whether_tantivy_drops_a_token(tokenizer: str, seed: int) -> None:
    """Per value, the fact against tantivy-py's own analyzer (the token count at the limit
    and without it)."""
    rng = random.Random(seed)
    options = {
        "spark.indextables.indexing.typemap.message": "text",
        "spark.indextables.indexing.tokenizer.message": tokenizer,
        "spark.indextables.indexing.tokenlength.message": str(LIMIT),
    }
    texts = [value(rng, long=True) for _ in range(300)]
    texts += ["İ" * 13, "İ" * 14, "Ⱥ" * 13, "Ⱥ" * 14, "a-" + "b" * 60, "x" * 39, "x" * 40]
    specs = tuple(field_specs(pa.schema([("message", pa.string())]), parse_indexing(options)))
    limited, whole = analyzer(tokenizer, LIMIT), analyzer(tokenizer, 65531)
    for text in texts:
        stats = StatsCollector(specs)
        stats.add(pa.record_batch([pa.array([text], pa.string())], names=["message"]))
        dropped = text is not None and len(limited.analyze(text)) < len(whole.analyze(text))
        assert bool(stats.tokens_kept()) is not dropped, text
