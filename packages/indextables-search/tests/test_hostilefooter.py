"""A log entry declaring a huge footer range fails as a corrupt split, without the memory.

Run in a subprocess whose address space is capped about 1 GiB above what it uses
after its imports: reading a 2 GiB footer there is a MemoryError (or worse), a
refused range is a CorruptFileError naming the split.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa

from indextables.protocol import open_table as open_log
from indextables.protocol.actions import AddAction
from indextables.search import write_table

_READER = textwrap.dedent(
    """
    import resource, sys
    from indextables.protocol.errors import CorruptFileError
    from indextables.search import open_table

    with open("/proc/self/status") as status:
        used = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmSize:"))
    limit = used + (1 << 30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        options = {"spark.indextables.cache.directoryPath": sys.argv[2]}
        open_table(sys.argv[1], options=options).search(where="id >= 0")
    except CorruptFileError as error:
        print("corrupt:", error)
    except MemoryError:
        print("memory error")
    """
)


def _damage(uri: Path) -> str:
    """Replace the table's one split by the same split declared with a 2 GiB footer."""
    log = open_log(str(uri))
    (entry,) = log.snapshot().files
    add = AddAction.from_file_entry(entry)
    assert add.footer_start_offset is not None
    huge = add.footer_start_offset + (2 << 30)
    bad = dataclasses.replace(add, size=huge, footer_end_offset=huge)
    log.commit([bad], [entry.path])
    return entry.path


def test_a_2gib_footer_range_is_a_corrupt_split_not_an_allocation(tmp_path: Path) -> None:
    uri = tmp_path / "t"
    write_table(str(uri), pa.table({"id": list(range(100)), "s": [f"w{i}" for i in range(100)]}))
    path = _damage(uri)
    run = subprocess.run(
        [sys.executable, "-c", _READER, str(uri), str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("corrupt:"), (run.stdout, run.stderr[-3000:])
    assert path in run.stdout
    assert "footer range" in run.stdout
