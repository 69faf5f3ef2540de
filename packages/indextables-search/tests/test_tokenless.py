"""A clause whose text yields no token matches nothing, wherever it stands (Tantivy's
parser dropped it: ``b:false AND t:"!!"`` returned every ``b:false`` row)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import QuerySyntaxError
from indextables.search.query.tokenless import NOTHING, nothing_for_tokenless

WORDS = ["alpha", "beta", "gamma"]
ROWS = [
    (" ".join(w for i, w in enumerate(WORDS) if mask >> i & 1), flag)
    for mask in range(8)
    for flag in (False, True)
]
# Clauses whose text the `default` analyzer turns into no token (255 bytes or more is too
# long a token; letters and digits are the only token characters).
TOKENLESS = ['t:"!!"', 't:"-"', 't:""', "t:" + "z" * 300, 't:"' + "y" * 255 + '"', "t:!!"]
TOKENLESS += ['t:"!! ??"', 't:"-"^2', 't:"!!"~1', '"-"']

Row = tuple[set[str], bool]
Keeps = Callable[[Row], bool]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = str(Path(tmp_path_factory.mktemp("tokenless")) / "t")
    data = pa.table(
        {
            "id": list(range(len(ROWS))),
            "t": [text for text, _ in ROWS],
            "b": [flag for _, flag in ROWS],
        }
    )
    write_table(uri, data, options={"spark.indextables.indexing.typemap.t": "text"})
    return uri


def _ids(uri: str, query: str | None = None, **options: object) -> set[int]:
    found = open_table(uri).search(query, columns=["id"], **options)  # type: ignore[arg-type]
    return set(found.column("id").to_pylist())


def _want(keeps: Keeps) -> set[int]:
    return {i for i, (text, flag) in enumerate(ROWS) if keeps((set(text.split()), flag))}


@pytest.mark.parametrize(
    ("query", "keeps"),
    [
        ('b:false AND t:"!!"', lambda r: False),
        ('t:alpha AND t:"-"', lambda r: False),
        ("+b:false +t:" + "z" * 300, lambda r: False),
        ('b:false && t:""', lambda r: False),
        ('b:false OR t:"!!"', lambda r: not r[1]),
        ('b:false || t:"-"', lambda r: not r[1]),
        ('NOT t:"!!"', lambda r: True),
        ('b:false AND NOT t:"!!"', lambda r: not r[1]),
        ('b:false AND -t:"!!"', lambda r: not r[1]),
        ('-t:"!!"', lambda r: True),
        ('b:false t:"!!"', lambda r: not r[1]),
        ('+b:false t:"!!"', lambda r: not r[1]),
        ('(t:alpha OR t:"-") AND b:true', lambda r: "alpha" in r[0] and r[1]),
    ],
)
def test_a_tokenless_clause_matches_nothing(table: str, query: str, keeps: Keeps) -> None:
    assert _ids(table, query) == _want(keeps)
    assert open_table(table).count(query) == len(_want(keeps))


def test_textsearch_and_fieldmatch_with_a_tokenless_clause(table: str) -> None:
    assert _ids(table, textsearch={"t": 'alpha AND "!!"'}) == set()
    assert _ids(table, textsearch={"t": 'alpha OR "!!"'}) == _want(lambda r: "alpha" in r[0])
    assert _ids(table, textsearch={"t": 'alpha AND NOT "-"'}) == _want(lambda r: "alpha" in r[0])
    assert _ids(table, "b:false", textsearch={"t": '"!!"'}) == set()


def _clause(rng: random.Random) -> tuple[str, Keeps]:
    if rng.random() < 0.45:
        return rng.choice(TOKENLESS), lambda r: False
    if rng.random() < 0.3:
        flag = rng.random() < 0.5
        return f"b:{str(flag).lower()}", lambda r, flag=flag: r[1] is flag
    word = rng.choice(WORDS)
    return f"t:{word}", lambda r, word=word: word in r[0]


def _juxtaposed(parts: list[tuple[str, str, Keeps]]) -> Keeps:
    """Tantivy's juxtaposed clauses: every ``+`` one, none of the ``-`` ones, and at least
    one plain one when there is no ``+``."""
    musts = [k for sign, _, k in parts if sign == "+"]
    nots = [k for sign, _, k in parts if sign == "-"]
    shoulds = [k for sign, _, k in parts if sign == ""]

    def keeps(row: Row) -> bool:
        if any(k(row) for k in nots) or not all(k(row) for k in musts):
            return False
        return bool(musts) or any(k(row) for k in shoulds)

    return keeps


def _expression(rng: random.Random, depth: int) -> tuple[str, Keeps]:
    """Random query text over tokenless and normal clauses, and its reader's meaning."""
    pick = rng.random() if depth else 0.0
    if pick < 0.3:
        return _clause(rng)
    if pick < 0.45:
        text, keeps = _expression(rng, depth - 1)
        return f"NOT ({text})", lambda r: not keeps(r)
    if pick < 0.6:
        parts: list[tuple[str, str, Keeps]] = []
        for index in range(rng.randint(2, 3)):
            text, keeps = _expression(rng, depth - 1)
            sign = "" if index == 0 else rng.choice(["", "+", "-"])
            parts.append((sign, f"({text})", keeps))
        if all(sign == "" for sign, _, _ in parts[1:]) and rng.random() < 0.5:
            parts[0] = ("+", *parts[0][1:])
        return " ".join(sign + text for sign, text, _ in parts), _juxtaposed(parts)
    (left, lk), (right, rk) = _expression(rng, depth - 1), _expression(rng, depth - 1)
    if rng.random() < 0.5:
        word = rng.choice(["AND", "&&"])
        if rng.random() < 0.3:
            return f"({left}) {word} -({right})", lambda r: lk(r) and not rk(r)
        return f"({left}) {word} ({right})", lambda r: lk(r) and rk(r)
    word = rng.choice(["OR", "||"])
    return f"({left}) {word} ({right})", lambda r: lk(r) or rk(r)


