"""Per-process read caches are keyed by what a split directory holds, never by inode.

Opened indexes, doc stores (with their decompressed blocks), Arrow copies and
split traits are kept per process. They used to be keyed by the directory and
its ``meta.json``'s inode and modification time; inode numbers come back as soon
as a file is deleted (an evicted or re-fetched cache entry), and coarse file
system clocks repeat times, so a directory re-created with another split's files
could be read through the first split's open index: rows of the wrong split, no
error. These tests make a file system that does both (every ``meta.json`` and
Arrow copy reports one inode and one time) and check that the second split's
own rows come back.
"""

from __future__ import annotations

import os
import re
import shutil
import types
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import write_table
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.splitreader import SplitEntry, read_split, split_traits
from indextables.search.splits.entryid import ENTRY_RECORD, content_identity
from indextables.search.splits.splitcache import SplitCache
from indextables.search.table.tableaccess import load_view, open_table_store
from indextables.search.write.splitwriter import ROWS_FILE

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("x", pa.float64())])


def _entry(tmp_path: Path, label: str, first_id: int) -> tuple[str, SplitEntry]:
    """A one-split table of rows ``first_id..first_id+4``, fetched into its own cache."""
    uri = str(tmp_path / f"table-{label}")
    ids = list(range(first_id, first_id + 5))
    data = pa.table(
        {"id": ids, "name": [f"{label}{i}" for i in ids], "x": [i / 2 for i in ids]},
        schema=SCHEMA,
    )
    write_table(uri, data)
    (split,) = load_view(uri, {}).splits
    entry = split.entry
    cache = SplitCache(str(tmp_path / f"cache-{label}"), 1 << 30)
    return cache.fetch(open_table_store(uri, {}), uri, entry.ref), entry


def _rows(directory: Path, entry: SplitEntry, query: str | None = None) -> list[dict[str, Any]]:
    batches = read_split(
        str(directory), entry, SCHEMA, search=SearchSpec(query=query), conditions=()
    )
    return pa.Table.from_batches(list(batches), schema=SCHEMA).to_pylist()


@pytest.fixture
def reused_inodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``meta.json`` and Arrow copy reports inode 7 and one modification time."""
    real = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        found = real(path, *args, **kwargs)
        if os.path.basename(os.fsdecode(path)) not in ("meta.json", ROWS_FILE):
            return found
        fields = {name: getattr(found, name) for name in dir(found) if name.startswith("st_")}
        fields.update(st_ino=7, st_mtime_ns=10**18, st_mtime=1e9, st_ctime_ns=10**18)
        return types.SimpleNamespace(**fields)

    monkeypatch.setattr(os, "stat", stat)


@pytest.mark.parametrize("query", [None, "id:>=0", "name:b12"])
def test_a_directory_refilled_with_another_split_reads_the_new_split(
    tmp_path: Path, reused_inodes: None, query: str | None
) -> None:
    """Searched reads (open index, stored documents, Arrow copy by row key) and a full
    scan (Arrow copy) of the same directory, holding one split and then another."""
    first, first_entry = _entry(tmp_path, "a", 0)
    second, second_entry = _entry(tmp_path, "b", 10)
    place = tmp_path / "entry"
    shutil.copytree(first, place)
    assert {r["id"] for r in _rows(place, first_entry, query)} <= set(range(5))
    shutil.rmtree(place)
    shutil.copytree(second, place)
    got = _rows(place, second_entry, query)
    want = [
        {"id": i, "name": f"b{i}", "x": i / 2}
        for i in range(10, 15)
        if query != "name:b12" or i == 12
    ]
    assert sorted(got, key=lambda r: r["id"]) == want


def test_split_traits_follow_the_content(tmp_path: Path, reused_inodes: None) -> None:
    first, _ = _entry(tmp_path, "a", 0)
    place = tmp_path / "entry"
    shutil.copytree(first, place)
    assert split_traits(str(place)).positions == frozenset({"name"})
    meta = place / "meta.json"
    text, found = re.subn(r'"record":\s*"position"', '"record": "basic"', meta.read_text())
    assert found
    meta.write_text(text)
    (place / ENTRY_RECORD).write_text("a record of other content")
    assert split_traits(str(place)).positions == frozenset()


def test_content_identity_names_the_record_or_the_index_files(tmp_path: Path) -> None:
    entry, _ = _entry(tmp_path, "a", 0)
    copy = tmp_path / "copy"
    shutil.copytree(entry, copy)
    assert content_identity(entry) == content_identity(str(copy))
    (copy / ENTRY_RECORD).write_text("{}")
    assert content_identity(entry) != content_identity(str(copy))
    # No record (a directory outside the split cache): meta.json and the checksums file.
    (copy / ENTRY_RECORD).unlink()
    bare = content_identity(str(copy))
    (copy / "meta.json").write_text((copy / "meta.json").read_text() + " ")
    assert content_identity(str(copy)) != bare


@pytest.mark.skipif(not os.path.exists("/proc/sys/fs/inotify"), reason="needs Linux inotify")
def test_a_trusted_entry_s_identity_is_kept_while_the_kernel_reports_no_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.search.splits import entryid, entrywatch

    entry = tmp_path / "entry"
    entry.mkdir()
    (entry / ENTRY_RECORD).write_text('{"split": "a"}')
    entrywatch.arm(str(entry))
    entrywatch.confirm(str(entry))
    assert entrywatch.trust_token(str(entry)) is not None
    reads: list[str] = []

    def counting(path: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(str(path))
        return open(path, *args, **kwargs)

    monkeypatch.setattr(entryid, "open", counting, raising=False)
    first = content_identity(str(entry))
    assert content_identity(str(entry)) == first
    assert content_identity(str(entry)) == first
    assert len(reads) == 1  # the record read once while the entry stays trusted
    (entry / ENTRY_RECORD).write_text('{"split": "b"}')  # ends the trust
    second = content_identity(str(entry))
    assert second != first
    assert len(reads) == 2
    # Trusted again (a new check): the identity is the record's now, never the one kept.
    entrywatch.arm(str(entry))
    entrywatch.confirm(str(entry))
    assert content_identity(str(entry)) == second
    (entry / ENTRY_RECORD).write_text('{"split": "c"}')
    entrywatch.arm(str(entry))
    entrywatch.confirm(str(entry))
    third = content_identity(str(entry))
    assert third not in (first, second)
    assert content_identity(str(entry)) == third
    assert len(reads) == 4
    entrywatch.forget(str(entry))
