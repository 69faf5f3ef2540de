"""The test session's private split cache (conftest.py): Spark's Python workers use it too,
so no test reads or fills the user's default cache directory."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from indextables.search.splits.splitcache import CACHE_DIR_ENV, default_cache_dir


def _entries(directory: str) -> set[str]:
    if not os.path.isdir(directory):
        return set()
    return {name for name in os.listdir(directory) if not name.startswith(".")}


def test_spark_workers_fill_the_sessions_private_cache(spark: Any, tmp_path: Path) -> None:
    private = os.environ[CACHE_DIR_ENV]
    users = os.path.join(tempfile.gettempdir(), f"indextables-split-cache-{os.getuid()}")
    assert default_cache_dir() == private != users
    path = str(tmp_path / "table")
    spark.range(50).selectExpr("id", "cast(id % 5 as string) as k").write.format(
        "indextables"
    ).mode("append").save(path)
    before = _entries(private)
    rows = spark.read.format("indextables").load(path).where("k = '3'").collect()
    assert sorted(row.id for row in rows) == list(range(3, 50, 5))
    assert _entries(private) - before  # the read's splits were fetched into it
