"""Planning a read of a table of many splits (figures only, never asserts).

Builds (once, into ``--path``) a table whose log lists N splits (default
70,000: 30 days x realistic statistics; the split files themselves are not
needed to plan), then times, in this process:

- the avro-state planning snapshot of the same state (the floor: what the
  state format alone costs);
- the engine's snapshot (its lazy file list: no entry built);
- the data source's ``schema()`` (metadata only), table view (``load_view``:
  lazy splits, nothing built) next to the same view with every split built
  (what the view cost when it wrapped each entry), and ``partitions()`` of a
  reader of that view with a pushed filter on a statistics column and on the
  partition column (pruned column-wise, only kept splits built);
- a whole planning call as Spark makes it: ``reader()`` (metadata only, no
  file list) then ``partitions()`` after the filters are pushed (the engine
  prunes by partition values and min/max statistics before building entries),
  without a filter (every split kept) and with one.

Usage: python benchmarks/plan_big.py [--files 70000] [--path DIR] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

DOC_MAPPING = json.dumps(
    [
        {"fast": True, "indexed": True, "name": "id", "stored": True, "type": "i64"},
        {"fast": True, "indexed": True, "name": "host", "stored": True, "tokenizer": "raw",
         "type": "text"},
        {"fast": False, "indexed": True, "name": "message", "stored": True,
         "tokenizer": "default", "type": "text"},
    ]
)  # fmt: skip
SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": n, "type": t, "nullable": True, "metadata": {}}
        for n, t in (("id", "long"), ("host", "string"), ("message", "string"), ("day", "string"))
    ],
}


def build(path: str, files: int) -> None:
    """A table whose log adds ``files`` splits in commits of 10,000, then a state."""
    from indextables.protocol import create_table
    from indextables.protocol.actions import AddAction

    table = create_table(path, schema=SCHEMA, partition_columns=["day"])
    for first in range(0, files, 10_000):
        adds = []
        for k in range(first, min(first + 10_000, files)):
            day = f"2024-01-{k % 30 + 1:02d}"
            adds.append(
                AddAction(
                    f"day={day}/part-{k:08d}.split",
                    {"day": day},
                    1_000_000 + k,
                    1_700_000_000_000,
                    True,
                    min_values={"id": str(k * 1000), "host": f"host-{k % 500:03d}"},
                    max_values={"id": str(k * 1000 + 999), "host": f"host-{k % 500 + 5:03d}"},
                    num_records=1000,
                    footer_start_offset=900_000,
                    footer_end_offset=1_000_000 + k,
                    has_footer_offsets=True,
                    doc_mapping_json=DOC_MAPPING,
                )
            )
        table.commit(adds=adds)
        print(f"  committed {min(first + 10_000, files):,} files", file=sys.stderr, flush=True)
    table.checkpoint()


def timed(label: str, action: Callable[[], Any], repeat: int, base: float | None = None) -> float:
    """Print the median and spread of ``repeat`` runs (after one warm-up); return the median."""
    action()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    ratio = f"  {median / base:5.1f}x the floor" if base else ""
    print(
        f"{label:<46} median {median * 1000:8.1f} ms  "
        f"spread {min(times) * 1000:.1f}-{max(times) * 1000:.1f}{ratio}",
        flush=True,
    )
    return median


def main() -> int:
    """Build the table if needed, then print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=70_000)
    parser.add_argument("--path", default=os.path.join(tempfile.gettempdir(), "it-plan-big"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not os.path.exists(args.path):
        build(args.path, args.files)
    from indextables.avrostate import read_state, state_versions
    from indextables.protocol import open_table
    from indextables.pyspark.read.datasource import make_reader, table_schema
    from indextables.search.query.filters import Condition
    from indextables.search.table.tableaccess import load_view
    from indextables.storage import open_store

    store = open_store(args.path)
    state = max(state_versions(store))
    floor = timed(
        "avro-state planning snapshot (floor)",
        lambda: len(read_state(store, state).files.paths),
        args.repeat,
    )
    timed(
        "engine snapshot (lazy files)",
        lambda: len(open_table(args.path).snapshot().files),
        args.repeat,
        floor,
    )
    options = {"path": args.path}
    from indextables.pyspark.read.datasource import IndexTablesDataSource

    source = IndexTablesDataSource(options)
    timed("data source schema()", lambda: len(source.schema().fields), args.repeat, floor)
    view_time = timed(
        "data source table view (lazy splits)",
        lambda: len(load_view(args.path, options).splits),
        args.repeat,
        floor,
    )
    built_time = timed(
        "table view, every split built (eager view)",
        lambda: len(list(load_view(args.path, options).splits)),
        args.repeat,
        floor,
    )
    print(f"   (the lazy view takes {view_time / built_time:.2f}x the eager one)", flush=True)
    view = load_view(args.path, options)
    reader = make_reader(options, view, table_schema(view))
    for label, condition in (
        ("partitions(), id = X (statistics)", Condition("=", "id", (5_000_123,))),
        ("partitions(), day = X (partition pruning)", Condition("=", "day", ("2024-01-05",))),
    ):
        reader.conditions = (condition,)
        kept = sum(len(t.splits) for t in reader.partitions())
        timed(f"{label}: {kept} kept", reader.partitions, args.repeat, floor)
    schema = source.schema()
    for label, condition in (
        ("plan, no filter", None),
        ("plan id = X (statistics)", Condition("=", "id", (5_000_123,))),
        ("plan id > X (statistics)", Condition(">", "id", (60_000_000,))),
        ("plan host = X (statistics)", Condition("=", "host", ("host-004",))),
        ("plan day = X (partition pruning)", Condition("=", "day", ("2024-01-05",))),
    ):

        def plan(condition: Condition | None = condition) -> int:
            planner = source.reader(schema)
            planner.conditions = () if condition is None else (condition,)
            return sum(len(t.splits) for t in planner.partitions())

        timed(f"{label}: {plan()} kept", plan, args.repeat, floor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
