"""Benchmarks of the term-dictionary codec, both twins (figures only, never a pass/fail).

- dictionary: one raw-tokenized field with N distinct terms (tantivy-py writes
  the FST form), rewritten FST -> SSTable and SSTable -> FST;
- split: M log rows (id, level, host, message) indexed by tantivy-py; the
  ``.term`` rewrite of the whole segment against re-indexing the same rows
  (what a rebuild from stored documents costs at least), in the same run.

Usage: python benchmarks/termdict.py [--terms 100000] [--rows 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import tantivy

from indextables.search.splits.termdict import impl, to_fst, to_sstable


def measure(action: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median and spread (max - min) of ``repeat`` timed runs after one untimed run."""
    action()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times) - min(times)


def build(directory: Path, docs: Iterable[dict[str, Any]], raw_fields: tuple[str, ...]) -> Path:
    """A one-segment tantivy-py index of ``docs`` (raw fields keep whole values as terms)."""
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=True, indexed=True, fast=True)
    for name in raw_fields:
        builder.add_text_field(name, stored=True, tokenizer_name="raw")
    builder.add_text_field("message", stored=True)
    index = tantivy.Index(builder.build(), path=str(directory))
    writer = index.writer(200_000_000, 1)
    for doc in docs:
        writer.add_document(tantivy.Document(**doc))
    writer.commit()
    writer.wait_merging_threads()
    return directory


def log_rows(rows: int) -> Iterable[dict[str, Any]]:
    """Deterministic log rows, like the Spark benchmark's table."""
    levels = ("INFO", "WARN", "ERROR")
    for i in range(rows):
        mixed = (i * 2654435761) % 2**32
        yield {
            "id": i,
            "level": levels[mixed % 3],
            "host": f"host-{mixed % 500}",
            "message": f"request {i} served {'needlezz' if mixed % 10_000 == 0 else 'ok'}",
        }


def term_bytes(directory: Path) -> bytes:
    (term,) = directory.glob("*.term")
    return term.read_bytes()


def dictionary_figures(terms: int, repeat: int, root: Path) -> None:
    docs = (
        {"id": i, "key": f"{(i * 2654435761) % 2**40:010x}", "message": "x"} for i in range(terms)
    )
    fst = term_bytes(build(_fresh(root / "dictionary"), docs, ("key",)))
    sstable = to_sstable(fst)
    print(
        f"dictionary: {terms} terms, .term {len(fst)} bytes (FST) / {len(sstable)} bytes (SSTable)"
    )
    for name in ("cython", "python"):
        with impl.using(name):  # type: ignore[arg-type]
            to_sst = measure(lambda: to_sstable(fst), repeat)
            to_f = measure(lambda: to_fst(sstable), repeat)
        print(
            f"  {name:<7} FST->SSTable {to_sst[0] * 1000:8.1f} ms (±{to_sst[1] * 500:6.1f})  "
            f"SSTable->FST {to_f[0] * 1000:8.1f} ms (±{to_f[1] * 500:6.1f})"
        )


def split_figures(rows: int, repeat: int, root: Path) -> None:
    rebuild = measure(lambda: build(_fresh(root / "rebuild"), log_rows(rows), ("level", "host")), 1)
    fst = term_bytes(root / "rebuild")
    sstable = to_sstable(fst)
    print(
        f"split: {rows} log rows, .term {len(fst)} bytes; re-indexing them takes {rebuild[0]:.2f} s"
    )
    for name in ("cython", "python"):
        with impl.using(name):  # type: ignore[arg-type]
            rewrite = measure(lambda: to_fst(sstable), repeat)
            write = measure(lambda: to_sstable(fst), repeat)
        print(
            f"  {name:<7} open (SSTable->FST) {rewrite[0] * 1000:8.1f} ms "
            f"= {rewrite[0] / rebuild[0]:6.1%} of re-indexing; "
            f"write (FST->SSTable) {write[0] * 1000:8.1f} ms"
        )


def _fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--terms", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="termdict-bench-"))
    try:
        dictionary_figures(args.terms, args.repeat, root)
        split_figures(args.rows, args.repeat, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
