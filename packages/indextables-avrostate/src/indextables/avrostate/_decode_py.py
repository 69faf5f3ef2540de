"""Pure-Python FileEntry decoder: the readable reference twin of ``_decode.pyx``.

Both modules expose the same functions with the same behaviour (checked by
tests on randomized and hostile bytes):

* :func:`scan_block` decodes the planning slots of every record of a block
  into :class:`~indextables.avrostate._decode_common.Columns`, dropping
  tombstoned paths and entries whose partition values fail ``pv_filter``;
* :func:`decode_record` decodes every slot of one record;
* :func:`map_column` reads one key of a map slot (min/max statistics) for many
  records without building the maps;
* :func:`decode_entries` builds FileEntry objects for many records;
* :func:`stat_spans` locates one column's min and max statistics in many
  records, and :func:`stat_codes` orders them against literals (data skipping).

Malformed bytes raise :class:`~indextables.avrostate._decode_common.DecodeError`.
"""

from __future__ import annotations

import dataclasses
import re
import struct
from collections.abc import Callable, Container, Mapping, Sequence
from typing import Any, Final

from indextables.avrostate._decode_common import (
    DEFAULTS,
    K_BOOL,
    K_DOUBLE,
    K_ENUM,
    K_FIXED,
    K_FLOAT,
    K_GMAP,
    K_LONG,
    K_MAP,
    K_NULL,
    K_RECORD,
    K_STR,
    K_UNION,
    SLOT_ADDED_AT_VERSION,
    SLOT_FOOTER_END,
    SLOT_FOOTER_START,
    SLOT_MAX_VALUES,
    SLOT_MIN_VALUES,
    SLOT_NUM_RECORDS,
    SLOT_PARTITION_VALUES,
    SLOT_PATH,
    SLOT_SIZE,
    Columns,
    DecodeError,
    FieldOp,
    Plan,
    UnsafePathDecodeError,
    as_number,
    path_problem,
)

__all__ = [
    "decode_entries",
    "decode_record",
    "map_column",
    "scan_block",
    "stat_codes",
    "stat_spans",
]

_MASK64 = (1 << 64) - 1
_EMPTY: dict[str, str] = {}


def _long(data: bytes, pos: int) -> tuple[int, int]:
    shift = 0
    n = 0
    end = len(data)
    while True:
        if pos >= end:
            raise DecodeError(f"truncated varint at {pos}")
        byte = data[pos]
        pos += 1
        n |= (byte & 0x7F) << shift
        if not byte & 0x80:
            n &= _MASK64
            return (n >> 1) ^ -(n & 1), pos
        shift += 7
        if shift > 63:
            raise DecodeError(f"varint longer than 10 bytes at {pos}")


def _span(data: bytes, pos: int) -> tuple[int, int]:
    """Return the ``[start, end)`` of a length-prefixed byte run."""
    size, pos = _long(data, pos)
    if size < 0 or pos + size > len(data):
        raise DecodeError(f"bad length {size} at {pos}")
    return pos, pos + size


def _text(data: bytes, start: int, end: int) -> str:
    try:
        return data[start:end].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"invalid UTF-8 at {start}") from exc


def _str(data: bytes, pos: int) -> tuple[str, int]:
    start, end = _span(data, pos)
    return _text(data, start, end), end


def _block_count(data: bytes, pos: int) -> tuple[int, int]:
    count, pos = _long(data, pos)
    if count < 0:
        _, pos = _long(data, pos)  # the block's byte size: not needed
        count = -count
    if count > len(data):
        raise DecodeError(f"implausible item count {count} at {pos}")
    return count, pos


