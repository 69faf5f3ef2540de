"""Wildcard, fuzzy and regex terms without a field, spanning several tokens, with escapes
and boosts, against an independent model of the analyzers on hostile text (seeded random),
and on the reference's golden splits."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from goldenfixtures import GOLDEN_NAMES, load_expected

from indextables.search import open_table, write_table
from indextables.search.errors import OptionError, QuerySyntaxError
from indextables.search.query.searchoptions import SearchSpec

# Case-folding edges (U+0130 lowercases to i and a combining dot, capital sigma, sharp s),
# a combining mark (no token character), digits of another script, separators.
ALPHABET = [*"abcABCxyz019", "\u00e9", "\u00c9", "\u0130", "\u0131", "\u03a3", "\u00df"]
ALPHABET += ["\u0663", "\u65e5", "\u0301", " ", " ", "-", ".", "_", "*", "?"]
# Characters a pattern may hold unescaped in query text (besides letters and digits).
SAFE_PUNCTUATION = "-._"


def _text(rng: random.Random) -> str:
    pick = rng.random()
    if pick < 0.04:
        return "a" * rng.choice([254, 255]) + " ab"  # at and over the token limit
    if pick < 0.08:
        return ""
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 14)))


def _lower(text: str) -> str:
    return "".join(c.lower() for c in text)


def default_tokens(text: str | None) -> list[str]:
    """The ``default`` analyzer: runs of letters and digits, each character lowercased on
    its own, tokens of 255 UTF-8 bytes or more dropped."""
    runs = re.findall(r"[^\W_]+", text or "")
    return [t for t in (_lower(r) for r in runs) if len(t.encode()) < 255]


def whitespace_tokens(text: str | None) -> list[str]:
    """The ``whitespace`` analyzer: runs of non-space characters, lowercased the same way."""
    return [t for t in (_lower(r) for r in (text or "").split()) if len(t.encode()) < 255]


def _unescape(pattern: str) -> list[tuple[str, bool]]:
    """(character, whether a wildcard) for each character of a pattern as written."""
    out, escaped = [], False
    for char in pattern:
        if escaped:
            out.append((char, False))
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append((char, char in "*?"))
    return out


def _fits(items: list[tuple[str, bool]], term: str) -> bool:
    """Whether the wildcard items match the whole of ``term`` (dynamic programming)."""
    reach = [True] + [False] * len(term)
    for char, wild in items:
        if wild and char == "*":
            reach = [any(reach[: i + 1]) for i in range(len(term) + 1)]
        else:
            reach = [False] + [
                reach[i] and ((wild and char == "?") or char == term[i]) for i in range(len(term))
            ]
    return reach[-1]


def _pattern_pieces(pattern: str, split: Any) -> list[list[tuple[str, bool]]]:
    """The pattern's tokens: cut at the characters ``split`` names, wildcards kept in the
    token, literal characters lowercased; tokens of ``*`` alone dropped beside others."""
    pieces: list[list[tuple[str, bool]]] = [[]]
    for char, wild in _unescape(pattern):
        if not wild and split(char):
            pieces.append([])
        elif wild:
            pieces[-1].append((char, True))
        else:
            pieces[-1].extend((c, False) for c in char.lower())
    pieces = [p for p in pieces if p]
    meaningful = [p for p in pieces if any(not (w and c == "*") for c, w in p)]
    return meaningful or pieces[:1]


def text_match(pattern: str, tokens: list[str], split: Any) -> bool:
    pieces = _pattern_pieces(pattern, split)
    return bool(pieces) and all(any(_fits(p, t) for t in tokens) for p in pieces)


def _default_split(char: str) -> bool:
    return not (char.isalnum())


Table = tuple[str, list[dict[str, Any]]]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Table:
    rng = random.Random(45)
    rows = [
        {"id": i, "t": _text(rng), "w": _text(rng), "s": _text(rng).strip()} for i in range(240)
    ]
    rows[0]["t"] = None
    uri = str(Path(tmp_path_factory.mktemp("patterns")) / "t")
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


def _mutate(rng: random.Random, word: str, punctuation: str) -> str:
    """A pattern over ``word``: characters kept, upper-cased, replaced by ``?``, cut out
    under a ``*``, escaped wildcards and separators put in, a ``*`` at either end."""
    out = ""
    for char in word:
        pick = rng.random()
        if pick < 0.12:
            out += "?"
        elif pick < 0.22:
            out += "*"
        elif pick < 0.27:
            out += rng.choice(["\\*", "\\?"])
        elif pick < 0.33:
            out += rng.choice(punctuation) if punctuation else char
        elif char in "*?":
            out += "\\" + char
        else:
            out += char.upper() if rng.random() < 0.2 else char
    out = re.sub(r"\*+", "*", out)
    if rng.random() < 0.3:
        out = "*" + out
    if rng.random() < 0.3:
        out += "*"
    return out if re.search(r"(?<!\\)[*?]", out) else out + "?"


def _writable(pattern: str) -> bool:
    """Whether ``pattern`` is one term of query text (no character the grammar reads)."""
    bare = re.sub(r"\\[*?]", "", pattern)
    return (
        bool(bare)
        and not any(c in bare for c in ' \t\n\r()"~\\^[]{}<>/:\u0301')
        and bare[0] not in "-+"
        and bare not in ("*", "AND", "OR", "NOT")
    )


@pytest.mark.parametrize("seed", range(3))
def test_patterns_on_each_analyzer_and_bare_match_the_model(table: Table, seed: int) -> None:
    uri, rows = table
    rng = random.Random(4500 + seed)
    words = [w for r in rows for key in "tws" for w in (r[key] or "").split() if len(w) <= 16]
    asked = 0
    for _ in range(30):
        pattern = _mutate(rng, rng.choice(words), SAFE_PUNCTUATION)
        if not _writable(pattern):
            continue
        boost = rng.choice(["", "", "^2", "^0.5"])

        def on_t(row: dict[str, Any], p: str = pattern) -> bool:
            return text_match(p, default_tokens(row["t"]), _default_split)

        def on_w(row: dict[str, Any], p: str = pattern) -> bool:
            return text_match(p, whitespace_tokens(row["w"]), str.isspace)

        def on_s(row: dict[str, Any], p: str = pattern) -> bool:
            return _fits(_unescape(p), row["s"])

        for query, model in [
            (f"t:{pattern}{boost}", on_t),
            (f"w:{pattern}{boost}", on_w),
            (f"s:{pattern}{boost}", on_s),
            (f"{pattern}{boost}", lambda r, a=on_t, b=on_w: a(r) or b(r)),  # type: ignore[misc]
        ]:
            want = [r["id"] for r in rows if model(r)]
            assert _ids(uri, query) == want, query
        asked += 1
    assert asked >= 20


def test_hand_picked_multi_token_and_escaped_patterns(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    messages = ["GET web-1a ok", "web 17", "web-2 1x", "a*b", "a b", "\u0130stanbul-9"]
    hosts = ["web-1", "a*b", "axb", "a?b", "A?B", "web-10"]
    data = pa.table({"id": list(range(6)), "m": messages, "h": hosts})
    write_table(uri, data, options={"spark.indextables.indexing.typemap.m": "text"})
    assert _ids(uri, "m:web-1*") == [0, 1, 2]  # a token web and a token starting 1
    assert _ids(uri, "web-1?") == [0, 1, 2]
    assert _ids(uri, "m:web-1x?") == []
    assert _ids(uri, "m:a\\*b") == [3, 4]  # the escaped * is a character the tokenizer drops
    assert _ids(uri, "h:a\\*b") == [1]  # a literal * on an exact field
    assert _ids(uri, "h:a\\?b") == [3]
    assert _ids(uri, "h:a?b") == [1, 2, 3]
    assert _ids(uri, "h:web-1*") == [0, 5]
    assert _ids(uri, "m:\u0130stan*") == [5]
    assert _ids(uri, "\u0130STANBUL-?") == [5]
    assert _ids(uri, "m:web-* AND NOT m:1?") == []
    assert _ids(uri, "m:web-* AND NOT m:17") == [0, 2]
    assert _ids(uri, "-m:web-1* AND h:*") == [3, 4, 5]
    assert _ids(uri, "m:wab~1^2") == [0, 1, 2]  # a boosted fuzzy term
    assert _ids(uri, "wab~1^0.5 AND h:web-1*") == [0]


def test_boosted_patterns_score_as_boosted(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    data = pa.table({"id": [0, 1], "m": ["hello there", "help me"]})
    write_table(uri, data, options={"spark.indextables.indexing.typemap.m": "text"})
    plain = open_table(uri).search("hel*", order_by="_score", limit=5, columns=["id"])
    boosted = open_table(uri).search("hel*^3", order_by="_score", limit=5, columns=["id"])
    assert plain.column("_score").to_pylist()[0] > 0
    assert boosted.column("_score").to_pylist() == pytest.approx(
        [3 * s for s in plain.column("_score").to_pylist()]
    )


def _osa(first: str, second: str) -> int:
    rows, cols = len(first) + 1, len(second) + 1
    grid = [[max(i, j) if i == 0 or j == 0 else 0 for j in range(cols)] for i in range(rows)]
    for i in range(1, rows):
        for j in range(1, cols):
            cost = 0 if first[i - 1] == second[j - 1] else 1
            grid[i][j] = min(grid[i - 1][j] + 1, grid[i][j - 1] + 1, grid[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and first[i - 1] == second[j - 2] and first[i - 2] == second[j - 1]:
                grid[i][j] = min(grid[i][j], grid[i - 2][j - 2] + 1)
    return grid[-1][-1]


@pytest.mark.parametrize("seed", range(3))
def test_bare_fuzzy_and_regex_terms_search_the_default_fields(table: Table, seed: int) -> None:
    uri, rows = table
    rng = random.Random(4600 + seed)
    words = [w for r in rows for w in default_tokens(r["t"]) if len(w) <= 12]
    for _ in range(12):
        term = rng.choice(words)
        term = "".join(rng.choice("abcx") if rng.random() < 0.2 else c for c in term)
        if not term.isalnum():
            continue
        distance = rng.choice([1, 2])
        lowered = _lower(term)
        want = [
            r["id"]
            for r in rows
            if any(
                _osa(lowered, k) <= distance
                for k in default_tokens(r["t"]) + whitespace_tokens(r["w"])
            )
        ]
        assert _ids(uri, f"{term}~{distance}") == want, term
    for _ in range(12):
        regex = "".join(
            rng.choice(["a", "b", "x", "1", ".", "[abc]", "\u00e9", ".*", "[0-9]?"])
            for _ in range(rng.randint(1, 4))
        )
        pattern = re.compile(regex)
        want = [
            r["id"]
            for r in rows
            if any(pattern.fullmatch(k) for k in default_tokens(r["t"]) + whitespace_tokens(r["w"]))
        ]
        assert _ids(uri, f"/{regex}/") == want, regex


def test_patterns_matching_every_term_or_none(table: Table) -> None:
    uri, rows = table
    every_t = [r["id"] for r in rows if default_tokens(r["t"])]
    assert _ids(uri, "t:?*") == every_t
    assert _ids(uri, "t:qqqq*") == []
    assert _ids(uri, "s:*") == [r["id"] for r in rows]  # the exists form stays
    assert _ids(uri, "s:?*") == [r["id"] for r in rows if r["s"]]


def test_expansion_limit_is_an_option_naming_the_term(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    words = [f"w{i:03d}" for i in range(20)]
    write_table(
        uri,
        pa.table({"id": list(range(20)), "t": words}),
        options={"spark.indextables.indexing.typemap.t": "text"},
    )
    assert _limited(uri, "w01*", 10) == list(range(10, 20))
    with pytest.raises(QuerySyntaxError, match=r"'w0\*' stands for more than 10 terms"):
        _limited(uri, "w0*", 10)
    with pytest.raises(QuerySyntaxError, match=r"'w001~1' stands for more than 3 terms"):
        _limited(uri, "w001~1", 3)
    assert _limited(uri, "w001~1", 20) == [i for i, w in enumerate(words) if _osa("w001", w) <= 1]
    for bad in ["0", "-1", "ten", "1.5"]:
        with pytest.raises(OptionError, match=r"spark\.indextables\.query\.maxTermExpansions"):
            _limited(uri, "w0*", bad)
    for bad_value in [0, -1, True, 1.5]:
        with pytest.raises(QuerySyntaxError, match="max_term_expansions"):
            SearchSpec(query="w0*", max_term_expansions=bad_value)  # type: ignore[arg-type]


def test_bare_patterns_without_default_fields_are_refused_naming_them(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    write_table(uri, pa.table({"id": [1, 2]}))
    with pytest.raises(QuerySyntaxError, match=r"'hel\*' is a wildcard"):
        open_table(uri).search("hel*")


def test_an_invalid_regex_is_refused_naming_it(table: Table) -> None:
    for query in ["t:/h(/", "/h(/", "s:/[a/"]:
        with pytest.raises(QuerySyntaxError, match=rf"{re.escape(repr(query))} is not a valid "):
            open_table(table[0]).search(query)


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_reference_splits_answer_patterns_on_their_exact_fields(
    name: str, golden_copy: Any
) -> None:
    table = open_table(str(golden_copy(name)))
    expected = load_expected(name)
    rows = expected["rows"]
    partitions = set(expected["metadata"]["partitionColumns"])
    column = next(
        f.name for f in table.schema if pa.types.is_string(f.type) and f.name not in partitions
    )
    values = [r.get(column) for r in rows]
    rng = random.Random(name)
    # Words of the values (a pattern is one term of query text), a * after some.
    pool = [w for v in values if isinstance(v, str) for w in v.split() if _writable(w)]
    asked = 0
    for _ in range(12):
        word = rng.choice(pool)
        pattern = _mutate(rng, word, "") if rng.random() < 0.6 else word[:3] + "*"
        if not _writable(pattern):
            continue
        asked += 1
        want = sorted(
            json_key(r)
            for r, v in zip(rows, values, strict=True)
            if v and _fits(_unescape(pattern), v)
        )
        got = table.search(f"{column}:{pattern}").to_pylist()
        assert sorted(json_key(r) for r in got) == want, pattern
    assert asked >= 4
    near = next((v for v in values if isinstance(v, str) and _writable(v)), pool[0])
    want = sorted(
        json_key(r) for r, v in zip(rows, values, strict=True) if v and _osa(near, v) <= 1
    )
    got = table.search(f"{column}:{near}~1").to_pylist()
    assert sorted(json_key(r) for r in got) == want


def json_key(row: dict[str, Any]) -> str:
    return repr(sorted((k, str(v)) for k, v in row.items()))


def test_a_fuzzy_term_near_a_token_holding_a_wildcard_character(tmp_path: Path) -> None:
    """A whitespace token such as ``a*b`` found near a fuzzy term is matched as itself, not
    as the pattern its ``*`` would spell (which also matched ``axxb``)."""
    uri = str(tmp_path / "t")
    options = {
        "spark.indextables.indexing.typemap.w": "text",
        "spark.indextables.indexing.tokenizer.w": "whitespace",
    }
    data = pa.table({"id": [0, 1, 2], "w": ["a*b", "axxb", "a?b."]})
    write_table(uri, data, options=options)
    assert _ids(uri, "w:aab~1") == [0]
    assert _ids(uri, "w:aab.~1") == [2]
