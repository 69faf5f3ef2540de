"""Every engine benchmark script runs at its smallest size and prints the figures it is for.

Figures only: nothing here looks at a time (the machine's speed decides none of these
tests). Each script runs in its own process, as ``tox -e bench-search`` runs it, with
ResourceWarning as an error and its work directories under the test's ``tmp_path``.

``logdata.py`` (the log rows every script but ``docstore.py`` writes) needs numpy, which
tox installs in this test env too: a missing numpy fails these tests (never a skip).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
ROWS = "2000"
_CYTHON_DOCSTORE = importlib.util.find_spec("indextables.search.read.docstore._kernels") is not None

_FIGURE = r"[0-9][0-9,.]*"


def _run(script: str, *args: str, tmp_path: Path) -> str:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-W", "error::ResourceWarning", str(BENCHMARKS / script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _has(out: str, *patterns: str) -> None:
    for pattern in patterns:
        assert re.search(pattern, out, re.MULTILINE), f"no line matching {pattern!r} in:\n{out}"


def test_docstore(tmp_path: Path) -> None:
    out = _run("docstore.py", "--rows", ROWS, "--hits", "100", "--repeat", "1", tmp_path=tmp_path)
    _has(
        out,
        rf"^doc store: {_FIGURE} MB, 2000 rows, {_FIGURE} blocks",
        rf"100 scattered hits  tantivy-py searcher\.doc +{_FIGURE} us/row$",
        rf"all 2000 docs  docstore python twin +{_FIGURE} us/row with read_store, ",
    )
    if _CYTHON_DOCSTORE:
        _has(out, rf"needle row fetch {_FIGURE} us/row \(blocks decoded partly\)")
    else:
        _has(out, r"cython twin: ")


def test_run_search_vs_duckdb(tmp_path: Path) -> None:
    out = _run(
        "run.py",
        "--rows",
        ROWS,
        "--repeat",
        "1",
        "--path",
        str(tmp_path / "tables"),
        "--docstore-block-size",
        "2048",
        tmp_path=tmp_path,
    )
    assert (tmp_path / "tables" / "logs-2000-bs2048-indextables").is_dir()
    _has(
        out,
        r"^search, 2,000 rows, median of 1 warm runs:$",
        rf"^needle, search +indextables +{_FIGURE} ms .* duckdb/indextables = +{_FIGURE}x",
        rf"^  needle row fetch +{_FIGURE} us/row",
        r"^count, text query .* results (\d+) / \1$",
        r"^exact host-42 \(where\) .* results (\d+) / \1$",
        rf"^  exact, CPU +process CPU {_FIGURE} ms, wall {_FIGURE} ms .* decodes in [1-4] chunk",
        rf"^polars, needle +scan_indextables +{_FIGURE} ms",
        rf"^full scan\(\) RSS +peak {_FIGURE} MB",
    )


def test_write(tmp_path: Path) -> None:
    out = _run(
        "write.py", "--rows", ROWS, "--repeat", "1", "--merge-splits", "2", "--workers", "2",
        "--docstore-block-size", "8192", tmp_path=tmp_path,
    )  # fmt: skip
    _has(
        out,
        r"^doc-store block size: 8,192 bytes$",
        rf"^  write_table +{_FIGURE} rows/s wall",
        rf"^  tantivy floor +{_FIGURE} rows/s wall",
        rf"^  documents feed +{_FIGURE} rows/s wall",
        rf"^  CPU : JSON feed / documents feed = {_FIGURE}x, JSON feed / floor = {_FIGURE}x",
        rf"^  wall: write_table / parquet = {_FIGURE}x",
        r"^MERGE SPLITS of 2 splits, 2,000 rows",
        rf"^  split total +{_FIGURE} +{_FIGURE}$",
        rf"split / parquet = {_FIGURE}x with arrowCopy=all",
    )


def test_write_tokenize_only(tmp_path: Path) -> None:
    out = _run("write.py", "--rows", ROWS, "--repeat", "1", "--tokenize-only", tmp_path=tmp_path)
    _has(
        out,
        r"^tokens of the text and string columns, 2,000 log rows, median of 1:$",
        rf"^  segwriter cython +{_FIGURE} rows per CPU-second",
        rf"^  segwriter python +{_FIGURE} rows per CPU-second",
        rf"^  tantivy analyzers +{_FIGURE} rows per CPU-second",
        rf"^  tantivy floor +{_FIGURE} rows per CPU-second",
        rf"^  segwriter inverted +{_FIGURE} rows per CPU-second",
        rf"^  CPU : cython / tantivy analyzers = {_FIGURE}x",
        rf"^  CPU : inverted files \(text and string fields only\) / floor \(every file\) = "
        rf"{_FIGURE}x",
    )


def test_arrowcopy(tmp_path: Path) -> None:
    out = _run("arrowcopy.py", "--rows", ROWS, "--repeat", "1", tmp_path=tmp_path)
    _has(
        out,
        r"^arrowCopy, 2,000 log rows, median of 1 runs:$",
        rf"^  all +split bytes +{_FIGURE}/row, {_FIGURE}x parquet$",
        r"^  scan all columns +\( +2,000 rows\)",
        r"^  needle +\( +\d+ rows\)",
    )


def test_companion(tmp_path: Path) -> None:
    out = _run(
        "companion.py", "--rows", ROWS, "--repeat", "1", "--files", "2",
        "--path", str(tmp_path / "work"), tmp_path=tmp_path,
    )  # fmt: skip
    _has(
        out,
        rf"^build companion \(HYBRID\) +{_FIGURE} s wall",
        rf"^  companion / write_table rate +{_FIGURE}x wall",
        rf"^size .* companion +{_FIGURE} MB = {_FIGURE}x",
        rf"^needle, search +companion +{_FIGURE} ms .* results (\d+) / \1$",
        r"^exact host-42, search\(where=\) .* results (\d+) / \1$",
        r"^sync after one appended file .* files indexed 1 \(must be 1\)",
    )


def test_companion_build_only(tmp_path: Path) -> None:
    """``--build-only``: the segment writer's build against tantivy-py's, both splits' segments."""
    out = _run(
        "companion.py", "--build-only", "--rows", ROWS, "--repeat", "2", "--files", "2",
        "--path", str(tmp_path / "work"), tmp_path=tmp_path,
    )  # fmt: skip
    _has(
        out,
        rf"^  segments +{_FIGURE} s wall +{_FIGURE} s cpu .* segments \[\[2000\]\]$",
        rf"^  json +{_FIGURE} s wall +{_FIGURE} s cpu .* segments \[\[2000\]\]$",
        rf"^build segments \(median\) +{_FIGURE} s wall",
        rf"^segments / json +{_FIGURE}x wall, {_FIGURE}x rows/cpu-s",
    )


