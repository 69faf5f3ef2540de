"""Benchmark results checks: run by ``tox -e lint``.

Every ``benchmarks/results/*.json`` file must parse as JSON and hold one
recorded run (or a list of runs) with the keys benchmarks/results/README.md
requires: a ``benchmark`` name and a date; ``figures``, where a file has them, must
be a non-empty list of figure objects.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:?\d{2}.*)?$")
DATE_KEYS = ("date", "started")


def _run_problems(where: str, run: Any, *, inherited_date: bool) -> list[str]:
    if not isinstance(run, dict):
        return [f"{where}: a run must be an object"]
    found = []
    dates = [run[key] for key in DATE_KEYS if key in run]
    if not dates and not inherited_date:
        found.append(f"{where}: no date (one of {', '.join(DATE_KEYS)})")
    found += [
        f"{where}: date {d!r} is not ISO 8601"
        for d in dates
        if not isinstance(d, str) or not DATE.match(d)
    ]
    if "figures" not in run:
        return found
    figures = run["figures"]
    if not isinstance(figures, list) or not figures:
        found.append(f"{where}: 'figures' must be a non-empty list")
    elif not all(isinstance(f, dict) and f for f in figures):
        found.append(f"{where}: every figure must be a non-empty object")
    return found


def file_problems(path: Path) -> list[str]:
    """What is wrong with one results file (empty when nothing is)."""
    name = path.relative_to(ROOT).as_posix()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return [f"{name}: not readable JSON ({exc})"]
    if not isinstance(data, dict):
        return [f"{name}: the top level must be an object"]
    benchmark = data.get("benchmark")
    if not isinstance(benchmark, str) or not benchmark:
        return [f"{name}: 'benchmark' must be a non-empty string"]
    runs = data.get("runs")
    if runs is None:
        return _run_problems(name, data, inherited_date=False)
    if not isinstance(runs, list) or not runs:
        return [f"{name}: 'runs' must be a non-empty list"]
    has_date = any(key in data for key in DATE_KEYS)
    found = []
    for index, run in enumerate(runs):
        found += _run_problems(f"{name} runs[{index}]", run, inherited_date=has_date)
    return found


def problems(results: Path = RESULTS) -> list[str]:
    files = sorted(results.glob("*.json"))
    if not files:
        return [f"no results files under {results}"]
    return [problem for path in files for problem in file_problems(path)]


def main() -> int:
    found = problems()
    for problem in found:
        print(problem, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
