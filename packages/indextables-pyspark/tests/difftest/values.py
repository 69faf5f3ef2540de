"""Value pools per Spark type: ordinary values that repeat (so filters hit), and hostile ones.

Every generator takes a :class:`random.Random` and returns a Python value that
``spark.createDataFrame`` accepts for the type. Nulls are decided by the
caller (:func:`value_for`), at every nesting level.
"""

from __future__ import annotations

import random
import struct
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

NAN = float("nan")
# NaN with its sign bit set: Spark and Arrow keep it (Parquet writes it as NaN); Tantivy
# orders it below -inf, Spark with every NaN above every number.
NEGATIVE_NAN: float = struct.unpack(">d", bytes.fromhex("fff8000000000000"))[0]
# NaNs of other bits, each NaN to Spark: signaling (quiet bit clear; R's NA_real_), signaling
# with the sign bit set, a quiet one with a payload. A float keeps none of them (a Python
# float narrowed to 32 bits comes out quiet): doubles only.
NAN_PAYLOADS: tuple[float, ...] = tuple(
    struct.unpack(">d", bytes.fromhex(bits))[0]
    for bits in ("7ff00000000007a2", "fff0000000000123", "7ff8000000000001")
)
INF = float("inf")

# Tantivy query syntax characters, whitespace and LIKE wildcards.
SYNTAX = "+-&|!(){}[]^\"~*?:\\/ \t\n%_'"
UNICODE = "éÅßжλ日本語한"
ASTRAL = "\U0001d11e\U0001f600\U00010348"
ALPHABET = "abcAB01" + SYNTAX + UNICODE + ASTRAL

# Strings around the 32-character statistics truncation, sharing a prefix.
PREFIX32 = "truncation-boundary-0123456789ab"  # exactly 32 characters
HUGE_SIZE = 100_003


def _int_range(data_type: DataType) -> tuple[int, int]:
    bits = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}[data_type.simpleString()]
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def integer(rng: random.Random, data_type: DataType) -> int:
    low, high = _int_range(data_type)
    pick = rng.random()
    if pick < 0.15:
        return rng.choice([low, high, low + 1, high - 1, 0, -1, 1])
    if pick < 0.8:
        return rng.randint(-5, 5)
    return rng.randint(low, high)


def to_float32(x: float) -> float:
    """The nearest float32 value, as a Python float (NaN, infinities and -0.0 kept)."""
    value: float = struct.unpack(">f", struct.pack(">f", x))[0]
    return value


def floating(rng: random.Random, data_type: DataType) -> float:
    single = isinstance(data_type, FloatType)
    largest = 3.4028234663852886e38 if single else 1.7976931348623157e308
    tiny = 1.401298464324817e-45 if single else 5e-324
    pick = rng.random()
    if pick < 0.35:
        value = rng.choice(
            [NAN, NEGATIVE_NAN, INF, -INF, -0.0, 0.0, -0.0, 0.0, largest, -largest, tiny, -tiny]
            + ([] if single else list(NAN_PAYLOADS))
        )
    elif pick < 0.75:
        value = rng.choice([-2.5, -1.0, 0.5, 1.0, 1.5, 2.0, 3.0, 1e10, 2.0**53, 2.0**53 + 2])
    else:
        value = rng.uniform(-1e6, 1e6)
    return to_float32(value) if single else value


def _random_text(rng: random.Random, low: int, high: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(low, high)))


def huge_string(rng: random.Random) -> str:
    """A string of 100 KB and more (well past Tantivy's ~64 KiB term limit)."""
    head = rng.choice(["", "a", "ab", "huge "])
    return head + rng.choice("xyé") * HUGE_SIZE + rng.choice(["", "z", "\n"])


def string(rng: random.Random, *, allow_huge: bool = True) -> str:
    pick = rng.random()
    if pick < 0.25:
        return rng.choice(
            [
                "",
                " ",
                "a",
                "ab",
                "abc",
                "A",
                "ab\ncd",
                "ab\n",
                "a b",
                "10",
                "9",
                "-1",
                "1e3",
                "NaN",
                "null",
                "%",
                "_",
                "a%b_c",
                "é",
                "\U0001f600",
                "日本",
                "x:y",
                'q"uote',
                "back\\slash",
                "it's",
                "(a OR b)",
                "AND",
                "*",
            ]
        )
    if pick < 0.32:
        return PREFIX32 + rng.choice(["", "c", "cd", "z", "\n", "\U0001f600"])
    if pick < 0.34 and allow_huge:
        return huge_string(rng)
    if pick < 0.6:
        return rng.choice(["alpha", "beta", "gamma", "delta"]) + rng.choice(["", " x", "\ny", "-1"])
    return _random_text(rng, 0, 24)


def text(rng: random.Random) -> str:
    """Sentences for tokenized (text) columns: words, syntax characters, long tokens."""
    words = ["timeout", "error", "ok", "Request", "request", "日本語", "x" * 45, "a-b", "c:d"]
    count = rng.randint(0, 5)
    if rng.random() < 0.2:
        return string(rng, allow_huge=False)
    return " ".join(rng.choice(words) for _ in range(count))


_DATE_EDGES = [
    date(1, 1, 1),
    date(9999, 12, 31),
    date(1677, 9, 21),
    date(1677, 9, 20),
    date(2262, 4, 11),
    date(2262, 4, 12),
    date(1582, 10, 4),
    date(1582, 10, 15),
    date(1969, 12, 31),
    date(1970, 1, 1),
]
_DATE_COMMON = [date(2024, 1, 1), date(2024, 1, 2), date(2024, 2, 29), date(2000, 1, 1)]


