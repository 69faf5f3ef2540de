"""Split I/O benchmarks: figures and same-run ratios, never a pass/fail.

- write: N log rows written to one split by the split writer; the share of the
  write spent rewriting its ``.term`` files to the reference's SSTable form.
- open: opening that split for search through the split cache (streamed fetch,
  ``.term`` rewritten to FST), each kernel twin, against the rebuild from
  stored documents that earlier versions ran instead (a copy of that code is
  kept below as the baseline; the package no longer has it).
- memory: peak memory of fetching and opening a split of at least
  ``--memory-mb`` MB, in a fresh process, above that process's baseline
  (RSS high-water mark and the tracemalloc peak of Python allocations).

Usage (``tox -e bench-pyspark -- splitio [options]`` runs it through run.py)::

    python benchmarks/splitio.py [--rows 500000] [--memory-mb 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import tantivy
from pyspark.sql.types import LongType, StringType, StructField, StructType

from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.search.options import parse_indexing
from indextables.search.schema.mapping import field_specs, specs_from_doc_mapping, tantivy_schema
from indextables.search.splits.splitcache import SplitCache, SplitRef
from indextables.search.splits.termdict import impl
from indextables.search.write import splitwriter
from indextables.search.write.splitwriter import SplitWriter
from indextables.storage import LocalStore

SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("level", StringType()),
        StructField("host", StringType()),
        StructField("message", StringType()),
    ]
)
INDEXING = {"spark.indextables.indexing.typemap.message": "text"}
BATCH = 50_000


def log_batches(rows: int, schema: StructType = SCHEMA) -> Iterator[pa.RecordBatch]:
    """Deterministic log rows (the Spark benchmark's shape), in Arrow batches."""
    target = arrow_schema(schema)
    levels = ("INFO", "WARN", "ERROR")
    for start in range(0, rows, BATCH):
        ids = range(start, min(rows, start + BATCH))
        mixed = [(i * 2654435761) % 2**32 for i in ids]
        columns = {
            "id": list(ids),
            "level": [levels[m % 3] for m in mixed],
            "host": [f"host-{m % 500}" for m in mixed],
            "message": [
                f"request {i} served {'needlezz' if m % 10_000 == 0 else 'ok'} in {m % 997} ms"
                for i, m in zip(ids, mixed, strict=True)
            ],
        }
        if "payload" in schema.fieldNames():
            columns["payload"] = [os.urandom(512).hex() for _ in ids]
        yield pa.RecordBatch.from_pydict(columns, schema=target)


def write_split(
    root: Path, rows: int, schema: StructType = SCHEMA, indexing: dict[str, str] = INDEXING
) -> tuple[LocalStore, Any, float, float]:
    """One split of ``rows`` rows; returns the store, its AddAction, write and rewrite seconds."""
    store = LocalStore(str(root))
    specs = field_specs(arrow_schema(schema), parse_indexing(indexing))
    rewrite = [0.0]
    original = splitwriter.to_reference_form

    def timed(directory: str) -> None:
        started = time.perf_counter()
        original(directory)
        rewrite[0] += time.perf_counter() - started

    splitwriter.to_reference_form = timed
    try:
        started = time.perf_counter()
        writer = SplitWriter(store, specs, (), heap_size=256 << 20, batch_size=BATCH)
        writer.write(log_batches(rows, schema))
        (add,) = writer.finish()
        total = time.perf_counter() - started
    finally:
        splitwriter.to_reference_form = original
    return store, add, total, rewrite[0]


def ref_of(add: Any) -> SplitRef:
    """The cache's reference to a written split."""
    return SplitRef(add.path, add.size, add.footer_start_offset, add.footer_end_offset)


# --- the baseline: the rebuild from stored documents earlier versions ran on open ---


def rebuild_from_stored_documents(source_dir: str, staging: str, doc_mapping_json: str) -> None:
    """A copy of the removed ``reindex._rebuild``: re-index every stored document."""
    source = tantivy.Index.open(source_dir)
    searcher = source.searcher()
    total = searcher.num_docs
    schema = tantivy_schema(specs_from_doc_mapping(doc_mapping_json).values())
    os.makedirs(staging)
    copy = tantivy.Index(schema, path=staging)
    writer = copy.writer(64 << 20, 1)
    if total:
        hits = searcher.search(tantivy.Query.all_query(), limit=total, count=False).hits
        addresses = sorted((a for _, a in hits), key=lambda a: (a.segment_ord, a.doc))
        from_dict = tantivy.Document.from_dict
        for start in range(0, len(addresses), 10_000):
            for address in addresses[start : start + 10_000]:
                writer.add_document(from_dict(searcher.doc(address).to_dict(), schema))
    writer.commit()
    writer.wait_merging_threads()


def timed(action: Callable[[], Any], repeat: int) -> float:
    """The best of ``repeat`` runs (each on fresh directories), in seconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def write_and_open(rows: int, repeat: int, root: Path) -> None:
    store, add, total, rewrite = write_split(root / "table", rows)
    print(f"write: {rows} rows, split {add.size / 1e6:.1f} MB in {total:.2f} s")
    print(f"  SSTable rewrite of the .term files: {rewrite * 1000:.1f} ms = {rewrite / total:.2%}")
    ref = ref_of(add)
    fetches = []

    def fetch() -> str:
        cache = SplitCache(str(root / f"cache-{len(fetches)}"), 1 << 40)
        fetches.append(cache.directory)
        directory = cache.fetch(store, store.uri, ref)
        tantivy.Index.open(directory).searcher()
        return directory

    with impl.using("python"):
        entry = fetch()
    rebuilt = [0]

    def rebuild() -> None:
        rebuilt[0] += 1
        rebuild_from_stored_documents(
            entry, str(root / f"rebuilt-{rebuilt[0]}"), add.doc_mapping_json or "[]"
        )

    baseline = timed(rebuild, 1)
    print(f"open: rebuild from stored documents (old) {baseline:.2f} s")
    term = {
        name: os.path.getsize(os.path.join(entry, name))
        for name in os.listdir(entry)
        if name.endswith(".term")
    }
    print(f"  .term files {sum(term.values()) / 1e6:.2f} MB")
    for name in ("cython", "python"):
        try:
            with impl.using(name):  # type: ignore[arg-type]
                seconds = timed(fetch, repeat)
        except Exception as error:  # the Cython twin may not be built
            print(f"  {name:<7} unavailable: {error}")
            continue
        print(
            f"  {name:<7} fetch + .term rewrite + open {seconds * 1000:8.1f} ms "
            f"= {seconds / baseline:6.2%} of the rebuild ({baseline / seconds:5.1f}x faster)"
        )
    for directory in fetches:
        shutil.rmtree(directory, ignore_errors=True)


def memory(megabytes: int, root: Path) -> None:
    # The payload is stored text of one 1 kB token: longer than the tokenizer keeps
    # (40 bytes), so the split's terms are the log rows' and its bulk is documents.
    schema = StructType([*SCHEMA.fields, StructField("payload", StringType())])
    indexing = {**INDEXING, "spark.indextables.indexing.typemap.payload": "text"}
    rows = megabytes * 1_000_000 // 1_500 + 1  # ~1.5 kB a row (stored + Arrow copy)
    store, add, total, _ = write_split(root / "big", rows, schema, indexing)
    print(f"memory: split of {add.size / 1e6:.1f} MB ({rows} rows, written in {total:.1f} s)")
    args = [str(store.root), json.dumps(dataclasses.asdict(ref_of(add))), str(root / "cache-mem")]
    done = subprocess.run(
        [sys.executable, __file__, "--memory-child", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"  fetch + open in a fresh process: RSS {figures['baseline_mb']:.1f} MB before, "
        f"peak {figures['peak_mb']:.1f} MB = {figures['peak_mb'] - figures['baseline_mb']:.1f} MB "
        f"above the baseline (.term files {figures['term_mb']:.2f} MB); "
        f"Python allocations peak {figures['traced_mb']:.1f} MB"
    )


def memory_child(store_root: str, ref_json: str, cache_dir: str) -> None:
    """Fetch and open one split; print the memory figures as JSON (run in a fresh process).

    RSS is sampled every millisecond by a thread (the high-water mark of
    ``getrusage`` would include the imports' own peak).
    """
    ref = SplitRef(**json.loads(ref_json))
    store = LocalStore(store_root)
    baseline = _rss_now()
    peak = [baseline]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss_now())
            time.sleep(0.001)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    tracemalloc.start()
    directory = SplitCache(cache_dir, 1 << 40).fetch(store, store.uri, ref)
    searcher = tantivy.Index.open(directory).searcher()
    hits = searcher.search(tantivy.Query.all_query(), limit=1).hits
    _, traced = tracemalloc.get_traced_memory()
    done.set()
    sampler.join()
    peak[0] = max(peak[0], _rss_now())
    term = sum(os.path.getsize(p) for p in Path(directory).glob("*.term"))
    figures = {
        "baseline_mb": baseline,
        "peak_mb": peak[0],
        "traced_mb": traced / 1e6,
        "term_mb": term / 1e6,
        "hits": len(hits),
    }
    print(json.dumps(figures))


def _rss_now() -> float:
    """The process's resident set now, in MB (Linux /proc)."""
    with open("/proc/self/statm", encoding="ascii") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--memory-child"]:
        memory_child(*argv[1:4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--memory-mb", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip", choices=("open", "memory"), action="append", default=[])
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="splitio-bench-"))
    try:
        if "open" not in args.skip:
            write_and_open(args.rows, args.repeat, root)
        if "memory" not in args.skip:
            memory(args.memory_mb, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
