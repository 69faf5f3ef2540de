"""A seeded 20-column table of mixed kinds for the write benchmarks (``write.py --mixed``).

Columns: four integers (int8, int16, int32, int64), two floats (float32, float64), a
bool, a date, two timestamps (UTC and naive), two IP addresses (IPv4 and IPv6, typemap
``ip``), two binaries (short and 64-byte), three exact strings (low-cardinality,
high-cardinality, UUID-like), two texts (typemap ``text``) and a list of int64 (a JSON
field in an ordinary table). About 10% nulls in most columns.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["MIXED_OPTIONS", "mixed_table"]

#: The indexing options the mixed table is written with.
MIXED_OPTIONS = {
    "spark.indextables.indexing.typemap.ip4": "ip",
    "spark.indextables.indexing.typemap.ip6": "ip",
    "spark.indextables.indexing.typemap.msg": "text",
    "spark.indextables.indexing.typemap.title": "text",
}
_WORDS = np.array(
    [
        "the", "a", "of", "error", "warn", "info", "user", "request", "failed", "timeout",
        "disk", "cache", "node", "shard", "query", "latency", "retry", "upstream",
        "connection", "refused", "ok", "served", "bytes", "page", "token",
    ]
)  # fmt: skip


def _nulls(rng: np.random.Generator, n: int, share: float = 0.1) -> np.ndarray:
    return rng.random(n) < share


def _texts(rng: np.random.Generator, n: int, low: int, high: int) -> pa.Array:
    lengths = rng.integers(low, high, n)
    words = _WORDS[rng.integers(0, len(_WORDS), int(lengths.sum()))]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    values = [" ".join(words[offsets[k] : offsets[k + 1]]) for k in range(n)]
    return pa.array(values, pa.string(), mask=_nulls(rng, n))


def mixed_table(n: int, *, seed: int = 0, with_list: bool = True) -> pa.Table:
    """``n`` rows of the mixed table (without the list column: 19 columns)."""
    rng = np.random.default_rng(seed)
    ip4 = rng.integers(0, 2**32, n, dtype=np.uint64)
    ip6_high = rng.integers(0, 2**63, n, dtype=np.uint64)
    ip6_low = rng.integers(0, 2**63, n, dtype=np.uint64)
    ip6 = [f"2001:db8:{h & 0xFFFF:x}:{(h >> 16) & 0xFFFF:x}::{low & 0xFFFF:x}:{low >> 48:x}"
           for h, low in zip(ip6_high.tolist(), ip6_low.tolist(), strict=True)]  # fmt: skip
    ip4_text = [f"{v >> 24}.{(v >> 16) & 255}.{(v >> 8) & 255}.{v & 255}" for v in ip4.tolist()]
    seconds = rng.integers(0, 2_000_000_000, n)
    columns = {
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "i16": pa.array(rng.integers(-(2**15), 2**15, n).astype(np.int16), mask=_nulls(rng, n)),
        "i8": pa.array(rng.integers(-128, 128, n).astype(np.int8), mask=_nulls(rng, n)),
        "i32": pa.array(rng.integers(-(2**31), 2**31, n).astype(np.int32), mask=_nulls(rng, n)),
        "f32": pa.array(rng.standard_normal(n).astype(np.float32), mask=_nulls(rng, n)),
        "f64": pa.array(rng.standard_normal(n) * 1e6, mask=_nulls(rng, n)),
        "ok": pa.array(rng.random(n) < 0.5, mask=_nulls(rng, n)),
        "day": pa.array((seconds // 86400).astype(np.int32), pa.date32(), mask=_nulls(rng, n)),
        "ts": pa.array(seconds * 1_000_000 + rng.integers(0, 10**6, n), pa.timestamp("us", "UTC")),
        "ts_ntz": pa.array(seconds * 1_000_000, pa.timestamp("us"), mask=_nulls(rng, n)),
        "ip4": pa.array(ip4_text, pa.string(), mask=_nulls(rng, n)),
        "ip6": pa.array(ip6, pa.string(), mask=_nulls(rng, n)),
        "blob": pa.array([rng.bytes(64) for _ in range(n)], pa.binary(), mask=_nulls(rng, n)),
        "level": pa.array(
            np.array(["debug", "info", "warn", "error"])[rng.integers(0, 4, n)],
            mask=_nulls(rng, n),
        ),
        "host": pa.array([f"host-{v}" for v in rng.integers(0, 50_000, n).tolist()]),
        "uuid": pa.array([rng.bytes(16).hex() for _ in range(n)]),
        "msg": _texts(rng, n, 4, 30),
        "title": _texts(rng, n, 1, 6),
    }
    raw = rng.integers(0, 256, 4 * n, dtype=np.uint8).tobytes()
    columns["tag"] = pa.array([raw[4 * k : 4 * k + 4] for k in range(n)], pa.binary())  # short
    if with_list:
        lengths = rng.integers(0, 5, n)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        values = pa.array(rng.integers(-1000, 1000, int(lengths.sum())))
        columns["nums"] = pa.ListArray.from_arrays(pa.array(offsets), values)
    return pa.table(columns)
