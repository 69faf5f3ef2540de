"""Random Polars filters over hostile rows: ``scan_indextables`` answers as Polars does.

The source translates parts of a Polars predicate into ``where=`` (which narrows the
search and prunes splits) and may push a row limit. Any translation that drops a row
Polars keeps, or a limit pushed past a filter it does not cover, shows up here as a
difference from Polars filtering the same rows in memory.
"""

from __future__ import annotations

import random
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indextables.search import open_table, write_table
from indextables.search.polars import scan_indextables

OPTIONS = {"spark.indextables.indexing.typemap.t": "text"}
STRINGS = ["", " ", "a", "A", "a'b", "back\\slash", "ü", "日本", "😀", "x" * 300, "a b", "%_*"]
EDGES = {
    "i8": (-(2**7), 2**7 - 1),
    "i32": (-(2**31), 2**31 - 1),
    "i64": (-(2**63), 2**63 - 1),
}
INT_COLUMNS = tuple(EDGES)
STRING_COLUMNS = ("s", "t")


def _rows(seed: int, count: int) -> pa.Table:
    rng = random.Random(seed)

    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.2 else value

    columns: dict[str, pa.Array] = {}
    for name, (low, high) in EDGES.items():
        values = [
            maybe(rng.choice([low, high, 0, -1, 1, rng.randint(low, high)])) for _ in range(count)
        ]
        columns[name] = pa.array(values, pa.from_numpy_dtype(f"int{name[1:]}"))
    columns["s"] = pa.array([maybe(rng.choice(STRINGS)) for _ in range(count)], pa.string())
    columns["t"] = pa.array(
        [
            maybe(" ".join(rng.choice(STRINGS) for _ in range(rng.randint(0, 3))))
            for _ in range(count)
        ],
        pa.string(),
    )
    return pa.table(columns)


@pytest.fixture(scope="module", params=[11, 12])
def table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    uri = str(tmp_path_factory.mktemp("polars") / "t")
    data = _rows(request.param, 240)
    for start in range(0, 240, 80):  # three splits
        write_table(uri, data.slice(start, 80), mode="append", options=OPTIONS)
    opened = open_table(uri)
    assert len(opened.files) == 3
    # The oracle is the rows written, in memory (not the table read back).
    frame = pl.from_arrow(data)
    assert isinstance(frame, pl.DataFrame)
    assert frame.height == 240
    assert scan_indextables(opened).collect().equals(frame)
    return opened, frame


def _int_literal(column: str) -> st.SearchStrategy[int]:
    low, high = EDGES[column]
    return st.one_of(
        st.sampled_from([low, high, low - 1, high + 1, 0, -1, 1, 2**63, -(2**63) - 1]),
        st.integers(low, high),
    ).filter(lambda v: -(2**63) <= v < 2**64)


_text = st.one_of(st.sampled_from(STRINGS), st.text(max_size=6))


@st.composite
def _leaf(draw: st.DrawFn) -> pl.Expr:
    kind = draw(st.sampled_from(["int", "str", "null", "in_int", "in_str", "float"]))
    if kind in ("int", "in_int"):
        column = draw(st.sampled_from(INT_COLUMNS))
        literal = _int_literal(column)
    else:
        column = draw(st.sampled_from(STRING_COLUMNS))
        literal = _text
    col = pl.col(column)
    if kind == "null":
        return col.is_null() if draw(st.booleans()) else col.is_not_null()
    if kind in ("in_int", "in_str"):
        values = draw(st.lists(literal, min_size=1, max_size=4))
        if kind == "in_int" and any(not EDGES[column][0] <= v <= EDGES[column][1] for v in values):
            values = [v for v in values if EDGES[column][0] <= v <= EDGES[column][1]] or [0]
        return col.is_in(values)
    if kind == "float":
        return pl.col(draw(st.sampled_from(INT_COLUMNS))) > draw(st.sampled_from([0.5, -1.5]))
    op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
    value = pl.lit(draw(literal))
    if draw(st.booleans()):
        return {
            "==": col == value,
            "!=": col != value,
            "<": col < value,
            "<=": col <= value,
            ">": col > value,
            ">=": col >= value,
        }[op]
    return {
        "==": value == col,
        "!=": value != col,
        "<": value < col,
        "<=": value <= col,
        ">": value > col,
        ">=": value >= col,
    }[op]


_predicates = st.recursive(
    _leaf(),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda p: p[0] & p[1]),
        st.tuples(inner, inner).map(lambda p: p[0] | p[1]),
        inner.map(lambda p: ~p),
    ),
    max_leaves=4,
)


def _answer(frame: Any, predicate: pl.Expr, limit: int | None) -> Any:
    """The filtered (and limited) rows of a frame or LazyFrame, or the type of its error."""
    try:
        out = frame.lazy().filter(predicate)
        return (out.head(limit) if limit is not None else out).collect()
    except Exception as exc:  # the two sides must fail alike
        return type(exc)


@settings(max_examples=150, deadline=None)
@given(predicate=_predicates, limit=st.one_of(st.none(), st.integers(0, 30)))
def test_random_filters_answer_as_polars_does(
    table: Any, predicate: pl.Expr, limit: int | None
) -> None:
    opened, frame = table
    expected = _answer(frame, predicate, limit)
    answer = _answer(scan_indextables(opened), predicate, limit)
    if isinstance(expected, type) or isinstance(answer, type):
        assert answer == expected, f"{predicate} (limit {limit})"
    else:
        assert answer.equals(expected), f"{predicate} (limit {limit})"
