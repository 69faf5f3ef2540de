"""Phrase-prefix terms ``f:"quick bro"*``, ``f:"bro"*`` and bare ``"quick bro"*``, against a
model of the analyzers (seeded random text), past the 50 terms Tantivy's own phrase prefix
expands to, and bounded by the expansion limit."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import QuerySyntaxError

# Few words (so phrases repeat), 60 sharing the prefix "br" (more than Tantivy's 50),
# case-folding edges (U+0130, sharp s), a combining mark, separators.
WORDS = ["quick", "Quick", "the", "fox", "\u0130stanbul", "stra\u00dfe", "\u00e9t\u00e9", "a1"]
WORDS += [f"br{i:02d}" for i in range(60)] + ["bro", "brown", "BROWN"]
GLUE = [" ", " ", " ", "-", ". ", "\u0301 ", "_"]


def _text(rng: random.Random) -> str:
    if rng.random() < 0.03:
        return "quick " + "b" * 255 + " brown"  # a token over the limit between two words
    parts = []
    for _ in range(rng.randint(0, 8)):
        parts += [rng.choice(WORDS), rng.choice(GLUE)]
    return "".join(parts)


def _lower(text: str) -> str:
    return "".join(c.lower() for c in text)


def positions(text: str | None, whitespace: bool) -> list[str | None]:
    """The analyzer's tokens by position: runs of letters and digits (or of non-space
    characters), lowercased character by character; a token of 255 UTF-8 bytes or more
    is dropped but keeps its position (None)."""
    runs = (text or "").split() if whitespace else re.findall(r"[^\W_]+", text or "")
    return [t if len(t.encode()) < 255 else None for t in (_lower(r) for r in runs)]


def phrase_match(words: list[str], prefix: str, tokens: list[str | None]) -> bool:
    n = len(words)
    for start in range(len(tokens) - n):
        last = tokens[start + n]
        if tokens[start : start + n] == words and last is not None and last.startswith(prefix):
            return True
    return False


Table = tuple[str, list[dict[str, Any]]]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Table:
    rng = random.Random(4545)
    rows = [
        {"id": i, "t": _text(rng), "w": _text(rng), "s": _text(rng).strip()} for i in range(300)
    ]
    uri = str(Path(tmp_path_factory.mktemp("phrases")) / "t")
    options = {
        "spark.indextables.indexing.typemap.t": "text",
        "spark.indextables.indexing.typemap.w": "text",
        "spark.indextables.indexing.tokenizer.w": "whitespace",
    }
    write_table(uri, pa.Table.from_pylist(rows), options=options)
    return uri, rows


def _ids(uri: str, query: str) -> list[int]:
    found = open_table(uri).search(query, columns=["id"])
    return sorted(found.column("id").to_pylist())


def _limited(uri: str, query: str, limit: object) -> list[int]:
    """The rows of ``query`` with the expansion limit set as a read option."""
    table = open_table(uri, options={"spark.indextables.query.maxTermExpansions": str(limit)})
    return sorted(table.search(query, columns=["id"]).column("id").to_pylist())


def _phrase(rng: random.Random, rows: list[dict[str, Any]], key: str, whitespace: bool) -> str:
    """Words cut from a row (so the phrase is found), the last one shortened."""
    tokens = [t for t in positions(rng.choice(rows)[key], whitespace) if t]
    if len(tokens) < 2:
        return rng.choice(["quick br", "the", "br", "qqq zz", "fox b"])
    start = rng.randrange(len(tokens) - 1)
    words = tokens[start : start + rng.randint(1, 3)]
    words[-1] = words[-1][: rng.randint(1, len(words[-1]))]
    return " ".join(w.upper() if rng.random() < 0.2 else w for w in words)


def _model(phrase: str, whitespace: bool) -> tuple[list[str], str] | None:
    tokens = [t for t in positions(phrase, whitespace) if t]
    return (tokens[:-1], tokens[-1]) if tokens else None


@pytest.mark.parametrize("seed", range(3))
def test_phrase_prefixes_match_the_model(table: Table, seed: int) -> None:
    uri, rows = table
    rng = random.Random(seed)
    for _ in range(15):
        for key, whitespace in (("t", False), ("w", True)):
            phrase = _phrase(rng, rows, key, whitespace)
            if '"' in phrase or "\\" in phrase:
                continue
            words, prefix = _model(phrase, whitespace) or ([], "")

            def match(
                row: dict[str, Any],
                k: str = key,
                ws: bool = whitespace,
                model: tuple[list[str], str] = (words, prefix),
            ) -> bool:
                return phrase_match(*model, positions(row[k], ws))

            want = [r["id"] for r in rows if match(r)]
            assert _ids(uri, f'{key}:"{phrase}"*') == want, (key, phrase)
            boosted = rng.choice(["^2", "^0.5"])
            assert _ids(uri, f'{key}:"{phrase}"*{boosted} AND id:[0 TO 99]') == [
                i for i in want if i < 100
            ]
            if key == "t":
                w_words, w_prefix = _model(phrase, True) or ([], "")
                both = [
                    r["id"]
                    for r in rows
                    if match(r) or phrase_match(w_words, w_prefix, positions(r["w"], True))
                ]
                assert _ids(uri, f'"{phrase}"*') == both, phrase


def test_more_terms_than_tantivys_fifty_are_all_expanded(table: Table) -> None:
    uri, rows = table
    for phrase in ["quick br", "the br", "fox br0"]:
        words, prefix = _model(phrase, False) or ([], "")
        want = [r["id"] for r in rows if phrase_match(words, prefix, positions(r["t"], False))]
        assert _ids(uri, f't:"{phrase}"*') == want, phrase


def test_one_word_phrases_exact_fields_and_hostile_words(table: Table) -> None:
    uri, rows = table
    for word in ["BR0", "\u0130stan", "stra\u00df", "qqq", "\u00e9"]:
        prefix = _lower(word)
        want = [
            r["id"]
            for r in rows
            if any(t and t.startswith(prefix) for t in positions(r["t"], False))
        ]
        assert _ids(uri, f't:"{word}"*') == want, word
    for value in ["quick", "Quick br", "the-", "\u0130stanbul "]:
        want = [r["id"] for r in rows if r["s"].startswith(value)]
        assert _ids(uri, f's:"{value}"*') == want, value
    assert _ids(uri, 't:"--"*') == []
    assert _ids(uri, 't:"the \u0130stanbul"*') == [
        r["id"] for r in rows if phrase_match(["the"], "i\u0307stanbul", positions(r["t"], False))
    ]


def test_phrase_prefix_bounded_by_the_limit(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    texts = [f"go w{i:03d}" for i in range(80)]
    data = pa.table({"id": list(range(80)), "t": texts})
    write_table(uri, data, options={"spark.indextables.indexing.typemap.t": "text"})
    assert _ids(uri, 't:"go w"*') == list(range(80))
    assert _ids(uri, 't:"go w0"*^3') == list(range(80))
    with pytest.raises(QuerySyntaxError, match=r"""'t:"go w"\*' stands for more than 70 terms"""):
        _limited(uri, 't:"go w"*', 70)
    with pytest.raises(QuerySyntaxError, match=r"""'t:"w"\*' stands for more than 70 terms"""):
        _limited(uri, 't:"w"*', 70)


def test_phrase_prefix_on_a_stemmed_field_is_refused(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    options = {
        "spark.indextables.indexing.typemap.t": "text",
        "spark.indextables.indexing.tokenizer.t": "en_stem",
    }
    write_table(uri, pa.table({"id": [0], "t": ["running fast"]}), options=options)
    with pytest.raises(QuerySyntaxError, match=r"phrase prefix .* column 't'"):
        _ids(uri, 't:"running fa"*')
