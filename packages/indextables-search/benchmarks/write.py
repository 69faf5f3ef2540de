"""Write speed: ``write_table`` vs Parquet vs a bare tantivy-py pipeline (figures only).

In one run over the same log rows (``logdata.py``, default 1,000,000 in
500,000-row batches, already built in memory before any timing):

- ``write_table`` with one writer (one process: Arrow -> JSON lines -> Tantivy,
  the Arrow copy, the SSTable rewrite, the bundle and the commit), and with
  ``--workers`` writers (default: every core; threads of this process, each
  with its own Tantivy writer, see ``write/parallelwrite.py``);
- ``write_table`` with one writer and ``indexWriter.feed=json`` (the "JSON feed" row:
  Arrow -> JSON lines -> tantivy-py, explicitly; the ``write_table`` row is the default
  feed, segments);
- ``write_table`` with one writer and ``indexWriter.feed=documents`` (typed
  ``tantivy.Document`` objects instead of JSON lines, see ``write/jsonfeed.py``);
- ``write_table`` with one writer and ``indexWriter.feed=segments`` (whole segments
  written by the segment writer from the Arrow columns, no tantivy-py, see
  ``write/segfeed.py``; the rows the segment feed sent through tantivy-py instead,
  if any, are printed);
- ``pyarrow.parquet.write_table`` (snappy, row groups of 1M rows);
- the floor: a bare tantivy-py pipeline over the same Arrow batches with the
  same schema (``create_index``: fieldnorms off, row key), documents built the
  cheapest way measured (one ``to_pylist`` per column, ``Document(**kwargs)``),
  ``add_document`` in 10,000-row slices, ``commit`` -- no Arrow copy, no
  statistics, no SSTable rewrite, no bundle, no commit to a log;

each the median of ``--repeat`` rounds (the five interleaved in each round),
with the cores each kept busy (CPU / wall) and the ratios, then the bytes per row
of the written split by file kind (``.store``, ``.idx``, ``.pos``, ``.term``,
``.fast``, ``.fieldnorm``, the Arrow copy...) against Parquet's, written once
with ``indexWriter.arrowCopy=all`` (every column copied, as before the option)
and once with the default, and the split's segment count.

Then MERGE SPLITS (``--merge-splits`` N, default 20; 0 skips it): the same rows
written as N splits (one ``write_table`` each, timed: the write rate of these
rows), merged by ``merge_table`` in this process (the engine's entry point;
the Spark adapter's ``itp.sql("MERGE SPLITS ...")`` runs the same task per
group: ``packages/indextables-pyspark/benchmarks/run.py merge``) by segments,
and by re-indexing the rows (the path kept for splits without an Arrow copy),
each in rows/s against the write rate, with where the segment merge's time
goes, and a count and a search on each merged table (many segments vs one).

``--tokenize-only``: the segment writer's stages alone (``write/segwriter``, not a
write path yet): the tokens of every text and string column of the rows by its Cython
kernel and by its pure twin, the inverted-index files of those columns (tokens,
fieldnorms, postings, positions, term dictionary: ``invertedfiles.py``), against
tantivy-py's own analyzers over the same values (``pre_tokenize`` per value) and the
whole bare tantivy-py pipeline above, in rows per CPU-second.

Then the mixed table (``--mixed-rows`` N, default a fifth of ``--rows``; 0 skips it;
``--mixed-only``): 20 columns of mixed kinds (``mixeddata.py``: integers, floats, a
bool, a date, timestamps, IPv4 and IPv6 addresses, binaries, exact strings, texts and a
list of integers) written by the segments feed, the JSON feed and the bare tantivy-py
pipeline (typed documents from ``convert.documents``, ``add_document``, ``commit``) in
rows per CPU-second, with the rows the segments feed sent through tantivy-py (the list
is a JSON field, which the segment writer does not write, so the whole table is); then
the same table without its list (19 columns).

Then peak memory (``--memory-rows`` N, default two fifths of ``--rows``; 0 skips it;
``--memory-only``):
one ``feed=segments`` write of the mixed table without its list at writer heaps of
64 MB and 256 MB, for N and 2N rows, each in a fresh process, printing the peak RSS
growth over the RSS once the table is built (``VmHWM`` reset through ``clear_refs``).

``--docstore-block-size N`` writes every split (ours, the floor's index, the merges'
sources) with ``indexWriter.docStoreBlockSize=N``.

Usage: ``python benchmarks/write.py [--rows 1000000] [--repeat 3] [--merge-splits 20]``, or
``tox -e bench-search -- --write`` (``run.py --write`` hands over here).
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq
import tantivy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from logdata import OPTIONS, chunks, set_block_size

from indextables.protocol.splitbundle import parse_split_footer
from indextables.search import open_table, write_table
from indextables.search.options import DEFAULT_ARROW_COPY, parse_indexing, parse_write
from indextables.search.schema import tokenizers
from indextables.search.schema.mapping import (
    ROW_KEY_FIELD,
    FieldKind,
    create_index,
    field_specs,
)
from indextables.search.table.tableaccess import load_view
from indextables.search.write.parallelwrite import default_workers
from indextables.search.write.segwriter import analyzer_for, impl, tokenize
from indextables.search.write.segwriter.invertedfiles import TextField, inverted_files

ARROW_COPY = "spark.indextables.indexWriter.arrowCopy"
FEED = "spark.indextables.indexWriter.feed"


def timed_rounds(
    runs: dict[str, Callable[[str], None]], repeat: int, root: str
) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds of each run, the runs interleaved round by round.

    Interleaving spreads a shared machine's changing load over every run alike.
    """
    walls: dict[str, list[float]] = {name: [] for name in runs}
    cpus: dict[str, list[float]] = {name: [] for name in runs}
    for k in range(repeat):
        for name, action in runs.items():
            target = os.path.join(root, f"run-{k}")
            start, cpu = time.perf_counter(), time.process_time()
            action(target)
            walls[name].append(time.perf_counter() - start)
            cpus[name].append(time.process_time() - cpu)
            shutil.rmtree(target, ignore_errors=True)
    return {n: (statistics.median(walls[n]), statistics.median(cpus[n])) for n in runs}


