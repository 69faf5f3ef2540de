"""The benchmarks' log table, built without Spark, and its Parquet copy.

The rows are those of ``packages/indextables-pyspark/benchmarks/run.py``'s
``logs()`` (id, level, host, message with a needle in ~0.01% of rows), computed
with Spark's own ``hash()`` (Murmur3 x86 32, seed 42) reproduced in numpy, so
both benchmarks see identical tables. As there, one split holds up to
2,000,000 rows; the splits are written by the engine's ``SplitWriter`` (in up
to two processes) and committed in one version.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}
BLOCK_SIZE_KEY = "spark.indextables.indexWriter.docStoreBlockSize"
ROWS_PER_SPLIT = 2_000_000
CHUNK = 500_000
_M32 = np.uint64(0xFFFFFFFF)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & _M32


def _mix_k1(k1: np.ndarray) -> np.ndarray:
    k1 = (k1 * np.uint64(0xCC9E2D51)) & _M32
    k1 = _rotl(k1, 15)
    return (k1 * np.uint64(0x1B873593)) & _M32


def _mix_h1(h1: np.ndarray, k1: np.ndarray) -> np.ndarray:
    h1 = _rotl(h1 ^ k1, 13)
    return (h1 * np.uint64(5) + np.uint64(0xE6546B64)) & _M32


def _fmix(h1: np.ndarray, length: int) -> np.ndarray:
    h1 = h1 ^ np.uint64(length)
    h1 ^= h1 >> np.uint64(16)
    h1 = (h1 * np.uint64(0x85EBCA6B)) & _M32
    h1 ^= h1 >> np.uint64(13)
    h1 = (h1 * np.uint64(0xC2B2AE35)) & _M32
    h1 ^= h1 >> np.uint64(16)
    return h1


def spark_hash(ids: np.ndarray, *ints: int) -> np.ndarray:
    """Spark SQL's ``hash(id, i1, ...)`` of a bigint column and int literals (as int64)."""
    unsigned = ids.astype(np.int64).view(np.uint64)
    low, high = unsigned & _M32, unsigned >> np.uint64(32)
    h1 = np.full(ids.shape, 42, dtype=np.uint64)
    h1 = _fmix(_mix_h1(_mix_h1(h1, _mix_k1(low)), _mix_k1(high)), 8)
    for value in ints:
        k1 = np.full(ids.shape, value & 0xFFFFFFFF, dtype=np.uint64)
        h1 = _fmix(_mix_h1(h1, _mix_k1(k1)), 4)
    return h1.astype(np.uint32).view(np.int32).astype(np.int64)


def log_rows(start: int, stop: int) -> pa.RecordBatch:
    """Rows ``start <= id < stop`` of the log table (pmod is Python's % here)."""
    ids = np.arange(start, stop, dtype=np.int64)
    levels = pa.array(np.array(["INFO", "WARN", "ERROR"])[spark_hash(ids) % 3])
    hosts = pc.binary_join_element_wise(
        "host-", pa.array(spark_hash(ids, 1) % 500).cast("string"), ""
    )
    words = np.where(spark_hash(ids, 2) % 10_000 == 0, "needlezz", "ok")
    text = pa.array(ids).cast("string")
    message = pc.binary_join_element_wise("request ", text, " served ", pa.array(words), "")
    return pa.record_batch(
        {"id": pa.array(ids), "level": levels, "host": hosts, "message": message}
    )


def set_block_size(size: int | None) -> None:
    """Write the benchmarks' splits with doc-store blocks of ``size`` bytes (None: default).

    Sets ``indexWriter.docStoreBlockSize`` in :data:`OPTIONS`, which every benchmark
    writes with (``--docstore-block-size``); forked pool workers inherit it.
    """
    if size is None:
        OPTIONS.pop(BLOCK_SIZE_KEY, None)
    else:
        OPTIONS[BLOCK_SIZE_KEY] = str(size)


def chunks(start: int, stop: int) -> Iterator[pa.RecordBatch]:
    for low in range(start, stop, CHUNK):
        yield log_rows(low, min(stop, low + CHUNK))


def _write_split(uri: str, start: int, stop: int) -> Any:
    from indextables.search.options import parse_indexing, parse_write
    from indextables.search.schema.mapping import field_specs
    from indextables.search.table.tableaccess import open_table_store
    from indextables.search.write.splitwriter import SplitWriter

    write = parse_write(OPTIONS)
    schema = log_rows(0, 1).schema
    writer = SplitWriter(
        open_table_store(uri, OPTIONS),
        field_specs(schema, parse_indexing(OPTIONS)),
        (),
        heap_size=write.heap_size,
        batch_size=write.batch_size,
        docstore_block_size=write.docstore_block_size,
    )
    writer.write(chunks(start, stop))
    return writer.finish()


def build_table(uri: str, rows: int) -> int:
    """Write ``rows`` log rows as an IndexTables table at ``uri``; return its version."""
    from indextables.search.schema.schemajson import spark_json
    from indextables.search.table.tableaccess import commit_write

    ranges = [(s, min(rows, s + ROWS_PER_SPLIT)) for s in range(0, rows, ROWS_PER_SPLIT)]
    with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1, len(ranges))) as pool:
        adds = [
            a
            for found in pool.map(_write_split, *zip(*[(uri, *r) for r in ranges], strict=False))
            for a in found
        ]
    return commit_write(
        uri,
        OPTIONS,
        schema_json=spark_json(log_rows(0, 1).schema),
        partition_columns=(),
        adds=adds,
        overwrite=False,
        configuration=OPTIONS,
    )


def build_parquet(path: str, rows: int) -> None:
    """The same rows as one Parquet file (row groups of 1M rows)."""
    schema = log_rows(0, 1).schema
    with pq.ParquetWriter(path, schema) as writer:
        for batch in chunks(0, rows):
            writer.write_batch(batch, row_group_size=1_000_000)
