"""The file key of tantivy4java's companion splits: ``__pq_file_hash``.

tantivy4java tags every document of a companion split with two hidden u64
fast fields: ``__pq_file_hash`` (a hash of its Parquet file's relative path)
and ``__pq_row_in_file``. The hash is Rust's ``DefaultHasher::new()`` over
``str``'s ``Hash``: SipHash-1-3 with both keys zero, over the UTF-8 bytes
followed by one ``0xFF`` byte. A reader maps a hash back to a file by hashing
each path of the split's manifest.
"""

from __future__ import annotations

__all__ = ["FILE_HASH_FIELD", "ROW_IN_FILE_FIELD", "path_hash"]

FILE_HASH_FIELD = "__pq_file_hash"
ROW_IN_FILE_FIELD = "__pq_row_in_file"

_MASK = 0xFFFFFFFFFFFFFFFF


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & _MASK


def _round(v0: int, v1: int, v2: int, v3: int) -> tuple[int, int, int, int]:
    v0 = (v0 + v1) & _MASK
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & _MASK
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & _MASK
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & _MASK
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def _siphash13(data: bytes) -> int:
    """SipHash-1-3 with the zero key (one compression round, three finalisation rounds)."""
    v0 = 0x736F6D6570736575
    v1 = 0x646F72616E646F6D
    v2 = 0x6C7967656E657261
    v3 = 0x7465646279746573
    whole = len(data) - len(data) % 8
    for start in range(0, whole, 8):
        word = int.from_bytes(data[start : start + 8], "little")
        v3 ^= word
        v0, v1, v2, v3 = _round(v0, v1, v2, v3)
        v0 ^= word
    last = ((len(data) & 0xFF) << 56) | int.from_bytes(data[whole:], "little")
    v3 ^= last
    v0, v1, v2, v3 = _round(v0, v1, v2, v3)
    v0 ^= last
    v2 ^= 0xFF
    for _ in range(3):
        v0, v1, v2, v3 = _round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def path_hash(relative_path: str) -> int:
    """``__pq_file_hash`` of a file: what Rust's ``DefaultHasher`` gives for the path."""
    return _siphash13(relative_path.encode("utf-8") + b"\xff")
