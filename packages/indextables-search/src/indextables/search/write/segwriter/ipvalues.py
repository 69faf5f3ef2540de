"""IP address values as Tantivy holds them: the 16 bytes of an IPv6 address.

tantivy-py parses an ip field's string with Rust's ``IpAddr`` and keeps an IPv4
address as its IPv4-mapped IPv6 form (``::ffff:a.b.c.d``), so ``1.2.3.4`` and
``::ffff:1.2.3.4`` are one value. The indexed term, the fast column (u128) and the
doc store (u128 little-endian) all derive from these 16 big-endian bytes. Each
distinct string is parsed once. A scoped IPv6 address (``fe80::1%eth0``), which
Rust refuses, is refused here too.
"""

from __future__ import annotations

import ipaddress
import socket

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.write.segwriter.errors import SegmentWriteError

__all__ = ["ip_bytes", "ip_fixed"]

_MAPPED_PREFIX = b"\x00" * 10 + b"\xff\xff"


def _packed(text: str) -> bytes:
    try:
        return socket.inet_pton(socket.AF_INET6, text)  # the C parser: no scope, no zones
    except (OSError, ValueError):
        pass
    address = ipaddress.ip_address(text)
    if isinstance(address, ipaddress.IPv4Address):
        return _MAPPED_PREFIX + address.packed
    if address.scope_id is not None:
        raise ValueError(f"a scoped address {text!r}")
    return address.packed


def _refuse(values: pa.Array, text: str, reason: ValueError, name: str) -> SegmentWriteError:
    # Name the first value (counting non-null values) holding the refused string.
    row = int(np.flatnonzero(np.asarray(pc.equal(values, text), dtype=bool))[0])
    return SegmentWriteError(f"column {name!r}: value {row}: {reason}")


def ip_bytes(values: pa.Array, name: str) -> npt.NDArray[np.uint8]:
    """The non-null ``values`` (strings, or 16-byte fixed-size binary taken as they are)
    as a ``(n, 16)`` array of big-endian IPv6 bytes, nulls left out.

    Raises:
        SegmentWriteError: a string that is not an address, another Arrow type, naming
            the column.
    """
    typ = values.type
    if pa.types.is_dictionary(typ):
        values, typ = values.dictionary_decode(), typ.value_type
    values = values.drop_null()
    if pa.types.is_fixed_size_binary(typ) and typ.byte_width == 16:
        raw = values.buffers()[1]
        start = values.offset * 16
        data = np.frombuffer(raw, dtype=np.uint8)[start : start + 16 * len(values)]
        return data.reshape(-1, 16).copy()
    if not (
        pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ)
    ):
        raise SegmentWriteError(
            f"column {name!r}: an ip field takes strings or 16-byte fixed-size binary, not {typ}"
        )
    if not len(values):
        return np.zeros((0, 16), dtype=np.uint8)
    if pa.types.is_string_view(typ):
        values = values.cast(pa.string())
    encoded = values.dictionary_encode()
    table = _distinct(encoded.dictionary, values, name)
    indices = np.asarray(pc.cast(encoded.indices, pa.int64()), dtype=np.int64)
    out: npt.NDArray[np.uint8] = table[indices]
    return out


def _dotted_quads(texts: pa.Array) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.uint8]]:
    # The strings that are plain IPv4 dotted quads (no leading zeros), parsed column-wise.
    plain = np.asarray(pc.fill_null(pc.match_substring_regex(texts, _QUAD), False), dtype=bool)
    out = np.zeros((len(texts), 16), dtype=np.uint8)
    if not plain.any():
        return plain, out
    parts = pc.split_pattern(texts.filter(pa.array(plain)), ".")
    octets = np.asarray(pc.cast(pc.list_flatten(parts), pa.int64()), dtype=np.int64).reshape(-1, 4)
    fits = (octets <= 255).all(axis=1)
    rows = np.flatnonzero(plain)
    plain[rows[~fits]] = False
    out[rows[fits], 10:12] = 0xFF
    out[rows[fits], 12:] = octets[fits].astype(np.uint8)
    return plain, out


_QUAD = r"^(?:(?:0|[1-9][0-9]{0,2})\.){3}(?:0|[1-9][0-9]{0,2})$"


def _distinct(texts: pa.Array, values: pa.Array, name: str) -> npt.NDArray[np.uint8]:
    # The 16 bytes of each distinct string: dotted quads column-wise, the rest one by one.
    plain, out = _dotted_quads(texts)
    others = np.flatnonzero(~plain)
    if others.size:
        for k, text in zip(others.tolist(), texts.take(pa.array(others)).to_pylist(), strict=True):
            try:
                out[k] = np.frombuffer(_packed(text), dtype=np.uint8)
            except ValueError as exc:
                raise _refuse(values, text, exc, name) from None
    return out


def ip_fixed(column: pa.Array | pa.ChunkedArray, name: str) -> pa.Array:
    """An ip column (strings, or a list column of them) as 16-byte fixed-size binary
    (a list column keeps its lists), nulls kept: each string parsed once per segment.

    Raises:
        SegmentWriteError: as :func:`ip_bytes`.
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    typ = column.type
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        if pa.types.is_large_list(typ):
            column = column.cast(pa.list_(typ.value_type))
        inner = ip_fixed(column.values, name)
        return pa.ListArray.from_arrays(
            column.offsets, inner, mask=column.is_null() if column.null_count else None
        )
    if pa.types.is_fixed_size_binary(typ) and typ.byte_width == 16:
        return column
    packed = ip_bytes(column, name)
    valid = np.asarray(column.is_valid(), dtype=bool)
    out = np.zeros((len(column), 16), dtype=np.uint8)
    out[valid] = packed
    mask = pa.array(~valid) if column.null_count else None
    data = pa.py_buffer(out.tobytes())
    fixed = pa.Array.from_buffers(pa.binary(16), len(column), [None, data])
    if mask is None:
        return fixed
    return pc.if_else(mask, pa.scalar(None, pa.binary(16)), fixed)