def _skip(data: bytes, pos: int, tree: tuple[Any, ...]) -> int:
    kind, arg = tree
    if kind == K_NULL:
        return pos
    if kind in (K_LONG, K_ENUM):
        return _long(data, pos)[1]
    if kind == K_STR:
        return _span(data, pos)[1]
    if kind == K_BOOL:
        return _fixed(data, pos, 1)
    if kind == K_FLOAT:
        return _fixed(data, pos, 4)
    if kind == K_DOUBLE:
        return _fixed(data, pos, 8)
    if kind == K_FIXED:
        return _fixed(data, pos, arg)
    if kind == K_UNION:
        branch, pos = _long(data, pos)
        if branch < 0 or branch >= len(arg):
            raise DecodeError(f"union branch {branch} out of range at {pos}")
        return _skip(data, pos, arg[branch])
    if kind == K_RECORD:
        for field in arg:
            pos = _skip(data, pos, field)
        return pos
    return _skip_items(data, pos, arg, 2 if kind == K_GMAP else 1)


def _fixed(data: bytes, pos: int, size: int) -> int:
    if pos + size > len(data):
        raise DecodeError(f"truncated at {pos}")
    return pos + size


def _skip_items(data: bytes, pos: int, item: tuple[Any, ...], arity: int) -> int:
    while True:
        count, pos = _block_count(data, pos)
        if count == 0:
            return pos
        for _ in range(count):
            if arity == 2:
                pos = _span(data, pos)[1]
            pos = _skip(data, pos, item)


def _map(data: bytes, pos: int) -> tuple[dict[str, str], int]:
    out: dict[str, str] = {}
    while True:
        count, pos = _block_count(data, pos)
        if count == 0:
            return out, pos
        for _ in range(count):
            key, pos = _str(data, pos)
            out[key], pos = _str(data, pos)


def _array(data: bytes, pos: int) -> tuple[tuple[str, ...], int]:
    out: list[str] = []
    while True:
        count, pos = _block_count(data, pos)
        if count == 0:
            return tuple(out), pos
        for _ in range(count):
            item, pos = _str(data, pos)
            out.append(item)


def _value(data: bytes, pos: int, kind: int) -> tuple[Any, int]:
    if kind == K_STR:
        return _str(data, pos)
    if kind == K_LONG:
        return _long(data, pos)
    if kind == K_BOOL:
        end = _fixed(data, pos, 1)
        return data[pos] != 0, end
    if kind == K_MAP:
        return _map(data, pos)
    return _array(data, pos)


def _branch(data: bytes, pos: int, op: FieldOp) -> tuple[bool, int]:
    """Read a union index: ``(holds a value, new position)``."""
    branch, pos = _long(data, pos)
    if branch < 0 or branch >= op.n_branches:
        raise DecodeError(f"union branch {branch} out of range at {pos}")
    return branch == op.value_branch, pos


def _partition_values(
    data: bytes,
    pos: int,
    cache: dict[Any, tuple[dict[str, str], bool]],
    pv_filter: Callable[[Mapping[str, str]], bool] | None,
) -> tuple[dict[str, str], bool, int]:
    """Decode (or fetch from cache, keyed by raw bytes) a partition map and its filter verdict."""
    start = pos
    end = _skip_items(data, pos, (K_STR, None), 2)
    raw = data[start:end]
    hit = cache.get(raw)
    if hit is None:
        values = _map(data, start)[0]
        hit = (values, True if pv_filter is None else bool(pv_filter(values)))
        cache[raw] = hit
    return hit[0], hit[1], end


