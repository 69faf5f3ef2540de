"""Counts and a terms aggregation from the index (``itp.count``, ``itp.aggregate``) vs Spark.

Figures, same session, same rows (a partitioned IndexTables table and its
Parquet copy):

- ``itp.count`` with a partition filter vs ``spark.read ... .where().count()``;
- ``itp.count`` with a text query vs Parquet ``LIKE '%token%'`` + count;
- ``itp.aggregate`` count per value of a string fast field vs Parquet
  ``groupBy().count()``.

Usage: python benchmarks/run.py count [--rows 200000] [--repeat 3]
(the targets are for 2,000,000 rows: ``--rows 2000000``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import int_options, measure, scratch_session


def rows_of(spark: Any, count: int) -> Any:
    """Deterministic log rows over 5 days with a needle token in ~0.01% of messages."""
    return spark.range(count, numPartitions=2).selectExpr(
        "id",
        f"cast(date_add(date'2024-03-01', cast(floor(id * 5 / {count}) as int)) as string) as day",
        "element_at(array('INFO','WARN','ERROR'), cast(pmod(hash(id), 3) + 1 as int)) as level",
        "concat('request ', id, ' served ', case when pmod(hash(id, 2), 10000) = 0 "
        "then 'needlezz' else 'ok' end) as message",
    )


def line(label: str, ours: tuple[float, float, Any], base: tuple[float, float, Any]) -> None:
    """One result line: both medians and the ratio."""
    print(
        f"{label:<34} indextables {ours[0] * 1000:8.1f} ms  baseline {base[0] * 1000:8.1f} ms  "
        f"ratio {base[0] / ours[0]:7.1f}x  results {ours[2]} / {base[2]}"
    )


def main() -> int:
    """Write the table once, then time each pair."""
    args = int_options(rows=200_000, repeat=3)
    import indextables.pyspark as itp

    with scratch_session("count") as (spark, work):
        path, copy = f"{work}/t", f"{work}/p"
        data = rows_of(spark, args.rows)
        options = {"spark.indextables.indexing.typemap.message": "text", "partitionBy": "day"}
        data.write.format("indextables").options(**options).mode("overwrite").save(path)
        data.write.partitionBy("day").mode("overwrite").parquet(copy)
        parquet = spark.read.parquet(copy)
        day = "day = '2024-03-02'"
        line(
            "count, partition filter",
            measure(lambda: itp.count(spark, path, where=day), args.repeat),
            measure(
                lambda: spark.read.format("indextables").load(path).where(day).count(),
                args.repeat,
            ),
        )
        line(
            "count, text query vs LIKE",
            measure(lambda: itp.count(spark, path, query="message:needlezz"), args.repeat),
            measure(lambda: parquet.where("message like '%needlezz%'").count(), args.repeat),
        )

        def terms_index() -> int:
            found = itp.aggregate(spark, path, group_by="level", metrics={"n": "count"})
            return sum(r["n"] for r in found.collect())

        def terms_parquet() -> int:
            return sum(r["count"] for r in parquet.groupBy("level").count().collect())

        line(
            "terms count per level vs groupBy",
            measure(terms_index, args.repeat),
            measure(terms_parquet, args.repeat),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
