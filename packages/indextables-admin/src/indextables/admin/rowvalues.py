"""Arrow values as JSON values and as text cells, the same for every output form.

JSON has no NaN, infinities, decimals, dates or bytes, so they are spelled as
strings exactly (``"NaN"``, ``"Infinity"``, ``"-Infinity"``, ``"12.50"``,
``"2024-01-02"``, ISO 8601 instants with their offset, base64 bytes); every
other scalar keeps its JSON type. A map whose keys are strings is an object,
any other map a list of ``{"key": ..., "value": ...}``. A text or CSV cell is
the same value as text; a nested value is its JSON text.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import pyarrow as pa

__all__ = ["cell_text", "json_rows", "json_value"]


def json_value(value: Any) -> Any:
    """One Python value from ``pyarrow``'s ``to_pylist`` as a JSON-compatible value."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(_is_pair(item) for item in value):
        return _map_value(value)
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    return str(value)


def _is_pair(item: Any) -> bool:
    return isinstance(item, tuple) and len(item) == 2


def _map_value(pairs: list[tuple[Any, Any]]) -> Any:
    """A map (``to_pylist`` gives ``[(key, value), ...]``)."""
    if all(isinstance(key, str) for key, _ in pairs):
        return {key: json_value(value) for key, value in pairs}
    return [{"key": json_value(key), "value": json_value(value)} for key, value in pairs]


def json_rows(batch: pa.RecordBatch) -> Iterator[dict[str, Any]]:
    """The rows of ``batch`` as JSON objects (column name -> :func:`json_value`)."""
    names = batch.schema.names
    columns = [_column_values(batch.column(i)) for i in range(batch.num_columns)]
    for row in zip(*columns, strict=True):
        yield dict(zip(names, row, strict=True))


def _column_values(array: pa.Array) -> list[Any]:
    values = array.to_pylist()
    if pa.types.is_map(array.type):
        return [None if v is None else _map_value(v) if v else {} for v in values]
    return [json_value(v) for v in values]


def cell_text(value: Any) -> str:
    """A JSON value (from :func:`json_value`) as one text or CSV cell; null is empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