def ours(
    batches: Sequence[pa.RecordBatch], workers: int | None = None, *, feed: str | None = None
) -> Callable[[str], None]:
    table = pa.Table.from_batches(batches)
    options = dict(OPTIONS) if feed is None else {**OPTIONS, FEED: feed}

    def run(target: str) -> None:
        write_table(target, table, options=options, workers=workers)

    return run


def segment_feed_fallback(batches: Sequence[pa.RecordBatch], root: str) -> str:
    """How many rows a ``feed=segments`` write of ``batches`` sent through tantivy-py."""
    from indextables.search.write import splitwriter

    through: list[int] = []
    index = splitwriter.PartitionIndex._index

    def counted(self: object, batch: pa.RecordBatch, *args: object) -> None:
        through.append(batch.num_rows)
        index(self, batch, *args)  # type: ignore[arg-type]

    splitwriter.PartitionIndex._index = counted  # type: ignore[method-assign]
    try:
        ours(batches, 1, feed="segments")(os.path.join(root, "segments-check"))
    finally:
        splitwriter.PartitionIndex._index = index  # type: ignore[method-assign]
        shutil.rmtree(os.path.join(root, "segments-check"), ignore_errors=True)
    return f"{sum(through):,} row(s) of the segments feed went through tantivy-py"


def parquet(batches: Sequence[pa.RecordBatch]) -> Callable[[str], None]:
    table = pa.Table.from_batches(batches)

    def run(target: str) -> None:
        os.makedirs(target)
        pq.write_table(table, os.path.join(target, "rows.parquet"), row_group_size=1_000_000)

    return run


