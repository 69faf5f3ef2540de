"""The golden tables and their oracles: fixtures shared by the engine's and the adapter's tests.

Both packages' ``conftest.py`` import these fixtures (the adapter's adds this
folder to ``sys.path``), so a golden table is found, read and copied one way.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

__all__ = ["GOLDEN", "GOLDEN_NAMES", "expected", "golden_copy", "load_expected", "sort_rows"]

# The golden tables: the repository's own copy (testdata/golden, see its NOTICE).
GOLDEN = Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4"
GOLDEN_NAMES = sorted(p.name[: -len(".expected.json")] for p in GOLDEN.glob("*.expected.json"))
if not GOLDEN_NAMES:  # a missing fixture fails the run; it never skips the golden tests
    raise RuntimeError(f"golden tables not found at {GOLDEN}")


def load_expected(name: str) -> dict[str, Any]:
    """The oracle (expected.json) of one golden table."""
    result: dict[str, Any] = json.loads((GOLDEN / f"{name}.expected.json").read_text())
    return result


def _sorted_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.fixture
def expected() -> Any:
    """A function returning the oracle (expected.json) of one golden table."""
    return load_expected


@pytest.fixture
def sort_rows() -> Any:
    """A function sorting rows into a canonical order, for comparisons."""
    return _sorted_rows


@pytest.fixture
def golden_copy(tmp_path: Path) -> Any:
    """A function copying a golden table to a temporary folder (golden tables are read-only)."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(GOLDEN / name, target)
        return target

    return copy
