"""Row deletes and replace_where against rewriting the same rows (figures only).

The log rows of ``logdata.py`` (id, level, host, message) with two more columns,
``bucket = id % 1000`` and ``day = id * 10 // rows`` (0..9), are written once as a
pristine table of ``--splits`` appends (default 4) and once as a 10-day table
partitioned by ``day``; every timed operation runs on a fresh copy of one of them
(copied untimed). In one run, the median of ``--repeat`` runs of each:

- (a) ``delete_rows(where="bucket = 7")``: 0.1% of the rows, spread over every
  split, so every split is rewritten with delete bitsets (no re-index), against
  a full rewrite of the same splits: ``write_table(mode="overwrite")`` of their
  live rows (read untimed beforehand), and ``merge_splits(purge_deletes=True)``
  after the delete (each split re-indexed from its live rows);
- (b) ``write_table(mode="overwrite", replace_where="day = 3")`` of day 3's rows
  in the 10-day table (whole splits removed, nothing read) against a plain
  ``write_table`` (append) of the same rows to the same table;
- (c) ``replace_where="bucket = 7"`` (a non-partition condition: a delete over
  every split plus the write) of those rows against their plain append.

Each line has the seconds, the ratio to its baseline (baseline / ours: above 1
means ours is cheaper), the live splits replaced and added (read from the log)
and the bytes: split bytes
fetched into the cache (``last_metrics()``; 0 for a local table, whose
splits are read in place), bytes of the live splits the operation replaced,
and bytes of the new files it wrote (measured on the table's directory).
Never asserts on a time. Usage: ``python benchmarks/mutations.py [--rows 1000000]
[--splits 4] [--repeat 1] [--path DIR] [--json FILE]`` (the issue's target size:
``--rows 20000000 --splits 10``). Tables are written under ``--path`` (default: a
temporary directory, removed at the end) and the pristine ones reused when present.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import parser
from logdata import CHUNK, OPTIONS, log_rows

BUCKET = 7
DAY = 3
LOG_DIR = "_transaction_log"


def _rows(start: int, stop: int, total: int) -> Any:
    """Rows ``start <= id < stop`` of the log table with ``bucket`` and ``day``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    batch = log_rows(start, stop)
    ids = batch.column("id")
    bucket = pc.cast(pc.subtract(ids, pc.multiply(pc.divide(ids, 1000), 1000)), pa.int32())
    day = pc.cast(pc.divide(pc.multiply(ids, 10), total), pa.int32())
    return pa.RecordBatch.from_arrays(
        [*batch.columns, bucket, day], names=[*batch.schema.names, "bucket", "day"]
    )


def _batches(start: int, stop: int, total: int) -> Iterator[Any]:
    for low in range(start, stop, CHUNK):
        yield _rows(low, min(stop, low + CHUNK), total)


def _reader(start: int, stop: int, total: int) -> Any:
    import pyarrow as pa

    return pa.RecordBatchReader.from_batches(
        _rows(0, 1, total).schema, _batches(start, stop, total)
    )


