"""Partition values: which types may partition, their log strings and their typed values.

A split's partition values are strings in the log (``AddAction.partitionValues``),
one per partition column; ``null`` records a null value. The writer routes
rows by the *exact* value (every bit of a double, every microsecond of a
timestamp), so each row lands in exactly one split, and records the value in
the reference implementation's canonical form:

* integers: decimal digits; booleans: ``true`` / ``false``;
* doubles and floats: Java's ``Double.toString`` / ``Float.toString``
  (``0.0``, ``-0.0``, ``NaN``, ``Infinity``, ``1.0E10``, ``1.0E-5``);
* decimals: ``BigDecimal.toString`` (scientific below ``1E-6``, as Python's
  ``str(Decimal)``);
* dates: ``yyyy-MM-dd``;
* timestamps: the UTC instant, ``yyyy-MM-ddTHH:mm:ss[.SSS|.SSSSSS]Z`` (Java's
  ``Instant.toString``), whatever the writer's session time zone;
* timestamp_ntz (no reference form): ``yyyy-MM-ddTHH:mm:ss[.SSS|.SSSSSS]``;
* strings: the string itself.

Reading, an empty string is null for every type, as Spark's Parquet
partitions return an empty string partition value (and as the protocol's
partition predicates treat it).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.errors import OptionError
from indextables.search.schema import columntypes as ct


def partitionable(t: pa.DataType) -> bool:
    """Whether a column of this type may partition a table (it has a log string form)."""
    return ct.is_scalar(t) and not ct.is_binary(t)


_EPOCH = datetime(1970, 1, 1)
_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def check_partition_types(columns: Sequence[str], schema: pa.Schema) -> None:
    """Refuse partition columns of types that have no partition value form.

    Raises:
        OptionError: naming the first such column and its type.
    """
    types = {f.name: f.type for f in schema}
    for column in columns:
        data_type = types.get(column)
        if data_type is not None and not partitionable(data_type):
            raise OptionError(
                f"partitionBy column {column!r} has type {ct.type_name(data_type)}, which "
                "cannot partition a table (allowed: string, byte, short, int, long, float, "
                "double, boolean, date, timestamp, timestamp_ntz, decimal)"
            )


# -- writing ---------------------------------------------------------------------------


def partition_codes(column: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, list[str | None]]:
    """Each row's partition value as a code into a list of log strings.

    Rows share a code only when their values are identical bit for bit
    (``-0.0`` and ``0.0`` differ, every NaN is one value), so no row is
    routed to two partitions and none is lost.
    """
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    exact = _exact_view(array)
    encoded = pc.dictionary_encode(exact, null_encoding="encode")
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    strings = [log_string_of_arrow(v, array.type) for v in _typed(encoded.dictionary, array.type)]
    return encoded.indices, strings


def _exact_view(array: pa.Array) -> pa.Array:
    """The array with values that compare equal only when identical (floats by their bits)."""
    kind = array.type
    if pa.types.is_float64(kind):
        return array.view(pa.int64())
    if pa.types.is_float32(kind):
        return array.view(pa.int32())
    if pa.types.is_float16(kind):
        return array.cast(pa.float32()).view(pa.int32())
    if pa.types.is_timestamp(kind):
        return array.cast(pa.timestamp("us", tz=kind.tz)).view(pa.int64())
    return array


def _typed(dictionary: pa.Array, kind: pa.DataType) -> list[Any]:
    """The dictionary of :func:`_exact_view` codes as Python values of the column."""
    if pa.types.is_floating(kind):
        width = pa.float64() if pa.types.is_float64(kind) else pa.float32()
        return list(dictionary.view(width).to_pylist())
    return list(dictionary.to_pylist())  # timestamps stay integer microseconds


def log_string_of_arrow(value: Any, kind: pa.DataType) -> str | None:
    """The log string of one value of an Arrow column of type ``kind`` (None for null)."""
    if value is None:
        return None
    if pa.types.is_timestamp(kind):
        micros = value if isinstance(value, int) else _micros(value)
        return timestamp_string(micros, utc=kind.tz is not None)
    if pa.types.is_float32(kind) or pa.types.is_float16(kind):
        return java_float_string(value)
    return log_string(value)


def log_string(value: Any) -> str | None:
    """The log string of a Python value as Spark hands it over (None for null).

    Timezone-aware datetimes are Spark timestamps, naive ones timestamp_ntz
    values; Python floats are doubles.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_string(value)
    if isinstance(value, datetime):
        return timestamp_string(_micros(value), utc=value.tzinfo is not None)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def _micros(value: datetime) -> int:
    if value.tzinfo is None:
        return (value - _EPOCH) // _MICRO
    return (value - _EPOCH_UTC) // _MICRO


