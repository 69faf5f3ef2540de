"""Date columns decoded in bulk are typed as tantivy-py types them, on random extreme dates.

Unit level: :func:`bulkrows._date_typed` against a plain Python model of tantivy-py's
conversion (nanoseconds floored to microseconds, then to days for ``date32``; a value at
an end of Tantivy's span flagged), on random nanosecond arrays with nulls, sliced at
random offsets, for every column type the bulk path serves. Table level: tables of
several splits holding random extreme dates read alike through each decoder twin and
through tantivy-py's per-document path (``INDEXTABLES_DOCSTORE_IMPL=off``).
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.read import bulkrows
from indextables.search.read.convert import TANTIVY_MAX_MICROS, TANTIVY_MIN_MICROS
from indextables.search.read.docstore import impl

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
MICROS_PER_DAY = 86_400_000_000
TARGETS = [
    pa.timestamp("us", tz="UTC"),
    pa.timestamp("us"),
    pa.timestamp("us", tz="America/New_York"),
    pa.timestamp("us", tz="+05:30"),
    pa.timestamp("us", tz="Pacific/Kiritimati"),
    pa.date32(),
]
EDGES = [
    INT64_MIN,
    INT64_MIN + 1,
    INT64_MAX,
    INT64_MAX - 1,
    TANTIVY_MIN_MICROS * 1000,
    TANTIVY_MIN_MICROS * 1000 - 1,
    TANTIVY_MIN_MICROS * 1000 + 1000,
    TANTIVY_MAX_MICROS * 1000,
    TANTIVY_MAX_MICROS * 1000 - 1,
    -1,
    0,
    1,
    -999,
    -1000,
    -1001,
    999,
    -MICROS_PER_DAY * 1000,
    -MICROS_PER_DAY * 1000 - 1,
    MICROS_PER_DAY * 1000 - 1,
]


def _random_ns(rng: random.Random, count: int) -> list[int | None]:
    values: list[int | None] = []
    for _ in range(count):
        pick = rng.random()
        if pick < 0.15:
            values.append(None)
        elif pick < 0.35:
            values.append(rng.choice(EDGES))
        elif pick < 0.6:
            values.append(rng.randint(-(10**17), 10**17))  # around 1970, both sides
        else:
            values.append(rng.randint(INT64_MIN, INT64_MAX))
    return values


def _model(values: list[int | None], target: pa.DataType) -> tuple[list[int | None], bool]:
    # tantivy-py: the UTC time of day to the microsecond, floored (Python's // floors).
    micros = [None if v is None else v // 1000 for v in values]
    clamped = any(
        m is not None and (m <= TANTIVY_MIN_MICROS or m >= TANTIVY_MAX_MICROS) for m in micros
    )
    if pa.types.is_date32(target):
        return [None if m is None else m // MICROS_PER_DAY for m in micros], clamped
    return micros, clamped


@pytest.mark.parametrize("seed", range(12))
def test_date_typing_equals_the_model_on_random_extreme_dates(seed: int) -> None:
    rng = random.Random(seed)
    values = _random_ns(rng, rng.choice([1, 7, 64, 300, 2049]))
    if seed % 4 == 0:
        values = [None] * len(values)  # a column of nulls only
    elif seed % 4 == 1:
        values = [v if v is not None else 0 for v in values]  # no nulls: no bitmap
    decoded = pa.array(values, type=pa.int64()).view(pa.timestamp("ns", tz="UTC"))
    start = rng.randrange(len(values))
    pieces = [(decoded, values), (decoded.slice(start), values[start:])]
    for target in TARGETS:
        for array, raw in pieces:
            typed, clamped = bulkrows._date_typed(array, target)
            typed.validate(full=True)
            want, want_clamped = _model(raw, target)
            assert typed.type == target
            storage = pa.int32() if pa.types.is_date32(target) else pa.int64()
            assert typed.view(storage).to_pylist() == want
            assert typed.null_count == raw.count(None)
            assert clamped is want_clamped


def test_date_typing_of_an_empty_column() -> None:
    for target in TARGETS:
        empty = pa.array([], type=pa.timestamp("ns", tz="UTC"))
        typed, clamped = bulkrows._date_typed(empty, target)
        assert typed.type == target
        assert len(typed) == 0
        assert clamped is False


def test_date_typing_ignores_what_lies_under_a_null() -> None:
    # An extreme value under a null slot (Arrow does not define it) is never taken as clamped.
    data = pa.py_buffer(pa.array([INT64_MIN, 5_000, INT64_MAX], type=pa.int64()).buffers()[1])
    validity = pa.array([False, True, False]).buffers()[1]
    decoded = pa.Array.from_buffers(pa.timestamp("ns", tz="UTC"), 3, [validity, data], null_count=2)
    typed, clamped = bulkrows._date_typed(decoded, pa.timestamp("us", tz="UTC"))
    assert clamped is False
    assert typed.to_pylist()[1] == dt.datetime(1970, 1, 1, 0, 0, 0, 5, tzinfo=dt.UTC)
    assert typed.is_null().to_pylist() == [True, False, True]


def _dates_table(rng: random.Random, rows: int, start: int) -> pa.Table:
    low, high = dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999)
    span = int((high - low).total_seconds()) * 1_000_000
    fixed = [
        dt.datetime(1, 1, 1),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        dt.datetime(1677, 9, 21, 0, 12, 43, 145224),
        dt.datetime(1677, 9, 21, 0, 12, 44),
        dt.datetime(2262, 4, 11, 23, 47, 16, 854775),
        dt.datetime(2262, 4, 11, 23, 47, 16, 854776),
        dt.datetime(1970, 1, 1),
    ]

    def one() -> dt.datetime | None:
        pick = rng.random()
        if pick < 0.1:
            return None
        if pick < 0.4:
            return rng.choice(fixed)
        return low + dt.timedelta(microseconds=rng.randrange(span))

    stamps = [one() for _ in range(rows)]
    days = [None if s is None else s.date() for s in (one() for _ in range(rows))]
    return pa.table(
        {
            "id": pa.array(range(start, start + rows), pa.int64()),
            "ts": pa.array(stamps, pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
            "local": pa.array([one() for _ in range(rows)], pa.timestamp("us")).cast(
                pa.timestamp("us", tz="America/New_York")
            ),
            "day": pa.array(days, pa.date32()),
        }
    )


@pytest.mark.parametrize("seed", range(3))
def test_tables_of_several_splits_read_extreme_dates_alike_on_every_path(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    uri = str(tmp_path / "t")
    written = []
    start = 0
    for split in range(4):
        part = _dates_table(rng, rng.randint(50, 400), start)
        start += part.num_rows
        written.append(part)
        write_table(uri, part, mode="append" if split else "overwrite")
    assert len(open_table(uri).files) >= 4
    typed: list[str] = []
    original = bulkrows._date_typed

    def counting(decoded: pa.Array, target: pa.DataType) -> tuple[pa.Array, bool]:
        typed.append(str(target))
        return original(decoded, target)

    monkeypatch.setattr(bulkrows, "_date_typed", counting)
    cut = rng.randrange(start)
    for where in (f"id < {cut}", f"id >= {cut}", "id >= 0"):
        out = {}
        for mode in ("off", "python", "cython"):
            monkeypatch.setenv(impl.IMPL_ENV, mode)
            found = open_table(uri).search(where=where).sort_by("id")
            out[mode] = found
        assert out["python"].equals(out["off"])
        assert out["cython"].equals(out["off"])
    assert {"timestamp[us, tz=UTC]", "date32[day]"} <= set(typed)  # the bulk path typed dates
    # And the rows are the ones written (the Arrow copy keeps any date exactly), in the
    # table's schema (a timestamp's zone is read as UTC, Spark's convention: same instants).
    read = out["cython"]
    every = pa.concat_tables(written).sort_by("id").cast(read.schema)
    assert read.equals(every)