def test_companion_search_only_layouts(tmp_path: Path) -> None:
    """``--search-only`` writes the source once; ``--layout small`` builds its companion
    beside the default one from the same source, smaller, and a rerun reuses both."""
    work = str(tmp_path / "work")
    args = ("--search-only", "--rows", ROWS, "--files", "2", "--repeat", "1", "--path", work)
    size = rf"^size .* companion +{_FIGURE} MB = ({_FIGURE})x \(target <= 0\.5\)$"
    searched = rf"^needle, search +companion +{_FIGURE} ms .* results (\d+) / \1$"
    default = _run("companion.py", *args, tmp_path=tmp_path)
    _has(default, r"^source written", r"^build companion \(HYBRID\)", size, searched)
    small = _run("companion.py", *args, "--layout", "small", tmp_path=tmp_path)
    _has(small, r"^reusing the source ", r"^build companion \(HYBRID\)", size, searched)
    assert "source written" not in small
    ratios = [float(re.search(size, out, re.MULTILINE).group(1)) for out in (default, small)]
    assert ratios[1] < ratios[0], ratios
    again = _run("companion.py", *args, "--layout", "small", tmp_path=tmp_path)
    _has(again, r"^reusing .*-small-index and its source$", size, searched)
    assert "build companion" not in again


def test_companion_size(tmp_path: Path) -> None:
    out = _run(
        "companion_size.py", "--rows", ROWS, "--files", "2", "--path", str(tmp_path / "work"),
        tmp_path=tmp_path,
    )  # fmt: skip
    _has(
        out,
        rf"^\.store +{_FIGURE} +{_FIGURE} +{_FIGURE}%",
        rf"^total +{_FIGURE} .*\(source Parquet {_FIGURE} B, {_FIGURE} B/row\)$",
        rf"^  \.idx +message +{_FIGURE} +{_FIGURE} B/row$",
    )


def test_scan(tmp_path: Path) -> None:
    figures = tmp_path / "scan.json"
    args = ("--rows", ROWS, "--repeat", "1", "--json", str(figures))
    out = _run("scan.py", *args, tmp_path=tmp_path)
    _has(
        out,
        rf"^full scans, 2,000 log rows \({_FIGURE} splits, read\.splitThreads {_FIGURE}, "
        r"indexWriter\.arrowCopy default\)",
        rf"^to_arrow\(\), every column +indextables +{_FIGURE} ms .* pl\.read_delta +{_FIGURE} ms"
        rf".* speed vs baseline = +{_FIGURE}x +results 2000 / 2000$",
        r"^polars str\.contains vs query= .* results (\d+) / \1$",
        r"^duckdb count\(\*\) where host = 'host-42' .* results (\d+) / \1$",
    )
    saved = json.loads(figures.read_text(encoding="utf-8"))
    assert saved["rows"] == 2000
    assert {f["baseline"] for f in saved["figures"]} >= {"pl.read_delta", "pl.scan_delta"}


def test_mutations(tmp_path: Path) -> None:
    figures = tmp_path / "mutations.json"
    args = ("--rows", ROWS, "--splits", "2", "--repeat", "1", "--json", str(figures))
    out = _run("mutations.py", *args, tmp_path=tmp_path)
    _has(
        out,
        r"^row deletes and replace_where, 2,000 log rows, flat table \d+ splits, "
        r"day table \d+ splits, median of 1:$",
        r"^\(a\) delete bucket = 7: 2 rows \(0\.10%\)$",
        rf"^delete_rows +{_FIGURE} s  write_table overwrite, live rows +{_FIGURE} s  "
        rf"baseline / ours = +{_FIGURE}x$",
        rf"^delete_rows +{_FIGURE} s  merge_splits purge_deletes +{_FIGURE} s",
        r"^\(b\) replace_where day = 3: 200 rows$",
        rf"^replace_where day = 3 +{_FIGURE} s  write_table append +{_FIGURE} s",
        r"^\(c\) replace_where bucket = 7: 2 rows$",
        rf"^  replace_where bucket = 7 +splits replaced +\d+ added +\d+  bytes fetched {_FIGURE}"
        rf"  replaced {_FIGURE}  written {_FIGURE}$",
    )
    saved = json.loads(figures.read_text(encoding="utf-8"))
    assert saved["rows"] == 2000
    assert len(saved["figures"]) == 4
    assert {f["baseline_operation"] for f in saved["figures"]} >= {
        "merge_splits purge_deletes",
        "write_table append",
    }