def floor(batches: Sequence[pa.RecordBatch]) -> Callable[[str], None]:
    specs = field_specs(batches[0].schema, parse_indexing(OPTIONS))
    document = tantivy.Document
    # The cheapest way measured: one typed add call per value (Document(**kwargs)
    # cannot type the unsigned row key; from_dict with a dict per row is ~2x slower).
    adders = {FieldKind.I64: document.add_integer, FieldKind.TEXT: document.add_text}
    adders[FieldKind.STRING] = document.add_text

    def run(target: str) -> None:
        os.makedirs(target)
        block = parse_write(OPTIONS).docstore_block_size
        index = create_index(specs, target, row_key=True, docstore_block_size=block)
        writer = index.writer(64 << 20, 1)
        add_document, add_key = writer.add_document, document.add_unsigned
        # 10,000-row slices, as write_table's batchSize: converting 500,000-row columns
        # at once was slower (more live objects for the garbage collector to scan).
        slices = (b.slice(o, 10_000) for b in batches for o in range(0, b.num_rows, 10_000))
        for number, batch in enumerate(slices):
            plan = [(adders[s.kind], s.name, batch.column(s.name).to_pylist()) for s in specs]
            base = number << 32
            for row in range(batch.num_rows):
                doc = document()
                for add, name, values in plan:
                    add(doc, name, values[row])
                add_key(doc, ROW_KEY_FIELD, base + row)
                add_document(doc)
        writer.commit()
        writer.wait_merging_threads()

    return run


def kind(name: str) -> str:
    if name.endswith(".arrow"):
        return "Arrow copy"
    if "." not in name or name.endswith(".json") or name.startswith("."):
        return "meta"
    return "." + name.rsplit(".", 1)[1]


def split_bytes(
    root: str, batches: Sequence[pa.RecordBatch], *, arrow_copy: str | None = None
) -> tuple[dict[str, int], int, int]:
    """Bytes by file kind of the splits ``write_table`` writes, segments, Parquet's size.

    ``arrow_copy``: the ``indexWriter.arrowCopy`` mode (None: the default).
    """
    target = os.path.join(root, "sizes")
    options = dict(OPTIONS)
    if arrow_copy is not None:
        options[ARROW_COPY] = arrow_copy
    write_table(target, pa.Table.from_batches(batches), options=options)
    sizes: dict[str, int] = collections.Counter()
    segments = 0
    live = load_view(target, OPTIONS).splits
    for split in live.select(range(len(live.paths))):
        entry = split.entry
        with open(os.path.join(target, split.path), "rb") as handle:
            data = handle.read()
        start = entry.ref.footer_start_offset or 0
        footer = parse_split_footer(data, footer_start_offset=start, path=split.path)
        for member, (begin, end) in footer.files.items():
            sizes[kind(member)] += end - begin
        segments += sum(1 for m in footer.files if m.endswith(".store"))
        sizes["footer+hotcache"] += len(data) - sum(e - b for b, e in footer.files.values())
    shutil.rmtree(target, ignore_errors=True)
    parquet(batches)(target)
    size = os.path.getsize(os.path.join(target, "rows.parquet"))
    shutil.rmtree(target, ignore_errors=True)
    return dict(sizes), segments, size


