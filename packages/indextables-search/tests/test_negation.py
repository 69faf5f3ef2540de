"""``NOT`` in query text matches what it says or is refused (Tantivy alone matched nothing
for ``a AND NOT b``, ``NOT b AND a`` and groups of exclusions)."""

from __future__ import annotations

import contextlib
import itertools
import random
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
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


class _CountingPattern:
    """A compiled pattern whose ``finditer`` counts the matches it yields."""

    def __init__(self, pattern: re.Pattern[str], seen: list[int]) -> None:
        self._pattern, self._seen = pattern, seen

    def finditer(self, *args: Any) -> Iterator[re.Match[str]]:
        for found in self._pattern.finditer(*args):
            self._seen[0] += 1
            yield found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)


@dataclass
class _Counts:
    scanned: int = 0  # characters the rewrite's scans stepped over
    marks: list[int] = field(default_factory=lambda: [0])  # bracket marks visited


def _counting_scans(monkeypatch: pytest.MonkeyPatch) -> _Counts:
    """Counts the steps of negation's scans: the characters its text scans step over and
    the matches its compiled patterns' ``finditer`` yield."""
    from indextables.search.query import negation

    counts = _Counts()
    for name in ("token_end", "group_end", "skip_space"):
        scan = getattr(negation, name)

        def counted(text: str, position: int, *rest: Any, _scan: Any = scan) -> int:
            end: int = _scan(text, position, *rest)
            counts.scanned += max(end - position, 1)
            return end

        monkeypatch.setattr(negation, name, counted)
    for name, value in list(vars(negation).items()):
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(negation, name, _CountingPattern(value, counts.marks))
    return counts


def test_nested_negations_are_rewritten_in_linear_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """``NOT (NOT (... x ...))`` just under the nesting limit: each character is scanned a
    bounded number of times (each level scanned the rest of the text: quadratic)."""
    from indextables.search.query.querylimits import MAX_QUERY_DEPTH, nesting_depth

    pairs = (MAX_QUERY_DEPTH - 1) // 2  # NOT and its group nest one level each
    text = "msg:y AND " + "NOT (" * pairs + "NOT msg:x OR msg:z" + ")" * pairs
    assert nesting_depth(text) == MAX_QUERY_DEPTH - 1
    counts = _counting_scans(monkeypatch)
    rewritten = rewrite_negations(text + " ", "query")  # not a cached text
    assert rewritten.count("msg:x") == 1
    assert counts.scanned <= 4 * len(text), counts.scanned


def test_nested_exclusions_are_read_in_linear_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parsed form of ``-(-(... x ...))`` just under the nesting limit: each bracket of
    the Debug text is visited a bounded number of times (each group scanned to its end)."""
    import tantivy

    from indextables.search.query.negation import exclusion_only_groups
    from indextables.search.query.querylimits import MAX_QUERY_DEPTH

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("msg", stored=True)
    index = tantivy.Index(builder.build())
    depth = MAX_QUERY_DEPTH - 1
    text = "msg:y AND " + "-(" * depth + "msg:x OR msg:z" + ")" * depth
    shape = repr(index.parse_query(text, ["msg"]))
    counts = _counting_scans(monkeypatch)
    # Every group but the innermost (x OR z) holds one exclusion only: -( ... ).
    assert exclusion_only_groups(shape) == depth - 1
    brackets = sum(shape.count(c) for c in "()[]{}")
    assert counts.marks[0] <= 2 * brackets, (counts.marks[0], brackets)
