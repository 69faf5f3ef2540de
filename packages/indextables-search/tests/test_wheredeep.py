"""Deep, wide and long ``where`` conditions: parsed and answered without recursion.

The expected rows come from a Python model of Spark's three-valued logic over
the same generated trees (never from the code under test): chains of
thousands of ``OR``/``AND`` terms, runs of ``NOT``, hundreds of parentheses,
nesting up to the documented depth limit and just past it, and ``IN`` lists
of 200,000 values (with a structural check that their cost is linear).
"""

from __future__ import annotations

import datetime as dt
import random
import sys
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from indextables.search.errors import QuerySyntaxError
from indextables.search.query import wheregrammar as g
from indextables.search.query.conditions import translate_where
from indextables.search.query.whereeval import compile_where

SCHEMA = pa.schema([("a", pa.int64()), ("b", pa.int64())])
OPS: dict[str, Callable[[int, int], bool]] = {
    "=": lambda x, y: x == y,
    "<>": lambda x, y: x != y,
    "<": lambda x, y: x < y,
    "<=": lambda x, y: x <= y,
    ">": lambda x, y: x > y,
    ">=": lambda x, y: x >= y,
}

# A model tree: ("cmp", column, op, value) | ("and", [trees]) | ("or", [trees]) | ("not", tree)
Tree = tuple[Any, ...]


def rows(rng: random.Random, count: int = 200) -> list[dict[str, int | None]]:
    def value() -> int | None:
        return None if rng.random() < 0.15 else rng.randint(-5, 5)

    return [{"a": value(), "b": value()} for _ in range(count)]


def batch_of(table: list[dict[str, int | None]]) -> pa.RecordBatch:
    return pa.record_batch(
        {name: pa.array([r[name] for r in table], pa.int64()) for name in ("a", "b")},
        schema=SCHEMA,
    )


def model(tree: Tree, row: dict[str, int | None]) -> bool | None:
    """Spark's three-valued result of ``tree`` on ``row`` (None: null)."""
    kind = tree[0]
    if kind == "cmp":
        _, column, op, value = tree
        actual = row[column]
        return None if actual is None else OPS[op](actual, value)
    if kind == "not":
        inner = model(tree[1], row)
        return None if inner is None else not inner
    results = [model(child, row) for child in tree[1]]
    if kind == "and":
        if False in results:
            return False
        return None if None in results else True
    if True in results:
        return True
    return None if None in results else False


def render(tree: Tree, rng: random.Random) -> str:
    """Spark SQL text of ``tree``, with redundant parentheses now and then."""
    kind = tree[0]
    if kind == "cmp":
        _, column, op, value = tree
        text = f"{column} {op} {value}" if rng.random() < 0.8 else f"{value} {_flip(op)} {column}"
    elif kind == "not":
        text = f"NOT ({render(tree[1], rng)})"
    else:
        text = f" {kind.upper()} ".join(f"({render(child, rng)})" for child in tree[1])
    return f"({text})" if rng.random() < 0.2 else text


def _flip(op: str) -> str:
    return {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]


def leaf(rng: random.Random) -> Tree:
    return ("cmp", rng.choice("ab"), rng.choice(list(OPS)), rng.randint(-5, 5))


def random_tree(rng: random.Random, depth: int) -> Tree:
    if depth == 0 or rng.random() < 0.2:
        return leaf(rng)
    kind = rng.choice(["and", "or", "not"])
    if kind == "not":
        return ("not", random_tree(rng, depth - 1))
    width = rng.choice([2, 3, 5, 40])
    return (kind, [random_tree(rng, depth - 1) for _ in range(width if depth < 3 else 2)])


def kept(where: str, table: list[dict[str, int | None]]) -> list[int]:
    mask = compile_where(where, SCHEMA).mask(batch_of(table))
    return [i for i, keep in enumerate(mask.to_pylist()) if keep]


def expected(tree: Tree, table: list[dict[str, int | None]]) -> list[int]:
    return [i for i, row in enumerate(table) if model(tree, row) is True]


@pytest.mark.parametrize("seed", range(12))
def test_random_nested_conditions_match_the_model(seed: int) -> None:
    rng = random.Random(seed)
    table = rows(rng)
    for _ in range(20):
        tree = random_tree(rng, rng.randint(1, 12))
        assert kept(render(tree, rng), table) == expected(tree, table)


