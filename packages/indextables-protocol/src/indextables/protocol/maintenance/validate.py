"""VALIDATE: check every invariant of the current snapshot against storage.

Checked: the protocol is supported for reading and writing; live paths are
unique; every live split exists with its recorded size; partition values use
partition columns only; doc mapping references resolve; the base state's
counts match its entries; manifest partition bounds keep every entry when
pruning by its own partition (up to 64 partitions); no file removed at some
version is live without a later add; every live path is a key the stores
accept (:func:`~indextables.protocol.pathsafety.key_problem`); the footer of
every live split whose log records its offsets lies within the object and
parses (read within the bounds of
:func:`~indextables.protocol.splitbundle.read_split_footer`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from indextables.protocol.actions import AddAction, RemoveAction
from indextables.protocol.errors import (
    CorruptFileError,
    ObjectNotFoundError,
    ObjectStoreError,
    ProtocolError,
    UnsafePathError,
    UnsupportedProtocolError,
)
from indextables.protocol.maintenance.results import ValidateResult
from indextables.protocol.pathsafety import key_problem
from indextables.protocol.predicates import And, EqualTo, Predicate
from indextables.protocol.protocolcheck import check_readable, check_writable
from indextables.protocol.snapshot import Snapshot, read_state_manifest
from indextables.protocol.splitbundle import read_split_footer
from indextables.protocol.state import FileEntry

if TYPE_CHECKING:
    from indextables.protocol.tablelike import TableLike

__all__ = ["validate"]


def _storage_problems(table: TableLike, snap: Snapshot) -> list[str]:
    problems = []
    for entry in snap.files:
        problem = key_problem(entry.path)
        if problem is not None:
            # No store can hold it: the split cannot be fetched (the store would refuse).
            problems.append(f"split path {entry.path!r} {problem}: no store accepts that key")
            continue
        try:
            size = table.store.head(entry.path).size
        except ObjectNotFoundError:
            problems.append(f"missing split {entry.path}")
            continue
        except ObjectStoreError as exc:  # e.g. a key the store refuses (a link out of its root)
            problems.append(f"split {entry.path} cannot be read: {exc}")
            continue
        if size != entry.size:
            problems.append(f"{entry.path}: size {size} in storage, {entry.size} in the log")
        if entry.footer_end_offset is not None and entry.footer_end_offset != entry.size:
            problems.append(f"{entry.path}: footerEndOffset {entry.footer_end_offset} != size")
        problem = _footer_problem(table, entry, size)
        if problem is not None:
            problems.append(problem)
    return problems


def _footer_problem(table: TableLike, entry: FileEntry, size: int) -> str | None:
    """Whether the footer at the log's offsets lies within the object and parses.

    Only splits whose log records both offsets are checked (every writer of
    footer offsets, the reference's and this one's): those offsets are what a
    reader trusts for its one ranged read.
    """
    start, end = entry.footer_start_offset, entry.footer_end_offset
    if start is None or end is None:
        return None
    if not 0 <= start < end <= size:
        return (
            f"{entry.path}: footer range {start}..{end} in the log is not within the "
            f"object's {size} bytes"
        )
    try:
        read_split_footer(table.store, entry.path, footer_start_offset=start, footer_end_offset=end)
    except CorruptFileError as exc:
        return f"{entry.path}: footer does not parse: {exc}"
    except ObjectStoreError as exc:
        return f"{entry.path}: footer cannot be read: {exc}"
    return None


def _entry_problems(snap: Snapshot) -> list[str]:
    problems = []
    columns = set(snap.partition_columns)
    for entry in snap.files:
        if set(entry.partition_values) - columns:
            problems.append(
                f"{entry.path}: partition values {dict(entry.partition_values)} "
                f"outside partition columns {sorted(columns)}"
            )
        if entry.doc_mapping_ref is not None and entry.doc_mapping_json is None:
            problems.append(f"{entry.path}: docMappingRef {entry.doc_mapping_ref} unresolved")
    return problems


def _state_problems(table: TableLike, snap: Snapshot) -> list[str]:
    if snap.state_version is None:
        return []
    state = read_state_manifest(table.reader, snap.state_version)
    loaded = table.reader.load(snap.state_version)
    problems = []
    if state.num_files != loaded.num_files:
        problems.append(
            f"state {state.state_version}: numFiles {state.num_files} "
            f"!= {loaded.num_files} live entries"
        )
    if state.total_bytes != loaded.total_bytes:
        problems.append(
            f"state {state.state_version}: totalBytes {state.total_bytes} != {loaded.total_bytes}"
        )
    entries = sum(m.num_entries for m in state.manifests)
    if entries < state.num_files:
        problems.append(
            f"state {state.state_version}: manifests hold {entries} entries "
            f"< numFiles {state.num_files}"
        )
    return problems


MAX_BOUNDS_CHECKS = 64


def _bounds_problems(table: TableLike, snap: Snapshot) -> list[str]:
    """Pruning by each partition's exact values must keep that partition's entries.

    A manifest whose partition bounds do not cover its entries would make a
    filtered read silently miss them.
    """
    if snap.state_version is None or not snap.partition_columns:
        return []
    state_files = table.reader.load(snap.state_version).files
    partitions: dict[tuple[tuple[str, str], ...], set[str]] = {}
    for entry in state_files:
        key = tuple(sorted(entry.partition_values.items()))
        partitions.setdefault(key, set()).add(entry.path)
    problems = []
    for key, paths in list(partitions.items())[:MAX_BOUNDS_CHECKS]:
        if not key:
            continue
        predicate: Predicate = EqualTo(*key[0])
        for column, value in key[1:]:
            predicate = And(predicate, EqualTo(column, value))
        loaded = table.state_format.read_state(
            table.store, snap.state_version, partition_filter=predicate
        )
        missing = paths - {entry.path for entry in loaded.files}
        if missing:
            problems.append(
                f"state {snap.state_version}: partition bounds prune {sorted(missing)[:3]} "
                f"for {dict(key)}"
            )
    return problems


def _resurrections(table: TableLike, snap: Snapshot) -> list[str]:
    """A file removed at version k must not be live unless re-added after k."""
    layout = table.reader.layout()
    last_remove: dict[str, int] = {}
    last_add: dict[str, int] = {}
    for version in sorted(v for v in layout.listing.versions if v <= snap.version):
        for action in table.reader.actions(version):
            if isinstance(action, RemoveAction):
                last_remove[action.path] = version
            elif isinstance(action, AddAction):
                last_add[action.path] = version
    live = {f.path for f in snap.files}
    return [
        f"{path}: removed at version {removed} but live without a later add"
        for path, removed in last_remove.items()
        if path in live and last_add.get(path, -1) <= removed
    ]


# A log that cannot be read is a broken invariant, reported as a finding (not a crash).
_DAMAGE = (CorruptFileError, UnsafePathError, UnsupportedProtocolError)


def validate(table: TableLike) -> ValidateResult:
    """Check the current snapshot: protocol, splits in storage, state counts, no resurrection.

    A damaged log (a corrupt or unsafe version file, state or manifest, or a
    protocol this reader does not support) is reported as a problem.
    """
    try:
        return _validate(table)
    except _DAMAGE as exc:
        try:
            version = table.reader.layout().latest
        except ProtocolError:
            version = -1
        return ValidateResult(table.uri, version, 0, (f"the log cannot be read: {exc}",))


def _validate(table: TableLike) -> ValidateResult:
    snap = table.snapshot()
    problems: list[str] = []
    try:
        check_readable(snap.protocol, path=table.uri)
        check_writable(snap.protocol, path=table.uri)
    except ProtocolError as exc:
        problems.append(str(exc))
    paths = [f.path for f in snap.files]
    if len(paths) != len(set(paths)):
        problems.append("duplicate live paths")
    problems += _storage_problems(table, snap)
    problems += _entry_problems(snap)
    problems += _state_problems(table, snap)
    problems += _bounds_problems(table, snap)
    problems += _resurrections(table, snap)
    return ValidateResult(table.uri, snap.version, len(snap.files), tuple(problems))
