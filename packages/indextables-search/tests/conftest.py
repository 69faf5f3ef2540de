"""Shared fixtures of the engine's tests: the golden tables and their oracles."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis must not depend on the machine's speed (CI runs at load 20).
settings.register_profile(
    "machine-independent", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("machine-independent")

# The golden tables: the repository's own copy (testdata/golden, see its NOTICE).
GOLDEN = Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4"
GOLDEN_NAMES = sorted(p.name[: -len(".expected.json")] for p in GOLDEN.glob("*.expected.json"))
if not GOLDEN_NAMES:  # a missing fixture fails the run; it never skips the golden tests
    raise RuntimeError(f"golden tables not found at {GOLDEN}")


@pytest.fixture
def expected() -> Any:
    """A function returning the oracle (expected.json) of one golden table."""

    def load(name: str) -> dict[str, Any]:
        result: dict[str, Any] = json.loads((GOLDEN / f"{name}.expected.json").read_text())
        return result

    return load


@pytest.fixture
def sort_rows() -> Any:
    """A function sorting rows into a canonical order, for comparisons."""

    def order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))

    return order


@pytest.fixture
def golden_copy(tmp_path: Path) -> Any:
    """A function copying a golden table to a temporary folder (golden tables are read-only)."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(GOLDEN / name, target)
        return target

    return copy
