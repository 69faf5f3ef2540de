"""A delete racing an append, a replace, an overwrite or a MERGE SPLITS in another process:
each either commits or fails with ``CommitConflictError``; a deleted row never comes back
and no other row is lost (the oracle: a model of the rows from who committed)."""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from racers import race


def _rows(ids: range, day: int | None = None) -> list[dict[str, Any]]:
    return [{"id": i, "day": i % 2 if day is None else day} for i in ids]


def _run(uri: str, racers: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(racers))
    results = context.Queue()
    processes = [
        context.Process(target=race, args=(name, uri, barrier, results, args))
        for name, args in racers
    ]
    for process in processes:
        process.start()
    outcome = dict(results.get(timeout=600) for _ in processes)
    for process in processes:
        process.join(timeout=120)
    return outcome


@pytest.mark.parametrize("other", ["append", "replace", "overwrite", "merge", "purge"])
def test_a_delete_racing_another_commit(tmp_path: Path, other: str) -> None:
    uri = str(tmp_path / "t")
    for start in (0, 40):  # two splits per day
        write_table(uri, pa.Table.from_pylist(_rows(range(start, start + 40))), workers=1)
    before = set(range(80))
    gone = {3, 5, 41, 43}  # day 1, both of its splits
    delete = ("delete", {"where": f"id IN ({', '.join(map(str, sorted(gone)))})"})
    new = _rows(range(1000, 1010), day=1)
    args: dict[str, Any] = {
        "append": {"rows": new},
        "replace": {"rows": new, "where": "day = 1"},
        "overwrite": {"rows": new},
        "merge": {},
        "purge": {"purge": True},
    }[other]
    name = "merge" if other == "purge" else other
    outcome = _run(uri, [delete, (name, args)])
    assert set(outcome.values()) <= {"won", "conflict"}, outcome
    assert "won" in outcome.values(), outcome
    deleted = outcome["delete"] == "won"
    wrote = outcome[name] == "won"
    expected = set(before)
    # Both may commit when one ran after the other had landed (each then read the other's
    # result); had both read the same version, the second's removes would be gone and it
    # would have failed. Either way the rows below are those of a serial order: a commit
    # built on a stale snapshot shows up as duplicated or returning rows.
    if deleted:
        expected -= gone
    if wrote and other == "append":
        expected |= {r["id"] for r in new}
    if wrote and other == "replace":
        expected = {i for i in expected if i % 2 == 0} | {r["id"] for r in new}
    if wrote and other == "overwrite":
        expected = {r["id"] for r in new}
    got = sorted(open_table(uri).search(columns=["id"]).column("id").to_pylist())
    assert got == sorted(expected), outcome
    assert open_table(uri).count() == len(expected)
