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

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.write.segwriter.errors import SegmentWriteError

__all__ = ["ip_bytes"]

_MAPPED_PREFIX = b"\x00" * 10 + b"\xff\xff"


def _packed(text: str) -> bytes:
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
    encoded = values.dictionary_encode()
    parts = []
    for text in encoded.dictionary.to_pylist():
        try:
            parts.append(_packed(text))
        except ValueError as exc:
            raise _refuse(values, text, exc, name) from None
    distinct = b"".join(parts)
    table = np.frombuffer(distinct, dtype=np.uint8).reshape(-1, 16)
    indices = np.asarray(pc.cast(encoded.indices, pa.int64()), dtype=np.int64)
    out: npt.NDArray[np.uint8] = table[indices]
    return out
