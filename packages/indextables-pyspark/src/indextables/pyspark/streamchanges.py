"""What a streaming source emits of each commit, and which commits stop it (Delta's rules).

A commit that only adds rows (``dataChange=true`` adds, no such removes) is emitted.
A commit that removes or rewrites rows (a delete, a replace, an overwrite, a dropped
partition: ``dataChange=true`` removes) stops the stream by default with a
:class:`StreamChangeError` naming the version, as Delta's source does, since the
rows it changed were already emitted. Options, with Delta's meaning:

- ``ignoreDeletes=true``: a commit that only removes splits (no ``dataChange``
  adds: a dropped partition, a delete or replace that removed whole splits) is
  skipped; a commit that also adds (a delete rewriting splits with deletes, an
  overwrite) still stops the stream.
- ``skipChangeCommits=true``: every commit that removes rows is skipped whole,
  its adds included (the rows it wrote are not emitted).

Commits without data change (MERGE SPLITS, PURGE DELETES: their adds carry
``dataChange=false``) emit nothing and never stop the stream; their removes are
not read as deletes even where the log records them with ``dataChange=true``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from indextables.protocol.actions import AddAction, RemoveAction
from indextables.pyspark.errors import IndexTablesSparkError
from indextables.search.errors import OptionError
from indextables.search.options import lower_keys

__all__ = ["StreamChangeError", "StreamPolicy", "emitted_paths", "stream_policy"]


class StreamChangeError(IndexTablesSparkError, ValueError):
    """A streaming source met a commit that removes or rewrites rows; the message names
    the table version and the options that skip it."""


@dataclass(frozen=True, slots=True)
class StreamPolicy:
    """How the source treats commits that remove rows (see the module's text)."""

    ignore_deletes: bool = False
    skip_change_commits: bool = False


def _flag(options: Mapping[str, str], key: str) -> bool:
    value = lower_keys(options).get(key.lower())
    if value is None:
        return False
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise OptionError(f"option {key}={value!r} must be true or false")
    return text == "true"


def stream_policy(options: Mapping[str, str]) -> StreamPolicy:
    """The ``ignoreDeletes`` and ``skipChangeCommits`` options.

    Raises:
        OptionError: a value other than true or false.
    """
    return StreamPolicy(
        ignore_deletes=_flag(options, "ignoreDeletes"),
        skip_change_commits=_flag(options, "skipChangeCommits"),
    )


def emitted_paths(
    path: str, actions: Sequence[Any], version: int, policy: StreamPolicy
) -> list[str]:
    """The split paths of ``version`` (its ``actions``) the source emits.

    Raises:
        StreamChangeError: the commit removes rows and the policy does not skip it.
    """
    every_add = [a for a in actions if isinstance(a, AddAction)]
    adds = [a.path for a in every_add if a.data_change]
    if every_add and not adds:
        return []  # a rearrangement (merge): the same rows in other splits
    removes = [a for a in actions if isinstance(a, RemoveAction) and a.data_change]
    if not removes:
        return adds
    if policy.skip_change_commits or (policy.ignore_deletes and not adds):
        return []
    kind = "removes splits" if not adds else "removes or rewrites splits and adds others"
    hint = (
        "skipChangeCommits=true skips it"
        if adds
        else "ignoreDeletes=true or skipChangeCommits=true skips it"
    )
    raise StreamChangeError(
        f"the streaming source of {path!r} met version {version}, a commit that {kind} "
        f"(a delete, replace, overwrite or dropped partition): rows it changed were "
        f"already emitted; {hint} (Delta's options), or restart the stream from a "
        "later startingVersion"
    )