def scan_block(
    data: bytes,
    count: int,
    plan: Plan,
    pv_cache: dict[Any, tuple[dict[str, str], bool]],
    pv_filter: Callable[[Mapping[str, str]], bool] | None,
    tombstones: Container[str] | None,
    out: Columns,
) -> int:
    """Decode the planning slots of ``count`` records; return how many were kept.

    The path is decoded last, only for records the partition filter keeps
    (most records of a pruned read never become strings); it must be a safe
    table-relative path (else ``UnsafePathDecodeError``), and tombstones are
    checked then.
    """
    pos = 0
    kept = 0
    for _ in range(count):
        start = pos
        keep = True
        path_span: tuple[int, int] | None = None
        row: list[Any] = [None, _EMPTY, None, None, None, None, 0]
        for op in plan:
            if op.slot < 0 or not op.eager or not keep:
                pos = _skip(data, pos, op.skip)
                continue
            if op.n_branches:
                present, pos = _branch(data, pos, op)
                if not present:
                    continue
            if op.slot == SLOT_PARTITION_VALUES:
                row[1], keep, pos = _partition_values(data, pos, pv_cache, pv_filter)
                continue
            if op.slot == SLOT_PATH:
                path_span = _span(data, pos)
                pos = path_span[1]
                continue
            row[_ROW_INDEX[op.slot]], pos = _value(data, pos, op.kind)
        if keep and path_span is not None:
            row[0] = _text(data, *path_span)
            problem = path_problem(row[0])
            if problem is not None:
                raise UnsafePathDecodeError(row[0], problem)
            keep = not (tombstones and row[0] in tombstones)
        if keep:
            _append(out, row, start, pos)
            kept += 1
    if pos != len(data):
        raise DecodeError(f"block has {len(data) - pos} trailing bytes")
    return kept


_ROW_INDEX = {
    SLOT_SIZE: 2,
    SLOT_NUM_RECORDS: 3,
    SLOT_FOOTER_START: 4,
    SLOT_FOOTER_END: 5,
    SLOT_ADDED_AT_VERSION: 6,
}


_NULLABLE = ("sizes", "num_records", "footer_starts", "footer_ends")


def _append(out: Columns, row: list[Any], start: int, end: int) -> None:
    index = len(out.paths)
    out.paths.append(row[0])
    out.partition_values.append(row[1])
    for name, value in zip(_NULLABLE, row[2:6], strict=True):
        if value is None:
            out.nulls.setdefault(name, []).append(index)
        getattr(out, name).append(0 if value is None else value)
    out.added_at_versions.append(row[6])
    out.starts.append(start)
    out.ends.append(end)


def decode_record(data: bytes, start: int, plan: Plan) -> list[Any]:
    """Decode every FileEntry slot of the record at ``start`` (defaults for missing ones)."""
    return _decode_values(data, start, plan, keep_eager_path=False)


def _decode_values(data: bytes, start: int, plan: Plan, *, keep_eager_path: bool) -> list[Any]:
    """Decode one record's slots; with ``keep_eager_path``, path and partition values
    are skipped (the caller already holds them)."""
    if start < 0 or start > len(data):
        raise DecodeError(f"record start {start} out of range")
    values = list(DEFAULTS)
    pos = start
    for op in plan:
        if op.slot < 0:
            pos = _skip(data, pos, op.skip)
            continue
        if op.n_branches:
            present, pos = _branch(data, pos, op)
            if not present:
                values[op.slot] = None
                continue
        if keep_eager_path and op.slot <= SLOT_PARTITION_VALUES:
            pos = _skip(data, pos, op.skip[1][op.value_branch] if op.n_branches else op.skip)
            continue
        values[op.slot], pos = _value(data, pos, op.kind)
    return values


def _map_lookup(data: bytes, pos: int, key: bytes) -> str | None:
    found: str | None = None
    while True:
        count, pos = _block_count(data, pos)
        if count == 0:
            return found
        for _ in range(count):
            kstart, kend = _span(data, pos)
            if data[kstart:kend] == key:
                found, pos = _str(data, kend)  # the last duplicate wins, as in a dict
            else:
                pos = _span(data, kend)[1]


def map_column(
    data: bytes, starts: Sequence[int], plan: Plan, slot: int, key: str
) -> list[str | None]:
    """Return ``values[slot][key]`` (``None`` when absent) for the records at ``starts``."""
    raw_key = key.encode("utf-8")
    out: list[str | None] = []
    for start in starts:
        if start < 0 or start > len(data):
            raise DecodeError(f"record start {start} out of range")
        pos = start
        found: str | None = None
        for op in plan:
            if op.slot != slot:
                pos = _skip(data, pos, op.skip)
                continue
            if op.n_branches:
                present, pos = _branch(data, pos, op)
                if not present:
                    break
            found = _map_lookup(data, pos, raw_key)
            break
        out.append(found)
    return out