@pytest.mark.parametrize(("kind", "width"), [("or", 1000), ("and", 1000), ("or", 10_000)])
def test_long_flat_chains_are_answered(kind: str, width: int) -> None:
    rng = random.Random(width)
    table = rows(rng)
    tree: Tree = (kind, [leaf(rng) for _ in range(width)])
    where = f" {kind.upper()} ".join(render(child, rng) for child in tree[1])
    assert kept(where, table) == expected(tree, table)
    # The tree is one node of all the terms; the pruning translation reads it too.
    parsed = g.parse_where(where)
    assert isinstance(parsed, g.And | g.Or)
    assert len(parsed.children) == width
    translation = translate_where(where, SCHEMA)
    if kind == "and":
        assert translation.complete
        assert len(translation.conditions) == width
    else:
        assert translation.conditions == ()
        assert not translation.complete


@pytest.mark.parametrize("nots", [999, 1000, 5001])
def test_runs_of_not_are_answered(nots: int) -> None:
    rng = random.Random(nots)
    table = rows(rng)
    tree: Tree = ("cmp", "a", ">", 0)
    for _ in range(nots):
        tree = ("not", tree)
    where = "NOT " * nots + "a > 0"
    assert kept(where, table) == [
        i
        for i, row in enumerate(table)
        if row["a"] is not None and (row["a"] > 0) == (nots % 2 == 0)
    ]
    assert kept("NOT (" * nots + "a > 0" + ")" * nots, table) == kept(where, table)


def test_many_parentheses_around_one_condition_are_answered() -> None:
    rng = random.Random(500)
    table = rows(rng)
    where = "(" * 500 + "a >= 1" + ")" * 500 + " OR " + "(" * 2000 + "b = 2" + ")" * 2000
    tree: Tree = ("or", [("cmp", "a", ">=", 1), ("cmp", "b", "=", 2)])
    assert kept(where, table) == expected(tree, table)


def nested(levels: int) -> tuple[str, Tree]:
    """``levels`` alternating OR/AND levels, each a real node: ``a = 0 OR (b = 1 AND (...))``."""
    text = "a = 9"
    tree: Tree = ("cmp", "a", "=", 9)
    for level in range(levels):
        kind = "or" if level % 2 else "and"
        column = "ab"[level % 2]
        other: Tree = ("cmp", column, "=", level % 11 - 5)
        tree = (kind, [other, tree])
        text = f"{column} = {level % 11 - 5} {kind.upper()} ({text})"
    return text, tree


def test_nesting_at_the_depth_limit_is_answered() -> None:
    rng = random.Random(256)
    table = rows(rng)
    where, tree = nested(g.MAX_DEPTH)
    assert g.depth(g.parse_where(where)) == g.MAX_DEPTH
    # The model recurses once a level: give it the room (the engine needs none).
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5 * g.MAX_DEPTH))
    try:
        want = expected(tree, table)
    finally:
        sys.setrecursionlimit(limit)
    assert kept(where, table) == want
    assert translate_where(where, SCHEMA).complete is False


@pytest.mark.parametrize("levels", [g.MAX_DEPTH + 1, 500, 20_000])
def test_nesting_past_the_depth_limit_is_a_typed_error(levels: int) -> None:
    where, _ = nested(levels)
    with pytest.raises(QuerySyntaxError, match=r"where=.*the limit is 256"):
        compile_where(where, SCHEMA)
    # The pruning translation does not raise: it cannot use all of such a condition.
    assert not translate_where(where, SCHEMA).complete


def test_deep_not_nesting_past_the_limit_is_a_typed_error() -> None:
    where = "NOT (a = 1 OR " * 300 + "b = 2" + ")" * 300
    with pytest.raises(QuerySyntaxError, match="nests 600 levels"):
        compile_where(where, SCHEMA)


# --- IN lists ---------------------------------------------------------------------------


@pytest.mark.slow
def test_in_list_of_200k_values_matches_the_model() -> None:
    rng = random.Random(200_000)
    listed = rng.sample(range(-1_000_000, 1_000_000), 200_000)
    column = [
        None if rng.random() < 0.1 else rng.randint(-1_100_000, 1_100_000) for _ in range(5000)
    ]
    column[:3] = [listed[0], listed[-1], listed[99_999]]
    schema = pa.schema([("id", pa.int64())])
    batch = pa.record_batch({"id": pa.array(column, pa.int64())}, schema=schema)
    members = set(listed)
    for with_null in (False, True):
        texts = [str(v) for v in listed] + (["NULL"] if with_null else [])
        rng.shuffle(texts)
        where = f"id IN ({', '.join(texts)})"
        result = compile_where(where, schema).evaluate(batch)  # type: ignore[misc]
        want = [
            None if v is None else True if v in members else None if with_null else False
            for v in column
        ]
        assert result.to_pylist() == want
    negated = compile_where(f"id NOT IN ({', '.join(map(str, listed))})", schema).mask(batch)
    assert negated.to_pylist() == [v is not None and v not in members for v in column]
    translation = translate_where(f"id IN ({', '.join(map(str, listed))})", schema)
    assert translation.complete
    assert list(translation.conditions[0].values) == listed


