"""Exact row normalisation and multiset differences.

Values are compared exactly as stored, not with Spark's equality: ``-0.0`` and
``0.0`` differ (their bit patterns are compared), every NaN is one value, a
timestamp keeps its microseconds, a decimal its scale, and map entries are
compared as an unordered set.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    DataType,
    DoubleType,
    FloatType,
    MapType,
    StructType,
)

Row = tuple[Any, ...]


def normalize(value: Any, data_type: DataType) -> Any:
    """A hashable, exact form of one value of ``data_type`` (as Arrow's ``to_pylist`` gives it)."""
    if value is None:
        return None
    if isinstance(data_type, (DoubleType, FloatType)):
        if value != value:
            return ("float", "NaN")
        return ("float", struct.pack(">d", value).hex())
    if isinstance(data_type, StructType):
        if isinstance(value, Mapping):
            items = [value.get(f.name) for f in data_type.fields]
        else:
            items = list(value)
        return tuple(normalize(v, f.dataType) for v, f in zip(items, data_type.fields, strict=True))
    if isinstance(data_type, MapType):
        pairs = value.items() if isinstance(value, Mapping) else value
        entries = [
            (normalize(k, data_type.keyType), normalize(v, data_type.valueType)) for k, v in pairs
        ]
        return ("map", tuple(sorted(entries, key=repr)))
    if isinstance(data_type, ArrayType):
        return tuple(normalize(v, data_type.elementType) for v in value)
    if isinstance(value, datetime):
        return ("ts", value.isoformat())
    if isinstance(value, date):
        return ("date", value.isoformat())
    if isinstance(value, Decimal):
        return ("dec", str(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ("bin", bytes(value).hex())
    return value


def normalize_rows(
    records: Iterable[Mapping[str, Any]], columns: Sequence[str], types: Sequence[DataType]
) -> Counter[Row]:
    """The multiset of normalised rows (``records`` as from ``pyarrow.Table.to_pylist``)."""
    return Counter(
        tuple(normalize(r[c], t) for c, t in zip(columns, types, strict=True)) for r in records
    )


@dataclass(frozen=True)
class Difference:
    """How a result differs from the expected multiset."""

    missing: tuple[tuple[Row, int], ...]  # expected rows not returned (with counts)
    extra: tuple[tuple[Row, int], ...]  # returned rows not expected (with counts)
    expected_rows: int
    returned_rows: int

    @property
    def empty(self) -> bool:
        return not self.missing and not self.extra

    def summary(self, columns: Sequence[str], examples: int = 2) -> str:
        def show(rows: tuple[tuple[Row, int], ...]) -> str:
            shown = [
                f"{count}x " + _short(dict(zip(columns, row, strict=True)))
                for row, count in rows[:examples]
            ]
            return "; ".join(shown)

        parts = [f"expected {self.expected_rows} rows, got {self.returned_rows}"]
        if self.missing:
            parts.append(f"missing {sum(c for _, c in self.missing)}: {show(self.missing)}")
        if self.extra:
            parts.append(f"extra {sum(c for _, c in self.extra)}: {show(self.extra)}")
        return " | ".join(parts)


def _short(value: Any, limit: int = 400) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"...({len(text)} chars)"


def difference(expected: Counter[Row], returned: Counter[Row]) -> Difference:
    missing = expected - returned
    extra = returned - expected
    return Difference(
        tuple(sorted(missing.items(), key=repr)),
        tuple(sorted(extra.items(), key=repr)),
        sum(expected.values()),
        sum(returned.values()),
    )
