"""The searchable JSON form of nested values, and the typed values decoded from it."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from indextables.search.read.jsoncodec import (
    ARRAY_KEY,
    RAW_KEY,
    JsonValueError,
    from_json,
    to_json,
    to_json_field,
)

STRUCT = pa.struct(
    [
        pa.field("d", pa.date32()),
        pa.field("dec", pa.decimal128(5, 1)),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("b", pa.binary()),
        pa.field("x", pa.float64()),
    ]
)


@pytest.mark.parametrize(
    ("data_type", "value"),
    [
        (pa.map_(pa.string(), pa.int32()), []),
        (pa.map_(pa.string(), pa.int32()), [("a", None), ("", 0)]),
        (pa.map_(pa.int32(), pa.string()), [(1, "one"), (-2, None)]),
        (pa.map_(pa.date32(), pa.float64()), [(date(9999, 12, 31), -0.0), (date(1, 1, 1), 1.5)]),
        (pa.list_(pa.binary()), [b"x", None, b"\x00\xff"]),
        (pa.list_(pa.string()), []),
        (
            STRUCT,
            {
                "d": date(1, 1, 1),
                "dec": Decimal("-1234.5"),
                "ts": datetime(2020, 1, 1, 0, 0, 0, 123000, tzinfo=UTC),
                "b": b"b'x'",
                "x": -math.inf,
            },
        ),
        (pa.list_(pa.struct([pa.field("t", pa.timestamp("us"))])), [{"t": datetime(1, 1, 1)}]),
    ],
)
def test_values_survive_their_json_form(data_type: pa.DataType, value: Any) -> None:
    """Millisecond-aligned values come back equal, whatever the key and leaf types."""
    assert from_json(data_type, to_json(data_type, value)) == value


def test_non_finite_floats_are_strings_tantivy_keeps() -> None:
    encoded = to_json(pa.list_(pa.float64()), [math.nan, math.inf, -math.inf, -0.0])
    assert encoded[:3] == ["NaN", "Infinity", "-Infinity"]
    assert math.copysign(1.0, encoded[3]) == -1.0
    back = from_json(pa.list_(pa.float64()), encoded)
    assert math.isnan(back[0])
    assert back[1:3] == [math.inf, -math.inf]


def test_binary_is_base64_and_dates_are_epoch_millis_as_the_reference_writes() -> None:
    encoded = to_json(STRUCT, {"d": date(1970, 1, 2), "dec": None, "ts": None, "b": b"x", "x": 1.0})
    assert encoded == {"d": 86_400_000, "dec": None, "ts": None, "b": "eA==", "x": 1.0}


def test_an_empty_map_is_an_empty_object_and_an_old_empty_map_still_reads() -> None:
    map_type = pa.map_(pa.string(), pa.int32())
    assert to_json_field(map_type, [], column="m") == {}
    assert from_json(map_type, {ARRAY_KEY: []}) == []
    assert to_json_field(pa.list_(pa.string()), [], column="a") == {ARRAY_KEY: []}


@pytest.mark.parametrize("text", ["not json", "[1, 2]", "5", "NaN", '{"a": NaN}', ""])
def test_a_json_string_that_is_no_object_is_kept_raw(text: str) -> None:
    assert to_json_field(pa.string(), text, column="j") == {RAW_KEY: text}
    assert from_json(pa.string(), {RAW_KEY: text}) == text


def test_a_json_object_string_is_indexed_as_the_object() -> None:
    assert to_json_field(pa.string(), '{"a": {"b": 1}}', column="j") == {"a": {"b": 1}}


def test_a_value_that_is_no_object_names_the_column() -> None:
    with pytest.raises(JsonValueError, match="'col'"):
        to_json_field(pa.int32(), 5, column="col")


def test_strings_tantivy_took_for_dates_come_back_as_text() -> None:
    stored = datetime(2020, 1, 1, tzinfo=UTC)
    assert from_json(pa.string(), stored) == "2020-01-01T00:00:00Z"


def test_reference_forms_decode() -> None:
    """The reference writes dates and timestamps as epoch milliseconds, binary as base64."""
    assert from_json(pa.date32(), 86_400_000) == date(1970, 1, 2)
    assert from_json(pa.timestamp("us", tz="UTC"), 1_500) == datetime(
        1970, 1, 1, 0, 0, 1, 500000, tzinfo=UTC
    )
    assert from_json(pa.binary(), "AP8=") == b"\x00\xff"
    assert from_json(pa.decimal128(5, 1), "12.25") == Decimal("12.2")
    # Decimals of 29-38 digits, written as JSON doubles: their double's value, not null.
    wide = from_json(pa.decimal128(38, 2), 1.25e32)
    assert wide == Decimal("125000000000000000000000000000000.00")
    assert from_json(pa.decimal128(38, 0), -(10**37)) == -(10**37)


def test_binary_older_versions_wrote_as_python_literals_still_reads() -> None:
    assert from_json(pa.list_(pa.binary()), ["b'x'", "b'\\x00'"]) == [b"x", b"\x00"]
