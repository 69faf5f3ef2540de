"""Benchmarks of the Avro state: figures and same-run baselines, never assertions on time.

    python packages/indextables-avrostate/benchmarks/run.py [--repeat 7] [--data-dir DIR]
        [--only baselines,reads,engine,writes,memory] [--files 1000000] [--skip-1m]

``--files`` sets the size of the large table (1,000,000 files over 1,000
partitions by default) whose single partition the engine and memory sections
read; ``--skip-1m`` leaves that table out.

Prints, per scenario, the median, spread (min-max) and the ratio to the
baselines measured in the same run (fastavro, the marshal floor, zstd alone,
delta-rs loading a checkpoint of the same files); memory scenarios run in a
child process and report peak RSS growth.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import marshal
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data as bench_data
import fastavro

from indextables.avrostate import IMPL_NAME, read_state, write_state
from indextables.avrostate.codecs import decompress_block
from indextables.avrostate.container import parse_container
from indextables.avrostate.manifest_writer import file_entry_to_record
from indextables.avrostate.state_reader import load_state_manifest
from indextables.protocol.predicates import parse_predicate

N = 70_000
SECTIONS = ("baselines", "reads", "engine", "writes", "memory")


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    fn()  # warm-up (imports, caches, page cache)
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def fmt(times: list[float]) -> str:
    med = statistics.median(times)
    return f"median {med * 1000:8.1f} ms  spread {min(times) * 1000:.1f}-{max(times) * 1000:.1f} ms"


def report(name: str, times: list[float], baselines: dict[str, float] | None = None) -> float:
    med = statistics.median(times)
    ratios = "".join(
        f"  {base / med:6.1f}x faster than {label}"
        if base >= med
        else f"  {med / base:6.2f}x of {label}"
        for label, base in (baselines or {}).items()
    )
    print(f"{name:<44} {fmt(times)}{ratios}", flush=True)
    return med


def ensure_data(root: Path, skip_1m: bool, files: int = 1_000_000) -> dict[str, Path]:
    sets = {"70k": (N, 100), "100k": (100_000, 100)}
    if not skip_1m:
        sets["1m"] = (files, 1000)
    out = {}
    for name, (n, parts) in sets.items():
        path = root / (f"table-{name}" if name != "1m" or n == 1_000_000 else f"table-{n}")
        if not (path / ".complete").exists():
            print(f"(building {name} table of {n} entries in {path} ...)", flush=True)
            bench_data.write_table(path, n, partitions=parts)
            (path / ".complete").write_text("ok")
        bench_data.write_log_head(path)
        out[name] = path
    delta = root / "delta-70k"
    if not (delta / ".complete").exists():
        try:
            bench_data.write_delta_log(delta, bench_data.entries(N))
            (delta / ".complete").write_text("ok")
        except ImportError:
            print("(deltalake not installed: no delta-rs baseline)")
    out["delta"] = delta
    return out


def manifest_files(table: Path) -> list[Path]:
    return sorted((table / "_transaction_log" / "manifests").glob("*.avro"))


def baselines(table: Path, delta: Path, repeat: int) -> dict[str, float]:
    files = [p.read_bytes() for p in manifest_files(table)]
    print(
        f"-- baselines ({N} entries, {len(files)} manifests, "
        f"{sum(map(len, files)) / 1e6:.1f} MB compressed)"
    )
    out = {}
    out["fastavro"] = report(
        "fastavro full read",
        timed(lambda: [list(fastavro.reader(io.BytesIO(d))) for d in files], repeat),
    )
    containers = [parse_container(d, path="m") for d in files]
    out["zstd"] = report(
        "zstd decompression only",
        timed(
            lambda: [decompress_block(c.codec, b.data) for c in containers for b in c.blocks],
            repeat,
        ),
    )
    records = [file_entry_to_record(e) for e in bench_data.entries(N)]
    raw_size = sum(len(decompress_block(c.codec, b.data)) for c in containers for b in c.blocks)
    blob = marshal.dumps(records)
    print(
        f"   (raw Avro {raw_size / 1e6:.1f} MB, {raw_size / N:.0f} B/entry; "
        f"marshal blob {len(blob) / 1e6:.1f} MB)"
    )
    out["marshal"] = report(
        "marshal.loads floor (eager dicts)", timed(lambda: marshal.loads(blob), repeat)
    )
    if (delta / ".complete").exists():
        from deltalake import DeltaTable

        out["delta-rs"] = report(
            "delta-rs checkpoint load + file_uris()",
            timed(lambda: DeltaTable(str(delta)).file_uris(), repeat),
        )
    return out


def store_of(path: Path) -> bench_data.DirStore:
    return bench_data.DirStore(path)


def bench_reads(tables: dict[str, Path], base: dict[str, float], repeat: int) -> None:
    store = store_of(tables["70k"])
    print(f"-- reads ({IMPL_NAME} decoder)")
    snapshot = {k: v for k, v in base.items() if k in ("fastavro", "delta-rs", "zstd")}
    report("planning snapshot, 70k", timed(lambda: read_state(store, 1), repeat), snapshot)

    def materialize() -> None:
        for entry in read_state(store, 1).files:
            entry.stats  # noqa: B018 - every field is built with the entry

    report(
        "every field materialized, 70k",
        timed(materialize, repeat),
        {k: v for k, v in base.items() if k in ("marshal", "fastavro")},
    )
    files = read_state(store, 1).files
    predicate = parse_predicate("id >= '35000000' AND id < '36000000'")
    kept: list[int] = []

    def skipping() -> None:
        kept[:] = files.stats_may_match(predicate)

    def first_skipping() -> None:
        files.clear_caches()  # the column's statistics are located again
        kept[:] = files.stats_may_match(predicate)

    report("data skipping, first predicate, 70k", timed(first_skipping, repeat))
    report("data skipping, later predicates, 70k", timed(skipping, repeat))
    print(f"   ({len(kept)} of {len(files)} entries may match)")


def bench_engine(tables: dict[str, Path], base: dict[str, float], repeat: int) -> None:
    """What a planner calls: the engine's public path, not avrostate alone."""
    from indextables.protocol import open_table

    print(f"-- the engine's public path ({IMPL_NAME} decoder)")
    store = store_of(tables["70k"])
    columns: list[int] = []

    def planning() -> None:
        files = open_table(str(tables["70k"]), store=store).snapshot().files
        paths, sizes = files.paths, files.sizes  # type: ignore[attr-defined]
        values, records = files.partition_values, files.num_records  # type: ignore[attr-defined]
        columns[:] = [len(paths), len(sizes), len(values), len(records)]

    snapshot = {k: v for k, v in base.items() if k in ("fastavro", "delta-rs")}
    report("open_table().snapshot() + 4 columns, 70k", timed(planning, repeat), snapshot)
    print(f"   ({columns[0]} files, paths/sizes/partition_values/num_records)")

    def materialized() -> None:
        for entry in open_table(str(tables["70k"]), store=store).snapshot().files:
            entry.stats  # noqa: B018 - every field is built with the entry

    report(
        "open_table().snapshot(), every entry built",
        timed(materialized, repeat),
        {k: v for k, v in base.items() if k in ("marshal", "fastavro")},
    )
    if "1m" in tables:
        big = store_of(tables["1m"])
        total = load_state_manifest(big, 1).num_files

        def one_partition() -> None:
            files = (
                open_table(str(tables["1m"]), store=big)
                .snapshot(partition_filter="date = '2024-01-05' AND region = 'region-0'")
                .files
            )
            paths, sizes = files.paths, files.sizes  # type: ignore[attr-defined]
            values, records = files.partition_values, files.num_records  # type: ignore[attr-defined]
            columns[:] = [len(paths), len(sizes), len(values), len(records)]

        report(
            f"{total:,} files, one partition: snapshot + 4 columns",
            timed(one_partition, repeat),
            snapshot,
        )
        print(f"   ({columns[0]} files kept, paths/sizes/partition_values/num_records)")