def _pieces(batches: Sequence[pa.RecordBatch], count: int) -> list[pa.Table]:
    table = pa.Table.from_batches(batches)
    step = -(-table.num_rows // count)
    return [table.slice(offset, step) for offset in range(0, table.num_rows, step)]


def _merge_once(root: str, pieces: Sequence[pa.Table], *, reindex: bool) -> dict[str, float]:
    """Write ``pieces`` as splits, then merge them; seconds (wall, CPU) of each step."""
    from indextables.search.write import merge as merge_module
    from indextables.search.write import segmentmerge

    uri = os.path.join(root, "reindexed" if reindex else "segments")
    shutil.rmtree(uri, ignore_errors=True)
    options = {**OPTIONS, "spark.indextables.cache.directoryPath": os.path.join(root, "cache")}
    start, cpu = time.perf_counter(), time.process_time()
    for piece in pieces:
        write_table(uri, piece, options=options)
    out = {"write": time.perf_counter() - start, "write cpu": time.process_time() - cpu}
    steps: dict[str, float] = collections.defaultdict(float)
    original = {
        name: getattr(merge_module, name) for name in ("download", "merge_segments", "upload_split")
    }

    def timing(name: str, action: Callable[..., object]) -> Callable[..., object]:
        def run(*args: object, **kwargs: object) -> object:
            began = time.perf_counter()
            try:
                return action(*args, **kwargs)
            finally:
                steps[name] += time.perf_counter() - began

        return run

    def refuse(*_: object) -> int:
        raise segmentmerge.SegmentMergeRefused("benchmark: re-index")

    for name, action in original.items():
        refused = reindex and name == "merge_segments"
        setattr(merge_module, name, timing(name, refuse if refused else action))
    try:
        start, cpu = time.perf_counter(), time.process_time()
        result = merge_module.merge_table(uri, options=options, target_size=1 << 40)
        out["merge"] = time.perf_counter() - start
        out["merge cpu"] = time.process_time() - cpu
    finally:
        for name, action in original.items():
            setattr(merge_module, name, action)
    if result["new_files"] != 1:
        raise SystemExit(f"the merge did not merge: {result}")
    if not reindex:
        for name, seconds in steps.items():
            out["  " + name] = seconds
    table = open_table(uri, options=options)
    for label, action in (
        ("count", lambda: table.count("message:needlezz")),
        ("search", lambda: table.search("level:ERROR", limit=10_000)),
    ):
        action()
        began = time.perf_counter()
        action()
        out[label] = time.perf_counter() - began
    out["segments"] = float(_segments(uri, options))
    return out


def _segments(uri: str, options: dict[str, str]) -> int:
    live = load_view(uri, options).splits
    total = 0
    for split in live:
        with open(os.path.join(uri, split.path), "rb") as handle:
            data = handle.read()
        start = split.entry.ref.footer_start_offset or 0
        footer = parse_split_footer(data, footer_start_offset=start, path=split.path)
        total += sum(1 for m in footer.files if m.endswith(".store"))
    return total


def merge_figures(batches: Sequence[pa.RecordBatch], count: int, root: str) -> None:
    """Print MERGE SPLITS of ``count`` splits against the write rate of the same rows."""
    pieces = _pieces(batches, count)
    rows = sum(p.num_rows for p in pieces)
    print(f"MERGE SPLITS of {len(pieces)} splits, {rows:,} rows, one process:", flush=True)
    for reindex in (False, True):
        got = _merge_once(root, pieces, reindex=reindex)
        label = "re-index" if reindex else "segments"
        write, merge = rows / got["write"], rows / got["merge"]
        print(
            f"  {label:<9} write {write:>9,.0f} rows/s ({rows / got['write cpu']:>9,.0f}/CPU-s)"
            f"  merge {merge:>11,.0f} rows/s ({rows / got['merge cpu']:>11,.0f}/CPU-s)"
            f"  merge / write = {merge / write:.2f}x wall, "
            f"{got['write cpu'] / got['merge cpu']:.2f}x CPU",
            flush=True,
        )
        print(
            f"            merged: {got['segments']:.0f} segment(s); "
            f"count {got['count'] * 1000:.1f} ms, search {got['search'] * 1000:.1f} ms"
        )
        for name in ("  download", "  merge_segments", "  upload_split"):
            if name in got:
                print(f"          {name.strip():<20} {got[name]:7.2f} s of {got['merge']:.2f} s")


def _token_runs(batches: Sequence[pa.RecordBatch]) -> dict[str, Callable[[str], None]]:
    """The tokenizer runs of :func:`tokenize_figures`, keyed by label."""
    specs = field_specs(batches[0].schema, parse_indexing(OPTIONS))
    rows = sum(b.num_rows for b in batches)
    fields = []
    records: list[str] = []
    for spec in specs:
        if spec.kind in (FieldKind.TEXT, FieldKind.STRING):
            name = spec.tokenizer_name if spec.kind is FieldKind.TEXT else "raw"
            analyzer = analyzer_for(name or "raw")
            if analyzer is not None and spec.indexed:
                fields.append((spec.name, name or "raw", analyzer))
                records.append(spec.record_option)
    columns = [(name, [b.column(name) for b in batches]) for name, _, _ in fields]

    def kernel(twin: str) -> Callable[[str], None]:
        def run(_: str) -> None:
            previous = os.environ.get(impl.IMPL_ENV)
            os.environ[impl.IMPL_ENV] = twin
            try:
                for (name, chunk_list), (_, _, analyzer) in zip(columns, fields, strict=True):
                    for chunk in chunk_list:
                        tokenize(chunk, analyzer, name=name)
            finally:
                if previous is None:
                    del os.environ[impl.IMPL_ENV]
                else:
                    os.environ[impl.IMPL_ENV] = previous

        return run

    oracles = []
    for name, tokenizer, _ in fields:
        base, limit = tokenizers.split_limit(tokenizer)
        oracles.append(
            (
                name,
                tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).build()
                if base == "raw"
                else tokenizers.analyzer(base or "default", limit),
            )
        )

    def reference(_: str) -> None:
        for name, oracle in oracles:
            for batch in batches:
                pre_tokenize = oracle.pre_tokenize
                for value in batch.column(name).to_pylist():
                    if value is not None:
                        pre_tokenize(value).tokens  # noqa: B018 - the tokens are what it costs

    text_fields = [
        TextField(k, name, analyzer, "basic" if tokenizer == "raw" else record)  # type: ignore[arg-type]
        for k, ((name, tokenizer, analyzer), record) in enumerate(zip(fields, records, strict=True))
    ]
    table_columns = [pa.chunked_array(chunk_list) for _, chunk_list in columns]

    def inverted(_: str) -> None:
        inverted_files(table_columns, text_fields, rows)

    return {
        "segwriter cython": kernel("cython"),
        "segwriter inverted": inverted,
        "segwriter python": kernel("python"),
        "tantivy analyzers": reference,
        "tantivy floor": floor(batches),
    }


