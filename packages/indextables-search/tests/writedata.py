"""Random hostile Arrow data for the write tests, and an exact row comparison.

Shared by the engine's tests and the Spark interop tests (which import it by path).
"""

from __future__ import annotations

import datetime as dt
import math
import random
import struct
from decimal import Decimal
from typing import Any

import pyarrow as pa

UTC = dt.UTC
DAY_MIN, DAY_MAX = dt.date(1, 1, 1), dt.date(9999, 12, 31)
TS_MIN = dt.datetime(1, 1, 1, tzinfo=UTC)
TS_MAX = dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)

DOUBLES = [0.0, -0.0, math.nan, math.inf, -math.inf, 1e308, -1e-308, 5e-324, 1.5, -2.25]
FLOATS = [0.0, -0.0, math.nan, math.inf, -math.inf, 3.4028234663852886e38, 1.401298464324817e-45]
STRINGS = ["", " ", "a", "ü", "日本語", "emoji 😀", "tab\tnew\nline", "x" * 70_000, "a b c"]
INTS = {8: (-(2**7), 2**7 - 1), 16: (-(2**15), 2**15 - 1), 32: (-(2**31), 2**31 - 1)}


def _pick(rng: random.Random, values: list[Any], null_rate: float) -> Any:
    return None if rng.random() < null_rate else rng.choice(values)


def _int(rng: random.Random, bits: int) -> int:
    low, high = INTS.get(bits, (-(2**63), 2**63 - 1))
    return rng.choice([low, high, 0, -1, 1, rng.randint(low, high)])


def _date(rng: random.Random) -> dt.date:
    edges = [DAY_MIN, DAY_MAX, dt.date(1970, 1, 1), dt.date(1969, 12, 31), dt.date(2000, 2, 29)]
    return rng.choice([*edges, DAY_MIN + dt.timedelta(days=rng.randint(0, 3_652_058))])


def _micros(rng: random.Random) -> int:
    epoch, micro = dt.datetime(1970, 1, 1, tzinfo=UTC), dt.timedelta(microseconds=1)
    low, high = (TS_MIN - epoch) // micro, (TS_MAX - epoch) // micro
    return rng.choice([low, high, 0, -1, 1, rng.randint(low, high)])


def _decimal(rng: random.Random) -> Decimal:
    edges = [Decimal("0.00"), Decimal("-0.01"), Decimal("99999999.99"), Decimal("-99999999.99")]
    return rng.choice([*edges, Decimal(rng.randint(-(10**10) + 1, 10**10 - 1)).scaleb(-2)])


def column(rng: random.Random, kind: str, n: int, null_rate: float = 0.2) -> pa.Array:
    """``n`` random values of one of the kinds in :data:`KINDS`."""

    def some(make: Any) -> list[Any]:
        return [None if rng.random() < null_rate else make() for _ in range(n)]

    if kind == "string":
        return pa.array(some(lambda: rng.choice(STRINGS) + str(rng.randint(0, 5))), pa.string())
    if kind == "binary":
        return pa.array(some(lambda: rng.randbytes(rng.randint(0, 40))), pa.binary())
    if kind == "bool":
        return pa.array(some(lambda: rng.random() < 0.5), pa.bool_())
    if kind in ("int8", "int16", "int32", "int64"):
        bits = int(kind[3:])
        return pa.array(some(lambda: _int(rng, bits)), getattr(pa, kind)())
    if kind == "double":
        return pa.array(some(lambda: rng.choice([*DOUBLES, rng.uniform(-1e6, 1e6)])), pa.float64())
    if kind == "float":
        return pa.array(some(lambda: rng.choice([*FLOATS, rng.uniform(-1e3, 1e3)])), pa.float32())
    if kind == "date":
        return pa.array(some(lambda: _date(rng)), pa.date32())
    if kind == "timestamp":
        return pa.array(some(lambda: _micros(rng)), pa.timestamp("us", tz="UTC"))
    if kind == "timestamp_ntz":
        return pa.array(some(lambda: _micros(rng)), pa.timestamp("us"))
    if kind == "decimal":
        return pa.array(some(lambda: _decimal(rng)), pa.decimal128(10, 2))
    if kind == "array":
        return pa.array(
            some(lambda: [_pick(rng, [1, -1, 2**40, 0], 0.2) for _ in range(rng.randint(0, 4))]),
            pa.list_(pa.int64()),
        )
    if kind == "map":
        return pa.array(
            some(
                lambda: [(f"k{i}", _pick(rng, STRINGS[:7], 0.3)) for i in range(rng.randint(0, 3))]
            ),
            pa.map_(pa.string(), pa.string()),
        )
    if kind == "struct":
        kind_of = pa.struct(
            [
                ("d", pa.float64()),
                ("n", pa.decimal128(12, 3)),
                ("tags", pa.list_(pa.string())),
                ("when", pa.timestamp("us", tz="UTC")),
            ]
        )
        return pa.array(
            some(
                lambda: {
                    "d": _pick(rng, DOUBLES, 0.2),
                    "n": None if rng.random() < 0.2 else _decimal(rng),
                    "tags": [rng.choice(STRINGS[:7]) for _ in range(rng.randint(0, 2))],
                    "when": None if rng.random() < 0.2 else _micros(rng),
                }
            ),
            kind_of,
        )
    raise ValueError(kind)


def partition_column(rng: random.Random, kind: str, n: int, null_rate: float = 0.15) -> pa.Array:
    """Like :func:`column`; strings cut to 40 characters (a 70 kB value cannot name a
    directory, in Spark's writes neither)."""
    values = column(rng, kind, n, null_rate)
    if kind != "string":
        return values
    return pa.array([None if v is None else v[:40] for v in values.to_pylist()], pa.string())


#: Kinds a top-level (indexed) column may have.
KINDS = (
    "string",
    "binary",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "double",
    "float",
    "date",
    "timestamp",
    "timestamp_ntz",
    "array",
    "map",
    "struct",
)
#: Kinds a partition column may have.
PARTITION_KINDS = (
    "string",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "double",
    "float",
    "date",
    "timestamp",
    "timestamp_ntz",
    "decimal",
)


def random_table(seed: int, n: int, kinds: tuple[str, ...] = KINDS) -> pa.Table:
    """A table with one column ``c_<kind>`` per kind and an ``id`` column."""
    rng = random.Random(seed)
    columns = {"id": pa.array(range(n), pa.int64())}
    for kind in kinds:
        columns[f"c_{kind}"] = column(rng, kind, n)
    return pa.table(columns)


def canonical(value: Any) -> Any:
    """A hashable, exact form of a value: floats by their bits (one NaN), maps as tuples."""
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else ("f", struct.pack(">d", value))
    if isinstance(value, dict):
        return tuple(sorted((k, canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(canonical(v) for v in value)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return ("ts", value.astimezone(UTC).replace(tzinfo=None))
    return value


def row_multiset(rows: list[dict[str, Any]]) -> list[Any]:
    """Rows in a canonical order (compare two of these for multiset equality)."""
    return sorted((canonical(r) for r in rows), key=repr)