_SETTERS: dict[type, list[Callable[[Any, Any], None]]] = {}


def _setters(entry_type: type) -> list[Callable[[Any, Any], None]]:
    found = _SETTERS.get(entry_type)
    if found is None:
        fields = dataclasses.fields(entry_type)
        found = [entry_type.__dict__[f.name].__set__ for f in fields]
        if len(found) != len(DEFAULTS):
            raise TypeError(f"{entry_type.__name__} does not have the FileEntry slots")
        _SETTERS[entry_type] = found
    return found


def decode_entries(
    data: bytes,
    starts: Sequence[int],
    paths: list[str],
    partition_values: list[dict[str, str]],
    plan: Plan,
    entry_type: type,
) -> list[Any]:
    """Decode the records at ``starts`` into ``entry_type`` objects (slotted FileEntry).

    ``paths`` and ``partition_values`` come from the planning scan and are
    reused, not decoded again. Slots are set through their member
    descriptors: a frozen dataclass's ``__init__`` goes through
    ``object.__setattr__`` per field, twice as slow.
    """
    setters = _setters(entry_type)
    if len(partition_values) != len(starts) or len(paths) != len(starts):
        raise ValueError("one path and one partition map per start are required")
    out: list[Any] = []
    new = object.__new__
    for start, path, values_map in zip(starts, paths, partition_values, strict=True):
        values = _decode_values(data, start, plan, keep_eager_path=True)
        values[0] = path
        values[1] = values_map
        entry: Any = new(entry_type)
        for setter, value in zip(setters, values, strict=True):
            setter(entry, value)
        out.append(entry)
    return out


def _plain_compare(a: str, b: str) -> int:
    return (a > b) - (a < b)


def _sign(order: float) -> int:
    return (order > 0) - (order < 0)


def _map_find(data: bytes, pos: int, key: bytes) -> tuple[tuple[int, int], int]:
    """Skip a map<string>: the ``(start, length)`` of ``key``'s value ((-1, 0) if absent), end."""
    found = (-1, 0)
    while True:
        count, pos = _block_count(data, pos)
        if count == 0:
            return found, pos
        for _ in range(count):
            kstart, kend = _span(data, pos)
            vstart, pos = _span(data, kend)
            if data[kstart:kend] == key:
                found = (vstart, pos - vstart)  # the last duplicate wins, as in a dict


# One record's located statistic of a column (native layout, no padding, the
# Cython StatSpan): min int, max int, min start, min length, max start, max
# length, min kind, max kind. A kind is 0 (absent, start -1), 1 (a plain ASCII
# integer of up to 18 digits, parsed into the int field) or 2 (other).
SPAN: Final = struct.Struct("=qqiiiiii")
_SIMPLE_INT: Final = re.compile(rb"-?[0-9]{1,18}")
_INT32_MAX: Final = 2**31 - 1
_TWO53: Final = 2**53


def _classify(data: bytes, start: int, length: int) -> tuple[int, int]:
    """(kind, int value) of a located statistic."""
    if start < 0:
        return 0, 0
    raw = data[start : start + length]
    return (1, int(raw)) if _SIMPLE_INT.fullmatch(raw) else (2, 0)