def tokenize_figures(batches: Sequence[pa.RecordBatch], repeat: int, root: str) -> None:
    """Rows per CPU-second of the segment writer's tokenizer against tantivy-py's."""
    rows = sum(b.num_rows for b in batches)
    print(f"tokens of the text and string columns, {rows:,} log rows, median of {repeat}:")
    rates = {}
    for label, (wall, cpu) in timed_rounds(_token_runs(batches), repeat, root).items():
        rates[label] = rows / cpu
        print(
            f"  {label:<18} {rows / cpu:>12,.0f} rows per CPU-second ({cpu:6.2f} s, "
            f"wall {wall:6.2f} s)",
            flush=True,
        )
    ours_rate = rates["segwriter cython"]
    print(
        f"  CPU : cython / tantivy analyzers = {ours_rate / rates['tantivy analyzers']:.2f}x, "
        f"cython / python twin = {ours_rate / rates['segwriter python']:.2f}x, "
        f"our tokens cost {rates['tantivy floor'] / ours_rate:.1%} of the floor's CPU"
    )
    print(
        f"  CPU : inverted files (text and string fields only) / floor (every file) = "
        f"{rates['segwriter inverted'] / rates['tantivy floor']:.2f}x"
    )


def _mixed_floor(table: pa.Table, options: dict[str, str]) -> Callable[[str], None]:
    """The bare tantivy-py pipeline over the mixed table: typed documents (the
    project's column-wise converter), ``add_document`` in 10,000-row slices, ``commit``."""
    from indextables.search.read.convert import documents

    specs = field_specs(table.schema, parse_indexing(options))
    slices = list(table.to_batches(max_chunksize=10_000))

    def run(target: str) -> None:
        os.makedirs(target)
        block = parse_write(options).docstore_block_size
        index = create_index(specs, target, row_key=True, docstore_block_size=block)
        writer = index.writer(64 << 20, 1)
        for number, batch in enumerate(slices):
            for doc in documents(batch, specs, index.schema, batch_number=number):
                writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()

    return run


