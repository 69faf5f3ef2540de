"""to_polars() hands string and binary columns to Polars as Arrow views (no copy of the
values); the frame holds exactly the rows written, checked against Polars' own import."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest
from diffcases import OPTIONS, PARTITION_BY, rows

from indextables.search import open_table, write_table
from indextables.search.read.stringviews import view_type, with_string_views

pl = pytest.importorskip("polars")

HOSTILE = [None, "", "a", "x" * 12, "y" * 13, "é" * 7, "日本語😀", "\x00nul", "z" * 100_000, None]


def _hostile_table(seed: int) -> pa.Table:
    rng = random.Random(seed)
    values = [rng.choice(HOSTILE) for _ in range(300)]
    blobs = [None if v is None else v.encode() + bytes([rng.randrange(256)]) for v in values]
    cut = rng.randrange(1, 299)
    return pa.table(
        {
            "s": pa.chunked_array([pa.array(values[:cut]), pa.array(values[cut:])]),
            "ls": pa.chunked_array([pa.array(values, pa.large_string())]),
            "b": pa.chunked_array([pa.array(blobs, pa.binary())]),
            "lb": pa.chunked_array(
                [pa.array(blobs[:cut], pa.large_binary()), pa.array(blobs[cut:], pa.large_binary())]
            ),
            "n": pa.chunked_array([pa.array(range(300), pa.int64())]),
        }
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_views_keep_every_value_null_and_chunk(seed: int) -> None:
    table = _hostile_table(seed)
    viewed = with_string_views(table)
    assert [f.type for f in viewed.schema] == [
        pa.string_view(),
        pa.string_view(),
        pa.binary_view(),
        pa.binary_view(),
        pa.int64(),
    ]
    for name in table.column_names:
        before, after = table.column(name), viewed.column(name)
        assert [len(c) for c in after.chunks] == [len(c) for c in before.chunks], name
        assert after.to_pylist() == before.to_pylist(), name
    # Polars reads the same frame from either layout.
    assert pl.from_arrow(viewed, rechunk=False).equals(pl.from_arrow(table, rechunk=False))


def test_other_types_are_left_alone() -> None:
    table = pa.table({"i": [1, None], "l": pa.array([["a"], None], pa.list_(pa.string()))})
    assert with_string_views(table) is table
    assert view_type(pa.int32()) is None


def _written(tmp_path: Path, seed: int) -> tuple[str, pa.Table]:
    data = rows(seed, 150 + seed % 40)
    uri = str(tmp_path / f"t-{seed}")
    step = -(-data.num_rows // 3)
    for start in range(0, data.num_rows, step):
        write_table(
            uri, data.slice(start, step), partition_by=PARTITION_BY, options=OPTIONS, workers=1
        )
    return uri, data


@pytest.mark.parametrize("seed", [4, 5])
def test_to_polars_hands_views_to_polars_and_reads_the_written_rows(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri, data = _written(tmp_path, seed)
    table = open_table(uri)
    handed: list[pa.Table] = []
    real = pl.from_arrow

    def spy(value: object, **kwargs: object) -> object:
        if isinstance(value, pa.Table):
            handed.append(value)
        return real(value, **kwargs)

    monkeypatch.setattr(pl, "from_arrow", spy)
    frame = table.to_polars()
    assert len(handed) == 1
    strings = [f for f in table.schema if view_type(f.type) is not None]
    assert strings, "the written rows hold string columns"
    for field in strings:
        assert handed[0].schema.field(field.name).type == view_type(field.type), field.name
    monkeypatch.setattr(pl, "from_arrow", real)
    # The oracle: the written rows of the read's ids, imported by Polars from plain Arrow
    # in the read's types.
    read = table.to_arrow()
    expected = data.take(read.column("id").combine_chunks()).select(read.column_names)
    typed = pa.table(
        [c.cast(f.type) for c, f in zip(expected.columns, read.schema, strict=True)],
        schema=read.schema,
    )
    oracle = pl.from_arrow(typed).sort("id")
    got = frame.sort("id")
    assert got.schema == oracle.schema
    assert got.equals(oracle, null_equal=True)
