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
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
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