def _written_by_tantivy(table: pa.Table, options: dict[str, str], root: str) -> int:
    """Rows a ``feed=segments`` write of ``table`` sent through tantivy-py."""
    from indextables.search.write import splitwriter

    through: list[int] = []
    index = splitwriter.PartitionIndex._index

    def counted(self: object, batch: pa.RecordBatch, *args: object) -> None:
        through.append(batch.num_rows)
        index(self, batch, *args)  # type: ignore[arg-type]

    splitwriter.PartitionIndex._index = counted  # type: ignore[method-assign]
    target = os.path.join(root, "mixed-check")
    try:
        write_table(target, table, options={**options, FEED: "segments"}, workers=1)
    finally:
        splitwriter.PartitionIndex._index = index  # type: ignore[method-assign]
        shutil.rmtree(target, ignore_errors=True)
    return sum(through)


def mixed_figures(rows: int, repeat: int, root: str) -> None:
    """The 20-column mixed-kinds table (``mixeddata.py``): the segments feed against the
    JSON feed and the bare tantivy-py pipeline, in rows per CPU-second; then the same
    without its list column (a JSON field, which the segment writer does not write)."""
    from mixeddata import MIXED_OPTIONS, mixed_table

    # The log rows' options less their typemap (the doc-store block size, if set).
    common = {k: v for k, v in OPTIONS.items() if ".typemap." not in k}
    options = {**common, **MIXED_OPTIONS}
    for with_list in (True, False):
        table = mixed_table(rows, with_list=with_list)
        runs = {
            "segments feed": _mixed_write(table, options, "segments"),
            "JSON feed": _mixed_write(table, options, "json"),
            "tantivy floor": _mixed_floor(table, options),
        }
        label = f"{table.num_columns} columns" + (" (a list)" if with_list else " (no list)")
        print(
            f"mixed kinds, {label}, {rows:,} rows, median of {repeat}, "
            f"load average {os.getloadavg()[0]:.1f}:",
            flush=True,
        )
        rates = {}
        for name, (wall, cpu) in timed_rounds(runs, repeat, root).items():
            rates[name] = rows / cpu
            print(
                f"  {name:<16} {rows / wall:>11,.0f} rows/s wall ({wall:6.2f} s)  "
                f"{rows / cpu:>11,.0f} rows per CPU-second ({cpu:6.2f} s)",
                flush=True,
            )
        through = _written_by_tantivy(table, options, root)
        ours_, json_, floor_ = rates["segments feed"], rates["JSON feed"], rates["tantivy floor"]
        print(
            f"  CPU : segments feed / floor = {ours_ / floor_:.2f}x, "
            f"segments feed / JSON feed = {ours_ / json_:.2f}x, "
            f"JSON feed / floor = {json_ / floor_:.2f}x; "
            f"{through:,} row(s) of the segments feed went through tantivy-py",
            flush=True,
        )


def _mixed_write(table: pa.Table, options: dict[str, str], feed: str) -> Callable[[str], None]:
    def run(target: str) -> None:
        write_table(target, table, options={**options, FEED: feed}, workers=1)

    return run


