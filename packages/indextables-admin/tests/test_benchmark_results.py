"""benchmarks/results/*.json: every recorded run parses and has the required keys.

The check itself is ``ci/check_results.py`` (run by ``tox -e lint``); these tests
run it over the repository's results and over hand-made broken files.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_results", ROOT / "ci/check_results.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_results_file_parses_with_required_keys() -> None:
    files = sorted((ROOT / "benchmarks/results").glob("*.json"))
    assert files
    assert _checker().problems() == []
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        runs = data.get("runs", [data])
        assert isinstance(data["benchmark"], str)
        assert all(run.get("figures", [{}]) for run in runs)


GOOD = {"benchmark": "avrostate", "date": "2026-11-26T00:45Z", "figures": [{"name": "x"}]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "not readable JSON"),
        ("[1, 2]", "top level must be an object"),
        (json.dumps({**GOOD, "benchmark": ""}), "'benchmark'"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "date"}), "no date"),
        (json.dumps({**GOOD, "date": "yesterday"}), "not ISO 8601"),
        (json.dumps({**GOOD, "figures": []}), "'figures'"),
        (json.dumps({**GOOD, "figures": [3]}), "figure must be a non-empty object"),
        (json.dumps({"benchmark": "scan", "runs": [{"figures": [{"a": 1}]}]}), "runs[0]: no date"),
        (json.dumps({"benchmark": "scan", "runs": []}), "'runs'"),
    ],
)
def test_broken_files_are_named(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "ok.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "bad.json").write_text(text, encoding="utf-8")
    checker = _checker()
    checker.ROOT = tmp_path
    found = checker.problems(tmp_path)
    assert len(found) == 1
    assert found[0].startswith("bad.json")
    assert expected in found[0]


def test_figures_may_be_kept_under_other_keys(tmp_path: Path) -> None:
    data = {"benchmark": "connect_count", "date": "2026-12-02T05:06:11Z", "ratio": 1.03}
    (tmp_path / "c.json").write_text(json.dumps(data), encoding="utf-8")
    checker = _checker()
    checker.ROOT = tmp_path
    assert checker.problems(tmp_path) == []


def test_runs_inherit_the_file_date(tmp_path: Path) -> None:
    data = {
        "benchmark": "scan",
        "started": "2026-12-02T04:41:26+00:00",
        "runs": [{"figures": [{"a": 1}]}],
    }
    (tmp_path / "r.json").write_text(json.dumps(data), encoding="utf-8")
    checker = _checker()
    checker.ROOT = tmp_path
    assert checker.problems(tmp_path) == []