def stat_spans(data: bytes, starts: Sequence[int], plan: Plan, key: str) -> bytes:
    """Locate (and pre-parse) each record's ``minValues[key]`` and ``maxValues[key]``.

    Returns one :data:`SPAN` record per record, packed in bytes: where the
    min and max value bytes lie in ``data`` and, for plain integers, their
    value, so ordering them later need not touch the record bytes.
    """
    if len(data) > _INT32_MAX:
        raise DecodeError(f"block of {len(data)} bytes is too large for statistic spans")
    raw_key = key.encode("utf-8")
    wanted = sum(op.slot in (SLOT_MIN_VALUES, SLOT_MAX_VALUES) for op in plan)
    out = bytearray()
    for start in starts:
        if start < 0 or start > len(data):
            raise DecodeError(f"record start {start} out of range")
        pos = start
        found = {SLOT_MIN_VALUES: (-1, 0), SLOT_MAX_VALUES: (-1, 0)}
        remaining = wanted
        for op in plan:
            if remaining == 0:
                break
            if op.slot not in found:
                pos = _skip(data, pos, op.skip)
                continue
            remaining -= 1
            if op.n_branches:
                present, pos = _branch(data, pos, op)
                if not present:
                    continue
            found[op.slot], pos = _map_find(data, pos, raw_key)
        (min_start, min_len), (max_start, max_len) = found[SLOT_MIN_VALUES], found[SLOT_MAX_VALUES]
        min_kind, min_int = _classify(data, min_start, min_len)
        max_kind, max_int = _classify(data, max_start, max_len)
        out += SPAN.pack(
            min_int, max_int, min_start, min_len, max_start, max_len, min_kind, max_kind
        )
    return bytes(out)


def _text_code(
    data: bytes,
    start: int,
    length: int,
    literal: str,
    order: Callable[[str, str], int],
    max_len: int,
) -> int:
    if start < 0:
        return 3
    if length < 0 or start > len(data) or length > len(data) - start:
        raise DecodeError(f"statistic span {start}+{length} out of range")
    try:
        text = data[start : start + length].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError("invalid UTF-8 in a statistic") from exc
    if max_len > 0 and len(text) >= max_len:
        return 3
    return 1 + _sign(order(text, literal))


def _span_code(
    data: bytes,
    located: tuple[int, int, int, int],
    literal: tuple[str, int | float | None],
    compare: Callable[[str, str], int] | None,
    max_len: int,
) -> int:
    """Order code of one located statistic ``(kind, start, length, int value)``."""
    kind, start, length, number = located
    text, lit_number = literal
    if kind == 0:
        return 3
    if kind == 1 and compare is not None and not (max_len > 0 and length >= max_len):
        # compare_values on a plain integer, without decoding it
        if isinstance(lit_number, int) and -(2**63) <= lit_number < 2**63:
            return 1 + _sign(number - lit_number)
        if isinstance(lit_number, float) and -_TWO53 < number < _TWO53:
            return 1 + _sign(float(number) - lit_number)
    return _text_code(data, start, length, text, compare or _plain_compare, max_len)


def stat_codes(
    data: bytes,
    spans: bytes,
    literals: list[str],
    compare: Callable[[str, str], int] | None,
    max_len: int,
) -> list[bytes]:
    """Order the statistics located by :func:`stat_spans` against each literal.

    Per literal, one byte per record: ``4 * min code + max code``, where a
    code is 0 (below the literal), 1 (equal), 2 (above) or 3 (no usable
    statistic: absent or, for maxima when ``max_len`` > 0, at least
    ``max_len`` characters long). ``compare`` is the ordering (numeric-aware
    ``compare_values``); ``None`` means plain string order.
    """
    if len(spans) % SPAN.size:
        raise DecodeError(f"statistic spans of {len(spans)} bytes are not whole records")
    located = [
        ((min_kind, min_start, min_len, min_int), (max_kind, max_start, max_len, max_int))
        for min_int, max_int, min_start, min_len, max_start, max_len, min_kind, max_kind in (
            SPAN.iter_unpack(spans)
        )
    ]
    out = []
    for text in literals:
        literal = (text, None if compare is None else as_number(text))
        out.append(
            bytes(
                4 * _span_code(data, low, literal, compare, 0)
                + _span_code(data, high, literal, compare, max_len)
                for low, high in located
            )
        )
    return out