def day(rng: random.Random, *, extreme: bool = True) -> date:
    pick = rng.random()
    if pick < 0.25 and extreme:
        return rng.choice(_DATE_EDGES)
    if pick < 0.7:
        return rng.choice(_DATE_COMMON)
    return date(1900, 1, 1) + timedelta(days=rng.randint(0, 73_000))


_TS_EDGES = [
    datetime(1, 1, 1),
    datetime(9999, 12, 31, 23, 59, 59, 999_999),
    datetime(1677, 9, 21, 0, 12, 43, 145_224),
    datetime(1677, 9, 21, 0, 12, 43, 145_225),
    datetime(1677, 9, 21, 0, 12, 43),
    datetime(2262, 4, 11, 23, 47, 16, 854_775),
    datetime(2262, 4, 11, 23, 47, 16, 854_776),
    datetime(1969, 12, 31, 23, 59, 59, 999_999),
    datetime(1970, 1, 1),
]
_TS_COMMON = [
    datetime(2024, 1, 1),
    datetime(2024, 1, 1, 0, 0, 0, 500_000),
    datetime(2024, 1, 1, 0, 0, 0, 1),
    datetime(2024, 1, 1, 0, 0, 1),
    datetime(2024, 3, 10, 2, 30),
]


def moment(rng: random.Random, *, aware: bool, extreme: bool = True) -> datetime:
    """A timestamp: UTC-aware for TIMESTAMP, naive for TIMESTAMP_NTZ."""
    pick = rng.random()
    if pick < 0.25 and extreme:
        value = rng.choice(_TS_EDGES)
    elif pick < 0.7:
        value = rng.choice(_TS_COMMON)
    else:
        value = datetime(1900, 1, 1) + timedelta(microseconds=rng.randint(0, 6_000_000_000_000_000))
    return value.replace(tzinfo=UTC) if aware else value


def value_for(
    rng: random.Random, data_type: DataType, null_rate: float, *, extreme: bool = True
) -> Any:
    """A random value (or null, at ``null_rate``) of ``data_type``, nested types included.

    ``extreme``: dates and timestamps may lie outside 1677-09-21 .. 2262-04-11.
    """
    if rng.random() < null_rate:
        return None
    return _non_null(rng, data_type, null_rate, extreme)


def _non_null(rng: random.Random, data_type: DataType, null_rate: float, extreme: bool) -> Any:
    if isinstance(data_type, (ByteType, ShortType, IntegerType, LongType)):
        return integer(rng, data_type)
    if isinstance(data_type, (FloatType, DoubleType)):
        return floating(rng, data_type)
    if isinstance(data_type, BooleanType):
        return rng.random() < 0.5
    if isinstance(data_type, StringType):
        return string(rng)
    if isinstance(data_type, DateType):
        return day(rng, extreme=extreme)
    if isinstance(data_type, TimestampNTZType):
        return moment(rng, aware=False, extreme=extreme)
    if isinstance(data_type, TimestampType):
        return moment(rng, aware=True, extreme=extreme)
    if isinstance(data_type, BinaryType):
        return rng.choice([b"", b"x", b"\x00\xff", bytes(rng.randrange(256) for _ in range(5))])
    if isinstance(data_type, DecimalType):
        scale = data_type.scale
        digits = rng.randint(0, 10 ** (data_type.precision - scale) - 1)
        return Decimal(rng.choice([-1, 1]) * digits).scaleb(-scale) if digits else Decimal(0)
    if isinstance(data_type, ArrayType):
        size = rng.choice([0, 0, 1, 2, 3])
        return [_nested(rng, data_type.elementType, null_rate, extreme) for _ in range(size)]
    if isinstance(data_type, MapType):
        size = rng.choice([0, 0, 1, 2, 3])
        # dict.fromkeys, not a set: the order (and so the draws) must not depend on hashing.
        keys = dict.fromkeys(_non_null(rng, data_type.keyType, 0.0, extreme) for _ in range(size))
        return {k: _nested(rng, data_type.valueType, null_rate, extreme) for k in keys}
    if isinstance(data_type, StructType):
        return tuple(_nested(rng, f.dataType, null_rate, extreme) for f in data_type.fields)
    raise TypeError(f"no generator for {data_type.simpleString()}")


def _nested(rng: random.Random, data_type: DataType, null_rate: float, extreme: bool) -> Any:
    """Values inside nested types: short strings (no huge ones), nulls too."""
    if rng.random() < null_rate:
        return None
    if isinstance(data_type, StringType):
        return string(rng, allow_huge=False)
    return _non_null(rng, data_type, null_rate, extreme)


def partition_pool(data_type: DataType, *, null: bool) -> list[Any]:
    """The values of a partition column: null (when ``null``), '' for strings, signed zeros, NaN."""
    pool: list[Any] = [None] if null else []
    if isinstance(data_type, StringType):
        pool += ["", "a", "b/c", "x=y", "é \U0001f600", "%20", " "]
    elif isinstance(data_type, (FloatType, DoubleType)):
        pool += [-0.0, 0.0, NAN, 1.5, -INF]
    elif isinstance(data_type, BooleanType):
        pool += [True, False]
    elif isinstance(data_type, (ByteType, ShortType, IntegerType, LongType)):
        low, high = _int_range(data_type)
        pool += [0, -1, 7, low, high]
    elif isinstance(data_type, DateType):
        pool += [date(2024, 1, 1), date(1, 1, 1), date(9999, 12, 31), date(1969, 12, 31)]
    elif isinstance(data_type, TimestampNTZType):
        pool += [datetime(2024, 1, 1, 12), datetime(2024, 1, 1, 0, 0, 0, 123_456)]
    elif isinstance(data_type, TimestampType):
        pool += [
            datetime(2024, 1, 1, 12, tzinfo=UTC),
            datetime(2024, 1, 1, 0, 0, 0, 123_456, tzinfo=UTC),
        ]
    return pool
