"""Every Spark benchmark script runs at a tiny size and prints the figures it is for.

Figures only: nothing here looks at a time. Each script runs in its own process (as
``tox -e bench-pyspark`` runs them), with ResourceWarning as an error and its work
directories under the test's ``tmp_path``; a script that no longer matches the code it
measures (a renamed function it patches, a changed signature) fails here, not on the
day someone needs its figures. ``sourcefloor.py`` is a library of ``run.py``, run with it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_FIGURE = r"[0-9][0-9,.]*"

# script -> (arguments, a line every run must print)
SCRIPTS: dict[str, tuple[tuple[str, ...], str]] = {
    "profile_needle.py": (
        ("--rows", "2000", "--path", "{tmp}/table", "--repeat", "1"),
        rf"itp\.search: total\s+median\s+{_FIGURE} ms",
    ),
    "run.py": (
        ("--write-rows", "2000", "--search-rows", "2000", "--scale-rows", "0", "--repeat", "1"),
        rf"floor, exact\s+a no-work Python data source's spark\.read .*: {_FIGURE} ms",
    ),
    "count.py": (
        ("--rows", "2000", "--repeat", "1"),
        rf"count, partition filter\s+indextables\s+{_FIGURE} ms.*ratio\s+{_FIGURE}x",
    ),
    "merge.py": (("--rows", "2000", "--splits", "3"), rf"merge / write = {_FIGURE}x"),
    "plan_big.py": (
        ("--files", "50", "--path", "{tmp}/plan", "--repeat", "1"),
        rf"plan id = X \(statistics\).*median\s+{_FIGURE} ms",
    ),
    "splitio.py": (
        ("--rows", "2000", "--repeat", "1", "--skip", "memory"),
        rf"cython\s+fetch \+ \.term rewrite \+ open\s+{_FIGURE} ms",
    ),
    "termdict.py": (
        ("--terms", "500", "--rows", "2000", "--repeat", "1"),
        rf"cython\s+open \(SSTable->FST\)\s+{_FIGURE} ms",
    ),
    "write.py": (("--rows", "2000", "--repeat", "1"), rf"indextables / parquet = {_FIGURE}x wall"),
}


def test_every_script_is_covered() -> None:
    scripts = {p.name for p in BENCHMARKS.glob("*.py")} - {"common.py", "sourcefloor.py"}
    assert scripts == set(SCRIPTS)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_benchmark_script_prints_its_figures(script: str, tmp_path: Path) -> None:
    arguments, expected = SCRIPTS[script]
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "error::ResourceWarning",
            str(BENCHMARKS / script),
            *(a.format(tmp=tmp_path) for a in arguments),
        ],
        cwd=BENCHMARKS,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert re.search(expected, done.stdout), done.stdout