@pytest.mark.parametrize("seed", range(6))
def test_random_queries_with_tokenless_clauses_match_the_model(table: str, seed: int) -> None:
    rng = random.Random(seed)
    answered = 0
    for _ in range(40):
        query, keeps = _expression(rng, 3)
        try:
            got = _ids(table, query)
        except QuerySyntaxError:
            continue  # an exclusion standing alone in a group (refused, tested elsewhere)
        assert got == _want(keeps), query
        answered += 1
    assert answered >= 30


def test_only_tokenless_clauses_are_replaced() -> None:
    empty = {'t:"!!"', "t:" + "z" * 300}
    asked: list[str] = []

    def is_empty(clause: str) -> bool:
        asked.append(clause)
        return clause in empty

    text = 'b:false AND -t:"!!"^2 OR (t:alpha t:' + "z" * 300 + ") f:[a TO b] f:* t:beta"
    got = nothing_for_tokenless(text, is_empty, 255)
    assert got == f"b:false AND -{NOTHING} OR (t:alpha {NOTHING}) f:[a TO b] f:* t:beta"
    assert asked == ['t:"!!"', "t:" + "z" * 300]  # short clauses with a letter: not parsed


def test_a_shorter_token_limit_makes_shorter_terms_tokenless(tmp_path: Path) -> None:
    # With the `legacy` limit, a token of 40 bytes or more is dropped.
    uri = str(tmp_path / "t")
    words = ["a" * 39, "b" * 40]
    data = pa.table({"id": [0, 1], "t": words, "b": [False, False]})
    options = {
        "spark.indextables.indexing.typemap.t": "text",
        "spark.indextables.indexing.text.maxTokenLength": "legacy",
    }
    write_table(uri, data, options=options)
    assert _ids(uri, f"b:false AND t:{words[0]}") == {0}
    assert _ids(uri, f"b:false AND t:{words[1]}") == set()  # Tantivy alone: both rows
    assert _ids(uri, f"b:false AND NOT t:{words[1]}") == {0, 1}
