"""Several processes committing to one table: distinct versions, no lost data.

Each worker process opens the table through ``open_table`` (real stores and
the real Avro state format), writes its own split objects and commits them
one per version; every fifth commit also removes one of its earlier files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import create_table, open_table

WORKER = r"""
import json, sys
from indextables.protocol import AddAction, open_table
uri, options, worker, commits = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
table = open_table(uri, storage_options=options)
done = []
for i in range(commits):
    path = f"w{worker}/part-{i:03d}.split"
    data = f"{worker}-{i}".encode() * 10
    table.store.put(path, data)
    removes = [f"w{worker}/part-{i - 3:03d}.split"] if i % 5 == 4 else []
    version = table.commit(adds=[AddAction(path, {}, len(data), 1, True)], removes=removes)
    done.append({"version": version, "add": path, "removes": removes})
print(json.dumps(done))
"""


def run_workers(
    uri: str, options: dict[str, Any], workers: int, commits: int
) -> list[dict[str, Any]]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, uri, json.dumps(options), str(w), str(commits)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    results: list[dict[str, Any]] = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-3000:]
        results += json.loads(out)
    return results


def check_table(
    uri: str, options: dict[str, Any], results: list[dict[str, Any]], total: int
) -> None:
    versions = sorted(r["version"] for r in results)
    assert len(results) == total
    assert len(set(versions)) == total, "two commits got the same version"
    table = open_table(uri, storage_options=options)
    expected = {r["add"] for r in results} - {p for r in results for p in r["removes"]}
    assert {f.path for f in table.snapshot().files} == expected
    result = table.validate()
    assert result.ok, result.problems


SCHEMA = {
    "type": "struct",
    "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}],
}


@pytest.mark.integration
def test_four_processes_times_25_commits_on_local_fs(tmp_path: Path) -> None:
    uri = str(tmp_path / "table")
    create_table(uri, schema=SCHEMA)
    results = run_workers(uri, {}, 4, 25)
    check_table(uri, {}, results, 100)


@pytest.fixture(scope="module")
def seaweedfs() -> Iterator[Any]:
    from indextables.storage.testing import seaweedfs_server

    with seaweedfs_server() as server:
        yield server


def _s3_table(server: Any, name: str) -> tuple[str, dict[str, Any]]:
    uri, options = server.store_args(server.create_bucket(), prefix=name)
    create_table(uri, schema=SCHEMA, storage_options=options)
    return uri, dict(options)


@pytest.mark.integration
@pytest.mark.s3
def test_two_processes_on_seaweedfs(seaweedfs: Any) -> None:
    uri, options = _s3_table(seaweedfs, "small")
    results = run_workers(uri, options, 2, 5)
    check_table(uri, options, results, 10)


@pytest.mark.integration
@pytest.mark.s3
@pytest.mark.slow
def test_four_processes_times_25_commits_on_seaweedfs(seaweedfs: Any) -> None:
    uri, options = _s3_table(seaweedfs, "big")
    results = run_workers(uri, options, 4, 25)
    check_table(uri, options, results, 100)
