"""Where a companion index's bytes go: per file kind and per field, against the source's Parquet.

Writes the log rows of ``logdata.py`` as a Delta table (as ``companion.py``
does), builds its companion (HYBRID, ``message`` tokenized, or the options
given) and prints, summed over the splits: bytes and bytes per row of each
segment file kind (``.idx`` postings, ``.pos`` positions, ``.term`` term
dictionary, ``.fast``, ``.store``, ``.fieldnorm``), the manifest, the
bundle's other files and its footer (file table and hotcache), and for the
composite kinds the share of each field; then the same for the small layout
(``companion.SMALL_LAYOUT``: ``id`` fast-only, ``message``, ``host`` and ``level``
with basic postings) and
both totals side by side. Figures only (no timing).

Usage: ``python benchmarks/companion_size.py [--rows 2000000] [--files 4]
[--mode text|string] [--path DIR]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from companion import SMALL_LAYOUT, source_files, write_source

_KINDS = (".idx", ".pos", ".term", ".fast", ".store", ".fieldnorm")


def composite_fields(data: bytes) -> dict[int, int]:
    """Bytes per field id of a tantivy composite file (``.idx``, ``.pos``, ``.term``, ...)."""
    from indextables.search.splits.termdict.composite import split_composite, split_footer

    body, _footer = split_footer(data)
    sizes: dict[int, int] = defaultdict(int)
    for blob in split_composite(body):
        sizes[blob.field] += len(blob.data)
    return dict(sizes)


def breakdown(uri: str) -> tuple[dict[str, int], dict[tuple[str, str], int], int]:
    """(bytes per kind, bytes per (kind, field name), rows) over a table's splits."""
    import json

    from indextables.protocol.splitbundle import parse_split_footer
    from indextables.search import open_table

    table = open_table(uri)
    kinds: dict[str, int] = defaultdict(int)
    per_field: dict[tuple[str, str], int] = defaultdict(int)
    rows = 0
    for path in table.files:
        with open(os.path.join(uri, path), "rb") as handle:
            data = handle.read()
        hotcache = struct.unpack_from("<I", data, len(data) - 4)[0]
        meta_at = len(data) - 8 - hotcache
        meta_start = meta_at - struct.unpack_from("<I", data, meta_at)[0]
        footer = parse_split_footer(data[meta_start:], footer_start_offset=meta_start)
        kinds["bundle: file table"] += meta_at + 4 - meta_start
        kinds["bundle: hotcache"] += hotcache + 4
        meta = json.loads(data[slice(*footer.files["meta.json"])])
        names = [f["name"] for f in meta["schema"]]
        rows += sum(s["max_doc"] for s in meta["segments"])
        for name, (lo, hi) in footer.files.items():
            kind = os.path.splitext(name)[1]
            if kind in _KINDS:
                kinds[kind] += hi - lo
                if kind in (".idx", ".pos", ".term", ".fieldnorm", ".fast") and hi > lo:
                    if kind == ".fast":
                        continue
                    for field, size in composite_fields(data[lo:hi]).items():
                        per_field[(kind, names[field])] += size
            elif name == "_parquet_manifest.json":
                kinds["manifest"] += hi - lo
            else:
                kinds["other (" + name.rsplit(".", 1)[-1][:12] + ")"] += hi - lo
    return dict(kinds), dict(per_field), rows


def report(uri: str, parquet_bytes: int) -> int:
    kinds, per_field, rows = breakdown(uri)
    total = sum(kinds.values())
    print(f"{'kind':<28} {'bytes':>12} {'B/row':>8} {'share':>7} {'x Parquet':>10}")
    for kind, size in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(
            f"{kind:<28} {size:12,} {size / rows:8.3f} {size / total:7.1%} "
            f"{size / parquet_bytes:10.3f}"
        )
    print(
        f"{'total':<28} {total:12,} {total / rows:8.3f} {1:7.1%} {total / parquet_bytes:10.3f}"
        f"   (source Parquet {parquet_bytes:,} B, {parquet_bytes / rows:.3f} B/row)"
    )
    for (kind, field), size in sorted(per_field.items()):
        print(f"  {kind:<10} {field:<20} {size:12,} {size / rows:8.3f} B/row")
    return total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--mode", default="text", help="indexing mode of `message`")
    parser.add_argument("--path", default=None, help="work directory (default: a fresh temp dir)")
    args = parser.parse_args(argv)

    from indextables.search import build_companion

    root = args.path or tempfile.mkdtemp(prefix="indextables-bench-companion-size-")
    source, index = os.path.join(root, "delta"), os.path.join(root, "companion")
    shutil.rmtree(index, ignore_errors=True)
    if not os.path.exists(source):
        write_source(source, args.rows, args.files)
    parquet_bytes = sum(os.path.getsize(f) for f in source_files(source))
    options = {"spark.indextables.cache.directoryPath": os.path.join(root, "split-cache")}
    totals = {}
    for name, layout in (("default", {}), ("small", SMALL_LAYOUT)):
        target = f"{index}-{name}"
        shutil.rmtree(target, ignore_errors=True)
        build_companion(
            source, target, source_format="delta", indexing_modes={"message": args.mode},
            fast_field_mode="HYBRID", options={**options, **layout},
        )  # fmt: skip
        shown = layout or "(the reference's)"
        print(f"\n{name} layout {shown}")
        totals[name] = report(target, parquet_bytes)
    print()
    for name, total in totals.items():
        print(
            f"{name + ' layout':<16} {total:12,} B = {total / parquet_bytes:.3f}x Parquet "
            f"(target <= 0.5)"
        )
    if args.path is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
