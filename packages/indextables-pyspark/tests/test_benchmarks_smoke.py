"""Every Spark benchmark script runs at a tiny size and prints the figures it is for.

Figures only: nothing here looks at a time. The scripts run one after another in one
process of their own, each as ``__main__`` (as ``run.py <script>`` runs them), so that they
share one JVM and one session (``INDEXTABLES_BENCH_SHARED_SESSION``: no script stops it, so
its Python workers start once) instead of starting five; ResourceWarning is an error and the work
directories are under the test's ``tmp_path``. A script that no longer matches the code it
measures (a renamed function it patches, a changed signature) fails here, not on the day
someone needs its figures. ``sourcefloor.py`` is a library of ``run.py``, run with it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

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
    "connect_count.py": (
        ("--rows", "400", "--splits", "2", "--repeat", "1"),
        rf"connect / classic = {_FIGURE}x \(distributed count\)",
    ),
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


# Runs each script as __main__ in this one process and records its exit and its stdout.
_DRIVER = """
import contextlib, io, json, runpy, sys, traceback
runs, report = json.loads(sys.argv[1]), sys.argv[2]
sys.path.insert(0, ".")
results = {}
for script, argv in runs:
    out = io.StringIO()
    outcome = "exit 0"
    sys.argv = [script, *argv]
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as stop:
            if stop.code not in (None, 0):
                outcome = f"exit {stop.code}"
        except BaseException:
            outcome = traceback.format_exc()
    results[script] = [outcome, out.getvalue()]
with open(report, "w") as f:
    json.dump(results, f)
from pyspark.sql import SparkSession
shared = SparkSession.getActiveSession()
if shared is not None:
    shared.stop()
"""


def test_every_benchmark_script_prints_its_figures(tmp_path: Path) -> None:
    runs = []
    for script, (arguments, _) in sorted(SCRIPTS.items()):
        work = tmp_path / script.removesuffix(".py")
        work.mkdir()
        runs.append((str(BENCHMARKS / script), [a.format(tmp=work) for a in arguments]))
    report = tmp_path / "report.json"
    # one session for every script: its Python workers start and warm up once
    env = {
        **os.environ,
        "TMPDIR": str(tmp_path),
        "PYSPARK_PYTHON": sys.executable,
        "INDEXTABLES_BENCH_SHARED_SESSION": "1",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "error::ResourceWarning",
            "-c",
            _DRIVER,
            json.dumps(runs),
            str(report),
        ],
        cwd=BENCHMARKS,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, f"the driver exited {done.returncode}:\n{done.stderr[-5000:]}"
    results = json.loads(report.read_text())
    assert sorted(results) == sorted(str(BENCHMARKS / s) for s in SCRIPTS)
    failures = []
    for script, (_, expected) in sorted(SCRIPTS.items()):
        outcome, stdout = results[str(BENCHMARKS / script)]
        if outcome != "exit 0":
            failures.append(f"{script}: {outcome}\n{stdout}")
        elif not re.search(expected, stdout):
            failures.append(f"{script}: no line matching {expected!r} in:\n{stdout}")
    assert not failures, "\n\n".join(failures)
