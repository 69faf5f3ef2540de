"""``benchmarks/querylang.py`` runs at a small size, prints every figure and writes its JSON.

Figures only: no time is looked at. The answers are: every question's row count
through the engine equals DuckDB's over the Parquet copy, and the top-k questions
return at most k rows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_FIGURE = r"[0-9][0-9,.]*"


@pytest.mark.slow
def test_querylang_benchmark(tmp_path: Path) -> None:
    out_dir = tmp_path / "results"
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "error::ResourceWarning",
            str(BENCHMARKS / "querylang.py"),
            *("--rows", "30000", "--repeat", "1"),
            *("--path", str(tmp_path / "tables"), "--out", str(out_dir)),
        ],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for label in [
        r"prefix message:zyxq\*, rows",
        r"host LIKE 'web-1%', count",
        r"host LIKE '%b-1%', rows",
        r"fuzzy message:needlezq~1, rows",
        r"regex message:/zyxq\[0-4\]/, rows",
    ]:
        assert re.search(
            rf"^{label} +indextables +{_FIGURE} ms .* duckdb/indextables = +{_FIGURE}x",
            done.stdout,
            re.MULTILINE,
        ), (label, done.stdout)
    assert re.search(r"^needle, newest 100 by ts .* peak RSS", done.stdout, re.MULTILINE)
    (written,) = out_dir.glob("querylang-*.json")
    record = json.loads(written.read_text())
    assert record["rows"] == 30000
    assert record["duckdb"]["threads"] == 2
    assert len(record["figures"]) == 9
    for figure in record["figures"]:
        ours, theirs = figure["results"]
        assert ours == theirs, figure
    assert any(f["results"][0] > 0 for f in record["figures"])
    for entry in record["topk"]:
        limit = 10 if "top 10" in entry["label"] else 100
        assert entry["rows"] == min(limit, entry["every_hit_rows"]), entry
