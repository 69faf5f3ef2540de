"""``NOT`` in query text matches what it says or is refused (Tantivy alone matched nothing
for ``a AND NOT b``, ``NOT b AND a`` and groups of exclusions)."""

from __future__ import annotations

import contextlib
import itertools
import random
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indextables.search import open_table, write_table
from indextables.search.errors import QuerySyntaxError
from indextables.search.query.negation import rewrite_negations

WORDS = ["alpha", "beta", "gamma"]
TEXTS = [" ".join(c) for n in range(1, 4) for c in itertools.combinations(WORDS, n)]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    import pyarrow as pa

    uri = str(Path(tmp_path_factory.mktemp("neg")) / "t")
    data = pa.table({"id": list(range(len(TEXTS))), "msg": TEXTS, "n": list(range(len(TEXTS)))})
    write_table(uri, data, options={"spark.indextables.indexing.typemap.msg": "text"})
    return uri


def _ids(uri: str, query: str) -> set[int]:
    return set(open_table(uri).search(query, columns=["id"]).column("id").to_pylist())


@pytest.mark.parametrize(("a", "b"), list(itertools.permutations(WORDS, 2)))
def test_and_not_keeps_the_rows_without_the_excluded_term(table: str, a: str, b: str) -> None:
    want = {i for i, t in enumerate(TEXTS) if a in t.split() and b not in t.split()}
    assert want  # the oracle has something to find
    assert _ids(table, f"msg:{a} AND NOT msg:{b}") == want
    assert _ids(table, f"msg:{a} && NOT msg:{b}") == want
    assert _ids(table, f"msg:{a} AND -msg:{b}") == want


def test_and_not_with_a_group_and_a_range(table: str) -> None:
    want = {i for i, t in enumerate(TEXTS) if "alpha" in t and "beta" not in t and "gamma" not in t}
    assert _ids(table, "msg:alpha AND NOT (msg:beta OR msg:gamma)") == want
    assert _ids(table, "n:[0 TO 99] AND NOT n:[2 TO 4]") == set(range(len(TEXTS))) - {2, 3, 4}


def test_or_not_keeps_either_side(table: str) -> None:
    # Tantivy alone matched `msg:alpha` only: its `OR (-msg:beta)` group matches nothing.
    want = {i for i, t in enumerate(TEXTS) if "alpha" in t.split() or "beta" not in t.split()}
    assert _ids(table, "msg:alpha OR NOT msg:beta") == want
    assert _ids(table, "msg:alpha || NOT msg:beta") == want


def test_quoted_text_is_left_alone() -> None:
    assert rewrite_negations('msg:"x AND NOT y" AND NOT z', "query") == 'msg:"x AND NOT y" AND -z'
    assert rewrite_negations('msg:"x OR NOT y"', "query") == 'msg:"x OR NOT y"'
    assert rewrite_negations("BRAND NOT x", "query") == "BRAND -x"  # a word, not AND


@pytest.mark.parametrize(
    ("query", "keeps"),
    [
        ("NOT msg:beta AND msg:alpha", lambda w: "alpha" in w and "beta" not in w),
        ("NOT msg:beta", lambda w: "beta" not in w),
        ("-msg:beta -msg:gamma", lambda w: "beta" not in w and "gamma" not in w),
        ("NOT msg:beta AND NOT msg:gamma", lambda w: "beta" not in w and "gamma" not in w),
        (
            "(NOT msg:beta AND msg:alpha) OR msg:gamma",
            lambda w: "gamma" in w or ("alpha" in w and "beta" not in w),
        ),
        (
            "msg:alpha AND NOT (msg:beta AND msg:gamma)",
            lambda w: "alpha" in w and not {"beta", "gamma"} <= w,
        ),
        ("(NOT msg:beta) AND msg:alpha", lambda w: "alpha" in w and "beta" not in w),
        ("msg:alpha AND NOT NOT msg:beta", lambda w: {"alpha", "beta"} <= w),
        ("msg:alpha AND -NOT msg:beta", lambda w: {"alpha", "beta"} <= w),
        ("NOT(msg:beta OR NOT msg:gamma)", lambda w: "beta" not in w and "gamma" in w),
        ("msg:gamma NOT msg:beta", lambda w: "gamma" in w and "beta" not in w),
    ],
)
def test_natural_negations_are_answered(table: str, query: str, keeps: Any) -> None:
    want = {i for i, t in enumerate(TEXTS) if keeps(set(t.split()))}
    assert _ids(table, query) == want
    assert open_table(table).count(query) == len(want)