def _pristine(root: str, rows: int, splits: int) -> tuple[str, str]:
    """The flat table (``splits`` appends) and the day-partitioned one, written once."""
    from indextables.search import write_table

    flat = os.path.join(root, f"mutations-{rows}-{splits}-flat")
    days = os.path.join(root, f"mutations-{rows}-days")
    if not os.path.isdir(flat):
        step = -(-rows // splits)
        for low in range(0, rows, step):
            write_table(flat, _reader(low, min(rows, low + step), rows), options=OPTIONS)
    if not os.path.isdir(days):
        write_table(days, _reader(0, rows, rows), partition_by="day", options=OPTIONS)
    return flat, days


def _sizes(table: str) -> dict[str, int]:
    """Every data file of ``table`` (the log left out) by relative path, with its size."""
    found: dict[str, int] = {}
    for here, dirs, names in os.walk(table):
        dirs[:] = [d for d in dirs if d != LOG_DIR]
        for name in names:
            path = os.path.join(here, name)
            found[os.path.relpath(path, table)] = os.path.getsize(path)
    return found


def _live(table: str) -> set[str]:
    from indextables.search import open_table

    return {os.path.normpath(p) for p in open_table(table).files}


@dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    """One timed operation: its seconds and what it read and wrote."""

    seconds: float
    splits_replaced: int
    splits_written: int
    bytes_fetched: int
    bytes_replaced: int
    bytes_written: int


def _timed(
    pristine: str, work: str, action: Callable[[str], Any], *, before: Callable[[str], Any] | None
) -> Run:
    """``action`` on a fresh copy of ``pristine`` at ``work`` (``before`` runs untimed
    on the copy first), with the bytes it replaced and wrote."""
    from indextables.search import last_metrics

    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(pristine, work)
    if before is not None:
        before(work)
    live, files = _live(work), _sizes(work)
    start = time.perf_counter()
    action(work)
    seconds = time.perf_counter() - start
    metrics = last_metrics()
    now = _live(work)
    gone = live - now
    after = _sizes(work)
    run = Run(
        seconds=seconds,
        splits_replaced=len(gone),
        splits_written=len(now - live),
        bytes_fetched=metrics.bytes_fetched if metrics else 0,
        bytes_replaced=sum(files.get(p, 0) for p in gone),
        bytes_written=sum(size for path, size in after.items() if path not in files),
    )
    shutil.rmtree(work, ignore_errors=True)
    return run


def _median(runs: Sequence[Run]) -> Run:
    middle = sorted(runs, key=lambda r: r.seconds)[len(runs) // 2]
    return Run(
        **{
            **{k: getattr(middle, k) for k in Run.__slots__},
            "seconds": statistics.median(r.seconds for r in runs),
        }
    )


def _figure(label: str, ours: Run, base: Run, base_name: str) -> dict[str, Any]:
    ratio = base.seconds / ours.seconds if ours.seconds else float("inf")
    print(
        f"{label:<34} {ours.seconds:8.3f} s  {base_name} {base.seconds:8.3f} s  "
        f"baseline / ours = {ratio:6.2f}x",
        flush=True,
    )
    for name, run in ((label, ours), (base_name, base)):
        print(
            f"  {name:<32} splits replaced {run.splits_replaced:3d} added {run.splits_written:3d}  "
            f"bytes fetched {run.bytes_fetched:,}  replaced {run.bytes_replaced:,}  "
            f"written {run.bytes_written:,}",
            flush=True,
        )
    return {
        "name": f"{label} | {base_name}",
        "text": f"{ours.seconds:.3f} s vs {base.seconds:.3f} s: {ratio:.2f}x",
        "value": round(ours.seconds, 4),
        "unit": "s",
        "baseline": round(base.seconds, 4),
        "ratio": round(ratio, 3),
        "operation": label,
        "baseline_operation": base_name,
        "ours": {k: getattr(ours, k) for k in Run.__slots__},
        "baseline_run": {k: getattr(base, k) for k in Run.__slots__},
    }


def run(root: str, rows: int, splits: int, repeat: int) -> dict[str, Any]:
    import pyarrow as pa

    from indextables.search import delete_rows, merge_splits, open_table, write_table

    started = dt.datetime.now(dt.UTC).isoformat(timespec="minutes").replace("+00:00", "Z")
    loads = [os.getloadavg()[0]]
    flat, days = _pristine(root, rows, splits)
    work = os.path.join(root, "mutations-work")
    where = f"bucket = {BUCKET}"

    def times(pristine: str, action: Callable[[str], Any], before: Any = None) -> Run:
        found = [_timed(pristine, work, action, before=before) for _ in range(repeat)]
        loads.append(os.getloadavg()[0])
        return _median(found)

    def delete(uri: str) -> None:
        delete_rows(uri, where=where)

    live_rows = open_table(flat).search(where=f"bucket <> {BUCKET}")
    day_rows = open_table(days).search(where=f"day = {DAY}")
    bucket_rows = open_table(days).search(where=where)
    deleted = rows - live_rows.num_rows
    print(
        f"row deletes and replace_where, {rows:,} log rows, flat table "
        f"{len(open_table(flat).files)} splits, day table {len(open_table(days).files)} splits, "
        f"median of {repeat}:",
        flush=True,
    )
    print(f"(a) delete {where}: {deleted:,} rows ({deleted / rows:.2%})", flush=True)
    deleting = times(flat, delete)
    rewrite = times(
        flat,
        lambda uri: write_table(uri, live_rows, mode="overwrite", options=OPTIONS),
    )
    purge = times(flat, lambda uri: merge_splits(uri, purge_deletes=True), before=delete)
    figures = [
        _figure("delete_rows", deleting, rewrite, "write_table overwrite, live rows"),
        _figure("delete_rows", deleting, purge, "merge_splits purge_deletes"),
    ]
    print(f"(b) replace_where day = {DAY}: {day_rows.num_rows:,} rows", flush=True)

    def replace(data: pa.Table, condition: str) -> Callable[[str], Any]:
        return lambda uri: write_table(
            uri, data, mode="overwrite", replace_where=condition, options=OPTIONS
        )

    def append(data: pa.Table) -> Callable[[str], Any]:
        return lambda uri: write_table(uri, data, options=OPTIONS)

    figures.append(
        _figure(
            f"replace_where day = {DAY}",
            times(days, replace(day_rows, f"day = {DAY}")),
            times(days, append(day_rows)),
            "write_table append",
        )
    )
    print(f"(c) replace_where {where}: {bucket_rows.num_rows:,} rows", flush=True)
    figures.append(
        _figure(
            f"replace_where {where}",
            times(days, replace(bucket_rows, where)),
            times(days, append(bucket_rows)),
            "write_table append",
        )
    )
    return {
        "benchmark": "mutations",
        "title": "row deletes and replace_where against rewriting the same rows",
        "date": started,
        "command": (
            f"python packages/indextables-search/benchmarks/mutations.py --rows {rows} "
            f"--splits {splits} --repeat {repeat}"
        ),
        "rows": rows,
        "splits": splits,
        "repeat": repeat,
        "machine": {"cores": os.cpu_count(), "python": sys.version.split()[0]},
        "load": {"min": round(min(loads), 2), "max": round(max(loads), 2)},
        "figures": figures,
    }


def main(argv: Sequence[str] | None = None) -> int:
    found = parser(
        repeat=1, path=None, path_help="where the tables are written (default: temporary)"
    )
    found.set_defaults(rows=1_000_000)
    found.add_argument("--splits", type=int, default=4, help="appends of the flat table")
    found.add_argument("--json", default=None, help="also write the figures as JSON here")
    args = found.parse_args(argv)
    if args.rows < 1 or args.splits < 1 or args.repeat < 1:
        found.error("--rows, --splits and --repeat must be at least 1")
    if args.path is None:
        with tempfile.TemporaryDirectory(prefix="indextables-bench-mutations-") as root:
            result = run(root, args.rows, args.splits, args.repeat)
    else:
        os.makedirs(args.path, exist_ok=True)
        result = run(args.path, args.rows, args.splits, args.repeat)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=2)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
