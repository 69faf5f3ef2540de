"""indextables.search without Spark vs DuckDB over a Parquet copy (figures only, never asserts).

On the log table of ``logdata.py`` (the pyspark benchmarks' rows, written
without Spark) and its Parquet copy, in one run:

- needle (a token in ~0.01% of messages): ``SearchTable.search`` vs DuckDB
  ``LIKE '%needlezz%'``, with the index's own time (``count`` of the query)
  and the cost of fetching each answer row;
- ``count`` of a text query vs DuckDB ``count(*) ... LIKE``;
- a terms aggregation (rows per level) vs DuckDB ``GROUP BY`` (when
  ``SearchTable.aggregate`` exists);
- an exact match (``host = 'host-42'``) vs DuckDB;
- Polars: the IO source (``scan_indextables``) vs ``polars.from_arrow`` of a
  finished search, on the same questions;
- the peak RSS of a full ``scan()`` (``VmHWM`` of a fresh child process).

Usage: python benchmarks/run.py [--rows 2000000] [--repeat 5] [--path DIR]
(``--write``: the write benchmark, ``write.py``, instead; ``--companion``: the
companion benchmark, ``companion.py``, 2,000,000 rows unless ``--rows``)
(the targets' scale: ``--rows 20000000``; ``--docstore-block-size N``: tables
written with ``indexWriter.docStoreBlockSize=N``, named ``logs-<rows>-bs<N>``).
Tables are written once under ``--path`` (default ~/.cache/indextables-bench-search)
and reused.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import EXACT, NEEDLE, NEEDLE_SQL, duck_rows, measure, parser
from logdata import set_block_size

EXACT_FIELD = {"host": "host-42"}


def line(label: str, ours: tuple[float, float, Any], base: tuple[float, float, Any]) -> None:
    """Both medians, their spreads, the ratio and the results."""
    print(
        f"{label:<30} indextables {ours[0] * 1000:9.2f} ms (±{ours[1] * 500:6.2f})  "
        f"duckdb {base[0] * 1000:9.2f} ms (±{base[1] * 500:6.2f})  "
        f"duckdb/indextables = {base[0] / ours[0]:7.1f}x  results {ours[2]} / {base[2]}",
        flush=True,
    )


def tables(root: str, rows: int, block_size: int | None = None) -> tuple[str, str]:
    """The IndexTables table and its Parquet copy, written on first use only.

    ``block_size``: the ``--docstore-block-size`` the table was written with (None: the
    engine's default), part of its name so tables of different sizes never mix.
    """
    from logdata import build_parquet, build_table

    base = os.path.join(root, f"logs-{rows}" + (f"-bs{block_size}" if block_size else ""))
    uri, parquet, marker = base + "-indextables", base + ".parquet", base + ".done"
    if os.path.exists(marker):
        print(f"tables: reusing {base}* ({rows:,} rows)")
        return uri, parquet
    import shutil

    shutil.rmtree(uri, ignore_errors=True)
    os.makedirs(root, exist_ok=True)
    start = time.perf_counter()
    build_table(uri, rows)
    built = time.perf_counter() - start
    start = time.perf_counter()
    build_parquet(parquet, rows)
    copied = time.perf_counter() - start
    print(
        f"tables: {rows:,} rows written without Spark: indextables {built:.1f} s "
        f"({rows / built:,.0f} rows/s, SplitWriter in up to 2 processes), "
        f"parquet {copied:.1f} s (pyarrow, 1 process)"
    )
    with open(marker, "w", encoding="utf-8") as out:
        out.write(f"{rows}\n")
    return uri, parquet


def exact_search(table: Any) -> tuple[str, Callable[..., Any]]:
    """``where=host = 'host-42'`` when the engine evaluates where, else ``fieldmatch``."""
    from indextables.search.errors import QuerySyntaxError

    try:
        table.count(where=EXACT)
    except QuerySyntaxError:
        return "fieldmatch", lambda **kw: table.search(fieldmatch=EXACT_FIELD, **kw)
    return "where", lambda **kw: table.search(where=EXACT, **kw)


def phases(action: Callable[[], Any], repeat: int) -> tuple[float, float, float]:
    """Median time of one search spent in the Tantivy query and in fetching its rows,
    and the fetch's median process CPU time.

    Times ``splitreader._search`` (the index: the query over a split, its hits)
    and ``splitreader._batch`` (stored documents -> Arrow rows) in separate,
    instrumented runs, so the timed runs above carry no instrumentation. The
    fetch's CPU time is steadier than its wall time on a loaded machine.
    """
    from indextables.search.read import splitreader

    spent = {"_search": 0.0, "_batch": 0.0, "cpu": 0.0}
    originals = {name: getattr(splitreader, name) for name in ("_search", "_batch")}

    def timed(name: str) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return originals[name](*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - start
                if name == "_batch":
                    spent["cpu"] += time.process_time() - cpu

        return run

    index, fetch, cpu = [], [], []
    try:
        for name in originals:
            setattr(splitreader, name, timed(name))
        action()
        for _ in range(repeat):
            spent.update({"_search": 0.0, "_batch": 0.0, "cpu": 0.0})
            action()
            index.append(spent["_search"])
            fetch.append(spent["_batch"])
            cpu.append(spent["cpu"])
    finally:
        for name, original in originals.items():
            setattr(splitreader, name, original)
    return statistics.median(index), statistics.median(fetch), statistics.median(cpu)


def run_suite(uri: str, parquet: str, repeat: int, options: dict[str, str]) -> None:
    import duckdb

    from indextables.search import open_table

    table = open_table(uri, options=options)
    db = duckdb.connect()
    pq = f"read_parquet('{parquet}')"

    def duck(sql: str) -> Callable[[], int]:
        return duck_rows(db, sql)

    def duck_scalar(sql: str) -> Callable[[], int]:
        return lambda: int(db.sql(sql).fetchall()[0][0])

    print(f"table: {len(table.files)} splits, version {table.version}")
    needle = measure(lambda: table.search(NEEDLE).num_rows, repeat)
    needle_db = measure(duck(f"SELECT * FROM {pq} WHERE {NEEDLE_SQL}"), repeat)
    line("needle, search", needle, needle_db)
    index, fetch, fetch_cpu = phases(lambda: table.search(NEEDLE), repeat)
    print(
        f"{'  of which':<30} the index (Tantivy query, every split) {index * 1000:.2f} ms; "
        f"row fetch {fetch * 1000:.2f} ms = {fetch / max(1, needle[2]) * 1e6:.1f} us a row "
        f"({needle[2]} rows); the rest (plan, cache lease, Arrow) "
        f"{(needle[0] - index - fetch) * 1000:.2f} ms"
    )
    print(
        f"{'  needle row fetch':<30} {fetch_cpu / max(1, needle[2]) * 1e6:.2f} us/row "
        f"(process CPU time of the fetch, median; wall {fetch / max(1, needle[2]) * 1e6:.2f}; "
        f"load average {os.getloadavg()[0]:.1f})"
    )
    ids = measure(lambda: table.search(NEEDLE, columns=["id"]).num_rows, repeat)
    print(f"{'  needle, id column only':<30} {ids[0] * 1000:9.2f} ms")
    line(
        "count, text query",
        measure(lambda: table.count(NEEDLE), repeat),
        measure(duck_scalar(f"SELECT count(*) FROM {pq} WHERE {NEEDLE_SQL}"), repeat),
    )
    if hasattr(table, "aggregate"):
        line(
            "terms (rows per level)",
            measure(
                lambda: table.aggregate(group_by=["level"], metrics={"n": "count"}).num_rows,
                repeat,
            ),
            measure(duck(f"SELECT level, count(*) AS n FROM {pq} GROUP BY level"), repeat),
        )
    else:
        print(f"{'terms (rows per level)':<30} not run: SearchTable.aggregate does not exist yet")
    how, exact = exact_search(table)
    line(
        f"exact host-42 ({how})",
        measure(lambda: exact().num_rows, repeat),
        measure(duck(f"SELECT * FROM {pq} WHERE {EXACT}"), repeat),
    )
    exact_cpu(exact, repeat)
    polars_suite(table, exact, repeat)
    rss(uri, options)


def exact_cpu(exact: Callable[..., Any], repeat: int) -> None:
    """The exact match's process CPU (all threads) against its wall time, and how many
    chunks ``read.docStoreThreads=auto`` splits a large decode into right now."""
    from indextables.search.read.docstore.pool import workers

    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        exact()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(
        f"{'  exact, CPU':<30} process CPU {cpu * 1000:.1f} ms, wall {wall * 1000:.1f} ms "
        f"({cpu / wall:.2f} cores busy); docStoreThreads=auto decodes in {workers('auto')} "
        f"chunk(s) now (1-minute load {os.getloadavg()[0]:.1f})"
    )


def polars_suite(table: Any, exact: Callable[..., Any], repeat: int) -> None:
    """The Polars IO source vs Polars handed a finished Arrow answer."""
    import polars as pl

    from indextables.search.polars import scan_indextables

    def source(query: str | None = None) -> Any:
        # The opened table, as from_arrow(table.search(...)) uses it: neither side re-reads
        # the log (scan_indextables(uri) would add open_table's ~1-3 ms to each question).
        return scan_indextables(table, query=query)

    cases = (
        (
            "needle",
            lambda: source(NEEDLE).collect().height,
            lambda: pl.from_arrow(table.search(NEEDLE)).height,
        ),
        (
            "exact host-42",
            lambda: source().filter(pl.col("host") == "host-42").collect().height,
            lambda: pl.from_arrow(exact()).height,
        ),
        (
            "head(10) of id, host",
            lambda: source().select("id", "host").head(10).collect().height,
            lambda: pl.from_arrow(table.search(columns=["id", "host"], limit=10)).height,
        ),
    )
    for label, lazy, eager in cases:
        ours, theirs = measure(lazy, repeat), measure(eager, repeat)
        print(
            f"{'polars, ' + label:<30} scan_indextables {ours[0] * 1000:9.2f} ms  "
            f"from_arrow(search) {theirs[0] * 1000:9.2f} ms  "
            f"source/from_arrow = {ours[0] / theirs[0]:5.2f}x  rows {ours[2]} / {theirs[2]}",
            flush=True,
        )


def rss(uri: str, options: dict[str, str]) -> None:
    """Peak RSS of a full scan(), measured in a fresh process."""
    args = [sys.executable, os.path.abspath(__file__), "--rss-child", uri]
    for key, value in options.items():
        args += ["--option", f"{key}={value}"]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    print(done.stdout.strip(), flush=True)


def rss_child(uri: str, options: dict[str, str]) -> None:
    from indextables.search import open_table

    table = open_table(uri, options=options)
    before = _current_rss_mb()
    start, rows, batches = time.perf_counter(), 0, 0
    for batch in table.scan():
        rows += batch.num_rows
        batches += 1
    elapsed = time.perf_counter() - start
    peak = _peak_rss_mb()
    print(
        f"{'full scan() RSS':<30} peak {peak:.0f} MB (before the scan: "
        f"{before:.0f} MB), {rows:,} rows in {batches} batches, {elapsed:.1f} s "
        f"({rows / elapsed:,.0f} rows/s)"
    )


def _peak_rss_mb() -> float:
    """This process's peak RSS since it started (``VmHWM``).

    Not ``getrusage().ru_maxrss``: Linux keeps that across ``execve``, so a child
    started by a large parent reports the parent's size at the fork.
    """
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _current_rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> int:
    arguments = parser(
        repeat=5,
        path=os.path.join(os.path.expanduser("~"), ".cache", "indextables-bench-search"),
        path_help="where the tables are written once and reused",
    )
    arguments.add_argument(
        "--docstore-block-size",
        type=int,
        default=None,
        help="indexWriter.docStoreBlockSize of the written tables (default: the engine's); "
        "its tables are kept apart under --path",
    )
    arguments.add_argument("--rss-child", default=None, help=argparse.SUPPRESS)
    arguments.add_argument("--option", action="append", default=[], help=argparse.SUPPRESS)
    arguments.add_argument(
        "--write",
        action="store_true",
        help="run the write benchmark instead (benchmarks/write.py, 1M rows unless --rows)",
    )
    arguments.add_argument(
        "--companion",
        action="store_true",
        help="run the companion benchmark instead (benchmarks/companion.py)",
    )
    args = arguments.parse_args()
    if args.companion:
        import companion

        return companion.main(["--rows", str(args.rows), "--repeat", str(min(args.repeat, 3))])
    if args.write:
        import write

        rows = args.rows if "--rows" in sys.argv else 1_000_000
        passed = ["--rows", str(rows), "--repeat", str(min(args.repeat, 3))]
        if args.docstore_block_size is not None:
            passed += ["--docstore-block-size", str(args.docstore_block_size)]
        return write.main(passed)
    if args.rss_child:
        rss_child(args.rss_child, dict(o.split("=", 1) for o in args.option))
        return 0
    set_block_size(args.docstore_block_size)
    uri, parquet = tables(args.path, args.rows, args.docstore_block_size)
    options = {"spark.indextables.cache.directoryPath": os.path.join(args.path, "split-cache")}
    print(f"search, {args.rows:,} rows, median of {args.repeat} warm runs:")
    run_suite(uri, parquet, args.repeat, options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