@pytest.mark.parametrize(
    ("data_type", "column", "texts", "values"),
    [
        (
            pa.string(),
            ["x", "y", "it's", "", None, "\u00e9"],
            ["'y'", "'it\\'s'", "''", "'\u00e9'", "'zz'"],
            ["y", "it's", "", "\u00e9", "zz"],
        ),
        (
            pa.date32(),
            [dt.date(2024, 2, 29), dt.date(1970, 1, 1), None, dt.date(1, 1, 1)],
            ["'2024-02-29'", "DATE '0001-01-01'", "'2000-01-01'"],
            [dt.date(2024, 2, 29), dt.date(1, 1, 1), dt.date(2000, 1, 1)],
        ),
        (
            pa.decimal128(6, 2),
            [Decimal("1.50"), Decimal("-2.00"), None, Decimal("0.00"), Decimal("9999.99")],
            ["1.5", "-2", "0", "1.505", "123456789"],
            [Decimal("1.5"), Decimal("-2"), Decimal("0")],
        ),
        (
            pa.int32(),
            [1, -(2**31), None, 7, 2**31 - 1],
            ["1", "2147483647", "1.0", "1.5", "100000000000000000000"],
            [1, 2**31 - 1],
        ),
        (
            pa.string_view(),
            ["x", None, "y"],
            ["'y'", "'z'"],
            ["y", "z"],
        ),
        (pa.bool_(), [True, False, None], ["true"], [True]),
        (
            pa.timestamp("us", "UTC"),
            [dt.datetime(2024, 1, 1, tzinfo=dt.UTC), None, dt.datetime(1970, 1, 1, tzinfo=dt.UTC)],
            ["'2024-01-01 01:00:00+01:00'", "'1999-01-01 00:00:00Z'"],
            [dt.datetime(2024, 1, 1, tzinfo=dt.UTC)],
        ),
    ],
)
@pytest.mark.parametrize("with_null", [False, True])
def test_in_lists_of_each_type_match_the_model(
    data_type: pa.DataType, column: list[Any], texts: list[str], values: list[Any], with_null: bool
) -> None:
    schema = pa.schema([("x", data_type)])
    batch = pa.record_batch({"x": pa.array(column, data_type)}, schema=schema)
    listed = [*texts, "NULL"] if with_null else texts
    result = compile_where(f"x IN ({', '.join(listed)})", schema).evaluate(batch)  # type: ignore[misc]
    want = [
        None if v is None else True if v in values else None if with_null else False for v in column
    ]
    assert result.to_pylist() == want