def bench_writes(tables: dict[str, Path], repeat: int) -> None:
    store = store_of(tables["70k"])
    base = read_state(store, 1).manifest
    versions = iter(range(1_000_000, 2_000_000))
    adds = bench_data.entries(100, start=10_000_000)
    print("-- writes")

    def incremental() -> None:
        write_state(
            store,
            version=next(versions),
            base=base,
            adds=adds,
            removes=[],
            schema_registry={},
            metadata=None,
        )

    report("incremental write, 100 onto 70k", timed(incremental, repeat))

    def compaction() -> None:
        write_state(
            store,
            version=next(versions),
            base=base,
            adds=[],
            removes=[],
            schema_registry={},
            metadata=None,
            force_compaction=True,
        )

    report("full compaction, 70k", timed(compaction, max(3, repeat // 2)))
    cleanup(store)


def cleanup(store: bench_data.DirStore) -> None:
    for info in list(store.list("_transaction_log/state-v")):
        if not info.key.startswith("_transaction_log/state-v00000000000000000001/"):
            store.delete(info.key)
    keep = {m.path for m in read_state(store, 1).manifest.manifests}
    for info in list(store.list("_transaction_log/manifests/")):
        if info.key.removeprefix("_transaction_log/") not in keep:
            store.delete(info.key)


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return 0


def child(args: argparse.Namespace) -> None:
    store = store_of(Path(args.table))
    flt = parse_predicate(args.filter) if args.filter else None
    read_state(store, 1, partition_filter=flt)  # warm the page cache and imports
    gc.collect()
    before = _rss_kb("VmRSS")
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        loaded = read_state(store, 1, partition_filter=flt)
        times.append(time.perf_counter() - start)
        del loaded
        gc.collect()
    loaded = read_state(store, 1, partition_filter=flt)
    print(
        json.dumps(
            {
                "times": times,
                "growth_mb": (_rss_kb("VmHWM") - before) / 1024,
                "files": len(loaded.files),
                "read": loaded.manifests_read,
                "total": loaded.manifests_total,
            }
        )
    )


def in_child(table: Path, repeat: int, flt: str | None = None) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", "--table", str(table), "--repeat", str(repeat)]
    if flt:
        cmd += ["--filter", flt]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ.copy())
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def bench_memory(tables: dict[str, Path], repeat: int) -> None:
    print("-- fresh processes (peak RSS growth over the process before the measured reads)")
    res = in_child(tables["100k"], repeat)
    report("planning snapshot, 100k", res["times"])
    print(f"   peak RSS growth {res['growth_mb']:.0f} MB, {res['files']} entries")
    if "1m" in tables:
        res = in_child(tables["1m"], repeat, "date = '2024-01-05'")
        report("1M compacted, 1000 partitions, date = X", res["times"])
        print(
            f"   peak RSS growth {res['growth_mb']:.0f} MB, {res['files']} entries, "
            f"manifests read {res['read']} of {res['total']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--data-dir",
        default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "indextables-avrostate-bench"),
    )
    parser.add_argument("--skip-1m", action="store_true")
    parser.add_argument("--files", type=int, default=1_000_000, help="files of the large table")
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run, of {', '.join(SECTIONS)}",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    parser.add_argument("--filter", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    unknown = only - set(SECTIONS)
    if unknown:
        parser.error(f"--only: unknown sections {sorted(unknown)} (of {', '.join(SECTIONS)})")
    tables = ensure_data(Path(args.data_dir), args.skip_1m, args.files)
    print(
        f"python {sys.version.split()[0]}, decoder {IMPL_NAME}, repeat {args.repeat}, "
        f"{os.cpu_count()} CPUs"
    )
    base = baselines(tables["70k"], tables["delta"], args.repeat) if "baselines" in only else {}
    if "reads" in only:
        bench_reads(tables, base, args.repeat)
    if "engine" in only:
        bench_engine(tables, base, args.repeat)
    if "writes" in only:
        bench_writes(tables, args.repeat)
    if "memory" in only:
        bench_memory(tables, args.repeat)


if __name__ == "__main__":
    main()
