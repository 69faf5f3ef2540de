"""Write speed: ``write_table`` vs Parquet vs a bare tantivy-py pipeline (figures only).

In one run over the same log rows (``logdata.py``, default 1,000,000 in
500,000-row batches, already built in memory before any timing):

- ``write_table`` (one process: Arrow -> documents -> Tantivy, the Arrow copy,
  the SSTable rewrite, the bundle and the commit);
- ``pyarrow.parquet.write_table`` (snappy, row groups of 1M rows);
- the floor: a bare tantivy-py pipeline over the same Arrow batches with the
  same schema (``create_index``: fieldnorms off, row key), documents built the
  cheapest way measured (one ``to_pylist`` per column, ``Document(**kwargs)``),
  ``add_document``, ``commit`` -- no Arrow copy, no statistics, no bundle;

each the median of ``--repeat`` runs, with the ratios, then the bytes per row
of the written split by file kind (``.store``, ``.idx``, ``.pos``, ``.term``,
``.fast``, ``.fieldnorm``, the Arrow copy...) against Parquet's, and the
split's segment count.

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

from logdata import OPTIONS, chunks  # noqa: E402

from indextables.protocol.splitbundle import parse_split_footer  # noqa: E402
from indextables.search import write_table  # noqa: E402
from indextables.search.options import parse_indexing  # noqa: E402
from indextables.search.schema.mapping import ROW_KEY_FIELD, create_index, field_specs  # noqa: E402


def timed(action: Callable[[str], None], repeat: int, root: str) -> float:
    """Median seconds of ``repeat`` runs of ``action(fresh directory)``."""
    times = []
    for k in range(repeat):
        target = os.path.join(root, f"run-{k}")
        start = time.perf_counter()
        action(target)
        times.append(time.perf_counter() - start)
        shutil.rmtree(target, ignore_errors=True)
    return statistics.median(times)


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

    def run(target: str) -> None:
        os.makedirs(target)
        index = create_index(specs, target, row_key=True)
        writer = index.writer(64 << 20, 1)
        add, make = writer.add_document, tantivy.Document
        names = [*batches[0].schema.names, ROW_KEY_FIELD]
        for number, batch in enumerate(batches):
            columns = [c.to_pylist() for c in batch.columns]
            columns.append(range(number << 32, (number << 32) + batch.num_rows))
            for row in zip(*columns, strict=True):
                add(make(**dict(zip(names, row, strict=True))))
        writer.commit()
        writer.wait_merging_threads()

    return run


def kind(name: str) -> str:
    if name.endswith(".arrow"):
        return "Arrow copy"
    if "." not in name or name.endswith(".json") or name.startswith("."):
        return "meta"
    return "." + name.rsplit(".", 1)[1]


def split_bytes(root: str, batches: Sequence[pa.RecordBatch]) -> tuple[dict[str, int], int, int]:
    """Bytes by file kind of the splits ``write_table`` writes, segments, Parquet's size."""
    target = os.path.join(root, "sizes")
    write_table(target, pa.Table.from_batches(batches), options=OPTIONS)
    sizes: dict[str, int] = collections.Counter()
    segments = 0
    for folder, _, names in os.walk(target):
        for name in names:
            if not name.endswith(".split"):
                continue
            with open(os.path.join(folder, name), "rb") as handle:
                data = handle.read()
            footer = parse_split_footer(data, footer_start_offset=0, path=name)
            for member, (start, end) in footer.files.items():
                sizes[kind(member)] += end - start
            segments += len({m.split(".")[0] for m in footer.files if m.endswith(".store")})
            sizes["footer+hotcache"] += len(data) - sum(e - s for s, e in footer.files.values())
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
        rates = {}
        for label, make in (("write_table", ours), ("parquet", parquet), ("tantivy floor", floor)):
            seconds = timed(make(batches), args.repeat, root)
            rates[label] = rows / seconds
            print(f"  {label:<14} {rates[label]:>11,.0f} rows/s  ({seconds:6.2f} s)", flush=True)
        print(
            f"  write_table / parquet = {rates['write_table'] / rates['parquet']:.2f}x, "
            f"write_table / floor = {rates['write_table'] / rates['tantivy floor']:.0%}, "
            f"floor / parquet = {rates['tantivy floor'] / rates['parquet']:.2f}x"
        )
        sizes, segments, parquet_size = split_bytes(root, batches)
    total = sum(sizes.values())
    print(f"bytes per row ({segments} segment(s) in the split(s)):")
    for name, size in sorted(sizes.items(), key=lambda item: -item[1]):
        print(f"  {name:<16} {size / rows:7.2f}")
    print(f"  {'split total':<16} {total / rows:7.2f}")
    print(f"  {'parquet':<16} {parquet_size / rows:7.2f}  (split / parquet = {total / parquet_size:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