def timestamp_string(micros: int, *, utc: bool) -> str:
    """``yyyy-MM-ddTHH:mm:ss[.SSS|.SSSSSS]`` for microseconds since the epoch, ``Z`` if ``utc``."""
    moment = _EPOCH + timedelta(microseconds=micros)
    text = (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )
    fraction = moment.microsecond
    if fraction % 1000 == 0 and fraction:
        text += f".{fraction // 1000:03d}"
    elif fraction:
        text += f".{fraction:06d}"
    return text + ("Z" if utc else "")


def java_double_string(value: float) -> str:
    """A double as Java's ``Double.toString`` writes it (shortest round-trip digits)."""
    return _java_string(value, repr(float(value)))


def java_float_string(value: float) -> str:
    """A float (single precision) as Java's ``Float.toString`` writes it."""
    if math.isnan(value) or math.isinf(value) or value == 0:
        return _java_string(value, "")
    single = _to_float32(value)
    for digits in range(1, 10):
        text = f"{single:.{digits - 1}e}"
        if _to_float32(float(text)) == single:
            return _java_string(single, text)
    return _java_string(single, repr(single))


def _to_float32(value: float) -> float:
    packed: float = struct.unpack("f", struct.pack("f", value))[0]
    return packed


def _java_string(value: float, shortest: str) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    if len(Decimal(shortest).normalize().as_tuple().digits) == 1:
        # Java considers two digits when one suffices and keeps the closer (4.9E-324).
        shortest = f"{abs(value):.1e}"
    parts = Decimal(shortest.lstrip("-")).as_tuple()
    digits = "".join(str(d) for d in parts.digits).rstrip("0") or "0"
    # value = 0.<digits> x 10**point
    point = len(parts.digits) + int(parts.exponent)
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


# -- reading ---------------------------------------------------------------------------


def partition_column(value: str | None, arrow_type: pa.DataType, length: int) -> pa.Array:
    """A constant column of ``length`` rows holding the log string ``value`` read as its type."""
    typed = arrow_value(value, arrow_type)
    if typed is None:
        return pa.nulls(length, type=arrow_type)
    return pa.repeat(pa.scalar(typed, type=arrow_type), length)


def arrow_value(text: str | None, arrow_type: pa.DataType) -> Any:
    """The Python value of a log string for an Arrow column of ``arrow_type`` (None: null)."""
    if text is None or text == "":
        return None
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return text
    if pa.types.is_boolean(arrow_type):
        return _boolean(text)
    if pa.types.is_integer(arrow_type):
        return int(text)
    if pa.types.is_floating(arrow_type):
        return float(text)
    if pa.types.is_date(arrow_type):
        return date.fromisoformat(text)
    if pa.types.is_timestamp(arrow_type):
        moment = parse_timestamp(text, utc=arrow_type.tz is not None)
        return moment if arrow_type.tz is None else moment.astimezone(UTC)
    if pa.types.is_decimal(arrow_type):
        return Decimal(text)
    return pa.scalar(text).cast(arrow_type).as_py()


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError(f"not a boolean partition value: {text!r}")
    return lowered == "true"


def parse_timestamp(text: str, *, utc: bool) -> datetime:
    """A timestamp log string as a datetime: aware (UTC) if ``utc``, else naive.

    Accepts the canonical forms, the ``yyyy-MM-dd HH:mm:ss`` form and ISO
    strings with an offset (older writers); a string without an offset is
    read as UTC for timestamps.
    """
    moment = datetime.fromisoformat(text.strip())
    if utc:
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


def spark_value(text: str | None, data_type: pa.DataType) -> Any:
    """The value Spark compares for a log string of a ``data_type`` column (None: null).

    Raises:
        ValueError: the string is not a value of that type.
    """
    if text is None or text == "":
        return None
    if ct.is_string(data_type):
        return text
    if ct.is_boolean(data_type):
        return _boolean(text)
    if ct.is_integral(data_type):
        return int(text)
    if ct.is_float32(data_type):
        return _to_float32(float(text))
    if ct.is_floating(data_type):
        return float(text)
    if ct.is_date(data_type):
        return date.fromisoformat(text)
    if ct.is_timestamp(data_type):
        return parse_timestamp(text, utc=True)
    if ct.is_timestamp_ntz(data_type):
        return parse_timestamp(text, utc=False)
    if ct.is_decimal(data_type):
        try:
            return Decimal(text)
        except InvalidOperation as error:
            raise ValueError(text) from error
    raise ValueError(f"no partition values of type {ct.type_name(data_type)}")
