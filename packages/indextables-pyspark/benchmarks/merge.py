"""MERGE SPLITS through ``itp.sql`` against the write rate of the same rows (figures only).

In one session: ``--rows`` log rows (``run.logs``) appended as ``--splits``
small splits (``df.write.format("indextables")``, one split each: the timed
write rate of these rows), then ``itp.sql("MERGE SPLITS '<path>' TARGET SIZE
'1T'")`` (one Spark task per merge group: here one group), in rows/s against
that write rate; then the merged table's rows are counted through
``spark.read`` to check nothing was lost.

Usage: python benchmarks/run.py merge [--rows 500000] [--splits 20]
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import OPTIONS, int_options, logs, scratch_session


def main() -> int:
    """Write the splits, merge them, print both rates."""
    args = int_options(rows=500_000, splits=20)
    import indextables.pyspark as itp

    with scratch_session("merge") as (spark, work):
        path = f"{work}/t"
        step = -(-args.rows // args.splits)
        pieces = [
            logs(spark, args.rows).where(f"id >= {s} and id < {s + step}").coalesce(1)
            for s in range(0, args.rows, step)
        ]
        for piece in pieces:  # warm-up of the plan and the JVM, not timed
            piece.count()
        start = time.perf_counter()
        for piece in pieces:
            piece.write.format("indextables").options(**OPTIONS).mode("append").save(path)
        write = time.perf_counter() - start
        start = time.perf_counter()
        row = itp.sql(spark, f"MERGE SPLITS '{path}' TARGET SIZE '100G'").first().asDict(True)
        merge = time.perf_counter() - start
        count = spark.read.format("indextables").load(path).count()
        rows = args.rows
        print(f"MERGE SPLITS of {len(pieces)} splits, {rows:,} log rows, local[2]:")
        print(f"  write (appends) {rows / write:>11,.0f} rows/s ({write:6.2f} s)")
        print(f"  MERGE SPLITS    {rows / merge:>11,.0f} rows/s ({merge:6.2f} s)")
        print(f"  merge / write = {write / merge:.2f}x; {row['metrics']}; rows after: {count:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
