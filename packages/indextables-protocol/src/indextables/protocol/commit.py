"""The commit protocol: optimistic concurrency on put-if-absent version files.

Each attempt re-reads the latest snapshot, checks the protocol, builds the
actions against that snapshot (a builder may refuse: files it removes must
still be live), and creates ``%020d.json`` of the next version with
put-if-absent. Losing the race (the file exists) sleeps a jittered
exponential backoff and tries again; after ``max_attempts`` the commit fails
with :class:`~indextables.protocol.errors.CommitConflictError`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from indextables.protocol.actions import (
    Action,
    AddAction,
    RemoveAction,
    SkipAction,
    lone_surrogate_entry,
)
from indextables.protocol.errors import CommitConflictError, ObjectExistsError, UnsafePathError
from indextables.protocol.logreplay import version_key
from indextables.protocol.metrics import emit
from indextables.protocol.pathsafety import check_new_key, check_relative_path
from indextables.protocol.protocolcheck import check_writable
from indextables.protocol.retry import RetryPolicy
from indextables.protocol.snapshot import Snapshot, SnapshotReader
from indextables.protocol.versionfile import encode_version_file

__all__ = ["CommitOutcome", "run_commit"]

Builder = Callable[[Snapshot], Sequence[Action]]


@dataclass(frozen=True, slots=True)
class CommitOutcome:
    """A successful commit: its version, the snapshot it was built on, its actions."""

    version: int
    read: Snapshot
    actions: tuple[Action, ...]
    attempts: int


def _check_actions(actions: Sequence[Action], *, key: str) -> None:
    """Refuse, before anything is written, a commit its own readers would refuse.

    Raises:
        UnsafePathError: a file path is empty, absolute, names a scheme or
            drive, or climbs out of the table root; or a new file's path is
            a key the stores refuse (``a//b``, ``a/./b``, a trailing ``/``, NUL,
            a lone surrogate); or a partition value holds a lone surrogate.
    """
    for action in actions:
        if isinstance(action, AddAction):
            # A new file: its path must be a key every store can hold. Removes may
            # still name a path an older writer committed, so the table can drop it.
            check_new_key(action.path, file=f"{key} (not written)")
        elif isinstance(action, RemoveAction | SkipAction):
            check_relative_path(action.path, file=f"{key} (not written)")
        if not isinstance(action, AddAction | RemoveAction | SkipAction):
            continue
        values = action.partition_values
        problem = lone_surrogate_entry(values) if values else None
        if problem is not None:
            # Partition values name the files' directories: no UTF-8 log or key holds this.
            raise UnsafePathError(f"{key} (not written): {action.path!r}: {problem}")


def run_commit(
    reader: SnapshotReader,
    build: Builder,
    *,
    policy: RetryPolicy,
    compress: bool = True,
    rng: random.Random | None = None,
) -> CommitOutcome:
    """Commit the actions ``build`` makes from the latest snapshot, retrying lost races.

    Raises:
        CommitConflictError: every attempt lost, or the builder refused.
        UnsupportedProtocolError: the table needs a newer writer.
        UnsafePathError: an action's path would make the log unreadable.
    """
    started = time.monotonic()
    version = -1
    for attempt in range(policy.max_attempts):
        read = reader.load()
        check_writable(read.protocol, path=reader.store.uri)
        actions = tuple(build(read))
        version = read.version + 1
        _check_actions(actions, key=f"{reader.store.uri}/{version_key(version)}")
        try:
            reader.store.put_if_absent(
                version_key(version), encode_version_file(actions, compress=compress)
            )
        except ObjectExistsError:
            time.sleep(policy.delay_seconds(attempt, rng))
            continue
        tags = {"table": reader.store.uri}
        emit("indextables.commit.attempts", attempt + 1, **tags)
        emit("indextables.commit.duration_ms", (time.monotonic() - started) * 1000, **tags)
        return CommitOutcome(version, read, actions, attempt + 1)
    raise CommitConflictError(
        f"{reader.store.uri}: lost the race for a new version {policy.max_attempts} times "
        f"(last tried {version})",
        version=version,
        attempts=policy.max_attempts,
    )