def _traced_lines(action: Callable[[], object]) -> int:
    """How many lines of Python ``action`` runs (a deterministic count of its work)."""
    count = 0

    def trace(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return trace

    previous = sys.gettrace()  # a coverage tracer, say: put back afterwards
    sys.settrace(trace)
    try:
        action()
    finally:
        sys.settrace(previous)
    return count


@pytest.mark.parametrize(
    ("data_type", "literal"),
    [(pa.int64(), str), (pa.decimal128(12, 2), lambda i: f"{i}.5"), (pa.string(), "'{}'".format)],
)
def test_in_list_cost_is_linear(data_type: pa.DataType, literal: Callable[[int], str]) -> None:
    """Twice the values take about twice the steps (a quadratic cost takes four times),
    in the parse, the compile, one evaluation and the pruning translation."""
    schema = pa.schema([("x", data_type)])
    batch = pa.record_batch({"x": pa.array([None] * 10, data_type)}, schema=schema)

    def steps(size: int) -> int:
        where = f"x IN ({', '.join(literal(i) for i in range(size))})"

        def run() -> None:
            compile_where(where, schema).mask(batch)
            translate_where(where, schema)

        return _traced_lines(run)

    small, large = steps(1500), steps(3000)
    assert large < 2.2 * small, (small, large)


# --- through a table: pruning, partition pruning and the row filter ----------------------


@pytest.fixture(scope="module")
def table_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    from indextables.search import write_table

    rng = random.Random(9)
    ids = [None if rng.random() < 0.1 else rng.randint(-500, 500) for _ in range(600)]
    data = pa.table(
        {"id": pa.array(ids, pa.int64()), "p": pa.array([i % 4 for i in range(600)], pa.int64())}
    )
    uri = str(tmp_path_factory.mktemp("deep") / "t")
    write_table(uri, data, partition_by=["p"])
    return uri


def _searched(uri: str, where: str) -> list[tuple[int | None, int]]:
    from indextables.search import open_table

    found = open_table(uri).search(where=where, columns=["id", "p"])
    return sorted(zip(found["id"].to_pylist(), found["p"].to_pylist(), strict=True), key=str)


def _all_rows(uri: str) -> list[dict[str, Any]]:
    from indextables.search import open_table

    found: list[dict[str, Any]] = open_table(uri).search(columns=["id", "p"]).to_pylist()
    return found


def test_long_conditions_through_a_table_match_the_model(table_uri: str) -> None:
    """Chains of thousands of terms reach the split pruning (each conjunct a condition),
    the partition pruning and the row filter as flat nodes."""
    table = _all_rows(table_uri)
    rng = random.Random(4)
    ands = [f"id <> {v}" for v in rng.sample(range(-3000, 3000), 2000)] + ["p >= 1"]
    ands += [f"id > {v}" for v in rng.sample(range(-9000, -400), 2000)]
    ors = [f"id = {v}" for v in rng.sample(range(-6000, 6000), 5000)]
    ors += [f"p = {v}" for v in range(3, 3000, 3)]
    listed = rng.sample(range(-2000, 2000), 3000)
    cases: list[tuple[str, Callable[[dict[str, Any]], bool]]] = [
        (
            " AND ".join(ands),
            lambda r: (
                r["id"] is not None
                and r["p"] >= 1
                and all(r["id"] != int(t.split()[-1]) for t in ands if t.startswith("id <>"))
                and all(r["id"] > int(t.split()[-1]) for t in ands if t.startswith("id >"))
            ),
        ),
        (
            " OR ".join(ors),
            lambda r: r["p"] == 3 or (r["id"] is not None and f"id = {r['id']}" in ors),
        ),
        (
            f"p IN ({', '.join(map(str, range(1, 9000, 2)))}) "
            f"AND id IN ({', '.join(map(str, listed))})",
            lambda r: r["p"] % 2 == 1 and r["id"] in listed,
        ),
    ]
    for where, keep in cases:
        want = sorted(((r["id"], r["p"]) for r in table if keep(r)), key=str)
        assert _searched(table_uri, where) == want


def test_a_syntax_error_in_a_long_condition_shows_its_start() -> None:
    where = "id IN (" + ", ".join(map(str, range(100_000))) + ", )"
    with pytest.raises(QuerySyntaxError) as caught:
        compile_where(where, pa.schema([("id", pa.int64())]))
    message = str(caught.value)
    assert message.startswith("where='id IN (0, 1, 2, ")
    assert f"({len(where)} characters)" in message
    assert "expected a column or a literal at ')'" in message
    assert len(message) < 400


@pytest.mark.parametrize("seed", [1, 2])
def test_integer_in_lists_through_the_index_equal_the_model(tmp_path: Any, seed: int) -> None:
    """An integer IN list becomes one term-set query on an indexed field (a union of range
    queries read the fast field once per value); negatives, duplicates, the long's ends and
    operands beyond them are answered as the model answers them."""
    import tantivy

    from indextables.search import open_table, write_table
    from indextables.search.query.tantivyquery import to_query
    from indextables.search.schema.mapping import FieldKind, FieldSpec

    rng = random.Random(seed)
    extremes = [-(2**63), 2**63 - 1, 0, -1]
    column = [rng.choice([None, rng.choice(extremes), rng.randint(-50, 50)]) for _ in range(400)]
    uri = str(tmp_path / "t")
    for part in (column[:150], column[150:]):
        write_table(uri, pa.table({"n": pa.array(part, pa.int64())}))
    table = open_table(uri)
    for _ in range(20):
        operands = [rng.choice([*extremes, 2**63, -(2**63) - 1]) for _ in range(3)]
        operands += [rng.randint(-60, 60) for _ in range(rng.randint(2, 40))]
        where = f"n IN ({', '.join(map(str, operands))})"
        wanted = sum(1 for v in column if v is not None and v in operands)
        assert table.count(where=where) == wanted, where
        assert table.search(where=where, columns=["n"]).num_rows == wanted, where
        assert table.count(where=f"NOT ({where})") == sum(
            1 for v in column if v is not None and v not in operands
        ), where
    spec = FieldSpec(
        name="n", kind=FieldKind.I64, tokenizer=None, indexed=True, fast=True, stored=True
    )
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("n", indexed=True, fast=True)
    condition = translate_where("n IN (1, 2, 3)", pa.schema([("n", pa.int64())])).conditions[0]
    query = to_query(condition, spec, builder.build())
    assert "TermSetQuery" in repr(query)