_MEMORY_CHILD = """
import os, sys, resource
sys.path.insert(0, {bench!r})
from mixeddata import MIXED_OPTIONS, mixed_table
from indextables.search import write_table
rows, heap, target = int(sys.argv[1]), sys.argv[2], sys.argv[3]
table = mixed_table(rows, with_list=False)
def peak_kb():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM"))
def rss_kb():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmRSS"))
with open("/proc/self/clear_refs", "w") as refs:
    refs.write("5")  # reset the peak to the current RSS
before = rss_kb()
options = {{**MIXED_OPTIONS, "spark.indextables.indexWriter.feed": "segments",
           "spark.indextables.indexWriter.heapSize": heap}}
write_table(target, table, options=options, workers=1)
print(before, peak_kb(), table.nbytes)
"""


def memory_figures(rows: int, root: str) -> None:
    """Peak RSS growth of one ``feed=segments`` write (one writer) of the mixed table
    without its list, at writer heaps of 64 MB and 256 MB, for ``rows`` and twice as
    many rows: each in a fresh process (peak reset after the table is built)."""
    import subprocess

    script = _MEMORY_CHILD.format(bench=os.path.dirname(os.path.abspath(__file__)))
    print("peak memory of the segments feed (mixed table, no list, one writer):", flush=True)
    for count in (rows, 2 * rows):
        for heap in ("64m", "256m"):
            target = os.path.join(root, f"memory-{count}-{heap}")
            out = subprocess.run(
                [sys.executable, "-c", script, str(count), heap, target],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
            before, peak, arrow = (int(v) for v in out[-3:])
            shutil.rmtree(target, ignore_errors=True)
            print(
                f"  {count:>9,} rows ({arrow / 1e6:6.1f} MB of Arrow), heap {heap:>4}: "
                f"peak RSS growth {(peak - before) / 1024:7.1f} MB",
                flush=True,
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--merge-splits", type=int, default=20)
    parser.add_argument("--merge-only", action="store_true")
    parser.add_argument("--tokenize-only", action="store_true")
    parser.add_argument(
        "--docstore-block-size",
        type=int,
        default=None,
        help="indexWriter.docStoreBlockSize of every split written (default: the engine's)",
    )
    parser.add_argument(
        "--workers", type=int, default=0, help="write_table's workers line (0: every core)"
    )
    parser.add_argument(
        "--mixed-rows",
        type=int,
        default=None,
        help="rows of the 20-column mixed-kinds table (default: --rows / 5; 0 skips it)",
    )
    parser.add_argument("--mixed-only", action="store_true", help="only the mixed table")
    parser.add_argument(
        "--memory-rows",
        type=int,
        default=None,
        help="rows of the peak-memory runs against the writer heap (default: --rows * 2 / 5; "
        "0 skips them)",
    )
    parser.add_argument("--memory-only", action="store_true", help="only the memory runs")
    args = parser.parse_args(argv)
    if args.mixed_rows is None:
        args.mixed_rows = args.rows // 5
    if args.memory_rows is None:
        args.memory_rows = args.rows * 2 // 5
    set_block_size(args.docstore_block_size)
    if args.mixed_only or args.memory_only:
        with tempfile.TemporaryDirectory(prefix="indextables-bench-mixed-") as root:
            if args.mixed_only:
                mixed_figures(args.mixed_rows, args.repeat, root)
            if args.memory_only:
                memory_figures(args.memory_rows, root)
        return 0
    batches = list(chunks(0, args.rows))
    print(f"doc-store block size: {parse_write(OPTIONS).docstore_block_size:,} bytes")
    if args.tokenize_only:
        with tempfile.TemporaryDirectory(prefix="indextables-bench-tokens-") as root:
            tokenize_figures(batches, args.repeat, root)
        return 0
    if args.merge_only:
        with tempfile.TemporaryDirectory(prefix="indextables-bench-merge-") as root:
            merge_figures(batches, args.merge_splits, root)
        return 0
    rows = args.rows
    workers = args.workers or default_workers()
    print(
        f"write, {rows:,} log rows, median of {args.repeat} interleaved rounds, "
        f"load average {os.getloadavg()[0]:.1f} at the start:",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="indextables-bench-write-") as root:
        rates: dict[str, tuple[float, float]] = {}
        runs = {
            "write_table": ours(batches, 1),
            "JSON feed": ours(batches, 1, feed="json"),
            f"write_table x{workers}": ours(batches, workers),
            "documents feed": ours(batches, 1, feed="documents"),
            "segments feed": ours(batches, 1, feed="segments"),
            "parquet": parquet(batches),
            "tantivy floor": floor(batches),
        }
        for label, (wall, cpu) in timed_rounds(runs, args.repeat, root).items():
            rates[label] = (rows / wall, rows / cpu)
            print(
                f"  {label:<16} {rows / wall:>11,.0f} rows/s wall ({wall:6.2f} s)  "
                f"{rows / cpu:>11,.0f} rows per CPU-second ({cpu:6.2f} s)  "
                f"{cpu / wall:4.2f} cores busy",
                flush=True,
            )
        print(f"  load average {os.getloadavg()[0]:.1f} at the end")
        json_cpu, documents_cpu, segments_cpu, floor_cpu = (
            rates[n][1] for n in ("JSON feed", "documents feed", "segments feed", "tantivy floor")
        )
        print(
            f"  CPU : JSON feed / documents feed = {json_cpu / documents_cpu:.2f}x, "
            f"JSON feed / floor = {json_cpu / floor_cpu:.2f}x, "
            f"documents feed / floor = {documents_cpu / floor_cpu:.2f}x"
        )
        print(
            f"  CPU : segments feed / JSON feed = {segments_cpu / json_cpu:.2f}x, "
            f"segments feed / floor = {segments_cpu / floor_cpu:.2f}x; "
            f"{segment_feed_fallback(batches, root)}"
        )
        for k, basis in enumerate(("wall", "CPU")):
            one, many, pq_rate, floor_rate = (
                rates[n][k]
                for n in ("write_table", f"write_table x{workers}", "parquet", "tantivy floor")
            )
            print(
                f"  {basis:<4}: write_table / parquet = {one / pq_rate:.2f}x "
                f"(x{workers}: {many / pq_rate:.2f}x), "
                f"write_table / floor = {one / floor_rate:.0%}, "
                f"x{workers} / x1 = {many / one:.2f}x, "
                f"floor / parquet = {floor_rate / pq_rate:.2f}x"
            )
        before, _, _ = split_bytes(root, batches, arrow_copy="all")
        sizes, segments, parquet_size = split_bytes(root, batches)
        if args.merge_splits:
            merge_figures(batches, args.merge_splits, root)
        if args.mixed_rows:
            mixed_figures(args.mixed_rows, args.repeat, root)
        if args.memory_rows:
            memory_figures(args.memory_rows, root)
    print(
        f"bytes per row ({segments} segment(s) in the split(s)), "
        f"arrowCopy=all (every column copied, as before the option) vs the default "
        f"({DEFAULT_ARROW_COPY}):"
    )
    for name in sorted(before.keys() | sizes.keys(), key=lambda n: -before.get(n, 0)):
        print(f"  {name:<16} {before.get(name, 0) / rows:7.2f} {sizes.get(name, 0) / rows:7.2f}")
    totals = sum(before.values()), sum(sizes.values())
    print(f"  {'split total':<16} {totals[0] / rows:7.2f} {totals[1] / rows:7.2f}")
    print(
        f"  {'parquet':<16} {parquet_size / rows:7.2f}  (split / parquet = "
        f"{totals[0] / parquet_size:.2f}x with arrowCopy=all, "
        f"{totals[1] / parquet_size:.2f}x with {DEFAULT_ARROW_COPY})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
