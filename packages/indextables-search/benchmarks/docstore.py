"""Per-row cost of stored-document retrieval: tantivy-py ``searcher.doc`` vs the bulk decoder.

Figures only, no assertions. Usage: ``python benchmarks/docstore.py [--rows 200000]``.
Builds one single-segment index (lz4 doc store, as our splits) with a text, an
i64, an f64 and a date field, then times 4,000 scattered hits, a needle (one
hit in each of 2,000 blocks) and every document, in process CPU time (median
of ``--repeat`` runs, summed over threads; the load average is printed):
tantivy-py ``searcher.doc().to_dict()`` per hit, and each decoder twin with
the store parsed in the timing, with the store already open (as the read
path keeps it; LZ4 blocks decompressed only up to the last wanted document, and
in chunks on the decoder's threads past ``THREAD_MIN_HITS`` hits), the same on
one thread, and with every touched block already in a ``BlockCache``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import tantivy

from indextables.search.read.docstore import BlockCache, FieldSpec, decode_docs, impl, read_store
from indextables.search.read.docstore import decode as decode_module


def _build(directory: Path, rows: int) -> None:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("text", stored=True)
    sb.add_integer_field("id", stored=True)
    sb.add_float_field("score", stored=True)
    sb.add_date_field("ts", stored=True)
    index = tantivy.Index(sb.build(), path=str(directory))
    writer = index.writer(200_000_000, 1)
    base = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    for k in range(rows):
        doc = tantivy.Document()
        doc.add_text("text", f"row {k} lorem ipsum dolor {k % 977}")
        doc.add_integer("id", k)
        doc.add_float("score", k / 7)
        doc.add_date("ts", base + dt.timedelta(seconds=k))
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()


def _per_row(seconds: float, rows: int) -> str:
    return f"{seconds / rows * 1e6:8.2f} us/row"


def _cpu(action: Callable[[], object], repeat: int) -> float:
    """Median process CPU time of ``repeat`` runs (a loaded machine inflates wall time more)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        action()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--hits", type=int, default=4_000)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        _build(directory, args.rows)
        meta = json.loads((directory / "meta.json").read_text())
        assert len(meta["segments"]) == 1, "the benchmark wants one segment"
        store_path = directory / (meta["segments"][0]["segment_id"].replace("-", "") + ".store")
        index = tantivy.Index.open(str(directory))
        searcher = index.searcher()
        fields = {
            0: FieldSpec("text", "text"),
            1: FieldSpec("id", "i64"),
            2: FieldSpec("score", "f64"),
            3: FieldSpec("ts", "date"),
        }
        rng = random.Random(7)
        blocks = read_store(store_path.read_bytes())
        # A needle: one hit at a random place in each of (at most) 2,000 blocks.
        needle = sorted(
            rng.randrange(start, end)
            for start, end in list(zip(blocks.doc_starts, blocks.doc_ends, strict=True))[:2000]
        )
        cases = {
            f"{args.hits} scattered hits": sorted(rng.sample(range(args.rows), args.hits)),
            f"needle: {len(needle)} hits, 1 a block": needle,
            f"all {args.rows} docs": list(range(args.rows)),
        }
        repeat = args.repeat
        print(
            f"doc store: {store_path.stat().st_size / 1e6:.1f} MB, {args.rows} rows, "
            f"{len(blocks.doc_starts)} blocks; process CPU time, median of {repeat} runs; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        for label, hits in cases.items():
            searcher.doc(tantivy.DocAddress(0, 0))  # warm-up

            def per_doc(hits: list[int] = hits) -> None:
                for doc in hits:
                    searcher.doc(tantivy.DocAddress(0, doc)).to_dict()

            print(
                f"{label:>30}  tantivy-py searcher.doc  "
                f"{_per_row(_cpu(per_doc, repeat), len(hits))}"
            )
            for twin in ("cython", "python"):
                os.environ[impl.IMPL_ENV] = twin
                try:
                    impl.kernels()
                except Exception as exc:  # figures only: report a missing build and go on
                    print(f"{label:>30}  {twin} twin: {exc}")
                    continue
                # Warm-up: pa.array imports pandas lazily on first use (~3 s).
                decode_docs(read_store(store_path.read_bytes()), hits[:2], fields)
                runs = repeat if twin == "cython" else 1  # the pure twin is ~100x slower
                store = read_store(store_path.read_bytes())
                opening = _cpu(lambda: read_store(store_path.read_bytes()), runs)
                decoded = _cpu(lambda h=hits, s=store: decode_docs(s, h, fields), runs)
                threshold = decode_module.THREAD_MIN_HITS
                decode_module.THREAD_MIN_HITS = len(hits) + 1
                try:
                    one = _cpu(lambda h=hits, s=store: decode_docs(s, h, fields), runs)
                finally:
                    decode_module.THREAD_MIN_HITS = threshold
                cache = BlockCache(max_bytes=1 << 30)
                decode_docs(store, hits, fields, cache=cache)  # first miss: remembered
                decode_docs(store, hits, fields, cache=cache)  # second miss: admitted
                cached = _cpu(
                    lambda h=hits, s=store, c=cache: decode_docs(s, h, fields, cache=c), runs
                )
                print(
                    f"{label:>30}  docstore {twin:<6} twin     "
                    f"{_per_row(opening + decoded, len(hits))} with read_store, "
                    f"{_per_row(decoded, len(hits))} store open, "
                    f"{_per_row(one, len(hits))} one thread, "
                    f"{_per_row(cached, len(hits))} blocks cached"
                )
                if twin == "cython" and label.startswith("needle"):
                    print(
                        f"{'':>30}  needle row fetch {decoded / len(hits) * 1e6:.2f} us/row "
                        f"(blocks decoded partly), {cached / len(hits) * 1e6:.2f} us/row "
                        "(blocks cached)"
                    )


if __name__ == "__main__":
    main()
