"""Full scans and the data stack's own filters vs delta-rs on the same rows (figures only).

The log rows of ``logdata.py`` (id, level, host, message) are written once as an
IndexTables table (``write_table``) and once as a Delta table (``deltalake``).
In one run, each figure beside its delta-rs baseline (medians of ``--repeat``
warm runs, ratio = baseline time / ours: above 1 means faster):

- the whole table to Arrow: ``SearchTable.to_arrow()`` vs ``pl.read_delta`` and
  ``DeltaTable.to_pyarrow_table()``; ``to_polars()`` vs ``pl.read_delta``;
- Polars ``filter(message.str.contains("needlezz"))`` over ``scan_indextables`` (sent
  to the index as a regex over the ``message`` terms, then filtered exactly) vs
  ``scan_indextables(query="message:needlezz")`` and vs ``pl.scan_delta`` with the
  same filter;
- DuckDB ``count(*) where host = 'host-42'`` over ``SearchTable.to_duckdb()`` vs
  DuckDB over ``DeltaTable.to_pyarrow_dataset()``.

Never asserts on a time. Usage: ``python benchmarks/scan.py [--rows 200000]
[--big] [--repeat 7] [--path DIR] [--json FILE]`` (``--big``: 20,000,000 rows).
Tables are written under ``--path`` (default: a temporary directory, removed at
the end) and reused when present.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import measure_pair, parser
from logdata import OPTIONS, chunks

BIG = 20_000_000
NEEDLE_WORD = "needlezz"
EXACT_SQL = "host = 'host-42'"
COPY_KEY = "spark.indextables.indexWriter.arrowCopy"


def _tables(root: str, rows: int, arrow_copy: str | None) -> tuple[str, str]:
    """The IndexTables and Delta tables of ``rows`` log rows under ``root`` (written once;
    ``arrow_copy``: the ``indexWriter.arrowCopy`` mode, None for the default)."""
    import deltalake
    import pyarrow as pa

    from indextables.search import write_table

    mode = arrow_copy or "default"
    ours = os.path.join(root, f"scan-{rows}-indextables-{mode}")
    delta = os.path.join(root, f"scan-{rows}-delta")
    schema = next(chunks(0, 1)).schema
    if not os.path.isdir(ours):
        options = {**OPTIONS, **({COPY_KEY: arrow_copy} if arrow_copy else {})}
        rows_in = pa.RecordBatchReader.from_batches(schema, chunks(0, rows))
        write_table(ours, rows_in, options=options)
    if not os.path.isdir(delta):
        deltalake.write_deltalake(delta, pa.RecordBatchReader.from_batches(schema, chunks(0, rows)))
    return ours, delta


def _figure(
    label: str, ours: tuple[float, float, Any], base: tuple[float, float, Any], base_name: str
) -> dict[str, Any]:
    ratio = base[0] / ours[0] if ours[0] else float("inf")
    print(
        f"{label:<44} indextables {ours[0] * 1e3:9.2f} ms (±{ours[1] * 500:6.2f})  "
        f"{base_name} {base[0] * 1e3:9.2f} ms (±{base[1] * 500:6.2f})  "
        f"speed vs baseline = {ratio:5.2f}x  results {ours[2]} / {base[2]}",
        flush=True,
    )
    return {
        "question": label,
        "indextables_ms": round(ours[0] * 1e3, 3),
        "baseline": base_name,
        "baseline_ms": round(base[0] * 1e3, 3),
        "speed_vs_baseline": round(ratio, 3),
        "results": [ours[2], base[2]],
    }


def run(root: str, rows: int, repeat: int, arrow_copy: str | None = None) -> dict[str, Any]:
    import deltalake
    import duckdb  # type: ignore[import-not-found, unused-ignore]
    import polars as pl

    from indextables.search import open_table
    from indextables.search.options import DEFAULT_SPLIT_THREADS
    from indextables.search.polars import scan_indextables

    ours_uri, delta_uri = _tables(root, rows, arrow_copy)
    table = open_table(ours_uri)
    delta = deltalake.DeltaTable(delta_uri)
    print(
        f"full scans, {rows:,} log rows ({len(table.files)} splits, read.splitThreads "
        f"{DEFAULT_SPLIT_THREADS}, indexWriter.arrowCopy {arrow_copy or 'default'}), "
        f"median of {repeat} warm runs, each pair interleaved:",
        flush=True,
    )
    figures: list[dict[str, Any]] = []

    needle = f"message:{NEEDLE_WORD}"
    contains = pl.col("message").str.contains(NEEDLE_WORD)
    questions: list[tuple[str, Callable[[], Any], Callable[[], Any], str]] = [
        (
            "to_arrow(), every column",
            lambda: table.to_arrow().num_rows,
            lambda: pl.read_delta(delta_uri).height,
            "pl.read_delta",
        ),
        (
            "to_arrow(), every column",
            lambda: table.to_arrow().num_rows,
            lambda: delta.to_pyarrow_table().num_rows,
            "DeltaTable.to_pyarrow_table",
        ),
        (
            "to_arrow(columns=[id, level])",
            lambda: table.to_arrow(columns=["id", "level"]).num_rows,
            lambda: delta.to_pyarrow_table(columns=["id", "level"]).num_rows,
            "DeltaTable.to_pyarrow_table",
        ),
        (
            "to_polars(), every column",
            lambda: table.to_polars().height,
            lambda: pl.read_delta(delta_uri).height,
            "pl.read_delta",
        ),
        (
            "to_polars() vs from_arrow of plain strings",
            lambda: table.to_polars().height,
            lambda: pl.from_arrow(table.to_arrow(), rechunk=False).height,
            "pl.from_arrow(to_arrow())",
        ),
        (
            "polars str.contains vs query=",
            lambda: scan_indextables(table).filter(contains).collect().height,
            lambda: scan_indextables(table, query=needle).collect().height,
            "scan_indextables(query=)",
        ),
        (
            "polars str.contains",
            lambda: scan_indextables(table).filter(contains).collect().height,
            lambda: pl.scan_delta(delta_uri).filter(contains).collect().height,
            "pl.scan_delta",
        ),
    ]
    for label, ours, base, name in questions:
        figures.append(_figure(label, *measure_pair(ours, base, repeat), name))
    ours_db = table.to_duckdb(name="logs")
    base_db = duckdb.connect()
    dataset = delta.to_pyarrow_dataset()
    base_db.register("logs", dataset)
    sql = f"select count(*) from logs where {EXACT_SQL}"
    figures.append(
        _figure(
            f"duckdb count(*) where {EXACT_SQL}",
            *measure_pair(
                lambda: ours_db.sql(sql).fetchall()[0][0],
                lambda: base_db.sql(sql).fetchall()[0][0],
                repeat,
            ),
            "duckdb over to_pyarrow_dataset",
        )
    )
    ours_db.close()
    base_db.close()
    return {
        "benchmark": "packages/indextables-search/benchmarks/scan.py",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "rows": rows,
        "splits": len(table.files),
        "split_threads": DEFAULT_SPLIT_THREADS,
        "arrow_copy": arrow_copy or "default",
        "repeat": repeat,
        "cores": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "figures": figures,
    }


def main(argv: Sequence[str] | None = None) -> int:
    found = parser(
        repeat=7, path=None, path_help="where the tables are written (default: temporary)"
    )
    found.set_defaults(rows=200_000)
    found.add_argument("--big", action="store_true", help=f"{BIG:,} rows")
    found.add_argument("--json", default=None, help="also write the figures as JSON here")
    found.add_argument(
        "--arrow-copy",
        choices=("required", "numeric", "all"),
        default=None,
        help="write the table with this indexWriter.arrowCopy mode (default: the engine's)",
    )
    args = found.parse_args(argv)
    rows = BIG if args.big else args.rows
    if args.path is None:
        with tempfile.TemporaryDirectory(prefix="indextables-bench-scan-") as root:
            result = run(root, rows, args.repeat, args.arrow_copy)
    else:
        os.makedirs(args.path, exist_ok=True)
        result = run(args.path, rows, args.repeat, args.arrow_copy)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=2)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
