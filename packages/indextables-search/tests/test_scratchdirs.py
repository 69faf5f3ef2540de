"""Scratch directories of processes that are gone are removed by the next process, never a
live process's: real processes killed with SIGKILL in the middle of a write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search import scratchdirs
from indextables.search.scratchdirs import owner_of, scratch_directory, sweep
from indextables.search.write.tablewrite import write_table

# Writes one batch of a table, makes a query validation index, then blocks in the
# middle of the write (its reader waits on stdin) until killed.
WRITER = textwrap.dedent(
    """
    import sys, threading
    import pyarrow as pa
    from indextables.search.options import parse_indexing
    from indextables.search.query.validationindex import validation_index
    from indextables.search.schema.mapping import field_specs
    from indextables.search.write.tablewrite import write_table

    schema = pa.schema([("id", pa.int64()), ("message", pa.string())])
    with validation_index(field_specs(schema, parse_indexing({}))):
        pass
    def batches():
        yield pa.record_batch([pa.array([1, 2]), pa.array(["a", "b"])], schema=schema)
        print("WRITING", flush=True)
        sys.stdin.readline()  # never answered: the process is killed here
        yield pa.record_batch([pa.array([3]), pa.array(["c"])], schema=schema)
    write_table(sys.argv[1], pa.RecordBatchReader.from_batches(schema, batches()))
    """
)


def _start_writer(tmp_path: Path, root: Path, name: str) -> subprocess.Popen[str]:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    process = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / name)],
        env={**os.environ, "TMPDIR": str(root)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "WRITING"
    return process


def _kinds_of(root: Path, pid: int) -> set[str]:
    found = set()
    for name in os.listdir(root):
        owner = owner_of(name)
        if owner is not None and owner.pid == pid:
            found.add(name.split("-")[1])
    return found


def _kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            pipe.close()


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh temp root for this process and its children."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    return directory


def test_a_write_killed_midway_leaves_directories_the_next_write_removes(
    tmp_path: Path, root: Path
) -> None:
    killed = _start_writer(tmp_path, root, "killed")
    alive = _start_writer(tmp_path, root, "alive")
    try:
        _kill(killed)
        assert _kinds_of(root, killed.pid) == {"write", "validate"}  # left behind
        legacy = root / "indextables-write-k2j4_x9q"  # an older version's: no owner
        legacy.mkdir()
        other = root / "unrelated"
        other.mkdir()
        # A later write in this process (the first under this temp root) cleans up.
        table = pa.table({"id": [1, 2, 3]})
        write_table(str(tmp_path / "later"), table)
        assert _kinds_of(root, killed.pid) == set()
        assert _kinds_of(root, alive.pid) == {"write", "validate"}  # a live process's stay
        assert legacy.is_dir()
        assert other.is_dir()
    finally:
        _kill(alive)
    # The same once the second writer is gone too (a new sweep of the root).
    assert sweep(str(root))
    assert _kinds_of(root, alive.pid) == set()


def test_a_reused_pid_does_not_make_a_dead_owner_look_alive(tmp_path: Path, root: Path) -> None:
    alive = _start_writer(tmp_path, root, "alive")
    try:
        (name,) = [n for n in os.listdir(root) if n.startswith("indextables-write-")]
        owner = owner_of(name)
        assert owner is not None
        assert owner.pid == alive.pid
        suffix = name.rsplit("-", 1)[1]
        if owner.start is None:
            pytest.fail("this platform gives no process start times (/proc/<pid>/stat)")
        # Directories of earlier processes that had the same pid: another start, another boot.
        earlier = root / f"indextables-merge-{owner.pid}.{owner.start - 1}.{owner.boot}-{suffix}"
        other_boot = "0" * 8 if owner.boot != "0" * 8 else "1" * 8
        rebooted = root / f"indextables-validate-{owner.pid}.{owner.start}.{other_boot}-{suffix}"
        same = root / f"indextables-merge-{owner.token()}-{suffix}"  # the live process itself
        for directory in (earlier, rebooted, same):
            directory.mkdir()
            (directory / "meta.json").write_text("{}")
        removed = sweep(str(root))
        assert sorted(removed) == sorted([str(earlier), str(rebooted)])
        assert same.is_dir()
        assert (root / name).is_dir()
    finally:
        _kill(alive)


def test_a_live_pid_without_a_start_time_counts_as_the_owner(root: Path) -> None:
    unknown = root / f"indextables-write-{os.getpid()}.x.x-abcdef"
    unknown.mkdir()
    gone = root / "indextables-write-4194305.x.x-abcdef"  # beyond any pid
    gone.mkdir()
    assert sweep(str(root)) == [str(gone)]
    assert unknown.is_dir()


def test_hostile_names_and_entries_are_skipped(root: Path) -> None:
    names = [
        "indextables-write-1.2.3-",  # no random part
        "indextables-write-../../x",
        "indextables-other-1.2.x-abc",
        "indextables-write-99999999999.1.x-abc",  # pid of 11 digits
        "indextables-write-123.abc.x-abc",
    ]
    for name in names:
        if "/" not in name:
            (root / name).mkdir()
    target = root / "target"
    target.mkdir()
    (target / "keep").write_text("kept")
    link = root / "indextables-write-4194305.x.x-link"  # a dead owner's name on a link
    link.symlink_to(target)
    a_file = root / "indextables-write-4194305.x.x-file"
    a_file.write_text("not a directory")
    assert sweep(str(root)) == []
    assert (target / "keep").read_text() == "kept"
    assert link.is_symlink()
    assert a_file.is_file()
    assert sweep(str(root / "missing")) == []


def test_a_directory_is_private_and_names_this_process(root: Path) -> None:
    directory = scratch_directory("validate")
    assert os.path.dirname(directory) == str(root)
    assert os.stat(directory).st_mode & 0o777 == 0o700
    owner = owner_of(os.path.basename(directory))
    assert owner is not None
    assert owner.pid == os.getpid()
    assert not sweep(str(root))
    assert os.path.isdir(directory)
    with pytest.raises(ValueError, match="kind"):
        scratch_directory("nothing")
    assert set(scratchdirs.KINDS) == {"write", "validate", "merge", "companion"}


def test_a_companion_split_of_several_indexes_gathers_them_in_a_scratch_directory(
    root: Path,
) -> None:
    """The directory a companion build gathers a split's capped indexes in is named by its
    process, so a build killed midway leaves nothing the next process keeps."""
    import tantivy

    from indextables.search.companion.build import companion_schema
    from indextables.search.companion.pathhash import FILE_HASH_FIELD, ROW_IN_FILE_FIELD
    from indextables.search.companion.segments import CappedIndex
    from indextables.search.options import IndexingOptions
    from indextables.search.schema.mapping import field_specs

    specs = field_specs(pa.schema([("s", pa.string())]), IndexingOptions())
    hidden = (FILE_HASH_FIELD, ROW_IN_FILE_FIELD)
    index = CappedIndex(
        specs, companion_schema(specs), heap_size=15_000_000, hidden_fast=hidden,
        segment_docs=8, commit_docs=8,
    )  # fmt: skip

    def document(row: int) -> tantivy.Document:
        doc = tantivy.Document()
        doc.add_text("s", f"v{row}")
        doc.add_unsigned(FILE_HASH_FIELD, 7)
        doc.add_unsigned(ROW_IN_FILE_FIELD, row)
        return doc

    try:
        for start in range(0, 24, 8):
            index.add((document(r) for r in range(start, start + 8)), 8)
        index.finish()
        assert index.indexes == 3
        assert os.path.dirname(index.directory) == str(root)
        owner = owner_of(os.path.basename(index.directory))
        assert owner is not None
        assert owner.pid == os.getpid()
    finally:
        index.discard()
