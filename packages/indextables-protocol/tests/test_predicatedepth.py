"""Partition predicates of long chains, runs of NOT and deep nesting, without recursion.

The expected answers come from a Python model of SQL's three-valued logic over
the generated trees (integers compared as integers), never from the code under test.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import create_table, open_table
from indextables.protocol.actions import AddAction
from indextables.protocol.errors import InvalidPredicateError
from indextables.protocol.predicateparser import MAX_DEPTH
from indextables.protocol.predicates import And, EqualTo, Or, parse_predicate

OPS: dict[str, Callable[[int, int], bool]] = {
    "=": lambda x, y: x == y,
    "<>": lambda x, y: x != y,
    "<": lambda x, y: x < y,
    ">=": lambda x, y: x >= y,
}
Tree = tuple[Any, ...]  # ("cmp", column, op, value) | ("and"|"or", [trees]) | ("not", tree)


def model(tree: Tree, row: dict[str, int | None]) -> bool | None:
    kind = tree[0]
    if kind == "cmp":
        actual = row[tree[1]]
        return None if actual is None else OPS[tree[2]](actual, tree[3])
    if kind == "not":
        inner = model(tree[1], row)
        return None if inner is None else not inner
    results = [model(child, row) for child in tree[1]]
    if kind == "and":
        return False if False in results else None if None in results else True
    return True if True in results else None if None in results else False


def render(tree: Tree, rng: random.Random) -> str:
    kind = tree[0]
    if kind == "cmp":
        text = f"{tree[1]} {tree[2]} {tree[3]}"
    elif kind == "not":
        text = f"NOT ({render(tree[1], rng)})"
    else:
        text = f" {kind.upper()} ".join(f"({render(child, rng)})" for child in tree[1])
    return f"({text})" if rng.random() < 0.2 else text


def leaf(rng: random.Random) -> Tree:
    return ("cmp", rng.choice("ab"), rng.choice(list(OPS)), rng.randint(-3, 3))


def random_tree(rng: random.Random, depth: int) -> Tree:
    if depth == 0 or rng.random() < 0.2:
        return leaf(rng)
    kind = rng.choice(["and", "or", "not"])
    if kind == "not":
        return ("not", random_tree(rng, depth - 1))
    width = rng.choice([2, 3, 30]) if depth < 3 else 2
    return (kind, [random_tree(rng, depth - 1) for _ in range(width)])


def rows(rng: random.Random) -> list[dict[str, int | None]]:
    def value() -> int | None:
        return None if rng.random() < 0.2 else rng.randint(-3, 3)

    return [{"a": value(), "b": value()} for _ in range(60)]


def values_of(row: dict[str, int | None]) -> dict[str, str | None]:
    return {k: None if v is None else str(v) for k, v in row.items()}


@pytest.mark.parametrize("seed", range(10))
def test_random_nested_predicates_match_the_model(seed: int) -> None:
    rng = random.Random(seed)
    table = rows(rng)
    for _ in range(15):
        tree = random_tree(rng, rng.randint(1, 10))
        predicate = parse_predicate(render(tree, rng))
        for row in table:
            assert predicate.evaluate(values_of(row)) == model(tree, row)


@pytest.mark.parametrize(("kind", "width"), [("or", 1000), ("and", 1000), ("or", 10_000)])
def test_long_chains_are_one_node_and_evaluate(kind: str, width: int) -> None:
    rng = random.Random(width)
    tree: Tree = (kind, [leaf(rng) for _ in range(width)])
    predicate = parse_predicate(f" {kind.upper()} ".join(render(t, rng) for t in tree[1]))
    assert isinstance(predicate, And | Or)
    assert len(predicate.parts) == width
    assert predicate.columns() <= {"a", "b"}
    for row in rows(rng):
        assert predicate.evaluate(values_of(row)) == model(tree, row)
    assert predicate.may_match(None)


@pytest.mark.parametrize("nots", [1000, 1001])
def test_runs_of_not_are_read(nots: int) -> None:
    predicate = parse_predicate("NOT " * nots + "a = 1")
    plain = parse_predicate("a = 1")
    for value in ("1", "2", None):
        result = plain.evaluate({"a": value})
        want = result if nots % 2 == 0 or result is None else not result
        assert predicate.evaluate({"a": value}) == want
    assert parse_predicate("(" * 3000 + "a = 1" + ")" * 3000) == plain


def nested(levels: int) -> tuple[str, Tree]:
    text = "a = 3"
    tree: Tree = ("cmp", "a", "=", 3)
    for level in range(levels):
        kind = "or" if level % 2 else "and"
        other: Tree = ("cmp", "ab"[level % 2], "=", level % 7 - 3)
        tree = (kind, [other, tree])
        text = f"{other[1]} = {other[3]} {kind.upper()} ({text})"
    return text, tree


def test_nesting_at_the_limit_is_read() -> None:
    text, tree = nested(MAX_DEPTH)
    predicate = parse_predicate(text)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5 * MAX_DEPTH))  # the model's recursion
    try:
        for row in rows(random.Random(3)):
            assert predicate.evaluate(values_of(row)) == model(tree, row)
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 500, 20_000])
def test_nesting_past_the_limit_is_an_invalid_predicate(levels: int) -> None:
    text, _ = nested(levels)
    with pytest.raises(InvalidPredicateError, match="the limit is 256"):
        parse_predicate(text)
    with pytest.raises(InvalidPredicateError, match="the limit is 256"):
        parse_predicate("NOT (a = 1 OR " * levels + "b = 2" + ")" * levels)


def test_and_or_merge_their_parts_and_keep_a_binary_view() -> None:
    a, b, c = EqualTo("a", "1"), EqualTo("b", "2"), EqualTo("c", "3")
    assert And(And(a, b), c) == And(a, And(b, c)) == And(a, b, c)
    assert And(a, b, c).parts == (a, b, c)
    assert (And(a, b, c).left, And(a, b, c).right) == (a, And(b, c))
    assert Or(a, Or(b, c)).parts == (a, b, c)
    with pytest.raises(ValueError, match="at least one"):
        Or()


def test_a_long_partition_filter_prunes_and_reads(tmp_path: Path, schema: Any) -> None:
    """A generated OR of 1,500 partition equalities: the table's pruning (manifests,
    statistics) reads it as one node."""
    root = tmp_path / "t"
    fields = [*schema["fields"], {"name": "p", "type": "integer", "nullable": True, "metadata": {}}]
    table = create_table(str(root), schema={**schema, "fields": fields}, partition_columns=["p"])
    adds = []
    for i in range(6):
        (root / f"{i}.split").write_bytes(b"x")
        adds.append(AddAction(f"{i}.split", {"p": str(i)}, 1, 1, True))
    table.commit(adds=adds)
    wanted = " OR ".join(f"p = {v}" for v in range(1, 3000, 2))
    files = open_table(str(root)).snapshot(partition_filter=wanted).files
    assert sorted(f.partition_values["p"] for f in files) == ["1", "3", "5"]
