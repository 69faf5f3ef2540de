"""Reads per column with and without an Arrow copy (``indexWriter.arrowCopy``), figures only.

The same log rows (``logdata.py``: id, level, host, message) are written once per
mode (``required``: no copy for these columns, ``numeric``: ``id`` copied,
``all``: every column copied, as splits were before the option) and each table
is read, in one run and interleaved, by:

- a full scan of each column alone and of every column (``to_arrow``);
- an exact match (``host = 'host-7'``, ~0.2% of the rows) returning every column;
- the needle (``message`` text search, ~0.01%).

Prints the median of ``--repeat`` runs per (read, mode) and each mode's split
bytes against Parquet. Usage: ``python benchmarks/arrowcopy.py [--rows 1000000]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from logdata import OPTIONS, chunks

from indextables.search import open_table, write_table
from indextables.search.table.tableaccess import load_view

MODES = ("required", "numeric", "all")
KEY = "spark.indextables.indexWriter.arrowCopy"


def _split_bytes(uri: str) -> int:
    live = load_view(uri, OPTIONS).splits
    return sum(os.path.getsize(os.path.join(uri, p)) for p in live.paths)


def reads() -> dict[str, Callable[[str], int]]:
    def scan(columns: Sequence[str] | None) -> Callable[[str], int]:
        return lambda uri: open_table(uri).to_arrow(columns=columns).num_rows

    return {
        "scan id": scan(["id"]),
        "scan level": scan(["level"]),
        "scan message": scan(["message"]),
        "scan all columns": scan(None),
        "exact match host": lambda uri: open_table(uri).search(where="host = 'host-7'").num_rows,
        "needle": lambda uri: open_table(uri).search(textsearch={"message": "needlezz"}).num_rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    table = pa.Table.from_batches(list(chunks(0, args.rows)))
    with tempfile.TemporaryDirectory(prefix="indextables-bench-copy-") as root:
        parquet = os.path.join(root, "rows.parquet")
        pq.write_table(table, parquet, row_group_size=1_000_000)
        parquet_size = os.path.getsize(parquet)
        uris = {}
        for mode in MODES:
            uris[mode] = os.path.join(root, mode)
            write_table(uris[mode], table, options={**OPTIONS, KEY: mode})
        print(f"arrowCopy, {args.rows:,} log rows, median of {args.repeat} runs:")
        for mode, uri in uris.items():
            size = _split_bytes(uri)
            print(
                f"  {mode:<9} split bytes {size / args.rows:6.2f}/row, "
                f"{size / parquet_size:.2f}x parquet"
            )
        for label, read in reads().items():
            times: dict[str, list[float]] = {m: [] for m in MODES}
            for uri in uris.values():
                read(uri)  # warm-up: split cache, open indexes and stores
            for _ in range(args.repeat):
                for mode, uri in uris.items():
                    start = time.perf_counter()
                    rows = read(uri)
                    times[mode].append(time.perf_counter() - start)
            shown = "  ".join(f"{m} {statistics.median(t) * 1e3:8.1f} ms" for m, t in times.items())
            print(f"  {label:<18} ({rows:>9,} rows)  {shown}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
