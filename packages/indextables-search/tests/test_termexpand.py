"""Prefix terms ``f:pre*`` in ``query``: on text fields per token through the analyzer's
rules, on exact fields over the whole value (Tantivy's parser alone read ``hel*`` as the
plain term ``hel``; the engine refused it)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import QuerySyntaxError
from indextables.search.query import termexpand

# Letters whose case and alphanumeric class Python and Rust agree on, the case-folding
# edges among them (U+0130 lowercases to two characters, capital sigma to the medial
# sigma wherever it stands), a combining mark (no token character), digits of another
# script, separators.
ALPHABET = [*"abcABCxyzXYZ019", "\u00e9", "\u00c9", "\u0130", "\u0131", "\u03a3", "\u00df"]
ALPHABET += ["\u01c5", "\u0663", "\u65e5", "\u03a9"]
ALPHABET += ["\u0301", " ", " ", "-", ".", "\n", "_"]


def _text(rng: random.Random) -> str:
    if rng.random() < 0.05:
        return "a" * rng.choice([254, 255, 300]) + " ab"  # at and over the token limit
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 14)))


def _tokens(text: str) -> list[str]:
    """The ``default`` analyzer, modelled: runs of letters and digits, each character
    lowercased on its own, tokens of 255 UTF-8 bytes or more dropped."""
    runs: list[str] = []
    current = ""
    for char in text + " ":
        if char.isalnum():
            current += char
        elif current:
            runs.append(current)
            current = ""
    lowered = ["".join(c.lower() for c in run) for run in runs]
    return [t for t in lowered if len(t.encode()) < 255]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str], list[str]]:
    rng = random.Random(11)
    texts = [_text(rng) for _ in range(300)]
    values = [_text(rng) for _ in range(300)]
    uri = str(Path(tmp_path_factory.mktemp("prefix")) / "t")
    data = pa.table({"id": list(range(len(texts))), "t": texts, "s": values})
    write_table(uri, data, options={"spark.indextables.indexing.typemap.t": "text"})
    return uri, texts, values


def _ids(uri: str, query: str) -> list[int]:
    return sorted(open_table(uri).search(query, columns=["id"]).column("id").to_pylist())


def _prefix_of(rng: random.Random, pool: list[str]) -> str:
    word = rng.choice(pool) if pool and rng.random() < 0.8 else _text(rng)
    return word[: rng.randint(1, max(1, len(word)))]


@pytest.mark.parametrize("seed", range(4))
def test_text_prefixes_match_the_analyzer_model(
    table: tuple[str, list[str], list[str]], seed: int
) -> None:
    uri, texts, _ = table
    rng = random.Random(seed)
    words = [run for t in texts for run in "".join(c if c.isalnum() else " " for c in t).split()]
    asked = 0
    for _ in range(40):
        prefix = _prefix_of(rng, words)
        if not prefix or not all(c.isalnum() for c in prefix):
            continue
        prefix = "".join(c.upper() if rng.random() < 0.3 else c for c in prefix)
        lowered = "".join(c.lower() for c in prefix)
        want = [i for i, t in enumerate(texts) if any(k.startswith(lowered) for k in _tokens(t))]
        assert _ids(uri, f"t:{prefix}*") == want, prefix
        asked += 1
    assert asked >= 25


@pytest.mark.parametrize("seed", range(4))
def test_exact_prefixes_match_the_whole_value_case_sensitive(
    table: tuple[str, list[str], list[str]], seed: int
) -> None:
    uri, _, values = table
    rng = random.Random(seed)
    asked = 0
    for _ in range(40):
        prefix = _prefix_of(rng, values)
        if any(c in prefix for c in ' \t\n\r()"*?~\\^[]{}<>/:') or prefix in ("-", "+"):
            continue  # not one token of query text
        if not prefix or prefix[0] in "-+" or prefix in ("AND", "OR", "NOT"):
            continue
        want = [i for i, v in enumerate(values) if v.startswith(prefix)]
        assert _ids(uri, f"s:{prefix}*") == want, prefix
        asked += 1
    assert asked >= 10


def test_prefixes_inside_boolean_structure(table: tuple[str, list[str], list[str]]) -> None:
    uri, texts, values = table

    def has(i: int, prefix: str) -> bool:
        return any(k.startswith(prefix) for k in _tokens(texts[i]))

    rows = range(len(texts))
    assert _ids(uri, "t:a* AND NOT t:b*") == [i for i in rows if has(i, "a") and not has(i, "b")]
    assert _ids(uri, "NOT t:a*") == [i for i in rows if not has(i, "a")]
    assert _ids(uri, "(t:x* OR s:a*)") == [
        i for i in rows if has(i, "x") or values[i].startswith("a")
    ]


def test_forms_not_answered_yet_are_still_refused(table: tuple[str, list[str], list[str]]) -> None:
    uri = table[0]
    for query in ["t:ab~3", 't:a"b*', "t:a~b*"]:
        with pytest.raises(QuerySyntaxError, match="which the index does not support"):
            open_table(uri).search(query)
    for query in ["t:a-b~1", "a-b~2"]:
        with pytest.raises(QuerySyntaxError, match="but a fuzzy term matches one token"):
            open_table(uri).search(query)
    with pytest.raises(QuerySyntaxError, match=r"'t:/h\(/' is not a valid .*Invalid regex"):
        open_table(uri).search("t:/h(/")


def test_a_prefix_standing_for_too_many_terms_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = str(tmp_path / "t")
    words = [f"w{i:03d}" for i in range(20)]
    data = pa.table({"id": list(range(20)), "t": words})
    write_table(uri, data, options={"spark.indextables.indexing.typemap.t": "text"})
    assert _ids(uri, "t:w01*") == list(range(10, 20))
    monkeypatch.setattr(termexpand, "MAX_TERM_EXPANSIONS", 10)
    assert _ids(uri, "t:w01*") == list(range(10, 20))  # ten terms: at the limit
    with pytest.raises(QuerySyntaxError, match=r"'t:w0\*' stands for more than 10 terms"):
        open_table(uri).search("t:w0*")
    with pytest.raises(QuerySyntaxError, match=r"'t:\*1\*' stands for more than 10 terms"):
        open_table(uri).search("t:*1*")  # eleven terms hold a 1
    assert _ids(uri, "t:*01?") == list(range(10, 20))


def test_a_wildcard_pattern_too_complex_for_the_automaton_is_refused(
    table: tuple[str, list[str], list[str]],
) -> None:
    with pytest.raises(QuerySyntaxError, match="a wildcard term is too complex"):
        open_table(table[0]).search("s:" + "a?a*" * 40)


def test_whitespace_analyzer_prefixes_keep_punctuation(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    texts = ["WEB-1 up", "web down", "db-web-2", "Web-2\tok"]
    data = pa.table({"id": list(range(4)), "t": texts})
    options = {
        "spark.indextables.indexing.typemap.t": "text",
        "spark.indextables.indexing.tokenizer.t": "whitespace",
    }
    write_table(uri, data, options=options)
    for prefix in ["web-", "WEB", "db-w", "we"]:
        lowered = prefix.lower()
        want = [
            i for i, t in enumerate(texts) if any(w.lower().startswith(lowered) for w in t.split())
        ]
        assert _ids(uri, f"t:{prefix}*") == want, prefix


def _pattern(rng: random.Random, word: str) -> str:
    """A wildcard pattern over ``word``: characters kept, replaced by ``?`` or cut out
    under a ``*``, and a ``*`` at either end sometimes."""
    out = ""
    for char in word:
        pick = rng.random()
        out += "?" if pick < 0.15 else "*" if pick < 0.25 else "" if pick < 0.3 else char
    out = re.sub(r"\*+", "*", out)
    if rng.random() < 0.3:
        out = "*" + out
    if rng.random() < 0.3:
        out += "*"
    return out if any(c in out for c in "*?") and out != "*" else out + "?"


def _matches(pattern: str, term: str) -> bool:
    """Wildcard matching, modelled by dynamic programming over the two strings."""
    reach = [True] + [False] * len(term)
    for char in pattern:
        if char == "*":
            reach = [any(reach[: i + 1]) for i in range(len(term) + 1)]
        else:
            reach = [False] + [
                reach[i] and (char == "?" or char == term[i]) for i in range(len(term))
            ]
    return reach[-1]


@pytest.mark.parametrize("seed", range(4))
def test_wildcard_patterns_match_the_models(
    table: tuple[str, list[str], list[str]], seed: int
) -> None:
    uri, texts, values = table
    rng = random.Random(100 + seed)
    words = [run for t in texts for run in "".join(c if c.isalnum() else " " for c in t).split()]
    asked = 0
    short = [v for v in values if len(v) <= 20]
    for _ in range(30):
        word = rng.choice([w for w in words if len(w) <= 20])
        pattern = _pattern(rng, word)
        lowered = "".join(c.lower() for c in pattern)
        want = [i for i, t in enumerate(texts) if any(_matches(lowered, k) for k in _tokens(t))]
        assert _ids(uri, f"t:{pattern}") == want, pattern
        pattern = _pattern(rng, rng.choice(short))
        if any(c in pattern for c in ' \t\n\r()"~\\^[]{}<>/:') or pattern[0] in "-+":
            continue
        want = [i for i, v in enumerate(values) if _matches(pattern, v)]
        assert _ids(uri, f"s:{pattern}") == want, pattern
        asked += 1
    assert asked >= 5


def _osa(first: str, second: str) -> int:
    """Optimal string alignment distance, the textbook table (no cut-off)."""
    rows, cols = len(first) + 1, len(second) + 1
    table = [[max(i, j) if i == 0 or j == 0 else 0 for j in range(cols)] for i in range(rows)]
    for i in range(1, rows):
        for j in range(1, cols):
            cost = 0 if first[i - 1] == second[j - 1] else 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and first[i - 1] == second[j - 2] and first[i - 2] == second[j - 1]:
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
    return table[-1][-1]


def _edited(rng: random.Random, word: str, alphabet: list[str]) -> str:
    chars = list(word)
    for _ in range(rng.randint(0, 3)):
        pick, at = rng.random(), rng.randint(0, len(chars))
        if pick < 0.3 and at < len(chars):
            del chars[at]
        elif pick < 0.6:
            chars.insert(at, rng.choice(alphabet))
        elif pick < 0.8 and at < len(chars):
            chars[at] = rng.choice(alphabet)
        elif at + 1 < len(chars):
            chars[at], chars[at + 1] = chars[at + 1], chars[at]
    return "".join(chars)


@pytest.mark.parametrize("seed", range(4))
def test_fuzzy_terms_match_the_edit_distance_model(
    table: tuple[str, list[str], list[str]], seed: int
) -> None:
    uri, texts, values = table
    rng = random.Random(200 + seed)
    letters = [c for c in ALPHABET if c.isalnum()]
    words = [run for t in texts for run in "".join(c if c.isalnum() else " " for c in t).split()]
    asked = 0
    for _ in range(25):
        distance = rng.choice([1, 2])
        term = _edited(rng, rng.choice([w for w in words if len(w) <= 20]), letters)
        if not term:
            continue
        lowered = "".join(c.lower() for c in term)
        want = [
            i for i, t in enumerate(texts) if any(_osa(lowered, k) <= distance for k in _tokens(t))
        ]
        assert _ids(uri, f"t:{term}~{distance}") == want, (term, distance)
        value = _edited(rng, rng.choice([v for v in values if len(v) <= 20]), ALPHABET)
        if not value or any(c in value for c in ' \t\n\r()"*?~\\^[]{}<>/:') or value[0] in "-+":
            continue
        want = [i for i, v in enumerate(values) if _osa(value, v) <= distance]
        assert _ids(uri, f"s:{value}~{distance}") == want, (value, distance)
        asked += 1
    assert asked >= 5


def test_fuzzy_terms_inside_boolean_structure(table: tuple[str, list[str], list[str]]) -> None:
    uri, texts, _ = table

    def near(i: int, term: str) -> bool:
        return any(_osa(term, k) <= 1 for k in _tokens(texts[i]))

    rows = range(len(texts))
    assert _ids(uri, "t:abc~1 AND NOT t:xyz~1") == [
        i for i in rows if near(i, "abc") and not near(i, "xyz")
    ]
    assert _ids(uri, "NOT t:abc~1") == [i for i in rows if not near(i, "abc")]
    assert _ids(uri, "t:qqqqqq~1 OR t:abc~1") == [i for i in rows if near(i, "abc")]


def _random_regex(rng: random.Random, depth: int = 2, stars: list[int] | None = None) -> str:
    """A regex in the dialect Tantivy (Rust's regex syntax) and Python's ``re`` read alike,
    with at most two repeated atoms and none on a group (the model backtracks)."""
    stars = [0] if stars is None else stars
    parts = []
    for _ in range(rng.randint(1, 4)):
        pick = rng.random()
        if pick < 0.8 or not depth:
            atom = rng.choice(["a", "b", "c", "x", "z", "0", "1", ".", "[abc]", "[a-c]", "[0-9]"])
            quantifier = rng.choice(["", "", "?", "*", "+"])
            if quantifier in ("*", "+"):
                if stars[0] >= 2:
                    quantifier = "?"
                stars[0] += 1
            atom += quantifier
        else:
            left = _random_regex(rng, depth - 1, stars)
            atom = f"({left}|{_random_regex(rng, depth - 1, stars)})"
        parts.append(atom)
    return "".join(parts)


@pytest.mark.parametrize("seed", range(4))
def test_regex_terms_match_pythons_re_over_whole_terms(
    table: tuple[str, list[str], list[str]], seed: int
) -> None:
    uri, texts, values = table
    rng = random.Random(300 + seed)
    for _ in range(25):
        regex = _random_regex(rng)
        pattern = re.compile(regex)
        want = [i for i, t in enumerate(texts) if any(pattern.fullmatch(k) for k in _tokens(t))]
        assert _ids(uri, f"t:/{regex}/") == want, regex
        want = [i for i, v in enumerate(values) if pattern.fullmatch(v)]
        assert _ids(uri, f"s:/{regex}/") == want, regex
        both = [i for i in range(len(texts)) if i in set(want) and "a" in _tokens(texts[i])]
        assert _ids(uri, f"s:/{regex}/ AND t:a") == both, regex


@pytest.mark.parametrize("chunk", [1, 3, 7])
def test_fuzzy_terms_are_found_across_dictionary_chunks(
    table: tuple[str, list[str], list[str]], chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The dictionary is handed to the distance kernel in chunks: a term near the asked one
    # in any chunk (first, middle, last, a partial one) is found, in dictionary order.
    from indextables.search.query import fuzzyterms

    monkeypatch.setattr(fuzzyterms, "_CHUNK_TERMS", chunk)
    uri, _, values = table
    rng = random.Random(90 + chunk)
    for _ in range(12):
        value = rng.choice([v for v in values if 0 < len(v) <= 20])
        if any(c in value for c in ' \t\n\r()"*?~\\^[]{}<>/:') or value[0] in "-+":
            continue
        want = [i for i, v in enumerate(values) if _osa(value, v) <= 1]
        assert _ids(uri, f"s:{value}~1") == want, value
    terms = sorted({v for v in values if v})
    near = fuzzyterms._near_terms(iter(terms), terms[0], 2, limit=len(terms))
    assert near == [t for t in terms if _osa(terms[0], t) <= 2]
    assert fuzzyterms._near_terms(iter(terms), terms[0], 2, limit=0) == near[:1]
