"""Shared fixtures of the engine's tests: the golden tables and their oracles."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

# Hypothesis must not depend on the machine's speed (CI runs at load 20).
settings.register_profile(
    "machine-independent", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("machine-independent")

# The golden-table fixtures, shared with the adapter's tests (goldenfixtures.py).
sys.path.insert(0, str(Path(__file__).resolve().parent))
import privatecache  # noqa: E402
from goldenfixtures import GOLDEN, GOLDEN_NAMES, expected, golden_copy, sort_rows  # noqa: E402

__all__ = ["GOLDEN", "GOLDEN_NAMES", "expected", "golden_copy", "sort_rows"]


def pytest_configure(config: Any) -> None:
    """A private split cache directory for the session (never the user's default)."""
    privatecache.start()


def pytest_unconfigure(config: Any) -> None:
    privatecache.stop()
