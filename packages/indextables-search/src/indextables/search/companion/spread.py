"""A sync's groups spread over the build workers, so every core indexes.

Grouping by partition value up to TARGET INPUT SIZE leaves a small table as
one group, one split, built by one process while the other cores idle (and
``write_table`` of the same rows uses them all). When there are fewer groups
than build workers, the biggest groups are cut, between their files, into
contiguous runs of about equal bytes, until there are as many groups as
workers, no run would be under :data:`MIN_SPREAD_BYTES` or every group is one
file. Each run is still whole files of one partition value (a split names whole
files: a sync's anti-join, its resume and its invalidation are unchanged).
"""

from __future__ import annotations

from collections.abc import Sequence

from indextables.search.companion.build import CompanionGroup

__all__ = ["MIN_SPREAD_BYTES", "spread_groups"]

#: A group is cut only into runs of at least this many source bytes: a split of
#: less costs more in start-up, commit and one more split per read than it saves.
MIN_SPREAD_BYTES = 8 << 20


def spread_groups(
    groups: Sequence[CompanionGroup], *, workers: int, min_bytes: int | None = None
) -> list[CompanionGroup]:
    """``groups``, the biggest cut into runs of files until there are ``workers`` of them.

    Order is kept (a cut group's runs take its place, in file order); with
    ``workers`` groups or more, nothing changes. ``min_bytes``: the smallest run
    (default :data:`MIN_SPREAD_BYTES`).
    """
    least = MIN_SPREAD_BYTES if min_bytes is None else min_bytes
    result = list(groups)
    if workers <= 1 or len(result) >= workers or not result:
        return result
    share = sum(g.input_bytes for g in result) / workers
    budget = workers - len(result)  # the extra groups there is room for
    pieces = [1] * len(result)
    for index in sorted(range(len(result)), key=lambda i: -result[i].input_bytes):
        group = result[index]
        pieces[index] = min(
            len(group.files),
            max(1, round(group.input_bytes / share)),
            max(1, group.input_bytes // max(1, least)),
            1 + budget,
        )
        budget -= pieces[index] - 1
    spread: list[CompanionGroup] = []
    for group, count in zip(result, pieces, strict=True):
        spread.extend(_cut(group, count) if count > 1 else (group,))
    return spread


def _cut(group: CompanionGroup, pieces: int) -> list[CompanionGroup]:
    """``group``'s files as ``pieces`` contiguous runs of about equal bytes."""
    files = group.files
    total = group.input_bytes
    runs: list[CompanionGroup] = []
    start = 0
    seen = 0
    for piece in range(1, pieces):
        goal = total * piece / pieces
        end = start + 1  # at least one file per run
        seen += files[start].size
        # leave at least one file for each run still to come
        while end < len(files) - (pieces - piece) and abs(seen + files[end].size - goal) < abs(
            seen - goal
        ):
            seen += files[end].size
            end += 1
        runs.append(CompanionGroup(group.partition_values, files[start:end]))
        start = end
    runs.append(CompanionGroup(group.partition_values, files[start:]))
    return runs