@pytest.mark.parametrize(
    "query",
    [
        "msg:alpha AND (-msg:beta)",
        "msg:alpha OR -msg:beta",
        "(-msg:beta -msg:gamma) AND msg:alpha",
        "NOT -msg:beta AND msg:alpha",
    ],
)
def test_negations_the_index_cannot_answer_are_refused(table: str, query: str) -> None:
    # Tantivy alone answered each silently: a group of `-` exclusions matches nothing.
    with pytest.raises(QuerySyntaxError, match="option query="):
        open_table(table).search(query)


def _expression(rng: random.Random, depth: int) -> tuple[str, Any]:
    """Random query text over the words with AND/&&, OR/||, NOT, and its reader's meaning
    (Tantivy alone read `&&` and `||` as search words)."""
    pick = rng.random() if depth else 0.0
    if pick < 0.35:
        word = rng.choice(WORDS)
        return f"msg:{word}", lambda w, word=word: word in w
    if pick < 0.55:
        text, keeps = _expression(rng, depth - 1)
        inner = text if text.startswith(("msg:", "(")) else f"({text})"
        space = "" if inner.startswith("(") and rng.random() < 0.3 else " "
        return f"NOT{space}{inner}", lambda w: not keeps(w)
    (left, lk), (right, rk) = _expression(rng, depth - 1), _expression(rng, depth - 1)
    if rng.random() < 0.5:
        word = rng.choice(["AND", "&&"])
        return f"({left} {word} {right})", lambda w: lk(w) and rk(w)
    word = rng.choice(["OR", "||"])
    return f"({left} {word} {right})", lambda w: lk(w) or rk(w)


@pytest.mark.parametrize("seed", range(8))
def test_random_negations_are_answered_exactly_or_refused(table: str, seed: int) -> None:
    """Every query with NOT anywhere either matches what it says or is refused: never
    a silent wrong answer (Tantivy alone matched nothing for groups of exclusions)."""
    rng = random.Random(seed)
    answered = 0
    for _ in range(40):
        query, keeps = _expression(rng, 3)
        want = {i for i, t in enumerate(TEXTS) if keeps(set(t.split()))}
        try:
            got = _ids(table, query)
        except QuerySyntaxError:
            continue
        assert got == want, query
        answered += 1
    assert answered == 40  # NOT is always answered; only groups of bare `-x` are refused


_FRAGMENTS = [
    "NOT",
    "AND",
    "OR",
    "&&",
    "||",
    "(",
    ")",
    "-",
    "+",
    '"',
    "\\",
    "a",
    "f:",
    "*",
    "[",
    "]",
]
_FRAGMENTS += ["{", "}", " ", "IN", "~", "?", "^2", ":", "msg:alpha"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=14).map("".join))
def test_any_text_is_rewritten_and_checked_in_bounded_time(text: str) -> None:
    """Stray parentheses, quotes and operators end the scans (a stray ')' once looped
    forever), and rewriting twice changes nothing more."""
    from indextables.search.query.termforms import check_term_forms

    results: list[str] = []

    def scan() -> None:
        rewritten = rewrite_negations(text, "query")
        with contextlib.suppress(QuerySyntaxError):
            check_term_forms(text, "query")
        results.extend([rewritten, rewrite_negations(rewritten, "query")])

    worker = threading.Thread(target=scan, daemon=True)
    worker.start()
    worker.join(timeout=20)  # microseconds when it ends at all; generous for a loaded box
    assert not worker.is_alive(), f"the scan of {text!r} did not end"
    assert results[0] == results[1]


def test_a_stray_parenthesis_is_refused_by_tantivy(table: str) -> None:
    with pytest.raises(QuerySyntaxError, match="option query="):
        open_table(table).search("msg:alpha) AND NOT msg:beta")
