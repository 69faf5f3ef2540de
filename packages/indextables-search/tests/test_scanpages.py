"""A full scan leaves no split's doc-store pages resident in the process.

A scan reads every block of every split once; keeping the mapped stores resident
made a scan's RSS grow by the table's doc-store bytes (727 MB peak for a
20,000,000-row table whose anonymous memory stayed under 160 MB). The pages are
read from ``/proc/self/smaps``: Linux only, as the package's split cache is.
"""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

import pyarrow as pa

from indextables.search import open_table, write_table

_HEADER = re.compile(r"^[0-9a-f]+-[0-9a-f]+ ")


def _store_mappings(under: Path) -> dict[str, int]:
    """Resident kB of every mapping of a ``.store`` file under ``under`` in this process."""
    resident: dict[str, int] = {}
    current = None
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            fields = line.split()
            if _HEADER.match(line):  # a mapping: address range, perms, offset, dev, inode, path
                path = fields[5] if len(fields) >= 6 else ""
                current = path if path.endswith(".store") and path.startswith(str(under)) else None
                if current is not None:
                    resident.setdefault(current, 0)
            elif current is not None and fields[0] == "Rss:":
                resident[current] += int(fields[1])
    return resident


def test_a_full_scan_drops_the_doc_store_pages_it_read(tmp_path: Path) -> None:
    rng = random.Random(5)
    rows = 30_000
    table = pa.table(
        {
            "id": pa.array(range(rows), type=pa.int64()),
            "message": [
                "".join(rng.choices(string.ascii_letters + " ", k=rng.randrange(40, 200)))
                for _ in range(rows)
            ],
        }
    )
    uri = str(tmp_path / "t")
    write_table(uri, table, options={"spark.indextables.indexing.typemap.message": "text"})
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "c")}
    searched = open_table(uri, options=cache)

    batches = iter(searched.scan())
    first = next(batches)
    # Mid-scan the store is mapped and the pages read so far are resident.
    during = _store_mappings(tmp_path / "c")
    seen = first.num_rows + sum(batch.num_rows for batch in batches)
    assert seen == rows
    after = _store_mappings(tmp_path / "c")
    assert after.keys() == during.keys()
    # Tantivy maps the store too and reads its footer when it opens the split: a few
    # pages at most stay resident, not the blocks the scan read (~4 MB here).
    assert sum(during.values()) >= 512, during
    assert sum(after.values()) <= 128, after
