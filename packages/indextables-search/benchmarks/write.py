"""Write speed: ``write_table`` vs Parquet vs a bare tantivy-py pipeline (figures only).

In one run over the same log rows (``logdata.py``, default 1,000,000 in
500,000-row batches, already built in memory before any timing):

- ``write_table`` (one process: Arrow -> documents -> Tantivy, the Arrow copy,
  the SSTable rewrite, the bundle and the commit);
- ``pyarrow.parquet.write_table`` (snappy, row groups of 1M rows);
- the floor: a bare tantivy-py pipeline over the same Arrow batches with the
  same schema (``create_index``: fieldnorms off, row key), documents built the
  cheapest way measured (one ``to_pylist`` per column, ``Document(**kwargs)``),
  ``add_document`` in 10,000-row slices, ``commit`` -- no Arrow copy, no
  statistics, no SSTable rewrite, no bundle, no commit to a log;

each the median of ``--repeat`` runs, with the ratios, then the bytes per row
of the written split by file kind (``.store``, ``.idx``, ``.pos``, ``.term``,
``.fast``, ``.fieldnorm``, the Arrow copy...) against Parquet's, written once
with ``indexWriter.arrowCopy=all`` (every column copied, as before the option)
and once with the default, and the split's segment count.

Usage: ``python benchmarks/write.py [--rows 1000000] [--repeat 3]``, or
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

from logdata import OPTIONS, chunks

from indextables.protocol.splitbundle import parse_split_footer
from indextables.search import write_table
from indextables.search.options import DEFAULT_ARROW_COPY, parse_indexing
from indextables.search.schema.mapping import (
    ROW_KEY_FIELD,
    FieldKind,
    create_index,
    field_specs,
)
from indextables.search.table.tableaccess import load_view

ARROW_COPY = "spark.indextables.indexWriter.arrowCopy"


def timed(action: Callable[[str], None], repeat: int, root: str) -> tuple[float, float]:
    """Median wall and CPU seconds (all threads) of ``repeat`` runs of ``action(directory)``.

    On a shared machine the CPU time is the steadier figure: it leaves out the
    time the process waited for a core.
    """
    walls, cpus = [], []
    for k in range(repeat):
        target = os.path.join(root, f"run-{k}")
        start, cpu = time.perf_counter(), time.process_time()
        action(target)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        shutil.rmtree(target, ignore_errors=True)
    return statistics.median(walls), statistics.median(cpus)


def ours(batches: Sequence[pa.RecordBatch]) -> Callable[[str], None]:
    table = pa.Table.from_batches(batches)

    def run(target: str) -> None:
        write_table(target, table, options=OPTIONS)

    return run


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
        index = create_index(specs, target, row_key=True)
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    batches = list(chunks(0, args.rows))
    rows = args.rows
    print(f"write, {rows:,} log rows, median of {args.repeat} runs, one process:", flush=True)
    with tempfile.TemporaryDirectory(prefix="indextables-bench-write-") as root:
        rates: dict[str, tuple[float, float]] = {}
        for label, make in (("write_table", ours), ("parquet", parquet), ("tantivy floor", floor)):
            wall, cpu = timed(make(batches), args.repeat, root)
            rates[label] = (rows / wall, rows / cpu)
            print(
                f"  {label:<14} {rows / wall:>11,.0f} rows/s wall ({wall:6.2f} s)  "
                f"{rows / cpu:>11,.0f} rows per CPU-second ({cpu:6.2f} s)",
                flush=True,
            )
        for k, basis in enumerate(("wall", "CPU")):
            ours_rate, pq_rate, floor_rate = (
                rates[n][k] for n in ("write_table", "parquet", "tantivy floor")
            )
            print(
                f"  {basis:<4}: write_table / parquet = {ours_rate / pq_rate:.2f}x, "
                f"write_table / floor = {ours_rate / floor_rate:.0%}, "
                f"floor / parquet = {floor_rate / pq_rate:.2f}x"
            )
        before, _, _ = split_bytes(root, batches, arrow_copy="all")
        sizes, segments, parquet_size = split_bytes(root, batches)
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
