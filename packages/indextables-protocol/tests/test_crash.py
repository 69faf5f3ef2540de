"""Writers killed with SIGKILL at random points of commit, checkpoint, compaction, purge.

A child process loops over random operations on one local table, logging
each add it is about to commit ("intend") and each commit that returned
("commit"), fsynced. The parent waits for the trial's first commit (however
slow the machine is), kills it after a further random delay, then checks:
the table opens; every committed add is live unless a remove of it was
attempted; nothing that was never intended is live; the next writer commits
and the table validates.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import AddAction, create_table, open_table

CHILD = r"""
import json, os, random, sys, time
from indextables.protocol import AddAction, open_table
from indextables.protocol.maintenance.purge import purge
from dataclasses import replace

uri, options, journal, seed = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rng = random.Random(seed)
table = open_table(uri, storage_options=options)
table.config = replace(table.config, checkpoint_interval=3, state_retention_versions=0,
                       state_retention_hours=0.0)
out = open(journal, "a")

def log(record):
    out.write(json.dumps(record) + "\n"); out.flush(); os.fsync(out.fileno())

n = 0
while True:
    op = rng.random()
    if op < 0.6:
        n += 1
        path = f"s{seed}/part-{n:05d}.split"
        data = os.urandom(64)
        table.store.put(path, data)
        live = [f.path for f in table.snapshot().files]
        removes = [rng.choice(live)] if live and rng.random() < 0.3 else []
        log({"intend": path, "removes": removes})
        version = table.commit(adds=[AddAction(path, {}, len(data), 1, True)], removes=removes)
        log({"commit": path, "version": version})
    elif op < 0.75:
        table.checkpoint()
    elif op < 0.9:
        table.compact()
    else:
        purge(table, now_ms=int((time.time() + 40 * 86400) * 1000))
"""


def _records(journal: Path) -> list[dict[str, object]]:
    if not journal.exists():
        return []
    lines = journal.read_text().splitlines()
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            break  # a line cut by the kill
    return records


def _commits(journal: Path) -> int:
    return sum(1 for r in _records(journal) if "commit" in r)


# Only a hung child reaches this: a loaded machine makes the wait longer, never a failure.
START_TIMEOUT = 600.0


def _wait_for_commits(child: subprocess.Popen[bytes], journal: Path, commits: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while _commits(journal) < commits:
        if child.poll() is not None:
            raise AssertionError(f"child died on its own: {child.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        if time.monotonic() > deadline:
            child.kill()
            child.wait()
            raise AssertionError(f"no commit within {START_TIMEOUT:.0f} s of the child's start")
        time.sleep(0.02)


def _check(uri: str, options: dict[str, Any], journal: Path) -> None:
    table = open_table(uri, storage_options=options)
    live = {f.path for f in table.snapshot().files}
    records = _records(journal)
    intended = {r["intend"] for r in records if "intend" in r}
    attempted_removes = {p for r in records if "intend" in r for p in r["removes"]}  # type: ignore[union-attr]
    committed = {r["commit"] for r in records if "commit" in r}
    assert live <= intended, f"never-intended files are live: {sorted(live - intended)[:5]}"
    lost = committed - attempted_removes - live
    assert not lost, f"committed files lost: {sorted(lost)[:5]}"
    result = table.validate()
    assert result.ok, result.problems


def _trial(
    uri: str,
    options: dict[str, Any],
    journal: Path,
    seed: int,
    rng: random.Random,
    delay: tuple[float, float],
    server: Any = None,
) -> None:
    committed_before = _commits(journal)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, uri, json.dumps(options), str(journal), str(seed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    # Past start-up and one commit, however loaded the machine: the kill point is random
    # within the work that follows, and every trial adds at least one commit to check.
    _wait_for_commits(child, journal, committed_before + 1)
    time.sleep(rng.uniform(*delay))
    if child.poll() is not None:
        raise AssertionError(f"child died on its own: {child.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.stderr is not None
    child.stderr.close()
    try:
        _check(uri, options, journal)
    except Exception as failure:
        if server is None or not server.log_tail():
            raise
        raise AssertionError(
            f"{failure!r}\nthe server's log ends:\n{server.log_tail()}"
        ) from failure


# Trials of each slow test: 50 by default (`make test-slow`); CI runs fewer (Makefile).
SLOW_TRIALS = int(os.environ.get("INDEXTABLES_CRASH_TRIALS", "50"))
# The random delay after the trial's first commit, before the kill.
LOCAL_DELAY = (0.0, 2.2)
S3_DELAY = (0.0, 5.0)  # round trips to SeaweedFS are slower


def _run_trials(
    uri: str,
    options: dict[str, Any],
    journal: Path,
    trials: int,
    delay: tuple[float, float],
    server: Any = None,
) -> None:
    create_table(uri, schema={"type": "struct", "fields": []}, storage_options=options)
    rng = random.Random(20240101)
    for seed in range(trials):
        _trial(uri, options, journal, seed, rng, delay, server)
    commits = _commits(journal)
    assert commits >= trials, f"only {commits} commits in {trials} trials"
    # the next writer proceeds after all those crashes
    table = open_table(uri, storage_options=options)
    table.store.put("final.split", b"f" * 8)
    version = table.commit(adds=[AddAction("final.split", {}, 8, 1, True)])
    assert table.snapshot().version == version
    assert table.validate().ok


@pytest.mark.integration
def test_a_handful_of_sigkill_trials(tmp_path: Path) -> None:
    _run_trials(str(tmp_path / "table"), {}, tmp_path / "journal.jsonl", 5, LOCAL_DELAY)


@pytest.mark.integration
@pytest.mark.slow
def test_many_sigkill_trials(tmp_path: Path) -> None:
    _run_trials(str(tmp_path / "table"), {}, tmp_path / "journal.jsonl", SLOW_TRIALS, LOCAL_DELAY)


@pytest.fixture(scope="module")
def seaweedfs() -> Iterator[Any]:
    from indextables.storage.testing import seaweedfs_server

    with seaweedfs_server() as server:
        yield server


@pytest.mark.integration
@pytest.mark.s3
def test_sigkill_trials_on_seaweedfs(seaweedfs: Any, tmp_path: Path) -> None:
    uri, options = seaweedfs.store_args(seaweedfs.create_bucket(), prefix="crash")
    _run_trials(uri, dict(options), tmp_path / "journal.jsonl", 3, S3_DELAY, seaweedfs)


@pytest.mark.integration
@pytest.mark.s3
@pytest.mark.slow
def test_many_sigkill_trials_on_seaweedfs(seaweedfs: Any, tmp_path: Path) -> None:
    uri, options = seaweedfs.store_args(seaweedfs.create_bucket(), prefix="crash-many")
    _run_trials(uri, dict(options), tmp_path / "journal.jsonl", SLOW_TRIALS, S3_DELAY, seaweedfs)
