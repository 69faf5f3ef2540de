"""docs/search.md's examples run as written, without Spark."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_reading_example_runs_and_reads_every_row(tmp_path: Path) -> None:
    text = (ROOT / "docs/search.md").read_text()
    section = text.split("## Reading a table without Spark", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, "docs/search.md has no python example"
    script = tmp_path / "example.py"
    script.write_text(blocks[0])
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the default split cache lives there
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    count, _, names = done.stdout.strip().partition(" ")
    golden = ROOT / "testdata/golden/indextables_spark_v0.5.4/02_five_appends.expected.json"
    oracle = json.loads(golden.read_text())
    assert int(count) == len(oracle["rows"])
    assert all(repr(column) in names for column in oracle["rows"][0])


def test_the_searching_example_runs(tmp_path: Path) -> None:
    text = (ROOT / "docs/search.md").read_text()
    section = text.split("## Searching and reading", 1)[1]
    block = re.findall(r"```python\n(.*?)```", section, flags=re.S)[0]
    script = tmp_path / "example.py"
    script.write_text(block)
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    oracle = json.loads(
        (ROOT / "testdata/golden/indextables_spark_v0.5.4/04_partitioned.expected.json").read_text()
    )
    ids = sorted(r["id"] for r in oracle["rows"] if r["text"] in ("doc1", "doc3"))
    assert lines[-1] == f"{len(ids)} {len(oracle['rows'])}"
