"""Type stub of the compiled decoder; the signatures match ``_decode_py`` exactly."""

from collections.abc import Callable, Container, Mapping, Sequence
from typing import Any

from indextables.avrostate._decode_common import Columns, Plan

def scan_block(
    data: bytes,
    count: int,
    plan: Plan,
    pv_cache: dict[Any, tuple[dict[str, str], bool]],
    pv_filter: Callable[[Mapping[str, str]], bool] | None,
    tombstones: Container[str] | None,
    out: Columns,
) -> int: ...
def decode_record(data: bytes, start: int, plan: Plan) -> list[Any]: ...
def map_column(
    data: bytes, starts: Sequence[int], plan: Plan, slot: int, key: str
) -> list[str | None]: ...
def decode_entries(
    data: bytes,
    starts: Sequence[int],
    paths: list[str],
    partition_values: list[dict[str, str]],
    plan: Plan,
    entry_type: type,
) -> list[Any]: ...
def stat_spans(data: bytes, starts: Sequence[int], plan: Plan, key: str) -> bytes: ...
def stat_codes(
    data: bytes,
    spans: bytes,
    literals: list[str],
    compare: Callable[[str, str], int] | None,
    max_len: int,
) -> list[bytes]: ...
