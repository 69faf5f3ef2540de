"""docs/search.md's examples run as written, without Spark."""

from __future__ import annotations

import json
from pathlib import Path

from docexample import ROOT, run_example


def test_the_reading_example_runs_and_reads_every_row(tmp_path: Path) -> None:
    output = run_example("Reading a table without Spark", tmp_path)
    count, _, names = output.strip().partition(" ")
    golden = ROOT / "testdata/golden/indextables_spark_v0.5.4/02_five_appends.expected.json"
    oracle = json.loads(golden.read_text())
    assert int(count) == len(oracle["rows"])
    assert all(repr(column) in names for column in oracle["rows"][0])


def test_the_searching_example_runs(tmp_path: Path) -> None:
    lines = run_example("Searching and reading", tmp_path).strip().splitlines()
    oracle = json.loads(
        (ROOT / "testdata/golden/indextables_spark_v0.5.4/04_partitioned.expected.json").read_text()
    )
    ids = sorted(r["id"] for r in oracle["rows"] if r["text"] in ("doc1", "doc3"))
    assert lines[-1] == f"{len(ids)} {len(oracle['rows'])}"
