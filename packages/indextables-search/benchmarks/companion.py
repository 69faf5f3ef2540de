"""Companion index benchmark: the log rows as a Delta table, indexed in HYBRID mode (figures only).

In one run, over the rows of ``logdata.py`` (default 2,000,000) written as a
Delta table of ``--files`` Parquet files (deltalake, its default compression):

- build: ``build_companion`` (HYBRID, ``message`` tokenized) vs ``write_table``
  of the same rows as an IndexTables table (from memory), rows/s of each and
  the ratio (wall and CPU seconds: on a shared machine CPU is the steadier);
- size: the companion's split bytes / the source's Parquet bytes (target
  <= 0.5x), with the IndexTables copy's bytes for comparison;
- needle (``message:needlezz``, ~0.01% of rows) and exact match
  (``host = 'host-42'``, 0.2%): ``SearchTable.search`` on the companion vs
  DuckDB over the source's Parquet files (``LIKE`` / ``=``), median of
  ``--repeat`` warm runs, and the IndexTables copy for comparison;
- with ``--spark``: the same two through Spark's Parquet read (``LIKE``), against
  ``itp.search`` and ``spark.read.format("indextables")`` (``query`` option / ``where``,
  filter pushdown on) on the companion, and ``itp.search``'s time without its collect;
- the default layout (the reference's) and the small one (:data:`SMALL_LAYOUT`:
  ``id`` fast-only, ``message``, ``host`` and ``level`` basic postings) side by
  side: bytes vs Parquet, build time, needle, exact match and ``id = n`` times
  (docs/companion.md, "Choosing a smaller layout");
- a sync after one appended file (files indexed must be 1) and a sync of an
  unchanged source (``no_action``).

With ``--build-only``: only the build, through the segment writer (the default
``indexWriter.feed``) and through tantivy-py (``indexWriter.feed=json``), alternating
``--repeat`` times over the same source: wall and CPU seconds, rows per CPU-second,
the segments' sizes of each split, and the medians' ratios (segments / json).

Usage: ``python benchmarks/companion.py [--rows 2000000] [--files 4] [--repeat 3]
[--spark] [--search-only] [--build-only] [--layout default|small] [--path DIR]
[--cache DIR]``, or
``tox -e bench-search -- --companion``
(``run.py --companion`` hands over here). Everything is written to a fresh temporary
directory, or ``--path``. ``--spark`` (pyspark env) adds ``itp.search`` on the
companion beside Spark's Parquet read. ``--search-only`` (the 20M scale:
``--rows 20000000 --files 40 --path DIR``) writes the source and builds its companion
once under ``--path`` (reused after), then times only the searches; ``--layout small``
builds and searches the small layout's companion of the same source instead.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import EXACT, NEEDLE, NEEDLE_SQL, duck_rows, measure, parser
from logdata import OPTIONS, chunks, log_rows

#: The small layout: ``id`` kept as a fast field only; ``message`` without frequencies
#: and positions (no phrase queries on it), and the exact strings ``host`` and ``level``
#: likewise (one token a value: nothing lost).
SMALL_LAYOUT = {
    "spark.indextables.indexing.fastonlyfields": "id",
    "spark.indextables.indexing.indexrecordoption.basic": "message,host,level",
}
LAYOUTS: dict[str, dict[str, str]] = {"default": {}, "small": SMALL_LAYOUT}
ID_EXACT = "id = 123457"


def cpu_seconds() -> float:
    """CPU seconds of this process (all threads) and of its finished child processes
    (the companion build's workers)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(action: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall and CPU seconds (this process and its workers) of one run, and its result."""
    start, cpu = time.perf_counter(), cpu_seconds()
    result = action()
    return time.perf_counter() - start, cpu_seconds() - cpu, result


def line(
    label: str, ours: tuple[float, float, Any], base: tuple[float, float, Any], who: str
) -> None:
    print(
        f"{label:<34} companion {ours[0] * 1000:9.2f} ms (±{ours[1] * 500:6.2f})  "
        f"{who} {base[0] * 1000:9.2f} ms (±{base[1] * 500:6.2f})  "
        f"{who}/companion = {base[0] / ours[0]:7.1f}x  results {ours[2]} / {base[2]}",
        flush=True,
    )


def write_source(path: str, rows: int, files: int) -> list[pa.RecordBatch]:
    """The log rows as a Delta table of ``files`` files (one append each); the batches."""
    from deltalake import write_deltalake

    batches = list(chunks(0, rows))
    table = pa.Table.from_batches(batches)
    step = -(-rows // files)
    for start in range(0, rows, step):
        write_deltalake(path, table.slice(start, step), mode="append")
    return batches


def source_files(path: str) -> list[str]:
    from deltalake import DeltaTable

    return [uri.removeprefix("file://") for uri in DeltaTable(path).file_uris()]


def split_bytes(uri: str) -> int:
    from indextables.search import open_table

    return sum(os.path.getsize(os.path.join(uri, p)) for p in open_table(uri).files)


# Untimed runs of each Spark-side action before it is timed (see spark_suite).
WARM = 3


def spark_suite(
    files: Sequence[str], index: str, repeat: int, options: dict[str, str]
) -> dict[str, tuple[float, float, Any]]:
    """Spark's Parquet read of the source (``LIKE`` / ``=``) and ``itp.search`` on the
    companion (needle / ``where=``), every answer collected, in one local[2] session."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import indextables.pyspark as itp

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    itp.register(spark)  # filter pushdown: spark.read's where reaches the index
    try:
        frame = spark.read.parquet(*files)

        def read() -> Any:  # a fresh reader each time: .option() changes the reader it is on
            return spark.read.format("indextables").options(**options)

        # The companion's searches first: a scan of the whole source leaves the JVM
        # collecting its garbage for seconds after (G1's concurrent work on the same two
        # cores), which the next measured search would pay for. Every action here runs
        # WARM times untimed first: the JVM compiles a method once it has run often enough,
        # and a search's JVM part (the local relation built, planned and collected) runs
        # once per call, where a scan's per-row loops run millions of times in its first.
        found = {
            "itp needle": measure(
                lambda: len(itp.search(spark, index, NEEDLE, options=options).collect()),
                repeat,
                warm=WARM,
            ),
            "itp exact": measure(
                lambda: len(itp.search(spark, index, where=EXACT, options=options).collect()),
                repeat,
                warm=WARM,
            ),
            "read needle": measure(
                lambda: len(read().option("query", NEEDLE).load(index).collect()),
                repeat,
                warm=WARM,
            ),
            "read exact": measure(
                lambda: len(read().load(index).where(EXACT).collect()), repeat, warm=WARM
            ),
            "itp needle phases": phases(spark, index, options, repeat, query=NEEDLE),
            "itp exact phases": phases(spark, index, options, repeat, where=EXACT),
        }
        found["needle"] = measure(
            lambda: frame.where(NEEDLE_SQL).collect().__len__(), repeat, warm=WARM
        )
        found["exact"] = measure(lambda: frame.where(EXACT).collect().__len__(), repeat, warm=WARM)
        return found
    finally:
        spark.stop()


def phases(
    spark: Any,
    index: str,
    options: dict[str, str],
    repeat: int,
    *,
    query: str | None = None,
    where: str | None = None,
) -> tuple[float, float, Any]:
    """Interleaved in the Spark session, one untimed round first: the engine's search, then
    ``itp.search`` split into building its DataFrame (the search; a driver-side answer is
    handed to the JVM only when a method needs it) and collecting it.
    Medians in seconds as (engine, built, collected); the result's third item is the rows."""
    import indextables.pyspark as itp
    from indextables.search import open_table

    table = open_table(index, options=options)
    runs: list[tuple[float, float, float]] = []
    rows = None
    for _ in range(repeat + 1):
        start = time.perf_counter()
        engine_rows = table.search(query, where=where).num_rows
        searched = time.perf_counter()
        frame = itp.search(spark, index, query, where=where, options=options)
        built = time.perf_counter()
        rows = len(frame.collect())
        collected = time.perf_counter()
        assert rows == engine_rows, (rows, engine_rows)
        runs.append((searched - start, built - searched, collected - built))
    medians = [statistics.median(run[i] for run in runs[1:]) for i in range(3)]
    return medians[0], medians[1], (medians[2], rows)


def layouts(
    source: str, root: str, options: dict[str, str], parquet_bytes: int, repeat: int
) -> None:
    """The default and the small layout side by side, each built here in turn (bytes,
    build wall/CPU seconds, needle, exact and ``id =`` search times)."""
    from indextables.search import build_companion, open_table

    built: dict[str, tuple[float, float, str]] = {}
    for name, layout in (("default", {}), ("small (id fast-only, strings basic)", SMALL_LAYOUT)):
        uri = os.path.join(root, "layout-" + name.split()[0])
        shutil.rmtree(uri, ignore_errors=True)
        wall, cpu, _ = timed(
            lambda uri=uri, layout=layout: build_companion(
                source, uri, source_format="delta", indexing_modes={"message": "text"},
                fast_field_mode="HYBRID", options={**options, **layout},
            )
        )  # fmt: skip
        built[name] = (wall, cpu, uri)
    print(
        f"{'layout':<36} {'bytes':>12} {'x Parquet':>9} {'build s':>8} {'cpu s':>7} "
        f"{'needle ms':>10} {'exact ms':>9} {'id= ms':>8}"
    )
    for name, (build_s, cpu_s, uri) in built.items():
        table = open_table(uri, options=options)
        needle = measure(lambda t=table: t.search(NEEDLE).num_rows, repeat)
        exact = measure(lambda t=table: t.search(where=EXACT).num_rows, repeat)
        by_id = measure(lambda t=table: t.search(where=ID_EXACT).num_rows, repeat)
        size = split_bytes(uri)
        print(
            f"{name:<36} {size:12,} {size / parquet_bytes:9.3f} {build_s:8.2f} {cpu_s:7.2f} "
            f"{needle[0] * 1000:10.2f} {exact[0] * 1000:9.2f} {by_id[0] * 1000:8.2f}  "
            f"(rows {needle[2]}/{exact[2]}/{by_id[2]})"
        )


def searches(
    companion: Any,
    db: Any,
    scan: str,
    files: Sequence[str],
    index: str,
    options: dict[str, str],
    repeat: int,
    *,
    spark: bool,
) -> None:
    """The needle and the exact match: ``SearchTable.search`` on the companion against
    DuckDB over the source's files, the index-only count, and with ``spark`` Spark's
    Parquet read of the source against the engine and against ``itp.search``."""
    needle = measure(lambda: companion.search(NEEDLE).num_rows, repeat)
    line(
        "needle, search",
        needle,
        measure(duck_rows(db, f"SELECT * FROM {scan} WHERE {NEEDLE_SQL}"), repeat),
        "duckdb",
    )
    exact = measure(lambda: companion.search(where=EXACT).num_rows, repeat)
    line(
        "exact host-42, search(where=)",
        exact,
        measure(duck_rows(db, f"SELECT * FROM {scan} WHERE {EXACT}"), repeat),
        "duckdb",
    )
    count = measure(lambda: companion.count(NEEDLE), repeat)
    print(f"{'  count of the needle (index only)':<34} {count[0] * 1000:9.2f} ms ({count[2]})")
    if spark:
        found = spark_suite(files, index, repeat, options)
        line("needle, Spark Parquet LIKE", needle, found["needle"], "spark")
        line("exact host-42, Spark Parquet =", exact, found["exact"], "spark")
        line("needle, itp.search", found["itp needle"], found["needle"], "spark")
        line("exact host-42, itp.search where=", found["itp exact"], found["exact"], "spark")
        line("needle, spark.read query", found["read needle"], found["needle"], "spark")
        line("exact host-42, spark.read where", found["read exact"], found["exact"], "spark")
        for label in ("needle", "exact"):
            engine, built, (collect, rows) = found[f"itp {label} phases"]
            print(
                f"  itp.search {label}, interleaved with the engine in the session (medians): "
                f"engine search {engine * 1000:.1f} ms; itp.search DataFrame built "
                f"{built * 1000:.1f} ms, its collect {collect * 1000:.1f} ms ({rows} rows)",
                flush=True,
            )


def search_only(args: Any) -> int:
    """``--search-only``: the Delta source and its companion (written once per rows and
    files under ``--path``, reused after), their bytes, then :func:`searches`."""
    import duckdb

    from indextables.search import build_companion, open_table

    root = args.path or tempfile.mkdtemp(prefix="indextables-bench-companion-")
    base = os.path.join(root, f"companion-{args.rows}-{args.files}")
    # the default layout's companion is base-index (base.done once built, which also
    # says the source is whole); another layout's is base-<layout>-index beside it
    named = base if args.layout == "default" else f"{base}-{args.layout}"
    source, index, marker = base + "-delta", named + "-index", named + ".done"
    source_marker = base + "-source.done"
    layout = LAYOUTS[args.layout]
    # the source is read where it is now (the index records where it was built), and
    # the split cache may live elsewhere (--cache: a read-only --path)
    options = {
        "spark.indextables.cache.directoryPath": args.cache or os.path.join(root, "split-cache"),
        "spark.indextables.companion.parquetTableRoot": source,
    }
    print(
        f"companion, {args.rows:,} rows in {args.files} Delta files, {args.layout} layout "
        f"{layout or '(the reference' + chr(39) + 's)'}, load {os.getloadavg()}"
    )
    if os.path.exists(marker):
        print(f"reusing {named}-index and its source")
    else:
        shutil.rmtree(index, ignore_errors=True)
        os.makedirs(root, exist_ok=True)
        if os.path.exists(source_marker) or os.path.exists(base + ".done"):
            print(f"reusing the source {source}")
        else:
            shutil.rmtree(source, ignore_errors=True)
            wrote = timed(lambda: write_source(source, args.rows, args.files))
            print(f"{'source written':<34} {wrote[0]:8.2f} s wall")
            with open(source_marker, "w", encoding="utf-8") as done:
                done.write("written\n")
        built = timed(
            lambda: build_companion(
                source, index, source_format="delta", indexing_modes={"message": "text"},
                fast_field_mode="HYBRID", options={**options, **layout},
            )
        )  # fmt: skip
        print(
            f"{'build companion (HYBRID)':<34} {built[0]:8.2f} s wall {built[1]:8.2f} s cpu  "
            f"{args.rows / built[0]:12,.0f} rows/s  ({built[2].splits_created} splits)"
        )
        with open(marker, "w", encoding="utf-8") as done:
            done.write("built\n")
    files = source_files(source)
    parquet_bytes = sum(os.path.getsize(f) for f in files)
    index_bytes = split_bytes(index)
    print(
        f"{'size':<34} source Parquet {parquet_bytes / 1e6:8.1f} MB  companion "
        f"{index_bytes / 1e6:8.1f} MB = {index_bytes / parquet_bytes:.3f}x (target <= 0.5)"
    )
    scan = "read_parquet([" + ", ".join(f"'{f}'" for f in files) + "])"
    db = duckdb.connect()
    companion = open_table(index, options=options)
    searches(companion, db, scan, files, index, options, args.repeat, spark=args.spark)
    print(f"load after: {os.getloadavg()}")
    if args.path is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0


FEED_KEY = "spark.indextables.indexWriter.feed"


def segment_sizes(uri: str) -> list[list[int]]:
    """Each split's segment sizes (documents), from the ``meta.json`` in its bundle."""
    import json

    from indextables.protocol.splitbundle import parse_split_footer
    from indextables.search.table.tableaccess import load_view

    found = []
    live = load_view(uri, {}).splits
    for split in live.select(range(len(live.paths))):
        with open(os.path.join(uri, split.path), "rb") as handle:
            data = handle.read()
        start = split.entry.ref.footer_start_offset or 0
        files = parse_split_footer(data, footer_start_offset=start, path=split.path).files
        begin, end = files["meta.json"]
        meta = json.loads(data[begin:end])
        found.append([int(s["max_doc"]) for s in meta["segments"]])
    return found


def build_only(args: Any) -> int:
    """``--build-only``: the companion built through the segment writer and through
    tantivy-py (``indexWriter.feed=json``), alternating, over one source."""
    from indextables.search import build_companion

    root = args.path or tempfile.mkdtemp(prefix="indextables-bench-companion-")
    source = os.path.join(root, "delta")
    shutil.rmtree(source, ignore_errors=True)
    print(f"companion build, {args.rows:,} rows in {args.files} Delta files, "
          f"load {os.getloadavg()}", flush=True)  # fmt: skip
    write_source(source, args.rows, args.files)
    runs: dict[str, list[tuple[float, float]]] = {"segments": [], "json": []}
    for round_number in range(args.repeat):
        for feed in ("segments", "json") if round_number % 2 == 0 else ("json", "segments"):
            uri = os.path.join(root, f"companion-{feed}")
            shutil.rmtree(uri, ignore_errors=True)
            options = {"spark.indextables.companion.parquetTableRoot": source}
            if feed == "json":
                options[FEED_KEY] = "json"
            wall, cpu, result = timed(
                lambda uri=uri, options=options: build_companion(
                    source, uri, source_format="delta", indexing_modes={"message": "text"},
                    fast_field_mode="HYBRID", options=options,
                )
            )  # fmt: skip
            runs[feed].append((wall, cpu))
            print(
                f"  {feed:<9} {wall:8.2f} s wall {cpu:8.2f} s cpu  "
                f"{args.rows / cpu:10,.0f} rows/cpu-s  {args.rows / wall:10,.0f} rows/s  "
                f"splits {result.splits_created}, {split_bytes(uri):,} bytes, "
                f"segments {segment_sizes(uri)}",
                flush=True,
            )
    medians = {
        feed: (statistics.median(w for w, _ in found), statistics.median(c for _, c in found))
        for feed, found in runs.items()
    }
    for feed, (wall, cpu) in medians.items():
        print(
            f"{'build ' + feed + ' (median)':<34} {wall:8.2f} s wall {cpu:8.2f} s cpu  "
            f"{args.rows / cpu:10,.0f} rows/cpu-s  {args.rows / wall:10,.0f} rows/s"
        )
    (seg_wall, seg_cpu), (json_wall, json_cpu) = medians["segments"], medians["json"]
    print(
        f"{'segments / json':<34} {json_wall / seg_wall:.2f}x wall, "
        f"{json_cpu / seg_cpu:.2f}x rows/cpu-s (target >= 2)"
    )
    print(f"load after: {os.getloadavg()}")
    if args.path is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parser(repeat=3, path=None, path_help="work directory (default: a fresh temp dir)")
    arguments.add_argument("--files", type=int, default=4, help="Parquet files in the Delta table")
    arguments.add_argument(
        "--spark", action="store_true",
        help="also time Spark's Parquet LIKE / = and itp.search on the companion (pyspark env)",
    )  # fmt: skip
    arguments.add_argument(
        "--search-only", action="store_true",
        help="only the source, its companion (both kept and reused under --path) and the "
        "searches: no IndexTables copy, parallel build, layouts or sync (the 20M scale)",
    )  # fmt: skip
    arguments.add_argument(
        "--cache", default=None, help="split cache directory (default: under --path)"
    )
    arguments.add_argument(
        "--layout", choices=sorted(LAYOUTS), default="default",
        help="--search-only: the companion's layout (small: SMALL_LAYOUT, built beside "
        "the default one and searched the same way)",
    )  # fmt: skip
    arguments.add_argument(
        "--build-only", action="store_true",
        help="only the build: the segment writer against tantivy-py (indexWriter.feed=json), "
        "alternating --repeat times over one source",
    )  # fmt: skip
    args = arguments.parse_args(argv)
    if args.build_only:
        return build_only(args)
    if args.search_only:
        return search_only(args)

    import duckdb

    from indextables.search import build_companion, open_table, write_table

    root = args.path or tempfile.mkdtemp(prefix="indextables-bench-companion-")
    source, index, copy = (os.path.join(root, n) for n in ("delta", "companion", "copy"))
    for folder in (source, index, copy):
        shutil.rmtree(folder, ignore_errors=True)
    # the source is read where it is now (the index records where it was built), and
    # the split cache may live elsewhere (--cache: a read-only --path)
    options = {
        "spark.indextables.cache.directoryPath": args.cache or os.path.join(root, "split-cache"),
        "spark.indextables.companion.parquetTableRoot": source,
    }
    print(f"companion, {args.rows:,} rows in {args.files} Delta files, load {os.getloadavg()}")
    batches = write_source(source, args.rows, args.files)
    files = source_files(source)
    parquet_bytes = sum(os.path.getsize(f) for f in files)

    built = timed(
        lambda: build_companion(
            source, index, source_format="delta", indexing_modes={"message": "text"},
            fast_field_mode="HYBRID", options=options,
        )
    )  # fmt: skip
    table = pa.Table.from_batches(batches)
    written = timed(lambda: write_table(copy, table, options=OPTIONS))
    rate = args.rows / built[0]
    print(
        f"{'build companion (HYBRID)':<34} {built[0]:8.2f} s wall {built[1]:8.2f} s cpu  "
        f"{rate:12,.0f} rows/s  ({built[2].parquet_files_indexed} files, "
        f"{built[2].splits_created} splits)"
    )
    print(
        f"{'write_table (same rows)':<34} {written[0]:8.2f} s wall {written[1]:8.2f} s cpu  "
        f"{args.rows / written[0]:12,.0f} rows/s"
    )
    print(
        f"{'  companion / write_table rate':<34} {written[0] / built[0]:.2f}x wall, "
        f"{written[1] / built[1]:.2f}x cpu (target >= 1)"
    )
    # The same rows as one group per worker (TARGET INPUT SIZE = the source / workers), the
    # groups' splits built side by side (spark.indextables.companion.buildParallelism).
    workers = max(1, len(os.sched_getaffinity(0)))
    split_rows = timed(
        lambda: build_companion(
            source, os.path.join(root, "companion-parallel"), source_format="delta",
            indexing_modes={"message": "text"}, fast_field_mode="HYBRID",
            target_input_size=-(-parquet_bytes // workers),
            options={**options, "spark.indextables.companion.buildParallelism": str(workers)},
        )
    )  # fmt: skip
    print(
        f"{'build companion, groups in parallel':<34} {split_rows[0]:8.2f} s wall "
        f"{split_rows[1]:8.2f} s cpu  {args.rows / split_rows[0]:12,.0f} rows/s  "
        f"({split_rows[2].splits_created} splits, {workers} workers): "
        f"{written[0] / split_rows[0]:.2f}x write_table's rate wall, "
        f"{written[1] / split_rows[1]:.2f}x cpu"
    )
    index_bytes, copy_bytes = split_bytes(index), split_bytes(copy)
    print(
        f"{'size':<34} source Parquet {parquet_bytes / 1e6:8.1f} MB  companion "
        f"{index_bytes / 1e6:8.1f} MB = {index_bytes / parquet_bytes:.3f}x (target <= 0.5)  "
        f"IndexTables copy {copy_bytes / 1e6:8.1f} MB = {copy_bytes / parquet_bytes:.2f}x"
    )

    companion = open_table(index, options=options)
    full = open_table(copy, options=options)
    db = duckdb.connect()
    scan = "read_parquet([" + ", ".join(f"'{f}'" for f in files) + "])"

    searches(companion, db, scan, files, index, options, args.repeat, spark=args.spark)
    copy_needle = measure(lambda: full.search(NEEDLE).num_rows, args.repeat)
    copy_exact = measure(lambda: full.search(where=EXACT).num_rows, args.repeat)
    print(
        f"{'  the IndexTables copy':<34} needle {copy_needle[0] * 1000:9.2f} ms, "
        f"exact {copy_exact[0] * 1000:9.2f} ms"
    )

    layouts(source, root, options, parquet_bytes, args.repeat)

    from deltalake import write_deltalake

    write_deltalake(
        source, pa.Table.from_batches([log_rows(args.rows, args.rows + 10_000)]), mode="append"
    )
    synced = timed(lambda: build_companion(source, index, source_format="delta", options=options))
    again = timed(lambda: build_companion(source, index, source_format="delta", options=options))
    print(
        f"{'sync after one appended file':<34} {synced[0]:8.2f} s  files indexed "
        f"{synced[2].parquet_files_indexed} (must be 1), splits invalidated "
        f"{synced[2].splits_invalidated}; unchanged source: {again[2].status} in "
        f"{again[0] * 1000:.0f} ms"
    )
    print(f"load after: {os.getloadavg()}")
    if args.path is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
